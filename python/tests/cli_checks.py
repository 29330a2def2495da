"""What the task tests share: named checks (a "PASS"/"FAIL" line each; a failed check fails the
test), running a task (`python3 -m ufno.TASK`, in a fork: forked_run), and checking a refusal:
exit non-zero, one stderr line starting "tool: " that says what, and no output file."""
import os
import sys

import forked_run  # the tests' Python runs, in forks (python/tests/forked_run.py)


class CliChecks:
    def __init__(self, module, tool=None):
        """module: the task's module (ufno.max_dp_head); tool: the name its refusals start with
        (by default the module's last part)."""
        self.module = module
        self.tool = tool or module.rsplit(".", 1)[-1]

    def check(self, name, cond, detail=""):
        print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)),
              flush=True)
        assert cond, "%s: %s" % (name, detail)

    def run(self, args):
        return forked_run.run([sys.executable, "-m", self.module] + args, capture_output=True,
                              text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=300)

    def refused(self, what, args, out, say):
        p = self.run(args)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.check("refused: %s" % what, p.returncode != 0 and len(lines) == 1 and
                   say in lines[0] and lines[0].startswith(self.tool + ": ") and
                   not os.path.exists(out), (p.returncode, p.stderr[-300:]))


def check(name, cond, detail=""):
    """A named check: its "PASS"/"FAIL" line; a failure fails the test with the detail."""
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[-600:]),
          flush=True)
    assert cond, "%s: %s" % (name, str(detail)[-600:])


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


def converter_command(args, hidden=()):
    """`python3 -m ufno.convert ARGS` in a process where the package's PyTorch networks
    (ufno.models) and the modules in HIDDEN cannot be imported (their sys.modules entries are
    None): the converter needs neither the reference code nor this repository's networks."""
    boot = ("import sys, runpy\n"
            "for m in %r:\n"
            "    sys.modules[m] = None\n"
            "runpy.run_module('ufno.convert', run_name='__main__', alter_sys=True)\n"
            % (("ufno.models", "ufno.models.net3d", "ufno.models.fno4d") + tuple(hidden),))
    return [sys.executable, "-c", boot] + list(args)
