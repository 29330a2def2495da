// The GPU's whole-tensor execution plan (core/ExecutionPlan.hpp), run on the host: the values
// equal the CPU's streaming plan's within the derived float32 reordering bound, and its kernels
// have a GPU's shape: few launches per Fourier layer, each over the whole tensor it writes with
// at most a few values per iteration (no thread walks a row), recorded through the launch log
// every ufno::parallel_for feeds (core/LaunchLog.hpp). Vendor calls (GEMMs, FFTs, convolutions)
// are recorded apart: the kernel checks below are on the project's kernels, and the launch count
// a pass reports is both.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>

#include "io/Fno4dModelFile.hpp"
#include "io/ModelFile.hpp"
#include "operators/DistributedFno4d.hpp"
#include "operators/DistributedNet3d.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "support/Float32Bound.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

struct Pass {
  std::vector<float> out;
  std::vector<Launch> launches;  // the project's kernels
  std::vector<Launch> library;   // vendor library calls
};

Pass run_with(PlanKind plan, const std::string& model_name, const std::string& io_name) {
  ScopedExecutionPlan use(plan);
  ModelFile mf(test::data_path(model_name));
  dist::ProcessGrid grid(MPI_COMM_SELF, {1, 1, 1});
  DistributedNet3d net(mf.spec(), mf, grid);
  auto io = test::read_all(test::data_path(io_name));
  // One case (ufno_predict's usual pass): the launches below are those of one case's forward.
  const HostArray& in = io.arrays.at("input");
  const std::size_t case_size = in.data.size() / in.shape[0];
  const std::vector<float> first(in.data.begin(), in.data.begin() + case_size);
  Tensor x = test::to_device(
      first, {1, int(in.shape[1]), int(in.shape[2]), int(in.shape[3]), int(in.shape[4])});
  net.forward_raw(x);  // first pass: plans and buffers made
  LaunchLog log;
  Pass p;
  p.out = test::to_host(net.forward_raw(x));
  p.launches = log.of_kind(LaunchKind::Kernel);
  p.library = log.of_kind(LaunchKind::Library);
  return p;
}

// The 4-D FNO on one rank: the fixture's first case, channels last (1, a1, a2, a3, t, C).
Pass run_fno4d_with(PlanKind plan, const std::string& model_name, const std::string& io_name) {
  ScopedExecutionPlan use(plan);
  Fno4dModelFile mf(test::data_path(model_name));
  dist::ProcessGrid grid(MPI_COMM_SELF, {1, 1, 1, 1});
  DistributedFno4d net(mf.spec(), mf, grid);
  auto io = test::read_all(test::data_path(io_name));
  const HostArray& in = io.arrays.at("input");  // (B, a1, a2, a3, t, C)
  auto x =
      make_grid_view<4>("in", 1, int(in.shape[1]),
                        {int(in.shape[2]), int(in.shape[3]), int(in.shape[4]), int(in.shape[5])});
  auto h = Kokkos::create_mirror_view(x);
  std::copy(in.data.begin(), in.data.begin() + h.size(), h.data());
  Kokkos::deep_copy(x, h);
  net.forward(x);  // first pass: plans and buffers made
  LaunchLog log;
  Pass p;
  auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), net.forward(x));
  p.out.assign(y.data(), y.data() + y.size());
  p.launches = log.of_kind(LaunchKind::Kernel);
  p.library = log.of_kind(LaunchKind::Library);
  return p;
}

void print_launches(const char* what, const std::vector<Launch>& launches) {
  std::map<std::string, std::array<int64_t, 2>> by_label;  // launches, values
  for (const Launch& l : launches) {
    by_label[l.label][0] += 1;
    by_label[l.label][1] += l.values;
  }
  std::printf("%s: %zu launches\n", what, launches.size());
  for (const auto& [label, n] : by_label)
    std::printf("  %-32s %4lld launches, %10lld values\n", label.c_str(), (long long)n[0],
                (long long)n[1]);
}

