#pragma once
// The GEMM of the pointwise layers and the pruned transforms, per backend (core/Backend.hpp):
// row-major C[M,N] = act(alpha * A[M,K] * B[K,N] + beta * C), the activation fused into the
// product's epilogue, and a batched form C_i = act(A_i * B_i + beta * C_i), X_i = X + i * stride_x,
// where a stride of 0 shares that operand across the batch (one DFT matrix for every slice).
// Pointers are in the backend's memory space.
#include <algorithm>

#include "core/Activation.hpp"
#include "core/Backend.hpp"
#include "core/ExecutionPlan.hpp"

namespace ufno::backend {

template <class Tag>
struct Gemm;

// oneDNN's matmul (core/GemmOnednn.cpp).
template <>
struct Gemm<Host> {
  // A product whose result another pass reads right after (the pruned transforms' combine and
  // stack passes) is cut into pieces of about this size, so the result is read from the cores'
  // caches instead of memory (a fraction of the L2 caches of the threads that share the work).
  static constexpr long kCacheBlockBytes = 1L << 20;
  static void run(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, Activation act, float slope);
  static void batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                      const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                      int ldc, Activation act = Activation::None);
  // The epilogue alone, in place on n contiguous values (for a product whose own epilogue would
  // be slow: oneDNN 2.6 runs batched products with an eltwise post-op in a slow kernel).
  static void activate(float* C, long n, Activation act);
};

// cuBLAS (core/GemmCublas.cu, in ufno_cuda): after the Kokkos kernels that wrote the operands.
template <>
struct Gemm<Cuda> {
  // One launch for the whole product: a GPU gains nothing from cutting it.
  static constexpr long kCacheBlockBytes = 0;
  static void run(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, Activation act, float slope);
  static void batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                      const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                      int ldc, Activation act = Activation::None);
  // The epilogue alone, in place on n contiguous values (for a product whose own epilogue would
  // be slow: oneDNN 2.6 runs batched products with an eltwise post-op in a slow kernel).
  static void activate(float* C, long n, Activation act);
};

// The layers' GEMM: the backend of the tensors' memory space.
inline void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                 float beta, float* C, int ldc, Activation act = Activation::None,
                 float slope = 0.f) {
  Gemm<Default>::run(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, act, slope);
}

// How many items of `item_bytes` of intermediate results to take at a time (all of them when
// the backend does not block for the cache); at least 1.
inline long cache_block_items(long items, long item_bytes) {
  constexpr long block = Gemm<Default>::kCacheBlockBytes;
  if (block == 0 || item_bytes <= 0 || !execution_plan().cache_blocked) return items;
  return std::max(1L, std::min(items, block / item_bytes));
}

inline void activate_in_place(float* C, long n, Activation act) {
  if (act != Activation::None && n > 0) Gemm<Default>::activate(C, n, act);
}

inline void gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                         const float* B, long stride_b, int ldb, float beta, float* C,
                         long stride_c, int ldc, Activation act = Activation::None) {
  Gemm<Default>::batched(batch, M, N, K, A, stride_a, lda, B, stride_b, ldb, beta, C, stride_c, ldc,
                         act);
}

}  // namespace ufno::backend
