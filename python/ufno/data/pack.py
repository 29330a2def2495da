#!/usr/bin/python3
"""A compact training set for a machine the full one cannot reach (a GPU machine that takes at
most 64 MiB with the working tree): one variable, every training and validation case that fits a
size budget, in one file that needs only numpy (and Python's lzma) to read.

Usage:
  PYTHONPATH=python /usr/bin/python3 -m ufno.pack DATA OUT.ufnopack --variable dP|SG [--max-mb 38]
      [--max-val N] [--max-error 2e-4] [--init MODEL.h5 INIT.pt]

DATA is a data set of python/ufno/data/flow_batch.py --assemble (DATA.h5) or another pack
(DATA.ufnopack, in either format: a repack, say of ../shared/data/seed2_dP.ufnopack).

What is kept, and why it is enough:
- the 11 input channels that do not vary in time, at the first report time, as float16
  (python/ufno/data/encoding.py's channels lie in [-0.4, 1]: a relative step of 5e-4), stored channel
  by channel as the differences of neighbouring radial cells' bit patterns (lossless); the time
  channel is the same plane for every case and is stored once, as float32;
- the target quantised per case and report time: a step per (case, report time) chosen so that
  the relative L2 error of that report time's field is at most --max-error (default 2e-4, i.e.
  0.02 %; checked after rounding, and the step refined where it is not), coded as the integer
  differences along the radial, time and layer axes, which are small where the field is smooth;
- the seed and index of every case, so ufno.train draws the same split.
Cases go in split order: the first --max-val validation cases (all of them by default), then
training cases until the budget is spent; test cases never leave this machine.

Measured on the seed-2 data set (../shared/data: 1,545 training and validation cases): a case
costs 9,122 bytes for dP and 5,757 for SG (the float16 format before: 20,748 and 8,088), so
4,000 cases of dP take about 35 MiB. Against the float32 targets of the 152 test cases the coding's
relative L2 error is 1.89e-4 for dP and 1.88e-4 for SG over all cases (largest over (case, report
time) 2.0e-4), less than float16's 2.07e-4 and 2.11e-4 (largest 3.0e-4); repacking the float16
packs adds 1.85e-4 (dP) and 1.81e-4 (SG). python/tests/test_pack.py checks the bound.

--init also writes the weights of a model file as a PyTorch file that ufno.train --init
reads without h5py.

File layout: the magic line, one JSON header line (arrays: name, dtype, shape, coding, byte
lengths), then the compressed blobs in header order. Format 1 (float16 targets, byte-shuffled
and xz-compressed) is still read.
"""
import argparse
import json
import lzma
import os
import sys

import numpy as np

from ufno.data.output_path import check_output

MAGIC_V1 = b"ufno-training-pack 1\n"
MAGIC = b"ufno-training-pack 2\n"
MAX_ERROR = 2e-4  # default bound on a report time's relative L2 coding error
# Bytes a case costs after compression (sampler v3 cases): the budget's first estimate of how
# many cases fit; the file is then checked against the budget itself.
_COST = {"dP": 9_300, "SG": 4_600}
_DTYPES = ("<f2", "<f4", "<i8")  # the logical dtypes a pack holds; anything else is refused
_MAX_BYTES = 16 << 30
_CHUNK = 64  # cases coded at a time (bounds the memory of the integer arrays)
_ESCAPE = 255  # a residual byte of 255: the value is the next entry of the escape stream


def _shuffle(a):
    b = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8).reshape(-1, a.itemsize)
    return np.ascontiguousarray(b.T).tobytes()


def _unshuffle(raw, dtype, shape):
    dt = np.dtype(dtype)
    b = np.frombuffer(raw, np.uint8).reshape(dt.itemsize, -1)
    return np.frombuffer(np.ascontiguousarray(b.T).tobytes(), dt).reshape(shape)


def _zigzag(d):
    """Signed integers to unsigned, small magnitudes to small values: 0, -1, 1, -2 -> 0, 1, 2, 3."""
    return np.where(d >= 0, 2 * d, -2 * d - 1)


def _unzigzag(z):
    return (z >> 1) ^ -(z & 1)


