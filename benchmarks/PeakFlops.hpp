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

// The chains unrolled (GCC; nvcc's front end, which compiles this in the GPU build's
// bench_model, knows no GCC pragma and warns, so there the host compiler's default stands).
#if defined(__NVCC__)
#define UFNO_PEAK_UNROLL
#else
#define UFNO_PEAK_UNROLL _Pragma("GCC unroll 16")
#endif

// One kernel per instruction set: kChains independent chains of acc = MUL_ADD(acc, a, b) in
// vectors of LANES floats, summed at the end (the sum keeps the work alive). A macro because
// each kernel needs its own target attribute, which a template cannot take as a parameter.
#define UFNO_PEAK_KERNEL(NAME, TARGET, VEC, LANES, SET1, MUL_ADD, ADD, STORE)            \
  TARGET inline float NAME(long iterations) {                                            \
    VEC acc[kChains];                                                                    \
    const VEC a = SET1(0.999999f), b = SET1(1e-7f);                                      \
    UFNO_PEAK_UNROLL for (int c = 0; c < kChains; ++c) acc[c] = SET1(float(c));          \
    for (long i = 0; i < iterations; ++i)                                                \
      UFNO_PEAK_UNROLL for (int c = 0; c < kChains; ++c) acc[c] = MUL_ADD(acc[c], a, b); \
    float out[LANES];                                                                    \
    VEC s = acc[0];                                                                      \
    for (int c = 1; c < kChains; ++c) s = ADD(s, acc[c]);                                \
    STORE(out, s);                                                                       \
    return out[0] + out[LANES - 1];                                                      \
  }

// SSE has no FMA: a multiply, then an add.
inline __m128 mul_then_add(__m128 x, __m128 a, __m128 b) { return _mm_add_ps(_mm_mul_ps(x, a), b); }

UFNO_PEAK_KERNEL(fma_avx512, __attribute__((target("avx512f"))), __m512, 16, _mm512_set1_ps,
                 _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps)
UFNO_PEAK_KERNEL(fma_avx2, __attribute__((target("avx2,fma"))), __m256, 8, _mm256_set1_ps,
                 _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps)
UFNO_PEAK_KERNEL(mul_add_sse, , __m128, 4, _mm_set1_ps, mul_then_add, _mm_add_ps, _mm_storeu_ps)

#undef UFNO_PEAK_KERNEL
#undef UFNO_PEAK_UNROLL

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
