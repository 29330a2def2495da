#include "screening/KpiHeads.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/InputError.hpp"
#include "core/NumberText.hpp"
#include "runtime/EstimateMemo.hpp"
#include "runtime/KpiHeadFeatures.hpp"
#include "runtime/MaxDpHead.hpp"
#include "runtime/PressureEstimates.hpp"

namespace ufno {

namespace {

constexpr double kDaysPerYear = 365.25;
// Under the logarithm of the r-z envelope an envelope head with physics inputs reads
// (python/ufno/heads/physics.py ENVELOPE_FLOOR_BAR).
constexpr double kRzEnvelopeFloorBar = 0.01;
// Under the logarithm of the buoyancy-aware solve's plume radius a plume-radius head reads
// (python/ufno/heads/plume_radius.py MIN_RADIUS_M).
constexpr double kGravityPlumeRadiusFloorM = 1.0;

// Output o's interval of a head estimate, and the case's distance noted in k.
KpiBounds bounds(const HeadEstimate& e, std::size_t o, Kpis& k) {
  KpiBounds b;
  if (e.lo.empty()) return b;
  b.lo = e.lo[o], b.hi = e.hi[o];
  b.trust = e.far ? IntervalTrust::Far : IntervalTrust::Calibrated;
  k.training_distance = std::max(k.training_distance, e.distance_ratio);
  return b;
}

bool same_times(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t t = 0; t < a.size(); ++t)
    if (std::abs(a[t] - b[t]) > 1e-6 * std::max(1.0, std::abs(b[t]))) return false;
  return true;
}

}  // namespace

void KpiStageHead::apply(HeadInput& in) const {
  if (in.stage != HeadStage::Kpis)
    throw std::logic_error(group() + ": given the input of another stage");
  kind_.apply(e_, static_cast<KpiHeadInput&>(in));
}

void KpiStageHead::validate() const {
  // The network's own outputs a head may read are fixed by its kind.
  const KpiHead& h = e_.head();
  if (!h.envelope_columns.empty() && !kind_.reads_envelope)
    throw InputError(h.path, h.group + "@envelope_columns",
                     "only a dP-envelope or maximum-dP head reads these");
  if (h.field_plume_radius_floor_m > 0 && !kind_.reads_field_radii)
    throw InputError(h.path, h.group + "@field_plume_radius_floor_m",
                     "only a plume-radius head reads the field's radii");
  const bool physics_ok = (h.physics_inputs == "max_dp" && &kind_ == &kMaxDpHead) ||
                          (h.physics_inputs == "envelope" && &kind_ == &kDpEnvelopeHead) ||
                          (h.physics_inputs == "plume_radius" && &kind_ == &kPlumeRadiusHead);
  if (!h.physics_inputs.empty() && !physics_ok)
    throw InputError(h.path, h.group + "@physics_inputs",
                     "\"max_dp\" is for a maximum-dP head, \"envelope\" for a dP-envelope head, "
                     "\"plume_radius\" for a plume-radius head");
  kind_.validate(h);
}

namespace {

void require_one_output(const KpiHead& h) {
  if (h.outputs() != 1)
    throw InputError(h.path, h.group + "@target_mean", "must be one number (one output)");
}

void require_times(const KpiHead& h) {
  if (h.times_days.empty())
    throw InputError(h.path, h.group + "@times_days", "this head needs its report times");
}

}  // namespace

const KpiHeadKind kMaxDpHead{
    true, false, require_one_output, [](const KpiHeadEstimator& e, KpiHeadInput& in) {
      apply_max_dp_head(in.kpis, e, in.c, in.dp, in.times_days,
                        e.head().physics_inputs.empty() ? nullptr : &in.physics());
    }};

const KpiHeadKind kPlumeRadiusHead{
    false, true,
    [](const KpiHead& h) {
      require_times(h);
      if (h.sg_threshold <= 0)
        throw InputError(h.path, h.group + "@sg_threshold",
                         "a plume-radius head needs the plume threshold it was fitted to");
      // The solve's radii it reads are at that threshold (runtime/PressureEstimates.hpp).
      if (h.physics_inputs == "plume_radius" &&
          std::abs(h.sg_threshold - kGravityPlumeThreshold) > 1e-12)
        throw InputError(h.path, h.group + "@sg_threshold",
                         "must be " + number_text(kGravityPlumeThreshold) +
                             ", the threshold the buoyancy-aware solve's plume radius is taken "
                             "at");
    },
    [](const KpiHeadEstimator& e, KpiHeadInput& in) {
      apply_plume_radius_head(in.kpis, e, in.c, in.sg, in.times_days, in.o);
    }};

