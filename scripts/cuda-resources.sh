#!/usr/bin/env bash
# The static resource usage of every CUDA kernel of the backend (docs/gpu.md): each .cu file
# compiled for one architecture with `ptxas -v`, one line per kernel: registers per thread, static
# shared memory, spilled bytes, and the theoretical occupancy at the block size the backend
# launches (kThreads = 256, core/CudaCheck.cuh) from the SM's limits. Needs nvcc, not a GPU.
# Usage: scripts/cuda-resources.sh [ARCH (default 90)] > resources.txt
# With a GPU build's compile database (build-gpu/ufno/compile_commands.json, scripts/build-gpu.sh)
# the Kokkos kernels of the .cpp files compiled by nvcc_wrapper are listed too.
set -euo pipefail
cd "$(dirname "$0")/.."
ARCH=${1:-90}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
command -v "$NVCC" > /dev/null || { echo "cuda-resources: no nvcc at $NVCC (set NVCC)" >&2; exit 1; }
KOKKOS_INC=${KOKKOS_INC:-/usr/include/trilinos}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for f in core/*.cu fft/*.cu operators/backend/*.cu; do
  echo "== $f"
  "$NVCC" -c -o "$T/o.o" -O3 -DNDEBUG -std=c++17 --extended-lambda --expt-relaxed-constexpr \
    -arch=sm_"$ARCH" -Xptxas -v -I. -isystem "$KOKKOS_INC" -isystem /usr/local/cuda/include \
    "$f" 2>&1 || { echo "cuda-resources: $f does not compile" >&2; exit 1; }
done > "$T/ptxas.txt"

DB=build-gpu/ufno/compile_commands.json
if [ -f "$DB" ]; then
  python3 - "$DB" "$T" <<'PY' >> "$T/ptxas.txt"
import json, shlex, subprocess, sys
db, tmp = sys.argv[1:]
for e in json.load(open(db)):
    if not e["file"].endswith(".cpp"):
        continue
    args = shlex.split(e["command"])
    if "-o" in args:
        args[args.index("-o") + 1] = tmp + "/o.o"
    print("== " + e["file"], flush=True)
    r = subprocess.run(args + ["-Xptxas", "-v"], cwd=e["directory"], capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
PY
fi

python3 - "$T/ptxas.txt" "$ARCH" <<'PY'
import re, subprocess, sys
text, arch = open(sys.argv[1]).read(), int(sys.argv[2])
# Per-SM limits of compute capability 8.0 / 9.0 (CUDA C Programming Guide, table of technical
# specifications): registers, shared memory (bytes, 1 KiB reserved per block), threads, blocks.
LIMITS = {80: (65536, 167936, 2048, 32), 90: (65536, 233472, 2048, 32)}
regs_sm, smem_sm, threads_sm, blocks_sm = LIMITS.get(arch, LIMITS[90])
THREADS = 256
rows, source, name = [], "", None
for line in text.splitlines():
    if line.startswith("== "):
        source = line[3:]
    m = re.search(r"Compiling entry function '([^']+)' for 'sm_(\d+)'", line)
    if m:
        name, spill = m.group(1), 0
        continue
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and name:
        spill = int(m.group(1)) + int(m.group(2))
    m = re.search(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?", line)
    if m and name:
        regs, smem = int(m.group(1)), int(m.group(2) or 0)
        warps = THREADS // 32
        per_warp = -(-regs * 32 // 256) * 256
        by_regs = (regs_sm // per_warp) // warps if per_warp else blocks_sm
        by_smem = smem_sm // (smem + 1024) if smem else blocks_sm
        blocks = min(blocks_sm, threads_sm // THREADS, by_regs, by_smem)
        occ = blocks * warps / (threads_sm // 32)
        rows.append((source, name, regs, smem, spill, occ))
        name = None
names = [r[1] for r in rows]
try:
    demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                               text=True).stdout.splitlines()
except OSError:
    demangled = names
print("CUDA kernels, sm_%d, %d threads a block: registers, static shared memory, spills, "
      "theoretical occupancy" % (arch, THREADS))
print("%-34s %5s %9s %7s %6s  %s" % ("source", "regs", "smem B", "spill B", "occ.", "kernel"))
for (source, _, regs, smem, spill, occ), d in zip(rows, demangled):
    d = re.sub(r"\s+", " ", d)
    print("%-34s %5d %9d %7d %5.0f%%  %s" % (source, regs, smem, spill, 100 * occ,
                                              d if len(d) < 120 else d[:117] + "..."))
if not rows:
    sys.exit("cuda-resources: ptxas reported no kernel")
PY
