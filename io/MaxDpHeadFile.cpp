#include "io/MaxDpHeadFile.hpp"

#include <cmath>
#include <sstream>

#include "core/InputError.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

namespace {

const std::string kGroup = "max_dp_head";
constexpr int kMaxMembers = 64, kMaxWidth = 1024;

std::vector<double> finite_values(const h5::File& f, const std::string& name,
                                  const std::vector<std::size_t>& shape) {
  if (!f.has_dataset(name)) throw InputError(f.path(), name, "dataset is missing");
  const h5::Numeric n = f.read_numeric(name, std::size_t(kMaxWidth) * kMaxWidth);
  if (n.shape != shape)
    throw InputError(f.path(), name,
                     "shape " + shape_string(n.shape) + " but expected " + shape_string(shape));
  for (double v : n.values)
    if (!std::isfinite(v)) throw InputError(f.path(), name, "contains NaN or Inf");
  return n.values;
}

double finite_attribute(const h5::File& f, const std::string& attr) {
  const auto v = f.numeric_attribute(attr, kGroup);
  if (v.size() != 1 || !std::isfinite(v[0]))
    throw InputError(f.path(), kGroup + "@" + attr, "must be one finite number");
  return v[0];
}

// Sizes are read from fc0.weight's shape; the rest must chain to them.
DenseLayer layer(const h5::File& f, const std::string& prefix, int in, int out) {
  DenseLayer l;
  l.in = in;
  l.out = out;
  l.weight = finite_values(f, prefix + ".weight", {std::size_t(out), std::size_t(in)});
  l.bias = finite_values(f, prefix + ".bias", {std::size_t(out)});
  return l;
}

}  // namespace

std::optional<MaxDpHead> read_max_dp_head(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  if (!f.has_attribute("members", kGroup)) return std::nullopt;
  MaxDpHead h;
  h.path = path;
  std::istringstream names(f.string_attribute_required("features", kGroup));
  for (std::string n; std::getline(names, n, ',');) h.features.push_back(n);
  const int nf = int(h.features.size());
  if (nf < 1 || nf > kMaxWidth)
    throw InputError(path, kGroup + "@features", "must name 1 to 1024 features");
  const double members = finite_attribute(f, "members");
  if (members < 1 || members > kMaxMembers || members != std::floor(members))
    throw InputError(path, kGroup + "@members", "must be a whole number in [1, 64]");
  const auto grid = f.numeric_attribute("grid", kGroup);
  if (grid.size() != 2 || !(grid[0] >= 1 && grid[0] <= 4096 && grid[1] >= 1 && grid[1] <= 4096))
    throw InputError(path, kGroup + "@grid", "must be two sizes (X, Y) in [1, 4096]");
  h.grid = {int(grid[0]), int(grid[1])};
  h.target_mean = finite_attribute(f, "target_mean");
  h.target_std = finite_attribute(f, "target_std");
  if (!(h.target_std > 0)) throw InputError(path, kGroup + "@target_std", "must be positive");
  h.feature_mean = finite_values(f, kGroup + "/feature_mean", {std::size_t(nf)});
  h.feature_std = finite_values(f, kGroup + "/feature_std", {std::size_t(nf)});
  for (double s : h.feature_std)
    if (!(s > 0)) throw InputError(path, kGroup + "/feature_std", "must be positive");
  h.feature_min = finite_values(f, kGroup + "/feature_min", {std::size_t(nf)});
  h.feature_max = finite_values(f, kGroup + "/feature_max", {std::size_t(nf)});
  for (int i = 0; i < nf; ++i)
    if (h.feature_min[i] > h.feature_max[i])
      throw InputError(path, kGroup + "/feature_max", "must not be below feature_min");
  for (int m = 0; m < int(members); ++m) {
    const std::string p = kGroup + "/member" + std::to_string(m) + "/fc";
    if (!f.has_dataset(p + "0.weight"))
      throw InputError(path, p + "0.weight", "dataset is missing");
    const auto s = f.shape(p + "0.weight");
    if (s.size() != 2 || s[0] < 1 || s[0] > std::size_t(kMaxWidth))
      throw InputError(path, p + "0.weight", "must be (hidden, features), hidden <= 1024");
    const int hidden = int(s[0]);
    h.members.push_back({layer(f, p + "0", nf, hidden), layer(f, p + "1", hidden, hidden),
                         layer(f, p + "2", hidden, 1)});
  }
  return h;
}

}  // namespace ufno
