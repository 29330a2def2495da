#pragma once
// GEMM backend used by the pointwise layers and the pruned transforms (oneDNN matmul on the host;
// cuBLAS with a device build). Row-major C[M,N] = act(alpha * A[M,K] * B[K,N] + beta * C), the
// activation fused into the product's epilogue; pointers in the default memory space.
#include "operators/Activation.hpp"

namespace ufno::backend {

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc, Activation act = Activation::None, float slope = 0.f);

// The same A times each of `batch` matrices: C_b[M,N] = A[M,K] * B_b[K,N], B_b = B + b * stride_b,
// C_b = C + b * stride_c (no accumulation, no activation).
void gemm_shared_a(int batch, int M, int N, int K, const float* A, int lda, const float* B,
                   long stride_b, int ldb, float* C, long stride_c, int ldc);

void set_gemm_threads(int n);

}  // namespace ufno::backend
