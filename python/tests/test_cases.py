#!/usr/bin/python3
"""Tests of python/ufno/data/cases.py, python/ufno/data/encoding.py and python/ufno/data/flow_batch.py.

Run: /usr/bin/python3 -m pytest python/tests/test_cases.py. Needs neither OPM Flow
nor a build: tests that use `flow` (two dry runs and one ~1 s simulation) or
build/apps/ufno_predict run only if those exist, and are reported as skipped otherwise. The deck
parsing test needs python3-opm-common (skipped without it). UFNO_TEST_SKIP_FLOW=1 skips the flow
tests even where flow is installed.
"""

import filecmp
import math
import os
import shutil
import subprocess
import sys

import h5py
import pytest
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYDIR)

from ufno.data import flow_batch as rfb
from ufno.data import cases as uc
from ufno.data import encoding as ue

# UFNO_TEST_SKIP_FLOW=1 skips the tests that run flow even where it is installed.
FLOW = None if os.environ.get("UFNO_TEST_SKIP_FLOW") == "1" else shutil.which("flow")
# The program under test: $UFNO_PREDICT (CTest sets it), else the build tree's.
PREDICT = os.environ.get("UFNO_PREDICT", os.path.join(REPO, "build", "apps", "ufno_predict"))
TMP = None




def tmpdir(name):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    return d


def same_tree(a, b):
    """Byte-identical directory trees."""
    cmp = filecmp.dircmp(a, b)
    assert not cmp.left_only and not cmp.right_only, (cmp.left_only, cmp.right_only)
    for f in cmp.common_files:
        assert filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False), f
    for d in cmp.common_dirs:
        same_tree(os.path.join(a, d), os.path.join(b, d))


# ---------------------------------------------------------------------------------------------

def test_grid_constants():
    assert uc.NX % 8 == 0 and uc.NY % 8 == 0 and (uc.NX, uc.NY, uc.NT) == (24, 48, 24)
    dr = uc.radial_widths()
    assert abs(dr[0] - 3.5938) < 1e-12 and np.all(np.diff(dr) > 0)
    outer = uc.radial_edges()[1][-1]
    assert abs(outer - 1e5) < 200, outer
    t = uc.report_times()
    assert t[0] == 1.0 and abs(t[-1] - 10950.3) < 0.1 and np.all(np.diff(t) > 0)
    assert np.array_equal(t, ue.paper_times_days(24))
    rn = uc.node_radii()
    a, b = uc.radial_edges()
    assert np.all((rn > a) & (rn < b))


def test_determinism_arrays():
    a = uc.sample_case(1, 5)
    others = [uc.sample_case(1, i) for i in (0, 7, 6)]     # generated in between: no influence
    b = uc.sample_case(1, 5)
    for k in uc.UNITS:
        assert np.array_equal(a[k], b[k]), k
    assert a["meta"] == b["meta"]
    assert not np.array_equal(a["PERMX"], others[1]["PERMX"])
    c = uc.sample_case(2, 5)
    assert not np.array_equal(a["PERMX"], c["PERMX"]), "seed must matter"


def test_determinism_files():
    d = tmpdir("det")
    for run in ("a", "b"):
        case = uc.sample_case(1, 3)
        uc.write_case_h5(os.path.join(d, run + ".h5"), case)
        uc.write_deck(case, os.path.join(d, "deck_" + run), multx=None)
    assert filecmp.cmp(os.path.join(d, "a.h5"), os.path.join(d, "b.h5"), shallow=False)
    same_tree(os.path.join(d, "deck_a"), os.path.join(d, "deck_b"))
    assert not [f for f in os.listdir(d) if ".tmp" in f], "temporary files left"


