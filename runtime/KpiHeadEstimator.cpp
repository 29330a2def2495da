#include "runtime/KpiHeadEstimator.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/InputError.hpp"
#include "io/ModelFile.hpp"
#include "runtime/KpiHeadFeatures.hpp"
#include "runtime/TrainingDistance.hpp"
#include "runtime/TrainingStatistics.hpp"

namespace ufno {

namespace {

// Exact GELU in double precision: core/Activation.hpp's is a float32 fit for vectorised
// layers, and a head is evaluated once per case, where equality with PyTorch matters more.
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

std::vector<double> dense(const DenseLayer& l, const std::vector<double>& x, bool activate) {
  std::vector<double> y(l.out);
  for (int o = 0; o < l.out; ++o) {
    double s = l.bias[o];
    for (int i = 0; i < l.in; ++i) s += l.weight[std::size_t(o) * l.in + i] * x[i];
    y[o] = activate ? gelu(s) : s;
  }
  return y;
}

const std::string kRzEnvelopePrefix = "log_rz_envelope_r";
// The buoyancy-aware solve's envelope columns by dissolution model (physics.py
// GRAVITY_ENVELOPE_PREFIXES).
const std::pair<const char*, const char*> kGravityEnvelopePrefixes[] = {
    {"pore_volume", "log_rz_gravity_envelope_r"}, {"brine", "log_rz_gravity_brine_envelope_r"}};

std::string grid_string(int x, int y) { return std::to_string(x) + " x " + std::to_string(y); }

// The interval's per-case scale of each output (python/ufno/heads/intervals.py): 1, or for
// "field_radius_disagreement" the floor + the RMS of log(estimate) - the network's log radius
// (the head's last inputs) over the outputs within the window of this one (all of them without
// one, field_radius_disagreement); times (joint / reference)^exponent with a joint-distance
// factor (joint_factor), joint the case's distance from the model's training data.
std::vector<double> interval_scales(const HeadInterval& iv, const ReservoirCase& c,
                                    const std::vector<double>& value,
                                    const std::vector<double>& inputs) {
  const std::size_t n = value.size();
  std::vector<double> scale(n, 1.0);
  if (!iv.scale.empty()) {
    const std::size_t first = inputs.size() - n;
    std::vector<double> g2(n);
    for (std::size_t o = 0; o < n; ++o) {
      const double gap = std::log(value[o]) - inputs[first + o];
      g2[o] = gap * gap;
    }
    for (std::size_t o = 0; o < n; ++o) {
      std::size_t a = 0, b = n;  // [a, b)
      if (iv.scale_window >= 0) {
        const std::size_t w = std::size_t(iv.scale_window);
        a = o > w ? o - w : 0;
        b = std::min(n, o + w + 1);
      }
      double s = 0;
      for (std::size_t t = a; t < b; ++t) s += g2[t];
      scale[o] = iv.scale_floor + std::sqrt(s / double(b - a));
    }
  }
  if (iv.profile) {
    const double joint = training_distance(*iv.profile, training_statistics(c)).joint;
    const double factor = std::pow(joint / iv.joint_reference, iv.joint_exponent);
    for (double& s : scale) s *= factor;
  }
  return scale;
}

// The column of an envelope input named <prefix><column> (at most five digits), else -1.
int envelope_input_column(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() ||
      name.size() - prefix.size() > 5 ||
      name.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
    return -1;
  return std::stoi(name.substr(prefix.size()));
}

}  // namespace

const std::vector<MaxDpExtraNames>& max_dp_extra_names() {
  static const std::vector<MaxDpExtraNames> table = {
      {MaxDpExtraInputs::implicit_max, {"log_rz_implicit_two_phase_max_dp_bar"}},
      {MaxDpExtraInputs::implicit_first_report, {"log_rz_implicit_first_report_dp_bar"}},
      {MaxDpExtraInputs::gravity_max, {"log_rz_gravity_two_phase_max_dp_bar"}},
      {MaxDpExtraInputs::gravity_summary,
       {"log_rz_gravity_two_phase_max_dp_bar", "log_rz_gravity_first_report_dp_bar",
        "log_rz_gravity_max_day"}},
  };
  return table;
}

KpiHeadEstimator::KpiHeadEstimator(KpiHead head) : head_(std::move(head)) {
  if (head_.interval.profile) check_profile_statistics(*head_.interval.profile);
  std::vector<std::string> names = kpi_head_feature_names();
  for (const auto& n : envelope_feature_names(head_.envelope_columns)) names.push_back(n);
  // A plume-radius head's: the buoyancy-aware solve's plume radius at each report time, then
  // the network's (last, as the interval's disagreement scale reads them).
  if (head_.physics_inputs == "plume_radius")
    for (const auto& n : gravity_plume_radius_feature_names(head_.outputs())) names.push_back(n);
  if (head_.field_plume_radius_floor_m > 0)
    for (const auto& n : field_radius_feature_names(head_.outputs())) names.push_back(n);
  // A maximum-dP head's physics inputs, as runtime/PressureEstimates.hpp names them
  // (max_dp_physics_feature_names; tests/test_pressure_estimates.cpp holds the two equal).
  if (head_.physics_inputs == "max_dp" || head_.physics_inputs == "envelope")
    for (const char* n :
         {"log_theis_max_dp_bar", "log_rz_two_phase_max_dp_bar", "log_rz_first_report_dp_bar"})
      names.push_back(n);
  // A maximum-dP head may read more estimates after those, as its last inputs (the table).
  if (head_.physics_inputs == "max_dp")
    for (const MaxDpExtraNames& extra : max_dp_extra_names()) {
      std::vector<std::string> with = names;
      with.insert(with.end(), extra.names.begin(), extra.names.end());
      if (head_.features != with) continue;
      names = with;
      head_.physics_extra = extra.inputs;
      break;
    }
  // An envelope head's r-z envelope columns, named log_rz_envelope_r<column>, then any of the
  // buoyancy-aware solve's, named log_rz_gravity_envelope_r<column>: read from its own names,
  // checked to be columns of its grid.
  if (head_.physics_inputs == "envelope") {
    std::string gravity_prefix;  // the first buoyancy-aware column's, which the others share
    for (std::size_t i = names.size(); i < head_.features.size(); ++i) {
      const std::string& n = head_.features[i];
      // The buoyancy-aware columns come after the r-z ones and only those.
      if (!head_.physics_columns.empty() && gravity_prefix.empty())
        for (const auto& [model, prefix] : kGravityEnvelopePrefixes)
          if (envelope_input_column(n, prefix) >= 0) {
            gravity_prefix = prefix;
            head_.physics_gravity_dissolution = model;
          }
      const bool gravity = !gravity_prefix.empty();
      const int col = envelope_input_column(n, gravity ? gravity_prefix : kRzEnvelopePrefix);
      if (col < 0 || col >= head_.grid[1])
        throw InputError(head_.path, head_.group + "@features",
                         "input " + n + " is not an r-z envelope column of the head's grid");
      (gravity ? head_.physics_gravity_columns : head_.physics_columns).push_back(col);
      names.push_back(n);
    }
    if (head_.physics_columns.empty())
      throw InputError(head_.path, head_.group + "@features",
                       "an envelope head with physics inputs reads r-z envelope columns");
    if (!head_.envelope_baseline.empty() && head_.physics_gravity_columns.empty())
      throw InputError(head_.path, head_.group + "@envelope_baseline",
                       "the buoyancy-aware solve's envelope as a baseline needs its columns "
                       "among the head's inputs");
  }
  if (head_.features != names)
    throw InputError(head_.path, head_.group + "@features",
                     "names features this build does not compute (a head from another version)");
}

std::optional<KpiHeadEstimator> KpiHeadEstimator::from_model_file(const std::string& path,
                                                                  const std::string& group) {
  auto h = read_kpi_head(path, group);
  if (!h) return std::nullopt;
  // The cases the network predicts are the ones the head reads: a head for another grid would
  // fail on every scenario after the predictions, so refuse it now.
  const auto g = ModelFile(path).spec().grid;  // a copy: the file closes here
  if (g[0] != h->grid[0] || g[1] != h->grid[1])
    throw InputError(path, group + "@grid",
                     grid_string(h->grid[0], h->grid[1]) + " but the model's grid is " +
                         grid_string(g[0], g[1]));
  return KpiHeadEstimator(std::move(*h));
}

std::optional<HeadEstimate> KpiHeadEstimator::estimate_with_interval(
    const ReservoirCase& c, const std::vector<double>& extra) const {
  auto v = estimate(c, extra);
  if (!v) return std::nullopt;
  HeadEstimate e;
  e.value = std::move(*v);
  const HeadInterval& iv = head_.interval;
  if (!iv.present()) return e;
  // The RMS of the standardised inputs, as the head itself standardises them.
  std::vector<double> x = kpi_head_features(c);
  x.insert(x.end(), extra.begin(), extra.end());
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double z = (x[i] - head_.feature_mean[i]) / head_.feature_std[i];
    s += z * z;
  }
  e.distance = std::sqrt(s / double(x.size()));
  e.distance_ratio = e.distance / iv.distance_limit;
  e.far = e.distance > iv.distance_limit;
  std::size_t bin = 0;
  while (bin < iv.distance_edges.size() && e.distance >= iv.distance_edges[bin]) ++bin;
  const std::vector<double> scale = interval_scales(iv, c, e.value, x);
  for (int o = 0; o < head_.outputs(); ++o) {
    const std::size_t k = bin * std::size_t(head_.outputs()) + std::size_t(o);
    const double w = (e.far ? kFarWidening : 1.0) * scale[std::size_t(o)];
    e.lo.push_back(e.value[o] * std::exp(iv.log_lo[k] * w));
    e.hi.push_back(e.value[o] * std::exp(iv.log_hi[k] * w));
  }
  return e;
}

