#!/usr/bin/python3
"""Train the dP-envelope head and store it in a dP model file (docs/kpis.md, "KPI heads").

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.dp_envelope_head --data train.h5 --model DP.h5 --out DP_WITH_HEAD.h5
      [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4] [--limit N]
      [--physics [--gravity-envelope [pore_volume|brine] [--baseline]]]

Why: the area of review a user reads (aor_radius_m) is where the largest dP a radius ever sees
falls through the critical pressure: near the well for most cases (metres to tens of metres,
decided by the first day's spike), kilometres out for the rest (decided by the late far field).
Read from the dP network's field it is off by a median 50 % on the validation cases at 10 bar:
the field smooths the spike and is least accurate late and far out, and a radius where a slowly
falling pressure crosses a threshold magnifies any error. This head estimates the envelope, the
largest dP over report times and layers at every radial column, from the 32 case features of
python/ufno/heads/common.py and the network's own envelope at 20 radial columns: it corrects the field
rather than replacing it. The area of review for any critical pressure is then where the
estimated envelope falls through it.

Because it reads the network's output, the head belongs to one network: the group stores the
digest of the network it was fitted with (kpi_head.network_digest), and the programs do not use
it with another (a new dP network needs this command again).

The targets are Flow's envelopes of the data set; the network's are computed here, on one thread
(about twenty minutes for 4,000 cases).

With --physics the head reads no network output: the physics estimates of the maximum dP and
the single-phase r-z solve's envelope at COLUMNS (physics_inputs = "envelope"). With
--gravity-envelope as well, also the buoyancy-aware two-phase solve's envelope at COLUMNS
(physics.gravity_envelope_bar, about 1.5 s a case here; runtime/PressureEstimates.cpp computes
it in C++), with the CO2 dissolving as its argument names (physics.DISSOLUTION_MODELS):
"pore_volume", the default, is the solve the maximum-dP and plume-radius heads read; "brine"
is a second solve whose far field is closer to Flow's. With --baseline as well, the head
estimates log(Flow's envelope / that solve's envelope) at every column instead of log(Flow's
envelope): the envelope is the solve's times the head's ratio (group attribute
envelope_baseline = "gravity_envelope"), so the head corrects the solve where it is off and
leaves it where it is right, and its interval is of that ratio.

The result is a copy of --model with group
/dp_envelope_head added (docs/model-format.md), written to a temporary name and renamed: a
failure leaves no file.
"""

import numpy as np
from ufno.heads import dp_field_scale as dp_field_scale_head
from ufno.heads import common as kpi_head

GROUP = "dp_envelope_head"
COLUMNS = (0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21, 24, 27, 30, 33, 36, 40, 44, 47)
TARGET = ("log(largest dP in bar over report times and layers) at radial column k = "
          "target_mean[k] + target_std[k] * mean of members[k]")
BASELINE_TARGET = ("log(largest dP over report times and layers / the buoyancy-aware solve's, "
                   "floored at 0.01 bar) at radial column k = target_mean[k] + target_std[k] * "
                   "mean of members[k]")


def inputs(x0, network_envelope):
    """The head's inputs: the 32 case features, then the network's log envelope at COLUMNS."""
    return np.concatenate([kpi_head.features(x0),
                           kpi_head.envelope_features(network_envelope, COLUMNS)], 1)


def load_physics_data(path, limit=0, gravity=False, baseline=False):
    """Inputs of a head with physics inputs (the 32 case features, the maximum-dP physics
    estimates, the r-z solve's envelope at COLUMNS, with gravity (a dissolution model's name)
    also the buoyancy-aware solve's: python/ufno/heads/physics.py), Flow's envelopes (N, Y) and
    split names; no network runs. With baseline, Flow's envelopes over the buoyancy-aware
    solve's (each floored at 0.01 bar), what such a head estimates."""
    from ufno.heads import physics as ph
    with kpi_head.open_data(path) as f:
        n = kpi_head.case_count(f, limit)
        x0 = f["input"][:n, :, :, 0, :]
        active = x0[..., 0] != 0
        flow = np.stack([kpi_head.field_envelope(f["dP"][i:i + 1], active[i:i + 1])[0]
                         for i in range(n)])
        split = kpi_head.split_names(f, n)
    flow = np.maximum(flow, kpi_head.ENVELOPE_FLOOR_BAR)
    if not baseline:
        extra = ph.envelope_physics_features_x0(x0, COLUMNS, gravity=gravity)
        return np.concatenate([kpi_head.features(x0), extra], 1), flow, split
    if not gravity:
        raise ValueError("--baseline: only with --gravity-envelope")
    base = np.maximum(ph.gravity_envelope_x0(x0, dissolution=_dissolution(gravity)),
                      kpi_head.ENVELOPE_FLOOR_BAR)
    extra = ph.envelope_physics_features_x0(x0, COLUMNS)
    return (np.concatenate([kpi_head.features(x0), extra, np.log(base[:, list(COLUMNS)])], 1),
            flow / base, split)


def physics_input_names(gravity=False):
    from ufno.heads import physics as ph
    return (kpi_head.FEATURES + list(ph.PHYSICS_FEATURE_NAMES) +
            ph.rz_envelope_feature_names(COLUMNS) +
            (ph.gravity_envelope_feature_names(COLUMNS, _dissolution(gravity)) if gravity
             else []))


