"""Train the nine small FNO4d models of the nested chain (GLOBAL dP; LGR1..LGR4 dP and SG) on
(site file, target file) pairs, and convert each into a model file that `ufno_predict --models`
finds by its level and variable (docs/nested-sites.md).

Usage (`python3 -m ufno.train_nested`):
  PYTHONPATH=python /usr/bin/python3 -m ufno.train_nested --data nested-proof/train --out DIR
      [--epochs 15] [--width 8] [--threads 1] [--max-minutes M] [--only LGR2_SG ...]

--data DIR finds DIR/site_*/site.h5 (ufno_import's site file) with DIR/site_*/target.h5
(python/ufno/data/nested_sites.py: Flow's fine fields averaged over each level's cells); --pair
SITE.h5 TARGET.h5 adds one pair. A level is trained on one sample per site (GLOBAL) or per well
(LGR1..LGR4): its 8 site channels plus, as the 9th, the TRUE coarser level's field (teacher
forcing, as nested FNO trains): GLOBAL dP for LGR1 (both variables), the same well's LGR(k-1)
field of the same variable for LGRk, cropped to the level's coarse_window and repeated
coarse_repeat times (the chain's rule).

Normalisers (UnitGaussianNormalizer, eps 1e-5; mean and std of the grid's shape (nx, ny, nz, T)):
the output's and, on LGR levels, the coarse channel's, fit on the training samples with one mean
and one std per report time (over samples and cells), broadcast over the cells: with a handful
of sites a per-cell std is 0 wherever the training plumes never reach, and would blow up a
held-out plume that does. GLOBAL has no input normaliser (its last channel is permeability).
Loss: relative L2 per sample of the decoded output; Adam (lr 1e-2), StepLR(step 5, 0.7), batch 2,
15 epochs (GLOBAL, one sample per site and cheap: 40). Measured on GLOBAL dP of 24 sites, 15
epochs: training relative L2 0.12 with lr 1e-2, 0.20 with 3e-3, 0.28 with 1e-3.
The network is trained on channels standardised with their training mean and std, and that
affine map is folded into its lift fc0 before it is saved, so the model file takes the site
file's channels as they are.

Per model, DIR/<LEVEL>_<VAR>/ holds checkpoint.pt (after every epoch; a rerun resumes it),
model.pt (the state_dict), input_normalizer.pickle (LGR), output_normalizer.pickle and
metrics.json; DIR/models/<LEVEL>_<VAR>.h5 is the converted model file (`python3 -m ufno.convert
... --level LEVEL`). Finished models (their .h5 exists) are skipped, and a checkpoint is resumed,
only when they were trained on the same sites (otherwise: refused, use another --out).
--max-minutes stops after the epoch that passes it, exit status 3 (rerun to continue).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time
import types

import h5py
import numpy as np
import torch

from ufno.models import fno4d

LGR_LEVELS = ("LGR1", "LGR2", "LGR3", "LGR4")
MODELS = (("GLOBAL", "dP"),) + tuple((lv, v) for lv in LGR_LEVELS for v in ("dP", "SG"))
# Zero padding on both sides of (A1, A2, A3, T) and the kept modes, per kind of level. The small
# paddings keep the padded grids FFT-friendly and small: measured on 2 threads (width 8, batch 4),
# an LGR2 step takes about 0.1 s a sample with (2, 2, 2, 4) and 0.5 s with (4, 4, 2, 8).
PADDING = {"GLOBAL": (2, 2, 1, 4), "LGR": (2, 2, 2, 4)}
MODES = {"GLOBAL": (6, 4, 2, 6), "LGR": (4, 4, 4, 6)}
EXIT_UNFINISHED = 3
REPO_PYTHON = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def find_pairs(data_dirs):
    """(site.h5, target.h5) of every DIR/site_*/ that has both."""
    pairs = []
    for d in data_dirs:
        for sd in sorted(glob.glob(os.path.join(d, "site_*"))):
            s, t = os.path.join(sd, "site.h5"), os.path.join(sd, "target.h5")
            if os.path.exists(s) and os.path.exists(t):
                pairs.append((s, t))
    return pairs


def coarse_channel(source, window, repeat):
    """source (nx', ny', nz', T) cropped to window (i0, i1, j0, j1, k0, k1; 0-based, half-open)
    and each cell repeated (rx, ry, rz) times: docs/nested-sites.md, "The chain"."""
    i0, i1, j0, j1, k0, k1 = [int(v) for v in window]
    c = source[i0:i1, j0:j1, k0:k1]
    for axis, r in enumerate(repeat):
        c = np.repeat(c, int(r), axis=axis)
    return c


def _target(tf, path, var):
    """A target field as (nx, ny, nz, T) float32."""
    return np.ascontiguousarray(np.moveaxis(tf[path + "/" + var][()], 0, -1), dtype=np.float32)


def level_samples(pairs, level, var):
    """X (N, nx, ny, nz, T, C) and Y (N, nx, ny, nz, T) float32 of one model's samples."""
    xs, ys = [], []
    for site_path, target_path in pairs:
        with h5py.File(site_path, "r") as sf, h5py.File(target_path, "r") as tf:
            if level == "GLOBAL":
                xs.append(sf["GLOBAL/input"][0])
                ys.append(_target(tf, "GLOBAL", "dP"))
                continue
            wells = _s(sf.attrs["wells"]).split()
            k = LGR_LEVELS.index(level)
            for w in wells:
                g = sf["%s/%s" % (w, level)]
                if k == 0:
                    src = _target(tf, "GLOBAL", "dP")
                else:
                    src = _target(tf, "%s/%s" % (w, LGR_LEVELS[k - 1]), var)
                c = coarse_channel(src, g.attrs["coarse_window"], g.attrs["coarse_repeat"])
                x = g["input"][0]
                if c.shape != x.shape[:4]:
                    raise ValueError("%s %s/%s: coarse channel %s, level %s" % (
                        site_path, w, level, c.shape, x.shape[:4]))
                xs.append(np.concatenate([x, c[..., None]], axis=-1))
                ys.append(_target(tf, "%s/%s" % (w, level), var))
    return np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)


