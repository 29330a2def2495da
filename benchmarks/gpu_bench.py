#!/usr/bin/env python3
"""The GPU benchmark, run by scripts/gpu-run.sh: ufno against PyTorch eager on the same device,
the same weights and the same input, each row appended to the results file the moment it is
measured (a timeout loses only the rows not yet run).

  models   the paper-size U-FNO and FNO (96 x 200 x 24, width 36, modes 10;
           make_bench_inputs.py) and the 4-D FNO at the LGR1 size (fno4d_bench.py), batch 1 and 8;
           ufno FP32 (TF32 off), PyTorch FP32 (TF32 off), ufno TF32 (UFNO_TF32=1), PyTorch with
           its defaults (TF32 convolutions). With --small: the test fixtures' small models
           (tests/data; U-FNO and 4-D FNO), batch 1, for a rehearsal on a CPU.
  cases    the shipped models (models/sg_ufno.h5, models/dp_ufno.h5) on N case files (the OPM
           examples, repeated): `ufno_predict --cases` against PyTorch reading, encoding and
           predicting the same files at the same batch; seconds per case end to end.

Both sides are timed the same way, each in a process of its own: one untimed pass, then
--repeat timed passes between two device synchronisations; seconds per case is their mean over
the batch. Memory is measured the same way for both sides, from outside the process: on a GPU
the largest NVML reading of that process (nvidia-smi --query-compute-apps, "proc"), or where
the process is not visible by its id (a container's own process ids) the largest rise of the
GPU's used memory over its reading before the process started ("gpu-rise"; one process runs at
a time); on a CPU the largest resident set ("rss"). Parity is the relative L2 difference of
PyTorch's outputs against ufno's.

Usage:
  PYTHONPATH=python python3 benchmarks/gpu_bench.py models --bin DIR --out DIR
      [--work DIR] [--device cuda|cpu] [--small] [--repeat 5] [--deadline SECONDS]
  PYTHONPATH=python python3 benchmarks/gpu_bench.py cases --bin DIR --out DIR
      [--work DIR] [--device cuda|cpu] [--cases 320] [--batch 8] [--deadline SECONDS]
Rows go to OUT/results.md (appended) and stdout, each side's output to OUT/logs; models, inputs
and outputs to WORK (default OUT). Exit status 0 when every row was measured,
1 when a side failed, 2 when a row was left out for lack of time.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
START = time.monotonic()


def log(msg):
    print("gpu_bench: " + msg, flush=True)


class MemoryPeak:
    """Polls one process's memory every 50 ms while it runs (see the module's docstring)."""

    def __init__(self, device):
        self.device, self.peak_mb, self.how = device, 0.0, "-"
        self._stop, self._pid = threading.Event(), None
        self._base = self._gpu_used() if device == "cuda" else None

    @staticmethod
    def _smi(args):
        return subprocess.run(["nvidia-smi"] + args, capture_output=True, text=True,
                              timeout=5).stdout

    def _gpu_used(self):
        try:
            return float(self._smi(["--query-gpu=memory.used",
                                    "--format=csv,noheader,nounits"]).split()[0])
        except Exception:  # noqa: BLE001 - no reading is no peak, not a failure
            return None

    def _sample(self):
        if self.device != "cuda":
            try:
                with open("/proc/%d/status" % self._pid) as f:
                    kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
                self.peak_mb, self.how = max(self.peak_mb, kb / 1024.0), "rss"
            except Exception:  # noqa: BLE001 - the process has ended
                pass
            return
        try:
            for line in self._smi(["--query-compute-apps=pid,used_memory",
                                   "--format=csv,noheader,nounits"]).splitlines():
                pid, mb = [v.strip() for v in line.split(",")[:2]]
                if int(pid) == self._pid:
                    self.peak_mb, self.how = max(self.peak_mb if self.how == "proc" else 0,
                                                 float(mb)), "proc"
                    return
        except Exception:  # noqa: BLE001
            pass
        used = self._gpu_used()
        if self.how != "proc" and used is not None and self._base is not None:
            self.peak_mb, self.how = max(self.peak_mb, used - self._base), "gpu-rise"

    def _run(self):
        while not self._stop.is_set():
            self._sample()
            time.sleep(0.05)

    def run(self, cmd, env=None, timeout=None):
        """Runs cmd, polling its memory; returns the CompletedProcess (returncode 124 on a
        timeout)."""
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
        self._pid = p.pid
        t = threading.Thread(target=self._run, daemon=True)
        t.start()
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            rc = 124
        self._stop.set()
        t.join()
        return subprocess.CompletedProcess(cmd, rc, out, err)

    def cell(self):
        return "%.0f (%s)" % (self.peak_mb, self.how) if self.how != "-" else "-"


class Results:
    """OUT/results.md, one table per part, each row written and flushed when measured."""

    def __init__(self, path):
        self.path, self.status = path, 0

    def header(self, title, columns):
        self._write("\n%s\n\n| %s |\n|%s\n" % (title, " | ".join(columns), "---|" * len(columns)))

    def row(self, cells):
        self._write("| " + " | ".join(str(c) for c in cells) + " |\n")
        print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)

    def _write(self, text):
        with open(self.path, "a") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


def rel_l2(a, b):
    import numpy as np
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def time_left(a):
    return a.deadline - (time.monotonic() - START) if a.deadline else 1e9


def env_with(**kw):
    e = dict(os.environ)
    e.update(kw)
    return e


def batched_input(src, dst, batch, key="input"):
    """dst: /input of src's first case repeated `batch` times."""
    import h5py
    import numpy as np
    if not os.path.exists(dst):
        with h5py.File(src, "r") as f:
            x1 = f[key][0:1]
        with h5py.File(dst + ".tmp", "w") as f:
            f.create_dataset("input", data=np.repeat(x1, batch, axis=0))
        os.replace(dst + ".tmp", dst)
    return dst


