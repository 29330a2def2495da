#pragma once
// The KPI heads a run's model files carry, and how they change the KPIs of a predicted case
// (docs/kpis.md, "KPI heads"):
// - the dP model's /max_dp_head gives max_dP_bar (the field smooths the near-well spike); one
//   that also reads the network's envelope belongs to that network (its digest);
// - the SG model's /plume_radius_head gives the plume radius and area (the field smears the
//   front outward), for runs at the head's report times and plume threshold; one that also reads
//   the network's own radii belongs to that network (its digest), like the envelope head; one
//   may also read the buoyancy-aware r-z solve's plume radius (physics_inputs =
//   "plume_radius");
// - the SG model's /co2_mass_head gives the share of the injected CO2 still free gas at the last
//   report, hence the CO2 mass in place (the field's mass sums the SG field's errors over the
//   plume), for runs ending at the head's time with Span-Wagner densities.
// - the dP model's /dp_envelope_head gives the largest dP each radius sees (from the case and the
//   network's own envelope), hence the area of review for any critical pressure; it belongs to
//   the network it was fitted with (its digest), and is not used with another.
// The field's own values stay in the KPIs (max_dp_field_bar, plume_radius_field_m,
// co2_mass_field_mt, aor_field_radius_m); the place and time of the maximum, the mass cap and
// everything else stay the field's. A case outside a head's training ranges keeps the field's
// values.
#include <optional>
#include <string>
#include <vector>

#include "runtime/Head.hpp"
#include "runtime/KpiHeadEstimator.hpp"
#include "runtime/PressureEstimates.hpp"
#include "screening/Kpis.hpp"

namespace ufno {

// The KPI stage: the KPIs of one case, changed in place, with the fields and report times they
// were computed from and the options of the run.
struct KpiHeadInput : HeadInput {
  KpiHeadInput(Kpis& k, const ReservoirCase& c_, const std::vector<float>& sg_,
               const std::vector<float>& dp_, const std::vector<double>& times_days_,
               const KpiOptions& o_)
      : HeadInput(HeadStage::Kpis),
        kpis(k),
        c(c_),
        sg(sg_),
        dp(dp_),
        times_days(times_days_),
        o(o_) {}
  Kpis& kpis;
  const ReservoirCase& c;
  const std::vector<float>&sg, &dp;  // (T, X, Y)
  const std::vector<double>& times_days;
  const KpiOptions& o;
  // The case's physics estimates at times_days, computed the first time a head asks: the
  // maximum-dP and envelope heads both read them, and the r-z solve is the costly part.
  const MaxDpPhysics& physics() {
    if (!physics_) physics_ = max_dp_physics_features(c, times_days);
    return *physics_;
  }

 private:
  std::optional<MaxDpPhysics> physics_;
};

// What makes one kind of KPI-stage head: the checks of its group's attributes beyond the shared
// ones, and how it changes the KPIs.
struct KpiHeadKind {
  bool reads_envelope;     // may read the network's dP envelope (envelope_columns)
  bool reads_field_radii;  // may read the network's plume radii (field_plume_radius_floor_m)
  void (*validate)(const KpiHead& h);
  void (*apply)(const KpiHeadEstimator& e, KpiHeadInput& in);
};
// /max_dp_head of a dP model: the maximum dP (apply_max_dp_head).
extern const KpiHeadKind kMaxDpHead;
// /plume_radius_head of an SG model: the plume radius and area (apply_plume_radius_head).
extern const KpiHeadKind kPlumeRadiusHead;
// /co2_mass_head of an SG model: the CO2 mass in place and the mass ratio (apply_co2_mass_head).
extern const KpiHeadKind kCo2MassHead;
// /dp_envelope_head of a dP model: the area of review (apply_dp_envelope_head).
extern const KpiHeadKind kDpEnvelopeHead;

// A KPI-stage head: a model file group's estimator and its kind.
class KpiStageHead : public Head {
 public:
  KpiStageHead(KpiHeadEstimator e, const KpiHeadKind& kind) : e_(std::move(e)), kind_(kind) {}
  HeadStage stage() const override { return HeadStage::Kpis; }
  const std::string& group() const override { return e_.head().group; }
  const KpiHeadEstimator& estimator() const { return e_; }
  void validate() const override;
  void apply(HeadInput& in) const override;

 private:
  KpiHeadEstimator e_;
  const KpiHeadKind& kind_;
};

// max_dP_bar becomes the head's estimate when the case is inside its ranges. A head that reads
// the network's envelope (envelope_columns) reads that of dp (T, X, Y); one with physics inputs
// (physics_inputs = "max_dp") reads max_dp_physics_features at the report times `times_days`
// (empty: the paper's) and its estimate and bounds are Theis x the head's.
// `physics`: the case's estimates at times_days when the caller has them (else computed here).
void apply_max_dp_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                       const std::vector<float>& dp, const std::vector<double>& times_days = {},
                       const MaxDpPhysics* physics = nullptr);

// Each year's plume radius becomes the head's at that year's report time (the running maximum
// over earlier ones: the reach never recedes), no larger than the field's mass-capped radius in
// a year the field was capped; the area follows. A head with field radii also reads those of sg
// (T, X, Y); one with physics inputs the buoyancy-aware solve's at times_days (through
// memo_gravity_summary, so a run whose dP heads read that solve adds none). Nothing changes when
// the run's report times or plume threshold are not the head's, or the case is outside its ranges.
void apply_plume_radius_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                             const std::vector<float>& sg, const std::vector<double>& times_days,
                             const KpiOptions& o);

// The mass ratio becomes the head's and the CO2 mass in place ratio x injected mass, when the
// run's last report time is the head's, the densities are Span-Wagner's (no fixed co2_density:
// the head was fitted to Flow's masses at those densities) and the case is inside its ranges.
void apply_co2_mass_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                         const std::vector<double>& times_days, const KpiOptions& o);

// The area of review becomes the radius where the head's envelope falls through
// o.critical_dp_bar (envelope_front_radius), for a case inside its ranges.
// A head with physics inputs (physics_inputs = "envelope") reads the physics estimates and the
// r-z solve's envelope at the report times `times_days` (empty: the paper's) instead of the
// network's envelope.
void apply_dp_envelope_head(Kpis& k, const KpiHeadEstimator& e, const ReservoirCase& c,
                            const std::vector<float>& dp, const KpiOptions& o,
                            const std::vector<double>& times_days = {},
                            const MaxDpPhysics* physics = nullptr);

// log(max(radius, floor)) of the plume front radius of sg (T, X, Y of the case's grid) at each
// report time, the running maximum (screening/Kpis.hpp plume_front_radii;
// python/ufno/heads/plume_radius.py inputs).
std::vector<double> field_plume_radius_features(const ReservoirCase& c,
                                                const std::vector<float>& sg, double threshold,
                                                double floor);

// Where an envelope (one value per radial column, from the well out) falls through `critical`:
// 0 if the first column is not above it; the outer edge of the grid if every column is;
// otherwise between the centres of the last column above and the next, linearly in dP.
double envelope_front_radius(const ReservoirCase& c, const std::vector<double>& envelope,
                             double critical);

}  // namespace ufno
