#!/usr/bin/python3
"""Tests of python/ufno/conversion/convert.py (`python3 -m ufno.convert`).

Every conversion runs `python3 -m ufno.convert` in a process in which the package's PyTorch
networks (ufno.models) cannot be imported (their sys.modules entries are None) and the reference
code's classes (ufno.Net3d, ...) do not exist, as for a user who has neither the reference code
nor this repository's PyTorch model. The checkpoints are made here with ufno.models.net3d.
"""

import io
import os
import pickletools
import zipfile

import h5py
import numpy as np
import torch

from cli_checks import assert_failure, converter_command

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)

from ufno.conversion import convert as ufno_convert  # (its VARIABLES: the output transform of each variable)
from ufno.models.net3d import Net3d, init_random_weights, save_as_published_pickle
import forked_run  # (the tests' Python runs, in forks: python/tests/forked_run.py)

GRID = ["16", "24", "8"]  # padded by 8: 24 x 32 x 16

TMP = None


def run_convert(checkpoint, out, *extra, variable="SG", grid=GRID):
    cmd = converter_command([checkpoint, out, "--variable", variable, "--grid", *grid, *extra])
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return forked_run.run(cmd, capture_output=True, text=True, env=env)


def convert_ok(checkpoint, out, *extra, **kw):
    r = run_convert(checkpoint, out, *extra, **kw)
    assert r.returncode == 0, "converter failed (%d): %s" % (r.returncode, r.stderr.strip())
    return r


def tiny_model(seed=1, **kw):
    args = dict(width=4, modes=(2, 3, 2), n_fourier=2, n_ufourier=1, hidden=16)
    args.update(kw)
    torch.manual_seed(seed)
    model = Net3d(**args)
    return init_random_weights(model, torch.Generator().manual_seed(seed)).eval()


