// The whole 4-D FNO (DistributedFno4d) against PyTorch outputs of python/ufno/models/fno4d.py saved
// as fixtures, with and without normalisers (relative L2 <= 1e-5), on every process grid over one,
// two and three axes that the rank count allows (odd extents: uneven blocks and, at 3 and 4
// ranks, empty ones); and the model file's refusals.
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "io/Fno4dModelFile.hpp"
#include "io/ModelAttributes.hpp"
#include "operators/DistributedFno4d.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using namespace ufno::dist;

namespace {

// This rank's block `b` of a global channels-last (B, A1, A2, A3, T, C) array.
GridView<4> input_block(const HostArray& in, const Box4& b) {
  const int B = in.shape[0], C = in.shape[5];
  auto v = make_grid_view<4>("in", B, b.extent(0), {b.extent(1), b.extent(2), b.extent(3), C});
  auto h = Kokkos::create_mirror_view(v);
  std::size_t f = 0;
  for (int n = 0; n < B; ++n)
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int k = b.lo[2]; k < b.hi[2]; ++k)
          for (int t = b.lo[3]; t < b.hi[3]; ++t)
            for (int c = 0; c < C; ++c)
              h.data()[f++] = in.data[(
                  ((((std::size_t(n) * in.shape[1] + i) * in.shape[2] + j) * in.shape[3] + k) *
                       in.shape[4] +
                   t) *
                      C +
                  c)];
  Kokkos::deep_copy(v, h);
  return v;
}

// Squared error and squared reference of this rank's block of a (B, A1, A2, A3, T) output.
std::array<double, 2> block_error(const GridView<4>& y, const HostArray& ref, const Box4& b) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  std::array<double, 2> e{0, 0};
  std::size_t f = 0;
  for (std::size_t n = 0; n < ref.shape[0]; ++n)
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int k = b.lo[2]; k < b.hi[2]; ++k)
          for (int t = b.lo[3]; t < b.hi[3]; ++t) {
            const double want =
                ref.data[(((n * ref.shape[1] + i) * ref.shape[2] + j) * ref.shape[3] + k) *
                             ref.shape[4] +
                         t];
            const double d = h.data()[f++] - want;
            e[0] += d * d;
            e[1] += want * want;
          }
  return e;
}

void check_model(const std::string& model, const std::string& io_name, bool normalised) {
  Fno4dModelFile mf(test::data_path(model));
  CHECK(mf.spec().input_normalizer == normalised);
  CHECK(mf.spec().output_normalizer == normalised);
  auto io = test::read_all(test::data_path(io_name));
  for (PlanKind plan : {PlanKind::Streaming, PlanKind::WholeTensor})
    for (auto parts : test::grids_3d(test::mpi_size())) {
      ScopedExecutionPlan use(plan);
      ProcessGrid grid(MPI_COMM_WORLD, parts);
      for (auto alg : {ExchangeAlgorithm::Alltoallv, ExchangeAlgorithm::PointToPoint}) {
        // The exchange algorithms do not depend on the plan: the whole-tensor plan is checked
        // with one, with the weights read per layer as ufno_predict reads them (halving the time
        // it adds, most of it under the sanitizers; test_execution_plan holds them all).
        if (plan == PlanKind::WholeTensor && alg == ExchangeAlgorithm::Alltoallv) continue;
        // Weights held throughout with one algorithm, read per layer with the other.
        DistributedFno4d net(
            mf.spec(), mf, grid, alg,
            alg == ExchangeAlgorithm::Alltoallv ? WeightResidency::All : WeightResidency::PerLayer);
        const Box4 b = net.layout().box(grid.rank());
        const auto x = input_block(io.arrays.at("input"), b);
        for (bool raw : {true, false}) {
          const auto y = raw ? net.forward_raw(x) : net.forward(x);
          const auto e = block_error(y, io.arrays.at(raw ? "output_raw" : "output"), b);
          double sum[2];
          MPI_Allreduce(e.data(), sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
          const double rel = std::sqrt(sum[0] / sum[1]);
          INFO(model << " on grid " << grid.str() << ", " << plan_name(plan) << " plan"
                     << (raw ? " raw" : " normalised") << ": rel L2 " << rel);
          if (grid.rank() == 0 &&
              (alg == ExchangeAlgorithm::Alltoallv || plan == PlanKind::WholeTensor))
            std::printf("%s on %s, %s plan%s: rel L2 %.3g\n", model.c_str(), grid.str().c_str(),
                        plan_name(plan), raw ? " (raw)" : "", rel);
          CHECK(rel <= 1e-5);
        }
      }
    }
}

}  // namespace

TEST_CASE("the 4-D FNO equals PyTorch's FNO4d on every process grid", "[mpi][fno4d]") {
  check_model("fno4d_small.h5", "fno4d_small_io.h5", false);
  check_model("fno4d_norm_small.h5", "fno4d_norm_small_io.h5", true);
}

TEST_CASE("a 4-D FNO model file is told apart from a U-FNO's", "[mpi][fno4d]") {
  CHECK(model_architecture(test::data_path("fno4d_small.h5")) == "FNO4D");
  CHECK(model_architecture(test::data_path("ufno_small.h5")) == "UFNO");
  CHECK_THROWS_WITH(Fno4dModelFile(test::data_path("ufno_small.h5")),
                    Catch::Contains("architecture") && Catch::Contains("not a 4-D FNO"));
}
