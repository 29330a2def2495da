#!/usr/bin/python3
"""python/ufno/heads/dp_field_scale.py on a tiny synthetic data set: the least-squares factors it is
fitted to (clipped, 1 where a column has no signal), a training run that writes the head into a
copy of a dP model file with the digest of that model's network, `corrected` (applied only with
a head fitted to the file's network, factors clipped, cases outside the ranges untouched), and
refusals of bad input (one line, exit non-zero, no output file)."""
import os
import shutil
import tempfile

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from cli_checks import CliChecks
from heads_support import check_envelope_group, encoded, train, write_data
from ufno.heads import dp_field_scale as dfs
from ufno.data import encoding as ufno_encoding
from ufno.conversion import model_file as ufno_model_file

SCRIPT = "ufno.dp_field_scale_head"
CLI = CliChecks(SCRIPT)
check, run, refused = CLI.check, CLI.run, CLI.refused


def factor_checks():
    true = np.ones((1, 2, 4, 3))
    pred = np.ones((1, 2, 4, 3))
    pred[..., 0, :] = 2.0      # twice Flow: factor 0.5
    pred[..., 1, :] = 0.1      # a tenth: 10, clipped to 4
    pred[..., 2, :] = 0.0      # no signal: 1
    true[..., 3, :] = 0.5
    pred[0, 1, 3, :] = 100.0   # an inactive layer does not count
    active = np.array([[[True] * 4, [True, True, True, False]]])
    s = dfs.best_factors(pred, true, active)
    check("least-squares factors per column, clipped to [0.25, 4], 1 without signal",
          np.allclose(s[0], [0.5, 4.0, 1.0, 0.5]), s)


def test_dp_field_scale_head():
    factor_checks()
    work = tempfile.mkdtemp(prefix="ufno_scale_head_")
    try:
        model = os.path.join(ROOT, "tests", "data", "ufno_small.h5")  # a dP model file
        rng = np.random.default_rng(5)
        n, X, Y, T = 24, 8, 48, 8
        x = encoded(rng, n, X, Y, T)
        net, attrs = ufno_model_file.read_model_file(model, dtype=torch.float32)
        pred = ufno_encoding.physical_output("dP", ufno_model_file.predict(net, attrs, x), x)
        # Flow's field: the network's times a factor that grows with the rate and the radius.
        k = 0.6 + 0.8 * x[:, 0, 0, 0, 4][:, None] * np.linspace(0, 1, Y)[None]
        dps = pred * k[:, None, :, None]
        data = write_data(os.path.join(work, "data.h5"), x, dP=dps.astype(np.float32))
        out = os.path.join(work, "dp_head.h5")
        train(CLI, ["--data", data, "--model", model, "--members", "2", "--hidden", "16",
                    "--epochs", "600"], out)
        assert os.path.exists(out)
        check_envelope_group(out, "dp_field_scale_head", model, dfs.COLUMNS, Y, 16)
        fixed = dfs.corrected(out, x, pred)
        err = lambda a: float(np.abs(a - dps).mean())  # noqa: E731
        check("the corrected field is closer to the target than the network's (%.4f < %.4f)"
              % (err(fixed), err(pred)), err(fixed) < 0.5 * err(pred))
        check("a model file without the head leaves the field as it is",
              np.array_equal(dfs.corrected(model, x, pred), pred))
        other = os.path.join(work, "other.h5")
        shutil.copy(out, other)
        with h5py.File(other, "r+") as f:
            name = sorted(k for k in f if isinstance(f[k], h5py.Dataset))[0]
            a = f[name][()]
            a.flat[0] += 1e-3
            f[name][...] = a
        check("a head fitted to another network is not applied",
              np.array_equal(dfs.corrected(other, x, pred), pred))
        head = dfs.read_head(out)
        s = dfs.factors(head, x[:, :, :, 0, :], pred)
        check("the factors lie in [0.25, 4]", s.min() >= 0.25 and s.max() <= 4.0, (s.min(), s.max()))
        far = x.copy()
        far[..., 4] = 50.0  # a rate far beyond the training cases'
        s = dfs.factors(head, far[:, :, :, 0, :], pred)
        check("a case outside the head's ranges keeps the network's field", np.all(s == 1.0))
        sg_model = os.path.join(ROOT, "tests", "data", "fno_small.h5")  # variable SG
        bad = os.path.join(work, "bad.h5")
        refused("an SG model file", ["--data", data, "--model", sg_model, "--out", bad], bad,
                "variable")
        narrow = write_data(os.path.join(work, "narrow.h5"), x[:, :, :16],
                            dP=dps[:, :, :16].astype(np.float32))
        refused("a data set with fewer radial cells than the columns read",
                ["--data", narrow, "--model", model, "--out", bad], bad, "radial cells")
        open(os.path.join(work, "text.h5"), "w").write("not hdf5")
        refused("a data file that is not HDF5", ["--data", os.path.join(work, "text.h5"),
                                                 "--model", model, "--out", bad], bad, "text.h5")
    finally:
        shutil.rmtree(work, ignore_errors=True)

