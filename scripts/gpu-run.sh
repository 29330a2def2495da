#!/usr/bin/env bash
# The GPU check, one command on a GPU machine (docs/gpu.md), under 8 minutes on an H100 or H200.
# Run from the repository root of the working tree there, with the bundle carried
# (scripts/make-gpu-bundle.sh):
#   run(command="bash scripts/gpu-run.sh", carry=["build-gpu/bundle.tar.xz"], timeout_s=540)
# Steps, in order, each with its own time limit (seconds, GPU mode) so that one hang cannot eat
# the call, and each writing what it prints into files under $OUT (every file capped at 16 MiB):
#   1. probe (30): nvidia-smi, the Python with PyTorch, and ldd of every bundled program; a
#      missing library or no GPU stops the check here with one line naming it;
#   2. benchmark (170; benchmarks/gpu_bench.py models): paper U-FNO, paper FNO, 4-D FNO LGR1,
#      batch 1 and 8, ufno and PyTorch eager side by side (FP32 with TF32 off, then ufno TF32 and
#      PyTorch's defaults), warm forwards, each row appended to results.md when measured;
#   3. the shipped models through `ufno_predict --cases` on 320 cases, then again with
#      dp_ufno_implicit.h5 (the faster maximum-dP head), against PyTorch on the same files at
#      batch 8 (90; gpu_bench.py cases; the PyTorch side applies the default head's physics in
#      Python, seconds a case, and times the cases it reaches);
#   4. the GPU tests once each (140 in all): test_cuda_backend, test_model_parity,
#      test_execution_plan and test_pass_allocations (allocations and fences inside a warm pass)
#      on one rank, the MPI tests on 2 ranks sharing the GPU;
#   5. one profiled pass (30): UFNO_PROFILE=1 bench_model --plan whole-tensor on the paper U-FNO,
#      its per-layer table and the cost model's prediction (docs/gpu.md) appended to results.md,
#      then PyTorch's profile of one forward of the same model and input (30).
# $OUT/summary.txt has one line a step; $OUT/results.md the tables; $OUT/logs.tar.gz every log
# (gpu-run.log: everything printed), so that what comes back is three files.
# STEPS="cases tests" (any of benchmark, cases, tests, profile) runs only those after the probe.
# Exit status: 0 when every step passed, 1 when a test or a row failed, 2 when something was
# left out for lack of time, 3 when the probe stopped it.
#
# Rehearsal on a CPU machine: DEVICE=cpu bash scripts/gpu-run.sh uses the CPU build in build/
# (BUILD=...) instead of the bundle, the test fixtures' small models, 4 cases at batch 2, and
# starts each test program without running its cases, so every step's plumbing runs in about a
# minute (tests/gpu_run_rehearsal.sh, the CTest gpu_run_rehearsal).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEVICE=${DEVICE:-gpu}
OUT=${OUT:-$ROOT/gpu-out}
WORK=${WORK:-$ROOT/gpu-work}  # models, inputs and outputs of the benchmark: not returned
mkdir -p "$OUT" "$WORK"
: > "$OUT/summary.txt"
exec > >(tee -a "$OUT/gpu-run.log") 2>&1
T0=$SECONDS
say() { echo "gpu-run: [$((SECONDS - T0)) s] $*"; echo "$*" >> "$OUT/summary.txt"; }
status=0
worse() { [ "$1" -gt "$status" ] && status=$1; }
# Every file under $OUT at most 16 MiB: a larger one keeps its first and last 7 MiB.
cap_files() {
  find "$OUT" -type f -size +15M | while read -r f; do
    { head -c 7340032 "$f"; printf '\n[... cut by gpu-run.sh ...]\n'; tail -c 7340032 "$f"; } \
      > "$f.cut" && mv "$f.cut" "$f"
  done
}
# The device tool returns at most 8 files: every log goes into one logs.tar.gz beside
# summary.txt and results.md.
pack_logs() {
  (cd "$OUT" && find . -type f ! -name summary.txt ! -name results.md ! -name logs.tar.gz -print0 |
    tar czf logs.tar.gz --null -T - --remove-files && find . -mindepth 1 -type d -empty -delete)
}
finish() {
  say "done in $((SECONDS - T0)) s: status $status"
  cap_files
  pack_logs
  exit "$status"
}

