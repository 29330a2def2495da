#pragma once
// cuBLAS implementation of the GEMM backend (Gemm.hpp) for a device build: the same row-major
// C[M,N] = act(alpha * A[M,K] * B[K,N] + beta * C), with A, B, C CUDA device pointers, the
// activation as one kernel after the product, and the batched form (a stride of 0 shares an
// operand) that the pruned transforms use. Runs on the default stream and returns before the
// product is done. Not yet called by the layers: see docs/gpu.md.
#include "core/Activation.hpp"

namespace ufno::backend::cuda {

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc, Activation act = Activation::None, float slope = 0.f);

void gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                  const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                  int ldc);

}  // namespace ufno::backend::cuda
