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
  published/   the published-order set (make_published_fixture): models/, nine time-first
               (axis_order TXYZ) model files converted from published-style whole-model
               pickles (FNO4D.FNO4d) and __main__.TimeGaussianNormalizer pickles, with the
               normalisers the reference's chains use (published_normalizers); expected.h5,
               models/nested_reference.py's dP and SG chains (predict_full_sg.py step for
               step) in float64, stored as float32

Written alone (the other fixtures untouched):
    PYTHONPATH=python python3 -c "from ufno.conversion import nested_fixtures as n;
        n.make_nested_fixture('tests/data/nested')"

The geometry (1-based cells, as in a deck): GLOBAL cell sizes vary with their axis (a tensor
grid) and the top depth with the column. Well INJ1 at GLOBAL (3, 4), layers 1..2, 1.5e6 sm3/day;
INJ2 at (7, 8), layer 2, 9e5 sm3/day. Each well's LGR1 is the GLOBAL box I..I+1, J..J+1, K 1..2
refined 2 x 2 x 2 (coarse window: the box widened by 1 cell in x and y, repeat (1, 1, 2));
LGR2 the LGR1 box 1..2, 1..2, 1..4 refined 2 x 2 x 2 (window: all of LGR1, repeat (1, 1, 2));
LGR3 and LGR4 the parent's box 2..3, 2..3, 1..8 refined 2 x 2 x 1 (window: all of the parent,
repeat (1, 1, 1)). The well's point (the centre of its GLOBAL column) lies inside every level.
The injection channel is the reference's (injection_map): the column nearest the point (the lower
index on a tie) on every layer, on LGR4 only on the perforated layers, holding the surface rate
/ 2942777.68785957.
"""

import copy
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

WELLS = (  # name, I, J, K1, K2 (1-based GLOBAL), WCONINJE surface rate sm3/day
    ("INJ1", 3, 4, 1, 2, 1.5e6),
    ("INJ2", 7, 8, 2, 2, 9e5),
)
# The reference's injection map holds the surface rate (sm3/day) / INJECTION_RATE; the site
# file's `rate` attribute is the same rate in Mt/yr at CO2_SURFACE_DENSITY kg/sm3.
INJECTION_RATE = 2942777.68785957
CO2_SURFACE_DENSITY = 1.872
# Distances to the well's point within this many metres are ties (the lower index wins).
TIE_METRES = 1e-6


def rate_mt_per_year(surface_rate):
    return surface_rate * CO2_SURFACE_DENSITY * 365.25 / 1e9
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
    """The cell holding p; on an edge the lower index (benchmarks/nested_chain_bench.py)."""
    return int(np.searchsorted(edges, p, side="left")) - 1


def nearest_cell(centres, p):
    """The reference's argmin: the cell whose centre is nearest p, the lower index on a tie."""
    d = np.abs(np.asarray(centres, dtype=np.float64) - p)
    return int(np.flatnonzero(d <= d.min() + TIE_METRES)[0])


def injection_map(geo, level_name, wells, point_of):
    """The level's injection map (nx, ny, nz) as the reference's data code builds it: for each
    well of `wells` (all of them at GLOBAL, the level's own at LGR1..LGR4), the column whose cell
    centres are nearest the well's point in x and in y holds rate / INJECTION_RATE on every
    layer; at LGR4 only on the layers inside the well's perforated GLOBAL layers."""
    xc = 0.5 * (geo.xe[:-1] + geo.xe[1:])
    yc = 0.5 * (geo.ye[:-1] + geo.ye[1:])
    inj = np.zeros(geo.shape)
    for w in wells:
        _, _, _, k1, k2, rate = w
        px, py = point_of(w)
        a, b = nearest_cell(xc, px), nearest_cell(yc, py)
        layers = np.ones(geo.shape[2], dtype=bool)
        if level_name == "LGR4":
            layers = (geo.gk >= k1 - 1) & (geo.gk <= k2 - 1)
        inj[a, b, layers] = rate / INJECTION_RATE
    return inj


