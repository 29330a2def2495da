"""`python3 -m ufno.sweep_report SWEEP_DIR [--config SWEEP.json]`: the screening report of a
ufno_sweep output directory, SWEEP_DIR/report.html (docs/sweeps.md, "Report"). ufno_sweep makes it
at the end of every sweep. The code is python/ufno/screening/sweep_report.py; this module is the
task's command line."""
import sys

from ufno.screening.sweep_report import main

if __name__ == "__main__":
    sys.exit(main())
