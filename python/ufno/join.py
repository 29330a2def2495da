"""`python3 -m ufno.join`: join assembled data sets into one.

The code is python/ufno/data/join.py; this module is the task's command line."""
import sys

from ufno.data.join import main

if __name__ == "__main__":
    sys.exit(main())
