#include "io/KpiHeadFile.hpp"

#include <cmath>
#include <sstream>

#include "core/InputError.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

namespace {

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

// One finite number per output (a scalar attribute: one output).
std::vector<double> finite_attribute(const h5::File& f, const std::string& group,
                                     const std::string& attr) {
  const auto v = f.numeric_attribute(attr, group);
  if (v.empty() || v.size() > std::size_t(kMaxWidth))
    throw InputError(f.path(), group + "@" + attr, "must be 1 to 1024 numbers");
  for (double x : v)
    if (!std::isfinite(x)) throw InputError(f.path(), group + "@" + attr, "must be finite");
  return v;
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

void read_features(const h5::File& f, const std::string& g, KpiHead& h) {
  std::istringstream names(f.string_attribute_required("features", g));
  for (std::string n; std::getline(names, n, ',');) h.features.push_back(n);
  const std::size_t nf = h.features.size();
  if (nf < 1 || nf > std::size_t(kMaxWidth))
    throw InputError(h.path, g + "@features", "must name 1 to 1024 features");
  h.feature_mean = finite_values(f, g + "/feature_mean", {nf});
  h.feature_std = finite_values(f, g + "/feature_std", {nf});
  for (double s : h.feature_std)
    if (!(s > 0)) throw InputError(h.path, g + "/feature_std", "must be positive");
  h.feature_min = finite_values(f, g + "/feature_min", {nf});
  h.feature_max = finite_values(f, g + "/feature_max", {nf});
  for (std::size_t i = 0; i < nf; ++i)
    if (h.feature_min[i] > h.feature_max[i])
      throw InputError(h.path, g + "/feature_max", "must not be below feature_min");
}

void read_targets(const h5::File& f, const std::string& g, KpiHead& h) {
  h.target_mean = finite_attribute(f, g, "target_mean");
  h.target_std = finite_attribute(f, g, "target_std");
  if (h.target_std.size() != h.target_mean.size())
    throw InputError(h.path, g + "@target_std", "must have one value per target_mean value");
  for (double s : h.target_std)
    if (!(s > 0)) throw InputError(h.path, g + "@target_std", "must be positive");
  if (f.has_attribute("times_days", g)) {
    h.times_days = finite_attribute(f, g, "times_days");
    if (h.times_days.size() != h.target_mean.size())
      throw InputError(h.path, g + "@times_days", "must have one time per output");
    for (std::size_t t = 0; t < h.times_days.size(); ++t)
      if (!(h.times_days[t] > (t ? h.times_days[t - 1] : 0.0)))
        throw InputError(h.path, g + "@times_days", "must be positive and increasing");
  }
  if (f.has_attribute("sg_threshold", g)) {
    const auto v = finite_attribute(f, g, "sg_threshold");
    if (v.size() != 1 || !(v[0] > 0 && v[0] < 1))
      throw InputError(h.path, g + "@sg_threshold", "must be one number in (0, 1)");
    h.sg_threshold = v[0];
  }
}

}  // namespace

std::optional<KpiHead> read_kpi_head(const std::string& path, const std::string& g) {
  h5::File f = h5::File::open_read(path);
  if (!f.has_attribute("members", g)) return std::nullopt;
  KpiHead h;
  h.path = path;
  h.group = g;
  read_features(f, g, h);
  const auto members = finite_attribute(f, g, "members");
  if (members.size() != 1 || members[0] < 1 || members[0] > kMaxMembers ||
      members[0] != std::floor(members[0]))
    throw InputError(path, g + "@members", "must be a whole number in [1, 64]");
  const auto grid = f.numeric_attribute("grid", g);
  if (grid.size() != 2 || !(grid[0] >= 1 && grid[0] <= 4096 && grid[1] >= 1 && grid[1] <= 4096))
    throw InputError(path, g + "@grid", "must be two sizes (X, Y) in [1, 4096]");
  h.grid = {int(grid[0]), int(grid[1])};
  read_targets(f, g, h);
  const int nf = int(h.features.size());
  for (int m = 0; m < int(members[0]); ++m) {
    const std::string p = g + "/member" + std::to_string(m) + "/fc";
    if (!f.has_dataset(p + "0.weight"))
      throw InputError(path, p + "0.weight", "dataset is missing");
    const auto s = f.shape(p + "0.weight");
    if (s.size() != 2 || s[0] < 1 || s[0] > std::size_t(kMaxWidth))
      throw InputError(path, p + "0.weight", "must be (hidden, features), hidden <= 1024");
    const int hidden = int(s[0]);
    h.members.push_back({layer(f, p + "0", nf, hidden), layer(f, p + "1", hidden, hidden),
                         layer(f, p + "2", hidden, h.outputs())});
  }
  return h;
}

}  // namespace ufno