def path(*parts):
    p = os.path.join(TMP, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


def save_state_dict(sd, *parts):
    p = path(*parts)
    torch.save(sd, p)
    return p


def attr(f, name):
    v = f.attrs[name]
    return v.decode("ascii") if isinstance(v, bytes) else v


def assert_datasets_equal(h5_path, sd):
    """The file holds exactly the tensors of sd (canonical keys), with the stored dtypes."""
    with h5py.File(h5_path, "r") as f:
        assert sorted(f.keys()) == sorted(sd), "dataset names differ from the state_dict keys"
        for k, t in sd.items():
            d = f[k]
            assert attr(d, "units") == "1", k
            if k.endswith("num_batches_tracked"):
                assert d.dtype == np.int64 and d.shape == (), k
                assert int(d[()]) == int(t), k
            elif t.is_complex():
                assert d.dtype == np.float32 and d.shape == tuple(t.shape) + (2,), k
                assert np.array_equal(d[()], torch.view_as_real(t).numpy()), k
            else:
                assert d.dtype == np.float32 and d.shape == tuple(t.shape), k
                assert np.array_equal(d[()], t.numpy()), k


def pickle_globals(checkpoint):
    """`module name` strings of every global referenced by a zip-format torch pickle."""
    with zipfile.ZipFile(checkpoint) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    names, strings = set(), []
    for op, arg, _ in pickletools.genops(io.BytesIO(data)):
        if op.name == "GLOBAL":
            names.add(arg)
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            names.add(" ".join(strings[-2:]))
    return names




# ---------------------------------------------------------------------------------------------

def test_round_trip_state_dict_and_pickle():
    """(a) state_dict and published-style whole pickles convert to byte-identical files."""
    model = tiny_model()
    sd = model.state_dict()
    # The same basename everywhere, since the file records it as `source`.
    ckpts = {"state_dict": save_state_dict(sd, "a_sd", "tiny.pt"),
             "pickled": path("a_pk", "tiny.pt"),
             "pickled_legacy": path("a_lg", "tiny.pt")}
    save_as_published_pickle(model, ckpts["pickled"])
    save_as_published_pickle(model, ckpts["pickled_legacy"],
                             _use_new_zipfile_serialization=False)
    globs = pickle_globals(ckpts["pickled"])
    for cls in ("Net3d", "SimpleBlock3d", "SpectralConv3d", "U_net"):
        assert "ufno " + cls in globs, "pickle does not refer to ufno.%s: %s" % (cls, globs)
    assert not any(g.startswith("ufno.") for g in globs), globs

    files = {}
    for kind, ck in ckpts.items():
        out = os.path.join(os.path.dirname(ck), "tiny.h5")
        convert_ok(ck, out)
        with open(out, "rb") as f:
            files[kind] = f.read()
    again = path("a_sd", "again", "tiny.h5")
    convert_ok(ckpts["state_dict"], again)
    with open(again, "rb") as f:
        files["again"] = f.read()
    for kind, data in files.items():
        assert data == files["state_dict"], "%s conversion is not byte-identical" % kind
    assert_datasets_equal(os.path.join(TMP, "a_sd", "tiny.h5"), sd)


def test_output_layer0_accepted():
    """(b) the old key name output_layer0 is read as output_layer."""
    sd = tiny_model(seed=2).state_dict()
    old = {k.replace(".output_layer.", ".output_layer0."): v for k, v in sd.items()}
    assert any(".output_layer0." in k for k in old)
    out = path("b", "m.h5")
    convert_ok(save_state_dict(old, "b", "old.pt"), out)
    assert_datasets_equal(out, sd)


def test_fno_flag_drops_unets():
    """(c) --fno drops the U-Nets (saying so on stderr) and writes an FNO."""
    sd = tiny_model(seed=3).state_dict()
    out = path("c", "m.h5")
    r = convert_ok(save_state_dict(sd, "c", "u.pt"), out, "--fno")
    assert "--fno" in r.stderr and "unet" not in r.stdout, r.stderr
    assert "U-Nets of layers 2" in r.stderr, r.stderr
    with h5py.File(out, "r") as f:
        assert attr(f, "architecture") == "FNO"
        assert (f.attrs["n_fourier"], f.attrs["n_ufourier"]) == (3, 0)
    assert_datasets_equal(out, {k: v for k, v in sd.items() if ".unet" not in k})


def test_errors_leave_no_file():
    """(d) unreadable or inconsistent checkpoints: exit 1, one line naming file and key."""
    sd = tiny_model(seed=4).state_dict()
    good = save_state_dict(sd, "d", "good.pt")
    with open(good, "rb") as f:
        data = f.read()
    out = path("d", "out", "m.h5")

    trunc = path("d", "trunc.pt")
    with open(trunc, "wb") as f:
        f.write(data[: len(data) // 2])
    assert_failure(run_convert(trunc, out), "trunc.pt", out)

    garbage = path("d", "garbage.pt")
    with open(garbage, "wb") as f:
        f.write(np.random.default_rng(0).bytes(4096))
    assert_failure(run_convert(garbage, out), "garbage.pt", out)

    assert_failure(run_convert(path("d", "missing.pt"), out), "missing.pt", out)

    def broken(name, key, tensor):
        bad = dict(sd)
        bad[key] = tensor
        return save_state_dict(bad, "d", name)

    cases = [
        (broken("w.pt", "conv1.w1.weight", torch.zeros(4, 5, 1)), "conv1.w1.weight"),
        (broken("modes.pt", "conv1.conv1.weights3", torch.zeros(4, 4, 2, 2, 2, dtype=torch.cfloat)),
         "conv1.conv1.weights3"),
        (broken("bn.pt", "conv1.unet2.conv3.1.running_var", torch.ones(5)),
         "conv1.unet2.conv3.1.running_var"),
        (broken("dtype.pt", "conv1.conv0.weights2", torch.zeros(4, 4, 2, 3, 2)),
         "conv1.conv0.weights2"),
        (broken("nan.pt", "conv1.fc1.bias", torch.full((16,), float("nan"))), "conv1.fc1.bias"),
    ]
    missing = dict(sd)
    del missing["conv1.unet2.deconv1.0.bias"]
    cases.append((save_state_dict(missing, "d", "gone.pt"), "conv1.unet2.deconv1.0.bias"))
    for ck, key in cases:
        assert_failure(run_convert(ck, out), os.path.basename(ck), out, key)

    # Grid checks: U-Net needs the padded grid divisible by 8; modes must fit the padded grid.
    assert_failure(run_convert(good, out, grid=["16", "24", "7"]), "good.pt", out,
                   "conv1.unet2")
    assert_failure(run_convert(good, out, "--padding", "0", grid=["8", "4", "8"]), "good.pt",
                   out, "conv1.conv0.weights1")
    # A failed conversion must not have touched an earlier, good output either.
    convert_ok(good, out)
    before = open(out, "rb").read()
    run_convert(trunc, out)
    assert open(out, "rb").read() == before


def test_inferred_attributes():
    """(e) width, modes, layer counts, channels and the fixed attributes are right."""
    sd = tiny_model(seed=5, width=6, modes=(3, 4, 2), n_fourier=2, n_ufourier=2,
                    hidden=20).state_dict()
    out = path("e", "u.h5")
    convert_ok(save_state_dict(sd, "e", "u.pt"), out, "--padding", "8", variable="dP")
    with h5py.File(out, "r") as f:
        a = f.attrs
        assert attr(f, "format") == "ufno-model" and a["format_version"] == 1
        assert a["format_version"].dtype == np.int32 and a["modes"].dtype == np.int32
        assert attr(f, "architecture") == "UFNO" and attr(f, "variable") == "dP"
        assert a["width"] == 6 and list(a["modes"]) == [3, 4, 2]
        assert (a["n_fourier"], a["n_ufourier"]) == (2, 2)
        assert (a["in_channels"], a["hidden"]) == (12, 20)
        assert list(a["padding"]) == [8, 8, 8] and list(a["grid"]) == [16, 24, 8]
        assert (a["output_scale"], a["output_offset"], attr(f, "output_units")) == \
            ufno_convert.VARIABLES["dP"]
        assert a["leaky_relu_slope"] == 0.1 and a["batchnorm_eps"] == 1e-5
        assert attr(f, "batchnorm_mode") == "eval" and attr(f, "source") == "u.pt"

    # A plain FNO with another channel count; SG has the identity output transform.
    sd = tiny_model(seed=6, n_fourier=4, n_ufourier=0, in_channels=11).state_dict()
    out = path("e", "f.h5")
    convert_ok(save_state_dict(sd, "e", "f.pt"), out, grid=["10", "9", "5"], variable="SG")
    with h5py.File(out, "r") as f:
        a = f.attrs
        assert attr(f, "architecture") == "FNO" and attr(f, "output_units") == "1"
        assert (a["n_fourier"], a["n_ufourier"], a["in_channels"]) == (4, 0, 11)
        assert (a["output_scale"], a["output_offset"]) == (1.0, 0.0)
        assert list(a["grid"]) == [10, 9, 5]


def test_prefix_variants():
    """`module.`-prefixed (DataParallel) and bare SimpleBlock3d state_dicts convert alike."""
    model = tiny_model(seed=7)
    sd = model.state_dict()
    out = path("f", "m.h5")
    convert_ok(save_state_dict({"module." + k: v for k, v in sd.items()}, "f", "dp.pt"), out)
    assert_datasets_equal(out, sd)
    out2 = path("f", "bare.h5")
    convert_ok(save_state_dict(model.conv1.state_dict(), "f", "bare.pt"), out2)
    assert_datasets_equal(out2, sd)


def test_layer_order_checked():
    """U-Fourier layers in front of plain ones are rejected, naming the U-Net."""
    sd = tiny_model(seed=8).state_dict()  # layers 0, 1 plain, 2 with unet
    moved = {k.replace("conv1.unet2.", "conv1.unet0."): v for k, v in sd.items()}
    out = path("g", "m.h5")
    assert_failure(run_convert(save_state_dict(moved, "g", "order.pt"), out), "order.pt", out,
                   "conv1.unet0")

