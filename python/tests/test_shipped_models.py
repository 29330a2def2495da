#!/usr/bin/python3
"""The shipped default models (models/sg_ufno.h5, models/dp_ufno.h5) on the shipped example cases
(examples/opm/*/case.h5 with their OPM Flow results target.h5):

1. `ufno_predict --case` with no --model finds the default models and writes SG and dP;
2. its prediction equals PyTorch's (ufno_torch, float64) on the same weights read from the same
   model files, to a relative L2 of 1e-5 per field and case;
3. the models beat trivial baselines against OPM Flow by a wide margin: the SG plume error
   (mean |pred - true| over cells where true != 0 or |pred| > 0.01) is below half that of
   predicting no gas, and the dP relative error (mean over reservoir cells and times of
   |pred - true| / max over space of |true| at that time) is below half that of predicting the
   training set's mean dP everywhere (the model file's output offset). The error of an oracle
   constant (the true field's own mean at each time) is printed for comparison, not asserted;
4. the dP model file carries a maximum-dP head (python/ufno/heads/max_dp.py): over the examples
   its estimates of the maximum dP are within 20 % of Flow's maxima on average and none more
   than 10 % below one (the unsafe side; how the head compares with the network's field is a
   held-out figure, docs/accuracy.md), and the written field's peak is the head's estimate
   (python/ufno/heads/peak_match.py, runtime/DpPeakMatch.cpp);
5. the SG model file carries a plume-radius head (python/ufno/heads/plume_radius.py), and over the
   examples its 30-year plume radii are within 10 % of those of Flow's fields in as many cases
   as the predicted field's, with a mean relative error at most 2 points above the field's (both
   by the rule of screening/Kpis.cpp without the mass cap); a head
   that reads the network's own radii was fitted to the shipped SG network (the digest matches)
   and is given the radii of the C++ prediction;
6. the SG model file carries a CO2-mass head (python/ufno/heads/co2_mass.py): `ufno_kpis` on each
   prediction with the shipped models' heads gives a CO2 mass in place closer to the mass
   `ufno_kpis` measures in Flow's fields than the field's own (mean relative error), and equal
   to the head's ratio times the injected mass;
7. the dP model file carries a dP-envelope head that reads the physics estimates and the r-z
   solve's envelope (physics_inputs "envelope", no network: no digest to match), and with it
   `ufno_kpis` gives areas of review (10 bar) closer to those it measures in Flow's fields than
   the field's (mean relative error over the examples where Flow has one);
8. each shipped dP model file's maximum-dP head reads the physics estimate it should (the
   default's the buoyancy-aware estimate, dp_ufno_implicit.h5's the implicit first-report
   value), and `ufno_kpis`'s maximum dP equals the Python reader's and lies in its interval.

The program under test is $UFNO_PREDICT (default build/apps/ufno_predict).
"""
import glob
import os
import subprocess
import tempfile

import h5py
import pytest
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from ufno.training import train as train_ufno
from ufno.data import cases as ufno_cases
from ufno.data import encoding as ufno_encoding
from ufno.heads import max_dp as max_dp_head
from ufno.heads import plume_radius as plume_radius_head
from ufno.heads import dp_envelope as dp_envelope_head
from ufno.heads import dp_field_scale as dp_field_scale_head
from ufno.heads import peak_match
from ufno.heads import common as kpi_head
from ufno.conversion import model_file as ufno_model_file

from cli_checks import check


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def kpi_table(exe, args, env):
    """The one KPI row of `ufno_kpis ARGS` as a dict, or None (with a failed check)."""
    import csv
    import io
    r = subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=120)
    rows = list(csv.DictReader(io.StringIO(r.stdout))) if r.returncode == 0 else []
    check("ufno_kpis %s exits 0 with one row" % os.path.basename(args[1]),
          len(rows) == 1, r.stderr[-300:])
    return rows[0] if len(rows) == 1 else None


