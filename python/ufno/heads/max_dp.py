#!/usr/bin/python3
"""Train the maximum-dP head and store it in a dP model file (docs/kpis.md, "Maximum dP").

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.max_dp_head --data train.h5 --model DP.h5 --out DP_WITH_HEAD.h5
      [--network-envelope] [--members 5] [--hidden 64] [--epochs 2000] [--weight-decay 1e-4]
      [--limit N] [--network-envelope | --physics [--implicit [max|first-report|gravity]]]

Why: the maximum pressure buildup a user reads (the max_dP_bar KPI, compared with a fracture
limit) is one near-well value, usually at the first report time. The dP network, trained on the
whole field, smooths that spike: on its validation cases the field's own maximum is low by a
median 22 %. A small network fitted to Flow's maxima alone, from the case's near-well
properties, has no such bias. It reads the 32 features of python/ufno/heads/common.py
(the five scalars, log kh of the perforated and of all layers at five radial columns, counts,
depths, pore volume in four radial bands) and predicts log(max dP), as an ensemble of `members`
MLPs (features -> hidden -> hidden -> 1); a case whose features lie more than 10 % of the
training range outside it is not estimated (the programs report the field's maximum for it). It is trained on the training
split of the data set, chosen on the validation split; the test split is scored last.

With --network-envelope the head also reads the dP network's own envelope (the largest dP over
report times and layers) at the 20 radial columns of python/ufno/heads/dp_envelope.py: the network
sees the whole permeability field, the features only summaries of it. Such a head belongs to
one network, like the dP-envelope head: the group stores its digest and the programs do not use
it with another. The network runs over every case here, on one thread.

With --physics the head also reads three physics estimates of the case's buildup (Theis at the
first cell on day one, and a single-phase r-z solve with and without a two-phase correction,
python/ufno/heads/physics.py) and estimates log(Flow's maximum / Theis): the physics carries the
dependence on rate, kh and fluid properties, the network the rest. The group gets the attribute
physics_inputs = "max_dp"; runtime/PressureEstimates.cpp computes the same estimates in C++.
With --implicit as well, a fourth: the implicit two-phase r-z solve's largest buildup in the
well's column (physics.rz_implicit_two_phase_dp_bar, about 0.4 s a case in Python); the head's
feature names say which inputs the programs compute for it, so a head without it reads as before.
With --implicit first-report, the fourth input is that solve's value at the first report time
instead (physics.implicit_first_report_dp_bar, only the first step's solve: about 0.01 s a case).
With --implicit gravity, the buoyancy-aware estimate's maximum (physics.gravity_max_dp_bar, about
1.5 s a case; its C++ twin about 0.7 s, computed by the programs for such a head). With
--implicit gravity-summary (the shipped head), that maximum, the estimate's first-report value and
the report day of its maximum (physics.gravity_summary_features, one solve).

The result is a copy of --model with group /max_dp_head added (docs/model-format.md); the C++
programs use it for max_dP_bar when the dP model file has it (screening/KpiHeads.hpp). The output is
written to a temporary name and renamed: a failure leaves no file.
"""

import numpy as np
from ufno.heads.common import (FEATURES, MARGIN, Head, features, mlp,  # noqa: F401
                               read_group, summary)
from ufno.heads import dp_envelope as dp_envelope_head
from ufno.heads import common as kpi_head
from ufno.data.cases import split_of  # noqa: F401

GROUP = "max_dp_head"
TARGET = "log(max dP in bar) = target_mean + target_std * mean of members"


def _physics_names(implicit):
    """The physics inputs' names for --implicit's value (None/False: none, True or "max": the
    implicit maximum, "first-report": its first-report value, "gravity": the buoyancy-aware
    estimate's maximum)."""
    from ufno.heads import physics as ph
    if not implicit:
        return ph.PHYSICS_FEATURE_NAMES
    extra = ph.EXTRA_INPUTS.get("max" if implicit is True else implicit)
    if extra is None:
        raise ValueError("--implicit: %r is none of %s" % (implicit, ", ".join(ph.EXTRA_INPUTS)))
    return ph.PHYSICS_FEATURE_NAMES + extra


def load_data(path, limit=0, model=None, physics=False, implicit=False):
    """Inputs, Flow's maximum dP over formation cells and times, and split names. With `model`
    (a dP model file) the inputs include that network's envelope (dp_envelope_head.inputs).
    With physics, the inputs include the three physics estimates (python/ufno/heads/physics.py
    PHYSICS_FEATURE_NAMES) and the target is Flow's maximum over the Theis estimate: the head
    corrects the physics rather than replacing it; with implicit also the implicit two-phase
    estimate (physics.MAX_DP_FEATURE_NAMES; implicit="first-report": its first-report value,
    physics.FIRST_REPORT_FEATURE_NAMES; implicit="gravity": the buoyancy-aware estimate's
    maximum, physics.GRAVITY_FEATURE_NAMES)."""
    if physics:
        from ufno.heads import physics as ph
        f, peak, split = load_data(path, limit)
        with kpi_head.open_data(path) as d:
            x0 = d["input"][:len(peak), :, :, 0, :]
        extra, theis = ph.max_dp_physics_features_x0(x0, names=_physics_names(implicit))
        return np.concatenate([f, extra], 1), peak / theis, split
    if model is not None:
        inputs, _, split = dp_envelope_head.load_data(path, model, limit)
        return (inputs,) + load_data(path, limit)[1:]
    with kpi_head.open_data(path) as f:
        n = kpi_head.case_count(f, limit)
        x0 = f["input"][:n, :, :, 0, :]
        dp = f["dP"]
        act = x0[..., 0] != 0
        peak = np.array([np.where(act[i][..., None], dp[i], -np.inf).max() for i in range(n)])
        split = kpi_head.split_names(f, n)
    return features(x0), peak, split


