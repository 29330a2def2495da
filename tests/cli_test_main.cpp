// Catch2 main for the command-line tests (test_predict_cli, test_batch, test_mpi_predict,
// test_sweep). They write their outputs under fixed relative names, and ctest runs each test case
// as a process of its own, side by side with others: so each process works in a fresh directory
// of its own under the one it was started in. The directory is removed when every test passed,
// and kept (its path printed) when one failed and left files there, to look at.
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

// A relative $UFNO_TEST_DATA_DIR (a bundle run elsewhere) would point elsewhere after the chdir.
void make_data_dir_absolute() {
  const char* dir = std::getenv("UFNO_TEST_DATA_DIR");
  if (dir && *dir && fs::path(dir).is_relative())
    setenv("UFNO_TEST_DATA_DIR", fs::absolute(dir).c_str(), 1);
}

fs::path make_scratch_directory() {
  std::string name = (fs::current_path() / "cli_test_XXXXXX").string();
  if (!mkdtemp(name.data())) {
    std::perror(("cli_test_main: cannot create " + name).c_str());
    std::exit(2);
  }
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos;
  make_data_dir_absolute();
  const fs::path start = fs::current_path();
  const fs::path scratch = make_scratch_directory();
  fs::current_path(scratch);
  const int failed = Catch::Session().run(argc, argv);
  fs::current_path(start);
  // Listing the tests (ctest's discovery) also returns non-zero, and writes nothing.
  if (failed && !fs::is_empty(scratch))
    std::printf("cli_test_main: the outputs are kept in %s\n", scratch.c_str());
  else
    fs::remove_all(scratch);
  return failed;
}
