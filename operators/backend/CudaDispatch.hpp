#pragma once
// The CUDA backends as the layers' factories hand them out in a GPU build (UFNO_CUDA_BACKEND,
// defined when Kokkos has CUDA and ufno_cuda is built; cmake/Cuda.cmake): make_fft1d_plan,
// gemm and gemm_batched call these, and make_conv_primitive calls make_cudnn_conv_primitive
// (CudnnConv.hpp), whenever the tensors live on the GPU (kHostTensors is false). Each call waits
// for the Kokkos kernels before it and for the device after it (see CudnnConvPrimitive.cu).
// No CUDA types here. Compiled with ufno_cuda wherever nvcc is found; never run (no GPU).
#include <memory>

#include "core/Activation.hpp"
#include "fft/Fft1dPlan.hpp"

namespace ufno::backend::cuda {

std::unique_ptr<fft::Fft1dPlan> make_layer_fft1d_plan(fft::Transform t, const fft::Batch1d& b);

void layer_gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                float beta, float* C, int ldc, Activation act, float slope);

void layer_gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                        const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                        int ldc);

}  // namespace ufno::backend::cuda
