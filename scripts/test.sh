#!/usr/bin/env bash
# Runs every test: the release build's, then the AddressSanitizer/UBSan build's (if set up).
set -euo pipefail
cd "$(dirname "$0")/.."
# Every ctest pass runs one job per core (UFNO_TEST_JOBS to change); MPI tests declare their
# ranks (PROCESSORS). The cores are counted before OMP_NUM_THREADS is set below: GNU nproc
# reports OMP_NUM_THREADS when it is set, which had left the passes running one job at a time.
JOBS="${UFNO_TEST_JOBS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}"
if ! [[ "$JOBS" =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "test.sh: error: UFNO_TEST_JOBS='$JOBS' is not a job count from 1 to 9999" >&2
  exit 2
fi
# One thread per library pool in tests; performance is measured in benchmarks/, not here.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# Formatting first: a file that .clang-format would change fails the run.
if command -v clang-format > /dev/null; then
  git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format --dry-run --Werror
  echo "test.sh: clang-format: every C++ and CUDA source is formatted"
else
  echo "test.sh: error: clang-format is missing (scripts/setup.sh installs it)" >&2
  exit 1
fi
ctest --test-dir build --output-on-failure -j "$JOBS"
if [ ! -d build-asan ]; then
  # A missing sanitizer build is a failure, not a silent skip: set-up builds it unless told not to.
  if [ "${UFNO_SKIP_SANITIZE:-0}" = 1 ]; then
    echo "test.sh: SKIP the AddressSanitizer/UBSan pass (UFNO_SKIP_SANITIZE=1)"
  else
    echo "test.sh: error: build-asan/ is missing; run scripts/setup.sh (or set UFNO_SKIP_SANITIZE=1)" >&2
    exit 1
  fi
else
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # LeakSanitizer on everything that does not start MPI; Open MPI never frees some of its
  # start-up allocations, so the MPI tests run with leak detection off (AddressSanitizer and
  # UBSan stay on).
  # (tests/lsan.supp: the Python interpreter that opm-common embeds keeps its allocations.)
  LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" ASAN_OPTIONS=detect_leaks=1 \
    ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE mpi
  ASAN_OPTIONS=detect_leaks=0 ctest --test-dir build-asan --output-on-failure -j "$JOBS" -L mpi
fi
