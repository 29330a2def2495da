"""The training data's profile in a model file, and how far a case lies from it (docs/kpis.md,
"Distance from the training data").

Why: a network or a KPI head is only as good as the data it was fitted on; a case whose rate,
completion or formation lies beyond what that data held gets numbers nobody measured. The
profile is a few statistics of each training case, the scalars a user sets and summaries of the
fields, with their quantiles over the training cases, stored in the model file beside the
network. The programs compute the same statistics of every case (runtime/TrainingStatistics.cpp)
and say which lie beyond the training data's range (the KPIs' intervals are then widened and
flagged) or in its outer 1 % (a warning).

Statistics are computed from the encoded input at the first report time (io/CaseEncoding.cpp,
python/ufno/data/encoding.py): the values the network reads. STATISTICS below is their table:
name, unit, and the function of the case's decoded arrays; runtime/TrainingStatistics.cpp
computes the same, in double precision from the float32 channels.

Stored as group /training_profile of a model file (docs/model-format.md): attribute
`statistics` (comma-separated names), `levels` (the quantile levels, QUANTILE_LEVELS), `data`
(what the cases were, in words) and `cases`; float64 datasets `quantiles` (S, len(levels)),
`mean` (S), `inverse_covariance` (S, S) and `distance_quantiles` (len(levels)): the joint
(Mahalanobis) distance of the training cases themselves at the levels.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.training_profile --pack PACK --model M.h5 --out O.h5
      [--split train] [--description TEXT]
"""
import argparse
import math
import sys

import h5py
import numpy as np

from ufno.data.encoding import decoded_rate
from ufno.data.output_path import check_output

GROUP = "training_profile"
QUANTILE_LEVELS = (0.0, 0.005, 0.5, 0.995, 1.0)
# "Beyond the range" starts this share of the range (maximum - minimum) outside it: the packs
# hold their inputs in float16, and a case at the sampler's own bound must not be flagged.
RANGE_TOLERANCE = 0.01
LN10 = math.log(10.0)
# A variance per cell at or below this is none (a homogeneous formation): the C++ twin sums
# moments in one pass, whose rounding leaves about 1e-14 where there is no variance.
ZERO_VARIANCE = 1e-10


def _decoded(x0):
    """Per case: the arrays the statistics read from encoded inputs x0 (N, X, Y, >= 9)."""
    x0 = np.asarray(x0, np.float64)
    act = x0[..., 0] != 0
    return {
        "x0": x0, "act": act,
        "ln_kx": np.where(act, 15.0 * x0[..., 0], 0.0),
        "ln_kz": np.where(act, 15.0 * x0[..., 1], 0.0),
        "poro": np.where(act, x0[..., 2], 0.0),
        "perf": x0[:, :, 0, 3] > 0,
        "well_act": act[:, :, 0],
    }


def _masked_mean(v, m, axes):
    return (v * m).sum(axes) / np.maximum(m.sum(axes), 1)


def _masked_std(v, m, axes):
    mean = _masked_mean(v, m, axes)
    shape = [v.shape[0]] + [1] * (v.ndim - 1)
    d = (v - mean.reshape(shape)) * m
    return np.sqrt((d * d).sum(axes) / np.maximum(m.sum(axes), 1))


def _perforation_position(d):
    """Mean perforated layer within the formation at the well: 0 its top, 1 its bottom."""
    layer = np.arange(d["perf"].shape[1], dtype=np.float64)[None, :]
    act = d["well_act"]
    top = np.where(act, layer, np.inf).min(1)
    bottom = np.where(act, layer, -np.inf).max(1)
    mean = (d["perf"] * layer).sum(1) / np.maximum(d["perf"].sum(1), 1)
    span = np.maximum(bottom - top, 1.0)
    return np.clip((mean - top) / span, 0.0, 1.0)