def model_configs(a):
    """[(label, model.h5, input.h5 of one case)], made under OUT."""
    if a.small:
        d = os.path.join(ROOT, "tests", "data")
        return [("U-FNO small", os.path.join(d, "ufno_small.h5"), os.path.join(d, "ufno_small_io.h5")),
                ("FNO4D small", os.path.join(d, "fno4d_small.h5"),
                 os.path.join(d, "fno4d_small_io.h5"))]
    d = os.path.join(a.work, "paper")
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make_bench_inputs.py"), "--out", d],
                   check=True)
    sys.path.insert(0, HERE)
    import fno4d_bench
    d4 = os.path.join(a.work, "fno4d")
    os.makedirs(d4, exist_ok=True)
    model4, _, inp4 = fno4d_bench.make_inputs(d4, "lgr1", fno4d_bench.SIZES["lgr1"])
    return [("U-FNO paper", os.path.join(d, "ufno_paper.h5"), os.path.join(d, "input.h5")),
            ("FNO paper", os.path.join(d, "fno_paper.h5"), os.path.join(d, "input.h5")),
            ("FNO4D LGR1", model4, inp4)]


def run_models(a, res):
    import h5py
    import numpy as np
    res.header("Warm forwards, seconds per case (device: %s)" % a.device,
               ["model", "batch", "side", "s per case", "torch / ufno", "peak memory MB",
                "rel. L2 vs ufno"])
    batches = (1,) if a.small else (1, 8)
    tmp, logs = os.path.join(a.work, "rows"), os.path.join(a.out, "logs")
    os.makedirs(tmp, exist_ok=True)
    os.makedirs(logs, exist_ok=True)
    # Batch 1 of every model first: where time runs out, batch 8 rows are the ones left out.
    configs = model_configs(a)
    for batch in batches:
        for label, model, one_case in configs:
            inp = batched_input(one_case, os.path.join(tmp, "%s_b%d.h5" % (
                os.path.basename(model)[:-3], batch)), batch)
            ufno_y, ufno_s = None, {}
            for mode in ("fp32", "tf32"):
                for side in ("ufno", "torch"):
                    name = "%s_b%d_%s_%s" % (os.path.basename(model)[:-3], batch, side, mode)
                    what = [label, batch, side + " " + (mode if side == "ufno" or mode == "fp32"
                                                         else "defaults (TF32 conv)")]
                    if time_left(a) < 20:
                        res.row(what + ["not run (time)", "-", "-", "-"])
                        res.status = max(res.status, 2)
                        continue
                    mem = MemoryPeak(a.device)
                    if side == "ufno":
                        save = os.path.join(tmp, name + ".h5")
                        cmd = [os.path.join(a.bin, "bench_model"), "--model", model, "--tensor",
                               inp, "--threads", str(a.threads), "--repeat", str(a.repeat),
                               "--skip-peak", "--save-output", save]
                        env = env_with(UFNO_TF32="1" if mode == "tf32" else "0")
                    else:
                        save = os.path.join(tmp, name + ".npy")
                        cmd = [sys.executable, os.path.abspath(__file__), "torch-worker",
                               "--model", model, "--input", inp, "--mode", mode, "--device",
                               a.device, "--repeat", str(a.repeat), "--save", save,
                               "--threads", str(a.threads)]
                        env = None
                    p = mem.run(cmd, env=env, timeout=max(10, time_left(a) - 5))
                    with open(os.path.join(logs, name + ".log"), "w") as f:
                        f.write(p.stdout + p.stderr)
                    m = re.search(r"seconds_per_case=([\d.eE+-]+)", p.stdout)
                    if p.returncode != 0 or not m:
                        log("%s failed (exit %d): %s" % (name, p.returncode,
                                                         (p.stderr or p.stdout)[-300:].strip()))
                        res.row(what + ["failed (exit %d)" % p.returncode, "-", mem.cell(), "-"])
                        res.status = max(res.status, 1)
                        continue
                    sec = float(m.group(1))
                    if side == "ufno":
                        with h5py.File(save, "r") as f:
                            y = f["output"][()]
                        ufno_s[mode] = sec
                        ufno_y = y if ufno_y is None else ufno_y
                        ratio, parity = "-", "-" if y is ufno_y else "%.1e" % rel_l2(y, ufno_y)
                    else:
                        y = np.load(save)
                        ratio = "%.2f" % (sec / ufno_s[mode]) if mode in ufno_s else "-"
                        parity = ("-" if ufno_y is None
                                  else "%.1e" % rel_l2(y.reshape(ufno_y.shape), ufno_y))
                    res.row(what + ["%.6f" % sec, ratio, mem.cell(), parity])


