#!/usr/bin/python3
"""Train a U-FNO or FNO for SG or dP on the assembled OPM Flow data set, resumably.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.train --data DATA --variable SG|dP --run DIR
      [--fno] [--width 16] [--modes 6 6 6] [--epochs 30] [--batch 4] [--lr 1e-3]
      [--step 2 --gamma 0.9] [--threads 2] [--max-minutes 100] [--limit N]
      [--export models/sg.h5] [--device cpu|cuda|auto] [--init MODEL.h5] [--train-cases FILE]
      [--schedule cosine-time --minutes 7 --cosine-minutes 21]
      [--checkpoint-parts PARTS_DIR] [--resume-from PARTS_DIR]

DATA is a data set of `python/ufno/data/flow_batch.py --assemble` (DATA.h5: /input (N, X, Y, T, 12)
encoded as io/CaseEncoding.cpp does, /SG and /dP (N, X, Y, T), /seed and /index of every case),
a pack of python/ufno/data/pack.py (DATA.ufnopack: one variable, read with numpy alone), or a data
directory holding the variable's pack (VARIABLE.ufnopack or NAME_VARIABLE.ufnopack: the
project's data set in ../shared/data, say). The data set's path, case count and seeds, and a
pack's SHA-256 (as SHA256SUMS lists it), go into the checkpoint, DIR/metrics.json and the
exported model file's `source` attribute. --init may be a PyTorch file of ufno.pack --init,
for a machine whose Python lacks h5py.

Split: by case, deterministic: a case goes to test when hash(seed, index) % 10 == 0, to
validation when it is 1, else to training; the split (case ids) is written to DIR/split.json, so
more data later never moves an old case between sets.

Loss (the paper's): relative L2 over the reservoir cells (channel 0 != 0) plus 0.5 x the relative L2
of the radial first difference, per sample, averaged over the batch. dP is learned as a z-score
with the training set's mean and standard deviation over reservoir cells; they become the model
file's output scaling, so ufno_predict de-scales to bar.

Device: on the CPU the step runs python/ufno/models/fast_forward.py's formulation of the network (the
same function on PyTorch's fast CPU paths); on a GPU (--device cuda, or auto where one is seen)
the network's own forward, whose cuFFT transforms are the faster path there, with the whole data
set copied to the device once; --tf32 lets convolutions and matrix products use TF32 there.
--batch defaults to 4 on the CPU and 32 on a GPU. --lr is the rate at batch --lr-batch (4); for
another batch it is scaled by --lr-scaling: sqrt (default) multiplies it by sqrt(batch / 4), the
usual rule for Adam, linear by batch / 4, none keeps it.

Optimiser: Adam (weight decay 1e-4) with StepLR. Every epoch ends with a checkpoint
(DIR/checkpoint.pt: model, optimiser, scheduler, epoch, RNG state) written to a temporary name
and renamed; a rerun resumes from it. --max-minutes stops cleanly after the epoch that crosses
the budget, so a long training is a series of runs. DIR/log.csv has one line per epoch (train
loss, validation loss, the paper's metric on validation, seconds).
--schedule cosine-time replaces StepLR for training of a fixed length: the rate falls from the
(scaled) --lr to 0 along a cosine over --cosine-minutes of training time (summed over the runs of
DIR; scoring is counted, loading is not), and the run stops, mid-epoch if need be, scores, saves
and exports when they are spent. --minutes ends this command after the epoch in which its own
training time reaches them, so one schedule can span several commands (--cosine-minutes 21 over
three commands of --minutes 7). --checkpoint-parts PARTS_DIR also writes the checkpoint after
every epoch as files of at most 16 MiB (PARTS_DIR/checkpoint.json, checkpoint.eEPOCH.partN; the
weights, the best epoch's weights and Adam's moments in float32 where they take at most
--parts-mib, 32 MiB, together, else in float16, each tensor scaled by its largest value): what
comes back from a GPU machine. A run whose DIR has no checkpoint.pt, or an older one, resumes
from the parts in --resume-from (default PARTS_DIR); a part that is missing, short or altered
is refused. --slim FILE also writes, after every epoch, one small file without the optimiser
(the best epoch's weights, the last epoch's where both fit in 15 MiB); export_checkpoint.py
reads it.

--init starts a new run from the weights of a model file (a shipped model, say) instead of a
random draw: its architecture replaces --width/--modes/--fno and its de-scaling becomes the dP
scaling, so the raw output keeps its meaning. A resumed run ignores it.

--front-weight W (SG) adds W x the gas predicted where Flow has none, relative to Flow's gas,
to the loss: the thin film a model spreads beyond the front decides the plume radius a user
reads, and the relative L2 hardly sees it. Validation also prints the plume front radius error.
--mass-weight W (SG) adds W x the relative error of the gas pore volume (sum of SG x porosity x
cell volume) over the report times: trained with the front term alone, a model learnt to predict a
quarter less CO2 in place than Flow.
--peak-weight W (dP) adds W x the relative error of the largest buildup over the reservoir at each
report time: the maximum dP a user reads is one near-well value, which a loss over the whole
field weighs as one cell among a thousand. Validation also prints the maximum-dP error.

--train-cases FILE trains on the case ids listed in FILE (one per line; a repeated id is trained on
as often as it is listed) instead of the whole training split, say a fine-tune weighted towards the
cases like a set users bring (python/ufno/data/near_cases.py). Validation and test stay the split's: an id
that is not a training case is refused.

--export converts the final weights with python/ufno/conversion/convert.py (grid from the data) and writes
DIR/metrics.json with the paper's metrics on the test set.
"""
import argparse
import csv
import json
import math
import os
import pickle
import shutil
import sys
import time
import types

import numpy as np
import torch

from ufno.data.cases import annulus_areas, gas_extent, radial_edges, report_times
from ufno.data.cases import split_of  # (the split lives with the case ids)
from ufno.data import encoding as ue
from ufno.models import fast_forward as ufno_fast_forward
from ufno.conversion import model_file as ufno_model_file
from ufno.data import pack as ufno_pack
from ufno.data.output_path import check_output
from ufno.models import net3d as ufno_torch


