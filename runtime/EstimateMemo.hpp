#pragma once
// A memo of a case's physics estimates (runtime/PressureEstimates.hpp) within one process: the
// maximum-dP head reads its estimate when the peak match shapes the dP field and again when the
// KPI stage of a sweep or of the server reports the KPI, and the buoyancy-aware estimate takes
// 0.07-0.4 s a case on one core. A key is the whole case (every member of ReservoirCase but its
// path), the report times and which estimate, compared value by value: a hit is the same input,
// never a hash that happens to agree.
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

class EstimateMemo {
 public:
  explicit EstimateMemo(std::size_t capacity) : capacity_(capacity) {}

  // The stored value for (estimate, c, times_days), else compute()'s, stored (the oldest entry
  // leaves beyond the capacity). compute runs outside the lock, so threads estimating other cases
  // do not wait; two threads that miss on the same case both compute it.
  double get(int estimate, const ReservoirCase& c, const std::vector<double>& times_days,
             const std::function<double()>& compute);
  // How many times get() ran compute (for the tests).
  long computed() const;

 private:
  static std::vector<double> key_of(int estimate, const ReservoirCase& c,
                                    const std::vector<double>& times_days);
  struct Entry {
    std::vector<double> key;
    double value = 0;
  };
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
  long computed_ = 0;
};

// Which estimate a key names in max_dp_estimate_memo(): those a maximum-dP head reads last.
namespace max_dp_estimate {
constexpr int kFirstReport = 0, kGravity = 1, kTwoPhase = 2;
}  // namespace max_dp_estimate

// The process's memo of the maximum-dP head's estimates: 64 cases, a pass's or more (about
// 30 KB a case on the paper's grid).
EstimateMemo& max_dp_estimate_memo();

}  // namespace ufno
