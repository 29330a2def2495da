#!/usr/bin/python3
"""The 4-D FNO benchmark: ufno (ufno_predict on P ranks) against the PyTorch re-implementation
(python/ufno/models/fno4d.py) on the same weights and input, one forward pass each, every side in its
own process. Prints one table row per run: seconds, peak resident memory (PyTorch: the process;
ufno: the largest rank), their ratios and the relative L2 difference of the outputs.

Usage:
  PYTHONPATH=python /usr/bin/python3 benchmarks/fno4d_bench.py --size lgr1 [--threads 2] [--ranks 1]
      [--out DIR] [--skip-torch] [--torch-memory-gb G] [--ufno-memory-gb G] [--repeat N]
      [--torch-repeat N]
  --size lgr1      40 x 40 x 25 x 24, width 28, modes (6, 10, 10, 10), 9 input channels
  --size global    5 x 100 x 100 x 24, width 28, modes (4, 20, 20, 2), 8 channels (A1 the
                   5-cell axis, as in the reference's sizes)
  --size A1xA2xA3xT  any grid at LGR1's width, modes and channels (for the largest-size runs)
Padding (8, 16, 16, 8) as the reference. The model file, the PyTorch state_dict and the input
(1 case, N(0, 1) channels) are made once per size under DIR (default build/bench4d) from a fixed
seed. --ranks P runs ufno on P ranks (oversubscribed beyond the cores, for memory figures), with
threads/P threads each (at least 1). --*-memory-gb caps a side's address space (prlimit), so a
size that does not fit fails cleanly instead of waking the kernel's OOM killer; a side that fails
is reported as such. ufno runs --repeat times (3), PyTorch --torch-repeat times (1), the two
interleaved (PyTorch, ufno, PyTorch, ufno, ..., then the rest of the more numerous side), so a
change of this machine's speed during the run reaches both; each side's median time and largest
peak memory are reported, every time on stderr. PyTorch's own time has swung by a third between
runs on this machine: several PyTorch runs give a steadier ratio.
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SIZES = {
    "lgr1": dict(grid=(40, 40, 25, 24), modes=(6, 10, 10, 10), channels=9),
    "global": dict(grid=(5, 100, 100, 24), modes=(4, 20, 20, 2), channels=8),
}
WIDTH = 28
PADDING = (8, 16, 16, 8)


def size_of(name):
    if name in SIZES:
        return SIZES[name]
    g = tuple(int(v) for v in name.split("x"))
    if len(g) != 4:
        sys.exit("fno4d_bench: --size must be lgr1, global or A1xA2xA3xT")
    return dict(grid=g, modes=SIZES["lgr1"]["modes"], channels=SIZES["lgr1"]["channels"])


def make_inputs(d, name, cfg):
    """Model file, state_dict and input for one size (kept between runs)."""
    import h5py
    import numpy as np
    import torch
    from ufno.conversion import convert as ufno_convert
    from ufno.models import fno4d as fno4d_torch
    model_h5 = os.path.join(d, name + "_model.h5")
    model_pt = os.path.join(d, name + "_model.pt")
    inp = os.path.join(d, name + "_input.h5")
    if all(os.path.exists(p) for p in (model_h5, model_pt, inp)):
        return model_h5, model_pt, inp
    gen = torch.Generator().manual_seed(4)
    net = fno4d_torch.FNO4d(WIDTH, cfg["modes"], cfg["channels"], PADDING)
    fno4d_torch.init_random_weights(net, gen)
    sd = {k: v.detach() for k, v in net.state_dict().items()}
    torch.save(sd, model_pt + ".tmp")
    os.replace(model_pt + ".tmp", model_pt)
    ufno_convert.convert_fno4d(sd, model_h5, "dP", cfg["grid"], PADDING, name + "_model.pt",
                               name + "_model.pt")
    x = torch.randn((1,) + tuple(cfg["grid"]) + (cfg["channels"],), generator=gen)
    with h5py.File(inp + ".tmp", "w") as f:
        f.create_dataset("input", data=x.numpy().astype(np.float32))
    os.replace(inp + ".tmp", inp)
    return model_h5, model_pt, inp


def limited(cmd, gb):
    return (["prlimit", "--as=%d" % int(gb * (1 << 30))] + cmd) if gb else cmd


def measured(cmd, side, env=None):
    """Runs one side's process; prints on stderr the machine's load average when it started and
    the CPU seconds (user + system) it used: on a machine that other work shares, a slower run
    beside the same CPU seconds was a busier machine, not slower code."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print("fno4d_bench: %s process %.2f s wall, %.2f CPU s, load average %.2f at its start"
          % (side, time.time() - t0, cpu, load), file=sys.stderr)
    return p


def run_torch(model_pt, inp, cfg, threads, out, gb):
    cmd = limited(["/usr/bin/python3", os.path.join(HERE, "fno4d_torch_bench.py"), model_pt, inp,
                   out, "--threads", str(threads), "--modes"] + [str(m) for m in cfg["modes"]] +
                  ["--channels", str(cfg["channels"])], gb)
    p = measured(cmd, "PyTorch")
    m = re.search(r"seconds=([\d.]+) peak_rss_mb=([\d.]+)", p.stdout)
    if p.returncode != 0 or not m:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return (float(m.group(1)), float(m.group(2))), ""


