#!/usr/bin/env bash
# Resumable background generation of the training data (python/ufno/data/cases.py sampler v3, seed 2)
# with OPM Flow at low priority, one run at a time (JOBS=2 for both cores when nothing else
# runs). Resumable: a job that was stopped is started again with the same command; finished and
# failed cases are skipped. Usage: scripts/generate-data.sh [DATA_ROOT (default /work/data)] [END (6000)]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${1:-/work/data}
END=${2:-6000}
mkdir -p "$ROOT/opm"
# 60 s: ten times the slowest ordinary run; the few cases that run longer are logged and left out.
PYTHONPATH="$PWD/python" exec nice -n 5 /usr/bin/python3 -m ufno.run_flow_batch --seed 2 --start 0 --end "$END" \
  --data "$ROOT/opm/seed_0002" --jobs "${JOBS:-1}" --min-timeout 60 >> "$ROOT/gen.log" 2>&1
