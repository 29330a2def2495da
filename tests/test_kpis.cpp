// Sweep KPIs against values worked out by hand on constructed radial fields, each made to break
// one rule of docs/kpis.md.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/Co2Density.hpp"
#include "screening/KpiTable.hpp"
#include "screening/Kpis.hpp"

using namespace ufno;

namespace {

// 3 layers x 4 radial cells: edges 10, 30, 60, 100 m; mid-depths 1, 3, 6 m; bottom layer
// inactive; the top two layers perforated.
ReservoirCase small_case() {
  ReservoirCase c;
  c.nx = c.lx = 3;
  c.ny = c.ly = 4;
  c.dr = {10, 20, 30, 40};
  c.dz = {2, 2, 4};
  c.permx = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  c.permz = c.permx;
  c.poro.assign(12, 0.2);
  c.perforated = {1, 1, 0};
  c.swi = 0.2;
  c.rate_mt_per_year = 1.0;  // ample for these rings unless a test says otherwise
  c.temperature_c = 40;
  c.pressure_bar = 100;
  return c;
}

struct Fields {
  int times;
  std::vector<float> sg, dp;
  explicit Fields(int t) : times(t), sg(t * 12, 0.f), dp(t * 12, 0.f) {}
  void put_sg(int t, int x, int y, float v) { sg[(t * 3 + x) * 4 + y] = v; }
  void put_dp(int t, int x, int y, float v) { dp[(t * 3 + x) * 4 + y] = v; }
};

KpiOptions fixed_density(std::vector<double> years) {
  KpiOptions o;
  o.years = std::move(years);
  o.sg_threshold = 0.01;
  o.critical_dp_bar = 10;
  o.co2_density = 700;
  return o;
}

double ring(double r0, double r1, double dz) { return M_PI * (r1 * r1 - r0 * r0) * dz; }

// The front between two cell centres (5, 20, 45, 80 m here) where a value falls from a to b
// through the threshold t.
double front(double c0, double c1, double a, double b, double t) {
  return c0 + (a - t) / (a - b) * (c1 - c0);
}

}  // namespace

TEST_CASE("KPIs of a constructed field equal the hand-computed values", "[kpi]") {
  const ReservoirCase c = small_case();
  const std::vector<double> times{365.25, 3652.5};  // 1 and 10 years
  Fields f(2);
  f.put_sg(0, 0, 0, 0.5f);  // year 1: plume to the first cell (edge 10 m)
  f.put_sg(1, 0, 0, 0.5f);  // year 10: top layer to the third cell (edge 60 m)
  f.put_sg(1, 0, 1, 0.3f);
  f.put_sg(1, 0, 2, 0.02f);
  f.put_sg(1, 1, 3, 0.005f);  // below the threshold
  f.put_sg(1, 2, 3, 0.9f);    // inactive cell: ignored
  f.put_dp(1, 2, 0, 99.f);    // inactive cell: ignored
  f.put_dp(0, 1, 1, 25.f);    // the maximum: year 1, layer 2 (depth 3 m), cell 2 (mid 20 m)
  f.put_dp(1, 0, 0, 12.f);    // above 10 bar from the perforation out to edge 60 m
  f.put_dp(1, 0, 1, 12.f);
  f.put_dp(1, 0, 2, 12.f);
  f.put_dp(1, 0, 3, 9.f);
  const KpiOptions o = fixed_density({1, 10});
  Kpis k = compute_kpis(c, f.sg, f.dp, times, o);
  const double r1 = front(5, 20, 0.5, 0, 0.01), r10 = front(45, 80, 0.02, 0, 0.01);
  CHECK(k.plume_radius_m[0] == Approx(r1));  // 19.7 m: beyond the first cell's edge at 10 m
  CHECK(k.plume_radius_m[1] == Approx(r10));
  CHECK(k.plume_capped == std::vector<int>{0, 0});
  CHECK(k.plume_area_km2[0] == Approx(M_PI * r1 * r1 / 1e6));
  CHECK(k.max_dp_bar == 25);
  CHECK(k.max_dp_field_bar == 25);  // the same until a head replaces max_dp_bar
  CHECK(k.max_dp_radius_m == 20);
  CHECK(k.max_dp_depth_m == 3);
  CHECK(k.max_dp_year == Approx(1));
  CHECK(k.aor_radius_m == Approx(front(45, 80, 12, 9, 10)));
  // Mass at year 10: rings x 2 m x 0.2 x 700 kg/m3 x SG over the plume only.
  const double mass =
      (0.5 * ring(0, 10, 2) + 0.3 * ring(10, 30, 2) + 0.02 * ring(30, 60, 2)) * 0.2 * 700;
  CHECK(k.co2_mass_mt == Approx(mass / 1e9));
  CHECK(k.injected_mt == Approx(10.0));
  CHECK(k.mass_ratio == Approx(mass / 1e9 / 10.0));
  CHECK(kpi_header(o).size() == kpi_row(k).size());
}

