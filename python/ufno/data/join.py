"""Join assembled data sets (`ufno.run_flow_batch --assemble`, or packs unpacked) into one, so
that a head or a training run reads more cases than one directory of runs holds: the 1,545 of
`../shared/data` and more runs of the same generator, say.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.join A.h5 B.h5 [...] --out JOINED.h5 [--virtual]

The per-case datasets (/input, /SG, /dP, /seed, /index) are concatenated in the order given;
/TIMES must be the same in every set, and each per-case dataset must have the same shape past
its first axis. A (seed, index) pair found twice is refused: a case would count twice, and
split_of would put both copies in the same split. With --virtual the output holds HDF5 virtual
datasets that read the inputs where they are (no copy; the inputs must stay at their absolute
paths). The output is written under a temporary name and renamed; it never replaces an input."""

import argparse
import os
import sys

import h5py
import numpy as np

from ufno.data.output_path import check_output, replace_when_done

PER_CASE = ("input", "SG", "dP", "seed", "index")
CHUNK = 64  # cases copied at a time


def _check(files, paths):
    """ValueError naming the file and dataset where the sets cannot be joined."""
    for f, p in zip(files, paths):
        for name in PER_CASE + ("TIMES",):
            if name not in f:
                raise ValueError("%s: %s: missing" % (p, name))
    times = files[0]["TIMES"][()]
    for f, p in zip(files, paths):
        if not np.array_equal(f["TIMES"][()], times):
            raise ValueError("%s: TIMES: differ from %s's" % (p, paths[0]))
        n = len(f["seed"])
        for name in PER_CASE:
            if f[name].shape[0] != n:
                raise ValueError("%s: %s: %d cases where seed has %d" % (p, name, f[name].shape[0], n))
            if f[name].shape[1:] != files[0][name].shape[1:] or f[name].dtype != files[0][name].dtype:
                raise ValueError("%s: %s: shape %s %s differs from %s's %s %s"
                                 % (p, name, f[name].shape[1:], f[name].dtype, paths[0],
                                    files[0][name].shape[1:], files[0][name].dtype))
    seen = {}
    for f, p in zip(files, paths):
        for s, k in zip(f["seed"][()], f["index"][()]):
            if (int(s), int(k)) in seen:
                raise ValueError("%s: index: case (seed %d, index %d) is also in %s"
                                 % (p, s, k, seen[(int(s), int(k))]))
            seen[(int(s), int(k))] = p


def join(paths, out, virtual=False):
    """Writes the joined data set to `out` (see the module's docstring); returns its case count."""
    check_output(out, paths)
    files = []
    for p in paths:
        try:
            files.append(h5py.File(p, "r"))
        except OSError as e:
            for f in files:
                f.close()
            raise ValueError("%s: %s" % (p, e))
    try:
        _check(files, paths)
        n = sum(len(f["seed"]) for f in files)
        with replace_when_done(out) as tmp, h5py.File(tmp, "w") as o:
            for name in PER_CASE:
                _join_dataset(o, name, files, paths, n, virtual)
            o["TIMES"] = files[0]["TIMES"][()]
        return n
    finally:
        for f in files:
            f.close()


def _join_dataset(o, name, files, paths, n, virtual):
    """Dataset `name` of the open output o: the inputs' in order, copied or virtual."""
    shape, dtype = (n,) + files[0][name].shape[1:], files[0][name].dtype
    if virtual:
        lay = h5py.VirtualLayout(shape=shape, dtype=dtype)
    else:
        d = o.create_dataset(name, shape=shape, dtype=dtype)
    i = 0
    for f, p in zip(files, paths):
        m = f[name].shape[0]
        if virtual:
            lay[i:i + m] = h5py.VirtualSource(os.path.abspath(p), name, shape=f[name].shape)
        else:
            for s in range(0, m, CHUNK):
                d[i + s:i + min(m, s + CHUNK)] = f[name][s:min(m, s + CHUNK)]
        i += m
    if virtual:
        o.create_virtual_dataset(name, lay)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", nargs="+", help="assembled data sets, joined in this order")
    p.add_argument("--out", required=True)
    p.add_argument("--virtual", action="store_true",
                   help="virtual datasets reading the inputs in place (no copy)")
    a = p.parse_args(argv)
    if len(a.data) < 2:
        sys.exit("join: give at least two data sets")
    try:
        n = join(a.data, a.out, a.virtual)
    except (ValueError, OSError) as e:
        sys.exit("join: %s" % e)
    print("join: wrote %s: %d cases%s" % (a.out, n, " (virtual)" if a.virtual else ""))
    return 0
