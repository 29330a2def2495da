#pragma once
// Pointwise activations. They are also fused into convolutions (oneDNN post-ops) and into the
// residual sums of the Fourier layers; these standalone forms serve the head and the tests.
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno {

enum class Activation { None, ReLU, LeakyReLU };

KOKKOS_INLINE_FUNCTION float activate(Activation a, float slope, float v) {
  if (a == Activation::ReLU) return v > 0.f ? v : 0.f;
  if (a == Activation::LeakyReLU) return v > 0.f ? v : slope * v;
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
