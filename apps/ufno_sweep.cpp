// ufno_sweep: site-screening sweeps (screening/Sweep.hpp, docs/sweeps.md). Exit codes: 0,
// 2 bad configuration or input (one line naming file and key), 3 some scenarios failed, 1 other.

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "decomposition/CollectiveErrors.hpp"
#include "operators/backend/Threads.hpp"
#include "runtime/MpiMain.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"
#include "runtime/ThreadDefaults.hpp"
#include "screening/ChildProcess.hpp"
#include "screening/Sweep.hpp"

#ifndef UFNO_SOURCE_DIR
#define UFNO_SOURCE_DIR ""
#endif

namespace {

namespace fs = std::filesystem;

// The directory holding the Python package (ufno/sweep_report.py): $UFNO_PYTHON_DIR, else
// share/ufno/python beside an installed executable, else the source tree's python/.
std::string python_dir() {
  if (const char* env = std::getenv("UFNO_PYTHON_DIR"); env && *env) return env;
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share/ufno/python");
  if (*UFNO_SOURCE_DIR) dirs.push_back(fs::path(UFNO_SOURCE_DIR) / "python");
  for (const auto& d : dirs)
    if (fs::is_regular_file(d / "ufno" / "sweep_report.py")) return d.string();
  return "";
}

// The interpreter: $UFNO_PYTHON, else Debian's /usr/bin/python3 (where set-up installs numpy,
// h5py and matplotlib), else python3 from PATH.
std::string python_exe() {
  if (const char* env = std::getenv("UFNO_PYTHON"); env && *env) return env;
  return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

// A report takes seconds (about 3 s for 4,000 scenarios); one that hangs is stopped.
constexpr double kReportTimeoutS = 600;

std::string last_line(const fs::path& p) {
  std::ifstream f(p);
  std::string line, last;
  while (std::getline(f, line))
    if (!line.empty()) last = line;
  return last;
}

// report.html in the sweep's output directory (python3 -m ufno.sweep_report, docs/sweeps.md
// "Report"). A report that cannot be made is one warning line; the sweep's results stand and the
// exit code is the sweep's. Its messages go to out/report.log, kept only when it fails.
void write_report(const std::string& config, const ufno::SweepConfig& c) {
  const fs::path out(c.out), log = out / "report.log";
  const std::string dir = python_dir();
  // A report of an earlier run no longer describes the table: it goes.
  auto warn = [&](const std::string& why) {
    std::error_code ec;
    fs::remove(out / "report.html", ec);
    std::cerr << "ufno_sweep: warning: no report.html (" << why << "); "
              << (out / "kpis.csv").string() << " is complete\n";
  };
  if (dir.empty()) return warn("the Python package ufno is not found; set UFNO_PYTHON_DIR");
  std::vector<std::string> args{python_exe(), "-m", "ufno.sweep_report", c.out, "--config", config};
  for (const auto& m : c.models) args.insert(args.end(), {"--model", m});
  // The package directory first on PYTHONPATH; the report is bounded like a Flow run.
  std::string pythonpath = "PYTHONPATH=" + dir;
  if (const char* p = std::getenv("PYTHONPATH"); p && *p) pythonpath += ":" + std::string(p);
  const ufno::ProcessResult r =
      ufno::run_process(args, log.string(), kReportTimeoutS, {pythonpath});
  if (r.status == 0) {
    std::error_code ec;
    fs::remove(log, ec);
    std::cout << "ufno_sweep: report -> " << (out / "report.html").string() << "\n";
    return;
  }
  const std::string why = last_line(log);
  warn((why.empty() ? r.error : why) + "; " + log.string());
}

int run(int argc, char** argv, int rank, int size) {
  CLI::App app{"ufno_sweep: site-screening sweeps with KPI tables"};
  std::string config;
  (void)size;
  const ufno::ThreadChoice auto_threads =
      ufno::default_threads_for_rank(ufno::ranks_on_this_node(MPI_COMM_WORLD));
  int threads = 0;
  bool no_report = false, bf16 = false;
  app.add_option("--config", config, "sweep configuration (JSON)")->required();
  auto* opt_threads =
      app.add_option("--threads", threads, "threads per rank (default: as ufno_predict)");
  app.add_flag("--bf16", bf16,
               "U-Net convolutions in bfloat16 (CPUs with AVX512_BF16 or AMX; as "
               "ufno_predict --bf16; or UFNO_BF16=1)");
  app.add_flag("--no-report", no_report,
               "do not write report.html (the screening report, docs/sweeps.md)");
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
  const ufno::RunOptions run = ufno::run_options_from_environment(threads, bf16);
  ufno::apply_process_options(run);
  ufno::SweepConfig c;
  ufno::dist::collectively(MPI_COMM_WORLD, [&] { c = ufno::read_sweep_config(config); });
  const int failed = ufno::run_sweep(c, run);
  if (rank == 0 && !no_report) write_report(config, c);
  return failed ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) { return ufno::mpi_main(argc, argv, "ufno_sweep", run); }
