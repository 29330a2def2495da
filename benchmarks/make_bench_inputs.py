#!/usr/bin/python3
"""Write the inputs of the model benchmark (benchmarks/run_model_bench.sh).

Usage:  PYTHONPATH=python /usr/bin/python3 benchmarks/make_bench_inputs.py [--out DIR] [--seed S]

Files written into DIR (default build/bench):
  ufno_paper.pt, fno_paper.pt   state_dicts of python/ufno/models/net3d.Net3d at paper size: width 36,
                                modes 10x10x10, padding 8; U-FNO = 3 Fourier + 3 U-Fourier
                                layers, FNO = 6 Fourier layers; random weights drawn with
                                ufno_torch.init_random_weights (seeded, deterministic)
  ufno_paper.h5, fno_paper.h5   the same models converted with ufno_convert.convert()
                                (variable SG, grid 96 200 24, padding 8)
  input.h5                      /input float32 (1, 96, 200, 24, 12): one plausible encoded case
                                (values in [0, 1]; channel 0 is zero in the 24 bottom layers)
  bench_inputs.txt              the seed and sizes the files were made with

Files that already exist are kept (the run is resumable and a rerun takes about a second). Every
file is written under a temporary name and renamed when complete, so an interrupted run leaves
no partial file. A different --seed on a directory made with another seed is refused rather
than mixing files of two seeds.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

import h5py
import numpy as np
import torch

from ufno.conversion import convert as ufno_convert
from ufno.models.net3d import Net3d, init_random_weights

GRID = (96, 200, 24)
PADDING = 8
WIDTH = 36
MODES = (10, 10, 10)
CHANNELS = 12
FORMATION_LAYERS = 72          # 150 m of 2.0833 m layers; the 24 layers below are inactive
DEFAULT_SEED = 20220402

# name -> (n_fourier, n_ufourier, seed offset)
MODELS = {
    "ufno_paper": (3, 3, 0),
    "fno_paper": (6, 0, 1),
}


def log(msg):
    print("make_bench_inputs: " + msg, flush=True)


def build_model(n_fourier, n_ufourier, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # the constructors draw from the global generator
    model = Net3d(width=WIDTH, modes=MODES, n_fourier=n_fourier, n_ufourier=n_ufourier,
                  padding=PADDING)
    init_random_weights(model, gen)
    return model.eval()


def save_state_dict(model, path):
    tmp = path + ".tmp"
    try:
        torch.save(model.state_dict(), tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def make_model(out_dir, name, seed):
    """Write NAME.pt and NAME.h5 unless they exist; NAME.h5 is made from NAME.pt."""
    n_fourier, n_ufourier, offset = MODELS[name]
    pt = os.path.join(out_dir, name + ".pt")
    h5 = os.path.join(out_dir, name + ".h5")
    if os.path.exists(pt) and os.path.exists(h5):
        log("%s.pt and %s.h5 exist, kept" % (name, name))
        return
    t0 = time.perf_counter()
    if os.path.exists(pt):
        sd = torch.load(pt, map_location="cpu")
        log("%s.pt exists, kept" % name)
    else:
        model = build_model(n_fourier, n_ufourier, seed + offset)
        save_state_dict(model, pt)
        sd = model.state_dict()
        n = sum(p.numel() for p in model.parameters())
        log("wrote %s.pt (%s, %d+%d layers, %d parameters, %.0f MB) in %.1f s"
            % (name, "U-FNO" if n_ufourier else "FNO", n_fourier, n_ufourier, n,
               os.path.getsize(pt) / 2**20, time.perf_counter() - t0))
    if os.path.exists(h5):
        log("%s.h5 exists, kept" % name)
        return
    t0 = time.perf_counter()
    # convert() writes NAME.h5.tmp and renames it when complete.
    arch = ufno_convert.convert(None, h5, "SG", GRID, PADDING, state_dict=sd,
                                source=name + ".pt")
    log("wrote %s.h5 (%s, variable SG, grid %dx%dx%d, padding %d, %.0f MB) in %.1f s"
        % (name, arch.name, GRID[0], GRID[1], GRID[2], PADDING, os.path.getsize(h5) / 2**20,
           time.perf_counter() - t0))


def encoded_case(seed):
    """One plausible encoded case (1, X, Y, T, 12) with values in [0, 1], float32.

    Channels 0-2 (log kr, log kz, porosity) are random per cell, constant over time, and zero in
    the layers below the formation (the reservoir mask is channel 0 != 0); channel 3 marks a
    perforated interval in the well column; channels 4-8 are one random value each (scalar
    parameters broadcast to every cell); channels 9-11 are the radial, vertical and time
    coordinates of the paper's grid, normalised to [0, 1] as io/CaseEncoding.cpp does.
    """
    rng = np.random.default_rng(seed)
    nx, ny, nt = GRID
    x = np.zeros((1, nx, ny, nt, CHANNELS), dtype=np.float64)
    layer_mean = rng.uniform(0.15, 0.45, size=(nx, 1))          # layered ln(k)/15
    kr = np.clip(layer_mean + 0.05 * rng.standard_normal((nx, ny)), 0.01, 0.99)
    kz = np.clip(kr + np.log(0.2) / 15.0 + 0.02 * rng.standard_normal((nx, ny)), 0.01, 0.99)
    poro = np.clip(0.18 + 0.3 * (kr - 0.3) + 0.02 * rng.standard_normal((nx, ny)), 0.05, 0.35)
    for c, field in enumerate((kr, kz, poro)):
        field[FORMATION_LAYERS:, :] = 0.0
        x[0, :, :, :, c] = field[:, :, None]
    x[0, 24:48, 0, :, 3] = 1.0                                    # perforation
    x[0, :, :, :, 4:9] = rng.uniform(0.0, 1.0, size=5)            # rate, T, P, Swi, lambda
    dr = 3.5938 * 1.035012 ** np.arange(ny)
    r = np.cumsum(dr)
    x[0, :, :, :, 9] = ((r - r[0]) / (r[-1] - r[0]))[None, :, None]
    x[0, :, :, :, 10] = np.linspace(0.0, 1.0, nx)[:, None, None]
    t = np.cumsum(1.421245 ** np.arange(nt))
    x[0, :, :, :, 11] = (t / t[-1])[None, None, :]
    return x.astype(np.float32)


def make_input(out_dir, seed):
    path = os.path.join(out_dir, "input.h5")
    if os.path.exists(path):
        log("input.h5 exists, kept")
        return
    x = encoded_case(seed + 100)
    tmp = path + ".tmp"
    try:
        with h5py.File(tmp, "w", libver="earliest") as f:
            f.attrs.create("description", np.bytes_(
                b"benchmark input: one plausible encoded case, channel-last (B,X,Y,T,C)"))
            f.attrs.create("seed", np.int64(seed))
            f.create_dataset("input", data=x, track_times=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    log("wrote input.h5 (/input float32 %s, %.0f MB)"
        % ("x".join(map(str, x.shape)), os.path.getsize(path) / 2**20))


def check_manifest(out_dir, seed):
    """Refuse to mix files made with different seeds; write the manifest on first use."""
    path = os.path.join(out_dir, "bench_inputs.txt")
    text = ("seed %d\ngrid %d %d %d\npadding %d\nwidth %d\nmodes %d %d %d\n"
            % ((seed,) + GRID + (PADDING, WIDTH) + MODES))
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        if old != text:
            sys.exit("make_bench_inputs: %s was made with different settings:\n%s"
                     "delete the directory or choose another --out" % (out_dir, old))
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(ROOT, "build", "bench"),
                   help="output directory (default: build/bench)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads for drawing the weights (default 1)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    check_manifest(args.out, args.seed)
    t0 = time.perf_counter()
    make_input(args.out, args.seed)
    for name in MODELS:
        make_model(args.out, name, args.seed)
    log("inputs ready in %s (%.1f s)" % (args.out, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
