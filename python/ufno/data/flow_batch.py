#!/usr/bin/python3
"""Generate cases with python/ufno/data/cases.py, run OPM Flow on them and convert the results.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.run_flow_batch --seed 1 --start 0 --end 100 [--data DIR] [--jobs 2]
  PYTHONPATH=python /usr/bin/python3 -m ufno.run_flow_batch --data DIR [--data DIR2 ...] --assemble OUT.h5

The default data directory is data/opm/seed_NNNN (git-ignored). Per case, DIR/case_NNNNNN/ holds
  case.h5     the project's case file (input; written last by the generator, so its presence
              means that deck/ is complete)
  deck/       CASE.DATA and include/*.INC (OPM Flow 2022.10 deck)
  run/        flow's output (EGRID, INIT, UNRST, SMSPEC/UNSMRY, PRT)
  target.h5   /SG and /dP (24, X, Y) float32 at the 24 report times, dP = PRESSURE - PRESSURE of
              report step 0 [bar]; written under a temporary name and renamed: a case is finished
              exactly when target.h5 exists.
A rerun skips finished cases and cases that failed before (their reason is in failures.csv;
--retry-failed runs them again). Every attempt is appended to DIR/runs.csv; failures (flow exit
status, timeout, missing report steps, non-finite values, the injector not meeting its target
rate, e.g. after switching to BHP control, a near-well pressure dip that recovers at the next
report step: pressure_glitch) to DIR/failures.csv. Failed cases have no target.h5, so they are
left out of --assemble, which lists them in /excluded. --reconvert rebuilds the targets of
[start, end) from their run/ directories without running flow (after a change of the checks or
of the target format); a case that now fails loses its target.

Runs use one solver configuration for the whole data set (FLOW_FLAGS, stored in
DIR/dataset.json; a rerun with different flags is refused). The timeout of a run is
--timeout-factor (10) x the median run time of the finished cases of DIR (at least
--min-timeout seconds; --initial-timeout until 5 runs have finished).

--assemble OUT.h5 packs all finished cases of the given data directories into training arrays:
/input (N, X, Y, T, 12) float32 encoded as io/CaseEncoding.cpp (python/ufno/data/encoding.py),
/SG and /dP (N, X, Y, T) float32, /case_ids, /seed, /index, /TIMES and /excluded.
"""

import argparse
import csv
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
from ufno.data import cases as uc
from ufno.data import encoding as ue
from ufno.data.output_path import check_output

# --relaxed-max-pv-fraction=0: OPM relaxes the local (CNV) convergence test wherever the cells
# that violate it hold less than this fraction of the pore volume (default 0.03). On the radial
# grid the whole near-well region (tens of km) holds far less than 3 % of the pore volume (the
# outer cells dominate), so with the default the plume region is accepted with CNV up to
# --tolerance-cnv-relaxed (3): measured on seed 1, 3 of 14 runs had report steps with the
# near-well pressure 3-11 bar off (dips that recover at the next report) and SG 0.1-0.3 off.
# With 0 every cell meets the strict CNV tolerance (0.01) unless Newton reaches its last
# iteration; measured: no dips, about 1.5x the time steps and run time.
FLOW_FLAGS = ["--threads-per-process=1", "--ds-max=0.1", "--tolerance-cnv-relaxed=3",
              "--relaxed-max-pv-fraction=0", "--enable-terminal-output=false"]
PRESSURE_SPIKE_MIN_BAR = 1.0   # pressure_glitch: see pressure_spike()
PRESSURE_SPIKE_REL = 0.05
RATE_TOLERANCE = 1e-3          # relative error of cumulative injection (FGIT) allowed
TARGET_VERSION = 1
RUN_FIELDS = ["case_id", "seed", "index", "status", "reason", "wall_s", "fgit_rel_err",
              "bhp_max_bar", "sg_max", "dp_max_bar", "checks", "timestamp"]
FAIL_FIELDS = ["case_id", "seed", "index", "reason", "detail", "wall_s", "timestamp"]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_lock = threading.Lock()


