// runtime/PressureEstimates.hpp, the C++ twin of python/ufno/heads/physics.py: its estimates
// on the shipped examples and a hand-made homogeneous case against the Python's
// (tests/data/pressure_estimates.h5, python/ufno/conversion/fixtures.py
// make_pressure_estimates_fixture), E1 and Theis at hand-computed points, and a maximum-dP head
// with physics inputs (physics_inputs = "max_dp"): Theis x exp(its output).
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"
#include "runtime/EstimateMemo.hpp"
#include "runtime/KpiHeadEstimator.hpp"
#include "runtime/KpiHeadFeatures.hpp"
#include "runtime/MaxDpHead.hpp"
#include "runtime/PressureEstimates.hpp"
#include "screening/HeadRegistry.hpp"
#include "screening/KpiHeads.hpp"
#include "support/FileTamper.hpp"

using namespace ufno;

namespace {

const std::string kData = UFNO_TEST_DATA_DIR;
const std::string kFixture = kData + "/pressure_estimates.h5";
constexpr double kTwin = 1e-9;  // the twins' relative agreement

// The largest |a - b| / |b| over values, with |b| floored at `floor` (values near 0).
double max_rel(const std::vector<double>& a, const std::vector<double>& b, double floor) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), floor));
  return m;
}

double attr(const h5::File& f, const std::string& group, const std::string& name) {
  return f.numeric_attribute(name, group).at(0);
}

// /case3: the hand-made case's inputs as the fixture holds them.
ReservoirCase hand_made(const h5::File& f) {
  const std::string g = "case3";
  ReservoirCase c;
  c.path = "hand_made";
  const auto permx = f.read_numeric(g + "/PERMX");
  c.nx = c.lx = int(permx.shape.at(0));
  c.ny = c.ly = int(permx.shape.at(1));
  c.permx = permx.values;
  c.permz = f.read_numeric(g + "/PERMZ").values;
  c.poro = f.read_numeric(g + "/PORO").values;
  c.dr = f.read_numeric(g + "/DR").values;
  c.dz = f.read_numeric(g + "/DZ").values;
  for (double v : f.read_numeric(g + "/PERF").values) c.perforated.push_back(int(v));
  c.rate_mt_per_year = attr(f, g, "INJ_RATE");
  c.temperature_c = attr(f, g, "TEMP");
  c.pressure_bar = attr(f, g, "PRESSURE");
  c.swi = attr(f, g, "SWI");
  c.vg_lambda = attr(f, g, "VG_LAMBDA");
  return c;
}

ReservoirCase fixture_case(const h5::File& f, int k) {
  const std::string g = "case" + std::to_string(k);
  if (k == 3) return hand_made(f);
  return read_case(kData + "/../../" + *f.string_attribute(g, "case"));
}

std::vector<std::string> example_paths() {
  const auto f = h5::File::open_read(kFixture);
  std::istringstream s(*f.string_attribute("expected", "cases"));
  std::vector<std::string> out;
  for (std::string rel; std::getline(s, rel, ',');) out.push_back(kData + "/../../" + rel);
  return out;
}

// Widens a head by inputs it ignores (zero first-layer weights) whose ranges admit only the
// values `given`: the head then estimates only where those inputs are given exactly, so a wrong
// or swapped input shows as no estimate. Its names are the caller's to append.
void widen_with_tight_inputs(KpiHead& h, const std::vector<double>& given) {
  for (auto& member : h.members) {
    DenseLayer& l = member[0];
    std::vector<double> w;
    for (int o = 0; o < l.out; ++o) {
      w.insert(w.end(), l.weight.begin() + std::ptrdiff_t(o) * l.in,
               l.weight.begin() + std::ptrdiff_t(o + 1) * l.in);
      w.insert(w.end(), given.size(), 0.0);
    }
    l.weight = w;
    l.in += int(given.size());
  }
  for (double v : given) {
    h.feature_mean.push_back(v);
    h.feature_std.push_back(1.0);
    h.feature_min.push_back(v - 1e-9);
    h.feature_max.push_back(v + 1e-9);
  }
}

// Calls check(group, case, its report times) for each of the fixture's four cases.
template <class Check>
void for_each_fixture_case(const h5::File& f, Check check) {
  for (int k = 0; k < 4; ++k) {
    const std::string g = "case" + std::to_string(k);
    INFO(g);
    check(g, fixture_case(f, k), f.read_numeric(g + "/times_days").values);
  }
}

// A buoyancy-aware estimate dp (T, X, Y) of case group g against the fixture's first 8 radial
// columns of it (dataset g/name, (T, X, 8)), relative to its largest value; returns that value.
double check_near_columns(const h5::File& f, const std::string& g, const std::string& name,
                          const ReservoirCase& c, const std::vector<double>& dp) {
  const auto near = f.read_numeric(g + "/" + name);
  const int X = c.nx, Y = c.ny, W = 8, T = int(near.values.size()) / (X * W);
  REQUIRE(dp.size() == std::size_t(T) * X * Y);
  std::vector<double> mine;
  for (int t = 0; t < T; ++t)
    for (int x = 0; x < X; ++x)
      for (int y = 0; y < W; ++y) mine.push_back(dp[(std::size_t(t) * X + x) * Y + y]);
  double scale = 0;
  for (double v : near.values) scale = std::max(scale, std::abs(v));
  CHECK(max_rel(mine, near.values, 1e-3 * scale) < kTwin);
  return scale;
}

}  // namespace

