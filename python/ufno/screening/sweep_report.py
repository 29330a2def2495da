"""The screening report of a sweep (docs/sweeps.md, "Report"): one self-contained HTML file, with
matplotlib's charts inline as SVG, that opens offline and prints on A4.

It reads the sweep's output directory (kpis.csv, and verification.csv when the sweep verified
scenarios with OPM Flow), the sweep's configuration (for the decision thresholds, the years and
the critical pressure) and the model files (their attributes), and shows:
- each KPI's distribution over the scenarios: P10 / P50 / P90 (10 %, 50 % and 90 % of the
  scenarios lie below), the empirical CDF, and each scenario's own 90 % interval where the table
  has `<kpi>_lo` / `<kpi>_hi`;
- for each decision threshold, the fraction of scenarios whose KPI lies above it, and the
  scenarios whose interval lies across it or that have none (`decision_<kpi>` = 0);
- which sampled parameters drive each KPI (Spearman rank correlation over the scenarios);
- the plume radius quantiles against the years, and the maximum dP and area of review;
- ufno against Flow for the verified scenarios;
- the configuration, the models and the date.

Every number the page shows is also in a `data-value` attribute (full precision), so that tests
can read them back."""
import argparse
import datetime
import hashlib
import html
import io
import json
import math
import os
import re
import sys

import numpy as np

from ufno.data.output_path import check_output

PROG = "ufno.sweep_report"

# Units a decision threshold may be given in, per column unit: factor to the column's unit (the
# twin of screening/Decisions.cpp kUnits).
THRESHOLD_UNITS = {"bar": {"bar": 1.0, "MPa": 10.0, "psi": 0.0689476},
                   "m": {"m": 1.0, "km": 1000.0},
                   "Mt": {"Mt": 1.0, "kt": 1e-3}}

YEAR_COLUMN = re.compile(r"^(.*)_(\d+(?:\.\d+)?)yr$")
PARAMETER = re.compile(r"^[A-Z][A-Z0-9_]*$")

PARAMETER_NAMES = {
    "INJ_RATE": "injection rate (Mt/yr)", "TEMP": "temperature (degC)",
    "PRESSURE": "pressure (bar)", "SWI": "Swi", "VG_LAMBDA": "van Genuchten lambda",
    "PERF_TOP": "top perforated layer", "PERF_BOTTOM": "bottom perforated layer",
    "PERM_MULT": "permeability multiplier", "PORO_MULT": "porosity multiplier",
    "BASE_CASE": "base case", "KGEO": "geometric mean k (mD)", "SIGMA_LNK": "sigma ln k",
    "CORR_R": "radial correlation (cells)", "CORR_Z": "vertical correlation (layers)",
    "ANISOTROPY": "kz/kr", "PORO_MEAN": "mean porosity", "FIELD_SEED": "field seed"}


class ReportError(ValueError):
    """One line naming the file and the field: the report cannot be made from these inputs."""


# ---------------------------------------------------------------------------------------------
# Reading the sweep

def _number(cell):
    cell = cell.strip()
    if cell == "":
        return math.nan
    return float(cell)  # "nan", "inf" included


class KpiTable:
    """kpis.csv: one row per scenario, its status, parameters, KPIs, decisions."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                lines = [line.rstrip("\r\n") for line in f]
        except OSError as e:
            raise ReportError("%s: cannot be read (%s)" % (path, e.strerror or e))
        lines = [line for line in lines if line.strip()]
        if not lines:
            raise ReportError("%s: is empty (no header)" % path)
        self.header = lines[0].split(",")
        if self.header[:2] != ["scenario", "status"]:
            raise ReportError("%s: header: must begin with scenario,status" % path)
        if len(set(self.header)) != len(self.header):
            raise ReportError("%s: header: repeats a column" % path)
        self.names, self.status = [], []
        values = []
        for i, line in enumerate(lines[1:], start=2):
            cells = line.split(",")
            if len(cells) != len(self.header):
                raise ReportError("%s: line %d: %d cells where the header has %d"
                                  % (path, i, len(cells), len(self.header)))
            self.names.append(cells[0])
            self.status.append(cells[1])
            row = []
            for name, cell in zip(self.header[2:], cells[2:]):
                try:
                    row.append(_number(cell))
                except ValueError:
                    raise ReportError("%s: line %d: %s: '%s' is not a number"
                                      % (path, i, name, cell[:40]))
            values.append(row)
        self.values = np.array(values, dtype=float).reshape(len(values), len(self.header) - 2)
        self.ok = np.array([s == "ok" for s in self.status], dtype=bool)
        self.parameters = []
        for name in self.header[2:]:
            if not PARAMETER.match(name):
                break
            self.parameters.append(name)
        # KPIs: the columns with an interval (<kpi>_lo, <kpi>_hi beside them).
        self.kpis = [c for c in self.header[2:] if interval_columns(c, self.header)]

    def has(self, column):
        return column in self.header

    def column(self, name):
        return self.values[:, self.header.index(name) - 2]


def interval_columns(column, header):
    """(lo, hi) column names of `column`'s interval when the header has both, else None."""
    m = YEAR_COLUMN.match(column)
    if m:
        lo, hi = "%s_lo_%syr" % m.groups(), "%s_hi_%syr" % m.groups()
    else:
        lo, hi = column + "_lo", column + "_hi"
    return (lo, hi) if lo in header and hi in header else None