# The published models' order (B, T, X, Y, Z, C): the axes of (nx, ny, nz, T) that make it.
TXYZ_AXES = (3, 0, 1, 2)


def in_order(values, axis_order):
    """Per-axis values of (A1, A2, A3, T) in the model's axis order."""
    return tuple(values[i] for i in TXYZ_AXES) if axis_order == "TXYZ" else tuple(values)


def time_first(x, y):
    """Samples (N, nx, ny, nz, T, C) and (N, nx, ny, nz, T) as the published models take them,
    (N, T, nx, ny, nz, C) and (N, T, nx, ny, nz): the reference's permute (0, 4, 1, 2, 3, 5)."""
    return x.permute(0, 4, 1, 2, 3, 5).contiguous(), y.permute(0, 4, 1, 2, 3).contiguous()


def time_normalizer(a):
    """TimeGaussianNormalizer of time-first samples a (N, T, nx, ny, nz): one mean and std per
    report time, shape (1, T, 1, 1, 1), no eps (the published class)."""
    a = torch.as_tensor(a, dtype=torch.float32)
    return fno4d.TimeGaussianNormalizer(a.mean(dim=(0, 2, 3, 4), keepdim=True),
                                        a.std(dim=(0, 2, 3, 4), keepdim=True))


def per_time_normalizer(a):
    """UnitGaussianNormalizer with one mean and std per report time (a: (N, nx, ny, nz, T)),
    broadcast to (nx, ny, nz, T)."""
    a = torch.as_tensor(a, dtype=torch.float32)
    mean = a.mean(dim=(0, 1, 2, 3))
    std = a.std(dim=(0, 1, 2, 3))
    shape = a.shape[1:]
    return fno4d.UnitGaussianNormalizer(mean.expand(shape).clone(), std.expand(shape).clone())


def channel_stats(x):
    """Per-channel mean and std of the inputs (N, nx, ny, nz, T, C) (std 1 where a channel is
    constant)."""
    flat = x.reshape(-1, x.shape[-1]).to(torch.float64)
    mu, sd = flat.mean(dim=0), flat.std(dim=0)
    sd = torch.where(sd > 1e-8, sd, torch.ones_like(sd))
    return mu.to(torch.float32), sd.to(torch.float32)


def fold_standardization(model, mu, sd):
    """Make fc0(x) equal what it computed on (x - mu) / sd: W' = W / sd, b' = b - W' mu. The
    model is trained on standardised channels (the site file's channels span 0.001 to 10, so the
    lift would otherwise need weights of 1e3 that Adam takes thousands of steps to grow) and
    written as a plain FNO4d whose input is the site file's channels."""
    with torch.no_grad():
        w = model.fc0.weight / sd[None, :]
        model.fc0.bias.sub_(w @ mu)
        model.fc0.weight.copy_(w)


