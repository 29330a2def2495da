#!/usr/bin/python3
"""python/ufno/heads/plume_radius.py: Flow's plume radius by the rule of screening/Kpis.cpp on hand-made
fields (the front interpolated between cell centres, gas not connected to the perforations left
out, the running maximum over time), a training run on a tiny synthetic data set that writes the
head into a copy of an SG model file (the model's own arrays unchanged, the head read back
predicting as trained, with its report times and threshold), the same with --field-radii (the
network's own radii as inputs, its digest stored) and with --physics (the buoyancy-aware r-z
solve's radii as inputs), and refusals of bad input (one
line, exit non-zero, no output file)."""
import os
import tempfile
import shutil

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from cli_checks import CliChecks
from heads_support import check_model_kept, encoded, train, write_data
from ufno.heads import common as kpi_head
from ufno.heads import plume_radius as plume_radius_head
from ufno.data import cases as ufno_cases

SCRIPT = "ufno.plume_radius_head"
CLI = CliChecks(SCRIPT)
check, run, refused = CLI.check, CLI.run, CLI.refused


def radius_rule():
    """Three layers x 6 radial cells of 10 m, two report times; layers 0 and 1 perforated."""
    dr = np.full(6, 10.0)
    active = np.ones((3, 6), bool)
    perf = np.array([True, True, False])
    sg = np.zeros((3, 6, 2))
    sg[0, :3, 0] = 0.5            # t0: gas in cells 0-2 of layer 0, none beyond
    sg[0, 3, 0] = 0.11            # the front: 0.11 -> next cell 0.0 crosses 0.01 at 100/110
    sg[2, 5, 0] = 0.3             # a speck far out, not connected: not plume
    sg[:, :, 1] = 0.0             # t1: the field dips (a network's would); the reach stays
    sg[1, 0, 1] = 0.5
    r = plume_radius_head.plume_radii(sg, active, perf, 0.2, dr)
    # Centres 5, 15, 25, 35, 45: the front between 35 and 45 where 0.11 -> 0 crosses 0.01.
    want0 = 35 + (0.11 - 0.01) / 0.11 * 10
    check("front interpolated between cell centres, the speck left out (%.3f m)" % r[0],
          abs(r[0] - want0) < 1e-9, r)
    check("the reach never recedes", r[1] == r[0], r)
    sg2 = np.zeros((3, 6, 1))
    sg2[2, :, 0] = 0.4  # gas in the unperforated layer only, touching the well: not connected
    check("gas not connected to a perforated cell is no plume",
          plume_radius_head.plume_radii(sg2, active, perf, 0.2, dr)[0] == 0.0)
    sg2[1, 0, 0] = 0.4  # now connected through the perforated layer above it
    check("gas reached through a perforated neighbour is plume, to the grid's edge",
          plume_radius_head.plume_radii(sg2, active, perf, 0.2, dr)[0] == 60.0)


