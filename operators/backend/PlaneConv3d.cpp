#include "operators/backend/PlaneConv3d.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/Parallel.hpp"
#include "core/Workspace.hpp"
#include "operators/backend/ConvPrimitive.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define UFNO_AVX512 __attribute__((target("avx512f,fma")))
#define UFNO_AVX512_BF16 __attribute__((target("avx512f,avx512bf16,fma")))
#endif

namespace ufno::backend {

namespace {

constexpr int kVectors = 2;            // vectors of 16 plane cells per block
constexpr int kCells = 16 * kVectors;  // plane cells per block
constexpr int kChannelBlock = 12;      // output channels per register block
constexpr int kInputChunk = 8;         // input channels per pass over a block
constexpr int kTaps = 27;

// Where one block of plane cells reads and writes.
struct Block {
  const float* x;     // input channel 0, slab row r (the top of the 3 rows read), cell q0 - Tp - 1
  long channel, row;  // input strides: channel, slab row
  int line;           // Tp: a Y step in the plane
  float* acc;         // partial sums of output channel 0; channel c at acc + c * acc_channel
  long acc_channel;
  long acc_row = 0;   // one output row further in the sums (a Winograd tile writes 4)
  long acc_line = 0;  // one output line (Y) further (a two-axis tile writes 4 x 4)
};

#if defined(__x86_64__)
// Output channels [o0, o0 + N) of one block, input channels [i0, i1): acc += w * x.
template <int N>
UFNO_AVX512 void accumulate(const Block& b, const float* packed, const float* bias, int oc, int o0,
                            int i0, int i1) {
  __m512 acc[kVectors][N];
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < kVectors; ++m)
      acc[m][n] = i0 == 0 ? _mm512_set1_ps(bias[o0 + n])
                          : _mm512_loadu_ps(b.acc + (o0 + n) * b.acc_channel + 16 * m);
  for (int ic = i0; ic < i1; ++ic) {
    const float* w = packed + long(ic) * kTaps * oc + o0;
    const float* xi = b.x + ic * b.channel;
    for (int dx = 0; dx < 3; ++dx)
      for (int dy = 0; dy < 3; ++dy)
        for (int dt = 0; dt < 3; ++dt, w += oc) {
          const float* xp = xi + dx * b.row + dy * b.line + dt;
          __m512 v[kVectors];
          for (int m = 0; m < kVectors; ++m) v[m] = _mm512_loadu_ps(xp + 16 * m);
          for (int n = 0; n < N; ++n) {
            const __m512 wn = _mm512_set1_ps(w[n]);
            for (int m = 0; m < kVectors; ++m) acc[m][n] = _mm512_fmadd_ps(v[m], wn, acc[m][n]);
          }
        }
  }
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < kVectors; ++m)
      _mm512_storeu_ps(b.acc + (o0 + n) * b.acc_channel + 16 * m, acc[m][n]);
}

UFNO_AVX512 void convolve_block(const Block& b, const float* packed, const float* bias, int ic,
                                int oc) {
  for (int i0 = 0; i0 < ic; i0 += kInputChunk) {
    const int i1 = std::min(i0 + kInputChunk, ic);
    int o0 = 0;
    for (; o0 + kChannelBlock <= oc; o0 += kChannelBlock)
      accumulate<kChannelBlock>(b, packed, bias, oc, o0, i0, i1);
    for (; o0 < oc; ++o0) accumulate<1>(b, packed, bias, oc, o0, i0, i1);
  }
}
#endif

