#!/usr/bin/python3
"""Train the CO2-mass head and store it in an SG model file (docs/kpis.md, "KPI heads").

Usage:
  build/apps/ufno_kpis --list PAIRS --out flow_kpis.csv       (Flow's KPIs of the data set)
  PYTHONPATH=python /usr/bin/python3 -m ufno.co2_mass_head --data train.h5 --flow-kpis flow_kpis.csv \\
      --model SG.h5 --out SG_WITH_HEAD.h5 [--members 5] [--hidden 64] [--epochs 2000]
      [--weight-decay 1e-4] [--limit N]

Why: the CO2 mass in place a user reads (co2_mass_Mt, and its ratio to the injected mass) is the
free gas of the plume at the last report. Read from the SG field it sums the network's
saturation errors over the whole plume: off by a median 11 % on the verified sweep, where
Flow's free-gas share of the injected mass only ranges over 0.69-0.87. A head fitted to Flow's
share, from the case's properties, estimates it directly; the mass is that share times the
injected mass (rate x time, exact).

The targets are the mass_ratio column of --flow-kpis, a table of `ufno_kpis` over the data set's
Flow runs (the rule of screening/Kpis.cpp: SG x porosity x cell volume x Span-Wagner density at each
cell's pressure, over the plume connected to the perforations, at the last report time). Its
rows are matched to the data set's cases by the case_id attribute of each row's case file; a
case without a row is an error. The head (python/ufno/heads/common.py) predicts log(mass ratio); the
group stores the report time it holds at.

The result is a copy of --model with group /co2_mass_head added (docs/model-format.md), written
to a temporary name and renamed: a failure leaves no file.
"""
import csv

import h5py
import numpy as np
from ufno.heads import common as kpi_head

GROUP = "co2_mass_head"
TARGET = ("log(free-phase CO2 / injected CO2 at times_days) = target_mean + target_std * "
          "mean of members")


def flow_ratios(path):
    """{case_id: Flow's mass ratio} from a ufno_kpis table."""
    try:
        rows = list(csv.DictReader(open(path, newline="")))
    except OSError as e:
        raise ValueError("%s: %s" % (path, e))
    if not rows or "case" not in rows[0] or "mass_ratio" not in rows[0]:
        raise ValueError("%s: header: needs the case and mass_ratio columns of ufno_kpis" % path)
    out = {}
    for n, r in enumerate(rows, 2):
        try:
            with h5py.File(r["case"], "r") as c:
                cid = c.attrs["case_id"]
            v = float(r["mass_ratio"])
        except (OSError, KeyError, ValueError, TypeError) as e:
            raise ValueError("%s: line %d: %s" % (path, n, e))
        if not (np.isfinite(v) and 0 < v <= 10):
            raise ValueError("%s: line %d: mass_ratio %r is not in (0, 10]" % (path, n, v))
        out[cid.decode() if isinstance(cid, bytes) else str(cid)] = v
    return out


def load_data(path, kpis, limit=0):
    """Features, Flow's mass ratios, the last report time and split names."""
    ratios = flow_ratios(kpis)
    with kpi_head.open_data(path) as f:
        n = kpi_head.case_count(f, limit)
        x0 = f["input"][:n, :, :, 0, :]
        # A data set made from packs has no case_ids: the generator's ids are s<seed>_i<index>.
        ids = ([c.decode() if isinstance(c, bytes) else str(c) for c in f["case_ids"][:n]]
               if "case_ids" in f else
               ["s%d_i%06d" % (s, k) for s, k in zip(f["seed"][:n], f["index"][:n])])
        missing = [c for c in ids if c not in ratios]
        if missing:
            raise ValueError("%s: no row for case %s (and %d more) of %s"
                             % (kpis, missing[0], len(missing) - 1, path))
        target = np.array([ratios[c] for c in ids])
        last = float(f["TIMES"][-1])
        split = kpi_head.split_names(f, n)
    return kpi_head.features(x0), target, last, split


def write_head(head, grid, last_day, model, out):
    attrs = {"times_days": np.array([last_day], np.float64)}
    kpi_head.write_model_copy(
        model, "SG", out, lambda f: kpi_head.write_group(f, GROUP, head, grid, TARGET, attrs))


def read_head(path):
    """The head stored in an SG model file, or None."""
    return kpi_head.read_group(path, GROUP)


def main(argv=None):
    last = []

    def load(a):
        f, ratio, t, split = load_data(a.data, a.flow_kpis, a.limit)
        last.append(t)
        return f, ratio, split

    kpi_head.train_cli(
        "co2_mass_head", __doc__, "SG", load,
        lambda a, head, grid: write_head(head, grid, last[0], a.model, a.out),
        lambda pred, ratio: (pred, ratio), argv,
        extra=[(("--flow-kpis",), {"required": True,
                                    "help": "ufno_kpis over the data set's Flow runs"})])

if __name__ == "__main__":
    main()