def test_ranges():
    r = uc.RANGES
    for i in range(60):
        c = uc.sample_case(1, i)
        m = c["meta"]
        for k in ("INJ_RATE", "TEMP", "PRESSURE", "SWI", "VG_LAMBDA"):
            assert r[k][0] <= c[k] <= r[k][1], (i, k, c[k])
        assert c["TEMP"] <= 126.85, "beyond OPM's CO2 tables (400 K)"
        n = m["n_active"]
        assert r["n_active"][0] <= n <= r["n_active"][1]
        kx, kz, phi = c["PERMX"], c["PERMZ"], c["PORO"]
        for a in (kx, kz, phi):
            assert a.shape == (uc.NX, uc.NY) and a.dtype == np.float64
            assert np.all(a[n:] == 0) and np.all(a[:n] > 0)
        assert kx[:n].min() >= r["PERMX"][0] * 0.999 and kx[:n].max() <= r["PERMX"][1] * 1.001
        assert np.all(np.abs(np.log(kx[:n])) >= 1e-3 * 0.999)
        assert np.all(np.abs(np.log(kz[:n])) >= 1e-3 * 0.999)
        ratio = kz[:n] / kx[:n]
        # kz is nudged away from 1 mD (|ln kz| >= 1e-3), which moves the ratio by 0.1 % at most.
        assert r["anisotropy"][0] * 0.998 <= ratio.min() and ratio.max() <= r["anisotropy"][1] * 1.002
        if not m["anisotropy_varies"]:
            assert np.allclose(ratio, m["anisotropy"], rtol=2e-3)
        assert r["PORO"][0] <= phi[:n].min() and phi[:n].max() <= r["PORO"][1]
        perf = np.flatnonzero(c["PERF"])
        intervals = 1 + int(np.sum(np.diff(perf) > 1))
        assert perf.size >= 1 and intervals <= 2, "one or two perforation intervals"
        assert perf[-1] < n, "perforation inside the formation"
        assert (m["perf_top"], m["perf_bottom"], m["perf_layers"]) == (
            perf[0] + 1, perf[-1] + 1, perf.size)
        if m["structure"] == "homogeneous":
            assert m["sigma_lnk"] == 0 and np.ptp(kx[:n]) <= kx[:n].max() * 2e-3
        if m["structure"] == "layer-cake":
            assert np.all(np.ptp(kx[:n], axis=1) <= kx[:n].max(axis=1) * 2e-3), "constant layers"
        assert m["structure"] in uc.STRUCTURES and m["kernel"] in ("gaussian", "exponential")
        assert c["PRESSURE"] + m["screen_dp_estimate_bar"] <= uc.SCREEN_MAX_BAR
        assert np.array_equal(c["TIMES"], uc.report_times())
        assert np.array_equal(c["DR"], uc.radial_widths()) and np.all(c["DZ"] == uc.DZ)


def test_correlation_anisotropy():
    """ln kr varies less along r than along z (long radial, short vertical correlation)."""
    dr_lag, dz_lag = [], []
    for i in range(40):
        c = uc.sample_case(3, i)
        n = c["meta"]["n_active"]
        if n < 6 or c["meta"]["structure"] != "gaussian":
            continue
        lk = np.log(c["PERMX"][:n])
        dr_lag.append(np.mean(np.diff(lk, axis=1) ** 2))
        dz_lag.append(np.mean(np.diff(lk, axis=0) ** 2))
    assert len(dr_lag) >= 5
    assert np.median(dr_lag) < 0.5 * np.median(dz_lag), (np.median(dr_lag), np.median(dz_lag))


def test_case_file_rules():
    """The case file follows io/CaseFile.cpp: datasets, shapes, dtypes and units."""
    d = tmpdir("casefile")
    c = uc.sample_case(1, 2)
    p = os.path.join(d, "case.h5")
    uc.write_case_h5(p, c)
    with h5py.File(p, "r") as f:
        for name, units in uc.UNITS.items():
            assert name in f, name
            assert f[name].attrs["units"].decode() == units, name
        for name in ("PERMX", "PERMZ", "PORO"):
            assert f[name].shape == (uc.NX, uc.NY) and f[name].dtype == np.float64
        assert f["DR"].shape == (uc.NY,) and f["DZ"].shape == (uc.NX,)
        assert f["PERF"].shape == (uc.NX,) and set(np.unique(f["PERF"][()])) <= {0, 1}
        for name in ("INJ_RATE", "TEMP", "PRESSURE", "SWI", "VG_LAMBDA"):
            assert f[name].shape == () and f[name].dtype == np.float64
        assert f["TIMES"].shape == (uc.NT,)
        kx = f["PERMX"][()]
        assert np.all(kx[f["PERF"][()] == 1, 0] > 0), "perforated layers active at the well"
    back = uc.read_case_h5(p)
    assert back["meta"]["n_active"] == c["meta"]["n_active"]
    assert back["meta"]["structure"] == c["meta"]["structure"]