TEST_CASE("pressure estimates equal python's on the examples and a hand-made case", "[pressure]") {
  const auto f = h5::File::open_read(kFixture);
  for (int k = 0; k < 4; ++k) {
    const std::string g = "case" + std::to_string(k);
    INFO(g);
    const ReservoirCase c = fixture_case(f, k);
    const std::vector<double> times = f.read_numeric(g + "/times_days").values;
    const PressureProperties p = pressure_properties(c);
    const std::pair<const char*, double> props[] = {{"p_perf", p.p_perf},
                                                    {"kh_perf", p.kh_perf},
                                                    {"h_perf", p.h_perf},
                                                    {"phi_perf", p.phi_perf},
                                                    {"mu_w", p.mu_w},
                                                    {"mu_g", p.mu_g},
                                                    {"c_w", p.c_w},
                                                    {"c_t", p.c_t},
                                                    {"rho_co2", p.rho_co2},
                                                    {"q", p.q},
                                                    {"r_centre0", p.r_centre0}};
    for (const auto& [name, v] : props) {
      INFO(name);
      // c_w is a central difference of the density: its rounding is ~1e4 times the density's.
      CHECK(v == Approx(attr(f, g, name)).epsilon(1e-10));
    }
    CHECK(theis_max_dp_bar(c) == Approx(attr(f, g, "theis_bar")).epsilon(kTwin));

    const std::vector<double> rz = rz_single_phase_dp_bar(c, times);
    const int T = int(times.size()), X = c.nx, Y = c.ny;
    REQUIRE(rz.size() == std::size_t(T) * X * Y);
    const auto near = f.read_numeric(g + "/rz_dp_bar_near");
    const auto outer = f.read_numeric(g + "/rz_dp_bar_outer");
    const int W = int(near.shape.at(2));
    std::vector<double> mine_near, mine_outer;
    for (int t = 0; t < T; ++t)
      for (int x = 0; x < X; ++x) {
        for (int y = 0; y < W; ++y) mine_near.push_back(rz[(std::size_t(t) * X + x) * Y + y]);
        mine_outer.push_back(rz[(std::size_t(t) * X + x) * Y + Y - 1]);
      }
    // Values near 0 (inactive cells, the far field before the pressure arrives) against the
    // field's scale.
    double scale = 0;
    for (double v : near.values) scale = std::max(scale, std::abs(v));
    CHECK(max_rel(mine_near, near.values, 1e-3 * scale) < kTwin);
    CHECK(max_rel(mine_outer, outer.values, 1e-3 * scale) < kTwin);

    const auto g2 = grid_two_phase_correction_bar(c, times);
    const auto g2_py = f.read_numeric(g + "/two_phase_bar").values;
    double g2_scale = 0;
    for (double v : g2_py) g2_scale = std::max(g2_scale, std::abs(v));
    CHECK(max_rel(g2, g2_py, 1e-3 * g2_scale) < kTwin);

    const MaxDpPhysics m = max_dp_physics_features(c, times);
    CHECK(m.theis_bar == Approx(attr(f, g, "theis_bar")).epsilon(kTwin));
    const auto feats = f.read_numeric(g + "/features").values;
    REQUIRE(feats.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(m.features[i] == Approx(feats[i]).epsilon(kTwin));
    // The r-z envelope an envelope head with physics inputs reads: its largest value over
    // times and layers, per radial column.
    CHECK(max_rel(m.rz_envelope_bar, f.read_numeric(g + "/rz_envelope_bar").values, 1e-3 * scale) <
          kTwin);
    if (k < 3) {  // the examples at the paper's times: the default times are those
      const MaxDpPhysics d = max_dp_physics_features(c, {});
      for (int i = 0; i < 3; ++i) CHECK(d.features[i] == m.features[i]);
    }

    // The implicit two-phase r-z solve: its first 8 radial columns and its largest value in
    // the well's column.
    const std::vector<double> imp = rz_implicit_two_phase_dp_bar(c, times);
    REQUIRE(imp.size() == std::size_t(T) * X * Y);
    const auto imp_near = f.read_numeric(g + "/implicit_dp_bar_near");
    std::vector<double> mine_imp;
    for (int t = 0; t < T; ++t)
      for (int x = 0; x < X; ++x)
        for (int y = 0; y < W; ++y) mine_imp.push_back(imp[(std::size_t(t) * X + x) * Y + y]);
    double imp_scale = 0;
    for (double v : imp_near.values) imp_scale = std::max(imp_scale, std::abs(v));
    CHECK(max_rel(mine_imp, imp_near.values, 1e-3 * imp_scale) < kTwin);
    CHECK(rz_implicit_two_phase_max_dp_bar(c, times) ==
          Approx(attr(f, g, "implicit_max_dp_bar")).epsilon(kTwin));
    // Its first-report value, from the first step alone, is the full solve's (Python's value
    // is read off the full solve).
    const double first = rz_implicit_first_report_dp_bar(c, times);
    CHECK(first == Approx(attr(f, g, "implicit_first_report_dp_bar")).epsilon(kTwin));
    double first_full = -1;
    for (int x = 0; x < X; ++x) first_full = std::max(first_full, imp[std::size_t(x) * Y]);
    CHECK(first == Approx(first_full).epsilon(1e-12));
    if (k < 3) CHECK(rz_implicit_first_report_dp_bar(c, {}) == first);
  }
}

TEST_CASE("pressure estimates: the implicit two-phase solve at hand-checkable limits",
          "[pressure]") {
  // The hand-made homogeneous case: before any gas is injected nothing moves; the first day's
  // buildup lies above the single-phase solve's at the well (the smeared saturations' low
  // mobility) and below twice it; every value is finite and no buildup is negative.
  const auto f = h5::File::open_read(kFixture);
  const ReservoirCase c = hand_made(f);
  const std::vector<double> times = {1.0, 10.0, 100.0};
  const std::vector<double> imp = rz_implicit_two_phase_dp_bar(c, times);
  const std::vector<double> rz = rz_single_phase_dp_bar(c, times);
  const int X = c.nx, Y = c.ny;
  double imp0 = 0, rz0 = 0;
  for (int x = 0; x < X; ++x) {
    imp0 = std::max(imp0, imp[std::size_t(x) * Y]);
    rz0 = std::max(rz0, rz[std::size_t(x) * Y]);
  }
  CHECK(imp0 > rz0);
  CHECK(imp0 < 2 * rz0);
  for (double v : imp) {
    CHECK(std::isfinite(v));
    CHECK(v >= -1e-9);
  }
  ReservoirCase none = c;
  none.rate_mt_per_year = 0.0;
  for (double v : rz_implicit_two_phase_dp_bar(none, times)) CHECK(v == 0.0);
}

TEST_CASE("pressure estimates: E1 and Theis at hand-computed points", "[pressure]") {
  // Abramowitz & Stegun, table 5.1, 10 significant digits.
  const std::pair<double, double> table[] = {
      {0.01, 4.037929577},  {0.1, 1.822923958},    {0.5, 0.5597735948},    {1.0, 0.2193839344},
      {2.0, 0.04890051071}, {5.0, 0.001148295591}, {10.0, 4.156968929e-06}};
  for (const auto& [x, v] : table) CHECK(exponential_integral_e1(x) == Approx(v).epsilon(2e-9));
  CHECK(std::abs(exponential_integral_e1(1.0 - 1e-12) - exponential_integral_e1(1.0 + 1e-12)) <
        1e-10);
  CHECK(exponential_integral_e1(800.0) == 0.0);
  // q 0.05 m3/s, mu 0.5 cP, k 1e-13 m2, h 50 m, phi 0.2, ct 1e-9 1/Pa, r 1.7969 m, 1 day:
  // u = 9.34274e-6, and the series to u^2 gives 43.782 bar.
  const double q = 0.05, mu = 5e-4, k = 1e-13, h = 50.0, phi = 0.2, ct = 1e-9, r = 1.7969,
               t = 86400.0;
  const double u = phi * mu * ct * r * r / (4 * k * t);
  CHECK(u == Approx(9.34274e-06).epsilon(1e-5));
  const double e1 = -0.5772156649015329 - std::log(u) + u - u * u / 4;
  const double hand = q * mu / (4 * M_PI * k * h) * e1;
  CHECK(hand / 1e5 == Approx(43.782).epsilon(1e-4));
  CHECK(theis_dp_pa(r, t, q, mu, k, h, phi, ct) == Approx(hand).epsilon(1e-10));
  // Fluid properties: Batzle & Wang at 30 degC by hand; NIST's CO2 density at 40 degC, 100 bar.
  CHECK(brine_viscosity_pa_s(30.0) == Approx(0.79265e-3).epsilon(2e-4));
  CHECK(brine_density_kg_m3(25.0, 1.01325) == Approx(997.0).epsilon(2e-3));
  CHECK(brine_compressibility_per_pa(60.0, 200.0) > 3.5e-10);
  CHECK(brine_compressibility_per_pa(60.0, 200.0) < 5e-10);
  // Beyond the CO2 table (400 K) the viscosity goes on continuously from opm-material's.
  const double inside = co2_viscosity_pa_s(126.8, 250.0), outside = co2_viscosity_pa_s(126.9, 250);
  CHECK(outside == Approx(inside).epsilon(1e-3));
  CHECK(std::isfinite(co2_viscosity_pa_s(170.0, 1500.0)));
}

TEST_CASE("pressure estimates: a maximum-dP head with physics inputs gives Theis x exp(output)",
          "[pressure][kpi_heads]") {
  const auto h = read_kpi_head(kFixture, "max_dp_head");
  REQUIRE(h);
  REQUIRE(h->physics_inputs == "max_dp");
  REQUIRE(h->features.size() == 35);
  const std::vector<std::string> last(h->features.end() - 3, h->features.end());
  CHECK(last == max_dp_physics_feature_names());
  const KpiHeadEstimator e(*h);  // the names are this build's
  const auto f = h5::File::open_read(kFixture);
  const auto inputs = f.read_numeric("expected/inputs").values;
  const auto ratio = f.read_numeric("expected/ratio").values;
  const auto expected = f.read_numeric("expected/max_dp_bar").values;
  const auto times = paper_times_days(24);
  const auto paths = example_paths();
  REQUIRE(paths.size() == 3);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    INFO(paths[i]);
    const ReservoirCase c = read_case(paths[i]);
    const MaxDpPhysics m = max_dp_physics_features(c, times);
    std::vector<double> x = kpi_head_features(c);
    x.insert(x.end(), m.features.begin(), m.features.end());
    for (std::size_t j = 0; j < 35; ++j)
      CHECK(x[j] == Approx(inputs[i * 35 + j]).epsilon(j < 32 ? 1e-5 : kTwin).margin(1e-6));
    // The head's own output from python's inputs is python's.
    const std::vector<double> py_inputs(inputs.begin() + i * 35, inputs.begin() + i * 35 + 35);
    CHECK(e.estimate(py_inputs)->at(0) == Approx(ratio[i]).epsilon(1e-12));
    const double out = e.estimate(x)->at(0);
    Kpis k;
    k.max_dp_bar = k.max_dp_field_bar = 3.0;
    apply_max_dp_head(k, e, c, {}, times);
    CHECK(k.max_dp_from_head);
    CHECK(k.max_dp_bar == Approx(m.theis_bar * out).epsilon(1e-14));
    CHECK(k.max_dp_bar == Approx(expected[i]).epsilon(1e-5));
    CHECK(k.max_dp_bounds.trust == IntervalTrust::None);
  }

  SECTION("its interval is Theis x the head's") {
    const std::string copy = test::copy_fixture(kFixture, "pressure_estimates_interval.h5");
    test::set_double_attribute(copy, "interval_coverage", {0.9}, "/max_dp_head");
    test::set_double_attribute(copy, "interval_log_lo", {-0.1}, "/max_dp_head");
    test::set_double_attribute(copy, "interval_log_hi", {0.2}, "/max_dp_head");
    test::set_double_attribute(copy, "interval_distance_limit", {100.0}, "/max_dp_head");
    const KpiHeadEstimator ei(*read_kpi_head(copy, "max_dp_head"));
    const ReservoirCase c = read_case(paths[0]);
    Kpis k;
    apply_max_dp_head(k, ei, c, {}, times);
    REQUIRE(k.max_dp_bounds.trust == IntervalTrust::Calibrated);
    CHECK(k.max_dp_bounds.lo == Approx(k.max_dp_bar * std::exp(-0.1)).epsilon(1e-12));
    CHECK(k.max_dp_bounds.hi == Approx(k.max_dp_bar * std::exp(0.2)).epsilon(1e-12));
  }
}

