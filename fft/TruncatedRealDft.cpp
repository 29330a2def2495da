#include "fft/TruncatedRealDft.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/Gemm.hpp"

namespace ufno::fft {

TruncatedRealDft::TruncatedRealDft(int n, int m) : TruncatedRealDft(n, m, 0, n) {}

TruncatedRealDft::TruncatedRealDft(int n, int m, int offset, int length)
    : n_(n), m_(m), len_(length) {
  if (n < 1 || m < 1 || m > n / 2 + 1)
    throw std::invalid_argument("TruncatedRealDft: cannot keep " + std::to_string(m) +
                                " bins of a length-" + std::to_string(n) + " real transform");
  if (offset < 0 || length < 1 || offset > n - length)
    throw std::invalid_argument("TruncatedRealDft: window [" + std::to_string(offset) + ", " +
                                std::to_string(long(offset) + length) + ") is not inside [0, " +
                                std::to_string(n) + ")");
  f_ = decltype(f_)("tdft.forward", length, 2 * m);
  g_ = decltype(g_)("tdft.backward", 2 * m, length);
  auto hf = Kokkos::create_mirror_view(f_);
  auto hg = Kokkos::create_mirror_view(g_);
  for (int k = 0; k < m; ++k) {
    // Bins other than 0 and Nyquist stand for themselves and their conjugate partner n - k.
    const double w = (k == 0 || 2 * k == n) ? 1.0 : 2.0;
    for (int j = 0; j < length; ++j) {
      // The angle is reduced modulo n in integers so that large k * j stay exact.
      const double a = 2.0 * M_PI * double((long(k) * (j + offset)) % n) / n;
      hf(j, 2 * k) = float(std::cos(a));
      hf(j, 2 * k + 1) = float(-std::sin(a));
      hg(2 * k, j) = float(w * std::cos(a));
      hg(2 * k + 1, j) = float(-w * std::sin(a));
    }
  }
  Kokkos::deep_copy(f_, hf);
  Kokkos::deep_copy(g_, hg);
}

void TruncatedRealDft::forward(const float* in, complexf* out, long rows) const {
  if (rows == 0) return;
  backend::gemm(int(rows), 2 * m_, len_, 1.f, in, len_, f_.data(), 2 * m_, 0.f,
                reinterpret_cast<float*>(out), 2 * m_);
}

void TruncatedRealDft::forward_batched(const float* in, long in_stride, complexf* out,
                                       long out_stride, int batch, long rows) const {
  if (rows == 0 || batch == 0) return;
  backend::gemm_batched(batch, int(rows), 2 * m_, len_, in, in_stride, len_, f_.data(), 0, 2 * m_,
                        0.f, reinterpret_cast<float*>(out), 2 * out_stride, 2 * m_);
}

void TruncatedRealDft::backward(const complexf* in, float* out, long rows) const {
  if (rows == 0) return;
  backend::gemm(int(rows), len_, 2 * m_, 1.f, reinterpret_cast<const float*>(in), 2 * m_, g_.data(),
                len_, 0.f, out, len_);
}

void TruncatedRealDft::backward_batched(const complexf* in, long in_stride, float* out,
                                        long out_stride, int batch, long rows, float beta,
                                        Activation act) const {
  if (rows == 0 || batch == 0) return;
  backend::gemm_batched(batch, int(rows), len_, 2 * m_, reinterpret_cast<const float*>(in),
                        2 * in_stride, 2 * m_, g_.data(), 0, len_, beta, out, out_stride, len_,
                        act);
}

}  // namespace ufno::fft
