"""`python3 -m ufno.dp_field_scale_head`: train the dP field-scale head into a dP model file.

The code is python/ufno/heads/dp_field_scale.py; this module is the task's command line."""
from ufno.heads.dp_field_scale import main

if __name__ == "__main__":
    main()
