"""`python3 -m ufno.train_nested`: train the nine small FNO4d models of the nested chain on
(site file, target file) pairs and convert them into model files for `ufno_predict --models`.

The code is python/ufno/training/train_nested.py; this module is the task's command line."""
import sys

from ufno.training.train_nested import main

if __name__ == "__main__":
    sys.exit(main())
