// screening/KpiHeads.hpp: the heads' features on a hand-made case against direct sums; the features
// and estimates on the shipped examples against python/ufno/heads/common.py's
// (tests/data/max_dp_head_small.h5, plume_radius_head_small.h5, plume_radius_field_head_small.h5,
// dp_envelope_head_small.h5 and max_dp_envelope_head_small.h5, python/ufno/conversion/fixtures.py);
// files without a head, cases on another grid, and the KPIs each head replaces (and when it
// must not).
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"
#include "runtime/KpiHeadFeatures.hpp"
#include "runtime/TrainingStatistics.hpp"
#include "screening/Evaluate.hpp"
#include "screening/HeadRegistry.hpp"
#include "screening/KpiHeads.hpp"
#include "screening/KpiTable.hpp"
#include "support/FileTamper.hpp"

using namespace ufno;

namespace {

const std::string kData = UFNO_TEST_DATA_DIR;
const std::string kFixture = kData + "/max_dp_head_small.h5";
const std::string kPlumeFixture = kData + "/plume_radius_head_small.h5";

// 3 layers x 16 radial cells: kx = 100 (x + 1) + y mD, kz = kx / 10, porosity 0.2 + 0.01 x;
// layer 2 inactive from radial cell 8 on; layers 0 and 1 perforated.
ReservoirCase hand_made() {
  ReservoirCase c;
  c.path = "hand_made.h5";
  c.nx = c.lx = 3;
  c.ny = c.ly = 16;
  for (int x = 0; x < 3; ++x)
    for (int y = 0; y < 16; ++y) {
      const bool act = !(x == 2 && y >= 8);
      c.permx.push_back(act ? 100.0 * (x + 1) + y : 0.0);
      c.permz.push_back(act ? (100.0 * (x + 1) + y) / 10 : 0.0);
      c.poro.push_back(act ? 0.2 + 0.01 * x : 0.0);
    }
  c.dr.assign(16, 5.0);
  c.dz.assign(3, 10.0);
  c.perforated = {1, 1, 0};
  c.rate_mt_per_year = 1.0;
  c.temperature_c = 60;
  c.pressure_bar = 150;
  c.swi = 0.2;
  c.vg_lambda = 0.5;
  return c;
}

double kx(int x, int y) { return (x == 2 && y >= 8) ? 0.0 : 100.0 * (x + 1) + y; }

}  // namespace

TEST_CASE("the features of a hand-made case are the sums they name", "[kpi_heads]") {
  const auto f = kpi_head_features(hand_made());
  REQUIRE(f.size() == kpi_head_feature_names().size());
  REQUIRE(f.size() == 32);
  const double eps = 1e-5;  // ln k / 15 is rounded to float32 by the encoding
  CHECK(f[0] == Approx(double(float(encoded_rate(1.0)))));
  CHECK(f[1] == Approx((60.0 - 30) / 150));
  CHECK(f[3] == Approx((0.2 - 0.1) / 0.2));
  int i = 5;
  for (int y : {0, 1, 3, 6, 12}) {
    CHECK(f[i++] == Approx(std::log(kx(0, y) + kx(1, y) + 1e-3)).epsilon(eps));
    CHECK(f[i++] == Approx(std::log(kx(0, y) + kx(1, y) + kx(2, y) + 1e-3)).epsilon(eps));
    CHECK(f[i++] == Approx(std::log((kx(0, y) + kx(1, y) + kx(2, y)) / 10 + 1e-3)).epsilon(eps));
  }
  CHECK(f[20] == 2);  // perforated layers
  CHECK(f[21] == 3);  // active layers at the well
  CHECK(f[22] == Approx((16 * 0.2 + 16 * 0.21 + 8 * 0.22) / 40));
  CHECK(f[23] == Approx(0.5));  // mean perforated layer index
  CHECK(f[24] == Approx(1.0));
  CHECK(f[25] == Approx(std::log(4 * (0.2 + 0.21 + 0.22) + 1e-6)));  // radial cells 0-3
  CHECK(f[27] == Approx(std::log(4 * (0.2 + 0.21) + 1e-6)));         // 8-11: layer 2 inactive
  CHECK(f[29] == Approx(std::log(200 + 1e-3)).epsilon(eps));
  CHECK(f[30] == Approx(std::log(100 + 1e-3)).epsilon(eps));
  CHECK(f[31] == Approx(std::log(30 + 1e-3)).epsilon(eps));
}

TEST_CASE("features and estimates equal python/ufno/heads/max_dp.py's on the shipped examples",
          "[kpi_heads]") {
  const auto h = read_kpi_head(
      kFixture, HeadRegistry::kMaxDpGroup);  // a head alone: no network to check its grid
  REQUIRE(h);
  const std::optional<KpiHeadEstimator> e(KpiHeadEstimator{*h});
  CHECK(e->head().members.size() == 2);
  auto f = h5::File::open_read(kFixture);
  const auto feats = f.read_numeric("expected/features");
  const auto want = f.read_numeric("expected/estimate_bar");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    const auto mine = kpi_head_features(c);
    REQUIRE(mine.size() == feats.shape[1]);
    double worst = 0;
    for (std::size_t k = 0; k < mine.size(); ++k)
      worst = std::max(worst, std::abs(mine[k] - feats.values[n * mine.size() + k]) /
                                  std::max(1.0, std::abs(feats.values[n * mine.size() + k])));
    CHECK(worst < 1e-12);
    const auto got = e->estimate(c);
    REQUIRE(got);  // the examples are inside the fixture head's ranges
    CHECK(got->at(0) == Approx(want.values[n]).epsilon(1e-12));
  }
  CHECK(n == 3);
}