TEST_CASE("pressure estimates: a maximum-dP head that also reads the implicit estimate",
          "[pressure][kpi_heads]") {
  // Its 36th input, named log_rz_implicit_two_phase_max_dp_bar, is computed for it; the head
  // with three physics inputs (the test above) is read and estimated as before.
  const auto h = read_kpi_head(kFixture, "max_dp_head_implicit");
  REQUIRE(h);
  REQUIRE(h->features.size() == 36);
  CHECK(h->features.back() == "log_rz_implicit_two_phase_max_dp_bar");
  const KpiHeadEstimator e(*h);
  CHECK(e.head().physics_extra == MaxDpExtraInputs::implicit_max);
  CHECK(KpiHeadEstimator(*read_kpi_head(kFixture, "max_dp_head")).head().physics_extra ==
        MaxDpExtraInputs::none);
  const auto f = h5::File::open_read(kFixture);
  const auto inputs = f.read_numeric("expected_implicit/inputs").values;
  const auto expected = f.read_numeric("expected_implicit/max_dp_bar").values;
  const auto times = paper_times_days(24);
  const auto paths = example_paths();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    INFO(paths[i]);
    const ReservoirCase c = read_case(paths[i]);
    CHECK(std::log(rz_implicit_two_phase_max_dp_bar(c, times)) ==
          Approx(inputs[i * 36 + 35]).epsilon(kTwin));
    Kpis k;
    k.max_dp_bar = k.max_dp_field_bar = 3.0;
    apply_max_dp_head(k, e, c, {}, times);
    CHECK(k.max_dp_from_head);
    CHECK(k.max_dp_bar == Approx(expected[i]).epsilon(1e-5));
  }
  // Another name in its place is a head from another version.
  KpiHead other = *h;
  other.features.back() = "log_rz_something_else";
  CHECK_THROWS_WITH(KpiHeadEstimator(other), Catch::Contains("max_dp_head_implicit@features"));
}

