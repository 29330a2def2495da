"""Small two-well 3-D sites for the nested chain (docs/nested-sites.md): sampling, decks, Flow
truth averaged onto every level.

Usage (library: sample_site, levels, write_nested_deck, write_fine_deck, average_to_level,
process_site; the command line is `python3 -m ufno.nested_sites`):

  PYTHONPATH=python /usr/bin/python3 -m ufno.nested_sites --seed 1 --start 0 --end 8 \
      --out DIR [--run]

Site i of seed s is always the same: its random numbers come from
numpy.random.SeedSequence([s, i]). Per site, DIR/site_NNNNNN/ holds
  site.json     the sampled parameters
  SITE.DATA     the nested deck: one CARFIN nest of four levels per well, in the keyword subset of
                docs/nested-sites.md ("The deck"); `ufno_import SITE.DATA --out site.h5` reads it
  fine/FINE.DATA  the same site on one uniform Cartesian grid at the finest level's cell size
                (OPM Flow 2022.10 cannot run CARFIN refinements), CO2STORE
  run/          Flow's output of the fine deck
  target.h5     every level's truth: the fine PRESSURE and SGAS averaged over each level cell's fine
                cells, in the layout of the prediction file (docs/nested-sites.md); written under a
                temporary name and renamed, so a site is finished exactly when target.h5 exists.

Grid (every site the same; only the layer thicknesses differ):
  GLOBAL 16 x 10 x 2 cells of 250 m x 250 m x dz_k (dz_k sampled per layer);
  fine grid 64 x 40 x 8: each GLOBAL cell is 4 x 4 x 4 fine cells (62.5 m x 62.5 m x dz_k / 4).
  Per well (GLOBAL column i, j, 0-based), the nest (boxes 1-based in the parent's cells):
    LGR1 box I = i-1..i+2 (0-based; the well's column is the box's second), J likewise, all 2
         layers, refined 2 x 2 x 2 -> 8 x 8 x 4 cells of 125 m (coarse window: the box widened by
         2 GLOBAL cells, 8 x 8; vertical repeat 2)
    LGR2 box = all of LGR1, refined 1 x 1 x 2 -> 8 x 8 x 8 cells of 125 m x dz_k / 4
    LGR3 box LGR2 cells 3..6 x 3..6 x 1..8, refined 2 x 2 x 1 -> 8 x 8 x 8 cells of 62.5 m
         (= fine cells; the GLOBAL cells i, i+1 and j, j+1)
    LGR4 box = all of LGR3, refined 1 x 1 x 1 -> the same cells as LGR3
  so every level cell is a block of whole fine cells (level_blocks()).

Sampled (U uniform, LU log-uniform; per site, independent):
  | parameter                      | distribution                                               |
  |--------------------------------|------------------------------------------------------------|
  | top depth of layer 1           | U 1000..2500 m                                             |
  | datum pressure (EQUIL)         | hydrostatic at the top: 1.01325 + 0.098 x depth bar (the   |
  |                                | import's z_datum is then the top)                          |
  | temperature (RTEMP)            | U 30..100 degC                                             |
  | layer thickness dz_k           | U 10..25 m per GLOBAL layer                                |
  | permeability PERMX             | LU 50..1000 mD per GLOBAL layer (refined cells: the       |
  |                                | parent's value); fine deck: PERMY = PERMX, PERMZ = 0.1 PERMX|
  | wells W1, W2                   | W1 column i U 3..6, W2 i U i_W1 + 5..11 (0-based; their    |
  |                                | LGR boxes one GLOBAL cell apart at least); j U 3..5 each   |
  |                                | (every coarse window inside the GLOBAL grid); perforated   |
  |                                | layers: both                                               |
  |                                | (60 %), the top (20 %) or the bottom one (20 %)            |
  | rate per well                  | U 0.05..0.3 Mt/yr (surface rate at 1.872 kg/sm3)           |
Fixed: porosity 0.2; SGOF of python/ufno/data/cases.py with Swi 0.2, lambda 0.5; rock
compressibility 4.5e-5 1/bar; injector BHP limit 700 bar; the fine grid's outer ring of columns
has MULTPV 1000 (an open aquifer around the 4 km x 2.5 km site; the nested deck has no MULTPV).
Report times: t_k = cumulative sum of floor(10 x 1.2531^k) days, k = 1..24 (12 .. 11064 days).

Truth per level: dP = PRESSURE - PRESSURE of report step 0, and SGAS, averaged with equal
weights over the fine cells of each level cell. All fine cells of a level cell have the same
volume and lie in one GLOBAL cell (one porosity), so this is also the pore-volume average, except
in the MULTPV ring (GLOBAL cells on the grid's edge), where the plain cell-volume average is kept.
"""

