"""`python3 -m ufno.pack`: pack a data set compactly for training elsewhere.

The code is python/ufno/data/pack.py; this module is the task's command line."""
import sys

from ufno.data.pack import main

if __name__ == "__main__":
    sys.exit(main())