TEST_CASE("a model file without a head has none; a case on another grid is refused",
          "[kpi_heads]") {
  CHECK_FALSE(
      KpiHeadEstimator::from_model_file(kData + "/ufno_small.h5", HeadRegistry::kMaxDpGroup));
  const auto shipped = KpiHeadEstimator::from_model_file(kData + "/../../models/dp_ufno.h5",
                                                         HeadRegistry::kMaxDpGroup);
  REQUIRE(shipped);  // the shipped dP model carries one, on its own grid
  CHECK(shipped->head().grid == std::array<int, 2>{24, 48});
  const auto h = read_kpi_head(
      kFixture, HeadRegistry::kMaxDpGroup);  // a head alone: no network to check its grid
  REQUIRE(h);
  const std::optional<KpiHeadEstimator> e(KpiHeadEstimator{*h});
  try {
    e->estimate(hand_made());
    FAIL("a 3 x 16 case was accepted by a head trained on 24 x 48");
  } catch (const InputError& err) {
    CHECK(std::string(err.what()).find("hand_made.h5: grid:") == 0);
  }
  ReservoirCase narrow = hand_made();
  narrow.ny = narrow.ly = 10;  // fewer radial cells than the features read
  CHECK_THROWS_AS(kpi_head_features(narrow), InputError);
}

TEST_CASE("the head replaces the KPI's value, not the field's maximum or its place",
          "[kpi_heads]") {
  const auto h = read_kpi_head(
      kFixture, HeadRegistry::kMaxDpGroup);  // a head alone: no network to check its grid
  REQUIRE(h);
  const std::optional<KpiHeadEstimator> e(KpiHeadEstimator{*h});
  std::istringstream cases(*h5::File::open_read(kFixture).string_attribute("expected", "cases"));
  std::string rel;
  std::getline(cases, rel, ',');
  const ReservoirCase c = read_case(kData + "/../../" + rel);
  Kpis k;
  k.max_dp_bar = k.max_dp_field_bar = 3.0;
  k.max_dp_radius_m = 12.0;
  apply_max_dp_head(k, *e, c, {});
  CHECK(k.max_dp_bar == Approx(e->estimate(c)->at(0)));
  CHECK(k.max_dp_bar != 3.0);
  CHECK(k.max_dp_from_head);
  CHECK(k.max_dp_field_bar == 3.0);
  CHECK(k.max_dp_radius_m == 12.0);
  // A case beyond the head's training ranges (a rate of 50 Mt/yr) keeps the field's value.
  ReservoirCase far = c;
  far.rate_mt_per_year = 50;
  CHECK_FALSE(e->estimate(far));
  Kpis kf;
  kf.max_dp_bar = kf.max_dp_field_bar = 3.0;
  apply_max_dp_head(kf, *e, far, {});
  CHECK(kf.max_dp_bar == 3.0);
  CHECK_FALSE(kf.max_dp_from_head);
}

namespace {

// The fixture's plume head and the first shipped example, with the KPIs a field might give.
struct PlumeSetup {
  KpiHeadEstimator e;
  ReservoirCase c;
  std::vector<double> times;
  KpiOptions o;
  Kpis k;
};

PlumeSetup plume_setup() {
  const auto h = read_kpi_head(kPlumeFixture, HeadRegistry::kPlumeRadiusGroup);
  REQUIRE(h);
  std::istringstream cases(
      *h5::File::open_read(kPlumeFixture).string_attribute("expected", "cases"));
  std::string rel;
  std::getline(cases, rel, ',');
  PlumeSetup s{KpiHeadEstimator{*h}, read_case(kData + "/../../" + rel), h->times_days, {}, {}};
  s.o.years = {1, 10, 30};
  for (double y : s.o.years) {
    std::size_t best = 0;
    for (std::size_t t = 1; t < s.times.size(); ++t)
      if (std::abs(s.times[t] / 365.25 - y) < std::abs(s.times[best] / 365.25 - y)) best = t;
    s.k.years_used.push_back(s.times[best] / 365.25);
    s.k.plume_radius_m.push_back(1.0);
    s.k.plume_area_km2.push_back(M_PI / 1e6);
    s.k.plume_capped.push_back(0);
  }
  s.k.plume_radius_field_m = s.k.plume_radius_m;
  return s;
}

}  // namespace

TEST_CASE(
    "a plume-radius head's estimates equal python/ufno/heads/common.py's on the shipped examples",
    "[kpi_heads]") {
  const auto h = read_kpi_head(kPlumeFixture, HeadRegistry::kPlumeRadiusGroup);
  REQUIRE(h);
  CHECK(h->outputs() == 24);
  CHECK(h->times_days.size() == 24);
  CHECK(h->sg_threshold == 0.01);
  const KpiHeadEstimator e(*h);
  auto f = h5::File::open_read(kPlumeFixture);
  const auto want = f.read_numeric("expected/radius_m");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const auto got = e.estimate(read_case(kData + "/../../" + rel));
    REQUIRE(got);
    REQUIRE(got->size() == 24);
    double worst = 0;
    for (std::size_t t = 0; t < 24; ++t)
      worst = std::max(worst, std::abs((*got)[t] / want.values[n * 24 + t] - 1));
    CHECK(worst < 1e-12);
  }
  CHECK(n == 3);
}