def _dissolution(gravity):
    return "pore_volume" if gravity is True else gravity


def load_data(path, model, limit=0, batch=25):
    """Inputs, Flow's envelopes (N, Y) and split names; the network runs over every case."""
    with kpi_head.open_data(path) as f:
        n = kpi_head.case_count(f, limit)
        Y = f["input"].shape[2]
        if Y <= COLUMNS[-1]:
            raise ValueError("%s: input: %d radial cells, the head reads column %d"
                             % (path, Y, COLUMNS[-1]))
        x0 = f["input"][:n, :, :, 0, :]
        flow, mine = np.empty((n, Y)), np.empty((n, Y))
        for i0, i1, x, raw in dp_field_scale_head.network_fields(f, path, model, n, batch):
            active = x[..., 0, 0] != 0
            flow[i0:i1] = kpi_head.field_envelope(f["dP"][i0:i1], active)
            # What the programs give: the network's field times its field-scale head, if any.
            pred = dp_field_scale_head.corrected(model, x, raw)
            mine[i0:i1] = kpi_head.field_envelope(pred, active)
        split = kpi_head.split_names(f, n)
    if not np.all(np.isfinite(flow)) or not np.all(np.isfinite(mine)):
        raise ValueError("%s: input: a radial column without formation cells" % path)
    return inputs(x0, mine), np.maximum(flow, kpi_head.ENVELOPE_FLOOR_BAR), split


def gravity_option(model):
    """Which dissolution model's buoyancy-aware envelope the dP-envelope head of the dP model
    file `model` reads, False for none (load_physics_data's `gravity`): its input names say
    so."""
    import h5py
    from ufno.heads import physics as ph
    with h5py.File(model, "r") as f:
        if GROUP not in f:
            return False
        names = f[GROUP].attrs.get("features", "")
    names = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
    for dissolution in ph.GRAVITY_ENVELOPE_PREFIXES:
        if ph.gravity_envelope_feature_names(COLUMNS, dissolution)[0] in names:
            return dissolution
    return False


def baseline_option(model):
    """Whether the dP-envelope head of the dP model file `model` estimates Flow's envelope over
    the buoyancy-aware solve's (load_physics_data's `baseline`)."""
    import h5py
    with h5py.File(model, "r") as f:
        if GROUP not in f:
            return False
        v = f[GROUP].attrs.get("envelope_baseline", "")
    return (v.decode() if isinstance(v, bytes) else str(v)) == "gravity_envelope"


def network_attrs(model):
    """The attributes of a head that reads this dP network's envelope at COLUMNS."""
    return {"envelope_columns": np.asarray(COLUMNS, np.int32),
            "envelope_floor_bar": float(kpi_head.ENVELOPE_FLOOR_BAR),
            "network_digest": kpi_head.network_digest(model)}


def input_names():
    return kpi_head.FEATURES + kpi_head.envelope_feature_names(COLUMNS)


def write_head(head, grid, model, out, physics=False, gravity=False, baseline=False):
    attrs, names = ((({"physics_inputs": "envelope"}, physics_input_names(gravity)) if physics
                     else (network_attrs(model), input_names())))
    if baseline:
        attrs["envelope_baseline"] = "gravity_envelope"
    kpi_head.write_model_copy(
        model, "dP", out,
        lambda f: kpi_head.write_group(f, GROUP, head, grid, BASELINE_TARGET if baseline
                                       else TARGET, attrs, names))


def read_head(path):
    """The head stored in a dP model file, or None."""
    return kpi_head.read_group(path, GROUP)


def _load(a):
    if a.gravity_envelope and not a.physics:
        raise ValueError("--gravity-envelope: only with --physics")
    from ufno.heads import physics as ph
    if a.gravity_envelope and a.gravity_envelope not in ph.DISSOLUTION_MODELS:
        raise ValueError("--gravity-envelope: %r is no dissolution model (%s)"
                         % (a.gravity_envelope, ", ".join(ph.DISSOLUTION_MODELS)))
    if a.baseline and not (a.physics and a.gravity_envelope):
        raise ValueError("--baseline: only with --physics --gravity-envelope")
    return (load_physics_data(a.data, a.limit, a.gravity_envelope, a.baseline) if a.physics
            else load_data(a.data, a.model, a.limit))


def main(argv=None):
    # Scored at the well's column.
    kpi_head.train_cli(
        "dp_envelope_head", __doc__, "dP",
        _load,
        lambda a, head, grid: write_head(head, grid, a.model, a.out, a.physics,
                                         a.gravity_envelope, a.baseline),
        lambda pred, env: (pred[:, 0], env[:, 0]), argv,
        extra=[(("--physics",), {"action": "store_true",
                                 "help": "read the physics estimates and the r-z solve's "
                                         "envelope instead of the network's envelope"}),
               (("--gravity-envelope",), {"nargs": "?", "const": "pore_volume",
                                          "default": False, "metavar": "MODEL",
                                          "help": "with --physics, also the buoyancy-aware "
                                                  "solve's envelope (about 1.5 s a case), its "
                                                  "CO2 dissolving as this names"}),
               (("--baseline",), {"action": "store_true",
                                  "help": "with --gravity-envelope, estimate Flow's envelope "
                                          "over the buoyancy-aware solve's"})])

if __name__ == "__main__":
    main()