TEST_CASE("pressure estimates: a maximum-dP head that reads the implicit first-report value",
          "[pressure][kpi_heads]") {
  // Its 36th input, named log_rz_implicit_first_report_dp_bar, is the implicit estimate at the
  // first report time; C++ gives Python's estimates on the examples.
  const auto h = read_kpi_head(kFixture, "max_dp_head_first_report");
  REQUIRE(h);
  REQUIRE(h->features.size() == 36);
  CHECK(h->features.back() == "log_rz_implicit_first_report_dp_bar");
  const KpiHeadEstimator e(*h);
  CHECK(e.head().physics_extra == MaxDpExtraInputs::implicit_first_report);
  const auto f = h5::File::open_read(kFixture);
  const auto inputs = f.read_numeric("expected_first_report/inputs").values;
  const auto expected = f.read_numeric("expected_first_report/max_dp_bar").values;
  const auto other = f.read_numeric("expected_implicit/max_dp_bar").values;
  const auto times = paper_times_days(24);
  const auto paths = example_paths();
  REQUIRE(inputs.size() == paths.size() * 36);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    INFO(paths[i]);
    const ReservoirCase c = read_case(paths[i]);
    CHECK(std::log(rz_implicit_first_report_dp_bar(c, times)) ==
          Approx(inputs[i * 36 + 35]).epsilon(kTwin));
    Kpis k;
    k.max_dp_bar = k.max_dp_field_bar = 3.0;
    apply_max_dp_head(k, e, c, {}, times);
    CHECK(k.max_dp_from_head);
    CHECK(k.max_dp_bar == Approx(expected[i]).epsilon(1e-5));
    CHECK(k.max_dp_bar != Approx(other[i]).epsilon(1e-5));  // not the maximum-reading head's
  }
}

TEST_CASE("pressure estimates: a head with physics inputs and the network's envelope is refused",
          "[pressure]") {
  const std::string copy = test::copy_fixture(kFixture, "pressure_estimates_envelope.h5");
  test::set_int_attribute(copy, "envelope_columns", {0, 1}, "/max_dp_head");
  test::set_double_attribute(copy, "envelope_floor_bar", {0.01}, "/max_dp_head");
  CHECK_THROWS_WITH(read_kpi_head(copy, "max_dp_head"),
                    Catch::Contains("max_dp_head@physics_inputs"));
  const std::string other = test::copy_fixture(kFixture, "pressure_estimates_other.h5");
  test::set_string_attribute(other, "physics_inputs", "max_dq", "/max_dp_head");
  CHECK_THROWS_WITH(read_kpi_head(other, "max_dp_head"),
                    Catch::Contains("max_dp_head@physics_inputs"));
}

TEST_CASE("pressure estimates: an envelope head's physics inputs name r-z envelope columns",
          "[pressure]") {
  // A head file whose inputs are the 32 features, the three estimates and two envelope columns
  // is read with those columns; a name that is no column of its grid is refused.
  const std::string copy = test::copy_fixture(kFixture, "pressure_estimates_env_head.h5");
  test::set_string_attribute(copy, "physics_inputs", "envelope", "/max_dp_head");
  auto h = read_kpi_head(copy, "max_dp_head");
  REQUIRE(h);
  KpiHead good = *h, bad = *h;
  good.features.push_back("log_rz_envelope_r0");
  good.features.push_back("log_rz_envelope_r47");
  CHECK(KpiHeadEstimator(good).head().physics_columns == std::vector<int>{0, 47});
  bad.features.push_back("log_rz_envelope_r48");  // the grid has 48 radial columns
  CHECK_THROWS_WITH(KpiHeadEstimator(bad), Catch::Contains("max_dp_head@features"));
  CHECK_THROWS_WITH(KpiHeadEstimator(*h), Catch::Contains("r-z envelope columns"));
  // The buoyancy-aware solve's columns after the r-z ones; not before them, not mixed.
  KpiHead both = good;
  both.features.push_back("log_rz_gravity_envelope_r3");
  both.features.push_back("log_rz_gravity_envelope_r40");
  const KpiHeadEstimator e(both);
  CHECK(e.head().physics_columns == std::vector<int>{0, 47});
  CHECK(e.head().physics_gravity_columns == std::vector<int>{3, 40});
  CHECK(e.head().physics_gravity_dissolution == "pore_volume");
  // The brine-dissolution solve's columns likewise, named by their own prefix; one model only.
  KpiHead brine = good;
  brine.features.push_back("log_rz_gravity_brine_envelope_r3");
  brine.features.push_back("log_rz_gravity_brine_envelope_r40");
  const KpiHeadEstimator eb(brine);
  CHECK(eb.head().physics_gravity_columns == std::vector<int>{3, 40});
  CHECK(eb.head().physics_gravity_dissolution == "brine");
  for (const std::vector<std::string>& tail :
       {std::vector<std::string>{"log_rz_gravity_envelope_r3", "log_rz_envelope_r0"},
        std::vector<std::string>{"log_rz_envelope_r0", "log_rz_gravity_envelope_r48"},
        std::vector<std::string>{"log_rz_envelope_r0", "log_rz_gravity_envelope_r1",
                                 "log_rz_envelope_r2"},
        std::vector<std::string>{"log_rz_envelope_r0", "log_rz_gravity_envelope_r-1"},
        std::vector<std::string>{"log_rz_envelope_r0", "log_rz_gravity_envelope_r123456"},
        std::vector<std::string>{"log_rz_envelope_r0", "log_rz_gravity_envelope_r1",
                                 "log_rz_gravity_brine_envelope_r2"},
        std::vector<std::string>{"log_rz_envelope_r0", "log_rz_gravity_brine_envelope_r48"}}) {
    KpiHead wrong = *h;
    for (const auto& n : tail) wrong.features.push_back(n);
    INFO(wrong.features.back());
    CHECK_THROWS_WITH(KpiHeadEstimator(wrong), Catch::Contains("max_dp_head@features"));
  }
  std::remove(copy.c_str());
}

TEST_CASE("pressure estimates: an envelope head reads the buoyancy-aware solve's envelope",
          "[pressure][kpi_heads][gravity]") {
  // An envelope head reading two r-z columns, then two of the buoyancy-aware solve's (the
  // fixture's head widened by zero weights) is given log(max(envelope, 0.01)) of each solve's
  // envelope at its columns: with its input ranges drawn tight around those values it
  // estimates; with one range moved off its value it declines (an input outside its ranges).
  const std::string copy = test::copy_fixture(kFixture, "pressure_estimates_genv_head.h5");
  test::set_string_attribute(copy, "physics_inputs", "envelope", "/max_dp_head");
  const std::optional<KpiHead> read = read_kpi_head(copy, "max_dp_head");
  std::remove(copy.c_str());
  REQUIRE(read);
  const std::vector<double> times = paper_times_days(24);
  const ReservoirCase c = read_case(example_paths().front());
  const MaxDpPhysics m = max_dp_physics_features(c, times);
  // Either dissolution model's envelope, as the head's input names say.
  for (const auto& [d, prefix] :
       {std::pair{Dissolution::kPoreVolume, "log_rz_gravity_envelope_r"},
        std::pair{Dissolution::kBrine, "log_rz_gravity_brine_envelope_r"}}) {
    INFO(prefix);
    std::optional<KpiHead> h = read;
    const GravitySummary g = rz_gravity_two_phase_summary(c, times, d);
    std::vector<double> given;
    for (int col : {0, 20}) {
      h->features.push_back("log_rz_envelope_r" + std::to_string(col));
      given.push_back(std::log(std::max(m.rz_envelope_bar[std::size_t(col)], 0.01)));
    }
    for (int col : {1, 30}) {
      h->features.push_back(prefix + std::to_string(col));
      given.push_back(std::log(std::max(g.envelope_bar[std::size_t(col)], 0.01)));
    }
    CHECK(given[2] != given[3]);  // so that swapped columns would show
    widen_with_tight_inputs(*h, given);
    Kpis k;
    apply_dp_envelope_head(k, KpiHeadEstimator(*h), c, {}, KpiOptions{}, times);
    CHECK(k.aor_from_head);
    for (std::size_t i = 1; i <= given.size(); ++i) {
      INFO("input " << h->features.size() - i);
      KpiHead off = *h;
      off.feature_min[off.features.size() - i] += 0.5;
      off.feature_max[off.features.size() - i] += 0.5;
      Kpis o;
      apply_dp_envelope_head(o, KpiHeadEstimator(off), c, {}, KpiOptions{}, times);
      CHECK_FALSE(o.aor_from_head);
    }
  }
}