def torch_setup(a):
    import torch
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch: no CUDA device", file=sys.stderr)
        sys.exit(2)
    torch.set_num_threads(a.threads)
    # FP32: TF32 off on both paths; "tf32": PyTorch's own defaults (TF32 convolutions, FP32
    # matrix products).
    if a.mode == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    return torch


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def torch_worker(a):
    """One timed PyTorch row: prints 'torch seconds_per_case=S' and saves the output."""
    import h5py
    import numpy as np
    torch = torch_setup(a)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from ufno.conversion.model_file import read_model_file
    model, _ = read_model_file(a.model, torch.float32)
    model = model.to(a.device).eval()
    with h5py.File(a.input, "r") as f:
        x = torch.from_numpy(f["input"][()]).to(a.device)
    with torch.inference_mode():
        if a.repeat > 1:
            y = model(x)
        sync(torch, a.device)
        t0 = time.perf_counter()
        for _ in range(a.repeat):
            y = model(x)
        sync(torch, a.device)
        sec = (time.perf_counter() - t0) / a.repeat / x.shape[0]
    np.save(a.save, y.float().cpu().numpy())
    print("torch seconds_per_case=%.6g" % sec, flush=True)
    if a.profile:
        print_torch_profile(torch, model, x, a.device)
    return 0


