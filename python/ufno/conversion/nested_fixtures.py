"""The nested chain's fixture, tests/data/nested/ (deterministic; `python3 -m ufno.make_fixtures`
writes it with the other fixtures):

  site.h5      a synthetic two-well site in the site format of docs/nested-sites.md, written
               directly (no deck): GLOBAL 10 x 12 x 2, per well LGR1 4 x 4 x 4 and LGR2..LGR4
               4 x 4 x 8, T = 24 report times (nested FNO's), the eight channels built as the
               site format says (a constant brine density stands in for IAPWS-97)
  models/      the nine FNO4D model files (ufno.convert with --level), random weights
               (fno4d.init_random_weights), width 4, padding (2, 3, 4, 5):
                 GLOBAL_dP.h5            8 channels, modes GLOBAL_MODES, output normaliser only
                 LGRk_dP.h5, LGRk_SG.h5  9 channels, modes LGR_MODES, input and output
                                         normalisers of the level's grid
  expected.h5  the prediction file of the PyTorch chain (models/nested_chain.py), computed in
               float64 from the float32 weights and inputs and stored as float32

The geometry (1-based cells, as in a deck): GLOBAL cell sizes vary with their axis (a tensor
grid) and the top depth with the column. Well INJ1 at GLOBAL (3, 4), layers 1..2, 1.0 Mt/yr;
INJ2 at (7, 8), layer 2, 0.6 Mt/yr. Each well's LGR1 is the GLOBAL box I..I+1, J..J+1, K 1..2
refined 2 x 2 x 2 (coarse window: the box widened by 1 cell in x and y, repeat (1, 1, 2));
LGR2 the LGR1 box 1..2, 1..2, 1..4 refined 2 x 2 x 2 (window: all of LGR1, repeat (1, 1, 2));
LGR3 and LGR4 the parent's box 2..3, 2..3, 1..8 refined 2 x 2 x 1 (window: all of the parent,
repeat (1, 1, 1)). The well's point (the centre of its GLOBAL column) lies inside every level;
on LGR4 it falls on a cell edge, so the lower index holds the injection.
"""

import os

import h5py
import numpy as np
import torch

from ufno.conversion import convert as ufno_convert
from ufno.models import fno4d as fno4d_torch
from ufno.models import nested_chain as chain

SEED = 20230901
T = 24
GLOBAL_SHAPE = (10, 12, 2)
WIDTH = 4
GLOBAL_MODES = (3, 2, 1, 2)
LGR_MODES = (2, 1, 3, 2)
# Smaller than the reference's (8, 16, 16, 8) (any padding converts and runs), different per
# axis, with odd and even padded extents: GLOBAL 14 x 18 x 10 x 34, LGR1 8 x 10 x 12 x 34, LGR2..4
# 8 x 10 x 16 x 34.
PADDING = (2, 3, 4, 5)
# The layers' spectral gains (fno4d.init_random_weights) for this padding: the first layer's input
# fills most of the padded grid, unlike under the reference padding.
SPECTRAL_GAINS = (3.0, 2.0, 1.5, 1.5)
P_DATUM = 200.0          # bar, at the datum depth z_datum = (p_datum - 1.01325) / 9.8 x 100
TEMPERATURE = 60.0       # deg C
RHO = 1000.0             # kg/m3, standing in for the IAPWS-97 density at (T, p_datum)

WELLS = (  # name, I, J, K1, K2 (1-based GLOBAL), rate Mt/yr
    ("INJ1", 3, 4, 1, 2, 1.0),
    ("INJ2", 7, 8, 2, 2, 0.6),
)
# Per LGR level: the box in the parent's cells relative to the well (LGR1: I..I+1 from the
# well's column; deeper levels: fixed cells of the parent) and the refinement.
LGR1_BOX = (0, 1, 0, 1, 1, 2)          # I + 0 .. I + 1, J + 0 .. J + 1, K 1..2
INNER_BOXES = {"LGR2": ((1, 2, 1, 2, 1, 4), (2, 2, 2)),
               "LGR3": ((2, 3, 2, 3, 1, 8), (2, 2, 1)),
               "LGR4": ((2, 3, 2, 3, 1, 8), (2, 2, 1))}


def report_times():
    """nested FNO's 24 report times, t_k = cumulative sum of floor(10 x 1.2531^k) days,
    k = 1..24 (12 .. 11064 days)."""
    return np.cumsum([np.floor(10 * 1.2531 ** k) for k in range(1, T + 1)]).astype(np.float64)


