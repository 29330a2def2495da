#!/usr/bin/env bash
# A held-out set made by another generator than the training data's: the scenarios of a sweep
# (screening/GeostatField.cpp's fields and the sweep's parameter sampling around a base case), each
# run through OPM Flow by ufno_export. Writes DIR/scenario_NNNN/{case.h5,target.h5}, the layout
# of examples/opm/, which python3 -m ufno.accuracy_report --pairs DIR scores. Resumable: a scenario
# with its target is skipped. Usage:
#   scripts/make-independent-set.sh [CONFIG (configs/sweep-site-screening.json)] [DIR (/work/data/independent)]
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIG=${1:-configs/sweep-site-screening.json}
DIR=${2:-/work/data/independent}
BIN=${BUILD_DIR:-build}/apps
mkdir -p "$DIR"
sweep="$DIR/sweep"
# The sweep's own cases; its predictions are not used here (accuracy_report predicts itself).
/usr/bin/python3 - "$CONFIG" "$sweep" > "$DIR/sweep.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["out"] = sys.argv[2]
c.pop("verify", None)
print(json.dumps(c))
PY
"$BIN/ufno_sweep" --config "$DIR/sweep.json" --threads 1 > "$DIR/sweep.log" 2>&1
for case in "$sweep"/cases/scenario_*.h5; do
  name=$(basename "$case" .h5)
  out="$DIR/$name"
  [ -f "$out/target.h5" ] && continue
  mkdir -p "$out"
  cp "$case" "$out/case.h5"
  "$BIN/ufno_export" "$out/case.h5" --deck "$out/deck" --targets "$out/target.h5" \
    >> "$DIR/export.log" 2>&1 || echo "$name: Flow failed (left out)" >> "$DIR/export.log"
done
echo "make-independent-set: $(ls "$DIR"/scenario_*/target.h5 2>/dev/null | wc -l) scenarios with Flow results in $DIR"
