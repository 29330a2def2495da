#!/usr/bin/python3
"""Train the plume-radius head and store it in an SG model file (docs/kpis.md, "KPI heads").

Usage:
  /usr/bin/python3 python/plume_radius_head.py --data train.h5 --model SG.h5 --out SG_WITH_HEAD.h5
      [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4] [--limit N]

Why: the plume radius a user reads (plume_radius_m_<y>yr, and the area pi r^2) is where the gas
saturation falls through 0.01. The SG network smears the sharp front Flow computes: read from
its field, the radius at 30 years is high by a median 13 % on the validation cases (off by a
median 17 %). A head fitted to Flow's own radii of the training cases has no such bias.

The targets are Flow's plume radii at every report time of the data set, by the rule of
apps/Kpis.cpp (docs/kpis.md): gas above the threshold connected to the perforated cells, the
front interpolated between cell centres per layer, the farthest layer, the running maximum over
time. The mass cap is left out: Flow's gas never exceeds the injected mass. A radius below
1 m is fitted as 1 m. The head (python/kpi_head.py) predicts log(radius) at each report time;
the group stores those times and the threshold, and the C++ programs use the head only for runs
at those times and that threshold.

The result is a copy of --model with group /plume_radius_head added (docs/model-format.md),
written to a temporary name and renamed: a failure leaves no file.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kpi_head  # noqa: E402
from ufno_cases import radial_widths  # noqa: E402

GROUP = "plume_radius_head"
THRESHOLD = 0.01
MIN_RADIUS_M = 1.0
TARGET = ("log(plume radius in m) at report time k = target_mean[k] + target_std[k] * "
          "mean of members[k]")


def connected_to_perforations(inside, perf):
    """inside (T, X, Y) bool, perf (X,) bool -> the cells of `inside` connected (layer and radial
    neighbours) to a perforated cell of the well column, as apps/Kpis.cpp."""
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
    """Flow's plume radius [m] at each report time, its running maximum. sg (X, Y, T), active
    (X, Y), perf (X,), dr (Y,) radial widths."""
    r_out = np.cumsum(np.asarray(dr, np.float64))
    r_in = r_out - dr
    centre = (r_in + r_out) / 2
    v = np.where(active[None], np.clip(np.moveaxis(sg, -1, 0), 0.0, 1.0 - swi), 0.0)
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


def load_data(path, limit=0):
    """Features, Flow's plume radii (N, T), report times and split names."""
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
        split = kpi_head.split_names(f, n)
    return kpi_head.features(x0), np.maximum(radii, MIN_RADIUS_M), times, split


def write_head(head, grid, times, model, out):
    attrs = {"times_days": np.asarray(times, np.float64), "sg_threshold": float(THRESHOLD)}
    kpi_head.write_model_copy(
        model, "SG", out, lambda f: kpi_head.write_group(f, GROUP, head, grid, TARGET, attrs))


def read_head(path):
    """The head stored in an SG model file, or None."""
    return kpi_head.read_group(path, GROUP)


def main(argv=None):
    times = []

    def load(a):
        f, radii, t, split = load_data(a.data, a.limit)
        times.append(t)
        return f, radii, split

    # Scored at the last report, on the running maximum the programs report.
    kpi_head.train_cli(
        "plume_radius_head", __doc__, "SG", load,
        lambda a, head, grid: write_head(head, grid, times[0], a.model, a.out),
        lambda pred, radii: (np.maximum.accumulate(pred, axis=1)[:, -1], radii[:, -1]), argv)

if __name__ == "__main__":
    main()