// Winograd F(4, 3) along X (Lavin & Gray's transforms; interpolation points 0, +-1, +-2 and
// infinity): a tile of 4 output rows reads 6 slab rows d, which become 6 rows V = B^T d; the
// 3 X taps of each weight become 6, U = G g; each of the 6 is then a 3x3 (Y, T) convolution
// M_u = U_u * V_u over the input channels, and the output rows are A^T M plus the bias. 6 x 9
// multiply-adds per input value where the direct kernel makes 4 x 27, for a few additions.
constexpr int kWinoRows = 4;   // output rows per tile
constexpr int kPoints = 6;     // transformed rows per tile
constexpr int kPlaneTaps = 9;  // (Y, T) taps
constexpr int kWinoChunk = 4;  // input channels per pass: their transformed rows stay in L1
constexpr int kBf16Chunk = 8;  // the same in bf16, half the bytes a value
// The two-axis tiles (below): 36 (X, Y) points, input channels a pass, a point line's stride in
// the scratch, and the cells it holds (the block and its two T taps).
constexpr int kPoints2d = kPoints * kPoints;
constexpr int kChunk2d = 24;
constexpr int kLine2d = 48;
constexpr int kLineCells = kCells + 2;
constexpr float kBt[kPoints][kPoints] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                         {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                         {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr double kG[kPoints][3] = {{1. / 4, 0, 0},
                                   {-1. / 6, -1. / 6, -1. / 6},
                                   {-1. / 6, 1. / 6, -1. / 6},
                                   {1. / 24, 1. / 12, 1. / 6},
                                   {1. / 24, -1. / 12, 1. / 6},
                                   {0, 0, 1}};
constexpr float kAt[kWinoRows][kPoints] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

// One block's transformed input rows, (chunk channel, point, plane tap, cell), and its products
// per point before the output transform, (point, output channel, cell).
struct WinoScratch {
  std::vector<float> v =
      std::vector<float>(std::size_t(kWinoChunk) * kPoints * kPlaneTaps * kCells);
  // bf16: input channel pairs, (pair, point, plane tap, cell) of two bf16 each (the pair's
  // even channel in the low half), kBf16Chunk channels a pass.
  std::vector<std::uint32_t> v16 =
      std::vector<std::uint32_t>(std::size_t(kBf16Chunk / 2) * kPoints * kPlaneTaps * kCells);
  std::vector<float> m;
  void reserve(int oc) { m.resize(std::size_t(kPoints) * oc * kCells); }
  float* in(int c, int u, int tap) {
    return v.data() + ((c * kPoints + u) * kPlaneTaps + tap) * kCells;
  }
  float* sums(int u, int o, int oc) { return m.data() + (std::size_t(u) * oc + o) * kCells; }
  std::uint32_t* in16(int pair, int u, int tap) {
    return v16.data() + ((pair * kPoints + u) * kPlaneTaps + tap) * kCells;
  }
};

#if defined(__x86_64__)
// init + sum_k row[k] x[k] over the nonzero constants of a transform's row (B^T's or A^T's).
UFNO_AVX512 inline __m512 combine(const float (&row)[kPoints], const __m512* x, __m512 init) {
  for (int k = 0; k < kPoints; ++k)
    if (row[k] != 0) init = _mm512_fmadd_ps(_mm512_set1_ps(row[k]), x[k], init);
  return init;
}

// V = B^T d for input channels [i0, i1) of the block's cells, at each of the 9 plane taps.
UFNO_AVX512 void transform_input(const Block& b, int i0, int i1, WinoScratch& s) {
  for (int ic = i0; ic < i1; ++ic)
    for (int tap = 0; tap < kPlaneTaps; ++tap) {
      const float* xp = b.x + ic * b.channel + (tap / 3) * b.line + tap % 3;
      for (int m = 0; m < kVectors; ++m) {
        __m512 d[kPoints];
        for (int i = 0; i < kPoints; ++i) d[i] = _mm512_loadu_ps(xp + i * b.row + 16 * m);
        for (int u = 0; u < kPoints; ++u) {
          const __m512 v = combine(kBt[u], d, _mm512_setzero_ps());
          _mm512_storeu_ps(s.in(ic - i0, u, tap) + 16 * m, v);
        }
      }
    }
}

// M_u += U_u * V_u for output channels [o0, o0 + N) and the chunk's input channels [i0, i1), at
// each of the tile's points; wino: (point, input channel, tap, output channel). Taps says where
// the transformed lines are (XTaps, XYTaps below).
template <int N, class Taps, class Scratch>
UFNO_AVX512 void accumulate_points(Scratch& s, const float* wino, int ic, int oc, int o0, int i0,
                                   int i1) {
  for (int u = 0; u < Taps::kPoints; ++u) {
    __m512 acc[kVectors][N];
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < kVectors; ++m)
        acc[m][n] = i0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(s.sums(u, o0 + n, oc) + 16 * m);
    for (int c = i0; c < i1; ++c) {
      const float* w = wino + (long(u) * ic + c) * Taps::kTaps * oc + o0;
      for (int tap = 0; tap < Taps::kTaps; ++tap, w += oc) {
        const float* vp = Taps::line(s, u, c - i0, tap);
        __m512 v[kVectors];
        for (int m = 0; m < kVectors; ++m) v[m] = _mm512_loadu_ps(vp + 16 * m);
        for (int n = 0; n < N; ++n) {
          const __m512 wn = _mm512_set1_ps(w[n]);
          for (int m = 0; m < kVectors; ++m) acc[m][n] = _mm512_fmadd_ps(v[m], wn, acc[m][n]);
        }
      }
    }
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < kVectors; ++m)
        _mm512_storeu_ps(s.sums(u, o0 + n, oc) + 16 * m, acc[m][n]);
  }
}

