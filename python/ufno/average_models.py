"""`python3 -m ufno.average_models`: average the weights of model files of one architecture.

The code is python/ufno/training/average_models.py; this module is the task's command line."""
import sys

from ufno.training.average_models import main

if __name__ == "__main__":
    sys.exit(main())
