#!/usr/bin/python3
"""python/ufno/heads/max_dp.py on a tiny synthetic data set: the features against direct sums, a
training run that writes the head into a copy of a dP model file (the model's own arrays
unchanged, the head read back predicting as trained), the same with --network-envelope (the
head reads the network's envelope and stores its digest), and refusals of bad input (one line, exit
non-zero, no output file)."""
import os
import shutil
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from cli_checks import CliChecks
import heads_support
from heads_support import DP_MODEL, check_model_kept, write_data
from ufno.heads import max_dp as max_dp_head

SCRIPT = "ufno.max_dp_head"
CLI = CliChecks(SCRIPT)
check, run, refused = CLI.check, CLI.run, CLI.refused


def encoded(rng, n, X=4, Y=16):
    """Encoded inputs at the first time (heads_support.encoded), the bottom layer inactive
    beyond radial cell 8."""
    x = heads_support.encoded(rng, n, X, Y)
    x[:, -1, 8:, :3] = 0
    return x


def network_envelope_run(rng, work, model):
    """--network-envelope: the head reads the dP network's envelope at the envelope head's
    columns and stores the network's digest."""
    from ufno.heads import dp_envelope as dp_envelope_head
    from ufno.heads import common as kpi_head
    n, X, Y, T = 24, 8, 48, 8
    xs = encoded(rng, n, X, Y)
    dp = np.zeros((n, X, Y, T), np.float32)
    dp[:, 0, 0, 0] = np.exp(5.0 - 0.5 * max_dp_head.features(xs)[:, 5])
    data = write_data(os.path.join(work, "data48.h5"), np.repeat(xs[:, :, :, None, :], T, axis=3),
                      dP=dp)
    out = os.path.join(work, "dp_env_head.h5")
    heads_support.train(CLI, ["--data", data, "--model", model, "--network-envelope",
                              "--members", "2", "--hidden", "8", "--epochs", "600"], out,
                        "--network-envelope writes the model file with its head")
    if not os.path.exists(out):
        return
    with h5py.File(out) as b:
        g = b["max_dp_head"]
        check("such a head names its inputs, columns and floor and the network's digest",
              g.attrs["features"] == ",".join(dp_envelope_head.input_names()) and
              list(g.attrs["envelope_columns"]) == list(dp_envelope_head.COLUMNS) and
              g.attrs["envelope_floor_bar"] == kpi_head.ENVELOPE_FLOOR_BAR and
              g.attrs["network_digest"] == kpi_head.network_digest(model))
    inputs, _, _ = dp_envelope_head.load_data(data, model)
    est = max_dp_head.read_head(out).predict(inputs)
    true = dp.reshape(n, -1).max(1)
    err = float(np.median(np.abs(est - true) / true))
    check("the head read back fits the synthetic peaks (median error %.3f < 0.1)" % err,
          est.shape == (n,) and err < 0.1)
    bad = os.path.join(work, "bad48.h5")
    refused("--network-envelope with an SG model file",
            ["--data", data, "--model", os.path.join(ROOT, "tests", "data", "fno_small.h5"),
             "--out", bad, "--network-envelope"], bad, "variable")


