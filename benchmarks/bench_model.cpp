// Times the whole model on one encoded input, as ufno_predict runs it (DistributedNet3d, also on
// one rank). benchmarks/run_model_bench.sh runs the
// PyTorch reference on the same input and threads and prints the side-by-side table; under
// mpiexec it compares rank x thread splits. Prints one line (rank 0):
//   "ufno seconds_per_case=S peak_rss_mb=M threads=N ranks=P grid=PXxPY gflops=G peak_gflops=F"
// with the slowest rank's time, the largest rank's peak RSS, the achieved GFLOP/s of the pass
// (ModelFlops.hpp) and the float32 peak of all ranks' threads measured together afterwards
// (PeakFlops.hpp), followed by a "roofline:" line that puts the two side by side.
// A 4-D FNO model file (architecture FNO4D) is timed the same way, its layers' weights read once
// and kept (resident), and prints "ufno seconds_per_case=S peak_rss_mb=M ranks=P grid=G" alone.
// The time is of warm passes: with --repeat above 1 one untimed pass runs first, and the device
// is fenced before the clock starts and before it stops.
// With --plan whole-tensor (the GPU's plan) it first prints the model's cost table at the
// input's batch (benchmarks/LaunchCost.hpp): FLOPs, bytes and arithmetic intensity per launch
// group, and a roofline time for --gpu h100|h200 (or --peak-tflops, --bandwidth-tbs).
// --cost-model paper-ufno|paper-fno|fno4d-lgr1 prints that table for a named size (--batch N)
// and exits, with no model file, input or timing.
#include <mpi.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "apps/FiniteRange.hpp"
#include "benchmarks/GpuRoofline.hpp"
#include "benchmarks/LaunchCost.hpp"
#include "benchmarks/ModelFlops.hpp"
#include "benchmarks/PeakFlops.hpp"
#include "core/LayerTimer.hpp"
#include "io/Fno4dModelFile.hpp"
#include "io/Hdf5File.hpp"
#include "io/ModelAttributes.hpp"
#include "io/ModelFile.hpp"
#include "io/TensorFile.hpp"
#include "operators/DistributedFno4d.hpp"
#include "operators/DistributedNet3d.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "operators/backend/Threads.hpp"
#include "runtime/Fno4dRun.hpp"
#include "runtime/MpiMain.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"

