"""`python3 -m ufno.plume_radius_head`: train the plume-radius KPI head into an SG model file.

The code is python/ufno/heads/plume_radius.py; this module is the task's command line."""
from ufno.heads.plume_radius import main

if __name__ == "__main__":
    main()
