#!/usr/bin/python3
"""Tests of the 4-D FNO (nested FNO's FNO4d): python/ufno/models/fno4d.py, its conversion by
python/ufno/conversion/convert.py, the FNO4D model file (docs/model-format.md) and the fixtures
tests/data/fno4d_*.h5 and spectral4d_small.h5.

Conversions run `python3 -m ufno.convert` in a process in which `FNO4D`,
`UnitGaussianNormalizer` and the package's networks (ufno.models) cannot be imported, as for a
user who has neither the authors' code nor this repository's PyTorch models.
"""

import io
import itertools
import math
import os
import pickle
import pickletools
import sys
import zipfile

import h5py
import numpy as np
import torch

from cli_checks import assert_failure, converter_command

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
DATA = os.path.join(os.path.dirname(PYDIR), "tests", "data")

from ufno.models import fno4d as f4
from ufno.conversion import fixtures as make_fixtures
from ufno.conversion import model_file as ufno_model_file
import forked_run  # (the tests' Python runs, in forks: python/tests/forked_run.py)

GRID = (3, 4, 2, 3)             # small; padded by (8, 16, 16, 8): 19 x 36 x 34 x 19
GRID_ARGS = [str(g) for g in GRID]
TMP = None


# ---------------------------------------------------------------------------------------------
# Helpers

def run_convert(checkpoint, out, *extra, variable="SG", grid=GRID_ARGS):
    cmd = converter_command([checkpoint, out, "--variable", variable],
                            hidden=("FNO4D", "UnitGaussianNormalizer"))
    if grid is not None:
        cmd += ["--grid", *grid]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return forked_run.run(cmd + list(extra), capture_output=True, text=True, env=env)


def convert_ok(checkpoint, out, *extra, **kw):
    r = run_convert(checkpoint, out, *extra, **kw)
    assert r.returncode == 0, "converter failed (%d): %s" % (r.returncode, r.stderr.strip())
    return r




