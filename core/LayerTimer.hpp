#pragma once
// Per-layer wall-time breakdown of a forward pass, switched on with UFNO_PROFILE=1 (off: one
// branch per layer). Each scope fences the execution space so that the time is the layer's own.
// It also records the process's peak resident set size when a scope first ends: the layers whose
// figure is above those run before them are the ones that raised the peak.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "core/Tensor.hpp"

namespace ufno {

class LayerTimer {
 public:
  static LayerTimer& instance() {
    static LayerTimer t;
    return t;
  }
  bool enabled() const { return enabled_; }
  void set_enabled(bool on) { enabled_ = on; }  // RunOptions::profile, set by the programs
  void add(const std::string& name, double seconds) {
    auto& e = totals_[name];
    e.seconds += seconds;
    e.calls += 1;
    if (e.calls == 1) e.first_peak_rss_mb = peak_rss_mb();
  }
  static double peak_rss_mb() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
  }
  // Prints and clears the table (rank 0 decides whether to call it).
  void report(const char* title) {
    if (!enabled_ || totals_.empty()) return;
    double all = 0;
    // Names that start with a space are parts of an enclosing scope: listed, not summed again.
    for (auto& [k, v] : totals_)
      if (k.empty() || k[0] != ' ') all += v.seconds;
    std::fprintf(stderr, "%s: per-layer time (UFNO_PROFILE), %.3f s in all\n", title, all);
    for (auto& [k, v] : totals_)
      std::fprintf(stderr,
                   "  %-28s %8.3f s %5.1f %%  (%ld calls)  peak RSS after the first: %.0f MB\n",
                   k.c_str(), v.seconds, 100 * v.seconds / all, v.calls, v.first_peak_rss_mb);
    totals_.clear();
  }

  class Scope {
   public:
    explicit Scope(const char* name) : name_(name) {
      if (LayerTimer::instance().enabled()) {
        Kokkos::fence();
        t0_ = std::chrono::steady_clock::now();
      }
    }
    ~Scope() {
      if (!LayerTimer::instance().enabled()) return;
      Kokkos::fence();
      LayerTimer::instance().add(
          name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
    }

   private:
    const char* name_;
    std::chrono::steady_clock::time_point t0_;
  };

 private:
  LayerTimer() = default;
  bool enabled_ = false;
  struct Entry {
    double seconds = 0;
    long calls = 0;
    double first_peak_rss_mb = 0;  // process peak when the scope first ended
  };
  std::map<std::string, Entry> totals_;
};

}  // namespace ufno