// bf16 (set_bf16): the products M_u = U_u * V_u take V and U rounded to bfloat16 and sum in
// float32, two input channels an instruction (VDPBF16PS: twice the float32 FMA's multiply-adds);
// the transforms and the output stay float32.
//
// Two float32 vectors (16 cells of channels c and c + 1) as 16 pairs of bf16, c's in the low
// half of each 32-bit lane: the operand layout of VDPBF16PS. Rounded to nearest even on the bits
// (the values are finite); the zero-masked shifts sidestep GCC 12's false uninitialised-value
// warning in its unmasked intrinsics.
UFNO_AVX512 inline __m512i bf16_rounded_bits(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb =
      _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, bits, 16), _mm512_set1_epi32(1));
  return _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
}

UFNO_AVX512 inline __m512i bf16_pairs(__m512 even, __m512 odd) {
  return _mm512_or_si512(
      _mm512_maskz_srli_epi32(0xffff, bf16_rounded_bits(even), 16),
      _mm512_and_si512(bf16_rounded_bits(odd), _mm512_set1_epi32(int(0xffff0000u))));
}

// V = B^T d for input channels [i0, i1) in pairs (a missing odd channel reads as zeros).
UFNO_AVX512_BF16 void transform_input_bf16(const Block& b, int i0, int i1, WinoScratch& s) {
  for (int ic = i0; ic < i1; ic += 2)
    for (int tap = 0; tap < kPlaneTaps; ++tap) {
      const long at = (tap / 3) * b.line + tap % 3;
      for (int m = 0; m < kVectors; ++m) {
        __m512 v[2][kPoints];
        for (int h = 0; h < 2; ++h) {
          __m512 d[kPoints];
          const bool real = ic + h < i1;
          const float* xp = b.x + (ic + h) * b.channel + at + 16 * m;
          for (int i = 0; i < kPoints; ++i)
            d[i] = real ? _mm512_loadu_ps(xp + i * b.row) : _mm512_setzero_ps();
          for (int u = 0; u < kPoints; ++u) {
            const __m512 t = combine(kBt[u], d, _mm512_setzero_ps());
            v[h][u] = t;
          }
        }
        for (int u = 0; u < kPoints; ++u)
          _mm512_storeu_si512(s.in16((ic - i0) / 2, u, tap) + 16 * m, bf16_pairs(v[0][u], v[1][u]));
      }
    }
}

// The same in bf16 pairs; wino16: (point, input pair, tap, output channel) of two bf16 each.
template <int N, class Taps, class Scratch>
UFNO_AVX512_BF16 void accumulate_points_bf16(Scratch& s, const std::uint32_t* wino16, int pairs,
                                             int oc, int o0, int i0, int i1) {
  for (int u = 0; u < Taps::kPoints; ++u) {
    __m512 acc[kVectors][N];
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < kVectors; ++m)
        acc[m][n] = i0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(s.sums(u, o0 + n, oc) + 16 * m);
    for (int c = i0; c < i1; c += 2) {
      const std::uint32_t* w = wino16 + (long(u) * pairs + c / 2) * Taps::kTaps * oc + o0;
      for (int tap = 0; tap < Taps::kTaps; ++tap, w += oc) {
        const std::uint32_t* vp = Taps::line16(s, u, (c - i0) / 2, tap);
        __m512bh v[kVectors];
        for (int m = 0; m < kVectors; ++m) v[m] = (__m512bh)_mm512_loadu_si512(vp + 16 * m);
        for (int n = 0; n < N; ++n) {
          const __m512bh wn = (__m512bh)_mm512_set1_epi32(int(w[n]));
          for (int m = 0; m < kVectors; ++m) acc[m][n] = _mm512_dpbf16_ps(acc[m][n], v[m], wn);
        }
      }
    }
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < kVectors; ++m)
        _mm512_storeu_ps(s.sums(u, o0 + n, oc) + 16 * m, acc[m][n]);
  }
}

// The X tiles' lines: at each of 6 points, 9 (Y, T) taps, each a line of its own; their
// transforms.
struct XTaps {
  static constexpr int kPoints = ::ufno::backend::kPoints, kTaps = kPlaneTaps;
  static constexpr int kChunk = kWinoChunk, kChunk16 = kBf16Chunk;
  using Scratch = WinoScratch;
  static const float* line(WinoScratch& s, int u, int c, int tap) { return s.in(c, u, tap); }
  static const std::uint32_t* line16(WinoScratch& s, int u, int pair, int tap) {
    return s.in16(pair, u, tap);
  }
  UFNO_AVX512 static void transform(const Block& b, int i0, int i1, WinoScratch& s) {
    transform_input(b, i0, i1, s);
  }
  UFNO_AVX512_BF16 static void transform16(const Block& b, int i0, int i1, WinoScratch& s) {
    transform_input_bf16(b, i0, i1, s);
  }
};

