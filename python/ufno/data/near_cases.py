#!/usr/bin/python3
"""List training cases for ufno.train --train-cases: those whose draw is near sampler version 2
(the sampler of the shipped examples and of the first shipped models' data), plus a number of
other training cases drawn at random so that a fine-tune keeps the rest of the distribution.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.near_cases --split RUN/split.json --others 400 --seed 0 > cases.txt

A case is near version 2 when its draw (ufno_cases.sample_case, rebuilt from its seed and index)
has all of: one of version 2's structures (gaussian, layered, layered+gaussian), one kz/kr for the
whole case, one perforation interval, a geometric mean kr in version 2's 10..1000 mD; and at least
three of version 2's other ranges (sigma of ln k 0.3..1.5, kz/kr >= 0.01, radial correlation
length 4..24 cells, vertical 0.5..3 layers, porosity mean 0.12..0.25). Version 2 is gone from the
sampler (ufno.cases says what it drew); these rules are its documented ranges.
"""
import argparse
import json
import sys

import numpy as np
from ufno.data import cases as ufno_cases

V2_STRUCTURES = ("gaussian", "layered", "layered+gaussian")


def perforation_intervals(perf):
    return int(np.sum(np.diff(np.concatenate([[0], np.asarray(perf) != 0, [0]]).astype(int)) == 1))


def near_version2(meta, perf):
    """True when the draw `meta` with perforation flags `perf` is near sampler version 2."""
    required = [meta["structure"] in V2_STRUCTURES, not meta["anisotropy_varies"],
                perforation_intervals(perf) == 1, 10.0 <= meta["kgeo_mD"] <= 1000.0]
    ranges = [0.3 <= meta["sigma_lnk"] <= 1.5, meta["anisotropy"] >= 0.01,
              4.0 <= meta["corr_r_cells"] <= 24.0, 0.5 <= meta["corr_z_cells"] <= 3.0,
              0.12 <= meta["poro_mean"] <= 0.25]
    return all(required) and sum(ranges) >= 3


def parse_case_id(cid):
    """'s2_i000123' -> (2, 123)."""
    seed, index = cid.split("_i")
    return int(seed[1:]), int(index)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--split", required=True, help="a training run's split.json")
    p.add_argument("--others", type=int, default=0, help="random other training cases to add")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    try:
        with open(a.split) as f:
            train = json.load(f)["train"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        p.error("--split %s: not a split.json with a train list (%s)" % (a.split, e))
    near, rest = [], []
    for cid in train:
        case = ufno_cases.sample_case(*parse_case_id(cid))
        (near if near_version2(case["meta"], case["PERF"]) else rest).append(cid)
    if not 0 <= a.others <= len(rest):
        p.error("--others must be in 0..%d" % len(rest))
    rng = np.random.default_rng(a.seed)
    others = sorted(rng.choice(len(rest), size=a.others, replace=False).tolist())
    print("# %d cases near sampler version 2, %d others (seed %d)" % (len(near), a.others, a.seed))
    for cid in near + [rest[i] for i in others]:
        print(cid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