SLIM_BYTES = 15 << 20  # a file that comes back from a GPU machine holds at most 16 MiB


def relative_l2(pred, true, mask):
    """Per-sample ||(pred - true) mask|| / ||true mask||, averaged (guarded for empty targets)."""
    d = ((pred - true) * mask).flatten(1).norm(dim=1)
    n = (true * mask).flatten(1).norm(dim=1)
    return (d / n.clamp_min(1e-6)).mean()


def paper_loss(pred, true, mask):
    """Relative L2 + 0.5 x relative L2 of the radial (Y) derivative, on reservoir cells."""
    dy = lambda a: a[:, :, 1:] - a[:, :, :-1]  # noqa: E731  (B, X, Y, T)
    m2 = mask[:, :, 1:] * mask[:, :, :-1]
    return relative_l2(pred, true, mask) + 0.5 * relative_l2(dy(pred), dy(true), m2)


def spurious_gas(pred, true, mask):
    """Per-sample gas the prediction puts where Flow has none (true SG below 1e-3), relative to
    Flow's total gas: sum |pred| there / sum |true|, averaged. The relative L2 of the paper's loss
    hardly sees the thin film of 0.01-0.05 a model spreads beyond the front, yet that film is
    what moves the plume radius a user reads (docs/kpis.md's threshold is 0.01)."""
    outside = mask * (true.abs() < 1e-3)
    d = (pred.abs() * outside).flatten(1).sum(dim=1)
    n = (true.abs() * mask).flatten(1).sum(dim=1)
    return (d / n.clamp_min(1e-6)).mean()


def gas_volume_error(pred, true, weight):
    """Per-sample relative L1 error of the gas volume's time series v_t = sum(weight SG) over the
    cells of Flow's plume (true SG >= 1e-3; the front term covers the others: the log-spaced
    annuli make a far-field speck outweigh the plume), sum_t |v_pred - v_true| / sum_t v_true,
    averaged; weight (N, X, Y) is the pore volume of each cell (porosity x annulus area; the
    layers are equally thick). A proxy for the CO2 mass in place that a front term alone lets
    drift; summed over time so that the first days' tiny volumes do not dominate. Tensors
    (N, X, Y, T)."""
    w = weight.unsqueeze(-1) * (true.abs() >= 1e-3)  # inside Flow's plume (outside: the front term)
    p = (pred * w).sum(dim=(1, 2))
    t = (true * w).sum(dim=(1, 2))
    return ((p - t).abs().sum(dim=1) / t.abs().sum(dim=1).clamp_min(1e-12)).mean()


def peak_pressure_error(pred, true, mask):
    """Per-sample relative error of the largest value over the reservoir cells at each report
    time, |max pred - max true| / max true, averaged over the times and the batch. Tensors
    (N, X, Y, T) in physical units (bar); cells outside the reservoir (mask 0) never count."""
    low = torch.finfo(pred.dtype).min
    pm = torch.where(mask > 0, pred, torch.full_like(pred, low)).amax(dim=(1, 2))
    tm = torch.where(mask > 0, true, torch.full_like(true, low)).amax(dim=(1, 2))
    return ((pm - tm).abs() / tm.abs().clamp_min(1e-6)).mean()


def max_pressure_error(pred, true, mask):
    """Median over cases of the relative error of the largest dP over reservoir cells and
    times (the sweep's max_dP_bar KPI). Arrays (N, X, Y, T)."""
    m = np.broadcast_to(mask, pred.shape) > 0
    pm = np.where(m, pred, -np.inf).max(axis=(1, 2, 3))
    tm = np.where(m, true, -np.inf).max(axis=(1, 2, 3))
    return float(np.median(np.abs(pm - tm) / np.maximum(np.abs(tm), 1e-6)))


def front_radius_error(pred, true, r_outer, late, threshold=0.01):
    """Median relative error of the plume front radius over (case, report time from one year on)
    pairs where Flow has a plume (the sweep reports the radius at 1, 5, 10 and 30 years; early on
    one cell of a few metres is a large fraction): the outer edge of the farthest radial cell
    with SG above the threshold in any layer (the KPI's radius without its connectivity rule).
    Arrays (N, X, Y, T); r_outer (Y,)."""
    def front(a):
        cells = gas_extent(np.moveaxis(a[..., late], -1, 1), threshold)  # (N, T late)
        return np.where(cells > 0, r_outer[np.maximum(cells - 1, 0)], 0.0)
    rp, rt = front(pred), front(true)
    sel = rt > 0
    return float(np.median(np.abs(rp - rt)[sel] / rt[sel])) if sel.any() else 0.0


def plume_error(pred, true):
    """Paper's SG metric: mean |pred - true| over cells where true != 0 or |pred| > 0.01."""
    sel = (true != 0) | (np.abs(pred) > 0.01)
    return float(np.abs(pred - true)[sel].mean()) if sel.any() else 0.0


def pressure_error(pred, true, mask):
    """Paper's dP metric: mean over reservoir cells of |pred - true| / max over space of |true| at
    that time. Arrays (N, X, Y, T)."""
    scale = np.abs(true * mask).max(axis=(1, 2), keepdims=True)
    rel = np.abs(pred - true) / np.maximum(scale, 1e-6)
    return float(rel[np.broadcast_to(mask, rel.shape) > 0].mean())


