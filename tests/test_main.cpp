// Catch2 main for every unit test binary: Kokkos is initialised once around the whole run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos;
  return Catch::Session().run(argc, argv);
}
