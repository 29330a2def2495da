#include "operators/backend/ChannelMixInPlace.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "operators/Parallel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define UFNO_AVX512 __attribute__((target("avx512f,fma")))
#endif

namespace ufno::backend {

namespace {

constexpr int kVoxels = 32;  // voxels per block: 2 vectors
constexpr int kOut = 12;     // output channels per register block (24 accumulators)

#if defined(__x86_64__)
// Output channels [o0, o0 + N) of one block of 32 voxels whose inputs are in buf (C x 32).
template <int N>
UFNO_AVX512 void mix(int C, int o0, const float* wt, const float* buf, float* x, long ldx,
                     const float* t, long ldt) {
  __m512 acc[2][N];
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < 2; ++m) acc[m][n] = _mm512_loadu_ps(t + (o0 + n) * ldt + 16 * m);
  for (int i = 0; i < C; ++i) {
    const __m512 a0 = _mm512_loadu_ps(buf + i * kVoxels),
                 a1 = _mm512_loadu_ps(buf + i * kVoxels + 16);
    const float* w = wt + long(i) * C + o0;
    for (int n = 0; n < N; ++n) {
      const __m512 wn = _mm512_set1_ps(w[n]);
      acc[0][n] = _mm512_fmadd_ps(a0, wn, acc[0][n]);
      acc[1][n] = _mm512_fmadd_ps(a1, wn, acc[1][n]);
    }
  }
  // maskz_max rather than max: GCC 12's _mm512_max_ps trips -Wuninitialized on its own
  // placeholder operand.
  const __m512 zero = _mm512_setzero_ps();
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < 2; ++m)
      _mm512_storeu_ps(x + (o0 + n) * ldx + 16 * m, _mm512_maskz_max_ps(0xFFFF, acc[m][n], zero));
}

// One block of 32 voxels starting at x, t: inputs copied out first, since outputs overwrite them.
UFNO_AVX512 void mix_block(int C, const float* wt, float* x, long ldx, const float* t, long ldt) {
  thread_local std::vector<float> buf;
  buf.resize(std::size_t(C) * kVoxels);
  for (int i = 0; i < C; ++i)
    for (int v = 0; v < kVoxels; v += 16)
      _mm512_storeu_ps(buf.data() + i * kVoxels + v, _mm512_loadu_ps(x + i * ldx + v));
  int o0 = 0;
  for (; o0 + kOut <= C; o0 += kOut) mix<kOut>(C, o0, wt, buf.data(), x, ldx, t, ldt);
  for (; o0 < C; ++o0) mix<1>(C, o0, wt, buf.data(), x, ldx, t, ldt);
}
#endif

// The last cols % 32 voxels, plainly.
void mix_tail(int C, const float* wt, float* x, long ldx, const float* t, long ldt, long v0,
              long cols) {
  std::vector<float> in(C);
  for (long v = v0; v < cols; ++v) {
    for (int i = 0; i < C; ++i) in[i] = x[i * ldx + v];
    for (int o = 0; o < C; ++o) {
      float s = t[o * ldt + v];
      for (int i = 0; i < C; ++i) s += wt[long(i) * C + o] * in[i];
      x[o * ldx + v] = s > 0.f ? s : 0.f;
    }
  }
}

}  // namespace

bool channel_mix_in_place_available() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

void channel_mix_relu_in_place(int C, const float* wt, float* x, long ldx, const float* t, long ldt,
                               long cols) {
#if defined(__x86_64__)
  if (!channel_mix_in_place_available())
    throw std::runtime_error("channel_mix_relu_in_place: this CPU has no AVX-512");
  const long blocks = cols / kVoxels;
  ufno::host_parallel_for("ufno::channel_mix_in_place", blocks, [=](const int64_t k) {
    mix_block(C, wt, x + k * kVoxels, ldx, t + k * kVoxels, ldt);
  });
  mix_tail(C, wt, x, ldx, t, ldt, blocks * kVoxels, cols);
#else
  (void)C, (void)wt, (void)x, (void)ldx, (void)t, (void)ldt, (void)cols;
  throw std::runtime_error("channel_mix_relu_in_place: built without x86-64 AVX-512 support");
#endif
}

}  // namespace ufno::backend
