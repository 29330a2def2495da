// The training data's profile (io/TrainingProfileFile.hpp) and a case's place against it
// (runtime/TrainingStatistics.hpp, runtime/TrainingDistance.hpp): the statistics and joint
// distances of the shipped examples against python/ufno/data/training_profile.py's
// (tests/data/training_profile_small.h5, python/ufno/conversion/fixtures.py), a case summed in
// two blocks against the whole, the deviation rules at hand-made points, the shipped models'
// profiles, and malformed profiles refused naming the attribute.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "io/Hdf5File.hpp"
#include "io/TrainingProfileFile.hpp"
#include "runtime/TrainingDistance.hpp"
#include "runtime/TrainingStatistics.hpp"
#include "support/FileTamper.hpp"

using namespace ufno;

namespace {

const std::string kData = UFNO_TEST_DATA_DIR;
const std::string kFixture = kData + "/training_profile_small.h5";

std::vector<std::string> fixture_cases() {
  std::istringstream in(*h5::File::open_read(kFixture).string_attribute("expected", "cases"));
  std::vector<std::string> out;
  for (std::string rel; std::getline(in, rel, ',');) out.push_back(kData + "/../../" + rel);
  return out;
}

// A profile of one statistic per name with the given quantiles and an identity covariance.
TrainingProfile hand_made_profile(std::array<double, 5> q) {
  TrainingProfile p;
  p.path = "hand_made.h5";
  p.names = training_statistic_names();
  const std::size_t s = p.names.size();
  p.quantiles.assign(s, q);
  p.mean.assign(s, q[2]);
  p.inverse_covariance.assign(s * s, 0.0);
  for (std::size_t i = 0; i < s; ++i) p.inverse_covariance[i * s + i] = 1.0;
  p.distance_quantiles = {0.5, 1.0, 2.0, 3.0, 4.0};
  return p;
}

}  // namespace

TEST_CASE("the examples' statistics and joint distances equal python's", "[training_profile]") {
  const auto p = read_training_profile(kFixture);
  REQUIRE(p);
  check_profile_statistics(*p);
  CHECK(p->cases == 400);
  auto f = h5::File::open_read(kFixture);
  const auto want = f.read_numeric("expected/statistics");
  const auto dev = f.read_numeric("expected/deviations");
  const auto joint = f.read_numeric("expected/joint_distance");
  const std::size_t s = p->names.size();
  const auto cases = fixture_cases();
  REQUIRE(cases.size() == 3);
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const auto stats = training_statistics(read_case(cases[n]));
    REQUIRE(stats.size() == s);
    for (std::size_t i = 0; i < s; ++i) {
      INFO(cases[n] << " " << p->names[i]);
      // python reads the float32 channels of the encoded input; this the case's doubles
      CHECK(stats[i] == Approx(want.values[n * s + i]).epsilon(1e-5).margin(1e-6));
    }
    const TrainingDistance d = training_distance(*p, stats);
    CHECK(d.joint == Approx(joint.values[n]).epsilon(1e-4));
    for (std::size_t i = 0; i < s; ++i) {
      INFO(cases[n] << " " << p->names[i]);
      int got = 0;
      for (const auto& x : d.deviations)
        if (x.name == p->names[i]) got = x.beyond ? 2 : 1;
      CHECK(got == int(dev.values[n * s + i]));
    }
  }
}

TEST_CASE("a case summed in blocks has the statistics of the whole", "[training_profile]") {
  const ReservoirCase whole = read_case(fixture_cases()[1]);
  const auto want = training_statistics(whole);
  // Two blocks split at a layer and a radial cell, as two ranks of a distributed run hold them.
  FieldMoments m(whole.nx);
  const int xs = whole.nx / 2, ys = whole.ny / 3;
  for (auto [x0, lx, y0, ly] :
       {std::array<int, 4>{0, xs, 0, whole.ny}, std::array<int, 4>{xs, whole.nx - xs, 0, ys},
        std::array<int, 4>{xs, whole.nx - xs, ys, whole.ny - ys}}) {
    ReservoirCase b = whole;
    b.x0 = x0, b.lx = lx, b.y0 = y0, b.ly = ly;
    b.permx.clear(), b.permz.clear(), b.poro.clear();
    for (int x = x0; x < x0 + lx; ++x)
      for (int y = y0; y < y0 + ly; ++y) {
        const std::size_t k = std::size_t(x) * whole.ny + y;
        b.permx.push_back(whole.permx[k]);
        b.permz.push_back(whole.permz[k]);
        b.poro.push_back(whole.poro[k]);
      }
    m.add(b);
  }
  const auto got = m.finish(whole);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-12));
}

