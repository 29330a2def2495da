#!/usr/bin/python3
"""python/ufno/heads/co2_mass.py on a tiny synthetic data set: Flow's mass ratios read from a ufno_kpis
table and matched to the data set's cases by case_id, a training run that writes the head into a
copy of an SG model file (the model's own arrays unchanged, the head read back predicting as
trained, with its report time), and refusals of bad input (one line, exit non-zero, no output
file)."""
import csv
import os
import shutil
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from cli_checks import CliChecks
from heads_support import check_model_kept, encoded, train, write_data
from ufno.heads import co2_mass as co2_mass_head
from ufno.heads import common as kpi_head

SCRIPT = "ufno.co2_mass_head"
CLI = CliChecks(SCRIPT)
check, run, refused = CLI.check, CLI.run, CLI.refused


def write_table(path, rows):
    """A ufno_kpis-like table: case, fields, ..., mass_ratio."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "fields", "co2_mass_Mt", "mass_ratio"])
        for case, ratio in rows:
            w.writerow([case, "target.h5", 1.0, ratio])


def test_co2_mass_head():
    rng = np.random.default_rng(2)
    work = tempfile.mkdtemp(prefix="ufno_co2_head_")
    try:
        n, X, Y, T = 40, 4, 16, 3
        x = encoded(rng, n, X, Y)
        ratio = 0.6 + 0.25 * x[:, 0, 0, 5].astype(np.float64)  # the free share grows with temperature
        ids = ["t_i%06d" % i for i in range(n)]
        data = write_data(os.path.join(work, "data.h5"), np.repeat(x[:, :, :, None, :], T, axis=3),
                          TIMES=np.array([10.0, 100.0, 10957.5]),
                          case_ids=np.array([i.encode() for i in ids]))
        rows = []
        for i, r in zip(ids, ratio):
            case = os.path.join(work, i + ".h5")
            with h5py.File(case, "w") as c:
                c.attrs["case_id"] = i
            rows.append((case, r))
        rng.shuffle(rows)  # matched by case_id, not by order
        table = os.path.join(work, "flow_kpis.csv")
        write_table(table, rows)
        model = os.path.join(ROOT, "tests", "data", "fno_small.h5")  # an SG model file
        out = os.path.join(work, "sg_head.h5")
        train(CLI, ["--data", data, "--flow-kpis", table, "--model", model, "--members", "2",
                    "--hidden", "8", "--epochs", "800"], out)
        if os.path.exists(out):
            check_model_kept(model, out)
            with h5py.File(out) as b:
                g = b["co2_mass_head"]
                check("head attributes: members, grid, the last report time, one output",
                      int(g.attrs["members"]) == 2 and list(g.attrs["grid"]) == [X, Y] and
                      list(g.attrs["times_days"]) == [10957.5] and
                      np.ndim(g.attrs["target_mean"]) == 0)
            est = co2_mass_head.read_head(out).predict(kpi_head.features(x))
            err = float(np.median(np.abs(est - ratio) / ratio))
            check("the head read back fits the synthetic ratios (median error %.4f < 0.02)" % err,
                  err < 0.02)
        dp_model = os.path.join(ROOT, "tests", "data", "ufno_small.h5")  # variable dP
        bad = os.path.join(work, "bad.h5")
        refused("a dP model file", ["--data", data, "--flow-kpis", table, "--model", dp_model,
                                    "--out", bad, "--epochs", "5"], bad, "variable")
        short = os.path.join(work, "short.csv")
        write_table(short, rows[:-1])
        refused("a table without a row for one case",
                ["--data", data, "--flow-kpis", short, "--model", model, "--out", bad], bad,
                "no row for case")
        nan = os.path.join(work, "nan.csv")
        write_table(nan, rows[:-1] + [(rows[-1][0], float("nan"))])
        refused("a NaN mass ratio", ["--data", data, "--flow-kpis", nan, "--model", model,
                                     "--out", bad], bad, "mass_ratio")
        gone = os.path.join(work, "gone.csv")
        write_table(gone, rows[:-1] + [(os.path.join(work, "nope.h5"), 0.8)])
        refused("a row whose case file is missing", ["--data", data, "--flow-kpis", gone,
                                                     "--model", model, "--out", bad], bad,
                "nope.h5")
        hdr = os.path.join(work, "hdr.csv")
        open(hdr, "w").write("scenario,flow\nx,1\n")
        refused("a table that is not ufno_kpis's", ["--data", data, "--flow-kpis", hdr,
                                                     "--model", model, "--out", bad], bad,
                "mass_ratio")
        refused("a missing table", ["--data", data, "--flow-kpis", os.path.join(work, "no.csv"),
                                    "--model", model, "--out", bad], bad, "no.csv")
    finally:
        shutil.rmtree(work, ignore_errors=True)

