#pragma once
// The GEMM of the pointwise layers and the pruned transforms, per backend (core/Backend.hpp):
// row-major C[M,N] = act(alpha * A[M,K] * B[K,N] + beta * C), the activation fused into the
// product's epilogue, and a batched form C_i = A_i * B_i + beta * C_i with X_i = X + i * stride_x,
// where a stride of 0 shares that operand across the batch (one DFT matrix for every slice).
// Pointers are in the backend's memory space.
#include "core/Activation.hpp"
#include "core/Backend.hpp"

namespace ufno::backend {

template <class Tag>
struct Gemm;

// oneDNN's matmul (core/GemmOnednn.cpp).
template <>
struct Gemm<Host> {
  static void run(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, Activation act, float slope);
  static void batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                      const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                      int ldc);
};

// cuBLAS (core/GemmCublas.cu, in ufno_cuda): after the Kokkos kernels that wrote the operands.
template <>
struct Gemm<Cuda> {
  static void run(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, Activation act, float slope);
  static void batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                      const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                      int ldc);
};

// The layers' GEMM: the backend of the tensors' memory space.
inline void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                 float beta, float* C, int ldc, Activation act = Activation::None,
                 float slope = 0.f) {
  Gemm<Default>::run(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, act, slope);
}

inline void gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                         const float* B, long stride_b, int ldb, float beta, float* C,
                         long stride_c, int ldc) {
  Gemm<Default>::batched(batch, M, N, K, A, stride_a, lda, B, stride_b, ldb, beta, C, stride_c,
                         ldc);
}

}  // namespace ufno::backend