if [ "$DEVICE" = cpu ]; then
  BUILD=${BUILD:-$ROOT/build}
  PY=${PYTHON:-/usr/bin/python3}
  BIN_DIRS=("$BUILD/apps" "$BUILD/tests" "$BUILD/benchmarks")
  # 4 cases at batch 2: the PyTorch side's Python maximum-dP physics takes several seconds a
  # case here (7-8 s alone, a batch's cases solved together faster), so a warm-up batch and one
  # timed batch fit the step's time with room on a slow machine.
  TORCH_DEVICE=cpu THREADS=1 SMALL=(--small --repeat 2) CASES=4 BATCH=2
  # The tests: start each program and run no case (Kokkos, MPI and the libraries start).
  TEST_ARGS=("ufno-gpu-run rehearsal: no test case")
  L_PROBE=30 L_BENCH=60 L_CASES=90 L_TESTS=60 L_PROFILE=20
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  say "rehearsal on the CPU: programs of $BUILD, small sizes"
else
  PY=${PYTHON:-python3}
  B=$ROOT/build-gpu/bundle
  if [ ! -d "$B" ]; then
    [ -f build-gpu/bundle.tar.xz ] || { say "stop: no build-gpu/bundle.tar.xz (carry it)"; status=3; finish; }
    timeout 60 tar xJf build-gpu/bundle.tar.xz -C build-gpu || { say "stop: cannot unpack the bundle"; status=3; finish; }
  fi
  say "bundle $(cat "$B/VERSION")"
  BIN_DIRS=("$B/bin")
  TORCH_DEVICE=cuda THREADS=4 SMALL=(--repeat 5) CASES=320 BATCH=8
  TEST_ARGS=()
  L_PROBE=30 L_BENCH=170 L_CASES=90 L_TESTS=140 L_PROFILE=30
  # Library paths: the bundle first, then every lib/ of the pip nvidia-* packages (cuBLAS,
  # cuFFT, cuDNN, the CUDA runtime) of the Python that holds PyTorch.
  NV=$(timeout 20 "$PY" - <<'PY'
import glob, os, site
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
  # PMIx's zlib compression plugin needs a symbol of a newer PMIx than the bundle's and fails
  # to load at every MPI start; nothing here compresses PMIx messages, so it is left out.
  export PMIX_MCA_pcompress=^zlib
  export UFNO_CO2_TABLES="$B/share/co2tables.inc"  # for the Python heads (no opm-common there)
fi
export UFNO_TEST_DATA_DIR="$ROOT/tests/data" OMP_NUM_THREADS=$THREADS PYTHONPATH="$ROOT/python"
# STEPS: the steps after the probe to run (default all four), e.g. STEPS="cases tests" to
# check fixes in a short call.
STEPS=${STEPS:-benchmark cases tests profile}
for step in $STEPS; do
  case $step in
    benchmark | cases | tests | profile) ;;
    *) say "stop: STEPS: '$step' is not a step (benchmark, cases, tests, profile)"; status=2; finish ;;
  esac
done
wants() { [[ " $STEPS " == *" $1 "* ]]; }
prog() {  # the path of a program by name
  local d
  for d in "${BIN_DIRS[@]}"; do [ -x "$d/$1" ] && { echo "$d/$1"; return; }; done
  echo "$1-is-missing"
}
PROGRAMS=(ufno_predict bench_model test_cuda_backend test_model_parity test_execution_plan
          test_pass_allocations test_mpi_model test_mpi_fno4d test_mpi_fft4d test_mpi_node_memory)

# 1. Probe: a missing GPU, program or library stops the check with one line naming it.
{
  uname -a; head -3 /etc/os-release 2>/dev/null; ldd --version 2>&1 | head -1
  if [ "$DEVICE" = cpu ]; then echo "nvidia-smi: not run (DEVICE=cpu)"; else timeout 20 nvidia-smi; fi
  timeout 30 "$PY" - <<'PY'
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
if [ "$DEVICE" != cpu ] && ! timeout 20 nvidia-smi -L > "$OUT/nvidia-smi.txt" 2>&1; then
  say "stop: no GPU: nvidia-smi says $(head -1 "$OUT/nvidia-smi.txt")"; status=3; finish
fi
: > "$OUT/ldd.txt"
for name in "${PROGRAMS[@]}"; do
  p=$(prog "$name")
  [ -x "$p" ] || { say "stop: program $name is not in ${BIN_DIRS[*]}"; status=3; finish; }
  { echo "== $p"; timeout 10 ldd "$p"; } >> "$OUT/ldd.txt" 2>&1
done
missing=$(awk '/^== /{p=$2} /not found/{print $1 " (needed by " p ")"; exit}' "$OUT/ldd.txt")
if [ -n "$missing" ]; then say "stop: missing library $missing"; status=3; finish; fi
if ! grep -q "^torch " "$OUT/probe.txt"; then
  say "stop: no PyTorch with h5py in $PY: $(grep -m1 'torch/h5py' "$OUT/probe.txt")"; status=3; finish
fi
say "probe: $(grep -m1 -E '^device|^torch' "$OUT/probe.txt"); every library found (ldd.txt)"

# 2-3. The benchmark and the shipped models, rows appended to results.md as they are measured.
echo "GPU check of $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(grep -m1 '^device' "$OUT/probe.txt" || echo "$DEVICE"), $(date -u +%FT%TZ)" > "$OUT/results.md"
bench() {  # step name, limit, gpu_bench.py arguments...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$PY" benchmarks/gpu_bench.py "$@" --device "$TORCH_DEVICE" --threads "$THREADS" \
    --out "$OUT/bench" --work "$WORK" --deadline $((limit - 10)) > "$OUT/$name.log" 2>&1
  local rc=$?
  say "$name: exit $rc ($(grep -c '^|' "$OUT/$name.log") rows; $name.log)"
  cat "$OUT/bench/results.md" >> "$OUT/results.md" 2>/dev/null
  rm -f "$OUT/bench/results.md"
  case $rc in 0) ;; 2) worse 2 ;; *) worse 1 ;; esac
}
mkdir -p "$OUT/bench"
if wants benchmark; then
  bench benchmark "$L_BENCH" models --bin "$(dirname "$(prog bench_model)")" "${SMALL[@]}"
