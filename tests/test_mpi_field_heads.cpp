// runtime/Heads.hpp: the Predictor applies the field stage it is handed. A HeadRegistry's field
// stage (screening/HeadRegistry.hpp, the registry's own dP field-scale head and peak match) gives
// the field the Predictor gives with the model file's heads read by itself; an empty field stage
// gives the network's field. runtime/DpPeakMatch.hpp: the written field's peak is the maximum-dP
// head's estimate, where and when the field had it, and a pass without the whole case keeps the
// field-scale head's field. On every rank count: the heads read the whole grid from the ranks'
// blocks.
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "io/CaseEncoding.hpp"
#include "runtime/DpFieldScale.hpp"
#include "runtime/DpPeakMatch.hpp"
#include "runtime/MaxDpHead.hpp"
#include "runtime/Predictor.hpp"
#include "screening/HeadRegistry.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

const std::string kRoot = std::string(UFNO_TEST_DATA_DIR) + "/../..";
const std::string kDpModel = kRoot + "/models/dp_ufno.h5";
const std::string kCase = kRoot + "/examples/opm/s1_i000087/case.h5";

std::vector<float> dp_field(const std::optional<Heads>& field_heads, bool whole_case = true) {
  Predictor p({kDpModel}, MPI_COMM_WORLD, "auto", dist::ExchangeAlgorithm::Alltoallv, {},
              field_heads);
  CHECK(p.notes().empty());
  Prediction out;
  if (whole_case) {
    out = p.run_case_file(kCase, nullptr);
  } else {  // the same input without its case: as from an encoded tensor
    const auto c = p.prepare_case_file(kCase);
    out = p.run(c.input, c.times_days);
  }
  REQUIRE(out.fields.size() == 1);
  CHECK(out.fields[0].name == "dP");
  return out.fields[0].values;
}

// The largest relative L2 difference over the ranks' blocks.
double worst_rel_l2(const std::vector<float>& got, const std::vector<float>& ref) {
  double e = test::compare(got, ref).rel_l2;
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return e;
}

}  // namespace

TEST_CASE("the Predictor applies the field stage it is handed", "[heads]") {
  const HeadRegistry registry = HeadRegistry::from_model_files({kDpModel});
  const Heads field = registry.field_stage();
  REQUIRE(field.all().size() == 2);  // the field-scale head, then the peak match
  for (const auto& h : field.all()) CHECK(h->stage() == HeadStage::Field);
  // The registry's own head object, not a copy read again.
  CHECK(field.all()[0].get() == registry.find("dp_field_scale_head"));
  CHECK(dynamic_cast<const DpPeakMatch*>(field.all()[1].get()));
  // The KPI stage's maximum-dP head is still found by its group.
  REQUIRE(registry.estimator(HeadRegistry::kMaxDpGroup));

  const auto own = dp_field(std::nullopt);  // the Predictor reads the model file's head
  const auto handed = dp_field(field);
  const auto none = dp_field(Heads{});
  CHECK(handed == own);
  CHECK(worst_rel_l2(none, own) > 1e-3);  // the head changes the field, or this test is empty
  // Handed all the registry's heads, the Predictor applies the field stage's alone.
  Heads all;
  for (const auto& h : registry.heads()) all.add(h);
  // The field-scale head and the peak match, the maximum-dP and dP-envelope heads.
  REQUIRE(all.all().size() == 4);
  CHECK(dp_field(all) == own);
}