class Geometry:
    """A level's tensor grid: edges xe, ye (metres) and ze (metres below the column's top), and
    the GLOBAL cell of each cell along each axis (gi, gj, gk)."""

    def __init__(self, xe, ye, ze, gi, gj, gk):
        self.xe, self.ye, self.ze = xe, ye, ze
        self.gi, self.gj, self.gk = gi, gj, gk

    @property
    def shape(self):
        return (len(self.xe) - 1, len(self.ye) - 1, len(self.ze) - 1)

    def refine(self, box, refinement):
        """The child of the box (I1, I2, J1, J2, K1, K2; 1-based, in this level's cells), each
        cell split evenly `refinement` times per axis."""
        out = []
        for a, (edges, g) in enumerate(((self.xe, self.gi), (self.ye, self.gj),
                                        (self.ze, self.gk))):
            lo, hi, r = box[2 * a] - 1, box[2 * a + 1], refinement[a]
            e = [edges[lo]]
            for c in range(lo, hi):
                e += list(edges[c] + (edges[c + 1] - edges[c]) * np.arange(1, r + 1) / r)
            out.append((np.array(e), np.repeat(g[lo:hi], r)))
        (xe, gi), (ye, gj), (ze, gk) = out
        return Geometry(xe, ye, ze, gi, gj, gk)


def global_geometry():
    nx, ny, nz = GLOBAL_SHAPE
    dx = 800.0 + 50.0 * np.arange(nx)
    dy = 900.0 + 40.0 * np.arange(ny)
    dz = np.array([15.0, 25.0])
    edges = lambda d: np.concatenate([[0.0], np.cumsum(d)])  # noqa: E731
    return Geometry(edges(dx), edges(dy), edges(dz), np.arange(nx), np.arange(ny),
                    np.arange(nz))


def tops():
    """Depth of the top of layer 1 per GLOBAL column (a gentle dip), metres."""
    nx, ny, _ = GLOBAL_SHAPE
    return 1950.0 + 3.0 * np.arange(nx)[:, None] + 2.0 * np.arange(ny)[None, :]


def permeability(gen):
    """mD per GLOBAL cell, log-normal."""
    return np.exp(np.log(80.0) + 0.8 * gen.standard_normal(GLOBAL_SHAPE))


def well_point(g, well):
    """The well's point: the centre of its GLOBAL column."""
    _, i, j, _, _, _ = well
    return 0.5 * (g.xe[i - 1] + g.xe[i]), 0.5 * (g.ye[j - 1] + g.ye[j])


def cell_of(edges, p):
    """The cell holding p; on an edge the lower index."""
    return int(np.searchsorted(edges, p, side="left")) - 1


def channels(geo, level_name, wells, perm, times, point=None):
    """The level's eight channels, float32 (1, nx, ny, nz, T, 8), and the cell centres
    (cell_x, cell_y, cell_depth) float64 (nx, ny, nz)."""
    nx, ny, nz = geo.shape
    xc = 0.5 * (geo.xe[:-1] + geo.xe[1:])
    yc = 0.5 * (geo.ye[:-1] + geo.ye[1:])
    top = tops()[np.ix_(geo.gi, geo.gj)][:, :, None]                  # (nx, ny, 1)
    cell_top = top + geo.ze[:-1][None, None, :]
    cell_depth = top + (0.5 * (geo.ze[:-1] + geo.ze[1:]))[None, None, :]
    cell_x = np.broadcast_to(xc[:, None, None], (nx, ny, nz)).astype(np.float64)
    cell_y = np.broadcast_to(yc[None, :, None], (nx, ny, nz)).astype(np.float64)
    inj = np.zeros((nx, ny, nz))
    for w in wells:
        _, i, j, k1, k2, rate = w
        in_perf = (geo.gk >= k1 - 1) & (geo.gk <= k2 - 1)
        if level_name == "LGR4":
            px, py = point
            a, b = cell_of(geo.xe, px), cell_of(geo.ye, py)
            inj[a, b, in_perf] = rate
        else:
            sel = np.ix_(geo.gi == i - 1, geo.gj == j - 1, in_perf)
            inj[sel] = rate
    z_datum = (P_DATUM - 1.01325) / 9.8 * 100.0
    p = P_DATUM + (cell_depth - z_datum) * 9.8 * RHO / 1e5
    k = perm[np.ix_(geo.gi, geo.gj, geo.gk)]
    static = [cell_x / 160000.0, cell_y / 160000.0, (cell_top - 2000.0) / 2000.0, None, inj,
              p / 172.0, np.full((nx, ny, nz), TEMPERATURE / 70.0), k / 100.0]
    x = np.empty((1, nx, ny, nz, T, 8), dtype=np.float32)
    for c, v in enumerate(static):
        if v is None:
            x[0, ..., c] = (times / 10950.0)[None, None, None, :]
        else:
            x[0, ..., c] = np.asarray(v)[..., None]
    return x, {"cell_x": cell_x, "cell_y": cell_y, "cell_depth": cell_depth}


