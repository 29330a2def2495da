// Gemm<Cuda> (core/Gemm.hpp): row-major GEMM through column-major cuBLAS. A row-major X is the
// column-major X^T with the same leading dimension, and C^T = B^T A^T, so cuBLAS computes C^T
// (N x M) from B^T and A^T: the operands are swapped and nothing is transposed or copied. Every
// call runs on the Kokkos stream (core/CudaDevice.hpp): ordered with the kernels around it.
#include <cublas_v2.h>

#include <string>

#include "core/CudaCheck.cuh"
#include "core/CudaDevice.hpp"
#include "core/Gemm.hpp"
#include "core/Tf32.hpp"

namespace ufno::backend {

namespace {

using cuda::check_launch;
using cuda::grid_for;
using cuda::kThreads;

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + what +
                             " failed: " + cublasGetStatusString(s));
}

// One handle for the process, made on first use (creating one costs milliseconds and device
// memory). Deliberately never destroyed: at exit the CUDA runtime may already be torn down, and
// the driver frees everything with the process anyway. The magic static makes the creation
// thread-safe; if it throws, the next call tries again.
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t made = nullptr;
    check_cublas(cublasCreate(&made), "cublasCreate");
    // Plain FP32 unless TF32 is allowed (on_stream), so that results agree with the host
    // backend to ~1e-6.
    check_cublas(cublasSetMathMode(made, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    return made;
  }();
  return h;
}

// The handle on the Kokkos stream, in the math mode of the process's TF32 setting (both set
// per call: cheap, and right whichever stream and setting are current).
cublasHandle_t on_stream() {
  check_cublas(cublasSetStream(handle(), static_cast<cudaStream_t>(cuda::kokkos_stream())),
               "cublasSetStream");
  check_cublas(cublasSetMathMode(handle(),
                                 tf32_allowed() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
               "cublasSetMathMode");
  return handle();
}

// act over the M x N block of a row-major matrix with leading dimension ldc. A grid-stride loop:
// grid_for caps the grid at 65,536 blocks, so one element per thread would leave every element
// beyond the first 16.8 M untouched (fc1's ReLU at the paper size covers 88.6 M).
__global__ void activate_block(float* c, long long M, long long N, long long ldc, int act,
                               float slope) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < M * N;
       i += (long long)gridDim.x * blockDim.x) {
    float& v = c[(i / N) * ldc + i % N];
    if (act == int(Activation::GELU))
      v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    else if (v < 0.f)
      v = act == int(Activation::LeakyReLU) ? slope * v : 0.f;
  }
}

void cublas_gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                 float beta, float* C, int ldc, Activation act, float slope) {
  if (M == 0 || N == 0) return;
  check_cublas(cublasSgemm(on_stream(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
                           &beta, C, ldc),
               "cublasSgemm");
  LaunchLog::record_library("cublasSgemm");
  if (act == Activation::None) return;
  const long long total = (long long)M * N;
  activate_block<<<grid_for(total), kThreads, 0,
                   static_cast<cudaStream_t>(cuda::kokkos_stream())>>>(C, M, N, ldc, int(act),
                                                                       slope);
  check_launch("activate_block", total);
}

void cublas_gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                         const float* B, long stride_b, int ldb, float beta, float* C,
                         long stride_c, int ldc, Activation act) {
  if (batch == 0 || M == 0 || N == 0) return;
  const float one = 1.f;
  // Column-major C_i^T = B_i^T A_i^T; a batch stride of 0 gives every entry the same operand.
  check_cublas(
      cublasSgemmStridedBatched(on_stream(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, ldb,
                                stride_b, A, lda, stride_a, &beta, C, ldc, stride_c, batch),
      "cublasSgemmStridedBatched");
  LaunchLog::record_library("cublasSgemmStridedBatched");
  if (act == Activation::None) return;
  const long long total = (long long)M * N;
  for (int i = 0; i < batch; ++i) {
    activate_block<<<grid_for(total), kThreads, 0,
                     static_cast<cudaStream_t>(cuda::kokkos_stream())>>>(C + i * stride_c, M, N,
                                                                         ldc, int(act), 0.f);
    check_launch("activate_block", total);
  }
}

}  // namespace

void Gemm<Cuda>::activate(float* C, long n, Activation act) {
  activate_block<<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(cuda::kokkos_stream())>>>(
      C, 1, n, n, int(act), 0.f);
  check_launch("activate_block", n);
}

void Gemm<Cuda>::run(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                     int ldb, float beta, float* C, int ldc, Activation act, float slope) {
  cublas_gemm(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, act, slope);
}

void Gemm<Cuda>::batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                         const float* B, long stride_b, int ldb, float beta, float* C,
                         long stride_c, int ldc, Activation act) {
  cublas_gemm_batched(batch, M, N, K, A, stride_a, lda, B, stride_b, ldb, beta, C, stride_c, ldc,
                      act);
}

}  // namespace ufno::backend
