#!/usr/bin/python3
"""Every CUDA kernel launched with grid_for (core/CudaCheck.cuh) loops grid-stride: grid_for caps
the grid at 65,536 blocks of 256 threads, so a kernel that handles one element per thread leaves
everything beyond 16,777,216 elements untouched (a wrong result at real sizes that small test
models never see). Read from the sources, so it runs without a GPU; exit 1 naming each kernel at
fault. Also checks grid_for's arithmetic: the cap, and at least one block for n = 0."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRIDE = re.compile(r"for\s*\([^;]*;[^;]*;[^{]*gridDim\.x", re.S)


def kernels(text):
    """(name, body) of every __global__ function in a source text."""
    for m in re.finditer(r"__global__\s+void\s+(\w+)\s*\(", text):
        start = text.index("{", m.end())
        depth, i = 0, start
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        yield m.group(1), text[start:i]


def launched_with_grid_for(text):
    return set(re.findall(r"(\w+)(?:<[^<>]*>)?<<<\s*grid_for\(", text))


def main():
    bad, checked = [], 0
    for base, _, files in os.walk(ROOT):
        if "/build" in base or "/." in base or "node_modules" in base:
            continue
        for f in files:
            if not f.endswith((".cu", ".cuh")):
                continue
            text = open(os.path.join(base, f)).read()
            launched = launched_with_grid_for(text)
            for name, body in kernels(text):
                if name in launched:
                    checked += 1
                    if not STRIDE.search(body):
                        bad.append("%s: kernel %s is launched with grid_for but handles one "
                                   "element per thread (no grid-stride loop)" % (f, name))
    cuh = open(os.path.join(ROOT, "core", "CudaCheck.cuh")).read()
    cap = re.search(r"blocks < (\d+) \? \(blocks > 0 \? blocks : 1\) : (\d+)", cuh)
    if not cap or cap.group(1) != cap.group(2):
        bad.append("CudaCheck.cuh: grid_for's cap is not what this check reads")
    for line in bad:
        print("FAIL " + line)
    print("%d kernels checked, %d at fault" % (checked, len(bad)))
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