def site_levels(perm, times):
    """[(group, level name, well, Geometry, attrs, input, cells)] in the site's order."""
    g0 = global_geometry()
    x, cells = channels(g0, "GLOBAL", WELLS, perm, times)
    out = [("GLOBAL", "GLOBAL", None, g0, {}, x, cells)]
    for w in WELLS:
        name, i, j = w[0], w[1], w[2]
        point = well_point(g0, w)
        box = (i + LGR1_BOX[0], i + LGR1_BOX[1], j + LGR1_BOX[2], j + LGR1_BOX[3],
               LGR1_BOX[4], LGR1_BOX[5])
        parent = g0
        for k, lv in enumerate(chain.LGR_LEVELS, start=1):
            if lv == "LGR1":
                refinement = (2, 2, 2)
            else:
                box, refinement = INNER_BOXES[lv]
            geo = parent.refine(box, refinement)
            nx, ny, nz = geo.shape
            if lv == "LGR1":
                wx = (nx - (box[1] - box[0] + 1)) // 2
                wy = (ny - (box[3] - box[2] + 1)) // 2
                window = (box[0] - 1 - wx, box[1] + wx, box[2] - 1 - wy, box[3] + wy,
                          box[4] - 1, box[5])
            else:
                window = (0,) + parent.shape[:1] + (0,) + parent.shape[1:2] + (0,) \
                    + parent.shape[2:]
            repeat = tuple(n // (window[2 * a + 1] - window[2 * a])
                           for a, n in enumerate(geo.shape))
            attrs = {"carfin": "%s_L%d" % (name, k), "box": box, "refinement": refinement,
                     "coarse_window": window, "coarse_repeat": repeat}
            x, cells = channels(geo, lv, [w], perm, times, point)
            out.append(("%s/%s" % (name, lv), lv, name, geo, attrs, x, cells))
            parent = geo
    return out


def _s(v):
    return np.bytes_(v.encode("ascii"))


def write_site_header(f, well_names, times, source, producer):
    """A site file's root attributes and report times (docs/nested-sites.md, "The site file")."""
    f.attrs.create("format", _s(chain.SITE_FORMAT))
    f.attrs.create("format_version", np.array([1], dtype=np.int32))
    f.attrs.create("source", _s(source))
    f.attrs.create("wells", _s(" ".join(well_names)))
    f.attrs.create("producer", _s(producer))
    f.create_dataset("times_days", data=times, track_times=False)


def write_site_level(f, group, lv, attrs, x, cells, compress):
    """One level's group: its input (gzip-compressed, one chunk per channel, when `compress`: all
    but the time channel are constant along T), cell centres and structure attributes."""
    g = f.require_group(group)
    chunking = dict(chunks=x.shape[:5] + (1,), compression="gzip", compression_opts=9,
                    shuffle=True) if compress else {}
    d = g.create_dataset("input", data=x, track_times=False, **chunking)
    d.attrs.create("units", _s("1"))
    for k in ("cell_x", "cell_y", "cell_depth"):
        c = g.create_dataset(k, data=cells[k], track_times=False)
        c.attrs.create("units", _s("m"))
    g.attrs.create("level", _s(lv))
    if lv != "GLOBAL":
        g.attrs.create("carfin", _s(attrs["carfin"]))
        for k in ("box", "refinement", "coarse_window", "coarse_repeat"):
            g.attrs.create(k, np.array(attrs[k], dtype=np.int32))


def write_site_wells(f, wells):
    """The wells' attributes; `wells`: (name, i, j, k1, k2, rate in Mt/yr) each."""
    for name, i, j, k1, k2, rate in wells:
        g = f[name]
        for k, v in (("i", i), ("j", j), ("k1", k1), ("k2", k2)):
            g.attrs.create(k, np.array([v], dtype=np.int32))
        g.attrs.create("rate", np.float64(rate))


