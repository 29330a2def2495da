#!/usr/bin/python3
"""What the KPI heads share (docs/kpis.md, "KPI heads"): the 32 features of an encoded case, the
ensemble of small MLPs on them, its fit to log targets, and its storage as a group of a model
file (docs/model-format.md).

Why heads: a KPI a user reads is often one number that a field network gets systematically
wrong (the near-well maximum of dP, which it smooths; the plume's front, which it smears
outward). A small network fitted to Flow's own KPI values of the training cases, from the case's
properties, has no such bias. python/ufno/heads/max_dp.py and python/ufno/heads/plume_radius.py train the
two that ship; runtime/KpiHeadFeatures.cpp computes the same features and evaluates a head in C++.

A head is an ensemble of `members` MLPs (features -> hidden -> hidden -> outputs, exact GELU)
whose outputs are averaged and un-normalised to log(KPI), per output. A case whose features lie
more than MARGIN of the training range outside it is not estimated: the programs report the
field's value for it.
"""
import argparse
import os
import shutil
import sys

import h5py
import numpy as np
import torch

from ufno.data.output_path import check_output

RADIAL_COLUMNS = (0, 1, 3, 6, 12)
BANDS = 4
FEATURES = (["rate", "temperature", "pressure", "swi", "lambda"] +
            ["%s_r%d" % (n, y) for y in RADIAL_COLUMNS
             for n in ("log_kh_perforated", "log_kh", "log_kvh")] +
            ["perforated_layers", "active_layers_at_well", "mean_porosity", "perforation_depth",
             "active_depth"] +
            ["log_pore_band%d" % b for b in range(BANDS)] +
            ["log_kx_perforated_max", "log_kx_perforated_min", "log_kvh_perforated"])
MARGIN = 0.1  # a case's features may lie this fraction of the training range beyond it


def features(x0):
    """(N, F) float64 features of encoded inputs x0 (N, X, Y, 12) at the first report time.
    runtime/KpiHeadFeatures.cpp computes the same, in the same order and precision."""
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


ENVELOPE_FLOOR_BAR = 0.01  # log of the dP envelope below this is taken at this


def envelope_feature_names(columns):
    return ["log_field_envelope_r%d" % c for c in columns]


def field_envelope(dp, active):
    """Per radial column, the largest dP over report times and formation layers: dp (N, X, Y, T),
    active (N, X, Y) -> (N, Y). -inf where a column has no formation cell."""
    return np.where(active[..., None], dp, -np.inf).max(3).max(1)


def envelope_features(envelope, columns):
    """log(max(envelope, floor)) at the given radial columns, float64 (N, len(columns)):
    runtime/KpiHeadFeatures.cpp field_envelope_features computes the same."""
    e = np.asarray(envelope, np.float64)[:, list(columns)]
    return np.log(np.maximum(e, ENVELOPE_FLOOR_BAR))


def field_radius_feature_names(report_times):
    """Names of the inputs of a plume head that also reads the SG network's own plume radius at
    each report time (python/ufno/heads/plume_radius.py --field-radii)."""
    return ["log_field_plume_radius_t%d" % t for t in range(report_times)]


def network_digest(path):
    """FNV-1a (64 bit, hex) over the network of a model file: the root datasets in name order,
    each as its name then its values as little-endian float32. A head that reads the network's
    own output stores the digest of the network it was fitted with; io/KpiHeadFile.cpp computes
    the same and the programs do not use the head with another network."""
    # core/Fingerprint.hpp's offset basis: one digit shorter than FNV's published one, kept
    # there so that the fingerprints of existing sweep directories stay valid.
    h = 1469598103934665603
    with h5py.File(path, "r") as f:
        for name in sorted(k for k in f if isinstance(f[k], h5py.Dataset)):
            data = name.encode() + np.asarray(f[name][()], dtype="<f4").tobytes()
            for b in data:
                h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def open_data(path):
    """A training data set (python/ufno/data/flow_batch.py --assemble), opened read-only; ValueError
    naming it when it cannot be."""
    try:
        return h5py.File(path, "r")
    except OSError as e:
        raise ValueError("%s: %s" % (path, e))


def case_count(f, limit=0):
    """How many cases of the open data set to use: all, or the first `limit`."""
    return len(f["seed"]) if not limit else min(limit, len(f["seed"]))


