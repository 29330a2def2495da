// The whole 4-D FNO (DistributedFno4d) against PyTorch outputs of python/ufno/models/fno4d.py saved
// as fixtures, with and without normalisers (relative L2 <= 1e-5), on every process grid over one,
// two and three axes that the rank count allows (odd extents: uneven blocks and, at 3 and 4
// ranks, empty ones); a published-order file (time first, per-time normalisers) as read and
// decoded; and the model file's refusals.
#include <mpi.h>

#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "io/Fno4dModelFile.hpp"
#include "io/ModelAttributes.hpp"
#include "operators/DistributedFno4d.hpp"
#include "support/FileTamper.hpp"
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

TEST_CASE("the 4-D FNO reads nothing of its padded block that it has not written", "[mpi][fno4d]") {
  // The lift sets only the interior's columns of the padded block and the first layer's update
  // reads nothing else; a warm pass gets its block from the workspace as the pass before left
  // it. After a pass over NaN input (every temporary NaN, the padded block's outside included),
  // a pass over the fixture's input must still give PyTorch's output, on both plans and every
  // process grid.
  Fno4dModelFile mf(test::data_path("fno4d_norm_small.h5"));
  auto io = test::read_all(test::data_path("fno4d_norm_small_io.h5"));
  for (PlanKind plan : {PlanKind::Streaming, PlanKind::WholeTensor})
    for (auto parts : test::grids_3d(test::mpi_size())) {
      ScopedExecutionPlan use(plan);
      ProcessGrid grid(MPI_COMM_WORLD, parts);
      DistributedFno4d net(mf.spec(), mf, grid);
      const Box4 b = net.layout().box(grid.rank());
      const auto x = input_block(io.arrays.at("input"), b);
      auto nan = make_grid_view<4>(
          "nan", x.extent(0), x.extent(1),
          {int(x.extent(2)), int(x.extent(3)), int(x.extent(4)), int(x.extent(5))}, false);
      Kokkos::deep_copy(nan, std::numeric_limits<float>::quiet_NaN());
      net.forward_raw(x);  // plans the workspace
      const auto poisoned =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), net.forward_raw(nan));
      const auto y = net.forward_raw(x);
      const auto e = block_error(y, io.arrays.at("output_raw"), b);
      double sum[2];
      MPI_Allreduce(e.data(), sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      const double rel = std::sqrt(sum[0] / sum[1]);
      INFO("grid " << grid.str() << ", " << plan_name(plan) << " plan: rel L2 " << rel);
      CHECK((poisoned.size() == 0 ||
             std::isnan(poisoned.data()[0])));  // the NaN pass did reach the output
      CHECK(rel <= 1e-5);
    }
}

TEST_CASE("a 4-D FNO model file is told apart from a U-FNO's", "[mpi][fno4d]") {
  CHECK(model_architecture(test::data_path("fno4d_small.h5")) == "FNO4D");
  CHECK(model_architecture(test::data_path("ufno_small.h5")) == "UFNO");
  CHECK_THROWS_WITH(Fno4dModelFile(test::data_path("ufno_small.h5")),
                    Catch::Contains("architecture") && Catch::Contains("not a 4-D FNO"));
}

