#include "runtime/TrainingDistance.hpp"

#include <cmath>
#include <cstdio>

#include "core/InputError.hpp"
#include "runtime/TrainingStatistics.hpp"

namespace ufno {

namespace {

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// The share (0-100) of training cases nearer than joint distance d, interpolated between the
// stored quantiles.
double percentile(const std::array<double, 5>& q, double d) {
  const auto& l = TrainingProfile::kLevels;
  if (d <= q[0]) return 0;
  for (std::size_t i = 1; i < q.size(); ++i)
    if (d <= q[i])
      return 100 * (l[i - 1] + (l[i] - l[i - 1]) *
                                   (q[i] > q[i - 1] ? (d - q[i - 1]) / (q[i] - q[i - 1]) : 1.0));
  return 100;
}

}  // namespace

bool TrainingDistance::beyond() const { return !beyond_names().empty(); }

std::vector<std::string> TrainingDistance::beyond_names() const {
  std::vector<std::string> n;
  for (const auto& d : deviations)
    if (d.beyond) n.push_back(d.name);
  if (joint_beyond) n.push_back("joint");
  return n;
}

std::vector<std::string> TrainingDistance::warnings(const std::string& model_path) const {
  std::vector<std::string> w;
  for (const auto& d : deviations) {
    const std::string unit = training_statistic_unit(d.name);
    w.push_back(d.name + " = " + fmt(d.value) + (unit.empty() ? "" : " " + unit) +
                (d.beyond ? " is outside the training data's range ["
                          : " is in the outer 1 % of the training data's range [") +
                fmt(d.lo) + ", " + fmt(d.hi) + "] (" + model_path + ")");
  }
  if (joint_beyond)
    w.push_back(
        "the case's properties together lie farther from the training data than any of its "
        "cases (joint distance " +
        fmt(joint) + "; " + model_path + ")");
  return w;
}

void check_profile_statistics(const TrainingProfile& p) {
  if (p.names != training_statistic_names())
    throw InputError(
        p.path, "training_profile@statistics",
        "names statistics this build does not compute (a profile from another version)");
}

TrainingDistance training_distance(const TrainingProfile& p, const std::vector<double>& stats) {
  TrainingDistance t;
  const std::size_t s = p.names.size();
  for (std::size_t i = 0; i < s; ++i) {
    const auto& q = p.quantiles[i];
    const double v = stats[i], pad = kRangeTolerance * (q[4] - q[0]);
    const bool beyond = v < q[0] - pad || v > q[4] + pad;
    if (beyond || v < q[1] || v > q[3]) t.deviations.push_back({p.names[i], v, q[0], q[4], beyond});
  }
  double m = 0;
  for (std::size_t i = 0; i < s; ++i)
    for (std::size_t j = 0; j < s; ++j)
      m += (stats[i] - p.mean[i]) * p.inverse_covariance[i * s + j] * (stats[j] - p.mean[j]);
  t.joint = std::sqrt(std::max(m, 0.0));
  t.joint_percentile = percentile(p.distance_quantiles, t.joint);
  t.joint_beyond = t.joint > p.distance_quantiles[4] * (1 + kRangeTolerance);
  return t;
}

}  // namespace ufno