def test_shipped_models():
    exe = os.environ.get("UFNO_PREDICT", os.path.join(ROOT, "build", "apps", "ufno_predict"))
    models = {v: ufno_model_file.read_model_file(os.path.join(ROOT, "models", f))
              for v, f in (("SG", "sg_ufno.h5"), ("dP", "dp_ufno.h5"))}
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "opm", "*", "case.h5")))
    check("at least two shipped example cases", len(examples) >= 2, examples)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("UFNO_MODEL_DIR", None)
    work = tempfile.mkdtemp(prefix="ufno_shipped_")
    head = max_dp_head.read_head(os.path.join(ROOT, "models", "dp_ufno.h5"))
    check("the shipped dP model carries a maximum-dP head", head is not None)
    peak_err = {"head": [], "field": []}
    scale_err = {"head": [], "network": []}
    with h5py.File(os.path.join(ROOT, "models", "dp_ufno.h5"), "r") as f:
        check("the shipped dP model carries a field-scale head fitted to its network",
              dp_field_scale_head.GROUP in f and dp_field_scale_head.belongs_to_network(
                  os.path.join(ROOT, "models", "dp_ufno.h5")))
    plume = plume_radius_head.read_head(os.path.join(ROOT, "models", "sg_ufno.h5"))
    check("the shipped SG model carries a plume-radius head", plume is not None)
    sg_model_path = os.path.join(ROOT, "models", "sg_ufno.h5")
    with h5py.File(sg_model_path, "r") as f:
        g = f["plume_radius_head"] if "plume_radius_head" in f else None
        plume_reads_field = g is not None and "field_plume_radius_floor_m" in g.attrs
        # A head that also reads the buoyancy-aware solve's radii, at its own report times.
        plume_times = g.attrs["times_days"][()] if g is not None else None
        plume_reads_solve = plume_radius_head.physics_option(sg_model_path)
        if plume_reads_field:
            check("... fitted to the shipped SG network (its digest)",
                  g.attrs["network_digest"] == kpi_head.network_digest(sg_model_path))
    radius_err = {"head": [], "field": []}
    mass_err = {"head": [], "field": []}
    aor_err = {"head": [], "field": []}
    envelope = dp_envelope_head.read_head(os.path.join(ROOT, "models", "dp_ufno.h5"))
    check("the shipped dP model carries a dP-envelope head", envelope is not None)
    with h5py.File(os.path.join(ROOT, "models", "dp_ufno.h5"), "r") as f:
        g = f["dp_envelope_head"].attrs if "dp_envelope_head" in f else {}
        check("... reading the physics estimates, not the network",
              g.get("physics_inputs") in (b"envelope", "envelope") and "network_digest" not in g)
    kpis_exe = os.path.join(os.path.dirname(exe), "ufno_kpis")
    sg_file, dp_file = (os.path.join(ROOT, "models", m) for m in ("sg_ufno.h5", "dp_ufno.h5"))
    for case_path in examples:
        name = os.path.basename(os.path.dirname(case_path))
        out = os.path.join(work, name + ".h5")
        r = subprocess.run([exe, "--case", case_path, "--out", out, "--threads", "1"],
                           env=env, capture_output=True, text=True, timeout=300)
        check(name + ": ufno_predict without --model exits 0", r.returncode == 0, r.stderr)
        if r.returncode != 0:
            continue
        with h5py.File(out, "r") as f:
            got = {v: f[v][0] for v in ("SG", "dP") if v in f}  # (T, X, Y)
        check(name + ": writes both SG and dP", sorted(got) == ["SG", "dP"], sorted(got))
        if sorted(got) != ["SG", "dP"]:
            continue
        x = ufno_encoding.encode_case(ufno_cases.read_case_h5(case_path))[None]
        active = (x[0, :, :, :, 0] != 0).transpose(2, 0, 1)  # (T, X, Y)
        with h5py.File(os.path.join(os.path.dirname(case_path), "target.h5"), "r") as f:
            true = {v: f[v][()] for v in ("SG", "dP")}  # (T, X, Y)
        for v, (model, attrs) in models.items():
            ref = ufno_encoding.physical_output(v, ufno_model_file.predict(model, attrs, x), x)
            if v == "dP":  # the programs multiply it by the file's field-scale head
                network_dp = ref[0].transpose(2, 0, 1)
                ref = dp_field_scale_head.corrected(
                    os.path.join(ROOT, "models", "dp_ufno.h5"), x, ref)
                scaled_dp = ref[0].transpose(2, 0, 1)
                # ... then maps its peak to the maximum-dP head's estimate
                ref = peak_match.matched(os.path.join(ROOT, "models", "dp_ufno.h5"), x, ref,
                                         [ufno_cases.read_case_h5(case_path)])
            ref = ref[0].transpose(2, 0, 1)
            e = rel_l2(got[v], ref)
            check("%s: %s equals PyTorch on the same weights (rel L2 %.2e <= 1e-5)" % (name, v, e),
                  e <= 1e-5)
        # Metrics in the (N, X, Y, T) layout train_ufno uses.
        as_nxyt = {v: a.transpose(1, 2, 0)[None] for v, a in got.items()}
        t_nxyt = {v: a.transpose(1, 2, 0)[None] for v, a in true.items()}
        mask = active.transpose(1, 2, 0)[None].astype(np.float64)
        sg_model = train_ufno.plume_error(as_nxyt["SG"], t_nxyt["SG"])
        sg_zero = train_ufno.plume_error(np.zeros_like(t_nxyt["SG"]), t_nxyt["SG"])
        check("%s: SG plume error %.4f < half of the no-gas baseline %.4f" % (name, sg_model, sg_zero),
              sg_model < 0.5 * sg_zero)
        oracle = (t_nxyt["dP"] * mask).sum(axis=(1, 2), keepdims=True) / \
            mask.sum(axis=(1, 2), keepdims=True)
        train_mean = float(models["dP"][1]["output_offset"])
        dp_model = train_ufno.pressure_error(as_nxyt["dP"], t_nxyt["dP"], mask)
        dp_mean = train_ufno.pressure_error(train_mean * mask, t_nxyt["dP"], mask)
        dp_oracle = train_ufno.pressure_error(oracle * mask, t_nxyt["dP"], mask)
        check("%s: dP error %.4f < half of the training-mean baseline %.4f (oracle per-time mean: "
              "%.4f)" % (name, dp_model, dp_mean, dp_oracle), dp_model < 0.5 * dp_mean)
        scale_err["head"].append(dp_model)
        scale_err["network"].append(train_ufno.pressure_error(
            network_dp.transpose(1, 2, 0)[None], t_nxyt["dP"], mask))
        flow_peak = float(np.where(active, true["dP"], -np.inf).max())
        field_peak = float(np.where(active, scaled_dp, -np.inf).max())  # before the peak match
        written_peak = float(np.where(active, got["dP"], -np.inf).max())
        if head is not None:
            est = peak_match.head_estimate(os.path.join(ROOT, "models", "dp_ufno.h5"),
                                           ufno_cases.read_case_h5(case_path), x[0, :, :, 0, :])
            check("%s: the head estimates the maximum dP" % name, est is not None)
            if est is None:
                continue
            check("%s: the written field's peak %.4f bar is the head's %.4f" % (name, written_peak,
                                                                                 est),
                  abs(written_peak - est) <= 1e-5 * est)
            peak_err["head"].append((est - flow_peak) / flow_peak)
            peak_err["field"].append((field_peak - flow_peak) / flow_peak)
            print("  %s: maximum dP: Flow %.2f bar, head %.2f, the network's field %.2f"
                  % (name, flow_peak, est, field_peak))
        if plume is not None:
            x0 = x[0, :, :, 0, :]
            args = (x0[..., 0] != 0, x0[:, 0, 3] > 0, ufno_encoding.decoded_swi(float(x0[0, 0, 7])),
                    ufno_cases.radial_widths())
            flow_r = plume_radius_head.plume_radii(true["SG"].transpose(1, 2, 0), *args)[-1]
            field_radii = plume_radius_head.plume_radii(got["SG"].transpose(1, 2, 0), *args)
            field_r = field_radii[-1]
            inputs = plume_radius_head.inputs(
                x0[None], field_radii[None] if plume_reads_field else None,
                plume_radius_head.gravity_radii(x0[None], plume_times) if plume_reads_solve
                else None)
            est = np.maximum.accumulate(plume.predict(inputs)[0])[-1]
            radius_err["head"].append(abs(est - flow_r) / flow_r)
            radius_err["field"].append(abs(field_r - flow_r) / flow_r)
            print("  %s: plume radius at the last report: Flow %.0f m, head %.0f, field %.0f"
                  % (name, flow_r, est, field_r))
        flow_k = kpi_table(kpis_exe, [case_path, os.path.join(os.path.dirname(case_path),
                                                             "target.h5")], env)
        pred_k = kpi_table(kpis_exe, [case_path, out, "--model", sg_file, "--model", dp_file],
                           env)
        if flow_k and pred_k:
            f, m = float(flow_k["co2_mass_Mt"]), pred_k
            mass_err["head"].append(abs(float(m["co2_mass_Mt"]) - f) / f)
            mass_err["field"].append(abs(float(m["co2_mass_field_Mt"]) - f) / f)
            check("%s: ufno_kpis: the mass is the head's ratio x the injected mass" % name,
                  abs(float(m["co2_mass_Mt"]) - float(m["mass_ratio"]) * float(m["injected_Mt"]))
                  < 1e-6 * float(m["co2_mass_Mt"]), m)
            print("  %s: CO2 mass in place: Flow %.2f Mt, head %.2f, field %.2f"
                  % (name, f, float(m["co2_mass_Mt"]), float(m["co2_mass_field_Mt"])))
            a = float(flow_k["aor_radius_m"])
            if a > 0:
                aor_err["head"].append(abs(float(m["aor_radius_m"]) - a) / a)
                aor_err["field"].append(abs(float(m["aor_field_radius_m"]) - a) / a)
                print("  %s: area of review: Flow %.0f m, head %.0f, field %.0f"
                      % (name, a, float(m["aor_radius_m"]), float(m["aor_field_radius_m"])))
    check("ufno_kpis measured every example", len(mass_err["head"]) == len(examples), mass_err)
    if mass_err["head"]:
        h, f = np.mean(mass_err["head"]), np.mean(mass_err["field"])
        check("the head's CO2 mass (mean error %.3f) is closer to Flow's than the field's (%.3f)"
              % (h, f), h < f)
    if aor_err["head"]:
        h, f = np.mean(aor_err["head"]), np.mean(aor_err["field"])
        check("the head's area of review (mean error %.3f) is closer to Flow's than the field's "
              "(%.3f)" % (h, f), h < f)
    if radius_err["head"]:
        # The field's radius is exact where its front falls in Flow's cell and a cell off
        # elsewhere; the head trades some mean error for more cases within 10 % of Flow on the
        # held-out sets (docs/accuracy.md, "The plume radius: head or field"): it must do at least
        # as well by that count here, and stay within 2 points of the field's mean error.
        h, f = np.mean(radius_err["head"]), np.mean(radius_err["field"])
        nh = sum(e <= 0.1 for e in radius_err["head"])
        nf = sum(e <= 0.1 for e in radius_err["field"])
        check("the head's plume radius is within 10 %% of Flow's on as many examples as the "
              "field's (%d against %d)" % (nh, nf), nh >= nf)
        check("... with a mean error (%.3f) within 0.02 of the field's (%.3f)" % (h, f),
              h <= f + 0.02)
    if scale_err["head"]:
        h, f = np.mean(scale_err["head"]), np.mean(scale_err["network"])
        check("the dP field with the field-scale head (mean error %.4f) is closer to Flow's than "
              "the network's alone (%.4f)" % (h, f), h < f)
    if peak_err["head"]:
        # Three cases cannot rank the head against the network's field (on the 152 test cases
        # the head is within 10 % of Flow in 117, the field of the modes-6 network in 56:
        # docs/accuracy.md); they can catch a head gone wrong, most of all one that reads low.
        e = np.array(peak_err["head"])
        check("the head's maximum dP: mean error %.3f at most 0.2, none more than 10 %% below "
              "Flow's (%s; the network's field: %s)"
              % (np.abs(e).mean(), np.round(e, 3), np.round(peak_err["field"], 3)),
              np.abs(e).mean() <= 0.2 and e.min() >= -0.1)



