#!/usr/bin/python3
"""Export a ufno.train checkpoint (DIR/checkpoint.pt) to the project's model format without
loading the data set: architecture, variable and dP scaling come from the checkpoint.

Usage: PYTHONPATH=python /usr/bin/python3 -m ufno.export_checkpoint RUN_DIR|SLIM.pt OUT.h5 [--grid 24 48 24]
       [--last | --epoch N]  (--epoch: DIR/ckpt_epochN.pt, kept by ufno.train --keep-epochs)

RUN_DIR may also be a directory of checkpoint parts (ufno.train --checkpoint-parts, what
scripts/gpu-train.sh returns): a network whose model file is too large to come back from a GPU
machine is exported here from them.
SLIM.pt is the small file of ufno.train --slim (small enough to come back from a GPU machine).

--heads-from MODEL.h5 copies into OUT.h5 what of that file reads the case alone: the maximum-dP,
CO2-mass and dP-envelope heads (an envelope head fitted to the r-z solve's envelope, not to a
network's) and the training data's profile. The heads that read the network's output (plume
radius with field radii, dP field scale, an older dP-envelope head) store that network's digest,
belong to it and must be fitted again for this one (models/README.md), so they are never copied.
"""
import argparse
import os
import pickle
import sys

import torch

from ufno.conversion import convert as ufno_convert
from ufno.data.output_path import check_output


# The groups fitted to the case alone: valid for any network of their variable, unless one
# stores the digest of the network whose output it reads.
CASE_HEADS = ("max_dp_head", "co2_mass_head", "dp_envelope_head", "training_profile")


def copy_case_heads(src, dst, variable):
    """Copy src's CASE_HEADS groups that read no network into the model file dst; the names
    copied."""
    import h5py
    with h5py.File(src, "r") as fs, h5py.File(dst, "r+") as fd:
        v = fs.attrs.get("variable", b"")
        v = v.decode() if isinstance(v, bytes) else str(v)
        if v != variable:
            raise ValueError("a model of %s, not %s" % (v or "no variable", variable))
        copied = [g for g in CASE_HEADS if g in fs and "network_digest" not in fs[g].attrs]
        for g in copied:
            fs.copy(fs[g], fd, name=g)
    return copied


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run")
    p.add_argument("out")
    p.add_argument("--grid", type=int, nargs=3, default=[24, 48, 24])
    p.add_argument("--last", action="store_true",
                   help="the last epoch's weights instead of the best validation epoch's")
    p.add_argument("--epoch", type=int,
                   help="the weights of this epoch (RUN_DIR/ckpt_epochN.pt, written by "
                        "ufno.train --keep-epochs)")
    p.add_argument("--heads-from", metavar="MODEL_H5",
                   help="copy this model file's heads that do not read the network (maximum dP, "
                        "CO2 mass) into OUT")
    a = p.parse_args(argv)
    if a.epoch is not None and a.last:
        p.error("--epoch and --last exclude each other")
    if a.epoch is not None and a.epoch < 1:
        p.error("--epoch %d: epochs count from 1" % a.epoch)
    if os.path.isfile(a.run):
        if a.epoch is not None:
            p.error("--epoch needs a run directory, not the file %s" % a.run)
        path = a.run
    else:
        path = os.path.join(a.run, "checkpoint.pt" if a.epoch is None
                            else "ckpt_epoch%d.pt" % a.epoch)
    parts = os.path.join(a.run, "checkpoint.json")
    if a.epoch is None and not os.path.exists(path) and os.path.exists(parts):
        path = parts  # the checkpoint parts of ufno.train --checkpoint-parts
    try:
        check_output(a.out, [path, a.heads_from] + (
            [os.path.join(a.run, n) for n in os.listdir(a.run)] if os.path.isdir(a.run) else []))
    except ValueError as e:
        print("export_checkpoint: %s" % e, file=sys.stderr)
        return 2
    try:
        if path == parts:
            from ufno.training import train as train_ufno  # here only: the parts' reader
            try:
                ck = train_ufno.load_checkpoint_parts(a.run)
            except ValueError as e:
                print("export_checkpoint: %s" % e, file=sys.stderr)
                return 2
        else:
            ck = torch.load(path, map_location="cpu")
        args = ck["args"]
        ck["model"], ck["epoch"], ck["std"], ck["mean"]
    except (OSError, RuntimeError, EOFError, KeyError, TypeError, pickle.UnpicklingError) as e:
        p.error("%s: not a ufno.train checkpoint (%s)" % (path, str(e).split("\n")[0]))
    if a.last and ck["model"] is None:
        p.error("%s: this slim file holds the best epoch's weights only" % path)
    best = ck.get("best") or {}
    if a.epoch is None and not a.last and best.get("model") is not None:
        ck = dict(ck, model=best["model"], epoch=best["epoch"])
    tmp = "%s.export.%d.h5" % (a.out, os.getpid())
    try:
        ufno_convert.convert(None, tmp, args["variable"], grid=tuple(a.grid), padding=8,
                             fno=args["fno"], state_dict=ck["model"],
                             source="%s epoch %d" % (os.path.basename(os.path.normpath(a.run)),
                                                     ck["epoch"]),
                             scaling=(ck["std"], ck["mean"]))
        if a.heads_from:
            copied = copy_case_heads(a.heads_from, tmp, args["variable"])
            print("export_checkpoint: heads %s from %s" % (", ".join(copied) or "none",
                                                           a.heads_from), file=sys.stderr)
        os.replace(tmp, a.out)
    except (OSError, KeyError, ValueError) as e:
        p.error("%s: %s" % (a.heads_from or a.out, str(e).split("\n")[0]))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print("export_checkpoint: %s (epoch %d) -> %s" % (a.run, ck["epoch"], a.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