TEST_CASE("Gas not connected to the perforations is not plume", "[kpi]") {
  const ReservoirCase c = small_case();
  Fields f(1);
  f.put_sg(0, 0, 0, 0.5f);
  f.put_sg(0, 0, 3, 0.3f);  // a speck at the edge, separated by empty cells
  f.put_sg(0, 1, 2, 0.3f);  // diagonal to nothing connected
  const Kpis k = compute_kpis(c, f.sg, f.dp, {365.25}, fixed_density({1}));
  CHECK(k.plume_radius_m[0] == Approx(front(5, 20, 0.5, 0, 0.01)));
  CHECK(k.co2_mass_mt == Approx(0.5 * ring(0, 10, 2) * 0.2 * 700 / 1e9));

  // Gas at the well in an unperforated layer only: no plume at all.
  ReservoirCase shut = c;
  shut.perforated = {0, 0, 0};
  const Kpis none = compute_kpis(shut, f.sg, f.dp, {365.25}, fixed_density({1}));
  CHECK(none.plume_radius_m == std::vector<double>{0});
  CHECK(none.co2_mass_mt == 0);

  // Connected through the second (perforated) layer and up: the speck joins the plume.
  f.put_sg(0, 1, 0, 0.2f);
  f.put_sg(0, 1, 1, 0.2f);
  const Kpis joined = compute_kpis(c, f.sg, f.dp, {365.25}, fixed_density({1}));
  CHECK(joined.plume_radius_m[0] == Approx(front(45, 80, 0.3, 0, 0.01)));
}

TEST_CASE("SG is clamped to [0, 1 - SWI] before it counts", "[kpi]") {
  const ReservoirCase c = small_case();  // SWI 0.2
  Fields f(1);
  f.put_sg(0, 0, 0, 1.5f);   // counts as 0.8
  f.put_sg(0, 0, 1, -0.4f);  // counts as 0: ends the plume
  f.put_sg(0, 0, 2, 0.5f);
  const Kpis k = compute_kpis(c, f.sg, f.dp, {365.25}, fixed_density({1}));
  CHECK(k.plume_radius_m[0] == Approx(front(5, 20, 0.8, 0, 0.01)));  // clamped values
  CHECK(k.co2_mass_mt == Approx(0.8 * ring(0, 10, 2) * 0.2 * 700 / 1e9));
}

