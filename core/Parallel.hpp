#pragma once
// ufno::parallel_for: Kokkos::parallel_for over the default execution space, but threaded on the
// host even when that space is Kokkos::Serial.
//
// Why: Debian's Kokkos 3.4 (Trilinos) has only the Serial backend, so every Kokkos kernel ran on
// one thread while FFTW and oneDNN used all the threads set_threads() gives them; the
// copy and elementwise kernels (padding, concatenation, truncation, residual sums, repartition
// packing) became a large share of a multi-threaded forward pass. On a Serial default space this
// splits the policy's index range over the OpenMP threads (the pool and thread count oneDNN
// already uses, set by backend::set_threads) and calls the functor directly; with any parallel
// Kokkos backend (OpenMP, Threads, CUDA) it is exactly Kokkos::parallel_for. Functors must be
// free of races between iterations, as Kokkos requires anyway.
#include <cstdint>
#include <type_traits>

#include "core/ExecutionPlan.hpp"
#include "core/LaunchLog.hpp"
#include "core/Tensor.hpp"

// Translation units built without OpenMP (nvcc's host pass) run the same loops on one thread.
#if defined(_OPENMP)
#define UFNO_OMP(directive) _Pragma(#directive)
#else
#define UFNO_OMP(directive)
#endif

namespace ufno {

#if defined(KOKKOS_ENABLE_SERIAL)
inline constexpr bool kSerialHostSpace = std::is_same_v<ExecSpace, Kokkos::Serial>;
#else
inline constexpr bool kSerialHostSpace = false;
#endif

template <class F>
void parallel_for(const char* label, const Kokkos::RangePolicy<ExecSpace>& p, const F& f) {
  const int64_t n = int64_t(p.end()) - int64_t(p.begin());
  LaunchLog::record(label, n, n);
  if constexpr (kSerialHostSpace) {
    const int64_t b = int64_t(p.begin()), e = int64_t(p.end());
    UFNO_OMP(omp parallel for schedule(static))
    for (int64_t i = b; i < e; ++i) f(i);
  } else {
    Kokkos::parallel_for(label, p, f);
  }
}

// parallel_for whose iterations each return a count (long), summed: a kernel that also reports
// how many of the values it read were suspect, at no extra pass over them.
template <class F>
long parallel_count(const char* label, const Kokkos::RangePolicy<ExecSpace>& p, const F& f) {
  long total = 0;
  LaunchLog::record(label, int64_t(p.end()) - int64_t(p.begin()),
                    int64_t(p.end()) - int64_t(p.begin()));
  if constexpr (kSerialHostSpace) {
    const int64_t b = int64_t(p.begin()), e = int64_t(p.end());
    UFNO_OMP(omp parallel for schedule(static) reduction(+ : total))
    for (int64_t i = b; i < e; ++i) total += f(i);
  } else {
    Kokkos::parallel_reduce(
        label, p, KOKKOS_LAMBDA(const int64_t i, long& sum) { sum += f(i); }, total);
  }
  return total;
}

// Rank-4 and rank-5 index ranges (RowMajorRange, core/Tensor.hpp: the rightmost index fastest
// on every backend): on a serial host space the outer dimensions are shared out and the inner two
// run in order on one thread (the innermost is the contiguous one, so it vectorises).
template <unsigned R, class F>
void parallel_for(const char* label, const RowMajorRange<R>& p, const F& f) {
  static_assert(R == 4 || R == 5, "ufno::parallel_for takes rank-4 and rank-5 ranges");
  static_assert(RowMajorRange<R>::outer_direction == Kokkos::Iterate::Right &&
                    RowMajorRange<R>::inner_direction == Kokkos::Iterate::Right,
                "MDRange kernels iterate the rightmost (contiguous) index fastest");
  int64_t n = 1;
  for (unsigned a = 0; a < R; ++a) n *= int64_t(p.m_upper[a]) - int64_t(p.m_lower[a]);
  LaunchLog::record(label, n, n);
  if constexpr (!kSerialHostSpace) {
    Kokkos::parallel_for(label, p, f);
  } else if constexpr (R == 4) {
    const auto lo = p.m_lower, hi = p.m_upper;
    UFNO_OMP(omp parallel for collapse(2) schedule(static))
    for (int64_t a = lo[0]; a < hi[0]; ++a)
      for (int64_t b = lo[1]; b < hi[1]; ++b)
        for (int64_t c = lo[2]; c < hi[2]; ++c)
          for (int64_t d = lo[3]; d < hi[3]; ++d) f(a, b, c, d);
  } else {
    const auto lo = p.m_lower, hi = p.m_upper;
    UFNO_OMP(omp parallel for collapse(3) schedule(static))
    for (int64_t a = lo[0]; a < hi[0]; ++a)
      for (int64_t b = lo[1]; b < hi[1]; ++b)
        for (int64_t c = lo[2]; c < hi[2]; ++c)
          for (int64_t d = lo[3]; d < hi[3]; ++d)
            for (int64_t e = lo[4]; e < hi[4]; ++e) f(a, b, c, d, e);
  }
}

// `rows` runs of `len` contiguous values: f(row, begin, end) handles values [begin, end) of one
// row. The execution plan (core/ExecutionPlan.hpp) says how many values an iteration takes: a
// whole row on the streaming plan (the loop inside f vectorises), one on the whole-tensor plan
// (a thread per value, neighbouring threads on neighbouring values).
template <class F>
void parallel_runs(const char* label, int64_t rows, int64_t len, const F& f) {
  if (rows <= 0 || len <= 0) return;
  const int64_t run = len < execution_plan().values_per_iteration
                          ? len
                          : int64_t(execution_plan().values_per_iteration);
  const int64_t per_row = (len + run - 1) / run;
  LaunchLog::record(label, rows * per_row, rows * len);
  const auto body = KOKKOS_LAMBDA(const int64_t i) {
    const int64_t r = i / per_row, j0 = (i % per_row) * run;
    f(r, j0, j0 + run < len ? j0 + run : len);
  };
  if constexpr (kSerialHostSpace) {
    UFNO_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < rows * per_row; ++i) body(i);
  } else {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(0, rows * per_row), body);
  }
}

// Iterations 0 .. n - 1 of a host-only kernel (host pointers, CPU intrinsics) on the host's
// threads, whatever the default execution space is: OpenMP threads when the host space is
// Kokkos::Serial, as above, and the host execution space's own threads otherwise.
template <class F>
void host_parallel_for(const char* label, int64_t n, const F& f) {
  if constexpr (std::is_same_v<Kokkos::DefaultHostExecutionSpace, Kokkos::Serial>) {
    (void)label;
    UFNO_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n), f);
  }
}

}  // namespace ufno
