"""Calibrates the KPI heads' intervals (python/ufno/heads/intervals.py) of a model file on the
cases of one split of a data set (OPM Flow's values against the heads' estimates) and writes them
into a copy of the model file; --score measures an interval's coverage on other cases.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.kpi_intervals --data DATA.h5 --model M.h5 --out O.h5
      [--split val] [--flow-kpis KPIS.csv] [--coverage 0.9] [--bins N]
  PYTHONPATH=python /usr/bin/python3 -m ufno.kpi_intervals --data DATA.h5 --model O.h5 --score
      [--split test] [--flow-kpis KPIS.csv]

Each head of the model file (the dP model's max_dp_head and dp_envelope_head, the SG model's
plume_radius_head and co2_mass_head; the CO2-mass head needs --flow-kpis, ufno_kpis over the data
set's Flow fields) is evaluated on the split's cases as the programs evaluate it (with the
network's envelope or radii where the head reads them), and its interval attributes are
replaced. The SG model's heads (JOINT_GROUPS) also scale their intervals by the cases' joint
distance from the model's training data (intervals.py joint_factor; the model file's training
profile); the plume-radius head pools its quantiles over neighbouring report times
(intervals.QUANTILE_POOL) and takes its disagreement with the network per report time
(intervals.SCALE_WINDOW). Calibrate on cases the heads were not fitted on (the validation split) and score on
others (the test split, another generator's cases): coverage on the calibration cases themselves
says nothing.
"""
import argparse
import sys

import h5py
import numpy as np

from ufno.data.output_path import check_output
from ufno.heads import co2_mass, dp_envelope, intervals, max_dp, plume_radius
from ufno.heads import common as kpi_head
from ufno.data import training_profile

# The heads whose intervals carry the joint-distance factor: the SG model's. On the held-out sets
# of docs/accuracy.md the CO2 mass's interval covered the shifted set's cases in 83 % and the
# independent set's in 100 % without it (the shifted set lies farther from the training data,
# the independent nearer); the dP heads' intervals held 87-95 % on all three without it.
JOINT_GROUPS = (plume_radius.GROUP, co2_mass.GROUP)


def _heads(model, data, flow_kpis):
    """[(group, head, inputs, truth)] for every head of `model` that can be evaluated on `data`:
    inputs (N, F), truth (N,) or (N, K), for all cases of the data set, and the split names."""
    out = []
    split = None
    for module in (max_dp, dp_envelope, plume_radius, co2_mass):
        head = module.read_head(model)
        if head is None:
            continue
        with h5py.File(model, "r") as m:
            g = m[module.GROUP]
            reads_network = "network_digest" in g.attrs
        if module is max_dp:
            # A physics head estimates max dP over Theis: its ratio has the KPI's residuals.
            with h5py.File(model, "r") as m:
                physics = m[module.GROUP].attrs.get("physics_inputs") in (b"max_dp", "max_dp")
            f, truth, split = max_dp.load_data(data, model=model if reads_network else None,
                                               physics=physics,
                                               implicit=max_dp.implicit_option(model))
        elif module is dp_envelope:
            with h5py.File(model, "r") as m:
                physics = m[module.GROUP].attrs.get("physics_inputs") in (b"envelope",
                                                                          "envelope")
            # A head over the buoyancy-aware solve's envelope: its ratio has the KPI's residuals.
            f, truth, split = (dp_envelope.load_physics_data(
                data, gravity=dp_envelope.gravity_option(model),
                baseline=dp_envelope.baseline_option(model)) if physics
                               else dp_envelope.load_data(data, model))
        elif module is plume_radius:
            f, truth, _, split = plume_radius.load_data(
                data, model=model if reads_network else None,
                physics=plume_radius.physics_option(model))
        else:
            if not flow_kpis:
                print("kpi_intervals: %s: %s needs --flow-kpis; left as it is"
                      % (model, module.GROUP), file=sys.stderr)
                continue
            f, truth, _, split = co2_mass.load_data(data, flow_kpis)
        out.append((module.GROUP, head, f, truth))
    return out, split


def joint_distances(model, data):
    """(N,) the joint distance of every case of the data set from the model file's training data
    (training_profile.joint_distance against the profile the model file carries), or None when
    it carries none."""
    prof = training_profile.read(model)
    if prof is None:
        return None
    with kpi_head.open_data(data) as f:
        n = kpi_head.case_count(f)
        stats = np.concatenate([training_profile.statistics(f["input"][i:i + 64, :, :, 0, :])
                                for i in range(0, n, 64)])
    return training_profile.joint_distance(prof["mean"], prof["inverse_covariance"], stats)