def fit(f, peak, members=5, hidden=64, epochs=2000, weight_decay=1e-4):
    """The head fitted to (features, peak) (kpi_head.fit, a scalar target)."""
    if len(f) < 2 or not np.all(np.isfinite(f)) or not np.all(peak > 0):
        raise ValueError("need at least two cases with finite features and a positive peak")
    return kpi_head.fit(f, np.asarray(peak, np.float64).reshape(-1), members, hidden, epochs,
                        weight_decay)


def write_head_group(f, head, grid, attrs=None, names=None):
    """Writes `head` as group /max_dp_head of the open h5py file f (replacing one there)."""
    kpi_head.write_group(f, GROUP, head, grid, TARGET, attrs, names)


PHYSICS_TARGET = ("log(max dP / the Theis estimate) = target_mean + target_std * mean of "
                  "members; max dP = Theis x exp(that)")


def write_head(head, grid, model, out, network_envelope=False, physics=False, implicit=False):
    """A copy of the dP model file `model` with the head in /max_dp_head, renamed into `out`;
    with network_envelope, one that reads that network's envelope; with physics, one that reads
    the physics estimates and estimates max dP over Theis (group attribute physics_inputs)."""
    attrs, names = ((dp_envelope_head.network_attrs(model), dp_envelope_head.input_names())
                    if network_envelope else (None, None))
    target = TARGET
    if physics:
        from ufno.heads import physics as ph
        attrs = {"physics_inputs": "max_dp"}
        names = FEATURES + list(_physics_names(implicit))
        target = PHYSICS_TARGET
    kpi_head.write_model_copy(
        model, "dP", out,
        lambda f: kpi_head.write_group(f, GROUP, head, grid, target, attrs, names))


def implicit_option(model):
    """Which inputs the maximum-dP head of the dP model file `model` reads after the three
    physics estimates, as load_data's `implicit`: False (none, or no head), or a key of
    physics.EXTRA_INPUTS ("max", "first-report", "gravity", "gravity-summary")."""
    import h5py
    from ufno.heads import physics as ph
    with h5py.File(model, "r") as f:
        if GROUP not in f:
            return False
        names = f[GROUP].attrs.get("features", "")
    names = tuple((names.decode() if isinstance(names, bytes) else str(names)).split(","))
    for option, extra in sorted(ph.EXTRA_INPUTS.items(), key=lambda kv: -len(kv[1])):
        if names[-len(extra):] == extra:
            return option
    return False


def reads_implicit(model):
    """Whether the maximum-dP head of the dP model file `model` reads an implicit two-phase
    estimate (its maximum, its first-report value or the buoyancy-aware one) after the three
    physics estimates."""
    return implicit_option(model) is not False


def estimate(model, x0):
    """The maximum dP [bar] of encoded inputs x0 (N, X, Y, 12) by the head of the dP model file
    `model` as the programs give it (a physics head: Theis x its output; NaN outside its ranges),
    or None when the file has no head. Not for a head that reads the network's envelope."""
    head = read_head(model)
    if head is None:
        return None
    import h5py
    with h5py.File(model, "r") as f:
        physics = f[GROUP].attrs.get("physics_inputs") in (b"max_dp", "max_dp")
    f = features(x0)
    scale = 1.0
    if physics:
        from ufno.heads import physics as ph
        # the head's own inputs decide: three physics estimates, or those and the implicit one
        extra, scale = ph.max_dp_physics_features_x0(
            x0, names=_physics_names(implicit_option(model)))
        f = np.concatenate([f, extra], 1)
    return np.where(head.inside(f), head.predict(f) * scale, np.nan)


def read_head(path):
    """The head stored in a dP model file, or None."""
    return read_group(path, GROUP)


def main(argv=None):
    def load(a):
        if a.network_envelope and a.physics:
            raise ValueError("--network-envelope and --physics exclude each other")
        if a.implicit and not a.physics:
            raise ValueError("--implicit goes with --physics")
        _physics_names(a.implicit)   # max or first-report, refused in one line otherwise
        return load_data(a.data, a.limit, a.model if a.network_envelope else None, a.physics,
                         a.implicit)
    kpi_head.train_cli(
        "max_dp_head", __doc__, "dP", load,
        lambda a, head, grid: write_head(head, grid, a.model, a.out, a.network_envelope,
                                         a.physics, a.implicit),
        lambda pred, peak: (pred, peak), argv,
        extra=[(("--network-envelope",), {"action": "store_true",
                                          "help": "also read the network's own envelope"}),
               (("--physics",), {"action": "store_true",
                                 "help": "also read the physics estimates; estimate max dP over "
                                         "Theis (python/ufno/heads/physics.py)"}),
               (("--implicit",), {"nargs": "?", "const": "max", "default": None,
                                  "help": "with --physics, also read the implicit two-phase r-z "
                                          "estimate (physics.rz_implicit_two_phase_dp_bar): its "
                                          "maximum (max, the default), its value at the first "
                                          "report time (first-report), the buoyancy-aware "
                                          "estimate's maximum (gravity) or that, its first-report "
                                          "value and the day of its maximum (gravity-summary)"})])

if __name__ == "__main__":
    main()
