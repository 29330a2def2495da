#pragma once
// Key performance indicators of one predicted scenario, as site screening uses them: plume radius
// and plan-view area where SG exceeds a threshold at the years asked for, the maximum pressure
// buildup with where and when it occurs, the area-of-review radius where dP exceeds a critical
// pressure, and the CO2 mass in place in the plume, over the cells of the formation (PERMX > 0).
// Radii are outer edges of radial cells measured from the well axis (inner radius INRAD 0.1 m as in
// the paper's grid is ignored: cell edges are cumsum(DR)).
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

struct KpiOptions {
  double sg_threshold = 0.01;  // plume: SG > this
  std::vector<double> years{1, 10, 30};
  double critical_dp_bar = 10.0;  // area of review: dP > this
  double co2_density = 700.0;     // kg/m3 at reservoir conditions, for the mass in place
};

struct Kpis {
  std::vector<double> plume_radius_m, plume_area_km2;  // per requested year
  std::vector<double> years_used;                      // report time used for each (years)
  double max_dp_bar = 0, max_dp_radius_m = 0, max_dp_depth_m = 0, max_dp_year = 0;
  double aor_radius_m = 0;  // 0: nowhere above the critical pressure
  double co2_mass_mt = 0;   // in the plume (SG > threshold) at the last report time
};

// sg, dp: (T, X, Y) of one case on the case's grid; times in days.
Kpis compute_kpis(const ReservoirCase& c, const std::vector<float>& sg,
                  const std::vector<float>& dp, const std::vector<double>& times_days,
                  const KpiOptions& o);

std::vector<std::string> kpi_header(const KpiOptions& o);
std::vector<double> kpi_row(const Kpis& k);

}  // namespace ufno
