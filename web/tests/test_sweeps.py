#!/usr/bin/python3
"""Sweeps from the web page (POST /api/sweeps), against real ufno_server processes.

Usage: test_sweeps.py UFNO_SERVER. Checks, with the shipped models and example sites:
- a 3-scenario sweep runs as ufno_sweep, reports its progress, ends "done" and serves its
  report.html and kpis.csv (the table's rows are the sweep's scenarios), while predictions are
  answered;
- bad forms (reversed, impossible and out-of-generator ranges, an unknown parameter or field, a
  scenario count over --sweep-max-scenarios, a bad threshold, malformed JSON) get 4xx JSON naming
  the field, and leave no sweep directory behind;
- a second sweep while one runs is refused (409) naming the running one;
- a cancelled sweep: its process group gone, status "cancelled", its outputs removed, nothing
  served; the next sweep runs;
- a sweep program that crashes, one that runs past --sweep-max-seconds and outputs past
  --sweep-max-disk-mb end "failed" with the reason, and the server lives on; old sweeps are
  removed beyond --sweep-keep and to make room on disk;
- a sweep whose report cannot be made ends "done" with its table and the reason;
- a server stopped while a sweep runs exits 0, leaves no process and nothing in TMPDIR.
Prints "N passed, M failed" last; exit 1 on failure.
"""
import json
import os
import shutil
import stat
import sys
import tempfile
import time
import urllib.error
import urllib.request

from test_api import Server  # web/tests/test_api.py, beside this script

results = []
SITE = "s1_i000087"
SMALL = {"site": SITE, "scenarios": 3, "seed": 5,
         "parameters": {"INJ_RATE": [0.5, 1.5], "KGEO": [50, 300]},
         "critical_dp_bar": 10, "decisions": {"max_dP_bar": 80, "plume_radius_m_30yr": 3000}}


def check(name, cond, detail=""):
    results.append(bool(cond))
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[-600:]),
          flush=True)


