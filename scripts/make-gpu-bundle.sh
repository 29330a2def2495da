#!/usr/bin/env bash
# The bundle for a GPU machine (docs/gpu.md): the GPU build's programs, tests and
# benchmarks (scripts/build-gpu.sh project first) and the Debian 12 shared libraries they load,
# except glibc's and CUDA's (that machine has a newer glibc, and its CUDA libraries come from its
# PyTorch wheels), plus Open MPI's and PMIx's plugins and help files, relocated with OPAL_PREFIX.
# Written to build-gpu/bundle.tar.xz (carried by the device tool; scripts/gpu-run.sh unpacks it).
# Usage: scripts/make-gpu-bundle.sh [BUILD_DIR (default build-gpu/ufno)]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu/ufno}
OUT=build-gpu/bundle
rm -rf "$OUT" build-gpu/bundle.tar.xz
mkdir -p "$OUT/bin" "$OUT/lib"
progs=(apps/ufno_predict tests/test_cuda_backend tests/test_model_parity tests/test_mpi_fno4d
       tests/test_mpi_fft4d tests/test_mpi_model tests/test_execution_plan
       tests/test_pass_allocations tests/test_mpi_node_memory benchmarks/bench_model benchmarks/bench_dfft)
for p in "${progs[@]}"; do
  [ -x "$BUILD/$p" ] || { echo "make-gpu-bundle: $BUILD/$p is missing (scripts/build-gpu.sh project)" >&2; exit 1; }
  cp "$BUILD/$p" "$OUT/bin/"
  echo "$p" >> "$OUT/layout.txt"  # where the program sits in the build tree
done
# The build's test list with the paths it names (scripts/run-test-list.py runs it elsewhere).
# Catch2 lists a program's test cases by running it after the build, which cannot start here
# (no CUDA driver); such a program gets one entry that runs all its cases.
(cd "$BUILD" && ctest --show-only=json-v1) > "$OUT/tests.json"
python3 - "$OUT/tests.json" "$(cd "$BUILD" && pwd)" "$OUT/layout.txt" <<'PY'
import json, sys
path, build, layout = sys.argv[1:]
d = json.load(open(path))
named = {a for t in d["tests"] for a in t.get("command", [])}
for rel in open(layout).read().split():
    exe = build + "/" + rel
    if rel.startswith("tests/") and exe not in named:
        d["tests"].append({"name": rel.split("/")[-1] + " (all cases)", "command": [exe],
                           "properties": [{"name": "WORKING_DIRECTORY",
                                           "value": build + "/tests"}]})
json.dump(d, open(path, "w"), indent=1)
PY
# build dir, source dir, and the mpiexec the MPI tests name
printf '%s\n%s\n%s\n' "$(cd "$BUILD" && pwd)" "$(pwd)" \
  "$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")" > "$OUT/PATHS"
