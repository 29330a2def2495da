#!/usr/bin/python3
"""Train the dP field-scale head and store it in a dP model file; apply it to a dP prediction
(docs/kpis.md, "The dP field-scale head").

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.dp_field_scale_head --data train.h5 --model DP.h5 --out DP_WITH_HEAD.h5
      [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4] [--limit N]

Why: the dP network's field is off by a factor that differs from case to case and from radius to
radius (the far field and the late times, where the pressure is set by the total pore volume,
are what the small network resolves worst). Multiplying each radial column of each case by the
one factor that fits Flow best (least squares over layers and report times) would cut the
validation error of the shipped network by a third; the network cannot know those factors, but
much of them follows from the case and from the network's own field. This head estimates the
factor of every radial column from the same inputs as the dP-envelope head (the 32 case features
of python/ufno/heads/common.py and the network's own envelope at 20 columns), and the programs multiply
the network's field by it before anything else reads the field (ufno_predict, the sweep, the
web page, the KPIs and the other heads).

Targets: per case and radial column, sum(pred * flow) / sum(pred^2) over formation cells and
report times, clipped to SCALE_RANGE; the applied factor is clipped to the same range, so a head
can never scale a field by more than that. A case outside the head's training ranges keeps the
network's field. Because it reads the network's output, the head belongs to one network (its
digest), like the dP-envelope head, and is not applied to another.

The result is a copy of --model with group /dp_field_scale_head added (docs/model-format.md),
written to a temporary name and renamed: a failure leaves no file. Fit it before the
dP-envelope head, which then reads the corrected field.
"""
import functools
import os
import sys

import numpy as np
import torch
from ufno.heads import common as kpi_head
from ufno.data import encoding as ufno_encoding
from ufno.conversion import model_file as ufno_model_file

GROUP = "dp_field_scale_head"
COLUMNS = (0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21, 24, 27, 30, 33, 36, 40, 44, 47)
SCALE_RANGE = (0.25, 4.0)
TARGET = ("log(factor on the network's dP field) at radial column k = "
          "target_mean[k] + target_std[k] * mean of members[k], the factor clipped to [0.25, 4]")


def inputs(x0, network_envelope):
    """The head's inputs: the 32 case features, then the network's log envelope at COLUMNS."""
    return np.concatenate([kpi_head.features(x0),
                           kpi_head.envelope_features(network_envelope, COLUMNS)], 1)


def best_factors(pred, true, active):
    """Per case and radial column, the least-squares factor of pred onto true over formation
    layers and report times, clipped to SCALE_RANGE: (N, X, Y, T) x2, (N, X, Y) -> (N, Y)."""
    m = active[..., None].astype(np.float64)
    num = (pred * true * m).sum((1, 3))
    den = (pred * pred * m).sum((1, 3))
    s = np.where(den > 0, num / np.maximum(den, 1e-300), 1.0)
    return np.clip(s, *SCALE_RANGE)


def factors(head, x0, pred):
    """The head's factor per case and radial column (N, Y); 1 for a case outside its ranges."""
    active = x0[..., 0] != 0
    f = inputs(x0, kpi_head.field_envelope(pred, active))
    s = np.clip(head.predict(f), *SCALE_RANGE)
    s[~head.inside(f)] = 1.0
    return s


