"""`python3 -m ufno.export_checkpoint`: a training checkpoint (or its parts) as a model file.

The code is python/ufno/conversion/export_checkpoint.py; this module is the task's command line."""
import sys

from ufno.conversion.export_checkpoint import main

if __name__ == "__main__":
    sys.exit(main())