def atomic_save(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def epoch_checkpoint_path(run, epoch):
    return os.path.join(run, "ckpt_epoch%d.pt" % epoch)


def keep_epoch(ckpt_path, epoch):
    """Link this epoch's checkpoint under its own name. atomic_save replaces checkpoint.pt with a
    new file rather than rewriting it, so the link keeps this epoch's contents."""
    kept = epoch_checkpoint_path(os.path.dirname(ckpt_path), epoch)
    if os.path.exists(kept):
        os.remove(kept)  # a rerun of this epoch after an interrupted resume
    try:
        os.link(ckpt_path, kept)
    except OSError:  # a file system without hard links
        shutil.copyfile(ckpt_path, kept)


PARTS_MANIFEST = "checkpoint.json"
PART_BYTES = 16 << 20  # a file that comes back from a GPU machine holds at most 16 MiB


def _pack_tensor(t, half):
    """A tensor as stored in the checkpoint parts: complex as (re, im) pairs; in float16 scaled
    by its largest magnitude (so no value overflows and small ones keep their precision)."""
    cplx = t.is_complex()
    r = torch.view_as_real(t) if cplx else t
    if not half or not r.is_floating_point():
        return {"t": r.clone(), "complex": cplx}
    scale = float(r.abs().max()) if r.numel() else 0.0
    scale = scale if scale > 0 and math.isfinite(scale) else 1.0
    return {"t": (r.float() / scale).half(), "scale": scale, "complex": cplx}


def _unpack_tensor(d):
    t = d["t"]
    if "scale" in d:
        t = t.float() * d["scale"]
    return torch.view_as_complex(t.contiguous()) if d["complex"] else t


def _map_state(sd, f):
    return None if sd is None else {k: f(v) for k, v in sd.items()}


def save_checkpoint_parts(ck, folder, float32_mib=32.0):
    """Writes the checkpoint `ck` (as checkpoint.pt holds it) into `folder` as files of at most
    16 MiB: checkpoint.json (what the parts are, their sizes and SHA-256) and
    checkpoint.eEPOCH.partN. Weights, the best epoch's weights (unless they are the last epoch's)
    and Adam's moments are float32 where they take at most float32_mib MiB together, else
    float16 (Adam's second moment as its square root, each tensor scaled by its largest value). The parts are written first, then the
    manifest is renamed into place and older parts removed: the folder always holds one whole
    checkpoint."""
    import hashlib
    import io
    os.makedirs(folder, exist_ok=True)
    opt = ck["optimizer"]
    tensors = list(ck["model"].values()) + [v for st in opt["state"].values()
                                            for k, v in st.items() if k != "step"]
    best_model = (ck.get("best") or {}).get("model")
    # The best epoch is often the last one: then its weights are not stored twice.
    best_is_last = best_model is not None and best_model.keys() == ck["model"].keys() and all(
        torch.equal(best_model[k], ck["model"][k]) for k in best_model)
    if best_model is not None and not best_is_last:
        tensors += list(best_model.values())
    float32_bytes = sum(t.numel() * (8 if t.is_complex() else 4) for t in tensors)
    half = float32_bytes > float32_mib * (1 << 20)

    def pack_moment(k, v):
        if k == "exp_avg_sq":
            v = torch.view_as_complex(torch.view_as_real(v).sqrt()) if v.is_complex() else v.sqrt()
        return _pack_tensor(v, half) if torch.is_tensor(v) and k != "step" else v
    compact = dict(ck)
    compact["model"] = _map_state(ck["model"], lambda v: _pack_tensor(v, half))
    compact["optimizer"] = {"param_groups": opt["param_groups"],
                            "state": {i: {k: pack_moment(k, v) for k, v in st.items()}
                                      for i, st in opt["state"].items()}}
    if ck.get("best") is not None:
        compact["best"] = dict(ck["best"], model="last" if best_is_last else _map_state(
            best_model, lambda v: _pack_tensor(v, half)))
    buf = io.BytesIO()
    torch.save(compact, buf)
    blob = buf.getvalue()
    parts, tag = [], "e%d" % ck["epoch"]
    for i, b in enumerate(range(0, len(blob), PART_BYTES)):
        name = "checkpoint.%s.part%d" % (tag, i)
        chunk = blob[b:b + PART_BYTES]
        with open(os.path.join(folder, name + ".tmp"), "wb") as f:
            f.write(chunk)
        os.replace(os.path.join(folder, name + ".tmp"), os.path.join(folder, name))
        parts.append({"name": name, "bytes": len(chunk),
                      "sha256": hashlib.sha256(chunk).hexdigest()})
    manifest = {"format": 1, "precision": "float16" if half else "float32",
                "epoch": ck["epoch"], "train_seconds": ck.get("train_seconds", 0.0),
                "parts": parts}
    tmp = os.path.join(folder, PARTS_MANIFEST + ".tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, os.path.join(folder, PARTS_MANIFEST))
    keep = {q["name"] for q in parts}
    for name in os.listdir(folder):
        if name.startswith("checkpoint.") and ".part" in name and name not in keep:
            os.remove(os.path.join(folder, name))
    return manifest


def load_checkpoint_parts(folder):
    """The checkpoint that save_checkpoint_parts wrote into `folder`, as checkpoint.pt holds it
    (float32 tensors). ValueError naming the file for a missing, short or altered part."""
    import hashlib
    import io
    path = os.path.join(folder, PARTS_MANIFEST)
    try:
        with open(path) as f:
            manifest = json.load(f)
        blob = []
        for q in manifest["parts"]:
            name = os.path.basename(str(q["name"]))
            with open(os.path.join(folder, name), "rb") as f:
                chunk = f.read()
            if len(chunk) != q["bytes"] or hashlib.sha256(chunk).hexdigest() != q["sha256"]:
                raise ValueError("%s does not match the manifest (size or SHA-256)" % name)
            blob.append(chunk)
        compact = torch.load(io.BytesIO(b"".join(blob)), map_location="cpu")
    except (OSError, KeyError, TypeError, json.JSONDecodeError, RuntimeError, EOFError,
            pickle.UnpicklingError) as e:
        raise ValueError("%s: not a readable checkpoint (%s)" % (path, str(e).split("\n")[0]))
    except ValueError as e:
        raise ValueError("%s: %s" % (path, e))

    def unpack_moment(k, v):
        if not isinstance(v, dict):
            return v
        v = _unpack_tensor(v)
        if k == "exp_avg_sq":
            v = torch.view_as_complex(torch.view_as_real(v).square()) if v.is_complex() \
                else v.square()
        return v
    ck = dict(compact)
    ck["model"] = _map_state(compact["model"], _unpack_tensor)
    ck["optimizer"] = {"param_groups": compact["optimizer"]["param_groups"],
                       "state": {i: {k: unpack_moment(k, v) for k, v in st.items()}
                                 for i, st in compact["optimizer"]["state"].items()}}
    if compact.get("best") is not None:
        best_model = compact["best"].get("model")
        ck["best"] = dict(compact["best"], model=(
            {k: v.clone() for k, v in ck["model"].items()} if best_model == "last"
            else _map_state(best_model, _unpack_tensor)))
    return ck


def train_seconds(log_path):
    with open(log_path) as f:
        return sum(float(r["seconds"]) for r in csv.DictReader(f))


def chosen_training_cases(path, train, seeds, idxs):
    """The rows of the case ids listed in `path` (one per line; blank lines and # comments
    skipped; a repeated id is trained on as often as it is listed). Every id must be a training
    case of the data set: a validation or test case would leak into training."""
    row = {"s%d_i%06d" % (seeds[i], idxs[i]): i for i in train}
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            cid = line.split("#")[0].strip()
            if not cid:
                continue
            if cid not in row:
                raise ValueError("line %d: %s is not a training case of the data set" % (n, cid))
            rows.append(row[cid])
    if not rows:
        raise ValueError("no case ids")
    return rows


def refuse(message):
    """Bad input: one line on stderr, exit 2."""
    print("train_ufno: " + message, file=sys.stderr)
    raise SystemExit(2)


def _data_and_network_args(p):
    p.add_argument("--data", required=True)
    p.add_argument("--variable", required=True, choices=["SG", "dP"])
    p.add_argument("--run", required=True, help="directory for checkpoint, log, split, metrics")
    p.add_argument("--fno", action="store_true", help="plain FNO (6 Fourier layers)")
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--modes", type=int, nargs=3, default=[6, 6, 6])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch", type=int,
                   help="cases a step (default 4 on the CPU, 32 on a GPU)")
    p.add_argument("--lr", type=float, default=1e-3,
                   help="the learning rate at batch --lr-batch (default 1e-3 at batch 4)")
    p.add_argument("--lr-batch", type=int, default=4,
                   help="the batch --lr was chosen for (default 4, the batch of the shipped "
                        "models' training)")
    p.add_argument("--lr-scaling", choices=("sqrt", "linear", "none"), default="sqrt",
                   help="how the rate follows a batch other than --lr-batch: sqrt (default: "
                        "lr x sqrt(batch / lr-batch), the rule for Adam, whose steps are "
                        "normalised by the gradient's spread), linear (lr x batch / lr-batch) or "
                        "none")
    p.add_argument("--step", type=int, default=2)
    p.add_argument("--gamma", type=float, default=0.9)
    p.add_argument("--threads", type=int, default=2)


def _time_loss_and_device_args(p):
    p.add_argument("--max-minutes", type=float, default=100.0,
                   help="stop after the epoch in which this run's wall time crosses this")
    p.add_argument("--minutes", type=float,
                   help="train this many minutes of training time in this command (all the "
                        "rest, data loading and scoring, is not counted), then save and stop; "
                        "with --schedule cosine-time the default --cosine-minutes")
    p.add_argument("--keep-epochs", action="store_true",
                   help="also keep each epoch's checkpoint as DIR/ckpt_epochN.pt (a hard link: "
                        "no copy), for exporting or averaging any epoch later")
    p.add_argument("--limit", type=int, default=0, help="use only the first N cases (testing)")
    p.add_argument("--export", help="write the trained model file here when training is done")
    p.add_argument("--init", help="start from the weights of this model file (new runs only)")
    p.add_argument("--front-weight", type=float, default=0.0,
                   help="SG only: add this x the spurious gas beyond Flow's front to the loss")
    p.add_argument("--mass-weight", type=float, default=0.0,
                   help="SG only: add this x the relative error of the gas pore volume to the loss")
    p.add_argument("--peak-weight", type=float, default=0.0,
                   help="dP only: add this x the relative error of the largest dP per time")
    p.add_argument("--train-cases",
                   help="train on these case ids (one per line, repeats oversample) instead of "
                        "the whole training split; each must be in the training split")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                   help="cpu (default), cuda, or auto (cuda where PyTorch sees a GPU); "
                        "checkpoints stay device-neutral. On the CPU the step runs "
                        "python/ufno/models/fast_forward.py's formulation, on a GPU the "
                        "network's own forward (cuFFT)")


