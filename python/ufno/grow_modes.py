"""`python3 -m ufno.grow_modes`: give a trained network more Fourier modes, the same function.

The code is python/ufno/training/grow_modes.py; this module is the task's command line."""
import sys

from ufno.training.grow_modes import main

if __name__ == "__main__":
    sys.exit(main())
