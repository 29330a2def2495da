"""The accuracy of a nested-chain prediction against a site's Flow truth: the relative L2 error
per level and variable, ||pred - true|| / ||true|| over every report time and cell of the level,
pooled over the wells (docs/nested-sites.md, "Accuracy on small Flow sites").

Usage (`python3 -m ufno.nested_report`):
  PYTHONPATH=python /usr/bin/python3 -m ufno.nested_report --pred PRED.h5 --target TARGET.h5 [--json OUT.json]

PRED.h5 is a prediction file (`ufno_predict --case SITE.h5 --models DIR --out PRED.h5`, or the
PyTorch chain `python3 -m ufno.nested_chain`); TARGET.h5 the site's target file
(python/ufno/data/nested_sites.py). Both hold /GLOBAL/dP and /<well>/LGRk/{dP,SG} as
(T, nx, ny, nz). Besides the relative L2, each row gives the RMS error and the largest absolute
error, and the relative L2 of predicting the true field's mean at every cell and time (a trivial
baseline).
"""

import argparse
import json
import sys

import h5py
import numpy as np

LEVELS = ("GLOBAL", "LGR1", "LGR2", "LGR3", "LGR4")


def _s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def report(pred_path, target_path):
    """[{level, variable, rel_l2, rms, max_abs, rel_l2_mean_baseline, units}] in chain order."""
    rows = []
    with h5py.File(pred_path, "r") as p, h5py.File(target_path, "r") as t:
        wells = _s(t.attrs["wells"]).split()
        for level in LEVELS:
            for var in (("dP",) if level == "GLOBAL" else ("dP", "SG")):
                paths = ["GLOBAL/dP"] if level == "GLOBAL" else \
                    ["%s/%s/%s" % (w, level, var) for w in wells]
                err2 = ref2 = base2 = 0.0
                max_abs, n = 0.0, 0
                for path in paths:
                    if path not in p:
                        raise SystemExit("nested_report: %s has no /%s" % (pred_path, path))
                    a = np.asarray(p[path][()], dtype=np.float64)
                    b = np.asarray(t[path][()], dtype=np.float64)
                    if a.shape != b.shape:
                        raise SystemExit("nested_report: /%s is %s in the prediction, %s in the "
                                         "target" % (path, a.shape, b.shape))
                    err2 += float(((a - b) ** 2).sum())
                    ref2 += float((b ** 2).sum())
                    base2 += float(((b - b.mean()) ** 2).sum())
                    max_abs = max(max_abs, float(np.abs(a - b).max()))
                    n += b.size
                rows.append({"level": level, "variable": var,
                             "rel_l2": (err2 / ref2) ** 0.5 if ref2 > 0 else float("nan"),
                             "rms": (err2 / n) ** 0.5, "max_abs": max_abs,
                             "rel_l2_mean_baseline": (base2 / ref2) ** 0.5 if ref2 > 0
                             else float("nan"),
                             "units": "bar" if var == "dP" else "1"})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.nested_report",
                                description=__doc__.split("\n")[0])
    p.add_argument("--pred", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--json", help="also write the rows as JSON")
    a = p.parse_args(argv)
    rows = report(a.pred, a.target)
    print("| level | variable | relative L2 | RMS error | largest error | relative L2 of the "
          "mean |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.3f | %.3g %s | %.3g %s | %.3f |" % (
            r["level"], r["variable"], r["rel_l2"], r["rms"], r["units"], r["max_abs"],
            r["units"], r["rel_l2_mean_baseline"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
