#!/usr/bin/python3
"""Average the weights of model files of one lineage (stochastic weight averaging, a "model soup").

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.average_models OUT.h5 A.h5 B.h5 [...] [--source TEXT]

Every floating-point array of the files (weights, biases, batch-norm running statistics) becomes
the mean over the files; the attributes are the first file's, with `source` replaced when given.
A KPI head (a group such as /max_dp_head, python/ufno/heads/common.py) is not averaged: it is fitted apart
from the network, so the first file's is kept as it is (a head that reads the network's output,
the dP field-scale or dP-envelope head or a plume head with field radii, is then not used by the programs: refit it
for the average).
The files must be checkpoints of one training lineage (runs that started from the same weights):
averaging unrelated networks gives garbage, and nothing here can tell. What is checked: the same
arrays with the same shapes, and the same attributes apart from `source` (architecture, grid,
variable, output scaling). OUT is written to a temporary name and renamed, so a failure never
leaves half a file.
"""
import argparse
import sys

import h5py
import numpy as np

from ufno.data.output_path import check_output, replace_when_done


# python/ufno/heads/common.py: fitted apart, never averaged (nor the training data's profile,
# python/ufno/data/training_profile.py). A head that reads the network's output keeps the digest
# of the network it was fitted to, so the programs do not use it with the average (docs/kpis.md).
HEADS = ("max_dp_head", "plume_radius_head", "co2_mass_head", "dp_envelope_head",
         "dp_field_scale_head", "training_profile")


def arrays_of(f):
    """The network's datasets (the KPI heads' left out)."""
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj)
                 if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in HEADS else None)
    return out


def same_attrs(a, b):
    keys = (set(a.attrs) | set(b.attrs)) - {"source"}
    return all(k in a.attrs and k in b.attrs and np.array_equal(a.attrs[k], b.attrs[k])
               for k in keys)


def average(out, paths, source=None):
    """Writes the mean of the model files `paths` to `out`; raises ValueError on a mismatch."""
    if len(paths) < 2:
        raise ValueError("give at least two model files")
    files = [h5py.File(p, "r") for p in paths]
    try:
        first = arrays_of(files[0])
        for p, f in zip(paths[1:], files[1:]):
            arrs = arrays_of(f)
            if sorted(arrs) != sorted(first) or any(arrs[k].shape != first[k].shape for k in first):
                raise ValueError("%s: its arrays differ from %s's" % (p, paths[0]))
            if not same_attrs(files[0], f):
                raise ValueError("%s: its attributes (architecture, grid, scaling) differ from "
                                 "%s's" % (p, paths[0]))
        with replace_when_done(out) as tmp, h5py.File(tmp, "w") as g:
            for k, v in files[0].attrs.items():
                g.attrs[k] = v
            if source is not None:
                g.attrs["source"] = np.bytes_(source)
            for name, ds in first.items():
                if ds.dtype.kind == "f":
                    acc = sum(f[name][()].astype(np.float64) for f in files) / len(files)
                    g.create_dataset(name, data=acc.astype(ds.dtype))
                else:
                    g.create_dataset(name, data=ds[()])
            # A head does not depend on the network's weights: the first file's, as it is.
            for head in HEADS:
                if head in files[0]:
                    files[0].copy(head, g)
    finally:
        for f in files:
            f.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("models", nargs="+")
    p.add_argument("--source", help="the output's source attribute (what was averaged)")
    a = p.parse_args(argv)
    try:
        check_output(a.out, a.models, "out")
    except ValueError as e:
        print("average_models: %s" % e, file=sys.stderr)
        return 2
    try:
        average(a.out, a.models, a.source)
    except (OSError, ValueError, KeyError) as e:
        p.error(str(e).split("\n")[0])
    print("average_models: %d files -> %s" % (len(a.models), a.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
