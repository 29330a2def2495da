#!/usr/bin/env bash
# Model benchmark: the paper-size U-FNO and FNO (96x200x24, width 36, modes 10, random weights)
# in the C++ code (build/benchmarks/bench_model) and in the PyTorch reference
# (benchmarks/torch_bench.py), on the same input with the same number of threads. Prints seconds
# per case, peak RSS and their ratios, the difference between the two outputs, and the C++ side's
# roofline: achieved GFLOP/s against the measured float32 peak of the same threads.
#
# Usage: benchmarks/run_model_bench.sh [--threads N] [--repeat R] [--out DIR] [--bin PATH]
#                                      [--models "ufno fno"] [--torch-only]
#   --threads N   threads for both sides (default 2); OMP/OpenBLAS/MKL_NUM_THREADS are set to N
#   --repeat R    timed forward passes per run (default 1); with R > 1 both sides run one
#                 untimed warm-up pass first
#   --out DIR     where the inputs and outputs go (default build/bench; BUILD_DIR/bench if set)
#   --bin PATH    the C++ benchmark (default ${BUILD_DIR:-build}/benchmarks/bench_model)
#   --models L    which models, from "ufno fno" (default both)
#   --torch-only  skip the C++ side (to check the torch side before the C++ one is built)
#
# Every run is a separate process, so peak RSS is per process and per model. Each process prints
# one line "<side> seconds_per_case=S peak_rss_mb=M threads=N ..."; its stderr goes to
# DIR/<model>_<side>.log. The inputs are made by make_bench_inputs.py (kept between runs).
# With the defaults this takes about 80 s on 2 cores (each side: U-FNO 20-30 s, FNO 8-10 s).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
python=/usr/bin/python3
build_dir=${BUILD_DIR:-$root/build}
threads=2
repeat=1
out=""
bin=""
models="ufno fno"
torch_only=0
cpp_extra=()

die() { echo "run_model_bench: error: $*" >&2; exit 1; }
need_value() { if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value"; fi; }

while [ $# -gt 0 ]; do
  case "$1" in
    --threads) need_value "$@"; threads=$2; shift 2 ;;
    --repeat) need_value "$@"; repeat=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --bin) need_value "$@"; bin=$2; shift 2 ;;
    --models) need_value "$@"; models=$2; shift 2 ;;
    --torch-only) torch_only=1; shift ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "--threads must be a positive integer, got '$threads'"
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer, got '$repeat'"
for m in $models; do
  case "$m" in ufno|fno) ;; *) die "--models: unknown model '$m' (ufno, fno)" ;; esac
done
out=${out:-$build_dir/bench}
bin=${bin:-$build_dir/benchmarks/bench_model}

