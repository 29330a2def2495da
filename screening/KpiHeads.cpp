#include "screening/KpiHeads.hpp"

#include <algorithm>
#include <cmath>

#include "core/InputError.hpp"
#include "runtime/KpiHeadFeatures.hpp"

namespace ufno {

namespace {

constexpr double kDaysPerYear = 365.25;

// A head's kind fixes what its outputs must be: one maximum; one radius per report time at a
// plume threshold; one mass ratio at one report time.
void check_kind(const KpiHead& h) {
  // The network's own outputs a head may read are fixed by its kind.
  if (!h.envelope_columns.empty() && h.group != KpiHeads::kDpEnvelopeGroup &&
      h.group != KpiHeads::kMaxDpGroup)
    throw InputError(h.path, h.group + "@envelope_columns",
                     "only a dP-envelope or maximum-dP head reads these");
  if (h.field_plume_radius_floor_m > 0 && h.group != KpiHeads::kPlumeRadiusGroup)
    throw InputError(h.path, h.group + "@field_plume_radius_floor_m",
                     "only a plume-radius head reads the field's radii");
  if (h.group == KpiHeads::kDpEnvelopeGroup) {
    if (h.outputs() != h.grid[1])
      throw InputError(h.path, h.group + "@target_mean", "must have one value per radial column");
    if (h.envelope_columns.empty())
      throw InputError(h.path, h.group + "@envelope_columns",
                       "a dP-envelope head needs the columns of the network's envelope it reads");
    return;
  }
  if (h.group != KpiHeads::kPlumeRadiusGroup && h.outputs() != 1)
    throw InputError(h.path, h.group + "@target_mean", "must be one number (one output)");
  if (h.group == KpiHeads::kMaxDpGroup) return;
  if (h.times_days.empty())
    throw InputError(h.path, h.group + "@times_days", "this head needs its report times");
  if (h.group == KpiHeads::kPlumeRadiusGroup && h.sg_threshold <= 0)
    throw InputError(h.path, h.group + "@sg_threshold",
                     "a plume-radius head needs the plume threshold it was fitted to");
}

bool same_times(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t t = 0; t < a.size(); ++t)
    if (std::abs(a[t] - b[t]) > 1e-6 * std::max(1.0, std::abs(b[t]))) return false;
  return true;
}

}  // namespace

KpiHeads KpiHeads::from_model_files(const std::vector<std::string>& paths) {
  KpiHeads h;
  for (const auto& p : paths) {
    if (!h.max_dp) h.max_dp = KpiHeadEstimator::from_model_file(p, kMaxDpGroup);
    if (!h.plume_radius) h.plume_radius = KpiHeadEstimator::from_model_file(p, kPlumeRadiusGroup);
    if (!h.co2_mass) h.co2_mass = KpiHeadEstimator::from_model_file(p, kCo2MassGroup);
    if (!h.dp_envelope) h.dp_envelope = KpiHeadEstimator::from_model_file(p, kDpEnvelopeGroup);
  }
  for (const auto* e : {&h.max_dp, &h.plume_radius, &h.co2_mass, &h.dp_envelope})
    if (*e) check_kind((*e)->head());
  // A head that reads the network's output corrects one network's field: with another (a
  // retrained or averaged model that kept the group) its inputs mean something else.
  h.drop_if_other_network(h.dp_envelope, "the area of review comes from the field");
  h.drop_if_other_network(h.max_dp, "the maximum dP comes from the field");
  h.drop_if_other_network(h.plume_radius, "the plume radius and area come from the field");
  return h;
}

void KpiHeads::drop_if_other_network(std::optional<KpiHeadEstimator>& e,
                                     const std::string& fallback) {
  if (!e || !e->head().reads_network()) return;
  const KpiHead& h = e->head();
  if (network_digest(h.path) == h.network_digest) return;
  notes.push_back(h.path + ": " + h.group + " was fitted to another network; " + fallback);
  e.reset();
}

void KpiHeads::apply(Kpis& k, const ReservoirCase& c, const std::vector<float>& sg,
                     const std::vector<float>& dp, const std::vector<double>& times_days,
                     const KpiOptions& o) const {
  if (max_dp) apply_max_dp_head(k, *max_dp, c, dp);
  if (plume_radius) apply_plume_radius_head(k, *plume_radius, c, sg, times_days, o);
  if (co2_mass) apply_co2_mass_head(k, *co2_mass, c, times_days, o);
  if (dp_envelope) apply_dp_envelope_head(k, *dp_envelope, c, dp, o);
}

void apply_max_dp_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                       const std::vector<float>& dp) {
  const KpiHead& h = e.head();
  const auto v =
      h.envelope_columns.empty()
          ? e.estimate(c)
          : e.estimate(c, field_envelope_features(c, dp, h.envelope_columns, h.envelope_floor_bar));
  if (v) {
    k.max_dp_bar = v->front();
    k.max_dp_from_head = true;
  }
}

void apply_plume_radius_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                             const std::vector<float>& sg, const std::vector<double>& times_days,
                             const KpiOptions& o) {
  const KpiHead& h = e.head();
  if (std::abs(o.sg_threshold - h.sg_threshold) > 1e-12 || !same_times(times_days, h.times_days))
    return;
  auto r = h.field_plume_radius_floor_m > 0
               ? e.estimate(c, field_plume_radius_features(c, sg, h.sg_threshold,
                                                           h.field_plume_radius_floor_m))
               : e.estimate(c);
  if (!r) return;
  for (std::size_t t = 1; t < r->size(); ++t) (*r)[t] = std::max((*r)[t], (*r)[t - 1]);
  for (std::size_t i = 0; i < k.years_used.size(); ++i) {
    // The report time compute_kpis used for this year.
    std::size_t best = 0;
    for (std::size_t t = 1; t < times_days.size(); ++t)
      if (std::abs(times_days[t] - k.years_used[i] * kDaysPerYear) <
          std::abs(times_days[best] - k.years_used[i] * kDaysPerYear))
        best = t;
    double radius = (*r)[best];
    if (k.plume_capped[i]) radius = std::min(radius, k.plume_radius_m[i]);
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
  const auto r = e.estimate(c);
  if (!r) return;
  k.mass_ratio = r->front();
  k.co2_mass_mt = k.mass_ratio * k.injected_mt;
  k.mass_from_head = true;
}

void apply_dp_envelope_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                            const std::vector<float>& dp, const KpiOptions& o) {
  const KpiHead& h = e.head();
  const auto env =
      e.estimate(c, field_envelope_features(c, dp, h.envelope_columns, h.envelope_floor_bar));
  if (!env) return;
  k.aor_radius_m = envelope_front_radius(c, *env, o.critical_dp_bar);
  k.aor_from_head = true;
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
