#!/usr/bin/python3
"""Train the maximum-dP head and store it in a dP model file (docs/kpis.md, "Maximum dP").

Usage:
  /usr/bin/python3 python/max_dp_head.py --data train.h5 --model DP.h5 --out DP_WITH_HEAD.h5
      [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4] [--limit N]

Why: the maximum pressure buildup a user reads (the max_dP_bar KPI, compared with a fracture
limit) is one near-well value, usually at the first report time. The dP network, trained on the
whole field, smooths that spike: on its validation cases the field's own maximum is low by a
median 22 %. A small network fitted to Flow's maxima alone, from the case's near-well
properties, has no such bias. It reads 32 features of the encoded input at the first report time
(FEATURES below: the five scalars, log kh of the perforated and of all layers at five radial
columns, counts, depths, pore volume in four radial bands) and predicts log(max dP). The head is
an ensemble of `members` MLPs (features -> hidden -> hidden -> 1, exact GELU) whose log outputs
are averaged; a case whose features lie more than 10 % of the training range outside it is
not estimated (the programs report the field's maximum for it). It is trained on the training
split of the data set, chosen on the validation split; the test split is scored last.

The result is a copy of --model with group /max_dp_head added (docs/model-format.md); the C++
programs use it for max_dP_bar when the dP model file has it (apps/MaxDpHead.hpp). The output is
written to a temporary name and renamed: a failure leaves no file.
"""
import argparse
import os
import shutil
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ufno_cases import split_of  # noqa: E402

RADIAL_COLUMNS = (0, 1, 3, 6, 12)
BANDS = 4
FEATURES = (["rate", "temperature", "pressure", "swi", "lambda"] +
            ["%s_r%d" % (n, y) for y in RADIAL_COLUMNS
             for n in ("log_kh_perforated", "log_kh", "log_kvh")] +
            ["perforated_layers", "active_layers_at_well", "mean_porosity", "perforation_depth",
             "active_depth"] +
            ["log_pore_band%d" % b for b in range(BANDS)] +
            ["log_kx_perforated_max", "log_kx_perforated_min", "log_kvh_perforated"])


def features(x0):
    """(N, F) float64 features of encoded inputs x0 (N, X, Y, 12) at the first report time.
    apps/MaxDpHead.cpp computes the same, in the same order and precision."""
    x0 = np.asarray(x0, dtype=np.float64)
    n, X, Y, _ = x0.shape
    if Y < RADIAL_COLUMNS[-1] + 1 or Y % BANDS:
        raise ValueError("the head needs at least %d radial cells, a multiple of %d"
                         % (RADIAL_COLUMNS[-1] + 1, BANDS))
    act = x0[..., 0] != 0
    kx = np.where(act, np.exp(15.0 * x0[..., 0]), 0.0)
    kz = np.where(act, np.exp(15.0 * x0[..., 1]), 0.0)
    perf = x0[:, :, 0, 3] > 0
    layer = np.arange(X, dtype=np.float64)
    f = [x0[:, 0, 0, c] for c in range(4, 9)]
    for y in RADIAL_COLUMNS:
        f.append(np.log((kx[:, :, y] * perf).sum(1) + 1e-3))
        f.append(np.log(kx[:, :, y].sum(1) + 1e-3))
        f.append(np.log(kz[:, :, y].sum(1) + 1e-3))
    f.append(perf.sum(1).astype(np.float64))
    f.append(act[:, :, 0].sum(1).astype(np.float64))
    f.append(np.where(act, x0[..., 2], 0.0).sum((1, 2)) / np.maximum(act.sum((1, 2)), 1))
    f.append((perf * layer).sum(1) / np.maximum(perf.sum(1), 1))
    f.append((act[:, :, 0] * layer).sum(1) / np.maximum(act[:, :, 0].sum(1), 1))
    pore = np.where(act, x0[..., 2], 0.0)
    w = Y // BANDS
    for b in range(BANDS):
        f.append(np.log(pore[:, :, b * w:(b + 1) * w].sum((1, 2)) + 1e-6))
    f.append(np.log((kx[:, :, 0] * perf).max(1) + 1e-3))
    f.append(np.log(np.where(perf, kx[:, :, 0], 1e9).min(1) + 1e-3))
    f.append(np.log((kz[:, :, 0] * perf).sum(1) + 1e-3))
    out = np.stack(f, 1)
    assert out.shape[1] == len(FEATURES)
    return out


