#pragma once
// How far two correct float32 runs of one network may drift apart when they sum the same terms
// in another order (ranks summing partial transforms, a GPU's products blocked otherwise than a
// CPU's), derived rather than tuned: a sum of n float32 terms carries at most about n u relative
// error (u = 2^-24, the first-order bound of recursive summation), so two orderings differ by at
// most 2 n u, and the errors of a layer's chained reductions add. Per Fourier layer the chain is
// the forward transform along every axis (its padded length), the mode mix (width terms), the
// inverse along every axis (2 kept modes per axis, the real axis m), w_k (width) and its sum
// with the spectral branch; the lift (in channels) and the head (width, hidden) come once. It is
// a worst-case bound (every rounding in one direction, sums without cancellation): the measured
// differences are 10-100x below it, and a misplaced mode, halo or block, 1e-3 and more, far
// above. The CPU and GPU builds are held to the same bound.
#include <array>

#include "core/Fno4dSpec.hpp"
#include "core/ModelSpec.hpp"

namespace ufno::test {

constexpr double kFloat32Unit = 1.0 / (1 << 24);

// The summed reduction lengths along one pass of a network of `layers` Fourier layers over D
// axes (the last one real: its inverse sums m terms, the others 2 m).
template <std::size_t D>
double reduction_terms(const std::array<int, D>& padded, const std::array<int, D>& modes, int width,
                       int layers, int in_channels, int hidden) {
  double per_layer = width + width + 1;  // mode mix, w_k, the branch sum
  for (std::size_t a = 0; a < D; ++a)
    per_layer += padded[a] + (a + 1 < D ? 2 * modes[a] : modes[a]);
  return layers * per_layer + in_channels + width + hidden;
}

// The relative L2 within which two correct orderings of a U-FNO / FNO pass agree.
inline double float32_reordering_bound(const ModelSpec& s) {
  return 2 * kFloat32Unit *
         reduction_terms<3>(s.padded_grid(), s.modes, s.width, s.layers(), s.in_channels, s.hidden);
}

// The same for a 4-D FNO.
inline double float32_reordering_bound(const Fno4dSpec& s) {
  return 2 * kFloat32Unit *
         reduction_terms<4>(s.padded_grid(), s.modes, s.width, s.layers, s.in_channels, s.hidden);
}

}  // namespace ufno::test