def _lateral_fraction(d):
    """Share of ln kx's variance over the formation found along the layers (within each layer):
    1 for lateral variation only, 0 for a layer-cake or a homogeneous formation."""
    act, v = d["act"], d["ln_kx"]
    n_layer = act.sum(2)
    mean_layer = v.sum(2) / np.maximum(n_layer, 1)
    within = (((v - mean_layer[..., None]) * act) ** 2).sum((1, 2))
    total_mean = _masked_mean(v, act, (1, 2))
    total = (((v - total_mean[:, None, None]) * act) ** 2).sum((1, 2))
    some = total > ZERO_VARIANCE * np.maximum(act.sum((1, 2)), 1)
    return np.where(some, within / np.maximum(total, 1e-300), 0.0)


def _kx_porosity_correlation(d):
    act, k, p = d["act"], d["ln_kx"], d["poro"]
    km, pm = _masked_mean(k, act, (1, 2)), _masked_mean(p, act, (1, 2))
    dk = (k - km[:, None, None]) * act
    dp = (p - pm[:, None, None]) * act
    sk, sp = np.sqrt((dk * dk).sum((1, 2))), np.sqrt((dp * dp).sum((1, 2)))
    n = np.maximum(act.sum((1, 2)), 1)
    ok = (sk * sk > ZERO_VARIANCE * n) & (sp * sp > ZERO_VARIANCE * n)
    return np.where(ok, (dk * dp).sum((1, 2)) / np.maximum(sk * sp, 1e-300), 0.0)


# name, unit, function of the decoded case arrays -> (N,)
STATISTICS = (
    ("INJ_RATE", "Mt/yr", lambda d: decoded_rate(d["x0"][:, 0, 0, 4])),
    ("TEMP", "degC", lambda d: 30.0 + 150.0 * d["x0"][:, 0, 0, 5]),
    ("PRESSURE", "bar", lambda d: 100.0 + 200.0 * d["x0"][:, 0, 0, 6]),
    ("SWI", "", lambda d: 0.1 + 0.2 * d["x0"][:, 0, 0, 7]),
    ("VG_LAMBDA", "", lambda d: 0.3 + 0.4 * d["x0"][:, 0, 0, 8]),
    ("formation_layers", "layers", lambda d: d["well_act"].sum(1).astype(np.float64)),
    ("perforated_layers", "layers", lambda d: d["perf"].sum(1).astype(np.float64)),
    ("perforation_position", "0 top, 1 bottom", _perforation_position),
    ("log10_permx_mean", "log10 mD", lambda d: _masked_mean(d["ln_kx"], d["act"], (1, 2)) / LN10),
    ("log10_permx_std", "log10 mD", lambda d: _masked_std(d["ln_kx"], d["act"], (1, 2)) / LN10),
    ("permx_lateral_fraction", "", _lateral_fraction),
    ("log10_kz_kx_mean", "", lambda d: _masked_mean(d["ln_kz"] - d["ln_kx"], d["act"], (1, 2)) /
     LN10),
    ("porosity_mean", "", lambda d: _masked_mean(d["poro"], d["act"], (1, 2))),
    ("porosity_std", "", lambda d: _masked_std(d["poro"], d["act"], (1, 2))),
    ("permx_porosity_correlation", "", _kx_porosity_correlation),
)
NAMES = tuple(s[0] for s in STATISTICS)


def statistics(x0):
    """(N, S) float64 statistics of encoded inputs x0 (N, X, Y, C) at the first report time."""
    d = _decoded(x0)
    return np.stack([f(d) for _, _, f in STATISTICS], 1)


def quantiles(stats):
    """(S, len(QUANTILE_LEVELS)) quantiles over the cases of stats (N, S)."""
    stats = np.asarray(stats, np.float64)
    if len(stats) < 2 or not np.all(np.isfinite(stats)):
        raise ValueError("a profile needs at least two cases with finite statistics")
    return np.quantile(stats, QUANTILE_LEVELS, axis=0).T


def joint_model(stats):
    """(mean (S,), inverse covariance (S, S)) of the training cases' statistics: the joint
    distance reads how the statistics vary together (a layer-cake formation whose porosity does
    not follow its permeability is inside every single range and far from the training data)."""
    stats = np.asarray(stats, np.float64)
    return stats.mean(0), np.linalg.pinv(np.cov(stats.T))


def joint_distance(mean, inv_cov, stats):
    """(N,) Mahalanobis distance of stats (N, S) from the training cases."""
    d = np.asarray(stats, np.float64) - np.asarray(mean, np.float64)
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", d, np.asarray(inv_cov), d), 0.0))


