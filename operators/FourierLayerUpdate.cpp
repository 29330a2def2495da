#include "operators/FourierLayerUpdate.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/Parallel.hpp"

namespace ufno {

namespace {

// The U-Net term of a block of columns, channels first: value (c, v) at data[c * channel_stride
// + v], v = column * T + t counted from the block's first column. No data: no U-Net term.
struct UnetTerm {
  const float* data = nullptr;
  long channel_stride = 0;
};

// x <- relu(T^-1(modes) + w(x) + u) on `cols` columns of T values for every channel: x's channel
// c starts at xb + c * x_plane, its T modes at mb + c * m_plane, all at the block's first column.
void update_columns(float* xb, long x_plane, const complexf* mb, long m_plane, UnetTerm u,
                    long cols, const fft::TruncatedRealDft& t_inverse, const Linear& w,
                    long chunk) {
  const int C = w.in_channels(), T = t_inverse.length(), m = t_inverse.kept();
  if (cols == 0) return;
  const long R = std::max(1L, std::min(chunk, cols));
  Kokkos::View<float*, DeviceSpace> tmp(Kokkos::view_alloc(Kokkos::WithoutInitializing, "flu.tmp"),
                                        long(C) * R * T);
  float* t = tmp.data();
  for (long r0 = 0; r0 < cols; r0 += R) {
    const long n = std::min(R, cols - r0) * T;  // values per channel in this group
    if (u.data) {                               // a contiguous run per channel
      const float* ub = u.data + r0 * T;
      const long cs = u.channel_stride;
      ufno::parallel_for(
          "ufno::flu_take_unet", Kokkos::RangePolicy<ExecSpace>(0, C),
          KOKKOS_LAMBDA(const int64_t c) {
            for (long v = 0; v < n; ++v) t[c * n + v] = ub[c * cs + v];
          });
    }
    t_inverse.backward_batched(mb + r0 * m, m_plane, t, n, C, n / T, u.data ? 1.f : 0.f);
    w.apply_columns(xb + r0 * T, x_plane, t, n, n, /*accumulate=*/true, Activation::ReLU);
    ufno::parallel_for(
        "ufno::flu_write_back", Kokkos::RangePolicy<ExecSpace>(0, C),
        KOKKOS_LAMBDA(const int64_t c) {
          float* dst = xb + c * x_plane + r0 * T;
          for (long v = 0; v < n; ++v) dst[v] = t[c * n + v];
        });
  }
}

void check_layer(const Tensor& x, const fft::TruncatedRealDft& t_inverse, const Linear& w) {
  const int C = x.extent(1);
  if (int(x.extent(4)) != t_inverse.length() || w.in_channels() != C || w.out_channels() != C)
    throw std::invalid_argument("fourier_layer_update: x " + to_string(shape_of(x)) +
                                " does not fit the T transform or w");
}

}  // namespace

void fourier_layer_update(const Tensor& x, const CTensor& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w, const Tensor& u,
                          long columns_per_chunk) {
  check_layer(x, t_inverse, w);
  const int B = x.extent(0), C = x.extent(1), T = x.extent(4), m = t_inverse.kept();
  const long cols = long(x.extent(2)) * x.extent(3);
  if (t_modes.extent(0) != x.extent(0) || t_modes.extent(1) != x.extent(1) ||
      t_modes.extent(2) != x.extent(2) || t_modes.extent(3) != x.extent(3) ||
      int(t_modes.extent(4)) != m || (u.data() && shape_of(u) != shape_of(x)))
    throw std::invalid_argument("fourier_layer_update: x " + to_string(shape_of(x)) + ", T modes " +
                                to_string(shape_of(t_modes)) + ", U-Net branch " +
                                to_string(shape_of(u)) + " do not fit together");
  const long plane = cols * T;  // one channel of one case
  for (int b = 0; b < B; ++b) {
    UnetTerm ut;
    if (u.data()) ut = {u.data() + long(b) * C * plane, plane};
    update_columns(x.data() + long(b) * C * plane, plane, t_modes.data() + long(b) * C * cols * m,
                   cols * m, ut, cols, t_inverse, w, columns_per_chunk);
  }
}

void fourier_layer_update_rows(const Tensor& x, int b, int r0, const CTensor& t_modes_rows,
                               const fft::TruncatedRealDft& t_inverse, const Linear& w,
                               const Tensor& u_rows, long columns_per_chunk) {
  check_layer(x, t_inverse, w);
  const int C = x.extent(1), X = x.extent(2), Y = x.extent(3), T = x.extent(4);
  const int m = t_inverse.kept(), R = t_modes_rows.extent(2);
  if (b < 0 || b >= int(x.extent(0)) || r0 < 0 || r0 + R > X || t_modes_rows.extent(0) != 1 ||
      int(t_modes_rows.extent(1)) != C || int(t_modes_rows.extent(3)) != Y ||
      int(t_modes_rows.extent(4)) != m ||
      (u_rows.data() && shape_of(u_rows) != Shape5{1, C, R, Y, T}))
    throw std::invalid_argument("fourier_layer_update_rows: x " + to_string(shape_of(x)) +
                                ", rows from " + std::to_string(r0) + ", T modes " +
                                to_string(shape_of(t_modes_rows)) + ", U-Net rows " +
                                to_string(shape_of(u_rows)) + " do not fit together");
  const long plane = long(X) * Y * T, cols = long(R) * Y;
  UnetTerm ut;
  if (u_rows.data()) ut = {u_rows.data(), long(R) * Y * T};
  update_columns(x.data() + long(b) * C * plane + long(r0) * Y * T, plane, t_modes_rows.data(),
                 cols * m, ut, cols, t_inverse, w, columns_per_chunk);
}

}  // namespace ufno
