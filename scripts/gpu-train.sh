#!/usr/bin/env bash
# Training on a lent GPU machine (issue 13): several runs side by side on the one GPU, for a fixed
# number of minutes, in one call. A step of these small networks leaves the GPU mostly idle
# between kernel launches, so runs started together share it at little cost to each.
#
# Prepare on this machine (the data set never fits the 64 MiB that travel with the working tree;
# a compact pack of each variable does, docs/gpu.md):
#   /usr/bin/python3 python/ufno_pack.py /work/data/train.h5 gpu-data/dP.ufnopack --variable dP \
#       --max-mb 30 --init models/dp_ufno.h5 gpu-data/dP_init.pt
# and a plan, one run a line: NAME VARIABLE [train_ufno.py arguments] (# comments), e.g.
#   ft_dP dP --init gpu-data/dP_init.pt --lr 2e-4
#   w16_dP dP --width 16 --modes 6 6 6 --lr 1e-3 --batch 8
# then, on the GPU machine (gpu-data/ is ignored by git, so it is carried):
#   run(command="bash scripts/gpu-train.sh gpu-data/plan.txt 8.5", carry=["gpu-data"])
# Every run trains on gpu-data/VARIABLE.ufnopack with the cosine-time schedule over MINUTES
# (python/train_ufno.py --schedule cosine-time) and writes, after every epoch, its slim file
# $OUT/NAME.pt (best epoch's weights, the last's where they fit); all logs go to
# $OUT/gpu-train.log, refreshed while the runs go on, so a call cut short still returns them.
# A run still going two minutes after MINUTES is stopped. At the end each run's best epoch is
# also exported there as a model file, into $OUT/models_SG.tar and models_dP.tar. The returned
# files: at most 8 (the tool's limit), so a plan has at most 5 runs. Back here:
# python/export_checkpoint.py NAME.pt OUT.h5, then the accuracy report. DEVICE=cpu (with
# PYTHON=/usr/bin/python3) rehearses it here.
set -uo pipefail
cd "$(dirname "$0")/.."
PLAN=${1:?usage: gpu-train.sh PLAN MINUTES}
MIN=${2:?usage: gpu-train.sh PLAN MINUTES}
OUT=${OUT:-$(pwd)/gpu-out}
WORK=${GPU_TRAIN_WORK:-/tmp/gpu-train}
PY=${PYTHON:-python3}
DEVICE=${DEVICE:-cuda}
THREADS=${THREADS:-3}
mkdir -p "$OUT" "$WORK"
LOG=$OUT/gpu-train.log
if ! awk -v m="$MIN" 'BEGIN { exit !(m + 0 > 0 && m + 0 <= 600) }'; then
  echo "gpu-train: MINUTES must be a number in (0, 600], not '$MIN'" >&2
  exit 2
fi

mapfile -t runs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PLAN")
if [ ${#runs[@]} -eq 0 ] || [ ${#runs[@]} -gt 5 ]; then
  echo "gpu-train: $PLAN: 1 to 5 runs, not ${#runs[@]}" >&2
  exit 2
fi
{
  echo "gpu-train: $(date -u) ${#runs[@]} runs, $MIN minutes, device $DEVICE"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -2
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
} > "$WORK/probe.log" 2>&1

collect() {  # all logs into one returned file, written whole and renamed
  { cat "$WORK/probe.log"
    for f in "$WORK"/*.out; do [ -e "$f" ] && { echo "== $f"; cat "$f"; }; done
    for f in "$WORK"/*/log.csv; do [ -e "$f" ] && { echo "== $f"; cat "$f"; }; done
  } > "$LOG.tmp" 2>&1
  mv "$LOG.tmp" "$LOG"
}

limit=$(awk -v m="$MIN" 'BEGIN { printf "%d", m * 60 + 120 }')
# The start (reading the data, the first score) is not training time.
maxmin=$(awk -v m="$MIN" 'BEGIN { print m + 1.5 }')
pids=()
for line in "${runs[@]}"; do
  read -r -a w <<< "$line"
  name=${w[0]} var=${w[1]:-}
  if ! [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || { [ "$var" != SG ] && [ "$var" != dP ]; }; then
    echo "gpu-train: $PLAN: '$line': NAME (letters, digits, . _ -) and SG or dP first" >&2
    exit 2
  fi
  timeout -k 10 "$limit" "$PY" python/train_ufno.py --data "gpu-data/$var.ufnopack" \
    --variable "$var" --run "$WORK/$name" --device "$DEVICE" --threads "$THREADS" \
    --schedule cosine-time --cosine-minutes "$MIN" --max-minutes "$maxmin" --epochs 100000 \
    --slim "$OUT/$name.pt" "${w[@]:2}" > "$WORK/$name.out" 2>&1 &
  pids+=($!)
done
(while sleep 20; do collect; done) &
collector=$!
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
kill "$collector" 2>/dev/null
# Each run's best epoch also as a model file, made there (a second route home besides the slim
# file), one archive per variable: the returned files are few.
mkdir -p "$WORK/export/SG" "$WORK/export/dP"
for line in "${runs[@]}"; do
  read -r -a w <<< "$line"
  [ -f "$OUT/${w[0]}.pt" ] || continue
  "$PY" python/export_checkpoint.py "$OUT/${w[0]}.pt" "$WORK/export/${w[1]}/${w[0]}.h5" \
    >> "$WORK/export.out" 2>&1 || echo "gpu-train: export of ${w[0]} failed" >> "$WORK/export.out"
done
for var in SG dP; do
  [ -d "$WORK/export/$var" ] && tar -C "$WORK/export/$var" -cf "$OUT/models_$var.tar" .
done
collect
cat "$WORK/export.out" >> "$LOG" 2>/dev/null
exit "$status"
