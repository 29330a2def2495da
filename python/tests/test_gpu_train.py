#!/usr/bin/python3
"""The GPU training command (scripts/gpu-train.sh, python/ufno/training/train.py) rehearsed on the CPU
with the GPU's settings, from a small pack in a data directory:

1. a first command (batch 16, the learning rate scaled from batch 4 by the square root, the
   cosine-time schedule over more minutes than the command has) trains, stops after its own
   minutes, writes its checkpoint as parts (float16 here, forced by --parts-mib) and no model
   file: the schedule is not spent;
2. the parts hold the same checkpoint as the run's checkpoint.pt, to float16's precision;
   written with a smaller part size they split into several files that load back exactly, and a
   part that was altered is refused in one line naming it;
3. a second command on a fresh work directory (as on a GPU machine that was given back) resumes
   from the returned parts, spends the schedule and exports the best epoch as a model file;
   export_checkpoint.py exports the same weights from the returned parts;
4. `ufno_predict` scores that model file on the pack's validation cases: its prediction equals
   PyTorch's on the same weights, and it is closer to the targets than the zero field;
5. a data directory without the variable's pack and --device cuda without a GPU are refused in
   one line, exit 2.

The program under test: $UFNO_PREDICT (default build/apps/ufno_predict; without it the scoring
is a pytest skip: the file exits 77).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import pytest
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.dirname(HERE)
ROOT = os.path.dirname(PY)
from ufno.training import train as train_ufno
from ufno.data import encoding as ufno_encoding
from ufno.conversion import model_file as ufno_model_file
from ufno.data import pack as ufno_pack
from cli_checks import CliChecks
import forked_run

# The program under test: $UFNO_PREDICT (CTest sets it), else the build tree's.
PREDICT = os.environ.get("UFNO_PREDICT", os.path.join(ROOT, "build", "apps", "ufno_predict"))
T = CliChecks("ufno.train", tool="train_ufno")
check = T.check
ARCH = ["--width", "4", "--modes", "2", "2", "2", "--threads", "1"]


def make_data(path, n=48, X=8, Y=16, Tn=8):
    """A data set whose dP follows its inputs smoothly (so a few steps learn something): zero in
    the inactive bottom layer, growing with permeability and time, falling with the radius."""
    rng = np.random.default_rng(3)
    x = np.zeros((n, X, Y, Tn, 12), np.float32)
    const = rng.random((n, X, Y, 1, 11), dtype=np.float32) * 0.5 + 0.25
    x[..., :11] = const
    x[..., 9] = np.linspace(0, 1, Y, dtype=np.float32)[None, None, :, None]
    x[..., 11] = np.linspace(0.1, 1.0, Tn, dtype=np.float32)
    x[:, -1, :, :, :3] = 0  # an inactive layer
    active = x[..., 0] != 0
    dp = (40 * x[..., 0] * x[..., 11] * np.exp(-3 * x[..., 9]) + 5 * x[..., 4]) * active
    with h5py.File(path, "w") as f:
        f["input"] = x
        f["dP"] = dp.astype(np.float32)
        f["SG"] = np.zeros_like(dp, dtype=np.float32)
        f["seed"] = np.full(n, 5, np.int64)
        f["index"] = np.arange(n, dtype=np.int64)


def gpu_train(name, out, work, resume, minutes, total, extra):
    env = dict(os.environ, DEVICE="cpu", PYTHON=sys.executable, OMP_NUM_THREADS="1",
               MINUTES=str(minutes), TOTAL_MINUTES=str(total), OUT=out, WORK=work,
               RESUME=resume, DATA=os.path.dirname(extra[0]))
    return subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-train.sh"), name, "dP"]
                          + extra[1:], capture_output=True, text=True, env=env, timeout=300)


def read_log(out):
    with open(os.path.join(out, "gpu-train.log")) as f:
        return f.read()


def max_rel(a, b):
    """Largest over tensors of |a - b| / max |a|."""
    worst = 0.0
    for k in a:
        x, y = a[k], b[k]
        if x.is_complex():
            x, y = torch.view_as_real(x), torch.view_as_real(y)
        x, y = x.float(), y.float()
        worst = max(worst, float((x - y).abs().max() / x.abs().max().clamp_min(1e-30)))
    return worst


def test_gpu_train():
    work = tempfile.mkdtemp(prefix="ufno_gpu_train_test_")
    skipped = None
    try:
        data_dir = os.path.join(work, "data")
        os.makedirs(data_dir)
        make_data(os.path.join(work, "set.h5"))
        pack = os.path.join(data_dir, "synthetic_dP.ufnopack")
        p = forked_run.run([sys.executable, "-m", "ufno.pack",
                            os.path.join(work, "set.h5"), pack, "--variable", "dP"],
                           capture_output=True, text=True)
        check("a small pack", p.returncode == 0, p.stderr[-300:])

        # 1. The first command: its minutes end long before the schedule's.
        out1, run1 = os.path.join(work, "out1"), os.path.join(work, "work1")
        extra = [pack] + ARCH + ["--batch", "16", "--parts-mib", "0.01"]
        g = gpu_train("w4", out1, run1, os.path.join(work, "none"), 0.001, 30, extra)
        log = read_log(out1) if os.path.exists(os.path.join(out1, "gpu-train.log")) else ""
        check("the first command trains and stops after its minutes", g.returncode == 0
              and "epoch 1 train" in log and "this command's time is used" in log,
              g.stderr[-300:] + log[-800:])
        check("the rate is scaled from batch 4 by the square root (1e-3 -> 2e-3 at batch 16)",
              "batch 16, learning rate 0.002 (sqrt scaling from 0.001 at batch 4)" in log,
              log[-500:])
        manifest_path = os.path.join(out1, "w4", train_ufno.PARTS_MANIFEST)
        manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
        parts = [q["name"] for q in manifest.get("parts", [])]
        check("the checkpoint comes back as float16 parts of at most 16 MiB, no model file yet",
              manifest.get("precision") == "float16" and parts and all(
                  os.path.getsize(os.path.join(out1, "w4", q)) <= 16 << 20 for q in parts)
              and not os.path.exists(os.path.join(out1, "w4.h5")), (manifest, os.listdir(out1)))

        assert parts
        # 2. The parts against checkpoint.pt; several parts; an altered part.
        ck = torch.load(os.path.join(run1, "w4", "checkpoint.pt"))
        back = train_ufno.load_checkpoint_parts(os.path.join(out1, "w4"))
        moments = {"%d%s" % (i, k): v for i, st in ck["optimizer"]["state"].items()
                   for k, v in st.items() if k != "step"}
        moments_back = {"%d%s" % (i, k): v for i, st in back["optimizer"]["state"].items()
                        for k, v in st.items() if k != "step"}
        err_w, err_m = max_rel(ck["model"], back["model"]), max_rel(moments, moments_back)
        same = back["best"]["epoch"] != back["epoch"] or all(
            torch.equal(back["best"]["model"][k], back["model"][k]) for k in back["model"])
        check("the best epoch's weights come back (stored once when they are the last's)",
              back["best"]["model"] is not None and same
              and back["best"]["epoch"] == ck["best"]["epoch"])
        check("the float16 parts hold checkpoint.pt's weights and Adam's moments to 1e-3",
              err_w < 1e-3 and err_m < 2e-3 and back["epoch"] == ck["epoch"]
              and back["args"]["lr_used"] == 2e-3
              and torch.equal(back["rng"], ck["rng"]), (err_w, err_m))
        split = os.path.join(work, "split")
        saved = train_ufno.PART_BYTES
        train_ufno.PART_BYTES = 8192
        try:
            m = train_ufno.save_checkpoint_parts(ck, split, float32_mib=64)
        finally:
            train_ufno.PART_BYTES = saved
        again = train_ufno.load_checkpoint_parts(split)
        exact = all(torch.equal(ck["model"][k], again["model"][k]) for k in ck["model"])
        check("float32 parts split at a smaller size load back exactly",
              m["precision"] == "float32" and len(m["parts"]) > 2 and exact
              and len([f for f in os.listdir(split) if ".part" in f]) == len(m["parts"]),
              (m["precision"], len(m["parts"]), exact))
        victim = os.path.join(split, m["parts"][1]["name"])
        with open(victim, "r+b") as f:
            f.seek(100)
            f.write(b"\x00\x01\x02")
        t = T.run(["--data", pack, "--variable", "dP", "--run", os.path.join(work, "r_bad"),
                   "--resume-from", split] + ARCH)
        lines = [l for l in t.stderr.splitlines() if l.strip()]
        check("an altered part is refused in one line naming it, exit 2",
              t.returncode == 2 and len(lines) == 1 and m["parts"][1]["name"] in lines[0]
              and not os.path.exists(os.path.join(work, "r_bad", "checkpoint.pt")), t.stderr[-400:])

        # 3. A second command on a fresh machine resumes from the returned parts.
        resume = os.path.join(work, "gpu-data", "w4")
        shutil.copytree(os.path.join(out1, "w4"), resume)
        out2, run2 = os.path.join(work, "out2"), os.path.join(work, "work2")
        # The schedule ends 2 s of training after the first command's end: trained, then spent.
        total = (manifest["train_seconds"] + 2.0) / 60.0
        g = gpu_train("w4", out2, run2, resume, 5, total, extra)
        log = read_log(out2) if os.path.exists(os.path.join(out2, "gpu-train.log")) else ""
        model_file = os.path.join(out2, "w4.h5")
        m2_path = os.path.join(out2, "w4", train_ufno.PARTS_MANIFEST)
        m2 = json.load(open(m2_path)) if os.path.exists(m2_path) else {"train_seconds": -1}
        check("a command on a fresh work directory resumes from the returned parts",
              g.returncode == 0 and "resuming from the checkpoint parts" in log
              and "resuming after epoch %d" % manifest.get("epoch", -1) in log, log[-800:])
        check("it trains on until the schedule is spent, then exports the best epoch",
              os.path.exists(model_file) and "exported" in log
              and "epoch %d train" % (manifest["epoch"] + 1) in log
              and m2["train_seconds"] >= manifest["train_seconds"] + 2.0, log[-500:])

        from_parts = os.path.join(work, "from_parts.h5")
        e = forked_run.run([sys.executable, "-m", "ufno.export_checkpoint",
                            os.path.join(out2, "w4"), from_parts, "--grid", "8", "16", "8"],
                           capture_output=True, text=True)
        if e.returncode == 0 and os.path.exists(model_file):
            a_sd = ufno_model_file.read_model_file(model_file)[0].state_dict()
            b_sd = ufno_model_file.read_model_file(from_parts)[0].state_dict()
            err = max_rel(a_sd, b_sd)
        else:
            err = float("inf")
        check("export_checkpoint.py exports the returned parts (float16: to 1e-3)", err < 1e-3,
              (err, e.stderr[-300:]))

        # 4. ufno_predict scores the exported model.
        if not os.path.exists(PREDICT):
            skipped = "scoring through ufno_predict: %s is not built" % PREDICT
        elif os.path.exists(model_file):
            _, x, y, seeds, idxs = ufno_pack.unpack(pack)
            val = [i for i, (s, k) in enumerate(zip(seeds, idxs))
                   if train_ufno.split_of(int(s), int(k)) == "val"]
            tensor, pred_path = os.path.join(work, "val_in.h5"), os.path.join(work, "pred.h5")
            with h5py.File(tensor, "w") as f:
                f["input"] = x[val]
            q = subprocess.run([PREDICT, "--model", model_file, "--tensor", tensor, "--out",
                                pred_path, "--threads", "1"], capture_output=True, text=True,
                               env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=120)
            check("ufno_predict runs the exported model", q.returncode == 0
                  and os.path.exists(pred_path), q.stderr[-400:])
            if q.returncode == 0:
                with h5py.File(pred_path, "r") as f:
                    pred = np.moveaxis(f["dP"][()], 1, -1)  # (B, T, X, Y) -> (B, X, Y, T)
                net, attrs = ufno_model_file.read_model_file(model_file, dtype=torch.float64)
                with torch.no_grad():
                    raw = net.eval()(torch.from_numpy(x[val]).double()).numpy()
                ref = ufno_encoding.physical_output(
                    "dP", raw * float(attrs["output_scale"]) + float(attrs["output_offset"]),
                    x[val])
                diff = np.linalg.norm(pred - ref) / np.linalg.norm(ref)
                check("ufno_predict equals PyTorch on the exported weights (1e-5)", diff < 1e-5,
                      diff)
                mask = (x[val][..., 0] != 0).astype(np.float32)
                err = train_ufno.pressure_error(pred, y[val], mask)
                zero = train_ufno.pressure_error(np.zeros_like(pred), y[val], mask)
                print("dP relative error on %d validation cases: %.4f (the zero field: %.4f)"
                      % (len(val), err, zero))
                check("the exported model is closer to the targets than the zero field",
                      err < zero, (err, zero))

        # 5. Refusals.
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        T.refused("a data directory without the variable's pack",
                  ["--data", empty, "--variable", "dP", "--run", os.path.join(work, "r5")],
                  os.path.join(work, "r5", "checkpoint.pt"), "no pack of dP")
        if not torch.cuda.is_available():
            T.refused("--device cuda without a GPU",
                      ["--data", pack, "--variable", "dP", "--run", os.path.join(work, "r6"),
                       "--device", "cuda"], os.path.join(work, "r6", "checkpoint.pt"),
                      "sees no GPU")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if skipped:  # the rest passed; what could not run shows as a skip
        pytest.skip(skipped)