TEST_CASE("the plume head sets each year's radius and area from its report time, never receding",
          "[kpi_heads]") {
  PlumeSetup s = plume_setup();
  auto r = *s.e.estimate(s.c);
  for (std::size_t t = 1; t < r.size(); ++t) r[t] = std::max(r[t], r[t - 1]);
  apply_plume_radius_head(s.k, s.e, s.c, {}, s.times, s.o);
  REQUIRE(s.k.plume_from_head);
  for (std::size_t i = 0; i < s.o.years.size(); ++i) {
    std::size_t best = 0;
    while (std::abs(s.times[best] / 365.25 - s.k.years_used[i]) > 1e-9) ++best;
    CHECK(s.k.plume_radius_m[i] == Approx(r[best]).epsilon(1e-12));
    CHECK(s.k.plume_area_km2[i] == Approx(M_PI * r[best] * r[best] / 1e6).epsilon(1e-12));
    CHECK(s.k.plume_radius_field_m[i] == 1.0);  // the field's own radius is kept
    if (i) CHECK(s.k.plume_radius_m[i] >= s.k.plume_radius_m[i - 1]);
  }
}

TEST_CASE("the plume head stays within the field's mass cap", "[kpi_heads]") {
  PlumeSetup s = plume_setup();
  s.k.plume_capped[2] = 1;  // the field filled the injected mass by 0.5 m at 30 years
  s.k.plume_radius_m[2] = 0.5;
  apply_plume_radius_head(s.k, s.e, s.c, {}, s.times, s.o);
  CHECK(s.k.plume_radius_m[2] == 0.5);
  CHECK(s.k.plume_radius_m[0] > 1.0);  // uncapped years take the head's radius
}

TEST_CASE("the plume head is not used at another threshold, other times, or out of range",
          "[kpi_heads]") {
  {
    PlumeSetup s = plume_setup();
    s.o.sg_threshold = 0.05;  // a user's own plume definition: the head was not fitted to it
    apply_plume_radius_head(s.k, s.e, s.c, {}, s.times, s.o);
    CHECK_FALSE(s.k.plume_from_head);
    CHECK(s.k.plume_radius_m[0] == 1.0);
  }
  {
    PlumeSetup s = plume_setup();
    std::vector<double> other = s.times;
    other.back() *= 1.5;  // a run reporting at times the head does not know
    apply_plume_radius_head(s.k, s.e, s.c, {}, other, s.o);
    CHECK_FALSE(s.k.plume_from_head);
    other.pop_back();
    apply_plume_radius_head(s.k, s.e, s.c, {}, other, s.o);
    CHECK_FALSE(s.k.plume_from_head);
  }
  {
    PlumeSetup s = plume_setup();
    s.c.rate_mt_per_year = 50;  // beyond the head's training ranges
    apply_plume_radius_head(s.k, s.e, s.c, {}, s.times, s.o);
    CHECK_FALSE(s.k.plume_from_head);
    CHECK(s.k.plume_radius_m[2] == 1.0);
  }
}

TEST_CASE("a run's heads are found in its model files, each checked for its kind", "[kpi_heads]") {
  const auto none = HeadRegistry::from_model_files({kData + "/ufno_small.h5"});
  CHECK_FALSE(none.find(HeadRegistry::kMaxDpGroup));
  CHECK_FALSE(none.find(HeadRegistry::kPlumeRadiusGroup));
  CHECK(none.heads().empty());
  const auto shipped = HeadRegistry::from_model_files(
      {kData + "/../../models/sg_ufno.h5", kData + "/../../models/dp_ufno.h5"});
  REQUIRE(shipped.find(HeadRegistry::kMaxDpGroup));
  REQUIRE(shipped.find(HeadRegistry::kPlumeRadiusGroup));
  CHECK(shipped.estimator(HeadRegistry::kPlumeRadiusGroup)->head().outputs() == 24);
  REQUIRE(shipped.find(HeadRegistry::kCo2MassGroup));
  REQUIRE(shipped.find(
      HeadRegistry::kDpEnvelopeGroup));  // fitted to the shipped dP network: its digest matches
  CHECK(shipped.estimator(HeadRegistry::kDpEnvelopeGroup)->head().outputs() == 48);
  CHECK(shipped.notes.empty());
  CHECK(shipped.estimator(HeadRegistry::kPlumeRadiusGroup)->head().path.find("sg_ufno.h5") !=
        std::string::npos);
  // All five kinds, the field stage's first (the field-scale head and the maximum-dP head's peak
  // match); the dP field-scale head is no KPI estimator.
  CHECK(shipped.heads().size() == 6);
  REQUIRE(shipped.find("dp_field_scale_head"));
  CHECK(shipped.find("dp_field_scale_head")->stage() == HeadStage::Field);
  int max_dp_stages = 0;  // the maximum-dP head acts at both stages
  for (const auto& h : shipped.heads())
    if (h->group() == HeadRegistry::kMaxDpGroup)
      max_dp_stages |= h->stage() == HeadStage::Field ? 1 : 2;
  CHECK(max_dp_stages == 3);
  REQUIRE(shipped.estimator(HeadRegistry::kMaxDpGroup));
  CHECK_FALSE(shipped.estimator("dp_field_scale_head"));
  CHECK(
      HeadRegistry::from_model_files({kData + "/../../models/dp_ufno.h5"}, false).heads().size() ==
      2);
  // The KPI columns: the field's radius per year after the others.
  const auto header = kpi_header(KpiOptions{});
  CHECK(header.back() == "aor_field_radius_m");
  CHECK(header[header.size() - 2] == "co2_mass_field_Mt");
  CHECK(header[header.size() - 3] == "plume_radius_field_m_30yr");
  CHECK(header.size() == kpi_row(plume_setup().k).size());
}