def split_names(f, n):
    """The split ("train", "val", "test") of each of the first n cases of the open data set."""
    from ufno.data.cases import split_of
    return np.array([split_of(int(s), int(k)) for s, k in zip(f["seed"][:n], f["index"][:n])])


def mlp(n_in, hidden, n_out=1):
    return torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.GELU(),
                               torch.nn.Linear(hidden, hidden), torch.nn.GELU(),
                               torch.nn.Linear(hidden, n_out))


class Head:
    """The ensemble with its normalisation. predict(features) -> the KPI, (N,) for a head with a
    scalar target, else (N, outputs); inside(features) -> whether a case is within the training
    cases' feature ranges widened by MARGIN, where the head may be used."""

    def __init__(self, nets, f_mean, f_std, t_mean, t_std, f_min, f_max):
        self.nets, self.f_mean, self.f_std = nets, f_mean, f_std
        self.t_mean, self.t_std = t_mean, t_std
        self.f_min, self.f_max = np.asarray(f_min, np.float64), np.asarray(f_max, np.float64)

    def inside(self, f):
        pad = MARGIN * (self.f_max - self.f_min)
        return np.all((f >= self.f_min - pad) & (f <= self.f_max + pad), axis=1)

    def predict(self, f):
        x = torch.tensor((f - self.f_mean) / self.f_std, dtype=torch.float64)
        with torch.no_grad():
            z = sum(net.double()(x).numpy() for net in self.nets) / len(self.nets)
        if np.ndim(self.t_mean) == 0:
            z = z[:, 0]
        return np.exp(z * self.t_std + self.t_mean)