def _schedule_and_checkpoint_args(p):
    p.add_argument("--schedule", choices=("step", "cosine-time"), default="step",
                   help="step: StepLR per epoch (--step, --gamma); cosine-time: the learning "
                        "rate falls from --lr to 0 along a cosine over --cosine-minutes of "
                        "training time (all runs of DIR together), and training stops, mid-epoch "
                        "if need be, when they are spent: training of a fixed length")
    p.add_argument("--slim",
                   help="also write, after every epoch, this one small file (the best epoch's "
                        "weights, the last epoch's where both fit in 15 MiB, the scaling and "
                        "arguments; no optimiser), small enough to come back from a GPU machine; "
                        "python/ufno/conversion/export_checkpoint.py reads it")
    p.add_argument("--tf32", action="store_true",
                   help="on a GPU, let convolutions and matrix products use TF32 in training "
                        "(about 1e-3 relative; the exported weights still run in FP32)")
    p.add_argument("--cosine-minutes", type=float,
                   help="the training time the cosine schedule spans, over all the commands "
                        "that resume DIR (default: --minutes, else --max-minutes)")
    p.add_argument("--checkpoint-parts", metavar="PARTS_DIR",
                   help="also write the checkpoint, after every epoch, as files of at most 16 "
                        "MiB into PARTS_DIR (checkpoint.json and checkpoint.partN), in float16 "
                        "where float32 would pass --parts-mib; a run whose DIR has no "
                        "checkpoint.pt resumes from them (or from --resume-from)")
    p.add_argument("--parts-mib", type=float, default=32.0,
                   help="the most the checkpoint's parts may take in float32 before they are "
                        "written in float16 (default 32 MiB)")
    p.add_argument("--resume-from", metavar="PARTS_DIR",
                   help="resume from the checkpoint parts in this directory when DIR has no "
                        "checkpoint.pt (default: --checkpoint-parts)")


