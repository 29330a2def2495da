#include "runtime/MaxDpHead.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/EstimateMemo.hpp"
#include "runtime/KpiHeadFeatures.hpp"

namespace ufno {
namespace {

// The implicit estimate a head reads as its last input, as its feature name says; each once a
// case in a process (the peak match and the KPI stage both ask for it).
double implicit_input(const KpiHead& h, const ReservoirCase& c,
                      const std::vector<double>& times_days) {
  using namespace max_dp_estimate;
  const int which = h.physics_implicit_first_report ? kFirstReport
                    : h.physics_implicit_gravity    ? kGravity
                                                    : kTwoPhase;
  return max_dp_estimate_memo().get(which, c, times_days, [&] {
    if (which == kFirstReport) return rz_implicit_first_report_dp_bar(c, times_days);
    if (which == kGravity) return rz_gravity_two_phase_max_dp_bar(c, times_days);
    return rz_implicit_two_phase_max_dp_bar(c, times_days);
  });
}

}  // namespace

std::optional<HeadEstimate> max_dp_head_estimate(const KpiHeadEstimator& e, const ReservoirCase& c,
                                                 const std::vector<float>& dp,
                                                 const std::vector<double>& times_days,
                                                 const MaxDpPhysics* physics) {
  const KpiHead& h = e.head();
  // A head with physics inputs estimates log(max dP / Theis): its KPI is Theis x its output.
  double scale = 1.0;
  std::optional<HeadEstimate> v;
  if (h.physics_inputs == "max_dp") {
    const MaxDpPhysics m = physics ? *physics : max_dp_physics_features(c, times_days);
    scale = m.theis_bar;
    std::vector<double> extra(m.features.begin(), m.features.end());
    if (h.physics_implicit)
      extra.push_back(std::log(std::max(implicit_input(h, c, times_days), 1e-3)));
    v = e.estimate_with_interval(c, extra);
  } else if (!h.envelope_columns.empty()) {
    v = e.estimate_with_interval(
        c, field_envelope_features(c, dp, h.envelope_columns, h.envelope_floor_bar));
  } else {
    v = e.estimate_with_interval(c);
  }
  if (!v || !std::isfinite(scale) || scale <= 0) return std::nullopt;
  for (double& x : v->value) x *= scale;
  for (double& x : v->lo) x *= scale;
  for (double& x : v->hi) x *= scale;
  return v;
}

}  // namespace ufno
