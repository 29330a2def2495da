#pragma once
// Pointwise activations. They are also fused into convolutions (oneDNN post-ops) and into the
// residual sums of the Fourier layers; these standalone forms serve the head and the tests.
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno {

// GELU is the exact one, x * 0.5 * (1 + erf(x / sqrt 2)), as the 4-D FNO uses (not the tanh form).
enum class Activation { None, ReLU, LeakyReLU, GELU };

// erf moved out of Kokkos::Experimental in Kokkos 4.
KOKKOS_INLINE_FUNCTION float erf_of(float v) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::erf(v);
#else
  return Kokkos::Experimental::erf(v);
#endif
}

KOKKOS_INLINE_FUNCTION float activate(Activation a, float slope, float v) {
  if (a == Activation::ReLU) return v > 0.f ? v : 0.f;
  if (a == Activation::LeakyReLU) return v > 0.f ? v : slope * v;
  if (a == Activation::GELU) return 0.5f * v * (1.f + erf_of(v * 0.70710678118654752f));
  return v;
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