def kpi_unit(column):
    base = YEAR_COLUMN.match(column).group(1) if YEAR_COLUMN.match(column) else column
    for unit in ("bar", "km2", "Mt", "m"):
        if base.endswith("_" + unit):
            return unit
    return ""


def kpi_label(column):
    m = YEAR_COLUMN.match(column)
    base, year = (m.group(1), m.group(2)) if m else (column, None)
    words = {"plume_radius_m": "plume radius", "max_dP_bar": "maximum pressure buildup",
             "aor_radius_m": "area-of-review radius", "co2_mass_Mt": "CO2 mass in the plume",
             "plume_area_km2": "plume area"}.get(base, base)
    words = words[0].upper() + words[1:]
    if year is None:
        return words
    return "%s at %s year%s" % (words, year, "" if float(year) == 1 else "s")


def kpi_short(column):
    """A column heading: "radius 30 yr", "max dP"."""
    m = YEAR_COLUMN.match(column)
    base, year = (m.group(1), m.group(2)) if m else (column, None)
    words = {"plume_radius_m": "radius", "max_dP_bar": "max dP", "aor_radius_m": "AoR radius",
             "co2_mass_Mt": "CO2 mass", "plume_area_km2": "area"}.get(base, base)
    return "%s %s yr" % (words, year) if year else words


def read_config(path):
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ReportError("%s: cannot be read (%s)" % (path, e.strerror or e))
    except ValueError as e:
        raise ReportError("%s: is not valid JSON (%s)" % (path, str(e)[:120]))


