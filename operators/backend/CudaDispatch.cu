// The fenced CUDA backends of CudaDispatch.hpp: cuFFT plans and cuBLAS GEMMs that first wait for
// the Kokkos kernels that wrote their input and then for the device.
#include "fft/CufftPlan.hpp"
#include "operators/backend/CublasGemm.hpp"
#include "operators/backend/CudaDevice.hpp"
#include "operators/backend/CudaDispatch.hpp"

namespace ufno::backend::cuda {

namespace {

class FencedPlan final : public fft::Fft1dPlan {
 public:
  explicit FencedPlan(std::unique_ptr<fft::Fft1dPlan> plan) : plan_(std::move(plan)) {}
  fft::Transform transform() const override { return plan_->transform(); }
  const fft::Batch1d& batch() const override { return plan_->batch(); }
  void execute(void* in, void* out) override {
    Kokkos::fence();
    plan_->execute(in, out);
    synchronize();
  }

 private:
  std::unique_ptr<fft::Fft1dPlan> plan_;
};

}  // namespace

std::unique_ptr<fft::Fft1dPlan> make_layer_fft1d_plan(fft::Transform t, const fft::Batch1d& b) {
  return std::make_unique<FencedPlan>(fft::cuda::make_cufft_plan(t, b));
}

void layer_gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                float beta, float* C, int ldc, Activation act, float slope) {
  Kokkos::fence();
  gemm(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, act, slope);
  synchronize();
}

void layer_gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                        const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                        int ldc) {
  Kokkos::fence();
  gemm_batched(batch, M, N, K, A, stride_a, lda, B, stride_b, ldb, beta, C, stride_c, ldc);
  synchronize();
}

}  // namespace ufno::backend::cuda
