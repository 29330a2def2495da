// ufno_sweep: site-screening parameter sweeps (screening/Sweep.hpp, docs/sweeps.md). Exit codes: 0,
// 2 bad configuration or input (one line naming file and key), 3 some scenarios failed, 1 other.
#include <CLI/CLI.hpp>
#include <iostream>

#include "decomposition/CollectiveErrors.hpp"
#include "operators/backend/Threads.hpp"
#include "runtime/MpiMain.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"
#include "runtime/ThreadDefaults.hpp"
#include "screening/Sweep.hpp"

namespace {

int run(int argc, char** argv, int rank, int size) {
  CLI::App app{"ufno_sweep: site-screening sweeps with KPI tables"};
  std::string config;
  (void)size;
  const ufno::ThreadChoice auto_threads =
      ufno::default_threads_for_rank(ufno::ranks_on_this_node(MPI_COMM_WORLD));
  int threads = 0;
  app.add_option("--config", config, "sweep configuration (JSON)")->required();
  auto* opt_threads =
      app.add_option("--threads", threads, "threads per rank (default: as ufno_predict)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return rank == 0 ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::cerr << "ufno_sweep: error: " << e.what() << "\n";
    return 2;
  }
  if (!opt_threads->count()) threads = auto_threads.threads;
  ufno::dist::collectively(MPI_COMM_WORLD, [&] { ufno::check_thread_count(threads); });
  const ufno::RunOptions run = ufno::run_options_from_environment(threads, false);
  ufno::apply_process_options(run);
  ufno::SweepConfig c;
  ufno::dist::collectively(MPI_COMM_WORLD, [&] { c = ufno::read_sweep_config(config); });
  return ufno::run_sweep(c, run) ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) { return ufno::mpi_main(argc, argv, "ufno_sweep", run); }
