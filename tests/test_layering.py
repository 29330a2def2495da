#!/usr/bin/python3
"""scripts/check_layers.py passes on this tree and fails on a copy of it with one include
against the layering planted (operators including io, core including operators, runtime including
screening, screening including apps, the ECLIPSE reader including operators), or a getenv below
runtime/ (in fft/ or in screening/).
Prints "N passed, M failed"; exit 1 on a failure."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "scripts", "check_layers.py")
results = []


def check(name, cond, detail=""):
    results.append(bool(cond))
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + detail), flush=True)


def run(root):
    p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


code, out = run(ROOT)
check("this tree follows the layering", code == 0, out)
for victim, planted in (("operators/Linear.cpp", '#include "io/CaseFile.hpp"\n'),
                        ("core/Tensor.hpp", '#include "operators/Conv3d.hpp"\n'),
                        ("runtime/Predictor.cpp", '#include "screening/Kpis.hpp"\n'),
                        ("screening/Sweep.cpp", '#include "apps/WebCase.hpp"\n'),
                        ("io/EclipseDeck.cpp", '#include "operators/Linear.hpp"\n'),
                        ("fft/FftwBackend.cpp", 'static const char* v = std::getenv("X");\n'),
                        ("screening/Kpis.cpp", 'static const char* v = std::getenv("X");\n')):
    work = tempfile.mkdtemp(prefix="ufno_layers_")
    try:
        for layer in ("core", "fft", "decomposition", "operators", "io", "runtime", "screening"):
            shutil.copytree(os.path.join(ROOT, layer), os.path.join(work, layer))
        with open(os.path.join(work, victim)) as f:
            text = f.read()
        with open(os.path.join(work, victim), "w") as f:
            f.write(planted + text)
        code, out = run(work)
        check("a planted include or getenv in %s is caught" % victim,
              code == 1 and victim in out and ("against the layering" in out or
                                               "reads the environment" in out), out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))
sys.exit(0 if all(results) else 1)
