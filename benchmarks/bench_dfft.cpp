// Distributed FFT benchmark over 3 or 4 axes (--size X Y T or A1 A2 A3 T), run under mpiexec with
// any rank count:
//  (a) the full distributed r2c of DistributedFft<D> against FFTW-MPI's r2c on the same ranks,
//      size and batch, in GFlop/s with the 5 N log2 N convention (N points per transform);
//  (b) the truncated FNO spectral transform (kept modes only) against the full transform of the
//      same tensor, forward + backward, and the cells each repartition sends per rank.
// Times are the slowest rank's, between barriers, best of --repeat runs after one warm-up.
#include <fftw3-mpi.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "decomposition/DistributedFft.hpp"
#include "operators/backend/HostMemory.hpp"
#include "operators/backend/Threads.hpp"

using namespace ufno;

namespace {

template <class F>
double best_time(int repeat, F&& f) {
  f();  // warm-up: plans, first-touch
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    f();
    double t = MPI_Wtime() - t0, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, tmax);
  }
  return best;
}

// FFTW-MPI's best times: (a) slab decomposition along the first axis, `batch` interleaved
// transforms; (a') the same on ufno's channel-first layout, one transform per channel.
template <std::size_t D>
std::pair<double, double> time_fftw_mpi(const std::array<int, D>& N, int batch, int threads,
                                        unsigned fftw_flags, int repeat) {
  fftwf_plan_with_nthreads(threads);
  std::array<ptrdiff_t, D> dims{}, cdims{};
  for (std::size_t a = 0; a < D; ++a) dims[a] = cdims[a] = N[a];
  cdims[D - 1] = N[D - 1] / 2 + 1;
  ptrdiff_t local_n0 = 0, local_0 = 0;
  const ptrdiff_t alloc = fftwf_mpi_local_size_many(
      int(D), cdims.data(), batch, FFTW_MPI_DEFAULT_BLOCK, MPI_COMM_WORLD, &local_n0, &local_0);
  float* in = fftwf_alloc_real(2 * alloc);
  fftwf_complex* out = fftwf_alloc_complex(alloc);
  fftwf_plan p =
      fftwf_mpi_plan_many_dft_r2c(int(D), dims.data(), batch, FFTW_MPI_DEFAULT_BLOCK,
                                  FFTW_MPI_DEFAULT_BLOCK, in, out, MPI_COMM_WORLD, fftw_flags);
  for (ptrdiff_t i = 0; i < 2 * alloc; ++i) in[i] = 1.f;
  const double t_fftw = best_time(repeat, [&] { fftwf_execute(p); });
  fftwf_destroy_plan(p);
  fftwf_free(in);
  fftwf_free(out);

  // (a') FFTW-MPI on ufno's channel-first layout, (B C, grid) with each channel's grid
  // contiguous: one transform per channel (FFTW-MPI's `many` interleaves the batch innermost).
  const ptrdiff_t alloc1 = fftwf_mpi_local_size_many(
      int(D), cdims.data(), 1, FFTW_MPI_DEFAULT_BLOCK, MPI_COMM_WORLD, &local_n0, &local_0);
  float* in1 = fftwf_alloc_real(2 * alloc1 * batch);
  fftwf_complex* out1 = fftwf_alloc_complex(alloc1 * batch);
  fftwf_plan p1 =
      fftwf_mpi_plan_many_dft_r2c(int(D), dims.data(), 1, FFTW_MPI_DEFAULT_BLOCK,
                                  FFTW_MPI_DEFAULT_BLOCK, in1, out1, MPI_COMM_WORLD, fftw_flags);
  for (ptrdiff_t i = 0; i < 2 * alloc1 * batch; ++i) in1[i] = 1.f;
  const double t_fftw1 = best_time(repeat, [&] {
    for (int c = 0; c < batch; ++c)
      fftwf_mpi_execute_dft_r2c(p1, in1 + 2 * alloc1 * c, out1 + alloc1 * c);
  });
  fftwf_destroy_plan(p1);
  fftwf_free(in1);
  fftwf_free(out1);

  return {t_fftw, t_fftw1};
}

