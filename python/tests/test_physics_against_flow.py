#!/usr/bin/python3
"""The physics estimates of the maximum pressure buildup (python/ufno/heads/physics.py, its C++
twin runtime/PressureEstimates.cpp) and the shipped maximum-dP head that reads them, against
OPM Flow on simple homogeneous cases (the example site's 24 x 48 grid, its seven formation
layers, one permeability and porosity everywhere; Flow runs 30 years in about a second each).

What is asserted is what the estimates are, measured (docs/kpis.md, "Maximum dP"):
- each closed form (Theis at the first cell after one day, the single-phase r-z solve, the r-z
  solve with the two-phase correction) is below Flow's maximum, by at most 60 %: they leave out
  the early two-phase buildup around the well, which is what the head learns;
- the implicit two-phase r-z solve, which models that buildup, is within 10 % of it;
- Flow's maximum lies within the shipped head's 90 % interval, and the head's estimate within
  25 % of it;
- ufno_predict's dP field peaks at the head's estimate (runtime/DpPeakMatch.cpp).

Skipped (exit 77) without `flow`. Programs: $UFNO_APPS (default build/apps/).
"""
import csv
import io
import os
import shutil
import subprocess
import tempfile

import h5py
import numpy as np
import pytest

from ufno.data import cases as ufno_cases
from ufno.heads import physics as ph

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
APPS = os.environ.get("UFNO_APPS", os.path.join(ROOT, "build", "apps"))
SITE = os.path.join(ROOT, "examples", "opm", "s1_i000026", "case.h5")
MODELS = [os.path.join(ROOT, "models", m) for m in ("sg_ufno.h5", "dp_ufno.h5")]
FLOW = shutil.which("flow")

# (permeability mD, porosity, rate Mt/yr): inside the shipped models' training ranges.
CASES = [(100.0, 0.20, 0.275), (30.0, 0.15, 0.5), (400.0, 0.25, 1.2)]


def homogeneous(path, k, phi, rate):
    shutil.copy(SITE, path)
    with h5py.File(path, "r+") as f:
        act = f["PERMX"][()] > 0
        f["PERMX"][...] = np.where(act, k, 0.0)
        f["PERMZ"][...] = np.where(act, 0.1 * k, 0.0)
        f["PORO"][...] = np.where(act, phi, f["PORO"][()])
        f["INJ_RATE"][...] = rate
    return path


def run(args, timeout=300):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert p.returncode == 0, (args, p.stderr)
    return p


@pytest.mark.skipif(FLOW is None, reason="OPM Flow (flow) is not installed")
@pytest.mark.parametrize("k,phi,rate", CASES)
def test_estimates_against_flow(k, phi, rate):
    with tempfile.TemporaryDirectory() as work:
        case = homogeneous(os.path.join(work, "case.h5"), k, phi, rate)
        target = os.path.join(work, "flow.h5")
        run([os.path.join(APPS, "ufno_export"), case, "--deck", os.path.join(work, "deck"),
             "--targets", target, "--flow", FLOW])
        c = ufno_cases.read_case_h5(case)
        active = np.asarray(c["PERMX"]) > 0
        with h5py.File(target, "r") as f:
            dp = f["dP"][()].reshape(-1, *active.shape)
        flow_max = float(dp[:, active].max())

        d = ph.from_case(c)
        features, theis = ph.max_dp_physics_features(d)
        # The three estimates as the head reads them: Theis, r-z + two-phase, r-z at day one.
        estimates = {"Theis": theis, "r-z two-phase": float(np.exp(features[1])),
                     "r-z single-phase": float(np.exp(features[2]))}
        for name, v in estimates.items():
            assert 0.4 * flow_max <= v <= flow_max, (name, v, flow_max)
        # The implicit two-phase r-z solve (Flow's own first-day step, upstream saturations, the
        # injected volume at the well's pressure less the dissolved CO2): within 10 % of Flow.
        implicit = float(ph.implicit_max_dp_bar([d])[0])
        assert abs(implicit / flow_max - 1) <= 0.1, (implicit, flow_max)
        estimates["r-z implicit two-phase"] = implicit

        kpis = run([os.path.join(APPS, "ufno_kpis"), case, target] +
                   sum((["--model", m] for m in MODELS), [])).stdout
        row = next(csv.DictReader(io.StringIO(kpis)))
        head, lo, hi = (float(row[c]) for c in ("max_dP_bar", "max_dP_bar_lo", "max_dP_bar_hi"))
        assert lo <= flow_max <= hi, (lo, flow_max, hi)
        assert abs(head / flow_max - 1) <= 0.25, (head, flow_max)
        print("k %g mD, phi %g, %g Mt/yr: Flow %.2f bar; %s; head %.2f [%.2f, %.2f]"
              % (k, phi, rate, flow_max,
                 ", ".join("%s %.2f" % kv for kv in estimates.items()), head, lo, hi))

        out = os.path.join(work, "pred.h5")
        run([os.path.join(APPS, "ufno_predict"), "--case", case, "--out", out, "--threads", "1"])
        with h5py.File(out, "r") as f:
            peak = float(f["dP"][0][:, active].max())
        assert abs(peak / head - 1) <= 1e-5, (peak, head)
