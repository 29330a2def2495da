// apps/MaxDpHead.hpp: the maximum-dP head's features on a hand-made case against direct sums;
// the features and estimates on the shipped examples against python/max_dp_head.py's
// (tests/data/max_dp_head_small.h5, python/make_fixtures.py); files without a head, cases on
// another grid, and the KPI it replaces.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "apps/MaxDpHead.hpp"
#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"

using namespace ufno;

namespace {

const std::string kData = UFNO_TEST_DATA_DIR;
const std::string kFixture = kData + "/max_dp_head_small.h5";

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

TEST_CASE("the features of a hand-made case are the sums they name", "[max_dp_head]") {
  const auto f = max_dp_features(hand_made());
  REQUIRE(f.size() == max_dp_feature_names().size());
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

TEST_CASE("features and estimates equal python/max_dp_head.py's on the shipped examples",
          "[max_dp_head]") {
  const auto h = read_max_dp_head(kFixture);  // a head alone: no network to check its grid
  REQUIRE(h);
  const std::optional<MaxDpEstimator> e(MaxDpEstimator{*h});
  CHECK(e->head().members.size() == 2);
  auto f = h5::File::open_read(kFixture);
  const auto feats = f.read_numeric("expected/features");
  const auto want = f.read_numeric("expected/estimate_bar");
  std::istringstream cases(*f.string_attribute("expected", "cases"));
  int n = 0;
  for (std::string rel; std::getline(cases, rel, ','); ++n) {
    const ReservoirCase c = read_case(kData + "/../../" + rel);
    const auto mine = max_dp_features(c);
    REQUIRE(mine.size() == feats.shape[1]);
    double worst = 0;
    for (std::size_t k = 0; k < mine.size(); ++k)
      worst = std::max(worst, std::abs(mine[k] - feats.values[n * mine.size() + k]) /
                                  std::max(1.0, std::abs(feats.values[n * mine.size() + k])));
    CHECK(worst < 1e-12);
    const auto got = e->estimate_bar(c);
    REQUIRE(got);  // the examples are inside the fixture head's ranges
    CHECK(*got == Approx(want.values[n]).epsilon(1e-12));
  }
  CHECK(n == 3);
}

TEST_CASE("a model file without a head has none; a case on another grid is refused",
          "[max_dp_head]") {
  CHECK_FALSE(MaxDpEstimator::from_model_file(kData + "/ufno_small.h5"));
  const auto shipped = MaxDpEstimator::from_model_file(kData + "/../../models/dp_ufno.h5");
  REQUIRE(shipped);  // the shipped dP model carries one, on its own grid
  CHECK(shipped->head().grid == std::array<int, 2>{24, 48});
  const auto h = read_max_dp_head(kFixture);  // a head alone: no network to check its grid
  REQUIRE(h);
  const std::optional<MaxDpEstimator> e(MaxDpEstimator{*h});
  try {
    e->estimate_bar(hand_made());
    FAIL("a 3 x 16 case was accepted by a head trained on 24 x 48");
  } catch (const InputError& err) {
    CHECK(std::string(err.what()).find("hand_made.h5: grid:") == 0);
  }
  ReservoirCase narrow = hand_made();
  narrow.ny = narrow.ly = 10;  // fewer radial cells than the features read
  CHECK_THROWS_AS(max_dp_features(narrow), InputError);
}

TEST_CASE("the head replaces the KPI's value, not the field's maximum or its place",
          "[max_dp_head]") {
  const auto h = read_max_dp_head(kFixture);  // a head alone: no network to check its grid
  REQUIRE(h);
  const std::optional<MaxDpEstimator> e(MaxDpEstimator{*h});
  std::istringstream cases(*h5::File::open_read(kFixture).string_attribute("expected", "cases"));
  std::string rel;
  std::getline(cases, rel, ',');
  const ReservoirCase c = read_case(kData + "/../../" + rel);
  Kpis k;
  k.max_dp_bar = k.max_dp_field_bar = 3.0;
  k.max_dp_radius_m = 12.0;
  apply_max_dp_head(k, *e, c);
  CHECK(k.max_dp_bar == Approx(*e->estimate_bar(c)));
  CHECK(k.max_dp_bar != 3.0);
  CHECK(k.max_dp_from_head);
  CHECK(k.max_dp_field_bar == 3.0);
  CHECK(k.max_dp_radius_m == 12.0);
  // A case beyond the head's training ranges (a rate of 50 Mt/yr) keeps the field's value.
  ReservoirCase far = c;
  far.rate_mt_per_year = 50;
  CHECK_FALSE(e->estimate_bar(far));
  Kpis kf;
  kf.max_dp_bar = kf.max_dp_field_bar = 3.0;
  apply_max_dp_head(kf, *e, far);
  CHECK(kf.max_dp_bar == 3.0);
  CHECK_FALSE(kf.max_dp_from_head);
}
