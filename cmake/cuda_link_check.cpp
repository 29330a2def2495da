// Built (never run) wherever the CUDA backend is: takes the address of every Cuda specialisation
// of the backends (core/Backend.hpp) that the layers call in a GPU build, so that one missing or
// misspelt in ufno_cuda fails the link here, on a machine whose Kokkos is Serial only.
#include <cstdio>

#include "core/Gemm.hpp"
#include "fft/Fft1dPlan.hpp"
#include "operators/backend/ConvPrimitive.hpp"

int main() {
  using namespace ufno;
  const void* entries[] = {
      reinterpret_cast<const void*>(&backend::Gemm<backend::Cuda>::run),
      reinterpret_cast<const void*>(&backend::Gemm<backend::Cuda>::batched),
      reinterpret_cast<const void*>(&fft::FftPlans<backend::Cuda>::make),
      reinterpret_cast<const void*>(&backend::ConvPrimitives<backend::Cuda>::make)};
  std::printf("ufno_cuda_link_check: %zu Cuda backend entries linked\n",
              sizeof entries / sizeof entries[0]);
  return 0;
}