# -- the input channels: float16 bit patterns, channel-major, differenced along the radius ------

def _code_inputs(const):
    """(N, X, Y, C) float16 -> bytes: per channel, the difference of each cell's bit pattern from
    its inner radial neighbour's (modulo 2^16, zigzagged), byte-shuffled. Lossless."""
    bits = np.ascontiguousarray(const.astype("<f2").transpose(0, 3, 1, 2)).view(np.uint16)
    d = np.diff(bits, axis=3, prepend=np.uint16(0)).view(np.int16).astype(np.int32)
    return _shuffle(_zigzag(d).astype(np.uint16))


def _decode_inputs(raw, shape):
    n, nx, ny, nc = shape
    z = _unshuffle(raw, "<u2", (n, nc, nx, ny)).astype(np.int32)
    d = _unzigzag(z).astype(np.int16).view(np.uint16)
    bits = np.cumsum(d, axis=3, dtype=np.uint16)
    return np.ascontiguousarray(bits.view("<f2").transpose(0, 2, 3, 1))


# -- the target: quantised per (case, report time), differenced along Y, T and X ------------------

def _coarse(step):
    """float32 steps with 4 mantissa bits (the low 19 zeroed): exact, and cheap to store."""
    bits = np.asarray(step, np.float32).view(np.uint32) & np.uint32(0xFFF80000)
    return bits.view(np.float32)


def _quantise(y, max_error):
    """(q int64 (n, X, Y, T), step float32 (n, T)) with q * step within max_error relative L2 of
    y at every (case, report time). The step starts where rounding noise (step^2 / 12 a nonzero
    cell) gives 0.97 max_error and is made finer where the rounded field misses the bound."""
    y = y.astype(np.float64)
    nz = np.maximum((y != 0).sum(axis=(1, 2)), 1)
    norm = np.sqrt((y * y).sum(axis=(1, 2)))  # (n, T)
    step = np.sqrt(12.0) * 0.97 * max_error * norm / np.sqrt(nz)
    step = _coarse(np.where(step > 0, step, 1.0))
    todo = np.ones(step.shape, bool)
    q = np.zeros(y.shape, np.int64)
    for _ in range(200):
        s = step[:, None, None, :].astype(np.float64)
        qn = np.rint(y / s)
        if np.abs(qn).max(initial=0) > 2**40:
            raise ValueError("a target is too large for its report time's step")
        q = np.where(todo[:, None, None, :], qn.astype(np.int64), q)
        err = np.sqrt(((_dequantise(q, step) - y) ** 2).sum(axis=(1, 2)))
        todo = err > max_error * norm
        if not todo.any():
            return q, step
        step = np.where(todo, _coarse(step * np.float32(0.95)), step)
    raise ValueError("a target cannot be coded within --max-error %g" % max_error)


def _dequantise(q, step):
    return (q * step[:, None, None, :].astype(np.float64)).astype(np.float32).astype(np.float64)


def _residuals(q):
    """Differences along Y, T and X (each with a leading 0): invertible by cumulative sums."""
    for ax in (2, 3, 1):
        q = np.diff(q, axis=ax, prepend=0)
    return q


# The residual bytes are literals mostly: LZMA's literal context on the previous byte's high
# bits (lc 4) and no position contexts (pb 0) suit them (1 % smaller than the defaults).
_SMALL_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 6, "lc": 4, "lp": 0, "pb": 0}]


class _Blobs:
    """The residual bytes as one xz stream fed a chunk of cases at a time, and their escapes."""

    def __init__(self):
        self.small = lzma.LZMACompressor(filters=_SMALL_FILTERS)
        self.parts, self.escapes = [], []

    def add(self, r):
        z = _zigzag(r).ravel()
        if z.max(initial=0) >= 2**32:
            raise ValueError("a target's differences are too large to code")
        self.parts.append(self.small.compress(np.minimum(z, _ESCAPE).astype(np.uint8).tobytes()))
        self.escapes.append(z[z >= _ESCAPE].astype("<u4"))

    def finish(self):
        self.parts.append(self.small.flush())
        esc = np.concatenate(self.escapes) if self.escapes else np.zeros(0, "<u4")
        return b"".join(self.parts), lzma.compress(_shuffle(esc), preset=6)


