# Optional CUDA backend (cuFFT, cuBLAS, cuDNN): compiled and linked wherever a CUDA compiler is
# found, so that it keeps building, although no machine of this project has a GPU to run it
# (docs/gpu.md). The layers call it only in a GPU build (Kokkos with CUDA, see the end of this
# file). Defines the target ufno_cuda when enabled.
option(UFNO_CUDA "Build the CUDA backend (ufno_cuda) when a CUDA compiler is found" ON)

if(NOT UFNO_CUDA)
  message(STATUS "CUDA backend: disabled (UFNO_CUDA=OFF)")
  return()
endif()
if(UFNO_SANITIZE)
  message(STATUS "CUDA backend: skipped in the sanitizer build")
  return()
endif()

# CMake looks for nvcc in CUDACXX and on PATH only; toolkits usually sit in /usr/local/cuda
# without being on PATH. Pointed at through CUDACXX rather than CMAKE_CUDA_COMPILER because
# check_language skips its trial compile whenever CMAKE_CUDA_COMPILER is set, and an nvcc that
# cannot compile should skip the backend, not fail the configure. PATH (a cluster's module) wins.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND "$ENV{CUDACXX}" STREQUAL "")
  find_program(UFNO_NVCC nvcc PATHS /usr/local/cuda/bin)
  mark_as_advanced(UFNO_NVCC)
  if(UFNO_NVCC)
    set(ENV{CUDACXX} ${UFNO_NVCC})
  endif()
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "CUDA backend: nvcc not found, skipped")
  return()
endif()

# A100 (sm_80) and H100 (sm_90) unless given (-DCMAKE_CUDA_ARCHITECTURES=... or CUDAARCHS).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND "$ENV{CUDAARCHS}" STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "GPU architectures of the CUDA backend")
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
# The shared runtime (libcudart.so, which cuFFT, cuBLAS and cuDNN use too) for every target made
# from here on, including the C++ executables linking ufno_cuda: with nvcc's static default CMake
# appends -lcudart_static to their link lines, a second copy of the runtime.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)

find_package(CUDAToolkit REQUIRED)
find_library(CUDNN_LIB cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
find_path(CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
if(NOT CUDNN_LIB OR NOT CUDNN_INCLUDE)
  message(STATUS "CUDA backend: nvcc found but cuDNN not (CUDNN_LIB / CUDNN_INCLUDE), skipped")
  return()
endif()

# The Cuda backend of every component (core/Backend.hpp): device services and cuBLAS (core),
# cuFFT (fft), cuDNN (operators).
add_library(ufno_cuda STATIC
  core/CudaDevice.cu
  core/GemmCublas.cu
  fft/CufftPlan.cu
  operators/backend/CudnnConv.cu
  operators/backend/CudnnConvPrimitive.cu
)
# The project root privately: linked into ufno_core in a GPU build, it must not widen the layers'
# include roots.
target_include_directories(ufno_cuda PRIVATE ${PROJECT_SOURCE_DIR})
target_include_directories(ufno_cuda SYSTEM PUBLIC ${Kokkos_INCLUDE_DIRS} PRIVATE ${CUDNN_INCLUDE})
target_link_libraries(ufno_cuda PUBLIC ${UFNO_KOKKOS_LIBS}
  PRIVATE CUDA::cufft CUDA::cublas CUDA::cudart ${CUDNN_LIB})
# The host compiler's warnings for the host code of the .cu files (nvcc rejects -Wall itself).
# Kokkos passes its lambda flags to the C++ language only; the .cu files include the tensor
# headers' KOKKOS_LAMBDAs too.
target_compile_options(ufno_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra
                                         --extended-lambda --expt-relaxed-constexpr>)

list(TRANSFORM CMAKE_CUDA_ARCHITECTURES PREPEND "sm_" OUTPUT_VARIABLE _ufno_sms)
message(STATUS "CUDA backend: compiled for ${_ufno_sms} (cannot run here without a GPU)")
unset(_ufno_sms)

# A GPU build: with a Kokkos that has CUDA the tensors live on the GPU and the layers take the
# Cuda specialisations of the backends (core/Backend.hpp), which ufno_cuda defines. Debian's
# Kokkos is Serial only: here the layers take the Host ones, and ufno_cuda_link_check proves that
# every Cuda specialisation the layers would call is defined and links.
if(Kokkos_ENABLE_CUDA OR "CUDA" IN_LIST Kokkos_DEVICES)
  # At the bottom, so that on static link lines it follows every layer that calls it.
  target_link_libraries(ufno_core PUBLIC ufno_cuda)
  message(STATUS "CUDA backend: the layers use it (Kokkos devices: ${Kokkos_DEVICES})")
else()
  message(STATUS "CUDA backend: not used by the layers (Kokkos devices: ${Kokkos_DEVICES})")
endif()
add_executable(ufno_cuda_link_check cmake/cuda_link_check.cpp)
target_link_libraries(ufno_cuda_link_check PRIVATE ufno ufno_cuda)
