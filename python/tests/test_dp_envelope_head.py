#!/usr/bin/python3
"""python/ufno/heads/dp_envelope.py on a tiny synthetic data set: the envelope (largest dP over report
times and formation layers per radial column), the network digest (heads in groups leave it
alone), a training run that writes the head into a copy of a dP model file with the digest of
that model's network, and refusals of bad input (one line, exit non-zero, no output file)."""
import os
import shutil
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from cli_checks import CliChecks
from heads_support import check_envelope_group, encoded, train, write_data
from ufno.heads import dp_envelope as dp_envelope_head
from ufno.heads import common as kpi_head

SCRIPT = "ufno.dp_envelope_head"
CLI = CliChecks(SCRIPT)
check, run, refused = CLI.check, CLI.run, CLI.refused


def test_dp_envelope_head():
    dp = np.zeros((1, 2, 3, 2))
    dp[0, 0, :, 0] = [5, 1, 0.5]
    dp[0, 1, :, 1] = [7, 9, 0.2]   # layer 1 peaks later and further out
    active = np.array([[[True, True, True], [True, True, False]]])
    env = kpi_head.field_envelope(dp, active)
    check("the envelope is the largest dP over times and formation layers per column",
          list(env[0]) == [7, 9, 0.5], env)
    check("its log features are floored", np.allclose(
        kpi_head.envelope_features(np.array([[2.0, 0.0, -1.0]]), (0, 1, 2)),
        np.log([[2.0, 0.01, 0.01]])))
    work = tempfile.mkdtemp(prefix="ufno_env_head_")
    try:
        model = os.path.join(ROOT, "tests", "data", "ufno_small.h5")  # a dP model file
        grouped = os.path.join(work, "grouped.h5")
        shutil.copy(model, grouped)
        with h5py.File(grouped, "r+") as f:
            f["some_head/x"] = np.ones(3)
        check("the network digest ignores groups and changes with a weight",
              kpi_head.network_digest(grouped) == kpi_head.network_digest(model))
        with h5py.File(grouped, "r+") as f:
            k = sorted(k for k in f if isinstance(f[k], h5py.Dataset))[0]
            a = f[k][()]
            a.flat[0] += 1e-3
            f[k][...] = a
        check("... and changes with a weight",
              kpi_head.network_digest(grouped) != kpi_head.network_digest(model))
        rng = np.random.default_rng(3)
        n, X, Y, T = 24, 8, 48, 8
        x = encoded(rng, n, X, Y, T)
        rate = x[:, 0, 0, 0, 4].astype(np.float64)
        r = np.arange(Y)
        dps = (5 + 20 * rate[:, None, None, None]) * np.exp(-r / 10.0)[None, None, :, None] * \
            np.ones((n, X, Y, T))
        data = write_data(os.path.join(work, "data.h5"), x, dP=dps.astype(np.float32))
        out = os.path.join(work, "dp_head.h5")
        train(CLI, ["--data", data, "--model", model, "--members", "2", "--hidden", "8",
                    "--epochs", "400"], out)
        if os.path.exists(out):
            check_envelope_group(out, "dp_envelope_head", model, dp_envelope_head.COLUMNS, Y, 8)
        # --physics --gravity-envelope: the r-z solve's envelope, then the buoyancy-aware
        # solve's, at the head's columns, named so (the programs compute what the names say).
        from ufno.heads import physics
        grav = os.path.join(work, "dp_gravity_head.h5")
        train(CLI, ["--data", data, "--model", model, "--members", "1", "--hidden", "4",
                    "--epochs", "50", "--limit", "6", "--physics", "--gravity-envelope"], grav)
        if os.path.exists(grav):
            with h5py.File(grav, "r") as f:
                names = f["dp_envelope_head"].attrs["features"]
            names = (names.decode() if isinstance(names, bytes) else names).split(",")
            check("--gravity-envelope: the head's last inputs are the buoyancy-aware columns",
                  names[-len(dp_envelope_head.COLUMNS):] ==
                  physics.gravity_envelope_feature_names(dp_envelope_head.COLUMNS) and
                  names == dp_envelope_head.physics_input_names(gravity=True), names[-3:])
            check("... which calibration reads from the names",
                  dp_envelope_head.gravity_option(grav) == "pore_volume" and
                  not dp_envelope_head.gravity_option(model))
            f6, _, _ = dp_envelope_head.load_physics_data(data, limit=2, gravity=True)
            cs = [physics.decode(v) for v in x[:2, :, :, 0, :]]
            g = physics.gravity_envelope_bar(cs)[:, list(dp_envelope_head.COLUMNS)]
            check("... their values log(max(envelope, 0.01)) of the solve's envelope",
                  np.allclose(f6[:, -len(dp_envelope_head.COLUMNS):],
                              np.log(np.maximum(g, 0.01))))
        # --gravity-envelope brine --baseline: the brine-dissolution solve's envelope under its
        # own names, and the head estimates Flow's envelope over it at every column.
        based = os.path.join(work, "dp_baseline_head.h5")
        train(CLI, ["--data", data, "--model", model, "--members", "1", "--hidden", "4",
                    "--epochs", "50", "--limit", "6", "--physics", "--gravity-envelope", "brine",
                    "--baseline"], based)
        if os.path.exists(based):
            with h5py.File(based, "r") as f:
                attrs = dict(f["dp_envelope_head"].attrs)
            names = attrs["features"]
            names = (names.decode() if isinstance(names, bytes) else names).split(",")
            check("--gravity-envelope brine: the head's last inputs are the brine solve's columns",
                  names[-len(dp_envelope_head.COLUMNS):] ==
                  physics.gravity_envelope_feature_names(dp_envelope_head.COLUMNS, "brine") and
                  names[-1].startswith("log_rz_gravity_brine_envelope_r"), names[-3:])
            check("... which calibration reads from the names",
                  dp_envelope_head.gravity_option(based) == "brine")
            check("--baseline: the head says what it multiplies",
                  attrs.get("envelope_baseline") in ("gravity_envelope", b"gravity_envelope")
                  and dp_envelope_head.baseline_option(based)
                  and not dp_envelope_head.baseline_option(grav), attrs.get("target"))
            fb, ratio, _ = dp_envelope_head.load_physics_data(data, limit=2, gravity="brine",
                                                             baseline=True)
            gb = physics.gravity_envelope_bar([physics.decode(v) for v in x[:2, :, :, 0, :]],
                                              dissolution="brine")
            check("... its inputs log(max(envelope, 0.01)) of the brine solve's envelope",
                  np.allclose(fb[:, -len(dp_envelope_head.COLUMNS):],
                              np.log(np.maximum(gb[:, list(dp_envelope_head.COLUMNS)], 0.01))))
            env = np.stack([kpi_head.field_envelope(dps[i:i + 1].astype(np.float32),
                                                    x[i:i + 1, :, :, 0, 0] != 0)[0]
                            for i in range(2)])
            check("... its targets Flow's envelope over the brine solve's",
                  np.allclose(ratio * np.maximum(gb, 0.01), np.maximum(env, 0.01)), ratio[:, :3])
            # f6 holds the pore-volume solve's log envelope, its last column the outermost.
            check("... which dissolves less CO2: its far field above the pore-volume model's",
                  np.all(gb[:, -1] > np.exp(f6[:, -1])), (gb[:, -1], np.exp(f6[:, -1])))
        sg_model = os.path.join(ROOT, "tests", "data", "fno_small.h5")  # variable SG
        bad = os.path.join(work, "bad.h5")
        refused("--gravity-envelope without --physics",
                ["--data", data, "--model", model, "--out", bad, "--gravity-envelope"], bad,
                "only with --physics")
        refused("--baseline without --gravity-envelope",
                ["--data", data, "--model", model, "--out", bad, "--physics", "--baseline"], bad,
                "only with --physics --gravity-envelope")
        refused("--gravity-envelope with an unknown dissolution model",
                ["--data", data, "--model", model, "--out", bad, "--physics",
                 "--gravity-envelope", "salt"], bad, "no dissolution model")
        refused("an SG model file", ["--data", data, "--model", sg_model, "--out", bad], bad,
                "variable")
        narrow = write_data(os.path.join(work, "narrow.h5"), x[:, :, :16],
                            dP=dps[:, :, :16].astype(np.float32))
        refused("a data set with fewer radial cells than the columns read",
                ["--data", narrow, "--model", model, "--out", bad], bad, "radial cells")
        odd = write_data(os.path.join(work, "odd.h5"), x[:, :, :, :3],
                         dP=dps[:, :, :, :3].astype(np.float32))
        refused("a grid the network cannot run on", ["--data", odd, "--model", model,
                                                     "--out", bad], bad, "cannot run")
        open(os.path.join(work, "text.h5"), "w").write("not hdf5")
        refused("a data file that is not HDF5", ["--data", os.path.join(work, "text.h5"),
                                                 "--model", model, "--out", bad], bad, "text.h5")
    finally:
        shutil.rmtree(work, ignore_errors=True)

