#!/usr/bin/python3
"""train_ufno.py on a tiny synthetic data set (no flow needed): the paper's metrics on hand-made
arrays, the deterministic split, two epochs then a resumed third (the log continues, the
checkpoint advances), and the export of a model file whose attributes carry the dP scaling.
Prints "N passed, M failed" last; exit 1 on failure."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import train_ufno  # noqa: E402

results = []


def check(name, cond, detail=""):
    results.append(bool(cond))
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))


def main():
    # Metrics on arrays small enough to work out by hand.
    true = np.zeros((1, 1, 2, 1))
    true[0, 0, 0, 0] = 0.5
    pred = np.array([0.4, 0.02]).reshape(1, 1, 2, 1)
    check("plume error: cells where true != 0 or |pred| > 0.01",
          abs(train_ufno.plume_error(pred, true) - (0.1 + 0.02) / 2) < 1e-12)
    t = np.array([2.0, -4.0]).reshape(1, 1, 2, 1)
    pr = np.array([1.0, -4.0]).reshape(1, 1, 2, 1)
    check("pressure error: |pred - true| / max|true| at that time",
          abs(train_ufno.pressure_error(pr, t, np.ones_like(t)) - (0.25 + 0) / 2) < 1e-12)
    x = torch.ones(1, 2, 3, 1)
    check("loss is zero for a perfect prediction", float(train_ufno.paper_loss(x, x, x)) == 0.0)
    check("split is deterministic", train_ufno.split_of(1, 5) == train_ufno.split_of(1, 5))

    work = tempfile.mkdtemp(prefix="ufno_train_test_")
    try:
        rng = np.random.default_rng(0)
        n, X, Y, T = 12, 8, 16, 8
        data = os.path.join(work, "data.h5")
        with h5py.File(data, "w") as f:
            inp = rng.random((n, X, Y, T, 12), dtype=np.float32)
            inp[:, -2, :, :, 0] = 0  # inactive bottom rows
            f["input"] = inp
            f["SG"] = rng.random((n, X, Y, T), dtype=np.float32)
            f["dP"] = 10 * rng.random((n, X, Y, T), dtype=np.float32) + 3
            f["seed"] = np.ones(n, dtype=np.int64)
            f["index"] = np.arange(n, dtype=np.int64)
        run = os.path.join(work, "run")
        cmd = [sys.executable, os.path.join(os.path.dirname(HERE), "train_ufno.py"), "--data", data,
               "--variable", "dP", "--run", run, "--width", "4", "--modes", "2", "2", "2",
               "--threads", "1", "--batch", "4"]
        p = subprocess.run(cmd + ["--epochs", "2"], capture_output=True, text=True)
        check("two epochs run", p.returncode == 0, p.stderr[-500:])
        p = subprocess.run(cmd + ["--epochs", "3", "--export", os.path.join(work, "dp.h5")],
                           capture_output=True, text=True)
        check("a rerun resumes", "resuming after epoch 2" in p.stderr, p.stderr[-500:])
        rows = list(csv.DictReader(open(os.path.join(run, "log.csv"))))
        check("log has epochs 1, 2, 3", [r["epoch"] for r in rows] == ["1", "2", "3"], rows)
        check("checkpoint at epoch 3", torch.load(os.path.join(run, "checkpoint.pt"))["epoch"] == 3)
        split = json.load(open(os.path.join(run, "split.json")))
        check("split covers every case once",
              sorted(sum(split.values(), [])) == sorted("s1_i%06d" % i for i in range(n)))
        m = h5py.File(os.path.join(work, "dp.h5"), "r")
        vals = h5py.File(data, "r")["dP"][()]
        check("export carries the z-score scaling",
              m.attrs["output_scale"] > 1 and 3 < m.attrs["output_offset"] < 13
              and list(m.attrs["grid"]) == [X, Y, T], dict(m.attrs))
        check("metrics written", "test_pressure_error" in json.load(open(os.path.join(run, "metrics.json"))))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
