"""The plain test runner of the converter tests: each test a function, run in order with a
fresh temporary directory (the module's TMP), one "ok"/"FAIL" line each, then "N passed, M
failed"; exit code 1 on any failure."""
import shutil
import tempfile
import traceback

import torch


def run_all(tests, prefix, module_globals):
    torch.set_num_threads(1)
    module_globals["TMP"] = tempfile.mkdtemp(prefix=prefix)
    passed = failed = 0
    try:
        for t in tests:
            try:
                t()
            except Exception:
                failed += 1
                print("FAIL %s" % t.__name__)
                traceback.print_exc(limit=3)
            else:
                passed += 1
                print("ok   %s" % t.__name__)
    finally:
        shutil.rmtree(module_globals["TMP"], ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
