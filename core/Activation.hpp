#pragma once
// Pointwise activations. They are also fused into convolutions (oneDNN post-ops) and into the
// residual sums of the Fourier layers; these standalone forms serve the head and the tests.
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno {

// GELU is the exact one, x * 0.5 * (1 + erf(x / sqrt 2)), as the 4-D FNO uses (not the tanh form).
enum class Activation { None, ReLU, LeakyReLU, GELU };

// erf as a branch-free rational function, x P(x^2) / Q(x^2) on |x| <= 3.92 (erf is 1 in float32
// beyond), least-squares fitted to the absolute error: within 4e-7 of erf in float32, a few
// units in the last place. std::erf is a scalar library call that no loop vectorises; this one
// vectorises, and gives the same numbers on every backend. The clamps are two plain selects:
// GCC vectorises those (with -fno-trapping-math, CMakeLists.txt), but not fminf or a nested
// select. NaN stays NaN (a select on a false compare keeps it).
KOKKOS_INLINE_FUNCTION float erf_of(float v) {
  float a = v > 3.92f ? 3.92f : v;
  a = a < -3.92f ? -3.92f : a;
  const float z = a * a;
  const float p =
      1.1283790e+00f +
      z * (1.9276600e-01f +
           z * (5.3060734e-02f + z * (3.8684020e-03f + z * (2.8748015e-04f + z * 2.0347164e-06f))));
  const float q =
      1.f +
      z * (5.0416609e-01f +
           z * (1.1508542e-01f + z * (1.5172455e-02f + z * (1.1881308e-03f + z * 3.8070465e-05f))));
  float e = a * p / q;
  e = v >= 3.92f ? 1.f : e;  // exactly +-1 beyond, so GELU is exactly 0 far below 0
  e = v <= -3.92f ? -1.f : e;
  return e;
}

KOKKOS_INLINE_FUNCTION float gelu_of(float v) {
  return 0.5f * v * (1.f + erf_of(v * 0.70710678118654752f));
}

KOKKOS_INLINE_FUNCTION float activate(Activation a, float slope, float v) {
  if (a == Activation::ReLU) return v > 0.f ? v : 0.f;
  if (a == Activation::LeakyReLU) return v > 0.f ? v : slope * v;
  if (a == Activation::GELU) return gelu_of(v);
  return v;
}

// dst[i] = act(src[i]) for i < n, on one thread; a vector loop for GELU (the others are a
// compare or a copy, which any loop vectorises). dst may equal src.
KOKKOS_INLINE_FUNCTION void activate_run(Activation a, float slope, const float* src, float* dst,
                                         long n) {
  if (a == Activation::GELU) {
    UFNO_OMP(omp simd)
    for (long i = 0; i < n; ++i) dst[i] = gelu_of(src[i]);
  } else {
    for (long i = 0; i < n; ++i) dst[i] = activate(a, slope, src[i]);
  }
}

// In place on any contiguous tensor.
template <class View>
void apply_activation(const View& x, Activation a, float slope = 0.f) {
  if (a == Activation::None) return;
  float* p = x.data();
  ufno::parallel_for(
      "ufno::activation", Kokkos::RangePolicy<ExecSpace>(0, x.span()),
      KOKKOS_LAMBDA(const std::size_t i) { p[i] = activate(a, slope, p[i]); });
}

struct ReLU {
  void forward(const Tensor& x) const { apply_activation(x, Activation::ReLU); }
};

struct LeakyReLU {
  float slope = 0.1f;
  void forward(const Tensor& x) const { apply_activation(x, Activation::LeakyReLU, slope); }
};

}  // namespace ufno
