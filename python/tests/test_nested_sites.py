"""Small nested sites (python/ufno/data/nested_sites.py) and the nested trainer
(python/ufno/training/train_nested.py): sampler, decks, level geometry, averaging, training."""
import json
import os

import h5py
import numpy as np
import pytest
import torch

from ufno.data import nested_sites as ns
from ufno.training import train_nested as tn


def test_sampler_is_deterministic_and_in_range():
    a, b = ns.sample_site(3, 7), ns.sample_site(3, 7)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.dumps(a) != json.dumps(ns.sample_site(3, 8))
    for i in range(40):
        s = ns.sample_site(5, i)
        r = ns.RANGES
        assert r["top_depth"][0] <= s["top_depth_m"] <= r["top_depth"][1]
        assert all(r["perm"][0] <= k <= r["perm"][1] for k in s["permx_md"])
        w1, w2 = s["wells"]
        assert w2["i"] - w1["i"] >= r["i_w2_gap"]        # the LGR boxes are apart
        for w in s["wells"]:
            assert r["rate"][0] <= w["rate_mt_per_year"] <= r["rate"][1]
            for rec in ns.nest_boxes(w):
                if rec["level"] == "LGR1":
                    win, _ = ns.coarse_window(rec)
                    assert 0 <= win[0] and win[1] <= ns.GLOBAL_SHAPE[0]
                    assert 0 <= win[2] and win[3] <= ns.GLOBAL_SHAPE[1]


def test_nest_structure_follows_the_spec():
    s = ns.sample_site(1, 0)
    for w in s["wells"]:
        recs = ns.nest_boxes(w)
        parent_shape = ns.GLOBAL_SHAPE
        for k, rec in enumerate(recs):
            b, shape = rec["box"], rec["shape"]
            win, rep = ns.coarse_window(rec)
            for a in range(3):          # the window, repeated, gives the level's shape
                assert 0 <= win[2 * a] < win[2 * a + 1] <= parent_shape[a]
                assert (win[2 * a + 1] - win[2 * a]) * rep[a] == shape[a]
            if k == 0:
                assert rec["parent"] == "GLOBAL"
                assert b[0] <= w["i"] + 1 <= b[1] and b[2] <= w["j"] + 1 <= b[3]
            else:
                assert rec["parent"] == recs[k - 1]["carfin"]
                assert shape[:2] == recs[0]["shape"][:2]
                if k == 1:
                    assert shape[2] % recs[0]["shape"][2] == 0
                else:
                    assert shape == recs[k - 1]["shape"]
            parent_shape = shape
    # Every well's nest has the same shape level by level.
    assert [r["shape"] for r in ns.nest_boxes(s["wells"][0])] == \
        [r["shape"] for r in ns.nest_boxes(s["wells"][1])]


def test_averaging_matches_a_naive_loop():
    rng = np.random.default_rng(0)
    site = ns.sample_site(1, 2)
    field = rng.standard_normal((3,) + ns.fine_shape())
    for key, g in ns.level_blocks(site).items():
        got = ns.average_to_level(field, g)
        nx, ny, nz = g["shape"]
        want = np.zeros((3, nx, ny, nz))
        for a in range(nx):
            for b in range(ny):
                for c in range(nz):
                    vals = []
                    for fx in range(ns.fine_shape()[0]):
                        for fy in range(ns.fine_shape()[1]):
                            for fz in range(ns.fine_shape()[2]):
                                if (g["start"][0] + a * g["step"][0] <= fx <
                                        g["start"][0] + (a + 1) * g["step"][0] and
                                        g["start"][1] + b * g["step"][1] <= fy <
                                        g["start"][1] + (b + 1) * g["step"][1] and
                                        g["start"][2] + c * g["step"][2] <= fz <
                                        g["start"][2] + (c + 1) * g["step"][2]):
                                    vals.append(field[:, fx, fy, fz])
                    want[:, a, b, c] = np.mean(vals, axis=0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(key))
        if key != "GLOBAL":
            break   # one LGR level by the naive loop is enough (slow); the rest below


def test_level_cells_are_the_spec_geometry():
    """Each level's cell centres (from its fine blocks) are where the CARFIN boxes put them."""
    site = ns.sample_site(1, 4)
    blocks = ns.level_blocks(site)
    for w in site["wells"]:
        x0, dx = 0.0, ns.CELL_XY           # parent's origin and cell size along x
        y0, dy = 0.0, ns.CELL_XY
        for rec in ns.nest_boxes(w):
            b, r = rec["box"], rec["refinement"]
            x0, dx = x0 + (b[0] - 1) * dx, dx / r[0]
            y0, dy = y0 + (b[2] - 1) * dy, dy / r[1]
            cx, cy, _ = ns.level_coordinates(site, blocks[(w["name"], rec["level"])])
            np.testing.assert_allclose(cx[:, 0, 0], x0 + (np.arange(rec["shape"][0]) + 0.5) * dx)
            np.testing.assert_allclose(cy[0, :, 0], y0 + (np.arange(rec["shape"][1]) + 0.5) * dy)
        # LGR4's cells are fine cells and hold the well's point.
        g = blocks[(w["name"], "LGR4")]
        assert g["step"] == (1, 1, 1)
        ci, cj = ns.well_fine_column(w)
        assert g["start"][0] <= ci < g["start"][0] + g["shape"][0]
        assert g["start"][1] <= cj < g["start"][1] + g["shape"][1]


