#!/usr/bin/env bash
# The GPU build (docs/gpu.md), on a CPU machine: nvcc compiles without a GPU.
#   1. Kokkos 4.6.01 (../shared/deps) with CUDA (Hopper 90) and a Serial host space, patched for
#      CUDA 13 (cmake/kokkos-4.6.01-cuda13.patch: cudaMemAdvise / cudaMemPrefetchAsync take a
#      cudaMemLocation, cudaGraphAddDependencies takes edge data, nvcc_wrapper defaults to sm_90),
#      installed into build-gpu/kokkos;
#   2. the project against it with Kokkos' nvcc_wrapper, into build-gpu/ufno.
# Resumable: each step leaves a marker and is skipped when its marker is there (rm -rf build-gpu
# to start over). Slow on 2 cores; CI does not run it (CI compiles the CUDA backend library only).
# Usage: scripts/build-gpu.sh [kokkos|project|all (default)]   JOBS=2 by default; TARGETS (the
# bundle's programs by default, scripts/make-gpu-bundle.sh; "all" for everything).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/build-gpu"
JOBS=${JOBS:-2}
ARCHIVE="$ROOT/../shared/deps/kokkos-4.6.01.tar.xz"
STEP=${1:-all}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc > /dev/null || { echo "build-gpu: nvcc not found (CUDA in /usr/local/cuda)" >&2; exit 1; }

if [ "$STEP" = kokkos ] || [ "$STEP" = all ]; then
  if [ ! -f "$OUT/kokkos/.installed" ]; then
    if [ ! -f "$OUT/kokkos-src/.patched" ]; then
      rm -rf "$OUT/kokkos-src"
      mkdir -p "$OUT/kokkos-src"
      tar xf "$ARCHIVE" -C "$OUT/kokkos-src" --strip-components=1
      (cd "$OUT/kokkos-src" && patch -p1 < "$ROOT/cmake/kokkos-4.6.01-cuda13.patch")
      touch "$OUT/kokkos-src/.patched"
    fi
    cmake -S "$OUT/kokkos-src" -B "$OUT/kokkos-build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$OUT/kokkos-src/bin/nvcc_wrapper" -DCMAKE_CXX_STANDARD=17 \
      -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_HOPPER90=ON \
      -DKokkos_ENABLE_CUDA_CONSTEXPR=ON -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF \
      -DKokkos_ENABLE_IMPL_CUDA_MALLOC_ASYNC=OFF \
      -DCMAKE_INSTALL_PREFIX="$OUT/kokkos"
    cmake --build "$OUT/kokkos-build" -j "$JOBS"
    cmake --install "$OUT/kokkos-build"
    touch "$OUT/kokkos/.installed"
  fi
  echo "build-gpu: Kokkos with CUDA in $OUT/kokkos"
fi

if [ "$STEP" = project ] || [ "$STEP" = all ]; then
  cmake -S "$ROOT" -B "$OUT/ufno" -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$OUT/kokkos" \
    -DCMAKE_CXX_COMPILER="$OUT/kokkos/bin/nvcc_wrapper" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DUFNO_BUILD_BENCHMARKS=ON -DUFNO_HOST_ARCH=x86-64-v3  # runs on the GPU machine's CPU, not this one
  TARGETS=${TARGETS:-ufno_predict test_cuda_backend test_model_parity test_mpi_fno4d test_mpi_fft4d
    test_mpi_model test_execution_plan test_pass_allocations test_mpi_node_memory bench_model bench_dfft}
  if [ "$TARGETS" = all ]; then
    cmake --build "$OUT/ufno" -j "$JOBS"
  else
    # shellcheck disable=SC2086  # a list of target names
    cmake --build "$OUT/ufno" -j "$JOBS" --target $TARGETS
  fi
  echo "build-gpu: the GPU build is $OUT/ufno (apps/ufno_predict, tests/test_cuda_backend, ...)"
fi