const KpiHeadKind kCo2MassHead{false, false,
                               [](const KpiHead& h) {
                                 require_one_output(h);
                                 require_times(h);
                               },
                               [](const KpiHeadEstimator& e, KpiHeadInput& in) {
                                 apply_co2_mass_head(in.kpis, e, in.c, in.times_days, in.o);
                               }};

const KpiHeadKind kDpEnvelopeHead{
    true, false,
    [](const KpiHead& h) {
      if (h.outputs() != h.grid[1])
        throw InputError(h.path, h.group + "@target_mean", "must have one value per radial column");
      if (h.envelope_columns.empty() && h.physics_inputs != "envelope")
        throw InputError(h.path, h.group + "@envelope_columns",
                         "a dP-envelope head needs the columns of the network's envelope it reads");
    },
    [](const KpiHeadEstimator& e, KpiHeadInput& in) {
      apply_dp_envelope_head(in.kpis, e, in.c, in.dp, in.o, in.times_days,
                             e.head().physics_inputs.empty() ? nullptr : &in.physics());
    }};

void apply_max_dp_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                       const std::vector<float>& dp, const std::vector<double>& times_days,
                       const MaxDpPhysics* physics) {
  const auto v = max_dp_head_estimate(e, c, dp, times_days, physics);
  if (!v) return;
  k.max_dp_bar = v->value.front();
  k.max_dp_from_head = true;
  k.max_dp_bounds = bounds(*v, 0, k);
}

void apply_plume_radius_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                             const std::vector<float>& sg, const std::vector<double>& times_days,
                             const KpiOptions& o) {
  const KpiHead& h = e.head();
  if (std::abs(o.sg_threshold - h.sg_threshold) > 1e-12 || !same_times(times_days, h.times_days))
    return;
  // The solve's radii, then the network's (KpiHeadEstimator's order).
  std::vector<double> extra;
  if (h.physics_inputs == "plume_radius")
    for (double r : memo_gravity_summary(c, times_days).plume_radius_m)
      extra.push_back(std::log(std::max(r, kGravityPlumeRadiusFloorM)));
  if (h.field_plume_radius_floor_m > 0) {
    const auto field =
        field_plume_radius_features(c, sg, h.sg_threshold, h.field_plume_radius_floor_m);
    extra.insert(extra.end(), field.begin(), field.end());
  }
  auto est = e.estimate_with_interval(c, extra);
  if (!est) return;
  // The reach never recedes: running maxima of the estimate and of both bounds.
  std::vector<double>* series[] = {&est->value, &est->lo, &est->hi};
  for (auto* s : series)
    for (std::size_t t = 1; t < s->size(); ++t) (*s)[t] = std::max((*s)[t], (*s)[t - 1]);
  const std::vector<double>* r = &est->value;
  k.plume_bounds.assign(k.years_used.size(), KpiBounds{});
  for (std::size_t i = 0; i < k.years_used.size(); ++i) {
    // The report time compute_kpis used for this year.
    std::size_t best = 0;
    for (std::size_t t = 1; t < times_days.size(); ++t)
      if (std::abs(times_days[t] - k.years_used[i] * kDaysPerYear) <
          std::abs(times_days[best] - k.years_used[i] * kDaysPerYear))
        best = t;
    double radius = (*r)[best];
    KpiBounds b = bounds(*est, best, k);
    if (k.plume_capped[i]) {  // the injected mass bounds the reach: the interval too
      radius = std::min(radius, k.plume_radius_m[i]);
      b.lo = std::min(b.lo, radius), b.hi = std::min(b.hi, k.plume_radius_m[i]);
    }
    k.plume_bounds[i] = b;
    k.plume_radius_m[i] = radius;
    k.plume_area_km2[i] = M_PI * radius * radius / 1e6;
  }
  k.plume_from_head = true;
}

