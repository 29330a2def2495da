#pragma once
// The Cartesian process grid that splits the grid axes of the activations: one part count per
// axis, (px, py, 1) over the U-FNO's (X, Y, T), (pa, pb, pc, 1) over the 4-D FNO's (A1, A2, A3, T).
// The last axis, time, is never split: the Fourier layers transform it first, in place. `--grid
// 2x2` (U-FNO) or `--grid 2x2x1` (4-D FNO) names the parts of the space axes; by default P ranks
// are factored so that blocks stay as square as the grid extents allow.
#include <mpi.h>

#include <array>
#include <string>
#include <vector>

namespace ufno::dist {

class ProcessGrid {
 public:
  // parts: one per grid axis, the last (time) 1; their product must equal the size of comm.
  ProcessGrid(MPI_Comm comm, std::vector<int> parts);
  template <std::size_t D>
  ProcessGrid(MPI_Comm comm, const std::array<int, D>& parts)
      : ProcessGrid(comm, std::vector<int>(parts.begin(), parts.end())) {}

  // "2x2", "4x1" (U-FNO extents (X, Y, T)); "2x2x1" (4-D FNO extents (A1, A2, A3, T)); "auto"
  // or "" -> automatic for `extents`. A spec names the space axes only, or all axes with 1 for
  // time. Throws InputError (field --grid) for a malformed grid, one that does not match the
  // rank count, or one that splits an axis into more blocks than it has cells.
  static ProcessGrid from_string(MPI_Comm comm, const std::string& spec,
                                 const std::vector<int>& extents);
  static std::vector<int> automatic(int ranks, const std::vector<int>& extents);

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int axes() const { return int(parts_.size()); }
  const std::vector<int>& parts() const { return parts_; }
  // The parts as an array, for a grid of exactly D axes (throws otherwise).
  template <std::size_t D>
  std::array<int, D> parts_of() const {
    check_axes(D);
    std::array<int, D> p{};
    for (std::size_t a = 0; a < D; ++a) p[a] = parts_[a];
    return p;
  }
  std::string str() const;

 private:
  void check_axes(std::size_t d) const;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<int> parts_;
};

}  // namespace ufno::dist