def deviations(q, stats):
    """Per case (N, S): 2 beyond the training range (below the minimum or above the maximum by
    more than RANGE_TOLERANCE of the range), 1 in its outer 1 % (beyond the 0.5 % or 99.5 %
    quantile), 0 inside."""
    q = np.asarray(q, np.float64)
    s = np.asarray(stats, np.float64)
    pad = RANGE_TOLERANCE * (q[:, 4] - q[:, 0])
    out = np.where((s < q[:, 1]) | (s > q[:, 3]), 1, 0)
    return np.where((s < q[:, 0] - pad) | (s > q[:, 4] + pad), 2, out)


def profile(stats):
    """The profile of training cases' statistics (N, S): a dict of what write() stores."""
    mean, inv_cov = joint_model(stats)
    return {"quantiles": quantiles(stats), "mean": mean, "inverse_covariance": inv_cov,
            "distance_quantiles": np.quantile(joint_distance(mean, inv_cov, stats),
                                              QUANTILE_LEVELS)}


def write(f, prof, data, cases):
    """Writes the profile as GROUP of the open h5py file f (replacing one there)."""
    if GROUP in f:
        del f[GROUP]
    g = f.create_group(GROUP)
    g.attrs["statistics"] = ",".join(NAMES)
    g.attrs["levels"] = np.asarray(QUANTILE_LEVELS, np.float64)
    g.attrs["data"] = data
    g.attrs["cases"] = np.int64(cases)
    for k, v in prof.items():
        g[k] = np.asarray(v, np.float64)


def read(path):
    """The profile of a model file (names, levels and write()'s arrays), or None."""
    with h5py.File(path, "r") as f:
        if GROUP not in f:
            return None
        g = f[GROUP]
        names = g.attrs["statistics"]
        out = {k: g[k][()] for k in ("quantiles", "mean", "inverse_covariance",
                                     "distance_quantiles")}
        out["names"] = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
        out["levels"] = np.asarray(g.attrs["levels"])
        return out


def pack_inputs(path, split):
    """Encoded inputs at the first report time (N, X, Y, C) of a pack's cases of `split`."""
    from ufno.data import pack
    from ufno.data.cases import split_of
    _, a = pack.read_pack(path)
    pick = np.array([split == "all" or split_of(int(s), int(i)) == split
                     for s, i in zip(a["seed"], a["index"])])
    if not pick.any():
        raise ValueError("%s: no case of the %s split" % (path, split))
    return a["input_const"][pick].astype(np.float32)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.training_profile",
                                description=__doc__.split("\n")[0])
    p.add_argument("--pack", required=True, help="a training pack (python3 -m ufno.pack)")
    p.add_argument("--model", required=True, help="the model file trained on the pack's data")
    p.add_argument("--out", required=True)
    p.add_argument("--split", default="train", choices=("train", "val", "test", "all"))
    p.add_argument("--description", help="what the cases are, in words (default: the pack)")
    a = p.parse_args(argv)
    try:
        from ufno.data.pack import sha256_of
        from ufno.heads.common import write_model_copy
        check_output(a.out, [a.pack, a.model])
        x0 = pack_inputs(a.pack, a.split)
        prof = profile(statistics(x0))
        what = a.description or "the %d %s cases of %s (SHA-256 %s)" % (
            len(x0), a.split, a.pack, sha256_of(a.pack)[:16])
        with h5py.File(a.model, "r") as m:
            variable = m.attrs["variable"]
        variable = variable.decode() if isinstance(variable, bytes) else str(variable)
        write_model_copy(a.model, variable, a.out, lambda f: write(f, prof, what, len(x0)))
        for name, row in zip(NAMES, prof["quantiles"]):
            print("training_profile: %-28s %s" % (name, np.round(row, 4)))
        print("training_profile: %-28s %s" % ("joint distance",
                                              np.round(prof["distance_quantiles"], 3)))
    except (OSError, KeyError, ValueError) as e:
        sys.exit("training_profile: %s" % str(e).split("\n")[0])
    return 0
