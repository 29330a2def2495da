#!/usr/bin/env python3
"""Runs a CTest test list on a machine that has no CTest, or has the build at another path.

The list is `ctest --show-only=json-v1` of a build (scripts/make-gpu-bundle.sh writes it into the
GPU bundle as tests.json). Every path in it names the machine that built it; --map FROM=TO
rewrites each string that starts with FROM (commands, arguments, working directories, environment
values), longest FROM first. The tests run one at a time (they share one GPU), each with its
TIMEOUT, ENVIRONMENT, WORKING_DIRECTORY, SKIP_RETURN_CODE and WILL_FAIL, as CTest would. A test
whose program is not there is reported as not run, never as passed.

  run-test-list.py tests.json --map /build/machine/ufno=$PWD/build-gpu/ufno \\
      --map /build/machine/src=$PWD [--regex NAME_RE] [--exclude-label LABEL] [--log-dir DIR]
      [--require-under DIR]

Prints one line a test and a summary; exit 0 when none failed (skips and tests not run are
listed, and do not fail the run), 1 otherwise, 2 on a bad list or option.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

DEFAULT_TIMEOUT = 1500.0  # CTest's default


def fail(msg):
    print("run-test-list: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_maps(pairs):
    maps = []
    for p in pairs:
        if "=" not in p or not p.split("=", 1)[0]:
            fail("--map %s: give FROM=TO" % p)
        maps.append(tuple(p.split("=", 1)))
    return sorted(maps, key=lambda m: -len(m[0]))


def relocate(value, maps):
    if isinstance(value, list):
        return [relocate(v, maps) for v in value]
    if not isinstance(value, str):
        return value
    for frm, to in maps:
        if value.startswith(frm):
            return to + value[len(frm):]
        if "=" in value:  # NAME=/path in an environment entry or an option
            k, v = value.split("=", 1)
            if v.startswith(frm):
                return k + "=" + to + v[len(frm):]
    return value


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def load(path):
    try:
        with open(path) as f:
            tests = json.load(f)["tests"]
    except (OSError, ValueError, KeyError) as e:
        fail("%s: not a ctest --show-only=json-v1 list (%s)" % (path, e))
    return [t for t in tests if t.get("command")]


def run_one(test, maps, log_dir, under=None):
    """(status, detail): status one of passed, failed, skipped, not-run."""
    props = properties(test)
    cmd = relocate(test["command"], maps)
    if under and not any(a.startswith(under + os.sep) and os.path.isfile(a) for a in cmd):
        return "not-run", "no program of it under %s" % under
    exe = cmd[0]
    if (os.sep in exe and not os.access(exe, os.X_OK)) or (os.sep not in exe
                                                          and not shutil.which(exe)):
        return "not-run", "no program %s" % exe
    env = dict(os.environ)
    for entry in relocate(props.get("ENVIRONMENT", []), maps):
        k, _, v = entry.partition("=")
        env[k] = v
    cwd = relocate(props.get("WORKING_DIRECTORY", os.getcwd()), maps)
    os.makedirs(cwd, exist_ok=True)
    timeout = float(props.get("TIMEOUT", DEFAULT_TIMEOUT))
    log = os.path.join(log_dir, re.sub(r"[^A-Za-z0-9_.-]+", "_", test["name"])[:120] + ".log")
    with open(log, "w") as out:
        try:
            rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return "failed", "timed out after %.0f s (%s)" % (timeout, log)
    skip = props.get("SKIP_RETURN_CODE")
    if skip is not None and rc == int(skip):
        return "skipped", "exit %d (%s)" % (rc, log)
    ok = (rc != 0) if props.get("WILL_FAIL") else (rc == 0)
    return ("passed" if ok else "failed"), "exit %d (%s)" % (rc, log)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("tests_json")
    p.add_argument("--map", action="append", default=[], metavar="FROM=TO")
    p.add_argument("--regex", help="run only tests whose name matches")
    p.add_argument("--exclude-label", action="append", default=[])
    p.add_argument("--log-dir", default="test-logs")
    p.add_argument("--require-under", metavar="DIR",
                   help="run only tests that run a program found under DIR (a bundle's build "
                        "tree); list the others as not run")
    a = p.parse_args(argv)
    maps = parse_maps(a.map)
    pattern = re.compile(a.regex) if a.regex else None
    tests = load(a.tests_json)
    os.makedirs(a.log_dir, exist_ok=True)
    counts = {"passed": 0, "failed": 0, "skipped": 0, "not-run": 0}
    for t in tests:
        labels = properties(t).get("LABELS", [])
        if pattern and not pattern.search(t["name"]) or set(labels) & set(a.exclude_label):
            continue
        under = os.path.abspath(a.require_under) if a.require_under else None
        status, detail = run_one(t, maps, a.log_dir, under)
        counts[status] += 1
        print("%-8s %s: %s" % (status, t["name"], detail), flush=True)
    print("run-test-list: %d passed, %d failed, %d skipped, %d not run"
          % (counts["passed"], counts["failed"], counts["skipped"], counts["not-run"]))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
