// Sweep KPIs against values worked out by hand on a constructed 3-layer, 4-cell radial field.
#include <catch2/catch.hpp>

#include <cmath>

#include "apps/Kpis.hpp"

using namespace ufno;

TEST_CASE("KPIs of a constructed field equal the hand-computed values", "[kpi]") {
  ReservoirCase c;
  c.nx = c.lx = 3;
  c.ny = c.ly = 4;
  c.dr = {10, 20, 30, 40};                         // edges 10, 30, 60, 100 m
  c.dz = {2, 2, 4};                                // mid-depths 1, 3, 6 m
  c.permx = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};  // bottom layer inactive
  c.poro.assign(12, 0.2);
  const std::vector<double> times{365.25, 3652.5};  // 1 and 10 years
  std::vector<float> sg(2 * 12, 0.f), dp(2 * 12, 0.f);
  auto put = [](std::vector<float>& f, int t, int x, int y, float v) {
    f[(t * 3 + x) * 4 + y] = v;
  };
  put(sg, 0, 0, 0, 0.5f);  // year 1: plume to the first cell (edge 10 m)
  put(sg, 1, 0, 0, 0.5f);  // year 10: top layer to the third cell (edge 60 m)
  put(sg, 1, 0, 1, 0.3f);
  put(sg, 1, 0, 2, 0.02f);
  put(sg, 1, 1, 3, 0.005f);  // below the threshold
  put(sg, 1, 2, 3, 0.9f);    // inactive cell: ignored
  put(dp, 1, 2, 0, 99.f);    // inactive cell: ignored
  put(dp, 0, 1, 1, 25.f);    // the maximum: year 1, layer 2 (depth 3 m), cell 2 (mid 20 m)
  put(dp, 1, 0, 2, 12.f);    // above 10 bar out to edge 60 m
  put(dp, 1, 0, 3, 9.f);
  KpiOptions o;
  o.years = {1, 10};
  o.sg_threshold = 0.01;
  o.critical_dp_bar = 10;
  o.co2_density = 700;
  Kpis k = compute_kpis(c, sg, dp, times, o);
  CHECK(k.plume_radius_m == std::vector<double>{10, 60});
  CHECK(k.plume_area_km2[0] == Approx(M_PI * 100 / 1e6));
  CHECK(k.max_dp_bar == 25);
  CHECK(k.max_dp_radius_m == 20);
  CHECK(k.max_dp_depth_m == 3);
  CHECK(k.max_dp_year == Approx(1));
  CHECK(k.aor_radius_m == 60);
  // Mass at year 10: rings pi (r2^2 - r1^2) x 2 m x 0.2 x 700 kg/m3 x SG over the plume only
  // (the 0.005 cell below the threshold and the inactive cell do not count).
  const double ring0 = M_PI * 100 * 2, ring1 = M_PI * (900 - 100) * 2,
               ring2 = M_PI * (3600 - 900) * 2;
  const double mass = (0.5 * ring0 + 0.3 * ring1 + 0.02 * ring2) * 0.2 * 700;
  CHECK(k.co2_mass_mt == Approx(mass / 1e9));
  CHECK(kpi_header(o).size() == kpi_row(k).size());
}
