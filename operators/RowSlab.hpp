#pragma once
// A slab of X rows of a channels-first tensor, copied out channels last: the input of a
// convolution that runs on the slab alone (ConvSpec::padding_x = 0, the slab bringing its own
// halo rows). Rows outside the grid come out zero, the convolution's zero padding.
#include <stdexcept>

#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

namespace ufno {

// One (row, y) line of a channels-first tensor, C channels of T cells (channel c at src + c *
// channel_stride), written channels last: cell t's values start at dst + t * cell_stride. Read in
// contiguous runs of T, transposed within a few kilobytes, so both sides stream.
KOKKOS_INLINE_FUNCTION void line_to_channels_last(const float* src, long channel_stride, int C,
                                                  int T, float* dst, int cell_stride) {
  for (int c = 0; c < C; ++c)
    for (int t = 0; t < T; ++t) dst[t * cell_stride + c] = src[c * channel_stride + t];
}

// Rows j0 .. j0 + J - 1 (global X indices) of case b of x (B, C, X, Y, T) as (1, J, Y, T, C).
inline Tensor channels_last_rows(const Tensor& x, int b, int j0, int J) {
  const int C = x.extent(1), X = x.extent(2), Y = x.extent(3), T = x.extent(4);
  if (b < 0 || b >= int(x.extent(0)) || J < 1)
    throw std::invalid_argument("channels_last_rows: case or row count out of range");
  Tensor out = temporary_tensor("rows.channels_last", 1, J, Y, T, C);
  const long plane = long(X) * Y * T;
  const long len = long(T) * C;  // values of one (row, y) line
  ufno::parallel_runs(
      "ufno::channels_last_rows", long(J) * Y, len,
      KOKKOS_LAMBDA(const int64_t line, int64_t v0, int64_t v1) {
        const int j = int(line / Y), y = int(line % Y), g = j0 + j;
        float* dst = out.data() + line * len;
        if (g < 0 || g >= X) {
          for (int64_t v = v0; v < v1; ++v) dst[v] = 0.f;
        } else if (v0 == 0 && v1 == len) {  // a whole line (streaming plan): blocked transpose
          line_to_channels_last(&x(b, 0, g, y, 0), plane, C, T, dst, C);
        } else {  // value by value (whole-tensor plan): consecutive threads, consecutive stores
          const float* src = &x(b, 0, g, y, 0);
          for (int64_t v = v0; v < v1; ++v) dst[v] = src[(v % C) * plane + v / C];
        }
      });
  return out;
}

}  // namespace ufno