def fit(f, target, members=5, hidden=64, epochs=2000, weight_decay=1e-4):
    """A head fitted to (features, target > 0) by full-batch AdamW on log(target), cosine
    schedule. target (N,) gives a scalar head, (N, K) one with K outputs normalised apart."""
    target = np.asarray(target, np.float64)
    if len(f) < 2 or not np.all(np.isfinite(f)) or not np.all(target > 0):
        raise ValueError("need at least two cases with finite features and a positive target")
    scalar = target.ndim == 1
    y = np.log(target.reshape(len(target), -1))
    f_mean, f_std = f.mean(0), f.std(0) + 1e-9
    t_mean, t_std = y.mean(0), y.std(0) + 1e-9
    x = torch.tensor((f - f_mean) / f_std, dtype=torch.float32)
    t = torch.tensor((y - t_mean) / t_std, dtype=torch.float32)
    nets = []
    for m in range(members):
        torch.manual_seed(m)
        net = mlp(f.shape[1], hidden, y.shape[1])
        opt = torch.optim.AdamW(net.parameters(), 1e-3, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
        for _ in range(epochs):
            opt.zero_grad()
            loss = ((net(x) - t) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
        nets.append(net.eval())
    if scalar:
        t_mean, t_std = float(t_mean[0]), float(t_std[0])
    return Head(nets, f_mean, f_std, t_mean, t_std, f.min(0), f.max(0))


def summary(pred, true):
    r = np.abs(pred - true) / true
    return {"median": float(np.median(r)), "mean": float(r.mean()),
            "p90": float(np.percentile(r, 90)), "within_10pct": float((r <= 0.1).mean()),
            "signed_median": float(np.median((pred - true) / true))}


def write_group(f, group, head, grid, target, attrs=None, names=None):
    """Writes `head` as `group` of the open h5py file f (replacing one there). target: what the
    outputs are, in words; attrs: more attributes of the group (a plume head's times); names: the
    input names when they are more than FEATURES."""
    if group in f:
        del f[group]
    g = f.create_group(group)
    g.attrs["features"] = ",".join(names or FEATURES)
    g.attrs["members"] = np.int32(len(head.nets))
    g.attrs["grid"] = np.asarray(grid, dtype=np.int32)
    scalar = np.ndim(head.t_mean) == 0
    g.attrs["target_mean"] = float(head.t_mean) if scalar else np.asarray(head.t_mean, np.float64)
    g.attrs["target_std"] = float(head.t_std) if scalar else np.asarray(head.t_std, np.float64)
    g.attrs["target"] = target
    for k, v in (attrs or {}).items():
        g.attrs[k] = v
    g["feature_mean"] = np.asarray(head.f_mean, dtype=np.float64)
    g["feature_std"] = np.asarray(head.f_std, dtype=np.float64)
    g["feature_min"] = head.f_min
    g["feature_max"] = head.f_max
    for k, net in enumerate(head.nets):
        for i, layer in enumerate(l for l in net if isinstance(l, torch.nn.Linear)):
            g["member%d/fc%d.weight" % (k, i)] = layer.weight.detach().double().numpy()
            g["member%d/fc%d.bias" % (k, i)] = layer.bias.detach().double().numpy()


def write_model_copy(model, variable, out, write):
    """A copy of the model file `model` (whose variable must be `variable`), changed by
    write(open h5py file), renamed into `out`: a failure leaves no file."""
    try:
        m = h5py.File(model, "r")
    except OSError as e:
        raise ValueError("%s: %s" % (model, e))
    with m:
        if m.attrs.get("variable") not in (variable.encode(), variable):
            raise ValueError("%s: variable: this head belongs in a %s model file"
                             % (model, variable))
    tmp = out + ".tmp.%d" % os.getpid()
    try:
        shutil.copyfile(model, tmp)
        with h5py.File(tmp, "r+") as f:
            write(f)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_group(path, group):
    """The head stored as `group` of a model file, or None."""
    with h5py.File(path, "r") as f:
        if group not in f:
            return None
        g = f[group]
        nets = []
        for k in range(int(g.attrs["members"])):
            w = [g["member%d/fc%d.weight" % (k, i)][()] for i in range(3)]
            net = mlp(w[0].shape[1], w[0].shape[0], w[2].shape[0]).double()
            for i, layer in enumerate(l for l in net if isinstance(l, torch.nn.Linear)):
                layer.weight.data = torch.tensor(w[i])
                layer.bias.data = torch.tensor(g["member%d/fc%d.bias" % (k, i)][()])
            nets.append(net.eval())
        t_mean, t_std = g.attrs["target_mean"], g.attrs["target_std"]
        if np.ndim(t_mean) == 0:
            t_mean, t_std = float(t_mean), float(t_std)
        return Head(nets, g["feature_mean"][()], g["feature_std"][()], t_mean, t_std,
                    g["feature_min"][()], g["feature_max"][()])


def head_args(tool, doc, variable, argv=None, extra=()):
    """The arguments every head trainer shares, parsed and checked: --data, --model (a `variable`
    model file), --out, the fit's settings, and `extra` ((flags, keywords) for add_argument).
    Each refusal is one line "tool: ..."."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--data", required=True)
    for flags, kw in extra:
        p.add_argument(*flags, **kw)
    p.add_argument("--model", required=True, help="the %s model file the head goes with" % variable)
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
            sys.exit("%s: %s must be in [%d, %d]" % (tool, name, lo, hi))
    if not (a.weight_decay >= 0 and np.isfinite(a.weight_decay)) or a.limit < 0:
        sys.exit("%s: --weight-decay and --limit must be finite and >= 0" % tool)
    try:  # every path option but --out is an input (--data, --model, a head's own files)
        check_output(a.out, [v for k, v in vars(a).items() if k != "out" and isinstance(v, str)])
    except ValueError as e:
        sys.exit("%s: %s" % (tool, e))
    return a


def train_cli(tool, doc, variable, load, write, score, argv=None, extra=()):
    """The command line every head trainer shares (head_args). load(args) -> (features, targets,
    split names); write(args, head, grid) writes the head into a copy of --model at --out;
    score(predictions, targets) -> (estimates, truths) of the KPI printed per split."""
    a = head_args(tool, doc, variable, argv, extra)
    torch.set_num_threads(1)
    try:
        f, target, split = load(a)
        train = split == "train"
        head = fit(f[train], target[train], a.members, a.hidden, a.epochs, a.weight_decay)
        pred = head.predict(f)
        for s in ("train", "val", "test"):
            if (split == s).any():
                print("%s: %s (%d cases, %d inside the ranges): %s"
                      % (tool, s, int((split == s).sum()), int(head.inside(f[split == s]).sum()),
                         summary(*score(pred[split == s], target[split == s]))))
        with h5py.File(a.data, "r") as d:
            grid = d["input"].shape[1:3]
        write(a, head, grid)
    except (OSError, KeyError, ValueError, IndexError) as e:
        sys.exit("%s: %s" % (tool, e))
    print("%s: wrote %s" % (tool, a.out))
