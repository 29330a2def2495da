#include "io/KpiHeadFile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "core/Fingerprint.hpp"
#include "core/InputError.hpp"
#include "io/FiniteDataset.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

namespace {

constexpr int kMaxMembers = 64, kMaxWidth = 1024;

std::vector<double> finite_values(const h5::File& f, const std::string& name,
                                  const std::vector<std::size_t>& shape) {
  return finite_dataset(f, name, shape, std::size_t(kMaxWidth) * kMaxWidth);
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
  if (f.has_attribute("envelope_columns", g)) {
    const auto cols = f.numeric_attribute("envelope_columns", g);
    if (cols.empty() || cols.size() > std::size_t(kMaxWidth))
      throw InputError(h.path, g + "@envelope_columns", "must be 1 to 1024 radial columns");
    for (double c : cols) {
      if (!(c >= 0 && c < h.grid[1] && c == std::floor(c)))
        throw InputError(h.path, g + "@envelope_columns",
                         "must be radial columns of the head's grid");
      h.envelope_columns.push_back(int(c));
    }
    const auto floor = finite_attribute(f, g, "envelope_floor_bar");
    if (floor.size() != 1 || !(floor[0] > 0))
      throw InputError(h.path, g + "@envelope_floor_bar", "must be one positive number");
    h.envelope_floor_bar = floor[0];
  }
  if (f.has_attribute("field_plume_radius_floor_m", g)) {
    const auto floor = finite_attribute(f, g, "field_plume_radius_floor_m");
    if (floor.size() != 1 || !(floor[0] > 0))
      throw InputError(h.path, g + "@field_plume_radius_floor_m", "must be one positive number");
    h.field_plume_radius_floor_m = floor[0];
  }
  if (f.has_attribute("physics_inputs", g)) {
    h.physics_inputs = f.string_attribute_required("physics_inputs", g);
    if (h.physics_inputs != "max_dp" && h.physics_inputs != "envelope" &&
        h.physics_inputs != "plume_radius")
      throw InputError(h.path, g + "@physics_inputs",
                       "must be \"max_dp\", \"envelope\" or \"plume_radius\"");
    // A plume-radius head may read the solve's radii and the network's; the pressure heads'
    // physics inputs replace the network's envelope.
    if (h.reads_network() && h.physics_inputs != "plume_radius")
      throw InputError(h.path, g + "@physics_inputs",
                       "a head reads either the network's outputs or the physics estimates");
  }
  if (f.has_attribute("envelope_baseline", g)) {
    h.envelope_baseline = f.string_attribute_required("envelope_baseline", g);
    if (h.envelope_baseline != "gravity_envelope")
      throw InputError(h.path, g + "@envelope_baseline", "must be \"gravity_envelope\"");
    if (h.physics_inputs != "envelope")
      throw InputError(h.path, g + "@envelope_baseline",
                       "only a dP-envelope head with physics inputs (\"envelope\") has one");
  }
  if (h.reads_network()) {
    if (!f.has_attribute("network_digest", g))
      throw InputError(h.path, g + "@network_digest",
                       "is missing: a head that reads the network's output needs its digest");
    h.network_digest = f.string_attribute_required("network_digest", g);
    if (h.network_digest.size() != 16 ||
        h.network_digest.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw InputError(h.path, g + "@network_digest", "must be 16 hexadecimal digits");
  }
  if (f.has_attribute("sg_threshold", g)) {
    const auto v = finite_attribute(f, g, "sg_threshold");
    if (v.size() != 1 || !(v[0] > 0 && v[0] < 1))
      throw InputError(h.path, g + "@sg_threshold", "must be one number in (0, 1)");
    h.sg_threshold = v[0];
  }
}

// The optional per-case scale of an interval: a known name, for a head whose inputs hold what it
// needs, with a positive floor.
void read_interval_scale(const h5::File& f, const std::string& g, KpiHead& h) {
  if (!f.has_attribute("interval_scale", g)) return;
  HeadInterval& iv = h.interval;
  iv.scale = f.string_attribute_required("interval_scale", g);
  if (iv.scale != "field_radius_disagreement")
    throw InputError(h.path, g + "@interval_scale", "must be \"field_radius_disagreement\"");
  if (!(h.field_plume_radius_floor_m > 0) && h.physics_inputs != "plume_radius")
    throw InputError(h.path, g + "@interval_scale",
                     "field_radius_disagreement needs a head that reads plume radii (the "
                     "network's or the buoyancy-aware solve's)");
  const auto floor = finite_attribute(f, g, "interval_scale_floor");
  if (floor.size() != 1 || !(floor[0] > 0 && floor[0] <= 10))
    throw InputError(h.path, g + "@interval_scale_floor", "must be one number in (0, 10]");
  iv.scale_floor = floor[0];
  if (f.has_attribute("interval_scale_window", g)) {
    const auto w = finite_attribute(f, g, "interval_scale_window");
    if (w.size() != 1 || !(w[0] >= 0 && w[0] <= kMaxWidth) || w[0] != std::floor(w[0]))
      throw InputError(h.path, g + "@interval_scale_window",
                       "must be one whole number of report times in [0, 1024]");
    iv.scale_window = int(w[0]);
  }
}

// The optional joint-distance factor of an interval: an exponent, a reference and the model
// file's training profile to place a case against.
void read_interval_joint(const h5::File& f, const std::string& g, KpiHead& h) {
  if (!f.has_attribute("interval_joint_exponent", g)) return;
  HeadInterval& iv = h.interval;
  const auto e = finite_attribute(f, g, "interval_joint_exponent");
  if (e.size() != 1 || !(e[0] >= 0 && e[0] <= 10))
    throw InputError(h.path, g + "@interval_joint_exponent", "must be one number in [0, 10]");
  if (!f.has_attribute("interval_joint_reference", g))
    throw InputError(h.path, g + "@interval_joint_reference",
                     "is missing: an interval_joint_exponent needs its reference distance");
  const auto r = finite_attribute(f, g, "interval_joint_reference");
  if (r.size() != 1 || !(r[0] > 0))
    throw InputError(h.path, g + "@interval_joint_reference", "must be one positive number");
  iv.profile = read_training_profile(h.path);
  if (!iv.profile)
    throw InputError(h.path, g + "@interval_joint_exponent",
                     "needs the model file's training profile (/training_profile), which it "
                     "does not carry");
  iv.joint_exponent = e[0];
  iv.joint_reference = r[0];
}

// The optional interval attributes: all of them or none, sizes that chain, lo <= hi.
void read_interval(const h5::File& f, const std::string& g, KpiHead& h) {
  if (!f.has_attribute("interval_coverage", g)) return;
  HeadInterval& iv = h.interval;
  const auto cov = finite_attribute(f, g, "interval_coverage");
  if (cov.size() != 1 || !(cov[0] > 0 && cov[0] < 1))
    throw InputError(h.path, g + "@interval_coverage", "must be one number in (0, 1)");
  iv.coverage = cov[0];
  if (f.has_attribute("interval_distance_edges", g)) {
    const auto e = f.numeric_attribute("interval_distance_edges", g);
    if (e.size() > 16) throw InputError(h.path, g + "@interval_distance_edges", "more than 16");
    for (std::size_t i = 0; i < e.size(); ++i)
      if (!std::isfinite(e[i]) || (i && !(e[i] > e[i - 1])))
        throw InputError(h.path, g + "@interval_distance_edges", "must be finite and increasing");
    iv.distance_edges = e;
  }
  const std::size_t n = (iv.distance_edges.size() + 1) * std::size_t(h.outputs());
  iv.log_lo = finite_attribute(f, g, "interval_log_lo");
  iv.log_hi = finite_attribute(f, g, "interval_log_hi");
  if (iv.log_lo.size() != n || iv.log_hi.size() != n)
    throw InputError(h.path, g + "@interval_log_lo",
                     "must hold one value per distance bin and output (" + std::to_string(n) + ")");
  for (std::size_t i = 0; i < n; ++i)
    if (iv.log_lo[i] > iv.log_hi[i])
      throw InputError(h.path, g + "@interval_log_hi", "must not be below interval_log_lo");
  const auto limit = finite_attribute(f, g, "interval_distance_limit");
  if (limit.size() != 1 || !(limit[0] > 0))
    throw InputError(h.path, g + "@interval_distance_limit", "must be one positive number");
  iv.distance_limit = limit[0];
  iv.calibration = f.string_attribute(g, "interval_calibration").value_or("");
  read_interval_scale(f, g, h);
  if (iv.scale.empty() && f.has_attribute("interval_scale_window", g))
    throw InputError(h.path, g + "@interval_scale_window", "needs an interval_scale");
  read_interval_joint(f, g, h);
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
  read_interval(f, g, h);
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

std::string network_digest(const std::string& path) {
  const h5::File f = h5::File::open_read(path);
  auto names = f.dataset_names();
  std::sort(names.begin(), names.end());
  std::uint64_t h = kFnvOffset;
  for (const auto& n : names) {
    h = fnv1a(n, h);
    std::vector<std::size_t> shape;
    const auto v = f.read_floats(n, &shape);
    std::string bytes(v.size() * sizeof(float), '\0');
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::uint32_t u;
      std::memcpy(&u, &v[i], sizeof u);
      for (int b = 0; b < 4; ++b) bytes[4 * i + b] = char((u >> (8 * b)) & 0xff);  // little-endian
    }
    h = fnv1a(bytes, h);
  }
  return hex_fingerprint(h);
}

}  // namespace ufno
