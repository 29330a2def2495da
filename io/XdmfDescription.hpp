#pragma once
// An XDMF (version 3) description of a prediction file, written next to it (pred.h5 ->
// pred.xmf) so that ParaView and VisIt open the fields on their geometry, in metres, over the
// report times in days. The description only names datasets of the HDF5 file, by its file name
// (so the pair can be moved together) and hyperslabs of them: no value is copied.
#include <array>
#include <string>
#include <vector>

namespace ufno {

// A slice of one dataset of the HDF5 file: [start, start + count) of a dataset of `shape`.
struct XdmfSlice {
  std::string dataset;
  std::vector<std::size_t> shape, start, count;
  int precision = 4;  // bytes: float32 (fields) or float64 (coordinates)
};

// A structured (curvilinear) grid: node coordinates x, y, z, each of `nodes` (slowest axis
// first), and its fields, on the cells (cell_data) or on the nodes.
struct XdmfGrid {
  std::string name;
  std::array<std::size_t, 3> nodes{};
  std::array<XdmfSlice, 3> xyz;
  struct Field {
    std::string name;
    XdmfSlice values;
  };
  std::vector<Field> fields;
  bool cell_data = true;
};

// One report time: the grids it shows (one per level of a nested site, overlaid in space).
struct XdmfStep {
  double time_days = 0;
  std::vector<XdmfGrid> grids;
};

// The .xmf path of an HDF5 file: its name with the extension replaced (pred.h5 -> pred.xmf).
std::string xdmf_path(const std::string& h5_path);

// The XDMF document: a temporal collection of the steps, each a spatial collection of its grids.
std::string xdmf_document(const std::string& h5_file_name, const std::vector<XdmfStep>& steps);

// Writes the description of `h5_path` beside it through a temporary renamed into place, so a
// failed write never leaves a partial description (call it once the HDF5 file is in place).
void write_xdmf(const std::string& h5_path, const std::vector<XdmfStep>& steps);

}  // namespace ufno