TEST_CASE("pressure estimates: an envelope head over the brine solve's envelope scales it",
          "[pressure][kpi_heads][gravity]") {
  // A head with envelope_baseline = "gravity_envelope" estimates Flow's envelope over the
  // buoyancy-aware solve's: here one whose members output log 2 at every column (zero weights)
  // reading two r-z and two brine-solve columns, with a +-0.1 log interval. Its envelope is twice
  // the brine solve's at every column, its bounds that times exp(-+0.1), and its area of review
  // where they fall through the critical pressure; without the baseline the same head's
  // envelope is 2 bar everywhere.
  const std::string copy = test::copy_fixture(kFixture, "pressure_estimates_base_head.h5");
  test::set_string_attribute(copy, "physics_inputs", "envelope", "/max_dp_head");
  std::optional<KpiHead> h = read_kpi_head(copy, "max_dp_head");
  std::remove(copy.c_str());
  REQUIRE(h);
  const std::vector<double> times = paper_times_days(24);
  const ReservoirCase c = read_case(example_paths().front());
  const MaxDpPhysics m = max_dp_physics_features(c, times);
  const GravitySummary g = rz_gravity_two_phase_summary(c, times, Dissolution::kBrine);
  std::vector<double> given;
  for (int col : {0, 20}) {
    h->features.push_back("log_rz_envelope_r" + std::to_string(col));
    given.push_back(std::log(std::max(m.rz_envelope_bar[std::size_t(col)], 0.01)));
  }
  for (int col : {1, 30}) {
    h->features.push_back("log_rz_gravity_brine_envelope_r" + std::to_string(col));
    given.push_back(std::log(std::max(g.envelope_bar[std::size_t(col)], 0.01)));
  }
  widen_with_tight_inputs(*h, given);
  const std::size_t Y = std::size_t(c.ny);
  for (auto& member : h->members) {
    DenseLayer& last = member.back();
    last.out = int(Y);
    last.weight.assign(Y * std::size_t(last.in), 0.0);
    last.bias.assign(Y, std::log(2.0));
  }
  h->target_mean.assign(Y, 0.0);
  h->target_std.assign(Y, 1.0);
  h->interval = HeadInterval{};
  h->interval.coverage = 0.9;
  h->interval.log_lo.assign(Y, -0.1);
  h->interval.log_hi.assign(Y, 0.1);
  h->interval.distance_limit = 1e9;
  KpiHead plain = *h;
  h->envelope_baseline = "gravity_envelope";
  const KpiOptions o;
  std::vector<double> want(Y), lo(Y), hi(Y);
  for (std::size_t y = 0; y < Y; ++y) {
    want[y] = 2.0 * std::max(g.envelope_bar[y], 0.01);
    lo[y] = want[y] * std::exp(-0.1);
    hi[y] = want[y] * std::exp(0.1);
  }
  REQUIRE(want.front() > o.critical_dp_bar);  // so that the radius is not 0 either way
  Kpis k;
  apply_dp_envelope_head(k, KpiHeadEstimator(*h), c, {}, o, times);
  REQUIRE(k.aor_from_head);
  CHECK(k.aor_radius_m == Approx(envelope_front_radius(c, want, o.critical_dp_bar)));
  CHECK(k.aor_radius_m > 0);
  CHECK(k.aor_bounds.lo == Approx(envelope_front_radius(c, lo, o.critical_dp_bar)));
  CHECK(k.aor_bounds.hi == Approx(envelope_front_radius(c, hi, o.critical_dp_bar)));
  CHECK(k.aor_bounds.lo < k.aor_radius_m);
  Kpis p;
  apply_dp_envelope_head(p, KpiHeadEstimator(plain), c, {}, o, times);
  REQUIRE(p.aor_from_head);
  CHECK(p.aor_radius_m == 0.0);  // 2 bar nowhere reaches 10
  // A baseline needs the buoyancy-aware columns among the inputs, and a known name.
  KpiHead no_columns = *h;
  no_columns.features.resize(no_columns.features.size() - 2);
  CHECK_THROWS_WITH(KpiHeadEstimator(no_columns), Catch::Contains("envelope_baseline"));
}

TEST_CASE("pressure estimates: a head file's envelope baseline is checked",
          "[pressure][kpi_heads]") {
  const std::string copy = test::copy_fixture(kFixture, "pressure_estimates_bad_base.h5");
  test::set_string_attribute(copy, "envelope_baseline", "gravity_envelope", "/max_dp_head");
  CHECK_THROWS_WITH(
      read_kpi_head(copy, "max_dp_head"),
      Catch::Contains("max_dp_head@envelope_baseline") && Catch::Contains("physics inputs"));
  test::set_string_attribute(copy, "physics_inputs", "envelope", "/max_dp_head");
  test::set_string_attribute(copy, "envelope_baseline", "theis", "/max_dp_head");
  CHECK_THROWS_WITH(
      read_kpi_head(copy, "max_dp_head"),
      Catch::Contains("max_dp_head@envelope_baseline") && Catch::Contains("gravity_envelope"));
  // 32 KB of text (HDF5 keeps an attribute under 64 KB) and a number where the name belongs:
  // refused the same way.
  test::set_string_attribute(copy, "envelope_baseline", std::string(1 << 15, 'g'), "/max_dp_head");
  CHECK_THROWS_WITH(read_kpi_head(copy, "max_dp_head"),
                    Catch::Contains("max_dp_head@envelope_baseline"));
  test::set_double_attribute(copy, "envelope_baseline", {1.0}, "/max_dp_head");
  CHECK_THROWS_WITH(read_kpi_head(copy, "max_dp_head"),
                    Catch::Contains("envelope_baseline") && Catch::Contains("not a string"));
  std::remove(copy.c_str());
}