def _opm_parser():
    try:
        from opm.io.parser import Parser
    except ImportError:
        pytest.skip("opm.io is not available")
    return Parser()


def test_nested_deck_parses_with_the_site_s_carfins_and_wells(tmp_path):
    parser = _opm_parser()
    site = ns.sample_site(1, 3)
    ns.write_site(site, str(tmp_path))
    deck = parser.parse(str(tmp_path / "SITE.DATA"))
    names = [kw.name for kw in deck]
    assert "CARFIN" in names and names.count("CARFIN") == names.count("ENDFIN") == 8
    recs = [r for w in site["wells"] for r in ns.nest_boxes(w)]
    got = []
    for kw in deck:
        if kw.name == "CARFIN":
            r = kw[0]
            got.append((r[0].get_str(0),) + tuple(r[i].get_int(0) for i in range(1, 10)) +
                       (r[11].get_str(0),))
    want = [(r["carfin"],) + tuple(r["box"]) + tuple(r["shape"]) + (r["parent"],) for r in recs]
    assert got == want
    dims = deck["DIMENS"][0]
    assert tuple(dims[i].get_int(0) for i in range(3)) == ns.GLOBAL_SHAPE
    wells = [(r[0].get_str(0), r[2].get_int(0), r[3].get_int(0)) for r in deck["WELSPECS"]]
    assert wells == [(w["name"], w["i"] + 1, w["j"] + 1) for w in site["wells"]]
    comp = [(r[0].get_str(0), r[3].get_int(0), r[4].get_int(0)) for r in deck["COMPDAT"]]
    assert comp == [(w["name"], w["k1"] + 1, w["k2"] + 1) for w in site["wells"]]
    steps = [v for kw in deck if kw.name == "TSTEP" for v in kw[0][0].get_raw_data_list()]
    np.testing.assert_allclose(np.cumsum(steps), ns.report_times())
    assert ns.report_times()[0] == 12 and ns.report_times()[-1] == 11064


