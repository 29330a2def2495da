#!/usr/bin/env bash
# Resumable background training of the default SG and dP U-FNOs on the data that
# scripts/generate-data.sh is producing, at low priority, one thread each. It trains in rounds:
# each round re-assembles the finished cases (the split is by case hash, so new cases never move
# old ones between sets) and runs each variable for ROUND minutes, resuming its checkpoint. A run
# with no checkpoint starts from the shipped model (--init), so the training done before is kept
# in models/ even where data and checkpoints are not.
# Usage: scripts/train-models.sh [DATA_ROOT (default /work/data)] [MINUTES (default 100)]
# Environment: ROUND (minutes per variable and round, 20), LR (5e-4), EPOCHS (60).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${1:-/work/data}
MINUTES=${2:-100}
ROUND=${ROUND:-20}
start=$(date +%s)
mkdir -p "$ROOT/runs"
log="$ROOT/train.log"
while [ $(( ($(date +%s) - start) / 60 )) -lt "$MINUTES" ]; do
  PYTHONPATH="$PWD/python" /usr/bin/python3 -m ufno.run_flow_batch --data "$ROOT/opm/seed_0002" \
    --assemble "$ROOT/train.h5.tmp" >> "$log" 2>&1
  mv "$ROOT/train.h5.tmp" "$ROOT/train.h5"
  for var in dP SG; do
    lower=$(echo "$var" | tr 'A-Z' 'a-z')
    left=$(( MINUTES - ($(date +%s) - start) / 60 ))
    [ "$left" -gt 0 ] || break
    PYTHONPATH="$PWD/python" nice -n 10 /usr/bin/python3 -m ufno.train --data "$ROOT/train.h5" --variable "$var" \
      --run "$ROOT/runs/${lower}_ufno" --init "models/${lower}_ufno.h5" --threads 1 \
      --lr "${LR:-5e-4}" --step 2 --gamma 0.85 --epochs "${EPOCHS:-60}" \
      --max-minutes "$(( left < ROUND ? left : ROUND ))" >> "$log" 2>&1
  done
done
