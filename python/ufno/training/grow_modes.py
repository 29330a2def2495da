#!/usr/bin/python3
"""A trained U-FNO / FNO with more Fourier modes that computes exactly the same function: the
starting point for training a network with more spectral capacity without losing what the
trained one knows.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.grow_modes MODEL.h5 INIT.pt --modes MX MY MT

Each Fourier layer keeps four corners of the spectrum (weights1..4, python/ufno/models/net3d.py): the
low or high MX bins along X times the low or high MY bins along Y, times the low MT bins along T.
The grown layer's corners hold the old weights at the same frequencies (a high corner's old bins
are the last ones of the new, larger corner) and zeros at the new ones, so the network's output
is unchanged until training moves the new weights. Fine fronts (the plume's edge, the near-well
pressure spike) are what the low modes of a small network cannot draw.

INIT.pt is the file of ufno.conversion.model_file.write_init_file, which ufno.train --init reads
(also on a machine without h5py, as ufno.pack --init writes it). The KPI heads of MODEL.h5 are not carried
over: a network trained further needs its own (models/README.md).
"""
import argparse
import sys

import torch

from ufno.conversion import model_file as ufno_model_file
from ufno.data.output_path import check_output

# weights1..4: which of the (X, Y) corner axes hold high bins (python/ufno/models/net3d.py).
_HIGH = {1: (False, False), 2: (True, False), 3: (False, True), 4: (True, True)}


def grown_corner(old, new_modes, k):
    """Corner weights `old` (in, out, mx, my, mt) placed into zeros of (in, out) + new_modes at
    the same frequencies: low bins at the start of an axis, high bins at its end."""
    out = torch.zeros(old.shape[:2] + tuple(new_modes), dtype=old.dtype)
    idx = [slice(None), slice(None)]
    for axis, high in enumerate(_HIGH[k] + (False,)):
        m_old, m_new = old.shape[2 + axis], new_modes[axis]
        idx.append(slice(m_new - m_old, m_new) if high else slice(0, m_old))
    out[tuple(idx)] = old
    return out


def grow(model, attrs, new_modes):
    """(grown model, its attributes); new_modes must be at least the model's in every axis."""
    old_modes = tuple(int(m) for m in attrs["modes"])
    if any(n < o for n, o in zip(new_modes, old_modes)):
        raise ValueError("--modes %s: fewer than the model's %s in some axis"
                         % (list(new_modes), list(old_modes)))
    attrs = dict(attrs, modes=list(new_modes))
    grown = ufno_model_file.net3d_of(attrs, torch.float32)
    old_sd, sd = model.state_dict(), grown.state_dict()
    for key in sd:
        name = key.rsplit(".", 1)[-1]
        if name.startswith("weights") and len(name) == 8:
            sd[key] = grown_corner(old_sd[key], new_modes, int(name[-1])).to(sd[key].dtype)
        else:
            sd[key] = old_sd[key].to(sd[key].dtype)
    grown.load_state_dict(sd)
    return grown.eval(), attrs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--modes", type=int, nargs=3, required=True)
    a = p.parse_args(argv)
    if not a.out.endswith(".pt"):
        p.error("%s: the output is a PyTorch init file, named *.pt" % a.out)
    if any(not 1 <= m <= 64 for m in a.modes):
        p.error("--modes: each in [1, 64], not %s" % a.modes)
    try:
        check_output(a.out, [a.model], "out")
    except ValueError as e:
        print("grow_modes: %s" % e, file=sys.stderr)
        return 2
    try:
        model, attrs = ufno_model_file.read_model_file(a.model, dtype=torch.float32)
        if attrs.get("architecture") == "FNO4D":
            raise ValueError("an FNO4D model file has no training path here")
        grown, attrs = grow(model, attrs, a.modes)
    except (OSError, KeyError, ValueError) as e:
        print("grow_modes: %s: %s" % (a.model, str(e).split("\n")[0]), file=sys.stderr)
        return 2
    ufno_model_file.save_init_file(grown, attrs, a.out)
    print("grow_modes: %s, modes %s -> %s, in %s" % (a.model, list(model.conv1.conv0.modes),
                                                     a.modes, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