def write_site(path, levels, times):
    """The fixture's site file, inputs compressed, deterministic."""
    tmp = path + ".tmp"
    with h5py.File(tmp, "w", libver="earliest") as f:
        write_site_header(f, [w[0] for w in WELLS], times, "synthetic (ufno.make_fixtures)",
                          "ufno.make_fixtures")
        for group, lv, _, _, attrs, x, cells in levels:
            write_site_level(f, group, lv, attrs, x, cells, compress=True)
        write_site_wells(f, WELLS)
    os.replace(tmp, path)


def _normalizer(shape, gen, mean, spread):
    """A UnitGaussianNormalizer of one sample's shape: mean around `mean`, std in
    spread x [0.5, 1.5)."""
    m = mean + 0.3 * spread * torch.randn(shape, generator=gen)
    s = spread * (0.5 + torch.rand(shape, generator=gen))
    return fno4d_torch.UnitGaussianNormalizer(m, s, fno4d_torch.NORMALIZER_EPS)


# Physical scales of the variables (mean, spread) for the normalisers.
SCALES = {"dP": (3.0, 2.0), "SG": (0.2, 0.1)}


def write_models(models_dir, site_levels_, seed):
    """The nine model files through the converter (ufno_convert.convert with level)."""
    os.makedirs(models_dir, exist_ok=True)
    shapes = {lv: geo.shape for _, lv, _, geo, _, _, _ in site_levels_}
    for n, (lv, var) in enumerate(chain.CHAIN_MODELS):
        gen = torch.Generator().manual_seed(seed + n)
        torch.manual_seed(seed + n)
        glob = lv == "GLOBAL"
        model = fno4d_torch.FNO4d(width=WIDTH, modes=GLOBAL_MODES if glob else LGR_MODES,
                                  in_channels=8 if glob else 9, padding=PADDING)
        fno4d_torch.init_random_weights(model, gen, SPECTRAL_GAINS)
        grid = tuple(shapes[lv]) + (T,)
        # The coarse channel is the source's variable: GLOBAL dP for both LGR1 models.
        src_var = "dP" if lv == "LGR1" else var
        n_in = None if glob else _normalizer(grid, gen, *SCALES[src_var])
        n_out = _normalizer(grid, gen, *SCALES[var])
        stem = "%s_%s" % (lv, var)
        ufno_convert.convert(None, os.path.join(models_dir, stem + ".h5"), var, grid, PADDING,
                             state_dict=model.state_dict(), source=stem + ".pt",
                             input_normalizer=n_in, output_normalizer=n_out, level=lv)


def make_nested_fixture(out_dir, seed=SEED, check=True):
    """Write site.h5, models/ and expected.h5 into out_dir (tests/data/nested)."""
    os.makedirs(out_dir, exist_ok=True)
    times = report_times()
    perm = permeability(np.random.default_rng(seed))
    levels = site_levels(perm, times)
    site_path = os.path.join(out_dir, "site.h5")
    write_site(site_path, levels, times)
    models_dir = os.path.join(out_dir, "models")
    write_models(models_dir, levels, seed + 100)
    site, preds = chain.predict_site(site_path, models_dir, os.path.join(out_dir, "expected.h5"),
                                     torch.float64, source="site.h5", models_name="models")
    if check:
        models32 = chain.load_models(models_dir, site, torch.float32)
        preds32 = chain.run_chain(site, models32, torch.float32)
        worst = 0.0
        for key, ref in preds.items():
            ref = ref.numpy()
            err = np.abs(preds32[key].double().numpy() - ref).max() / max(np.abs(ref).max(), 1e-30)
            worst = max(worst, err)
        if worst > 1e-4:
            raise SystemExit("make_fixtures: nested chain: float32 and float64 differ by %.2e"
                             % worst)
        print("  nested/: float32 chain rel. error %.1e; %s" % (worst, ", ".join(
            "%s %s [%.3g, %.3g]" % (k[0], k[1], v.min().item(), v.max().item())
            for k, v in sorted(preds.items()) if k[0].startswith(("GLOBAL", "INJ1/LGR4")))))
    return site, preds


def fixture_files(out_dir):
    """The fixture's files, relative to out_dir, sorted."""
    files = ["site.h5", "expected.h5"]
    files += sorted(os.path.join("models", n) for n in os.listdir(os.path.join(out_dir, "models")))
    return files
