// Catch2 main for the MPI tests: MPI and Kokkos initialised around the run; every rank runs every
// test case (collectives must line up, so tests use CHECK, not REQUIRE, around them) and the
// result is the worst rank's, so mpiexec fails if any rank fails.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <catch2/catch.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Catch::Session session;
    if (rank != 0) session.configData().showSuccessfulTests = false;
    result = session.run(argc, argv);
    int worst = 0;
    MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    result = worst;
  }
  MPI_Finalize();
  return result;
}