import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import time

import h5py
import numpy as np

from ufno.data import cases as uc
from ufno.data import flow_batch

GENERATOR = "python/ufno/data/nested_sites.py"
SITE_VERSION = 1
GLOBAL_SHAPE = (16, 10, 2)
CELL_XY = 250.0                 # m, GLOBAL cell size in x and y
FINE_PER_GLOBAL = (4, 4, 4)     # fine cells per GLOBAL cell along x, y, z
N_LEVELS = 4
# Per LGR level: the box in the parent's cells, relative to the well's column for LGR1
# (offsets of I1, I2 from the well's 0-based GLOBAL column), absolute (1-based) below; refinement.
LGR1_BOX_OFFSET = (-1, 2)       # GLOBAL columns i-1 .. i+2 (0-based), i.e. I1 = i, I2 = i + 3
NEST = (
    {"level": "LGR1", "refinement": (2, 2, 2)},
    {"level": "LGR2", "box": (1, 8, 1, 8, 1, 4), "refinement": (1, 1, 2)},
    {"level": "LGR3", "box": (3, 6, 3, 6, 1, 8), "refinement": (2, 2, 1)},
    {"level": "LGR4", "box": (1, 8, 1, 8, 1, 8), "refinement": (1, 1, 1)},
)
LEVELS = ("GLOBAL",) + tuple(n["level"] for n in NEST)
WELL_NAMES = ("W1", "W2")
NT = 24
RANGES = {"top_depth": (1000.0, 2500.0), "temperature": (30.0, 100.0), "dz": (10.0, 25.0),
          "perm": (50.0, 1000.0), "rate": (0.05, 0.3), "i_w1": (3, 6), "i_w2_gap": 5,
          "i_max": 11, "j": (3, 5)}
P_PERF = (("both", 0.6), ("top", 0.2), ("bottom", 0.2))
POROSITY = 0.2
KZ_OVER_KX = 0.1
SWI, VG_LAMBDA = 0.2, 0.5
MULTPV_RING = 1000.0
BHP_LIMIT_BAR = 700.0
HYDROSTATIC_BAR_PER_M = 0.098   # the import's z_datum = (p_datum - 1.01325) / 9.8 x 100
ATM_BAR = 1.01325
FLOW_FLAGS = ["--threads-per-process=1", "--ds-max=0.1", "--tolerance-cnv-relaxed=3",
              "--enable-terminal-output=false"]
RATE_TOLERANCE = 1e-3


def report_times():
    """t_k = cumulative sum of floor(10 x 1.2531^k) days, k = 1..24."""
    return np.cumsum([math.floor(10.0 * 1.2531 ** k) for k in range(1, NT + 1)]).astype(float)


def site_id(seed, index):
    return "s%d_n%06d" % (seed, index)


def rate_sm3_per_day(rate_mt_per_year):
    return rate_mt_per_year * 1e9 / uc.DAYS_PER_YEAR / uc.CO2_SURFACE_DENSITY


# ---------------------------------------------------------------------------------------------
# Sampling

