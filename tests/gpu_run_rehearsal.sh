#!/usr/bin/env bash
# The GPU check's rehearsal (CTest gpu_run_rehearsal): DEVICE=cpu scripts/gpu-run.sh on the CPU
# build BUILD_DIR must run every step (probe, benchmark, shipped models, tests, profile), append
# each benchmark row to results.md, cap every returned file at 16 MiB and end with status 0; a
# missing library must stop it at the probe with one line naming the library.
# Usage: tests/gpu_run_rehearsal.sh BUILD_DIR
set -uo pipefail
BUILD=$(cd "${1:?usage: gpu_run_rehearsal.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "gpu_run_rehearsal: $*"; exit 1; }

OUT=$T/out WORK=$T/work BUILD=$BUILD DEVICE=cpu bash "$ROOT/scripts/gpu-run.sh" > "$T/run.log" 2>&1
rc=$?
cat "$T/out/summary.txt"
[ "$rc" -eq 0 ] || { tail -30 "$T/run.log"; fail "exit $rc (want 0)"; }
# What comes back from the device tool: at most 8 files, the logs packed into one.
n=$(find "$T/out" -type f | wc -l)
[ "$n" -le 8 ] || fail "$n files in OUT (the device tool returns 8)"
for f in summary.txt results.md logs.tar.gz; do
  [ -s "$T/out/$f" ] || fail "no $f in OUT"
done
mkdir "$T/logs" && tar xzf "$T/out/logs.tar.gz" -C "$T/logs" || fail "logs.tar.gz does not unpack"
for f in gpu-run.log probe.txt ldd.txt benchmark.log cases.log profile.log test-mpi_model_np2.log; do
  [ -s "$T/logs/$f" ] || fail "no $f in logs.tar.gz"
done
# Rows: 2 models x 1 batch x 4 sides, then 2 rows of the shipped models; all measured.
rows=$(grep -c '^| U-FNO small\|^| FNO4D small' "$T/out/results.md")
[ "$rows" -eq 8 ] || fail "$rows benchmark rows in results.md (want 8)"
grep -q '^| ufno_predict' "$T/out/results.md" || fail "no ufno_predict row"
grep -q '^| torch (' "$T/out/results.md" || fail "no PyTorch row of the shipped models"
if grep -E '^\|' "$T/out/results.md" | grep -q 'failed\|not run'; then fail "a row failed"; fi
grep -q 'per-layer time' "$T/out/results.md" || fail "no per-layer table in results.md"
grep -q '^cost model: predicted' "$T/out/results.md" || fail "no cost model in results.md"
for s in probe benchmark cases "test cuda_backend" "test pass_allocations" "test mpi_fno4d_np2" \
         profile; do
  grep -q "^$s" "$T/out/summary.txt" || fail "no '$s' line in summary.txt"
done
big=$(find "$T/out" -type f -size +16M)
[ -z "$big" ] || fail "files over 16 MiB: $big"
[ ! -e "$T/out/bench/rows" ] || fail "benchmark data went into OUT"

# A program that needs a library the machine lacks: the probe stops, naming the library.
mkdir -p "$T/fake/apps" "$T/fake/tests" "$T/fake/benchmarks"
for p in "$BUILD"/apps/ufno_predict "$BUILD"/benchmarks/bench_model "$BUILD"/tests/test_*; do
  [ -x "$p" ] && ln -s "$p" "$T/fake/${p#"$BUILD"/}"
done
rm "$T/fake/benchmarks/bench_model"
# A real ELF program linked against a library that is then removed.
echo 'int main(void) { return 0; }' > "$T/m.c"
if cc -shared -o "$T/libufno_missing_for_test.so" -x c /dev/null &&
   cc -o "$T/fake/benchmarks/bench_model" "$T/m.c" -L"$T" -Wl,--no-as-needed \
     -l:libufno_missing_for_test.so && rm "$T/libufno_missing_for_test.so"; then
  OUT=$T/out2 WORK=$T/work BUILD=$T/fake DEVICE=cpu bash "$ROOT/scripts/gpu-run.sh" > "$T/run2.log" 2>&1
  rc=$?
  [ "$rc" -eq 3 ] || fail "a missing library: exit $rc (want 3)"
  grep -q '^stop: missing library libufno_missing_for_test.so (needed by .*bench_model)' \
    "$T/out2/summary.txt" || { cat "$T/out2/summary.txt"; fail "the stop line does not name the library"; }
  [ ! -e "$T/out2/results.md" ] || fail "the benchmark ran after the probe stopped"
else
  fail "cannot build the program with a missing library"
fi
# A step that does not exist: one line naming it, exit 2, nothing run.
OUT=$T/out3 WORK=$T/work BUILD=$BUILD DEVICE=cpu STEPS="tests bogus" bash "$ROOT/scripts/gpu-run.sh" \
  > "$T/run3.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "STEPS with an unknown step: exit $rc (want 2)"
grep -q "^stop: STEPS: 'bogus' is not a step" "$T/out3/summary.txt" || fail "no line naming the bad step"
[ ! -e "$T/out3/results.md" ] || fail "steps ran after a bad STEPS"
echo "gpu_run_rehearsal: passed"
