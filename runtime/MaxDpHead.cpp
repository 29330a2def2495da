#include "runtime/MaxDpHead.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/EstimateMemo.hpp"
#include "runtime/KpiHeadFeatures.hpp"

namespace ufno {
namespace {

double floored_log(double bar) { return std::log(std::max(bar, 1e-3)); }

// The inputs a head reads after the three physics estimates, as its feature names say
// (KpiHeadEstimator), as logarithms; each set once a case in a process (the peak match and the
// KPI stage both ask for it).
std::vector<double> extra_inputs(const KpiHead& h, const ReservoirCase& c,
                                 const std::vector<double>& times_days) {
  const MaxDpExtraInputs which = h.physics_extra;
  if (which == MaxDpExtraInputs::none) return {};
  return max_dp_estimate_memo().get(int(which), c, times_days, [&]() -> std::vector<double> {
    switch (which) {
      case MaxDpExtraInputs::implicit_max:
        return {floored_log(rz_implicit_two_phase_max_dp_bar(c, times_days))};
      case MaxDpExtraInputs::implicit_first_report:
        return {floored_log(rz_implicit_first_report_dp_bar(c, times_days))};
      case MaxDpExtraInputs::gravity_max:
        return {floored_log(memo_gravity_summary(c, times_days).max_bar)};
      case MaxDpExtraInputs::gravity_summary: {
        // The solve the dP-envelope head may read too.
        const GravitySummary s = memo_gravity_summary(c, times_days);
        return {floored_log(s.max_bar), floored_log(s.first_report_bar), std::log(s.max_day)};
      }
      case MaxDpExtraInputs::none:
        break;
    }
    return {};
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
    for (double v : extra_inputs(h, c, times_days)) extra.push_back(v);
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