def channels(geo, level_name, wells, perm, times):
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
    inj = injection_map(geo, level_name, wells, lambda w: well_point(global_geometry(), w))
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
            x, cells = channels(geo, lv, [w], perm, times)
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
    """The wells' attributes; `wells`: (name, i, j, k1, k2, surface rate in sm3/day) each."""
    for name, i, j, k1, k2, rate in wells:
        g = f[name]
        for k, v in (("i", i), ("j", j), ("k1", k1), ("k2", k2)):
            g.attrs.create(k, np.array([v], dtype=np.int32))
        g.attrs.create("rate", np.float64(rate_mt_per_year(rate)))
        g.attrs.create("surface_rate", np.float64(rate))


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


# The published-order model set (published/): time-first networks, the published normaliser
# objects, the reference's use of them (models/nested_reference.py).
PUBLISHED_GLOBAL_MODES = (2, 2, 2, 2)   # T, X, Y, Z; Z is the half-spectrum axis
PUBLISHED_LGR_MODES = (2, 1, 2, 2)
PUBLISHED_PADDING = (2, 3, 4, 5)        # T, X, Y, Z
# A prediction's spread over voxels and times against its RMS, at least this for every model's
# raw output: the networks are not dominated by their biases (PyTorch's default initialisation
# of an FNO4d gives about 0.01, under which an error of 1e-3 of the varying part hides below a
# 1e-5 bound on the whole).
MIN_SPREAD = 0.2


def _time_normalizer(gen, mean, spread):
    """A TimeGaussianNormalizer as the published files hold one: mean and std of shape
    (1, T, 1, 1, 1, 1), float32, the std in spread x [0.5, 1.5)."""
    m = mean + 0.3 * spread * torch.randn((1, T, 1, 1, 1, 1), generator=gen)
    s = spread * (0.5 + torch.rand((1, T, 1, 1, 1, 1), generator=gen))
    return fno4d_torch.TimeGaussianNormalizer(m, s)


def spread(y):
    """std / RMS of a prediction over all its values."""
    y = y.double()
    return float(y.std() / y.pow(2).mean().sqrt())


def published_model_set(site, seed):
    """The published-order set: {level: FNO4d} per variable (time-first, float32 weights from
    init_random_weights) and the NORMALIZER_DICT {'input'|'output': {level: normaliser}} of the
    five dP levels (TimeGaussianNormalizer objects)."""
    nets = {"dP": {}, "SG": {}}
    norms = {"input": {}, "output": {}}
    for n, (lv, var) in enumerate(chain.CHAIN_MODELS):
        gen = torch.Generator().manual_seed(seed + n)
        glob = lv == "GLOBAL"
        model = fno4d_torch.FNO4d(width=WIDTH,
                                  modes=PUBLISHED_GLOBAL_MODES if glob else PUBLISHED_LGR_MODES,
                                  in_channels=8 if glob else 9, padding=PUBLISHED_PADDING)
        fno4d_torch.init_random_weights(model, gen, SPECTRAL_GAINS)
        nets[var][lv] = model.eval()
        if var == "dP":
            # GLOBAL's input normaliser encodes its last channel, permeability (k / 100).
            norms["input"][lv] = _time_normalizer(gen, *((1.0, 0.5) if glob else SCALES["dP"]))
            norms["output"][lv] = _time_normalizer(gen, *SCALES["dP"])
    return nets, norms


def published_normalizers(norms, lv, var):
    """The (input, output) normalisers a model file of the published set holds, as the
    reference's chains use them: dP levels both of their own; LGR1 SG LGR1 dP's input
    normaliser and no output normaliser; LGR2..LGR4 SG none."""
    if var == "dP":
        return norms["input"][lv], norms["output"][lv]
    return (norms["input"]["LGR1"] if lv == "LGR1" else None), None