def sample_site(seed, index):
    """Site `index` of seed `seed` (a JSON-able dict); deterministic."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(index)]))
    r = RANGES
    top = float(rng.uniform(*r["top_depth"]))
    temp = float(rng.uniform(*r["temperature"]))
    nz = GLOBAL_SHAPE[2]
    dz = [float(v) for v in rng.uniform(*r["dz"], size=nz)]
    perm = [float(v) for v in np.exp(rng.uniform(math.log(r["perm"][0]),
                                                 math.log(r["perm"][1]), size=nz))]
    i1 = int(rng.integers(r["i_w1"][0], r["i_w1"][1] + 1))
    i2 = int(rng.integers(i1 + r["i_w2_gap"], r["i_max"] + 1))
    wells = []
    for name, i in zip(WELL_NAMES, (i1, i2)):
        j = int(rng.integers(r["j"][0], r["j"][1] + 1))
        u = rng.uniform()
        kind = "both" if u < P_PERF[0][1] else ("top" if u < P_PERF[0][1] + P_PERF[1][1]
                                                else "bottom")
        k1, k2 = {"both": (0, nz - 1), "top": (0, 0), "bottom": (nz - 1, nz - 1)}[kind]
        rate = float(rng.uniform(*r["rate"]))
        wells.append({"name": name, "i": i, "j": j, "k1": k1, "k2": k2, "rate_mt_per_year": rate})
    return {"seed": int(seed), "index": int(index), "site_version": SITE_VERSION,
            "top_depth_m": top, "p_datum_bar": ATM_BAR + HYDROSTATIC_BAR_PER_M * top,
            "temperature_c": temp, "dz_m": dz, "permx_md": perm, "wells": wells}


# ---------------------------------------------------------------------------------------------
# Level geometry: which fine cells make up each level cell

def fine_shape():
    return tuple(g * f for g, f in zip(GLOBAL_SHAPE, FINE_PER_GLOBAL))


def nest_boxes(well):
    """The well's four CARFIN records as dicts: level, box (I1, I2, J1, J2, K1, K2; 1-based in the
    parent's cells), refinement, shape (NX, NY, NZ), carfin (its name, WELL_Lk), parent (GLOBAL
    or the parent's CARFIN name)."""
    i, j = well["i"], well["j"]
    out = []
    parent_shape = GLOBAL_SHAPE
    for n, spec in enumerate(NEST):
        if n == 0:
            box = (i + LGR1_BOX_OFFSET[0] + 1, i + LGR1_BOX_OFFSET[1] + 1,
                   j + LGR1_BOX_OFFSET[0] + 1, j + LGR1_BOX_OFFSET[1] + 1, 1, GLOBAL_SHAPE[2])
        else:
            box = spec["box"]
        r = spec["refinement"]
        shape = tuple((box[2 * a + 1] - box[2 * a] + 1) * r[a] for a in range(3))
        for a in range(3):
            if box[2 * a] < 1 or box[2 * a + 1] > parent_shape[a]:
                raise ValueError("%s box %s outside its parent %s" % (spec["level"], box,
                                                                      parent_shape))
        out.append({"level": spec["level"], "box": box, "refinement": r, "shape": shape,
                    "parent": "GLOBAL" if n == 0 else "%s_L%d" % (well["name"], n),
                    "carfin": "%s_L%d" % (well["name"], n + 1)})
        parent_shape = shape
    return out