# The shipped dP model files and the physics estimate their maximum-dP head reads last: the
# default the buoyancy-aware one (its maximum, first-report value and the day of its maximum),
# dp_ufno_implicit.h5 (the same network, a faster head) the implicit estimate's first-report
# value.
DP_HEADS = (("dp_ufno.h5", "log_rz_gravity_max_day"),
            ("dp_ufno_implicit.h5", "log_rz_implicit_first_report_dp_bar"))


@pytest.mark.parametrize("file_name, last_input", DP_HEADS)
def test_dp_model_heads(file_name, last_input):
    """Each shipped dP model file's maximum-dP head reads the physics estimate it says it does,
    and the programs' maximum dP (their C++ twin of the estimate included) equals the Python
    reader's on every example and lies inside its interval."""
    exe = os.environ.get("UFNO_PREDICT", os.path.join(ROOT, "build", "apps", "ufno_predict"))
    kpis_exe = os.path.join(os.path.dirname(exe), "ufno_kpis")
    model = os.path.join(ROOT, "models", file_name)
    head = max_dp_head.read_head(model)
    check("%s carries a maximum-dP head" % file_name, head is not None)
    with h5py.File(model, "r") as f:
        names = str(f["max_dp_head"].attrs.get("features", "")).split(",")
    check("... whose last input is %s" % last_input,
          bool(names) and names[-1] == last_input, names[-3:])
    env = dict(os.environ, OMP_NUM_THREADS="1")
    sg_file = os.path.join(ROOT, "models", "sg_ufno.h5")
    for case_path in sorted(glob.glob(os.path.join(ROOT, "examples", "opm", "*", "case.h5"))):
        name = os.path.basename(os.path.dirname(case_path))
        target = os.path.join(os.path.dirname(case_path), "target.h5")
        row = kpi_table(kpis_exe, [case_path, target, "--model", sg_file, "--model", model], env)
        if not row:
            continue
        x0 = ufno_encoding.encode_case(ufno_cases.read_case_h5(case_path))[:, :, 0, :][None]
        want = float(max_dp_head.estimate(model, x0)[0])
        got, lo, hi = (float(row[k]) for k in ("max_dP_bar", "max_dP_bar_lo", "max_dP_bar_hi"))
        check("%s: ufno_kpis's maximum dP %.4f bar equals Python's %.4f (rel 1e-5)"
              % (name, got, want), abs(got / want - 1) <= 1e-5)
        check("%s: ... inside its interval [%.2f, %.2f]" % (name, lo, hi), lo <= got <= hi)