def test_sgof():
    for swi, lam in ((0.1, 0.3), (0.3, 0.7), (0.2, 0.5)):
        t = uc.sgof_table(swi, lam)
        sg, krg, krw, pc = t.T
        assert len(t) == uc.SGOF_ROWS
        assert sg[0] == 0 and abs(sg[-1] - (1 - swi)) < 1e-7 and np.all(np.diff(sg) > 0)
        assert np.all(np.diff(krg) >= 0) and np.all(np.diff(krw) <= 0) and np.all(np.diff(pc) >= 0)
        assert (krg[0], krw[0], pc[0]) == (0, 1, 0) and (krg[-1], krw[-1]) == (1, 0)
        assert pc.max() <= uc.PC_MAX_BAR
        # van Genuchten-Mualem at an interior point
        j = len(t) // 2
        s = 1 - sg[j] / (1 - swi)
        assert abs(krw[j] - math.sqrt(s) * (1 - (1 - s ** (1 / lam)) ** lam) ** 2) < 2e-6


def deck_text(case, d):
    uc.write_deck(case, d)
    return open(os.path.join(d, "CASE.DATA")).read()


def test_deck_keywords():
    c = uc.sample_case(1, 4)
    d = tmpdir("deck_kw")
    text = deck_text(c, d)
    for kw in ("RADIAL", "DIMENS\n 48 1 24 /", "OIL\n", "GAS\n", "DISGAS", "CO2STORE", "METRIC",
               "INRAD", "DRV.INC", "DTHETAV\n 10 /", "DZV.INC", "TOPS", "ACTNUM.INC", "PERMX.INC",
               "PERMZ.INC", "PORO.INC", "MULTX.INC", "SGOF.INC", "RTEMP", "EQUIL", "RSVD",
               "ROCK", "WELSPECS", "COMPDAT", "WCONINJE", "TSTEP", "RPTRST\n 'BASIC=2' /",
               "UNIFOUT", "FGIT", "WBHP"):
        assert kw in text, kw
    inc = os.path.join(d, "include")
    for f, kw in (("DRV.INC", "DRV"), ("DZV.INC", "DZV"), ("ACTNUM.INC", "ACTNUM"),
                  ("PERMX.INC", "PERMX"), ("PERMZ.INC", "PERMZ"), ("PORO.INC", "PORO"),
                  ("MULTX.INC", "MULTX"), ("SGOF.INC", "SGOF")):
        assert ("\n%s\n" % kw) in open(os.path.join(inc, f)).read(), f
    # TSTEP adds up to the report times.
    block = text.split("TSTEP\n")[1].split("/")[0]
    steps = np.array([float(v) for v in block.split()])
    assert len(steps) == uc.NT and np.allclose(np.cumsum(steps), c["TIMES"], rtol=1e-9)
    # Rate of the wedge and BHP limit below the CO2 tables' 1000 bar.
    line = [ln for ln in text.splitlines() if ln.startswith(" 'INJ' 'GAS' 'OPEN' 'RATE'")][0]
    q = float(line.split()[4])
    expect = c["INJ_RATE"] * 1e9 / 365.25 / uc.CO2_SURFACE_DENSITY * 10 / 360
    assert abs(q / expect - 1) < 1e-7 and float(line.split()[6]) < 1000
    # One COMPDAT line per perforated layer with the explicit connection factor.
    comp = [ln.split() for ln in text.split("COMPDAT\n")[1].split("\n/")[0].splitlines()]
    layers = [int(x[3]) for x in comp]
    assert layers == [k + 1 for k in np.flatnonzero(c["PERF"])]
    cf = uc.connection_factors(c)
    for x in comp:
        k = int(x[3]) - 1
        expect = 0.008527 * math.radians(10) * c["PERMX"][k, 0] * c["DZ"][k] / math.log(
            uc.node_radii()[0] / 0.1)
        assert abs(float(x[7]) / expect - 1) < 1e-7 and abs(float(x[7]) / cf[k] - 1) < 1e-7
    # Machine-readable header.
    assert "-- UFNO VG_LAMBDA %.10g" % c["VG_LAMBDA"] in text
    assert "RTEMP\n %.6f /" % c["TEMP"] in text


