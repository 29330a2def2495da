#!/usr/bin/python3
"""ufno_server when a batch fails after some of its requests were answered: every request gets
exactly one answer, the server lives on, and a clean stop leaves nothing in TMPDIR.

Usage: test_faults.py UFNO_SERVER. Each check starts a real server (--port 0) with a private
TMPDIR and sends 4 good and 4 bad ({"site": "nope"}) requests at once, so that the bad ones are
answered (422) inside the same batch before it fails:
- at each stage of a batch (UFNO_SERVER_FAULT=STAGE:N, the server's fault hook: validation,
  prediction, writing, download), and for real: the results directory replaced by a file, so
  every result write fails (the full disk that aborted the server);
- afterwards the server still answers a good request, is stopped with SIGTERM (exit 0), and
  neither its temporary results nor Open MPI's session directory are left in TMPDIR.
Prints "N passed, M failed" last; exit 1 on failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

from test_api import Server  # web/tests/test_api.py, beside this script

results = []
GOOD = {"rate_mt_per_year": 1.0}
BAD = {"site": "nope"}


def check(name, cond, detail=""):
    results.append(bool(cond))
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[-600:]),
          flush=True)


def call(url, body=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode())
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError, OSError) as e:
        return None, str(e).encode()


def burst(base):
    """8 requests at once (good and bad interleaved): [(status, body)] in request order."""
    replies = [None] * 8

    def one(i):
        replies[i] = call(base + "/api/predict", GOOD if i % 2 == 0 else BAD)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return replies


def one_failed(good, bad):
    """one request failed (500), the others answered as they would be (200, 422)"""
    return (good + bad).count(500) >= 1 and set(good) <= {200, 500} and \
        set(bad) <= {422, 500} and bad.count(422) >= 3


def good_failed(good, bad):
    """the bad requests answered 422, every good one 500"""
    return bad == [422] * 4 and good == [500] * 4


def some_good_failed(good, bad):
    """the bad requests answered 422, the good ones 200 but at least one 500"""
    return bad == [422] * 4 and set(good) <= {200, 500} and 500 in good and 200 in good


def scenario(exe, name, expect=None, fault=None, break_results=False, download=False):
    tmp = tempfile.mkdtemp(prefix="ufno_faults_")
    results_dir = os.path.join(tmp, "results")
    server_tmp = os.path.join(tmp, "tmp")
    os.makedirs(server_tmp)
    env = dict({"UFNO_SERVER_FAULT": fault} if fault else {}, TMPDIR=server_tmp)
    args = ["--batch-window-ms", "1500", "--max-batch", "8"] + (
        ["--results", results_dir] if break_results else [])
    s = Server(exe, *args, env=env)
    try:
        if break_results:  # every write of a result fails from now on, as on a full disk
            shutil.rmtree(results_dir)
            open(results_dir, "w").close()
        replies = burst(s.url)
        statuses = [r[0] for r in replies]
        bad = [statuses[i] for i in range(1, 8, 2)]
        check("%s: every request answered once (no connection lost)" % name,
              all(st is not None for st in statuses), statuses)
        good = [statuses[i] for i in range(0, 8, 2)]
        bodies_ok = all("error" in json.loads(replies[i][1]) for i in range(8)
                        if statuses[i] in (422, 500))
        check("%s: every error answer is JSON with a message" % name, bodies_ok, replies)
        if download:
            r = json.loads(replies[0][1]) if good[0] == 200 else {}
            st, raw = call(s.url + r.get("download", "/api/results/r0.h5"))
            check("%s: the good requests predicted" % name, good == [200] * 4, statuses)
            check("%s: a failed download is one JSON error" % name,
                  st == 500 and "error" in json.loads(raw), (st, raw[:200]))
        else:
            check("%s: %s" % (name, expect.__doc__), expect(good, bad), statuses)
        st, _ = call(s.url + "/api/info")
        check("%s: the server lives on" % name, st == 200 and s.p.poll() is None, st)
    finally:
        code = s.stop()
        err = s.p.stderr.read()
    check("%s: a clean stop (exit 0, no abort)" % name, code == 0, (code, err[-400:]))
    left = os.listdir(server_tmp)
    check("%s: nothing left in TMPDIR (results, Open MPI's session)" % name, not left, left)
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    exe = sys.argv[1]
    for stage, expect in (("validate:2", one_failed), ("predict:0", good_failed),
                          ("write:1", some_good_failed)):
        scenario(exe, "fault at " + stage, expect, fault=stage)
    scenario(exe, "fault at download", fault="download:0", download=True)
    scenario(exe, "results directory gone (every write fails)", good_failed, break_results=True)
    p = subprocess.run([exe, "--port", "0"], capture_output=True, text=True,
                       env=dict(os.environ, UFNO_SERVER_FAULT="disk"), timeout=120)
    check("a bad UFNO_SERVER_FAULT is refused in one line",
          p.returncode == 2 and "UFNO_SERVER_FAULT" in p.stderr and
          p.stderr.count("\n") == 1, (p.returncode, p.stderr))
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