TEST_CASE("the CO2-mass head gives the mass ratio and the mass in place; the field's is kept",
          "[kpi_heads]") {
  const auto heads = HeadRegistry::from_model_files({kData + "/../../models/sg_ufno.h5"});
  REQUIRE(heads.estimator(HeadRegistry::kCo2MassGroup));
  const KpiHeadEstimator& e = *heads.estimator(HeadRegistry::kCo2MassGroup);
  REQUIRE(e.head().times_days.size() == 1);
  const ReservoirCase c = read_case(kData + "/../../examples/opm/s1_i000087/case.h5");
  std::vector<double> times = paper_times_days(24);
  CHECK(times.back() == Approx(e.head().times_days[0]).epsilon(1e-9));
  auto fresh = [] {
    Kpis k;
    k.co2_mass_mt = k.co2_mass_field_mt = 30.0;
    k.injected_mt = 40.0;
    k.mass_ratio = 0.75;
    return k;
  };
  Kpis k = fresh();
  apply_co2_mass_head(k, e, c, times, KpiOptions{});
  REQUIRE(k.mass_from_head);
  const double ratio = e.estimate(c)->at(0);
  CHECK(k.mass_ratio == Approx(ratio).epsilon(1e-12));
  CHECK(k.co2_mass_mt == Approx(ratio * 40.0).epsilon(1e-12));
  CHECK(k.co2_mass_field_mt == 30.0);
  CHECK(ratio > 0.5);  // free gas: most of what was injected, not more
  CHECK(ratio < 1.0);
  // A fixed density (the head was fitted at Span-Wagner's) or another last report time keep the
  // field's mass.
  KpiOptions fixed;
  fixed.co2_density = 700;
  Kpis kf = fresh();
  apply_co2_mass_head(kf, e, c, times, fixed);
  CHECK_FALSE(kf.mass_from_head);
  CHECK(kf.co2_mass_mt == 30.0);
  times.pop_back();
  Kpis kt = fresh();
  apply_co2_mass_head(kt, e, c, times, KpiOptions{});
  CHECK_FALSE(kt.mass_from_head);
  CHECK(kt.mass_ratio == 0.75);
}

namespace {

const std::string kEnvelopeFixture = kData + "/dp_envelope_head_small.h5";

// A Flow field (T, X, Y) of a shipped example, beside its case file: "dP" or "SG".
std::vector<float> flow_field(const std::string& case_rel, const std::string& name) {
  const std::string dir = kData + "/../../" + case_rel.substr(0, case_rel.rfind('/'));
  std::vector<std::size_t> shape;
  return h5::File::open_read(dir + "/target.h5").read_floats(name, &shape);
}

std::vector<float> flow_dp(const std::string& case_rel) { return flow_field(case_rel, "dP"); }

}  // namespace

TEST_CASE("a dP-envelope head's inputs and estimates equal python/ufno/heads/common.py's",
          "[kpi_heads]") {
  const auto h = read_kpi_head(kEnvelopeFixture, HeadRegistry::kDpEnvelopeGroup);
  REQUIRE(h);
  CHECK(h->outputs() == 48);
  CHECK(h->envelope_columns.size() == 20);
  CHECK(h->features.size() == 52);
  const KpiHeadEstimator e(*h);
  auto f = h5::File::open_read(kEnvelopeFixture);
  const auto feats = f.read_numeric("expected/features");
  const auto want = f.read_numeric("expected/envelope_bar");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    const auto extra =
        field_envelope_features(c, flow_dp(rel), h->envelope_columns, h->envelope_floor_bar);
    REQUIRE(extra.size() == 20);
    double worst = 0;
    for (std::size_t k = 0; k < extra.size(); ++k)
      worst = std::max(worst, std::abs(extra[k] - feats.values[n * 52 + 32 + k]));
    CHECK(worst < 1e-12);
    const auto got = e.estimate(c, extra);
    REQUIRE(got);
    REQUIRE(got->size() == 48);
    double rel_err = 0;
    for (std::size_t y = 0; y < 48; ++y)
      rel_err = std::max(rel_err, std::abs((*got)[y] / want.values[n * 48 + y] - 1));
    CHECK(rel_err < 1e-12);
    CHECK_THROWS_AS(e.estimate(c), std::logic_error);  // the envelope inputs are required
  }
  CHECK(n == 3);
}