def path(*parts):
    p = os.path.join(TMP, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


def tiny_model(seed=1, width=3, modes=(1, 2, 1, 2), in_channels=4):
    torch.manual_seed(seed)
    m = f4.FNO4d(width=width, modes=modes, in_channels=in_channels)
    return f4.init_random_weights(m, torch.Generator().manual_seed(seed)).eval()


def read_bytes(p):
    with open(p, "rb") as f:
        return f.read()


def attr(f, name):
    v = f.attrs[name]
    return v.decode("ascii") if isinstance(v, bytes) else v


def pickle_globals(checkpoint):
    """`module name` of every global a pickle refers to (zip torch file or plain pickle)."""
    if zipfile.is_zipfile(checkpoint):
        with zipfile.ZipFile(checkpoint) as z:
            data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    else:
        data = read_bytes(checkpoint)
    names, strings, memo = set(), [], {}
    for op, arg, _ in pickletools.genops(io.BytesIO(data)):
        if op.name == "GLOBAL":
            names.add(arg)
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "MEMOIZE":
            memo[len(memo)] = strings[-1] if strings else None
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = strings[-1] if strings else None
        elif op.name in ("BINGET", "LONG_BINGET", "GET") and isinstance(memo.get(arg), str):
            strings.append(memo[arg])  # a repeated string is a memo reference
        elif op.name == "STACK_GLOBAL":
            names.add(" ".join(strings[-2:]))
    return names


def assert_weights_equal(h5_path, sd):
    """The file holds every tensor of sd under its key: float32, complex as a trailing (re, im)."""
    with h5py.File(h5_path, "r") as f:
        weights = sorted(k for k in f.keys() if "_normalizer." not in k)
        assert weights == sorted(sd), "datasets differ from the state_dict keys"
        for k, t in sd.items():
            d = f[k]
            assert d.dtype == np.float32 and attr(d, "units") == "1", k
            want = torch.view_as_real(t).numpy() if t.is_complex() else t.numpy()
            assert d.shape == want.shape and np.array_equal(d[()], want), k


# ---------------------------------------------------------------------------------------------
# The spectral convolution against a direct DFT sum

# weights1..8 act on these (A1, A2, A3) corners, L = the first m bins, H = the last m bins
# (nested-fno-reference.md); written out here independently of fno4d_torch.CORNERS.
REFERENCE_CORNERS = [tuple({"L": "low", "H": "high"}[c] for c in corner)
                     for corner in ("LLL", "HLL", "LHL", "LLH", "HHL", "HLH", "LHH", "HHH")]


def naive_spectral_conv4d(x, weights, modes):
    """Direct-sum reference of SpectralConv4d in float64 numpy.

    x (B, I, n1, n2, n3, n4); weights: 8 complex (I, O, m1, m2, m3, m4). Forward: the full 4-D
    DFT sum at the kept T bins. Each kept mode takes the weights of the LAST corner (in the order
    weights1..8) that contains it. Inverse: complex inverse DFT sums over A1..A3, then the real
    inverse over T from the half spectrum, using only the real part of the T = 0 bin and, for n4
    even, of the Nyquist bin (the c2r convention)."""
    b, _, n1, n2, n3, n4 = x.shape
    m1, m2, m3, m4 = modes
    ns, ms = (n1, n2, n3), (m1, m2, m3)
    o = weights[0].shape[1]

    def dft(n, k_count, sign):
        k = np.arange(k_count)[:, None]
        return np.exp(sign * 2j * np.pi * k * np.arange(n)[None, :] / n)

    # X[b, i, k1, k2, k3, k4] = sum_n x[n] exp(-2 pi i sum_a k_a n_a / n_a), k4 < m4
    X = np.einsum("ae,bf,cg,dh,ziefgh->ziabcd", dft(n1, n1, -1), dft(n2, n2, -1),
                  dft(n3, n3, -1), dft(n4, m4, -1), x)
    Y = np.zeros((b, o, n1, n2, n3, m4), dtype=complex)
    for k in itertools.product(range(n1), range(n2), range(n3)):
        chosen = None
        for c, sides in enumerate(REFERENCE_CORNERS):
            idx = []
            for ka, n, m, side in zip(k, ns, ms, sides):
                j = ka if side == "low" else ka - (n - m)
                if not 0 <= j < m:
                    break
                idx.append(j)
            else:
                chosen = (c, tuple(idx))
        if chosen is None:
            continue
        c, (j1, j2, j3) = chosen
        for k4 in range(m4):
            Y[:, :, k[0], k[1], k[2], k4] = X[:, :, k[0], k[1], k[2], k4] @ \
                weights[c][:, :, j1, j2, j3, k4]
    Z = np.einsum("ea,fb,gc,zoabcd->zoefgd", dft(n1, n1, 1), dft(n2, n2, 1), dft(n3, n3, 1),
                  Y) / (n1 * n2 * n3)
    y = np.zeros((b, o, n1, n2, n3, n4))
    t = np.arange(n4)
    for k4 in range(m4):
        phase = np.exp(2j * np.pi * k4 * t / n4)
        if k4 == 0 or 2 * k4 == n4:        # DC, Nyquist: real part only, counted once
            y += Z[..., k4:k4 + 1].real * phase.real
        else:                              # its Hermitian mirror n4 - k4 is implied
            y += 2 * (Z[..., k4:k4 + 1] * phase).real
    return y / n4


def test_spectral_conv_vs_naive_dft():
    """SpectralConv4d (float64) equals the direct DFT sum: corner order, overlapping corners
    (later ones win), even and odd T with the Nyquist bin kept."""
    cases = [((3, 5, 4, 6), (2, 2, 2, 4)),   # A1 corners overlap (2 m > n), T Nyquist kept
             ((4, 3, 3, 5), (1, 2, 2, 3)),   # A2, A3 corners overlap, odd T, all T bins kept
             ((6, 4, 5, 4), (3, 2, 1, 2))]   # no overlap; high corners adjacent to low ones
    gen = torch.Generator().manual_seed(11)
    for grid, modes in cases:
        torch.manual_seed(0)
        layer = f4.SpectralConv4d(2, 3, modes)
        f4.init_random_weights(layer, gen, spectral_gains=(1.0,))
        layer = f4.to_float64(layer)
        x = torch.randn((2, 2) + grid, generator=gen, dtype=torch.float64)
        with torch.no_grad():
            got = layer(x).numpy()
        ws = [getattr(layer, "weights%d" % k).detach().numpy() for k in range(1, 9)]
        want = naive_spectral_conv4d(x.numpy(), ws, modes)
        err = np.abs(got - want).max() / np.abs(want).max()
        assert err < 1e-12, "grid %s modes %s: relative error %.2e" % (grid, modes, err)
        # Every corner matters (none is wholly overwritten by later ones): changing one
        # changes the result.
        for k in range(1, 9):
            w = [a.copy() for a in ws]
            w[k - 1] += 1.0
            diff = np.abs(naive_spectral_conv4d(x.numpy(), w, modes) - want).max()
            assert diff > 1e-3 * np.abs(want).max(), "weights%d has no effect (%s)" % (k, grid)


def test_spectral4d_fixture():
    """tests/data/spectral4d_small.h5 is the layer's float64 output for its stored weights."""
    with h5py.File(os.path.join(DATA, "spectral4d_small.h5"), "r") as f:
        x = f["input"][()].astype(np.float64)
        out = f["output"][()]
        modes = tuple(int(m) for m in f.attrs["modes"])
        ws = [f["weights%d" % k][()].astype(np.float64) for k in range(1, 9)]
    ws = [w[..., 0] + 1j * w[..., 1] for w in ws]
    want = naive_spectral_conv4d(x, ws, modes)
    err = np.abs(out - want).max() / np.abs(want).max()
    assert err < 1e-6, "relative error %.2e" % err


# ---------------------------------------------------------------------------------------------
# The network

def test_model_float32_vs_float64_and_fixtures():
    """The fixture model files read back (ufno_model_file) reproduce /output: float64 to float32
    rounding, float32 PyTorch to about 1e-6 relative; normalisers included."""
    for stem in ("fno4d_small", "fno4d_norm_small"):
        with h5py.File(os.path.join(DATA, stem + "_io.h5"), "r") as f:
            x, out, raw = f["input"][()], f["output"][()], f["output_raw"][()]
        assert x.shape == (2, 5, 6, 7, 4, 3) and out.shape == (2, 5, 6, 7, 4), stem
        scale = np.abs(out).max()
        for dtype, tol in ((torch.float64, 1e-6), (torch.float32, 1e-4)):
            model, attrs = ufno_model_file.read_model_file(os.path.join(DATA, stem + ".h5"),
                                                           dtype=dtype)
            got = ufno_model_file.predict(model, attrs, x)
            err = np.abs(got - out).max() / scale
            assert err < tol, "%s %s: relative error %.2e" % (stem, dtype, err)
        has_norm = stem == "fno4d_norm_small"
        assert (model.input_normalizer is not None) == has_norm, stem
        assert has_norm or np.array_equal(raw, out), stem
        assert np.abs(out).std() > 0.1 * scale, "%s: output nearly constant" % stem


def numpy_fno4d(sd, x, padding):
    """FNO4d forward written out in float64 numpy from the reference's description, with the
    spectral layers as direct DFT sums: fc0, zero padding on both sides, 4 x (spectral + w_k,
    exact GELU after the first 3), crop, fc1, exact GELU, fc2."""
    a = {k: (v.numpy().astype(np.complex128) if v.is_complex() else v.numpy().astype(np.float64))
         for k, v in sd.items()}
    erf = np.vectorize(math.erf)

    def gelu(v):
        return v * 0.5 * (1.0 + erf(v / math.sqrt(2.0)))

    h = x @ a["fc0.weight"].T + a["fc0.bias"]                # (B, A1, A2, A3, T, W)
    h = np.moveaxis(h, -1, 1)                                 # (B, W, A1, A2, A3, T)
    h = np.pad(h, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    modes = a["conv.conv0.weights1"].shape[2:]
    for k in range(4):
        ws = [a["conv.conv%d.weights%d" % (k, j)] for j in range(1, 9)]
        spectral = naive_spectral_conv4d(h, ws, modes)
        pointwise = np.einsum("oi,bi...->bo...", a["conv.w%d.weight" % k][:, :, 0], h)
        h = spectral + pointwise + a["conv.w%d.bias" % k][None, :, None, None, None, None]
        if k < 3:
            h = gelu(h)
    h = h[(slice(None), slice(None)) + tuple(slice(p, n - p) for p, n in zip(padding, h.shape[2:]))]
    h = np.moveaxis(h, 1, -1)
    h = gelu(h @ a["conv.fc1.weight"].T + a["conv.fc1.bias"])
    return (h @ a["conv.fc2.weight"].T + a["conv.fc2.bias"])[..., 0]


def test_network_vs_numpy_reference():
    """FNO4d in float64 equals an independent numpy forward (direct DFT sums) on a tiny grid with
    a different padding per axis; float32 agrees to about 1e-6."""
    padding = (2, 1, 3, 1)
    torch.manual_seed(0)
    model = f4.FNO4d(width=3, modes=(2, 1, 2, 2), in_channels=2, padding=padding)
    gen = torch.Generator().manual_seed(12)
    f4.init_random_weights(model, gen, spectral_gains=(3.0, 1.5, 1.5, 1.5))
    x = torch.rand((2, 3, 4, 2, 3, 2), generator=gen)
    want = numpy_fno4d(model.state_dict(), x.numpy().astype(np.float64), padding)
    m64 = f4.to_float64(f4.FNO4d(width=3, modes=(2, 1, 2, 2), in_channels=2, padding=padding))
    m64.load_state_dict(model.state_dict())
    with torch.no_grad():
        got64 = m64(x.double()).numpy()
        got32 = model(x).numpy()
    assert got64.shape == (2, 3, 4, 2, 3), got64.shape
    scale = np.abs(want).max()
    assert np.abs(want).std() > 0.05 * scale, "reference output nearly constant"
    err64 = np.abs(got64 - want).max() / scale
    err32 = np.abs(got32 - want).max() / scale
    assert err64 < 1e-12 and err32 < 1e-5, "float64 %.2e, float32 %.2e" % (err64, err32)


def test_paths_contribute():
    """With init_random_weights, every Fourier layer's spectral and pointwise paths both
    contribute O(1) on the fixture grid (so a golden output catches a mistake in either)."""
    gen = torch.Generator().manual_seed(make_fixtures.SEED + 5)
    torch.manual_seed(make_fixtures.SEED + 5)
    model = f4.FNO4d(width=make_fixtures.WIDTH4, modes=make_fixtures.MODES4,
                     in_channels=make_fixtures.IN_CHANNELS4)
    f4.init_random_weights(model, gen)
    x = torch.rand((1,) + make_fixtures.GRID4 + (make_fixtures.IN_CHANNELS4,), generator=gen)
    stats = []
    hooks = []
    for k in range(f4.N_LAYERS):
        for kind in ("conv", "w"):
            mod = getattr(model.conv, "%s%d" % (kind, k))
            hooks.append(mod.register_forward_hook(
                lambda m, i, o, kind=kind, k=k: stats.append((k, kind, float(o.std())))))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    by = {(k, kind): s for k, kind, s in stats}
    for k in range(f4.N_LAYERS):
        s, p = by[(k, "conv")], by[(k, "w")]
        assert 0.1 < s < 10 and 0.1 < p < 10 and 0.2 < s / p < 5, \
            "layer %d: spectral std %.3f, pointwise std %.3f" % (k, s, p)


def test_fixtures_up_to_date():
    """make_fixtures reproduces the committed FNO4d fixtures byte for byte."""
    out = os.path.join(TMP, "fixtures")
    os.makedirs(out)
    make_fixtures.make_fno4d_fixture(out, "fno4d_small", "SG", make_fixtures.SEED + 5, False)
    make_fixtures.make_fno4d_fixture(out, "fno4d_norm_small", "dP", make_fixtures.SEED + 6, True)
    make_fixtures.make_spectral4d_fixture(out, make_fixtures.SEED + 7)
    for n in sorted(os.listdir(out)):
        assert read_bytes(os.path.join(out, n)) == read_bytes(os.path.join(DATA, n)), \
            "tests/data/%s is stale: run python/ufno/conversion/fixtures.py" % n
        assert os.path.getsize(os.path.join(DATA, n)) < 1 << 20, n


# ---------------------------------------------------------------------------------------------
# The converter

def test_round_trip_state_dict_and_pickle():
    """State_dicts (plain and `module.`-prefixed) and whole pickled FNO4D.FNO4d modules (zip and
    legacy) convert to byte-identical files holding exactly the state_dict."""
    model = tiny_model()
    sd = model.state_dict()
    ckpts = {"state_dict": path("a_sd", "m.pt"), "module": path("a_dp", "m.pt"),
             "pickled": path("a_pk", "m.pt"), "legacy": path("a_lg", "m.pt")}
    torch.save(sd, ckpts["state_dict"])
    torch.save({"module." + k: v for k, v in sd.items()}, ckpts["module"])
    f4.save_as_published_pickle(model, ckpts["pickled"])
    f4.save_as_published_pickle(model, ckpts["legacy"], _use_new_zipfile_serialization=False)
    globs = pickle_globals(ckpts["pickled"])
    for cls in ("FNO4d", "Block4d", "SpectralConv4d"):
        assert "FNO4D " + cls in globs, "pickle does not refer to FNO4D.%s: %s" % (cls, globs)
    assert not any(g.startswith("ufno.") for g in globs), globs
    files = {}
    for kind, ck in ckpts.items():
        out = os.path.join(os.path.dirname(ck), "m.h5")
        r = convert_ok(ck, out)
        assert "FNO4D width 3 modes 1x2x1x2 in_channels 4 hidden 12" in r.stdout, r.stdout
        files[kind] = read_bytes(out)
    for kind, data in files.items():
        assert data == files["state_dict"], "%s conversion is not byte-identical" % kind
    assert_weights_equal(path("a_sd", "m.h5"), sd)


def test_attributes():
    """The FNO4D attributes: names, types and values."""
    sd = tiny_model(seed=2, width=4, modes=(2, 1, 1, 2), in_channels=5).state_dict()
    ck = path("b", "m.pt")
    torch.save(sd, ck)
    out = path("b", "m.h5")
    convert_ok(ck, out, variable="dP")
    with h5py.File(out, "r") as f:
        a = f.attrs
        assert attr(f, "format") == "ufno-model" and a["format_version"] == 1
        assert attr(f, "architecture") == "FNO4D" and attr(f, "variable") == "dP"
        for k in ("format_version", "width", "in_channels", "hidden", "n_layers"):
            assert a[k].dtype == np.int32 and a[k].shape == (), k
        for k in ("modes", "padding", "grid"):
            assert a[k].dtype == np.int32 and a[k].shape == (4,), k
        assert a["width"] == 4 and list(a["modes"]) == [2, 1, 1, 2]
        assert list(a["padding"]) == [8, 16, 16, 8] and list(a["grid"]) == list(GRID)
        assert (a["in_channels"], a["hidden"], a["n_layers"]) == (5, 16, 4)
        assert attr(f, "output_units") == "bar" and attr(f, "source") == "m.pt"
        assert a["normalizer_eps"].dtype == np.float64 and a["normalizer_eps"] == 1e-5
        assert not any(k.startswith(("n_fourier", "output_scale", "batchnorm")) for k in a)
        assert not any("normalizer" in k for k in f.keys())
    # --padding overrides the reference's; the limits then follow the new padded grid.
    out2 = path("b", "p.h5")
    convert_ok(ck, out2, "--padding", "2", "0", "1", "3", variable="SG")
    with h5py.File(out2, "r") as f:
        assert list(f.attrs["padding"]) == [2, 0, 1, 3] and attr(f, "output_units") == "1"


def test_level():
    """--level writes the nested chain's level as the string attribute `level`; without it there
    is none; an unknown level is one line, exit 2, no file; a U-FNO/FNO refuses it (exit 1)."""
    sd = tiny_model(seed=5).state_dict()
    ck = path("lv", "m.pt")
    torch.save(sd, ck)
    plain = path("lv", "plain.h5")
    convert_ok(ck, plain)
    with h5py.File(plain, "r") as f:
        assert "level" not in f.attrs
    for level in ("GLOBAL", "LGR1", "LGR2", "LGR3", "LGR4"):
        out = path("lv", level + ".h5")
        r = convert_ok(ck, out, "--level", level, variable="dP")
        assert r.stdout.rstrip().endswith("level " + level), r.stdout
        with h5py.File(out, "r") as f:
            a = f.attrs["level"]
            assert isinstance(a, bytes) and a.decode("ascii") == level, a
            assert attr(f, "variable") == "dP"
            assert sorted(f.keys()) == sorted(h5py.File(plain, "r").keys())
    for bad in ("LGR5", "lgr1", "", "GLOBAL "):
        out = path("lv", "bad.h5")
        r = run_convert(ck, out, "--level", bad)
        lines = r.stderr.strip("\n").split("\n")
        assert r.returncode == 2, (bad, r.returncode, r.stderr)
        assert len(lines) == 1 and lines[0].startswith("ufno_convert: m.pt: unknown --level"), \
            r.stderr
        assert not os.path.exists(out) and not os.path.exists(out + ".tmp"), bad
    # A U-FNO/FNO has no level.
    from ufno.models.net3d import Net3d
    torch.manual_seed(5)
    net = Net3d(width=4, modes=(2, 2, 2), n_fourier=1, n_ufourier=0, hidden=8)
    ck3 = path("lv", "u.pt")
    torch.save(net.state_dict(), ck3)
    out = path("lv", "u.h5")
    r = run_convert(ck3, out, "--level", "GLOBAL", grid=["8", "8", "4"])
    assert_failure(r, "u.pt", out, contains="--level applies to an FNO4D")


def test_normalizer_pickles():
    """UnitGaussianNormalizer pickles (torch.save zip and legacy, plain pickle; mean/std of the
    grid's shape, also with a leading or trailing axis of size 1) are stored as (A1, A2, A3, T)."""
    sd = tiny_model(seed=3).state_dict()
    ck = path("c", "m.pt")
    torch.save(sd, ck)
    gen = torch.Generator().manual_seed(3)
    n_in = f4.random_normalizer(GRID, gen)
    n_out = f4.random_normalizer(GRID, gen, mean_scale=5.0)
    p_in, p_out = path("c", "in.pickle"), path("c", "out.pickle")
    f4.save_normalizer_pickle(n_in, p_in)
    f4.save_normalizer_pickle(n_out, p_out, use_torch_save=False)
    for p in (p_in, p_out):
        globs = pickle_globals(p)
        assert "UnitGaussianNormalizer UnitGaussianNormalizer" in globs, globs
    reference = path("c", "ref", "m.h5")
    convert_ok(ck, reference, "--input-normalizer", p_in, "--output-normalizer", p_out,
               variable="dP")
    with h5py.File(reference, "r") as f:
        for label, n in (("input_normalizer", n_in), ("output_normalizer", n_out)):
            for field in ("mean", "std"):
                d = f[label + "." + field]
                assert d.dtype == np.float32 and d.shape == GRID, label
                assert np.array_equal(d[()], getattr(n, field).numpy()), label
        assert attr(f["input_normalizer.mean"], "units") == "1"
        assert attr(f["output_normalizer.std"], "units") == "bar"
        assert f.attrs["normalizer_eps"] == 1e-5
    assert_weights_equal(reference, sd)

    variants = {
        "legacy": lambda n, p: torch.save(n, p, _use_new_zipfile_serialization=False),
        "plain": lambda n, p: f4.save_normalizer_pickle(n, p, use_torch_save=False),
        "leading1": lambda n, p: f4.save_normalizer_pickle(
            f4.UnitGaussianNormalizer(n.mean[None], n.std[None]), p),
        "trailing1": lambda n, p: f4.save_normalizer_pickle(
            f4.UnitGaussianNormalizer(n.mean[..., None], n.std[..., None]), p),
    }
    for kind, save in variants.items():
        pi = path("c", kind, "in.pickle")
        if kind == "legacy":
            with f4._ClassesInModule("UnitGaussianNormalizer", (f4.UnitGaussianNormalizer,)):
                save(n_in, pi)
        else:
            save(n_in, pi)
        out = path("c", kind, "m.h5")
        convert_ok(ck, out, "--input-normalizer", pi, "--output-normalizer", p_out,
                   variable="dP")
        assert read_bytes(out) == read_bytes(reference), "%s normaliser converts differently" % kind

    # Only an output normaliser.
    out = path("c", "only_out", "m.h5")
    convert_ok(ck, out, "--output-normalizer", p_out)
    with h5py.File(out, "r") as f:
        assert sorted(k for k in f.keys() if "normalizer" in k) == \
            ["output_normalizer.mean", "output_normalizer.std"]


def test_time_normalizer_pickles():
    """TimeGaussianNormalizer pickles as the published ones are (plain pickle of
    __main__.TimeGaussianNormalizer, mean and std of shape (1, T, 1, 1, 1, 1), no eps; also
    torch.save of UnitGaussianNormalizer.TimeGaussianNormalizer) convert unchanged: stored as
    (T,) with <label>_kind = "time", in either axis order (T the grid's time extent); a
    pointwise normaliser beside one is kept pointwise. The file read back encodes and decodes as
    the objects do on the reference's (B, T, X, Y, Z, C) layout; a wrong T, a zero std or a
    pointwise normaliser of the wrong shape are refused."""
    T = GRID[0]                                  # TXYZ: GRID read as (T, X, Y, Z)
    model = tiny_model(seed=11)
    ck = path("t", "m.pt")
    f4.save_as_published_pickle(model, ck)
    gen = torch.Generator().manual_seed(11)

    def time_norm(n, mean=0.0):
        return f4.TimeGaussianNormalizer(mean + torch.randn((1, n, 1, 1, 1, 1), generator=gen),
                                         0.5 + torch.rand((1, n, 1, 1, 1, 1), generator=gen))

    n_in, n_out = time_norm(T), time_norm(T, mean=4.0)
    p_in, p_out = path("t", "in.pickle"), path("t", "out.pickle")
    f4.save_normalizer_pickle(n_in, p_in, use_torch_save=False, module="__main__")
    f4.save_normalizer_pickle(n_out, p_out)
    assert "__main__ TimeGaussianNormalizer" in pickle_globals(p_in)
    assert "UnitGaussianNormalizer TimeGaussianNormalizer" in pickle_globals(p_out)
    out = path("t", "ref", "m.h5")
    r = convert_ok(ck, out, "--axis-order", "TXYZ", "--input-normalizer", p_in,
                   "--output-normalizer", p_out, variable="dP")
    assert "normalisers input+output" in r.stdout
    with h5py.File(out, "r") as f:
        assert attr(f, "axis_order") == "TXYZ" and tuple(f.attrs["grid"]) == GRID
        for label, n in (("input_normalizer", n_in), ("output_normalizer", n_out)):
            assert attr(f, label + "_kind") == "time"
            for field in ("mean", "std"):
                d = f[label + "." + field]
                assert d.dtype == np.float32 and d.shape == (T,), label
                assert np.array_equal(d[()], getattr(n, field).reshape(-1).numpy()), label
    m, _ = ufno_model_file.read_model_file(out, dtype=torch.float64)
    x = torch.randn((2,) + GRID + (4,), generator=gen, dtype=torch.float64)
    want = x.clone()
    want[..., -1:] = n_in.encode(want[..., -1:])             # (B, T, X, Y, Z, 1) broadcast
    net = f4.to_float64(tiny_model(seed=11))
    want = n_out.decode(net(want)[..., None])[..., 0]
    with torch.no_grad():
        got = m(x)
    assert torch.allclose(got, want, rtol=1e-10, atol=1e-10)

    # XYZT: T is the last axis; a pointwise output normaliser beside a per-time input one.
    n_in4 = time_norm(GRID[3])
    p_in4 = path("t", "in4.pickle")
    f4.save_normalizer_pickle(n_in4, p_in4, use_torch_save=False, module="__main__")
    n_pw = f4.random_normalizer(GRID, gen)
    p_pw = path("t", "pw.pickle")
    f4.save_normalizer_pickle(n_pw, p_pw)
    out4 = path("t", "xyzt", "m.h5")
    convert_ok(ck, out4, "--input-normalizer", p_in4, "--output-normalizer", p_pw,
               variable="dP")
    with h5py.File(out4, "r") as f:
        assert "axis_order" not in f.attrs                 # not given: XYZT, not written
        assert attr(f, "input_normalizer_kind") == "time"
        assert "output_normalizer_kind" not in f.attrs
        assert f["input_normalizer.mean"].shape == (GRID[3],)
        assert f["output_normalizer.mean"].shape == GRID
    m4, _ = ufno_model_file.read_model_file(out4, dtype=torch.float64)
    want = x.clone()
    want[..., -1] = (want[..., -1] - n_in4.mean.reshape(-1).double()) / \
        n_in4.std.reshape(-1).double()
    want = net(want) * (n_pw.std.double() + 1e-5) + n_pw.mean.double()
    with torch.no_grad():
        assert torch.allclose(m4(x), want, rtol=1e-10, atol=1e-10)

    bad = path("t", "bad", "m.h5")
    wrong_t = path("t", "wrong_t.pickle")
    f4.save_normalizer_pickle(time_norm(T + 1), wrong_t, use_torch_save=False, module="__main__")
    assert_failure(run_convert(ck, bad, "--axis-order", "TXYZ", "--input-normalizer", wrong_t),
                   "wrong_t.pickle", bad, contains="expected one value per report time (%d" % T)
    zero = time_norm(T)
    zero.std[0, 1] = 0.0
    p_zero = path("t", "zero.pickle")
    f4.save_normalizer_pickle(zero, p_zero, use_torch_save=False, module="__main__")
    assert_failure(run_convert(ck, bad, "--axis-order", "TXYZ", "--output-normalizer", p_zero),
                   "zero.pickle", bad, contains="std is not positive")
    n_other = f4.random_normalizer((GRID[1], GRID[2], GRID[3], GRID[0]), gen)
    p_other = path("t", "other.pickle")
    f4.save_normalizer_pickle(n_other, p_other)
    assert_failure(run_convert(ck, bad, "--axis-order", "TXYZ", "--output-normalizer", p_other),
                   "other.pickle", bad, contains="expected the grid (T, X, Y, Z)")


def test_errors_leave_no_file():
    """Bad normalisers, modes that do not fit, missing/extra/misshapen tensors, a wrong grid:
    exit 1, one line naming the file (and the tensor), no output file."""
    model = tiny_model(seed=4)
    sd = model.state_dict()
    good = path("d", "good.pt")
    torch.save(sd, good)
    out = path("d", "out", "m.h5")
    gen = torch.Generator().manual_seed(4)

    def normalizer(name, shape, **kw):
        n = f4.random_normalizer(shape, gen)
        for k, v in kw.items():
            setattr(n, k, v)
        p = path("d", name)
        f4.save_normalizer_pickle(n, p)
        return p

    bad_in = normalizer("bad_in.pickle", (3, 4, 2, 4))
    assert_failure(run_convert(good, out, "--input-normalizer", bad_in), "bad_in.pickle", out,
                   contains="input normaliser mean has shape (3, 4, 2, 4), expected the grid")
    bad_out = normalizer("bad_out.pickle", (3, 4, 2, 3, 2))
    assert_failure(run_convert(good, out, "--output-normalizer", bad_out), "bad_out.pickle",
                   out, contains="output normaliser mean has shape")
    bad_std = normalizer("bad_std.pickle", GRID, std=torch.ones(3, 4, 2))
    assert_failure(run_convert(good, out, "--input-normalizer", bad_std), "bad_std.pickle", out,
                   contains="input normaliser std has shape (3, 4, 2)")
    nan = normalizer("nan.pickle", GRID, mean=torch.full(GRID, float("nan")))
    assert_failure(run_convert(good, out, "--output-normalizer", nan), "nan.pickle", out,
                   contains="non-finite")
    eps = normalizer("eps.pickle", GRID, eps=1e-3)
    ok_in = normalizer("ok_in.pickle", GRID)
    assert_failure(run_convert(good, out, "--input-normalizer", ok_in, "--output-normalizer",
                               eps), "eps.pickle", out, contains="eps")
    no_std = path("d", "no_std.pickle")
    with open(no_std, "wb") as f:
        pickle.dump({"mean": torch.zeros(GRID), "eps": 1e-5}, f)
    assert_failure(run_convert(good, out, "--input-normalizer", no_std), "no_std.pickle", out,
                   contains="without `std`")
    garbage = path("d", "garbage.pickle")
    with open(garbage, "wb") as f:
        f.write(np.random.default_rng(0).bytes(256))
    assert_failure(run_convert(good, out, "--input-normalizer", garbage), "garbage.pickle", out)
    assert_failure(run_convert(good, out, "--input-normalizer", path("d", "absent.pickle")),
                   "absent.pickle", out)

    # Modes that do not fit the padded grid: A1 with m1 = 2 needs a padded extent >= 4, T with
    # m4 = 2 needs >= 2. Padding 0 on a grid of 3 x 4 x 2 x 3: m1 = 1, m2 = 2 fit, then the
    # tiny model's modes (1, 2, 1, 2) fit too; a (2, 2, 1, 2) model does not on A1 = 3.
    wide = tiny_model(seed=5, modes=(2, 2, 1, 2)).state_dict()
    wide_ck = path("d", "wide.pt")
    torch.save(wide, wide_ck)
    assert_failure(run_convert(wide_ck, out, "--padding", "0", "0", "0", "0"), "wide.pt", out,
                   "conv.conv0.weights1", contains="A1 modes 2 exceed 1")
    assert_failure(run_convert(good, out, "--padding", "0", "0", "0", "0",
                               grid=["3", "4", "2", "1"]), "good.pt", out,
                   "conv.conv0.weights1", contains="T modes 2 exceed 1")
    assert_failure(run_convert(good, out, grid=["3", "4", "2"]), "good.pt", out,
                   contains="--grid A1 A2 A3 T")
    assert_failure(run_convert(good, out, grid=None), "good.pt", out, contains="--grid")
    assert_failure(run_convert(good, out, "--padding", "8"), "good.pt", out,
                   contains="--padding P1 P2 P3 P4")
    assert_failure(run_convert(good, out, "--fno"), "good.pt", out, contains="--fno")

    def broken(name, change):
        bad = dict(sd)
        change(bad)
        p = path("d", name)
        torch.save(bad, p)
        return p

    cases = [
        (broken("missing.pt", lambda d: d.pop("conv.conv2.weights6")), "conv.conv2.weights6",
         "missing tensor"),
        (broken("missing_w.pt", lambda d: d.pop("conv.w3.bias")), "conv.w3.bias",
         "missing tensor"),
        (broken("extra.pt", lambda d: d.__setitem__("conv.conv4.weights1",
                                                    sd["conv.conv0.weights1"])),
         "conv.conv4.weights1", "unexpected tensor"),
        (broken("corner9.pt", lambda d: d.__setitem__("conv.conv1.weights9",
                                                      sd["conv.conv0.weights1"])),
         "conv.conv1.weights9", "unexpected tensor"),
        (broken("shape.pt", lambda d: d.__setitem__(
            "conv.conv3.weights8", torch.zeros(3, 3, 1, 2, 2, 2, dtype=torch.cfloat))),
         "conv.conv3.weights8", "expected (3, 3, 1, 2, 1, 2)"),
        (broken("fc2.pt", lambda d: d.__setitem__("conv.fc2.weight", torch.zeros(2, 12))),
         "conv.fc2.weight", "shape"),
        (broken("real.pt", lambda d: d.__setitem__("conv.conv0.weights5",
                                                   torch.zeros(3, 3, 1, 2, 1, 2))),
         "conv.conv0.weights5", "dtype"),
        (broken("inf.pt", lambda d: d.__setitem__("conv.w1.weight",
                                                  torch.full((3, 3, 1), float("inf")))),
         "conv.w1.weight", "non-finite"),
    ]
    for ck, key, what in cases:
        assert_failure(run_convert(ck, out), os.path.basename(ck), out, key, contains=what)

    # Normalisers are refused for a U-FNO/FNO checkpoint.
    from ufno.models.net3d import Net3d
    torch.manual_seed(0)
    ufno_ck = path("d", "ufno.pt")
    torch.save(Net3d(width=4, modes=(2, 2, 2), n_fourier=1, n_ufourier=0, hidden=8).state_dict(),
               ufno_ck)
    assert_failure(run_convert(ufno_ck, out, "--input-normalizer", ok_in,
                               grid=["16", "24", "8"]), "ufno.pt", out, contains="normalisers")

    # A failed conversion leaves an earlier good output untouched.
    convert_ok(good, out)
    before = read_bytes(out)
    run_convert(good, out, "--input-normalizer", bad_in)
    assert read_bytes(out) == before


def test_real_valued_spectral_weights():
    """Pre-complex checkpoints (spectral weights as real (..., 2) tensors) convert alike."""
    sd = tiny_model(seed=6).state_dict()
    old = {k: (torch.view_as_real(v).clone() if v.is_complex() else v) for k, v in sd.items()}
    a, b = path("e", "new", "m.pt"), path("e", "old", "m.pt")
    torch.save(sd, a)
    torch.save(old, b)
    convert_ok(a, path("e", "new", "m.h5"))
    convert_ok(b, path("e", "old", "m.h5"))
    assert read_bytes(path("e", "new", "m.h5")) == read_bytes(path("e", "old", "m.h5"))


def test_bench_refuses_bad_run_counts():
    """The 4-D FNO benchmark refuses a run count it cannot honour, before making any input."""
    bench = os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks", "fno4d_bench.py")
    out = path("bench")
    for flag, value in (("--torch-repeat", "0"), ("--repeat", "-1"), ("--torch-repeat", "1000"),
                        ("--repeat", "x")):
        p = forked_run.run([sys.executable, bench, "--size", "lgr1", "--out", out, flag, value],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (flag, value, p.returncode, p.stderr)
        assert flag in p.stderr.strip().splitlines()[-1], p.stderr
        assert not os.path.exists(out) or not os.listdir(out), "inputs made before the refusal"

