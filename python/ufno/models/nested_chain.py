"""The nested chain of nested FNO (Wen et al. 2023) in plain PyTorch: GLOBAL dP, then per well
LGR1..LGR4 for dP and SG, each level fed its source level's prediction (docs/nested-sites.md,
"The chain"). Written from the facts of that document; `ufno_predict --case SITE.h5 --models DIR`
is the C++ twin, and this module is its reference (the fixtures in tests/data/nested/) and the
"PyTorch chain" a benchmark times (`python3 -m ufno.nested_chain`).

    site = read_site("SITE.h5")                  # the site file of ufno_import
    models = load_models("DIR", site)            # the nine FNO4D model files, checked
    preds = run_chain(site, models)              # {(level path, variable): (nx, ny, nz, T)}
    write_prediction("PRED.h5", site, preds, ...)

Errors are ChainError: one line, `nested_chain: <file>: <what>`.
"""

import os
import time

import h5py
import numpy as np
import torch

from ufno.conversion import model_file

SITE_FORMAT = "ufno-nested-site"
PREDICTION_FORMAT = "ufno-nested-prediction"
LGR_LEVELS = ("LGR1", "LGR2", "LGR3", "LGR4")
LEVELS = ("GLOBAL",) + LGR_LEVELS
SITE_CHANNELS = 8      # a level's own channels in the site file
VARIABLES = ("dP", "SG")
UNITS = {"dP": "bar", "SG": "1"}
# The nine models of a chain: (level, variable).
CHAIN_MODELS = (("GLOBAL", "dP"),) + tuple((lv, v) for lv in LGR_LEVELS for v in VARIABLES)


class ChainError(Exception):
    """An error to report as one line `nested_chain: <file>: <what>`."""

    def __init__(self, file, what):
        super().__init__(what)
        self.file, self.what = file, what

    def line(self):
        return "nested_chain: %s: %s" % (self.file, " ".join(str(self.what).split()))


def _str(v):
    return v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)


# ---------------------------------------------------------------------------------------------
# The site file

class Level:
    """One level of a site: `path` the group ("GLOBAL" or "<well>/LGRk"), `name` (GLOBAL,
    LGR1..LGR4), `well` (None for GLOBAL), `shape` (nx, ny, nz), and for an LGR level its
    `coarse_window` (i0, i1, j0, j1, k0, k1) and `coarse_repeat` (rx, ry, rz)."""

    def __init__(self, path, name, well, shape, coarse_window=None, coarse_repeat=None):
        self.path, self.name, self.well, self.shape = path, name, well, tuple(shape)
        self.coarse_window = None if coarse_window is None else tuple(int(v) for v in coarse_window)
        self.coarse_repeat = None if coarse_repeat is None else tuple(int(v) for v in coarse_repeat)

    def __repr__(self):
        return "Level(%s, %s)" % (self.path, self.shape)


class Site:
    """A site file's layout (read_site): `path`, `times_days`, `wells` (names, in the file's
    order), `levels` {group path: Level}. Inputs and cell coordinates are read on demand."""

    def __init__(self, path, times_days, wells, levels):
        self.path, self.times_days, self.wells, self.levels = path, times_days, wells, levels

    @property
    def T(self):
        return len(self.times_days)

    def level(self, well, name):
        return self.levels["GLOBAL" if name == "GLOBAL" else "%s/%s" % (well, name)]

    def source_of(self, level):
        """The level whose prediction feeds `level`'s coarse channel (GLOBAL for LGR1)."""
        k = LGR_LEVELS.index(level.name)
        return self.levels["GLOBAL"] if k == 0 else self.level(level.well, LGR_LEVELS[k - 1])

    def input(self, level):
        """The level's own channels, float32 (1, nx, ny, nz, T, 8)."""
        with h5py.File(self.path, "r") as f:
            return f[level.path + "/input"][()]

    def cells(self, level):
        """{cell_x, cell_y, cell_depth}: float64 (nx, ny, nz), metres."""
        with h5py.File(self.path, "r") as f:
            return {k: f[level.path + "/" + k][()] for k in ("cell_x", "cell_y", "cell_depth")}


