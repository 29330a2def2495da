#pragma once
// The common main of the MPI executables: the host allocation policy (backend/HostMemory.hpp),
// MPI (started quickly when no launcher started the process: runtime/SingletonStart.hpp) and
// Kokkos set up around `run`, and one mapping of failures to exit codes. An input error every rank
// agreed on is reported once by rank 0 (exit 2); an input error on one rank only, or any other
// error, aborts the whole job rather than leaving the other ranks waiting (exit 2 or 1).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <functional>
#include <iostream>

#include "decomposition/CollectiveErrors.hpp"
#include "operators/backend/HostMemory.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"
#include "runtime/SingletonStart.hpp"

namespace ufno {

inline int mpi_main(int argc, char** argv, const char* tool,
                    const std::function<int(int argc, char** argv, int rank, int size)>& run) {
  // Before MPI and Kokkos allocate anything.
  backend::reuse_freed_host_memory(heap_reuse_from_environment());
  // Funneled: ufno_sweep runs OPM Flow from a helper thread that never calls MPI.
  int provided = 0;
  const auto singleton_settings = set_quick_singleton_start();
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  unset_quick_singleton_start(singleton_settings);
  int rank = 0, size = 1, code = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    // Kokkos gets no arguments: it would take --threads as its own option.
    Kokkos::ScopeGuard kokkos;
    try {
      code = run(argc, argv, rank, size);
    } catch (const dist::AgreedInputError& e) {
      if (rank == 0) std::cerr << tool << ": error: " << e.what() << "\n";
      code = 2;
    } catch (const InputError& e) {
      std::cerr << tool << ": error: " << e.what() << "\n";
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, 2);
      code = 2;
    } catch (const std::exception& e) {
      std::cerr << tool << ": internal error on rank " << rank << ": " << e.what() << "\n";
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
      code = 1;
    }
  }
  MPI_Finalize();
  return code;
}

}  // namespace ufno