def print_torch_profile(torch, model, x, device):
    """PyTorch's own kernels of one warm forward, the most expensive first: where PyTorch's
    time goes, to read beside ufno's UFNO_PROFILE table."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with torch.inference_mode(), profile(activities=acts) as prof:
        model(x)
        sync(torch, device)
    keys = (["self_device_time_total", "self_cuda_time_total"] if device == "cuda" else [])
    for key in keys + ["self_cpu_time_total"]:
        try:
            table = prof.key_averages().table(sort_by=key, row_limit=25, max_name_column_width=70)
        except (AttributeError, KeyError, ValueError):
            continue
        print("torch profile of one forward, sorted by %s:\n%s" % (key, table), flush=True)
        return


def shipped_models():
    return [os.path.join(ROOT, "models", n) for n in ("sg_ufno.h5", "dp_ufno.h5")]


def make_cases(d, n):
    """n case files under d (links to the OPM examples, in turn), named c00000.h5, ..."""
    src = sorted(glob.glob(os.path.join(ROOT, "examples", "opm", "*", "case.h5")))
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        p = os.path.join(d, "c%05d.h5" % i)
        if not os.path.lexists(p):
            os.symlink(src[i % len(src)], p)
    return sorted(glob.glob(os.path.join(d, "*.h5")))[:n]


def run_cases(a, res):
    import h5py
    import numpy as np
    res.header("The shipped models (SG and dP) through `ufno_predict --cases`, %d cases, batch %d "
               "(device: %s)" % (a.cases, a.batch, a.device),
               ["side", "s per case (end to end)", "torch / ufno", "peak memory MB",
                "rel. L2 vs ufno (SG, dP)"])
    cases = make_cases(os.path.join(a.work, "cases"), a.cases)
    out = os.path.join(a.work, "cases_ufno")
    for d in (out, out + "_implicit"):
        for p in glob.glob(os.path.join(d, "*")):
            os.remove(p)
    # The default models, then the same SG network with the faster maximum-dP head: what the
    # buoyancy-aware estimate costs end to end.
    ufno_sec = None
    runs = (("ufno_predict", shipped_models(), out),
            ("ufno_predict, dp_ufno_implicit.h5",
             shipped_models()[:1] + [os.path.join(ROOT, "models", "dp_ufno_implicit.h5")],
             out + "_implicit"))
    for label, models, run_out in runs:
        if run_out != out and time_left(a) < 40:
            res.row([label, "not run (time)", "-", "-", "-"])
            res.status = max(res.status, 2)
            continue
        cmd = [os.path.join(a.bin, "ufno_predict"), "--cases", os.path.dirname(cases[0]), "--out",
               run_out, "--cases-per-pass", str(a.batch), "--threads", str(a.threads)]
        for m in models:
            cmd += ["--model", m]
        mem = MemoryPeak(a.device)
        t0 = time.perf_counter()
        p = mem.run(cmd, timeout=max(10, time_left(a) - 5))
        wall = time.perf_counter() - t0
        with open(os.path.join(a.out, "cases_ufno%s.log" % ("" if run_out == out else "_implicit")),
                  "w") as f:
            f.write(p.stdout + p.stderr)
        m = re.search(r"(\d+) done.* in ([\d.]+) s", p.stdout)
        if p.returncode != 0 or not m or int(m.group(1)) != len(cases):
            res.row([label, "failed (exit %d)" % p.returncode, "-", mem.cell(), "-"])
            res.status = max(res.status, 1)
            continue
        sec = float(m.group(2)) / len(cases)
        if run_out == out:
            ufno_sec = sec
        res.row(["%s (process wall %.1f s)" % (label, wall), "%.6f" % sec, "-", mem.cell(), "-"])
    if time_left(a) < 15:
        res.row(["torch", "not run (time)", "-", "-", "-"])
        res.status = max(res.status, 2)
        return
    save = os.path.join(a.work, "cases_torch.npz")
    mem = MemoryPeak(a.device)
    # The PyTorch side applies the maximum-dP head's physics in Python, a batch's cases in one
    # set of r-z solves (peak_match.head_estimates), still far slower than the program's threaded
    # C++: it stops timing at its own deadline and reports the cases done.
    cmd = [sys.executable, os.path.abspath(__file__), "torch-cases", "--device", a.device,
           "--batch", str(a.batch), "--save", save, "--threads", str(a.threads),
           "--seconds", "%.0f" % max(5, time_left(a) - 15)] + cases
    p = mem.run(cmd, timeout=max(10, time_left(a) - 3))
    with open(os.path.join(a.out, "cases_torch.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    m = re.search(r"seconds_per_case=([\d.eE+-]+)", p.stdout)
    if p.returncode != 0 or not m:
        res.row(["torch", "failed (exit %d)" % p.returncode, "-", mem.cell(), "-"])
        res.status = max(res.status, 1)
        return
    sec = float(m.group(1))
    parity = "-"
    if ufno_sec is not None:
        t = np.load(save)
        errs = []
        for var in ("SG", "dP"):
            ours = []
            for c in cases[:len(t[var])]:
                with h5py.File(os.path.join(out, os.path.basename(c)), "r") as f:
                    ours.append(f[var][0])
            errs.append("%.1e" % rel_l2(t[var], np.stack(ours)))
        parity = ", ".join(errs)
    timed = re.search(r"\((\d+ of \d+) cases timed\)", p.stdout)
    res.row(["torch (%s cases timed)" % (timed.group(1) if timed else "?"), "%.6f" % sec,
             "%.2f" % (sec / ufno_sec) if ufno_sec else "-", mem.cell(), parity])


def torch_cases(a):
    """PyTorch on the case files: read, encode, predict both models at batch --batch, bring the
    fields to the host and apply the same rules and dP heads (field scale, peak) as ufno_predict --cases does; the first batch is a warm-up
    and is not timed. Saves the first batch's SG and dP, (case, T, X, Y)."""
    import numpy as np
    a.mode = "tf32" if os.environ.get("UFNO_TF32") == "1" else "fp32"
    torch = torch_setup(a)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from ufno.conversion.model_file import read_model_file
    from ufno.data.cases import read_case_h5
    from ufno.data.encoding import encode_case, physical_output
    from ufno.heads import dp_field_scale, peak_match
    nets = []
    for m in shipped_models():
        net, attrs = read_model_file(m, torch.float32)
        nets.append((m, attrs["variable"], net.to(a.device).eval(), float(attrs["output_scale"]),
                     float(attrs["output_offset"])))
    first, n_timed, t0 = None, 0, None
    longest, start = 0.0, time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(a.cases), a.batch):
            now = time.perf_counter()
            # Stop before a batch that would end past --seconds, judged by the longest batch so
            # far, once one batch is timed: the timed batches so far give the rate.
            if n_timed and now - start + longest > a.seconds:
                break
            if i == a.batch or (i == 0 and len(a.cases) <= a.batch):
                sync(torch, a.device)
                t0, n_timed = time.perf_counter(), 0
            chunk = a.cases[i:i + a.batch]
            read = [read_case_h5(c) for c in chunk]
            x = np.stack([encode_case(c) for c in read])
            xd = torch.from_numpy(x).to(a.device)
            got = {}
            for path, var, net, scale, offset in nets:
                y = (net(xd).reshape(x.shape[:4]) * scale + offset).float().cpu().numpy()
                y = physical_output(var, y, x)
                if var == "dP":  # the field-scale head and the field's peak, as ufno_predict
                    y = dp_field_scale.corrected(path, x, y)
                    y = peak_match.matched(path, x, y, read)
                got[var] = y.transpose(0, 3, 1, 2)
            if t0 is not None:
                n_timed += len(chunk)
            if first is None:
                first = got
            longest = max(longest, time.perf_counter() - now)
        sync(torch, a.device)
        sec = (time.perf_counter() - t0) / max(n_timed, 1)
    np.savez(a.save, **first)
    print("torch seconds_per_case=%.6g (%d of %d cases timed)" % (sec, n_timed, len(a.cases)),
          flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="part", required=True)
    for name in ("models", "cases"):
        p = sub.add_parser(name)
        p.add_argument("--bin", required=True, help="directory of bench_model and ufno_predict")
        p.add_argument("--out", required=True, help="results.md and the logs")
        p.add_argument("--work", help="models, inputs and outputs (default: --out)")
        p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
        p.add_argument("--threads", type=int, default=4)
        p.add_argument("--deadline", type=float, default=0,
                       help="seconds for the part; rows that would start later are left out")
        if name == "models":
            p.add_argument("--small", action="store_true")
            p.add_argument("--repeat", type=int, default=5)
        else:
            p.add_argument("--cases", type=int, default=320)
            p.add_argument("--batch", type=int, default=8)
    w = sub.add_parser("torch-worker")
    for opt in ("--model", "--input", "--save"):
        w.add_argument(opt, required=True)
    w.add_argument("--mode", default="fp32")
    w.add_argument("--device", default="cuda")
    w.add_argument("--repeat", type=int, default=5)
    w.add_argument("--threads", type=int, default=4)
    w.add_argument("--profile", action="store_true",
                   help="after the timing, print PyTorch's profile of one forward")
    c = sub.add_parser("torch-cases")
    c.add_argument("--device", default="cuda")
    c.add_argument("--batch", type=int, default=8)
    c.add_argument("--save", required=True)
    c.add_argument("--threads", type=int, default=4)
    c.add_argument("--seconds", type=float, default=1e9,
                   help="stop after the batch that ends past this many seconds")
    c.add_argument("cases", nargs="+")
    a = ap.parse_args()
    if a.part == "torch-worker":
        return torch_worker(a)
    if a.part == "torch-cases":
        return torch_cases(a)
    a.work = a.work or a.out
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    res = Results(os.path.join(a.out, "results.md"))
    log("%s on %s, %s" % (a.part, a.device, json.dumps({k: v for k, v in vars(a).items()
                                                        if k not in ("part",)})))
    try:
        (run_models if a.part == "models" else run_cases)(a, res)
    except Exception as e:  # noqa: BLE001 - the rows so far are kept; say what stopped it
        log("%s stopped: %r" % (a.part, e))
        res.row(["stopped: %s" % str(e).replace("|", "/")[:200]])
        return 1
    return res.status


if __name__ == "__main__":
    sys.exit(main())
