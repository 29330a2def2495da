#!/usr/bin/env bash
# Training on a lent GPU machine (issue 13), in calls of at most 10 minutes. Prepare on this
# machine (the data set never fits the 64 MiB that travel with the working tree; a compact pack
# of one variable does):
#   /usr/bin/python3 python/ufno_pack.py /work/data/train.h5 gpu-data/dP.ufnopack --variable dP \
#       --max-mb 40 --init models/dp_ufno.h5 gpu-data/dP_init.pt
# then, on the GPU machine (gpu-data/ is ignored by git, so it is carried):
#   run(command="bash scripts/gpu-train.sh dP 8", carry=["gpu-data"])
# VARIABLE is SG or dP, MINUTES the training budget of this call (the epoch that crosses it
# finishes). The run directory lives under $OUT, so its checkpoint comes back; a later call
# carries it back in as gpu-data/VARIABLE_run to resume (train_ufno.py resumes from its
# checkpoint). Back here: python/export_checkpoint.py RUN OUT.h5, then accuracy_report.py.
# Extra arguments go to train_ufno.py (say --lr 5e-4 --peak-weight 1). DEVICE=cpu rehearses it
# here.
set -uo pipefail
cd "$(dirname "$0")/.."
VAR=${1:?usage: gpu-train.sh SG|dP MINUTES [train_ufno.py arguments]}
MIN=${2:?usage: gpu-train.sh SG|dP MINUTES [train_ufno.py arguments]}
shift 2
OUT=${OUT:-$(pwd)/gpu-out}
mkdir -p "$OUT"
RUN=$OUT/${VAR}_run
if [ -d "gpu-data/${VAR}_run" ]; then
  cp -r "gpu-data/${VAR}_run" "$RUN"  # resume
  INIT=()
else
  INIT=(--init "gpu-data/${VAR}_init.pt")
fi
PY=${PYTHON:-python3}
{
  echo "gpu-train: $(date -u) $VAR, $MIN minutes"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | head -2
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
} 2>&1 | tee "$OUT/gpu-train.log"
# A few CPU threads feed the GPU; the batch stays at the CPU runs' 4 unless an argument says.
"$PY" python/train_ufno.py --data "gpu-data/${VAR}.ufnopack" --variable "$VAR" --run "$RUN" \
  --device "${DEVICE:-cuda}" --threads 4 --max-minutes "$MIN" --epochs 1000 "${INIT[@]}" "$@" \
  2>&1 | tee -a "$OUT/gpu-train.log"
status=${PIPESTATUS[0]}
tail -n 5 "$RUN/log.csv" 2>/dev/null | tee -a "$OUT/gpu-train.log"
exit "$status"
