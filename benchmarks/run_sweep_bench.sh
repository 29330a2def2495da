#!/usr/bin/env bash
# Site-screening throughput: scenarios per second of ufno_sweep with the shipped default models on
# configs/sweep-site-screening.json (geostatistical fields, 24 x 48 x 24 grid), on this machine's
# cores used two ways: one rank with all threads, and one rank per core (case-parallel groups).
# Usage: benchmarks/run_sweep_bench.sh [--samples N]       (default 40; about 2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=40
[ "${1:-}" = "--samples" ] && SAMPLES=$2
CORES=$(nproc)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

config() {  # out_dir -> config path with the sample count and output directory replaced
  /usr/bin/python3 - "$1" "$SAMPLES" <<'PY'
import json, sys
c = json.load(open("configs/sweep-site-screening.json"))
c["samples"], c["out"], c["keep_fields"] = int(sys.argv[2]), sys.argv[1], []
json.dump(c, open(sys.argv[1] + ".json", "w"))
print(sys.argv[1] + ".json")
PY
}

run() {  # label ranks threads
  local cfg
  cfg=$(config "$WORK/$1")
  local t0 t1
  t0=$(date +%s.%N)
  OMP_NUM_THREADS=$3 mpirun -n "$2" build/apps/ufno_sweep --config "$cfg" --threads "$3" \
    > "$WORK/$1.log" 2>&1
  t1=$(date +%s.%N)
  awk -v l="$1" -v r="$2" -v t="$3" -v n="$SAMPLES" -v a="$t0" -v b="$t1" 'BEGIN {
    printf "| %s | %d x %d | %d | %.1f | %.2f | %.2f |\n", l, r, t, n, b - a, n / (b - a), (b - a) / n }'
}

echo "ufno_sweep on $SAMPLES scenarios of configs/sweep-site-screening.json, $CORES cores"
echo "| layout | ranks x threads | scenarios | wall s | scenarios/s | s/scenario |"
echo "|---|---|---|---|---|---|"
run "one rank, all threads" 1 "$CORES"
run "one rank per core" "$CORES" 1
grep -h "ufno_sweep:" "$WORK"/*.log | sed 's/^/# /'
