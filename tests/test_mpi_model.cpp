// The whole U-FNO and FNO on 1, 2, 3 and 4 ranks against the single-process test reference
// (tests/reference/Net3d) on every 2-D process grid, on both execution plans, within the derived
// float32 reordering bound (support/Float32Bound.hpp; about 1e-5 here); the U-Net's coarsest
// level (3 x 4 x 2 cells here) leaves some ranks with uneven or empty blocks.
#include <catch2/catch.hpp>

#include "io/ModelFile.hpp"
#include "operators/DistributedNet3d.hpp"
#include "reference/Net3d.hpp"
#include "support/Float32Bound.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

void check_model(const std::string& model_name, const std::string& io_name) {
  ModelFile mf(test::data_path(model_name));
  reference::Net3d single(mf.spec(), mf);
  const auto io = test::read_all(test::data_path(io_name));
  const auto& in = io.arrays.at("input");
  Tensor x = test::to_device(in.data, {int(in.shape[0]), int(in.shape[1]), int(in.shape[2]),
                                       int(in.shape[3]), int(in.shape[4])});
  Tensor ref = single.forward(x);
  const double bound = test::float32_reordering_bound(mf.spec());
  for (PlanKind plan : {PlanKind::Streaming, PlanKind::WholeTensor}) {
    ScopedExecutionPlan use(plan);
    for (auto parts : test::grids_2d(test::mpi_size())) {
      dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
      DistributedNet3d net(mf.spec(), mf, grid);
      const auto box = net.input_layout().box(grid.rank());
      Tensor y = net.forward(test::block_of(x, box, /*channel_last=*/true));
      const double err = test::global_rel_l2(y, ref, box);
      INFO(model_name << " " << plan_name(plan) << " plan, grid " << grid.str() << " rel L2 " << err
                      << " (bound " << bound << ")");
      CHECK(err <= bound);
    }
  }
}

}  // namespace

TEST_CASE("distributed U-FNO equals the single-process U-FNO", "[mpi][model]") {
  check_model("ufno_small.h5", "ufno_small_io.h5");
}

TEST_CASE("distributed FNO equals the single-process FNO", "[mpi][model]") {
  check_model("fno_small.h5", "fno_small_io.h5");
}
