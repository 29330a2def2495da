#!/usr/bin/python3
"""The accuracy report of trained models on the held-out test cases (docs/accuracy.md).

For every trained run (a train_ufno.py directory), the paper's metrics on the test split of the
data set: SG plume error (mean |pred - true| over cells where true != 0 or |pred| > 0.01) and dP
relative error (mean over reservoir cells and times of |pred - true| / max over space of |true| at
that time), next to trivial baselines (no gas; the true field's own mean at every time) and per
report time. Optionally the time per case of `ufno_predict` (a batch over the test cases, models
loaded once) against OPM Flow's wall time from the data set's runs.csv.

Usage:
  /usr/bin/python3 python/accuracy_report.py --data DATA.h5 --run RUN_DIR [--run ...]
      [--flow-runs DATA_DIR/runs.csv --case-root DATA_DIR --ufno-predict build/apps/ufno_predict]
      --out report.json
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_ufno  # noqa: E402
import ufno_encoding as ue  # noqa: E402
import ufno_torch  # noqa: E402


def load_run(run_dir):
    ck = torch.load(os.path.join(run_dir, "checkpoint.pt"))
    a = ck["args"]
    model = ufno_torch.Net3d(width=a["width"], modes=tuple(a["modes"]),
                             n_fourier=6 if a["fno"] else 3, n_ufourier=0 if a["fno"] else 3)
    # The exported model is the best-validation epoch (train_ufno.py); evaluate the same weights.
    best = ck.get("best") or {}
    model.load_state_dict(best["model"] if best.get("model") is not None else ck["model"])
    model.eval()
    return model, ck, a, best.get("epoch")


def predict(model, x, mean, std, batch=4):
    out = []
    with torch.no_grad():
        for b in range(0, len(x), batch):
            out.append(model(torch.from_numpy(x[b:b + batch])).numpy() * std + mean)
    return np.concatenate(out)


def metric(variable, pred, true, mask):
    return train_ufno.plume_error(pred * mask, true * mask) if variable == "SG" else \
        train_ufno.pressure_error(pred * mask, true * mask, mask)


def evaluate(run_dir, data):
    model, ck, a, best_epoch = load_run(run_dir)
    v = a["variable"]
    with h5py.File(data, "r") as f:
        seeds, idxs = f["seed"][()], f["index"][()]
        test = [i for i, (s, k) in enumerate(zip(seeds, idxs))
                if train_ufno.split_of(int(s), int(k)) == "test"]
        x = f["input"][test]
        true = f[v][test]
        times = f["TIMES"][()]
    mask = (x[..., 0] != 0).astype(np.float64)
    pred = ue.physical_output(v, predict(model, x, ck["mean"], ck["std"]), x)
    if v == "SG":
        baselines = {"no gas (SG = 0)": np.zeros_like(true)}
    else:
        m = (true * mask).sum(axis=(1, 2), keepdims=True) / mask.sum(axis=(1, 2), keepdims=True)
        baselines = {"training-set mean dP everywhere": np.full_like(true, ck["mean"]),
                     "true mean over reservoir cells at each time (oracle constant)":
                         np.broadcast_to(m, true.shape)}
    per_time = [metric(v, pred[..., t:t + 1], true[..., t:t + 1], mask[..., t:t + 1])
                for t in range(true.shape[-1])]
    log = list(csv.DictReader(open(os.path.join(run_dir, "log.csv"))))
    return {"run": os.path.basename(os.path.normpath(run_dir)), "variable": v,
            "architecture": "FNO" if a["fno"] else "UFNO", "width": a["width"],
            "modes": a["modes"], "epochs": ck["epoch"],
            "train_seconds": sum(float(r["seconds"]) for r in log),
            "parameters": sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters()),
            "test_cases": len(test), "metric": metric(v, pred, true, mask),
            "baselines": {k: metric(v, b, true, mask) for k, b in baselines.items()},
            "best_epoch": best_epoch,
            "metric_per_case": [metric(v, pred[i:i + 1], true[i:i + 1], mask[i:i + 1])
                                for i in range(len(test))],
            "metric_per_time": per_time, "times_days": [float(t) for t in times],
            "last_val_metric": float(log[-1]["val_metric"]) if log else None}


def timing(runs_csv, case_root, exe, test_ids, threads):
    rows = [r for r in csv.DictReader(open(runs_csv)) if r["status"] == "ok"]
    walls = np.array([float(r["wall_s"]) for r in rows])
    cases = [os.path.join(case_root, "case_%06d" % int(r["index"]), "case.h5") for r in rows
             if r["case_id"] in test_ids]
    work = tempfile.mkdtemp(prefix="ufno_report_")
    lst = os.path.join(work, "cases.txt")
    with open(lst, "w") as f:
        f.write("\n".join(cases) + "\n")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    t0 = time.time()
    r = subprocess.run([exe, "--cases", lst, "--out", os.path.join(work, "out"), "--threads",
                        str(threads)], env=env, capture_output=True, text=True)
    batch = time.time() - t0
    if r.returncode != 0:
        raise SystemExit("accuracy_report: ufno_predict failed: " + r.stderr[-500:])
    t0 = time.time()
    subprocess.run([exe, "--case", cases[0], "--out", os.path.join(work, "one.h5"), "--threads",
                    str(threads)], env=env, check=True, capture_output=True)
    single = time.time() - t0
    return {"flow_cases": len(walls), "flow_wall_s_median": float(np.median(walls)),
            "flow_wall_s_mean": float(walls.mean()), "flow_threads": 1,
            "ufno_threads": threads, "ufno_batch_cases": len(cases),
            "ufno_batch_s_per_case": batch / len(cases), "ufno_single_case_s": single}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--run", action="append", required=True)
    p.add_argument("--flow-runs")
    p.add_argument("--case-root")
    p.add_argument("--ufno-predict")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    report = {"data": os.path.basename(a.data), "runs": [evaluate(r, a.data) for r in a.run]}
    for r in report["runs"]:
        print("%-10s %s %-4s test %d cases: %.4f (baselines %s)" % (
            r["run"], r["variable"], r["architecture"], r["test_cases"], r["metric"],
            ", ".join("%.4f" % b for b in r["baselines"].values())), file=sys.stderr)
    if a.ufno_predict:
        with h5py.File(a.data, "r") as f:
            ids = {"s%d_i%06d" % (s, k) for s, k in zip(f["seed"][()], f["index"][()])
                   if train_ufno.split_of(int(s), int(k)) == "test"}
        report["timing"] = timing(a.flow_runs, a.case_root, a.ufno_predict, ids, a.threads)
        print("timing: %s" % report["timing"], file=sys.stderr)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
