#pragma once
// The float32 peak the roofline line compares against, measured rather than assumed: every
// thread runs 16 independent chains of fused multiply-adds (enough to cover the FMA latency) in
// the widest vectors the CPU has, AVX-512, else AVX2, else SSE (multiply + add).
#include <immintrin.h>
#include <omp.h>

#include <chrono>

namespace ufno::bench {

namespace detail {

constexpr int kChains = 16;

__attribute__((target("avx512f"))) inline float fma_avx512(long iterations) {
  __m512 acc[kChains];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  float out[16];
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) inline float fma_avx2(long iterations) {
  __m256 acc[kChains];
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c));
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  float out[8];
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

inline float mul_add_sse(long iterations) {
  __m128 acc[kChains];
  const __m128 a = _mm_set1_ps(0.999999f), b = _mm_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(float(c));
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], a), b);
  float out[4];
  __m128 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm_add_ps(s, acc[c]);
  _mm_storeu_ps(out, s);
  return out[0] + out[3];
}

}  // namespace detail

struct Peak {
  double gflops = 0;
  const char* isa = "SSE";
};

// Float32 GFLOP/s of `threads` threads together: the best of five runs of about 0.1 s (on the
// shared virtual cores of a cloud machine single runs vary by up to 2x).
inline Peak measure_peak_gflops(int threads) {
  Peak p;
  int lanes = 4;
  float (*kernel)(long) = detail::mul_add_sse;
  if (__builtin_cpu_supports("avx512f")) {
    kernel = detail::fma_avx512, lanes = 16, p.isa = "AVX-512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernel = detail::fma_avx2, lanes = 8, p.isa = "AVX2";
  }
  const long iterations = 800000000L / (detail::kChains * lanes);
  kernel(iterations / 10);  // let the clocks settle
  for (int run = 0; run < 5; ++run) {
    float sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += kernel(iterations);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double g = 2.0 * detail::kChains * lanes * double(iterations) * threads / s / 1e9;
    if (sink != -1.f && g > p.gflops) p.gflops = g;  // sink keeps the work alive
  }
  return p;
}

}  // namespace ufno::bench
