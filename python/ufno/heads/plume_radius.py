#!/usr/bin/python3
"""Train the plume-radius head and store it in an SG model file (docs/kpis.md, "KPI heads").

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.plume_radius_head --data train.h5 --model SG.h5 --out SG_WITH_HEAD.h5
      [--field-radii] [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4]
      [--limit N]

Why: the plume radius a user reads (plume_radius_m_<y>yr, and the area pi r^2) is where the gas
saturation falls through 0.01. The SG network smears the sharp front Flow computes: read from
its field, the radius at 30 years is high by a median 13 % on the validation cases (off by a
median 17 %). A head fitted to Flow's own radii of the training cases has no such bias.

The targets are Flow's plume radii at every report time of the data set, by the rule of
screening/Kpis.cpp (docs/kpis.md): gas above the threshold connected to the perforated cells, the
front interpolated between cell centres per layer, the farthest layer, the running maximum over
time. The mass cap is left out: Flow's gas never exceeds the injected mass. A radius below
1 m is fitted as 1 m. The head (python/ufno/heads/common.py) predicts log(radius) at each report time;
the group stores those times and the threshold, and the C++ programs use the head only for runs
at those times and that threshold.

With --field-radii the head also reads the SG network's own plume radius at every report time
(the same rule on the network's field, log, 1 m at least): the network sees the whole
permeability field, the 32 features only summaries of it, so the head corrects the field's
radius rather than replacing it. Such a head belongs to one network, like the dP-envelope head:
the group stores the network's digest (kpi_head.network_digest) and the programs do not use it
with another. The network runs over every case here, on one thread.

The result is a copy of --model with group /plume_radius_head added (docs/model-format.md),
written to a temporary name and renamed: a failure leaves no file.
"""

import numpy as np
import torch
from ufno.heads import common as kpi_head
from ufno.data import encoding as ufno_encoding
from ufno.conversion import model_file as ufno_model_file
from ufno.data.cases import radial_widths

GROUP = "plume_radius_head"
THRESHOLD = 0.01
MIN_RADIUS_M = 1.0
TARGET = ("log(plume radius in m) at report time k = target_mean[k] + target_std[k] * "
          "mean of members[k]")


def connected_to_perforations(inside, perf):
    """inside (T, X, Y) bool, perf (X,) bool -> the cells of `inside` connected (layer and radial
    neighbours) to a perforated cell of the well column, as screening/Kpis.cpp."""
    mask = np.zeros_like(inside)
    mask[:, :, 0] = inside[:, :, 0] & perf[None, :]
    while True:
        grown = mask.copy()
        grown[:, 1:, :] |= mask[:, :-1, :]
        grown[:, :-1, :] |= mask[:, 1:, :]
        grown[:, :, 1:] |= mask[:, :, :-1]
        grown[:, :, :-1] |= mask[:, :, 1:]
        grown &= inside
        if np.array_equal(grown, mask):
            return mask
        mask = grown


def plume_radii(sg, active, perf, swi, dr, threshold=THRESHOLD):
    """The plume radius [m] of an SG field (Flow's or a network's) at each report time, its
    running maximum, in double precision as screening/Kpis.cpp. sg (X, Y, T), active (X, Y), perf
    (X,), dr (Y,) radial widths."""
    r_out = np.cumsum(np.asarray(dr, np.float64))
    r_in = r_out - dr
    centre = (r_in + r_out) / 2
    sg = np.moveaxis(np.asarray(sg, np.float64), -1, 0)
    v = np.where(active[None], np.clip(sg, 0.0, 1.0 - swi), 0.0)
    mask = connected_to_perforations(active[None] & (v > threshold), perf)
    T, X, Y = v.shape
    last = Y - 1 - np.argmax(mask[..., ::-1], axis=-1)  # (T, X)
    has = mask.any(-1)
    nxt = np.minimum(last + 1, Y - 1)
    a = np.take_along_axis(v, last[..., None], -1)[..., 0]
    b = np.take_along_axis(v, nxt[..., None], -1)[..., 0]
    interp = (last + 1 < Y) & active[np.arange(X)[None, :], nxt]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(a > b, np.clip((a - threshold) / (a - b), 0.0, 1.0), 1.0)
    r = np.where(interp, centre[last] + frac * (centre[nxt] - centre[last]), r_out[last])
    radius = np.where(has, r, 0.0).max(1)
    return np.maximum.accumulate(radius)


