"""Model files: PyTorch checkpoints to the project's HDF5 format, and the C++ tests' fixtures."""