def test_deck_parses():
    try:
        from opm.io.ecl_state import EclipseState
        from opm.io.parser import Parser
    except ImportError:
        pytest.skip("python3-opm-common not installed")
    c = uc.sample_case(1, 6)
    d = tmpdir("deck_parse")
    uc.write_deck(c, d)
    st = EclipseState(Parser().parse(os.path.join(d, "CASE.DATA")))
    g = st.grid()
    n = c["meta"]["n_active"]
    assert (g.nx, g.ny, g.nz, g.nactive) == (uc.NY, 1, uc.NX, n * uc.NY)
    fp = st.field_props()
    kx = np.asarray(fp.get_double_array("PERMX")) / 9.869232667160128e-16
    assert np.allclose(kx, c["PERMX"][:n].reshape(-1), rtol=1e-7)
    phi = np.asarray(fp.get_double_array("PORO"))
    assert np.allclose(phi, c["PORO"][:n].reshape(-1), rtol=1e-7)
    a, b = uc.radial_edges()
    vol = np.array([g.getCellVolume(i) for i in range(uc.NY)])
    assert np.allclose(vol, math.radians(10) / 2 * (b ** 2 - a ** 2) * uc.DZ, rtol=1e-8)
    assert abs(g.getCellDepth(0) - (c["meta"]["top_depth_m"] + uc.DZ / 2)) < 1e-6


def test_exact_tranx():
    """Homogeneous k: the exact transmissibility reduces to theta k dz / ln(rn_{j+1}/rn_j)."""
    c = uc.sample_case(1, 0)
    n = c["meta"]["n_active"]
    c["PERMX"][:n] = 100.0
    t = uc.exact_tranx(c)
    rn = uc.node_radii()
    expect = 0.008527 * math.radians(10) * 100 * uc.DZ / np.log(rn[1:] / rn[:-1])
    assert np.allclose(t[0, :-1], expect, rtol=1e-12)
    assert np.all(t[:, -1] == 0) and np.all(t[n:] == 0)


def check_encoding_formulas(case, x):
    X, Y, T = uc.NX, uc.NY, uc.NT
    assert x.shape == (X, Y, T, 12) and x.dtype == np.float32
    act = case["PERMX"] > 0
    with np.errstate(divide="ignore"):
        ch0 = np.where(act, np.log(case["PERMX"]) / 15.0, 0.0)
    assert np.allclose(x[..., 0], ch0[:, :, None], atol=1e-7, rtol=0)
    assert np.all(x[~act][..., 0] == 0) and np.all(x[act][..., 0] > 0.04)
    assert np.all(x[~act][..., 1] == 0) and np.all(x[~act][..., 2] == 0)
    assert np.allclose(x[..., 2], np.where(act, case["PORO"], 0)[:, :, None], atol=1e-7)
    perf = case["PERF"] == 1
    assert np.all(x[perf, 0, :, 3] == 1) and np.all(x[~perf, 0, :, 3] == 0)
    assert np.all(x[:, 1:, :, 3] == 0)
    q = case["INJ_RATE"] * 1e6 / 365 * 1000 / 1.862
    expect = [(q - 3e5) / 2.7e6, (case["TEMP"] - 30) / 150, (case["PRESSURE"] - 100) / 200,
              (case["SWI"] - 0.1) / 0.2, (case["VG_LAMBDA"] - 0.3) / 0.4]
    for k, e in enumerate(expect):
        assert np.all(x[..., 4 + k] == np.float32(e)), k
    assert abs(ue.decoded_rate(ue.encoded_rate(case["INJ_RATE"])) - case["INJ_RATE"]) < 1e-12
    r = np.cumsum(case["DR"])
    assert np.allclose(x[0, :, 0, 9], (r - r[0]) / (r[-1] - r[0]), atol=1e-7)
    assert x[0, 0, 0, 9] == 0 and x[0, -1, 0, 9] == 1 and np.all(np.diff(x[0, :, 0, 9]) > 0)
    assert np.allclose(x[:, 0, 0, 10], np.arange(X) / (X - 1), atol=1e-7)
    assert x[-1, 0, 0, 10] == 1
    t = case["TIMES"]
    assert np.allclose(x[0, 0, :, 11], t / t[-1], atol=1e-7) and x[0, 0, -1, 11] == 1
    # Everything but channel 11 is the same at every time.
    assert np.all(x[..., :11] == x[:, :, :1, :11])


def test_encoding_formulas():
    for i in (0, 1, 9):
        c = uc.sample_case(1, i)
        check_encoding_formulas(c, ue.encode_case(c))
    # Without TIMES: the paper's times.
    c = uc.sample_case(1, 0)
    del c["TIMES"]
    x = ue.encode_case(c, 24)
    t = ue.paper_times_days(24)
    assert np.all(x[0, 0, :, 11] == (t / t[-1]).astype(np.float32))


