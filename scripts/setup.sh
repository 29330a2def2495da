#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine: install every package the build, the tests and
# the benchmarks need, then configure and build into ./build.
# Usage: ./scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make pkg-config git
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libfftw3-dev libfftw3-mpi-dev
  libdnnl-dev libopenblas-dev
  catch2 libcli11-dev nlohmann-json3-dev
  python3-torch python3-h5py python3-numpy
  libopm-common-dev libopm-simulators-bin python3-opm-common
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$JOBS"
echo "setup: ufno_predict is build/apps/ufno_predict"

# The same tests built with AddressSanitizer + UBSan, run by scripts/test.sh. Skip with
# UFNO_SKIP_SANITIZE=1 when only the executables are wanted.
if [ "${UFNO_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DUFNO_SANITIZE=ON -DUFNO_BUILD_BENCHMARKS=OFF
  cmake --build build-asan -j "$JOBS"
fi
echo "setup: done"
