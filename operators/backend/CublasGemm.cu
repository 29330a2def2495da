// Row-major GEMM through column-major cuBLAS: a row-major X is the column-major X^T with the same
// leading dimension, and C^T = B^T A^T, so cuBLAS computes C^T (N x M) from B^T and A^T: the
// operands are swapped and nothing is transposed or copied.
#include <cublas_v2.h>

#include <string>

#include "operators/backend/CublasGemm.hpp"
#include "operators/backend/CudaCheck.cuh"

namespace ufno::backend::cuda {

namespace {

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
    // Plain FP32 (no TF32 tensor cores), so that results agree with the host backend to ~1e-6.
    check_cublas(cublasSetMathMode(made, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    return made;
  }();
  return h;
}

}  // namespace

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
  if (M == 0 || N == 0) return;
  check_cublas(cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
                           &beta, C, ldc),
               "cublasSgemm");
}

}  // namespace ufno::backend::cuda
