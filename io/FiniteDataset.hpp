#pragma once
// A small numeric dataset of a model file read whole as doubles, refused (InputError naming the
// file and dataset) when missing, of another shape, holding NaN or Inf, or declaring more than
// max_values values (checked before anything is allocated): the heads' and the training
// profile's tables.
#include <cmath>
#include <string>
#include <vector>

#include "core/InputError.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

inline std::vector<double> finite_dataset(const h5::File& f, const std::string& name,
                                          const std::vector<std::size_t>& shape,
                                          std::size_t max_values) {
  if (!f.has_dataset(name)) throw InputError(f.path(), name, "dataset is missing");
  const h5::Numeric n = f.read_numeric(name, max_values);
  if (n.shape != shape)
    throw InputError(f.path(), name,
                     "shape " + shape_string(n.shape) + " but expected " + shape_string(shape));
  for (double v : n.values)
    if (!std::isfinite(v)) throw InputError(f.path(), name, "contains NaN or Inf");
  return n.values;
}

}  // namespace ufno