void apply_co2_mass_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                         const std::vector<double>& times_days, const KpiOptions& o) {
  if (o.co2_density > 0 || times_days.empty() ||
      !same_times({times_days.back()}, e.head().times_days))
    return;
  const auto r = e.estimate_with_interval(c);
  if (!r) return;
  k.mass_ratio = r->value.front();
  k.co2_mass_mt = k.mass_ratio * k.injected_mt;
  k.mass_from_head = true;
  k.mass_bounds = bounds(*r, 0, k);
  k.mass_bounds.lo *= k.injected_mt, k.mass_bounds.hi *= k.injected_mt;
}

void apply_dp_envelope_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                            const std::vector<float>& dp, const KpiOptions& o,
                            const std::vector<double>& times_days, const MaxDpPhysics* physics) {
  const KpiHead& h = e.head();
  std::vector<double> extra;
  std::optional<GravitySummary> g;  // the buoyancy-aware solve's, when the head reads it
  if (h.physics_inputs == "envelope") {
    // The physics estimates, then the r-z solve's envelope at the head's columns.
    const MaxDpPhysics m = physics ? *physics : max_dp_physics_features(c, times_days);
    extra.assign(m.features.begin(), m.features.end());
    for (int col : h.physics_columns)
      extra.push_back(std::log(std::max(m.rz_envelope_bar[col], kRzEnvelopeFloorBar)));
    if (!h.physics_gravity_columns.empty()) {  // then the buoyancy-aware solve's
      g = memo_gravity_summary(c, times_days,
                               h.physics_gravity_dissolution == "brine" ? Dissolution::kBrine
                                                                        : Dissolution::kPoreVolume);
      for (int col : h.physics_gravity_columns)
        extra.push_back(std::log(std::max(g->envelope_bar[col], kRzEnvelopeFloorBar)));
    }
  } else {
    extra = field_envelope_features(c, dp, h.envelope_columns, h.envelope_floor_bar);
  }
  auto env = e.estimate_with_interval(c, extra);
  if (!env) return;
  // A head over the solve's envelope: the envelope and its bounds are the solve's times the
  // head's ratios (KpiHeadEstimator checks that the head reads that solve).
  if (!h.envelope_baseline.empty())
    for (std::size_t y = 0; y < env->value.size(); ++y) {
      const double base = std::max(g->envelope_bar[y], kRzEnvelopeFloorBar);
      env->value[y] *= base;
      if (y < env->lo.size()) env->lo[y] *= base, env->hi[y] *= base;
    }
  k.aor_radius_m = envelope_front_radius(c, env->value, o.critical_dp_bar);
  k.aor_from_head = true;
  // The envelope's bounds at every column give the radius's: a lower envelope falls through
  // the critical pressure nearer the well.
  KpiBounds b = bounds(*env, 0, k);
  if (b.trust != IntervalTrust::None) {
    b.lo = envelope_front_radius(c, env->lo, o.critical_dp_bar);
    b.hi = envelope_front_radius(c, env->hi, o.critical_dp_bar);
  }
  k.aor_bounds = b;
}

double envelope_front_radius(const ReservoirCase& c, const std::vector<double>& envelope,
                             double critical) {
  if (envelope.empty() || !(envelope[0] > critical)) return 0.0;
  std::size_t k = 0;
  while (k + 1 < envelope.size() && envelope[k + 1] > critical) ++k;
  double r_in = 0;
  for (std::size_t y = 0; y < k; ++y) r_in += c.dr[y];
  const double r_out = r_in + c.dr[k];
  if (k + 1 == envelope.size()) return r_out;
  const double c0 = (r_in + r_out) / 2, c1 = r_out + c.dr[k + 1] / 2;
  return c0 + (envelope[k] - critical) / (envelope[k] - envelope[k + 1]) * (c1 - c0);
}

std::vector<double> field_plume_radius_features(const ReservoirCase& c,
                                                const std::vector<float>& sg, double threshold,
                                                double floor) {
  std::vector<double> f = plume_front_radii(c, sg, threshold);
  for (double& r : f) r = std::log(std::max(r, floor));
  return f;
}

}  // namespace ufno
