#!/usr/bin/env bash
# The shifted held-out set (scripts/make_shifted_cases.py), each case run through OPM Flow by
# ufno_export; resumable (a case with its target is skipped). Writes DIR/third_NN/{case.h5,
# target.h5}, the layout python3 -m ufno.accuracy_report --pairs scores. Usage:
#   scripts/make-shifted-set.sh TEST_SPLIT_DIR [DIR (/work/data/shifted)]
set -euo pipefail
cd "$(dirname "$0")/.."
TEST=$1
DIR=${2:-/work/data/shifted}
BIN=${BUILD_DIR:-build}/apps
mkdir -p "$DIR"
PYTHONPATH=python /usr/bin/python3 scripts/make_shifted_cases.py "$DIR" "$TEST" > "$DIR/make.log"
for d in "$DIR"/third_*; do
  [ -f "$d/target.h5" ] && continue
  "$BIN/ufno_export" "$d/case.h5" --deck "$d/deck" --targets "$d/target.h5" --timeout 600 \
    >> "$DIR/export.log" 2>&1 || echo "$d: Flow failed (left out)" >> "$DIR/export.log"
done
echo "make-shifted-set: $(ls "$DIR"/third_*/target.h5 2>/dev/null | wc -l) cases with Flow results in $DIR"
