#pragma once
// The real-to-complex DFT of length n along the contiguous last axis of a (rows, n) array, keeping
// only its first m bins, and the complex-to-real inverse from those m bins (all others zero), each
// computed as one GEMM against a precomputed DFT matrix: (rows, n) x (n, 2m) forward and
// (rows, 2m) x (2m, n) backward, complex values interleaved (re, im).
//
// Why: the Fourier layers keep 10 of the 17 bins of a length-32 T axis. A pruned transform never
// forms the full spectrum, so the full-size intermediate and the truncation (forward) or
// zero-padding (backward) copies disappear, and the work becomes a skinny GEMM that runs at
// memory speed on every thread the BLAS has. For such short axes the GEMM's 4nm flops per row are
// no more than an FFT's memory traffic costs; long axes with many kept modes should use an FFT.
//
// A window: when the signal of period n is known to be zero outside samples [offset, offset +
// length), the forward transform reads only those samples, (rows, length), and the inverse writes
// only those, (rows, length): the DFT matrices lose the other rows or columns. A zero-padded
// tensor's interior is transformed without its padding (the 4-D FNO's first layer), and only the
// part a crop keeps is computed (its last layer). Without a window, length = n, offset = 0.
//
// Conventions match FFTW's: forward unnormalised with exp(-i...), backward unnormalised with
// exp(+i...) over the Hermitian completion, so the imaginary parts of bin 0 and of the Nyquist bin
// (n even, m = n/2 + 1) are ignored, as a c2r ignores them.
#include "core/Activation.hpp"
#include "core/Tensor.hpp"

namespace ufno::fft {

class TruncatedRealDft {
 public:
  TruncatedRealDft(int n, int m);  // 1 <= m <= n/2 + 1
  // Period n, samples [offset, offset + length) of it: 0 <= offset, offset + length <= n.
  TruncatedRealDft(int n, int m, int offset, int length);

  int period() const { return n_; }
  int length() const { return len_; }  // samples per row, in and out of the transforms
  int kept() const { return m_; }
  // in (rows, n) real -> out (rows, m) complex. Device pointers.
  void forward(const float* in, complexf* out, long rows) const;
  // The same on `batch` blocks of `rows` rows, in_i = in + i * in_stride (floats), out_i = out +
  // i * out_stride (complex elements): strided blocks such as the X rows of every channel.
  void forward_batched(const float* in, long in_stride, complexf* out, long out_stride, int batch,
                       long rows) const;
  // in (rows, m) complex -> out (rows, n) real. Device pointers; in is not modified.
  void backward(const complexf* in, float* out, long rows) const;
  // The same on `batch` blocks of `rows` rows, in_i = in + i * in_stride (complex elements),
  // out_i = out + i * out_stride (floats), accumulating: out_i = act(beta * out_i + inverse(in_i)).
  void backward_batched(const complexf* in, long in_stride, float* out, long out_stride, int batch,
                        long rows, float beta, Activation act = Activation::None) const;

 private:
  int n_, m_, len_;
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> f_;  // (length, 2m)
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> g_;  // (2m, length)
};

}  // namespace ufno::fft