TEST_CASE(
    "a maximum-dP head that reads the network's envelope equals python/ufno/heads/common.py's",
    "[kpi_heads]") {
  const std::string fixture = kData + "/max_dp_envelope_head_small.h5";
  const auto h = read_kpi_head(fixture, HeadRegistry::kMaxDpGroup);
  REQUIRE(h);
  CHECK(h->outputs() == 1);
  CHECK(h->envelope_columns.size() == 20);
  CHECK(h->reads_network());
  const KpiHeadEstimator e(*h);
  auto f = h5::File::open_read(fixture);
  const auto want = f.read_numeric("expected/max_dp_bar");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    Kpis k;
    k.max_dp_bar = k.max_dp_field_bar = 3.0;
    apply_max_dp_head(k, e, c, flow_dp(rel));  // Flow's dP stands in for the network's
    REQUIRE(k.max_dp_from_head);
    CHECK(k.max_dp_bar == Approx(want.values[n]).epsilon(1e-12));
    CHECK(k.max_dp_field_bar == 3.0);
  }
  CHECK(n == 3);
}

TEST_CASE("the network digest is python/ufno/heads/common.py's, and ignores the heads in groups",
          "[kpi_heads]") {
  const auto want =
      h5::File::open_read(kEnvelopeFixture).string_attribute("expected", "ufno_small_digest");
  REQUIRE(want);
  CHECK(network_digest(kData + "/ufno_small.h5") == *want);
  CHECK(network_digest(kData + "/fno_small.h5") != *want);
}

TEST_CASE("the area of review from an envelope: the front where it falls through the pressure",
          "[kpi_heads]") {
  ReservoirCase c = hand_made();  // 16 radial cells of 5 m: centres 2.5, 7.5, ...
  std::vector<double> env(16, 1.0);
  env[0] = 30;
  env[1] = 20;
  env[2] = 8;
  CHECK(envelope_front_radius(c, env, 10.0) == Approx(7.5 + (20.0 - 10) / (20 - 8) * 5));
  CHECK(envelope_front_radius(c, env, 40.0) == 0.0);        // not even at the well
  CHECK(envelope_front_radius(c, env, 0.5) == Approx(80));  // every column: the grid's edge
  env[5] = 50;  // above again further out, but not connected through the columns between
  CHECK(envelope_front_radius(c, env, 10.0) == Approx(7.5 + (20.0 - 10) / (20 - 8) * 5));
}

namespace {

const std::string kPlumeFieldFixture = kData + "/plume_radius_field_head_small.h5";

}  // namespace

TEST_CASE("a plume head with field radii: inputs and estimates equal python/ufno/heads/common.py's",
          "[kpi_heads]") {
  const auto h = read_kpi_head(kPlumeFieldFixture, HeadRegistry::kPlumeRadiusGroup);
  REQUIRE(h);
  CHECK(h->field_plume_radius_floor_m == 1.0);
  CHECK(h->reads_network());
  CHECK(h->network_digest == network_digest(kData + "/fno_small.h5"));
  REQUIRE(h->features.size() == 56);
  CHECK(h->features.back() == "log_field_plume_radius_t23");
  const KpiHeadEstimator e(*h);
  auto f = h5::File::open_read(kPlumeFieldFixture);
  const auto feats = f.read_numeric("expected/features");
  const auto want = f.read_numeric("expected/radius_m");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    const auto sg = flow_field(rel, "SG");
    const auto extra = field_plume_radius_features(c, sg, 0.01, 1.0);
    REQUIRE(extra.size() == 24);
    double worst = 0;
    for (std::size_t k = 0; k < extra.size(); ++k)
      worst = std::max(worst, std::abs(extra[k] - feats.values[n * 56 + 32 + k]));
    CHECK(worst < 1e-12);
    const auto got = e.estimate(c, extra);
    REQUIRE(got);
    double rel_err = 0;
    for (std::size_t t = 0; t < 24; ++t)
      rel_err = std::max(rel_err, std::abs((*got)[t] / want.values[n * 24 + t] - 1));
    CHECK(rel_err < 1e-12);
    CHECK_THROWS_AS(e.estimate(c), std::logic_error);  // the field's radii are required

    // Applied to a run: each year's radius is the head's with this SG field's radii.
    KpiOptions o;
    Kpis k = compute_kpis(c, sg, flow_dp(rel), h->times_days, o);
    apply_plume_radius_head(k, e, c, sg, h->times_days, o);
    REQUIRE(k.plume_from_head);
    auto r = *got;
    for (std::size_t t = 1; t < r.size(); ++t) r[t] = std::max(r[t], r[t - 1]);
    for (std::size_t i = 0; i < o.years.size(); ++i) {
      std::size_t best = 0;
      while (std::abs(h->times_days[best] / 365.25 - k.years_used[i]) > 1e-9) ++best;
      if (!k.plume_capped[i]) CHECK(k.plume_radius_m[i] == Approx(r[best]).epsilon(1e-12));
    }
  }
  CHECK(n == 3);
}