def field_radii_run(rng, work, model):
    """--field-radii: the head reads the network's own radii and stores its digest."""
    import torch
    from ufno.conversion import model_file as ufno_model_file
    n, X, Y, T = 24, 8, len(ufno_cases.radial_widths()), 8
    x0 = encoded(rng, n, X, Y)
    x = np.repeat(x0[:, :, :, None, :], T, axis=3)
    sg = np.zeros((n, X, Y, T), np.float32)
    for i in range(n):
        for t in range(T):
            sg[i, :2, :int(8 + 10 * x0[i, 0, 0, 4] + 2 * t), t] = 0.4
    data = write_data(os.path.join(work, "data8.h5"), x, SG=sg, TIMES=np.arange(1.0, T + 1) * 100)
    out = os.path.join(work, "sg_field_head.h5")
    p = run(["--data", data, "--model", model, "--out", out, "--field-radii", "--members", "2",
             "--hidden", "8", "--epochs", "400"])
    check("--field-radii writes the model file with its head", p.returncode == 0 and
          os.path.exists(out), p.stderr[-500:])
    if not os.path.exists(out):
        return
    with h5py.File(out) as b:
        g = b["plume_radius_head"]
        names = g.attrs["features"].split(",")
        check("a field-radii head names its inputs, the floor and the network's digest",
              len(names) == 32 + T and names[-1] == "log_field_plume_radius_t%d" % (T - 1) and
              g.attrs["field_plume_radius_floor_m"] == 1.0 and
              g.attrs["network_digest"] == kpi_head.network_digest(model))
    net, attrs = ufno_model_file.read_model_file(model, dtype=torch.float32)
    field = plume_radius_head.network_radii(net, attrs, x)
    check("the network's radii are radii (finite, at least 1 m, never receding)",
          field.shape == (n, T) and np.all(field >= 1.0) and np.all(np.diff(field, axis=1) >= 0))
    est = plume_radius_head.read_head(out).predict(plume_radius_head.inputs(x0, field))
    true = np.stack([plume_radius_head.plume_radii(sg[i], x0[i, ..., 0] != 0, x0[i, :, 0, 3] > 0,
                                                   0.2, ufno_cases.radial_widths())
                     for i in range(n)])
    err = float(np.median(np.abs(est - true) / true))
    check("the field-radii head read back fits the synthetic radii (median error %.3f < 0.2)"
          % err, est.shape == (n, T) and err < 0.2)
    bad = os.path.join(work, "bad8.h5")
    dp_model = os.path.join(ROOT, "tests", "data", "ufno_small.h5")  # variable dP
    refused("--field-radii with a dP model file (its network's radii mean nothing)",
            ["--data", data, "--model", dp_model, "--out", bad, "--field-radii"], bad,
            "variable")


def physics_run(work, data, model):
    """--physics: the head reads the buoyancy-aware solve's plume radii, names them, says so in
    physics_inputs and reads no network; with --field-radii too, the network's after them."""
    from ufno.heads import physics
    out = os.path.join(work, "sg_physics_head.h5")
    train(CLI, ["--data", data, "--model", model, "--members", "2", "--hidden", "8",
                "--epochs", "50", "--limit", "6", "--physics"], out)
    if not os.path.exists(out):
        return
    with h5py.File(out) as b, h5py.File(data) as d:
        g = b["plume_radius_head"]
        names = g.attrs["features"].split(",")
        physics_inputs = g.attrs["physics_inputs"]
        has_digest = "network_digest" in g.attrs
        times = d["TIMES"][()]
        x0 = d["input"][:3, :, :, 0, :]
    check("--physics: the head's last inputs name the solve's radius per report time",
          names == kpi_head.FEATURES + plume_radius_head.physics_feature_names(times) and
          names[-1] == "log_rz_gravity_plume_radius_t%d" % (len(times) - 1), names[-3:])
    check("--physics: physics_inputs says so, no network digest, physics_option reads it",
          physics_inputs == "plume_radius" and not has_digest and
          plume_radius_head.physics_option(out) and not plume_radius_head.physics_option(model))
    f3, _, _, _ = plume_radius_head.load_data(data, limit=3, physics=True)
    cs = [physics.decode(x) for x in x0]
    _dp, sat = physics.rz_gravity_two_phase_dp_bar(cs, times)
    want = np.stack([plume_radius_head.plume_radii(np.moveaxis(sat[i], 0, -1), cs[i]["active"],
                                                   cs[i]["perf"], cs[i]["swi"], cs[i]["dr"])
                     for i in range(3)])
    check("the inputs are log(max(radius, 1 m)) of the solve's saturation by the KPI rule",
          np.allclose(f3[:, 32:], np.log(np.maximum(want, 1.0)), rtol=0, atol=1e-12) and
          np.all(np.diff(want, axis=1) >= 0) and np.all(want[:, -1] > 0))
    both = os.path.join(work, "sg_physics_field_head.h5")
    train(CLI, ["--data", data, "--model", model, "--members", "2", "--hidden", "8",
                "--epochs", "50", "--limit", "6", "--physics", "--field-radii"], both)
    if os.path.exists(both):
        with h5py.File(both) as b:
            g = b["plume_radius_head"]
            names = g.attrs["features"].split(",")
            ok = (names == kpi_head.FEATURES + plume_radius_head.physics_feature_names(times) +
                  kpi_head.field_radius_feature_names(len(times)) and
                  g.attrs["physics_inputs"] == "plume_radius" and
                  g.attrs["network_digest"] == kpi_head.network_digest(model))
        check("--physics --field-radii: the solve's radii, then the network's (read last by "
              "the interval's disagreement), with the network's digest", ok, names[32:36])


