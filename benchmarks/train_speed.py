#!/usr/bin/python3
"""Training-step throughput (samples per second) of U-FNO / FNO configurations on the assembled
OPM data, for python3 -m ufno.train's loop: forward, the paper's loss, backward and an Adam step,
with Debian's PyTorch on the CPU (or --device cuda on a lent GPU). Warm-up steps are not timed.
Each configuration runs twice, alternating: the reference forward (ufno_torch.Net3d, the paper's
formulation) and python/ufno/models/fast_forward.py's (the same network on fast CPU paths, which
ufno.train uses), on the same weights and batches.

Usage: PYTHONPATH=python /usr/bin/python3 benchmarks/train_speed.py --data train.h5 [--threads 1] [--steps 8]
Prints one line per configuration; measure on a quiet machine and compare within one run.
"""
import argparse
import time

import h5py
import numpy as np
import torch

from ufno.models import fast_forward as ufno_fast_forward
from ufno.models import net3d as ufno_torch
from ufno.training import train as train_ufno

CONFIGS = [  # (name, fno, width, modes, batch)
    ("U-FNO w12 m4 b4 (shipped models)", False, 12, (4, 4, 4), 4),
    ("U-FNO w12 m4 b16", False, 12, (4, 4, 4), 16),
    ("U-FNO w16 m6 b4", False, 16, (6, 6, 6), 4),
    ("FNO w12 m4 b4", True, 12, (4, 4, 4), 4),
    ("FNO w24 m8 b4", True, 24, (8, 8, 8), 4),
]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    with h5py.File(a.data, "r") as f:
        n = min(64, f["input"].shape[0])
        x_all = torch.from_numpy(f["input"][:n])
        y_all = torch.from_numpy(f["SG"][:n])
    m_all = (x_all[..., 0] != 0).float()
    print("train_speed: %d threads, device %s, torch %s" % (a.threads, a.device, torch.__version__))
    for name, fno, width, modes, batch in CONFIGS:
        model = ufno_torch.Net3d(width=width, modes=modes, n_fourier=6 if fno else 3,
                                 n_ufourier=0 if fno else 3).to(dev)
        params = sum(q.numel() * (2 if q.is_complex() else 1) for q in model.parameters())
        for form, fwd in (("reference", model),
                          ("fast", lambda x: ufno_fast_forward.forward(model, x))):
            sec = time_steps(model, fwd, x_all, y_all, m_all, batch, a, dev)
            print("%-34s %-9s %9d params  %6.2f samples/s  %6.3f s/sample" % (
                name, form, params, a.steps * batch / sec, sec / (a.steps * batch)), flush=True)


def time_steps(model, fwd, x_all, y_all, m_all, batch, a, dev):
    """Seconds for a.steps training steps (after a.warmup untimed ones) of forward `fwd`."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    n = x_all.shape[0]
    t0 = None
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        idx = torch.randint(0, n, (batch,))
        x, y, m = x_all[idx].to(dev), y_all[idx].to(dev), m_all[idx].to(dev)
        opt.zero_grad()
        loss = train_ufno.paper_loss(fwd(x) * m, y * m, m)
        loss.backward()
        opt.step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0

if __name__ == "__main__":
    main()
