#pragma once
// A record of every launch of a forward pass, kept only while a LaunchLog is active: the
// project's own kernels (every ufno::parallel_for, parallel_count and parallel_runs, and the
// CUDA backend's own <<<>>> kernels) and each call into a vendor library that runs work (cuBLAS
// and oneDNN GEMMs and activations, cuDNN and oneDNN convolutions, cuFFT and FFTW executions),
// each call site logging itself. What the tests read to prove that the GPU plan launches few,
// wide kernels, and the launch count of a pass. Costs one load and branch per launch when no log
// is active; recording is thread-safe (vendor calls may come from host threads).
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ufno {

enum class LaunchKind { Kernel, Library };

struct Launch {
  std::string label;
  int64_t iterations = 0;  // parallel iterations (threads on a GPU); 1 for a library call
  int64_t values = 0;      // values the launch covers (iterations x values per iteration); 0
                           // for a library call
  LaunchKind kind = LaunchKind::Kernel;
};

class LaunchLog {
 public:
  LaunchLog() : previous_(active()) { active() = this; }
  ~LaunchLog() { active() = previous_; }
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;

  const std::vector<Launch>& launches() const { return launches_; }
  // The launches of one kind (the project's kernels, or the vendor library calls).
  std::vector<Launch> of_kind(LaunchKind k) const {
    std::vector<Launch> r;
    for (const Launch& l : launches_)
      if (l.kind == k) r.push_back(l);
    return r;
  }
  void clear() { launches_.clear(); }

  // One of the project's kernels.
  static void record(const char* label, int64_t iterations, int64_t values) {
    if (LaunchLog* log = active()) log->push({label, iterations, values, LaunchKind::Kernel});
  }
  // One vendor library call that runs work on the device (or the host backend's threads).
  static void record_library(const char* label) {
    if (LaunchLog* log = active()) log->push({label, 1, 0, LaunchKind::Library});
  }

 private:
  static LaunchLog*& active() {
    static LaunchLog* log = nullptr;
    return log;
  }
  void push(Launch l) {
    std::lock_guard<std::mutex> lock(mutex_);
    launches_.push_back(std::move(l));
  }
  LaunchLog* previous_;
  std::mutex mutex_;
  std::vector<Launch> launches_;
};

}  // namespace ufno
