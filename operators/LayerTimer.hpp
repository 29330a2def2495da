#pragma once
// Per-layer wall-time breakdown of a forward pass, switched on with UFNO_PROFILE=1 (off: one
// branch per layer). Each scope fences the execution space so that the time is the layer's own.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "operators/Tensor.hpp"

namespace ufno {

class LayerTimer {
 public:
  static LayerTimer& instance() {
    static LayerTimer t;
    return t;
  }
  bool enabled() const { return enabled_; }
  void add(const std::string& name, double seconds) {
    auto& e = totals_[name];
    e.first += seconds;
    e.second += 1;
  }
  // Prints and clears the table (rank 0 decides whether to call it).
  void report(const char* title) {
    if (!enabled_ || totals_.empty()) return;
    double all = 0;
    // Names that start with a space are parts of an enclosing scope: listed, not summed again.
    for (auto& [k, v] : totals_)
      if (k.empty() || k[0] != ' ') all += v.first;
    std::fprintf(stderr, "%s: per-layer time (UFNO_PROFILE), %.3f s in all\n", title, all);
    for (auto& [k, v] : totals_)
      std::fprintf(stderr, "  %-28s %8.3f s %5.1f %%  (%ld calls)\n", k.c_str(), v.first,
                   100 * v.first / all, v.second);
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
  LayerTimer() {
    const char* e = std::getenv("UFNO_PROFILE");
    enabled_ = e && std::string(e) == "1";
  }
  bool enabled_ = false;
  std::map<std::string, std::pair<double, long>> totals_;
};

}  // namespace ufno
