"""The screening report of a sweep (python/ufno/screening/sweep_report.py): reports built from
synthetic kpis.csv tables (one scenario, failed scenarios, with and without verification and
intervals), their numbers checked against those computed here, and bad inputs refused in one
line with nothing written."""
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_report_fixture import THRESHOLDS, make_sweep, threshold_value  # noqa: E402

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMP = None  # a fresh directory per module (conftest.py)


def report(sweep_dir, *args):
    env = dict(os.environ, PYTHONPATH=PYDIR)
    return subprocess.run([sys.executable, "-m", "ufno.sweep_report", sweep_dir] + list(args),
                          capture_output=True, text=True, env=env, timeout=300)


def percentile(values, q):
    """Linear interpolation between order statistics at rank q (n - 1), by hand."""
    v = sorted(x for x in values if math.isfinite(x))
    pos = q / 100 * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def rows(page, table_id, key):
    """{key attribute of each row: {cell class: data-value}} of the table with that id."""
    m = re.search(r'<table id="%s">(.*?)</table>' % table_id, page, re.S)
    assert m, "no table %s" % table_id
    out = {}
    for row in re.finditer(r'<tr %s="([^"]+)"[^>]*>(.*?)</tr>' % key, m.group(1), re.S):
        cells = {}
        for c in re.finditer(r'<td (?:data-kpi="([^"]*)" )?class="num ([\w-]+)" '
                             r'data-value="([^"]+)"', row.group(2)):
            cells[c.group(1) or c.group(2)] = float(c.group(3))
        out[row.group(1)] = cells
    return out


def build(name, **kw):
    d = os.path.join(TMP, name)
    config, values = make_sweep(d, **kw)
    r = report(d, "--config", config)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(d, "report.html")) as f:
        return d, f.read(), values


def check_quantiles(page, values, kpis):
    stats = rows(page, "kpi-stats", "data-kpi")
    assert set(kpis) <= set(stats)
    for k in kpis:
        for q in (10, 50, 90):
            assert stats[k]["p%d" % q] == pytest.approx(percentile(values[k], q), rel=1e-12), k


KPIS = ["plume_radius_m_1yr", "plume_radius_m_30yr", "max_dP_bar", "aor_radius_m", "co2_mass_Mt"]


def test_quantiles_decisions_and_sensitivity_match_the_table():
    d, page, values = build("full", n=40, failed=(3, 17))
    check_quantiles(page, values, KPIS)
    stats = rows(page, "kpi-stats", "data-kpi")
    assert stats["max_dP_bar"]["count"] == 38  # the failed scenarios have no KPIs
    assert stats["max_dP_bar"]["with-interval"] == 38
    assert re.search(r'id="n-failed">2<', page)
    assert "scenario_0003, scenario_0017" in page

    # Each threshold: the fraction above by the estimate, and by the intervals.
    dec = rows(page, "decision-table", "data-kpi")
    for k, t in THRESHOLDS.items():
        t = threshold_value(t)
        v = np.array(values[k])
        assert dec[k]["fraction-above"] == pytest.approx((v > t).mean(), rel=1e-12), k
        d_col = np.array(values["decision_" + k])
        assert dec[k]["uncertain"] == pytest.approx((d_col == 0).mean(), rel=1e-12)
        assert dec[k]["surely-above"] == pytest.approx((d_col == 1).mean(), rel=1e-12)
        assert dec[k]["surely-below"] == pytest.approx((d_col == -1).mean(), rel=1e-12)
        # The uncertain scenarios are named, and only they.
        listed = re.search(r'<ul class="scenarios uncertain" data-kpi="%s">(.*?)</ul>' % k, page)
        names = re.findall(r"<li>(scenario_\d+):", listed.group(1)) if listed else []
        ok_names = ["scenario_%04d" % i for i in range(40) if i not in (3, 17)]
        assert names == [n for n, x in zip(ok_names, d_col) if x == 0]
    assert (np.array(values["decision_plume_radius_m_30yr"]) == 0).any()  # the test can fail

    # Spearman rank correlation, by 1 - 6 sum d^2 / (n (n^2 - 1)) (no ties in these samples).
    sens = rows(page, "sensitivity-table", "data-parameter")
    for p in ("INJ_RATE", "PERM_MULT", "TEMP"):
        for k in KPIS:
            x, y = np.array(values[p]), np.array(values[k])
            if len(set(y)) < len(y):
                continue
            n = len(x)
            dr = np.argsort(np.argsort(x)) - np.argsort(np.argsort(y))
            rho = 1 - 6 * (dr ** 2).sum() / (n * (n * n - 1))
            assert sens[p][k] == pytest.approx(rho, abs=1e-12), (p, k)
    assert sens["INJ_RATE"]["max_dP_bar"] > 0.5  # the synthetic dP rises with the rate

    # The footprint table: radius quantiles by year.
    fp = rows(page, "footprint-table", "data-year")
    for y in ("1", "30"):
        assert fp[y]["p50"] == pytest.approx(percentile(values["plume_radius_m_%syr" % y], 50))

    # Every chart is an inline SVG with content; nothing is fetched.
    for chart in ["cdf-" + k for k in KPIS] + ["decisions", "tornado", "footprint", "pressure",
                                               "verification"]:
        m = re.search(r'<figure class="chart" id="chart-%s"><svg[^>]*>(.*?)</svg>' % chart,
                      page, re.S)
        assert m and "<path" in m.group(1), chart
    assert not re.search(r'(src|href)="(https?:)?//', page)

    # ufno against Flow: the verified rows, and the failed Flow run named.
    ver = rows(page, "verification-table", "data-scenario")
    assert "scenario_0000" in ver
    assert "scenario_9999: failed: flow exit status 1" in page
    assert "shipped default models" in page and "Configuration (" in page