template <std::size_t D>
int run(const std::vector<int>& n, const std::vector<int>& modes, int batch, int repeat,
        int threads, const std::string& grid_spec, const std::string& wisdom) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  backend::set_threads(threads);
  fftwf_mpi_init();  // before any wisdom is read: FFTW-MPI's planners must be registered
  // One wisdom file per rank: ranks plan different block shapes.
  if (!wisdom.empty()) fft::set_fft_wisdom_file(wisdom + "." + std::to_string(rank));
  const unsigned fftw_flags = wisdom.empty() ? FFTW_ESTIMATE : FFTW_MEASURE;
  std::array<int, D> N{}, M{};
  for (std::size_t a = 0; a < D; ++a) N[a] = n[a], M[a] = modes[a];
  auto grid = dist::ProcessGrid::from_string(MPI_COMM_WORLD, grid_spec, n);
  double points = 1;
  for (int v : N) points *= v;
  const double flops = 5.0 * points * std::log2(points) * batch;

  // (a) ours, full transform
  dist::DistributedFft<D> full(grid, N);
  auto x = make_grid_view<D>("x", 1, batch, full.real_layout().box(rank).extents());
  Kokkos::deep_copy(x, 1.f);
  const double t_ours = best_time(repeat, [&] { full.forward(x); });

  const auto [t_fftw, t_fftw1] = time_fftw_mpi<D>(N, batch, threads, fftw_flags, repeat);

  // (b) truncated vs full, forward + backward
  dist::DistributedFft<D> trunc(grid, N, M);
  const double t_full_fb = best_time(repeat, [&] { full.backward(full.forward(x)); });
  const double t_trunc_fb = best_time(repeat, [&] { trunc.backward(trunc.forward(x)); });
  const auto cf = full.cells_sent(), ct = trunc.cells_sent();
  std::vector<long> cells(cf.begin(), cf.end()), cmax(2 * cf.size());
  cells.insert(cells.end(), ct.begin(), ct.end());
  MPI_Allreduce(cells.data(), cmax.data(), int(cells.size()), MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    auto join = [](const auto& v, const char* sep) {
      std::string r;
      for (std::size_t i = 0; i < v.size(); ++i) r += (i ? sep : "") + std::to_string(v[i]);
      return r;
    };
    const double mb = 8.0 * batch / 1e6;  // complex float per cell, x batch
    std::printf("bench_dfft: %d rank(s) as %s x %d thread(s), grid %s, batch %d, modes %s\n", size,
                grid.str().c_str(), threads, join(N, "x").c_str(), batch, join(M, "x").c_str());
    std::printf(
        "(a) full r2c forward: ufno %.4f s (%.2f GFlop/s)  FFTW-MPI %.4f s (%.2f GFlop/s)  "
        "ratio fftw/ufno %.2f\n",
        t_ours, flops / t_ours / 1e9, t_fftw, flops / t_fftw / 1e9, t_fftw / t_ours);
    std::printf(
        "(a') FFTW-MPI per channel on ufno's layout: %.4f s (%.2f GFlop/s)  ratio fftw/ufno %.2f\n",
        t_fftw1, flops / t_fftw1 / 1e9, t_fftw1 / t_ours);
    std::printf("(b) forward+backward: full %.4f s, truncated %.4f s, speed-up %.2f\n", t_full_fb,
                t_trunc_fb, t_full_fb / t_trunc_fb);
    std::printf("    MB sent per rank (max) by each repartition, forward then backward:\n");
    std::string f = "      full     ", t = "      truncated";
    for (std::size_t i = 0; i < cf.size(); ++i) {
      f += " " + std::to_string(cmax[i] * mb).substr(0, 6);
      t += " " + std::to_string(cmax[cf.size() + i] * mb).substr(0, 6);
    }
    std::printf("%s\n%s\n", f.c_str(), t.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The programs' host allocation policy (freed blocks reused, not faulted in again), so both
  // sides run on warm memory as ufno_predict does.
  ufno::backend::reuse_freed_host_memory();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 0;
  {
    Kokkos::ScopeGuard kokkos;
    CLI::App app{"bench_dfft: distributed FFT vs FFTW-MPI, truncated vs full"};
    std::vector<int> n{104, 208, 32}, modes{10, 10, 10};
    int batch = 36, repeat = 3, threads = 1;
    std::string grid_spec = "auto", wisdom;
    app.add_option("--size", n, "X Y T, or A1 A2 A3 T")->expected(3, 4);
    app.add_option("--modes", modes, "kept modes per axis")->expected(3, 4);
    app.add_option("--batch", batch, "transforms per call (B x C)");
    app.add_option("--repeat", repeat);
    app.add_option("--threads", threads, "FFTW threads per rank");
    app.add_option("--grid", grid_spec);
    app.add_option("--measure", wisdom,
                   "plan both sides with FFTW_MEASURE (ours keeps its wisdom in this file, as "
                   "UFNO_FFTW_WISDOM does for the apps); default FFTW_ESTIMATE on both");
    bool parsed = false;
    try {
      app.parse(argc, argv);
      if (n.size() != modes.size()) throw CLI::ValidationError("--modes", "one per axis of --size");
      parsed = true;
    } catch (const CLI::ParseError& e) {
      // --help arrives here too, with exit code 0: it ends the run as a bad flag does.
      code = rank == 0 ? app.exit(e) : e.get_exit_code();
    }
    if (parsed)
      code = n.size() == 3 ? run<3>(n, modes, batch, repeat, threads, grid_spec, wisdom)
                           : run<4>(n, modes, batch, repeat, threads, grid_spec, wisdom);
  }
  MPI_Finalize();
  return code;
}
