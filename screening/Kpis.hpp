#pragma once
// Key performance indicators of one scenario, as site screening uses them. Every rule is in
// docs/kpis.md; in short:
// - SG counts only inside the formation (PERMX > 0) and only within [0, 1 - SWI];
// - the plume is the gas (SG > threshold) connected, cell to cell through the formation, to the
//   perforated cells of the well column: specks of gas elsewhere are not plume;
// - a plume's radius is capped where the gas it holds, filled ring by ring outward from the well
//   at the local porosity and CO2 density, exceeds the mass injected so far (rate x time, known
//   exactly) by more than the tolerance;
// - the radius reported for a year is the largest reached up to that year's report time
//   (injection is continuous, so the plume's reach never recedes);
// - the CO2 mass in place is the free-phase gas of the plume at the last report, with Span-Wagner
//   densities at each cell's pressure (initial + hydrostatic + dP) and the case's temperature; its
//   ratio to the injected mass is reported (below 1 where CO2 dissolves in the brine);
// - the area of review is the region connected to the perforations where dP > critical.
// Radii are outer edges of radial cells measured from the well axis (cell edges are cumsum(DR)).
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "io/CaseFile.hpp"
#include "runtime/PlumeFront.hpp"  // the plume rule: connected_to_perforations, plume_front_radii

namespace ufno {

struct KpiOptions {
  double sg_threshold = 0.01;  // plume: SG > this
  std::vector<double> years{1, 10, 30};
  double critical_dp_bar = 10.0;  // area of review: dP > this
  double co2_density = 0;         // kg/m3; 0: Span-Wagner density of each cell
  double mass_tolerance = 0.1;    // plume mass may exceed the injected mass by this fraction
};

// Refuses options outside their ranges with InputError(source, name(key), what), key being the
// option's name above ("sg_threshold", "years", ...): a sweep names "kpi.<key>" of its
// configuration, ufno_kpis its flags.
void validate_kpi_options(const KpiOptions& o, const std::string& source,
                          const std::function<std::string(const std::string&)>& name);

// The prediction interval of a KPI from a head (docs/kpis.md, "Intervals"): NaN bounds and
// trust None where the KPI has none (the field's value, or a model file without calibration).
enum class IntervalTrust { None = 0, Calibrated = 1, Far = 2 };
struct KpiBounds {
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
  IntervalTrust trust = IntervalTrust::None;
};

struct Kpis {
  std::vector<double> plume_radius_m, plume_area_km2;  // per requested year
  std::vector<double> years_used;                      // report time used for each (years)
  std::vector<int> plume_capped;  // per year: 1 if the field's own reach was beyond the mass cap
  // plume_radius_m may come from an SG model's plume-radius head (screening/KpiHeads.hpp);
  // plume_radius_field_m is always the field's (capped) radius.
  std::vector<double> plume_radius_field_m;
  bool plume_from_head = false;
  // max_dp_bar: the field's maximum, or a dP model's head estimate (screening/KpiHeads.hpp);
  // max_dp_field_bar, the radius, depth and year are always the field's.
  double max_dp_bar = 0, max_dp_radius_m = 0, max_dp_depth_m = 0, max_dp_year = 0;
  double max_dp_field_bar = 0;
  bool max_dp_from_head = false;
  double aor_radius_m = 0;  // 0: the perforations are not above the critical pressure
  // aor_radius_m may come from a dP model's envelope head; aor_field_radius_m is the field's.
  double aor_field_radius_m = 0;
  bool aor_from_head = false;
  double co2_mass_mt = 0;  // free-phase CO2 in the plume at the last report time
  double injected_mt = 0;  // rate x time at the last report time
  double mass_ratio = 0;   // co2_mass_mt / injected_mt
  // co2_mass_mt and mass_ratio may come from an SG model's CO2-mass head; co2_mass_field_mt is
  // always the field's.
  double co2_mass_field_mt = 0;
  bool mass_from_head = false;
  // Intervals of the KPIs a head gives (per year for the plume radius; the area follows it).
  KpiBounds max_dp_bounds, aor_bounds, mass_bounds;
  std::vector<KpiBounds> plume_bounds;
  // How far the case lies from the heads' training data: the largest over the heads used of its
  // feature distance over the farthest calibration case's (above 1: beyond every calibration
  // case, the intervals widened and flagged). 0 when no head carries an interval.
  double training_distance = 0;
  // How far the case lies from the models' training data (runtime/TrainingDistance.hpp): the
  // statistics beyond its range ("joint" when the statistics together are), and the share of
  // training cases nearer in the joint distance (0-100; NaN without a training profile). Beyond
  // it, every interval is widened and flagged as beyond the calibration cases is.
  std::vector<std::string> beyond_training;
  double training_percentile = std::numeric_limits<double>::quiet_NaN();
};

// sg, dp: (T, X, Y) of one whole-grid case; times in days.
Kpis compute_kpis(const ReservoirCase& c, const std::vector<float>& sg,
                  const std::vector<float>& dp, const std::vector<double>& times_days,
                  const KpiOptions& o);

}  // namespace ufno