TEST_CASE("the field radii a plume head reads are compute_kpis's radii before the mass cap",
          "[kpi_heads]") {
  std::istringstream cases(
      *h5::File::open_read(kPlumeFieldFixture).string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    const auto sg = flow_field(rel, "SG");
    const auto times =
        read_kpi_head(kPlumeFieldFixture, HeadRegistry::kPlumeRadiusGroup)->times_days;
    KpiOptions o;
    o.years = {0.5, 1, 5, 10, 30};
    const Kpis k = compute_kpis(c, sg, flow_dp(rel), times, o);
    const auto radii = plume_front_radii(c, sg, o.sg_threshold);
    REQUIRE(radii.size() == times.size());
    for (std::size_t t = 1; t < radii.size(); ++t) CHECK(radii[t] >= radii[t - 1]);
    for (std::size_t i = 0; i < o.years.size(); ++i) {
      std::size_t best = 0;
      while (std::abs(times[best] / 365.25 - k.years_used[i]) > 1e-9) ++best;
      CHECK_FALSE(k.plume_capped[i]);  // Flow's gas is within the injected mass
      CHECK(k.plume_radius_field_m[i] == Approx(radii[best]).epsilon(1e-12));
    }
    // A field that is not a whole number of the case's grids is refused, naming SG.
    CHECK_THROWS_AS(plume_front_radii(c, std::vector<float>(sg.begin(), sg.end() - 1), 0.01),
                    InputError);
  }
  CHECK(n == 3);
}

namespace {

// The RMS of the head's standardised features of c, computed here from its definition
// (python/ufno/heads/intervals.py feature_distance).
double feature_distance(const KpiHead& h, const ReservoirCase& c) {
  const auto f = kpi_head_features(c);
  double s = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double z = (f[i] - h.feature_mean[i]) / h.feature_std[i];
    s += z * z;
  }
  return std::sqrt(s / double(f.size()));
}

// A copy of the maximum-dP fixture with an interval of two distance bins split at `edge`.
std::string with_interval(const std::string& name, double edge, double limit) {
  const std::string p = test::copy_fixture(kFixture, name);
  const std::string g = HeadRegistry::kMaxDpGroup;
  test::set_double_attribute(p, "interval_coverage", {0.9}, g);
  test::set_double_attribute(p, "interval_distance_edges", {edge}, g);
  test::set_double_attribute(p, "interval_log_lo", {-0.2, -0.5}, g);
  test::set_double_attribute(p, "interval_log_hi", {0.1, 0.4}, g);
  test::set_double_attribute(p, "interval_distance_limit", {limit}, g);
  return p;
}

ReservoirCase fixture_case() {
  std::istringstream cases(*h5::File::open_read(kFixture).string_attribute("expected", "cases"));
  std::string rel;
  std::getline(cases, rel, ',');
  return read_case(kData + "/../../" + rel);
}

}  // namespace

TEST_CASE(
    "a head's interval: its distance bin's quantiles, widened and flagged beyond the "
    "calibration cases",
    "[kpi_heads]") {
  const ReservoirCase c = fixture_case();
  const auto plain = read_kpi_head(kFixture, HeadRegistry::kMaxDpGroup);
  REQUIRE(plain);
  const double d = feature_distance(*plain, c), v = *KpiHeadEstimator(*plain).estimate(c)->begin();
  auto bounds_of = [&](const std::string& path) {
    Kpis k;
    apply_max_dp_head(k, KpiHeadEstimator(*read_kpi_head(path, HeadRegistry::kMaxDpGroup)), c, {});
    return k;
  };
  // Without calibration: the value, no interval.
  Kpis none = bounds_of(kFixture);
  CHECK(std::isnan(none.max_dp_bounds.lo));
  CHECK(none.max_dp_bounds.trust == IntervalTrust::None);
  // The first bin, within the calibration cases.
  Kpis near = bounds_of(with_interval("iv_near.h5", d + 1, 2 * d));
  CHECK(near.max_dp_bar == Approx(v));
  CHECK(near.max_dp_bounds.lo == Approx(v * std::exp(-0.2)));
  CHECK(near.max_dp_bounds.hi == Approx(v * std::exp(0.1)));
  CHECK(near.max_dp_bounds.trust == IntervalTrust::Calibrated);
  CHECK(near.training_distance == Approx(0.5));
  // The second bin.
  Kpis second = bounds_of(with_interval("iv_second.h5", d / 2, 2 * d));
  CHECK(second.max_dp_bounds.lo == Approx(v * std::exp(-0.5)));
  CHECK(second.max_dp_bounds.hi == Approx(v * std::exp(0.4)));
  // Beyond the farthest calibration case: the bin's log bounds doubled, flagged.
  Kpis far = bounds_of(with_interval("iv_far.h5", d + 1, d / 2));
  CHECK(far.max_dp_bounds.lo == Approx(v * std::exp(-0.4)));
  CHECK(far.max_dp_bounds.hi == Approx(v * std::exp(0.2)));
  CHECK(far.max_dp_bounds.trust == IntervalTrust::Far);
  CHECK(far.training_distance == Approx(2.0));
  // The table's columns: NaN and 0 without an interval, the bounds and 1 with one.
  const auto cols = kpi_columns(KpiOptions{});
  auto column = [&](const Kpis& k, const std::string& name) {
    for (const auto& col : cols)
      if (col.header == name) return col.kpi->get(k, col.year);
    FAIL("no column " << name);
    return 0.0;
  };
  CHECK(std::isnan(column(none, "max_dP_bar_lo")));
  CHECK(column(none, "max_dP_interval") == 0);
  CHECK(column(near, "max_dP_bar_hi") == Approx(v * std::exp(0.1)));
  CHECK(column(near, "max_dP_interval") == 1);
  CHECK(column(far, "max_dP_interval") == 2);
  for (const char* f : {"iv_near.h5", "iv_second.h5", "iv_far.h5"}) std::remove(f);
}