def call(url, body=None, raw=None):
    """(status, bytes, content type); a dict body goes as JSON, `raw` as given, POST either way."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get("Content-Type", "")


def jcall(url, body=None, raw=None):
    st, b, _ = call(url, body, raw)
    return st, json.loads(b)


def wait(base, sid, timeout=300):
    """Polls the sweep until it is no longer running; returns (last status, statuses seen)."""
    seen = []
    end = time.time() + timeout
    while time.time() < end:
        st, s = jcall(base + "/api/sweeps/" + sid)
        seen.append(s)
        if st != 200 or s.get("status") != "running":
            return s, seen
        time.sleep(0.2)
    return seen[-1], seen


def group_alive(pgid):
    """Processes (not zombies) of process group pgid."""
    alive = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(d))
    return alive


def script(dir, name, body):
    path = os.path.join(dir, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def real_sweeps(exe, tmp):
    results_dir = os.path.join(tmp, "results")
    sweeps_dir = os.path.join(results_dir, "sweeps")
    s = Server(exe, "--results", results_dir, "--sweep-max-scenarios", "200")
    base = s.url
    try:
        st, info = jcall(base + "/api/info")
        sw = info.get("sweep", {})
        check("info: sweeps available, their limit and parameters",
              st == 200 and sw.get("available") and sw.get("max_scenarios") == 200 and
              "INJ_RATE" in sw.get("parameters", []) and sw.get("running") is None, sw)

        # A small sweep to its report, predictions answered meanwhile.
        st, r = jcall(base + "/api/sweeps", SMALL)
        check("a good form starts a sweep (202, running)",
              st == 202 and r.get("status") == "running" and r.get("scenarios") == 3, r)
        sid = r.get("id", "s0")
        pst, _, _ = call(base + "/api/predict", {"rate_mt_per_year": 1.0})
        check("a prediction is answered while the sweep runs", pst == 200, pst)
        last, seen = wait(base, sid)
        check("the sweep ends done with every scenario",
              last.get("status") == "done" and last.get("done") == 3 and
              last.get("failed_scenarios") == 0, last)
        check("its progress is reported (scenarios done, stage, elapsed time)",
              all({"done", "scenarios", "stage", "elapsed_s"} <= set(x) for x in seen) and
              all(seen[i]["done"] <= seen[i + 1]["done"] for i in range(len(seen) - 1)), seen)
        st, html, ctype = call(base + last.get("report", "/none"))
        check("the report is served as HTML with its charts",
              st == 200 and "text/html" in ctype and b"<svg" in html and b"max_dP_bar" in html,
              (st, ctype, html[:200]))
        st, csv, _ = call(base + last.get("kpis", "/none"))
        rows = csv.decode().strip().split("\n") if st == 200 else []
        check("kpis.csv is served: a header and the 3 scenarios, ok, with the decision column",
              len(rows) == 4 and all(",ok," in x for x in rows[1:]) and
              "decision_max_dP_bar" in rows[0] and "INJ_RATE" in rows[0], rows[:2])

        # Bad forms: 4xx JSON naming the field, nothing started, nothing written.
        before = sorted(os.listdir(sweeps_dir))
        bad = [
            ("a reversed range", {"parameters": {"INJ_RATE": [1.5, 0.5]}}, 422,
             "parameters.INJ_RATE"),
            ("a physically impossible range", {"parameters": {"TEMP": [-500, 10]}}, 422,
             "parameters.TEMP"),
            ("a range beyond the field generator's", {"parameters": {"KGEO": [1, 100]}}, 422,
             "parameters.KGEO"),
            ("a perforation beyond the formation", {"parameters": {"PERF_BOTTOM": [10, 99]}},
             422, "parameters.PERF_BOTTOM"),
            ("an unknown parameter", {"parameters": {"FOO": [1, 2]}}, 422, "parameters.FOO"),
            ("a range that is not two numbers", {"parameters": {"SWI": [0.1, "x"]}}, 422,
             "parameters.SWI"),
            ("a range with null (NaN from a form)", {"parameters": {"SWI": [0.1, None]}}, 422,
             "parameters.SWI"),
            ("no parameter", {"parameters": {}}, 422, "parameters"),
            ("a scenario count over the limit", {"scenarios": 201}, 422, "scenarios"),
            ("a fractional scenario count", {"scenarios": 2.5}, 422, "scenarios"),
            ("an unknown threshold", {"decisions": {"bogus": 3}}, 422, "decisions.bogus"),
            ("a negative threshold", {"decisions": {"max_dP_bar": -3}}, 422,
             "decisions.max_dP_bar"),
            ("an unknown site", {"site": "nope"}, 422, "site"),
            ("an unknown field", {"extra": 1}, 422, "extra"),
        ]
        for name, change, code, field in bad:
            st, r = jcall(base + "/api/sweeps", dict(SMALL, **change))
            check("%s: %d naming %s" % (name, code, field),
                  st == code and r.get("field") == field and field in r.get("error", ""),
                  (st, r))
        st, r = jcall(base + "/api/sweeps", raw=b'{"scenarios": 3, "parameters": {"SWI": [0.1, NaN]}}')
        check("NaN in the JSON: 400 malformed", st == 400 and "malformed" in r.get("error", ""),
              (st, r))
        check("bad forms leave no sweep directory",
              sorted(os.listdir(sweeps_dir)) == before, (before, os.listdir(sweeps_dir)))

        # A long sweep: a second is refused, then it is cancelled.
        st, r = jcall(base + "/api/sweeps", dict(SMALL, scenarios=200))
        long_id = r.get("id", "s0")
        for _ in range(300):  # until it predicts: the program and MPI have started
            st, r = jcall(base + "/api/sweeps/" + long_id)
            if r.get("status") != "running" or r.get("done", 0) >= 1:
                break
            time.sleep(0.1)
        pid = r.get("pid", 0)
        check("the long sweep runs as a child process", r.get("status") == "running" and pid and
              group_alive(pid), r)
        st, r2 = jcall(base + "/api/sweeps", SMALL)
        check("a second sweep while one runs is refused (409) naming the running one",
              st == 409 and r2.get("running") == long_id and "running" in r2.get("error", ""),
              (st, r2))
        st, r = jcall(base + "/api/sweeps/%s/cancel" % long_id, raw=b"")
        check("cancel answers status cancelled", st == 200 and r.get("status") == "cancelled",
              (st, r))
        check("the cancelled sweep's processes are gone", pid and not group_alive(pid),
              group_alive(pid) if pid else "no pid")
        check("the cancelled sweep's outputs are removed",
              not os.path.exists(os.path.join(sweeps_dir, long_id, "out")),
              os.listdir(os.path.join(sweeps_dir, long_id)))
        st, r = jcall(base + "/api/sweeps/%s/report.html" % long_id)
        check("a cancelled sweep serves no report (409)", st == 409, (st, r))
        st, r = jcall(base + "/api/sweeps/%s/cancel" % long_id, raw=b"")
        check("cancelling it again: 409, cancelled", st == 409 and r.get("status") == "cancelled",
              (st, r))
        st, r = jcall(base + "/api/sweeps", SMALL)
        last, _ = wait(base, r.get("id", "s0"))
        check("the next sweep runs to its end", st == 202 and last.get("status") == "done", last)
        st, r = jcall(base + "/api/sweeps/s999999")
        check("an unknown sweep: 404", st == 404 and "error" in r, (st, r))
    finally:
        code = s.stop()
    check("the server stops cleanly (exit 0)", code == 0, (code, s.p.stderr.read()[-400:]))


def fake_programs(exe, tmp):
    """Sweep programs that crash or hang (the form is checked by the server first)."""
    crash = script(tmp, "crash.sh", "echo 'about to crash' >&2\nkill -SEGV $$")
    hang = script(tmp, "hang.sh", "sleep 600 &\nwait")
    for prog, limit, name, expect in ((crash, [], "a crashing sweep program", "signal 11"),
                                      (hang, ["--sweep-max-seconds", "2"],
                                       "a sweep past --sweep-max-seconds",
                                       "--sweep-max-seconds")):
        s = Server(exe, "--sweep-program", prog, *limit)
        try:
            st, r = jcall(s.url + "/api/sweeps", SMALL)
            pid = r.get("pid", 0)
            last, _ = wait(s.url, r.get("id", "s0"), timeout=60)
            check("%s: failed, with the reason" % name,
                  last.get("status") == "failed" and expect in last.get("error", ""), last)
            check("%s: its processes are gone" % name, pid and not group_alive(pid),
                  group_alive(pid) if pid else r)
            st, _, _ = call(s.url + "/api/info")
            check("%s: the server lives on" % name, st == 200 and s.p.poll() is None, st)
        finally:
            s.stop()

    # The real program whose report cannot be made: done, its table served, the reason given.
    s = Server(exe, env={"UFNO_PYTHON": "/bin/false"})
    try:
        sid, last = run_to_end(s.url, SMALL)
        st_r, _, _ = call(s.url + "/api/sweeps/%s/report.html" % sid)
        st_k, _, _ = call(s.url + "/api/sweeps/%s/kpis.csv" % sid)
        check("a sweep whose report cannot be made: done, no report (404), its table served",
              last.get("status") == "done" and last.get("report") is None and
              "no report.html" in last.get("error", "") and st_r == 404 and st_k == 200,
              (last, st_r, st_k))
    finally:
        s.stop()

    # A server stopped while its sweep runs: exit 0, nothing running, nothing in TMPDIR.
    server_tmp = os.path.join(tmp, "server_tmp")
    os.makedirs(server_tmp)
    s = Server(exe, "--sweep-program", hang, env={"TMPDIR": server_tmp})
    st, r = jcall(s.url + "/api/sweeps", SMALL)
    pid = r.get("pid", 0)
    time.sleep(0.5)
    code = s.stop()
    check("a server stopped during a sweep exits 0", code == 0, (code, s.p.stderr.read()[-400:]))
    check("... and its sweep's processes are gone", pid and not group_alive(pid), r)
    check("... and nothing is left in its TMPDIR", not os.listdir(server_tmp),
          os.listdir(server_tmp))


def run_to_end(base, form):
    st, r = jcall(base + "/api/sweeps", form)
    last, _ = wait(base, r.get("id", "s0"))
    return r.get("id", "s0"), last


def old_sweeps_removed(exe, tmp):
    # By number: --sweep-keep 1 keeps the last finished sweep only.
    results_dir = os.path.join(tmp, "results_keep")
    s = Server(exe, "--results", results_dir, "--sweep-keep", "1")
    try:
        a, _ = run_to_end(s.url, dict(SMALL, scenarios=1))
        b, last = run_to_end(s.url, dict(SMALL, scenarios=1))
        st, r = jcall(s.url + "/api/sweeps/" + a)
        check("--sweep-keep 1: the older sweep is removed (404, its directory gone)",
              st == 404 and last.get("status") == "done" and
              not os.path.exists(os.path.join(results_dir, "sweeps", a)), (st, r, last))
    finally:
        s.stop()
    # By disk: a 1-scenario sweep keeps about 0.17 MB (0.34 MB while it predicts). Under 0.6 MB,
    # a sweep starts once the finished ones take at most half of it: the third removes the first.
    results_dir = os.path.join(tmp, "results_disk")
    s = Server(exe, "--results", results_dir, "--sweep-max-disk-mb", "0.6")
    try:
        ids = []
        for _ in range(3):
            sid, last = run_to_end(s.url, dict(SMALL, scenarios=1))
            ids.append(sid)
            check("under --sweep-max-disk-mb 0.6: sweep %s done" % sid,
                  last.get("status") == "done", last)
        st, r = jcall(s.url + "/api/sweeps/" + ids[0])
        check("the oldest sweep was removed to make room (404, its directory gone)",
              st == 404 and not os.path.exists(os.path.join(results_dir, "sweeps", ids[0])),
              (st, r))
        st, _, _ = call(s.url + "/api/sweeps/%s/report.html" % ids[2])
        check("the newest sweep's report is served", st == 200, st)
        sid, last = run_to_end(s.url, dict(SMALL, scenarios=60))
        check("a sweep whose own outputs pass the limit is stopped: failed, naming the option",
              last.get("status") == "failed" and "--sweep-max-disk-mb" in last.get("error", ""),
              last)
        check("... and its outputs are removed",
              not os.path.exists(os.path.join(results_dir, "sweeps", sid, "out")))
    finally:
        s.stop()


def bad_options(exe, tmp):
    """The sweep limits on the server's command line: a bad value stops the server at once with
    one line naming the option, and nothing is made."""
    import subprocess
    results_dir = os.path.join(tmp, "bad_options_results")
    for option, value in (("--sweep-max-scenarios", "0"), ("--sweep-max-scenarios", "1e12"),
                          ("--sweep-max-seconds", "-5"), ("--sweep-max-seconds", "nan"),
                          ("--sweep-max-disk-mb", "abc"), ("--sweep-max-disk-mb", "inf"),
                          ("--sweep-keep", "-1"), ("--max-upload-mb", "nan"),
                          ("--sweep-program", os.path.join(tmp, "no_such_program"))):
        p = subprocess.run([exe, "--port", "0", "--results", results_dir, option, value],
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        check("ufno_server %s %s -> refused in one line" % (option, value),
              p.returncode != 0 and len(lines) == 1 and option in lines[0]
              and not os.path.exists(results_dir), (p.returncode, p.stderr[-300:]))


def main():
    exe = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ufno_sweeps_")
    try:
        bad_options(exe, tmp)
        real_sweeps(exe, tmp)
        fake_programs(exe, tmp)
        old_sweeps_removed(exe, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