def read_head(path):
    """The head stored in a dP model file, or None."""
    st = os.stat(path)
    return _read_head(os.path.realpath(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=16)
def _read_head(path, mtime_ns, size):
    return kpi_head.read_group(path, GROUP)


def corrected(model_path, x, pred):
    """pred (N, X, Y, T), the physical dP output of the network of model_path for the encoded
    x (N, X, Y, T, C), as the programs give it: times the head's factors when the file carries a
    head fitted to this network, else unchanged."""
    head = read_head(model_path)
    if head is None or not belongs_to_network(model_path):
        return pred
    s = factors(head, x[:, :, :, 0, :], pred)
    return pred * s[:, None, :, None].astype(pred.dtype)


def belongs_to_network(model_path):
    st = os.stat(model_path)
    return _belongs(os.path.realpath(model_path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=16)
def _belongs(path, mtime_ns, size):
    """Cached per file version: the digest runs over every weight, and callers apply the head
    batch by batch."""
    import h5py
    with h5py.File(path, "r") as f:
        digest = f[GROUP].attrs.get("network_digest", b"")
    digest = digest.decode() if isinstance(digest, bytes) else str(digest)
    return digest == kpi_head.network_digest(path)


def network_fields(f, path, model, n, batch=25):
    """The dP network of `model` over the first n cases of the open data set f (at `path`), batch
    by batch: yields (i0, i1, x, pred), pred the network's physical dP field (B, X, Y, T) before
    any field-scale head. ValueError naming the file for a model that is not dP or a grid its
    layers cannot take. Shared by the heads that read the network's field."""
    net, attrs = ufno_model_file.read_model_file(model, dtype=torch.float32)
    if attrs.get("variable") not in (b"dP", "dP"):
        raise ValueError("%s: variable: this head belongs in a dP model file" % model)
    for i0 in range(0, n, batch):
        i1 = min(i0 + batch, n)
        x = f["input"][i0:i1]
        try:
            raw = ufno_model_file.predict(net, attrs, x)
        except RuntimeError as e:  # a grid the network's layers cannot take
            raise ValueError("%s: input: %s cannot run on this grid: %s"
                             % (path, model, str(e).splitlines()[0]))
        yield i0, i1, x, ufno_encoding.physical_output("dP", raw, x)


def load_data(path, model, limit=0, batch=25):
    """Inputs, target factors (N, Y), split names, and the data for the report: the network's
    fields and Flow's are kept per case only as the dP metric's sums."""
    with kpi_head.open_data(path) as f:
        n = kpi_head.case_count(f, limit)
        Y = f["input"].shape[2]
        if Y <= COLUMNS[-1]:
            raise ValueError("%s: input: %d radial cells, the head reads column %d"
                             % (path, Y, COLUMNS[-1]))
        x0 = f["input"][:n, :, :, 0, :]
        target, envelope = np.empty((n, Y)), np.empty((n, Y))
        fields = []
        for i0, i1, x, pred in network_fields(f, path, model, n, batch):
            active = x[..., 0, 0] != 0
            pred = pred.astype(np.float64)
            true = f["dP"][i0:i1].astype(np.float64)
            target[i0:i1] = best_factors(pred, true, active)
            envelope[i0:i1] = kpi_head.field_envelope(pred, active)
            fields.append((pred.astype(np.float32), true.astype(np.float32), active))
        split = kpi_head.split_names(f, n)
    if not np.all(np.isfinite(envelope)):
        raise ValueError("%s: input: a radial column without formation cells" % path)
    return inputs(x0, envelope), target, split, fields


def dp_error(pred, true, active):
    """The paper's dP metric (python/ufno/training/train.py pressure_error) per case: (N,)."""
    m = active[..., None]
    scale = np.abs(np.where(m, true, 0)).max(axis=(1, 2), keepdims=True)
    rel = np.abs(pred - true) / np.maximum(scale, 1e-6)
    rel = np.where(m, rel, 0.0)
    return rel.sum((1, 2, 3)) / (np.broadcast_to(m, rel.shape).sum((1, 2, 3)))


def main(argv=None):
    tool = "dp_field_scale_head"
    # Not kpi_head.train_cli: this head is judged by the dP metric before and after, not by a
    # KPI summary, so only the shared arguments are taken from there.
    a = kpi_head.head_args(tool, __doc__, "dP", argv)
    torch.set_num_threads(1)
    try:
        f, target, split, fields = load_data(a.data, a.model, a.limit)
        train = split == "train"
        head = kpi_head.fit(f[train], target[train], a.members, a.hidden, a.epochs,
                            a.weight_decay)
        # The dP metric before and after, per split: what the head is for.
        before, after, i0 = [], [], 0
        with kpi_head.open_data(a.data) as d:
            for pred, true, active in fields:
                x0 = d["input"][i0:i0 + len(pred), :, :, 0, :]
                s = factors(head, x0, pred)
                before.append(dp_error(pred, true, active))
                after.append(dp_error(pred * s[:, None, :, None], true, active))
                i0 += len(pred)
            grid = d["input"].shape[1:3]
        before, after = np.concatenate(before), np.concatenate(after)
        for s in ("train", "val", "test"):
            k = split == s
            if k.any():
                print("%s: %s (%d cases, %d inside the ranges): dP error, mean over cases, %.2f %% -> "
                      "%.2f %%"
                      % (tool, s, int(k.sum()), int(head.inside(f[k]).sum()),
                         100 * before[k].mean(), 100 * after[k].mean()))
        attrs = {"envelope_columns": np.asarray(COLUMNS, np.int32),
                 "envelope_floor_bar": float(kpi_head.ENVELOPE_FLOOR_BAR),
                 "network_digest": kpi_head.network_digest(a.model),
                 "scale_min": SCALE_RANGE[0], "scale_max": SCALE_RANGE[1]}
        names = kpi_head.FEATURES + kpi_head.envelope_feature_names(COLUMNS)
        kpi_head.write_model_copy(
            a.model, "dP", a.out,
            lambda h5: kpi_head.write_group(h5, GROUP, head, grid, TARGET, attrs, names))
    except (OSError, KeyError, ValueError, IndexError) as e:
        sys.exit("%s: %s" % (tool, e))
    print("%s: wrote %s" % (tool, a.out))


if __name__ == "__main__":
    main()
