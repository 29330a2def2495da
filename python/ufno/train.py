"""`python3 -m ufno.train`: train a U-FNO (SG or dP) and write its model file.

The code is python/ufno/training/train.py; this module is the task's command line."""
import sys

from ufno.training.train import main

if __name__ == "__main__":
    sys.exit(main())
