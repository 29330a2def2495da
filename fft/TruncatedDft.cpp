#include "fft/TruncatedDft.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/Gemm.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

namespace ufno::fft {

TruncatedDft::TruncatedDft(int n, int low, int high) : TruncatedDft(n, low, high, 0, n) {}

TruncatedDft::TruncatedDft(int n, int low, int high, int offset, int length)
    : n_(n), low_(low), high_(high), len_(length) {
  if (n < 1 || low < 0 || high < 0 || low + high < 1 || low + high > n)
    throw std::invalid_argument("TruncatedDft: cannot keep " + std::to_string(low) + " + " +
                                std::to_string(high) + " bins of a length-" + std::to_string(n) +
                                " transform");
  if (offset < 0 || length < 1 || offset > n - length)
    throw std::invalid_argument("TruncatedDft: window [" + std::to_string(offset) + ", " +
                                std::to_string(long(offset) + length) + ") is not inside [0, " +
                                std::to_string(n) + ")");
  const int K = low + high;
  // The kept bins' classes, in increasing order, and each bin's class and sign.
  std::vector<int> bins(K), cls;
  for (int k = 0; k < K; ++k) {
    bins[k] = k < low ? k : n - high + (k - low);
    cls.push_back(std::min(bins[k], n - bins[k]));
  }
  std::sort(cls.begin(), cls.end());
  cls.erase(std::unique(cls.begin(), cls.end()), cls.end());
  classes_ = int(cls.size());
  std::vector<int> class_of(K), sign_of(K), plus(classes_, -1), minus(classes_, -1);
  for (int k = 0; k < K; ++k) {
    const int f = std::min(bins[k], n - bins[k]);
    class_of[k] = int(std::lower_bound(cls.begin(), cls.end(), f) - cls.begin());
    sign_of[k] = bins[k] <= n - bins[k] ? 1 : -1;
    (sign_of[k] > 0 ? plus : minus)[class_of[k]] = k;
  }
  class_of_ = device_copy_of(class_of, "tdft.class_of");
  sign_of_ = device_copy_of(sign_of, "tdft.sign_of");
  plus_bin_ = device_copy_of(plus, "tdft.plus_bin");
  minus_bin_ = device_copy_of(minus, "tdft.minus_bin");
  const int F = classes_;
  f_ = decltype(f_)("tdft.c.forward", 2 * F, length);
  g_ = decltype(g_)("tdft.c.backward", length, 2 * F);
  auto hf = Kokkos::create_mirror_view(f_);
  auto hg = Kokkos::create_mirror_view(g_);
  for (int q = 0; q < F; ++q)
    for (int j = 0; j < length; ++j) {
      // Exact reduction mod n.
      const double a = 2.0 * M_PI * double((long(cls[q]) * (j + offset)) % n) / n;
      hf(q, j) = hg(j, q) = float(std::cos(a));
      hf(F + q, j) = hg(j, F + q) = float(std::sin(a));
    }
  Kokkos::deep_copy(f_, hf);
  Kokkos::deep_copy(g_, hg);
}

void TruncatedDft::forward(const complexf* in, complexf* out, long outer, long inner) const {
  if (outer == 0 || inner == 0) return;
  const int K = kept(), F = classes_;
  const long w = 2 * inner;  // real columns of a slice
  // A few slices at a time, so that the combine pass reads P from the cache the GEMM left it in.
  const long step = backend::cache_block_items(outer, 2L * F * w * long(sizeof(float)));
  auto p = temporary<Kokkos::View<float*, DeviceSpace>>("tdft.p", step * 2 * F * w);
  auto class_of = class_of_;
  auto sign_of = sign_of_;
  for (long s0 = 0; s0 < outer; s0 += step) {
    const long ns = std::min(step, outer - s0);
    // P = [C; S] x per slice: A then B, one row per bin class.
    backend::gemm_batched(int(ns), 2 * F, int(w), len_, f_.data(), 0, len_,
                          reinterpret_cast<const float*>(in + s0 * len_ * inner), long(len_) * w,
                          int(w), 0.f, p.data(), 2L * F * w, int(w));
    // Bin b of class f: A_f - i sign B_f, per complex column.
    float* o = reinterpret_cast<float*>(out + s0 * K * inner);
    const float* pp = p.data();
    ufno::parallel_runs(
        "ufno::tdft_combine", ns * K, inner,
        KOKKOS_LAMBDA(const int64_t row, int64_t c0, int64_t c1) {
          const int64_t s = row / K, k = row % K;
          const float* A = pp + (s * 2 * F + class_of(k)) * w;
          const float* B = A + F * w;
          const float sg = float(sign_of(k));
          float* dst = o + row * w;
          for (int64_t t = 2 * c0; t < 2 * c1; t += 2) {
            dst[t] = A[t] + sg * B[t + 1];
            dst[t + 1] = A[t + 1] - sg * B[t];
          }
        });
  }
}

void TruncatedDft::backward(const complexf* in, complexf* out, long outer, long inner) const {
  if (outer == 0 || inner == 0) return;
  const int K = kept(), F = classes_;
  const long w = 2 * inner;
  // q = [p; i d] per slice: the sum and the difference of each class's two bins (a bin not kept
  // being zero), the difference multiplied by i; (2F x 2 inner) real, a few slices at a time
  // (read from the cache by the GEMM right after this pass wrote it).
  const long step = backend::cache_block_items(outer, 2L * F * w * long(sizeof(float)));
  auto q = temporary<Kokkos::View<float*, DeviceSpace>>("tdft.q", step * 2 * F * w);
  auto plus_bin = plus_bin_;
  auto minus_bin = minus_bin_;
  for (long s0 = 0; s0 < outer; s0 += step) {
    const long ns = std::min(step, outer - s0);
    const float* y = reinterpret_cast<const float*>(in + s0 * K * inner);
    float* qq = q.data();
    ufno::parallel_runs(
        "ufno::tdft_pair_bins", ns * F, inner,
        KOKKOS_LAMBDA(const int64_t i, int64_t c0, int64_t c1) {
          const int64_t s = i / F, f = i % F;
          const int bp = plus_bin(f), bm = minus_bin(f);
          const float* yp = y + (s * K + (bp >= 0 ? bp : 0)) * w;
          const float* ym = y + (s * K + (bm >= 0 ? bm : 0)) * w;
          float* top = qq + (s * 2 * F + f) * w;
          float* bottom = top + F * w;
          for (int64_t t = 2 * c0; t < 2 * c1; t += 2) {
            const float pr = bp >= 0 ? yp[t] : 0.f, pi = bp >= 0 ? yp[t + 1] : 0.f;
            const float mr = bm >= 0 ? ym[t] : 0.f, mi = bm >= 0 ? ym[t + 1] : 0.f;
            top[t] = pr + mr;
            top[t + 1] = pi + mi;
            bottom[t] = mi - pi;  // i (y+ - y-)
            bottom[t + 1] = pr - mr;
          }
        });
    // x = [C^T | S^T] [p; i d] = P + i Q.
    backend::gemm_batched(int(ns), len_, int(w), 2 * F, g_.data(), 0, 2 * F, q.data(), 2L * F * w,
                          int(w), 0.f, reinterpret_cast<float*>(out + s0 * len_ * inner),
                          long(len_) * w, int(w));
  }
}

}  // namespace ufno::fft