def test_max_dp_head():
    rng = np.random.default_rng(0)
    x = encoded(rng, 1)
    f = max_dp_head.features(x)[0]
    kx = np.where(x[0, ..., 0] != 0, np.exp(15.0 * x[0, ..., 0].astype(np.float64)), 0)
    check("feature count and names agree", len(f) == len(max_dp_head.FEATURES) == 32)
    check("log kh of the perforated layers at the well",
          abs(f[5] - np.log(kx[0, 0] + kx[1, 0] + 1e-3)) < 1e-12)
    check("log kh of all active layers at radial cell 12 (bottom layer inactive there)",
          abs(f[18] - np.log(kx[:3, 12].sum() + 1e-3)) < 1e-12)
    check("counts and depths", f[20] == 2 and f[21] == 4 and f[23] == 0.5 and f[24] == 1.5)
    try:
        max_dp_head.features(encoded(rng, 1, Y=10))
        check("too few radial cells are refused", False)
    except ValueError:
        check("too few radial cells are refused", True)

    work = tempfile.mkdtemp(prefix="ufno_max_dp_head_")
    try:
        n, X, Y, T = 40, 4, 16, 2
        xs = encoded(rng, n)
        kh = max_dp_head.features(xs)[:, 5]
        dp = np.zeros((n, X, Y, T), np.float32)
        dp[:, 0, 0, 0] = np.exp(5.0 - 0.5 * kh)  # the peak falls as kh grows
        data = write_data(os.path.join(work, "data.h5"),
                          np.repeat(xs[:, :, :, None, :], T, axis=3), dP=dp)
        model = DP_MODEL
        out = os.path.join(work, "dp_head.h5")
        heads_support.train(CLI, ["--data", data, "--model", model, "--members", "2",
                                  "--hidden", "8", "--epochs", "600"], out)
        if os.path.exists(out):
            check_model_kept(model, out)
            with h5py.File(out) as b:
                g = b["max_dp_head"]
                check("head attributes: 2 members, the data's grid, the feature names",
                      int(g.attrs["members"]) == 2 and list(g.attrs["grid"]) == [X, Y] and
                      g.attrs["features"] == ",".join(max_dp_head.FEATURES))
            head = max_dp_head.read_head(out)
            est = head.predict(max_dp_head.features(xs))
            true = dp.reshape(n, -1).max(1)
            err = float(np.median(np.abs(est - true) / true))
            check("the head read back fits the synthetic peaks (median error %.3f < 0.1)" % err,
                  err < 0.1)
            far = max_dp_head.features(xs[:1]).copy()
            far[0, 0] = head.f_max[0] + 0.2 * (head.f_max[0] - head.f_min[0])
            train = np.array([max_dp_head.split_of(1, k) == "train" for k in range(n)])
            check("training cases are inside the head's ranges; one far beyond them is not",
                  head.inside(max_dp_head.features(xs[train])).all() and not head.inside(far)[0])
        sg_model = os.path.join(ROOT, "tests", "data", "fno_small.h5")  # variable SG
        bad = os.path.join(work, "bad.h5")
        refused("an SG model file", ["--data", data, "--model", sg_model, "--out", bad,
                                     "--epochs", "5"], bad, "variable")
        refused("a missing data file", ["--data", os.path.join(work, "nope.h5"), "--model", model,
                                        "--out", bad], bad, "nope.h5")
        # The settings every head refuses alike: test_heads.py.
        write_data(os.path.join(work, "zero.h5"), np.repeat(xs[:, :, :, None, :], T, axis=3),
                   dP=np.zeros((n, X, Y, T), np.float32))
        refused("a data set whose peaks are not positive",
                ["--data", os.path.join(work, "zero.h5"), "--model", model, "--out", bad,
                 "--epochs", "5"], bad, "positive")
        refused("--network-envelope on a grid narrower than the envelope's columns",
                ["--data", data, "--model", model, "--out", bad, "--network-envelope"], bad,
                "radial cells")
        refused("--physics with --network-envelope",
                ["--data", data, "--model", model, "--out", bad, "--physics",
                 "--network-envelope"], bad, "exclude each other")
        refused("--implicit without --physics",
                ["--data", data, "--model", model, "--out", bad, "--implicit"], bad,
                "--implicit goes with --physics")
        refused("--implicit first-report without --physics",
                ["--data", data, "--model", model, "--out", bad, "--implicit", "first-report"],
                bad, "--implicit goes with --physics")
        refused("--implicit with an unknown estimate",
                ["--data", data, "--model", model, "--out", bad, "--physics", "--implicit",
                 "last"], bad, "--implicit")
        network_envelope_run(rng, work, model)
        open(os.path.join(work, "text.h5"), "w").write("not hdf5")
        refused("a data file that is not HDF5", ["--data", os.path.join(work, "text.h5"),
                                                 "--model", model, "--out", bad], bad, "text.h5")
        refused("a model file that is not HDF5", ["--data", data, "--model",
                                                  os.path.join(work, "text.h5"), "--out", bad,
                                                  "--epochs", "5"], bad, "text.h5")
    finally:
        shutil.rmtree(work)



def test_physics_heads_compute_what_their_names_say():
    """A physics head's feature names decide its inputs: the fixture's head with the three
    physics estimates, the one that also reads the implicit two-phase estimate and the one that
    reads its first-report value instead give their stored estimates on the shipped examples
    (tests/data/pressure_estimates.h5)."""
    import glob
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    from ufno.heads import peak_match
    fixture = os.path.join(ROOT, "tests", "data", "pressure_estimates.h5")
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "opm", "*", "case.h5")))
    x0 = np.stack([ufno_encoding.encode_case(ufno_cases.read_case_h5(p))[:, :, 0, :]
                   for p in paths])
    work = tempfile.mkdtemp()
    try:
        for group, expected in (("max_dp_head", "expected"),
                                ("max_dp_head_implicit", "expected_implicit"),
                                ("max_dp_head_first_report", "expected_first_report")):
            path = os.path.join(work, group + ".h5")
            with h5py.File(fixture, "r") as src, h5py.File(path, "w") as dst:
                src.copy(src[group], dst, max_dp_head.GROUP)
                want = src[expected + "/max_dp_bar"][()]
            est = max_dp_head.estimate(path, x0)
            check("%s: Theis x its output on the examples (%s)" % (group, est),
                  np.allclose(est, want, rtol=1e-5))
            # the field stage's twin reads the same inputs from the case files
            peaks = [peak_match.head_estimate(path, ufno_cases.read_case_h5(p), x0[i])
                     for i, p in enumerate(paths)]
            check("%s: the peak match's estimate is the head's (%s)" % (group, peaks),
                  np.allclose(peaks, want, rtol=1e-5))
            # ... and the same with the examples' r-z solves run together, as a pass runs them
            together = peak_match.head_estimates(
                path, [ufno_cases.read_case_h5(p) for p in paths], x0)
            check("%s: the estimates of the examples together are each one's (%s)"
                  % (group, together), np.allclose(together, want, rtol=1e-5))
    finally:
        shutil.rmtree(work)