def read_thresholds(config, config_path, table):
    """[(kpi column, value in the column's unit, as given)] of the configuration's decisions."""
    out = []
    decisions = (config or {}).get("decisions", {})
    if not isinstance(decisions, dict):
        raise ReportError("%s: decisions: must be an object of KPI columns and thresholds"
                          % config_path)
    for key, v in decisions.items():
        field = "%s: decisions.%s" % (config_path, key)
        unit = kpi_unit(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            value, given = float(v), "%g %s" % (v, unit)
        elif isinstance(v, dict) and isinstance(v.get("value"), (int, float)):
            u = v.get("unit", unit)
            factor = THRESHOLD_UNITS.get(unit, {}).get(u)
            if factor is None:
                raise ReportError("%s: unit '%s' is not one of %s's" % (field, u, key))
            value, given = float(v["value"]) * factor, "%g %s" % (v["value"], u)
        else:
            raise ReportError("%s: must be a number or {\"value\": x, \"unit\": \"...\"}" % field)
        if not (math.isfinite(value) and value > 0):
            raise ReportError("%s: must be a positive finite number" % field)
        if key not in table.header:
            raise ReportError("%s: is not a column of %s" % (field, table.path))
        out.append((key, value, given))
    return out


def read_verification(path):
    """verification.csv as a list of dicts, or None when there is none."""
    if not os.path.exists(path):
        return None
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\r\n") for line in f if line.strip()]
    want = "scenario,status,kpi,ufno,flow,abs_error,rel_error,in_interval"
    if not lines or lines[0] != want:
        raise ReportError("%s: header: must be %s" % (path, want))
    for i, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != 8:
            raise ReportError("%s: line %d: %d cells where the header has 8"
                              % (path, i, len(cells)))
        row = dict(zip(want.split(","), cells))
        if row["status"] == "ok":
            try:
                for k in ("ufno", "flow", "abs_error", "rel_error", "in_interval"):
                    row[k] = _number(row[k])
            except ValueError:
                raise ReportError("%s: line %d: %s: not a number" % (path, i, k))
        rows.append(row)
    return rows


def model_card(path):
    """What a model file says about itself: name, size, SHA-256, root and head attributes."""
    card = {"path": path, "name": os.path.basename(path)}
    try:
        card["bytes"] = os.path.getsize(path)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        card["sha256"] = h.hexdigest()
    except OSError as e:
        card["error"] = "cannot be read (%s)" % (e.strerror or e)
        return card
    try:
        import h5py
    except ImportError:
        card["error"] = "attributes not read (h5py is not installed)"
        return card

    def text(v):
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        if isinstance(v, np.ndarray):
            return " x ".join(str(x) for x in v.tolist()) if v.size <= 8 else "(%d values)" % v.size
        return str(v)

    try:
        with h5py.File(path, "r") as f:
            keep = ("variable", "architecture", "grid", "modes", "width", "source")
            attrs = {k: text(v) for k, v in f.attrs.items()
                     if k in keep or re.search(r"data|train|accuracy|card|date", k)}
            card["attrs"] = attrs
            heads = {}
            for name, g in f.items():
                if name.endswith("_head") and hasattr(g, "attrs"):
                    heads[name] = {k: text(g.attrs[k]) for k in
                                   ("interval_calibration", "interval_coverage",
                                    "physics_inputs") if k in g.attrs}
            card["heads"] = heads
    except OSError as e:
        card["error"] = "not an HDF5 model file (%s)" % str(e)[:80]
    return card


# ---------------------------------------------------------------------------------------------
# Statistics

def quantiles(values):
    """P10, P50, P90 of the finite values (linear interpolation between order statistics, numpy's
    default): the values below which 10 %, 50 % and 90 % of the scenarios lie."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return (math.nan,) * 3
    return tuple(float(q) for q in np.percentile(v, [10, 50, 90]))


def ranks(x):
    """Ranks 1..n, ties given their average rank."""
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x), dtype=float)
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        r[order[i:j + 1]] = 0.5 * (i + j) + 1
        i = j + 1
    return r


def spearman(x, y):
    """Spearman's rank correlation of the pairs where both are finite; NaN when either is
    constant or fewer than 3 pairs remain."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3:
        return math.nan
    rx, ry = ranks(x), ranks(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


# ---------------------------------------------------------------------------------------------
# Charts

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams.update({
        "svg.fonttype": "none", "font.family": "DejaVu Sans", "font.size": 9,
        "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
        "grid.alpha": 0.3, "figure.dpi": 100})
    return plt


def svg(fig, name):
    """The figure as an inline <svg> element (no XML prolog), deterministic."""
    import matplotlib
    plt = _plt()
    matplotlib.rcParams["svg.hashsalt"] = name
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    s = buf.getvalue()
    s = s[s.index("<svg"):]
    return '<figure class="chart" id="chart-%s">%s</figure>' % (html.escape(name), s)


def chart_kpi_cdf(table, kpi, thresholds):
    plt = _plt()
    from matplotlib.ticker import MaxNLocator
    v = table.column(kpi)
    ok = table.ok & np.isfinite(v)
    order = np.argsort(v[ok], kind="mergesort")
    x = v[ok][order]
    n = x.size
    y = (np.arange(n) + 1) / n
    fig, ax = plt.subplots(figsize=(4.6, 2.7))
    ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0], y]), where="post", color="#1f4e79",
            label="CDF over %d scenario%s" % (n, "s" if n != 1 else ""))
    iv = interval_columns(kpi, table.header)
    if iv:
        lo, hi = table.column(iv[0])[ok][order], table.column(iv[1])[ok][order]
        has = np.isfinite(lo) & np.isfinite(hi)
        if has.any():
            # Thousands of bars are an image inside the SVG (a few MB of paths otherwise).
            ax.hlines(y[has], lo[has], hi[has], color="#e07b39", alpha=0.6, linewidth=1.2,
                      label="each scenario's 90 % interval", rasterized=bool(n > 500))
    p = quantiles(v[table.ok])
    for k, q in enumerate(p):
        ax.axvline(q, color="#555", linestyle=(0, (1, 2)) if k != 1 else "--", linewidth=0.8,
                   label="P10, P90" if k == 0 else ("P50" if k == 1 else None))
    ax.set_title("P10 %s · P50 %s · P90 %s %s" % (*("%.4g" % q for q in p), kpi_unit(kpi)),
                 fontsize=8, loc="left")
    for col, value, given in thresholds:
        if col == kpi:
            ax.axvline(value, color="#b00020", linewidth=1.2, label="threshold %s" % given)
    ax.set_xlabel("%s (%s)" % (kpi_label(kpi), kpi_unit(kpi)))
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_ylabel("fraction of scenarios")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    return svg(fig, "cdf-" + kpi)


