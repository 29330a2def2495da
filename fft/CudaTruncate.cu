// Mode truncation and zero-padding kernels: one thread per destination element (grid-stride), so
// every element is written exactly once and the zero-padding needs no separate memset.
#include <cuComplex.h>

#include <stdexcept>
#include <string>

#include "core/CudaCheck.cuh"
#include "fft/CudaTruncate.hpp"

namespace ufno::fft::cuda {

namespace {

using backend::cuda::check_launch;
using backend::cuda::grid_for;
using backend::cuda::kThreads;

// dst (outer, low + high, inner): kept bin j is source bin j (j < low) or n - high + (j - low).
__global__ void truncate_kernel(const cuFloatComplex* src, cuFloatComplex* dst, long long outer,
                                int n, long long inner, int low, int high) {
  const long long m = low + high, total = outer * m * inner;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long i = e % inner, j = (e / inner) % m, o = e / (inner * m);
    const long long k = j < low ? j : n - high + (j - low);
    dst[e] = src[(o * n + k) * inner + i];
  }
}

// dst (outer, n, inner): bin k < low is kept bin k, bin k >= n - high is kept bin
// low + k - (n - high), any other bin is zero.
__global__ void zero_pad_kernel(const cuFloatComplex* src, cuFloatComplex* dst, long long outer,
                                int n, long long inner, int low, int high) {
  const long long m = low + high, total = outer * n * inner;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long i = e % inner, k = (e / inner) % n, o = e / (inner * n);
    if (k < low)
      dst[e] = src[(o * m + k) * inner + i];
    else if (k >= n - high)
      dst[e] = src[(o * m + low + k - (n - high)) * inner + i];
    else
      dst[e] = make_cuFloatComplex(0.f, 0.f);
  }
}

void check_modes(long outer, int n, long inner, int low, int high) {
  if (outer < 0 || n < 1 || inner < 1 || low < 0 || high < 0 || low + high > n)
    throw std::invalid_argument("fft: kept modes (low " + std::to_string(low) + ", high " +
                                std::to_string(high) + ") do not fit an axis of length " +
                                std::to_string(n));
}

}  // namespace

void truncate_modes(const void* src, void* dst, long outer, int n, long inner, int low, int high) {
  check_modes(outer, n, inner, low, high);
  const long long total = (long long)outer * (low + high) * inner;
  if (total == 0) return;
  truncate_kernel<<<grid_for(total), kThreads>>>(static_cast<const cuFloatComplex*>(src),
                                                 static_cast<cuFloatComplex*>(dst), outer, n, inner,
                                                 low, high);
  check_launch("truncate_modes");
}

void zero_pad_modes(const void* src, void* dst, long outer, int n, long inner, int low, int high) {
  check_modes(outer, n, inner, low, high);
  const long long total = (long long)outer * n * inner;
  if (total == 0) return;
  zero_pad_kernel<<<grid_for(total), kThreads>>>(static_cast<const cuFloatComplex*>(src),
                                                 static_cast<cuFloatComplex*>(dst), outer, n, inner,
                                                 low, high);
  check_launch("zero_pad_modes");
}

}  // namespace ufno::fft::cuda
