// Distributed FFT benchmark, run under mpiexec with any rank count:
//  (a) the full distributed 3-D r2c of DistributedFft<3> against FFTW-MPI's r2c on the same ranks,
//      size and batch, in GFlop/s with the 5 N log2 N convention (N = X*Y*T points per transform);
//  (b) the truncated FNO spectral transform (kept modes only) against the full transform of the
//      same tensor, forward + backward, and the cells each repartition sends per rank.
// Times are the slowest rank's, between barriers, best of --repeat runs after one warm-up.
#include <fftw3-mpi.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "decomposition/DistributedFft.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 0;
  {
    Kokkos::ScopeGuard kokkos;
    CLI::App app{"bench_dfft: distributed FFT vs FFTW-MPI, truncated vs full"};
    std::vector<int> n{104, 208, 32}, modes{10, 10, 10};
    int batch = 36, repeat = 3, threads = 1;
    std::string grid_spec = "auto";
    app.add_option("--size", n, "X Y T")->expected(3);
    app.add_option("--modes", modes, "kept modes mx my mt")->expected(3);
    app.add_option("--batch", batch, "transforms per call (B x C)");
    app.add_option("--repeat", repeat);
    app.add_option("--threads", threads, "FFTW threads per rank");
    app.add_option("--grid", grid_spec);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      code = rank == 0 ? app.exit(e) : 1;
    }
    if (code == 0) {
      backend::set_threads(threads);
      const std::array<int, 3> N{n[0], n[1], n[2]};
      auto grid = dist::ProcessGrid::from_string(MPI_COMM_WORLD, grid_spec, {N[0], N[1], 1});
      const double points = double(N[0]) * N[1] * N[2];
      const double flops = 5.0 * points * std::log2(points) * batch;

      // (a) ours, full transform
      dist::DistributedFft<3> full(grid, N);
      const auto b0 = full.real_layout().box(rank);
      Tensor x("x", 1, batch, b0.extent(0), b0.extent(1), b0.extent(2));
      Kokkos::deep_copy(x, 1.f);
      const double t_ours = best_time(repeat, [&] { full.forward(x); });

      // (a) FFTW-MPI, slab decomposition along X, `batch` interleaved transforms
      fftwf_mpi_init();
      fftwf_plan_with_nthreads(threads);
      const ptrdiff_t dims[3] = {N[0], N[1], N[2]};
      ptrdiff_t local_n0 = 0, local_0 = 0;
      const ptrdiff_t alloc = fftwf_mpi_local_size_many(
          3, std::array<ptrdiff_t, 3>{N[0], N[1], N[2] / 2 + 1}.data(), batch,
          FFTW_MPI_DEFAULT_BLOCK, MPI_COMM_WORLD, &local_n0, &local_0);
      float* in = fftwf_alloc_real(2 * alloc);
      fftwf_complex* out = fftwf_alloc_complex(alloc);
      fftwf_plan p = fftwf_mpi_plan_many_dft_r2c(3, dims, batch, FFTW_MPI_DEFAULT_BLOCK,
                                                 FFTW_MPI_DEFAULT_BLOCK, in, out, MPI_COMM_WORLD,
                                                 FFTW_ESTIMATE);
      for (ptrdiff_t i = 0; i < 2 * alloc; ++i) in[i] = 1.f;
      const double t_fftw = best_time(repeat, [&] { fftwf_execute(p); });
      fftwf_destroy_plan(p);
      fftwf_free(in);
      fftwf_free(out);

      // (b) truncated vs full, forward + backward
      dist::DistributedFft<3> trunc(grid, N, std::array<int, 3>{modes[0], modes[1], modes[2]});
      const double t_full_fb = best_time(repeat, [&] { full.backward(full.forward(x)); });
      const double t_trunc_fb = best_time(repeat, [&] { trunc.backward(trunc.forward(x)); });
      long cells[8], cmax[8];
      const auto cf = full.cells_sent(), ct = trunc.cells_sent();
      for (int i = 0; i < 4; ++i) cells[i] = cf[i], cells[4 + i] = ct[i];
      MPI_Allreduce(cells, cmax, 8, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0) {
        const double mb = 8.0 * batch / 1e6;  // complex float per cell, x batch
        std::printf(
            "bench_dfft: %d rank(s) as %s x %d thread(s), grid %dx%dx%d, batch %d, modes "
            "%dx%dx%d\n",
            size, grid.str().c_str(), threads, N[0], N[1], N[2], batch, modes[0], modes[1],
            modes[2]);
        std::printf(
            "(a) full r2c forward: ufno %.4f s (%.2f GFlop/s)  FFTW-MPI %.4f s (%.2f GFlop/s)  "
            "ratio fftw/ufno %.2f\n",
            t_ours, flops / t_ours / 1e9, t_fftw, flops / t_fftw / 1e9, t_fftw / t_ours);
        std::printf("(b) forward+backward: full %.4f s, truncated %.4f s, speed-up %.2f\n",
                    t_full_fb, t_trunc_fb, t_full_fb / t_trunc_fb);
        std::printf(
            "    MB sent per rank (max) by each repartition: fwd T->Y, Y->X, bwd X->Y, Y->T\n");
        std::printf("      full      %.2f %.2f %.2f %.2f\n", cmax[0] * mb, cmax[1] * mb,
                    cmax[2] * mb, cmax[3] * mb);
        std::printf("      truncated %.2f %.2f %.2f %.2f\n", cmax[4] * mb, cmax[5] * mb,
                    cmax[6] * mb, cmax[7] * mb);
      }
    }
  }
  MPI_Finalize();
  return code;
}
