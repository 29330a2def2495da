#!/usr/bin/python3
"""Export a train_ufno.py checkpoint (DIR/checkpoint.pt) to the project's model format without
loading the data set: architecture, variable and dP scaling come from the checkpoint.

Usage: /usr/bin/python3 python/export_checkpoint.py RUN_DIR|SLIM.pt OUT.h5 [--grid 24 48 24]
       [--last | --epoch N]  (--epoch: DIR/ckpt_epochN.pt, kept by train_ufno.py --keep-epochs)

SLIM.pt is the small file of train_ufno.py --slim (what comes back from a lent GPU machine).
"""
import argparse
import os
import pickle
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ufno_convert  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run")
    p.add_argument("out")
    p.add_argument("--grid", type=int, nargs=3, default=[24, 48, 24])
    p.add_argument("--last", action="store_true",
                   help="the last epoch's weights instead of the best validation epoch's")
    p.add_argument("--epoch", type=int,
                   help="the weights of this epoch (RUN_DIR/ckpt_epochN.pt, written by "
                        "train_ufno.py --keep-epochs)")
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
    try:
        ck = torch.load(path, map_location="cpu")
        args = ck["args"]
        ck["model"], ck["epoch"], ck["std"], ck["mean"]
    except (OSError, RuntimeError, EOFError, KeyError, TypeError, pickle.UnpicklingError) as e:
        p.error("%s: not a train_ufno.py checkpoint (%s)" % (path, str(e).split("\n")[0]))
    if a.last and ck["model"] is None:
        p.error("%s: this slim file holds the best epoch's weights only" % path)
    best = ck.get("best") or {}
    if a.epoch is None and not a.last and best.get("model") is not None:
        ck = dict(ck, model=best["model"], epoch=best["epoch"])
    ufno_convert.convert(None, a.out, args["variable"], grid=tuple(a.grid), padding=8,
                         fno=args["fno"], state_dict=ck["model"],
                         source="%s epoch %d" % (os.path.basename(os.path.normpath(a.run)),
                                                 ck["epoch"]),
                         scaling=(ck["std"], ck["mean"]))
    print("export_checkpoint: %s (epoch %d) -> %s" % (a.run, ck["epoch"], a.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