fi
if wants cases; then
  bench cases "$L_CASES" cases --bin "$(dirname "$(prog ufno_predict)")" --cases "$CASES" --batch "$BATCH"
fi

# 4. The GPU tests, once each, within L_TESTS seconds in all.
tests_end=$((SECONDS + L_TESTS))
run_test() {  # label, limit, program, ranks
  local label=$1 limit=$2 p ranks=$4 left=$((tests_end - SECONDS))
  p=$(prog "$3")
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 5 ]; then say "test $label: not run (time)"; worse 2; return; fi
  if [ "$ranks" -gt 1 ]; then
    timeout "$limit" mpirun -n "$ranks" --oversubscribe "$p" ${TEST_ARGS[@]+"${TEST_ARGS[@]}"} > "$OUT/test-$label.log" 2>&1
  else
    timeout "$limit" "$p" ${TEST_ARGS[@]+"${TEST_ARGS[@]}"} > "$OUT/test-$label.log" 2>&1
  fi
  local rc=$?
  say "test $label: exit $rc ($(grep -E 'test cases|No test|SKIP' "$OUT/test-$label.log" | tail -1))"
  # 77 is test_cuda_backend's "no CUDA device": a failure on a GPU machine only.
  [ "$rc" -eq 0 ] || { [ "$rc" -eq 77 ] && [ "$DEVICE" = cpu ]; } || worse 1
}
if wants tests; then
  run_test cuda_backend 40 test_cuda_backend 1
  run_test model_parity 40 test_model_parity 1
  run_test execution_plan 20 test_execution_plan 1
  run_test pass_allocations 20 test_pass_allocations 1
  run_test mpi_model_np2 40 test_mpi_model 2
  run_test mpi_fno4d_np2 40 test_mpi_fno4d 2
  run_test mpi_fft4d_np2 30 test_mpi_fft4d 2
  run_test mpi_node_memory_np2 20 test_mpi_node_memory 2
fi
wants profile || finish

# 5. One profiled pass: the per-layer table into results.md.
model=$WORK/paper/ufno_paper.h5 input=$WORK/paper/input.h5
[ -f "$model" ] && [ -f "$input" ] || { model=$ROOT/tests/data/ufno_small.h5 input=$ROOT/tests/data/ufno_small_io.h5; }
UFNO_PROFILE=1 timeout "$L_PROFILE" "$(prog bench_model)" --model "$model" --tensor "$input" \
  --threads "$THREADS" --repeat 2 --skip-peak --plan whole-tensor > "$OUT/profile.log" 2>&1
rc=$?
{
  echo
  echo "Profile: UFNO_PROFILE=1 bench_model --repeat 2 on $(basename "$model") (exit $rc)"
  echo
  echo '```'
  sed -n '/per-layer time/,$p' "$OUT/profile.log"
  echo '```'
  echo
  echo "Cost model of the same pass (a roofline lower bound, not a measurement)"
  echo
  echo '```'
  sed -n '/^cost model:.*roofline on/,/^cost model: predicted/p' "$OUT/profile.log"
  echo '```'
} >> "$OUT/results.md"
say "profile: exit $rc ($(grep -m1 'per-layer time' "$OUT/profile.log"))"
[ "$rc" -eq 0 ] || worse 1
# PyTorch's kernels for the same model and input, to read beside the table above.
timeout "$L_PROFILE" "$PY" benchmarks/gpu_bench.py torch-worker --model "$model" --input "$input" \
  --device "$TORCH_DEVICE" --threads "$THREADS" --repeat 2 --save "$WORK/profile-torch.npy" \
  --profile > "$OUT/profile-torch.log" 2>&1
rc=$?
{
  echo
  echo "PyTorch profile of one warm forward of the same model (fp32, exit $rc)"
  echo
  echo '```'
  sed -n '/^torch profile/,$p' "$OUT/profile-torch.log"
  echo '```'
} >> "$OUT/results.md"
say "profile-torch: exit $rc ($(grep -m1 '^torch profile' "$OUT/profile-torch.log"))"
[ "$rc" -eq 0 ] || worse 1
finish
