#pragma once
// GEMM backend used by the pointwise layers and the pruned transforms (oneDNN matmul on the host;
// cuBLAS with a device build). Row-major C[M,N] = act(alpha * A[M,K] * B[K,N] + beta * C), the
// activation fused into the product's epilogue; pointers in the default memory space.
#include "core/Activation.hpp"

namespace ufno::backend {

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc, Activation act = Activation::None, float slope = 0.f);

// `batch` products C_i[M,N] = A_i[M,K] * B_i[K,N] + beta * C_i with X_i = X + i * stride_x; a
// stride of 0 shares that operand across the batch (one DFT matrix for every slice).
void gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                  const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                  int ldc);

void set_gemm_threads(int n);

}  // namespace ufno::backend
