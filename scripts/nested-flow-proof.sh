#!/usr/bin/env bash
# The nested chain end to end on small two-well sites with OPM Flow as the truth
# (docs/nested-sites.md, "Accuracy on small Flow sites"):
#   1. sample N training sites (seed SEED, 0..N-1) and HELD held-out sites (seed HELD_SEED, 0..HELD-1),
#      write their nested decks and fine uniform decks, run Flow on the fine decks (nice -n 10,
#      JOBS runs at a time, at most 2) and average Flow's fields onto every level
#      (python3 -m ufno.nested_sites --run);
#   2. ufno_import every nested deck into its site file;
#   3. train the nine models with the true coarser level as the coarse channel and convert them
#      (python3 -m ufno.train_nested);
#   4. run the chain on each held-out site (ufno_predict --case SITE.h5 --models DIR; the PyTorch
#      chain, python3 -m ufno.nested_chain, where ufno_predict cannot run it);
#   5. the relative L2 error per level and variable against the held-out sites' truth, pooled
#      (python3 -m ufno.nested_report; also each level fed the true coarser level), into
#      WORK/models_nN/report.md and report.json (the models, predictions and per-site reports
#      of the first N training sites live in WORK/models_nN/).
# Resumable: finished sites, site files and trained models are skipped; rerun after a stop.
# Usage: scripts/nested-flow-proof.sh      (N=16 SEED=1 HELD=5 HELD_SEED=2 WORK=nested-proof JOBS=1
#        EPOCHS=15 EPOCHS_GLOBAL=40 WIDTH=8 AXIS_ORDER=XYZT (TXYZ: the published order, into
#        WORK/models_nN_txyz)
#        THREADS=1 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-16}
SEED=${SEED:-1}
HELD=${HELD:-5}
HELD_SEED=${HELD_SEED:-2}
WORK=${WORK:-nested-proof}
JOBS=${JOBS:-1}
EPOCHS=${EPOCHS:-15}
EPOCHS_GLOBAL=${EPOCHS_GLOBAL:-40}
WIDTH=${WIDTH:-8}
THREADS=${THREADS:-1}
BUILD=${BUILD:-build}
AXIS_ORDER=${AXIS_ORDER:-XYZT}  # TXYZ: the models in the published order (B, T, X, Y, Z, C)
MODELS="$WORK/models_n$N"      # the models trained on the first N training sites
[ "$AXIS_ORDER" = XYZT ] || MODELS="${MODELS}_$(echo "$AXIS_ORDER" | tr A-Z a-z)"
PY=/usr/bin/python3
export PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$WORK"
log() { echo "[nested-flow-proof $(date +%H:%M:%S)] $*"; }

# 1. Sites and Flow (each run's time in WORK/*/runs.csv).
log "Flow on $N training sites and $HELD held-out sites, $JOBS at a time"
if [ "$JOBS" -ge 2 ]; then
  half=$(( (N + 1) / 2 ))
  nice -n 10 $PY -m ufno.nested_sites --seed "$SEED" --start 0 --end "$half" \
    --out "$WORK/train" --run > "$WORK/flow_train_a.log" 2>&1 &
  pid=$!
  nice -n 10 $PY -m ufno.nested_sites --seed "$SEED" --start "$half" --end "$N" \
    --out "$WORK/train" --run > "$WORK/flow_train_b.log" 2>&1 || true
  wait "$pid" || true
else
  nice -n 10 $PY -m ufno.nested_sites --seed "$SEED" --start 0 --end "$N" \
    --out "$WORK/train" --run > "$WORK/flow_train.log" 2>&1 || true
fi
nice -n 10 $PY -m ufno.nested_sites --seed "$HELD_SEED" --start 0 --end "$HELD" \
  --out "$WORK/heldout" --run > "$WORK/flow_heldout.log" 2>&1 || true
ls "$WORK"/heldout/site_*/target.h5 > /dev/null 2>&1 || {
  log "no held-out site's Flow run succeeded ($WORK/heldout/runs.csv)"; exit 1; }

# 2. Site files.
IMPORT="$BUILD/apps/ufno_import"
for d in "$WORK"/train/site_* "$WORK"/heldout/site_*; do
  [ -f "$d/target.h5" ] || continue
  [ -f "$d/site.h5" ] && continue
  "$IMPORT" "$d/SITE.DATA" --out "$d/site.h5.part" > /dev/null
  mv "$d/site.h5.part" "$d/site.h5"
done
log "$(ls "$WORK"/train/site_*/site.h5 | wc -l) training sites with site file and target (the first $N used)"

# 3. Training (resumable), timed.
t0=$(date +%s)
OMP_NUM_THREADS=$THREADS $PY -m ufno.train_nested --data "$WORK/train" --out "$MODELS" \
  --sites "$N" --epochs "$EPOCHS" --epochs-global "$EPOCHS_GLOBAL" --width "$WIDTH" \
  --threads "$THREADS" --axis-order "$AXIS_ORDER" | tee -a "$WORK/train.log"
log "training (this run) took $(( $(date +%s) - t0 )) s"

# 4. The chain on each held-out site.
preds=() targets=() sites=()
for d in "$WORK"/heldout/site_*; do
  [ -f "$d/target.h5" ] && [ -f "$d/site.h5" ] || continue
  PRED="$MODELS/pred_$(basename "$d").h5"
  rm -f "$PRED"
  t0=$(date +%s.%N)
  if OMP_NUM_THREADS=$THREADS "$BUILD/apps/ufno_predict" --case "$d/site.h5" --threads "$THREADS" \
      --models "$MODELS/models" --out "$PRED" > "$d/predict.log" 2>&1; then
    chain=ufno_predict
  else
    log "ufno_predict could not run the chain ($(tail -1 "$d/predict.log")); the PyTorch chain instead"
    $PY -m ufno.nested_chain --case "$d/site.h5" --models "$MODELS/models" \
      --out "$PRED" --threads "$THREADS" >> "$d/predict.log" 2>&1
    chain="python3 -m ufno.nested_chain"
  fi
  log "$(basename "$d"): chain ($chain) in $(echo "$(date +%s.%N) - $t0" | bc) s"
  preds+=("$PRED") targets+=("$d/target.h5") sites+=("$d/site.h5")
done

# 5. The report, pooled over the held-out sites.
$PY -m ufno.nested_report --pred "${preds[@]}" --target "${targets[@]}" \
  --site "${sites[@]}" --models "$MODELS/models" --json "$MODELS/report.json" \
  | tee "$MODELS/report.md"
for i in "${!preds[@]}"; do
  $PY -m ufno.nested_report --pred "${preds[$i]}" --target "${targets[$i]}" \
    > "$MODELS/report_$(basename "$(dirname "${targets[$i]}")").md"
done
