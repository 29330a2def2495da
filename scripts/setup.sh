#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine: install every package the build, the tests and
# the benchmarks need, then configure and build into ./build.
# Usage: ./scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make pkg-config git clang-format
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libfftw3-dev libfftw3-mpi-dev
  libdnnl-dev libjemalloc-dev
  # XXH3: the model files' digest that every prediction carries.
  libxxhash-dev
  catch2 libcli11-dev nlohmann-json3-dev
  python3-torch python3-h5py python3-numpy python3-pytest
  # The sweeps' screening report (report.html): its charts, inline SVG (ufno.sweep_report).
  python3-matplotlib
  # PyTorch's BLAS (Debian's calls libblas.so.3): without OpenBLAS it is ATLAS's, 5x slower,
  # and the benchmarks' PyTorch baseline refuses to run on it (benchmarks/torch_blas.py).
  libopenblas0-pthread
  libopm-common-dev libopm-material-dev libopm-simulators-bin python3-opm-common
  libcpp-httplib-dev chromium
  # ParaView's Python (its XDMF reader checks the predictions' descriptions) and a virtual X
  # server for its renderer (the docs' screenshot).
  python3-paraview xvfb xauth
  slurmd slurmctld slurm-client munge
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs the browser test (playwright-core driving Debian's chromium); any Node >= 18 will do.
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# playwright-core for the browser test, at the version package-lock.json pins (no browser download:
# the test drives /usr/bin/chromium).
(cd web && npm ci --no-audit --no-fund --loglevel=error)

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
