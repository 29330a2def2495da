#!/usr/bin/python3
"""A compact training set for a machine the full one cannot reach (a lent GPU machine takes at
most 64 MiB with the working tree): one variable, the training and validation cases that fit a
size budget, in one file that needs only numpy to read.

Usage:
  /usr/bin/python3 python/ufno_pack.py DATA.h5 OUT.ufnopack --variable dP|SG [--max-mb 40]
      [--max-val 150] [--init MODEL.h5 INIT.pt]

What is kept, and why it is enough:
- the 11 input channels that do not vary in time, at the first report time, as float16
  (python/ufno_encoding.py's channels lie in [-0.4, 1]: a relative step of 5e-4); the time
  channel is the same plane for every case and is stored once, as float32;
- the target, float16 (relative step 5e-4 of the case's largest value, far below the 1 % goal);
- the seed and index of every case, so train_ufno.py draws the same split.
Cases go in split order: the first --max-val validation cases (enough to pick the best epoch),
then training cases until the budget is spent; test cases never leave this machine. Every array is byte-shuffled (high
bytes, then low bytes: float16 high bytes repeat) and xz-compressed.

--init also writes the weights of a model file as a PyTorch file that train_ufno.py --init
reads without h5py (the GPU machine's Python may not have it).

File layout: the magic line, one JSON header line (arrays: name, dtype, shape, byte length),
then the compressed arrays in header order.
"""
import argparse
import json
import lzma
import os
import sys

import numpy as np

MAGIC = b"ufno-training-pack 1\n"
# Bytes a case costs after compression (measured on sampler v3 cases): the budget's estimate
# for how many cases to try; the file is then checked against the budget itself.
_COST = {"dP": 20_500, "SG": 8_500}
_DTYPES = ("<f2", "<f4", "<i8")  # all a pack holds; anything else in a header is refused
_MAX_BYTES = 16 << 30


def _shuffle(a):
    b = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8).reshape(-1, a.itemsize)
    return np.ascontiguousarray(b.T).tobytes()


def _unshuffle(raw, dtype, shape):
    dt = np.dtype(dtype)
    b = np.frombuffer(raw, np.uint8).reshape(dt.itemsize, -1)
    return np.frombuffer(np.ascontiguousarray(b.T).tobytes(), dt).reshape(shape)


def write_pack(path, variable, arrays):
    """arrays: name -> numpy array; written atomically (a temporary name, then renamed)."""
    blobs, header = [], {"variable": variable, "arrays": []}
    for name, a in arrays.items():
        blob = lzma.compress(_shuffle(a), preset=6)
        header["arrays"].append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape),
                                 "bytes": len(blob)})
        blobs.append(blob)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC)
        f.write(json.dumps(header).encode() + b"\n")
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_pack(path):
    """(variable, dict of arrays). Raises ValueError naming the file for anything malformed."""
    try:
        with open(path, "rb") as f:
            if f.readline() != MAGIC:
                raise ValueError("not a ufno training pack")
            header = json.loads(f.readline())
            out = {}
            for e in header["arrays"]:
                n = int(e["bytes"])
                shape = tuple(int(s) for s in e["shape"])
                if e["dtype"] not in _DTYPES or n < 0 or min(shape, default=0) < 0:
                    raise ValueError("array %s: bad dtype, length or shape" % e["name"])
                size = np.dtype(e["dtype"]).itemsize * int(np.prod(shape, dtype=np.float64))
                if size > _MAX_BYTES:
                    raise ValueError("array %s: larger than %d GiB" % (e["name"], _MAX_BYTES >> 30))
                # Never more than the shape promises, whatever the stream would expand to.
                d = lzma.LZMADecompressor()
                raw = d.decompress(f.read(n), max_length=size)
                if len(raw) != size or not d.eof:
                    raise ValueError("array %s: size does not match its shape" % e["name"])
                out[e["name"]] = _unshuffle(raw, e["dtype"], shape)
            for name in ("input_const", "input_time", "target", "seed", "index"):
                if name not in out:
                    raise ValueError("no array %s" % name)
        return header["variable"], out
    except (OSError, KeyError, TypeError, json.JSONDecodeError, lzma.LZMAError) as err:
        raise ValueError("%s: %s" % (path, err)) from None
    except ValueError as err:
        raise ValueError("%s: %s" % (path, err)) from None


