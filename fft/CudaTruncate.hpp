#pragma once
// Device version of the mode truncation that follows each 1-D FFT of the spectral convolution and
// the distributed FFT (operators/SpectralTruncation.hpp), on a complex array viewed as
// (outer, n, inner) like Fft1dPlan: an axis of length n keeps its `low` first bins and its `high`
// last bins (the negative frequencies), in that order. The FNO keeps low = high = m on the c2c X
// and Y axes and low = m, high = 0 on the r2c T axis (n = T/2+1); a C2C distributed FFT keeps
// low = high = m on T too. Pointers are CUDA device pointers to interleaved complex floats
// (ufno::complexf); src and dst must not overlap. Kernels run on the default stream.
namespace ufno::fft::cuda {

// src (outer, n, inner) -> dst (outer, low + high, inner).
void truncate_modes(const void* src, void* dst, long outer, int n, long inner, int low, int high);

// The inverse: src (outer, low + high, inner) -> dst (outer, n, inner), the other bins zero.
void zero_pad_modes(const void* src, void* dst, long outer, int n, long inner, int low, int high);

}  // namespace ufno::fft::cuda
