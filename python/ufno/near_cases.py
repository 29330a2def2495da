"""`python3 -m ufno.near_cases`: cases near a given one.

The code is python/ufno/data/near_cases.py; this module is the task's command line."""
import sys

from ufno.data.near_cases import main

if __name__ == "__main__":
    sys.exit(main())
