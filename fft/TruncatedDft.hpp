#pragma once
// The complex DFT of length n along the middle axis of a (outer, n, inner) array that computes only
// the kept bins (the `low` first and `high` last, as the Fourier layers truncate X and Y), and its
// inverse from those bins with all others zero. Both are batched GEMMs with DFT matrices shared by
// every outer slice, between two light passes; complex values are interleaved.
//
// Why: after the T transform the middle axes keep 20 of 57 to 208 bins. A full FFT of the
// strided axis followed by truncation (or zero-padding followed by the inverse) ran 3-4x slower
// than GEMMs, which also drop the truncation and zero-padding copies.
//
// Bins f and n - f share their cosines and their sines up to sign, so the GEMMs run over the
// classes f = min(b, n - b) of the kept bins, not the bins: about half the work when the kept bins
// are low and high ones. Forward: per class A_f = C x and B_f = S x (real cosine and sine rows
// times complex columns: one GEMM with [C; S]), then bin b of class f is A_f - i s B_f, s = +1 for
// b = f and -1 for b = n - f (the combine pass). Inverse: per class the sum p_f and the difference
// d_f of its two bins (a bin not kept being zero), then x = [C^T | S^T] [p; i d].
// A window (as in TruncatedRealDft.hpp): with samples [offset, offset + length) of the period n
// given, the middle axis has `length` cells in and out; the others are zero on input and not
// computed on output.
// Unnormalised, exp(-i...) forward and exp(+i...) backward, as FFTW's c2c.
#include "core/Tensor.hpp"

namespace ufno::fft {

class TruncatedDft {
 public:
  TruncatedDft(int n, int low, int high);  // low + high <= n
  // Period n, samples [offset, offset + length) of it: 0 <= offset, offset + length <= n.
  TruncatedDft(int n, int low, int high, int offset, int length);

  int period() const { return n_; }
  int length() const { return len_; }  // cells of the middle axis, in and out
  int kept() const { return low_ + high_; }
  // in (outer, length, inner) -> out (outer, low + high, inner). Device pointers.
  void forward(const complexf* in, complexf* out, long outer, long inner) const;
  // in (outer, low + high, inner) -> out (outer, length, inner). Device pointers.
  void backward(const complexf* in, complexf* out, long outer, long inner) const;

 private:
  int n_, low_, high_, len_;
  int classes_;  // bin classes f = min(b, n - b) of the kept bins
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> f_;  // (2 classes, length): [C; S]
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> g_;  // (length, 2 classes): [C^T | S^T]
  Kokkos::View<int*, DeviceSpace> class_of_;                   // per kept bin: its class
  Kokkos::View<int*, DeviceSpace> sign_of_;    // per kept bin: +1 (b = f) or -1 (b = n - f)
  Kokkos::View<int*, DeviceSpace> plus_bin_;   // per class: the kept bin f, or -1
  Kokkos::View<int*, DeviceSpace> minus_bin_;  // per class: the kept bin n - f (f != n - f), or -1
};

}  // namespace ufno::fft