// Winograd F(4x4, 3x3) over X and Y, the T taps direct (whole lines only): a tile of 4 rows
// by 4 lines of one block of 32 cells reads 6 x 6 input lines of 34 cells (the block and its two
// T neighbours), which become 36 point lines V = B^T d B; the 9 (X, Y) taps of each weight
// become 36, U = G g G^T, for each of the 3 T taps. Each point is then a 3-tap convolution along
// T over the input channels, M_uv = sum_c U_uv * V_uv, and the 16 output lines are A^T M A plus
// the bias: 36 x 3 multiply-adds per 16 outputs and input channel, where the X tiles above make
// 6 x 9 per 4 (half), for transforms about a fifth of the products.

// A tile's transformed input lines, (point, chunk channel, cell), and its products per point
// before the output transform, (point, output channel, cell).
struct Wino2dScratch {
  std::vector<float> v = std::vector<float>(std::size_t(kPoints2d) * kChunk2d * kLine2d);
  std::vector<float> m;
  void reserve(int oc) { m.resize(std::size_t(kPoints2d) * oc * kCells); }
  float* in(int uv, int c) { return v.data() + (std::size_t(uv) * kChunk2d + c) * kLine2d; }
  float* sums(int uv, int o, int oc) { return m.data() + (std::size_t(uv) * oc + o) * kCells; }
  // bf16: the chunk's channel pairs, (point, pair, cell) of two bf16 each (the even channel low).
  std::vector<std::uint32_t> v16 =
      std::vector<std::uint32_t>(std::size_t(kPoints2d) * (kChunk2d / 2) * kLine2d);
  std::uint32_t* in16(int uv, int pair) {
    return v16.data() + (std::size_t(uv) * (kChunk2d / 2) + pair) * kLine2d;
  }
};

// V = B^T d B for input channels [i0, i1) of the tile, 16 cells at each of the offsets 0, 16
// and 18 of a line (the last two overlap: 34 cells without masks or reads past the line's end).
UFNO_AVX512 void transform_input_2d(const Block& b, int i0, int i1, Wino2dScratch& s) {
  constexpr int kOffsets[3] = {0, 16, kLineCells - 16};
  for (int ic = i0; ic < i1; ++ic)
    for (const int off : kOffsets) {
      const float* xc = b.x + ic * b.channel + off;
      __m512 t[kPoints][kPoints];  // t[u][j] = sum_i B^T[u][i] d[i][j]
      for (int j = 0; j < kPoints; ++j) {
        __m512 d[kPoints];
        for (int i = 0; i < kPoints; ++i) d[i] = _mm512_loadu_ps(xc + i * b.row + j * b.line);
        for (int u = 0; u < kPoints; ++u) {
          const __m512 a = combine(kBt[u], d, _mm512_setzero_ps());
          t[u][j] = a;
        }
      }
      for (int u = 0; u < kPoints; ++u)
        for (int v = 0; v < kPoints; ++v) {
          const __m512 a = combine(kBt[v], t[u], _mm512_setzero_ps());
          _mm512_storeu_ps(s.in(u * kPoints + v, ic - i0) + off, a);
        }
    }
}

// bf16: the chunk's transformed lines as channel pairs (a missing odd channel reads as zeros).
UFNO_AVX512_BF16 void pack_pairs_2d(int i0, int i1, Wino2dScratch& s) {
  for (int uv = 0; uv < kPoints2d; ++uv)
    for (int c = i0; c < i1; c += 2)
      for (int k = 0; k < kLine2d; k += 16) {
        const __m512 even = _mm512_loadu_ps(s.in(uv, c - i0) + k);
        const __m512 odd =
            c + 1 < i1 ? _mm512_loadu_ps(s.in(uv, c + 1 - i0) + k) : _mm512_setzero_ps();
        _mm512_storeu_si512(s.in16(uv, (c - i0) / 2) + k, bf16_pairs(even, odd));
      }
}

