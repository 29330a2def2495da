#!/usr/bin/python3
"""Train the plume-radius head and store it in an SG model file (docs/kpis.md, "KPI heads").

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.plume_radius_head --data train.h5 --model SG.h5 --out SG_WITH_HEAD.h5
      [--field-radii] [--physics] [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4]
      [--limit N]

Why: the plume radius a user reads (plume_radius_m_<y>yr, and the area pi r^2) is where the gas
saturation falls through 0.01. The SG network smears the sharp front Flow computes: read from
its field, the radius at 30 years is high by a median 13 % on the validation cases (off by a
median 17 %). A head fitted to Flow's own radii of the training cases has no such bias.

The targets are Flow's plume radii at every report time of the data set, by the rule of
runtime/PlumeFront.cpp (docs/kpis.md): gas above the threshold connected to the perforated
cells, the front interpolated between cell centres per layer, the farthest layer, the running
maximum over time. The mass cap is left out: Flow's gas never exceeds the injected mass. A radius below
1 m is fitted as 1 m. The head (python/ufno/heads/common.py) predicts log(radius) at each report time;
the group stores those times and the threshold, and the C++ programs use the head only for runs
at those times and that threshold.

With --field-radii the head also reads the SG network's own plume radius at every report time
(the same rule on the network's field, log, 1 m at least): the network sees the whole
permeability field, the 32 features only summaries of it, so the head corrects the field's
radius rather than replacing it. Such a head belongs to one network, like the dP-envelope head:
the group stores the network's digest (kpi_head.network_digest) and the programs do not use it
with another. The network runs over every case here, on one thread.

With --physics the head also reads, after the 32 case features, the log of the plume radius of
the buoyancy-aware two-phase r-z solve (python/ufno/heads/physics.py
rz_gravity_two_phase_dp_bar: its gas saturation at every report time of the data set by the
same rule as Flow's radii above, 1 m at least), named log_rz_gravity_plume_radius_t<k> for
report time k (physics_inputs = "plume_radius"); with --field-radii as well, the network's radii
after those. The solve moves the CO2 by its buoyancy and its own mobility, so its radius
carries how the gas column spreads under the caprock, which the case features summarise only.
On the 186 validation cases a head on the features and the solve's radii is within 10 % of
Flow's radius in 166 / 164 / 155 / 140 at 1 / 5 / 10 / 30 years, one with the network's radii
as well (the shipped head) in 154 / 148 / 137 / 134, the field-radius head alone in 131 / 126 /
122 / 122; on another generator's cases the network's radii are what keep the head right
(docs/accuracy.md, "The plume radius: head or field"). The solve takes about 1.5 s a case here
(runtime/PressureEstimates.cpp computes the same in C++, faster). The interval is scaled, as a
field-radius head's, by the head's disagreement with the radii it reads last: the network's
where it reads both, else the solve's.

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
PHYSICS = "plume_radius"  # physics_inputs of a head on the buoyancy-aware solve's radius
THRESHOLD = 0.01
MIN_RADIUS_M = 1.0
TARGET = ("log(plume radius in m) at report time k = target_mean[k] + target_std[k] * "
          "mean of members[k]")


def connected_to_perforations(inside, perf):
    """inside (T, X, Y) bool, perf (X,) bool -> the cells of `inside` connected (layer and radial
    neighbours) to a perforated cell of the well column, as runtime/PlumeFront.cpp."""
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
    running maximum, in double precision as runtime/PlumeFront.cpp. sg (X, Y, T), active (X, Y), perf
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


def physics_feature_names(times):
    """The names of a head's inputs on the buoyancy-aware solve's radius, one per report time."""
    return ["log_rz_gravity_plume_radius_t%d" % k for k in range(len(times))]


def gravity_radii(x0, times_days=None, chunk=16):
    """(N, T) the plume radii [m] of the buoyancy-aware two-phase r-z solve's gas saturation
    (physics.rz_gravity_two_phase_dp_bar) for encoded inputs x0 (N, X, Y, >= 9 channels) at the
    first report time, by plume_radii (running maxima), at least MIN_RADIUS_M; about 1.5 s a
    case."""
    from ufno.heads import physics as ph
    cs = [ph.decode(x) for x in np.asarray(x0)]
    ps = [ph.properties(c) for c in cs]
    out = []
    for s in range(0, len(cs), chunk):
        _dp, sat = ph.rz_gravity_two_phase_dp_bar(cs[s:s + chunk], times_days, ps[s:s + chunk])
        for c, sg in zip(cs[s:s + chunk], sat):
            out.append(plume_radii(np.moveaxis(sg, 0, -1), c["active"], c["perf"], c["swi"],
                                   c["dr"]))
    return np.maximum(np.array(out).reshape(len(cs), -1), MIN_RADIUS_M)


def inputs(x0, field_radii=None, physics_radii=None):
    """The head's inputs: the 32 case features, then (a head with physics inputs) the log of the
    buoyancy-aware solve's plume radius at each report time, then (a head with field radii) the
    log of the network's: the network's last, so that an interval scaled by the head's
    disagreement with the radii it reads (calibrate.case_scales) takes the network's where the
    head reads both."""
    parts = [kpi_head.features(x0)]
    for extra in (physics_radii, field_radii):
        if extra is not None:
            parts.append(np.log(np.maximum(extra, MIN_RADIUS_M)))
    return np.concatenate(parts, 1)


def load_data(path, limit=0, model=None, batch=16, physics=False):
    """Inputs, Flow's plume radii (N, T), report times and split names. With `model` (an SG
    model file) the inputs include that network's plume radii, with physics the buoyancy-aware
    solve's at the data set's report times (inputs)."""
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
    solve = gravity_radii(x0, times) if physics else None
    return inputs(x0, field, solve), np.maximum(radii, MIN_RADIUS_M), times, split


def head_attrs(times, field_radii_of=None, physics=False):
    """The group's attributes: report times and threshold; for a head that reads the field's
    radii, the floor under their logarithm and the digest of the network (a model file); for one
    that reads the solve's, physics_inputs."""
    attrs = {"times_days": np.asarray(times, np.float64), "sg_threshold": float(THRESHOLD)}
    if physics:
        attrs["physics_inputs"] = PHYSICS
    if field_radii_of is not None:
        attrs["field_plume_radius_floor_m"] = float(MIN_RADIUS_M)
        attrs["network_digest"] = kpi_head.network_digest(field_radii_of)
    return attrs


