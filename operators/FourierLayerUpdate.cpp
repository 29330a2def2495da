#include "operators/FourierLayerUpdate.hpp"

#include <algorithm>
#include <stdexcept>

#include "operators/Parallel.hpp"

namespace ufno {

void fourier_layer_update(const Tensor& x, const CTensor& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w, const Tensor& u,
                          long columns_per_chunk) {
  const int B = x.extent(0), C = x.extent(1), T = x.extent(4), m = t_inverse.kept();
  const long cols = long(x.extent(2)) * x.extent(3);
  if (t_modes.extent(0) != x.extent(0) || t_modes.extent(1) != x.extent(1) ||
      t_modes.extent(2) != x.extent(2) || t_modes.extent(3) != x.extent(3) ||
      int(t_modes.extent(4)) != m || T != t_inverse.length() || w.in_channels() != C ||
      w.out_channels() != C || (u.data() && shape_of(u) != shape_of(x)))
    throw std::invalid_argument("fourier_layer_update: x " + to_string(shape_of(x)) + ", T modes " +
                                to_string(shape_of(t_modes)) + ", U-Net branch " +
                                to_string(shape_of(u)) + " do not fit together");
  if (B == 0 || cols == 0) return;
  const long R = std::max(1L, std::min(columns_per_chunk, cols));
  Kokkos::View<float*, DeviceSpace> tmp(Kokkos::view_alloc(Kokkos::WithoutInitializing, "flu.tmp"),
                                        long(C) * R * T);
  float* t = tmp.data();
  const long plane = cols * T;  // one channel of one case
  for (int b = 0; b < B; ++b) {
    float* xb = x.data() + long(b) * C * plane;
    const complexf* mb = t_modes.data() + long(b) * C * cols * m;
    const float* ub = u.data() ? u.data() + long(b) * C * plane : nullptr;
    for (long r0 = 0; r0 < cols; r0 += R) {
      const long n = std::min(R, cols - r0) * T;  // values per channel in this group
      // One iteration per channel, a contiguous run of n values each (no division per value).
      if (ub)
        ufno::parallel_for(
            "ufno::flu_take_unet", Kokkos::RangePolicy<ExecSpace>(0, C),
            KOKKOS_LAMBDA(const int64_t c) {
              const float* src = ub + c * plane + r0 * T;
              for (long v = 0; v < n; ++v) t[c * n + v] = src[v];
            });
      t_inverse.backward_batched(mb + r0 * m, cols * m, t, n, C, n / T, ub ? 1.f : 0.f);
      w.apply_columns(xb + r0 * T, plane, t, n, n, /*accumulate=*/true, Activation::ReLU);
      ufno::parallel_for(
          "ufno::flu_write_back", Kokkos::RangePolicy<ExecSpace>(0, C),
          KOKKOS_LAMBDA(const int64_t c) {
            float* dst = xb + c * plane + r0 * T;
            for (long v = 0; v < n; ++v) dst[v] = t[c * n + v];
          });
    }
  }
}

}  // namespace ufno
