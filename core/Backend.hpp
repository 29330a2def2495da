#pragma once
// Backends per memory space, in one place (heFFTe's tags and traits). A tag names the family of
// vendor libraries that serves a memory space; each component is a class template specialised
// per tag: the GEMM (core/Gemm.hpp), the 1-D FFT plans (fft/Fft1dPlan.hpp) and the convolutions
// (operators/backend/ConvPrimitive.hpp). Layers call the Default tag's, that of the memory space
// tensors live in: the host libraries in a Kokkos build without CUDA, the CUDA libraries when the
// tensors live on the GPU. Nothing else chooses a backend, and no backend file tests for another.
#include "core/Tensor.hpp"

namespace ufno::backend {

struct Host {};  // oneDNN (GEMM, convolutions) and FFTW; host pointers
struct Cuda {};  // cuBLAS, cuDNN and cuFFT (the ufno_cuda library, built wherever nvcc is found)

template <class MemorySpace>
struct ForMemorySpace {
  using type = Host;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct ForMemorySpace<Kokkos::CudaSpace> {
  using type = Cuda;
};
#endif

// The backend of the memory space the layers' tensors live in.
using Default = typename ForMemorySpace<DeviceSpace>::type;

}  // namespace ufno::backend