def test_encoding_matches_cpp():
    """The Python encoding through the C++ predictor gives bit-identical outputs to the C++
    encoding of the same case file (models of tests/data: grid 16 x 24 x 8). If only the
    float32-reader variant matches, the build and io/CaseFile.cpp disagree: a failure."""
    models = [os.path.join(REPO, "tests", "data", m) for m in ("fno_small.h5", "ufno_small.h5")]
    if not (os.access(PREDICT, os.X_OK) and all(os.path.exists(m) for m in models)):
        pytest.skip("no build/apps/ufno_predict or tests/data models")
    d = tmpdir("cpp")
    for i in range(2):
        c = uc.sample_case(1, i + 20)
        for k in ("PERMX", "PERMZ", "PORO"):
            c[k] = c[k][:16, :24].copy()
        c["DR"], c["DZ"], c["PERF"] = c["DR"][:24], c["DZ"][:16], c["PERF"][:16].copy()
        c["TIMES"] = c["TIMES"][:8]
        c["PERMX"][13:] = c["PERMZ"][13:] = c["PORO"][13:] = 0
        c["PERF"][:] = 0
        c["PERF"][3:7] = 1
        cp = os.path.join(d, "case%d.h5" % i)
        uc.write_case_h5(cp, c)
        tensors = {}
        for mode in (False, True):
            tensors[mode] = os.path.join(d, "tensor%d_%d.h5" % (i, mode))
            with h5py.File(tensors[mode], "w") as f:
                f.create_dataset("input", data=ue.encode_case(uc.read_case_h5(cp),
                                                              arrays_as_float32=mode)[None])
        for m in models:
            def predict(flag, src, tag):
                o = os.path.join(d, "out_%d_%s_%s.h5" % (i, os.path.basename(m), tag))
                r = subprocess.run([PREDICT, "--model", m, flag, src, "--out", o,
                                    "--threads", "1"], capture_output=True, text=True)
                assert r.returncode == 0, r.stderr
                with h5py.File(o, "r") as f:
                    return {k: f[k][()] for k in f if k != "TIMES" and isinstance(f[k], h5py.Dataset)}
            ref = predict("--case", cp, "case")
            def same(mode):
                out = predict("--tensor", tensors[mode], "tensor%d" % mode)
                return all(np.array_equal(ref[k], out[k]) for k in ref)
            if not same(ue.ARRAYS_AS_FLOAT32):
                # A mismatch is a failure, whichever reader variant the build has.
                raise AssertionError("C++ and Python encodings differ (case %d, %s; the other "
                                     "reader variant %s)" % (i, m, "matches" if same(
                                         not ue.ARRAYS_AS_FLOAT32) else "differs too"))


def fake_target(case, d, index, seed=1):
    """A target.h5 with synthetic fields (no flow), through the batch's own writer."""
    rng = np.random.default_rng(index)
    sg = rng.uniform(0, 1, (uc.NT, uc.NX, uc.NY)) * (case["PERMX"] > 0)
    dp = rng.uniform(0, 5, (uc.NT, uc.NX, uc.NY)) * (case["PERMX"] > 0)
    summary = {"FGIT": np.arange(uc.NT, dtype=float), "WBHP:INJ": np.full(uc.NT, 200.0)}
    info = {"case_id": uc.case_id(seed, index), "seed": seed, "index": index}
    rfb.write_target(os.path.join(d, "target.h5"), case, sg, dp, np.zeros((uc.NX, uc.NY)),
                     summary, info)
    return sg, dp