// The two-axis tiles' lines: at each of 36 points, 3 T taps, one line read at 3 offsets.
struct XYTaps {
  static constexpr int kPoints = kPoints2d, kTaps = 3;
  static constexpr int kChunk = kChunk2d, kChunk16 = kChunk2d;
  using Scratch = Wino2dScratch;
  static const float* line(Wino2dScratch& s, int uv, int c, int dt) { return s.in(uv, c) + dt; }
  static const std::uint32_t* line16(Wino2dScratch& s, int uv, int pair, int dt) {
    return s.in16(uv, pair) + dt;
  }
  UFNO_AVX512 static void transform(const Block& b, int i0, int i1, Wino2dScratch& s) {
    transform_input_2d(b, i0, i1, s);
  }
  UFNO_AVX512_BF16 static void transform16(const Block& b, int i0, int i1, Wino2dScratch& s) {
    transform_input_2d(b, i0, i1, s);
    pack_pairs_2d(i0, i1, s);
  }
};

// A tile's products in float32, or in bf16 channel pairs, for multiply_points.
template <class Taps>
struct Float32Products {
  static constexpr int kChunk = Taps::kChunk;
  const float* wino;
  int ic;
  UFNO_AVX512 void transform(const Block& b, int i0, int i1, typename Taps::Scratch& s) const {
    Taps::transform(b, i0, i1, s);
  }
  template <int N>
  UFNO_AVX512 void accumulate(typename Taps::Scratch& s, int oc, int o0, int i0, int i1) const {
    accumulate_points<N, Taps>(s, wino, ic, oc, o0, i0, i1);
  }
};
template <class Taps>
struct Bf16Products {
  static constexpr int kChunk = Taps::kChunk16;
  const std::uint32_t* wino16;
  int pairs;
  UFNO_AVX512_BF16 void transform(const Block& b, int i0, int i1, typename Taps::Scratch& s) const {
    Taps::transform16(b, i0, i1, s);
  }
  template <int N>
  UFNO_AVX512_BF16 void accumulate(typename Taps::Scratch& s, int oc, int o0, int i0,
                                   int i1) const {
    accumulate_points_bf16<N, Taps>(s, wino16, pairs, oc, o0, i0, i1);
  }
};

// M_u = U_u * V_u of a tile, input channels a chunk at a time, output channels a register block
// at a time.
template <class Products, class Scratch>
void multiply_points(const Block& b, const Products& p, int ic, int oc, Scratch& s) {
  for (int i0 = 0; i0 < ic; i0 += Products::kChunk) {
    const int i1 = std::min(i0 + Products::kChunk, ic);
    p.transform(b, i0, i1, s);
    int o0 = 0;
    for (; o0 + kChannelBlock <= oc; o0 += kChannelBlock)
      p.template accumulate<kChannelBlock>(s, oc, o0, i0, i1);
    for (; o0 < oc; ++o0) p.template accumulate<1>(s, oc, o0, i0, i1);
  }
}

// The same with the tile's weights in bf16 pairs when the layer has them (--bf16), else in
// float32.
template <class Taps, class Scratch>
void multiply_points(const Block& b, const float* w, const std::uint32_t* w16, int ic, int oc,
                     Scratch& s) {
  if (w16)
    multiply_points(b, Bf16Products<Taps>{w16, (ic + 1) / 2}, ic, oc, s);
  else
    multiply_points(b, Float32Products<Taps>{w, ic}, ic, oc, s);
}

// A tile of 4 output rows of one block: the rows b.acc + j * b.acc_row, j = 0 .. 3.
UFNO_AVX512 void convolve_tile(const Block& b, const float* wino, const std::uint32_t* wino16,
                               const float* bias, int ic, int oc, WinoScratch& s) {
  multiply_points<XTaps>(b, wino, wino16, ic, oc, s);
  for (int o = 0; o < oc; ++o)
    for (int m = 0; m < kVectors; ++m) {
      __m512 p[kPoints];
      for (int u = 0; u < kPoints; ++u) p[u] = _mm512_loadu_ps(s.sums(u, o, oc) + 16 * m);
      for (int j = 0; j < kWinoRows; ++j) {
        const __m512 y = combine(kAt[j], p, _mm512_set1_ps(bias[o]));
        _mm512_storeu_ps(b.acc + o * b.acc_channel + j * b.acc_row + 16 * m, y);
      }
    }
}
// A tile of 4 rows by 4 lines of one block: b.acc + i * b.acc_row + j * b.acc_line, i, j < 4.
UFNO_AVX512 void convolve_tile_2d(const Block& b, const float* wino2d,
                                  const std::uint32_t* wino2d16, const float* bias, int ic, int oc,
                                  Wino2dScratch& s) {
  multiply_points<XYTaps>(b, wino2d, wino2d16, ic, oc, s);
  for (int o = 0; o < oc; ++o)
    for (int m = 0; m < kVectors; ++m) {
      __m512 r[kWinoRows][kPoints];  // r[i][v] = sum_u A^T[i][u] M[u][v]
      for (int v = 0; v < kPoints; ++v) {
        __m512 p[kPoints];
        for (int u = 0; u < kPoints; ++u)
          p[u] = _mm512_loadu_ps(s.sums(u * kPoints + v, o, oc) + 16 * m);
        for (int i = 0; i < kWinoRows; ++i) {
          const __m512 a = combine(kAt[i], p, _mm512_setzero_ps());
          r[i][v] = a;
        }
      }
      for (int i = 0; i < kWinoRows; ++i)
        for (int j = 0; j < kWinoRows; ++j) {
          const __m512 y = combine(kAt[j], r[i], _mm512_set1_ps(bias[o]));
          _mm512_storeu_ps(b.acc + o * b.acc_channel + i * b.acc_row + j * b.acc_line + 16 * m, y);
        }
    }
}