def relative_l2(pred, y):
    """Mean over samples of ||pred - y|| / ||y||."""
    b = y.shape[0]
    diff = (pred - y).reshape(b, -1).norm(dim=1)
    ref = y.reshape(b, -1).norm(dim=1).clamp_min(1e-12)
    return (diff / ref).mean()


def kind(level):
    return "GLOBAL" if level == "GLOBAL" else "LGR"


def padding_for(level, axis_order="XYZT"):
    return in_order(PADDING[kind(level)], axis_order)


def modes_for(level, grid, axis_order="XYZT"):
    """The kept modes per axis of the model's grid (in its order), within what its padded grid
    holds (half a padded axis; the last axis, the real transform's, one more)."""
    m = in_order(MODES[kind(level)], axis_order)
    padded = [g + 2 * p for g, p in zip(grid, padding_for(level, axis_order))]
    limit = (padded[0] // 2, padded[1] // 2, padded[2] // 2, padded[3] // 2 + 1)
    return tuple(min(a, b) for a, b in zip(m, limit))


def train_one(level, var, pairs, out, a, deadline):
    """Trains (or resumes) one model; returns True when its model file is written."""
    name = "%s_%s" % (level, var)
    d = os.path.join(out, name)
    final = os.path.join(out, "models", name + ".h5")
    sites = [os.path.abspath(p[0]) for p in pairs]
    if os.path.exists(final):
        with open(os.path.join(d, "metrics.json")) as f:
            m = json.load(f)
            if m["sites"] != sites or m.get("axis_order", "XYZT") != a.axis_order:
                raise SystemExit("train_nested: %s was trained on other sites or in another "
                                 "axis order; use another --out" % final)
        print("%s: done (%s)" % (name, final), flush=True)
        return True
    os.makedirs(d, exist_ok=True)
    x, y = level_samples(pairs, level, var)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    order = a.axis_order
    if order == "TXYZ":  # the published order, with the published normaliser class
        x, y = time_first(x, y)
        norm = time_normalizer
    else:
        norm = per_time_normalizer
    grid = tuple(y.shape[1:])
    in_norm = None if level == "GLOBAL" else norm(x[..., -1])
    out_norm = norm(y)
    if in_norm is not None:
        x[..., -1] = in_norm.encode(x[..., -1])
    mu, sd = channel_stats(x)
    xs = (x - mu) / sd
    torch.manual_seed(a.seed)
    model = fno4d.FNO4d(width=a.width, modes=modes_for(level, grid, order),
                        in_channels=x.shape[-1], padding=padding_for(level, order))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.7)
    ckpt = os.path.join(d, "checkpoint.pt")
    epoch, history, spent = 0, [], 0.0
    if os.path.exists(ckpt):
        st = torch.load(ckpt)
        if st.get("sites") != sites or st.get("axis_order", "XYZT") != order:
            raise SystemExit("train_nested: %s was started on other sites or in another axis "
                             "order; use another --out" % ckpt)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        sched.load_state_dict(st["sched"])
        epoch, history, spent = st["epoch"], st["history"], st["seconds"]
        print("%s: resuming at epoch %d" % (name, epoch), flush=True)
    n = x.shape[0]
    gen = torch.Generator().manual_seed(a.seed)
    for _ in range(epoch):
        torch.randperm(n, generator=gen)   # the same order as an uninterrupted run
    epochs = a.epochs_global if level == "GLOBAL" else a.epochs
    while epoch < epochs:
        t0 = time.monotonic()
        model.train()
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for b0 in range(0, n, a.batch):
            idx = perm[b0:b0 + a.batch]
            opt.zero_grad()
            pred = out_norm.decode(model(xs[idx]))
            loss = relative_l2(pred, y[idx])
            loss.backward()
            opt.step()
            total += float(loss) * len(idx)
        sched.step()
        epoch += 1
        spent += time.monotonic() - t0
        history.append(total / n)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                    "sched": sched.state_dict(), "epoch": epoch, "history": history,
                    "seconds": spent, "sites": sites, "axis_order": order}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
        print("%s: epoch %d/%d  train rel L2 %.4f  (%.1f s)" % (
            name, epoch, epochs, history[-1], time.monotonic() - t0), flush=True)
        if deadline is not None and time.monotonic() > deadline and epoch < epochs:
            return False
    return export_trained(types.SimpleNamespace(
        model=model, xs=xs, x=x, mu=mu, sd=sd, name=name, d=d, var=var, grid=grid, level=level,
        out_norm=out_norm, in_norm=in_norm, n=n, a=a, epoch=epoch, spent=spent, history=history,
        sites=sites, final=final))


