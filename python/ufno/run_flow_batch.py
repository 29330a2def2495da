"""`python3 -m ufno.run_flow_batch`: OPM Flow on a batch of sampled cases, gathered.

The code is python/ufno/data/flow_batch.py; this module is the task's command line."""
import sys

from ufno.data.flow_batch import main

if __name__ == "__main__":
    sys.exit(main())
