#include "io/TensorFile.hpp"

#include <cmath>

#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

namespace {}  // namespace

HostArray read_input_tensor(const std::string& path, const std::array<int, 3>& grid, int channels,
                            CaseBlock block, MPI_Comm comm) {
  h5::File f = h5::File::open_read(path, comm);
  if (!f.has_dataset("input")) throw InputError(path, "input", "dataset is missing");
  if (f.kind("input") != h5::Kind::Float)
    throw InputError(path, "input", "must be a floating-point dataset");
  const auto s = f.shape("input");
  const std::vector<std::size_t> want{s.empty() ? 0 : s[0], std::size_t(grid[0]),
                                      std::size_t(grid[1]), std::size_t(grid[2]),
                                      std::size_t(channels)};
  if (s.size() != 5 || s != want || s[0] == 0)
    throw InputError(path, "input",
                     "shape " + shape_string(s) + " but the model expects (B," +
                         std::to_string(grid[0]) + "," + std::to_string(grid[1]) + "," +
                         std::to_string(grid[2]) + "," + std::to_string(channels) + ")");
  if (block.lx < 0) block = {0, 0, grid[0], grid[1]};
  HostArray a;
  a.shape = {s[0], std::size_t(block.lx), std::size_t(block.ly), s[3], s[4]};
  a.data = f.read_block("input", {0, std::size_t(block.x0), std::size_t(block.y0), 0, 0}, a.shape);
  check_encoded(a, path, "input");
  return a;
}

}  // namespace ufno