def export_trained(r):
    """The trained model of train_one (`r`: its fields) with the input standardisation folded
    into fc0, converted with its normalisers into the level's model file, and its metrics."""
    model, xs, x, mu, sd = r.model, r.xs, r.x, r.mu, r.sd
    name, d, final, var, grid, level = r.name, r.d, r.final, r.var, r.grid, r.level
    in_norm, out_norm, n, a = r.in_norm, r.out_norm, r.n, r.a
    epoch, spent, history, sites = r.epoch, r.spent, r.history, r.sites
    model.eval()
    with torch.no_grad():
        ref = model(xs[:1])
        fold_standardization(model, mu, sd)
        got = model(x[:1])
    if float((got - ref).norm() / ref.norm().clamp_min(1e-12)) > 1e-4:
        raise SystemExit("train_nested: %s: the folded input standardisation changed the output"
                         % name)
    torch.save(model.state_dict(), os.path.join(d, "model.pt"))
    order = a.axis_order
    conv = [sys.executable, "-m", "ufno.convert", os.path.join(d, "model.pt"), final + ".part",
            "--variable", var, "--grid"] + [str(g) for g in grid] + \
           ["--padding"] + [str(p) for p in padding_for(level, order)] + ["--level", level] + \
           (["--axis-order", "TXYZ"] if order == "TXYZ" else [])
    fno4d.save_normalizer_pickle(out_norm, os.path.join(d, "output_normalizer.pickle"))
    conv += ["--output-normalizer", os.path.join(d, "output_normalizer.pickle")]
    if in_norm is not None:
        fno4d.save_normalizer_pickle(in_norm, os.path.join(d, "input_normalizer.pickle"))
        conv += ["--input-normalizer", os.path.join(d, "input_normalizer.pickle")]
    with open(os.path.join(d, "metrics.json"), "w") as f:
        json.dump({"level": level, "variable": var, "samples": n, "grid": grid,
                   "width": a.width, "modes": modes_for(level, grid, order),
                   "padding": padding_for(level, order), "axis_order": order,
                   "epochs": epoch, "train_seconds": spent, "train_rel_l2": history,
                   "sites": sites}, f, indent=1)
    os.makedirs(os.path.dirname(final), exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_PYTHON + (os.pathsep + env["PYTHONPATH"]
                                       if env.get("PYTHONPATH") else "")
    r = subprocess.run(conv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("train_nested: converting %s failed: %s" % (name, r.stderr.strip()))
    os.replace(final + ".part", final)
    print("%s: %d samples, %d epochs in %.0f s, train rel L2 %.4f -> %s" % (
        name, n, epoch, spent, history[-1], final), flush=True)
    return True

def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.train_nested",
                                description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="*", default=[], help="directories of site_*/ folders")
    p.add_argument("--pair", nargs=2, action="append", default=[], metavar=("SITE", "TARGET"))
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=15, help="epochs of the LGR models")
    p.add_argument("--epochs-global", type=int, default=40, help="epochs of GLOBAL dP")
    p.add_argument("--width", type=int, default=8)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-minutes", type=float, default=None)
    p.add_argument("--sites", type=int, default=None, metavar="N",
                   help="train on the first N pairs (in the order of --data's folders)")
    p.add_argument("--only", nargs="*", default=None, metavar="LEVEL_VAR",
                   help="train only these models (e.g. GLOBAL_dP LGR1_SG)")
    p.add_argument("--axis-order", choices=("XYZT", "TXYZ"), default="XYZT",
                   help="TXYZ: the published models' order (B, T, X, Y, Z, C) with per-time "
                        "TimeGaussianNormalizer objects; XYZT: the project's (x, y, z, t)")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    pairs = find_pairs(a.data) + [tuple(x) for x in a.pair]
    if a.sites is not None:
        pairs = pairs[:a.sites]
    if not pairs:
        print("train_nested: no (site.h5, target.h5) pairs", file=sys.stderr)
        return 2
    print("train_nested: %d sites" % len(pairs), flush=True)
    deadline = None if a.max_minutes is None else time.monotonic() + 60.0 * a.max_minutes
    todo = [(lv, v) for lv, v in MODELS if a.only is None or "%s_%s" % (lv, v) in a.only]
    for lv, v in todo:
        if not train_one(lv, v, pairs, a.out, a, deadline):
            print("train_nested: stopped after --max-minutes; rerun to continue", flush=True)
            return EXIT_UNFINISHED
    return 0


if __name__ == "__main__":
    sys.exit(main())
