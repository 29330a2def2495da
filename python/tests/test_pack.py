#!/usr/bin/python3
"""python/ufno/data/pack.py, the compact training set for a GPU machine, on a tiny synthetic data set:
the pack holds validation then training cases (never test cases) inside its budget, unpacks to
the data set's inputs within float16's step and to its targets within the coding's relative L2
bound at every (case, report time), repacks a pack, still reads the float16 format before, and
ufno.train trains on it from a PyTorch init file that reproduces the model file's outputs; bad
packs, bad budgets and data it cannot represent get one error line and no file."""
import json
import lzma
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.dirname(HERE)
from ufno.conversion import model_file as ufno_model_file
from ufno.data import pack as ufno_pack
from ufno.data.cases import split_of
import forked_run  # (the tests' Python runs, in forks: python/tests/forked_run.py)

from cli_checks import check


def make_data(path, n=40, X=6, Y=10, T=5, vary_channel=None):
    rng = np.random.default_rng(1)
    const = rng.random((n, X, Y, 1, 11), dtype=np.float32)
    x = np.empty((n, X, Y, T, 12), np.float32)
    x[..., :11] = const
    x[..., 11] = np.linspace(0.1, 1.0, T, dtype=np.float32)
    x[:, -1, :, :, 0] = 0  # an inactive row
    if vary_channel is not None:
        x[:, :, :, 1, vary_channel] += 0.5
    with h5py.File(path, "w") as f:
        f["input"] = x
        f["SG"] = rng.random((n, X, Y, T), dtype=np.float32)
        f["dP"] = 50 * rng.random((n, X, Y, T), dtype=np.float32) + 1
        f["seed"] = np.full(n, 3, dtype=np.int64)
        f["index"] = np.arange(n, dtype=np.int64)
    return x


def write_format1(path, variable, x, y):
    """A pack in the float16 format of before (magic "ufno-training-pack 1")."""
    arrays = {"input_const": x[:, :, :, 0, :-1].astype(np.float16),
              "input_time": x[0, :, :, :, -1].astype(np.float32),
              "target": y.astype(np.float16),
              "seed": np.full(len(x), 3, np.int64), "index": np.arange(len(x), dtype=np.int64)}
    header, blobs = {"variable": variable, "arrays": []}, []
    for name, a in arrays.items():
        blob = lzma.compress(ufno_pack._shuffle(a))
        header["arrays"].append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape),
                                 "bytes": len(blob)})
        blobs.append(blob)
    with open(path, "wb") as f:
        f.write(b"ufno-training-pack 1\n" + json.dumps(header).encode() + b"\n" + b"".join(blobs))


def run(*args):
    return forked_run.run([sys.executable, *args], capture_output=True, text=True)


