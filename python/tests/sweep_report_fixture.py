"""Synthetic sweep output directories for the screening report's tests: kpis.csv in ufno_sweep's
format (docs/sweeps.md, "Outputs"), the sweep's configuration and, optionally, verification.csv.

`python3 sweep_report_fixture.py DIR` writes one (40 scenarios, 2 failed, intervals, decisions,
verification) for the browser test."""
import json
import math
import os
import sys

import numpy as np

YEARS = ("1", "30")
PARAMETERS = ("INJ_RATE", "PERM_MULT", "TEMP")
THRESHOLDS = {"max_dP_bar": 60.0, "plume_radius_m_30yr": {"value": 2.5, "unit": "km"},
              "aor_radius_m": 1500.0}


def header(decisions=True, verify=True):
    h = ["scenario", "status"] + list(PARAMETERS)
    for y in YEARS:
        h += ["plume_radius_m_%syr" % y, "plume_radius_m_lo_%syr" % y,
              "plume_radius_m_hi_%syr" % y, "plume_radius_interval_%syr" % y,
              "plume_area_km2_%syr" % y, "plume_capped_%syr" % y]
    h += ["max_dP_bar", "max_dP_bar_lo", "max_dP_bar_hi", "max_dP_interval", "max_dP_radius_m",
          "max_dP_depth_m", "max_dP_year", "aor_radius_m", "aor_radius_m_lo", "aor_radius_m_hi",
          "aor_interval", "co2_mass_Mt", "co2_mass_Mt_lo", "co2_mass_Mt_hi", "co2_mass_interval",
          "training_distance", "injected_Mt", "mass_ratio", "max_dP_field_bar"]
    h += ["plume_radius_field_m_%syr" % y for y in YEARS]
    h += ["co2_mass_field_Mt", "aor_field_radius_m"]
    if decisions:
        h += ["decision_" + k for k in THRESHOLDS]
    if verify:
        h += ["verified_by_flow"]
    return h


def threshold_value(v):
    if isinstance(v, dict):
        return v["value"] * {"km": 1000.0, "m": 1.0}[v["unit"]]
    return float(v)


