#pragma once
// cuBLAS implementation of the GEMM backend (Gemm.hpp) for a device build: the same row-major
// C[M,N] = alpha * A[M,K] * B[K,N] + beta * C, with A, B, C CUDA device pointers. Runs on the
// default stream and returns before the product is done. Not yet called by the layers: see
// docs/gpu.md.
namespace ufno::backend::cuda {

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc);

}  // namespace ufno::backend::cuda
