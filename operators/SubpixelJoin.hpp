#pragma once
// The U-Net decoder's join, channels last: cat((skip, up), channels) where `up` is a sub-pixel
// transposed convolution's output, interleaved from its parity outputs (ConvTranspose3d::
// parity_outputs) and cropped by the layer's padding, in one pass. Writing the next
// convolution's input directly in its own layout replaces the interleave, the channels-first
// concatenation and the library's reorder of the result (three passes over 100-200 MB).
#include <stdexcept>
#include <vector>

#include "core/Parallel.hpp"
#include "core/Workspace.hpp"
#include "operators/PaddedSlab.hpp"
#include "operators/RowSlab.hpp"
#include "operators/backend/ConvPrimitive.hpp"

namespace ufno {

// skip: (B, Cs, X, Y, T) in `skip_layout`; parts: (B, n0+1, n1+1, n2+1, 8C) channels last with
// 2 n_a + 2 - 2 padding == the skip's extents. Returns (B, X, Y, T, Cs + C) channels last.
inline Tensor join_skip_and_upsampled(const Tensor& skip, backend::Layout skip_layout,
                                      const Tensor& parts, int padding) {
  const Shape5 s = backend::logical_shape(skip, skip_layout);
  const int B = s[0], Cs = s[1], X = s[2], Y = s[3], T = s[4];
  const int C = int(parts.extent(4)) / 8, p = padding;
  if (int(parts.extent(0)) != B || int(parts.extent(4)) != 8 * C ||
      2 * int(parts.extent(1)) - 2 * p != X || 2 * int(parts.extent(2)) - 2 * p != Y ||
      2 * int(parts.extent(3)) - 2 * p != T)
    throw std::invalid_argument("join_skip_and_upsampled: skip " + to_string(s) +
                                " does not match the parity outputs " + to_string(shape_of(parts)));
  Tensor out = temporary_tensor("unet.join", B, X, Y, T, Cs + C);
  const bool skip_last = skip_layout == backend::Layout::ChannelsLast;
  // One output value per iteration, the channel fastest (neighbouring GPU threads write
  // neighbouring values of `out` and read neighbouring channels of `parts`).
  ufno::parallel_for(
      "ufno::subpixel_join", range5(out), KOKKOS_LAMBDA(int b, int i, int j, int k, int c) {
        if (c < Cs) {
          out(b, i, j, k, c) = skip_last ? skip(b, i, j, k, c) : skip(b, c, i, j, k);
          return;
        }
        const int u = i + p, v = j + p, w = k + p;  // index in the uncropped output
        const int r = ((u & 1) << 2) | ((v & 1) << 1) | (w & 1);
        out(b, i, j, k, c) = parts(b, u >> 1, v >> 1, w >> 1, r * C + c - Cs);
      });
  return out;
}

// Throws unless parts (the parity-output rows q0 ..) fit skip and cover join rows [j0, j0 + J).
inline void check_join_rows(const Tensor& skip, const Tensor& parts, int q0, int j0, int J, int p) {
  const int X = skip.extent(2), Y = skip.extent(3), T = skip.extent(4), R = parts.extent(1);
  if (skip.extent(0) != 1 || parts.extent(0) != 1 || 2 * int(parts.extent(2)) - 2 * p != Y ||
      2 * int(parts.extent(3)) - 2 * p != T || int(parts.extent(4)) % 8 != 0)
    throw std::invalid_argument("join_rows: skip " + to_string(shape_of(skip)) +
                                " does not match the parity outputs " + to_string(shape_of(parts)));
  const int g_lo = j0 < 0 ? 0 : j0, g_hi = j0 + J > X ? X : j0 + J;
  if (g_lo < g_hi && (((g_lo + p) >> 1) < q0 || ((g_hi - 1 + p) >> 1) >= q0 + R))
    throw std::invalid_argument("join_rows: the parity-output rows do not cover the join rows");
}

// The C upsampled values of cell (g, y, t) (global row g) in the parity-output rows from q0.
KOKKOS_INLINE_FUNCTION const float* upsampled_cell(const Tensor& parts, int q0, int p, int g, int y,
                                                   int t) {
  const int C = int(parts.extent(4)) / 8, u = g + p, v = y + p, w = t + p;
  const int r = ((u & 1) << 2) | ((v & 1) << 1) | (w & 1);
  return &parts(0, (u >> 1) - q0, v >> 1, w >> 1, r * C);
}

// Rows j0 .. j0 + J - 1 (global X indices; those outside [0, X) come out zero) of
// join_skip_and_upsampled(skip, ChannelsFirst, all parity outputs, padding), for one case: skip is
// the whole channels-first (1, Cs, X, Y, T); parts holds only the parity-output rows q0 ..
// q0 + parts.extent(1) - 1, which must cover the rows the valid join rows read.
// Returns (1, J, Y, T, Cs + C) channels last.
inline Tensor join_rows(const Tensor& skip, const Tensor& parts, int q0, int j0, int J,
                        int padding) {
  const int Cs = skip.extent(1), X = skip.extent(2), Y = skip.extent(3), T = skip.extent(4);
  const int C = int(parts.extent(4)) / 8, p = padding;
  check_join_rows(skip, parts, q0, j0, J, p);
  Tensor out = temporary_tensor("unet.join_rows", 1, J, Y, T, Cs + C);
  const int Ct = Cs + C;
  // One (row, y) line per iteration: the skip's channels, then the upsampled ones per cell.
  const long plane = long(X) * Y * T;
  const long len = long(T) * Ct;  // values of one (row, y) line
  ufno::parallel_runs(
      "ufno::subpixel_join_rows", long(J) * Y, len,
      KOKKOS_LAMBDA(const int64_t line, int64_t v0, int64_t v1) {
        const int j = int(line / Y), y = int(line % Y), g = j0 + j;
        float* dst = out.data() + line * len;
        if (g < 0 || g >= X) {
          for (int64_t v = v0; v < v1; ++v) dst[v] = 0.f;
        } else if (v0 == 0 && v1 == len) {  // a whole line (streaming plan): blocked transpose
          line_to_channels_last(&skip(0, 0, g, y, 0), plane, Cs, T, dst, Ct);
          for (int t = 0; t < T; ++t) {
            const float* up = upsampled_cell(parts, q0, p, g, y, t);
            for (int c = 0; c < C; ++c) dst[t * Ct + Cs + c] = up[c];
          }
        } else {  // value by value (whole-tensor plan)
          const float* src = &skip(0, 0, g, y, 0);
          for (int64_t v = v0; v < v1; ++v) {
            const int t = int(v / Ct), c = int(v % Ct);
            dst[v] =
                c < Cs ? src[long(c) * plane + t] : upsampled_cell(parts, q0, p, g, y, t)[c - Cs];
          }
        }
      });
  return out;
}

// The same join rows written channels first into `slab` rows 0 .. J - 1 (J <= slab.rows(),
// slab.channels() == Cs + C), the input of backend::PlaneConv3d. Only interior cells are written,
// so the slab's zero borders survive; rows outside the grid are written zero.
inline void join_rows_into(const Tensor& skip, const Tensor& parts, int q0, int j0, int J,
                           int padding, const PaddedSlab& slab) {
  check_join_rows(skip, parts, q0, j0, J, padding);
  const int Cs = skip.extent(1), X = skip.extent(2), Y = skip.extent(3), T = skip.extent(4);
  const int C = int(parts.extent(4)) / 8, p = padding, Tp = T + 2;
  if (slab.channels() != Cs + C || J > slab.rows() || slab.ny() != Y || slab.nt() != T)
    throw std::invalid_argument("join_rows_into: the slab does not fit the join rows");
  const long to_channel = slab.channel_stride();
  // Host threads: the slab is host memory, the input of a host-only kernel (kHostTensors).
  // The skip half a (channel, row) plane at a time: one contiguous Y x T read, Y runs of T
  // written (line by line, a line's 36 channels were 36 short runs a channel plane apart).
  ufno::host_parallel_for("ufno::subpixel_join_skip_into_slab", long(Cs) * J, [=](const int64_t k) {
    const int c = int(k / J), j = int(k % J), g = j0 + j;
    float* dst = slab.interior(c, j);
    const float* src = g >= 0 && g < X ? &skip(0, c, g, 0, 0) : nullptr;
    for (int y = 0; y < Y; ++y)
      for (int t = 0; t < T; ++t) dst[long(y) * Tp + t] = src ? src[long(y) * T + t] : 0.f;
  });
  ufno::host_parallel_for("ufno::subpixel_join_into_slab", long(J) * Y, [=](const int64_t line) {
    const int j = int(line / Y), y = int(line % Y), g = j0 + j;
    float* dst = slab.interior(0, j) + long(y) * Tp;  // channel c at dst + c * to_channel
    if (g < 0 || g >= X) {
      for (int c = Cs; c < Cs + C; ++c)
        for (int t = 0; t < T; ++t) dst[c * to_channel + t] = 0.f;
      return;
    }
    // The upsampled half channel by channel, so each channel's line is written in one run
    // (cell by cell across channels, the stores scatter over C pages at once).
    thread_local std::vector<const float*> cell;
    cell.resize(T);
    for (int t = 0; t < T; ++t) cell[t] = upsampled_cell(parts, q0, p, g, y, t);
    float* up_dst = dst + Cs * to_channel;
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < T; ++t) up_dst[c * to_channel + t] = cell[t][c];
  });
}

}  // namespace ufno
