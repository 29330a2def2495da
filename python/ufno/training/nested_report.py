"""The accuracy of a nested-chain prediction against a site's Flow truth: the relative L2 error
per level and variable, ||pred - true|| / ||true|| over every report time and cell of the level,
pooled over the wells (docs/nested-sites.md, "Accuracy on small Flow sites").

Usage (`python3 -m ufno.nested_report`):
  PYTHONPATH=python /usr/bin/python3 -m ufno.nested_report --pred PRED.h5 [...] \
      --target TARGET.h5 [...] [--site SITE.h5 [...] --models DIR] [--json OUT.json]

PRED.h5 is a prediction file (`ufno_predict --case SITE.h5 --models DIR --out PRED.h5`, or the
PyTorch chain `python3 -m ufno.nested_chain`); TARGET.h5 the site's target file
(python/ufno/data/nested_sites.py). Both hold /GLOBAL/dP and /<well>/LGRk/{dP,SG} as
(T, nx, ny, nz). Several sites (--pred and --target lists in the same order) are pooled.
Besides the relative L2, each row gives the RMS error and the largest absolute error, and the
relative L2 of predicting the true field's mean at every cell and time (a trivial baseline). With
--site SITE.h5 --models DIR, each row also gives the relative L2 of the level's model fed the TRUE
coarser level (as in training) instead of the chain's prediction: the level's own error, without
what the coarser levels pass down (PyTorch, python/ufno/models/nested_chain.py's models and coarse
channel).
"""

import argparse
import json
import sys

import h5py
import numpy as np

LEVELS = ("GLOBAL", "LGR1", "LGR2", "LGR3", "LGR4")


def _s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _wells(f):
    """A target file's wells (its attribute), or a prediction file's (its groups but GLOBAL)."""
    if "wells" in f.attrs:
        return _s(f.attrs["wells"]).split()
    return [k for k in f if isinstance(f[k], h5py.Group) and k != "GLOBAL"]


def _listed(v):
    return [v] if isinstance(v, str) else list(v)


def report(pred_paths, target_paths):
    """[{level, variable, rel_l2, rms, max_abs, rel_l2_mean_baseline, units}] in chain order,
    pooled over the wells and over the (prediction, target) pairs (a path or lists of paths)."""
    pairs = list(zip(_listed(pred_paths), _listed(target_paths)))
    acc = {}
    for pred_path, target_path in pairs:
        with h5py.File(pred_path, "r") as p, h5py.File(target_path, "r") as t:
            wells = _wells(t)
            for level in LEVELS:
                for var in (("dP",) if level == "GLOBAL" else ("dP", "SG")):
                    a_ = acc.setdefault((level, var), [0.0, 0.0, 0.0, 0.0, 0])
                    paths = ["GLOBAL/dP"] if level == "GLOBAL" else \
                        ["%s/%s/%s" % (w, level, var) for w in wells]
                    for path in paths:
                        if path not in p:
                            raise SystemExit("nested_report: %s has no /%s" % (pred_path, path))
                        a = np.asarray(p[path][()], dtype=np.float64)
                        b = np.asarray(t[path][()], dtype=np.float64)
                        if a.shape != b.shape:
                            raise SystemExit("nested_report: /%s is %s in %s, %s in %s" % (
                                path, a.shape, pred_path, b.shape, target_path))
                        a_[0] += float(((a - b) ** 2).sum())
                        a_[1] += float((b ** 2).sum())
                        a_[2] += float(((b - b.mean()) ** 2).sum())
                        a_[3] = max(a_[3], float(np.abs(a - b).max()))
                        a_[4] += b.size
    rows = []
    for (level, var), (err2, ref2, base2, max_abs, n) in acc.items():
        rows.append({"level": level, "variable": var,
                     "rel_l2": (err2 / ref2) ** 0.5 if ref2 > 0 else float("nan"),
                     "rms": (err2 / n) ** 0.5, "max_abs": max_abs,
                     "rel_l2_mean_baseline": (base2 / ref2) ** 0.5 if ref2 > 0 else float("nan"),
                     "units": "bar" if var == "dP" else "1", "sites": len(pairs)})
    return rows


def teacher_forced(site_paths, models_dir, target_paths):
    """{(level, variable): relative L2 pooled over the wells and sites} of every model fed the
    true coarser level (GLOBAL: its own channels only)."""
    import torch
    from ufno.models import nested_chain as nc
    err2, ref2 = {}, {}
    for site_path, target_path in zip(_listed(site_paths), _listed(target_paths)):
        _teacher_forced_site(nc, torch, site_path, models_dir, target_path, err2, ref2)
    return {k: (err2[k] / ref2[k]) ** 0.5 for k in err2}


def _teacher_forced_site(nc, torch, site_path, models_dir, target_path, err2, ref2):
    site = nc.read_site(site_path)
    models = nc.load_models(models_dir, site)
    with h5py.File(target_path, "r") as t, torch.no_grad():
        def truth(path):
            return torch.from_numpy(np.moveaxis(t[path][()], 0, -1).astype(np.float32))
        for level, var, src in nc.chain_steps(site):
            x = torch.from_numpy(site.input(level))
            if src is not None:
                source = truth(src.path + "/" + ("dP" if src.name == "GLOBAL" else var))
                coarse = nc.coarse_channel(source, level.coarse_window, level.coarse_repeat)
                x = torch.cat([x, coarse[None, ..., None]], dim=-1)
            model = models[(level.name, var)]
            # A time-first model (axis_order TXYZ) takes the stored (1, x, y, z, t, C) permuted
            # as the reference's chain does, and gives (t, x, y, z).
            if getattr(model, "axis_order", "XYZT") == "TXYZ":
                pred = model(x.permute(0, 4, 1, 2, 3, 5))[0].permute(1, 2, 3, 0).double()
            else:
                pred = model(x)[0].double()
            true = truth(level.path + "/" + var).double()
            key = (level.name, var)
            err2[key] = err2.get(key, 0.0) + float(((pred - true) ** 2).sum())
            ref2[key] = ref2.get(key, 0.0) + float((true ** 2).sum())


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.nested_report",
                                description=__doc__.split("\n")[0])
    p.add_argument("--pred", required=True, nargs="+", help="prediction files")
    p.add_argument("--target", required=True, nargs="+",
                   help="their sites' target files, in the same order (errors pooled over them)")
    p.add_argument("--json", help="also write the rows as JSON")
    p.add_argument("--site", nargs="+",
                   help="the site files, in the same order (with --models: the teacher-forced "
                        "column)")
    p.add_argument("--models", help="the chain's model directory")
    a = p.parse_args(argv)
    if len(a.pred) != len(a.target) or (a.site and len(a.site) != len(a.pred)):
        p.error("give as many --target (and --site) files as --pred files")
    rows = report(a.pred, a.target)
    tf = teacher_forced(a.site, a.models, a.target) if a.site and a.models else None
    print("| level | variable | relative L2 | RMS error | largest error | relative L2 of the "
          "mean |%s" % (" relative L2, true coarse input |" if tf else ""))
    print("|---|---|---|---|---|---|%s" % ("---|" if tf else ""))
    for r in rows:
        if tf:
            r["rel_l2_true_coarse"] = tf[(r["level"], r["variable"])]
        u = " bar" if r["units"] == "bar" else ""
        print("| %s | %s | %.3f | %.3g%s | %.3g%s | %.3f |%s" % (
            r["level"], r["variable"], r["rel_l2"], r["rms"], u, r["max_abs"], u,
            r["rel_l2_mean_baseline"],
            " %.3f |" % r["rel_l2_true_coarse"] if tf else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
