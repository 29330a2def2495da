"""Prediction intervals for the KPI heads (docs/kpis.md, "Intervals"): split conformal on the
log ratio of OPM Flow's KPI to the head's estimate, conditioned on how far a case's features lie
from the head's training cases.

Why: a screening engineer compares a KPI with a limit (a fracture pressure, a lease radius); one
number without an indication of how far off it may be cannot be decided on. The heads' errors
are multiplicative (they estimate log KPI), so the interval is estimate x exp([lo, hi]) with lo
and hi quantiles of r = log(Flow / estimate) over calibration cases the head was not fitted on.
Cases far from the training data err more; with enough calibration cases (MIN_PER_BIN a bin)
they are split into bins of the feature distance (distance below) and each bin has its own
quantiles. A case beyond the farthest
calibration case is flagged: its interval is the last bin's, widened by FAR_WIDENING, and the
programs say it is not to be trusted.

The distance of a case is the root mean square of its features standardised by the head's own
training mean and std (the head group's feature_mean and feature_std): 1 is typical of the
training cases. runtime/KpiHeadEstimator.cpp computes the same.

A head that reads the SG network's own plume radii (plume_radius.py --field-radii) also scales
its interval per case by how far it departs from the network (SCALES below): where the two
agree the case is like the calibration cases, where they part (a formation or completion unlike
the training data's, measured on a layer-cake family and short off-centre completions) the
head's error grows with the gap. The quantiles are then of r / scale, and a case's bounds are
estimate x exp([lo, hi] x scale): still split conformal (the score is r / scale, a function
of the case's inputs only), so the coverage guarantee on exchangeable cases stands.

Stored as attributes of a head group (docs/model-format.md): interval_coverage (0.9),
interval_distance_edges (bins - 1 increasing distances), interval_log_lo and interval_log_hi
((bins, outputs) flattened row-major), interval_distance_limit and interval_calibration (what
the quantiles were computed on, in words); with a scale, interval_scale (its name in SCALES)
and interval_scale_floor.
"""
import numpy as np

COVERAGE = 0.9
FAR_WIDENING = 2.0   # log-width factor beyond the farthest calibration case
# A bin needs this many calibration cases for its own quantiles: with 186 validation cases in
# three bins of 62, the 5 % and 95 % quantiles were noisy enough that one bin covered held-out
# sets better (max dP on three sets: 91-95 % against 83-95 %, 2026-11-27).
MIN_PER_BIN = 200
# The per-case scales an interval may carry: name -> what the head's inputs must hold. A floor
# keeps the interval from collapsing where head and network agree by chance; 0.05 gave 87-97 %
# coverage on the three held-out sets of docs/accuracy.md where the plain interval held 70-100 %
# (2026-11-27, calibrated on the 186 validation cases).
FIELD_RADIUS_DISAGREEMENT = "field_radius_disagreement"
SCALES = (FIELD_RADIUS_DISAGREEMENT,)
SCALE_FLOOR = 0.05


def field_radius_disagreement(estimate, log_field_radius, floor=SCALE_FLOOR):
    """(N,) floor + the RMS over report times of log(head's radius / network's radius): estimate
    (N, K) the head's radii, log_field_radius (N, K) the head's own inputs (log of the network's
    radius, floored at 1 m). runtime/KpiHeadEstimator.cpp computes the same."""
    gap = np.log(np.asarray(estimate, np.float64)) - np.asarray(log_field_radius, np.float64)
    return floor + np.sqrt((gap * gap).mean(1))


def feature_distance(f, f_mean, f_std):
    """(N,) RMS of the standardised features of f (N, F) (only the first len(f_mean) columns)."""
    f = np.asarray(f, np.float64)[:, :len(f_mean)]
    z = (f - np.asarray(f_mean, np.float64)) / np.asarray(f_std, np.float64)
    return np.sqrt((z * z).mean(1))


def conformal_quantiles(r, coverage=COVERAGE):
    """(lo, hi) per output of residuals r (N,) or (N, K), finite-sample split-conformal: the
    ceil((n + 1)(1 + coverage) / 2)-th smallest for hi and its mirror for lo, so that a new case
    exchangeable with the calibration cases falls inside with probability >= coverage."""
    r = np.asarray(r, np.float64)
    r = r.reshape(len(r), -1)
    n = len(r)
    if n < 2:
        raise ValueError("need at least two calibration cases")
    tail = (1 - coverage) / 2
    k_hi = min(n, int(np.ceil((n + 1) * (1 - tail) - 1e-9)))  # rounding: 0.1 / 2 is 0.04999..
    k_lo = max(1, int(np.floor((n + 1) * tail + 1e-9)))
    s = np.sort(r, axis=0)
    return s[k_lo - 1], s[k_hi - 1]


def distance_edges(d, bins):
    """Inner edges splitting distances d into `bins` groups of about equal size."""
    return np.quantile(d, np.linspace(0, 1, bins + 1)[1:-1]) if bins > 1 else np.zeros(0)