def test_assemble_shapes():
    data = tmpdir("assemble_data")
    fields = {}
    for i in (0, 1, 3):
        c = uc.sample_case(1, i)
        d = rfb.case_dir(data, i)
        os.makedirs(d)
        uc.write_case_h5(os.path.join(d, "case.h5"), c)
        fields[i] = fake_target(c, d, i)
    # A failed case: logged, no target; and an incomplete one (temporary file only).
    os.makedirs(rfb.case_dir(data, 2))
    rfb.append_csv(os.path.join(data, "failures.csv"), rfb.FAIL_FIELDS,
                   {"case_id": "s1_i000002", "seed": 1, "index": 2, "reason": "timeout"})
    open(os.path.join(rfb.case_dir(data, 3), "target.h5.tmp.1"), "w").close()
    out = os.path.join(TMP, "train.h5")
    assert rfb.main(["--data", data, "--assemble", out]) == 0
    with h5py.File(out, "r") as f:
        assert f["input"].shape == (3, uc.NX, uc.NY, uc.NT, 12)
        assert f["SG"].shape == f["dP"].shape == (3, uc.NX, uc.NY, uc.NT)
        assert f["input"].dtype == f["SG"].dtype == f["dP"].dtype == np.float32
        ids = [s.decode() for s in f["case_ids"][()]]
        assert ids == ["s1_i000000", "s1_i000001", "s1_i000003"]
        assert list(f["index"][()]) == [0, 1, 3] and list(f["seed"][()]) == [1, 1, 1]
        assert [s.decode() for s in f["excluded"][()]] == ["s1_i000002: timeout"]
        assert f["dP"].attrs["units"].decode() == "bar"
        for n, i in enumerate((0, 1, 3)):
            sg, dp = fields[i]
            assert np.array_equal(f["SG"][n], np.transpose(sg, (1, 2, 0)).astype(np.float32))
            assert np.array_equal(f["dP"][n], np.transpose(dp, (1, 2, 0)).astype(np.float32))
            c = uc.read_case_h5(os.path.join(rfb.case_dir(data, i), "case.h5"))
            assert np.array_equal(f["input"][n], ue.encode_case(c))
    assert not os.path.exists(out + ".tmp.%d" % os.getpid())


def test_resume_without_flow():
    """Finished cases and cases that failed before are skipped without running anything."""
    data = tmpdir("resume")
    c = uc.sample_case(1, 0)
    d = rfb.case_dir(data, 0)
    os.makedirs(d)
    uc.write_case_h5(os.path.join(d, "case.h5"), c)
    fake_target(c, d, 0)
    assert rfb.target_complete(os.path.join(d, "target.h5"))
    bad = os.path.join(TMP, "bad_target.h5")
    open(bad, "wb").write(b"not hdf5")
    assert not rfb.target_complete(bad) and not rfb.target_complete(bad + ".missing")
    rfb.append_csv(os.path.join(data, "failures.csv"), rfb.FAIL_FIELDS,
                   {"case_id": "s1_i000001", "seed": 1, "index": 1, "reason": "flow_exit_1"})
    nowhere = os.path.join(TMP, "no_such_flow")
    rc = rfb.main(["--seed", "1", "--start", "0", "--end", "2", "--data", data,
                   "--flow", nowhere])
    assert rc == 0
    rows = rfb.read_csv(os.path.join(data, "runs.csv"))
    assert rows == [], rows     # nothing was attempted


