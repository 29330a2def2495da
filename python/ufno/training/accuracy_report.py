#!/usr/bin/python3
"""The accuracy report of trained models on the held-out test cases (docs/accuracy.md).

For every trained run (a ufno.train directory), the paper's metrics on the test split of the
data set: SG plume error (mean |pred - true| over cells where true != 0 or |pred| > 0.01) and dP
relative error (mean over reservoir cells and times of |pred - true| / max over space of |true| at
that time), next to trivial baselines (no gas; the true field's own mean at every time) and per
report time. Optionally the time per case of `ufno_predict` (a batch over the test cases, models
loaded once) against OPM Flow's wall time from the data set's runs.csv.

Model files (a shipped model, `--model models/dp_ufno.h5`) are scored the same way, on the same
test split, so that today's models and new ones stand side by side; each entry also gives the
distribution over cases (median, p90, worst) and the error at the last report time.

Instead of a data set's test split, `--pairs DIR` scores on every DIR/*/case.h5 with its OPM Flow
result DIR/*/target.h5 (the layout of examples/opm/, and of a held-out set made by another
generator: sweep scenarios exported with `ufno_export --targets`).

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.accuracy_report (--data DATA.h5 | --pairs DIR) [--run RUN_DIR ...]
      [--model M.h5 ...]
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

from ufno.heads import dp_field_scale as dp_field_scale_head
from ufno.training import train as train_ufno
from ufno.data import encoding as ue
from ufno.data.output_path import check_output
from ufno.conversion import model_file as ufno_model_file
from ufno.models import net3d as ufno_torch


def load_run(run_dir):
    ck = torch.load(os.path.join(run_dir, "checkpoint.pt"))
    a = ck["args"]
    model = ufno_torch.Net3d(width=a["width"], modes=tuple(a["modes"]),
                             n_fourier=6 if a["fno"] else 3, n_ufourier=0 if a["fno"] else 3)
    # The exported model is the best-validation epoch (ufno.train); evaluate the same weights.
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


def load_pairs(root, variable):
    """Encoded inputs, targets (N, X, Y, T) and times of every root/*/case.h5 + target.h5."""
    import glob
    from ufno.data import cases as ufno_cases
    xs, ys, times = [], [], None
    for case in sorted(glob.glob(os.path.join(root, "*", "case.h5"))):
        target = os.path.join(os.path.dirname(case), "target.h5")
        if not os.path.exists(target):
            continue
        c = ufno_cases.read_case_h5(case)
        xs.append(ue.encode_case(c))
        with h5py.File(target, "r") as f:
            t = f[variable][()]
            times = f["TIMES"][()] if "TIMES" in f else ue.paper_times_days(t.shape[-3])
        ys.append((t[0] if t.ndim == 4 else t).transpose(1, 2, 0))  # (T, X, Y) -> (X, Y, T)
    return list(range(len(xs))), np.stack(xs), np.stack(ys), np.asarray(times)


SPLIT = "test"  # --split: "val" to choose between models without looking at the test cases


def test_split(data, variable):
    if data.startswith("pairs:"):
        return load_pairs(data[len("pairs:"):], variable)
    with h5py.File(data, "r") as f:
        seeds, idxs = f["seed"][()], f["index"][()]
        test = [i for i, (s, k) in enumerate(zip(seeds, idxs))
                if train_ufno.split_of(int(s), int(k)) == SPLIT]
        return test, f["input"][test], f[variable][test], f["TIMES"][()]


def scores(v, pred, true, x, times, train_mean):
    """The metric, its distribution over cases and report times, and the baselines."""
    mask = (x[..., 0] != 0).astype(np.float64)
    if v == "SG":
        baselines = {"no gas (SG = 0)": np.zeros_like(true)}
    else:
        m = (true * mask).sum(axis=(1, 2), keepdims=True) / mask.sum(axis=(1, 2), keepdims=True)
        baselines = {"training-set mean dP everywhere": np.full_like(true, train_mean),
                     "true mean over reservoir cells at each time (oracle constant)":
                         np.broadcast_to(m, true.shape)}
    per_case = [metric(v, pred[i:i + 1], true[i:i + 1], mask[i:i + 1]) for i in range(len(x))]
    per_time = [metric(v, pred[..., t:t + 1], true[..., t:t + 1], mask[..., t:t + 1])
                for t in range(true.shape[-1])]
    return {"variable": v, "test_cases": len(x), "metric": metric(v, pred, true, mask),
            "metric_median": float(np.median(per_case)),
            "metric_p90": float(np.percentile(per_case, 90)), "metric_worst": float(max(per_case)),
            "metric_last_time": per_time[-1],
            "baselines": {k: metric(v, b, true, mask) for k, b in baselines.items()},
            "metric_per_case": per_case, "metric_per_time": per_time,
            "times_days": [float(t) for t in times]}


def evaluate(run_dir, data):
    model, ck, a, best_epoch = load_run(run_dir)
    v = a["variable"]
    test, x, true, times = test_split(data, v)
    pred = ue.physical_output(v, predict(model, x, ck["mean"], ck["std"]), x)
    log = list(csv.DictReader(open(os.path.join(run_dir, "log.csv"))))
    r = {"run": os.path.basename(os.path.normpath(run_dir)),
         "architecture": "FNO" if a["fno"] else "UFNO", "width": a["width"],
         "modes": a["modes"], "epochs": ck["epoch"],
         "train_seconds": sum(float(r["seconds"]) for r in log),
         "parameters": sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters()),
         "best_epoch": best_epoch,
         "last_val_metric": float(log[-1]["val_metric"]) if log else None}
    r.update(scores(v, pred, true, x, times, ck["mean"]))
    return r


def evaluate_model_file(path, data):
    """A model file (shipped or exported) on the data's test split, as ufno_predict runs it."""
    model, attrs = ufno_model_file.read_model_file(path, dtype=torch.float32)
    v = attrs["variable"]
    test, x, true, times = test_split(data, v)
    scale, offset = float(attrs["output_scale"]), float(attrs["output_offset"])
    pred = ue.physical_output(v, predict(model, x, offset, scale), x)
    if v == "dP":  # as ufno_predict writes it: times the file's field-scale head, if any
        pred = dp_field_scale_head.corrected(path, x, pred)
    r = {"run": os.path.basename(path), "architecture": attrs["architecture"],
         "width": int(attrs["width"]), "modes": [int(m) for m in attrs["modes"]]}
    r.update(scores(v, pred, true, x, times, offset))
    return r


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


def markdown(report):
    """The summary table (metric, median, p90, worst, last time, baselines, in %) and the per-time
    table of a report, as docs/accuracy.md shows them."""
    runs = report["runs"]
    pct = lambda v: "%.1f" % (100 * v)  # noqa: E731
    out = ["| model | variable | cases | error | median | p90 | worst | at 30 yr | baselines |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
            r["run"], r["variable"], r["test_cases"], pct(r["metric"]), pct(r["metric_median"]),
            pct(r["metric_p90"]), pct(r["metric_worst"]), pct(r["metric_last_time"]),
            ", ".join(pct(b) for b in r["baselines"].values())))
    out += ["", "| time (days) | " + " | ".join("%s %s" % (r["run"], r["variable"]) for r in runs)
            + " |", "|---|" + "---|" * len(runs)]
    for t, day in enumerate(runs[0]["times_days"]):
        out.append("| %.0f | " % day + " | ".join(pct(r["metric_per_time"][t]) for r in runs)
                   + " |")
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data")
    p.add_argument("--pairs", help="score on DIR/*/case.h5 + target.h5 instead of a test split")
    p.add_argument("--run", action="append", default=[])
    p.add_argument("--model", action="append", default=[], help="a model file to score as well")
    p.add_argument("--flow-runs")
    p.add_argument("--case-root")
    p.add_argument("--ufno-predict")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("--markdown", help="also write the summary and per-time tables here")
    p.add_argument("--split", choices=["test", "val"], default="test",
                   help="the data set's split to score (val: for choosing between models)")
    a = p.parse_args(argv)
    if bool(a.data) == bool(a.pairs):
        p.error("give --data or --pairs")
    inputs = [a.data] + a.model + [os.path.join(r, n) for r in a.run
                                   for n in ("checkpoint.pt", "checkpoint.json")]
    if a.pairs and os.path.isdir(a.pairs):
        inputs += [os.path.join(a.pairs, d, n) for d in sorted(os.listdir(a.pairs))
                   for n in ("case.h5", "target.h5")]
    try:
        check_output(a.out, inputs)
        if a.markdown:
            check_output(a.markdown, inputs + [a.out], "--markdown")
    except ValueError as e:
        print("accuracy_report: %s" % e, file=sys.stderr)
        return 2
    if a.pairs:
        a.data = "pairs:" + a.pairs
    global SPLIT
    SPLIT = a.split
    torch.set_num_threads(a.threads)
    report = {"data": os.path.basename(a.data),
              "runs": [evaluate(r, a.data) for r in a.run] +
                      [evaluate_model_file(m, a.data) for m in a.model]}
    for r in report["runs"]:
        print("%-14s %s %-4s %s %d cases: %.4f (median %.4f, p90 %.4f, worst %.4f, last time "
              "%.4f; baselines %s)" % (
                  r["run"], r["variable"], r["architecture"], SPLIT, r["test_cases"], r["metric"],
                  r["metric_median"], r["metric_p90"], r["metric_worst"], r["metric_last_time"],
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
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
