#pragma once
// A slab of X rows of a channels-first tensor, copied out channels last: the input of a
// convolution that runs on the slab alone (ConvSpec::padding_x = 0, the slab bringing its own
// halo rows). Rows outside the grid come out zero, the convolution's zero padding.
#include <stdexcept>

#include "operators/Parallel.hpp"

namespace ufno {

// Rows j0 .. j0 + J - 1 (global X indices) of case b of x (B, C, X, Y, T) as (1, J, Y, T, C).
inline Tensor channels_last_rows(const Tensor& x, int b, int j0, int J) {
  const int C = x.extent(1), X = x.extent(2), Y = x.extent(3), T = x.extent(4);
  if (b < 0 || b >= int(x.extent(0)) || J < 1)
    throw std::invalid_argument("channels_last_rows: case or row count out of range");
  Tensor out = empty_tensor("rows.channels_last", 1, J, Y, T, C);
  // One (row, y) line per iteration: its C x T block is read channel by channel (contiguous
  // runs of T) and written transposed within a few kilobytes, so both sides stream.
  ufno::parallel_for(
      "ufno::channels_last_rows", Kokkos::RangePolicy<ExecSpace>(0, long(J) * Y),
      KOKKOS_LAMBDA(const int64_t line) {
        const int j = int(line / Y), y = int(line % Y), g = j0 + j;
        float* dst = out.data() + line * T * C;
        if (g < 0 || g >= X) {
          for (long v = 0; v < long(T) * C; ++v) dst[v] = 0.f;
          return;
        }
        for (int c = 0; c < C; ++c) {
          const float* src = &x(b, c, g, y, 0);
          for (int t = 0; t < T; ++t) dst[t * C + c] = src[t];
        }
      });
  return out;
}

}  // namespace ufno
