"""`python3 -m ufno.accuracy_report`: the accuracy of model files on a data set's test split.

The code is python/ufno/training/accuracy_report.py; this module is the task's command line."""
import sys

from ufno.training.accuracy_report import main

if __name__ == "__main__":
    sys.exit(main())