def network_radii(net, attrs, x):
    """The plume radii (N, T) of the network's physical SG prediction for encoded inputs x
    (N, X, Y, T, C), by plume_radii, at least MIN_RADIUS_M."""
    try:
        sg = ufno_encoding.physical_output("SG", ufno_model_file.predict(net, attrs, x), x)
    except RuntimeError as e:  # a grid the network's layers cannot take
        raise ValueError("input: the network cannot run on this grid: %s"
                         % str(e).splitlines()[0])
    radii = [plume_radii(sg[i], x[i, ..., 0, 0] != 0, x[i, :, 0, 0, 3] > 0,
                         0.1 + 0.2 * float(x[i, 0, 0, 0, 7]), radial_widths())
             for i in range(len(x))]
    return np.maximum(np.array(radii), MIN_RADIUS_M)


def inputs(x0, field_radii=None):
    """The head's inputs: the 32 case features, then (a head with field radii) the log of the
    network's plume radius at each report time."""
    f = kpi_head.features(x0)
    if field_radii is None:
        return f
    return np.concatenate([f, np.log(np.maximum(field_radii, MIN_RADIUS_M))], 1)


def load_data(path, limit=0, model=None, batch=16):
    """Inputs, Flow's plume radii (N, T), report times and split names. With `model` (an SG
    model file) the inputs include that network's plume radii (inputs)."""
    net = None
    if model is not None:
        net, attrs = ufno_model_file.read_model_file(model, dtype=torch.float32)
        if attrs.get("variable") not in (b"SG", "SG"):
            raise ValueError("%s: variable: this head belongs in an SG model file" % model)
    with kpi_head.open_data(path) as f:
        n = kpi_head.case_count(f, limit)
        x0 = f["input"][:n, :, :, 0, :]
        if x0.shape[2] != len(radial_widths()):
            raise ValueError("%s: input: %d radial cells, but the data set's grid has %d"
                             % (path, x0.shape[2], len(radial_widths())))
        times = f["TIMES"][()]
        radii = np.empty((n, len(times)))
        for i in range(n):
            act = x0[i, ..., 0] != 0
            perf = x0[i, :, 0, 3] > 0
            swi = 0.1 + 0.2 * float(x0[i, 0, 0, 7])
            radii[i] = plume_radii(f["SG"][i], act, perf, swi, radial_widths())
        field = None
        if net is not None:
            field = np.concatenate([network_radii(net, attrs, f["input"][i:min(i + batch, n)])
                                    for i in range(0, n, batch)])
        split = kpi_head.split_names(f, n)
    return inputs(x0, field), np.maximum(radii, MIN_RADIUS_M), times, split


def head_attrs(times, field_radii_of=None):
    """The group's attributes: report times and threshold; for a head that reads the field's
    radii, the floor under their logarithm and the digest of the network (a model file)."""
    attrs = {"times_days": np.asarray(times, np.float64), "sg_threshold": float(THRESHOLD)}
    if field_radii_of is not None:
        attrs["field_plume_radius_floor_m"] = float(MIN_RADIUS_M)
        attrs["network_digest"] = kpi_head.network_digest(field_radii_of)
    return attrs


def input_names(times, field_radii):
    extra = kpi_head.field_radius_feature_names(len(times)) if field_radii else []
    return kpi_head.FEATURES + extra


def write_head(head, grid, times, model, out, field_radii=False):
    attrs = head_attrs(times, model if field_radii else None)
    names = input_names(times, field_radii)
    kpi_head.write_model_copy(
        model, "SG", out,
        lambda f: kpi_head.write_group(f, GROUP, head, grid, TARGET, attrs, names))


def read_head(path):
    """The head stored in an SG model file, or None."""
    return kpi_head.read_group(path, GROUP)


def main(argv=None):
    times = []

    def load(a):
        f, radii, t, split = load_data(a.data, a.limit, a.model if a.field_radii else None)
        times.append(t)
        return f, radii, split

    # Scored at the last report, on the running maximum the programs report.
    kpi_head.train_cli(
        "plume_radius_head", __doc__, "SG", load,
        lambda a, head, grid: write_head(head, grid, times[0], a.model, a.out, a.field_radii),
        lambda pred, radii: (np.maximum.accumulate(pred, axis=1)[:, -1], radii[:, -1]), argv,
        extra=[(("--field-radii",), {"action": "store_true",
                                     "help": "also read the network's own plume radii"})])

if __name__ == "__main__":
    main()