def test_fine_deck_grid_is_the_finest_level_s_cells(tmp_path):
    parser = _opm_parser()
    site = ns.sample_site(1, 5)
    ns.write_site(site, str(tmp_path))
    deck = parser.parse(str(tmp_path / "fine" / "FINE.DATA"))
    dims = deck["DIMENS"][0]
    assert tuple(dims[i].get_int(0) for i in range(3)) == ns.fine_shape()
    dx = deck["DXV"][0][0].get_raw_data_list()
    dy = deck["DYV"][0][0].get_raw_data_list()
    dz = deck["DZV"][0][0].get_raw_data_list()
    blocks = ns.level_blocks(site)
    for w in site["wells"]:
        g = blocks[(w["name"], "LGR4")]
        rec = ns.nest_boxes(w)[-1]
        # LGR4's cell size, from the CARFIN chain, equals the fine grid's cells there.
        size = [ns.CELL_XY, ns.CELL_XY]
        for r in ns.nest_boxes(w):
            size = [size[0] / r["refinement"][0], size[1] / r["refinement"][1]]
        assert np.allclose(dx, size[0]) and np.allclose(dy, size[1])
        assert g["step"] == (1, 1, 1) and rec["shape"] == g["shape"]
        # vertically: LGR4 layer thickness = the fine layers'
        nz_lgr4 = rec["shape"][2]
        thick = np.repeat(site["dz_m"], nz_lgr4 // len(site["dz_m"])) / (
            nz_lgr4 // len(site["dz_m"]))
        np.testing.assert_allclose(dz, thick)
    comp = {r[0].get_str(0): (r[1].get_int(0), r[2].get_int(0)) for r in deck["COMPDAT"]}
    for w in site["wells"]:
        ci, cj = ns.well_fine_column(w)
        assert comp[w["name"]] == (ci + 1, cj + 1)


# ---------------------------------------------------------------------------------------------
# Training on synthetic pairs (site files of the documented layout, targets by write_target)

def write_synthetic_site_file(path, site, rng):
    """A site file of docs/nested-sites.md's layout with random channels (what the trainer
    reads)."""
    T = ns.NT
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "ufno-nested-site"
        f.attrs["wells"] = " ".join(w["name"] for w in site["wells"])
        f.create_dataset("times_days", data=ns.report_times())
        blocks = ns.level_blocks(site)
        for key, g in blocks.items():
            grp = f.require_group(key if key == "GLOBAL" else "%s/%s" % key)
            grp.create_dataset("input", data=rng.standard_normal(
                (1,) + tuple(g["shape"]) + (T, 8)).astype(np.float32))
            grp.attrs["level"] = "GLOBAL" if key == "GLOBAL" else key[1]
        for w in site["wells"]:
            for rec in ns.nest_boxes(w):
                win, rep = ns.coarse_window(rec)
                grp = f["%s/%s" % (w["name"], rec["level"])]
                grp.attrs["coarse_window"] = np.asarray(win, dtype=np.int32)
                grp.attrs["coarse_repeat"] = np.asarray(rep, dtype=np.int32)


def _pairs(tmp_path, n):
    rng = np.random.default_rng(1)
    for i in range(n):
        site = ns.sample_site(9, i)
        d = tmp_path / ("site_%06d" % i)
        d.mkdir()
        write_synthetic_site_file(str(d / "site.h5"), site, rng)
        dp = rng.random((ns.NT,) + ns.fine_shape()) * 10
        sg = rng.random((ns.NT,) + ns.fine_shape()) * 0.5
        ns.write_target(str(d / "target.h5"), site, dp, sg)


def test_teacher_forcing_samples_use_the_true_coarser_level(tmp_path):
    _pairs(tmp_path, 2)
    pairs = tn.find_pairs([str(tmp_path)])
    x, y = tn.level_samples(pairs, "LGR2", "SG")
    assert x.shape[0] == 4 and x.shape[-1] == 9 and y.shape[1:] == (8, 8, 8, ns.NT)
    site = ns.sample_site(9, 1)
    w = site["wells"][1]
    src = ns.read_level(pairs[1][1], (w["name"], "LGR1"), "SG")     # (T, 8, 8, 4)
    want = np.repeat(np.moveaxis(src, 0, -1), 2, axis=2)              # vertical repeat 2
    np.testing.assert_array_equal(x[3, ..., -1], want)
    x1, _ = tn.level_samples(pairs, "LGR1", "dP")
    win, rep = ns.coarse_window(ns.nest_boxes(site["wells"][0])[0])
    g = np.moveaxis(ns.read_level(pairs[1][1], "GLOBAL", "dP"), 0, -1)
    np.testing.assert_array_equal(x1[2, ..., -1], np.repeat(
        g[win[0]:win[1], win[2]:win[3], win[4]:win[5]], rep[2], axis=2))
    try:
        from ufno.models import nested_chain
    except ImportError:
        return
    np.testing.assert_array_equal(
        tn.coarse_channel(g, win, rep),
        nested_chain.coarse_channel(torch.from_numpy(g), win, rep).numpy())


def test_train_nested_writes_model_files_and_skips_finished_ones(tmp_path):
    _pairs(tmp_path, 2)
    out = tmp_path / "out"
    args = ["--data", str(tmp_path), "--out", str(out), "--epochs", "1", "--epochs-global", "1",
            "--width", "4", "--threads", "1"]
    assert tn.main(args + ["--only", "GLOBAL_dP", "LGR4_SG"]) == 0
    models = sorted(os.listdir(out / "models"))
    assert models == ["GLOBAL_dP.h5", "LGR4_SG.h5"]
    with h5py.File(out / "models" / "LGR4_SG.h5", "r") as f:
        assert f.attrs["level"] in (b"LGR4", "LGR4")
        assert "input_normalizer.mean" in f and "output_normalizer.std" in f
    with h5py.File(out / "models" / "GLOBAL_dP.h5", "r") as f:
        assert f.attrs["level"] in (b"GLOBAL", "GLOBAL")
        assert "input_normalizer.mean" not in f and "output_normalizer.mean" in f
    # A second run skips finished models (their files stay as they were) and trains the rest.
    before = os.path.getmtime(out / "models" / "GLOBAL_dP.h5")
    assert tn.main(args + ["--only", "GLOBAL_dP", "LGR4_SG", "LGR1_dP"]) == 0
    assert sorted(os.listdir(out / "models")) == ["GLOBAL_dP.h5", "LGR1_dP.h5", "LGR4_SG.h5"]
    assert os.path.getmtime(out / "models" / "GLOBAL_dP.h5") == before
    # Models trained on other sites are not taken as finished.
    with pytest.raises(SystemExit, match="other sites"):
        tn.main(args + ["--sites", "1", "--only", "GLOBAL_dP"])


def test_train_nested_in_the_published_order(tmp_path):
    """--axis-order TXYZ trains time-first models (B, T, X, Y, Z, C) with per-time
    TimeGaussianNormalizer objects, as the published ones: each file says TXYZ, its grid is
    (T, nx, ny, nz), its normalisers hold one value per report time; the samples are the
    (x, y, z, t) ones permuted (0, 4, 1, 2, 3, 5); a run in the other order into the same
    directory is refused."""
    _pairs(tmp_path, 2)
    out = tmp_path / "out"
    args = ["--data", str(tmp_path), "--out", str(out), "--epochs", "1", "--epochs-global", "1",
            "--width", "4", "--threads", "1", "--axis-order", "TXYZ"]
    assert tn.main(args + ["--only", "GLOBAL_dP", "LGR2_SG"]) == 0
    for name, level in (("GLOBAL_dP", "GLOBAL"), ("LGR2_SG", "LGR2")):
        with h5py.File(out / "models" / (name + ".h5"), "r") as f:
            assert f.attrs["axis_order"] in (b"TXYZ", "TXYZ")
            grid = tuple(int(g) for g in f.attrs["grid"])
            assert grid[0] == ns.NT
            assert f["output_normalizer.mean"].shape == (ns.NT,)
            assert f.attrs["output_normalizer_kind"] in (b"time", "time")
            if level != "GLOBAL":
                assert f["input_normalizer.std"].shape == (ns.NT,)
    pairs = tn.find_pairs([str(tmp_path)])
    x, y = tn.level_samples(pairs, "LGR2", "SG")
    xt, yt = tn.time_first(torch.from_numpy(x), torch.from_numpy(y))
    assert tuple(xt.shape) == (x.shape[0], x.shape[4], x.shape[1], x.shape[2], x.shape[3],
                               x.shape[5])
    np.testing.assert_array_equal(xt[:, 3, 1, 2, 0].numpy(), x[:, 1, 2, 0, 3])
    with pytest.raises(SystemExit, match="axis order"):
        tn.main(args[:-1] + ["XYZT", "--only", "GLOBAL_dP"])


def test_ufno_import_reads_the_nested_deck_as_the_site_says(tmp_path):
    """ufno_import's site file of a nested deck: every level's shape, coarse window and repeat,
    cell centres, and LGR4's injection column are the ones the level geometry here gives (the
    averaging of the targets uses the same geometry)."""
    import subprocess
    exe = os.environ.get("UFNO_IMPORT", os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "apps", "ufno_import"))
    if not os.path.exists(exe):
        pytest.skip("no ufno_import (%s)" % exe)
    site = ns.sample_site(1, 6)
    ns.write_site(site, str(tmp_path))
    out = tmp_path / "site.h5"
    r = subprocess.run([exe, str(tmp_path / "SITE.DATA"), "--out", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0 and "RADIAL" in r.stderr:
        pytest.skip("this ufno_import reads radial decks only")
    assert r.returncode == 0, r.stderr
    blocks = ns.level_blocks(site)
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["times_days"][()], ns.report_times())
        for key, g in blocks.items():
            grp = f[key if key == "GLOBAL" else "%s/%s" % key]
            assert grp["input"].shape == (1,) + tuple(g["shape"]) + (ns.NT, 8)
            for name, v in zip(("cell_x", "cell_y", "cell_depth"),
                               ns.level_coordinates(site, g)):
                np.testing.assert_allclose(grp[name][()], v, atol=1e-5)
        for w in site["wells"]:
            for rec in ns.nest_boxes(w):
                grp = f["%s/%s" % (w["name"], rec["level"])]
                win, rep = ns.coarse_window(rec)
                assert tuple(grp.attrs["coarse_window"]) == win
                assert tuple(grp.attrs["coarse_repeat"]) == rep
            g = blocks[(w["name"], "LGR4")]
            inj = f["%s/LGR4/input" % w["name"]][0, ..., 0, 4]
            cols = {tuple(c[:2]) for c in np.argwhere(inj > 0)}
            ci, cj = ns.well_fine_column(w)
            assert cols == {(ci - g["start"][0], cj - g["start"][1])}


def test_nested_report_relative_l2(tmp_path):
    from ufno.training import nested_report
    _pairs(tmp_path, 1)
    target = str(tmp_path / "site_000000" / "target.h5")
    rows = nested_report.report(target, target)
    assert len(rows) == 9 and all(r["rel_l2"] == 0.0 for r in rows)
    doubled = str(tmp_path / "doubled.h5")
    with h5py.File(target, "r") as src, h5py.File(doubled, "w") as dst:
        dst.attrs["wells"] = src.attrs["wells"]
        def copy(name, obj):
            if isinstance(obj, h5py.Dataset) and name.split("/")[-1] in ("dP", "SG"):
                dst.create_dataset(name, data=2 * obj[()])
        src.visititems(copy)
    for r in nested_report.report(doubled, target):
        assert r["rel_l2"] == pytest.approx(1.0, rel=1e-6)