def calibrate(estimate, truth, distance, coverage=COVERAGE, bins=None, scale=None,
              scale_name=None, scale_floor=None):
    """The interval of a head from calibration cases: estimate and truth (N,) or (N, K), > 0 where
    used (cases with a non-positive or non-finite value in an output are left out of that
    output), distance (N,). bins: None picks as many as MIN_PER_BIN allows, at most 3. scale:
    (N,) positive per-case scales (scale_name and scale_floor say which, for the attributes), or
    None. Returns a dict of the group attributes."""
    est = np.asarray(estimate, np.float64).reshape(len(distance), -1)
    tru = np.asarray(truth, np.float64).reshape(len(distance), -1)
    d = np.asarray(distance, np.float64)
    sc = np.ones(len(d)) if scale is None else np.asarray(scale, np.float64).reshape(-1)
    if not (np.all(np.isfinite(sc)) and np.all(sc > 0)):
        raise ValueError("interval scales must be positive and finite")
    if bins is None:
        bins = int(max(1, min(3, len(d) // MIN_PER_BIN)))
    edges = distance_edges(d, bins)
    which = np.searchsorted(edges, d, side="right")
    lo = np.zeros((bins, est.shape[1]))
    hi = np.zeros((bins, est.shape[1]))
    for b in range(bins):
        for k in range(est.shape[1]):
            ok = (which == b) & (est[:, k] > 0) & (tru[:, k] > 0) & np.isfinite(est[:, k]) & \
                np.isfinite(tru[:, k])
            if ok.sum() < 2:  # too few here: the whole set's
                ok = (est[:, k] > 0) & (tru[:, k] > 0)
            lo[b, k], hi[b, k] = conformal_quantiles(np.log(tru[ok, k] / est[ok, k]) / sc[ok],
                                                     coverage)
    # A farther bin is never narrower than a nearer one: errors grow with distance.
    for b in range(1, bins):
        lo[b] = np.minimum(lo[b], lo[b - 1])
        hi[b] = np.maximum(hi[b], hi[b - 1])
    out = {"interval_coverage": float(coverage), "interval_distance_edges": edges,
           "interval_log_lo": lo.reshape(-1), "interval_log_hi": hi.reshape(-1),
           "interval_distance_limit": float(d.max())}
    if scale is not None:
        if scale_name not in SCALES or not scale_floor or scale_floor <= 0:
            raise ValueError("a scaled interval needs a scale name of %s and a floor > 0"
                             % (SCALES,))
        out["interval_scale"] = scale_name
        out["interval_scale_floor"] = float(scale_floor)
    return out


def interval(attrs, estimate, distance, scale=None):
    """(lo, hi, far) of estimates (N,) or (N, K) at distances (N,) by the stored attributes;
    far: beyond the farthest calibration case (the interval widened by FAR_WIDENING). scale (N,):
    the cases' scales, required when the attributes name one."""
    est = np.asarray(estimate, np.float64)
    scalar = est.ndim == 1
    est = est.reshape(len(distance), -1)
    edges = np.asarray(attrs["interval_distance_edges"], np.float64).reshape(-1)
    lo = np.asarray(attrs["interval_log_lo"], np.float64).reshape(len(edges) + 1, -1)
    hi = np.asarray(attrs["interval_log_hi"], np.float64).reshape(len(edges) + 1, -1)
    d = np.asarray(distance, np.float64)
    b = np.searchsorted(edges, d, side="right")
    far = d > float(attrs["interval_distance_limit"])
    w = np.where(far, FAR_WIDENING, 1.0)[:, None]
    if "interval_scale" in attrs:
        if scale is None:
            raise ValueError("this interval is scaled per case: give the cases' scales")
        w = w * np.asarray(scale, np.float64).reshape(-1, 1)
    out_lo = est * np.exp(lo[b] * w)
    out_hi = est * np.exp(hi[b] * w)
    if scalar:
        out_lo, out_hi = out_lo[:, 0], out_hi[:, 0]
    return out_lo, out_hi, far


def coverage_report(lo, hi, truth, estimate):
    """The share of cases with a positive truth that lies in [lo, hi] (an estimate of 0, say no
    area of review where Flow has one, counts like any other), and the median width in % of the
    estimate over those with a positive estimate."""
    lo, hi, t, e = (np.asarray(a, np.float64).reshape(-1) for a in (lo, hi, truth, estimate))
    ok = np.isfinite(t) & (t > 0) & np.isfinite(lo) & np.isfinite(hi)
    inside = (t[ok] >= lo[ok]) & (t[ok] <= hi[ok])
    w = ok & (e > 0)
    return {"cases": int(ok.sum()), "coverage": float(inside.mean()) if ok.any() else float("nan"),
            "median_width_pct": float(np.median((hi[w] - lo[w]) / e[w]) * 100)
            if w.any() else float("nan")}