def chart_decisions(table, thresholds):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 0.6 + 0.45 * len(thresholds)))
    labels = []
    for i, (col, value, given) in enumerate(thresholds):
        d = decision_counts(table, col, value)
        n = max(d["n"], 1)
        left = 0.0
        for part, colour in (("below", "#2e7d32"), ("uncertain", "#f9a825"),
                             ("above", "#b00020")):
            w = d[part] / n
            ax.barh(i, w, left=left, color=colour, label=part if i == 0 else None)
            left += w
        labels.append("%s > %s" % (kpi_label(col), given))
    ax.set_yticks(range(len(thresholds)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of scenarios: surely below, uncertain, surely above (90 % intervals)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=7, frameon=False)
    return svg(fig, "decisions")


def chart_tornado(kpis, params, rho):
    plt = _plt()
    cols = 2 if len(kpis) > 1 else 1
    rows = (len(kpis) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.8, 0.4 + rows * (0.35 + 0.22 * len(params))),
                             squeeze=False)
    for k, kpi in enumerate(kpis):
        ax = axes[k // cols][k % cols]
        r = np.array([rho[(kpi, p)] for p in params])
        order = np.argsort(-np.abs(np.nan_to_num(r)), kind="mergesort")
        vals = np.nan_to_num(r[order])
        ax.barh(range(len(params)), vals,
                color=["#b00020" if x > 0 else "#1f4e79" for x in vals])
        ax.set_yticks(range(len(params)))
        ax.set_yticklabels([params[i] for i in order], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(-1, 1)
        ax.axvline(0, color="#444", linewidth=0.8)
        ax.set_title(kpi_label(kpi), fontsize=8)
    for k in range(len(kpis), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.supxlabel("Spearman rank correlation with the KPI", fontsize=8)
    fig.tight_layout()
    return svg(fig, "tornado")


def chart_footprint(years, q):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    y = np.array(years)
    p10, p50, p90 = (np.array([q[i][j] for i in range(len(years))]) for j in range(3))
    ax.fill_between(y, p10, p90, color="#9ecae1", alpha=0.6, label="P10-P90 of the scenarios")
    ax.plot(y, p50, "o-", color="#1f4e79", label="P50")
    ax.set_xlabel("years of injection")
    ax.set_ylabel("plume radius (m)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    return svg(fig, "footprint")


def chart_pressure(table, thresholds, critical_dp):
    plt = _plt()
    dp = table.column("max_dP_bar")
    aor = table.column("aor_radius_m") if table.has("aor_radius_m") else None
    ok = table.ok & np.isfinite(dp)
    fig, axes = plt.subplots(1, 2 if aor is not None else 1, figsize=(6.8, 2.8), squeeze=False)
    ax = axes[0][0]
    ax.hist(dp[ok], bins=max(5, min(30, int(np.sqrt(ok.sum())) + 1)), color="#6a51a3")
    for col, value, given in thresholds:
        if col == "max_dP_bar":
            ax.axvline(value, color="#b00020", linewidth=1.2, label="threshold %s" % given)
            ax.legend(fontsize=7, frameon=False)
    ax.set_xlabel("maximum pressure buildup (bar)")
    ax.set_ylabel("scenarios")
    if aor is not None:
        ax = axes[0][1]
        both = ok & np.isfinite(aor)
        iv = interval_columns("aor_radius_m", table.header)
        if iv:
            lo, hi = table.column(iv[0]), table.column(iv[1])
            has = both & np.isfinite(lo) & np.isfinite(hi)
            if has.any():
                ax.vlines(dp[has], lo[has], hi[has], color="#e07b39", alpha=0.6, linewidth=1,
                          label="90 % interval", rasterized=bool(has.sum() > 500))
        ax.plot(dp[both], aor[both], "o", color="#6a51a3", markersize=3, label="scenario",
                rasterized=bool(both.sum() > 500))
        ax.set_xlabel("maximum pressure buildup (bar)")
        title = "area-of-review radius (m)"
        if critical_dp is not None:
            title = "radius where dP > %g bar (m)" % critical_dp
        ax.set_ylabel(title)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return svg(fig, "pressure")


def chart_verification(pairs):
    """pairs: {kpi: [(ufno, flow, lo, hi)]}; one parity panel per KPI."""
    plt = _plt()
    kpis = list(pairs)
    cols = min(3, len(kpis))
    rows = (len(kpis) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.8, 2.4 * rows), squeeze=False)
    for k, kpi in enumerate(kpis):
        ax = axes[k // cols][k % cols]
        u = np.array([p[0] for p in pairs[kpi]])
        f = np.array([p[1] for p in pairs[kpi]])
        lo = np.array([p[2] for p in pairs[kpi]])
        hi = np.array([p[3] for p in pairs[kpi]])
        has = np.isfinite(lo) & np.isfinite(hi)
        if has.any():
            ax.vlines(f[has], lo[has], hi[has], color="#e07b39", linewidth=1.2)
        ax.plot(f, u, "o", color="#1f4e79", markersize=4)
        finite = np.concatenate([u[np.isfinite(u)], f[np.isfinite(f)]])
        top = float(finite.max()) * 1.1 if finite.size and finite.max() > 0 else 1.0
        ax.plot([0, top], [0, top], color="#888", linewidth=0.8)
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_title("%s (%s)" % (kpi_label(kpi), kpi_unit(kpi)), fontsize=8)
        ax.set_xlabel("OPM Flow", fontsize=7)
        ax.set_ylabel("ufno", fontsize=7)
    for k in range(len(kpis), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.tight_layout()
    return svg(fig, "verification")


# ---------------------------------------------------------------------------------------------
# The page

def decision_counts(table, kpi, value):
    """Scenarios (ok, with a value) above the threshold by their estimate, and by their interval:
    surely below, uncertain (across it or no interval), surely above (screening/Decisions.cpp)."""
    v = table.column(kpi)
    ok = table.ok & np.isfinite(v)
    n = int(ok.sum())
    above = int((v[ok] > value).sum())
    col = "decision_" + kpi
    if table.has(col):
        d = table.column(col)
    else:  # the rule of screening/Decisions.cpp, for a table without the column
        iv = interval_columns(kpi, table.header)
        lo = table.column(iv[0]) if iv else np.full(v.shape, math.nan)
        hi = table.column(iv[1]) if iv else np.full(v.shape, math.nan)
        d = np.where(~(np.isfinite(lo) & np.isfinite(hi)), 0,
                     np.where(hi < value, -1, np.where(lo > value, 1, 0)))
    uncertain = [i for i in range(len(table.names)) if ok[i] and d[i] == 0]
    return {"n": n, "above": int(((d == 1) & ok).sum()), "below": int(((d == -1) & ok).sum()),
            "uncertain": len(uncertain), "estimate_above": above, "uncertain_rows": uncertain}


def fmt(x, digits=4):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "&ndash;"
    return html.escape("%.*g" % (digits, x))


def cell(x, cls="", digits=4):
    """A table cell showing x with its full value in data-value."""
    value = "nan" if not math.isfinite(x) else repr(float(x))
    return '<td class="num %s" data-value="%s">%s</td>' % (cls, value, fmt(x, digits))


def e(s):
    return html.escape(str(s))


STYLE = """
:root { --ink: #1a1a1a; --muted: #5f6368; --rule: #d0d4d9; --accent: #1f4e79; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 980px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; color: var(--accent); }
h2 { font-size: 17px; border-bottom: 2px solid var(--accent); padding-bottom: 2px;
     margin: 28px 0 10px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
p.meta, p.note { color: var(--muted); margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px; }
th, td { border-bottom: 1px solid var(--rule); padding: 3px 8px; text-align: left;
         vertical-align: top; }
th { background: #f3f5f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure.chart { margin: 6px 0 14px; }
figure.chart svg { max-width: 100%; height: auto; }
pre { background: #f6f8fa; border: 1px solid var(--rule); padding: 8px; font-size: 11.5px;
      white-space: pre-wrap; word-break: break-word; }
.summary { display: flex; gap: 18px; flex-wrap: wrap; margin: 12px 0; }
.summary div { border: 1px solid var(--rule); border-radius: 4px; padding: 6px 12px; }
.summary b { display: block; font-size: 18px; color: var(--accent); }
.warn { color: #b00020; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 0 18px; }
.grid2 h3 { margin-top: 8px; }
ul.scenarios { columns: 4 12em; font-size: 12px; margin: 4px 0; }
@page { size: A4; margin: 14mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; }
  section.block, figure.chart, table { break-inside: avoid; }
}
"""


def build_report(sweep_dir, config_path=None, models=None, now=None):
    """The report's HTML for the sweep in `sweep_dir` (ReportError for unusable inputs)."""
    table = KpiTable(os.path.join(sweep_dir, "kpis.csv"))
    config = read_config(config_path)
    thresholds = read_thresholds(config, config_path, table)
    verification = read_verification(os.path.join(sweep_dir, "verification.csv"))
    if models is None:
        models = list((config or {}).get("models", []))
    now = now or datetime.datetime.now(datetime.timezone.utc)
    n, n_ok = len(table.names), int(table.ok.sum())
    failed = [table.names[i] for i in range(n) if not table.ok[i]]
    title = "Screening report: %s" % os.path.basename(os.path.normpath(sweep_dir))
    out = ['<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title>\n<style>%s</style>\n</head>\n<body>" % (e(title), STYLE),
           "<h1>%s</h1>" % e(title)]
    if config and isinstance(config.get("description"), str):
        out.append('<p class="description">%s</p>' % e(config["description"]))
    out.append('<p class="meta">Made %s from <code>%s</code>%s.</p>' % (
        e(now.strftime("%Y-%m-%d %H:%M UTC")), e(os.path.join(sweep_dir, "kpis.csv")),
        " and <code>%s</code>" % e(config_path) if config_path else ""))
    out.append('<div class="summary"><div><b id="n-scenarios">%d</b>scenarios</div>'
               '<div><b id="n-ok">%d</b>predicted</div><div><b id="n-failed">%d</b>failed</div>'
               % (n, n_ok, len(failed)))
    if table.has("verified_by_flow"):
        out.append('<div><b id="n-verified">%d</b>verified with OPM Flow</div>'
                   % int(np.nansum(table.column("verified_by_flow") == 1)))
    out.append("</div>")
    if failed:
        out.append('<p class="warn">Failed scenarios (no KPIs; see the sweep\'s messages): %s</p>'
                   % e(", ".join(failed)))

    # KPI distributions
    out.append('<section id="kpis"><h2>KPI distributions</h2>')
    out.append('<p class="note">P10, P50 and P90: the values below which 10 %, 50 % and 90 % of '
               "the scenarios lie (linear interpolation between scenarios). The orange bars are "
               "each scenario's 90 % interval (<code>&lt;kpi&gt;_lo</code>, "
               "<code>&lt;kpi&gt;_hi</code>); a KPI without one has none drawn.</p>")
    if n_ok == 0:
        out.append('<p class="warn">No scenario has KPIs: nothing to show.</p>')
    else:
        out.append('<table id="kpi-stats"><tr><th>KPI</th><th>unit</th><th>scenarios</th>'
                   "<th>P10</th><th>P50</th><th>P90</th><th>with an interval</th></tr>")
        for kpi in table.kpis:
            v = table.column(kpi)
            p = quantiles(v[table.ok])
            iv = interval_columns(kpi, table.header)
            with_iv = int((table.ok & np.isfinite(table.column(iv[0]))
                           & np.isfinite(table.column(iv[1]))).sum())
            out.append('<tr data-kpi="%s"><td>%s</td><td>%s</td>%s%s%s%s%s</tr>' % (
                e(kpi), e(kpi_label(kpi)), e(kpi_unit(kpi)),
                cell(float(np.isfinite(v[table.ok]).sum()), "count"), cell(p[0], "p10"),
                cell(p[1], "p50"), cell(p[2], "p90"), cell(float(with_iv), "with-interval")))
        out.append("</table>")
        out.append('<div class="grid2">')
        for kpi in table.kpis:
            if np.isfinite(table.column(kpi)[table.ok]).any():
                out.append('<section class="block"><h3>%s</h3>%s</section>'
                           % (e(kpi_label(kpi)), chart_kpi_cdf(table, kpi, thresholds)))
        out.append("</div>")
    out.append("</section>")

    # Decisions
    out.append('<section id="decisions"><h2>Decisions</h2>')
    if not thresholds:
        out.append('<p class="note">The configuration sets no decision thresholds '
                   '(<code>"decisions"</code>, docs/sweeps.md).</p>')
    else:
        out.append('<p class="note">"Above by the estimate": the KPI\'s value exceeds the '
                   "threshold. \"Surely\" above or below: the scenario's whole 90 % interval "
                   "lies there. Uncertain: the interval lies across the threshold, or the KPI "
                   "has no interval; only an OPM Flow run settles those.</p>")
        out.append('<table id="decision-table"><tr><th>KPI</th><th>threshold</th>'
                   "<th>scenarios</th><th>above by the estimate</th><th>surely above</th>"
                   "<th>uncertain</th><th>surely below</th></tr>")
        counts = []
        for col, value, given in thresholds:
            d = decision_counts(table, col, value)
            counts.append(d)
            frac = d["estimate_above"] / d["n"] if d["n"] else math.nan
            out.append('<tr data-kpi="%s"><td>%s</td><td data-value="%r">%s</td>%s%s%s%s%s</tr>'
                       % (e(col), e(kpi_label(col)), value, e(given), cell(float(d["n"]), "count"),
                          cell(frac, "fraction-above"),
                          cell(d["above"] / d["n"] if d["n"] else math.nan, "surely-above"),
                          cell(d["uncertain"] / d["n"] if d["n"] else math.nan, "uncertain"),
                          cell(d["below"] / d["n"] if d["n"] else math.nan, "surely-below")))
        out.append("</table>")
        if n_ok:
            out.append(chart_decisions(table, thresholds))
        for (col, value, given), d in zip(thresholds, counts):
            rows = d["uncertain_rows"]
            out.append('<h3>Uncertain answers on %s &gt; %s (%d)</h3>'
                       % (e(kpi_label(col)), e(given), len(rows)))
            if rows:
                iv = interval_columns(col, table.header)
                shown = rows[:200]
                items = []
                for i in shown:
                    lo = table.column(iv[0])[i] if iv else math.nan
                    hi = table.column(iv[1])[i] if iv else math.nan
                    items.append("<li>%s: %s [%s, %s]</li>" % (
                        e(table.names[i]), fmt(table.column(col)[i]), fmt(lo), fmt(hi)))
                out.append('<ul class="scenarios uncertain" data-kpi="%s">%s</ul>'
                           % (e(col), "".join(items)))
                if len(rows) > len(shown):
                    out.append('<p class="note">and %d more (kpis.csv, column '
                               "<code>decision_%s</code> = 0).</p>"
                               % (len(rows) - len(shown), e(col)))
    out.append("</section>")

    # Sensitivity
    out.append('<section id="sensitivity"><h2>What drives each KPI</h2>')
    params = [p for p in table.parameters
              if np.unique(table.column(p)[table.ok & np.isfinite(table.column(p))]).size > 1]
    kpis = [k for k in table.kpis if np.isfinite(table.column(k)[table.ok]).sum() >= 3]
    if not params or not kpis or n_ok < 3:
        out.append('<p class="note">Too few scenarios or sampled parameters for a rank '
                   "correlation (at least 3 scenarios with KPIs and one parameter that varies).</p>")
    else:
        rho = {(k, p): spearman(table.column(p)[table.ok], table.column(k)[table.ok])
               for k in kpis for p in params}
        out.append('<p class="note">Spearman rank correlation between each sampled parameter and '
                   "each KPI over the %d predicted scenarios: +1, the KPI rises with the "
                   "parameter in every pair of scenarios; 0, no monotone relation. With few "
                   "scenarios, small values are noise (|rho| &lt; %.2f is not significant at "
                   "5 %%).</p>" % (n_ok, 1.96 / math.sqrt(max(n_ok - 1, 1))))
        out.append(chart_tornado(kpis, params, rho))
        out.append('<table id="sensitivity-table"><tr><th>parameter</th>%s</tr>'
                   % "".join('<th title="%s">%s</th>' % (e(k), e(kpi_short(k))) for k in kpis))
        for p in params:
            out.append('<tr data-parameter="%s"><td>%s<br><small>%s</small></td>%s</tr>' % (
                e(p), e(p), e(PARAMETER_NAMES.get(p, "")),
                "".join(cell(rho[(k, p)], "rho", 2).replace("<td ", '<td data-kpi="%s" ' % e(k))
                        for k in kpis)))
        out.append("</table>")
    out.append("</section>")

    # Footprint and pressure
    out.append('<section id="footprint"><h2>Plume footprint and pressure</h2>')
    years = []
    for c in table.kpis:
        m = YEAR_COLUMN.match(c)
        if m and m.group(1) == "plume_radius_m":
            years.append((float(m.group(2)), c))
    years.sort()
    if years and n_ok:
        q = [quantiles(table.column(c)[table.ok]) for _, c in years]
        out.append('<table id="footprint-table"><tr><th>year</th><th>P10 radius (m)</th>'
                   "<th>P50</th><th>P90</th></tr>")
        for (y, c), qq in zip(years, q):
            out.append('<tr data-year="%g"><td>%g</td>%s%s%s</tr>'
                       % (y, y, cell(qq[0], "p10"), cell(qq[1], "p50"), cell(qq[2], "p90")))
        out.append("</table>")
        if all(math.isfinite(x) for qq in q for x in qq):
            out.append(chart_footprint([y for y, _ in years], q))
    critical = None
    if config and isinstance(config.get("kpi"), dict):
        critical = config["kpi"].get("critical_dp_bar")
    critical = 10.0 if critical is None else critical  # KpiOptions' default
    if table.has("max_dP_bar") and n_ok and np.isfinite(table.column("max_dP_bar")[table.ok]).any():
        out.append('<p class="note">Maximum pressure buildup over the scenarios, and the '
                   "area-of-review radius (where the buildup exceeds the critical pressure of "
                   "%g bar) against it.</p>" % critical)
        out.append(chart_pressure(table, thresholds, critical))
    out.append("</section>")

    # Verification
    out.append('<section id="verification"><h2>ufno against OPM Flow</h2>')
    if verification is None:
        out.append('<p class="note">This sweep verified no scenario with OPM Flow '
                   '(<code>"verify"</code>, docs/sweeps.md).</p>')
    else:
        out.append(verification_html(verification, table))
    out.append("</section>")

    # Configuration and models
    out.append('<section id="configuration"><h2>Configuration and models</h2>')
    if models:
        out.append('<table id="models"><tr><th>model file</th><th>what it says</th></tr>')
        for m in models:
            card = model_card(m)
            what = []
            if "sha256" in card:
                what.append("%s bytes, SHA-256 %s" % (format(card["bytes"], ","),
                                                      card["sha256"][:16]))
            for k, v in card.get("attrs", {}).items():
                what.append("%s: %s" % (k, v))
            for h, attrs in card.get("heads", {}).items():
                what.append("%s%s" % (h, "".join("; %s: %s" % kv for kv in attrs.items())))
            if "error" in card:
                what.append('<span class="warn">%s</span>' % e(card["error"]))
            out.append('<tr><td><code>%s</code></td><td>%s</td></tr>' % (
                e(card["name"]), "<br>".join(w if w.startswith("<span") else e(w) for w in what)))
        out.append("</table>")
    else:
        out.append('<p class="note">Models: the shipped default models (models/README.md).</p>')
    if config is not None:
        out.append("<h3>Configuration (<code>%s</code>)</h3><pre>%s</pre>"
                   % (e(config_path), e(json.dumps(config, indent=2))))
    else:
        out.append('<p class="note">No configuration was given: decision thresholds are not '
                   "shown.</p>")
    out.append('<p class="meta">ufno screening report, made %s.</p>'
               % e(now.strftime("%Y-%m-%d %H:%M UTC")))
    out.append("</section>\n</body>\n</html>\n")
    return "\n".join(out)


def verification_html(rows, table):
    out = []
    failed = [r for r in rows if r["status"] != "ok"]
    ok = [r for r in rows if r["status"] == "ok"]
    scen = sorted({r["scenario"] for r in ok})
    out.append('<p class="note">%d scenario%s verified%s. Each row: ufno\'s value and its 90 %% '
               "interval, Flow's value on the same case, and the relative error. All KPIs of "
               "every verified scenario are in <code>verification.csv</code>.</p>"
               % (len(scen), "" if len(scen) == 1 else "s",
                  "; %d Flow run%s failed" % (len(failed), "" if len(failed) == 1 else "s")
                  if failed else ""))
    for r in failed:
        out.append('<p class="warn">%s: %s</p>' % (e(r["scenario"]), e(r["status"])))
    index = {name: i for i, name in enumerate(table.names)}
    pairs = {}
    body = []
    for r in ok:
        if r["kpi"] not in table.kpis:
            continue
        iv = interval_columns(r["kpi"], table.header)
        i = index.get(r["scenario"])
        lo = table.column(iv[0])[i] if iv and i is not None else math.nan
        hi = table.column(iv[1])[i] if iv and i is not None else math.nan
        pairs.setdefault(r["kpi"], []).append((r["ufno"], r["flow"], lo, hi))
        inside = {1.0: "yes", 0.0: "no"}.get(r["in_interval"], "&ndash;")
        body.append('<tr data-scenario="%s" data-kpi="%s"><td>%s</td><td>%s</td>%s'
                    '<td class="num">[%s, %s]</td>%s%s<td>%s</td></tr>' % (
                        e(r["scenario"]), e(r["kpi"]), e(r["scenario"]), e(kpi_label(r["kpi"])),
                        cell(r["ufno"], "ufno"), fmt(lo), fmt(hi), cell(r["flow"], "flow"),
                        cell(100 * r["rel_error"], "rel-error", 3), inside))
    if pairs:
        out.append(chart_verification(pairs))
    if body:
        out.append('<table id="verification-table"><tr><th>scenario</th><th>KPI</th>'
                   "<th>ufno</th><th>90 %% interval</th><th>Flow</th><th>error (%%)</th>"
                   "<th>Flow in the interval</th></tr>%s</table>" % "".join(body))
    return "\n".join(out)


def write_report(sweep_dir, out=None, config_path=None, models=None):
    out = out or os.path.join(sweep_dir, "report.html")
    inputs = [os.path.join(sweep_dir, "kpis.csv"), os.path.join(sweep_dir, "verification.csv"),
              config_path] + list(models or [])
    try:
        check_output(out, inputs, "--out")
    except ValueError as err:
        raise ReportError(str(err))
    text = build_report(sweep_dir, config_path, models)
    tmp = out + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    except OSError as err:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise ReportError("%s: cannot be written (%s)" % (out, err.strerror or err))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + PROG,
        description="The screening report of a ufno_sweep output directory (report.html).")
    ap.add_argument("sweep_dir", help="the sweep's output directory (holds kpis.csv)")
    ap.add_argument("--config", help="the sweep's configuration (JSON): thresholds, years, "
                                     "critical pressure, models")
    ap.add_argument("--model", action="append", help="a model file the sweep used (repeat); "
                                                     "default: the configuration's \"models\"")
    ap.add_argument("--out", help="the report (default: SWEEP_DIR/report.html)")
    a = ap.parse_args(argv)
    try:
        path = write_report(a.sweep_dir, a.out, a.config, a.model)
    except ReportError as err:
        print("%s: error: %s" % (PROG, err), file=sys.stderr)
        return 2
    print("%s: wrote %s" % (PROG, path))
    return 0
