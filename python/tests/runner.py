"""The plain test runner of the converter tests: each test a function, run in order with a
fresh temporary directory (the module's TMP), one "ok"/"FAIL" line each, then "N passed, M
failed"; exit code 1 on any failure."""
import os
import shutil
import tempfile
import time
import traceback

import torch


def run_all(tests, prefix, module_globals):
    torch.set_num_threads(1)
    module_globals["TMP"] = tempfile.mkdtemp(prefix=prefix)
    passed = failed = 0
    try:
        for t in tests:
            start = time.monotonic()
            try:
                t()
            except Exception:
                failed += 1
                print("FAIL %s" % t.__name__)
                traceback.print_exc(limit=3)
            else:
                passed += 1
                # The time per test shows where a slow suite spends it (CI has a time budget).
                print("ok   %s (%.1f s)" % (t.__name__, time.monotonic() - start))
    finally:
        shutil.rmtree(module_globals["TMP"], ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def assert_failure(r, name, out, key=None, contains=None):
    """A converter run that must fail: exit 1, one line "ufno_convert: NAME: ..." (ending in
    "(KEY)" and containing CONTAINS when given), and neither the output nor its temporary left."""
    assert r.returncode == 1, "exit status %d, expected 1 (%s)" % (r.returncode, r.stderr)
    lines = r.stderr.strip("\n").split("\n")
    assert len(lines) == 1, "expected a one-line message, got %r" % r.stderr
    assert lines[0].startswith("ufno_convert: %s: " % name), lines[0]
    if key:
        assert lines[0].endswith("(%s)" % key), lines[0]
    if contains:
        assert contains in lines[0], lines[0]
    assert not os.path.exists(out), "output file left behind"
    assert not os.path.exists(out + ".tmp"), "temporary file left behind"
    return lines[0]
