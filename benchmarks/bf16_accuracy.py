#!/usr/bin/python3
"""What --bf16 does to accuracy: the test cases (DIR/*/case.h5 with OPM Flow's DIR/*/target.h5)
through `ufno_predict --cases` with and without --bf16 (the same models, one thread), scored
against Flow as docs/accuracy.md defines it (SG plume error, dP relative error, both over all
cases and at the last report time) and by the KPIs of `ufno_kpis` with the models' heads (mean
relative error against the KPIs `ufno_kpis` measures in Flow's fields, and the share within 10 %).

Usage:
  PYTHONPATH=python /usr/bin/python3 benchmarks/bf16_accuracy.py --pairs DIR --work WORKDIR
      [--model models/sg_ufno.h5 --model models/dp_ufno.h5] [--bin build/apps]
"""
import argparse
import csv
import glob
import os
import subprocess
import sys

import h5py
import numpy as np

from ufno.data import cases as ufno_cases
from ufno.data import encoding as ue
from ufno.training import train as train_ufno

KPIS = ["max_dP_bar", "max_dP_field_bar", "plume_radius_m_10yr", "plume_radius_m_30yr",
        "plume_radius_field_m_30yr", "aor_radius_m", "co2_mass_Mt"]


def metric(v, pred, true, mask):
    return train_ufno.plume_error(pred * mask, true * mask) if v == "SG" else \
        train_ufno.pressure_error(pred * mask, true * mask, mask)


def predict(a, cases, name, flags):
    out = os.path.join(a.work, name)
    lst = os.path.join(a.work, "cases.txt")
    cmd = [os.path.join(a.bin, "ufno_predict"), "--cases", lst, "--out", out, "--threads", "1"]
    for m in a.model:
        cmd += ["--model", m]
    subprocess.run(cmd + flags, check=True, capture_output=True,
                   env=dict(os.environ, OMP_NUM_THREADS="1"))
    return [os.path.join(out, os.path.basename(os.path.dirname(c)) + "_case.h5") for c in cases]


def kpi_rows(a, cases, fields, name, heads):
    lst = os.path.join(a.work, "kpis_%s.txt" % name)
    with open(lst, "w") as f:
        f.writelines("%s %s\n" % p for p in zip(cases, fields))
    cmd = [os.path.join(a.bin, "ufno_kpis"), "--list", lst]
    for m in a.model if heads else []:
        cmd += ["--model", m]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    return list(csv.DictReader(r.stdout.splitlines()))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--model", action="append")
    p.add_argument("--bin", default="build/apps")
    a = p.parse_args()
    a.model = a.model or ["models/sg_ufno.h5", "models/dp_ufno.h5"]
    os.makedirs(a.work, exist_ok=True)
    cases = sorted(c for c in glob.glob(os.path.join(a.pairs, "*", "case.h5"))
                   if os.path.exists(os.path.join(os.path.dirname(c), "target.h5")))
    with open(os.path.join(a.work, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    masks, true = [], {"SG": [], "dP": []}
    for c in cases:
        masks.append(ue.encode_case(ufno_cases.read_case_h5(c))[..., 0] != 0)
        with h5py.File(os.path.join(os.path.dirname(c), "target.h5"), "r") as f:
            for v in true:
                t = f[v][()]
                true[v].append((t[0] if t.ndim == 4 else t).transpose(1, 2, 0))
    mask = np.stack(masks).astype(np.float64)
    true = {v: np.stack(t) for v, t in true.items()}
    flow = kpi_rows(a, cases, [os.path.join(os.path.dirname(c), "target.h5") for c in cases],
                    "flow", heads=False)
    print("%d cases; errors against OPM Flow in %%" % len(cases))
    for name, flags in (("float32", []), ("bf16", ["--bf16"])):
        files = predict(a, cases, name, flags)
        pred = {v: [] for v in true}
        for fn in files:
            with h5py.File(fn, "r") as f:
                for v in pred:
                    pred[v].append(f[v][0].transpose(1, 2, 0))
        pred = {v: np.stack(x).astype(np.float64) for v, x in pred.items()}
        line = []
        for v in ("SG", "dP"):
            line.append("%s %.4f (at the last time %.4f)" % (
                v, 100 * metric(v, pred[v], true[v], mask),
                100 * metric(v, pred[v][..., -1:], true[v][..., -1:], mask[..., -1:])))
        rows = kpi_rows(a, cases, files, name, heads=True)
        for k in KPIS:
            got = np.array([float(r[k]) for r in rows])
            ref = np.array([float(r[k]) for r in flow])
            ok = np.isfinite(ref) & (ref > 0)
            rel = np.abs(got[ok] - ref[ok]) / ref[ok]
            line.append("%s %.3f (within 10 %%: %.1f of %d)" % (
                k, 100 * rel.mean(), 100 * np.mean(rel <= 0.1), ok.sum()))
        print("%-8s " % name + "; ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
