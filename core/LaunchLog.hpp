#pragma once
// A record of the project's own kernel launches (every ufno::parallel_for, parallel_count and
// parallel_runs), kept only while a LaunchLog is active: what the tests read to prove that the
// GPU plan launches few, wide kernels. Vendor library calls (cuBLAS, cuFFT, cuDNN, oneDNN, FFTW)
// are not recorded. Costs one load and branch per launch when no log is active.
#include <cstdint>
#include <string>
#include <vector>

namespace ufno {

struct Launch {
  std::string label;
  int64_t iterations = 0;  // parallel iterations (threads on a GPU)
  int64_t values = 0;      // values the launch covers (iterations x values per iteration)
};

class LaunchLog {
 public:
  LaunchLog() : previous_(active()) { active() = this; }
  ~LaunchLog() { active() = previous_; }
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;

  const std::vector<Launch>& launches() const { return launches_; }
  void clear() { launches_.clear(); }

  static void record(const char* label, int64_t iterations, int64_t values) {
    if (LaunchLog* log = active()) log->launches_.push_back({label, iterations, values});
  }

 private:
  static LaunchLog*& active() {
    static LaunchLog* log = nullptr;
    return log;
  }
  LaunchLog* previous_;
  std::vector<Launch> launches_;
};

}  // namespace ufno