TEST_CASE("a published-order model file: time first, per-time normalisers", "[mpi][fno4d]") {
  const std::string dir = test::data_path("nested/published/models/");
  const Fno4dModelFile dp(dir + "LGR1_dP.h5"), sg(dir + "LGR1_SG.h5"), sg2(dir + "LGR2_SG.h5");
  const Fno4dSpec& s = dp.spec();
  CHECK(s.axis_order == "TXYZ");
  CHECK(s.time_first());
  CHECK(s.time_axis() == 0);
  CHECK(s.grid == std::array<int, 4>{24, 4, 4, 4});
  CHECK((s.input_normalizer && s.input_per_time && s.output_normalizer && s.output_per_time));
  CHECK(dp.shape("output_normalizer.std") == std::vector<std::size_t>{24});
  // predict_full_sg.py: LGR1 SG encodes with LGR1 dP's input normaliser, decodes nothing.
  CHECK((sg.spec().input_normalizer && sg.spec().input_per_time));
  CHECK_FALSE(sg.spec().output_normalizer);
  CHECK(sg.get("input_normalizer.std").data == dp.get("input_normalizer.std").data);
  CHECK_FALSE((sg2.spec().input_normalizer || sg2.spec().output_normalizer));
  // The project's files record no order and pointwise normalisers.
  const Fno4dModelFile old(test::data_path("fno4d_norm_small.h5"));
  CHECK(old.spec().axis_order == "XYZT");
  CHECK(old.spec().time_axis() == 3);
  CHECK_FALSE((old.spec().input_per_time || old.spec().output_per_time));

  // The output normaliser decodes each report time t (the first axis) with its own mean and
  // std, no eps: forward = forward_raw x std[t] + mean[t] at every voxel of every rank's block.
  const auto mean = dp.get("output_normalizer.mean").data,
             sd = dp.get("output_normalizer.std").data;
  for (auto parts : test::grids_3d(test::mpi_size())) {
    ProcessGrid grid(MPI_COMM_WORLD, parts);
    DistributedFno4d net(s, dp, grid);
    const Box4 b = net.layout().box(grid.rank());
    auto x = make_grid_view<4>("in", 1, b.extent(0),
                               {b.extent(1), b.extent(2), b.extent(3), s.in_channels});
    auto h = Kokkos::create_mirror_view(x);
    for (std::size_t n = 0; n < h.size(); ++n) h.data()[n] = float(std::sin(0.37 * double(n)));
    Kokkos::deep_copy(x, h);
    auto raw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), net.forward_raw(x));
    auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), net.forward(x));
    const std::size_t per_t = std::size_t(b.extent(1)) * b.extent(2) * b.extent(3);
    // Against the block's largest value: the decode runs in float32, so a value near 0 (raw
    // close to -mean / std) carries the rounding of raw x std, not of itself.
    double worst = 0, scale = 1e-30;
    for (std::size_t n = 0; n < y.size(); ++n) {
      const int t = b.lo[0] + int(n / per_t);
      const double want = double(raw.data()[n]) * sd[t] + mean[t];
      worst = std::max(worst, std::abs(y.data()[n] - want));
      scale = std::max(scale, std::abs(want));
    }
    INFO("grid " << grid.str());
    CHECK(worst / scale < 1e-5);
  }

  // Refusals, each rank on its own copy.
  const std::string copy = (std::filesystem::temp_directory_path() /
                            ("ufno_fno4d_published." + std::to_string(::getpid()) + ".h5"))
                               .string();
  test::copy_fixture(dir + "LGR1_dP.h5", copy);
  test::set_string_attribute(copy, "axis_order", "ZYXT");
  CHECK_THROWS_WITH(Fno4dModelFile(copy), Catch::Contains("axis_order"));
  test::copy_fixture(dir + "LGR1_dP.h5", copy);
  test::set_string_attribute(copy, "output_normalizer_kind", "weekly");
  CHECK_THROWS_WITH(Fno4dModelFile(copy), Catch::Contains("output_normalizer_kind"));
  test::copy_fixture(dir + "LGR2_SG.h5", copy);
  test::set_string_attribute(copy, "input_normalizer_kind", "time");
  CHECK_THROWS_WITH(Fno4dModelFile(copy), Catch::Contains("has no input_normalizer"));
  // A per-time std of 0 (no eps to save the division) is refused as the network is built; so
  // is a per-time normaliser of the grid's shape.
  test::copy_fixture(dir + "LGR1_dP.h5", copy);
  test::poison_first_value(copy, "input_normalizer.std", 0.f);
  {
    const Fno4dModelFile bad(copy);
    ProcessGrid grid(MPI_COMM_WORLD, test::grids_3d(test::mpi_size()).front());
    CHECK_THROWS_WITH(DistributedFno4d(bad.spec(), bad, grid),
                      Catch::Contains("input_normalizer.std") && Catch::Contains("positive"));
  }
  test::copy_fixture(test::data_path("fno4d_norm_small.h5"), copy);
  test::set_string_attribute(copy, "input_normalizer_kind", "time");
  {
    const Fno4dModelFile bad(copy);
    ProcessGrid grid(MPI_COMM_WORLD, test::grids_3d(test::mpi_size()).front());
    CHECK_THROWS_WITH(DistributedFno4d(bad.spec(), bad, grid),
                      Catch::Contains("one value per report time"));
  }
  std::filesystem::remove(copy);
}