def make_sweep(out, n=40, failed=(), intervals=True, verify=True, decisions=True, seed=1):
    """Writes out/kpis.csv, out/sweep.json (and out/verification.csv with `verify`); returns
    (path of the configuration, {column: values of the ok scenarios})."""
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    h = header(decisions, verify)
    verified = set(range(0, n, max(1, n // 4))) if verify else set()
    rows, ok_values, flow_rows = [], {c: [] for c in h[2:]}, []
    for i in range(n):
        name = "scenario_%04d" % i
        rate, perm, temp = rng.uniform(0.3, 2.0), rng.uniform(0.5, 2.0), rng.uniform(40, 120)
        if i in failed:
            rows.append([name, "failed", "%.6g" % rate, "%.6g" % perm, "%.6g" % temp]
                        + [""] * (len(h) - 5))
            continue
        v = {"INJ_RATE": float("%.6g" % rate), "PERM_MULT": float("%.6g" % perm),
             "TEMP": float("%.6g" % temp)}
        width = 0.15 + 0.1 * rng.uniform()
        for y in YEARS:
            r = 600 * math.sqrt(float(y)) * rate ** 0.5 * perm ** 0.2 * rng.uniform(0.8, 1.2)
            v["plume_radius_m_%syr" % y] = r
            v["plume_radius_m_lo_%syr" % y] = r * (1 - width) if intervals else math.nan
            v["plume_radius_m_hi_%syr" % y] = r * (1 + width) if intervals else math.nan
            v["plume_radius_interval_%syr" % y] = 1 if intervals else 0
            v["plume_area_km2_%syr" % y] = math.pi * r * r / 1e6
            v["plume_capped_%syr" % y] = 0
        dp = 40 * rate / perm * rng.uniform(0.7, 1.3)
        aor = 2000 * rate / perm ** 0.5 * rng.uniform(0.5, 1.5) * (i % 5 != 0)
        mass = rate * 30 * rng.uniform(0.6, 0.8)
        for k, x in (("max_dP_bar", dp), ("aor_radius_m", aor), ("co2_mass_Mt", mass)):
            v[k] = x
            v[k + "_lo"] = x * (1 - width) if intervals else math.nan
            v[k + "_hi"] = x * (1 + width) if intervals else math.nan
        v["max_dP_interval"] = v["aor_interval"] = v["co2_mass_interval"] = 1 if intervals else 0
        v.update({"max_dP_radius_m": 0.5, "max_dP_depth_m": 20.0, "max_dP_year": 0.003,
                  "training_distance": 0.5, "injected_Mt": rate * 30,
                  "mass_ratio": mass / (rate * 30), "max_dP_field_bar": dp * 0.8,
                  "co2_mass_field_Mt": mass * 1.1, "aor_field_radius_m": aor})
        for y in YEARS:
            v["plume_radius_field_m_%syr" % y] = v["plume_radius_m_%syr" % y] * 1.1
        if decisions:
            for k, t in THRESHOLDS.items():
                t = threshold_value(t)
                base, year = (k[:-5], k[-5:]) if k.endswith("_30yr") else (k, "")
                lo, hi = v[base + "_lo" + year], v[base + "_hi" + year]
                d = 0 if not (math.isfinite(lo) and math.isfinite(hi)) else (
                    -1 if hi < t else (1 if lo > t else 0))
                v["decision_" + k] = d
        if verify:
            v["verified_by_flow"] = int(i in verified)
        cells = [name, "ok"]
        for c in h[2:]:
            x = v[c]
            cells.append("nan" if isinstance(x, float) and math.isnan(x) else "%.6g" % x)
            ok_values[c].append(float(cells[-1]))
        rows.append(cells)
        if i in verified:
            flow_rows.append((name, v, rng))
    with open(os.path.join(out, "kpis.csv"), "w") as f:
        f.write(",".join(h) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    config = {"description": "A synthetic sweep for the report's tests.",
              "models": [], "base_cases": ["base.h5"], "sampling": "lhs", "samples": n,
              "seed": seed, "parameters": {p: {"range": [0, 1]} for p in PARAMETERS},
              "kpi": {"years": [int(y) for y in YEARS], "critical_dp_bar": 10},
              "out": out}
    if decisions:
        config["decisions"] = THRESHOLDS
    if verify:
        config["verify"] = {"scenarios": len(verified)}
        with open(os.path.join(out, "verification.csv"), "w") as f:
            f.write("scenario,status,kpi,ufno,flow,abs_error,rel_error,in_interval\n")
            for name, v, r in flow_rows:
                for k in ("plume_radius_m_1yr", "plume_radius_m_30yr", "max_dP_bar",
                          "aor_radius_m", "co2_mass_Mt", "injected_Mt"):
                    u = float("%.6g" % v[k])
                    fl = u * r.uniform(0.8, 1.2)
                    rel = abs(u - fl) / fl if fl else ""
                    base, year = (k[:-5], k[-5:]) if k.endswith("yr") else (k, "")
                    lo, hi = v.get(base + "_lo" + year), v.get(base + "_hi" + year)
                    inside = "" if lo is None or not math.isfinite(lo) else int(lo <= fl <= hi)
                    f.write("%s,ok,%s,%.8g,%.8g,%.8g,%s,%s\n" % (
                        name, k, u, fl, abs(u - fl), "%.8g" % rel if rel != "" else "", inside))
            f.write("scenario_9999,failed: flow exit status 1,,,,,,\n")
    path = os.path.join(out, "sweep.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    return path, ok_values


if __name__ == "__main__":
    make_sweep(sys.argv[1], failed=(3, 17))
