#!/usr/bin/env bash
# Configures and builds ufno the way a GPU build would be (cmake/Dependencies.cmake and
# cmake/Cuda.cmake taking a Kokkos that reports CUDA), on a machine without a CUDA Kokkos: a
# stand-in Kokkos package config reports the devices "SERIAL;CUDA" but points at Debian's Serial
# Kokkos. So the build links ufno_cuda into every program, while the tensors stay in host memory
# and the layers keep the Host backends (core/Backend.hpp). It proves the GPU build's CMake
# wiring, compiling and linking; nothing about running on a GPU (docs/gpu.md).
#
# Usage: scripts/check_gpu_build_config.sh [build-dir]   (default /tmp/ufno-gpu-config; about
# 10 minutes on 2 cores; needs nvcc and cuDNN in /usr/local/cuda)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-/tmp/ufno-gpu-config}
fake="$out/stand-in-kokkos"
mkdir -p "$fake"
lib=/usr/lib/$(gcc -print-multiarch)
cat > "$fake/KokkosConfig.cmake" <<CFG
# Stand-in: Debian's Serial Kokkos 3.4 under a Kokkos::kokkos target that claims CUDA.
set(Kokkos_VERSION 3.4.0)
set(Kokkos_DEVICES SERIAL CUDA)
set(Kokkos_ENABLE_CUDA ON)
if(NOT TARGET Kokkos::kokkos)
  add_library(Kokkos::kokkos INTERFACE IMPORTED)
  set_target_properties(Kokkos::kokkos PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES /usr/include/trilinos
    INTERFACE_LINK_LIBRARIES "$lib/libtrilinos_kokkoscore.so;$lib/libtrilinos_kokkoscontainers.so;dl")
endif()
CFG
cmake -S "$root" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DKokkos_DIR="$fake" \
  -DUFNO_BUILD_BENCHMARKS=OFF | grep -E "Kokkos|CUDA backend"
cmake --build "$out/build" -j "${JOBS:-2}" --target ufno_predict test_cuda_backend
# ufno_predict is linked against the backend and the CUDA libraries. (Here the layers take the
# Host specialisations, since the tensors are in host memory, so the linker keeps none of the
# Cuda ones; with a real CUDA Kokkos they are the Default.) It still starts.
link="$out/build/apps/CMakeFiles/ufno_predict.dir/link.txt"
for l in libufno_cuda.a libcudnn libcublas libcufft libcudart; do
  grep -q "$l" "$link" || { echo "check_gpu_build_config: ufno_predict does not link $l" >&2; exit 1; }
done
"$out/build/apps/ufno_predict" --help > /dev/null
echo "check_gpu_build_config: configured, built and linked against ufno_cuda in $out/build"