def coarse_window(rec):
    """A CARFIN record's coarse window (i0, i1, j0, j1, k0, k1; the parent's cells, 0-based,
    half-open) and repeat (rx, ry, rz) by docs/nested-sites.md: the box widened by
    w = (NX - (I2 - I1 + 1)) / 2 in x and likewise in y, over the box's layers; vertical repeat
    NZ / (K2 - K1 + 1)."""
    b, s = rec["box"], rec["shape"]
    wx = (s[0] - (b[1] - b[0] + 1)) // 2
    wy = (s[1] - (b[3] - b[2] + 1)) // 2
    window = (b[0] - 1 - wx, b[1] + wx, b[2] - 1 - wy, b[3] + wy, b[4] - 1, b[5])
    return window, (1, 1, s[2] // (b[5] - b[4] + 1))


def level_blocks(site):
    """Every level's cells as blocks of fine cells: {"GLOBAL": geom, (well, "LGRk"): geom} with
    geom = {"start": (fx0, fy0, fz0), "step": (sx, sy, sz), "shape": (nx, ny, nz)}: level cell
    (a, b, c) is fine cells [fx0 + a sx, fx0 + (a + 1) sx) x ... (0-based). Derived from the same
    nest_boxes() the deck writer writes, so deck and averaging cannot disagree."""
    out = {"GLOBAL": {"start": (0, 0, 0), "step": FINE_PER_GLOBAL, "shape": GLOBAL_SHAPE}}
    for w in site["wells"]:
        start, step = (0, 0, 0), FINE_PER_GLOBAL
        for rec in nest_boxes(w):
            box, r = rec["box"], rec["refinement"]
            new_step, new_start = [], []
            for a in range(3):
                if step[a] % r[a]:
                    raise ValueError("%s: refinement %d does not divide %d fine cells"
                                     % (rec["level"], r[a], step[a]))
                new_step.append(step[a] // r[a])
                new_start.append(start[a] + (box[2 * a] - 1) * step[a])
            start, step = tuple(new_start), tuple(new_step)
            out[(w["name"], rec["level"])] = {"start": start, "step": step,
                                              "shape": rec["shape"]}
    return out


def average_to_level(field, geom):
    """field (..., NXf, NYf, NZf) -> (..., nx, ny, nz): the mean over each level cell's fine
    cells."""
    (x0, y0, z0), (sx, sy, sz), (nx, ny, nz) = geom["start"], geom["step"], geom["shape"]
    f = np.asarray(field)[..., x0:x0 + nx * sx, y0:y0 + ny * sy, z0:z0 + nz * sz]
    lead = f.shape[:-3]
    f = f.reshape(lead + (nx, sx, ny, sy, nz, sz))
    n = len(lead)
    return f.mean(axis=(n + 1, n + 3, n + 5))


def fine_dz(site):
    """Thickness of each fine layer (m)."""
    return np.repeat(np.asarray(site["dz_m"]) / FINE_PER_GLOBAL[2], FINE_PER_GLOBAL[2])


def fine_cell_centres(site):
    """x, y, depth of every fine cell centre (each (NXf, NYf, NZf)), metres, GLOBAL frame."""
    nxf, nyf, nzf = fine_shape()
    dx = CELL_XY / FINE_PER_GLOBAL[0]
    dy = CELL_XY / FINE_PER_GLOBAL[1]
    dzf = fine_dz(site)
    x = (np.arange(nxf) + 0.5) * dx
    y = (np.arange(nyf) + 0.5) * dy
    z = site["top_depth_m"] + np.cumsum(dzf) - 0.5 * dzf
    return np.meshgrid(x, y, z, indexing="ij")


def well_fine_column(well):
    """The fine column (0-based) of the well's point, the centre of its GLOBAL column (the lower
    index on a tie), as LGR4's injection channel places it."""
    fx, fy = FINE_PER_GLOBAL[0], FINE_PER_GLOBAL[1]
    return well["i"] * fx + (fx - 1) // 2, well["j"] * fy + (fy - 1) // 2


# ---------------------------------------------------------------------------------------------
# Decks

def _fmt(values, fmt="%.6g", per_line=8):
    vals = [fmt % v for v in values]
    return "\n".join(" " + " ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line))


def _tstep(times):
    return _fmt(np.diff(np.concatenate(([0.0], times))), "%.10g")


def _header(site, what):
    return ("-- %s written by %s (do not edit: regenerate)\n-- site %s: seed %d, index %d, "
            "site version %d\n" % (what, GENERATOR, site_id(site["seed"], site["index"]),
                                   site["seed"], site["index"], SITE_VERSION))


def nested_deck_text(site):
    """The nested deck (docs/nested-sites.md, "The deck"): GLOBAL grid, PERMX, one CARFIN nest
    per well, EQUIL, RTEMP, the wells and 24 TSTEP."""
    nx, ny, nz = GLOBAL_SHAPE
    perm = np.repeat(site["permx_md"], nx * ny)
    carfins = []
    for w in site["wells"]:
        for rec in nest_boxes(w):
            b, s = rec["box"], rec["shape"]
            carfins.append("CARFIN\n '%s' %d %d %d %d %d %d %d %d %d 1 '%s' /\nENDFIN\n"
                           % ((rec["carfin"],) + tuple(b) + tuple(s) + (rec["parent"],)))
    welspecs = "\n".join(" '%s' 'G1' %d %d 1* 'GAS' /" % (w["name"], w["i"] + 1, w["j"] + 1)
                         for w in site["wells"])
    compdat = "\n".join(" '%s' %d %d %d %d 'OPEN' /" % (w["name"], w["i"] + 1, w["j"] + 1,
                                                       w["k1"] + 1, w["k2"] + 1)
                        for w in site["wells"])
    wconinje = "\n".join(" '%s' 'GAS' 'OPEN' 'RATE' %.8g 1* %g /"
                         % (w["name"], rate_sm3_per_day(w["rate_mt_per_year"]), BHP_LIMIT_BAR)
                         for w in site["wells"])
    n_lgr = len(site["wells"]) * N_LEVELS
    return (_header(site, "Nested site deck (docs/nested-sites.md)") +
            "\nRUNSPEC\nDIMENS\n %d %d %d /\nMETRIC\nEQLDIMS\n 1 /\nLGR\n %d /\n\nGRID\n"
            "DXV\n%s\n/\nDYV\n%s\n/\nDZV\n%s\n/\nTOPS\n %d*%.6f /\nPERMX\n%s\n/\n%s\n"
            "PROPS\nRTEMP\n %.6f /\n\nSOLUTION\nEQUIL\n %.6f %.6f /\n\n"
            "SCHEDULE\nWELSPECS\n%s\n/\nCOMPDAT\n%s\n/\nWCONINJE\n%s\n/\nTSTEP\n%s\n/\nEND\n"
            % (nx, ny, nz, n_lgr, _fmt([CELL_XY] * nx), _fmt([CELL_XY] * ny),
               _fmt(site["dz_m"], "%.10g"), nx * ny, site["top_depth_m"], _fmt(perm, "%.8g"),
               "".join(carfins), site["temperature_c"], site["top_depth_m"],
               site["p_datum_bar"], welspecs, compdat, wconinje, _tstep(report_times())))


FINE_TEMPLATE = """{header}-- The site on a uniform grid at the finest level's cell size
-- ({dx:g} m x {dy:g} m, {fz} layers per GLOBAL layer), for OPM Flow 2022.10 (no CARFIN).
-- Outer ring of columns: MULTPV {ring:g}.

RUNSPEC
TITLE
 ufno nested site {sid}
DIMENS
 {nx} {ny} {nz} /
{runspec_co2store}WELLDIMS
 {nwells} {nz} 1 {nwells} /
UNIFIN
UNIFOUT

GRID
INIT
DXV
 {nx}*{dx:.10g} /
DYV
 {ny}*{dy:.10g} /
DZV
{dzv}
/
TOPS
 {ncol}*{top:.6f} /
INCLUDE
 'include/PERMX.INC' /
COPY
 PERMX PERMY /
/
INCLUDE
 'include/PERMZ.INC' /
PORO
 {ncell}*{poro:g} /
INCLUDE
 'include/MULTPV.INC' /

{props_solution}
SUMMARY
FGIT
FGIR
FPR
WBHP
/
WGIT
/

SCHEDULE
RPTRST
 'BASIC=2' /
WELSPECS
{welspecs}
/
COMPDAT
{compdat}
/
WCONINJE
{wconinje}
/
TSTEP
{tstep}
/
END
"""


def write_fine_deck(site, deck_dir):
    """deck_dir/FINE.DATA and deck_dir/include/*.INC (the fine uniform deck)."""
    inc = os.path.join(deck_dir, "include")
    os.makedirs(inc, exist_ok=True)
    nxf, nyf, nzf = fine_shape()
    hdr = _header(site, "include")
    # PERMX per fine cell: its GLOBAL layer's value; order I fastest, then J, then K.
    kx = np.repeat(np.asarray(site["permx_md"]), FINE_PER_GLOBAL[2] * nxf * nyf)
    for name, v in (("PERMX", kx), ("PERMZ", KZ_OVER_KX * kx)):
        with open(os.path.join(inc, name + ".INC"), "w") as f:
            f.write(hdr + "%s\n%s\n/\n" % (name, _fmt(v, "%.8g")))
    ring = np.ones((nzf, nyf, nxf))
    ring[:, 0, :] = ring[:, -1, :] = ring[:, :, 0] = ring[:, :, -1] = MULTPV_RING
    with open(os.path.join(inc, "MULTPV.INC"), "w") as f:
        f.write(hdr + "MULTPV\n%s\n/\n" % _fmt(ring.reshape(-1), "%g"))
    rows = uc.sgof_table(SWI, VG_LAMBDA)
    with open(os.path.join(inc, "SGOF.INC"), "w") as f:
        f.write(hdr + "-- SWI %g, van Genuchten lambda %g; Sg krg krw(brine) Pc[bar]\nSGOF\n"
                % (SWI, VG_LAMBDA))
        for r in rows:
            f.write("%.7f %.7f %.7f %.7f\n" % tuple(r))
        f.write("/\n")
    top = site["top_depth_m"]
    bottom = top + sum(site["dz_m"])
    welspecs, compdat, wconinje = [], [], []
    fz = FINE_PER_GLOBAL[2]
    for w in site["wells"]:
        ci, cj = well_fine_column(w)
        welspecs.append(" '%s' 'G1' %d %d 1* 'GAS' /" % (w["name"], ci + 1, cj + 1))
        compdat.append(" '%s' %d %d %d %d 'OPEN' 1* 1* 0.2 /" % (
            w["name"], ci + 1, cj + 1, w["k1"] * fz + 1, (w["k2"] + 1) * fz))
        wconinje.append(" '%s' 'GAS' 'OPEN' 'RATE' %.8g 1* %g /"
                        % (w["name"], rate_sm3_per_day(w["rate_mt_per_year"]), BHP_LIMIT_BAR))
    text = FINE_TEMPLATE.format(
        header=_header(site, "Fine uniform deck of a nested site"),
        dx=CELL_XY / FINE_PER_GLOBAL[0], dy=CELL_XY / FINE_PER_GLOBAL[1], fz=fz,
        ring=MULTPV_RING, sid=site_id(site["seed"], site["index"]), nx=nxf, ny=nyf, nz=nzf,
        runspec_co2store=uc.runspec_co2store(uc.SGOF_ROWS + 4), nwells=len(site["wells"]), dzv=_fmt(fine_dz(site), "%.10g"),
        ncol=nxf * nyf, top=top, ncell=nxf * nyf * nzf, poro=POROSITY,
        props_solution=uc.props_solution(top, site["p_datum_bar"], uc.ROCK_COMPRESSIBILITY,
                                         site["temperature_c"], bottom + 10.0, top - 5.0,
                                         top - 100.0, bottom + 100.0),
        welspecs="\n".join(welspecs), compdat="\n".join(compdat),
        wconinje="\n".join(wconinje), tstep=_tstep(report_times()))
    with open(os.path.join(deck_dir, "FINE.DATA"), "w") as f:
        f.write(text)


def write_site(site, site_dir):
    """site.json, SITE.DATA and fine/ (each written under a temporary name and renamed)."""
    os.makedirs(site_dir, exist_ok=True)
    fine = os.path.join(site_dir, "fine")
    tmp = fine + ".tmp.%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    write_fine_deck(site, tmp)
    shutil.rmtree(fine, ignore_errors=True)
    os.replace(tmp, fine)
    for name, text in (("SITE.DATA", nested_deck_text(site)),
                       ("site.json", json.dumps(site, indent=1, sort_keys=True) + "\n")):
        path = os.path.join(site_dir, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


# ---------------------------------------------------------------------------------------------
# Flow results -> targets

class SiteFailure(Exception):
    def __init__(self, reason, detail=""):
        super().__init__("%s: %s" % (reason, detail))
        self.reason, self.detail = reason, detail


def read_fine_results(run_dir):
    """PRESSURE and SGAS (NT + 1, NXf, NYf, NZf) at report steps 0..24, and the summary."""
    from opm.io.ecl import ERst, ESmry
    rst = ERst(os.path.join(run_dir, "FINE.UNRST"))
    steps = list(rst.report_steps)
    if steps != list(range(NT + 1)):
        raise SiteFailure("missing_report_steps", "UNRST has report steps %s" % steps)
    nxf, nyf, nzf = fine_shape()
    p = np.zeros((NT + 1, nxf, nyf, nzf))
    sg = np.zeros_like(p)
    for s in steps:
        for name, out in (("PRESSURE", p), ("SGAS", sg)):
            a = np.asarray(rst[name, s], dtype=np.float64)
            if a.size != nxf * nyf * nzf:
                raise SiteFailure("bad_restart", "%s step %d: %d values" % (name, s, a.size))
            out[s] = a.reshape(nzf, nyf, nxf).transpose(2, 1, 0)   # I fastest in the file
    smry = ESmry(os.path.join(run_dir, "FINE.SMSPEC"))
    summary = {"TIME": np.asarray(smry["TIME", True], dtype=np.float64)}
    for k in smry.keys():
        if k.startswith("WGIT:") or k.startswith("WBHP:"):
            summary[k] = np.asarray(smry[k, True], dtype=np.float64)
    return p, sg, summary


def check_rates(site, summary):
    """Every well injected its rate at every report (relative error of WGIT); max BHP."""
    t = summary["TIME"]
    if len(t) != NT or np.max(np.abs(t - report_times()) / report_times()) > 1e-5:
        raise SiteFailure("report_times", "summary times %s" % t[:3])
    worst, bhp = 0.0, 0.0
    for w in site["wells"]:
        expected = rate_sm3_per_day(w["rate_mt_per_year"]) * t
        rel = float(np.max(np.abs(summary["WGIT:" + w["name"]] - expected) / expected))
        worst = max(worst, rel)
        bhp = max(bhp, float(np.max(summary["WBHP:" + w["name"]])))
    if worst > RATE_TOLERANCE:
        raise SiteFailure("rate_not_met", "WGIT rel. error %.3g, max BHP %.1f bar" % (worst, bhp))
    return worst, bhp


def level_coordinates(site, geom):
    """cell_x, cell_y, cell_depth (nx, ny, nz) of a level: its fine cells' centres averaged."""
    return tuple(average_to_level(c, geom) for c in fine_cell_centres(site))


def level_fields(site, dp, sg):
    """{level key: {"dP": (T, nx, ny, nz), "SG": ...}} from the fine fields (T, NXf, NYf, NZf)."""
    out = {}
    for key, geom in level_blocks(site).items():
        out[key] = {"dP": average_to_level(dp, geom)}
        if key != "GLOBAL":
            out[key]["SG"] = average_to_level(sg, geom)
    return out


def write_target(path, site, dp, sg, info=None):
    """Every level's truth in the prediction-file layout (docs/nested-sites.md): /times_days,
    /GLOBAL/dP and /<well>/LGRk/{dP,SG} float32 (T, nx, ny, nz) with units, each level's cell
    centres; format = "ufno-nested-target"."""
    tmp = path + ".tmp.%d" % os.getpid()
    blocks = level_blocks(site)
    fields = level_fields(site, dp, sg)
    try:
        with h5py.File(tmp, "w", libver="earliest") as f:
            f.attrs["format"] = "ufno-nested-target"
            f.attrs["generator"] = GENERATOR
            f.attrs["site"] = site_id(site["seed"], site["index"])
            f.attrs["wells"] = " ".join(w["name"] for w in site["wells"])
            f.attrs["averaging"] = "plain mean over each level cell's fine cells"
            for k, v in (info or {}).items():
                f.attrs[k] = v
            f.create_dataset("times_days", data=report_times())
            for key, geom in blocks.items():
                g = f.require_group(key if key == "GLOBAL" else "%s/%s" % key)
                g.attrs["level"] = "GLOBAL" if key == "GLOBAL" else key[1]
                g.attrs["fine_start"] = np.asarray(geom["start"], dtype=np.int32)
                g.attrs["fine_step"] = np.asarray(geom["step"], dtype=np.int32)
                for name, units in (("dP", "bar"), ("SG", "1")):
                    if name in fields[key]:
                        d = g.create_dataset(name, data=fields[key][name].astype(np.float32))
                        d.attrs["units"] = units
                for name, v in zip(("cell_x", "cell_y", "cell_depth"),
                                   level_coordinates(site, geom)):
                    g.create_dataset(name, data=v).attrs["units"] = "m"
            f.attrs["complete"] = np.int64(1)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def target_complete(path):
    if not os.path.exists(path):
        return False
    try:
        with h5py.File(path, "r") as f:
            return int(f.attrs.get("complete", 0)) == 1
    except OSError:
        return False


def read_level(path, key, name):
    """A level's field (T, nx, ny, nz) from a target or prediction file; key "GLOBAL" or
    (well, "LGRk")."""
    with h5py.File(path, "r") as f:
        return f[(key if key == "GLOBAL" else "%s/%s" % key) + "/" + name][()]


# ---------------------------------------------------------------------------------------------
# Running Flow on a site (resumable)

def _now():
    return datetime.datetime.now().isoformat(timespec="seconds")


def _log(data, row):
    path = os.path.join(data, "runs.csv")
    fields = ["site", "status", "reason", "detail", "wall_s", "rate_rel_err", "bhp_max_bar",
              "dp_max_bar", "sg_max", "timestamp"]
    flow_batch.append_csv(path, fields, row)
    print("%s %s %s %s" % (row["site"], row["status"], row.get("wall_s", ""),
                           row.get("reason", "")), flush=True)


def site_dir(data, index):
    return os.path.join(data, "site_%06d" % index)


def process_site(data, seed, index, flow="flow", timeout=900.0, retry_failed=False):
    """Writes the site's decks (if missing), runs Flow on the fine deck and writes target.h5.
    Skips a finished site; a site that failed before (DIR/site_NNNNNN/FAILED) only with
    retry_failed. Returns "ok", "skipped" or "failed"."""
    d = site_dir(data, index)
    target = os.path.join(d, "target.h5")
    if target_complete(target):
        return "skipped"
    failed = os.path.join(d, "FAILED")
    if os.path.exists(failed) and not retry_failed:
        return "skipped"
    site = sample_site(seed, index)
    if not (os.path.exists(os.path.join(d, "site.json")) and
            os.path.exists(os.path.join(d, "fine", "FINE.DATA"))):
        write_site(site, d)
    sid = site_id(seed, index)
    run_tmp = os.path.join(d, "run.tmp")
    shutil.rmtree(run_tmp, ignore_errors=True)
    os.makedirs(run_tmp)
    cmd = [flow] + FLOW_FLAGS + ["--output-dir=" + run_tmp,
                                 os.path.join(d, "fine", "FINE.DATA")]
    t0 = time.monotonic()
    row = {"site": sid, "timestamp": _now()}
    try:
        with open(os.path.join(run_tmp, "flow.log"), "w") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        wall = time.monotonic() - t0
        row["wall_s"] = "%.1f" % wall
        if rc != 0:
            raise SiteFailure("flow_exit_%d" % rc)
        p, sg, summary = read_fine_results(run_tmp)
        rel, bhp = check_rates(site, summary)
        dp = p[1:] - p[0][None]
        sg = sg[1:]
        if not (np.isfinite(dp).all() and np.isfinite(sg).all()):
            raise SiteFailure("non_finite")
    except subprocess.TimeoutExpired:
        row.update(status="failed", reason="timeout", wall_s="%.1f" % (time.monotonic() - t0))
        _log(data, row)
        open(failed, "w").write("timeout\n")
        return "failed"
    except SiteFailure as e:
        row.update(status="failed", reason=e.reason, detail=e.detail)
        _log(data, row)
        open(failed, "w").write("%s %s\n" % (e.reason, e.detail))
        return "failed"
    run_dir = os.path.join(d, "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.replace(run_tmp, run_dir)
    for junk in ("FINE.DBG",):
        if os.path.exists(os.path.join(run_dir, junk)):
            os.remove(os.path.join(run_dir, junk))
    write_target(target, site, dp, sg, {"flow_wall_s": wall, "flow_flags": " ".join(FLOW_FLAGS),
                                        "rate_rel_err": rel, "bhp_max_bar": bhp})
    if os.path.exists(failed):
        os.remove(failed)
    row.update(status="ok", rate_rel_err="%.2e" % rel, bhp_max_bar="%.1f" % bhp,
               dp_max_bar="%.2f" % dp.max(), sg_max="%.3f" % sg.max())
    _log(data, row)
    return "ok"


def describe(site):
    ws = ", ".join("%s (%d, %d) layers %d-%d %.2f Mt/yr" % (w["name"], w["i"] + 1, w["j"] + 1,
                                                            w["k1"] + 1, w["k2"] + 1,
                                                            w["rate_mt_per_year"])
                   for w in site["wells"])
    return ("%s: top %.0f m, %.1f bar, %.1f degC, dz %s m, k %s mD; %s"
            % (site_id(site["seed"], site["index"]), site["top_depth_m"], site["p_datum_bar"],
               site["temperature_c"], "/".join("%.1f" % v for v in site["dz_m"]),
               "/".join("%.0f" % v for v in site["permx_md"]), ws))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.nested_sites",
                                description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--end", type=int, required=True, help="exclusive")
    p.add_argument("--out", help="data directory: OUT/site_NNNNNN/")
    p.add_argument("--run", action="store_true", help="run Flow and write target.h5 (resumable)")
    p.add_argument("--flow", default="flow")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per Flow run")
    p.add_argument("--retry-failed", action="store_true")
    p.add_argument("--print", action="store_true", help="print the sampled parameters only")
    a = p.parse_args(argv)
    n_fail = 0
    for i in range(a.start, a.end):
        site = sample_site(a.seed, i)
        if a.print or not a.out:
            print(describe(site))
            continue
        if not a.run:
            write_site(site, site_dir(a.out, i))
            print("wrote %s  %s" % (site_dir(a.out, i), describe(site)))
            continue
        n_fail += process_site(a.out, a.seed, i, a.flow, a.timeout, a.retry_failed) == "failed"
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