// The blocks of R output rows, `blocks` per row; at(r, k) is block k of output row r. Tiles of 4
// rows go through Winograd when its weights are given, the rows left over through the direct
// kernel (every row when they are not).
template <class At>
void convolve_rows(const char* label, int R, int blocks, const At& at, const float* packed,
                   const float* wino, const std::uint32_t* wino16, const float* bias, int ic,
                   int oc) {
  const int tiles = wino ? R / kWinoRows : 0;
  const int first_direct = tiles * kWinoRows;
  ufno::host_parallel_for(label, long(tiles + R - first_direct) * blocks, [=](const int64_t item) {
    const int g = int(item / blocks), k = int(item % blocks);
    if (g < tiles) {
      thread_local WinoScratch scratch;
      scratch.reserve(oc);
      convolve_tile(at(g * kWinoRows, k), wino, wino16, bias, ic, oc, scratch);
    } else {
      convolve_block(at(first_direct + g - tiles, k), packed, bias, ic, oc);
    }
  });
}

// Whole lines (T a multiple of 32, `per_line` blocks a line of the Y lines, `out_line` floats
// apart in the output): tiles of 4 rows by 4 lines through the two-axis Winograd, the lines left
// over in tiles of 4 rows, the rows left over through the direct kernel.
template <class At>
void convolve_lines_2d(int R, int Y, int per_line, long out_line, const At& at, const float* packed,
                       const float* wino, const std::uint32_t* wino16, const float* wino2d,
                       const std::uint32_t* wino2d16, const float* bias, int ic, int oc) {
  const int tiles = R / kWinoRows, line_tiles = Y / kWinoRows, blocks = Y * per_line;
  const long items2d = long(line_tiles) * per_line;  // per row tile, then the lines left over
  const long per_row_tile = items2d + long(Y - line_tiles * kWinoRows) * per_line;
  const long tiled = tiles * per_row_tile;
  const int first_direct = tiles * kWinoRows;
  ufno::host_parallel_for(
      "ufno::plane_conv3d_tiles2d", tiled + long(R - first_direct) * blocks,
      [=](const int64_t item) {
        if (item >= tiled) {
          const long k = item - tiled;
          convolve_block(at(first_direct + int(k / blocks), int(k % blocks)), packed, bias, ic, oc);
          return;
        }
        const int r = int(item / per_row_tile) * kWinoRows;
        const long q = item % per_row_tile;
        if (q < items2d) {
          thread_local Wino2dScratch scratch;
          scratch.reserve(oc);
          Block b = at(r, int((q / per_line) * kWinoRows * per_line + q % per_line));
          b.acc_line = out_line;
          convolve_tile_2d(b, wino2d, wino2d16, bias, ic, oc, scratch);
        } else {
          thread_local WinoScratch scratch;
          scratch.reserve(oc);
          const long k = (q - items2d) + long(line_tiles) * kWinoRows * per_line;
          convolve_tile(at(r, int(k)), wino, wino16, bias, ic, oc, scratch);
        }
      });
}
#endif

}  // namespace

bool PlaneConv3d::available() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool PlaneConv3d::chosen_by_default() { return available() && kHostTensors; }

