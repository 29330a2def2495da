// Host GEMM through CBLAS (OpenBLAS).
#include <cblas.h>

#include "operators/backend/Gemm.hpp"

extern "C" void openblas_set_num_threads(int);

namespace ufno::backend {

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
  if (M == 0 || N == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C,
              ldc);
}

void set_gemm_threads(int n) { openblas_set_num_threads(n < 1 ? 1 : n); }

}  // namespace ufno::backend