TEST_CASE("pressure estimates: the buoyancy-aware estimate equals python's",
          "[pressure][gravity]") {
  // Its first 8 radial columns, its largest value in the well's column and its plume radius on
  // the examples and the hand-made case (python/ufno/conversion/fixtures.py
  // add_gravity_pressure_estimates).
  const auto f = h5::File::open_read(kFixture);
  for_each_fixture_case(
      f, [&](const std::string& g, const ReservoirCase& c, const std::vector<double>& times) {
        check_near_columns(f, g, "gravity_dp_bar_near", c, rz_gravity_two_phase_dp_bar(c, times));
        CHECK(rz_gravity_two_phase_max_dp_bar(c, times) ==
              Approx(attr(f, g, "gravity_max_dp_bar")).epsilon(kTwin));
        // Its gas saturation's plume radius at each report time by the KPI rule at SG 0.01
        // (plume_radius.plume_radii of physics.py's saturations): a running maximum that grows.
        const std::vector<double> want = f.numeric_attribute("gravity_plume_radius_m", g);
        const GravitySummary s = rz_gravity_two_phase_summary(c, times);
        REQUIRE(s.plume_radius_m.size() == times.size());
        REQUIRE(want.size() == times.size());
        CHECK(max_rel(s.plume_radius_m, want, 1.0) < 1e-6);
        for (std::size_t t = 1; t < times.size(); ++t)
          CHECK(s.plume_radius_m[t] >= s.plume_radius_m[t - 1]);
        CHECK(s.plume_radius_m.back() > s.plume_radius_m.front());
      });
}

TEST_CASE("pressure estimates: the brine-dissolution estimate equals python's",
          "[pressure][gravity]") {
  // The "brine" dissolution model (physics.DISSOLUTION_MODELS): its first 8 radial columns and
  // its envelope at every column on the examples and the hand-made case
  // (add_brine_dissolution_estimates). It dissolves less CO2 than the pore-volume model, so its
  // far field lies above that model's wherever the plume holds gas.
  const auto f = h5::File::open_read(kFixture);
  for_each_fixture_case(f, [&](const std::string& g, const ReservoirCase& c,
                               const std::vector<double>& times) {
    const double scale = check_near_columns(
        f, g, "gravity_brine_dp_bar_near", c,
        rz_gravity_two_phase_dp_bar(c, times, kStandardGravity, Dissolution::kBrine));
    const std::vector<double> want = f.numeric_attribute("gravity_brine_envelope_bar", g);
    const GravitySummary brine = rz_gravity_two_phase_summary(c, times, Dissolution::kBrine);
    REQUIRE(brine.envelope_bar.size() == std::size_t(c.ny));
    CHECK(max_rel(brine.envelope_bar, want, 1e-3 * scale) < kTwin);
    const GravitySummary pore = rz_gravity_two_phase_summary(c, times);
    CHECK(brine.envelope_bar.back() > pore.envelope_bar.back());
    // The memo keeps the two apart.
    CHECK(memo_gravity_summary(c, times, Dissolution::kBrine).envelope_bar == brine.envelope_bar);
    CHECK(memo_gravity_summary(c, times).envelope_bar == pore.envelope_bar);
  });
}

TEST_CASE("pressure estimates: the buoyancy-aware estimate at hand-checkable limits",
          "[pressure][gravity]") {
  // The hand-made homogeneous case perforated over its whole thickness: nothing flows
  // vertically without gravity, so the estimate is then the implicit one; with gravity the
  // well's column holds CO2 and its buoyancy lifts the top layer's buildup above the implicit
  // estimate's; no injection, no buildup.
  const auto f = h5::File::open_read(kFixture);
  ReservoirCase c = hand_made(f);
  std::fill(c.perforated.begin(), c.perforated.end(), 1);
  const std::vector<double> times = {1.0, 10.0, 100.0};
  const std::vector<double> imp = rz_implicit_two_phase_dp_bar(c, times);
  CHECK(max_rel(rz_gravity_two_phase_dp_bar(c, times, 0.0), imp, 1e-3) < kTwin);
  const std::vector<double> dp = rz_gravity_two_phase_dp_bar(c, times);
  const int X = c.nx, Y = c.ny;
  const std::size_t last = std::size_t(times.size() - 1) * X * Y;
  // Upward, layer to layer, the buildup rises by 0.8-1.0 (rho_brine - rho_CO2) g dz (a column
  // in which CO2 is continuous: CO2's gradient, brine's hydrostatic subtracted).
  const PressureProperties p = pressure_properties(c);
  const double step =
      (brine_density_kg_m3(c.temperature_c, p.p_perf) - p.rho_co2) * 9.80665 * c.dz[0] / 1e5;
  for (int x = 0; x + 1 < X; ++x) {
    INFO("layer " << x);
    const double rise = (dp[last + std::size_t(x) * Y] - dp[last + std::size_t(x + 1) * Y]) / step;
    CHECK(rise < 1.0);
    if (x > 0 && x + 2 < X) CHECK(rise > 0.8);
  }
  CHECK(dp[last] > imp[last]);
  for (double v : dp) CHECK(std::isfinite(v));
  ReservoirCase none = c;
  none.rate_mt_per_year = 0.0;
  for (double v : rz_gravity_two_phase_dp_bar(none, times)) CHECK(v == 0.0);
  // No gas, no plume: its plume radius is 0 at every report time.
  const GravitySummary empty = rz_gravity_two_phase_summary(none, times);
  REQUIRE(empty.plume_radius_m.size() == times.size());
  for (double r : empty.plume_radius_m) CHECK(r == 0.0);
}