def build_parser():
    p = argparse.ArgumentParser(prog="python3 -m ufno.train", description=__doc__.split("\n")[0])
    _data_and_network_args(p)
    _time_loss_and_device_args(p)
    _schedule_and_checkpoint_args(p)
    return p


def check_args(p, a):
    """Refuses bad settings (p.error: usage and exit 2; refuse: one line, exit 2) and fills in
    the derived ones: --cosine-minutes, --device auto, --batch, --resume-from, a.lr_used."""
    if a.slim and (os.path.isdir(a.slim)
                   or not os.path.isdir(os.path.dirname(os.path.abspath(a.slim)))):
        p.error("--slim %s: a file name in an existing directory, not a directory" % a.slim)
    if a.cosine_minutes is None:
        a.cosine_minutes = a.minutes if a.minutes is not None else a.max_minutes
    if not (0.0 < a.cosine_minutes <= 1e6) or not (0.0 < a.max_minutes <= 1e6) \
            or not (a.minutes is None or 0.0 < a.minutes <= 1e6):
        p.error("--minutes, --max-minutes and --cosine-minutes must be in (0, 1e6]")
    if a.device == "auto":
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.device == "cuda" and not torch.cuda.is_available():
        refuse("--device cuda: PyTorch sees no GPU here")
    if a.batch is None:
        a.batch = 32 if a.device == "cuda" else 4
    if not (1 <= a.batch <= 4096) or not (1 <= a.lr_batch <= 4096):
        p.error("--batch and --lr-batch must be in [1, 4096]")
    if not (0.0 < a.lr <= 1.0):
        p.error("--lr must be in (0, 1], not %r" % a.lr)
    if not (0.0 < a.parts_mib <= 1024):
        p.error("--parts-mib must be in (0, 1024], not %r" % a.parts_mib)
    for flag, d in (("--checkpoint-parts", a.checkpoint_parts), ("--resume-from", a.resume_from)):
        if d is not None and os.path.exists(d) and not os.path.isdir(d):
            p.error("%s %s: a directory, not a file" % (flag, d))
    if a.resume_from is None:
        a.resume_from = a.checkpoint_parts
    # The rate for this batch (kept in the checkpoint's args; the optimiser's state carries it).
    ratio = a.batch / a.lr_batch
    a.lr_used = a.lr * {"sqrt": math.sqrt(ratio), "linear": ratio, "none": 1.0}[a.lr_scaling]
    for flag, v in (("--front-weight", a.front_weight), ("--mass-weight", a.mass_weight),
                    ("--peak-weight", a.peak_weight)):
        if not (0.0 <= v <= 1e3):  # NaN fails too
            p.error("%s must be a number in [0, 1000], not %r" % (flag, v))
    if (a.front_weight or a.mass_weight) and a.variable != "SG":
        p.error("--front-weight and --mass-weight are for SG only")
    if a.peak_weight and a.variable != "dP":
        p.error("--peak-weight is for dP only")
    inputs = [a.data, a.init, a.train_cases]
    try:
        for flag, out in (("--export", a.export), ("--slim", a.slim)):
            if out:
                check_output(out, inputs, flag)
    except ValueError as e:
        refuse(str(e))


def _read_arrays(p, a, data_id):
    """(inputs, targets, seeds, indices) of --data: a .ufnopack or an HDF5 data set."""
    if a.data.endswith(".ufnopack"):  # python/ufno/data/pack.py's compact set: numpy only
        try:
            packed, x_all, y_all, seeds, idxs = ufno_pack.unpack(a.data)
        except ValueError as e:
            refuse(str(e).split("\n")[0])  # names the pack: one line, no usage text
        if packed != a.variable:
            refuse("%s holds %s, not %s" % (a.data, packed, a.variable))
        data_id["sha256"] = ufno_pack.sha256_of(a.data)
        n = len(seeds) if not a.limit else min(a.limit, len(seeds))
        return x_all[:n], y_all[:n], seeds[:n], idxs[:n]
    import h5py  # here only: a machine with a pack needs no h5py
    with h5py.File(a.data, "r") as f:
        n = f["input"].shape[0] if not a.limit else min(a.limit, f["input"].shape[0])
        return f["input"][:n], f[a.variable][:n], f["seed"][:n], f["index"][:n]


def load_data(p, a):
    """The data set, its split (written to DIR/split.json) and its record (path, SHA-256 of a
    pack, cases, seeds), as a namespace."""
    if os.path.isdir(a.data):  # a data directory: its one pack of the variable
        try:
            a.data = ufno_pack.find_pack(a.data, a.variable)
        except (OSError, ValueError) as e:
            refuse(str(e))
    data_id = {"path": os.path.abspath(a.data)}
    x_all, y_all, seeds, idxs = _read_arrays(p, a, data_id)
    data_id.update(cases=int(len(seeds)), seeds=sorted({int(v) for v in seeds}))
    groups = {"train": [], "val": [], "test": []}
    for i, (s, k) in enumerate(zip(seeds, idxs)):
        groups[split_of(int(s), int(k))].append(i)
    with open(os.path.join(a.run, "split.json"), "w") as fs:
        json.dump({g: ["s%d_i%06d" % (seeds[i], idxs[i]) for i in v] for g, v in groups.items()},
                  fs, indent=0)
    if a.train_cases:
        try:
            groups["train"] = chosen_training_cases(a.train_cases, groups["train"], seeds, idxs)
        except (OSError, ValueError) as e:
            p.error("--train-cases %s: %s" % (a.train_cases, e))
    mask_all = (x_all[..., 0] != 0).astype(np.float32)  # (N, X, Y, T)
    return types.SimpleNamespace(x=x_all, y=y_all, mask=mask_all, groups=groups, id=data_id)


def _state_copy(model):
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


