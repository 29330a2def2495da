"""`python3 -m ufno.co2_mass_head`: train the CO2-mass KPI head into an SG model file.

The code is python/ufno/heads/co2_mass.py; this module is the task's command line."""
from ufno.heads.co2_mass import main

if __name__ == "__main__":
    main()