TEST_CASE("pressure estimates: a plume-radius head reads the buoyancy-aware solve's radius",
          "[pressure][kpi_heads][gravity]") {
  // A plume-radius head with physics_inputs = "plume_radius" reads, after the 32 features,
  // log(max(radius, 1 m)) of the solve's plume radius at each of its report times, named
  // log_rz_gravity_plume_radius_t<k>; other names or counts are a head from another version.
  // With its input ranges drawn tight around the solve's values (the fixture's head widened by
  // zero weights) it estimates; with one range moved off its value it declines.
  const std::string copy =
      test::copy_fixture(kData + "/plume_radius_head_small.h5", "pressure_estimates_plume.h5");
  test::set_string_attribute(copy, "physics_inputs", "plume_radius", "/plume_radius_head");
  std::optional<KpiHead> h = read_kpi_head(copy, "plume_radius_head");
  std::remove(copy.c_str());
  REQUIRE(h);
  REQUIRE(h->outputs() == 24);
  CHECK_THROWS_WITH(KpiHeadEstimator(*h), Catch::Contains("plume_radius_head@features"));
  for (const std::string& last : {std::string("log_rz_gravity_plume_radius_t24"),
                                  std::string("log_field_plume_radius_t23")}) {
    KpiHead wrong = *h;
    for (int t = 0; t < 23; ++t)
      wrong.features.push_back("log_rz_gravity_plume_radius_t" + std::to_string(t));
    wrong.features.push_back(last);
    INFO(last);
    CHECK_THROWS_WITH(KpiHeadEstimator(wrong), Catch::Contains("plume_radius_head@features"));
  }
  {
    // A file's head may read the network's radii too (its digest with them); a maximum-dP
    // head's physics inputs still exclude the network's outputs.
    const std::string both_file = test::copy_fixture(kData + "/plume_radius_field_head_small.h5",
                                                     "pressure_estimates_plume_field.h5");
    test::set_string_attribute(both_file, "physics_inputs", "plume_radius", "/plume_radius_head");
    const auto read = read_kpi_head(both_file, "plume_radius_head");
    REQUIRE(read);
    CHECK(read->physics_inputs == "plume_radius");
    CHECK(read->field_plume_radius_floor_m > 0);
    test::set_string_attribute(both_file, "physics_inputs", "max_dp", "/plume_radius_head");
    CHECK_THROWS_WITH(read_kpi_head(both_file, "plume_radius_head"),
                      Catch::Contains("plume_radius_head@physics_inputs"));
    std::remove(both_file.c_str());
  }
  {
    // With the network's radii as well: the solve's first, then the network's.
    KpiHead both = *h, swapped = *h;
    both.field_plume_radius_floor_m = swapped.field_plume_radius_floor_m = 1.0;
    const auto gravity = gravity_plume_radius_feature_names(24);
    const auto field = field_radius_feature_names(24);
    both.features.insert(both.features.end(), gravity.begin(), gravity.end());
    both.features.insert(both.features.end(), field.begin(), field.end());
    CHECK_NOTHROW(KpiHeadEstimator(both));
    swapped.features.insert(swapped.features.end(), field.begin(), field.end());
    swapped.features.insert(swapped.features.end(), gravity.begin(), gravity.end());
    CHECK_THROWS_WITH(KpiHeadEstimator(swapped), Catch::Contains("plume_radius_head@features"));
  }
  const std::vector<double> times = h->times_days;
  const ReservoirCase c = read_case(example_paths().front());
  const GravitySummary g = rz_gravity_two_phase_summary(c, times);
  std::vector<double> given;
  for (int t = 0; t < 24; ++t) {
    h->features.push_back("log_rz_gravity_plume_radius_t" + std::to_string(t));
    given.push_back(std::log(std::max(g.plume_radius_m[std::size_t(t)], 1.0)));
  }
  CHECK(given.front() < given.back());  // so that reversed times would show
  widen_with_tight_inputs(*h, given);
  KpiOptions o;
  Kpis base = compute_kpis(c, std::vector<float>(times.size() * c.nx * c.ny, 0.5f),
                           std::vector<float>(times.size() * c.nx * c.ny, 1.0f), times, o);
  Kpis k = base;
  apply_plume_radius_head(k, KpiHeadEstimator(*h), c, {}, times, o);
  CHECK(k.plume_from_head);
  for (std::size_t i = 1; i <= given.size(); i += 11) {
    INFO("input " << h->features.size() - i);
    KpiHead off = *h;
    off.feature_min[off.features.size() - i] += 0.5;
    off.feature_max[off.features.size() - i] += 0.5;
    Kpis k2 = base;
    apply_plume_radius_head(k2, KpiHeadEstimator(off), c, {}, times, o);
    CHECK_FALSE(k2.plume_from_head);
  }
  // Such a head is a plume-radius head's kind, fitted at the solve's threshold.
  KpiStageHead(KpiHeadEstimator(*h), kPlumeRadiusHead).validate();
  CHECK_THROWS_WITH(KpiStageHead(KpiHeadEstimator(*h), kCo2MassHead).validate(),
                    Catch::Contains("plume_radius_head@physics_inputs"));
  KpiHead other = *h;
  other.sg_threshold = 0.05;
  CHECK_THROWS_WITH(KpiStageHead(KpiHeadEstimator(other), kPlumeRadiusHead).validate(),
                    Catch::Contains("plume_radius_head@sg_threshold"));
}

TEST_CASE("pressure estimates: a maximum-dP head that reads the buoyancy-aware estimate",
          "[pressure][kpi_heads][gravity]") {
  // Its 36th input, named log_rz_gravity_two_phase_max_dp_bar, is computed for it; C++ gives
  // Python's estimates on the examples.
  const auto h = read_kpi_head(kFixture, "max_dp_head_gravity");
  REQUIRE(h);
  REQUIRE(h->features.size() == 36);
  CHECK(h->features.back() == "log_rz_gravity_two_phase_max_dp_bar");
  const KpiHeadEstimator e(*h);
  CHECK(e.head().physics_extra == MaxDpExtraInputs::gravity_max);
  const auto f = h5::File::open_read(kFixture);
  const auto inputs = f.read_numeric("expected_gravity/inputs").values;
  const auto expected = f.read_numeric("expected_gravity/max_dp_bar").values;
  const auto times = paper_times_days(24);
  const auto paths = example_paths();
  REQUIRE(inputs.size() == paths.size() * 36);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    INFO(paths[i]);
    const ReservoirCase c = read_case(paths[i]);
    CHECK(std::log(rz_gravity_two_phase_max_dp_bar(c, times)) ==
          Approx(inputs[i * 36 + 35]).epsilon(kTwin));
    Kpis k;
    k.max_dp_bar = k.max_dp_field_bar = 3.0;
    apply_max_dp_head(k, e, c, {}, times);
    CHECK(k.max_dp_from_head);
    CHECK(k.max_dp_bar == Approx(expected[i]).epsilon(1e-5));
  }
}

