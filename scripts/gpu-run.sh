#!/usr/bin/env bash
# The GPU check, in one call on a GPU machine (docs/gpu.md). Run from the repository root of the
# working tree there, with build-gpu/bundle.tar.xz carried (scripts/make-gpu-bundle.sh):
#   run(command="bash scripts/gpu-run.sh", carry=["build-gpu/bundle.tar.xz"])
# It probes the machine, sets the library paths (the bundle's Debian libraries, then the CUDA
# libraries of the machine's PyTorch wheels), and runs, each step logged under $OUT and timed out
# on its own so that one hang cannot eat the call:
#   1. probe: OS, glibc, kernel, driver, nvidia-smi, nvcc, Python, torch, CUDA, cuDNN, h5py;
#      which libraries the programs resolve and from where (ldd);
#   2. tests: test_cuda_backend (every CUDA backend call against the host backend on host
#      references), the whole U-FNO / FNO against the PyTorch fixtures on both execution plans
#      (test_model_parity), the plans' launch shapes (test_execution_plan), the device memory
#      check (test_mpi_node_memory), the 4-D FFT against direct sums and the whole FNO4d against
#      its fixtures, and the distributed models on 1 and 2 ranks sharing the GPU;
#   3. parity of ufno_predict on the GPU with the CPU outputs carried in tests/data and with
#      PyTorch on the same GPU (benchmarks/gpu_bench.py);
#   4. benchmarks (benchmarks/gpu_bench.py): paper-size U-FNO and FNO and the LGR1 4-D FNO, ufno
#      vs PyTorch eager on the same GPU and input, FP32 with TF32 off, then TF32 / bf16 where each
#      side has it; seconds per case (warm, batch 1 and 8), peak GPU memory, parity.
# Everything goes to $OUT (summary.txt first); the exit status is 0 when every test passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-run.log") 2>&1
say() { echo "gpu-run: $*"; echo "$*" >> "$OUT/summary.txt"; }

B=$ROOT/build-gpu/bundle
if [ ! -d "$B" ]; then
  [ -f build-gpu/bundle.tar.xz ] || { say "no build-gpu/bundle.tar.xz (carry it)"; exit 2; }
  tar xJf build-gpu/bundle.tar.xz -C build-gpu
fi
say "bundle $(cat "$B/VERSION")"

# 1. Probe.
{
  uname -a; cat /etc/os-release 2>/dev/null | head -3; ldd --version 2>&1 | head -1
  nvidia-smi 2>&1 | head -15; nvcc --version 2>&1 | tail -2
  python3 - <<'PY'
import sys
print("python", sys.version.split()[0])
try:
    import torch, h5py
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available",
          torch.cuda.is_available(), "cudnn", torch.backends.cudnn.version(), "h5py",
          h5py.version.version)
    if torch.cuda.is_available():
        print("device", torch.cuda.get_device_name(0))
except Exception as e:  # noqa: BLE001
    print("torch/h5py:", e)
PY
} > "$OUT/probe.txt" 2>&1
say "probe: $(grep -m1 -E '^device|available' "$OUT/probe.txt")"

# Library paths: the bundle first, then every lib/ of the pip nvidia-* packages (cuBLAS, cuFFT,
# cuDNN, the CUDA runtime), found from the Python that holds PyTorch.
NV=$(python3 - <<'PY'
import glob, os, site, sys
dirs = []
for base in site.getsitepackages() + [site.getusersitepackages()]:
    dirs += glob.glob(os.path.join(base, "nvidia", "*", "lib"))
print(":".join(sorted(set(dirs))))
PY
)
export LD_LIBRARY_PATH="$B/lib${NV:+:$NV}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$B/usr" PATH="$B/usr/bin:$B/bin:$PATH"
export PMIX_MCA_mca_base_component_path="$B/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=false
# PMIx's zlib compression plugin needs a symbol of a newer PMIx than the bundle's and fails to
# load at every MPI start; nothing here compresses PMIx messages, so it is left out.
export PMIX_MCA_pcompress=^zlib
export UFNO_TEST_DATA_DIR="$ROOT/tests/data" OMP_NUM_THREADS=4
for p in "$B"/bin/*; do echo "== $p"; ldd "$p"; done > "$OUT/ldd.txt" 2>&1
missing=$(grep -c "not found" "$OUT/ldd.txt")
say "libraries: $missing not found (ldd.txt)"

# 2. Tests: the GPU build's CTest list (tests.json), relocated here by scripts/run-test-list.py
# (no CTest needed) onto a tree of the bundled programs laid out as in the build; tests whose
# programs are not bundled are listed as not run. Then the GPU checks by name, each timed out on
# its own.
status=0
if [ -f "$B/tests.json" ]; then
  while read -r rel; do
    mkdir -p "$B/build/$(dirname "$rel")"
    ln -sf "$B/bin/$(basename "$rel")" "$B/build/$rel"
  done < "$B/layout.txt"
  { read -r built_in; read -r source_in; read -r mpiexec_in; } < "$B/PATHS"
  timeout 240 python3 scripts/run-test-list.py "$B/tests.json" --map "$built_in=$B/build" \
    --map "$source_in=$ROOT" --map "${mpiexec_in:-/usr/bin/mpiexec}=$B/usr/bin/mpirun" \
    --require-under "$B/build" --log-dir "$OUT/ctest" > "$OUT/test-list.log" 2>&1
  say "test list: exit $? ($(tail -1 "$OUT/test-list.log"))"
fi
run_test() {  # name, seconds, command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  say "test $name: exit $rc ($(grep -E 'test cases|SKIP|passed|failed' "$OUT/$name.log" | tail -1))"
  [ "$rc" -eq 0 ] || status=1
}
run_test test_cuda_backend 300 "$B/bin/test_cuda_backend"
run_test test_model_parity 300 "$B/bin/test_model_parity"
run_test test_mpi_fft4d 300 "$B/bin/test_mpi_fft4d"
run_test test_mpi_fno4d 300 "$B/bin/test_mpi_fno4d"
run_test test_mpi_model 300 "$B/bin/test_mpi_model"
run_test test_execution_plan 300 "$B/bin/test_execution_plan"
run_test test_mpi_node_memory 120 "$B/bin/test_mpi_node_memory"
run_test test_mpi_model_np2 300 mpirun -n 2 "$B/bin/test_mpi_model"
run_test test_mpi_fno4d_np2 300 mpirun -n 2 "$B/bin/test_mpi_fno4d"

# 3-4. Parity and benchmarks against PyTorch on the same GPU.
PYTHONPATH=python timeout 420 python3 benchmarks/gpu_bench.py --bin "$B/bin" --out "$OUT/bench" \
  > "$OUT/gpu_bench.log" 2>&1
say "gpu_bench: exit $? (tables in gpu_bench.log and bench/results.md)"
cp "$OUT/bench/results.md" "$OUT/results.md" 2>/dev/null || true
say "done: status $status"
exit "$status"
