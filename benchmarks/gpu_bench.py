#!/usr/bin/env python3
"""The GPU benchmark, run by scripts/gpu-run.sh on a GPU machine with the
machine's own python3 (PyTorch with CUDA, h5py). ufno's GPU programs against PyTorch eager on the
same GPU and the same input:

- the paper-size U-FNO and FNO (96 x 200 x 24, width 36, modes 10; weights and input from
  make_bench_inputs.py): ufno's bench_model (FP32: cuBLAS without TF32, cuFFT, cuDNN FMA; then
  with UFNO_TF32=1) and
  python/ufno/models/net3d.Net3d in FP32 with TF32 off, then TF32 on, then bf16 autocast; batch 1 and 8;
- the 4-D FNO at the LGR1 size (benchmarks/fno4d_bench.py's model and input): ufno_predict
  --tensor (FP32; its time includes reading each layer's spectral weights from the file) and
  python/ufno/models/fno4d.FNO4d the same three ways.

Seconds per case are warm (after two warm-up passes; mean of the timed passes, each between
device synchronisations); peak GPU memory is PyTorch's max_memory_allocated for PyTorch and the
largest nvidia-smi reading during the run for ufno (whole process, CUDA context included);
parity is the relative L2 difference of the outputs against ufno's. Results: OUT/results.md.

Usage: PYTHONPATH=python python3 benchmarks/gpu_bench.py --bin BUNDLE/bin --out DIR [--repeat 5]
"""

import argparse
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

import h5py
import numpy as np
import torch

ROWS = []


def log(msg):
    print("gpu_bench: " + msg, flush=True)


class GpuMemoryPeak:
    """Polls nvidia-smi every 50 ms while a program runs; .peak_mb after stop()."""

    def __init__(self):
        self.peak_mb, self._stop = 0.0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                                      "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=5).stdout
                self.peak_mb = max(self.peak_mb, float(out.split()[0]))
            except Exception:  # noqa: BLE001 - no reading is no peak, not a failure
                pass
            time.sleep(0.05)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def torch_modes(run, x, repeat):
    """Times run(x) on the GPU in FP32 (TF32 off), TF32 and bf16 autocast. Returns
    {mode: (seconds per case, peak MB, output)}."""
    out = {}
    for mode in ("fp32", "tf32", "bf16"):
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        torch.backends.cudnn.allow_tf32 = mode == "tf32"
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            with torch.inference_mode(), torch.autocast("cuda", torch.bfloat16,
                                                        enabled=mode == "bf16"):
                for _ in range(2):
                    y = run(x)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(repeat):
                    y = run(x)
                torch.cuda.synchronize()
                sec = (time.perf_counter() - t0) / repeat / x.shape[0]
            out[mode] = (sec, torch.cuda.max_memory_allocated() / 2**20, y.float().cpu().numpy())
        except Exception as e:  # noqa: BLE001 - a mode PyTorch cannot run is reported, not fatal
            log("torch %s failed: %s" % (mode, e))
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    return out