def make_published_fixture(out_dir, site, seed, check=True):
    """published/models/ (the nine models converted with --axis-order TXYZ from published-style
    whole-model checkpoints and __main__.TimeGaussianNormalizer pickles) and
    published/expected.h5 (models/nested_reference.py's chains in float64)."""
    import tempfile
    from ufno.models import nested_reference as ref
    models_dir = os.path.join(out_dir, "models")
    os.makedirs(models_dir, exist_ok=True)
    nets, norms = published_model_set(site, seed)
    with tempfile.TemporaryDirectory(prefix="ufno_published_") as tmp:
        pickles = {}
        for kind in ("input", "output"):
            for lv, nz in norms[kind].items():
                path = os.path.join(tmp, "%s_normalizer_%s_DP_val.pickle" % (kind, lv))
                fno4d_torch.save_normalizer_pickle(nz, path, use_torch_save=False,
                                                   module="__main__")
                pickles[id(nz)] = path
        for lv, var in chain.CHAIN_MODELS:
            stem = "%s_%s" % (lv, var)
            ckpt = os.path.join(tmp, "FNO4D-%s-%s.pt" % (lv, var.upper()))
            fno4d_torch.save_as_published_pickle(nets[var][lv], ckpt)
            n_in, n_out = published_normalizers(norms, lv, var)
            level = site.levels["GLOBAL"] if lv == "GLOBAL" else site.level(site.wells[0], lv)
            grid = (T,) + tuple(level.shape)
            ufno_convert.convert(ckpt, os.path.join(models_dir, stem + ".h5"), var, grid,
                                 PUBLISHED_PADDING, source=stem + ".pt",
                                 input_normalizer=None if n_in is None else pickles[id(n_in)],
                                 output_normalizer=None if n_out is None else pickles[id(n_out)],
                                 level=lv, axis_order="TXYZ")
    # The reference's chains in float64 from the float32 weights, normalisers and inputs.
    inputs = ref.input_dict(site, torch.float64)
    preds = {}
    for var in chain.VARIABLES:
        nets64 = {lv: _with_channel(fno4d_torch.to_float64(copy.deepcopy(m)))
                  for lv, m in nets[var].items()}
        if var == "SG":
            nets64["GLOBAL"] = _with_channel(
                fno4d_torch.to_float64(copy.deepcopy(nets["dP"]["GLOBAL"])))
        PRED = ref.predict_full(site, inputs, nets64, norms, var)
        ref.as_chain_predictions(site, PRED, var, preds)
    chain.write_prediction(os.path.join(out_dir, "expected.h5"), site, preds, "../site.h5",
                           "models", "ufno.nested_reference (PyTorch, float64)")
    if check:
        worst = 0.0
        for key, dtype in (("float64", torch.float64), ("float32", torch.float32)):
            mine = chain.run_chain(site, chain.load_models(models_dir, site, dtype), dtype)
            for k, v in preds.items():
                err = float((mine[k].double() - v).norm() / v.norm())
                if key == "float64" and err > 1e-10:
                    raise SystemExit("make_fixtures: published set: the chain of the converted"
                                     " models differs from the reference's by %.2e at %s %s"
                                     % (err, k[0], k[1]))
                worst = max(worst, err) if key == "float32" else worst
        raw = min(spread(fno4d_torch.to_float64(copy.deepcopy(m))(
            _probe(site, lv, m))) for var in chain.VARIABLES for lv, m in nets[var].items())
        decoded = min(spread(v) for v in preds.values())
        if raw < MIN_SPREAD or decoded < MIN_SPREAD:
            raise SystemExit("make_fixtures: published set: a network is dominated by its bias"
                             " (spread %.3f raw, %.3f decoded)" % (raw, decoded))
        print("  nested/published/: float32 chain rel. L2 %.1e; spread >= %.2f raw, %.2f"
              " decoded" % (worst, raw, decoded))
    return preds


def _with_channel(net):
    """The network as the reference's FNO4d returns its output: (B, T, X, Y, Z, 1)."""
    return lambda x: net(x)[..., None]


def _probe(site, lv, net):
    """The level's own channels with a unit-scale last channel, time-first, float64: the raw
    network's input for the spread check."""
    level = site.levels["GLOBAL"] if lv == "GLOBAL" else site.level(site.wells[0], lv)
    x = torch.from_numpy(site.input(level)).double()
    if lv != "GLOBAL":
        gen = torch.Generator().manual_seed(7)
        x = torch.cat([x, torch.randn(x.shape[:-1] + (1,), generator=gen).double()], dim=-1)
    return x.permute(0, 4, 1, 2, 3, 5)


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
    make_published_fixture(os.path.join(out_dir, "published"), site, seed + 200, check)
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
    pub = os.path.join(out_dir, "published")
    if os.path.isdir(pub):
        files += [os.path.join("published", "expected.h5")]
        files += sorted(os.path.join("published", "models", n)
                        for n in os.listdir(os.path.join(pub, "models")))
    return files
