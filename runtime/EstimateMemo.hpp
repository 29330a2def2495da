#pragma once
// A memo of a case's physics estimates (runtime/PressureEstimates.hpp) within one process: the
// maximum-dP head reads them when the peak match shapes the dP field and again when the KPI
// stage of a sweep or of the server reports the KPI, and the buoyancy-aware estimate takes
// 0.07-0.4 s a case on one core, the r-z solves of the physics features tens of ms. A key is the
// whole case (every member of ReservoirCase but its path), the report times and which estimate,
// compared value by value: a hit is the same input, never a hash that happens to agree.
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "io/CaseFile.hpp"
#include "runtime/PressureEstimates.hpp"

namespace ufno {

// A case's key: every member of ReservoirCase but its path, the report times and which
// estimate, each array after its length.
std::vector<double> estimate_key(int estimate, const ReservoirCase& c,
                                 const std::vector<double>& times_days);

template <class Value>
class CaseMemo {
 public:
  explicit CaseMemo(std::size_t capacity) : capacity_(capacity) {}

  // The stored value for (estimate, c, times_days), else compute()'s, stored (the oldest entry
  // leaves beyond the capacity). compute runs outside the lock, so threads estimating other cases
  // do not wait; two threads that miss on the same case both compute it.
  Value get(int estimate, const ReservoirCase& c, const std::vector<double>& times_days,
            const std::function<Value()>& compute) {
    std::vector<double> key = estimate_key(estimate, c, times_days);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const Entry& e : entries_)
        if (e.key == key) return e.value;
    }
    Value value = compute();
    std::lock_guard<std::mutex> lock(mutex_);
    ++computed_;
    if (capacity_ == 0) return value;
    if (entries_.size() >= capacity_) entries_.pop_front();
    entries_.push_back({std::move(key), value});
    return value;
  }
  // How many times get() ran compute (for the tests).
  long computed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return computed_;
  }

 private:
  struct Entry {
    std::vector<double> key;
    Value value;
  };
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
  long computed_ = 0;
};
using EstimateMemo = CaseMemo<double>;

// The process's memo of the inputs a maximum-dP head reads after the three physics estimates
// (their logarithms), keyed by int(MaxDpExtraInputs): 64 cases, a pass's or more (about 30 KB
// a case on the paper's grid).
CaseMemo<std::vector<double>>& max_dp_estimate_memo();
// The process's memo of the buoyancy-aware estimate's summary (rz_gravity_two_phase_summary:
// the maximum-dP head's inputs and the dP-envelope head's, from one solve), as many cases (about
// 2 KB a case on the paper's grid).
CaseMemo<GravitySummary>& gravity_summary_memo();
// rz_gravity_two_phase_summary through that memo, each dissolution model its own entry.
GravitySummary memo_gravity_summary(const ReservoirCase& c, const std::vector<double>& times_days,
                                    Dissolution dissolution = Dissolution::kPoreVolume);
// The process's memo of max_dp_physics_features (the r-z solves both the peak match and the KPI
// stage's maximum-dP and envelope heads read), as many cases.
CaseMemo<MaxDpPhysics>& max_dp_physics_memo();

}  // namespace ufno
