#pragma once
// How the layers lay out their work on the device, as data (heFFTe builds a different plan per
// backend from the same boxes): two plans, one per kind of processor, the default chosen by the
// backend's traits.
//
// - Streaming (the CPU's): work is cut into cache-sized pieces (pruned-transform slices, pointwise
//   chunks, U-Net slabs of a few X rows) and a one-rank Fourier layer finishes in groups of X
//   rows, so intermediates stay in a core's cache and no whole-grid temporary exists. One kernel
//   iteration walks a whole contiguous row, which the compiler vectorises.
// - Whole tensor (the GPU's): every kernel runs once over a whole tensor with one value per
//   iteration (a thread per value, neighbouring threads on neighbouring values: coalesced), the
//   products run whole (one cuBLAS call, not one per cache block), the Fourier layer ends over
//   the whole block and the U-Net top level in one slab. A GPU has no cache to fit and gains
//   everything from launching few, wide kernels.
//
// Both plans compute the same values: the whole-tensor plan runs on the host too, and the tests
// compare it with the streaming plan there (tests/test_execution_plan.cpp).
#include <climits>
#include <string>

#include "core/Backend.hpp"

namespace ufno {

enum class PlanKind { Streaming, WholeTensor };

struct ExecutionPlan {
  PlanKind kind = PlanKind::Streaming;
  // Contiguous values one kernel iteration handles at most (parallel_runs): a whole row on the
  // CPU, one on the GPU.
  long values_per_iteration = LONG_MAX;
  bool cache_blocked = true;  // products and pointwise layers in cache-sized pieces
  bool streams_rows = true;   // one-rank Fourier layers and U-Net top levels in X-row groups

  static constexpr ExecutionPlan streaming() { return {}; }
  static constexpr ExecutionPlan whole_tensor() { return {PlanKind::WholeTensor, 1, false, false}; }
  static constexpr ExecutionPlan of(PlanKind k) {
    return k == PlanKind::WholeTensor ? whole_tensor() : streaming();
  }
};

namespace backend {
// The plan each backend runs by default.
template <class Tag>
struct PlanTraits {
  static constexpr PlanKind plan = PlanKind::Streaming;
};
template <>
struct PlanTraits<Cuda> {
  static constexpr PlanKind plan = PlanKind::WholeTensor;
};
}  // namespace backend

inline ExecutionPlan& current_plan_storage() {
  static ExecutionPlan plan = ExecutionPlan::of(backend::PlanTraits<backend::Default>::plan);
  return plan;
}

// The process's plan (like its thread count, a process-wide setting, applied by the programs
// from RunOptions::plan; the layers read it when they run).
inline const ExecutionPlan& execution_plan() { return current_plan_storage(); }
inline void set_execution_plan(PlanKind k) { current_plan_storage() = ExecutionPlan::of(k); }
inline PlanKind default_plan_kind() { return backend::PlanTraits<backend::Default>::plan; }

inline const char* plan_name(PlanKind k) {
  return k == PlanKind::WholeTensor ? "whole-tensor" : "streaming";
}
// "streaming" / "whole-tensor"; false for anything else.
inline bool parse_plan_kind(const std::string& s, PlanKind& k) {
  for (PlanKind c : {PlanKind::Streaming, PlanKind::WholeTensor})
    if (s == plan_name(c)) {
      k = c;
      return true;
    }
  return false;
}

// Sets a plan for a scope and restores the previous one (tests, benchmarks).
class ScopedExecutionPlan {
 public:
  explicit ScopedExecutionPlan(PlanKind k) : saved_(execution_plan()) { set_execution_plan(k); }
  ~ScopedExecutionPlan() { current_plan_storage() = saved_; }
  ScopedExecutionPlan(const ScopedExecutionPlan&) = delete;
  ScopedExecutionPlan& operator=(const ScopedExecutionPlan&) = delete;

 private:
  ExecutionPlan saved_;
};

}  // namespace ufno
