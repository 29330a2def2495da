"""`python3 -m ufno.nested_sites`: sample small two-well nested sites, write their nested and fine
decks, run OPM Flow on the fine decks and write every level's truth.

The code is python/ufno/data/nested_sites.py; this module is the task's command line."""
import sys

from ufno.data.nested_sites import main

if __name__ == "__main__":
    sys.exit(main())