std::optional<std::vector<double>> KpiHeadEstimator::estimate(
    const ReservoirCase& c, const std::vector<double>& extra) const {
  if (c.nx != head_.grid[0] || c.ny != head_.grid[1])
    throw InputError(c.path, "grid",
                     "is " + grid_string(c.nx, c.ny) + " but the " + head_.group + " of " +
                         head_.path + " was trained on " +
                         grid_string(head_.grid[0], head_.grid[1]));
  std::vector<double> x = kpi_head_features(c);
  if (x.size() + extra.size() != head_.features.size())
    throw std::logic_error(head_.group + ": " + std::to_string(extra.size()) +
                           " extra inputs given, the head reads " +
                           std::to_string(head_.features.size() - x.size()));
  x.insert(x.end(), extra.begin(), extra.end());
  return estimate(std::move(x));
}

std::optional<std::vector<double>> KpiHeadEstimator::estimate(std::vector<double> x) const {
  if (x.size() != head_.features.size())
    throw std::logic_error(head_.group + ": " + std::to_string(x.size()) +
                           " inputs given, the head reads " +
                           std::to_string(head_.features.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double pad = kRangeMargin * (head_.feature_max[i] - head_.feature_min[i]);
    if (!(x[i] >= head_.feature_min[i] - pad && x[i] <= head_.feature_max[i] + pad))
      return std::nullopt;
    x[i] = (x[i] - head_.feature_mean[i]) / head_.feature_std[i];
  }
  std::vector<double> z(head_.outputs(), 0.0);
  for (const auto& m : head_.members) {
    const auto y = dense(m[2], dense(m[1], dense(m[0], x, true), true), false);
    for (int o = 0; o < head_.outputs(); ++o) z[o] += y[o];
  }
  for (int o = 0; o < head_.outputs(); ++o)
    z[o] =
        std::exp(z[o] / double(head_.members.size()) * head_.target_std[o] + head_.target_mean[o]);
  return z;
}

}  // namespace ufno
