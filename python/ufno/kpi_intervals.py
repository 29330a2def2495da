"""`python3 -m ufno.kpi_intervals`: calibrate the KPI heads' intervals of a model file, score them
on a data set (--score), or score a ufno_kpis table against Flow's (--tables UFNO.csv FLOW.csv).
The code is python/ufno/heads/calibrate.py; this module is the task's command line."""
import sys

from ufno.heads.calibrate import main, tables_main

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--tables":
        sys.exit(tables_main(sys.argv[2:]))
    sys.exit(main())
