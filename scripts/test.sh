#!/usr/bin/env bash
# Runs every test: the release build's, then the AddressSanitizer/UBSan build's (if set up).
set -euo pipefail
cd "$(dirname "$0")/.."
# One thread per library pool in tests; performance is measured in benchmarks/, not here.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
ctest --test-dir build --output-on-failure
if [ -d build-asan ]; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure
fi