def read_site(path):
    """Read and check a site file's layout (docs/nested-sites.md, "The site file")."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise ChainError(name, "no such site file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ChainError(name, "not an HDF5 file (%s)" % e)
    with f:
        if _str(f.attrs.get("format", "")) != SITE_FORMAT:
            raise ChainError(name, "not a site file (format is not %r)" % SITE_FORMAT)
        if "times_days" not in f:
            raise ChainError(name, "no /times_days")
        times = np.asarray(f["times_days"][()], dtype=np.float64).reshape(-1)
        wells = _str(f.attrs.get("wells", "")).split()
        if not wells:
            raise ChainError(name, "no wells (the root attribute `wells`)")
        levels = {}

        def read_level(group, lname, well):
            if group not in f or "input" not in f[group]:
                raise ChainError(name, "no %s/input" % group)
            g = f[group]
            shape = g["input"].shape
            if len(shape) != 6 or shape[0] != 1 or shape[4] != len(times) \
                    or shape[5] != SITE_CHANNELS:
                raise ChainError(name, "%s/input has shape %s, not (1, nx, ny, nz, %d, %d)"
                                 % (group, shape, len(times), SITE_CHANNELS))
            for k in ("cell_x", "cell_y", "cell_depth"):
                if k not in g or g[k].shape != shape[1:4]:
                    raise ChainError(name, "%s/%s missing or not of shape %s"
                                     % (group, k, shape[1:4]))
            if _str(g.attrs.get("level", "")) != lname:
                raise ChainError(name, "%s has level %r, not %r"
                                 % (group, _str(g.attrs.get("level", "")), lname))
            window = repeat = None
            if lname != "GLOBAL":
                try:
                    window = [int(v) for v in np.asarray(g.attrs["coarse_window"]).reshape(-1)]
                    repeat = [int(v) for v in np.asarray(g.attrs["coarse_repeat"]).reshape(-1)]
                except KeyError as e:
                    raise ChainError(name, "%s has no attribute %s" % (group, e))
                if len(window) != 6 or len(repeat) != 3:
                    raise ChainError(name, "%s: coarse_window needs 6 and coarse_repeat 3 values"
                                     % group)
            levels[group] = Level(group, lname, well, shape[1:4], window, repeat)

        read_level("GLOBAL", "GLOBAL", None)
        for w in wells:
            for lv in LGR_LEVELS:
                read_level("%s/%s" % (w, lv), lv, w)
    site = Site(path, times, wells, levels)
    for w in wells:
        for lv in LGR_LEVELS:
            level = site.level(w, lv)
            src = site.source_of(level)
            try:
                check_window(src.shape, level.shape, level.coarse_window, level.coarse_repeat)
            except ValueError as e:
                raise ChainError(name, "%s: %s" % (level.path, e))
            if level.shape != site.level(wells[0], lv).shape:
                raise ChainError(name, "%s has shape %s, %s/%s %s: one model per level serves"
                                 " every well" % (level.path, level.shape, wells[0], lv,
                                                  site.level(wells[0], lv).shape))
    return site


# ---------------------------------------------------------------------------------------------
# The coarse channel

def check_window(source_shape, shape, window, repeat):
    """The window (i0, i1, j0, j1, k0, k1) lies inside the source and, each cell repeated
    (rx, ry, rz) times, gives `shape`; ValueError otherwise."""
    for a in range(3):
        lo, hi, r = window[2 * a], window[2 * a + 1], repeat[a]
        if not (0 <= lo < hi <= source_shape[a]):
            raise ValueError("coarse window %s lies outside its source %s"
                             % (tuple(window), tuple(source_shape)))
        if r < 1 or (hi - lo) * r != shape[a]:
            raise ValueError("coarse window %s repeated %s does not give the level's shape %s"
                             % (tuple(window), tuple(repeat), tuple(shape)))


def coarse_channel(source, window, repeat):
    """The coarse channel of a level: `source` (nx', ny', nz', T) cropped to `window`
    (i0, i1, j0, j1, k0, k1, 0-based, half-open) and each cell repeated `repeat` (rx, ry, rz)
    times along its axis:  coarse[i, j, l, t] = source[i0 + i // rx, j0 + j // ry, k0 + l // rz, t].
    """
    i0, i1, j0, j1, k0, k1 = window
    c = source[i0:i1, j0:j1, k0:k1]
    for axis, r in enumerate(repeat):
        if r != 1:
            c = torch.repeat_interleave(c, int(r), dim=axis)
    return c


# ---------------------------------------------------------------------------------------------
# The models

def _model_attrs(path):
    """A file's root attributes if it is an FNO4D model file with a `level`, else None."""
    try:
        with h5py.File(path, "r") as f:
            a = {k: (_str(v) if isinstance(v, (bytes, np.bytes_, str)) else v)
                 for k, v in f.attrs.items()}
    except OSError:
        return None
    if a.get("format") != "ufno-model" or a.get("architecture") != "FNO4D" or "level" not in a:
        return None
    return a


def find_models(models_dir):
    """{(level, variable): path} of DIR's FNO4D model files (*.h5 with a `level` attribute; any
    other file is ignored). A (level, variable) held twice, a GLOBAL SG model or an unknown level
    is refused."""
    dname = os.path.basename(os.path.normpath(models_dir)) or models_dir
    if not os.path.isdir(models_dir):
        raise ChainError(dname, "no such model directory")
    found = {}
    for fn in sorted(os.listdir(models_dir)):
        p = os.path.join(models_dir, fn)
        if not fn.endswith(".h5") or not os.path.isfile(p):
            continue
        a = _model_attrs(p)
        if a is None:
            continue
        key = (a["level"], a.get("variable"))
        if key not in CHAIN_MODELS:
            raise ChainError(fn, "a %s %s model is not part of the nested chain (GLOBAL dP,"
                             " LGR1..LGR4 dP and SG)" % key)
        if key in found:
            raise ChainError(fn, "a second %s %s model (the first is %s)"
                             % (key + (os.path.basename(found[key]),)))
        found[key] = p
    missing = [k for k in CHAIN_MODELS if k not in found]
    if missing:
        raise ChainError(dname, "no %s model (an FNO4D model file with attributes level and"
                         " variable; ufno.convert --level)"
                         % ", ".join("%s %s" % k for k in missing))
    return found


def level_grid(level, T, axis_order="XYZT"):
    """The level's grid as a model of that axis order states it."""
    if axis_order == "TXYZ":
        return (T,) + tuple(level.shape)
    if axis_order == "XYZT":
        return tuple(level.shape) + (T,)
    raise ChainError(level.path, "unknown axis order %r (XYZT or TXYZ)" % (axis_order,))


def load_models(models_dir, site, dtype=torch.float32):
    """The nine models of `models_dir`, checked against the site before anything runs:
    {(level, variable): NormalizedFNO4d in eval mode and `dtype`, with `axis_order`}. Each must
    take 8 (GLOBAL) or 9 (LGR) channels and have its level's grid in its axis order: (nx, ny,
    nz, T), or (T, nx, ny, nz) for a time-first model (axis_order TXYZ)."""
    paths = find_models(models_dir)
    models = {}
    for (lv, var), p in sorted(paths.items()):
        with h5py.File(p, "r") as f:
            a = f.attrs
            in_channels = int(a["in_channels"])
            grid = tuple(int(g) for g in a["grid"])
            order = _str(a.get("axis_order", "XYZT"))
        want_c = SITE_CHANNELS + (0 if lv == "GLOBAL" else 1)
        if in_channels != want_c:
            raise ChainError(os.path.basename(p), "%s %s model takes %d channels, not %d"
                             % (lv, var, in_channels, want_c))
        level = site.levels["GLOBAL"] if lv == "GLOBAL" else site.level(site.wells[0], lv)
        want_g = level_grid(level, site.T, order)
        if grid != want_g:
            raise ChainError(os.path.basename(p), "%s %s model has grid %s, the site's %s is %s"
                             " in the model's axis order %s" % (lv, var, grid, lv, want_g, order))
        model, _ = model_file.read_model_file(p, dtype=dtype)
        models[(lv, var)] = model
    return models


# ---------------------------------------------------------------------------------------------
# The chain

def chain_steps(site):
    """The chain's steps in order: (level, variable, source level or None). GLOBAL dP first;
    then per well, per variable (dP, SG), LGR1..LGR4; LGR1's source is GLOBAL (dP) for both
    variables, LGRk's the same well's LGR(k-1) of the same variable."""
    steps = [(site.levels["GLOBAL"], "dP", None)]
    for w in site.wells:
        for var in VARIABLES:
            for lv in LGR_LEVELS:
                level = site.level(w, lv)
                steps.append((level, var, site.source_of(level)))
    return steps


def run_chain(site, models, dtype=torch.float32, log=None):
    """Every level's prediction: {(level path, variable): tensor (nx, ny, nz, T) in dtype}.
    `log`, if given, is called with (level, variable, seconds) after each step."""
    preds = {}
    with torch.no_grad():
        for level, var, src in chain_steps(site):
            t0 = time.perf_counter()
            x = torch.from_numpy(site.input(level)).to(dtype)
            if src is not None:
                source = preds[(src.path, "dP" if src.name == "GLOBAL" else var)]
                coarse = coarse_channel(source, level.coarse_window, level.coarse_repeat)
                x = torch.cat([x, coarse[None, ..., None].to(dtype)], dim=-1)
            # NormalizedFNO4d: the input normaliser encodes the last channel only (the coarse
            # channel of an LGR level, permeability at GLOBAL), the output normaliser decodes
            # the prediction. A time-first model takes the stored (1, x, y, z, t, C) permuted
            # (0, 4, 1, 2, 3, 5), as the reference's chain feeds it, and returns (1, t, x, y, z).
            model = models[(level.name, var)]
            if getattr(model, "axis_order", "XYZT") == "TXYZ":
                preds[(level.path, var)] = model(x.permute(0, 4, 1, 2, 3, 5))[0].permute(1, 2, 3, 0)
            else:
                preds[(level.path, var)] = model(x)[0]
            if log is not None:
                log(level, var, time.perf_counter() - t0)
    return preds


def write_prediction(out_path, site, preds, source, models, producer):
    """The prediction file (docs/nested-sites.md, "The prediction file"), written to OUT.tmp
    and renamed; deterministic (no timestamps, sorted creation order)."""
    tmp = out_path + ".tmp"
    try:
        with h5py.File(tmp, "w", libver="earliest") as f:
            f.attrs.create("format", np.bytes_(PREDICTION_FORMAT))
            f.attrs.create("source", np.bytes_(source.encode()))
            f.attrs.create("models", np.bytes_(models.encode()))
            f.attrs.create("producer", np.bytes_(producer.encode()))
            f.create_dataset("times_days", data=np.asarray(site.times_days, dtype=np.float64),
                             track_times=False)
            for level, var, _ in chain_steps(site):
                g = f.require_group(level.path)
                y = preds[(level.path, var)].detach().cpu().numpy()  # (nx, ny, nz, T)
                d = g.create_dataset(var, data=np.ascontiguousarray(
                    np.moveaxis(y, -1, 0), dtype=np.float32), track_times=False)
                d.attrs.create("units", np.bytes_(UNITS[var]))
                if "cell_x" not in g:
                    for k, v in site.cells(level).items():
                        c = g.create_dataset(k, data=v.astype(np.float64), track_times=False)
                        c.attrs.create("units", np.bytes_(b"m"))
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def predict_site(site_path, models_dir, out_path, dtype=torch.float32, log=None,
                 source=None, models_name=None):
    """Read, check, run and write: the whole chain. `source` and `models_name` (the prediction
    file's attributes) default to the paths as given."""
    site = read_site(site_path)
    models = load_models(models_dir, site, dtype)
    preds = run_chain(site, models, dtype, log)
    producer = "ufno.nested_chain (PyTorch, %s)" % ("float64" if dtype == torch.float64
                                                     else "float32")
    try:
        write_prediction(out_path, site, preds, site_path if source is None else source,
                         models_dir if models_name is None else models_name, producer)
    except OSError as e:
        raise ChainError(os.path.basename(out_path), "cannot write the prediction file (%s)"
                         % e)
    return site, preds
