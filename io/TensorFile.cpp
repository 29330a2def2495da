#include "io/TensorFile.hpp"

#include <cmath>

#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

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

namespace {

// /input's shape, checked against (B, grid, channels) for any B > 0.
std::vector<std::size_t> checked_shape4d(const h5::File& f, const std::string& path,
                                         const std::array<int, 4>& grid, int channels) {
  if (!f.has_dataset("input")) throw InputError(path, "input", "dataset is missing");
  if (f.kind("input") != h5::Kind::Float)
    throw InputError(path, "input", "must be a floating-point dataset");
  const auto s = f.shape("input");
  std::vector<std::size_t> want{s.empty() ? 0 : s[0]};
  for (int g : grid) want.push_back(std::size_t(g));
  want.push_back(std::size_t(channels));
  std::string expect = "(B";
  for (std::size_t i = 1; i < want.size(); ++i) expect += "," + std::to_string(want[i]);
  if (s.size() != 6 || s != want || s[0] == 0)
    throw InputError(path, "input",
                     "shape " + shape_string(s) + " but the 4-D FNO expects " + expect +
                         ") = (cases, A1, A2, A3, T, channels)");
  return s;
}

}  // namespace

std::size_t input_tensor4d_cases(const std::string& path, const std::array<int, 4>& grid,
                                 int channels, MPI_Comm comm) {
  h5::File f = h5::File::open_read(path, comm);
  return checked_shape4d(f, path, grid, channels)[0];
}

HostArray read_input_tensor4d(const std::string& path, const std::array<int, 4>& grid, int channels,
                              const std::array<int, 4>& lo, const std::array<int, 4>& count,
                              MPI_Comm comm) {
  h5::File f = h5::File::open_read(path, comm);
  const auto s = checked_shape4d(f, path, grid, channels);
  HostArray a;
  a.shape = {s[0]};
  std::vector<std::size_t> start{0};
  double values = double(s[0]) * channels;
  for (int d = 0; d < 4; ++d) {
    a.shape.push_back(std::size_t(count[d]));
    start.push_back(std::size_t(lo[d]));
    values *= count[d];
  }
  a.shape.push_back(std::size_t(channels));
  start.push_back(0);
  // Basin-scale inputs are large by nature (a rank's block can exceed a GiB); the bound is on
  // what any rank of this build could hold, so a forged case count cannot make it allocate
  // without bound.
  constexpr double kMaxBlockValues = double(1ull << 32);  // 16 GiB of float32
  if (values > kMaxBlockValues)
    throw InputError(path, "input",
                     std::to_string(s[0]) + " cases make a block of " +
                         std::to_string(long(values)) +
                         " values per rank, beyond this build's limit; use more ranks or fewer "
                         "cases per file");
  a.data = f.read_block("input", start, a.shape);
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (!std::isfinite(a.data[i]) || std::abs(a.data[i]) > 1e6f)
      throw InputError(path, "input",
                       "value " + std::to_string(a.data[i]) + " at flat index " +
                           std::to_string(i) + " of this rank's block is NaN, Inf or beyond 1e6");
  return a;
}

}  // namespace ufno