TEST_CASE("deviations: beyond the range, in its outer 1 %, inside; the joint distance",
          "[training_profile]") {
  // Range [0, 100], 1 % tolerance: beyond below -1 or above 101; the edge below 1 or above 99.
  const TrainingProfile p = hand_made_profile({0, 1, 50, 99, 100});
  std::vector<double> stats(p.names.size(), 50.0);
  stats[0] = 100.5;  // beyond the maximum by less than the tolerance: the edge
  stats[1] = 101.5;  // beyond
  stats[2] = 0.5;    // the edge
  stats[3] = -2;     // beyond
  const TrainingDistance d = training_distance(p, stats);
  REQUIRE(d.deviations.size() == 4);
  CHECK_FALSE(d.deviations[0].beyond);
  CHECK(d.deviations[1].beyond);
  CHECK_FALSE(d.deviations[2].beyond);
  CHECK(d.deviations[3].beyond);
  CHECK(d.deviations[1].name == p.names[1]);
  // Identity inverse covariance: the Euclidean distance from the means (50).
  const double joint = std::sqrt(50.5 * 50.5 + 51.5 * 51.5 + 49.5 * 49.5 + 52.0 * 52.0);
  CHECK(d.joint == Approx(joint));
  CHECK(d.joint_beyond);
  CHECK(d.joint_percentile == 100);
  CHECK(d.beyond());
  const auto names = d.beyond_names();
  CHECK(names == std::vector<std::string>{p.names[1], p.names[3], "joint"});
  const auto w = d.warnings("m.h5");
  REQUIRE(w.size() == 5);
  CHECK(w[1] == p.names[1] + " = 101.5 degC is outside the training data's range [0, 100] (m.h5)");
  CHECK(w[2] ==
        p.names[2] + " = 0.5 bar is in the outer 1 % of the training data's range [0, 100] (m.h5)");
  // A case at the means: nothing said, the joint distance 0, nearer than every training case.
  const TrainingDistance inside = training_distance(p, std::vector<double>(p.names.size(), 50.0));
  CHECK(inside.deviations.empty());
  CHECK_FALSE(inside.beyond());
  CHECK(inside.joint_percentile == 0);
  // Between the stored quantiles the percentile is interpolated: distance 1.5 lies halfway
  // between the 0.5 % (1.0) and 50 % (2.0) quantiles.
  std::vector<double> half(p.names.size(), 50.0);
  half[0] = 51.5;
  CHECK(training_distance(p, half).joint_percentile == Approx(25.25));
}

TEST_CASE("the shipped models carry a profile of their training data", "[training_profile]") {
  for (const char* m : {"sg_ufno.h5", "dp_ufno.h5"}) {
    const auto p = read_training_profile(kData + "/../../models/" + m);
    REQUIRE(p);
    check_profile_statistics(*p);
    CHECK(p->cases == 1359);
    CHECK(p->data.find("training cases") != std::string::npos);
    // The examples were drawn by the training generator: no statistic beyond its range.
    for (const auto& c : fixture_cases()) {
      const TrainingDistance d = training_distance(*p, training_statistics(read_case(c)));
      INFO(c);
      CHECK_FALSE(d.beyond());
    }
  }
  // A model file without one has none.
  CHECK_FALSE(read_training_profile(kData + "/fno_small.h5"));
}

TEST_CASE("a malformed profile is refused naming its attribute or dataset", "[training_profile]") {
  const std::string g = "training_profile";
  auto refused = [&](const std::string& what, auto tamper) {
    const std::string p = test::copy_fixture(kFixture, "tp_bad.h5");
    tamper(p);
    CHECK_THROWS_WITH(read_training_profile(p), Catch::Contains(what));
    std::remove(p.c_str());
  };
  refused(g + "@levels", [&](const std::string& p) {
    test::set_double_attribute(p, "levels", {0, 0.01, 0.5, 0.99, 1}, g);
  });
  refused(g + "@cases",
          [&](const std::string& p) { test::set_double_attribute(p, "cases", {1}, g); });
  refused(g + "/quantiles",
          [&](const std::string& p) { test::poison_first_value(p, g + "/quantiles", NAN); });
  refused(g + "/mean", [&](const std::string& p) { test::delete_dataset(p, g + "/mean"); });
  // Another build's statistics.
  const std::string p = test::copy_fixture(kFixture, "tp_names.h5");
  std::string names;
  for (const auto& n : training_statistic_names()) names += (names.empty() ? "" : ",") + n;
  test::set_string_attribute(p, "statistics", names.substr(0, names.rfind(',')) + ",other", g);
  const auto prof = read_training_profile(p);
  REQUIRE(prof);
  CHECK_THROWS_WITH(check_profile_statistics(*prof), Catch::Contains(g + "@statistics"));
  std::remove(p.c_str());
}
