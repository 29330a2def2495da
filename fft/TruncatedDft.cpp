#include "fft/TruncatedDft.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/Gemm.hpp"
#include "core/Parallel.hpp"

namespace ufno::fft {

TruncatedDft::TruncatedDft(int n, int low, int high)
    : n_(n),
      low_(low),
      high_(high),
      f_("tdft.c.forward", 2 * (low + high), n),
      g_("tdft.c.backward", n, 2 * (low + high)) {
  if (n < 1 || low < 0 || high < 0 || low + high < 1 || low + high > n)
    throw std::invalid_argument("TruncatedDft: cannot keep " + std::to_string(low) + " + " +
                                std::to_string(high) + " bins of a length-" + std::to_string(n) +
                                " transform");
  const int K = low + high;
  auto hf = Kokkos::create_mirror_view(f_);
  auto hg = Kokkos::create_mirror_view(g_);
  for (int k = 0; k < K; ++k) {
    const long bin = k < low ? k : n - high + (k - low);
    for (int j = 0; j < n; ++j) {
      const double a = 2.0 * M_PI * double((bin * j) % n) / n;  // exact reduction mod n
      hf(k, j) = float(std::cos(a));
      hf(K + k, j) = float(-std::sin(a));
      hg(j, k) = float(std::cos(a));
      hg(j, K + k) = float(std::sin(a));
    }
  }
  Kokkos::deep_copy(f_, hf);
  Kokkos::deep_copy(g_, hg);
}

void TruncatedDft::forward(const complexf* in, complexf* out, long outer, long inner) const {
  if (outer == 0 || inner == 0) return;
  const int K = kept();
  const long w = 2 * inner;  // real columns of a slice
  // A few slices at a time, so that the combine pass reads P from the cache the GEMM left it in.
  const long step = backend::cache_block_items(outer, 2L * K * w * long(sizeof(float)));
  Kokkos::View<float*, DeviceSpace> p(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tdft.p"),
                                      step * 2 * K * w);
  for (long s0 = 0; s0 < outer; s0 += step) {
    const long ns = std::min(step, outer - s0);
    backend::gemm_batched(int(ns), 2 * K, int(w), n_, f_.data(), 0, n_,
                          reinterpret_cast<const float*>(in + s0 * n_ * inner), long(n_) * w,
                          int(w), 0.f, p.data(), 2L * K * w, int(w));
    // out[k] = (Re F x)[k] + i (Im F x)[k], per complex column.
    float* o = reinterpret_cast<float*>(out + s0 * K * inner);
    const float* pp = p.data();
    ufno::parallel_for(
        "ufno::tdft_combine", Kokkos::RangePolicy<ExecSpace>(0, ns * K),
        KOKKOS_LAMBDA(const int64_t row) {
          const int64_t s = row / K, k = row % K;
          const float* top = pp + (s * 2 * K + k) * w;
          const float* bottom = top + K * w;
          float* dst = o + row * w;
          for (long t = 0; t < w; t += 2) {
            dst[t] = top[t] - bottom[t + 1];
            dst[t + 1] = top[t + 1] + bottom[t];
          }
        });
  }
}

void TruncatedDft::backward(const complexf* in, complexf* out, long outer, long inner) const {
  if (outer == 0 || inner == 0) return;
  const int K = kept();
  const long w = 2 * inner;
  // q = [y; i y] per slice: (2K x 2 inner) real, a few slices at a time (read from the cache by
  // the GEMM right after the stack pass wrote it).
  const long step = backend::cache_block_items(outer, 2L * K * w * long(sizeof(float)));
  Kokkos::View<float*, DeviceSpace> q(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tdft.q"),
                                      step * 2 * K * w);
  for (long s0 = 0; s0 < outer; s0 += step) {
    const long ns = std::min(step, outer - s0);
    const float* y = reinterpret_cast<const float*>(in + s0 * K * inner);
    float* qq = q.data();
    ufno::parallel_for(
        "ufno::tdft_stack", Kokkos::RangePolicy<ExecSpace>(0, ns * K),
        KOKKOS_LAMBDA(const int64_t row) {
          const int64_t s = row / K, k = row % K;
          const float* src = y + row * w;
          float* top = qq + (s * 2 * K + k) * w;
          float* bottom = top + K * w;
          for (long t = 0; t < w; t += 2) {
            top[t] = src[t];
            top[t + 1] = src[t + 1];
            bottom[t] = -src[t + 1];
            bottom[t + 1] = src[t];
          }
        });
    backend::gemm_batched(int(ns), n_, int(w), 2 * K, g_.data(), 0, 2 * K, q.data(), 2L * K * w,
                          int(w), 0.f, reinterpret_cast<float*>(out + s0 * n_ * inner),
                          long(n_) * w, int(w));
  }
}

}  // namespace ufno::fft
