// ufno_sweep: site-screening parameter sweeps (apps/Sweep.hpp, docs/sweeps.md). Exit codes: 0,
// 2 bad configuration or input (one line naming file and key), 3 some scenarios failed, 1 other.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <iostream>

#include "apps/Sweep.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "operators/backend/Threads.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, code = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    Kokkos::ScopeGuard kokkos;
    CLI::App app{"ufno_sweep: site-screening sweeps with KPI tables"};
    std::string config;
    int threads = ufno::backend::default_threads(size);
    app.add_option("--config", config, "sweep configuration (JSON)")->required();
    app.add_option("--threads", threads, "threads per rank");
    try {
      app.parse(argc, argv);
      ufno::backend::set_threads(threads);
      ufno::SweepConfig c;
      ufno::dist::collectively(MPI_COMM_WORLD, [&] { c = ufno::read_sweep_config(config); });
      code = ufno::run_sweep(c) ? 3 : 0;
    } catch (const CLI::CallForHelp& e) {
      code = rank == 0 ? app.exit(e) : 0;
    } catch (const CLI::ParseError& e) {
      if (rank == 0) std::cerr << "ufno_sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const ufno::dist::AgreedInputError& e) {
      if (rank == 0) std::cerr << "ufno_sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const ufno::InputError& e) {
      std::cerr << "ufno_sweep: error: " << e.what() << "\n";
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, 2);
      code = 2;
    } catch (const std::exception& e) {
      std::cerr << "ufno_sweep: internal error on rank " << rank << ": " << e.what() << "\n";
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
      code = 1;
    }
  }
  MPI_Finalize();
  return code;
}
