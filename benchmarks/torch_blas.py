"""Which BLAS the PyTorch side of a benchmark runs on, and a refusal of slow ones.

Debian's PyTorch 1.13 (BLAS_INFO=generic) calls whatever libblas.so.3 the alternatives system
points at: ATLAS or the reference BLAS on a machine without OpenBLAS, which run a 2048^3 SGEMM at
a fifth of OpenBLAS's rate (30 against 158 GFLOP/s on 2 cores, measured 2026-11-27). A ratio
against that PyTorch would flatter ufno, and a user choosing PyTorch gets at least OpenBLAS (PyPI's
wheels bring MKL). So the benchmarks refuse to time PyTorch on a BLAS they do not know as
optimised, naming the library they found; UFNO_BENCH_ANY_BLAS=1 overrides (the BLAS is still
printed with the figures)."""
import os
import sys

OPTIMISED = ("openblas", "mkl", "blis")


def loaded_blas():
    """The BLAS library file loaded in this process after a matrix product (from /proc)."""
    import torch
    a = torch.ones(64, 64)
    (a @ a).sum().item()
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f
                       if "blas" in line.lower() or "mkl" in line.lower()})
    return [p for p in libs if p.startswith("/")]


def require_optimised_blas(tool):
    """The BLAS path(s); exits 2 with one line naming them when none is an optimised one."""
    libs = loaded_blas()
    if any(any(o in p.lower() for o in OPTIMISED) for p in libs):
        return libs
    if os.environ.get("UFNO_BENCH_ANY_BLAS") == "1":
        print("%s: warning: PyTorch runs on %s, not an optimised BLAS (UFNO_BENCH_ANY_BLAS=1)"
              % (tool, ", ".join(libs) or "no BLAS library found"), file=sys.stderr)
        return libs
    sys.exit("%s: PyTorch runs on %s, not an optimised BLAS: install libopenblas0-pthread "
             "(scripts/setup.sh does) or set UFNO_BENCH_ANY_BLAS=1 to time it anyway"
             % (tool, ", ".join(libs) or "no BLAS library found"))
