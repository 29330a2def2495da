#pragma once
// GEMM backend used by the pointwise layers (OpenBLAS on the host; cuBLAS with a device build).
// Row-major C[M,N] = alpha * A[M,K] * B[K,N] + beta * C, pointers in the default memory space.
namespace ufno::backend {

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc);

void set_gemm_threads(int n);

}  // namespace ufno::backend
