// The whole U-FNO and FNO against PyTorch outputs saved as fixtures
// (python/ufno/conversion/fixtures.py): relative L2 <= 1e-5 and max abs error <= 1e-5 x max
// |reference|, in float32. The model that runs (DistributedNet3d on a 1 x 1 process grid, as
// ufno_predict on one rank) on both execution plans (the CPU's streaming one, the GPU's
// whole-tensor one, run here on the host), and the plain test reference (tests/reference/Net3d).
#include <catch2/catch.hpp>

#include <cstdio>

#include "io/ModelFile.hpp"
#include "operators/DistributedNet3d.hpp"
#include "reference/Net3d.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

template <class Model>
void check_model(Model& net, const std::string& model_name, const std::string& io_name) {
  auto io = test::read_all(test::data_path(io_name));
  const HostArray& in = io.arrays.at("input");
  Tensor x = test::to_device(in.data, {int(in.shape[0]), int(in.shape[1]), int(in.shape[2]),
                                       int(in.shape[3]), int(in.shape[4])});
  for (const bool raw : {true, false}) {
    Tensor y = raw ? net.forward_raw(x) : net.forward(x);
    const HostArray& ref = io.arrays.at(raw ? "output_raw" : "output");
    REQUIRE(y.span() == ref.data.size());
    auto e = test::compare(test::to_host(y), ref.data);
    std::printf("%s %s: rel L2 %.3g, max abs %.3g (max |ref| %.3g)\n", model_name.c_str(),
                raw ? "raw" : "de-scaled", e.rel_l2, e.max_abs, e.max_ref);
    CHECK(e.rel_l2 <= 1e-5);
    CHECK(e.max_abs <= 1e-5 * e.max_ref);
  }
}

void check_both(const std::string& model_name, const std::string& io_name,
                const std::string& arch) {
  ModelFile mf(test::data_path(model_name));
  REQUIRE(mf.spec().architecture == arch);
  dist::ProcessGrid grid(MPI_COMM_SELF, {1, 1, 1});
  for (PlanKind plan : {PlanKind::Streaming, PlanKind::WholeTensor}) {
    ScopedExecutionPlan use(plan);
    DistributedNet3d model(mf.spec(), mf, grid);
    check_model(model, model_name + " (the model, 1 x 1 grid, " + plan_name(plan) + " plan)",
                io_name);
  }
  reference::Net3d ref(mf.spec(), mf);
  check_model(ref, model_name + " (test reference)", io_name);
}

}  // namespace

TEST_CASE("U-FNO matches the PyTorch reference", "[model][parity]") {
  check_both("ufno_small.h5", "ufno_small_io.h5", "UFNO");
}

TEST_CASE("FNO matches the PyTorch reference", "[model][parity]") {
  check_both("fno_small.h5", "fno_small_io.h5", "FNO");
}