def mlp(n_in, hidden):
    return torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.GELU(),
                               torch.nn.Linear(hidden, hidden), torch.nn.GELU(),
                               torch.nn.Linear(hidden, 1))


MARGIN = 0.1  # a case's features may lie this fraction of the training range beyond it


class Head:
    """The ensemble with its normalisation: predict(features) -> max dP in bar; inside(features)
    -> whether a case is within the training cases' feature ranges (widened by MARGIN), where the
    head may be used (apps/MaxDpHead.cpp falls back to the field's maximum elsewhere)."""

    def __init__(self, nets, f_mean, f_std, t_mean, t_std, f_min, f_max):
        self.nets, self.f_mean, self.f_std, self.t_mean, self.t_std = \
            nets, f_mean, f_std, t_mean, t_std
        self.f_min, self.f_max = np.asarray(f_min, np.float64), np.asarray(f_max, np.float64)

    def inside(self, f):
        pad = MARGIN * (self.f_max - self.f_min)
        return np.all((f >= self.f_min - pad) & (f <= self.f_max + pad), axis=1)

    def predict(self, f):
        x = torch.tensor((f - self.f_mean) / self.f_std, dtype=torch.float64)
        with torch.no_grad():
            z = sum(net.double()(x).squeeze(1).numpy() for net in self.nets) / len(self.nets)
        return np.exp(z * self.t_std + self.t_mean)


def load_data(path, limit=0):
    """Features, Flow's maximum dP over formation cells and times, and split names."""
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ValueError("%s: %s" % (path, e))
    with f:
        n = len(f["seed"]) if not limit else min(limit, len(f["seed"]))
        x0 = f["input"][:n, :, :, 0, :]
        dp = f["dP"]
        act = x0[..., 0] != 0
        peak = np.array([np.where(act[i][..., None], dp[i], -np.inf).max() for i in range(n)])
        split = np.array([split_of(int(s), int(k))
                          for s, k in zip(f["seed"][:n], f["index"][:n])])
    return features(x0), peak, split


