// runtime/Heads.hpp: the Predictor applies the field stage it is handed. A HeadRegistry's field
// stage (screening/HeadRegistry.hpp, the registry's own dP field-scale head) gives the field the
// Predictor gives with the model file's head read by itself; an empty field stage gives the
// network's field. On every rank count: the head reads the whole grid from the ranks' blocks.
#include <mpi.h>

#include <catch2/catch.hpp>
#include <string>

#include "runtime/Predictor.hpp"
#include "screening/HeadRegistry.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

const std::string kRoot = std::string(UFNO_TEST_DATA_DIR) + "/../..";
const std::string kDpModel = kRoot + "/models/dp_ufno.h5";
const std::string kCase = kRoot + "/examples/opm/s1_i000087/case.h5";

std::vector<float> dp_field(const std::optional<Heads>& field_heads) {
  Predictor p({kDpModel}, MPI_COMM_WORLD, "auto", dist::ExchangeAlgorithm::Alltoallv, {},
              field_heads);
  CHECK(p.notes().empty());
  const Prediction out = p.run_case_file(kCase, nullptr);
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
  REQUIRE(field.all().size() == 1);
  CHECK(field.all()[0]->stage() == HeadStage::Field);
  // The registry's own head object, not a copy read again.
  CHECK(field.all()[0].get() == registry.find("dp_field_scale_head"));

  const auto own = dp_field(std::nullopt);  // the Predictor reads the model file's head
  const auto handed = dp_field(field);
  const auto none = dp_field(Heads{});
  CHECK(handed == own);
  CHECK(worst_rel_l2(none, own) > 1e-3);  // the head changes the field, or this test is empty
  // Handed all the registry's heads, the Predictor applies the field stage's alone.
  Heads all;
  for (const auto& h : registry.heads()) all.add(h);
  REQUIRE(all.all().size() == 3);  // the field-scale, maximum-dP and dP-envelope heads
  CHECK(dp_field(all) == own);
}