[ -x "$python" ] || die "$python not found (install python3-torch python3-h5py python3-numpy)"
if [ "$torch_only" -eq 0 ]; then
  if [ ! -e "$bin" ]; then
    die "the C++ benchmark binary $bin does not exist.
  Build it first:  cmake --build ${build_dir#"$root"/} --target bench_model
  or pass --bin PATH, or --torch-only to time only the PyTorch side."
  fi
  [ -x "$bin" ] || die "$bin is not executable"
fi

export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads
# The Python side imports the ufno package from python/.
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"

start=$(date +%s)
echo "run_model_bench: inputs in $out"
OMP_NUM_THREADS=1 "$python" "$here/make_bench_inputs.py" --out "$out"

# run_side SIDE MODEL CMD...: runs CMD, checks for the one result line and sets
# r_seconds and r_rss from it.
run_side() {
  local side=$1 model=$2
  shift 2
  local log="$out/${model}_${side}.log" line t0 t1
  echo "run_model_bench: $model: $side ($threads thread(s), repeat $repeat) ..."
  t0=$(date +%s.%N)
  if ! "$@" >"$out/${model}_${side}.stdout" 2>"$log"; then
    echo "run_model_bench: error: the $side run for $model failed; its stderr ($log) ends:" >&2
    tail -n 15 "$log" | sed 's/^/    /' >&2
    echo "  command: $*" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  line=$(grep -E "^$side seconds_per_case=" "$out/${model}_${side}.stdout" | tail -n 1 || true)
  if [ -z "$line" ]; then
    echo "run_model_bench: error: the $side run for $model printed no line" \
         "'$side seconds_per_case=... peak_rss_mb=... threads=...'; its stdout was:" >&2
    sed 's/^/    /' "$out/${model}_${side}.stdout" >&2
    exit 1
  fi
  r_seconds=$(sed -nE 's/.*seconds_per_case=([0-9.eE+-]+).*/\1/p' <<<"$line")
  r_rss=$(sed -nE 's/.*peak_rss_mb=([0-9.eE+-]+).*/\1/p' <<<"$line")
  local r_threads
  r_threads=$(sed -nE 's/.*threads=([0-9]+).*/\1/p' <<<"$line")
  if [ -z "$r_seconds" ] || [ -z "$r_rss" ]; then die "cannot parse '$line'"; fi
  [ "$r_threads" = "$threads" ] ||
    echo "run_model_bench: warning: $side reports threads=$r_threads, asked for $threads" >&2
  printf '    %s   (process wall time %s s)\n' "$line" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
}

declare -A cpp_s cpp_rss cpp_roof torch_s torch_rss diff
for model in $models; do
  kind=--$model
  cpp_out="$out/${model}_ufno_output.h5"
  torch_out="$out/${model}_torch_output.h5"
  rm -f "$cpp_out" "$torch_out"
  if [ "$torch_only" -eq 0 ]; then
    run_side ufno "$model" "$bin" --model "$out/${model}_paper.h5" --tensor "$out/input.h5" \
      --threads "$threads" --repeat "$repeat" --save-output "$cpp_out" ${cpp_extra[@]+"${cpp_extra[@]}"}
    cpp_s[$model]=$r_seconds
    cpp_rss[$model]=$r_rss
    cpp_roof[$model]=$(grep -E '^roofline:' "$out/${model}_ufno.stdout" | tail -n 1 || true)
  fi
  run_side torch "$model" "$python" "$here/torch_bench.py" --model-pt "$out/${model}_paper.pt" \
    "$kind" --input "$out/input.h5" --threads "$threads" --repeat "$repeat" \
    --save-output "$torch_out"
  torch_s[$model]=$r_seconds
  torch_rss[$model]=$r_rss
  if [ "$torch_only" -eq 0 ]; then
    [ -f "$cpp_out" ] || die "the C++ run for $model wrote no $cpp_out (--save-output)"
    # max |ufno - torch| / max |torch| of the raw outputs /output (B,X,Y,T); the ufno_predict
    # layout /SG or /dP (B,T,X,Y) is accepted too.
    diff[$model]=$(OMP_NUM_THREADS=1 "$python" - "$cpp_out" "$torch_out" <<'EOF'
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[2], "r") as f:
    ref = f["output"][...].astype(np.float64)
with h5py.File(sys.argv[1], "r") as f:
    if "output" in f:
        got = f["output"][...]
    else:
        name = next((n for n in ("SG", "dP") if n in f), None)
        if name is None:
            sys.exit("no /output, /SG or /dP in %s" % sys.argv[1])
        got = np.transpose(f[name][...], (0, 2, 3, 1))
got = got.astype(np.float64)
if got.shape != ref.shape:
    sys.exit("shape %s differs from torch's %s" % (got.shape, ref.shape))
if not np.isfinite(got).all():
    print("nan")
else:
    print("%.2e" % (np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))
EOF
) || die "comparing $cpp_out with $torch_out failed"
  fi
done

echo
echo "Model benchmark: grid 96x200x24, width 36, modes 10, batch 1, $threads thread(s)," \
     "repeat $repeat$([ "$repeat" -gt 1 ] && echo ' (after one untimed warm-up pass)')"
row() { printf '%-6s %12s %13s %12s %13s %14s %12s %15s\n' "$@"; }
row model "ufno s/case" "torch s/case" "torch/ufno" "ufno RSS MB" "torch RSS MB" \
  "torch/ufno" "max|diff|/max"
row "" "" "" "(speed)" "" "" "(memory)" "(vs torch)"
for model in $models; do
  label=$([ "$model" = ufno ] && echo U-FNO || echo FNO)
  if [ "$torch_only" -eq 0 ]; then
    speed=$(awk -v a="${torch_s[$model]}" -v b="${cpp_s[$model]}" \
      'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "inf" }')
    mem=$(awk -v a="${torch_rss[$model]}" -v b="${cpp_rss[$model]}" \
      'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "inf" }')
    row "$label" "${cpp_s[$model]}" "${torch_s[$model]}" "$speed" \
      "${cpp_rss[$model]}" "${torch_rss[$model]}" "$mem" "${diff[$model]}"
  else
    row "$label" "-" "${torch_s[$model]}" "-" "-" "${torch_rss[$model]}" "-" "-"
  fi
done
echo "(ratios > 1: the C++ code is faster / uses less memory; peak RSS is per process and"
echo " includes the weights, which are ~250 MB of float32 per model)"
if [ "$torch_only" -eq 0 ]; then
  for model in $models; do
    label=$([ "$model" = ufno ] && echo U-FNO || echo FNO)
    echo "$label ${cpp_roof[$model]:-roofline: (not printed)}"
  done
fi
echo "run_model_bench: done in $(( $(date +%s) - start )) s; logs in $out"
