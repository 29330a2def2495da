#!/usr/bin/python3
"""The nested chain's benchmark (issue 43's goals): ufno's chain (`ufno_predict --case SITE.h5
--models DIR`, docs/nested-sites.md) against its levels run one at a time and against the PyTorch
chain (`python3 -m ufno.nested_chain`), on one synthetic two-well site and nine random models,
each side in its own process, 2 threads in all. Prints one markdown table (header and one row).

Usage:
  PYTHONPATH=python /usr/bin/python3 benchmarks/nested_chain_bench.py --size small|published|tiny
      [--threads 2] [--out DIR] [--skip-torch] [--torch-memory-gb G] [--ufno-memory-gb G]
      [--repeat N] [--torch-repeat N] [--generate-only]

Sizes (grids (nx, ny, nz); T = 24 report times; LGR2..LGR4 share a shape; modes and padding in
the levels' (x, y, z, T) order, padding on both sides of each axis):
  published  GLOBAL 100 x 100 x 5, LGR1 40 x 40 x 25, LGR2..4 40 x 40 x 50, width 28; LGR modes
             (6, 10, 10, 10), padding (8, 16, 16, 8); GLOBAL modes (20, 20, 4, 2), padding
             (16, 16, 8, 8). The reference gives GLOBAL's modes (4, 20, 20, 2) and padding
             (8, 16, 16, 8) for A1 = the 5-cell axis; ufno's levels are all (x, y, z) ordered, so
             the same modes and padding are reordered here (the padded GLOBAL grid is the
             reference's 132 x 132 x 21 x 40). Models about 10.5 GB on disk (each LGR model
             1.2 GB of spectral weights), 11 GB with the site; a run writes about 0.8 GB more.
  small      GLOBAL 40 x 40 x 5, LGR1 16 x 16 x 10, LGR2..4 16 x 16 x 20, width 28; LGR modes
             (4, 6, 6, 10), padding (8, 16, 16, 8); GLOBAL modes (8, 8, 4, 2), padding
             (16, 16, 8, 8): a PyTorch chain of a few minutes in well under 20 GB on 2 threads;
             models and site about 2.5 GB.
  tiny       GLOBAL 12 x 12 x 2, LGR1 4 x 4 x 4, LGR2..4 4 x 4 x 8, width 8, small paddings:
             seconds; a rehearsal of the script, not a measurement.

The site (the site-file format of docs/nested-sites.md, written directly, no deck: wells INJ1 and
INJ2, each LGR1 a box of its GLOBAL cells around the well refined evenly in x and y and over all
layers in z, its coarse window the box widened, LGR2 the central half of LGR1 refined 2 x 2 x 2,
LGR3 and LGR4 the central half of their parent refined 2 x 2 x 1) and the nine models (FNO4d with
random weights from one seed, through the converter's `ufno.conversion.convert.convert(...,
level=L)`, the function behind `python3 -m ufno.convert --level L`; LGR models with input and
output normalisers of their grid, GLOBAL with an output normaliser, as the test fixture's) are
made once per size under DIR (default build/bench_nested/SIZE), in a child process, one model at
a time, after checking the free disk space; they are reused while DIR/config.json matches.

What is measured (every process's peak memory from its own rusage, os.wait4):
  (a) ufno's chain: `ufno_predict --case SITE --models DIR --out ... --threads 2`; its summary's
      seconds (read, load, predict, write) and peak memory of the largest rank.
  (b) every distinct level alone: `ufno_predict --model M --tensor T.h5`, T.h5 the level's full
      input (1, nx, ny, nz, T, 9) (8 channels on GLOBAL): the site's channels and the coarse
      channel cut from (a)'s own prediction of the source level (crop + repeat). A well's levels
      cost what another well's do, so GLOBAL and the first well's eight levels run and the sum
      counts each LGR run once per well (17 level runs' worth for two wells). Reported: that sum
      of the summaries' seconds, the largest level peak, and the largest coarse channel
      (nx ny nz T float32) in MB. Each level's output is checked against the chain's.
  (c) the PyTorch chain, `python3 -m ufno.nested_chain --threads 2` (its own seconds: read, load,
      run, write; the process's peak memory), unless --skip-torch; --torch-memory-gb caps its
      address space (prlimit) so a size that does not fit fails cleanly.
  (d) the relative L2 difference of ufno's and PyTorch's prediction files, worst over levels and
      variables.
ufno (the chain, then the levels) runs --repeat times (3), PyTorch --torch-repeat times (1),
interleaved (PyTorch, ufno, PyTorch, ufno, ..., then the rest of the more numerous side); medians
of the seconds (the chain/levels ratio: the median of each repetition's ratio) and the largest
peaks are reported, every run on stderr. Goals: chain <= 1.10 x the levels' sum; chain peak <=
largest level peak + coarse channel; PyTorch >= 10x ufno's seconds and >= 4x its memory.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MB = float(1 << 20)
T = 24
SEED = 20240143
LGR_LEVELS = ("LGR1", "LGR2", "LGR3", "LGR4")
VARIABLES = ("dP", "SG")
CHAIN_MODELS = (("GLOBAL", "dP"),) + tuple((lv, v) for lv in LGR_LEVELS for v in VARIABLES)

# global: GLOBAL (NX, NY, NZ); box: LGR1's box width in GLOBAL cells (x and y), refined `refine`
# times in x and y and `refine_z` times over all GLOBAL layers; wells: name, I, J, K1, K2 (1-based
# GLOBAL), rate (Mt/yr); padding / global_padding: both sides of (x, y, z, T) on the LGR levels /
# GLOBAL; gains: init_random_weights's spectral gains (None: its default).
SIZES = {
    "published": dict(global_shape=(100, 100, 5), box=10, refine=4, refine_z=5, width=28,
                      global_modes=(20, 20, 4, 2), lgr_modes=(6, 10, 10, 10),
                      padding=(8, 16, 16, 8), global_padding=(16, 16, 8, 8), gains=None,
                      wells=(("INJ1", 30, 30, 1, 5, 1.0), ("INJ2", 70, 68, 2, 5, 0.6))),
    "small": dict(global_shape=(40, 40, 5), box=4, refine=4, refine_z=2, width=28,
                  global_modes=(8, 8, 4, 2), lgr_modes=(4, 6, 6, 10),
                  padding=(8, 16, 16, 8), global_padding=(16, 16, 8, 8), gains=None,
                  wells=(("INJ1", 12, 12, 1, 5, 1.0), ("INJ2", 28, 26, 2, 5, 0.6))),
    "tiny": dict(global_shape=(12, 12, 2), box=2, refine=2, refine_z=2, width=8,
                 global_modes=(3, 3, 2, 4), lgr_modes=(2, 2, 3, 4),
                 padding=(2, 3, 4, 5), global_padding=(3, 2, 4, 5), gains=(3.0, 2.0, 1.5, 1.5),
                 wells=(("INJ1", 3, 4, 1, 2, 1.0), ("INJ2", 8, 8, 2, 2, 0.6))),
}


def fail(msg, code=2):
    print("nested_chain_bench: " + msg, file=sys.stderr)
    sys.exit(code)


# ---------------------------------------------------------------------------------------------
# Shapes and disk sizes (no numpy needed)

def level_shapes(cfg):
    """{level: (nx, ny, nz)} of the size."""
    gx, gy, gz = cfg["global_shape"]
    n = cfg["box"] * cfg["refine"]
    nz1 = gz * cfg["refine_z"]
    return {"GLOBAL": (gx, gy, gz), "LGR1": (n, n, nz1), "LGR2": (n, n, 2 * nz1),
            "LGR3": (n, n, 2 * nz1), "LGR4": (n, n, 2 * nz1)}


def cells(shape):
    return shape[0] * shape[1] * shape[2]


def model_bytes(cfg, level):
    """A model file's size: the spectral weights (4 layers x 8 corners, complex64) and the
    normalisers (mean and std of the level's grid), the rest negligible."""
    w = cfg["width"]
    modes = cfg["global_modes"] if level == "GLOBAL" else cfg["lgr_modes"]
    spectral = 4 * 8 * w * w * modes[0] * modes[1] * modes[2] * modes[3] * 8
    norms = 1 if level == "GLOBAL" else 2
    return spectral + norms * 2 * cells(level_shapes(cfg)[level]) * T * 4 + 64 * w * w * 4


def disk_estimate(cfg):
    """(bytes of the inputs: models and site, bytes of the outputs: level tensors, predictions
    and level outputs)."""
    shapes, nw = level_shapes(cfg), len(cfg["wells"])
    models = sum(model_bytes(cfg, lv) for lv, _ in CHAIN_MODELS)
    per_level = {lv: cells(s) for lv, s in shapes.items()}
    site = sum(c * (T * 8 * 4 + 24) * (1 if lv == "GLOBAL" else nw) for lv, c in per_level.items())
    tensors = per_level["GLOBAL"] * T * 8 * 4 + sum(2 * per_level[lv] * T * 9 * 4
                                                    for lv in LGR_LEVELS)
    pred = sum(c * (T * 4 * (1 if lv == "GLOBAL" else 2) + 24) * (1 if lv == "GLOBAL" else nw)
               for lv, c in per_level.items())
    level_out = per_level["GLOBAL"] * T * 4 + sum(2 * per_level[lv] * T * 4 for lv in LGR_LEVELS)
    return models + site, tensors + 2 * pred + level_out


def config_of(size):
    cfg = dict(SIZES[size])
    return json.loads(json.dumps(dict(cfg, size=size, seed=SEED, T=T)))


def inputs_ready(d, size):
    try:
        with open(os.path.join(d, "config.json")) as f:
            if json.load(f) != config_of(size):
                return False
    except (OSError, ValueError):
        return False
    return os.path.isfile(os.path.join(d, "site.h5")) and all(
        os.path.isfile(os.path.join(d, "models", "%s_%s.h5" % m)) for m in CHAIN_MODELS)


def check_disk(d, size, need_inputs):
    inputs, outputs = disk_estimate(SIZES[size])
    need = 1.1 * ((inputs if need_inputs else 0) + outputs) + (256 << 20)
    free = shutil.disk_usage(d).free
    if free < need:
        fail("%s: %.1f GB free, the %s size needs about %.1f GB (models and site %.1f GB, "
             "outputs %.1f GB); free space or give --out on another disk"
             % (d, free / 1e9, size, need / 1e9, inputs / 1e9, outputs / 1e9))


# ---------------------------------------------------------------------------------------------
# The synthetic site and the nine models (in the --generate-only child)

def global_geometry(cfg):
    import numpy as np
    from ufno.conversion.nested_fixtures import Geometry
    gx, gy, gz = cfg["global_shape"]
    dx = 1000.0 + 4.0 * np.arange(gx)
    dy = 950.0 + 3.0 * np.arange(gy)
    dz = 20.0 + 2.0 * np.arange(gz)
    edges = lambda v: np.concatenate([[0.0], np.cumsum(v)])  # noqa: E731
    return Geometry(edges(dx), edges(dy), edges(dz), np.arange(gx), np.arange(gy), np.arange(gz))


def channels(cfg, geo, lv, wells, perm, times, point=None):
    """The level's eight channels (1, nx, ny, nz, T, 8) float32 and its cell centres, built as
    docs/nested-sites.md says (a constant brine density stands in for IAPWS-97, as in the test
    fixture)."""
    import numpy as np
    from ufno.conversion.nested_fixtures import injection_map
    nx, ny, nz = geo.shape
    gx, gy, _ = cfg["global_shape"]
    tops = 1950.0 + 0.5 * np.arange(gx)[:, None] + 0.3 * np.arange(gy)[None, :]
    top = tops[np.ix_(geo.gi, geo.gj)][:, :, None]
    cell_top = top + geo.ze[:-1][None, None, :]
    depth = top + (0.5 * (geo.ze[:-1] + geo.ze[1:]))[None, None, :]
    cx = np.broadcast_to((0.5 * (geo.xe[:-1] + geo.xe[1:]))[:, None, None], (nx, ny, nz))
    cy = np.broadcast_to((0.5 * (geo.ye[:-1] + geo.ye[1:]))[None, :, None], (nx, ny, nz))
    # The reference's injection map (nested_fixtures.injection_map; the wells' last item is
    # taken as the surface rate).
    g0 = global_geometry(cfg)
    inj = injection_map(geo, lv, wells, lambda w: (0.5 * (g0.xe[w[1] - 1] + g0.xe[w[1]]),
                                                   0.5 * (g0.ye[w[2] - 1] + g0.ye[w[2]])))
    p_datum = 200.0
    p = p_datum + (depth - (p_datum - 1.01325) / 9.8 * 100.0) * 9.8 * 1000.0 / 1e5
    static = [cx / 160000.0, cy / 160000.0, (cell_top - 2000.0) / 2000.0, None, inj, p / 172.0,
              np.full((nx, ny, nz), 60.0 / 70.0), perm[np.ix_(geo.gi, geo.gj, geo.gk)] / 100.0]
    x = np.empty((1, nx, ny, nz, T, 8), dtype=np.float32)
    for c, v in enumerate(static):
        x[0, ..., c] = (times / 10950.0) if v is None else np.asarray(v)[..., None]
    return x, {"cell_x": np.array(cx), "cell_y": np.array(cy), "cell_depth": depth}


def inner_box(parent, point, refinement):
    """The central half of the parent (x and y) around the well's point, all its layers."""
    from ufno.conversion.nested_fixtures import cell_of
    box = []
    for edges, p in ((parent.xe, point[0]), (parent.ye, point[1])):
        n = len(edges) - 1
        s = min(max(cell_of(edges, p) - n // 4, 0), n - n // 2)
        box += [s + 1, s + n // 2]
    return tuple(box) + (1, parent.shape[2]), refinement


def well_levels(cfg, g0, well):
    """[(level name, Geometry, attrs)] of one well's LGR1..LGR4."""
    _, i, j = well[:3]
    b, r = cfg["box"], cfg["refine"]
    point = (0.5 * (g0.xe[i - 1] + g0.xe[i]), 0.5 * (g0.ye[j - 1] + g0.ye[j]))
    i1, j1 = i - (b // 2 - 1), j - (b // 2 - 1)
    box, refinement = (i1, i1 + b - 1, j1, j1 + b - 1, 1, g0.shape[2]), (r, r, cfg["refine_z"])
    out, parent = [], g0
    for k, lv in enumerate(LGR_LEVELS, start=1):
        if k > 1:
            box, refinement = inner_box(parent, point, (2, 2, 2) if k == 2 else (2, 2, 1))
        geo = parent.refine(box, refinement)
        if k == 1:
            w = (geo.shape[0] - b) // 2
            window = (box[0] - 1 - w, box[1] + w, box[2] - 1 - w, box[3] + w, 0, g0.shape[2])
            if window[0] < 0 or window[3] > g0.shape[1] or window[1] > g0.shape[0] \
                    or window[2] < 0:
                raise SystemExit("nested_chain_bench: %s's coarse window %s leaves GLOBAL"
                                 % (well[0], window))
        else:
            window = (0, parent.shape[0], 0, parent.shape[1], 0, parent.shape[2])
        repeat = tuple(n // (window[2 * a + 1] - window[2 * a]) for a, n in enumerate(geo.shape))
        out.append((lv, geo, point, {"carfin": "%s_L%d" % (well[0], k), "box": box,
                                     "refinement": refinement, "coarse_window": window,
                                     "coarse_repeat": repeat}))
        parent = geo
    return out


def write_site(path, cfg, times):
    """The site file, uncompressed as ufno_import writes it, one level in memory at a time."""
    import h5py
    import numpy as np
    from ufno.conversion import nested_fixtures as nf
    g0 = global_geometry(cfg)
    perm = np.exp(np.log(80.0) + 0.8 * np.random.default_rng(SEED).standard_normal(g0.shape))
    wells = cfg["wells"]
    with h5py.File(path + ".tmp", "w", libver="earliest") as f:
        nf.write_site_header(f, [w[0] for w in wells], times,
                             "synthetic (benchmarks/nested_chain_bench.py)", "nested_chain_bench")
        levels = [("GLOBAL", "GLOBAL", g0, None, {}, wells)]
        for w in wells:
            levels += [("%s/%s" % (w[0], lv), lv, geo, pt, at, [w])
                       for lv, geo, pt, at in well_levels(cfg, g0, w)]
        for group, lv, geo, point, attrs, ws in levels:
            x, cc = channels(cfg, geo, lv, ws, perm, times, point)
            nf.write_site_level(f, group, lv, attrs, x, cc, compress=False)
        nf.write_site_wells(f, wells)
    os.replace(path + ".tmp", path)


FC2_SCALE = 1e-3


def write_model(models_dir, cfg, n, lv, var):
    """One of the nine models through the converter, freed before the next is made."""
    import torch
    from ufno.conversion import convert as ufno_convert
    from ufno.conversion.nested_fixtures import SCALES
    from ufno.models import fno4d
    gen = torch.Generator().manual_seed(SEED + n)
    glob = lv == "GLOBAL"
    padding = tuple(cfg["global_padding" if glob else "padding"])
    net = fno4d.FNO4d(width=cfg["width"], modes=cfg["global_modes" if glob else "lgr_modes"],
                      in_channels=8 if glob else 9, padding=padding)
    if cfg["gains"]:
        fno4d.init_random_weights(net, gen, tuple(cfg["gains"]))
    else:
        fno4d.init_random_weights(net, gen)
    # Random networks at these sizes give raw outputs in the hundreds, and each level feeds the
    # next its decoded output, so a chain of them grows ~50x a level (LGR4 ~1e9): the head's
    # last layer is scaled to keep every level's output O(1), as a trained chain's are.
    with torch.no_grad():
        net.conv.fc2.weight.mul_(FC2_SCALE)
        net.conv.fc2.bias.mul_(FC2_SCALE)
    grid = tuple(level_shapes(cfg)[lv]) + (T,)

    def normalizer(mean, spread):
        m = mean + 0.3 * spread * torch.randn(grid, generator=gen)
        sd = spread * (0.5 + torch.rand(grid, generator=gen))
        return fno4d.UnitGaussianNormalizer(m, sd, fno4d.NORMALIZER_EPS)
    n_in = None if glob else normalizer(*SCALES["dP" if lv == "LGR1" else var])
    n_out = normalizer(*SCALES[var])
    stem = "%s_%s" % (lv, var)
    ufno_convert.convert(None, os.path.join(models_dir, stem + ".h5"), var, grid, padding,
                         state_dict=net.state_dict(), source=stem + ".pt",
                         input_normalizer=n_in, output_normalizer=n_out, level=lv)


def generate(d, size):
    """Site and models of the size under d (the --generate-only child)."""
    import gc
    import numpy as np
    from ufno.conversion.nested_fixtures import report_times
    cfg = config_of(size)
    stamp = os.path.join(d, "config.json")
    if os.path.exists(stamp):
        os.remove(stamp)
    models_dir = os.path.join(d, "models")
    os.makedirs(models_dir, exist_ok=True)
    t0 = time.time()
    write_site(os.path.join(d, "site.h5"), cfg, np.asarray(report_times(), dtype=np.float64))
    print("nested_chain_bench: site.h5 in %.1f s" % (time.time() - t0), file=sys.stderr)
    for n, (lv, var) in enumerate(CHAIN_MODELS):
        t1 = time.time()
        write_model(models_dir, cfg, n, lv, var)
        gc.collect()
        print("nested_chain_bench: models/%s_%s.h5 (%.0f MB) in %.1f s"
              % (lv, var, os.path.getsize(os.path.join(models_dir, "%s_%s.h5" % (lv, var))) / MB,
                 time.time() - t1), file=sys.stderr, flush=True)
    with open(stamp, "w") as f:
        json.dump(cfg, f, indent=1, sort_keys=True)


# ---------------------------------------------------------------------------------------------
# Runs

def child_env(threads):
    py = os.path.join(ROOT, "python")
    pp = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=py + (os.pathsep + pp if pp else ""),
                OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))


def limited(cmd, gb):
    return (["prlimit", "--as=%d" % int(gb * (1 << 30))] + cmd) if gb else cmd


def run_measured(cmd, threads, log_path):
    """(exit code, stdout+stderr text, wall seconds, the process's peak RSS in MB)."""
    with open(log_path, "w") as log:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=child_env(threads),
                             cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(log_path) as f:
        text = f.read()
    return p.returncode, text, wall, ru.ru_maxrss / 1024.0


def last_line(text, rc):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "exit %d" % rc


UFNO_SUMMARY = re.compile(r"in ([\d.]+) s \(load ([\d.]+) s, predict ([\d.]+) s, write ([\d.]+)"
                          r" s\).*peak memory (\d+) MB")


def ufno_predict_path():
    return os.path.join(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")), "apps",
                        "ufno_predict")


def ufno_predict(args, threads, gb, out, log):
    """One ufno_predict run: ({seconds, predict, peak_mb, rss_mb, wall}, "") or (None, why)."""
    if os.path.exists(out):
        os.remove(out)
    cmd = limited([ufno_predict_path()] + args +
                  ["--out", out, "--threads", str(threads)], gb)
    rc, text, wall, rss = run_measured(cmd, threads, log)
    m = UFNO_SUMMARY.search(text)
    if rc != 0 or not m:
        return None, last_line(text, rc)
    return dict(seconds=float(m.group(1)), predict=float(m.group(3)),
                peak_mb=float(m.group(5)), rss_mb=rss, wall=wall), ""


def run_torch(d, threads, gb, out):
    """The PyTorch chain: ({seconds, levels, rss_mb, wall}, "") or (None, why)."""
    if os.path.exists(out):
        os.remove(out)
    cmd = limited(["/usr/bin/python3", "-m", "ufno.nested_chain", "--case",
                   os.path.join(d, "site.h5"), "--models", os.path.join(d, "models"),
                   "--out", out, "--threads", str(threads)], gb)
    rc, text, wall, rss = run_measured(cmd, threads, os.path.join(d, "logs", "torch.log"))
    m = re.search(r"wrote .* in ([\d.]+) s \(", text)
    if rc != 0 or not m:
        return None, last_line(text, rc)
    steps = sum(float(v) for v in re.findall(r"^nested_chain: \S+\s+\S+\s+([\d.]+) s$", text,
                                             re.M))
    return dict(seconds=float(m.group(1)), levels=steps, rss_mb=rss, wall=wall), ""


def level_runs(site_path):
    """([(tag, level group, variable, source group or None, window, repeat)]: GLOBAL and the
    first well's eight levels, the site's wells)."""
    import h5py
    with h5py.File(site_path, "r") as f:
        w = f.attrs["wells"]
        wells = (w.decode() if isinstance(w, bytes) else str(w)).split()
        runs = [("GLOBAL_dP", "GLOBAL", "dP", None, None, None)]
        for var in VARIABLES:
            for k, lv in enumerate(LGR_LEVELS):
                g = f["%s/%s" % (wells[0], lv)]
                src = "GLOBAL" if k == 0 else "%s/%s" % (wells[0], LGR_LEVELS[k - 1])
                runs.append(("%s_%s" % (lv, var), g.name.lstrip("/"), var, src,
                             tuple(int(v) for v in g.attrs["coarse_window"]),
                             tuple(int(v) for v in g.attrs["coarse_repeat"])))
    return runs, wells


def make_level_tensors(d, chain_pred):
    """Each level's full input from the site and the chain's own prediction of its source;
    returns {tag: coarse channel MB}."""
    import h5py
    import numpy as np
    site = os.path.join(d, "site.h5")
    runs, _ = level_runs(site)
    coarse_mb = {}
    with h5py.File(site, "r") as s, h5py.File(chain_pred, "r") as p:
        for tag, group, var, src, window, repeat in runs:
            x = s[group + "/input"][()]
            if src is not None:
                src_var = "dP" if src == "GLOBAL" else var
                c = np.moveaxis(p["%s/%s" % (src, src_var)][()], 0, -1)  # (nx, ny, nz, T)
                c = c[window[0]:window[1], window[2]:window[3], window[4]:window[5]]
                for axis, r in enumerate(repeat):
                    c = np.repeat(c, r, axis=axis)
                x = np.concatenate([x, c[None, ..., None].astype(np.float32)], axis=-1)
                coarse_mb[tag] = c.size * 4 / MB
            with h5py.File(os.path.join(d, "levels", tag + ".h5.tmp"), "w") as f:
                f.create_dataset("input", data=x)
            os.replace(os.path.join(d, "levels", tag + ".h5.tmp"),
                       os.path.join(d, "levels", tag + ".h5"))
    return coarse_mb


def level_vs_chain(level_out, chain_pred, group, var):
    import h5py
    import numpy as np
    with h5py.File(level_out, "r") as a, h5py.File(chain_pred, "r") as b:
        x = a[var][()][0]
        y = b["%s/%s" % (group, var)][()]
    return float(np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30))


def run_levels(d, threads, gb, chain_pred):
    """Every distinct level alone: (GLOBAL + wells x the first well's levels: seconds, largest
    peak MB, worst difference from the chain's prediction, [per-level lines]) or (None, why)."""
    runs, wells = level_runs(os.path.join(d, "site.h5"))
    total, peak, worst, lines = 0.0, 0.0, 0.0, []
    for tag, group, var, src, _, _ in runs:
        lv = tag.split("_")[0]
        r, why = ufno_predict(["--model", os.path.join(d, "models", tag + ".h5"), "--tensor",
                               os.path.join(d, "levels", tag + ".h5")], threads, gb,
                              os.path.join(d, "levels", "out_" + tag + ".h5"),
                              os.path.join(d, "logs", "level_%s.log" % tag))
        if r is None:
            return None, "%s: %s" % (tag, why)
        total += r["seconds"] * (1 if lv == "GLOBAL" else len(wells))
        peak = max(peak, r["peak_mb"])
        worst = max(worst, level_vs_chain(os.path.join(d, "levels", "out_" + tag + ".h5"),
                                          chain_pred, group, var))
        lines.append("%s %.2f s %.0f MB" % (tag, r["seconds"], r["peak_mb"]))
    return dict(seconds=total, peak_mb=peak, worst=worst, lines=lines), ""


def worst_rel_l2(a_path, b_path):
    """Worst relative L2 difference over the prediction files' levels and variables."""
    import h5py
    import numpy as np
    worst = 0.0
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        keys = []
        a.visititems(lambda k, v: keys.append(k) if k.split("/")[-1] in VARIABLES else None)
        for k in keys:
            x, y = a[k][()].astype(np.float64), b[k][()].astype(np.float64)
            worst = max(worst, float(np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30)))
    return worst


# ---------------------------------------------------------------------------------------------
# The benchmark

def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def ufno_rep(d, a, coarse_mb):
    """One ufno repetition: the chain, then (tensors made after the first chain) the levels."""
    pred = os.path.join(d, "ufno_chain.h5")
    c, why = ufno_predict(["--case", os.path.join(d, "site.h5"), "--models",
                           os.path.join(d, "models")], a.threads, a.ufno_memory_gb, pred,
                          os.path.join(d, "logs", "ufno_chain.log"))
    if c is None:
        return None, None, "chain: " + why
    print("nested_chain_bench: ufno chain %.2f s (predict %.2f s, wall %.2f s), peak %.0f MB "
          "(process %.0f MB)" % (c["seconds"], c["predict"], c["wall"], c["peak_mb"], c["rss_mb"]),
          file=sys.stderr, flush=True)
    if not coarse_mb:
        coarse_mb.update(make_level_tensors(d, pred))
    lv, why = run_levels(d, a.threads, a.ufno_memory_gb, pred)
    if lv is None:
        return c, None, "levels: " + why
    print("nested_chain_bench: levels %.2f s (%s), largest peak %.0f MB; level outputs vs the "
          "chain's: worst rel. L2 %.1e" % (lv["seconds"], ", ".join(lv["lines"]), lv["peak_mb"],
                                           lv["worst"]), file=sys.stderr, flush=True)
    return c, lv, ""


def measure(d, a):
    """Interleaved runs: ([(chain, levels)], ufno failure, [torch], torch failure, coarse MB)."""
    coarse_mb, reps, truns = {}, [], []
    uerr, terr = "", ("skipped" if a.skip_torch else "")
    n_torch = 0 if a.skip_torch else a.torch_repeat
    for i in range(max(a.repeat, n_torch)):
        if i < n_torch and (i == 0 or truns):
            t, terr = run_torch(d, a.threads, a.torch_memory_gb,
                                os.path.join(d, "torch_chain.h5"))
            if t:
                truns.append(t)
                print("nested_chain_bench: PyTorch chain %.2f s (levels %.2f s, wall %.2f s), "
                      "peak %.0f MB" % (t["seconds"], t["levels"], t["wall"], t["rss_mb"]),
                      file=sys.stderr, flush=True)
        if i < a.repeat and (i == 0 or reps):
            c, lv, uerr = ufno_rep(d, a, coarse_mb)
            if c and lv:
                reps.append((c, lv))
    return reps, uerr, truns, terr, coarse_mb


HEADER = ("| size | chain s | levels' sum s | chain / sum (goal <= 1.10) | chain peak MB | "
          "largest level peak + coarse MB (goal: >= chain peak) | PyTorch s | PyTorch MB | "
          "speed (goal >= 10x) | memory (goal >= 4x) | worst rel. L2 |")


def row(size, cfg, a, reps, uerr, truns, terr, coarse_mb):
    shapes = level_shapes(cfg)
    name = "%s: GLOBAL %s, LGR1 %s, LGR2..4 %s, T %d, width %d" % (
        size, "x".join(map(str, shapes["GLOBAL"])), "x".join(map(str, shapes["LGR1"])),
        "x".join(map(str, shapes["LGR2"])), T, cfg["width"])
    r = [name]
    if reps:
        cs = median([c["seconds"] for c, _ in reps])
        ls = median([lv["seconds"] for _, lv in reps])
        ratio = median([c["seconds"] / lv["seconds"] for c, lv in reps])
        cpeak = max(c["peak_mb"] for c, _ in reps)
        lpeak = max(lv["peak_mb"] for _, lv in reps)
        cmb = max(coarse_mb.values())
        r += ["%.2f" % cs, "%.2f" % ls, "%.3f" % ratio, "%.0f" % cpeak,
              "%.0f + %.1f = %.0f" % (lpeak, cmb, lpeak + cmb)]
    else:
        r += ["failed: " + uerr[:80]] + ["-"] * 4
    if truns:
        ts, tm = median([t["seconds"] for t in truns]), max(t["rss_mb"] for t in truns)
        r += ["%.2f" % ts, "%.0f" % tm]
    else:
        r += ["failed: " + terr[:80] if terr != "skipped" else "-", "-"]
    if reps and truns:
        r += ["%.1fx" % (ts / cs), "%.1fx" % (tm / cpeak),
              "%.1e" % worst_rel_l2(os.path.join(a.out, "ufno_chain.h5"),
                                    os.path.join(a.out, "torch_chain.h5"))]
    else:
        r += ["-"] * 3
    return "| " + " | ".join(r) + " |"


def prepare(a):
    """Make (or reuse) the size's site and models under a.out."""
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "levels"), exist_ok=True)
    ready = inputs_ready(a.out, a.size)
    check_disk(a.out, a.size, not ready)
    if ready:
        return
    t0 = time.time()
    p = subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), "--size", a.size,
                        "--out", a.out, "--generate-only"], env=child_env(a.threads))
    if p.returncode != 0 or not inputs_ready(a.out, a.size):
        fail("%s: making the %s site and models failed (exit %d)" % (a.out, a.size,
                                                                     p.returncode))
    print("nested_chain_bench: %s inputs made in %.0f s" % (a.size, time.time() - t0),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description="The nested chain: ufno vs its levels vs PyTorch.")
    ap.add_argument("--size", choices=sorted(SIZES), required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None, help="default build/bench_nested/SIZE")
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--torch-memory-gb", type=float, default=0)
    ap.add_argument("--ufno-memory-gb", type=float, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="ufno repetitions (chain + levels)")
    ap.add_argument("--torch-repeat", type=int, default=1, help="PyTorch chain runs")
    ap.add_argument("--generate-only", action="store_true",
                    help="make the site and models and stop")
    a = ap.parse_args()
    for flag, v in (("--repeat", a.repeat), ("--torch-repeat", a.torch_repeat),
                    ("--threads", a.threads)):
        if not 1 <= v <= 100:
            ap.error("%s %d: give 1 to 100" % (flag, v))
    a.out = os.path.abspath(a.out or os.path.join(ROOT, "build", "bench_nested", a.size))
    if a.generate_only:
        os.makedirs(a.out, exist_ok=True)
        ready = inputs_ready(a.out, a.size)
        check_disk(a.out, a.size, not ready)
        if not ready:
            generate(a.out, a.size)
        return
    if not os.access(ufno_predict_path(), os.X_OK):
        fail("%s: no ufno_predict (build it, or set BUILD_DIR)" % ufno_predict_path())
    prepare(a)
    cfg = SIZES[a.size]
    print("nested_chain_bench: %s, GLOBAL modes %s and padding %s (x, y, z, T: the reference's "
          "GLOBAL modes and padding, given for A1 = z, reordered), LGR modes %s and padding %s, "
          "%d thread(s) each side" % (a.size, tuple(cfg["global_modes"]),
                                      tuple(cfg["global_padding"]), tuple(cfg["lgr_modes"]),
                                      tuple(cfg["padding"]), a.threads), file=sys.stderr)
    load = os.getloadavg()[0]
    if load > 0.5:
        print("nested_chain_bench: warning: load average %.1f: the figures need an idle machine"
              % load, file=sys.stderr)
    reps, uerr, truns, terr, coarse_mb = measure(a.out, a)
    print(HEADER)
    print("|" + "---|" * 11)
    print(row(a.size, cfg, a, reps, uerr, truns, terr, coarse_mb))


if __name__ == "__main__":
    main()
