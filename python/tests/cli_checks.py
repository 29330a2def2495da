"""What the head-trainer tests share: named checks ("PASS"/"FAIL" lines, then "N passed, M
failed"), running a trainer script, and checking a refusal: exit non-zero, one stderr line
starting "tool: " that says what, and no output file."""
import os
import sys

import forked_run  # the tests' Python runs, in forks (python/tests/forked_run.py)


class CliChecks:
    def __init__(self, script):
        self.script = script
        self.tool = os.path.splitext(os.path.basename(script))[0]
        self.results = []

    def check(self, name, cond, detail=""):
        self.results.append(bool(cond))
        print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)),
              flush=True)

    def run(self, args):
        return forked_run.run([sys.executable, self.script] + args, capture_output=True,
                              text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=300)

    def refused(self, what, args, out, say):
        p = self.run(args)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.check("refused: %s" % what, p.returncode != 0 and len(lines) == 1 and
                   say in lines[0] and lines[0].startswith(self.tool + ": ") and
                   not os.path.exists(out), (p.returncode, p.stderr[-300:]))

    def summary(self):
        """Prints the tally; the exit code (1 on any failure)."""
        print("%d passed, %d failed" % (sum(self.results), len(self.results) - sum(self.results)))
        return 0 if all(self.results) else 1