TEST_CASE("pressure estimates: the buoyancy-aware estimate's well column summarised",
          "[pressure][gravity]") {
  // The summary is the field's well column reduced: its maximum over layers and report times,
  // the first report's largest layer, the first report day that reaches the maximum. A
  // maximum-dP head whose inputs end with the three names reads their logarithms; the same
  // names in another order are a head from another version.
  const std::vector<double> times = paper_times_days(24);
  for (const auto& path : example_paths()) {
    INFO(path);
    const ReservoirCase c = read_case(path);
    const std::vector<double> f = rz_gravity_two_phase_dp_bar(c, times);
    const std::size_t X = std::size_t(c.nx), Y = std::size_t(c.ny);
    std::vector<double> column(times.size(), -1e300);
    for (std::size_t t = 0; t < times.size(); ++t)
      for (std::size_t x = 0; x < X; ++x) column[t] = std::max(column[t], f[(t * X + x) * Y]);
    const auto top = std::max_element(column.begin(), column.end());
    const GravitySummary s = rz_gravity_two_phase_summary(c, times);
    CHECK(s.max_bar == *top);
    CHECK(s.max_bar == rz_gravity_two_phase_max_dp_bar(c, times));
    CHECK(s.first_report_bar == column.front());
    CHECK(s.max_day == times[std::size_t(top - column.begin())]);
    // Its envelope: the field's largest value over report times and layers per radial column.
    REQUIRE(s.envelope_bar.size() == Y);
    for (std::size_t y = 0; y < Y; ++y) {
      double e = -1e300;
      for (std::size_t t = 0; t < times.size(); ++t)
        for (std::size_t x = 0; x < X; ++x) e = std::max(e, f[(t * X + x) * Y + y]);
      CHECK(s.envelope_bar[y] == e);
    }
    CHECK(s.envelope_bar.front() == s.max_bar);  // the well's column holds its maximum
  }
  const auto base = read_kpi_head(kFixture, "max_dp_head_gravity");
  REQUIRE(base);
  KpiHead h = *base;
  h.features.pop_back();
  for (const char* n : {"log_rz_gravity_two_phase_max_dp_bar", "log_rz_gravity_first_report_dp_bar",
                        "log_rz_gravity_max_day"})
    h.features.push_back(n);
  h.feature_mean.resize(h.features.size(), 0.0);  // the shapes follow the names; values unused
  CHECK(KpiHeadEstimator(h).head().physics_extra == MaxDpExtraInputs::gravity_summary);
  std::swap(h.features[h.features.size() - 1], h.features[h.features.size() - 2]);
  CHECK_THROWS_WITH(KpiHeadEstimator(h),
                    Catch::Contains("names features this build does not compute"));
}

TEST_CASE("pressure estimates: the memo computes a case's estimate once and tells cases apart",
          "[pressure][memo]") {
  const auto f = h5::File::open_read(kFixture);
  const ReservoirCase a = hand_made(f);
  const std::vector<double> times = paper_times_days(24);
  EstimateMemo memo(2);
  double calls = 0;
  auto counted = [&] { return ++calls; };  // each computation gives a new value
  CHECK(memo.get(0, a, times, counted) == 1);
  CHECK(memo.get(0, a, times, counted) == 1);  // the stored value
  CHECK(memo.computed() == 1);
  // Any input that differs is another key: a scalar, one cell, the times, the estimate.
  ReservoirCase b = a;
  b.swi += 1e-12;
  CHECK(memo.get(0, b, times, counted) == 2);
  ReservoirCase cell = a;
  cell.permz.back() *= 2;
  CHECK(memo.get(0, cell, times, counted) == 3);  // a third key: a leaves (capacity 2)
  std::vector<double> later = times;
  later.back() += 1;
  CHECK(memo.get(0, b, later, counted) == 4);
  CHECK(memo.get(1, b, later, counted) == 5);
  CHECK(memo.get(0, a, times, counted) == 6);  // computed again after it left
  CHECK(memo.computed() == 6);
  // A computation that throws stores nothing.
  CHECK_THROWS(memo.get(7, a, times, []() -> double { throw std::runtime_error("no"); }));
  CHECK(memo.get(7, a, times, counted) == 7);

  // The maximum-dP head's buoyancy-aware input through the process's memo: the peak match and
  // the KPI stage ask for it, the estimate runs once and both get the same KPI.
  const auto shipped = KpiHeadEstimator::from_model_file(kData + "/../../models/dp_ufno.h5",
                                                         HeadRegistry::kMaxDpGroup);
  REQUIRE(shipped);
  const MaxDpExtraInputs kind = shipped->head().physics_extra;
  REQUIRE((kind == MaxDpExtraInputs::gravity_max || kind == MaxDpExtraInputs::gravity_summary));
  // A case no other test estimates, so that each memo computes it exactly once here.
  ReservoirCase ex = read_case(example_paths().front());
  ex.swi += 1e-9;
  const long before = max_dp_estimate_memo().computed();
  const long features_before = max_dp_physics_memo().computed();
  Kpis k1, k2;
  k1.max_dp_bar = k1.max_dp_field_bar = k2.max_dp_bar = k2.max_dp_field_bar = 3.0;
  apply_max_dp_head(k1, *shipped, ex, {}, times);
  apply_max_dp_head(k2, *shipped, ex, {}, times);
  CHECK(max_dp_estimate_memo().computed() - before == 1);
  CHECK(max_dp_physics_memo().computed() - features_before == 1);  // its r-z solves likewise
  const MaxDpPhysics again = max_dp_physics_features(ex, times);
  CHECK(max_dp_physics_memo().computed() - features_before == 1);
  CHECK(again.features == max_dp_physics_features(ex, times).features);
  CHECK(k1.max_dp_from_head);
  CHECK(k2.max_dp_bar == k1.max_dp_bar);
  // The memo's value is the estimate's own.
  const std::vector<double> stored =
      max_dp_estimate_memo().get(int(kind), ex, times, [] { return std::vector<double>{}; });
  REQUIRE_FALSE(stored.empty());
  CHECK(stored[0] == std::log(rz_gravity_two_phase_max_dp_bar(ex, times)));
}

TEST_CASE("pressure estimates: a prediction file's float32 times give the estimates' own times",
          "[pressure][memo]") {
  const auto f = h5::File::open_read(kFixture);
  ReservoirCase c = hand_made(f);
  const std::vector<double> paper = paper_times_days(24);
  auto as_float = [](std::vector<double> t) {
    for (double& v : t) v = double(float(v));
    return t;
  };
  REQUIRE(as_float(paper) != paper);  // the case this is for: float32 moves the times
  // No TIMES in the case: the paper's times, to the last digit.
  CHECK(estimate_times_days(c, as_float(paper)) == paper);
  // The case's own TIMES where they are the given ones to float precision.
  c.times_days = paper;
  for (double& v : c.times_days) v *= 1.0 + 1e-12;
  CHECK(estimate_times_days(c, as_float(paper)) == c.times_days);
  // Other times stay as given: a field file from another schedule, or fewer times.
  std::vector<double> other = as_float(paper);
  other[3] += 0.5;
  CHECK(estimate_times_days(c, other) == other);
  const std::vector<double> fewer(paper.begin(), paper.begin() + 5);
  CHECK(estimate_times_days(c, fewer) == fewer);

  // The shipped maximum-dP head gives the KPI stage (times read back from a prediction file) the
  // value the peak match (the case's times) shaped the field with.
  const auto shipped = KpiHeadEstimator::from_model_file(kData + "/../../models/dp_ufno.h5",
                                                         HeadRegistry::kMaxDpGroup);
  REQUIRE(shipped);
  const ReservoirCase ex = read_case(example_paths().back());
  const std::vector<double> case_times = ex.times_days.empty() ? paper : ex.times_days;
  const auto at_case = max_dp_head_estimate(*shipped, ex, {}, case_times);
  const auto from_file =
      max_dp_head_estimate(*shipped, ex, {}, estimate_times_days(ex, as_float(case_times)));
  REQUIRE(at_case);
  REQUIRE(from_file);
  CHECK(from_file->value.front() == at_case->value.front());
}
