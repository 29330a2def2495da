#include "io/TensorFile.hpp"

#include <cmath>

#include "io/Hdf5File.hpp"

namespace ufno {

namespace {
constexpr float kMaxEncodedValue = 1000.0f;
}  // namespace

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
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    if (!std::isfinite(a.data[i]))
      throw InputError(
          path, "input",
          "contains NaN or Inf (first in this block at flat index " + std::to_string(i) + ")");
    // The encoding maps every channel to about [-1, 2]; a value far outside is not an encoded
    // case, and inside the network it overflows into NaNs that ReLUs hide.
    if (std::abs(a.data[i]) > kMaxEncodedValue)
      throw InputError(path, "input",
                       "value " + std::to_string(a.data[i]) + " at flat index " +
                           std::to_string(i) + " is far outside the encoded range (|v| <= " +
                           std::to_string(int(kMaxEncodedValue)) + ")");
  }
  return a;
}

}  // namespace ufno
