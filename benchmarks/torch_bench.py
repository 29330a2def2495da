#!/usr/bin/python3
"""Time the PyTorch reference U-FNO / FNO on an encoded input (the torch side of the model
benchmark, benchmarks/run_model_bench.sh).

Usage:
  PYTHONPATH=python /usr/bin/python3 benchmarks/torch_bench.py --model-pt F.pt (--ufno | --fno) --input input.h5
      [--threads N] [--repeat R] [--save-output out.h5]

--model-pt is a state_dict of python/ufno/models/net3d.Net3d (as written by make_bench_inputs.py);
--ufno / --fno say which kind the file must hold (a mismatch is an error); the layer counts,
width, modes and hidden size are read from the state_dict (paper size: U-FNO 3 Fourier + 3
U-Fourier layers, FNO 6 Fourier layers). The model runs in eval mode under torch.inference_mode() with
torch.set_num_threads(N) and torch.set_num_interop_threads(1).

Timing, as benchmarks/bench_model.cpp: R timed forward passes of the whole /input batch;
seconds_per_case is their mean divided by the batch size. With R > 1 one untimed warm-up pass
runs first (R + 1 passes in all); with R = 1 the single pass is timed and includes first-call
overheads (memory allocation, FFT set-up). Loading the model and the input is never timed.

stdout gets exactly one line:
  torch seconds_per_case=12.345 peak_rss_mb=2100.0 threads=2
peak_rss_mb is the process's peak resident set size, getrusage(RUSAGE_SELF).ru_maxrss / 1024
(Linux reports KiB), so it includes the interpreter, torch, the weights and the activations.
Details (per-pass times, how the warm-up was handled) go to stderr.

--save-output writes /output (B, X, Y, T) float32, the raw network output of the last pass
(before a dP model's de-scaling), as bench_model --save-output does, so that a parity check can
compare the two. The file is written under OUT.tmp and renamed.
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
from ufno.models.net3d import Net3d

def fail(msg):
    print("torch_bench: error: " + msg, file=sys.stderr)
    sys.exit(2)


def info(msg):
    print("torch_bench: " + msg, file=sys.stderr, flush=True)


def load_model(path, ufno, padding):
    try:
        sd = torch.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - torch raises many kinds on bad files
        fail("%s: cannot load: %s: %s" % (path, type(e).__name__, e))
    if isinstance(sd, torch.nn.Module):
        sd = sd.state_dict()
    if not isinstance(sd, dict) or "conv1.fc0.weight" not in sd:
        fail("%s: not a Net3d state_dict (no conv1.fc0.weight)" % path)
    width, in_channels = sd["conv1.fc0.weight"].shape
    hidden = sd["conv1.fc1.weight"].shape[0]
    modes = tuple(sd["conv1.conv0.weights1"].shape[2:])
    n_layers = sum(1 for k in sd if k.startswith("conv1.conv") and k.endswith(".weights1"))
    n_ufourier = len({k.split(".")[1] for k in sd if k.startswith("conv1.unet")})
    if ufno != (n_ufourier > 0):
        fail("%s: is %s but %s was given" % (path, "a U-FNO" if n_ufourier else "an FNO",
                                              "--ufno" if ufno else "--fno"))
    model = Net3d(width=width, modes=modes, n_fourier=n_layers - n_ufourier,
                  n_ufourier=n_ufourier, padding=padding, in_channels=in_channels,
                  hidden=hidden)
    try:
        model.load_state_dict(sd, strict=True)
    except RuntimeError as e:
        fail("%s: does not fit a %s: %s" % (path, "U-FNO" if ufno else "FNO",
                                            " ".join(str(e).split())[:300]))
    del sd
    return model.eval(), "%s width %d modes %s layers %d+%d" % (
        "U-FNO" if ufno else "FNO", width, "x".join(map(str, modes)), n_layers - n_ufourier,
        n_ufourier)


def load_input(path):
    try:
        with h5py.File(path, "r") as f:
            if "input" not in f:
                fail("%s: no dataset /input" % path)
            x = np.asarray(f["input"][...], dtype=np.float32)
    except OSError as e:
        fail("%s: cannot read: %s" % (path, e))
    if x.ndim != 5:
        fail("%s: /input has shape %s, expected (B, X, Y, T, C)" % (path, x.shape))
    return torch.from_numpy(x)


def save_output(path, raw):
    tmp = path + ".tmp"
    try:
        with h5py.File(tmp, "w") as f:
            d = f.create_dataset("output", data=raw.numpy().astype(np.float32))
            d.attrs.create("layout", np.bytes_(b"(B, X, Y, T), raw network output"))
            f.attrs.create("producer", np.bytes_(b"benchmarks/torch_bench.py (PyTorch %s)"
                                                 % torch.__version__.encode()))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-pt", required=True, help="state_dict of a Net3d (.pt)")
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--ufno", action="store_true", help="the model has U-Fourier layers")
    kind.add_argument("--fno", action="store_true", help="the model has Fourier layers only")
    p.add_argument("--input", required=True, help="HDF5 file with /input (B, X, Y, T, C)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=1,
                   help="timed forward passes; with R > 1 an untimed warm-up pass precedes them")
    p.add_argument("--padding", type=int, default=8)
    p.add_argument("--save-output", metavar="OUT.h5")
    args = p.parse_args()
    blas = torch_blas.require_optimised_blas("torch_bench")
    print("torch_bench: BLAS %s" % ", ".join(blas), file=sys.stderr)
    if args.threads < 1:
        fail("--threads must be at least 1")
    if args.repeat < 1:
        fail("--repeat must be at least 1")

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    model, description = load_model(args.model_pt, args.ufno, args.padding)
    x = load_input(args.input)
    batch = x.shape[0]
    info("%s; input %s; %d thread(s) (torch.get_num_threads() = %d); repeat %d"
         % (description, "x".join(map(str, x.shape)), args.threads, torch.get_num_threads(),
            args.repeat))

    times = []
    with torch.inference_mode():
        if args.repeat > 1:
            t0 = time.perf_counter()
            model(x)
            warm = time.perf_counter() - t0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            y = model(x)
            times.append(time.perf_counter() - t0)
    if args.repeat > 1:
        info("warm-up pass %.3f s (not timed); %d timed passes %s s, mean %.3f s"
             % (warm, len(times), " ".join("%.3f" % t for t in times), sum(times) / len(times)))
    else:
        info("one timed pass %.3f s, no warm-up (includes first-call overheads)" % times[0])
    seconds_per_case = sum(times) / len(times) / batch

    # Measured before --save-output so that writing the file does not count.
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    if args.save_output:
        save_output(args.save_output, y)
        info("wrote %s (/output %s, raw)" % (args.save_output, "x".join(map(str, y.shape))))
    print("torch seconds_per_case=%.3f peak_rss_mb=%.1f threads=%d"
          % (seconds_per_case, peak_mb, args.threads), flush=True)


if __name__ == "__main__":
    main()
