"""`python3 -m ufno.max_dp_head`: train the maximum-dP KPI head into a dP model file.

The code is python/ufno/heads/max_dp.py; this module is the task's command line."""
from ufno.heads.max_dp import main

if __name__ == "__main__":
    main()