TEST_CASE("A plume holding more than the injected mass is capped where the mass runs out",
          "[kpi]") {
  ReservoirCase c = small_case();
  Fields f(1);
  for (int y = 0; y < 4; ++y) f.put_sg(0, 0, y, 0.5f);  // top layer full to 100 m
  const double m0 = 0.5 * ring(0, 10, 2) * 0.2 * 700, m1 = 0.5 * ring(10, 30, 2) * 0.2 * 700;
  // Injected mass after one day: exactly enough for the first two rings (tolerance 0).
  c.rate_mt_per_year = (m0 + m1) * 1.0001 / 1e9 * 365.25;
  KpiOptions o = fixed_density({0});
  o.mass_tolerance = 0;
  const Kpis k = compute_kpis(c, f.sg, f.dp, {1.0}, o);
  CHECK(k.plume_radius_m == std::vector<double>{30});  // the capped ring's outer edge
  CHECK(k.plume_capped == std::vector<int>{1});
  CHECK(k.plume_area_km2[0] == Approx(M_PI * 900 / 1e6));
  CHECK(k.mass_ratio > 1);  // the field itself is reported as it is
  // Twenty times the rate: the whole plume (11.1x the mass of the first two rings) fits.
  c.rate_mt_per_year *= 20;
  const Kpis free = compute_kpis(c, f.sg, f.dp, {1.0}, o);
  CHECK(free.plume_radius_m == std::vector<double>{100});  // the grid's outer edge
  CHECK(free.plume_capped == std::vector<int>{0});
}

TEST_CASE("The reported plume radius never recedes", "[kpi]") {
  const ReservoirCase c = small_case();
  Fields f(3);
  f.put_sg(0, 0, 0, 0.5f);
  f.put_sg(0, 0, 1, 0.5f);                              // 30 m at year 1
  f.put_sg(1, 0, 0, 0.5f);                              // 10 m at year 5: a model's dip
  for (int y = 0; y < 3; ++y) f.put_sg(2, 0, y, 0.5f);  // 60 m at year 10
  const Kpis k =
      compute_kpis(c, f.sg, f.dp, {365.25, 5 * 365.25, 10 * 365.25}, fixed_density({1, 5, 10}));
  const double r1 = front(20, 45, 0.5, 0, 0.01), r10 = front(45, 80, 0.5, 0, 0.01);
  CHECK(k.plume_radius_m[0] == Approx(r1));
  CHECK(k.plume_radius_m[1] == Approx(r1));  // not the dip's 19.7 m
  CHECK(k.plume_radius_m[2] == Approx(r10));
}

TEST_CASE("The area of review is the overpressure connected to the perforations", "[kpi]") {
  const ReservoirCase c = small_case();
  Fields f(1);
  f.put_dp(0, 0, 0, 20.f);
  f.put_dp(0, 1, 0, 20.f);
  f.put_dp(0, 1, 3, 50.f);  // isolated: not part of the area of review, but the maximum
  const Kpis k = compute_kpis(c, f.sg, f.dp, {365.25}, fixed_density({1}));
  CHECK(k.aor_radius_m == Approx(front(5, 20, 20, 0, 10)));
  CHECK(k.max_dp_bar == 50);
}

TEST_CASE("CO2 densities are OPM's Span-Wagner values", "[kpi]") {
  // Span & Wagner (1996) values as NIST tabulates them: 628.6 kg/m3 at 40 C, 100 bar; 784.3 at
  // 50 C, 200 bar. A hot, shallow site holds far less mass per pore volume.
  CHECK(co2_density_kg_m3(40, 100) == Approx(628.6).epsilon(0.005));
  CHECK(co2_density_kg_m3(50, 200) == Approx(784.3).epsilon(0.005));
  CHECK(co2_density_kg_m3(120, 100) < 0.4 * co2_density_kg_m3(40, 100));
  // Without a fixed density the mass uses each cell's pressure and the case's temperature.
  const ReservoirCase c = small_case();  // 40 C, 100 bar at the top
  Fields f(1);
  f.put_sg(0, 0, 0, 0.5f);
  KpiOptions o = fixed_density({1});
  o.co2_density = 0;
  const Kpis k = compute_kpis(c, f.sg, f.dp, {365.25}, o);
  const double rho = co2_density_kg_m3(40, 100 + 1000 * 9.80665 / 1e5 * 1.0);  // 1 m deep
  CHECK(k.co2_mass_mt == Approx(0.5 * ring(0, 10, 2) * 0.2 * rho / 1e9));
}
