"""`python3 -m ufno.cases`: sample cases and write their Eclipse decks and case files.

The code is python/ufno/data/cases.py; this module is the task's command line."""
import sys

from ufno.data.cases import main

if __name__ == "__main__":
    sys.exit(main())