def unpack(path):
    """(variable, x (N, X, Y, T, C) float32, y (N, X, Y, T) float32, seeds, indices) as
    train_ufno.py reads them from an assembled data set."""
    variable, a = read_pack(path)
    const = a["input_const"].astype(np.float32)  # (N, X, Y, C - 1)
    time_plane = a["input_time"].astype(np.float32)  # (X, Y, T)
    n, nx, ny, c1 = const.shape
    if time_plane.shape[:2] != (nx, ny) or a["target"].shape[:3] != (n, nx, ny):
        raise ValueError("%s: the input and target shapes disagree" % path)
    nt = time_plane.shape[2]
    x = np.empty((n, nx, ny, nt, c1 + 1), np.float32)
    x[..., :c1] = const[:, :, :, None, :]
    x[..., c1] = time_plane[None]
    return variable, x, a["target"].astype(np.float32), a["seed"], a["index"]


def pack(data, out, variable, max_mb, split_of, max_val=150):
    import h5py  # only here: the reading side needs numpy alone
    with h5py.File(data, "r") as f:
        seeds, idxs = f["seed"][()], f["index"][()]
        groups = {"train": [], "val": [], "test": []}
        for i, (s, k) in enumerate(zip(seeds, idxs)):
            groups[split_of(int(s), int(k))].append(i)
        budget = int(max_mb * 1024 * 1024)
        take = int(budget / _COST[variable])
        order = groups["val"][:max_val] + groups["train"]
        while True:
            sel = np.sort(np.array(order[:take], dtype=np.int64))
            x = f["input"][sel] if len(sel) else np.zeros((0,) + f["input"].shape[1:], np.float32)
            arrays = {
                "input_const": x[:, :, :, 0, :-1].astype(np.float16),
                "input_time": np.asarray(f["input"][0, :, :, :, -1], np.float32),
                "target": f[variable][sel].astype(np.float16),
                "seed": seeds[sel].astype(np.int64), "index": idxs[sel].astype(np.int64)}
            if not np.array_equal(x[..., :-1], np.broadcast_to(x[:, :, :, :1, :-1], x[..., :-1].shape)):
                raise ValueError("%s: an input channel other than the last varies in time" % data)
            write_pack(out, variable, arrays)
            size = os.path.getsize(out)
            if size <= budget or take == 0:
                return len(sel), min(max_val, len(groups["val"])), size
            take = int(take * budget / size * 0.97)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("data")
    p.add_argument("out")
    p.add_argument("--variable", choices=("SG", "dP"), required=True)
    p.add_argument("--max-mb", type=float, default=40.0)
    p.add_argument("--max-val", type=int, default=150)
    p.add_argument("--init", nargs=2, metavar=("MODEL_H5", "INIT_PT"))
    a = p.parse_args(argv)
    if not (0.01 <= a.max_mb <= 4096):  # NaN fails too
        p.error("--max-mb must be in [0.01, 4096], not %r" % a.max_mb)
    if a.max_val < 0:
        p.error("--max-val must be 0 or more, not %d" % a.max_val)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ufno_cases import split_of
    try:
        n, nval, size = pack(a.data, a.out, a.variable, a.max_mb, split_of, a.max_val)
    except (OSError, KeyError, ValueError) as e:
        print("ufno_pack: %s: %s" % (a.data, str(e).split("\n")[0]), file=sys.stderr)
        return 2
    print("ufno_pack: %d cases (%d validation, %d training) of %s in %s, %.1f MB"
          % (n, min(n, nval), max(0, n - nval), a.variable, a.out, size / 2**20))
    if a.init:
        import ufno_model_file
        try:
            ufno_model_file.write_init_file(a.init[0], a.init[1])
        except (OSError, KeyError, ValueError) as e:
            print("ufno_pack: --init %s: %s" % (a.init[0], str(e).split("\n")[0]), file=sys.stderr)
            return 2
        print("ufno_pack: the weights of %s in %s" % (a.init[0], a.init[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
