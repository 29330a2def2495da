"""`python3 -m ufno.make_fixtures`: write the C++ tests' fixtures from PyTorch.

The code is python/ufno/conversion/fixtures.py; this module is the task's command line."""
from ufno.conversion.fixtures import main

if __name__ == "__main__":
    main()