def input_names(times, field_radii, physics=False):
    return (kpi_head.FEATURES + (physics_feature_names(times) if physics else []) +
            (kpi_head.field_radius_feature_names(len(times)) if field_radii else []))


def physics_option(model):
    """Whether the plume-radius head of the SG model file reads the buoyancy-aware solve's radii
    (load_data's `physics`): its physics_inputs say so."""
    import h5py
    with h5py.File(model, "r") as f:
        if GROUP not in f:
            return False
        v = f[GROUP].attrs.get("physics_inputs")
    return (v.decode() if isinstance(v, bytes) else v) == PHYSICS


def write_head(head, grid, times, model, out, field_radii=False, physics=False):
    attrs = head_attrs(times, model if field_radii else None, physics)
    names = input_names(times, field_radii, physics)
    kpi_head.write_model_copy(
        model, "SG", out,
        lambda f: kpi_head.write_group(f, GROUP, head, grid, TARGET, attrs, names))


def read_head(path):
    """The head stored in an SG model file, or None."""
    return kpi_head.read_group(path, GROUP)


def main(argv=None):
    times = []

    def load(a):
        f, radii, t, split = load_data(a.data, a.limit, a.model if a.field_radii else None,
                                       physics=a.physics)
        times.append(t)
        return f, radii, split

    # Scored at the last report, on the running maximum the programs report.
    kpi_head.train_cli(
        "plume_radius_head", __doc__, "SG", load,
        lambda a, head, grid: write_head(head, grid, times[0], a.model, a.out, a.field_radii,
                                         a.physics),
        lambda pred, radii: (np.maximum.accumulate(pred, axis=1)[:, -1], radii[:, -1]), argv,
        extra=[(("--field-radii",), {"action": "store_true",
                                     "help": "also read the network's own plume radii"}),
               (("--physics",), {"action": "store_true",
                                 "help": "also read the buoyancy-aware r-z solve's plume radii"})])

if __name__ == "__main__":
    main()