PlaneConv3d::PlaneConv3d(int in_channels, int out_channels, const std::vector<float>& weights,
                         const std::vector<float>& bias)
    : ic_(in_channels), oc_(out_channels) {
  const std::size_t n = std::size_t(oc_) * ic_ * kTaps;
  if (ic_ < 1 || oc_ < 1 || weights.size() != n || (!bias.empty() && bias.size() != size_t(oc_)))
    throw std::invalid_argument("PlaneConv3d: weights must be (out, in, 3, 3, 3), bias (out)");
  packed_.resize(n);
  for (int o = 0; o < oc_; ++o)
    for (int i = 0; i < ic_; ++i)
      for (int k = 0; k < kTaps; ++k)
        packed_[(std::size_t(i) * kTaps + k) * oc_ + o] =
            weights[(std::size_t(o) * ic_ + i) * kTaps + k];
  bias_ = bias.empty() ? std::vector<float>(oc_, 0.f) : bias;
  // U = G g along X for each (Y, T) tap: (point, in, plane tap, out), summed in double.
  winograd_.resize(std::size_t(kPoints) * ic_ * kPlaneTaps * oc_);
  for (int u = 0; u < kPoints; ++u)
    for (int i = 0; i < ic_; ++i)
      for (int tap = 0; tap < kPlaneTaps; ++tap)
        for (int o = 0; o < oc_; ++o) {
          double g = 0;
          for (int dx = 0; dx < 3; ++dx)
            g += kG[u][dx] * weights[(std::size_t(o) * ic_ + i) * kTaps + dx * kPlaneTaps + tap];
          winograd_[((std::size_t(u) * ic_ + i) * kPlaneTaps + tap) * oc_ + o] = float(g);
        }
  // U = G g G^T over X and Y for each T tap: (point (u, v), in, T tap, out), summed in double.
  winograd2d_.resize(std::size_t(kPoints2d) * ic_ * 3 * oc_);
  for (int uv = 0; uv < kPoints2d; ++uv)
    for (int i = 0; i < ic_; ++i)
      for (int dt = 0; dt < 3; ++dt)
        for (int o = 0; o < oc_; ++o) {
          double g = 0;
          for (int dx = 0; dx < 3; ++dx)
            for (int dy = 0; dy < 3; ++dy)
              g += kG[uv / kPoints][dx] * kG[uv % kPoints][dy] *
                   weights[(std::size_t(o) * ic_ + i) * kTaps + dx * kPlaneTaps + dy * 3 + dt];
          winograd2d_[((std::size_t(uv) * ic_ + i) * 3 + dt) * oc_ + o] = float(g);
        }
}

bool PlaneConv3d::takes_blocks_with(int nt) { return nt > 0 && nt % kCells == 0; }

