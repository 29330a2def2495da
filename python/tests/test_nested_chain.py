#!/usr/bin/python3
"""Tests of the nested chain in PyTorch (python/ufno/models/nested_chain.py, `python3 -m
ufno.nested_chain`, docs/nested-sites.md "The chain") and of its fixture tests/data/nested/
(python/ufno/conversion/nested_fixtures.py): the coarse channel against a loop over cells, the
order of the levels and their sources, the refusals of a model directory that does not make a
chain, and the fixture's expected prediction reproduced."""

import os
import shutil

import h5py
import numpy as np
import pytest
import torch

from cli_checks import CliChecks, check
from ufno.conversion import convert as ufno_convert
from ufno.conversion import nested_fixtures
from ufno.models import fno4d as f4
from ufno.models import nested_chain as chain

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "nested")
SITE = os.path.join(DATA, "site.h5")
MODELS = os.path.join(DATA, "models")
EXPECTED = os.path.join(DATA, "expected.h5")
TMP = None
cli = CliChecks("ufno.nested_chain")


def models_copy(name, drop=(), extra=()):
    """A copy of the fixture's models directory without the files in `drop`, plus `extra`
    (name, source path) files."""
    d = os.path.join(TMP, name)
    shutil.copytree(MODELS, d)
    for n in drop:
        os.remove(os.path.join(d, n))
    for n, src in extra:
        shutil.copyfile(src, os.path.join(d, n))
    return d


def convert_tiny(out, level, variable, grid, in_channels, seed=7):
    torch.manual_seed(seed)
    m = f4.FNO4d(width=2, modes=(1, 1, 1, 1), in_channels=in_channels, padding=(1, 1, 1, 1))
    ufno_convert.convert(None, out, variable, grid, (1, 1, 1, 1), state_dict=m.state_dict(),
                         source="tiny.pt", level=level)
    return out


def read_expected(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset)
                     else None)
    return out


# ---------------------------------------------------------------------------------------------
# The coarse channel