void check_launches(const std::string& model_name, const Pass& streaming, const Pass& whole,
                    int layers, double bound) {
  print_launches((model_name + ", streaming plan").c_str(), streaming.launches);
  print_launches((model_name + ", whole-tensor plan").c_str(), whole.launches);
  print_launches((model_name + ", whole-tensor plan, library calls").c_str(), whole.library);
  std::printf("%s, whole-tensor plan: %zu launches in all\n", model_name.c_str(),
              whole.launches.size() + whole.library.size());
  // Every pass runs GEMMs and FFTs through a vendor library: the count includes them.
  CHECK(!whole.library.empty());
  CHECK(!streaming.library.empty());

  const auto e = test::compare(whole.out, streaming.out);
  INFO(model_name << ": whole-tensor against streaming rel L2 " << e.rel_l2 << " (bound " << bound
                  << ")");
  CHECK(e.rel_l2 <= bound);

  // About a dozen launches per Fourier layer, plus the lift, head, padding and crop, plus one
  // bias-and-activation kernel per convolution where the backend cannot fuse it.
  std::size_t convolutions = 0;
  for (const Launch& l : whole.library) convolutions += l.label.rfind("cudnnConvolution", 0) == 0;
  const std::size_t budget =
      12 * std::size_t(layers) + 8 +
      (backend::ConvPrimitives<backend::Default>::kFusedBiasActivation ? 0 : convolutions);
  INFO(model_name << ": " << whole.launches.size() << " launches, budget " << budget);
  CHECK(whole.launches.size() <= budget);
  CHECK(whole.launches.size() < streaming.launches.size());
  for (const Launch& l : whole.launches) {
    INFO(l.label << ": " << l.iterations << " iterations over " << l.values << " values");
    CHECK(l.iterations >= 1);
    CHECK(l.values <= 32 * l.iterations);  // no loop over a row inside one iteration
  }
}

void check_plans(const std::string& model_name, const std::string& io_name) {
  const ModelSpec spec = ModelFile(test::data_path(model_name)).spec();
  check_launches(model_name, run_with(PlanKind::Streaming, model_name, io_name),
                 run_with(PlanKind::WholeTensor, model_name, io_name), spec.layers(),
                 test::float32_reordering_bound(spec));
}

}  // namespace

TEST_CASE("the whole-tensor plan: the streaming plan's values in few wide launches (U-FNO)",
          "[plan]") {
  check_plans("ufno_small.h5", "ufno_small_io.h5");
}

TEST_CASE("the whole-tensor plan: the streaming plan's values in few wide launches (FNO)",
          "[plan]") {
  check_plans("fno_small.h5", "fno_small_io.h5");
}

TEST_CASE("the whole-tensor plan: the streaming plan's values in few wide launches (4-D FNO)",
          "[plan]") {
  const Fno4dSpec spec = Fno4dModelFile(test::data_path("fno4d_norm_small.h5")).spec();
  check_launches(
      "fno4d_norm_small.h5",
      run_fno4d_with(PlanKind::Streaming, "fno4d_norm_small.h5", "fno4d_norm_small_io.h5"),
      run_fno4d_with(PlanKind::WholeTensor, "fno4d_norm_small.h5", "fno4d_norm_small_io.h5"),
      spec.layers, test::float32_reordering_bound(spec));
}

TEST_CASE("the streaming plan walks rows: the launch log sees what the plans differ in", "[plan]") {
  // A check that the launch shapes above can fail: the streaming plan's write-back walks whole
  // rows of values in one iteration.
  const Pass streaming = run_with(PlanKind::Streaming, "fno_small.h5", "fno_small_io.h5");
  bool walks_rows = false;
  for (const Launch& l : streaming.launches)
    walks_rows = walks_rows || l.values > 32 * l.iterations;
  CHECK(walks_rows);
}
