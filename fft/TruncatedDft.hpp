#pragma once
// The complex DFT of length n along the middle axis of a (outer, n, inner) array that computes only
// the kept bins (the `low` first and `high` last, as the Fourier layers truncate X and Y), and its
// inverse from those bins with all others zero. Both are one batched GEMM, the DFT matrix shared by
// every outer slice, plus a pass over the small, truncated side; complex values are interleaved.
//
// Why: after the T transform the X and Y stages keep 20 of 104 or 208 bins. A full FFT of the
// strided axis followed by truncation (or zero-padding followed by the inverse) ran 3-4x slower
// than these GEMMs, which also drop the truncation and zero-padding copies.
//
// With K = low + high and a slice X (n x inner complex) seen as a real (n x 2 inner) matrix:
// forward P = [Re F; Im F] X (2K x 2 inner), then out = P_top + i P_bottom combined per complex
// entry; backward out = [Re G | Im G] [Y; iY] with iY the slice multiplied by i. Unnormalised,
// exp(-i...) forward and exp(+i...) backward, as FFTW's c2c.
#include "core/Tensor.hpp"

namespace ufno::fft {

class TruncatedDft {
 public:
  TruncatedDft(int n, int low, int high);  // low + high <= n

  int length() const { return n_; }
  int kept() const { return low_ + high_; }
  // in (outer, n, inner) -> out (outer, low + high, inner). Device pointers.
  void forward(const complexf* in, complexf* out, long outer, long inner) const;
  // in (outer, low + high, inner) -> out (outer, n, inner). Device pointers.
  void backward(const complexf* in, complexf* out, long outer, long inner) const;

 private:
  int n_, low_, high_;
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> f_;  // (2K, n): [Re F; Im F]
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> g_;  // (n, 2K): [Re G | Im G]
};

}  // namespace ufno::fft