def test_coarse_channel_vs_loop():
    """Crop + repeat equals coarse[i, j, l, t] = source[i0 + i / rx, j0 + j / ry, k0 + l / rz, t]
    cell by cell; check_window refuses a window outside its source or of the wrong size."""
    gen = torch.Generator().manual_seed(1)
    source = torch.randn((7, 6, 5, 3), generator=gen, dtype=torch.float64)
    window, repeat = (1, 5, 2, 5, 1, 4), (2, 3, 2)
    shape = (8, 9, 6)
    chain.check_window(source.shape[:3], shape, window, repeat)
    got = chain.coarse_channel(source, window, repeat)
    assert tuple(got.shape) == shape + (3,)
    want = np.empty(shape + (3,))
    i0, _, j0, _, k0, _ = window
    for i in range(shape[0]):
        for j in range(shape[1]):
            for l in range(shape[2]):
                for t in range(3):
                    want[i, j, l, t] = source[i0 + i // repeat[0], j0 + j // repeat[1],
                                              k0 + l // repeat[2], t]
    check("coarse channel = the loop over cells", np.array_equal(got.numpy(), want))
    # The fixture's own windows: LGR1 a widened crop of GLOBAL, deeper levels all of the parent.
    site = chain.read_site(SITE)
    l1 = site.level("INJ1", "LGR1")
    check("LGR1 window and repeat", (l1.coarse_window, l1.coarse_repeat)
          == ((1, 5, 2, 6, 0, 2), (1, 1, 2)), (l1.coarse_window, l1.coarse_repeat))
    l2 = site.level("INJ2", "LGR2")
    check("LGR2 window and repeat", (l2.coarse_window, l2.coarse_repeat)
          == ((0, 4, 0, 4, 0, 4), (1, 1, 2)), (l2.coarse_window, l2.coarse_repeat))
    for bad_window, bad_repeat, say in (((0, 8, 2, 5, 1, 4), (1, 3, 2), "outside"),
                                        ((1, 5, 2, 5, 1, 4), (2, 3, 1), "does not give"),
                                        ((3, 3, 2, 5, 1, 4), (2, 3, 2), "outside")):
        with pytest.raises(ValueError, match=say):
            chain.check_window(source.shape[:3], shape, bad_window, bad_repeat)


# ---------------------------------------------------------------------------------------------
# Order and sources

class Recorder:
    """A stand-in model: records its input and returns a constant field, different per call."""

    def __init__(self, calls, key):
        self.calls, self.key = calls, key

    def __call__(self, x):
        value = float(len(self.calls) + 1)
        self.calls.append((self.key, x.clone(), value))
        return torch.full(x.shape[:5], value, dtype=x.dtype)


def test_chain_order_and_sources():
    """GLOBAL dP first, then per well and variable LGR1..LGR4; the coarse channel of LGR1 is the
    GLOBAL dP prediction for both variables, of LGRk the same well's LGR(k-1) of the same
    variable; each level's own channels are the site's."""
    site = chain.read_site(SITE)
    steps = chain.chain_steps(site)
    names = [(lv.path, var, None if src is None else src.path) for lv, var, src in steps]
    want = [("GLOBAL", "dP", None)]
    for w in ("INJ1", "INJ2"):
        for var in ("dP", "SG"):
            for k in range(1, 5):
                want.append(("%s/LGR%d" % (w, k), var,
                             "GLOBAL" if k == 1 else "%s/LGR%d" % (w, k - 1)))
    check("order and sources of the steps", names == want, names)

    calls = []
    models = {key: Recorder(calls, key) for key in chain.CHAIN_MODELS}
    preds = chain.run_chain(site, models, torch.float64)
    check("every step ran once, in order", [c[0] for c in calls]
          == [(lv.name, var) for lv, var, _ in steps], [c[0] for c in calls])
    value_of = {}
    for (key, x, value), (level, var, src) in zip(calls, steps):
        value_of[(level.path, var)] = value
        own = torch.from_numpy(site.input(level)).double()
        check("%s %s: its own channels" % (level.path, var),
              torch.equal(x[..., :8], own))
        if src is None:
            check("GLOBAL takes 8 channels", x.shape[-1] == 8, x.shape)
            continue
        check("%s %s takes 9 channels" % (level.path, var), x.shape[-1] == 9, x.shape)
        src_var = "dP" if src.name == "GLOBAL" else var
        check("%s %s: the coarse channel is %s %s" % (level.path, var, src.path, src_var),
              bool((x[..., 8] == value_of[(src.path, src_var)]).all()))
        check("%s %s: prediction kept" % (level.path, var),
              bool((preds[(level.path, var)] == value).all()))


def test_coarse_channel_in_the_chain():
    """With a source that varies cell by cell (a GLOBAL model returning the cell index), LGR1's
    coarse channel is the crop + repeat of the GLOBAL prediction."""
    site = chain.read_site(SITE)
    seen = {}

    def global_model(x):
        n = x.shape[1:5]
        return torch.arange(int(np.prod(n)), dtype=x.dtype).reshape((1,) + tuple(n))

    def lgr_model(key):
        def run(x):
            seen.setdefault(key, x[0, ..., 8].clone())
            return torch.zeros(x.shape[:5], dtype=x.dtype)
        return run

    models = {key: (global_model if key[0] == "GLOBAL" else lgr_model(key))
              for key in chain.CHAIN_MODELS}
    chain.run_chain(site, models, torch.float64)
    g = global_model(torch.zeros((1,) + site.levels["GLOBAL"].shape + (site.T, 8),
                                 dtype=torch.float64))[0]
    l1 = site.level("INJ1", "LGR1")
    i0, i1, j0, j1, k0, k1 = l1.coarse_window
    rx, ry, rz = l1.coarse_repeat
    got = seen[("LGR1", "dP")]
    for i in range(l1.shape[0]):
        for j in range(l1.shape[1]):
            for l in range(l1.shape[2]):
                assert torch.equal(got[i, j, l], g[i0 + i // rx, j0 + j // ry, k0 + l // rz])
    check("LGR1 SG's coarse channel is GLOBAL dP too", torch.equal(seen[("LGR1", "SG")], got))


# ---------------------------------------------------------------------------------------------
# Refusals

def test_refusals():
    """A missing model, a level held twice, a model of another grid or channel count, a GLOBAL
    SG model, a missing directory or site file: one line, exit 2, no prediction file."""
    out = os.path.join(TMP, "refused.h5")
    site = chain.read_site(SITE)
    missing = models_copy("missing", drop=("LGR3_SG.h5",))
    with pytest.raises(chain.ChainError, match="no LGR3 SG model"):
        chain.load_models(missing, site)
    cli.refused("a missing model", ["--case", SITE, "--models", missing, "--out", out],
                out, "no LGR3 SG model")

    twice = models_copy("twice", extra=(("another.h5", os.path.join(MODELS, "LGR2_dP.h5")),))
    cli.refused("a level held twice", ["--case", SITE, "--models", twice, "--out", out],
                out, "a second LGR2 dP model")

    grid = models_copy("grid", drop=("LGR2_dP.h5",))
    convert_tiny(os.path.join(grid, "LGR2_dP.h5"), "LGR2", "dP", (4, 4, 4, 24), 9)
    cli.refused("a wrong grid", ["--case", SITE, "--models", grid, "--out", out],
                out, "LGR2 dP model has grid (4, 4, 4, 24), the site's LGR2 is (4, 4, 8, 24)")
    times = models_copy("times", drop=("GLOBAL_dP.h5",))
    convert_tiny(os.path.join(times, "GLOBAL_dP.h5"), "GLOBAL", "dP", (10, 12, 2, 12), 8)
    cli.refused("a wrong T", ["--case", SITE, "--models", times, "--out", out], out,
                "has grid (10, 12, 2, 12)")

    channels = models_copy("channels", drop=("LGR1_SG.h5",))
    convert_tiny(os.path.join(channels, "LGR1_SG.h5"), "LGR1", "SG", (4, 4, 4, 24), 8)
    cli.refused("8 channels on an LGR", ["--case", SITE, "--models", channels, "--out", out],
                out, "LGR1 SG model takes 8 channels, not 9")

    gsg = models_copy("global_sg")
    convert_tiny(os.path.join(gsg, "GLOBAL_SG.h5"), "GLOBAL", "SG", (10, 12, 2, 24), 8)
    cli.refused("a GLOBAL SG model", ["--case", SITE, "--models", gsg, "--out", out], out,
                "is not part of the nested chain")

    # Files that are not FNO4D model files with a level are not models of the chain.
    ignored = models_copy("ignored", extra=(("notes.txt", SITE), ("site.h5", SITE)))
    untagged = os.path.join(ignored, "untagged.h5")
    torch.manual_seed(3)
    m = f4.FNO4d(width=2, modes=(1, 1, 1, 1), in_channels=9, padding=(1, 1, 1, 1))
    ufno_convert.convert(None, untagged, "dP", (4, 4, 8, 24), (1, 1, 1, 1),
                         state_dict=m.state_dict(), source="tiny.pt")
    check("files without a level are ignored",
          sorted(chain.find_models(ignored)) == sorted(chain.CHAIN_MODELS))

    cli.refused("no model directory", ["--case", SITE, "--models", os.path.join(TMP, "none"),
                                       "--out", out], out, "no such model directory")
    cli.refused("no site file", ["--case", os.path.join(TMP, "none.h5"), "--models", MODELS,
                                 "--out", out], out, "no such site file")
    cli.refused("a model file as the site", ["--case", os.path.join(MODELS, "LGR1_dP.h5"),
                                             "--models", MODELS, "--out", out], out,
                "not a site file")


# ---------------------------------------------------------------------------------------------
# The fixture

def test_fixture_reproduced():
    """The chain in float64 reproduces tests/data/nested/expected.h5 (float32 rounding), in
    float32 to 1e-5, and through the command line the prediction file has the layout of
    docs/nested-sites.md."""
    site = chain.read_site(SITE)
    expected = read_expected(EXPECTED)
    for dtype, tol in ((torch.float64, 1e-6), (torch.float32, 1e-5)):
        preds = chain.run_chain(site, chain.load_models(MODELS, site, dtype), dtype)
        worst = 0.0
        for (path, var), y in preds.items():
            ref = expected["%s/%s" % (path, var)].astype(np.float64)
            got = np.moveaxis(y.double().numpy(), -1, 0)
            worst = max(worst, np.abs(got - ref).max() / np.abs(ref).max())
        check("%s chain reproduces expected.h5 (rel. %.1e)" % (dtype, worst), worst <= tol, worst)
    assert len(preds) == 1 + 2 * 8

    out = os.path.join(TMP, "pred.h5")
    r = cli.run(["--case", SITE, "--models", MODELS, "--out", out, "--threads", "1"])
    check("the command line ran", r.returncode == 0 and "wrote" in r.stdout, r.stderr[-400:])
    got = read_expected(out)
    check("same datasets as expected.h5", sorted(got) == sorted(expected), sorted(got))
    for k, ref in expected.items():
        assert got[k].dtype == ref.dtype and got[k].shape == ref.shape, k
        if k.endswith(("cell_x", "cell_y", "cell_depth", "times_days")):
            assert np.array_equal(got[k], ref), k
        else:
            assert np.abs(got[k] - ref).max() <= 1e-5 * np.abs(ref).max(), k
    with h5py.File(out, "r") as f, h5py.File(SITE, "r") as s:
        a = {k: chain._str(v) for k, v in f.attrs.items()}
        check("root attributes", a["format"] == "ufno-nested-prediction" and a["source"] == SITE
              and a["models"] == MODELS and "nested_chain" in a["producer"], a)
        assert f["GLOBAL/dP"].shape == (24, 10, 12, 2) and f["GLOBAL/dP"].dtype == np.float32
        assert "SG" not in f["GLOBAL"]
        for w in ("INJ1", "INJ2"):
            for k in range(1, 5):
                g = f["%s/LGR%d" % (w, k)]
                nz = 4 if k == 1 else 8
                for var, units in (("dP", "bar"), ("SG", "1")):
                    assert g[var].shape == (24, 4, 4, nz), (w, k, var)
                    assert chain._str(g[var].attrs["units"]) == units
                for c in ("cell_x", "cell_y", "cell_depth"):
                    assert np.array_equal(g[c][()], s["%s/LGR%d/%s" % (w, k, c)][()])
                    assert chain._str(g[c].attrs["units"]) == "m"
        assert np.array_equal(f["times_days"][()], s["times_days"][()])


def layer_in_perforation(site, level, perf):
    """Which of the level's layers lie in the GLOBAL layers perf = (k1, k2) (1-based): the
    fixture's levels refine GLOBAL's layers evenly, nz / 2 layers per GLOBAL layer."""
    nz = level.shape[2]
    per = nz // site.levels["GLOBAL"].shape[2]
    gk = np.arange(nz) // per
    return (gk >= perf[0] - 1) & (gk <= perf[1] - 1)


def test_fixture_up_to_date_and_consistent():
    """nested_fixtures reproduces tests/data/nested/ byte for byte (under 2.5 MB); its site
    follows the site format's rules (channels, windows, the injection of each level) and its
    models have the documented levels, normalisers and sizes."""
    out = os.path.join(TMP, "fixture")
    nested_fixtures.make_nested_fixture(out, check=False)
    files = nested_fixtures.fixture_files(out)
    assert files == nested_fixtures.fixture_files(DATA), files
    total = 0
    for n in files:
        with open(os.path.join(out, n), "rb") as a, open(os.path.join(DATA, n), "rb") as b:
            assert a.read() == b.read(), \
                "tests/data/nested/%s is stale: run python3 -m ufno.make_fixtures" % n
        total += os.path.getsize(os.path.join(DATA, n))
    check("fixture under 2.5 MB (%d bytes)" % total, total < 2_500_000, total)

    site = chain.read_site(SITE)
    times = nested_fixtures.report_times()
    check("24 report times, nested FNO's", len(times) == 24 and times[0] == 12
          and times[-1] == 11064 and np.array_equal(site.times_days, times), site.times_days)
    with h5py.File(SITE, "r") as f:
        surface = {w: float(f[w].attrs["surface_rate"]) for w in site.wells}
        rate = {w: float(f[w].attrs["rate"]) for w in site.wells}
        col = {w: (int(f[w].attrs["i"][0]), int(f[w].attrs["j"][0])) for w in site.wells}
        perf = {w: (int(f[w].attrs["k1"][0]), int(f[w].attrs["k2"][0])) for w in site.wells}
    for w in site.wells:
        check("%s: rate in Mt/yr at 1.872 kg/sm3" % w,
              abs(rate[w] - surface[w] * 1.872 * 365.25 / 1e9) < 1e-12 * rate[w], rate[w])
    g_cells = site.cells(site.levels["GLOBAL"])
    for level in site.levels.values():
        x = site.input(level)[0]
        cells = site.cells(level)
        assert np.allclose(x[..., 0, 0], cells["cell_x"] / 160000, rtol=1e-6)
        assert np.allclose(x[..., 0, 1], cells["cell_y"] / 160000, rtol=1e-6)
        assert np.allclose(x[0, 0, 0, :, 3], times / 10950, rtol=1e-6)
        for c in (0, 1, 2, 4, 5, 6, 7):
            assert (x[..., c] == x[..., :1, c]).all(), (level.path, c)
        # The reference's injection map: per well the column nearest its point (the centre of
        # its GLOBAL column), by argmin over the level's cell centres (the lower index on a
        # tie), rate / 2942777.68785957 on every layer; on LGR4 the perforated layers only.
        inj = x[..., 0, 4]
        want = np.zeros(inj.shape, dtype=np.float32)
        for w in ([level.well] if level.well else site.wells):
            i, j = col[w]
            px, py = g_cells["cell_x"][i - 1, 0, 0], g_cells["cell_y"][0, j - 1, 0]
            a = int(np.argmin(np.round(np.abs(cells["cell_x"][:, 0, 0] - px), 6)))
            b = int(np.argmin(np.round(np.abs(cells["cell_y"][0, :, 0] - py), 6)))
            layers = np.ones(inj.shape[2], dtype=bool)
            if level.name == "LGR4":
                layers = layer_in_perforation(site, level, perf[w])
            want[a, b, layers] = np.float32(surface[w] / 2942777.68785957)
        check("%s: the reference's injection map" % level.path, np.array_equal(inj, want),
              (np.argwhere(inj), np.argwhere(want)))
    check("LGR4 of INJ2 (perforated in GLOBAL layer 2) injects on its lower four layers only",
          (site.input(site.level("INJ2", "LGR4"))[0, ..., 0, 4] > 0).any(axis=(0, 1)).tolist()
          == [False] * 4 + [True] * 4)
    check("LGR1 of INJ2 injects on every layer",
          (site.input(site.level("INJ2", "LGR1"))[0, ..., 0, 4] > 0).any(axis=(0, 1)).all())
    attrs = {}
    for n in os.listdir(MODELS):
        with h5py.File(os.path.join(MODELS, n), "r") as f:
            attrs[n] = (chain._str(f.attrs["level"]), chain._str(f.attrs["variable"]),
                        int(f.attrs["width"]), tuple(f.attrs["modes"]),
                        tuple(f.attrs["padding"]), "input_normalizer.mean" in f,
                        "output_normalizer.mean" in f)
    for n, (lv, var, width, modes, padding, n_in, n_out) in attrs.items():
        assert n == "%s_%s.h5" % (lv, var)
        assert width == nested_fixtures.WIDTH and padding == nested_fixtures.PADDING, n
        glob = lv == "GLOBAL"
        assert modes == (nested_fixtures.GLOBAL_MODES if glob else nested_fixtures.LGR_MODES), n
        check("%s: input normaliser %s, output normaliser" % (n, "absent" if glob else "present"),
              n_in == (not glob) and n_out, (n_in, n_out))


PUBLISHED = os.path.join(DATA, "published")


def test_published_set_follows_the_reference():
    """The published-order set (nested/published/): time-first models converted from
    published-style checkpoints and TimeGaussianNormalizer pickles, used as predict_full_sg.py
    and the dP notebook use them. The chain here (models/nested_chain.py) reproduces the
    reference's chains (models/nested_reference.py, expected.h5) in float64 and float32; the
    files record TXYZ and per-time normalisers where the reference has them; the networks are
    not dominated by their biases."""
    from ufno.models import nested_reference as ref
    site = chain.read_site(SITE)
    models_dir = os.path.join(PUBLISHED, "models")
    expected = read_expected(os.path.join(PUBLISHED, "expected.h5"))
    for dtype, tol in ((torch.float64, 1e-6), (torch.float32, 1e-5)):
        preds = chain.run_chain(site, chain.load_models(models_dir, site, dtype), dtype)
        worst = 0.0
        for (p, var), y in preds.items():
            want = expected["%s/%s" % (p, var)].astype(np.float64)
            got = np.moveaxis(y.double().numpy(), -1, 0)
            worst = max(worst, np.linalg.norm(got - want) / np.linalg.norm(want))
            check("%s %s: spread %.2f" % (p, var, nested_fixtures.spread(torch.from_numpy(want))),
                  nested_fixtures.spread(torch.from_numpy(want)) >= nested_fixtures.MIN_SPREAD)
        check("%s chain reproduces the reference's (rel. L2 %.1e)" % (dtype, worst),
              worst <= tol, worst)

    # The reference's chain, rebuilt from the same objects, gives expected.h5; with the SG chain
    # decoding LGR2 (which predict_full_sg.py does not) or encoding LGR1 SG's coarse channel
    # with LGR1 SG's own (no) normaliser, it would not.
    nets, norms = nested_fixtures.published_model_set(site, nested_fixtures.SEED + 200)
    inputs = ref.input_dict(site, torch.float64)
    wrap = {lv: nested_fixtures._with_channel(f4.to_float64(m)) for lv, m in nets["SG"].items()}
    wrap["GLOBAL"] = nested_fixtures._with_channel(f4.to_float64(nets["dP"]["GLOBAL"]))
    got = ref.as_chain_predictions(site, ref.predict_full(site, inputs, wrap, norms, "SG"), "SG")
    for k, v in got.items():
        want = np.moveaxis(expected["%s/%s" % k].astype(np.float64), 0, -1)
        assert np.linalg.norm(v.numpy() - want) <= 1e-6 * np.linalg.norm(want), k
    bad = dict(norms["input"])
    bad["LGR1"] = f4.TimeGaussianNormalizer(torch.zeros(1, 24, 1, 1, 1, 1),
                                            torch.ones(1, 24, 1, 1, 1, 1))
    other = ref.as_chain_predictions(
        site, ref.predict_full(site, inputs, wrap, {"input": bad, "output": norms["output"]},
                               "SG"), "SG")
    k = ("INJ1/LGR1", "SG")
    d = np.linalg.norm(other[k].numpy() - got[k].numpy()) / np.linalg.norm(got[k].numpy())
    check("LGR1 SG depends on its coarse channel's encoding (rel. %.2f)" % d, d > 1e-2, d)

    for n in sorted(os.listdir(models_dir)):
        with h5py.File(os.path.join(models_dir, n), "r") as f:
            a = {k: chain._str(v) if isinstance(v, (bytes, np.bytes_)) else v
                 for k, v in f.attrs.items()}
            lv, var = a["level"], a["variable"]
            level = site.levels["GLOBAL"] if lv == "GLOBAL" else site.level("INJ1", lv)
            assert a["axis_order"] == "TXYZ" and tuple(a["grid"]) == (24,) + level.shape, n
            n_in, n_out = nested_fixtures.published_normalizers(norms, lv, var)
            for label, obj in (("input_normalizer", n_in), ("output_normalizer", n_out)):
                assert (label + ".mean" in f) == (obj is not None), (n, label)
                if obj is None:
                    assert label + "_kind" not in a, (n, label)
                    continue
                assert a[label + "_kind"] == "time", (n, label)
                for field in ("mean", "std"):
                    assert f[label + "." + field].shape == (24,)
                    assert np.array_equal(f[label + "." + field][()],
                                          getattr(obj, field).reshape(-1).numpy()), (n, label)


def test_report_feeds_time_first_models_the_true_coarse_level():
    """ufno.nested_report's "true coarse input" runs each time-first (TXYZ) model on the stored
    (1, x, y, z, t, C) permuted as the reference's chain does: fed the reference's own chain
    predictions (expected.h5) as the truth, every level reproduces them (float32 rounding); a
    model run in the stored order would miss by O(1)."""
    from ufno.training import nested_report
    errors = nested_report.teacher_forced([SITE], os.path.join(PUBLISHED, "models"),
                                          [os.path.join(PUBLISHED, "expected.h5")])
    assert len(errors) == 9
    worst = max(errors.values())
    check("every level fed the reference's coarser level reproduces it (worst %.1e)" % worst,
          worst < 1e-4, errors)