def now():
    return datetime.datetime.now().isoformat(timespec="seconds")


def append_csv(path, fields, row):
    with _lock:
        new = not os.path.exists(path)
        with open(path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            if new:
                w.writeheader()
            w.writerow({k: row.get(k, "") for k in fields})


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def case_dir(data, index):
    return os.path.join(data, "case_%06d" % index)


def target_complete(path):
    """A target file is complete if it exists (it is renamed into place only when written) and
    opens with its datasets."""
    if not os.path.exists(path):
        return False
    try:
        with h5py.File(path, "r") as f:
            return int(f.attrs.get("complete", 0)) == 1 and "SG" in f and "dP" in f
    except OSError:
        return False


def flow_version(flow):
    try:
        r = subprocess.run([flow, "--version"], capture_output=True, text=True, timeout=60)
        return r.stdout.strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001
        return "unknown (%s)" % e


def check_dataset_json(data, seed, flow, refuse=True):
    """One solver configuration per data set: record it, refuse a different one later (unless
    refuse is False: --reconvert runs no simulation). Returns the data set's configuration."""
    path = os.path.join(data, "dataset.json")
    cfg = {"seed": seed, "flow_flags": FLOW_FLAGS, "flow_version": flow_version(flow),
           "grid": [uc.NX, uc.NY, uc.NT], "theta_deg": uc.THETA_DEG,
           "case_format_version": uc.FORMAT_VERSION, "sampler_version": uc.SAMPLER_VERSION,
           "target_version": TARGET_VERSION,
           "rate_tolerance": RATE_TOLERANCE}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        diff = [k for k in cfg if old.get(k) != cfg[k]]
        if diff and not refuse:
            return old
        if diff:
            raise SystemExit("run_flow_batch: %s: settings differ from this run's (%s); use "
                             "another data directory" % (path, ", ".join(diff)))
        return old
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(cfg, f, indent=1)
    os.replace(tmp, path)
    return cfg


# ---------------------------------------------------------------------------------------------
# Reading and checking the results

def read_results(run_dir, case):
    """SG and PRESSURE (25, X, Y) for report steps 0..24 (0 in inactive cells) and the summary
    at the 24 report steps."""
    from opm.io.ecl import ERst, ESmry
    rst = ERst(os.path.join(run_dir, "CASE.UNRST"))
    steps = list(rst.report_steps)
    if steps != list(range(uc.NT + 1)):
        raise CaseFailure("missing_report_steps", "UNRST has report steps %s" % steps)
    act = case["PERMX"] > 0
    sg = np.zeros((uc.NT + 1, uc.NX, uc.NY))
    p = np.zeros((uc.NT + 1, uc.NX, uc.NY))
    for s in steps:
        a_sg = np.asarray(rst["SGAS", s], dtype=np.float64)
        a_p = np.asarray(rst["PRESSURE", s], dtype=np.float64)
        if a_sg.size != act.sum() or a_p.size != act.sum():
            raise CaseFailure("bad_restart", "step %d: %d values for %d active cells"
                              % (s, a_sg.size, act.sum()))
        sg[s][act] = a_sg      # active cells in global order: I (radial) fastest, then K
        p[s][act] = a_p
    smry = ESmry(os.path.join(run_dir, "CASE.SMSPEC"))
    summary = {k: np.asarray(smry[k, True], dtype=np.float64)
               for k in ("TIME", "FGIT", "WBHP:INJ", "WGIR:INJ")}
    return sg, p, summary


class CaseFailure(Exception):
    def __init__(self, reason, detail=""):
        super().__init__("%s: %s" % (reason, detail))
        self.reason, self.detail = reason, detail


def check_rate(case, summary, prt_text):
    """Cumulative injection against the target; returns (relative error, max BHP)."""
    q = uc.surface_rate_sm3_per_day(case["INJ_RATE"])
    t = summary["TIME"]
    if len(t) != uc.NT or np.max(np.abs(t - case["TIMES"]) / case["TIMES"]) > 1e-5:
        raise CaseFailure("report_times", "summary times %s" % t[:3])
    expected = q * t
    rel = float(np.max(np.abs(summary["FGIT"] - expected) / expected))
    bhp_max = float(np.max(summary["WBHP:INJ"]))
    switched = "control mode changed from" in prt_text
    if rel > RATE_TOLERANCE or switched:
        raise CaseFailure("rate_not_met", "FGIT rel. error %.3g, max BHP %.1f bar%s" % (
            rel, bhp_max, ", well switched control mode (PRT)" if switched else ""))
    return rel, bhp_max


def pressure_spike(case, dp):
    """Largest dip or spike [bar] of the mean dP over the active cells of the inner 24 radial
    cells: how far a report step's value lies outside the range of its two neighbours in time,
    and the tolerance max(1 bar, 5 % of the largest |mean dP|). A constant-rate injection into a
    closed domain builds pressure smoothly; an isolated dip that recovers at the next report step
    is a badly converged time step."""
    act = case["PERMX"][:, :24] > 0
    m = np.array([dp[t][:, :24][act].mean() for t in range(dp.shape[0])])
    tol = max(PRESSURE_SPIKE_MIN_BAR, PRESSURE_SPIKE_REL * float(np.abs(m).max()))
    lo, hi = np.minimum(m[:-2], m[2:]), np.maximum(m[:-2], m[2:])
    return float(np.max(np.maximum(lo - m[1:-1], m[1:-1] - hi))), tol


def sanity_checks(case, sg, dp):
    """Physical plausibility (sg, dp: (T, X, Y) of the report times); returns a dict of flags
    and values. Not failures: they are recorded in the target file and runs.csv."""
    act = case["PERMX"] > 0
    pv = case["PORO"] * uc.annulus_areas()[None, :] * case["DZ"][:, None]
    pv = np.where(act, pv, 0.0)
    extent = [int(e) for e in uc.gas_extent(sg[:uc.NT])]  # plume radius in cells (any layer)
    gas = (sg * pv[None]).sum(axis=(1, 2))
    grows = bool(np.all(np.diff(extent) >= 0) and np.all(np.diff(gas) >= -1e-6 * gas.max()))
    # Buoyancy: at the end the plume is widest at the top of the formation (gravity override);
    # and the pore-volume-weighted mean layer of the free gas, at day 1 and at the end.
    end = sg[-1] > 0.01
    def extent_of(x):
        cols = np.flatnonzero(end[x])
        return int(cols[-1]) + 1 if cols.size else 0
    perf = np.flatnonzero(case["PERF"])
    top_extent = extent_of(0)
    perf_extent = max(extent_of(x) for x in perf)
    def mean_layer(t):
        w = (sg[t] * pv).sum(axis=1)
        return float((w * np.arange(uc.NX)).sum() / max(w.sum(), 1e-30))
    # Pressure: the first report's maximum is at the well.
    first = np.where(act, dp[0], -np.inf)
    y_max = int(np.unravel_index(np.argmax(first), first.shape)[1])
    return {"plume_extent_cells": extent, "plume_grows": grows,
            "top_extent_cells_end": top_extent, "perf_extent_cells_end": perf_extent,
            "co2_rises": bool(top_extent >= perf_extent),
            "gas_layer_mean_day1": mean_layer(0), "gas_layer_mean_end": mean_layer(-1),
            "perf_layer_mean": float(perf.mean()),
            "dp_argmax_radial_cell_day1": y_max, "dp_max_near_well_early": bool(y_max <= 2)}


def write_target(path, case, sg, dp, p0, summary, info):
    tmp = path + ".tmp.%d" % os.getpid()
    try:
        with h5py.File(tmp, "w", libver="earliest") as f:
            def ds(name, data, units, desc):
                d = f.create_dataset(name, data=data, track_times=False)
                d.attrs.create("units", uc._ascii(units))
                d.attrs.create("description", uc._ascii(desc))
            ds("SG", sg.astype(np.float32), "1",
               "gas saturation at the report times, (T, X = layer, Y = radial cell)")
            ds("dP", dp.astype(np.float32), "bar",
               "PRESSURE minus PRESSURE of report step 0, (T, X, Y)")
            ds("PRESSURE0", p0.astype(np.float32), "bar", "PRESSURE at report step 0, (X, Y)")
            ds("TIMES", case["TIMES"], "day", "report times")
            ds("FGIT", summary["FGIT"], "sm3", "cumulative injected gas of the wedge")
            ds("WBHP", summary["WBHP:INJ"], "bar", "injector bottom-hole pressure")
            for k, v in info.items():
                if isinstance(v, (list, tuple)):
                    f.attrs.create(k, np.asarray(v))
                elif isinstance(v, str):
                    f.attrs.create(k, uc._ascii(v))
                else:
                    f.attrs.create(k, v)
            f.attrs.create("complete", np.int64(1))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# ---------------------------------------------------------------------------------------------
# One case

class Batch:
    def __init__(self, args):
        self.a = args
        self.data = args.data[0]
        self.runs_csv = os.path.join(self.data, "runs.csv")
        self.fail_csv = os.path.join(self.data, "failures.csv")
        failed = read_csv(self.fail_csv)
        done = [r for r in read_csv(self.runs_csv) if r["status"] == "ok"]
        self.failed_before = {int(r["index"]) for r in failed if int(r["seed"]) == args.seed}
        self.times = [float(r["wall_s"]) for r in done]
        self.results = []
        self.cfg = {"flow_flags": FLOW_FLAGS}   # replaced by the data set's (dataset.json)

    def timeout(self):
        a = self.a
        if a.timeout:
            return a.timeout
        with _lock:
            times = list(self.times)
        if len(times) < 5:
            return a.initial_timeout
        return max(a.min_timeout, a.timeout_factor * statistics.median(times))

    def log(self, index, status, reason="", detail="", wall=None, extra=None):
        row = {"case_id": uc.case_id(self.a.seed, index), "seed": self.a.seed, "index": index,
               "status": status, "reason": reason, "detail": detail,
               "wall_s": "" if wall is None else "%.2f" % wall, "timestamp": now()}
        row.update(extra or {})
        append_csv(self.runs_csv, RUN_FIELDS, row)
        if status == "failed":
            append_csv(self.fail_csv, FAIL_FIELDS, row)
        with _lock:
            self.results.append(row)
            if status == "ok" and wall is not None:
                self.times.append(wall)
        msg = "%s %-7s %s%s" % (row["case_id"], status,
                                "%.1f s" % wall if wall is not None else "",
                                (" " + reason + (": " + detail if detail else "")) if reason
                                else "")
        print(msg, flush=True)

    def load_or_generate(self, index):
        a = self.a
        d = case_dir(self.data, index)
        if os.path.exists(os.path.join(d, "case.h5")) and \
                os.path.exists(os.path.join(d, "deck", "CASE.DATA")):
            return uc.read_case_h5(os.path.join(d, "case.h5"))
        return uc.generate(a.seed, index, d, flow=a.flow, multx=not a.no_multx)

    def process(self, index):
        a = self.a
        d = case_dir(self.data, index)
        target = os.path.join(d, "target.h5")
        if target_complete(target):
            return "skipped"
        if index in self.failed_before and not a.retry_failed:
            print("%s failed before (failures.csv): skipped" % uc.case_id(a.seed, index),
                  flush=True)
            return "skipped-failed"
        try:
            case = self.load_or_generate(index)
        except Exception as e:  # noqa: BLE001
            self.log(index, "failed", "generate", str(e)[-300:])
            return "failed"

        run_tmp = os.path.join(d, "run.tmp")
        shutil.rmtree(run_tmp, ignore_errors=True)
        os.makedirs(run_tmp)
        timeout = self.timeout()
        cmd = [a.flow] + FLOW_FLAGS + ["--output-dir=" + run_tmp,
                                       os.path.join(d, "deck", "CASE.DATA")]
        t0 = time.monotonic()
        try:
            with open(os.path.join(run_tmp, "flow.log"), "w") as log:
                r = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
            rc = r.returncode
        except subprocess.TimeoutExpired:
            wall = time.monotonic() - t0
            self.log(index, "failed", "timeout", "killed after %.0f s" % timeout, wall)
            return "failed"
        wall = time.monotonic() - t0
        if rc != 0:
            tail = ""
            prt = os.path.join(run_tmp, "CASE.PRT")
            if os.path.exists(prt):
                lines = [ln.strip() for ln in open(prt, errors="replace")
                         if "rror" in ln or "roblem" in ln]
                tail = " | ".join(lines[-3:])
            self.log(index, "failed", "flow_exit_%d" % rc if rc > 0 else "flow_signal_%d" % -rc,
                     tail[-300:], wall)
            return "failed"
        return self.convert(index, case, run_tmp, wall)

    def convert(self, index, case, run_src, wall, status="ok"):
        """Checks flow's results in run_src, moves them to run/ and writes target.h5."""
        a = self.a
        d = case_dir(self.data, index)
        try:
            prt_text = open(os.path.join(run_src, "CASE.PRT"), errors="replace").read()
            sg_all, p_all, summary = read_results(run_src, case)
            rel, bhp_max = check_rate(case, summary, prt_text)
            sg = sg_all[1:]
            dp = np.where(case["PERMX"][None] > 0, p_all[1:] - p_all[0][None], 0.0)
            if not (np.isfinite(sg).all() and np.isfinite(dp).all()):
                raise CaseFailure("non_finite", "NaN or Inf in SGAS or PRESSURE")
            spike, spike_tol = pressure_spike(case, dp)
            if spike > spike_tol:
                raise CaseFailure("pressure_glitch", "near-well mean dP leaves its neighbours' "
                                  "range by %.2f bar (tolerance %.2f)" % (spike, spike_tol))
            checks = sanity_checks(case, sg, dp)
            checks["pressure_spike_bar"] = spike
            chops = prt_text.count("Problem: Solver convergence failure") + \
                prt_text.count("chopping timestep")
            info = {"case_id": uc.case_id(a.seed, index), "seed": a.seed, "index": index,
                    "wall_s": wall, "fgit_rel_err": rel, "bhp_max_bar": bhp_max,
                    "flow_flags": " ".join(self.cfg["flow_flags"]), "timestep_chops": chops,
                    "target_version": TARGET_VERSION}
            info.update(checks)
        except CaseFailure as e:
            self.log(index, "failed", e.reason, e.detail, wall)
            return "failed"
        except Exception as e:  # noqa: BLE001
            self.log(index, "failed", "convert", repr(e)[-300:], wall)
            return "failed"
        if os.path.exists(os.path.join(run_src, "CASE.DBG")):
            os.remove(os.path.join(run_src, "CASE.DBG"))   # a copy of CASE.PRT
        run_dir = os.path.join(d, "run")
        if os.path.abspath(run_src) != os.path.abspath(run_dir):
            shutil.rmtree(run_dir, ignore_errors=True)
            os.replace(run_src, run_dir)
        write_target(os.path.join(d, "target.h5"), case, sg, dp, p_all[0], summary, info)
        flags = "".join("+" if checks[k] else "-" for k in
                        ("plume_grows", "co2_rises", "dp_max_near_well_early"))
        self.log(index, status, wall=wall, extra={
            "fgit_rel_err": "%.2e" % rel, "bhp_max_bar": "%.1f" % bhp_max,
            "sg_max": "%.3f" % sg.max(), "dp_max_bar": "%.2f" % dp.max(), "checks": flags})
        return "ok"

    def reconvert(self, index):
        """Rebuilds target.h5 from an existing run/ (after a change of the conversion)."""
        d = case_dir(self.data, index)
        run_dir = os.path.join(d, "run")
        if not os.path.exists(os.path.join(run_dir, "CASE.UNRST")):
            return "skipped"
        wall = float("nan")
        if os.path.exists(os.path.join(d, "target.h5")):
            with h5py.File(os.path.join(d, "target.h5"), "r") as f:
                wall = float(f.attrs.get("wall_s", np.nan))
        case = uc.read_case_h5(os.path.join(d, "case.h5"))
        status = self.convert(index, case, run_dir, wall, status="reconverted")
        if status == "failed" and os.path.exists(os.path.join(d, "target.h5")):
            os.remove(os.path.join(d, "target.h5"))   # left out, as the failure log says
        return status


def run_batch(a):
    os.makedirs(a.data[0], exist_ok=True)
    cfg = check_dataset_json(a.data[0], a.seed, a.flow, refuse=not a.reconvert)
    b = Batch(a)
    b.cfg = cfg
    t0 = time.monotonic()
    work = b.reconvert if a.reconvert else b.process
    with ThreadPoolExecutor(max_workers=1 if a.reconvert else a.jobs) as ex:
        indices = [i for i in range(a.start, a.end)
                   if a.split is None or uc.split_of(a.seed, i) == a.split]
        statuses = list(ex.map(work, indices))
    elapsed = time.monotonic() - t0
    ok = [r for r in b.results if r["status"] == "ok"]
    reconverted = [r for r in b.results if r["status"] == "reconverted"]
    failed = [r for r in b.results if r["status"] == "failed"]
    walls = [float(r["wall_s"]) for r in ok]
    print("run_flow_batch: %d cases: %d run ok, %d reconverted, %d failed, %d skipped (finished "
          "or failed before) in %.0f s" % (len(statuses), len(ok), len(reconverted), len(failed),
                                           sum(s.startswith("skipped") for s in statuses),
                                           elapsed))
    if walls:
        print("  flow wall time per case: median %.1f s, max %.1f s (%d at a time)"
              % (statistics.median(walls), max(walls), a.jobs))
    for r in failed:
        print("  failed %s: %s %s" % (r["case_id"], r["reason"], r["detail"]))
    return 1 if failed and a.strict else 0


# ---------------------------------------------------------------------------------------------
# Assembly

def assemble(a):
    entries, excluded = [], []
    flags = set()
    for data in a.data:
        cfg_path = os.path.join(data, "dataset.json")
        if os.path.exists(cfg_path):
            with open(cfg_path) as f:
                flags.add(" ".join(json.load(f)["flow_flags"]))
        if len(flags) > 1:
            raise SystemExit("run_flow_batch: the data directories were run with different flow "
                             "flags (%s); one data set needs one solver configuration"
                             % " | ".join(sorted(flags)))
        for name in sorted(os.listdir(data)):
            d = os.path.join(data, name)
            if not (name.startswith("case_") and os.path.isdir(d)):
                continue
            if target_complete(os.path.join(d, "target.h5")):
                entries.append(d)
        for r in read_csv(os.path.join(data, "failures.csv")):
            if not target_complete(os.path.join(case_dir(data, int(r["index"])), "target.h5")):
                excluded.append("%s: %s" % (r["case_id"], r["reason"]))
    if not entries:
        raise SystemExit("run_flow_batch: no finished cases in %s" % ", ".join(a.data))
    n = len(entries)
    X, Y, T = uc.NX, uc.NY, uc.NT
    out = a.assemble
    try:
        check_output(out, [os.path.join(d, name) for d in entries
                           for name in ("case.h5", "target.h5")], "--assemble")
    except ValueError as e:
        raise SystemExit("run_flow_batch: %s" % e)
    tmp = out + ".tmp.%d" % os.getpid()
    ids, seeds, idxs = [], [], []
    times = None
    try:
        with h5py.File(tmp, "w", libver="earliest") as f:
            comp = {"compression": "gzip", "compression_opts": 1} if a.gzip else {}
            x_in = f.create_dataset("input", (n, X, Y, T, ue.N_CHANNELS), dtype=np.float32,
                                    chunks=(1, X, Y, T, ue.N_CHANNELS), **comp)
            x_sg = f.create_dataset("SG", (n, X, Y, T), dtype=np.float32,
                                    chunks=(1, X, Y, T), **comp)
            x_dp = f.create_dataset("dP", (n, X, Y, T), dtype=np.float32,
                                    chunks=(1, X, Y, T), **comp)
            for i, d in enumerate(entries):
                case = uc.read_case_h5(os.path.join(d, "case.h5"))
                x_in[i] = ue.encode_case(case, T)
                with h5py.File(os.path.join(d, "target.h5"), "r") as t:
                    x_sg[i] = np.transpose(t["SG"][()], (1, 2, 0))
                    x_dp[i] = np.transpose(t["dP"][()], (1, 2, 0))
                    ids.append(t.attrs["case_id"].decode())
                    seeds.append(int(t.attrs["seed"]))
                    idxs.append(int(t.attrs["index"]))
                if times is None:
                    times = case["TIMES"]
                elif not np.array_equal(times, case["TIMES"]):
                    raise SystemExit("run_flow_batch: %s: report times differ" % d)
            x_in.attrs.create("description", uc._ascii(
                "encoded cases (N, X, Y, T, 12) as io/CaseEncoding.cpp"))
            x_sg.attrs.create("units", uc._ascii("1"))
            x_dp.attrs.create("units", uc._ascii("bar"))
            x_dp.attrs.create("description", uc._ascii(
                "PRESSURE minus PRESSURE at report step 0"))
            f.create_dataset("case_ids", data=np.array([uc._ascii(s) for s in ids]))
            f.create_dataset("seed", data=np.array(seeds, dtype=np.int64))
            f.create_dataset("index", data=np.array(idxs, dtype=np.int64))
            d = f.create_dataset("TIMES", data=times)
            d.attrs.create("units", uc._ascii("day"))
            width = max([1] + [len(s) for s in excluded])
            f.create_dataset("excluded", data=np.array([s.encode("ascii") for s in excluded],
                                                       dtype="S%d" % width))
            f.attrs.create("flow_flags", uc._ascii(flags.pop() if flags else "unknown"))
            f.attrs.create("generator", uc._ascii("python/ufno/data/flow_batch.py --assemble"))
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print("run_flow_batch: wrote %s: %d cases, /input (%d, %d, %d, %d, 12); %d excluded"
          % (out, n, n, X, Y, T, len(excluded)))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--end", type=int, help="exclusive")
    p.add_argument("--split", choices=["train", "val", "test"],
                   help="only the indices of this split (ufno.train's hash): a held-out set "
                        "without running the rest")
    p.add_argument("--data", action="append",
                   help="data directory (default data/opm/seed_NNNN); repeatable for --assemble")
    p.add_argument("--jobs", type=int, default=2, help="flow runs at a time (default 2)")
    p.add_argument("--flow", default="flow")
    p.add_argument("--no-multx", action="store_true",
                   help="no MULTX correction of the radial transmissibilities")
    p.add_argument("--timeout", type=float, help="fixed timeout per run [s]")
    p.add_argument("--timeout-factor", type=float, default=10.0)
    p.add_argument("--min-timeout", type=float, default=30.0)
    p.add_argument("--initial-timeout", type=float, default=300.0)
    p.add_argument("--retry-failed", action="store_true")
    p.add_argument("--strict", action="store_true", help="exit 1 if any case failed")
    p.add_argument("--reconvert", action="store_true",
                   help="rebuild target.h5 of cases [start, end) from their run/ (no flow)")
    p.add_argument("--assemble", metavar="OUT.h5")
    p.add_argument("--gzip", action="store_true", help="gzip level 1 for --assemble")
    a = p.parse_args(argv)
    if a.assemble:
        if not a.data:
            p.error("--assemble needs --data")
        return assemble(a)
    if a.seed is None or a.end is None:
        p.error("--seed and --end are required")
    if not a.data:
        a.data = [os.path.join(REPO, "data", "opm", "seed_%04d" % a.seed)]
    return run_batch(a)


if __name__ == "__main__":
    sys.exit(main())
