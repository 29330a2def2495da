#!/usr/bin/python3
"""python/tests/forked_run.py gives what subprocess.run gives: each case runs both ways (a fork of
this process and a new interpreter) and the results must be equal. Prints one line per check and
"N passed, M failed"; exit 1 on failure."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import cli_checks  # noqa: E402
import forked_run  # noqa: E402
import ufno_model_file  # noqa: E402  (a project module this process has loaded)

CHECKS = cli_checks.CliChecks(forked_run.__file__)
check = CHECKS.check


def both(name, cmd, **kw):
    """Run cmd forked and fresh; check the exit status, stdout and stderr agree."""
    os.environ.pop("UFNO_TEST_FRESH_PYTHON", None)
    forked = forked_run.run(cmd, capture_output=True, text=True, **kw)
    fresh = subprocess.run(cmd, capture_output=True, text=True, **kw)
    same = (forked.returncode, forked.stdout, forked.stderr) == \
        (fresh.returncode, fresh.stdout, fresh.stderr)
    check(name, same, "forked %r, fresh %r" % ((forked.returncode, forked.stdout, forked.stderr),
                                               (fresh.returncode, fresh.stdout, fresh.stderr)))
    return forked


def main():
    work = tempfile.mkdtemp(prefix="ufno_forked_run_test_")
    try:
        script = os.path.join(work, "tool.py")
        with open(script, "w") as f:
            f.write("import os, sys\n"
                    "mode = sys.argv[1]\n"
                    "print('out', sys.argv[1:], os.getcwd() == os.environ.get('WANT_CWD'))\n"
                    "print('err line', file=sys.stderr)\n"
                    "if mode == 'exit3': sys.exit(3)\n"
                    "if mode == 'message': sys.exit('tool: one line')\n"
                    "if mode == 'raise': raise ValueError('boom')\n"
                    "if mode == 'signal': os.kill(os.getpid(), 9)\n"
                    "if mode == 'import': import ufno_model_file\n")
        env = dict(os.environ, WANT_CWD=work)
        py = sys.executable
        both("exit 0, stdout, stderr, argv, cwd and environment", [py, script, "ok", "x y"],
             env=env, cwd=work)
        both("exit status 3", [py, script, "exit3"])
        both("sys.exit with a message: the message on stderr, exit 1", [py, script, "message"])
        r = both("an uncaught exception: exit 1, the traceback on stderr", [py, script, "raise"])
        check("the traceback names the exception", "ValueError: boom" in r.stderr, r.stderr)
        both("killed by a signal: the negative signal number", [py, script, "signal"])
        both("the script's directory is on sys.path, the test's are not", [py, script, "import"])
        code = "import sys; print(sys.argv); import ufno_model_file"
        r = both("-I -c: arguments, and no project module importable", [py, "-I", "-c", code, "a"])
        check("  ... the import fails", r.returncode == 1 and "ModuleNotFoundError" in r.stderr,
              r.stderr)
        # A project module changed in this process is a fresh copy in the run.
        ufno_model_file.MARK = "changed by the test"
        probe = ("import sys; sys.path.insert(0, %r); import ufno_model_file; "
                 "print(getattr(ufno_model_file, 'MARK', 'fresh'))" % os.path.dirname(HERE))
        r = both("a project module is imported afresh", [py, "-c", probe])
        check("  ... without the test's change", r.stdout.strip() == "fresh", r.stdout)
        try:
            forked_run.run([py, "-c", "import time; time.sleep(30)"], timeout=0.5)
            check("a timeout raises TimeoutExpired", False)
        except subprocess.TimeoutExpired:
            check("a timeout raises TimeoutExpired", True)
        # A mark set on sys here is seen by a fork only: which of the two ran.
        sys.ufno_forked_run_mark = True
        probe = [py, "-c", "import sys; print(hasattr(sys, 'ufno_forked_run_mark'))"]
        r = forked_run.run(probe, capture_output=True, text=True)
        check("a Python command line runs in a fork", r.stdout.strip() == "True", r.stdout)
        os.environ["UFNO_TEST_FRESH_PYTHON"] = "1"
        r = forked_run.run(probe, capture_output=True, text=True)
        check("UFNO_TEST_FRESH_PYTHON=1 runs a new interpreter", r.stdout.strip() == "False",
              r.stdout)
        del os.environ["UFNO_TEST_FRESH_PYTHON"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
