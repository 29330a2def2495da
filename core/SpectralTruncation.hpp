#pragma once
// Mode truncation and its inverse, zero-padding, along one axis of a complex (B, C, *, *, *)
// tensor. An axis of length n keeps its `low` first bins and its `high` last bins (the negative
// frequencies); the FNO keeps low = high = m on X and Y and low = m, high = 0 on the r2c T axis.
#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno {

// dst has extent low + high along `axis`; src has the full extent n.
inline void truncate_modes(const CTensor& src, const CTensor& dst, int axis, int low, int high) {
  LayerTimer::Scope timer("  fft truncate / zero-pad");
  const int n = int(src.extent(axis));
  ufno::parallel_for(
      "ufno::truncate_modes", range5(dst), KOKKOS_LAMBDA(int b, int c, int x, int y, int t) {
        int i[5] = {b, c, x, y, t};
        const int j = i[axis];
        i[axis] = j < low ? j : n - high + (j - low);
        dst(b, c, x, y, t) = src(i[0], i[1], i[2], i[3], i[4]);
      });
  (void)high;
}

// dst has the full extent n along `axis`; bins that src does not hold become zero.
inline void zero_pad_modes(const CTensor& src, const CTensor& dst, int axis, int low, int high) {
  LayerTimer::Scope timer("  fft truncate / zero-pad");
  const int n = int(dst.extent(axis));
  ufno::parallel_for(
      "ufno::zero_pad_modes", range5(dst), KOKKOS_LAMBDA(int b, int c, int x, int y, int t) {
        int i[5] = {b, c, x, y, t};
        const int j = i[axis];
        if (j < low) {
          dst(b, c, x, y, t) = src(b, c, x, y, t);
        } else if (j >= n - high) {
          i[axis] = low + j - (n - high);
          dst(b, c, x, y, t) = src(i[0], i[1], i[2], i[3], i[4]);
        } else {
          dst(b, c, x, y, t) = complexf(0.f, 0.f);
        }
      });
}

}  // namespace ufno