TEST_CASE("a malformed interval is refused naming the head's attribute", "[kpi_heads]") {
  const std::string g = HeadRegistry::kMaxDpGroup;
  const std::string p = with_interval("iv_bad.h5", 1.0, 2.0);
  test::set_double_attribute(p, "interval_log_lo", {-0.2}, g);  // two bins need two values
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_log_lo"));
  test::set_double_attribute(p, "interval_log_lo", {0.2, 0.5}, g);  // above interval_log_hi
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_log_hi"));
  test::set_double_attribute(p, "interval_log_lo", {-0.2, -0.5}, g);
  test::set_double_attribute(p, "interval_coverage", {1.5}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_coverage"));
  test::set_double_attribute(p, "interval_coverage", {0.9}, g);
  test::set_double_attribute(p, "interval_distance_limit", {-1}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_distance_limit"));
  std::remove(p.c_str());
}

TEST_CASE(
    "a plume head's interval scaled by its disagreement with the network's radii "
    "(python/ufno/heads/intervals.py field_radius_disagreement)",
    "[kpi_heads]") {
  const std::string g = HeadRegistry::kPlumeRadiusGroup;
  const std::string p = test::copy_fixture(kPlumeFieldFixture, "iv_scaled.h5");
  test::set_double_attribute(p, "interval_coverage", {0.9}, g);
  test::set_double_attribute(p, "interval_log_lo", std::vector<double>(24, -0.2), g);
  test::set_double_attribute(p, "interval_log_hi", std::vector<double>(24, 0.3), g);
  test::set_double_attribute(p, "interval_distance_limit", {1e6}, g);
  test::set_string_attribute(p, "interval_scale", "field_radius_disagreement", g);
  test::set_double_attribute(p, "interval_scale_floor", {0.05}, g);
  const auto h = read_kpi_head(p, g);
  REQUIRE(h);
  CHECK(h->interval.scale == "field_radius_disagreement");
  const KpiHeadEstimator e(*h);
  std::istringstream cases(*h5::File::open_read(p).string_attribute("expected", "cases"));
  std::string rel;
  std::getline(cases, rel, ',');
  const ReservoirCase c = read_case(kData + "/../../" + rel);
  const auto extra = field_plume_radius_features(c, flow_field(rel, "SG"), 0.01, 1.0);
  const auto est = e.estimate_with_interval(c, extra);
  REQUIRE(est);
  // The scale from its definition: the floor + the RMS of log(head / network) over the times.
  double s = 0;
  for (std::size_t t = 0; t < 24; ++t) s += std::pow(std::log(est->value[t]) - extra[t], 2);
  const double scale = 0.05 + std::sqrt(s / 24);
  CHECK(scale > 0.05);
  for (std::size_t t = 0; t < 24; ++t) {
    CHECK(est->lo[t] == Approx(est->value[t] * std::exp(-0.2 * scale)).epsilon(1e-12));
    CHECK(est->hi[t] == Approx(est->value[t] * std::exp(0.3 * scale)).epsilon(1e-12));
  }
  // Refused: an unknown scale, a floor out of range, a scale a head cannot compute.
  test::set_double_attribute(p, "interval_scale_floor", {-1}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_scale_floor"));
  test::set_string_attribute(p, "interval_scale", "spread", g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_scale"));
  const std::string m = with_interval("iv_scaled_max_dp.h5", 1.0, 2.0);
  test::set_string_attribute(m, "interval_scale", "field_radius_disagreement",
                             HeadRegistry::kMaxDpGroup);
  test::set_double_attribute(m, "interval_scale_floor", {0.05}, HeadRegistry::kMaxDpGroup);
  CHECK_THROWS_WITH(read_kpi_head(m, HeadRegistry::kMaxDpGroup),
                    Catch::Contains("@interval_scale") && Catch::Contains("reads plume radii"));
  std::remove(p.c_str());
  std::remove(m.c_str());
}

TEST_CASE(
    "a plume head's interval scaled per report time and by the joint distance from the training "
    "data equals python/ufno/heads/intervals.py's (tests/data/plume_radius_interval_small.h5)",
    "[kpi_heads]") {
  const std::string fixture = kData + "/plume_radius_interval_small.h5";
  const std::string g = HeadRegistry::kPlumeRadiusGroup;
  const auto h = read_kpi_head(fixture, g);
  REQUIRE(h);
  CHECK(h->interval.scale_window == 2);
  CHECK(h->interval.joint_exponent == 1.3);
  CHECK(h->interval.joint_reference == 10.0);
  REQUIRE(h->interval.profile);
  const KpiHeadEstimator e(*h);
  auto f = h5::File::open_read(fixture);
  const auto feats = f.read_numeric("expected/features");
  const auto want_lo = f.read_numeric("expected/lo"), want_hi = f.read_numeric("expected/hi");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    const std::vector<double> extra(feats.values.begin() + n * 56 + 32,
                                    feats.values.begin() + n * 56 + 56);
    const auto est = e.estimate_with_interval(c, extra);
    REQUIRE(est);
    // The log bounds agree as closely as the joint distances do (tests/test_training_profile.cpp).
    for (std::size_t t = 0; t < 24; ++t) {
      const double v = est->value[t];
      CHECK(std::log(est->lo[t] / v) ==
            Approx(std::log(want_lo.values[n * 24 + t] / v)).epsilon(1e-3));
      CHECK(std::log(est->hi[t] / v) ==
            Approx(std::log(want_hi.values[n * 24 + t] / v)).epsilon(1e-3));
    }
  }
  CHECK(n == 3);
}

TEST_CASE("a malformed interval window or joint-distance factor is refused naming the attribute",
          "[kpi_heads]") {
  const std::string g = HeadRegistry::kPlumeRadiusGroup;
  const std::string p =
      test::copy_fixture(kData + "/plume_radius_interval_small.h5", "iv_joint_bad.h5");
  test::set_double_attribute(p, "interval_scale_window", {1.5}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_scale_window"));
  test::set_double_attribute(p, "interval_scale_window", {-1}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_scale_window"));
  test::set_double_attribute(p, "interval_scale_window", {2}, g);
  test::set_double_attribute(p, "interval_joint_exponent", {-0.5}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_joint_exponent"));
  test::set_double_attribute(p, "interval_joint_exponent", {1.3}, g);
  test::set_double_attribute(p, "interval_joint_reference", {0}, g);
  CHECK_THROWS_WITH(read_kpi_head(p, g), Catch::Contains(g + "@interval_joint_reference"));
  std::remove(p.c_str());
  // A window without a scale, a joint exponent in a model file without a training profile.
  const std::string m = with_interval("iv_joint_max_dp.h5", 1.0, 2.0);
  const std::string dp = HeadRegistry::kMaxDpGroup;
  test::set_double_attribute(m, "interval_scale_window", {2}, dp);
  CHECK_THROWS_WITH(read_kpi_head(m, dp), Catch::Contains(dp + "@interval_scale_window"));
  const std::string j = with_interval("iv_joint_max_dp2.h5", 1.0, 2.0);
  test::set_double_attribute(j, "interval_joint_exponent", {1.0}, dp);
  test::set_double_attribute(j, "interval_joint_reference", {3.0}, dp);
  CHECK_THROWS_WITH(read_kpi_head(j, dp), Catch::Contains(dp + "@interval_joint_exponent") &&
                                              Catch::Contains("training profile"));
  std::remove(m.c_str());
  std::remove(j.c_str());
}

TEST_CASE(
    "a case beyond the models' training data: named, its intervals widened and flagged "
    "(screening/Evaluate.cpp)",
    "[kpi_heads]") {
  const ReservoirCase c = fixture_case();
  std::istringstream cases(*h5::File::open_read(kFixture).string_attribute("expected", "cases"));
  std::string rel;
  std::getline(cases, rel, ',');
  CaseFields f{flow_field(rel, "SG"), flow_dp(rel), {}};
  f.times_days = paper_times_days(int(f.sg.size() / (std::size_t(c.nx) * c.ny)));
  // The shipped dP model: a maximum-dP head with an interval, and a training profile (replaced).
  HeadRegistry r = HeadRegistry::from_model_files({kData + "/../../models/dp_ufno.h5"}, false);
  REQUIRE(r.profiles.size() == 1);
  const auto stats = training_statistics(c);
  // A profile whose ranges hold the case exactly, with an identity joint model centred on it.
  TrainingProfile prof;
  prof.path = "profile.h5";
  prof.names = training_statistic_names();
  const std::size_t s = stats.size();
  for (double v : stats) prof.quantiles.push_back({v - 2, v - 1, v, v + 1, v + 2});
  prof.mean = stats;
  prof.inverse_covariance.assign(s * s, 0.0);
  for (std::size_t i = 0; i < s; ++i) prof.inverse_covariance[i * s + i] = 1.0;
  prof.distance_quantiles = {0.0, 0.1, 1.0, 2.0, 3.0};
  r.profiles = {prof};
  KpiOptions o;
  const Kpis inside = evaluate(c, f, r, o);
  CHECK(inside.beyond_training.empty());
  CHECK(inside.training_percentile == 0);
  REQUIRE(inside.max_dp_bounds.trust == IntervalTrust::Calibrated);
  // The same profile with the rate's range moved below the case's rate.
  r.profiles[0].quantiles[0] = {stats[0] - 4, stats[0] - 3.5, stats[0] - 3, stats[0] - 2.5,
                                stats[0] - 2};
  const Kpis beyond = evaluate(c, f, r, o);
  CHECK(beyond.beyond_training == std::vector<std::string>{"INJ_RATE"});
  CHECK(beyond.max_dp_bounds.trust == IntervalTrust::Far);
  const double v = beyond.max_dp_bar;
  CHECK(beyond.max_dp_bounds.lo == Approx(v * std::pow(inside.max_dp_bounds.lo / v, 2)));
  CHECK(beyond.max_dp_bounds.hi == Approx(v * std::pow(inside.max_dp_bounds.hi / v, 2)));
  const auto j = kpi_json(beyond, o);
  CHECK(j["beyond_training"][0] == "INJ_RATE");
  CHECK(j["training_note"].get<std::string>().find("INJ_RATE") != std::string::npos);
}
