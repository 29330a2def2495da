"""`python3 -m ufno.nested_report`: the relative L2 error per level and variable of a nested-chain
prediction against a site's Flow truth.

The code is python/ufno/training/nested_report.py; this module is the task's command line."""
import sys

from ufno.training.nested_report import main

if __name__ == "__main__":
    sys.exit(main())
