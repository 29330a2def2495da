#include "io/TensorFile.hpp"

#include <cmath>

#include "io/Hdf5File.hpp"

namespace ufno {

HostArray read_input_tensor(const std::string& path, const std::array<int, 3>& grid, int channels) {
  h5::File f = h5::File::open_read(path);
  if (!f.has_dataset("input")) throw InputError(path, "input", "dataset is missing");
  if (f.kind("input") != h5::Kind::Float)
    throw InputError(path, "input", "must be a floating-point dataset");
  HostArray a;
  a.data = f.read_floats("input", &a.shape);
  const std::vector<std::size_t> want{a.shape.empty() ? 0 : a.shape[0], std::size_t(grid[0]),
                                      std::size_t(grid[1]), std::size_t(grid[2]),
                                      std::size_t(channels)};
  if (a.shape.size() != 5 || a.shape != want || a.shape[0] == 0)
    throw InputError(path, "input",
                     "shape " + shape_string(a.shape) + " but the model expects (B," +
                         std::to_string(grid[0]) + "," + std::to_string(grid[1]) + "," +
                         std::to_string(grid[2]) + "," + std::to_string(channels) + ")");
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (!std::isfinite(a.data[i]))
      throw InputError(path, "input",
                       "contains NaN or Inf (first at flat index " + std::to_string(i) + ")");
  return a;
}

}  // namespace ufno
