"""The dP field's peak made the maximum dP a user reads, as the programs do it
(runtime/DpPeakMatch.cpp, the C++ twin; docs/kpis.md, "The field's peak").

After the field-scale head, each case's dP field is mapped so that its largest value over the
formation and the report times is the maximum-dP head's estimate H:
  dp' = dp (1 + a w^p),  a = H / M - 1,  w = clip(dp / M, 0, 1),  M the field's maximum,
with p = SHARPNESS, lowered to -1/a - 1 when the peak comes down (a < 0) so that the map stays
increasing, and H is held within [M / 4, 4 M]. The head needs the whole case (layer thicknesses, the r-z physics estimates), which
the encoded input does not hold: `matched` takes the case files' values."""

import h5py
import numpy as np

from ufno.heads import common as kpi_head
from ufno.heads import max_dp as max_dp_head
from ufno.heads import physics as ph

SHARPNESS = 16.0
RATIO_RANGE = (0.25, 4.0)  # the peak is moved by at most these factors


def exponent(field_max, target):
    a = target / field_max - 1.0
    return SHARPNESS if a >= 0 else min(SHARPNESS, -1.0 / a - 1.0)


def matched_values(dp, field_max, target):
    """The map of an array of dP values (float32 in, float32 out, the sums in float64)."""
    a = target / field_max - 1.0
    w = np.clip(np.asarray(dp, np.float64) / field_max, 0.0, 1.0)
    return (dp * (1.0 + a * w ** exponent(field_max, target))).astype(np.float32)


def head_estimate(model, case, x0, times_days=None):
    """The maximum dP [bar] the dP model file's maximum-dP head gives for one case (a dict of
    cases.read_case_h5) with its encoded input x0 (X, Y, C) at the first report time, or None
    (no head, one that reads the network's envelope, a case outside its ranges, physics not
    finite)."""
    return head_estimates(model, [case], np.asarray(x0)[None], times_days)[0]


def head_estimates(model, cases, x0, times_days=None):
    """head_estimate for several cases at once (x0 (N, X, Y, C)): a list of N estimates or Nones.
    The r-z solves of the head's last inputs run over the cases together, as the programs run a
    pass's cases; one case at a time the buoyancy-aware solve takes about four times as long a
    case."""
    head = max_dp_head.read_head(model)
    if head is None:
        return [None] * len(cases)
    with h5py.File(model, "r") as f:
        attrs = f[max_dp_head.GROUP].attrs
        if "envelope_columns" in attrs or "field_plume_radius_floor_m" in attrs:
            return [None] * len(cases)
        physics = attrs.get("physics_inputs") in (b"max_dp", "max_dp")
    f = kpi_head.features(np.asarray(x0))
    scale = np.ones(len(cases))
    if physics:
        ds = [ph.from_case(c) for c in cases]
        extra, scale = map(np.array, zip(*(ph.max_dp_physics_features(d, times_days) for d in ds)))
        option = max_dp_head.implicit_option(model)
        if option:   # its last inputs: an implicit estimate, or a summary of one
            extra = np.concatenate(
                [extra, ph.extra_features(ds, ph.EXTRA_INPUTS[option], times_days)], 1)
        f = np.concatenate([f, extra], 1)
    usable = head.inside(f) & np.isfinite(scale) & (scale > 0)
    est = head.predict(f).reshape(-1) * scale
    return [float(e) if ok else None for e, ok in zip(est, usable)]


def matched(model, x, pred, cases, times_days=None):
    """pred (N, X, Y, T), the dP field after the field-scale head (dp_field_scale.corrected), for
    the encoded x (N, X, Y, T, C) of the case files' values `cases`, as the programs write it."""
    out = np.array(pred, np.float32, copy=True)
    estimates = head_estimates(model, cases, x[:, :, :, 0, :], times_days)
    for b, h in enumerate(estimates):
        active = x[b, :, :, 0, 0] != 0
        field_max = float(np.max(np.where(active[..., None], out[b], -np.inf)))
        if h is None or not field_max > 0:
            continue
        h = min(max(h, RATIO_RANGE[0] * field_max), RATIO_RANGE[1] * field_max)
        out[b] = matched_values(out[b], field_max, h)
    return out