def paper_models(a):
    from ufno.models.net3d import Net3d
    import torch_bench
    d = os.path.join(a.out, "paper")
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make_bench_inputs.py"), "--out", d],
                   check=True)
    with h5py.File(os.path.join(d, "input.h5")) as f:
        x1 = f["input"][()]
    for batch in (1, 8):
        inp = os.path.join(d, "input_b%d.h5" % batch)
        if not os.path.exists(inp):
            with h5py.File(inp, "w") as f:
                f.create_dataset("input", data=np.repeat(x1, batch, axis=0))
        for kind in ("ufno", "fno"):
            y_ufno = None
            # FP32, then TF32 (UFNO_TF32=1: cuBLAS and cuDNN on tensor cores), as PyTorch below.
            for mode, env in (("fp32", {}), ("tf32", {"UFNO_TF32": "1"})):
                ufno_out = os.path.join(d, "%s_b%d_ufno_%s.h5" % (kind, batch, mode))
                with GpuMemoryPeak() as mem:
                    p = subprocess.run([os.path.join(a.bin, "bench_model"), "--model",
                                        os.path.join(d, kind + "_paper.h5"), "--tensor", inp,
                                        "--threads", "4", "--repeat", str(a.repeat),
                                        "--skip-peak", "--save-output", ufno_out],
                                       capture_output=True, text=True,
                                       env=dict(os.environ, **env))
                m = re.search(r"seconds_per_case=([\d.eE+-]+)", p.stdout)
                if p.returncode != 0 or not m:
                    log("bench_model %s b%d %s failed: %s"
                        % (kind, batch, mode, (p.stderr or p.stdout)[-400:]))
                    ROWS.append(("%s b%d" % (kind, batch), "ufno " + mode, "failed", "-", "-"))
                    continue
                with h5py.File(ufno_out) as f:
                    y = f["output"][()]
                if y_ufno is None:
                    y_ufno = y
                ROWS.append(("%s b%d" % (kind, batch), "ufno " + mode, "%.4f" % float(m.group(1)),
                             "%.0f" % mem.peak_mb,
                             "-" if y is y_ufno else "%.1e" % rel_l2(y, y_ufno)))
            if y_ufno is None:
                continue
            model, _ = torch_bench.load_model(os.path.join(d, kind + "_paper.pt"), kind == "ufno",
                                              8)
            model = model.cuda()
            x = torch.from_numpy(np.repeat(x1, batch, axis=0)).cuda()
            for mode, (sec, mb, y) in torch_modes(model, x, a.repeat).items():
                ROWS.append(("%s b%d" % (kind, batch), "torch " + mode, "%.4f" % sec, "%.0f" % mb,
                             "%.1e" % rel_l2(y.reshape(y_ufno.shape), y_ufno)))
            del model
            torch.cuda.empty_cache()


def fno4d_lgr1(a):
    import fno4d_bench
    from ufno.models import fno4d as fno4d_torch
    d = os.path.join(a.out, "fno4d")
    os.makedirs(d, exist_ok=True)
    cfg = fno4d_bench.SIZES["lgr1"]
    model_h5, model_pt, inp = fno4d_bench.make_inputs(d, "lgr1", cfg)
    out = os.path.join(d, "lgr1_ufno.h5")
    best = None
    with GpuMemoryPeak() as mem:
        for _ in range(1 + a.repeat // 2):  # the first run warms the GPU and the file cache
            if os.path.exists(out):
                os.remove(out)
            p = subprocess.run([os.path.join(a.bin, "ufno_predict"), "--model", model_h5,
                                "--tensor", inp, "--out", out, "--threads", "4"],
                               capture_output=True, text=True)
            m = re.search(r"predict ([\d.]+) s", p.stdout)
            if p.returncode != 0 or not m:
                log("ufno_predict FNO4D failed: %s" % (p.stderr or p.stdout)[-400:])
                ROWS.append(("FNO4D LGR1 b1", "ufno fp32", "failed", "-", "-"))
                return
            best = float(m.group(1)) if best is None else min(best, float(m.group(1)))
    with h5py.File(out) as f:
        y_ufno = f["dP"][()].transpose(0, 2, 3, 4, 1)  # (B, T, A1, A2, A3) -> (B, A1, A2, A3, T)
    ROWS.append(("FNO4D LGR1 b1", "ufno fp32 (incl. weight reads)", "%.4f" % best,
                 "%.0f" % mem.peak_mb, "-"))
    net = fno4d_torch.FNO4d(fno4d_bench.WIDTH, cfg["modes"], cfg["channels"])
    net.load_state_dict(torch.load(model_pt))
    net = net.cuda().eval()
    with h5py.File(inp) as f:
        x = torch.from_numpy(f["input"][()]).cuda()
    for mode, (sec, mb, y) in torch_modes(net, x, a.repeat).items():
        ROWS.append(("FNO4D LGR1 b1", "torch " + mode, "%.4f" % sec, "%.0f" % mb,
                     "%.1e" % rel_l2(y, y_ufno)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if not torch.cuda.is_available():
        log("no CUDA device for PyTorch: nothing to compare")
        return 2
    log("device %s, torch %s" % (torch.cuda.get_device_name(0), torch.__version__))
    for part in (paper_models, fno4d_lgr1):
        try:
            part(a)
        except Exception as e:  # noqa: BLE001 - report and go on to the next part
            log("%s failed: %r" % (part.__name__, e))
    lines = ["| model, batch | side | s per case | peak GPU MB | rel. L2 vs ufno |",
             "|---|---|---|---|---|"] + ["| " + " | ".join(r) + " |" for r in ROWS]
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("GPU: %s; torch %s\n\n" % (torch.cuda.get_device_name(0), torch.__version__))
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
