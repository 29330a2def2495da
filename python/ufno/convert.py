"""`python3 -m ufno.convert`: convert a PyTorch checkpoint to the project's model file.

The code is python/ufno/conversion/convert.py; this module is the task's command line."""
import sys

from ufno.conversion.convert import main

if __name__ == "__main__":
    sys.exit(main())