class TrainingRun:
    """One command's training of DIR: the network (new, from --init, or resumed), its
    optimiser and schedule, the batches, the scoring, an epoch's step and its records."""

    def __init__(self, p, a, d):
        self.p, self.a, self.d = p, a, d
        self.mean, self.std = self._scaling()
        self.X, self.Y, self.T = d.x.shape[1:4]
        self.r_outer = radial_edges()[1]  # the data set's radial grid (else no front metric)
        self.late_times = report_times() >= 365.0 if self.T == len(report_times()) \
            else np.ones(self.T, bool)
        # Pore volume per cell (porosity is channel 2 of the encoding), for --mass-weight.
        annulus = annulus_areas() if self.Y == len(self.r_outer) else np.ones(self.Y)
        self.annulus_t = torch.from_numpy((annulus / annulus.max()).astype(np.float32))
        self.dev = self._device()
        self.ckpt_path = os.path.join(a.run, "checkpoint.pt")
        self.ck = self._checkpoint()
        self._network()
        # On the CPU the fast formulation of the same network; on a GPU the network's own
        # forward, whose cuFFT transforms are faster there than the pruned DFTs' products.
        self.forward = ufno_fast_forward.forward if self.dev.type == "cpu" else \
            (lambda m, x: m(x))
        print("train_ufno: %s, batch %d, learning rate %.3g (%s scaling from %.3g at batch %d)%s"
              % (self.dev.type, a.batch, a.lr_used, a.lr_scaling, a.lr, a.lr_batch,
                 ", TF32" if a.tf32 and self.dev.type == "cuda" else ""), file=sys.stderr)
        # On a GPU the whole set is copied to the device once: a step of this small network is
        # shorter than the host-to-device copy of its batch.
        self.resident = None
        if self.dev.type != "cpu":
            self.resident = tuple(torch.from_numpy(v).to(self.dev) for v in (d.x, d.y, d.mask))
        self.log_path = os.path.join(a.run, "log.csv")

    def _scaling(self):
        if self.a.variable != "dP":
            return 0.0, 1.0
        tr = self.d.groups["train"]
        vals = self.d.y[tr][self.d.mask[tr] > 0]
        return float(vals.mean()), float(vals.std() or 1.0)

    def _device(self):
        dev = torch.device(self.a.device)
        if dev.type == "cuda":
            # FP32 as ufno_predict runs it unless --tf32; cuDNN picks its fastest algorithm.
            torch.backends.cuda.matmul.allow_tf32 = self.a.tf32
            torch.backends.cudnn.allow_tf32 = self.a.tf32
            torch.backends.cudnn.benchmark = True
        return dev

    def _checkpoint(self):
        """DIR's checkpoint.pt, or the parts in --resume-from where they are newer, or None."""
        a = self.a
        ck = torch.load(self.ckpt_path, map_location=self.dev) \
            if os.path.exists(self.ckpt_path) else None
        manifest = os.path.join(a.resume_from or "", PARTS_MANIFEST)
        if a.resume_from and os.path.exists(manifest):
            # The parts of a later command (returned and brought back) win over an older
            # checkpoint.pt that this machine kept.
            try:
                with open(manifest) as f:
                    parts_seconds = float(json.load(f)["train_seconds"])
            except (OSError, ValueError, KeyError, TypeError) as e:
                refuse("%s: not a readable checkpoint (%s)" % (manifest, e))
            if ck is None or parts_seconds > float(ck.get("train_seconds", 0.0)):
                try:
                    ck = load_checkpoint_parts(a.resume_from)
                except ValueError as e:
                    refuse(str(e))
                print("train_ufno: resuming from the checkpoint parts in %s" % a.resume_from,
                      file=sys.stderr)
        if ck is not None:  # the architecture a run started with, whatever the flags say now
            a.width, a.modes, a.fno = ck["args"]["width"], ck["args"]["modes"], ck["args"]["fno"]
        return ck

    def _initial_model(self):
        """The network from --init (new runs only; its scaling too) or a new one."""
        a, p = self.a, self.p
        if not (a.init and self.ck is None):
            return ufno_torch.Net3d(width=a.width, modes=tuple(a.modes),
                                    n_fourier=6 if a.fno else 3,
                                    n_ufourier=0 if a.fno else 3).to(self.dev)
        try:
            model, attrs = ufno_model_file.read_model_file(a.init, dtype=torch.float32)
        except (OSError, KeyError, ValueError, RuntimeError, EOFError,
                pickle.UnpicklingError) as e:
            p.error("--init %s: not a readable model file (%s)" % (a.init, str(e).split("\n")[0]))
        if attrs["variable"] != a.variable:
            p.error("--init %s predicts %s, not %s" % (a.init, attrs["variable"], a.variable))
        a.width, a.modes = int(attrs["width"]), [int(m) for m in attrs["modes"]]
        a.fno = int(attrs["n_ufourier"]) == 0
        self.std, self.mean = float(attrs["output_scale"]), float(attrs["output_offset"])
        print("train_ufno: starting from %s" % a.init, file=sys.stderr)
        return model.to(self.dev).train()

    def _network(self):
        """The model, optimiser and schedule, resumed from the checkpoint when there is one."""
        a, ck = self.a, self.ck
        self.model = self._initial_model()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=a.lr_used, weight_decay=1e-4)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=a.step, gamma=a.gamma)
        self.epoch0 = 0
        self.trained_before = 0.0  # training seconds of earlier runs (the cosine's clock)
        # The exported model is the epoch with the best validation metric, not the last one:
        # with a few hundred cases the validation error still jumps between epochs.
        self.best = {"metric": float("inf"), "epoch": 0, "model": None}
        if ck is None:
            return
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["optimizer"])
        self.sched.load_state_dict(ck["scheduler"])
        self.epoch0 = ck["epoch"]
        torch.set_rng_state(ck["rng"].cpu())
        self.mean, self.std = ck["mean"], ck["std"]
        self.best = ck.get("best", self.best)
        self.trained_before = float(ck.get("train_seconds", 0.0))
        print("train_ufno: resuming after epoch %d (%.1f minutes trained)"
              % (self.epoch0, self.trained_before / 60), file=sys.stderr)

    def pore_of(self, x):  # (N, X, Y) pore volume of a batch, relative
        return x[..., 0, 2] * self.annulus_t.to(x.device)

    def batches(self, ids, shuffle):
        a, d, dev, mean, std = self.a, self.d, self.dev, self.mean, self.std
        ids = np.array(ids)
        if shuffle:
            ids = ids[torch.randperm(len(ids)).numpy()]
        if self.resident is not None:  # one copy of the order per epoch, batches on the device
            order = torch.from_numpy(ids.astype(np.int64)).to(dev)
            for b in range(0, len(ids), a.batch):
                xs, ys, ms = (v.index_select(0, order[b:b + a.batch]) for v in self.resident)
                yield xs, (ys - mean) / std, ms
            return
        for b in range(0, len(ids), a.batch):
            sel = np.sort(ids[b:b + a.batch])
            yield (torch.from_numpy(d.x[sel]).to(dev),
                   torch.from_numpy((d.y[sel] - mean) / std).to(dev),
                   torch.from_numpy(d.mask[sel]).to(dev))

    def evaluate(self, ids):
        """(loss, metric) on the cases ids, scored as ufno_predict writes the fields."""
        a, d, model = self.a, self.d, self.model
        model.eval()
        preds, loss, nb = [], 0.0, 0
        with torch.no_grad():
            for x, y, m in self.batches(ids, False):
                out = self.forward(model, x)
                loss += float(paper_loss(out * m, y * m, m))
                nb += 1
                preds.append(out.cpu().numpy() * self.std + self.mean)
        model.train()
        if not ids:
            return float("nan"), float("nan")
        # Scored as ufno_predict writes it: the physical rules of docs/kpis.md applied.
        pred = ue.physical_output(a.variable, np.concatenate(preds), d.x[ids])
        true = d.y[ids] * d.mask[ids]
        metric = plume_error(pred, true) if a.variable == "SG" else \
            pressure_error(pred, true, d.mask[ids])
        if a.variable == "SG" and pred.shape[2] == len(self.r_outer):
            print("train_ufno: plume front radius error (median) %.4f"
                  % front_radius_error(pred, true, self.r_outer, self.late_times),
                  file=sys.stderr)
        if a.variable == "dP":
            print("train_ufno: maximum dP error (median) %.4f"
                  % max_pressure_error(pred, true, d.mask[ids]), file=sys.stderr)
        return loss / max(nb, 1), metric

    def score_best(self):
        """The best epoch scored on today's validation cases; a warm start's own score."""
        a, val = self.a, self.d.groups["val"]
        if self.best["model"] is not None and self.best.get("val_cases") != len(val):
            # The data set grew since the best epoch was scored: score it again on today's
            # validation cases, or a score on fewer (maybe easier) cases would keep winning.
            current = _state_copy(self.model)
            self.model.load_state_dict(self.best["model"])
            self.best["metric"], self.best["val_cases"] = self.evaluate(val)[1], len(val)
            self.model.load_state_dict(current)
            print("train_ufno: best epoch %d scores %.4f on the %d validation cases of today's "
                  "data" % (self.best["epoch"], self.best["metric"], self.best["val_cases"]),
                  file=sys.stderr)
        if a.init and self.epoch0 == 0 and self.best["model"] is None:
            # A warm start exports nothing worse on validation than the model it started from.
            self.best = {"metric": self.evaluate(val)[1], "epoch": 0, "val_cases": len(val),
                         "model": _state_copy(self.model)}
            print("train_ufno: %s scores %.4f on validation" % (a.init, self.best["metric"]),
                  file=sys.stderr)

    def trained_seconds(self):
        return self.trained_before + time.time() - self.t_train

    def cosine_lr(self):
        """The cosine schedule's rate now, or None once its time is spent."""
        f = self.trained_seconds() / (60.0 * self.a.cosine_minutes)
        return None if f >= 1.0 else self.a.lr_used * 0.5 * (1.0 + math.cos(math.pi * f))

    def step_loss(self, x, y, m):
        a, mean, std = self.a, self.mean, self.std
        out = self.forward(self.model, x)
        loss = paper_loss(out * m, y * m, m)
        if a.front_weight:
            loss = loss + a.front_weight * spurious_gas(out * m, y * m, m)
        if a.mass_weight:
            loss = loss + a.mass_weight * gas_volume_error(out * m, y * m, self.pore_of(x))
        if a.peak_weight:
            loss = loss + a.peak_weight * peak_pressure_error(out * std + mean, y * std + mean, m)
        return loss

    def train_epoch(self):
        """One pass over the training cases: (summed loss, steps, whether the cosine schedule
        ran out during it)."""
        total, nb = torch.zeros((), device=self.dev), 0  # summed on the device: no wait a step
        for x, y, m in self.batches(self.d.groups["train"], True):
            if self.cosine:
                lr = self.cosine_lr()
                if lr is None:
                    return total, nb, True  # the rate is 0 from here: score this partial epoch
                for g in self.opt.param_groups:
                    g["lr"] = lr
            self.opt.zero_grad()
            loss = self.step_loss(x, y, m)
            loss.backward()
            self.opt.step()
            total += loss.detach()
            nb += 1
        return total, nb, False

    def keep_spent_time(self):
        """The schedule was spent before an epoch's first step: nothing to score, but the
        checkpoint records the time spent, or a resume would train on past the schedule."""
        a = self.a
        ck_now = torch.load(self.ckpt_path) if os.path.exists(self.ckpt_path) else None
        if ck_now is not None:
            ck_now["train_seconds"] = self.trained_seconds()
            atomic_save(ck_now, self.ckpt_path)
            if a.checkpoint_parts:
                save_checkpoint_parts(ck_now, a.checkpoint_parts, a.parts_mib)

    def save_epoch(self, epoch, val_metric):
        """The checkpoint (and its parts, the epoch's own copy, the slim file) after epoch."""
        a, model, best = self.a, self.model, self.best
        if val_metric < best["metric"]:
            best = self.best = {"metric": val_metric, "epoch": epoch + 1,
                                "val_cases": len(self.d.groups["val"]),
                                "model": _state_copy(model)}
        ck_now = {"best": best, "model": {k: v.cpu() for k, v in model.state_dict().items()},
                  "optimizer": self.opt.state_dict(),
                  "scheduler": self.sched.state_dict(), "epoch": epoch + 1,
                  "rng": torch.get_rng_state(), "mean": self.mean, "std": self.std,
                  "train_seconds": self.trained_seconds(), "args": vars(a), "data": self.d.id}
        atomic_save(ck_now, self.ckpt_path)
        if a.checkpoint_parts:
            save_checkpoint_parts(ck_now, a.checkpoint_parts, a.parts_mib)
        if a.keep_epochs:
            keep_epoch(self.ckpt_path, epoch + 1)
        if a.slim:
            last = {k: v.cpu() for k, v in model.state_dict().items()}
            both = 2 * sum(v.numel() * v.element_size() for v in last.values())
            atomic_save({"slim": 1, "best": best, "epoch": epoch + 1, "mean": self.mean,
                         "std": self.std, "model": last if both < SLIM_BYTES else None,
                         "train_seconds": self.trained_seconds(), "args": vars(a)}, a.slim)

    def log_epoch(self, epoch, train_loss, val_loss, val_metric, t0):
        new = not os.path.exists(self.log_path)
        with open(self.log_path, "a", newline="") as fl:
            w = csv.writer(fl)
            if new:
                w.writerow(["epoch", "train_loss", "val_loss", "val_metric", "seconds"])
            w.writerow([epoch + 1, "%.5f" % train_loss, "%.5f" % val_loss,
                        "%.5f" % val_metric, "%.1f" % (time.time() - t0)])
        print("train_ufno: epoch %d train %.4f val %.4f metric %.4f (%.0f s)"
              % (epoch + 1, train_loss, val_loss, val_metric, time.time() - t0), file=sys.stderr)

    def train(self, t_start):
        """The epochs of this command; 0 when it ends (its time used, or trained through)."""
        a = self.a
        self.score_best()
        self.cosine = a.schedule == "cosine-time"
        self.t_train = time.time()
        spent = False
        if self.cosine and self.cosine_lr() is None:
            print("train_ufno: the cosine schedule's %g minutes are spent" % a.cosine_minutes,
                  file=sys.stderr)
            spent = True
        for epoch in range(self.epoch0, a.epochs):
            if spent:
                break  # the cosine schedule is done: the training is complete
            if (time.time() - t_start) / 60 > a.max_minutes or (
                    a.minutes is not None and time.time() - self.t_train >= 60.0 * a.minutes):
                if self.cosine and self.cosine_lr() is None:
                    # The schedule ran out while the last epoch was scored: it is spent too,
                    # so the training is complete and exports (a rerun would train nothing).
                    print("train_ufno: the cosine schedule's %g minutes are spent"
                          % a.cosine_minutes, file=sys.stderr)
                    break
                print("train_ufno: this command's time is used; rerun to continue",
                      file=sys.stderr)
                return 0
            t0 = time.time()
            total, nb, spent = self.train_epoch()
            if nb == 0:
                self.keep_spent_time()
                break
            if not self.cosine:
                self.sched.step()
            val_loss, val_metric = self.evaluate(self.d.groups["val"])
            self.save_epoch(epoch, val_metric)
            self.log_epoch(epoch, float(total) / max(nb, 1), val_loss, val_metric, t0)
        self.finish()
        return 0

    def finish(self):
        """The parts of a command that trained nothing, and the --export of the best epoch."""
        a = self.a
        if a.checkpoint_parts and self.ck is not None and not os.path.exists(
                os.path.join(a.checkpoint_parts, PARTS_MANIFEST)):
            # Nothing was trained in this command: the checkpoint it resumed comes back as is.
            save_checkpoint_parts(self.ck, a.checkpoint_parts, a.parts_mib)
        if a.export:
            self.export()

    def export(self):
        a, d, model, best = self.a, self.d, self.model, self.best
        if best["model"] is not None:
            model.load_state_dict(best["model"])
        test_loss, test_metric = self.evaluate(d.groups["test"])
        from ufno.conversion import convert as ufno_convert  # here only: it needs h5py
        ufno_convert.convert(None, a.export, a.variable, grid=(self.X, self.Y, self.T), padding=8,
                             fno=a.fno,
                             state_dict={k: v.cpu() for k, v in model.state_dict().items()},
                             source="%s, trained on %s%s" % (
                                 os.path.basename(os.path.normpath(a.run)),
                                 os.path.basename(d.id["path"]),
                                 " (sha256 %s)" % d.id["sha256"] if "sha256" in d.id else ""),
                             scaling=(self.std, self.mean))
        with open(os.path.join(a.run, "metrics.json"), "w") as fm:
            json.dump({"variable": a.variable, "architecture": "FNO" if a.fno else "UFNO",
                       "cases": {g: len(v) for g, v in d.groups.items()},
                       "test_loss": test_loss,
                       ("test_plume_error" if a.variable == "SG" else "test_pressure_error"):
                           test_metric,
                       "epochs": a.epochs, "best_epoch": best["epoch"], "data": d.id,
                       "batch": a.batch, "lr": a.lr_used, "device": self.dev.type,
                       "train_seconds": self.trained_seconds(), "width": a.width,
                       "modes": a.modes}, fm, indent=1)
        print("train_ufno: exported %s; %s" % (a.export, "test metric %.4f" % test_metric
                                                if d.groups["test"] else
                                                "no test cases in the data"),
              file=sys.stderr)


def main(argv=None):
    p = build_parser()
    a = p.parse_args(argv)
    check_args(p, a)
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    os.makedirs(a.run, exist_ok=True)
    t_start = time.time()
    return TrainingRun(p, a, load_data(p, a)).train(t_start)


if __name__ == "__main__":
    sys.exit(main())