namespace {

// The largest value over the formation of a field (1, T, lx, ly) of this rank's block, over the
// ranks, with where it is (t, x, y in the model grid; the lowest index among equal maxima).
struct Peak {
  double value = -HUGE_VAL;
  long at = -1;
};
Peak peak_of(const std::vector<float>& dp, const Predictor& p, const ReservoirCase& c) {
  const CaseBlock b = p.block();
  const int X = p.spec().grid[0], Y = p.spec().grid[1], T = p.spec().grid[2];
  Peak best;
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < b.lx; ++i)
      for (int j = 0; j < b.ly; ++j) {
        if (!c.active(b.x0 + i, b.y0 + j)) continue;
        const double v = dp[(std::size_t(t) * b.lx + i) * b.ly + j];
        const long at = (long(t) * X + b.x0 + i) * Y + b.y0 + j;
        if (v > best.value || (v == best.value && at < best.at)) best = {v, at};
      }
  double top = best.value;
  MPI_Allreduce(MPI_IN_PLACE, &top, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long at = best.value == top ? best.at : std::numeric_limits<long>::max();
  MPI_Allreduce(MPI_IN_PLACE, &at, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  return {top, at};
}

}  // namespace

TEST_CASE("the dP field's peak is the maximum-dP head's estimate, where the field had it",
          "[heads][peak]") {
  const ReservoirCase c = read_case(kCase);
  const auto e = KpiHeadEstimator::from_model_file(kDpModel, DpPeakMatch::kGroup);
  REQUIRE(e);
  const auto h = max_dp_head_estimate(*e, c, {}, paper_times_days(24));
  REQUIRE(h);
  const double target = h->value.front();

  std::string note;
  auto scale = DpFieldScale::from_model_file(kDpModel, note);
  REQUIRE(scale);
  Heads scale_only;
  scale_only.add(std::make_shared<DpFieldScale>(std::move(*scale)));

  Predictor p({kDpModel}, MPI_COMM_WORLD);
  const auto matched = dp_field(std::nullopt);
  const auto scaled = dp_field(scale_only);
  const Peak after = peak_of(matched, p, c), before = peak_of(scaled, p, c);
  CHECK(after.value == Approx(target).epsilon(1e-6));
  CHECK(std::abs(before.value / target - 1) > 0.05);  // the match moves the peak, or this is empty
  CHECK(after.at == before.at);                       // the map keeps the peak's place and time
  // Without the whole case (an encoded tensor) the field is the field-scale head's.
  CHECK(dp_field(std::nullopt, false) == scaled);
}

TEST_CASE("the peak match's map at hand-computed points", "[heads][peak]") {
  // Raised from 10 to 15 bar: a = 0.5, p = 16.
  CHECK(DpPeakMatch::exponent(10, 15) == 16);
  CHECK(DpPeakMatch::matched(10.f, 10, 15) == Approx(15));
  CHECK(DpPeakMatch::matched(5.f, 10, 15) == Approx(5 * (1 + 0.5 * std::pow(0.5, 16))));
  CHECK(DpPeakMatch::matched(0.f, 10, 15) == 0);
  CHECK(DpPeakMatch::matched(-1.f, 10, 15) == -1);  // below zero: untouched
  // Brought down from 10 to 5 bar: a = -0.5, p lowered to -1/a - 1 = 1: f = dp (1 - dp / 20).
  CHECK(DpPeakMatch::exponent(10, 5) == Approx(1));
  CHECK(DpPeakMatch::matched(10.f, 10, 5) == Approx(5));
  CHECK(DpPeakMatch::matched(5.f, 10, 5) == Approx(3.75));
  // From 10 to 9.5: a = -0.05, -1/a - 1 = 19 > 16, so p stays 16.
  CHECK(DpPeakMatch::exponent(10, 9.5) == 16);
  // Increasing on [0, M] with its largest value H at M, for peaks moved by factors 0.1 to 4.
  for (double target : {1.0, 3.0, 6.0, 9.0, 9.9, 10.0, 12.0, 20.0, 40.0}) {
    float prev = -1;
    for (int k = 0; k <= 1000; ++k) {
      const float v = DpPeakMatch::matched(float(10.0 * k / 1000), 10, target);
      CHECK(v >= prev);
      prev = v;
    }
    CHECK(prev == Approx(target));
  }
}
