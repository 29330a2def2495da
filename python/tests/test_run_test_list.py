"""scripts/run-test-list.py: a CTest list run from another path without CTest. A made-up list
whose paths name a build machine is relocated onto a temporary tree: every outcome CTest knows
(pass, fail, skip code, WILL_FAIL, timeout) plus a program missing from the tree, with commands,
working directories and environment values all rewritten."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "scripts", "run-test-list.py")

from cli_checks import check


def script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)


def test_run_test_list():
    with tempfile.TemporaryDirectory() as tmp:
        old_build, old_src = "/far/machine/build", "/far/machine/src"
        build, src = os.path.join(tmp, "b"), os.path.join(tmp, "s")
        os.makedirs(os.path.join(build, "tests"))
        os.makedirs(os.path.join(src, "data"))
        open(os.path.join(src, "data", "fixture"), "w").close()
        t = os.path.join(build, "tests")
        # Passes only when its data path and working directory were relocated.
        script(os.path.join(t, "ok"), 'test -f "$DATA/fixture" && test "$(pwd)" = "%s"' % t)
        script(os.path.join(t, "bad"), "exit 3")
        script(os.path.join(t, "skip"), "exit 77")
        script(os.path.join(t, "slow"), "sleep 30")
        tests = {"kind": "ctestInfo", "tests": [
            {"name": "ok", "command": [old_build + "/tests/ok"], "properties": [
                {"name": "ENVIRONMENT", "value": ["DATA=" + old_src + "/data"]},
                {"name": "WORKING_DIRECTORY", "value": old_build + "/tests"}]},
            {"name": "bad", "command": [old_build + "/tests/bad"]},
            {"name": "expected to fail", "command": [old_build + "/tests/bad"],
             "properties": [{"name": "WILL_FAIL", "value": True}]},
            {"name": "skip", "command": [old_build + "/tests/skip"],
             "properties": [{"name": "SKIP_RETURN_CODE", "value": 77}]},
            {"name": "slow", "command": [old_build + "/tests/slow"],
             "properties": [{"name": "TIMEOUT", "value": 1.0}]},
            {"name": "missing", "command": [old_build + "/tests/not_bundled"]},
            {"name": "labelled", "command": [old_build + "/tests/ok"],
             "properties": [{"name": "LABELS", "value": ["browser"]}]},
        ]}
        lst = os.path.join(tmp, "tests.json")
        with open(lst, "w") as f:
            json.dump(tests, f)
        p = subprocess.run([sys.executable, RUNNER, lst, "--map", old_build + "=" + build,
                            "--map", old_src + "=" + src, "--exclude-label", "browser",
                            "--log-dir", os.path.join(tmp, "logs")],
                           capture_output=True, text=True, timeout=120)
        status = {}
        for line in p.stdout.splitlines():
            if ": " in line and not line.startswith("run-test-list"):
                word, rest = line.split(None, 1)
                status[rest.split(":")[0]] = word
        check("relocated command, working directory and environment: passed",
              status.get("ok") == "passed", p.stdout)
        check("a failing test fails", status.get("bad") == "failed", p.stdout)
        check("WILL_FAIL inverts", status.get("expected to fail") == "passed", p.stdout)
        check("SKIP_RETURN_CODE is a skip", status.get("skip") == "skipped", p.stdout)
        check("TIMEOUT ends a test as failed", status.get("slow") == "failed"
              and "timed out" in p.stdout, p.stdout)
        check("a program not in the tree is not run, not passed",
              status.get("missing") == "not-run", p.stdout)
        check("an excluded label is left out", "labelled" not in status, p.stdout)
        check("summary and exit status 1 (a test failed)", p.returncode == 1 and
              "2 passed, 2 failed, 1 skipped, 1 not run" in p.stdout, (p.returncode, p.stdout))
        q = subprocess.run([sys.executable, RUNNER, lst, "--regex", "^skip$",
                            "--map", old_build + "=" + build],
                           capture_output=True, text=True, timeout=60, cwd=tmp)
        check("--regex selects; exit 0 with nothing failed",
              q.returncode == 0 and "0 passed, 0 failed, 1 skipped" in q.stdout, q.stdout)
        u = subprocess.run([sys.executable, RUNNER, lst, "--map", old_build + "=" + build,
                            "--map", old_src + "=" + src, "--require-under",
                            os.path.join(build, "tests"), "--regex", "^(ok|missing)$",
                            "--log-dir", os.path.join(tmp, "logs")],
                           capture_output=True, text=True, timeout=60)
        check("--require-under runs what has a program there, lists the rest as not run",
              u.returncode == 0 and "1 passed, 0 failed, 0 skipped, 1 not run" in u.stdout,
              u.stdout)
        r = subprocess.run([sys.executable, RUNNER, os.path.join(tmp, "nope.json")],
                           capture_output=True, text=True, timeout=60)
        check("a missing list: one line, exit 2",
              r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr)