def case_scales(group, head, f, est, floor=intervals.SCALE_FLOOR, window=intervals.SCALE_WINDOW):
    """(name, scales) of the per-case interval scale a head takes (intervals.SCALES), or
    (None, None): the plume-radius head that reads the network's radii or the buoyancy-aware
    solve's (its last inputs, one per output) is scaled by its disagreement with them ((N, K) per report time within `window`, or
    (N,) over all of them when window is None)."""
    est = np.asarray(est, np.float64).reshape(len(f), -1)
    if group != plume_radius.GROUP or f.shape[1] != len(head.f_mean) or \
            f.shape[1] < len(kpi_head.FEATURES) + est.shape[1]:
        return None, None
    return intervals.FIELD_RADIUS_DISAGREEMENT, intervals.field_radius_disagreement(
        est, f[:, -est.shape[1]:], floor, window)


def calibrated_attrs(head, f, truth, coverage, bins, what, group=None, joint=None):
    """The interval attributes of a head from calibration cases; joint (N,): their joint
    distances, used by a head of JOINT_GROUPS."""
    est = head.predict(f)
    inside = head.inside(f)
    d = intervals.feature_distance(f, head.f_mean, head.f_std)
    name, sc = case_scales(group, head, f, est)
    use_joint = group in JOINT_GROUPS and joint is not None
    attrs = intervals.calibrate(
        est[inside], np.asarray(truth)[inside], d[inside], coverage, bins,
        scale=None if sc is None else sc[inside], scale_name=name,
        scale_floor=intervals.SCALE_FLOOR, scale_window=None if sc is None else
        intervals.SCALE_WINDOW, joint=np.asarray(joint)[inside] if use_joint else None,
        pool=intervals.QUANTILE_POOL if group == plume_radius.GROUP else 0)
    attrs["interval_calibration"] = "%s: %d cases inside the head's ranges" % (what, inside.sum())
    return attrs


def score(head, attrs, f, truth, group=None, joint=None):
    est = head.predict(f)
    inside = head.inside(f)
    d = intervals.feature_distance(f, head.f_mean, head.f_std)
    window = attrs.get("interval_scale_window")
    _, sc = case_scales(group, head, f, est,
                        float(attrs.get("interval_scale_floor", intervals.SCALE_FLOOR)),
                        None if window is None else int(window))
    if "interval_joint_exponent" in attrs and joint is None:
        raise ValueError("%s: its interval needs the model file's training profile" % group)
    lo, hi, far = intervals.interval(attrs, est[inside], d[inside],
                                     None if sc is None else sc[inside],
                                     None if joint is None else np.asarray(joint)[inside])
    rep = intervals.coverage_report(lo, hi, np.asarray(truth)[inside], est[inside])
    rep["far"] = int(far.sum())
    return rep


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.kpi_intervals",
                                description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, help="an assembled data set (input, SG, dP, ...)")
    p.add_argument("--model", required=True)
    p.add_argument("--out")
    p.add_argument("--split", choices=("train", "val", "test", "all"))
    p.add_argument("--flow-kpis", help="ufno_kpis over the data set's Flow fields (CO2 mass)")
    p.add_argument("--coverage", type=float, default=intervals.COVERAGE)
    p.add_argument("--bins", type=int, help="distance bins (default: as the cases allow, <= 3)")
    p.add_argument("--score", action="store_true", help="measure the stored intervals' coverage")
    p.add_argument("--description", help="what the calibration cases are, for the model card "
                                         "(default: the split and the data file's name)")
    a = p.parse_args(argv)
    return run(p, a)


def tables_main(argv=None):
    """`python3 -m ufno.kpi_intervals --tables UFNO.csv FLOW.csv`: the coverage of the intervals
    in a ufno_kpis table (with --model) of Flow's values in another (the same cases' Flow
    fields), one line per KPI."""
    try:
        for kpi, r in score_tables(argv[0], argv[1]).items():
            print("%-28s %3d cases: coverage %5.1f %%, median width %6.1f %%, within 10 %% %3d, "
                  "median error %5.1f %% (signed %+5.1f %%)"
                  % (kpi, r["cases"], 100 * r["coverage"], r["median_width_pct"],
                     r["within_10pct"], r["median_error_pct"], r["signed_median_pct"]))
    except (ValueError, KeyError, IndexError) as e:
        sys.exit("kpi_intervals: %s" % str(e).split("\n")[0])
    return 0