def test_near_version2():
    """python/ufno/data/near_cases.py: the shipped examples (drawn by sampler version 2) are near version 2;
    breaking any required rule, or three of the five ranges, moves a draw out."""
    import glob
    from ufno.data import near_cases as nc
    examples = sorted(glob.glob(os.path.join(REPO, "examples", "opm", "*", "case.h5")))
    assert examples
    for path in examples:
        with h5py.File(path, "r") as f:
            meta = {k[len("sample_"):]: (v.decode() if isinstance(v, bytes) else v)
                    for k, v in f.attrs.items() if k.startswith("sample_")}
            perf = f["PERF"][()]
        meta["anisotropy_varies"] = 0     # version 2 had one kz/kr per case
        assert nc.near_version2(meta, perf), path
        for key, bad in (("structure", "homogeneous"), ("anisotropy_varies", 1),
                         ("kgeo_mD", 5.0)):
            assert not nc.near_version2(dict(meta, **{key: bad}), perf), (path, key)
        two = np.zeros_like(perf)
        two[0] = two[2] = 1
        assert not nc.near_version2(meta, two), path
        off = dict(meta, sigma_lnk=1.8, anisotropy=0.001, poro_mean=0.3)
        assert not nc.near_version2(off, perf), path
    assert nc.parse_case_id("s2_i000123") == (2, 123)
    # Hostile input: no split file, a file that is not a split, --others beyond the cases.
    notsplit = os.path.join(TMP, "notsplit.json")
    with open(notsplit, "w") as f:
        f.write("[1, 2")
    split = os.path.join(TMP, "split.json")
    with open(split, "w") as f:
        f.write('{"train": ["s2_i000001", "s2_i000002"]}')
    for args, says in (([os.path.join(TMP, "none.json")], "not a split.json"),
                       ([notsplit], "not a split.json"),
                       ([split, "--others", "5"], "--others must be in 0..")):
        r = subprocess.run([sys.executable, "-m", "ufno.near_cases", "--split"] + args,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert r.stdout == "", r.stdout


def test_sanity_checks_synthetic():
    c = uc.sample_case(1, 5)
    n = c["meta"]["n_active"]
    sg = np.zeros((uc.NT, uc.NX, uc.NY))
    dp = np.zeros((uc.NT, uc.NX, uc.NY))
    for t in range(uc.NT):
        sg[t, :n, :t + 1] = 0.5            # growing plume, uniform in depth
        dp[t, :n] = np.linspace(10, 0, uc.NY)[None, :]
    r = rfb.sanity_checks(c, sg, dp)
    assert r["plume_grows"] and r["co2_rises"] and r["dp_max_near_well_early"]
    assert r["plume_extent_cells"] == list(range(1, uc.NT + 1))
    sg[5] = 0                                # plume vanishes once: not growing
    assert not rfb.sanity_checks(c, sg, dp)["plume_grows"]
    # Pressure: smooth growth passes, an isolated dip that recovers is a glitch.
    ramp = np.linspace(1, 30, uc.NT)[:, None, None] * (c["PERMX"] > 0)
    spike, tol = rfb.pressure_spike(c, ramp)
    assert spike <= 0 and tol == 1.5
    ramp[7] -= 5 * (c["PERMX"] > 0)
    spike, tol = rfb.pressure_spike(c, ramp)
    assert abs(spike - (5 - 29 / 23)) < 1e-9 and spike > tol


def test_flow_dry_run_multx():
    if not FLOW:
        pytest.skip("flow not available")
    d = tmpdir("gen")
    uc.generate(1, 1, os.path.join(d, "a"), flow=FLOW)
    uc.generate(1, 1, os.path.join(d, "b"), flow=FLOW)
    same_tree(os.path.join(d, "a"), os.path.join(d, "b"))
    lines = open(os.path.join(d, "a", "deck", "include", "MULTX.INC")).read().splitlines()
    words = " ".join(ln for ln in lines if not ln.startswith("--")).split()
    assert words[0] == "MULTX" and words[-1] == "/"
    vals = np.array([float(v) for v in words[1:-1]]).reshape(uc.NX, uc.NY)
    n = uc.sample_case(1, 1)["meta"]["n_active"]
    assert np.all(np.abs(vals[:n, :-1] - 1) < 0.25), "MULTX far from 1"
    assert np.all(vals[n:] == 1) and np.all(vals[:, -1] == 1)


def test_flow_one_case():
    if not FLOW:
        pytest.skip("flow not available")
    data = tmpdir("flowrun")
    rc = rfb.main(["--seed", "1", "--start", "11", "--end", "12", "--data", data,
                   "--flow", FLOW, "--jobs", "1"])
    assert rc == 0
    t = os.path.join(rfb.case_dir(data, 11), "target.h5")
    assert rfb.target_complete(t)
    c = uc.read_case_h5(os.path.join(rfb.case_dir(data, 11), "case.h5"))
    with h5py.File(t, "r") as f:
        sg, dp = f["SG"][()], f["dP"][()]
        assert sg.shape == dp.shape == (uc.NT, uc.NX, uc.NY) and sg.dtype == np.float32
        assert f.attrs["fgit_rel_err"] < rfb.RATE_TOLERANCE
        assert f.attrs["plume_grows"] and f.attrs["dp_max_near_well_early"]
        assert f.attrs["flow_flags"].decode() == " ".join(rfb.FLOW_FLAGS)
        assert f.attrs["pressure_spike_bar"] <= 1.0
    act = c["PERMX"] > 0
    assert np.all(sg[:, ~act] == 0) and np.all(dp[:, ~act] == 0)
    assert 0 <= sg.min() and sg.max() < 1 and dp[0, :, 0].max() > 0
    # Rerun: skipped, nothing new in runs.csv.
    before = len(rfb.read_csv(os.path.join(data, "runs.csv")))
    assert rfb.main(["--seed", "1", "--start", "11", "--end", "12", "--data", data,
                     "--flow", FLOW]) == 0
    assert len(rfb.read_csv(os.path.join(data, "runs.csv"))) == before

