#!/usr/bin/python3
"""ufno_export (case file -> OPM Flow deck, and with --targets Flow's results):

1. the deck it writes for a case equals, line for line (comments and TITLE aside), the deck the
   training-data generator (python/ufno/data/cases.py) wrote for that case: the shipped examples with
   MULTX from a dry run, and sampler-v3 cases (two perforation intervals, layer-cake fields)
   without it;
2. --targets reproduces the shipped examples' Flow targets (the same deck gives the same run);
3. ufno_import of the exported deck gives back the case;
4. bad input exits 2 (one line naming the file) and a failed Flow run exits 3, leaving no output.

Run: /usr/bin/python3 -m pytest python/tests/test_export.py, with UFNO_EXPORT and UFNO_IMPORT
naming the programs (default: build/apps/); skipped in part (exit 77) when flow is missing.
"""
import glob
import os
import shutil
import subprocess
import tempfile

import h5py
import pytest
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from ufno.data import cases as ufno_cases

# The programs under test: $UFNO_EXPORT and $UFNO_IMPORT (CTest sets them), else the build tree's.
EXPORT = os.environ.get("UFNO_EXPORT", os.path.join(ROOT, "build", "apps", "ufno_export"))
IMPORT = os.environ.get("UFNO_IMPORT", os.path.join(ROOT, "build", "apps", "ufno_import"))
FLOW = shutil.which("flow")
from cli_checks import check


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def deck_lines(path):
    with open(path) as f:
        return [l for l in f.read().splitlines() if not l.startswith("--") and
                not l.startswith(" ufno ")]


def same_deck(a, b):
    """Non-comment lines of CASE.DATA and every include equal; returns the first difference."""
    for rel in ["CASE.DATA"] + sorted(os.path.relpath(p, b) for p in
                                      glob.glob(os.path.join(b, "include", "*"))):
        la, lb = deck_lines(os.path.join(a, rel)), deck_lines(os.path.join(b, rel))
        if la != lb:
            diff = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            return "%s line %d: %r vs %r" % (rel, diff, la[diff:diff + 1], lb[diff:diff + 1])
    return ""


def test_export():
    work = tempfile.mkdtemp(prefix="ufno_export_test_")
    examples = sorted(os.path.dirname(p) for p in
                      glob.glob(os.path.join(ROOT, "examples", "opm", "*", "case.h5")))
    try:
        # 1. Sampler-v3 cases, no dry run: C++ export equals Python's write_deck(multx=None).
        for seed, index in ((2, 1), (2, 2), (2, 6)):  # layer-cake, cell kz/kr, two intervals
            case = ufno_cases.sample_case(seed, index)
            d = os.path.join(work, "v3_%d" % index)
            os.makedirs(d)
            ufno_cases.write_case_h5(os.path.join(d, "case.h5"), case)
            ufno_cases.write_deck(case, os.path.join(d, "py_deck"), multx=None)
            code, out, err = run(EXPORT, os.path.join(d, "case.h5"), "--deck",
                                 os.path.join(d, "deck"), "--no-multx")
            check("s%d_i%d (%s, %d perforated layers): export exits 0" % (
                seed, index, case["meta"]["structure"], case["meta"]["perf_layers"]), code == 0, err)
            diff = same_deck(os.path.join(d, "deck"), os.path.join(d, "py_deck"))
            check("s%d_i%d: deck equals the generator's line for line" % (seed, index), not diff,
                  diff)
        # 4. Bad input.
        code, out, err = run(EXPORT, os.path.join(work, "missing.h5"), "--deck",
                             os.path.join(work, "x"))
        check("a missing case exits 2 with one line naming it",
              code == 2 and err.count("\n") == 1 and "missing.h5" in err, (code, err))
        open(os.path.join(work, "file"), "w").close()
        code, out, err = run(EXPORT, os.path.join(examples[0], "case.h5"), "--deck",
                             os.path.join(work, "file"), "--no-multx")
        check("--deck naming a file exits 2", code == 2 and "--deck" in err, (code, err))
        code, out, err = run(EXPORT, os.path.join(examples[0], "case.h5"), "--deck",
                             os.path.join(work, "bad_deck"), "--targets",
                             os.path.join(work, "bad_t.h5"), "--no-multx", "--flow", "/bin/false")
        check("a failing Flow exits 3 and writes no targets",
              code == 3 and not os.path.exists(os.path.join(work, "bad_t.h5")), (code, err))
        if not FLOW:
            pytest.skip("the shipped examples' decks and targets (flow is not installed)")
        for ex in examples:
            name = os.path.basename(ex)
            d = os.path.join(work, name)
            code, out, err = run(EXPORT, os.path.join(ex, "case.h5"), "--deck", d + "_deck")
            check("%s: export with MULTX exits 0" % name, code == 0, err)
            diff = same_deck(d + "_deck", os.path.join(ex, "deck"))
            check("%s: deck equals the generator's (MULTX from a dry run too)" % name, not diff,
                  diff)
            code, out, err = run(IMPORT, os.path.join(d + "_deck", "CASE.DATA"), "--out",
                                 d + "_back.h5")
            with h5py.File(os.path.join(ex, "case.h5")) as a, h5py.File(d + "_back.h5") as b:
                worst = max(float(np.max(np.abs(a[k][()] - b[k][()])) /
                                  max(float(np.max(np.abs(a[k][()]))), 1e-30))
                            for k in ("PERMX", "PERMZ", "PORO", "DR", "DZ", "PERF", "INJ_RATE",
                                      "TEMP", "PRESSURE", "SWI", "VG_LAMBDA", "TIMES"))
            check("%s: ufno_import gives the case back (rel %.1e)" % (name, worst),
                  code == 0 and worst < 1e-6, err)
        ex = examples[-1]
        t = os.path.join(work, "targets.h5")
        code, out, err = run(EXPORT, os.path.join(ex, "case.h5"), "--deck",
                             os.path.join(work, "run_deck"), "--targets", t)
        check("--targets runs Flow and exits 0", code == 0, err)
        if code == 0:
            with h5py.File(t) as a, h5py.File(os.path.join(ex, "target.h5")) as b:
                for v in ("SG", "dP"):
                    e = float(np.max(np.abs(a[v][0] - b[v][()])))
                    check("%s: Flow's %s equals the training target (max diff %.1e)" % (
                        os.path.basename(ex), v, e), a[v].shape[1:] == b[v].shape and e < 1e-4)
    finally:
        shutil.rmtree(work, ignore_errors=True)