def run(p, a):
    if not 0.5 <= a.coverage < 1:
        sys.exit("kpi_intervals: --coverage must be in [0.5, 1)")
    if a.score == bool(a.out):
        sys.exit("kpi_intervals: give --out (calibrate) or --score, not both")
    split_name = a.split or ("test" if a.score else "val")
    try:
        if a.out:
            check_output(a.out, [a.data, a.model, a.flow_kpis])
        heads, split = _heads(a.model, a.data, a.flow_kpis)
        if not heads:
            raise ValueError("%s: no KPI head to calibrate" % a.model)
        pick = np.ones(len(split), bool) if split_name == "all" else split == split_name
        if not pick.any():
            raise ValueError("%s: no case of the %s split" % (a.data, split_name))
        joint = None
        if any(g in JOINT_GROUPS for g, _, _, _ in heads):
            joint = joint_distances(a.model, a.data)
            if joint is not None:
                joint = joint[pick]
        if a.score:
            for group, head, f, truth in heads:
                attrs = kpi_head_interval(a.model, group)
                if attrs is None:
                    print("%s: no interval" % group)
                    continue
                print("%s: %s" % (group, score(head, attrs, f[pick], np.asarray(truth)[pick],
                                                   group, joint)))
            return 0
        what = a.description or "%s split of %s" % (split_name, a.data)
        new = {group: calibrated_attrs(head, f[pick], np.asarray(truth)[pick], a.coverage,
                                       a.bins, what, group, joint)
               for group, head, f, truth in heads}
        variable = h5py.File(a.model, "r").attrs["variable"]
        variable = variable.decode() if isinstance(variable, bytes) else str(variable)

        def write(fh):
            for group, attrs in new.items():
                for k in [k for k in fh[group].attrs if k.startswith("interval_")]:
                    del fh[group].attrs[k]
                for k, v in attrs.items():
                    fh[group].attrs[k] = v
        kpi_head.write_model_copy(a.model, variable, a.out, write)
        for group, attrs in new.items():
            print("kpi_intervals: %s: %s; log bounds lo %s hi %s, distance edges %s%s"
                  % (group, attrs["interval_calibration"],
                     np.round(attrs["interval_log_lo"][:3], 3),
                     np.round(attrs["interval_log_hi"][:3], 3),
                     np.round(attrs["interval_distance_edges"], 3),
                     ", joint-distance exponent %.3f (reference %.3f)"
                     % (attrs["interval_joint_exponent"], attrs["interval_joint_reference"])
                     if "interval_joint_exponent" in attrs else ""))
    except (OSError, KeyError, ValueError) as e:
        sys.exit("kpi_intervals: %s" % str(e).split("\n")[0])
    return 0


def interval_kpis(header):
    """[(kpi column, lo column, hi column)] of a ufno_kpis header: each KPI with an interval
    (plume_radius_m_10yr with plume_radius_m_lo_10yr and plume_radius_m_hi_10yr, max_dP_bar with
    max_dP_bar_lo and max_dP_bar_hi, ...)."""
    out = []
    for lo in header:
        if "_lo" not in lo:
            continue
        base, _, year = lo.partition("_lo")
        kpi, hi = base + year, base + "_hi" + year
        if kpi in header and hi in header:
            out.append((kpi, lo, hi))
    return out


def score_tables(ufno_csv, flow_csv):
    """Per KPI with an interval: cases, coverage of Flow's value by the interval, its median
    width in % of the KPI, within 10 % of Flow and the signed median error, over the cases both
    tables hold (matched by the case column) where Flow's value is positive and ufno's
    interval exists."""
    import csv

    def rows(path):
        try:
            with open(path, newline="") as f:
                return {r["case"]: r for r in csv.DictReader(f)}
        except (OSError, KeyError) as e:
            raise ValueError("%s: %s" % (path, e))
    u, fl = rows(ufno_csv), rows(flow_csv)
    cases = [c for c in u if c in fl]
    if not cases:
        raise ValueError("%s and %s: no case in both" % (ufno_csv, flow_csv))
    report = {}
    for kpi, lo, hi in interval_kpis(list(next(iter(u.values())).keys())):
        v = np.array([[float(u[c][kpi]), float(u[c][lo]), float(u[c][hi]), float(fl[c][kpi])]
                      for c in cases])
        ok = np.isfinite(v).all(1) & (v[:, 3] > 0)  # an estimate of 0 is a miss, not left out
        if not ok.any():
            continue
        est, l, h, t = v[ok].T
        err = (est - t) / t
        report[kpi] = dict(intervals.coverage_report(l, h, t, est),
                           within_10pct=int((np.abs(err) <= 0.1).sum()),
                           signed_median_pct=float(np.median(err) * 100),
                           median_error_pct=float(np.median(np.abs(err)) * 100))
    return report


def kpi_head_interval(model, group):
    """The interval attributes of a head group, or None."""
    with h5py.File(model, "r") as f:
        g = f[group]
        if "interval_coverage" not in g.attrs:
            return None
        return {k: g.attrs[k] for k in g.attrs if k.startswith("interval_")}