def run_ufno(model_h5, inp, threads, ranks, out, gb):
    apps = os.path.join(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")), "apps")
    per_rank = max(1, threads // ranks)
    cmd = [os.path.join(apps, "ufno_predict"), "--model", model_h5, "--tensor", inp, "--out", out,
           "--threads", str(per_rank)]
    cmd = limited(cmd, gb)
    if ranks > 1:
        cmd = ["mpirun", "-n", str(ranks), "--oversubscribe", "--bind-to", "none"] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS=str(per_rank))
    if os.path.exists(out):
        os.remove(out)
    p = measured(cmd, "ufno", env)
    m = re.search(r"predict ([\d.]+) s.*as (\S+) x.*peak memory (\d+) MB", p.stdout)
    if p.returncode != 0 or not m:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return (float(m.group(1)), float(m.group(3)), m.group(2)), ""


def rel_l2(a_path, b_path):
    import h5py
    import numpy as np
    with h5py.File(a_path) as a, h5py.File(b_path) as b:
        x = a["dP"][()]
        y = b["output"][()].transpose(0, 4, 1, 2, 3)  # (B, A1, A2, A3, T) -> time-major
    return float(np.linalg.norm(x - y) / np.linalg.norm(y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="lgr1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench4d"))
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--torch-memory-gb", type=float, default=0)
    ap.add_argument("--ufno-memory-gb", type=float, default=0)
    ap.add_argument("--repeat", type=int, default=3,
                    help="ufno runs (the median is reported: one run of a few seconds is at the "
                         "mercy of this machine's noise)")
    ap.add_argument("--torch-repeat", type=int, default=1,
                    help="PyTorch runs, interleaved with ufno's (the median is reported)")
    a = ap.parse_args()
    for flag, v in (("--repeat", a.repeat), ("--torch-repeat", a.torch_repeat)):
        if not 1 <= v <= 100:
            ap.error("%s %d: give 1 to 100 runs" % (flag, v))
    cfg = size_of(a.size)
    os.makedirs(a.out, exist_ok=True)
    name = a.size
    t0 = time.time()
    model_h5, model_pt, inp = make_inputs(a.out, name, cfg)
    print("fno4d_bench: %s grid %s, width %d, modes %s, %d channels; inputs ready in %.0f s"
          % (name, "x".join(map(str, cfg["grid"])), WIDTH, cfg["modes"], cfg["channels"],
             time.time() - t0), file=sys.stderr)
    torch_out = os.path.join(a.out, name + "_torch.h5")
    ufno_out = os.path.join(a.out, name + "_ufno_p%d.h5" % a.ranks)
    runs, truns = [], []
    ur, uerr = None, ""
    tr, terr = (None, "skipped") if a.skip_torch else (None, "")
    n_torch = 0 if a.skip_torch else a.torch_repeat
    for i in range(max(a.repeat, n_torch)):
        if i < n_torch and (i == 0 or truns):
            t, terr = run_torch(model_pt, inp, cfg, a.threads, torch_out, a.torch_memory_gb)
            if t:
                truns.append(t)
        if i < a.repeat and (i == 0 or runs):
            ur, uerr = run_ufno(model_h5, inp, a.threads, a.ranks, ufno_out, a.ufno_memory_gb)
            if ur:
                runs.append(ur)
    ur = ur if runs and len(runs) == a.repeat else None
    if truns and len(truns) == n_torch:
        tt = sorted(t[0] for t in truns)
        print("fno4d_bench: PyTorch seconds over %d runs: %s" % (len(tt), ", ".join(
            "%.2f" % t for t in tt)), file=sys.stderr)
        tr = (tt[len(tt) // 2], max(t[1] for t in truns))
    elif not a.skip_torch:
        tr = None
    if ur:
        times = sorted(r[0] for r in runs)
        print("fno4d_bench: ufno seconds over %d runs: %s" % (len(runs), ", ".join(
            "%.2f" % t for t in times)), file=sys.stderr)
        ur = (times[len(times) // 2], max(r[1] for r in runs), runs[0][2])
    cells = "x".join(map(str, cfg["grid"]))
    row = ["%s (%s)" % (name, cells), str(a.ranks) + (" (%s)" % ur[2] if ur else ""),
           str(a.threads)]
    row += ["%.2f" % ur[0], "%.0f" % ur[1]] if ur else ["failed: " + uerr[:60], "-"]
    row += ["%.2f" % tr[0], "%.0f" % tr[1]] if tr else ["failed: " + terr[:60] if terr != "skipped" else "-", "-"]
    if ur and tr:
        row += ["%.1fx" % (tr[0] / ur[0]), "%.1fx" % (tr[1] / ur[1]),
                "%.1e" % rel_l2(ufno_out, torch_out)]
    else:
        row += ["-", "-", "-"]
    print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