namespace {

// The cost table of one pass of `cases` cases and its roofline time on `gpu` (rank 0 prints).
void print_cost_table(const std::string& what, int cases,
                      const std::vector<ufno::bench::LaunchCost>& costs,
                      const ufno::bench::GpuPeak& gpu) {
  using ufno::bench::roofline_seconds;
  std::printf(
      "cost model: %s, %d case(s) per pass, whole-tensor plan; roofline on %s (%.1f "
      "TFLOP/s, %.2f TB/s)\n",
      what.c_str(), cases, gpu.name.c_str(), gpu.flops_per_s / 1e12, gpu.bytes_per_s / 1e12);
  std::printf("%-12s %-28s %11s %10s %9s %11s %s\n", "layer", "launch", "GFLOP", "MB", "FLOP/B",
              "predicted", "bound");
  for (const auto& c : costs)
    std::printf("%-12s %-28s %11.3f %10.1f %9.1f %8.3f ms %s\n", c.layer.c_str(), c.launch.c_str(),
                c.flops / 1e9, c.bytes / 1e6, c.intensity(), roofline_seconds(c, gpu) * 1e3,
                ufno::bench::memory_bound(c, gpu) ? "memory" : "compute");
  // Per layer: its launch groups added up, in the order of the pass.
  std::vector<std::pair<std::string, std::vector<ufno::bench::LaunchCost>>> layers;
  for (const auto& c : costs) {
    if (layers.empty() || layers.back().first != c.layer) layers.push_back({c.layer, {}});
    layers.back().second.push_back(c);
  }
  std::printf("by layer:\n");
  for (const auto& [name, group] : layers) {
    const auto t = ufno::bench::totals(group);
    std::printf("%-12s %-28s %11.3f %10.1f %9.1f %8.3f ms\n", name.c_str(), "", t.flops / 1e9,
                t.bytes / 1e6, t.bytes > 0 ? t.flops / t.bytes : 0,
                roofline_seconds(group, gpu) * 1e3);
  }
  const auto t = ufno::bench::totals(costs);
  const double s = roofline_seconds(costs, gpu);
  std::printf("%-12s %-28s %11.3f %10.1f %9.1f %8.3f ms (%zu launch groups)\n", "total", "",
              t.flops / 1e9, t.bytes / 1e6, t.bytes > 0 ? t.flops / t.bytes : 0, s * 1e3,
              costs.size());
  std::printf(
      "cost model: predicted %.3f ms per pass, %.3f ms per case on %s (a lower bound: "
      "no launch latency, each tensor moved once)\n",
      s * 1e3, s * 1e3 / cases, gpu.name.c_str());
}

// The named sizes of --cost-model (those benchmarks/gpu_bench.py times).
struct NamedSize {
  const char* name;
  const char* what;
  std::vector<ufno::bench::LaunchCost> (*costs)(int cases);
};
const NamedSize kNamedSizes[] = {
    {"paper-ufno", "paper U-FNO 96x200x24",
     [](int b) { return ufno::bench::net3d_costs(ufno::ModelSpec{}, b); }},
    {"paper-fno", "paper FNO 96x200x24",
     [](int b) {
       ufno::ModelSpec fno;
       fno.architecture = "FNO", fno.n_fourier = 6, fno.n_ufourier = 0;
       return ufno::bench::net3d_costs(fno, b);
     }},
    {"fno4d-lgr1", "4-D FNO LGR1 40x40x25x24",
     [](int b) { return ufno::bench::fno4d_costs(ufno::Fno4dSpec{}, b); }},
};

ufno::Tensor to_device(const ufno::HostArray& in) {
  const auto& s = in.shape;
  ufno::Tensor x("input", s[0], s[1], s[2], s[3], s[4]);
  auto hx = Kokkos::create_mirror_view(x);
  std::copy(in.data.begin(), in.data.end(), hx.data());
  Kokkos::deep_copy(x, hx);
  return x;
}

// The summary lines: time per case, peak memory, and the roofline against the float32 peak.
void print_summary(const ufno::bench::Flops& flops, double sec_max, double rss_max, int threads,
                   int size, const std::string& grid, const ufno::bench::Peak& peak,
                   double peak_all) {
  const double achieved = flops.total() / 1e9 / sec_max;
  std::printf(
      "ufno seconds_per_case=%.6g peak_rss_mb=%.1f threads=%d ranks=%d grid=%s gflops=%.1f "
      "peak_gflops=%.1f\n",
      sec_max, rss_max, threads, size, grid.c_str(), achieved, peak_all);
  std::printf(
      "roofline: %.1f GFLOP per case (pointwise %.1f, spectral %.1f, U-Net %.1f) in %.3f s = "
      "%.1f GFLOP/s",
      flops.total() / 1e9, flops.pointwise / 1e9, flops.spectral / 1e9, flops.unet / 1e9, sec_max,
      achieved);
  if (peak_all > 0)
    std::printf(
        ", %.0f %% of the float32 peak %.1f GFLOP/s (%s FMA loop, %d rank(s) x %d "
        "thread(s))",
        100 * achieved / peak_all, peak_all, peak.isa, size, threads);
  std::printf("\n");
}

// The raw output (B, X, Y, T) as /output of `path`.
// One untimed pass before the timed ones (when there are several), left out of UFNO_PROFILE's
// table: it plans (workspaces, cuDNN's and cuFFT's plans and algorithm searches), which would
// dominate a GPU pass's table.
template <class Pass>
void warm_up(const Pass& pass, int repeat) {
  if (repeat <= 1) return;
  auto& timer = ufno::LayerTimer::instance();
  const bool on = timer.enabled();
  timer.set_enabled(false);
  pass();
  timer.set_enabled(on);
}

void save_output(const std::string& path, const ufno::Tensor& y) {
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  auto f = ufno::h5::File::create(path);
  f.write_floats("output", {y.extent(0), y.extent(2), y.extent(3), y.extent(4)}, hy.data());
  f.close();
}

// The 4-D FNO: warm passes of DistributedFno4d::forward, every layer's weights resident (on a GPU
// where they fit beside the pass: operators/WeightResidency.hpp); --save-output writes
// (B, A1, A2, A3, T) as /output (one rank).
int bench_fno4d(const std::string& model, const std::string& tensor, const std::string& save,
                const std::string& grid_spec, int repeat, int rank, int size,
                const ufno::bench::GpuPeak* costs_on) {
  ufno::Fno4dModelFile mf(model);
  const auto& s = mf.spec();
  const auto& g = s.grid;
  ufno::dist::ProcessGrid grid = ufno::dist::ProcessGrid::from_string(
      MPI_COMM_WORLD, ufno::process_grid_spec(grid_spec, g, MPI_COMM_WORLD),
      {g[0], g[1], g[2], g[3]});
  // Many passes: every layer's weights held (on a GPU, where they fit beside the pass).
  const ufno::WeightResidency residency = ufno::fno4d_weight_residency(
      s, ufno::input_tensor4d_cases(tensor, g, s.in_channels, MPI_COMM_WORLD), grid.size(),
      repeat + 1, MPI_COMM_WORLD);
  ufno::DistributedFno4d net(s, mf, grid, ufno::dist::ExchangeAlgorithm::Alltoallv, residency);
  const auto b = net.layout().box(grid.rank());
  ufno::GridView<4> x;
  std::size_t cases = 0;
  {
    auto in =
        ufno::read_input_tensor4d(tensor, g, s.in_channels, b.lo, b.extents(), MPI_COMM_WORLD);
    cases = in.shape[0];
    x = ufno::make_grid_view<4>("fno4d.input", cases, b.extent(0),
                                {b.extent(1), b.extent(2), b.extent(3), s.in_channels}, false);
    auto h = Kokkos::create_mirror_view(x);
    std::copy(in.data.begin(), in.data.end(), h.data());
    Kokkos::deep_copy(x, h);
  }
  if (costs_on && rank == 0)
    print_cost_table(model, int(cases), ufno::bench::fno4d_costs(s, int(cases)), *costs_on);
  // One output written by every pass: the warm passes then allocate nothing (core/Workspace.hpp).
  const ufno::GridView<4> y = ufno::make_grid_view<4>("fno4d.output", cases, 1, b.extents(), false);
  warm_up([&] { net.forward(x, y); }, repeat);
  Kokkos::fence();
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int r = 0; r < repeat; ++r) net.forward(x, y);
  Kokkos::fence();
  double sec = (MPI_Wtime() - t0) / repeat / double(cases), sec_max = 0;
  MPI_Allreduce(&sec, &sec_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double rss = ru.ru_maxrss / 1024.0, rss_max = 0;
  MPI_Allreduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    ufno::LayerTimer::instance().report("bench_model (FNO4D)");
    std::printf("ufno seconds_per_case=%.6g peak_rss_mb=%.1f ranks=%d grid=%s weights=%s\n",
                sec_max, rss_max, size, grid.str().c_str(), ufno::residency_name(residency));
  }
  if (!save.empty() && size == 1) {
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    const std::size_t B = y.extent(0), a1 = y.extent(2), a2 = y.extent(3), a3 = y.extent(4),
                      T = y.extent(5);
    auto f = ufno::h5::File::create(save);
    f.write_floats("output", {B, a1, a2, a3, T}, hy.data());
    f.close();
  }
  return 0;
}

