#pragma once
// The web server's sweeps. Each runs as the ufno_sweep program in a child process of its own
// (its own process group, with its Python report), so a sweep that crashes or is killed cannot
// take the server down, and no request waits for it. One sweep at a time: a second is refused
// (409) while one runs. A monitor thread reaps the child, reads its progress from its log (the
// "ufno_sweep: [i/n] ..." lines of core/Progress), and stops it at the server's limits on run
// time and disk. A cancelled, failed or stopped sweep's outputs are removed, so only a finished
// sweep's report and table are ever served. Finished sweeps are removed, oldest first: when a
// sweep starts, beyond keep - 1 of them and until they take at most half the disk limit; while
// one runs or when it ends, as long as all outputs together pass the limit.
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "apps/PredictionService.hpp"  // ServiceReply

namespace ufno {

struct SweepLimits {
  std::string program;        // the ufno_sweep executable; empty: no sweeps (503)
  int threads = 1;            // its --threads
  int max_scenarios = 200;    // the form's largest scenario count
  double max_seconds = 1800;  // a sweep still running then is stopped (failed)
  double max_disk_mb = 2048;  // all sweeps' outputs together
  int keep = 20;              // finished sweeps kept
};

class SweepRunner {
 public:
  // `dir`: where the sweeps' directories go; emptied first (sweeps of an earlier server).
  SweepRunner(std::string dir, SweepLimits limits);
  ~SweepRunner();  // stops a running sweep: nothing is left running
  SweepRunner(const SweepRunner&) = delete;
  SweepRunner& operator=(const SweepRunner&) = delete;

  // Starts a sweep of `config` (sweep_config_from_form's; its "out" is set here) after checking
  // it with the sweep's own reader: 202 with its status, 409 while another runs, 422 naming the
  // form's field, 503 without a sweep program.
  ServiceReply start(nlohmann::json config);
  ServiceReply status(const std::string& id) const;  // 404 for an unknown or removed sweep
  // Stops the running sweep `id` and answers once its processes are gone and its outputs
  // removed (status "cancelled"); 409 for a sweep that is not running.
  ServiceReply cancel(const std::string& id);
  // A finished sweep's report.html or kpis.csv into `bytes` (200), or the error's reply.
  ServiceReply file(const std::string& id, const std::string& name, std::string& bytes) const;
  nlohmann::json info() const;  // the limits, the parameters and the running sweep

 private:
  struct Sweep {
    std::string id, dir, status = "running", stage = "preparing the scenarios", error;
    int total = 0, done = 0, failed_scenarios = 0;
    double started = 0, ended = 0;
    pid_t pid = 0;  // also its process group
    bool cancel = false, report = false;
  };
  void monitor();
  // The running sweep ended (or was stopped: `why` non-empty, status `as`); under no lock.
  void finish(const std::string& id, int wait_status, const std::string& as,
              const std::string& why);
  void terminate(pid_t pid) const;  // SIGTERM to its group, SIGKILL after a grace period; reaped
  void update_progress(const std::string& id);
  // Removes finished sweeps, oldest first, until all take at most `fraction` of the disk limit;
  // false if `running_id` alone takes more.
  bool enforce_disk(const std::string& running_id, double fraction = 1);
  void remove_oldest_finished(std::size_t keep);
  nlohmann::json status_json(const Sweep& s) const;
  Sweep* find(const std::string& id);
  const Sweep* find(const std::string& id) const;

  std::string dir_;
  SweepLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // the monitor's wake-up, and a sweep's end for cancel()
  std::mutex start_mu_;         // one start at a time (check, then spawn)
  std::deque<Sweep> sweeps_;    // oldest first
  std::string running_;         // id of the running sweep, or empty
  long next_id_ = 0;
  bool stop_ = false;
  std::thread monitor_;
};

}  // namespace ufno
