#!/usr/bin/python3
"""The PyTorch side of benchmarks/fno4d_bench.py: python/ufno/models/fno4d.FNO4d with a saved
state_dict on an input file, one forward pass under torch.inference_mode(), torch.set_num_threads
(N) and one interop thread. stdout: one line "torch seconds=S peak_rss_mb=M"; the output goes to
OUT (/output (B, A1, A2, A3, T) float32).

Usage: PYTHONPATH=python fno4d_torch_bench.py MODEL.pt INPUT.h5 OUT.h5 --threads N --modes M1 M2 M3 M4 --channels C
"""

import argparse
import os
import resource
import sys
import time

import h5py
import numpy as np
import torch

import torch_blas  # benchmarks/torch_blas.py, beside this script
from ufno.models import fno4d as fno4d_torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_pt")
    ap.add_argument("input")
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--modes", type=int, nargs=4, required=True)
    ap.add_argument("--channels", type=int, required=True)
    ap.add_argument("--width", type=int, default=28)
    a = ap.parse_args()
    print("fno4d_torch_bench: BLAS %s"
          % ", ".join(torch_blas.require_optimised_blas("fno4d_torch_bench")), file=sys.stderr)
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    net = fno4d_torch.FNO4d(a.width, a.modes, a.channels)
    net.load_state_dict(torch.load(a.model_pt))
    net.eval()
    with h5py.File(a.input) as f:
        x = torch.from_numpy(f["input"][()])
    with torch.inference_mode():
        t0 = time.time()
        y = net(x)
        seconds = time.time() - t0
    with h5py.File(a.out + ".tmp", "w") as f:
        f.create_dataset("output", data=y.numpy().astype(np.float32))
    os.replace(a.out + ".tmp", a.out)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("torch seconds=%.3f peak_rss_mb=%.0f" % (seconds, rss))


if __name__ == "__main__":
    main()