def test_the_models_are_described():
    d = os.path.join(TMP, "models")
    config, _ = make_sweep(d, n=5, verify=False)
    model = os.path.join(os.path.dirname(PYDIR), "tests", "data", "ufno_small.h5")
    r = report(d, "--config", config, "--model", model, "--model", os.path.join(d, "none.h5"))
    assert r.returncode == 0, r.stderr
    page = open(os.path.join(d, "report.html")).read()
    table = re.search(r'<table id="models">(.*?)</table>', page, re.S).group(1)
    assert "<code>ufno_small.h5</code>" in table and "variable: dP" in table
    assert "architecture: UFNO" in table and "SHA-256" in table
    assert "<code>none.h5</code>" in table and "cannot be read" in table


def test_one_scenario():
    d, page, values = build("one", n=1, verify=False)
    check_quantiles(page, values, KPIS)
    stats = rows(page, "kpi-stats", "data-kpi")
    assert stats["max_dP_bar"]["p10"] == stats["max_dP_bar"]["p90"] == values["max_dP_bar"][0]
    assert "Too few scenarios" in page
    assert "verified no scenario with OPM Flow" in page
    assert 'id="chart-cdf-max_dP_bar"' in page and 'id="chart-tornado"' not in page


def test_without_intervals_every_answer_is_uncertain():
    d, page, values = build("noint", n=12, intervals=False, verify=False)
    check_quantiles(page, values, KPIS)
    stats = rows(page, "kpi-stats", "data-kpi")
    assert stats["max_dP_bar"]["with-interval"] == 0
    dec = rows(page, "decision-table", "data-kpi")
    for k, t in THRESHOLDS.items():
        assert dec[k]["uncertain"] == 1.0
        assert dec[k]["fraction-above"] == pytest.approx(
            (np.array(values[k]) > threshold_value(t)).mean())


def test_every_scenario_failed():
    d, page, values = build("allfailed", n=3, failed=(0, 1, 2), verify=False)
    assert re.search(r'id="n-failed">3<', page)
    assert "No scenario has KPIs" in page
    assert "<svg" not in page


def test_without_decisions_or_configuration():
    d = os.path.join(TMP, "nodec")
    make_sweep(d, n=8, decisions=False, verify=False)
    r = report(d)  # no --config: no thresholds, the rest as usual
    assert r.returncode == 0, r.stderr
    page = open(os.path.join(d, "report.html")).read()
    assert "sets no decision thresholds" in page and "No configuration was given" in page
    assert 'id="chart-tornado"' in page


def one_line_error(r, *words):
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_bad_inputs_are_refused_in_one_line_and_nothing_is_written():
    d = os.path.join(TMP, "bad")
    config, _ = make_sweep(d, n=6, verify=False)
    kpis = os.path.join(d, "kpis.csv")
    text = open(kpis).read()
    with open(kpis, "w") as f:
        f.write(text.replace(",ok,", ",ok,x", 1))
    one_line_error(report(d, "--config", config), "kpis.csv", "line 2", "INJ_RATE")
    with open(kpis, "w") as f:
        f.write(text.splitlines()[0] + "\nscenario_0000,ok,1\n")
    one_line_error(report(d, "--config", config), "kpis.csv", "line 2", "cells")
    with open(kpis, "w") as f:
        f.write(text)
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write('{"decisions": {"max_dP_bar": {"value": 3, "unit": "km"}}}')
    one_line_error(report(d, "--config", bad), "bad.json", "decisions.max_dP_bar", "unit")
    with open(bad, "w") as f:
        f.write('{"decisions": {"max_dP_bar": -1}}')
    one_line_error(report(d, "--config", bad), "decisions.max_dP_bar", "positive")
    with open(bad, "w") as f:
        f.write("{")
    one_line_error(report(d, "--config", bad), "bad.json", "JSON")
    one_line_error(report(os.path.join(TMP, "missing")), "kpis.csv", "cannot be read")
    # The report never replaces an input.
    one_line_error(report(d, "--config", config, "--out", kpis), "kpis.csv", "input")
    assert open(kpis).read() == text
    assert not os.path.exists(os.path.join(d, "report.html"))
    assert not [n for n in os.listdir(d) if n.endswith(".tmp")]