def _code_target(target, max_error):
    """(residual bytes, escape bytes, step (N, T) float32)."""
    n = target.shape[0]
    blobs, steps = _Blobs(), []
    for b in range(0, n, _CHUNK):
        y = np.asarray(target[b:b + _CHUNK], np.float32)
        q, step = _quantise(y, max_error)
        steps.append(step)
        blobs.add(_residuals(q))
    small, esc = blobs.finish()
    step = np.concatenate(steps) if steps else np.zeros((0, target.shape[3]), np.float32)
    return small, esc, step


def _decode_target(small_raw, esc_raw, step, shape):
    n = shape[0]
    z = np.frombuffer(small_raw, np.uint8)
    hits = np.flatnonzero(z == _ESCAPE)
    esc = _unshuffle(esc_raw, "<u4", (len(esc_raw) // 4,))
    if len(esc) != len(hits):
        raise ValueError("array target: the escapes do not match the residuals")
    zz = z.astype(np.int64)
    zz[hits] = esc
    r = _unzigzag(zz).reshape(shape)
    out = np.empty(shape, np.float32)
    for b in range(0, n, _CHUNK):
        q = r[b:b + _CHUNK]
        for ax in (1, 3, 2):
            q = np.cumsum(q, axis=ax)
        out[b:b + _CHUNK] = (q * step[b:b + _CHUNK, None, None, :].astype(np.float64))
    return out


# -- the file ---------------------------------------------------------------------------------

def write_pack(path, variable, arrays, max_error=MAX_ERROR):
    """arrays: input_const (N, X, Y, C) float16, input_time (X, Y, T) float32, target (N, X, Y,
    T), seed, index; written atomically (a temporary name, then renamed)."""
    header = {"variable": variable, "max_error": max_error, "arrays": []}
    blobs = []

    def add(name, a, coding, parts):
        header["arrays"].append({"name": name, "dtype": np.dtype(a.dtype).str if a is not None
                                 else "<f4", "shape": list(np.shape(a)), "coding": coding,
                                 "bytes": [len(p) for p in parts]})
        blobs.extend(parts)

    const = np.asarray(arrays["input_const"], "<f2")
    add("input_const", const, "f16-radial-delta", [lzma.compress(_code_inputs(const), preset=6)])
    target = arrays["target"]
    small, esc, step = _code_target(target, max_error)
    add("target_step", step, "shuffle", [lzma.compress(_shuffle(step), preset=6)])
    header["arrays"].append({"name": "target", "dtype": "<f4", "shape": list(target.shape),
                             "coding": "quantised-delta", "bytes": [len(small), len(esc)]})
    blobs.extend([small, esc])
    for name in ("input_time", "seed", "index"):
        a = np.asarray(arrays[name])
        add(name, a, "shuffle", [lzma.compress(_shuffle(a), preset=6)])
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC)
            f.write(json.dumps(header).encode() + b"\n")
            for b in blobs:
                f.write(b)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _inflate(f, n, size, name):
    """Exactly `size` bytes from the next n compressed bytes, never more than the shape promises
    whatever the stream would expand to."""
    d = lzma.LZMADecompressor()
    raw = d.decompress(f.read(n), max_length=size)
    if len(raw) != size or not d.eof:
        raise ValueError("array %s: size does not match its shape" % name)
    return raw


def read_pack(path):
    """(variable, dict of arrays): input_const (N, X, Y, C) float16, input_time (X, Y, T)
    float32, target (N, X, Y, T) float32 (float16 in format 1), seed, index. Raises ValueError
    naming the file for anything malformed."""
    try:
        with open(path, "rb") as f:
            magic = f.readline()
            if magic not in (MAGIC, MAGIC_V1):
                raise ValueError("not a ufno training pack")
            header = json.loads(f.readline())
            out = {}
            for e in header["arrays"]:
                name = e["name"]
                shape = tuple(int(s) for s in e["shape"])
                nbytes = e["bytes"] if isinstance(e["bytes"], list) else [e["bytes"]]
                nbytes = [int(b) for b in nbytes]
                coding = e.get("coding", "shuffle")
                if (e["dtype"] not in _DTYPES or min(nbytes, default=0) < 0
                        or min(shape, default=0) < 0):
                    raise ValueError("array %s: bad dtype, length or shape" % name)
                count = int(np.prod(shape, dtype=np.float64))
                size = np.dtype(e["dtype"]).itemsize * count
                if size > _MAX_BYTES:
                    raise ValueError("array %s: larger than %d GiB" % (name, _MAX_BYTES >> 30))
                if coding == "shuffle" and len(nbytes) == 1:
                    out[name] = _unshuffle(_inflate(f, nbytes[0], size, name), e["dtype"], shape)
                elif coding == "f16-radial-delta" and len(nbytes) == 1 and len(shape) == 4 \
                        and e["dtype"] == "<f2":
                    out[name] = _decode_inputs(_inflate(f, nbytes[0], size, name), shape)
                elif coding == "quantised-delta" and len(nbytes) == 2 and len(shape) == 4 \
                        and "target_step" in out:
                    small = _inflate(f, nbytes[0], count, name)
                    escapes = int(np.count_nonzero(np.frombuffer(small, np.uint8) == _ESCAPE))
                    esc = _inflate(f, nbytes[1], 4 * escapes, name)
                    step = out["target_step"]
                    if step.shape != (shape[0], shape[3]):
                        raise ValueError("array target_step: shape does not match the target")
                    out[name] = _decode_target(small, esc, step, shape)
                else:
                    raise ValueError("array %s: unknown coding %r" % (name, coding))
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
    ufno.train reads them from an assembled data set."""
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


def find_pack(folder, variable):
    """The one pack of `variable` in a data directory: VARIABLE.ufnopack or *_VARIABLE.ufnopack
    (../shared/data/seed2_dP.ufnopack, say). ValueError naming the folder otherwise."""
    names = sorted(n for n in os.listdir(folder)
                   if n == variable + ".ufnopack" or n.endswith("_%s.ufnopack" % variable))
    if len(names) != 1:
        raise ValueError("%s: %s pack of %s (VARIABLE.ufnopack or NAME_VARIABLE.ufnopack)%s"
                         % (folder, "no" if not names else "more than one", variable,
                            ": " + ", ".join(names) if names else ""))
    return os.path.join(folder, names[0])


def sha256_of(path):
    """The file's SHA-256, as sha256sum and ../shared/data/SHA256SUMS give it."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _H5Source:
    """An assembled data set (DATA.h5) as a pack's source."""

    def __init__(self, path, variable):
        import h5py  # only here: the reading side needs numpy alone
        self.f = h5py.File(path, "r")
        self.path, self.variable = path, variable
        self.seeds, self.idxs = self.f["seed"][()], self.f["index"][()]

    def arrays(self, sel):
        f = self.f
        x = f["input"][sel] if len(sel) else np.zeros((0,) + f["input"].shape[1:], np.float32)
        if not np.array_equal(x[..., :-1],
                              np.broadcast_to(x[:, :, :, :1, :-1], x[..., :-1].shape)):
            raise ValueError("an input channel other than the last varies in time")
        return {"input_const": x[:, :, :, 0, :-1].astype(np.float16),
                "input_time": np.asarray(f["input"][0, :, :, :, -1], np.float32),
                "target": f[self.variable][sel].astype(np.float32)}

    def close(self):
        self.f.close()


class _PackSource:
    """Another pack (either format) as a pack's source: a repack."""

    def __init__(self, path, variable):
        packed, self.a = read_pack(path)
        if packed != variable:
            raise ValueError("holds %s, not %s" % (packed, variable))
        self.seeds, self.idxs = self.a["seed"], self.a["index"]

    def arrays(self, sel):
        return {"input_const": self.a["input_const"][sel], "input_time": self.a["input_time"],
                "target": self.a["target"][sel].astype(np.float32)}

    def close(self):
        pass


def pack(data, out, variable, max_mb, split_of, max_val=None, max_error=MAX_ERROR):
    """Writes the pack; (cases, validation cases, bytes)."""
    src = (_PackSource if data.endswith(".ufnopack") else _H5Source)(data, variable)
    try:
        groups = {"train": [], "val": [], "test": []}
        for i, (s, k) in enumerate(zip(src.seeds, src.idxs)):
            groups[split_of(int(s), int(k))].append(i)
        budget = int(max_mb * 1024 * 1024)
        take = int(budget / _COST[variable])
        nval = len(groups["val"]) if max_val is None else min(max_val, len(groups["val"]))
        order = groups["val"][:nval] + groups["train"]
        while True:
            sel = np.sort(np.array(order[:take], dtype=np.int64))
            arrays = src.arrays(sel)
            arrays["seed"] = np.asarray(src.seeds)[sel].astype(np.int64)
            arrays["index"] = np.asarray(src.idxs)[sel].astype(np.int64)
            write_pack(out, variable, arrays, max_error)
            size = os.path.getsize(out)
            if size <= budget or take == 0:
                return len(sel), min(nval, len(sel)), size
            os.remove(out)
            take = int(take * budget / size * 0.97)
    finally:
        src.close()


def coding_error(original, packed):
    """Relative L2 error of packed against original (N, X, Y, T): (over everything, largest over
    cases, largest over (case, report time) slices)."""
    o = np.asarray(original, np.float64)
    d = np.asarray(packed, np.float64) - o

    def rel(axes):
        num = np.sqrt((d * d).sum(axis=axes))
        den = np.sqrt((o * o).sum(axis=axes))
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.where(num > 0, np.inf, 0))
    return float(rel((0, 1, 2, 3))), float(rel((1, 2, 3)).max(initial=0)), \
        float(rel((1, 2)).max(initial=0))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.pack", description=__doc__.split("\n")[0])
    p.add_argument("data", help="an assembled data set (.h5) or a pack (.ufnopack)")
    p.add_argument("out")
    p.add_argument("--variable", choices=("SG", "dP"), required=True)
    p.add_argument("--max-mb", type=float, default=38.0,
                   help="the pack's size budget in MiB (default 38)")
    p.add_argument("--max-val", type=int,
                   help="at most this many validation cases (default: all)")
    p.add_argument("--max-error", type=float, default=MAX_ERROR,
                   help="the largest relative L2 coding error of a report time's target field "
                        "(default 2e-4)")
    p.add_argument("--init", nargs=2, metavar=("MODEL_H5", "INIT_PT"))
    a = p.parse_args(argv)
    if not (0.01 <= a.max_mb <= 4096):  # NaN fails too
        p.error("--max-mb must be in [0.01, 4096], not %r" % a.max_mb)
    if a.max_val is not None and a.max_val < 0:
        p.error("--max-val must be 0 or more, not %d" % a.max_val)
    if not (1e-7 <= a.max_error <= 0.1):
        p.error("--max-error must be in [1e-7, 0.1], not %r" % a.max_error)
    try:
        check_output(a.out, [a.data])
        if a.init:
            check_output(a.init[1], [a.data, a.out, a.init[0]], "--init")
    except ValueError as e:
        print("ufno_pack: %s" % e, file=sys.stderr)
        return 2
    from ufno.data.cases import split_of
    try:
        n, nval, size = pack(a.data, a.out, a.variable, a.max_mb, split_of, a.max_val,
                             a.max_error)
    except (OSError, KeyError, ValueError) as e:
        msg = str(e).split("\n")[0]  # read_pack's errors name the file already
        print("ufno_pack: %s" % (msg if msg.startswith(a.data + ":") else a.data + ": " + msg),
              file=sys.stderr)
        return 2
    print("ufno_pack: %d cases (%d validation, %d training) of %s in %s, %.1f MiB (%.0f bytes "
          "a case)" % (n, nval, n - nval, a.variable, a.out, size / 2**20, size / max(n, 1)))
    if a.init:
        from ufno.conversion import model_file as ufno_model_file
        try:
            ufno_model_file.write_init_file(a.init[0], a.init[1])
        except (OSError, KeyError, ValueError) as e:
            print("ufno_pack: --init %s: %s" % (a.init[0], str(e).split("\n")[0]), file=sys.stderr)
            return 2
        print("ufno_pack: the weights of %s in %s" % (a.init[0], a.init[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
