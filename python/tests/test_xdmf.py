#!/usr/bin/python3
"""The XDMF descriptions ufno_predict writes beside its predictions, read by ParaView's own XDMF
reader (Debian's python3-paraview): the report times in days, the geometry in metres (the radial
case as its wedge, checked against the case's DR and DZ; each nested level at its cell centres in
the site's frame) and every value, each compared with the HDF5 file through h5py.

Run: /usr/bin/python3 -m pytest python/tests/test_xdmf.py. Skipped without ParaView's Python
modules or build/apps/ufno_predict ($UFNO_PREDICT).
"""

import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
from ufno.data import cases as uc  # noqa: E402

PREDICT = os.environ.get("UFNO_PREDICT", os.path.join(REPO, "build", "apps", "ufno_predict"))
DATA = os.path.join(REPO, "tests", "data")
pv = pytest.importorskip("paraview.simple")
from paraview import servermanager as sm  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

if not os.access(PREDICT, os.X_OK):
    pytest.skip("no build/apps/ufno_predict", allow_module_level=True)


def predict(*args):
    r = subprocess.run([PREDICT, *args, "--threads", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def blocks(xmf, t):
    """The reader's grids at report time t (days): {name: vtkStructuredGrid} (the reader suffixes
    a grid's name with its step, "GLOBAL[3]")."""
    reader = pv.XDMFReader(FileNames=[os.path.abspath(xmf)])
    reader.UpdatePipeline(t)
    data = sm.Fetch(reader)
    out, it = {}, data.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        name = it.GetCurrentMetaData().Get(vtkCompositeDataSet.NAME())
        out[name.split("[")[0]] = it.GetCurrentDataObject()
        it.GoToNextItem()
    return out, list(reader.TimestepValues)


def points(grid):
    return vtk_to_numpy(grid.GetPoints().GetData())


def small_case(path):
    c = uc.sample_case(1, 21)
    for k in ("PERMX", "PERMZ", "PORO"):
        c[k] = c[k][:16, :24].copy()
    c["DR"], c["DZ"], c["PERF"] = c["DR"][:24], c["DZ"][:16], c["PERF"][:16].copy()
    c["TIMES"] = c["TIMES"][:8]
    c["PERMX"][13:] = c["PERMZ"][13:] = c["PORO"][13:] = 0
    c["PERF"][:] = 0
    c["PERF"][3:7] = 1
    uc.write_case_h5(path, c)
    return c


def test_radial_prediction_opens_as_its_wedge(tmp_path):
    case = small_case(str(tmp_path / "case.h5"))
    out = tmp_path / "pred.h5"
    predict("--model", os.path.join(DATA, "fno_small.h5"), "--model",
            os.path.join(DATA, "ufno_small.h5"), "--case", str(tmp_path / "case.h5"),
            "--out", str(out))
    xmf = tmp_path / "pred.xmf"
    assert xmf.exists() and "pred.h5:/SG" in xmf.read_text()
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no temporary left
    with h5py.File(out, "r") as f:
        times = f["TIMES"][()]
        sg, dp = f["SG"][()], f["dP"][()]
    # The wedge's edges from the case alone: radii from the wellbore wall (0.1 m) outwards, the
    # elevation 0 at the top and minus the layers' thicknesses below.
    r_edges = 0.1 + np.concatenate([[0], np.cumsum(case["DR"])])
    z_edges = -np.concatenate([[0], np.cumsum(case["DZ"])])
    for t in (0, 3, len(times) - 1):
        grids, reader_times = blocks(xmf, float(times[t]))
        np.testing.assert_allclose(reader_times, times, rtol=1e-6)
        (g,) = grids.values()
        dims = [0, 0, 0]
        g.GetDimensions(dims)
        assert dims == [2, 25, 17]  # VTK lists the fastest axis first
        p = points(g).reshape(17, 25, 2, 3)
        np.testing.assert_allclose(np.hypot(p[..., 0], p[..., 1]),
                                   np.broadcast_to(r_edges[None, :, None], (17, 25, 2)), rtol=1e-9)
        np.testing.assert_allclose(p[..., 2], np.broadcast_to(z_edges[:, None, None], (17, 25, 2)),
                                   atol=1e-9)
        angle = np.degrees(np.arctan2(p[..., 1], p[..., 0]))
        np.testing.assert_allclose(angle[..., 1] - angle[..., 0], 10.0, atol=1e-9)  # the decks' wedge
        for name, want in (("SG", sg), ("dP", dp)):
            got = vtk_to_numpy(g.GetCellData().GetArray(name))
            np.testing.assert_array_equal(got, want[0, t].ravel())


def test_nested_prediction_overlays_its_levels(tmp_path):
    out = tmp_path / "site_pred.h5"
    predict("--case", os.path.join(DATA, "nested", "site.h5"), "--models",
            os.path.join(DATA, "nested", "models"), "--out", str(out))
    xmf = tmp_path / "site_pred.xmf"
    with h5py.File(out, "r") as f:
        times = f["times_days"][()]
        levels = ["GLOBAL"] + [w + "/" + k for w in f if w != "GLOBAL" and isinstance(f[w], h5py.Group)
                               for k in f[w]]
        assert len(levels) == 9
        for t in (0, len(times) - 1):
            grids, reader_times = blocks(xmf, float(times[t]))
            np.testing.assert_allclose(reader_times, times, rtol=1e-9)
            assert sorted(grids) == sorted(levels)
            for name in levels:
                g, h = grids[name], f[name]
                want = np.stack([h["cell_x"][()], h["cell_y"][()], -h["cell_depth"][()]], -1)
                np.testing.assert_allclose(points(g), want.reshape(-1, 3), rtol=1e-12)
                fields = ["dP"] + (["SG"] if name != "GLOBAL" else [])
                for v in fields:
                    got = vtk_to_numpy(g.GetPointData().GetArray(v))
                    np.testing.assert_array_equal(got, h[v][t].ravel())
            # The refined levels lie inside GLOBAL: they overlay it, not beside it.
            gb = grids["GLOBAL"].GetBounds()
            for name in levels[1:]:
                b = grids[name].GetBounds()
                assert gb[0] <= b[0] and b[1] <= gb[1] and gb[2] <= b[2] and b[3] <= gb[3], name


def test_every_batch_output_has_its_description(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    small_case(str(cases / "a.h5"))
    small_case(str(cases / "b.h5"))
    out = tmp_path / "out"
    predict("--model", os.path.join(DATA, "fno_small.h5"), "--cases", str(cases), "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["a.h5", "a.xmf", "b.h5", "b.xmf"]
    with h5py.File(out / "b.h5", "r") as f:
        times, sg = f["TIMES"][()], f["SG"][()]
    grids, _ = blocks(out / "b.xmf", float(times[-1]))
    (g,) = grids.values()
    np.testing.assert_array_equal(vtk_to_numpy(g.GetCellData().GetArray("SG")), sg[0, -1].ravel())


def test_the_screenshot_command_refuses_bad_input_before_drawing(tmp_path):
    """python -m ufno.xdmf_screenshot: a picture onto the prediction or its description, a huge
    or tiny size, a NaN scale or time, an unknown field: one line, non-zero exit, nothing
    written or changed."""
    xmf = tmp_path / "p.xmf"
    h5 = tmp_path / "p.h5"
    xmf.write_text("<Xdmf/>")
    h5.write_bytes(b"not read")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    for args, say in (([str(h5)], "png"), ([str(xmf)], "png"),
                      ([str(tmp_path / "o.png"), "--size", "100000", "100000"], "--size"),
                      ([str(tmp_path / "o.png"), "--size", "1", "800"], "--size"),
                      ([str(tmp_path / "o.png"), "--z-scale", "nan"], "--z-scale"),
                      ([str(tmp_path / "o.png"), "--time", "inf"], "--time"),
                      ([str(tmp_path / "o.png"), "--field", "PRESSURE"], "--field")):
        before = sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir())
        r = subprocess.run([sys.executable, "-m", "ufno.xdmf_screenshot", str(xmf), *args],
                           capture_output=True, text=True, env=env, timeout=60)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode != 0 and len(lines) == 1 and say in lines[0], (args, r.stderr)
        assert sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir()) == before