def test_plume_radius_head():
    radius_rule()
    rng = np.random.default_rng(1)
    work = tempfile.mkdtemp(prefix="ufno_plume_head_")
    try:
        n, X, Y, T = 40, 4, len(ufno_cases.radial_widths()), 3
        xs = encoded(rng, n, X, Y)
        rate = xs[:, 0, 0, 4].astype(np.float64)
        sg = np.zeros((n, X, Y, T), np.float32)
        for i in range(n):
            for t in range(T):
                reach = int(8 + 10 * rate[i] + 4 * t)  # the plume grows with rate and time
                sg[i, :2, :reach, t] = 0.4
        data = write_data(os.path.join(work, "data.h5"), np.repeat(xs[:, :, :, None, :], T, axis=3),
                          SG=sg, TIMES=np.array([10.0, 100.0, 1000.0]))
        model = os.path.join(ROOT, "tests", "data", "fno_small.h5")  # an SG model file
        out = os.path.join(work, "sg_head.h5")
        train(CLI, ["--data", data, "--model", model, "--members", "2",
                    "--hidden", "8", "--epochs", "800"], out)
        if os.path.exists(out):
            check_model_kept(model, out)
            with h5py.File(out) as b:
                g = b["plume_radius_head"]
                check("head attributes: members, grid, report times, threshold, one output each",
                      int(g.attrs["members"]) == 2 and list(g.attrs["grid"]) == [X, Y] and
                      list(g.attrs["times_days"]) == [10.0, 100.0, 1000.0] and
                      g.attrs["sg_threshold"] == 0.01 and len(g.attrs["target_mean"]) == T and
                      g["member1/fc2.weight"].shape == (T, 8))
            head = plume_radius_head.read_head(out)
            est = head.predict(kpi_head.features(xs))
            true = np.stack([plume_radius_head.plume_radii(
                sg[i], xs[i, ..., 0] != 0, xs[i, :, 0, 3] > 0, 0.2,
                ufno_cases.radial_widths()) for i in range(n)])
            err = float(np.median(np.abs(est - true) / true))
            check("the head read back fits the synthetic radii (median error %.3f < 0.15)" % err,
                  est.shape == (n, T) and err < 0.15)
        field_radii_run(rng, work, model)
        physics_run(work, data, model)
        dp_model = os.path.join(ROOT, "tests", "data", "ufno_small.h5")  # variable dP
        bad = os.path.join(work, "bad.h5")
        refused("a dP model file", ["--data", data, "--model", dp_model, "--out", bad,
                                    "--epochs", "5"], bad, "variable")
        refused("a missing data file", ["--data", os.path.join(work, "nope.h5"), "--model", model,
                                        "--out", bad], bad, "nope.h5")
        narrow = os.path.join(work, "narrow.h5")
        with h5py.File(narrow, "w") as h:
            h["input"] = np.zeros((2, X, 16, T, 12), np.float32)
            h["SG"] = np.zeros((2, X, 16, T), np.float32)
            h["TIMES"] = np.array([10.0, 100.0, 1000.0])
            h["seed"] = np.ones(2, np.int64)
            h["index"] = np.arange(2, dtype=np.int64)
        refused("a data set on another radial grid", ["--data", narrow, "--model", model,
                                                      "--out", bad], bad, "radial cells")
        nosg = os.path.join(work, "nosg.h5")
        shutil.copy(data, nosg)
        with h5py.File(nosg, "r+") as h:
            del h["SG"]
        refused("a data set without SG", ["--data", nosg, "--model", model, "--out", bad,
                                          "--epochs", "5"], bad, "SG")
        open(os.path.join(work, "text.h5"), "w").write("not hdf5")
        refused("a data file that is not HDF5", ["--data", os.path.join(work, "text.h5"),
                                                 "--model", model, "--out", bad], bad, "text.h5")
    finally:
        shutil.rmtree(work, ignore_errors=True)