strip --strip-unneeded "$OUT"/bin/* 2>/dev/null || true
# Shared libraries: everything ldd resolves, but glibc's, the dynamic loader and CUDA's.
skip='^(libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux-x86-64|libcuda|libcudart|libcublas|libcublasLt|libcufft|libcudnn[a-z_]*|libnvrtc|libnvJitLink|libnvidia-[a-z]*)\.so'
for p in "$OUT"/bin/*; do
  ldd "$p" | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ "$name" =~ $skip ]]; then cp -L "$path" "$OUT/lib/$name"; fi
done
# Open MPI (singleton start-up runs orted) and PMIx, under a prefix of their own (OPAL_PREFIX).
MPI="$OUT/usr"
mkdir -p "$MPI/bin" "$MPI/lib/x86_64-linux-gnu/openmpi/lib" "$MPI/share"
cp -L /usr/bin/orted /usr/bin/mpirun "$MPI/bin/"
cp -rL /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 "$MPI/lib/x86_64-linux-gnu/openmpi/lib/"
cp -rL /usr/share/openmpi "$MPI/share/"
if [ -d /usr/lib/x86_64-linux-gnu/pmix2 ]; then
  mkdir -p "$MPI/lib/x86_64-linux-gnu/pmix2"
  cp -rL /usr/lib/x86_64-linux-gnu/pmix2/lib "$MPI/lib/x86_64-linux-gnu/pmix2/"
  [ -d /usr/share/pmix ] && cp -rL /usr/share/pmix "$MPI/share/"
fi
for p in "$MPI"/bin/* "$MPI"/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so \
         $(find "$MPI/lib/x86_64-linux-gnu/pmix2" -name '*.so' 2>/dev/null); do
  ldd "$p" 2>/dev/null | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ "$name" =~ $skip ]] && [ ! -e "$OUT/lib/$name" ]; then cp -L "$path" "$OUT/lib/$name"; fi
done
# OPM's CO2 tables, which the Python KPI heads read (UFNO_CO2_TABLES; the GPU machine has no
# opm-common): the PyTorch side of the shipped-model comparison applies the maximum-dP head.
mkdir -p "$OUT/share"
cp /usr/include/opm/material/components/co2tables.inc "$OUT/share/"
# What the runs read: fixtures, models, examples, benchmark scripts come with the working tree.
echo "$(git rev-parse HEAD) $(date -u +%FT%TZ)" > "$OUT/VERSION"
# xz -9's 64 MiB window spans the programs, which each link the same ufno libraries: 26.6
# against 30.6 MB at the default level, room the working tree needs within a call's 64 MiB.
XZ_OPT=-9 tar cJf build-gpu/bundle.tar.xz -C build-gpu bundle
echo "make-gpu-bundle: build-gpu/bundle.tar.xz, $(du -h build-gpu/bundle.tar.xz | cut -f1)" \
     "($(du -sh "$OUT" | cut -f1) unpacked, $(ls "$OUT/lib" | wc -l) libraries)"

# Self-check (as root, where unshare works): with the system's Open MPI and PMIx plugin folders
# hidden in a private mount namespace, a singleton MPI start with the bundle's relocated plugins
# must work (the CPU build's ufno_predict on a test model; the GPU programs need a driver).
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null && [ -x build/apps/ufno_predict ]; then
  B=$(pwd)/$OUT
  mkdir -p /tmp/ufno-empty
  if unshare -m bash -c "
      mount --bind /tmp/ufno-empty /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 &&
      mount --bind /tmp/ufno-empty /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix &&
      mount --bind /tmp/ufno-empty /usr/share/openmpi &&
      OPAL_PREFIX=$B/usr PATH=$B/usr/bin:\$PATH LD_LIBRARY_PATH=$B/lib \
      PMIX_MCA_mca_base_component_path=$B/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix \
      timeout 60 build/apps/ufno_predict --model tests/data/fno4d_small.h5 \
        --tensor tests/data/fno4d_small_io.h5 --out /tmp/ufno-bundle-check.h5 --threads 1" \
      > /tmp/ufno-bundle-check.log 2>&1; then
    echo "make-gpu-bundle: self-check passed (MPI starts from the bundle's plugins alone)"
  else
    echo "make-gpu-bundle: self-check FAILED (/tmp/ufno-bundle-check.log)" >&2
    exit 1
  fi
  rm -f /tmp/ufno-bundle-check.h5
fi
# What a GPU call carries: the working tree (tracked and untracked, not ignored) and the bundle,
# 64 MiB at most together (docs/gpu.md). A pack for training travels in a call of its own.
tree=$(git ls-files -coz --exclude-standard | xargs -0 -r stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
bundle=$(stat -c %s build-gpu/bundle.tar.xz)
echo "make-gpu-bundle: working tree $((tree >> 20)) MiB + bundle $((bundle >> 20)) MiB of the 64 MiB a GPU call carries"
if [ $((tree + bundle)) -gt $((64 << 20)) ]; then
  echo "make-gpu-bundle: the working tree and the bundle are over 64 MiB together: a GPU call would refuse them" >&2
  exit 1
fi
