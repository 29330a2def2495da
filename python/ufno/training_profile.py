"""`python3 -m ufno.training_profile`: store the training data's profile (python/ufno/data/
training_profile.py) in a copy of a model file."""
import sys

from ufno.data.training_profile import main

if __name__ == "__main__":
    sys.exit(main())
