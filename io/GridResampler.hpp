#pragma once
// Maps a radial r-z case (and its results) from a deck's grid onto the model's grid, axis by axis.
// Where a model cell covers source cells (coarsening) properties are averaged over the overlap,
// weighted by bulk volume (radial rings: pi (r2^2 - r1^2)): porosity so that pore volume is kept,
// kr arithmetically, kz harmonically (flow across layers in series), over the active part only;
// a model cell is active when at least half of it is. Where a model cell lies inside one source
// cell (refining) the value is interpolated linearly between source cell centres (permeabilities
// in log space).
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

enum class Average { Arithmetic, Harmonic, Interpolate };

class GridResampler {
 public:
  // Source and target cell sizes: dz (layers, top down) and dr (radial, from the well).
  GridResampler(const std::vector<double>& src_dz, const std::vector<double>& src_dr,
                const std::vector<double>& dst_dz, const std::vector<double>& dst_dr);

  bool identity() const { return identity_; }
  // (X, Y) field on the source grid -> target grid; `active` (source) masks what is averaged;
  // log_space interpolates permeabilities in ln.
  std::vector<double> map(const std::vector<double>& v, const std::vector<int>& active, Average how,
                          bool log_space = false) const;
  std::vector<int> map_active(const std::vector<int>& active) const;
  std::vector<int> map_layers(const std::vector<int>& flags) const;  // perforation: any overlap

  // The whole case: arrays, DR/DZ, perforation.
  ReservoirCase map_case(const ReservoirCase& c, const std::vector<int>& active) const;
  std::string describe() const;

 private:
  struct Weights {  // for each target cell: (source cell, overlap weight, refining?)
    std::vector<std::vector<std::pair<int, double>>> w;
    std::vector<double> centre_src, centre_dst;
  };
  static Weights axis(const std::vector<double>& src, const std::vector<double>& dst, bool radial);
  std::vector<double> map_axis(const std::vector<double>& v, int n0, int n1, const Weights& w,
                               int axis, const std::vector<double>& mask, Average how,
                               bool log_space) const;
  std::vector<double> src_dz_, src_dr_, dst_dz_, dst_dr_;
  Weights wz_, wr_;
  bool identity_ = false;
};

}  // namespace ufno