bool PlaneConv3d::bf16_available() {
#if defined(__x86_64__)
  return available() && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

namespace {

// float32 -> bfloat16, rounded to nearest even (the weights are finite: the model file's checks).
std::uint32_t to_bf16(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

}  // namespace

void PlaneConv3d::set_bf16(bool on) {
  if (on && !bf16_available())
    throw std::invalid_argument("PlaneConv3d: bf16 products need a CPU with AVX512_BF16");
  bf16_ = on;
  if (!on || !winograd_bf16_.empty()) return;
  const int pairs = (ic_ + 1) / 2;
  winograd_bf16_.assign(std::size_t(kPoints) * pairs * kPlaneTaps * oc_, 0u);
  for (int u = 0; u < kPoints; ++u)
    for (int i = 0; i < ic_; ++i)
      for (int tap = 0; tap < kPlaneTaps; ++tap)
        for (int o = 0; o < oc_; ++o) {
          const float w = winograd_[((std::size_t(u) * ic_ + i) * kPlaneTaps + tap) * oc_ + o];
          winograd_bf16_[((std::size_t(u) * pairs + i / 2) * kPlaneTaps + tap) * oc_ + o] |=
              to_bf16(w) << (16 * (i % 2));
        }
  winograd2d_bf16_.assign(std::size_t(kPoints2d) * pairs * 3 * oc_, 0u);
  for (int uv = 0; uv < kPoints2d; ++uv)
    for (int i = 0; i < ic_; ++i)
      for (int dt = 0; dt < 3; ++dt)
        for (int o = 0; o < oc_; ++o) {
          const float w = winograd2d_[((std::size_t(uv) * ic_ + i) * 3 + dt) * oc_ + o];
          winograd2d_bf16_[((std::size_t(uv) * pairs + i / 2) * 3 + dt) * oc_ + o] |=
              to_bf16(w) << (16 * (i % 2));
        }
}

void PlaneConv3d::forward(const PaddedSlab& in, const Tensor& out) const {
  if (in.channels() != ic_)
    throw std::invalid_argument("PlaneConv3d: slab of " + std::to_string(in.channels()) +
                                " channels for " + std::to_string(ic_) + " -> " +
                                std::to_string(oc_) + " channels");
  run(Input{in.data(), in.channel_stride(), in.rows(), in.ny(), in.nt()}, out);
}

void PlaneConv3d::forward(const Input& in, const Tensor& out) const {
  if (!takes_blocks_with(in.nt))
    throw std::invalid_argument("PlaneConv3d: blocks need T a multiple of " +
                                std::to_string(kCells) + ", not " + std::to_string(in.nt) +
                                " (use a PaddedSlab)");
  run(in, out);
}

void PlaneConv3d::run(const Input& in, const Tensor& out) const {
  const int R = out.extent(2), Y = in.ny, T = in.nt, Tp = T + 2;
  if (out.extent(0) != 1 || int(out.extent(1)) != oc_ || R + 2 > in.rows ||
      int(out.extent(3)) != Y || int(out.extent(4)) != T)
    throw std::invalid_argument("PlaneConv3d: a block of " + std::to_string(in.rows) + " rows of " +
                                std::to_string(Y) + "x" + std::to_string(T) + " does not fit " +
                                to_string(shape_of(out)) + " for " + std::to_string(ic_) + " -> " +
                                std::to_string(oc_) + " channels");
#if defined(__x86_64__)
  if (!available()) throw std::runtime_error("PlaneConv3d: this CPU has no AVX-512");
  const float* w = packed_.data();
  const float* bias = bias_.data();
  const int ic = ic_, oc = oc_;
  const long channel = in.channel_stride, row = long(Y + 2) * Tp;
  const float* base = in.data;
  float* o = out.data();
  const long out_row = long(Y) * T, out_channel = long(R) * out_row;
  const float* wino = tiles_ != WinogradTiles::off ? winograd_.data() : nullptr;
  const std::uint32_t* wino16 = wino && bf16_ ? winograd_bf16_.data() : nullptr;
  if (T % kCells == 0) {
    // Whole lines: blocks of kCells interior cells along T, summed straight into the output.
    const int per_line = T / kCells, blocks = Y * per_line;
    const auto at = [=](int r, int k) {
      const long y = k / per_line, t0 = long(k % per_line) * kCells;
      // Interior cell (y, t0) is plane cell (y + 1) Tp + t0 + 1; x is one line up, one left.
      return Block{base + r * row + y * Tp + t0, channel,     row,    Tp,
                   o + r * out_row + y * T + t0, out_channel, out_row};
    };
    if (tiles_ == WinogradTiles::xy) {
      convolve_lines_2d(R, Y, per_line, T, at, w, wino, wino16, winograd2d_.data(),
                        wino16 ? winograd2d_bf16_.data() : nullptr, bias, ic, oc);
      return;
    }
    convolve_rows("ufno::plane_conv3d_lines", R, blocks, at, w, wino, wino16, bias, ic, oc);
    return;
  }
  // Otherwise the plane cells from interior cell (0, 0) to (Y - 1, T - 1), the T border cells
  // between lines included, in blocks of kCells, the last running into the bottom border and
  // up to 30 floats beyond the rows read (into the slab's spare channel at the end); the sums go
  // to a scratch slab and a second pass keeps the interior cells. (Stores straight into the output,
  // cell by cell across channels whose stride is a multiple of 4 KiB, thrashed the cache sets:
  // the kernel took 1.3x as long.)
  const long cells = long(Y - 1) * Tp + T;  // from interior cell (0, 0) to (Y - 1, T - 1)
  const int blocks = int((cells + kCells - 1) / kCells);
  const long acc_row = long(blocks) * kCells;  // computed cells of one row
  Tensor scratch = temporary_tensor("plane_conv3d.sums", 1, 1, oc_, R, acc_row);
  float* sums = scratch.data();
  const auto at = [=](int r, int k) {
    const long k0 = long(k) * kCells;  // first computed cell, q = Tp + 1 + k0
    return Block{base + r * row + k0,     channel,     row,    Tp,
                 sums + r * acc_row + k0, R * acc_row, acc_row};
  };
  convolve_rows("ufno::plane_conv3d", R, blocks, at, w, wino, wino16, bias, ic, oc);
  // Computed cell k = y Tp + t holds interior cell (y, t).
  ufno::host_parallel_for("ufno::plane_conv3d_interior", long(oc_) * R * Y,
                          [=](const int64_t line) {
                            const long cr = line / Y, y = line % Y;
                            const float* src = sums + cr * acc_row + y * Tp;
                            float* dst = o + line * T;
                            for (int t = 0; t < T; ++t) dst[t] = src[t];
                          });
#else
  (void)R;
  throw std::runtime_error("PlaneConv3d: built without x86-64 AVX-512 support");
#endif
}

}  // namespace ufno::backend
