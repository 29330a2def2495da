"""`python3 -m ufno.dp_envelope_head`: train the dP-envelope head into a dP model file.

The code is python/ufno/heads/dp_envelope.py; this module is the task's command line."""
from ufno.heads.dp_envelope import main

if __name__ == "__main__":
    main()
