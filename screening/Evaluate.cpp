#include "screening/Evaluate.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/FieldNames.hpp"
#include "runtime/PressureEstimates.hpp"
#include "runtime/TrainingDistance.hpp"
#include "runtime/TrainingStatistics.hpp"
#include "screening/KpiHeads.hpp"

namespace ufno {

std::optional<CaseFields> case_fields(const Prediction& p) {
  const std::vector<float>*sg = nullptr, *dp = nullptr;
  for (const auto& f : p.fields) (field_kind(f.name) == FieldKind::SG ? sg : dp) = &f.values;
  if (!sg || !dp) return std::nullopt;
  return CaseFields{*sg, *dp, p.times_days};
}

namespace {

// A calibrated interval widened as beyond the calibration cases (KpiHeadEstimator's log factor
// around the estimate v); one flagged already stays as it is.
void widen(KpiBounds& b, double v) {
  if (b.trust != IntervalTrust::Calibrated || !(v > 0)) return;
  const double w = KpiHeadEstimator::kFarWidening;
  if (b.lo > 0) b.lo = v * std::pow(b.lo / v, w);
  if (b.hi > 0) b.hi = v * std::pow(b.hi / v, w);
  b.trust = IntervalTrust::Far;
}

// The case against the models' training profiles: what lies beyond, and the intervals widened.
void place_against_training(const ReservoirCase& c, const HeadRegistry& heads, Kpis& k) {
  if (heads.profiles.empty()) return;
  const auto stats = training_statistics(c);
  k.training_percentile = 0;
  for (const auto& p : heads.profiles) {
    const TrainingDistance d = training_distance(p, stats);
    k.training_percentile = std::max(k.training_percentile, d.joint_percentile);
    for (auto& n : d.beyond_names())
      if (std::find(k.beyond_training.begin(), k.beyond_training.end(), n) ==
          k.beyond_training.end())
        k.beyond_training.push_back(n);
  }
  if (k.beyond_training.empty()) return;
  widen(k.max_dp_bounds, k.max_dp_bar);
  widen(k.aor_bounds, k.aor_radius_m);
  widen(k.mass_bounds, k.co2_mass_mt);
  for (std::size_t y = 0; y < k.plume_bounds.size() && y < k.plume_radius_m.size(); ++y)
    widen(k.plume_bounds[y], k.plume_radius_m[y]);
}

}  // namespace

Kpis evaluate(const ReservoirCase& c, const CaseFields& f, const HeadRegistry& heads,
              const KpiOptions& o) {
  // The times the prediction's peak match ran the heads' estimates on, not their float32 copy.
  const std::vector<double> times = estimate_times_days(c, f.times_days);
  Kpis k = compute_kpis(c, f.sg, f.dp, times, o);
  KpiHeadInput in(k, c, f.sg, f.dp, times, o);
  heads.apply(in);
  place_against_training(c, heads, k);
  return k;
}

}  // namespace ufno