def test_pack():
    work = tempfile.mkdtemp(prefix="ufno_pack_test_")
    try:
        data = os.path.join(work, "data.h5")
        x = make_data(data)
        pack = os.path.join(work, "dP.ufnopack")
        p = run("-m", "ufno.pack", data, pack, "--variable", "dP", "--max-val", "3")
        check("packs", p.returncode == 0 and os.path.exists(pack), p.stderr[-300:])
        var, xu, yu, seeds, idxs = ufno_pack.unpack(pack)
        splits = [split_of(int(s), int(i)) for s, i in zip(seeds, idxs)]
        n_val = sum(1 for i in range(40) if split_of(3, i) == "val")
        n_train = sum(1 for i in range(40) if split_of(3, i) == "train")
        check("no test case leaves the machine", "test" not in splits, splits)
        check("at most --max-val validation cases, every training case",
              splits.count("val") == min(3, n_val) and splits.count("train") == n_train, splits)
        rows = idxs.astype(int)
        with h5py.File(data, "r") as f:
            dp = f["dP"][()][rows]
        check("the variable and the cases' seeds", var == "dP" and (seeds == 3).all())
        check("inputs back within float16's step",
              xu.shape == x[rows].shape and np.abs(xu - x[rows]).max() < 1e-3,
              np.abs(xu - x[rows]).max())
        worst = ufno_pack.coding_error(dp, yu)[2]
        check("targets back within 2e-4 relative L2 at every (case, report time)",
              0 < worst <= 2e-4, worst)
        # A field with a smooth part and rough parts, zero outside the reservoir, a report time
        # with one nonzero cell, and an all-zero one: the bound holds for each, --max-error too.
        rng = np.random.default_rng(4)
        g = np.linspace(0, 1, 10)
        field = (100 * np.exp(-3 * g)[None, None, :, None] * np.linspace(1, 2, 5)
                 + rng.random((4, 6, 10, 5))).astype(np.float32)
        field[:, -1] = 0
        field[:, :, :, 0] = 0
        field[:, 2, 3, 0] = 7.0
        field[:, :, :, 1] = 0
        for bound in (2e-4, 1e-2):
            small, esc, step = ufno_pack._code_target(field, bound)
            back = ufno_pack._decode_target(lzma.decompress(small), lzma.decompress(esc), step,
                                            field.shape)
            errs = ufno_pack.coding_error(field, back)
            check("--max-error %g holds at every (case, report time)" % bound,
                  errs[2] <= bound and np.array_equal(back[:, -1], field[:, -1])
                  and np.array_equal(back[:, :, :, 1], field[:, :, :, 1]), errs)
        cost = lambda b: sum(map(len, ufno_pack._code_target(field, b)[:2]))  # noqa: E731
        check("a looser bound codes smaller", cost(1e-2) < cost(2e-4), (cost(1e-2), cost(2e-4)))
        # Repacking a pack keeps its cases; the float16 format before is still read.
        again = os.path.join(work, "again.ufnopack")
        p = run("-m", "ufno.pack", pack, again, "--variable", "dP")
        _, xa, ya, sa, ia = ufno_pack.unpack(again)
        check("a pack repacks to the same cases and inputs", p.returncode == 0
              and np.array_equal(ia, idxs) and np.array_equal(xa, xu), p.stderr[-300:])
        old = os.path.join(work, "old.ufnopack")
        write_format1(old, "dP", x[rows], dp)
        var1, x1, y1, s1, i1 = ufno_pack.unpack(old)
        check("the float16 format before is read",
              var1 == "dP" and np.array_equal(i1, np.arange(len(rows)))
              and np.abs(x1 - x[rows]).max() < 1e-3
              and np.array_equal(y1, dp.astype(np.float16).astype(np.float32)))
        q = run("-m", "ufno.pack", pack, pack, "--variable", "dP")
        check("a pack is never written over its own source", q.returncode == 2
              and "is the input file" in q.stderr and os.path.getsize(pack) > 0, q.stderr[-300:])
        for bad in ("0", "nan", "0.5"):
            q = run("-m", "ufno.pack", data, os.path.join(work, "x.ufnopack"),
                    "--variable", "dP", "--max-error", bad)
            check("--max-error %s is one error line, exit 2" % bad, q.returncode == 2
                  and "--max-error" in q.stderr and "Traceback" not in q.stderr
                  and not os.path.exists(os.path.join(work, "x.ufnopack")), q.stderr[-300:])
        small = os.path.join(work, "small.ufnopack")
        p = run("-m", "ufno.pack", data, small, "--variable", "SG", "--max-mb", "0.02")
        check("the budget holds", p.returncode == 0 and os.path.getsize(small) <= 0.02 * 2**20,
              p.stderr[-300:])
        for bad in ("nan", "-1", "1e9"):
            q = run("-m", "ufno.pack", data, os.path.join(work, "x.ufnopack"),
                    "--variable", "dP", "--max-mb", bad)
            check("--max-mb %s is one error line, exit 2" % bad,
                  q.returncode == 2 and "Traceback" not in q.stderr
                  and not os.path.exists(os.path.join(work, "x.ufnopack")), q.stderr[-300:])
        q = run("-m", "ufno.pack", data, os.path.join(work, "x.ufnopack"),
                "--variable", "dP", "--max-val", "-3")
        check("--max-val -3 is one error line, exit 2", q.returncode == 2
              and "--max-val" in q.stderr and "Traceback" not in q.stderr, q.stderr[-300:])
        varying = os.path.join(work, "varying.h5")
        make_data(varying, vary_channel=4)
        q = run("-m", "ufno.pack", varying, os.path.join(work, "v.ufnopack"),
                "--variable", "dP")
        check("an input channel that varies in time is refused, nothing written",
              q.returncode == 2 and "varies in time" in q.stderr
              and not os.path.exists(os.path.join(work, "v.ufnopack")), q.stderr[-300:])

        # The init file gives the model file's outputs.
        model_h5 = os.path.join(os.path.dirname(PY), "models", "dp_ufno.h5")
        init = os.path.join(work, "dP_init.pt")
        ufno_model_file.write_init_file(model_h5, init)
        a, attrs_a = ufno_model_file.read_model_file(model_h5, dtype=torch.float32)
        b, attrs_b = ufno_model_file.read_model_file(init, dtype=torch.float32)
        xin = torch.rand(1, 24, 48, 24, 12, generator=torch.Generator().manual_seed(2))
        with torch.no_grad():
            same = torch.equal(a(xin), b(xin))
        check("the init file reproduces the model file", same
              and float(attrs_a["output_scale"]) == attrs_b["output_scale"])

        # ufno.train on the pack, from the init file (the GPU machine's way, here on the CPU).
        train = ("-m", "ufno.train")
        grid_pack = os.path.join(work, "grid.ufnopack")
        big = os.path.join(work, "grid.h5")
        rng = np.random.default_rng(5)
        xg = np.repeat(rng.random((6, 24, 48, 1, 12), dtype=np.float32), 24, axis=3)
        xg[..., 11] = np.linspace(0.1, 1, 24, dtype=np.float32)
        with h5py.File(big, "w") as f:
            f["input"] = xg
            f["dP"] = 20 * rng.random((6, 24, 48, 24), dtype=np.float32)
            f["SG"] = rng.random((6, 24, 48, 24), dtype=np.float32)
            f["seed"] = np.full(6, 3, dtype=np.int64)
            f["index"] = np.arange(6, dtype=np.int64)
        p = run("-m", "ufno.pack", big, grid_pack, "--variable", "dP")
        t = run(*train, "--data", grid_pack, "--variable", "dP", "--run", os.path.join(work, "r"),
                "--init", init, "--threads", "1", "--epochs", "1")
        check("ufno.train trains on a pack from an init file",
              p.returncode == 0 and t.returncode == 0 and "starting from" in t.stderr
              and os.path.exists(os.path.join(work, "r", "checkpoint.pt")), t.stderr[-500:])
        t = run(*train, "--data", grid_pack, "--variable", "SG", "--run", os.path.join(work, "r2"))
        check("a pack of the other variable is refused",
              t.returncode == 2 and "holds dP, not SG" in t.stderr, t.stderr[-300:])
        broken = os.path.join(work, "broken.ufnopack")
        with open(grid_pack, "rb") as f:
            blob = f.read()
        bomb = (ufno_pack.MAGIC + b'{"variable": "dP", "arrays": [{"name": "target", "dtype": "<f4", '
                b'"shape": [1, 2], "bytes": 1000}]}\n' + __import__("lzma").compress(bytes(10**6)))
        odd = (ufno_pack.MAGIC + b'{"variable": "dP", "arrays": [{"name": "x", "dtype": "|O", '
               b'"shape": [1], "bytes": 0}]}\n')
        for label, content in (("truncated", blob[: len(blob) // 2]), ("garbage", b"hello\n"),
                               ("expanding", bomb), ("object-typed", odd)):
            with open(broken, "wb") as f:
                f.write(content)
            t = run(*train, "--data", broken, "--variable", "dP", "--run", os.path.join(work, "r3"))
            check("a %s pack is one error line naming it once, no usage text, exit 2" % label,
                  t.returncode == 2 and t.stderr.count("broken.ufnopack") == 1
                  and t.stderr.count("\n") == 1 and "usage" not in t.stderr
                  and "Traceback" not in t.stderr, t.stderr[-300:])
            q = run("-m", "ufno.pack", broken, os.path.join(work, "re.ufnopack"), "--variable",
                    "dP")
            check("ufno.pack names a %s pack once, in one line" % label,
                  q.returncode == 2 and q.stderr.count("broken.ufnopack") == 1
                  and q.stderr.count("\n") == 1, q.stderr[-300:])
        t = run(*train, "--data", grid_pack, "--variable", "dP", "--run", os.path.join(work, "r4"),
                "--init", broken)
        check("an init file that is none is one error line, exit 2",
              t.returncode == 2 and "not a readable model file" in t.stderr
              and "Traceback" not in t.stderr, t.stderr[-300:])
    finally:
        shutil.rmtree(work, ignore_errors=True)



def test_join():
    """ufno.join concatenates data sets, copied or virtual, and refuses what cannot be one set."""
    import subprocess
    from ufno.data import join as ufno_join
    work = tempfile.mkdtemp()
    try:
        def make(name, indices, times=(1.0, 2.0), ny=3):
            path = os.path.join(work, name)
            n = len(indices)
            rng = np.random.default_rng(indices[0])
            with h5py.File(path, "w") as f:
                f["input"] = rng.random((n, 2, ny, len(times), 4), dtype=np.float32)
                f["SG"] = rng.random((n, 2, ny, len(times)), dtype=np.float32)
                f["dP"] = rng.random((n, 2, ny, len(times)), dtype=np.float32)
                f["seed"] = np.full(n, 2)
                f["index"] = np.array(indices)
                f["TIMES"] = np.array(times)
            return path
        a, b = make("a.h5", [0, 1, 2]), make("b.h5", [7, 8])
        for virtual in (False, True):
            out = os.path.join(work, "joined%d.h5" % virtual)
            check("join writes 5 cases (virtual=%s)" % virtual,
                  ufno_join.join([a, b], out, virtual) == 5)
            with h5py.File(out, "r") as o, h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
                for name in ufno_join.PER_CASE:
                    check("%s is A's then B's (virtual=%s)" % (name, virtual),
                          np.array_equal(o[name][()], np.concatenate([fa[name][()], fb[name][()]])))
                check("TIMES kept", np.array_equal(o["TIMES"][()], fa["TIMES"][()]))
        refusals = [
            ([a, make("dup.h5", [2, 3])], "also in"),               # a case twice
            ([a, make("t.h5", [9], times=(1.0, 3.0))], "TIMES"),   # other report times
            ([a, make("g.h5", [10], ny=4)], "shape"),            # another grid
        ]
        nodp = make("nodp.h5", [11])
        with h5py.File(nodp, "a") as f:
            del f["dP"]
        refusals.append(([a, nodp], "dP: missing"))                # a dataset short
        text = os.path.join(work, "text.h5")
        with open(text, "w") as f:
            f.write("not hdf5")
        refusals.append(([a, text], "text.h5"))
        for paths, word in refusals:
            out = os.path.join(work, "bad.h5")
            try:
                ufno_join.join(paths, out)
                check("join refuses %s" % paths[-1], False)
            except ValueError as e:
                check("join refuses %s naming it (%s)" % (os.path.basename(paths[-1]), e),
                      word in str(e) and not os.path.exists(out))
        try:
            ufno_join.join([a, b], a)
            check("join refuses to write over an input", False)
        except ValueError as e:
            check("join refuses to write over an input (%s)" % e, "a.h5" in str(e))
        p = subprocess.run([sys.executable, "-m", "ufno.join", a, text, "--out",
                            os.path.join(work, "cli.h5")], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=PY))
        lines = p.stderr.strip().splitlines()
        check("the command exits 1 with one line naming the file (%r)" % p.stderr,
              p.returncode == 1 and len(lines) == 1 and "text.h5" in lines[0])
    finally:
        shutil.rmtree(work)