def fit(f, peak, members=5, hidden=64, epochs=2000, weight_decay=1e-4):
    """The head fitted to (features, peak) by full-batch AdamW on log(peak), cosine schedule."""
    if len(f) < 2 or not np.all(np.isfinite(f)) or not np.all(peak > 0):
        raise ValueError("need at least two cases with finite features and a positive peak")
    f_mean, f_std = f.mean(0), f.std(0) + 1e-9
    y = np.log(peak)
    t_mean, t_std = float(y.mean()), float(y.std() + 1e-9)
    x = torch.tensor((f - f_mean) / f_std, dtype=torch.float32)
    t = torch.tensor((y - t_mean) / t_std, dtype=torch.float32)
    nets = []
    for m in range(members):
        torch.manual_seed(m)
        net = mlp(f.shape[1], hidden)
        opt = torch.optim.AdamW(net.parameters(), 1e-3, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
        for _ in range(epochs):
            opt.zero_grad()
            loss = ((net(x).squeeze(1) - t) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
        nets.append(net.eval())
    return Head(nets, f_mean, f_std, t_mean, t_std, f.min(0), f.max(0))


def summary(pred, true):
    r = np.abs(pred - true) / true
    return {"median": float(np.median(r)), "mean": float(r.mean()),
            "p90": float(np.percentile(r, 90)), "within_10pct": float((r <= 0.1).mean()),
            "signed_median": float(np.median((pred - true) / true))}


def write_head_group(f, head, grid):
    """Writes `head` as group /max_dp_head of the open h5py file f (replacing one there)."""
    if "max_dp_head" in f:
        del f["max_dp_head"]
    g = f.create_group("max_dp_head")
    g.attrs["features"] = ",".join(FEATURES)
    g.attrs["members"] = np.int32(len(head.nets))
    g.attrs["grid"] = np.asarray(grid, dtype=np.int32)
    g.attrs["target_mean"] = float(head.t_mean)
    g.attrs["target_std"] = float(head.t_std)
    g.attrs["target"] = "log(max dP in bar) = target_mean + target_std * mean of members"
    g["feature_mean"] = np.asarray(head.f_mean, dtype=np.float64)
    g["feature_std"] = np.asarray(head.f_std, dtype=np.float64)
    g["feature_min"] = head.f_min
    g["feature_max"] = head.f_max
    for k, net in enumerate(head.nets):
        for i, layer in enumerate(l for l in net if isinstance(l, torch.nn.Linear)):
            g["member%d/fc%d.weight" % (k, i)] = layer.weight.detach().double().numpy()
            g["member%d/fc%d.bias" % (k, i)] = layer.bias.detach().double().numpy()


def write_head(head, grid, model, out):
    """A copy of the dP model file `model` with the head in /max_dp_head, renamed into `out`."""
    try:
        m = h5py.File(model, "r")
    except OSError as e:
        raise ValueError("%s: %s" % (model, e))
    with m:
        if m.attrs.get("variable") not in (b"dP", "dP"):
            raise ValueError("%s: variable: the head belongs in a dP model file" % model)
    tmp = out + ".tmp.%d" % os.getpid()
    try:
        shutil.copyfile(model, tmp)
        with h5py.File(tmp, "r+") as f:
            write_head_group(f, head, grid)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_head(path):
    """The head stored in a dP model file, or None."""
    with h5py.File(path, "r") as f:
        if "max_dp_head" not in f:
            return None
        g = f["max_dp_head"]
        nets = []
        for k in range(int(g.attrs["members"])):
            w = [g["member%d/fc%d.weight" % (k, i)][()] for i in range(3)]
            net = mlp(w[0].shape[1], w[0].shape[0]).double()
            for i, layer in enumerate(l for l in net if isinstance(l, torch.nn.Linear)):
                layer.weight.data = torch.tensor(w[i])
                layer.bias.data = torch.tensor(g["member%d/fc%d.bias" % (k, i)][()])
            nets.append(net.eval())
        return Head(nets, g["feature_mean"][()], g["feature_std"][()],
                    float(g.attrs["target_mean"]), float(g.attrs["target_std"]),
                    g["feature_min"][()], g["feature_max"][()])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--model", required=True, help="the dP model file the head goes with")
    p.add_argument("--out", required=True)
    p.add_argument("--members", type=int, default=5)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--epochs", type=int, default=2000)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--limit", type=int, default=0, help="first N cases only (testing)")
    a = p.parse_args(argv)
    for name, v, lo, hi in (("--members", a.members, 1, 64), ("--hidden", a.hidden, 1, 1024),
                            ("--epochs", a.epochs, 1, 100000)):
        if not lo <= v <= hi:
            sys.exit("max_dp_head: %s must be in [%d, %d]" % (name, lo, hi))
    if not (a.weight_decay >= 0 and np.isfinite(a.weight_decay)) or a.limit < 0:
        sys.exit("max_dp_head: --weight-decay and --limit must be finite and >= 0")
    torch.set_num_threads(1)
    try:
        f, peak, split = load_data(a.data, a.limit)
        train = split == "train"
        head = fit(f[train], peak[train], a.members, a.hidden, a.epochs, a.weight_decay)
        pred = head.predict(f)
        for s in ("train", "val", "test"):
            if (split == s).any():
                print("max_dp_head: %s (%d cases, %d inside the ranges): %s"
                      % (s, int((split == s).sum()), int(head.inside(f[split == s]).sum()),
                         summary(pred[split == s], peak[split == s])))
        with h5py.File(a.data, "r") as d:
            grid = d["input"].shape[1:3]
        write_head(head, grid, a.model, a.out)
    except (OSError, KeyError, ValueError, IndexError) as e:
        sys.exit("max_dp_head: %s" % e)
    print("max_dp_head: wrote %s" % a.out)


if __name__ == "__main__":
    main()