int bench(int argc, char** argv, int rank, int size) {
  CLI::App app{"bench_model: time the U-FNO / FNO forward pass"};
  std::string model, tensor, save, grid_spec = "auto", plan, cost_model, gpu_name = "h100";
  int threads = 1, repeat = 1, batch = 1;
  double peak_tflops = 0, bandwidth_tbs = 0;
  bool skip_peak = false, bf16 = false;
  app.add_option("--model", model);
  app.add_option("--tensor", tensor);
  app.add_option("--plan", plan,
                 "execution plan: streaming or whole-tensor (or UFNO_PLAN); whole-tensor also "
                 "prints the model's cost table")
      ->check(CLI::IsMember({"streaming", "whole-tensor"}));
  app.add_option("--cost-model", cost_model,
                 "print the cost table of a named size and exit (no model file, input or timing)")
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const NamedSize& n : kNamedSizes) names.push_back(n.name);
        return names;
      }()));
  app.add_option("--batch", batch, "cases per pass of --cost-model")->check(CLI::PositiveNumber);
  app.add_option("--gpu", gpu_name, "the cost table's roofline device: h100 (SXM) or h200")
      ->check(CLI::IsMember({"h100", "h200"}));
  app.add_option("--peak-tflops", peak_tflops, "the roofline's peak instead of --gpu's FP32 peak")
      ->check(ufno::finite_range(1e-6, 1e6));
  app.add_option("--bandwidth-tbs", bandwidth_tbs,
                 "the roofline's memory bandwidth in TB/s instead of --gpu's")
      ->check(ufno::finite_range(1e-6, 1e6));
  app.add_option("--threads", threads);
  app.add_option("--repeat", repeat, "timed runs; with more than one, a warm-up run precedes them");
  app.add_option("--grid", grid_spec, "process grid under mpiexec");
  app.add_flag("--skip-peak", skip_peak, "do not measure the float32 peak (about 0.6 s)");
  app.add_flag("--bf16,--bf16-convolutions", bf16,
               "U-Net convolutions in bfloat16 (or UFNO_BF16=1)");
  app.add_option("--save-output", save, "write the raw output (B, X, Y, T) as /output (one rank)");
  CLI11_PARSE(app, argc, argv);
  ufno::bench::GpuPeak gpu;
  ufno::bench::find_gpu(gpu_name, gpu);
  if (peak_tflops > 0) gpu.flops_per_s = peak_tflops * 1e12, gpu.name += " (given peak)";
  if (bandwidth_tbs > 0) gpu.bytes_per_s = bandwidth_tbs * 1e12, gpu.name += " (given bandwidth)";
  if (!cost_model.empty()) {
    for (const NamedSize& n : kNamedSizes)
      if (rank == 0 && cost_model == n.name) print_cost_table(n.what, batch, n.costs(batch), gpu);
    return 0;
  }
  if (model.empty() || tensor.empty()) {
    if (rank == 0) std::fprintf(stderr, "bench_model: --model and --tensor are required\n");
    return 2;
  }
  ufno::RunOptions opts = ufno::run_options_from_environment(threads, bf16);
  if (!plan.empty()) ufno::parse_plan_kind(plan, opts.plan);
  ufno::apply_process_options(opts);
  const ufno::bench::GpuPeak* costs_on =
      opts.plan == ufno::PlanKind::WholeTensor && !plan.empty() ? &gpu : nullptr;
  if (ufno::model_architecture(model) == "FNO4D")
    return bench_fno4d(model, tensor, save, grid_spec, repeat, rank, size, costs_on);
  ufno::ModelFile mf(model);
  const auto& spec = mf.spec();
  std::function<void()> run;
  std::unique_ptr<ufno::dist::ProcessGrid> grid;  // outlives the network, which refers to it
  std::unique_ptr<ufno::DistributedNet3d> dnet;
  ufno::Tensor x;
  std::size_t cases = 0;
  grid = std::make_unique<ufno::dist::ProcessGrid>(ufno::dist::ProcessGrid::from_string(
      MPI_COMM_WORLD, grid_spec, {spec.grid[0], spec.grid[1], 1}));
  dnet = std::make_unique<ufno::DistributedNet3d>(spec, mf, *grid,
                                                  ufno::dist::ExchangeAlgorithm::Alltoallv, opts);
  const auto b = dnet->input_layout().box(rank);
  {  // the host copy of the input goes before the timed passes, as in ufno_predict
    auto in = ufno::read_input_tensor(tensor, spec.grid, spec.in_channels,
                                      {b.lo[0], b.lo[1], b.extent(0), b.extent(1)}, MPI_COMM_WORLD);
    cases = in.shape[0];
    x = to_device(in);
  }
  if (costs_on && rank == 0)
    print_cost_table(model, int(cases), ufno::bench::net3d_costs(spec, int(cases)), *costs_on);
  // One output written by every pass: the warm passes then allocate nothing (core/Workspace.hpp).
  const ufno::Tensor y =
      ufno::empty_tensor("output", cases, 1, b.extent(0), b.extent(1), x.extent(3));
  run = [&] { dnet->forward_raw(x, y); };
  if (rank == 0 && ufno::LayerTimer::instance().enabled())
    std::fprintf(stderr, "bench_model: peak RSS %.0f MB after loading the model and input\n",
                 ufno::LayerTimer::peak_rss_mb());
  const bool profiling = rank == 0 && ufno::LayerTimer::instance().enabled();
  warm_up(run, repeat);
  if (profiling && repeat > 1)
    std::fprintf(stderr, "bench_model: peak RSS %.0f MB after the warm-up pass\n",
                 ufno::LayerTimer::peak_rss_mb());
  Kokkos::fence();  // the warm-up pass ends before the clock starts
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int r = 0; r < repeat; ++r) {
    run();
    if (profiling)
      std::fprintf(stderr, "bench_model: peak RSS %.0f MB after timed pass %d\n",
                   ufno::LayerTimer::peak_rss_mb(), r + 1);
  }
  Kokkos::fence();
  double sec = (MPI_Wtime() - t0) / repeat / double(cases), sec_max = 0;
  MPI_Allreduce(&sec, &sec_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double rss = ru.ru_maxrss / 1024.0, rss_max = 0;
  MPI_Allreduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) ufno::LayerTimer::instance().report("bench_model");
  // Every rank measures its threads' peak at the same time, so shared cores count once.
  const auto flops = ufno::bench::model_flops(spec);
  ufno::bench::Peak peak;
  if (!skip_peak) peak = ufno::bench::measure_peak_gflops(threads);
  double peak_all = 0;
  MPI_Allreduce(&peak.gflops, &peak_all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) print_summary(flops, sec_max, rss_max, threads, size, grid->str(), peak, peak_all);
  if (!save.empty() && size == 1) save_output(save, y);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return ufno::mpi_main(argc, argv, "bench_model", bench); }
