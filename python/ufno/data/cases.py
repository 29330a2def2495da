#!/usr/bin/python3
"""Random CO2-injection cases for U-FNO training data, as project case files and OPM Flow decks.

Usage (library: sample_case, write_case_h5, write_deck, compute_multx):
  PYTHONPATH=python /usr/bin/python3 -m ufno.cases --seed 1 --start 0 --end 10 --out data/opm/seed_0001
  PYTHONPATH=python /usr/bin/python3 -m ufno.cases --seed 1 --start 3 --end 4 --print    # parameters only

Case i of seed s is always the same: its random numbers come from
numpy.random.SeedSequence([s, i]) (spawned into independent streams for the operating/fluid
scalars, the geology parameters, the permeability field and the porosity noise), whatever else
is generated. Files are written
byte-identically for the same (s, i) (HDF5 without time stamps; decks as plain text with fixed
formatting). Cases follow the sampling of the U-FNO paper (Wen et al. 2022), on a reduced grid.

Grid (X = layers from the top, Y = radial cells from the well; both multiples of 8):
  X = 24 layers of 200/24 = 8.3333 m (200 m); Y = 48 radial cells, dr_i = 3.5938 * 1.196374^i m
  (i = 0..47; first cell 3.59 m as in the paper, last 16.2 km), from the well radius 0.1 m to an
  outer radius of 100.0 km; T = 24 report times t_k = sum_{i<=k} 1.421245^i days (1 day .. 30 yr).

Sampled parameters (U = uniform, LU = log-uniform, all independent unless said):

  | parameter                    | distribution                                                  |
  |------------------------------|---------------------------------------------------------------|
  | formation thickness          | U integer 2..24 layers (16.7..200 m); layers below: inactive  |
  |                              | (PERMX = PERMZ = PORO = 0, ACTNUM 0 in the deck)              |
  | perforation                  | one interval (80 %): length U integer 1..n_active, top U      |
  |                              | within the formation; two disjoint intervals (20 %)           |
  | structure of ln kr           | gaussian 45 %, layered 20 %, layered + gaussian 15 %,         |
  |                              | layer-cake 12 % (one value per layer), homogeneous 8 %        |
  | correlation kernel           | gaussian or exponential (50/50), on the cell-index grid       |
  | correlation length radial    | LU 2..48 cells                                                |
  | correlation length vertical  | LU 0.3..6 layers (gaussian); layered: units of 1..6 layers    |
  | geometric mean of kr         | LU 5..3000 mD                                                 |
  | std of ln kr                 | U 0..1.8 (homogeneous: 0); kr clipped to [2, 10000] mD        |
  | anisotropy kz/kr             | LU 0.001..1 per case; in 30 % of the cases each cell's ratio  |
  |                              | varies by exp(N(0, 0.7)) around it (clipped to 0.001..1)      |
  | porosity                     | U mean 0.08..0.30, + U(0..0.05) (ln kr - ln kgeo)             |
  |                              | + N(0, U(0.005..0.03)) correlated noise; clipped [0.03, 0.40] |
  | injection rate INJ_RATE      | U 0.2..2 Mt/yr (deck: surface rate of a 10-degree wedge)      |
  | temperature TEMP             | U 30..125 degC (paper 30..180; OPM's CO2 tables end at 400 K) |
  | initial pressure PRESSURE    | U 100..300 bar at the top of the formation; the top depth is  |
  |                              | hydrostatic from it: (P - 1.01325 bar) / (1000 kg/m3 g)       |
  | irreducible water SWI        | U 0.1..0.3                                                    |
  | van Genuchten VG_LAMBDA      | U 0.3..0.7                                                    |
  | injectivity screen           | geology redrawn while PRESSURE + dP estimate > 500 bar (below)|

Sampler version 3 (this code, for every seed) widened version 2's geology (kgeo 10..1000 mD,
sigma 0.3..1.5, corr_r 4..24 and corr_z 0.5..3 uniform, kz/kr 0.01..1 per case, porosity mean
0.12..0.25 with slope 0.03 and noise 0.01 clipped to [0.05, 0.35], one perforation interval,
three structures) so that hand-written decks (homogeneous, layer-cake), other samplers and the
sweeps' generated fields (screening/GeostatField.cpp) fall inside the training distribution.
Version 2 is gone from the code: the shipped examples (examples/opm/s1_*) and the data set of
the first shipped models (seed 1) were drawn with it, and case i of seed 1 drawn today is a
version-3 case, not theirs.

Injectivity screen: the operating and fluid parameters (rate, TEMP, PRESSURE, SWI, VG_LAMBDA)
are drawn once and keep the distributions above; the geology and completion (thickness,
perforation, kr/kz/porosity) are redrawn until PRESSURE + a steady radial-flow estimate of the
pressure buildup (brine 0.5 cP, CO2 650 kg/m3, out to 1 km, through the perforated layers)
<= 500 bar. Without it about half of the cases exceed the injector's 700 bar BHP limit and do
not inject their rate (measured: 3 of the first 6 of seed 1). About 25 % of draws are redrawn
(1.3 draws per case); the accepted cases have fewer low-kh/high-rate combinations, and the
pressure buildup still reaches 100-250 bar in some of them.

Fixed: well radius 0.1 m; rock compressibility 4.5e-5 1/bar at the initial pressure; no
salinity; capillary entry pressure P0 = 0.2 bar, Pc capped at 5 bar; closed outer boundary;
injector BHP limit 700 bar (the CO2 tables end at 1000 bar).
Saturation functions (SGOF, brine is OIL), with S* = (Sw - SWI)/(1 - SWI), Sw = 1 - Sg:
  krw = sqrt(S*) (1 - (1 - S*^(1/lambda))^lambda)^2     (van Genuchten-Mualem)
  krg = (1 - S*)^2 (1 - S*^2)                            (Corey gas, as TOUGH2/ECO2N)
  Pc  = min(P0 (S*^(-1/lambda) - 1)^(1 - lambda), 5 bar)
kr is at least 2 mD, so its encoding ln(kr)/15 >= 0.046 stays clear of the inactive marker 0
(ufno_predict warns about kr <= 1 mD); kz (down to 0.02 mD) may be below 1 mD. Any kz with
|ln kz| < 1e-3 is moved to |ln kz| = 1e-3 (the same guard is applied to kr).

Deck (OPM Flow 2022.10): RADIAL wedge of 10 degrees (I = radial, J = theta with one cell,
K = layers), INRAD 0.1 m, DRV, DTHETAV, DZV, TOPS (top layer only), ACTNUM 0 below the
formation; CO2STORE with OIL (brine) GAS DISGAS, RSVD 0; EQUIL datum = top of the formation at
PRESSURE; the injector 'INJ' in column I = J = 1 with one COMPDAT line per perforated layer and
the connection factor CF = 0.008527 theta k dz / ln(r_n0 / r_w); WCONINJE gas surface rate
INJ_RATE * 1e9 / 365.25 / 1.872 * 10/360 sm3/day. Cell "node" radii are the radii whose
steady-state (logarithmic) pressure equals the cell's volume average,
ln r_n = (b^2 ln b - a^2 ln a)/(b^2 - a^2) - 1/2 for the annulus [a, b] (2.25 m for the first
cell). MULTX makes OPM's radial transmissibilities equal the exact two-point ones built on these
node radii (harmonic mean of theta k dz / ln(b / r_n) half-transmissibilities): it is exact/OPM
from the TRANX of a dry run without MULTX (with these node radii OPM's value is about 8 % low
between the first two cells, MULTX ~ 1.09, and 0-1 % low elsewhere); --no-multx skips it.
"""

import argparse
import math
import os
import zlib
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

# ---------------------------------------------------------------------------------------------
# Grid and fixed settings
NX, NY, NT = 24, 48, 24
THICKNESS = 200.0                       # m
DZ = THICKNESS / NX                     # m
WELL_RADIUS = 0.1                       # m
DR0, DR_GROWTH = 3.5938, 1.196374       # dr_i = DR0 * DR_GROWTH^i, outer radius 100.0 km
THETA_DEG = 10.0                        # wedge angle of the radial deck
CO2_SURFACE_DENSITY = 1.872             # kg/sm3 (CO2 at 15.56 degC, 1 atm, as OPM CO2STORE)
DAYS_PER_YEAR = 365.25
CDARCY = 0.008527                       # metric Darcy constant (mD m2 / (m cP) -> m3/day/bar)
ROCK_COMPRESSIBILITY = 4.5e-5           # 1/bar
PC_ENTRY_BAR, PC_MAX_BAR = 0.2, 5.0
BHP_LIMIT_BAR = 700.0                   # below the CO2 tables' 1000 bar
BRINE_GRADIENT = 1000.0 * 9.80665 / 1e5  # bar/m, for the depth of the formation top
K_MIN, K_MAX = 2.0, 10000.0             # mD; kr >= 2 mD keeps ln(kr)/15 clearly above the
#                                         inactive marker 0 (ufno_predict warns at kr <= 1 mD)
SGOF_ROWS = 41
# Injectivity screen (sample_case): geology is redrawn while PRESSURE + estimate > this.
SCREEN_MAX_BAR = 500.0
SCREEN_RADIUS = 1000.0                  # m
SCREEN_BRINE_VISCOSITY = 5e-4           # Pa s
SCREEN_CO2_DENSITY = 650.0              # kg/m3
SCREEN_MAX_ATTEMPTS = 1000

RANGES = {  # the sampling ranges (also checked by the tests)
    "n_active": (2, 24), "kgeo": (5.0, 3000.0), "sigma_lnk": (0.0, 1.8),
    "corr_r": (2.0, 48.0), "corr_z": (0.3, 6.0), "anisotropy": (0.001, 1.0),
    "poro_mean": (0.08, 0.30), "poro_slope": (0.0, 0.05), "poro_noise": (0.005, 0.03),
    "INJ_RATE": (0.2, 2.0), "TEMP": (30.0, 125.0),
    "PRESSURE": (100.0, 300.0), "SWI": (0.1, 0.3), "VG_LAMBDA": (0.3, 0.7),
    "PORO": (0.03, 0.40), "PERMX": (K_MIN, K_MAX),
}
STRUCTURES = ("gaussian", "layered", "layered+gaussian", "layer-cake", "homogeneous")
STRUCTURE_P = (0.45, 0.20, 0.15, 0.12, 0.08)
P_TWO_PERFORATIONS = 0.2
P_VARIABLE_ANISOTROPY = 0.3
ANISOTROPY_CELL_SIGMA = 0.7
GENERATOR = "python/ufno/data/cases.py"
FORMAT_VERSION = 1
# Bumped whenever sample_case() changes what a (seed, index) gives (data sets must not mix).
SAMPLER_VERSION = 3

UNITS = {"PERMX": "mD", "PERMZ": "mD", "PORO": "1", "DR": "m", "DZ": "m", "PERF": "1",
         "INJ_RATE": "Mt/yr", "TEMP": "degC", "PRESSURE": "bar", "SWI": "1",
         "VG_LAMBDA": "1", "TIMES": "day"}
# Dataset descriptions, written with describe_datasets=True (examples/example_case.h5).
DESCRIPTIONS = {
    "PERMX": "horizontal (radial) permeability kr, (layer from top, radial cell from well); "
             "0 outside the formation",
    "PERMZ": "vertical permeability kz, (layer, radial cell)",
    "PORO": "porosity, (layer, radial cell)",
    "DR": "radial cell widths, from the well outwards",
    "DZ": "layer thicknesses, from the top",
    "PERF": "1 in perforated layers (well column), else 0",
    "INJ_RATE": "CO2 injection rate",
    "TEMP": "reservoir temperature",
    "PRESSURE": "initial reservoir pressure",
    "SWI": "irreducible water saturation",
    "VG_LAMBDA": "van Genuchten lambda (pore size distribution index)",
    "TIMES": "report times since the start of injection",
}


def split_of(seed, index):
    """The data split of case (seed, index): test when crc32("seed:index") % 10 == 0, validation
    when 1, else training. Deterministic, so adding cases never moves an old one."""
    h = zlib.crc32(("%d:%d" % (seed, index)).encode()) % 10
    return "test" if h == 0 else ("val" if h == 1 else "train")


def radial_widths():
    return DR0 * DR_GROWTH ** np.arange(NY)


def radial_edges():
    """Inner and outer radius of every radial cell (m)."""
    outer = WELL_RADIUS + np.cumsum(radial_widths())
    inner = np.concatenate(([WELL_RADIUS], outer[:-1]))
    return inner, outer


def annulus_areas():
    """r_outer^2 - r_inner^2 of every radial cell (m^2): its volume up to the wedge angle and the
    layer thickness, so porosity x this x DZ is its pore volume up to a constant."""
    inner, outer = radial_edges()
    return outer ** 2 - inner ** 2


def gas_extent(sg, threshold=0.01):
    """How many radial cells the gas reaches: 1 + the outermost radial cell with SG above the
    threshold in any layer, 0 where there is none. sg (..., X, Y) -> (...)."""
    reach = (np.asarray(sg) > threshold).any(axis=-2)  # (..., Y)
    ny = reach.shape[-1]
    return np.where(reach.any(axis=-1), ny - np.argmax(reach[..., ::-1], axis=-1), 0)


def node_radii():
    """The radius whose steady-state (logarithmic) pressure equals the cell's volume average:
    ln r = (b^2 ln b - a^2 ln a) / (b^2 - a^2) - 1/2 for the annulus [a, b]."""
    a, b = radial_edges()
    return np.exp((b * b * np.log(b) - a * a * np.log(a)) / (b * b - a * a) - 0.5)


def report_times():
    """t_k = sum_{i<=k} 1.421245^i days, k = 0..23 (same accumulation as the C++ encoder)."""
    t, s = [], 0.0
    for k in range(NT):
        s += math.pow(1.421245, k)
        t.append(s)
    return np.array(t)


def surface_rate_sm3_per_day(rate_mt_per_year):
    """Surface CO2 rate of the wedge (sm3/day) for a full-circle rate in Mt/yr."""
    return rate_mt_per_year * 1e9 / DAYS_PER_YEAR / CO2_SURFACE_DENSITY * THETA_DEG / 360.0


# ---------------------------------------------------------------------------------------------
# Sampling

def correlated_field(rng, lz, lr, kernel):
    """Standard normal field on the (NX, NY) index grid: white noise on a 4x larger periodic grid,
    filtered with the square root of the covariance spectrum (normalised to unit variance), and
    the top-left (NX, NY) block kept (no wrap-around)."""
    nz, nr = 4 * NX, 4 * NY
    kz = np.fft.fftfreq(nz)[:, None]           # cycles per cell
    kr = np.fft.fftfreq(nr)[None, :]
    if kernel == "gaussian":                   # C(h) = exp(-(h/L)^2)
        spec = np.exp(-(np.pi ** 2) * ((kz * lz) ** 2 + (kr * lr) ** 2))
    else:                                      # C(h) = exp(-|h/L|), 2-D spectrum
        spec = (1.0 + (2 * np.pi) ** 2 * ((kz * lz) ** 2 + (kr * lr) ** 2)) ** -1.5
    spec = spec / spec.mean()
    noise = rng.standard_normal((nz, nr))
    field = np.real(np.fft.ifft2(np.fft.fft2(noise) * np.sqrt(spec)))
    return field[:NX, :NY]


def layer_units(rng, n_active):
    """Stratigraphic units: thicknesses of 1..6 layers covering the formation; per-layer offsets
    N(0, 1) shared within a unit."""
    offsets = np.zeros(n_active)
    x = 0
    while x < n_active:
        h = int(rng.integers(1, 7))
        offsets[x:x + h] = rng.standard_normal()
        x += h
    return offsets


def _nudge_unit_perm(k):
    """Keep |ln k| >= 1e-3 so that the encoded ln(k)/15 is never 0 in an active cell."""
    lk = np.log(k)
    small = np.abs(lk) < 1e-3
    lk[small] = np.where(lk[small] < 0, -1e-3, 1e-3)
    return np.exp(lk)


def injectivity_estimate_bar(rate_mt_per_year, kr, perf):
    """A rough pressure buildup at the well [bar]: steady radial flow of brine (0.5 cP) at the
    reservoir volume rate of the CO2 (650 kg/m3) out to 1 km, through the perforated layers with
    the geometric mean kr of each layer within 1 km of the well."""
    q = rate_mt_per_year * 1e9 / (DAYS_PER_YEAR * 86400.0) / SCREEN_CO2_DENSITY
    near = radial_edges()[1] <= SCREEN_RADIUS
    kh = sum(math.exp(np.log(kr[x, near]).mean()) * DZ for x in np.flatnonzero(perf))
    return q * SCREEN_BRINE_VISCOSITY * math.log(SCREEN_RADIUS / WELL_RADIUS) / (
        2.0 * math.pi * kh * 9.869233e-16) / 1e5


def sample_case(seed, index):
    """The case (dict of arrays and scalars plus metadata) number `index` of seed `seed`.

    The operating and fluid parameters (rate, temperature, pressure, Swi, lambda) are drawn once;
    the geology and completion (thickness, perforation, permeability and porosity fields) are
    drawn until the injectivity screen passes: PRESSURE + injectivity_estimate_bar() <=
    SCREEN_MAX_BAR (otherwise flow would hit the injector's BHP limit and not inject the rate).
    All draws come from streams of SeedSequence([seed, index]), so the result is deterministic."""
    ss = np.random.SeedSequence([int(seed), int(index)])
    r_scalar, r_geo, r_perm, r_poro = [np.random.default_rng(s) for s in ss.spawn(4)]

    # Operating and fluid parameters (fixed draw order).
    rate = r_scalar.uniform(*RANGES["INJ_RATE"])
    temp = r_scalar.uniform(*RANGES["TEMP"])
    pres = r_scalar.uniform(*RANGES["PRESSURE"])
    swi = r_scalar.uniform(*RANGES["SWI"])
    lam = r_scalar.uniform(*RANGES["VG_LAMBDA"])

    for attempt in range(1, SCREEN_MAX_ATTEMPTS + 1):
        g = _sample_geology(r_geo, r_perm, r_poro)
        est = injectivity_estimate_bar(rate, g["kr"], g["perf"])
        if pres + est <= SCREEN_MAX_BAR:
            break
    else:
        raise RuntimeError("case %s: no geology passed the injectivity screen in %d attempts"
                           % (case_id(seed, index), SCREEN_MAX_ATTEMPTS))

    act = np.zeros((NX, NY), dtype=bool)
    act[:g["n_active"]] = True
    meta = dict(g["meta"])
    meta.update({"seed": int(seed), "index": int(index), "top_depth_m": top_depth(pres),
                 "screen_attempts": attempt, "screen_dp_estimate_bar": est})
    return {
        "PERMX": np.where(act, g["kr"], 0.0), "PERMZ": np.where(act, g["kz"], 0.0),
        "PORO": np.where(act, g["phi"], 0.0), "DR": radial_widths(), "DZ": np.full(NX, DZ),
        "PERF": g["perf"], "INJ_RATE": rate, "TEMP": temp, "PRESSURE": pres, "SWI": swi,
        "VG_LAMBDA": lam, "TIMES": report_times(), "meta": meta,
    }


def _log_uniform(rng, lo_hi):
    return math.exp(rng.uniform(*np.log(lo_hi)))


def _sample_perforation(rng, n_active):
    """Per-layer flags: one interval of 1..n_active layers, or (P_TWO_PERFORATIONS, with at least
    3 active layers) two disjoint intervals separated by at least one closed layer."""
    perf = np.zeros(NX, dtype=np.int32)
    if n_active >= 3 and rng.uniform() < P_TWO_PERFORATIONS:
        cut = int(rng.integers(1, n_active - 1))        # closed layer between the intervals
        a_len = int(rng.integers(1, cut + 1))
        a_top = int(rng.integers(0, cut - a_len + 1))
        b_len = int(rng.integers(1, n_active - cut))
        b_top = int(rng.integers(cut + 1, n_active - b_len + 1))
        perf[a_top:a_top + a_len] = 1
        perf[b_top:b_top + b_len] = 1
        return perf
    length = int(rng.integers(1, n_active + 1))
    top = int(rng.integers(0, n_active - length + 1))
    perf[top:top + length] = 1
    return perf


def _standard_lnk_field(r_perm, structure, kernel, n_active, corr_z, corr_r):
    """The standard normal pattern of ln kr on (NX, NY) for one structure."""
    if structure == "homogeneous":
        return np.zeros((NX, NY))
    if structure == "gaussian":
        return correlated_field(r_perm, corr_z, corr_r, kernel)
    if structure == "layer-cake":
        g = np.zeros((NX, NY))
        g[:n_active] = r_perm.standard_normal(n_active)[:, None]
        return g
    units = np.zeros(NX)
    units[:n_active] = layer_units(r_perm, n_active)
    if structure == "layered":
        # Within-unit variation: long radial correlation, almost uncorrelated between layers.
        lateral = correlated_field(r_perm, 0.3, 2.0 * corr_r, kernel)
        return 0.9 * units[:, None] + 0.45 * lateral
    return 0.7 * units[:, None] + 0.7 * correlated_field(r_perm, corr_z, corr_r, kernel)


def _sample_geology(r_geo, r_perm, r_poro):
    """Thickness, perforation and the kr, kz, porosity fields (on the whole grid; the caller
    zeroes the layers below the formation)."""
    n_active = int(r_geo.integers(RANGES["n_active"][0], RANGES["n_active"][1] + 1))
    perf = _sample_perforation(r_geo, n_active)
    aniso = _log_uniform(r_geo, RANGES["anisotropy"])
    variable_aniso = bool(r_geo.uniform() < P_VARIABLE_ANISOTROPY)
    kgeo = _log_uniform(r_geo, RANGES["kgeo"])
    structure = STRUCTURES[int(r_geo.choice(len(STRUCTURES), p=STRUCTURE_P))]
    sigma = 0.0 if structure == "homogeneous" else r_geo.uniform(*RANGES["sigma_lnk"])
    poro_mean = r_geo.uniform(*RANGES["poro_mean"])
    poro_slope = r_geo.uniform(*RANGES["poro_slope"])
    poro_noise = r_geo.uniform(*RANGES["poro_noise"])
    kernel = ("gaussian", "exponential")[int(r_geo.integers(0, 2))]
    corr_r = _log_uniform(r_geo, RANGES["corr_r"])
    corr_z = _log_uniform(r_geo, RANGES["corr_z"])

    g = _standard_lnk_field(r_perm, structure, kernel, n_active, corr_z, corr_r)
    lnk = math.log(kgeo) + sigma * g
    kr = _nudge_unit_perm(np.clip(np.exp(lnk), K_MIN, K_MAX))
    ratio = np.full((NX, NY), aniso)
    if variable_aniso:
        ratio = np.clip(aniso * np.exp(ANISOTROPY_CELL_SIGMA * correlated_field(
            r_perm, corr_z, corr_r, kernel)), *RANGES["anisotropy"])
    kz = _nudge_unit_perm(kr * ratio)

    noise = correlated_field(r_poro, corr_z, corr_r, kernel)
    phi = np.clip(poro_mean + poro_slope * (np.log(kr) - math.log(kgeo)) + poro_noise * noise,
                  RANGES["PORO"][0], RANGES["PORO"][1])
    open_layers = np.flatnonzero(perf)
    return {"n_active": n_active, "perf": perf, "kr": kr, "kz": kz, "phi": phi, "meta": {
        "n_active": n_active, "perf_top": int(open_layers[0]) + 1,
        "perf_bottom": int(open_layers[-1]) + 1, "perf_layers": int(open_layers.size),
        "structure": structure, "kernel": kernel, "corr_r_cells": corr_r,
        "corr_z_cells": corr_z, "kgeo_mD": kgeo, "sigma_lnk": sigma, "anisotropy": aniso,
        "anisotropy_varies": int(variable_aniso), "poro_mean": poro_mean,
        "poro_slope": poro_slope, "poro_noise": poro_noise}}


def top_depth(pressure_bar):
    return (pressure_bar - 1.01325) / BRINE_GRADIENT


def case_id(seed, index):
    return "s%d_i%06d" % (seed, index)


# ---------------------------------------------------------------------------------------------
# Case file (io/CaseFile.cpp)

def _ascii(s):
    return np.bytes_(s.encode("ascii"))


def write_case_h5(path, case, generator=GENERATOR, description=None, describe_datasets=False):
    """The project's case file, written to a temporary name and renamed (byte-identical for the
    same arguments: no time stamps, fixed creation order). The one Python writer of case files
    (examples/make_example_case.py uses it too).

    generator: the file's `generator` attribute. description: an optional file attribute
    `description` (written before `generator`). A sampled case (one with case["meta"], from
    sample_case) also gets format_version, sampler_version, case_id and a sample_<name>
    attribute per sampled parameter. describe_datasets: give each dataset the `description`
    of DESCRIPTIONS besides its `units`."""
    meta = case.get("meta")
    tmp = path + ".tmp.%d" % os.getpid()
    try:
        with h5py.File(tmp, "w", libver="earliest", track_order=False) as f:
            if description is not None:
                f.attrs.create("description", _ascii(description))
            f.attrs.create("generator", _ascii(generator))
            if meta is not None:
                f.attrs.create("format_version", np.int64(FORMAT_VERSION))
                f.attrs.create("sampler_version", np.int64(SAMPLER_VERSION))
                f.attrs.create("case_id", _ascii(case_id(meta["seed"], meta["index"])))
                for k in sorted(meta):
                    v = meta[k]
                    f.attrs.create("sample_" + k, _ascii(v) if isinstance(v, str) else
                                   (np.int64(v) if isinstance(v, int) else np.float64(v)))
            for name in sorted(UNITS):
                v = case[name]
                if np.ndim(v) == 0:
                    d = f.create_dataset(name, data=np.float64(v), track_times=False)
                elif name == "PERF":
                    d = f.create_dataset(name, data=np.asarray(v, dtype=np.int32),
                                         track_times=False)
                else:
                    d = f.create_dataset(name, data=np.asarray(v, dtype=np.float64),
                                         track_times=False)
                d.attrs.create("units", _ascii(UNITS[name]))
                if describe_datasets:
                    d.attrs.create("description", _ascii(DESCRIPTIONS[name]))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_case_h5(path):
    """The one Python reader of case files (docs/case-format.md): every dataset as a numpy value,
    and under "meta" the sample_<name> attributes of a sampled case without their prefix (empty
    for files of other writers). Groups, if any, are skipped."""
    with h5py.File(path, "r") as f:
        c = {name: f[name][()] for name in f if isinstance(f[name], h5py.Dataset)}
        c["meta"] = {k[len("sample_"):]: (v.decode() if isinstance(v, bytes) else v.item())
                     for k, v in f.attrs.items() if k.startswith("sample_")}
    return c


# ---------------------------------------------------------------------------------------------
# Saturation functions

def sgof_table(swi, lam):
    """Rows (Sg, krg, krw (brine = OIL), Pc [bar]) from Sg = 0 to 1 - SWI, cosine-spaced so that
    both end points are resolved."""
    u = 0.5 * (1.0 - np.cos(np.pi * np.linspace(0.0, 1.0, SGOF_ROWS)))
    sg = (1.0 - swi) * u
    sg[-1] = 1.0 - swi
    s = np.clip(1.0 - u, 0.0, 1.0)                  # S* = (Sw - Swi) / (1 - Swi)
    krw = np.sqrt(s) * (1.0 - (1.0 - s ** (1.0 / lam)) ** lam) ** 2
    krg = (1.0 - s) ** 2 * (1.0 - s ** 2)
    with np.errstate(divide="ignore", over="ignore"):
        pc = PC_ENTRY_BAR * np.maximum(s ** (-1.0 / lam) - 1.0, 0.0) ** (1.0 - lam)
    pc = np.minimum(np.nan_to_num(pc, nan=PC_MAX_BAR, posinf=PC_MAX_BAR), PC_MAX_BAR)
    krw[0], krg[0], pc[0] = 1.0, 0.0, 0.0
    krw[-1], krg[-1], pc[-1] = 0.0, 1.0, PC_MAX_BAR
    # Monotone after rounding to the printed precision.
    rows = np.round(np.stack([sg, krg, krw, pc], axis=1), 7)
    rows[:, 1] = np.maximum.accumulate(rows[:, 1])
    rows[:, 2] = np.minimum.accumulate(rows[:, 2])
    rows[:, 3] = np.maximum.accumulate(rows[:, 3])
    return rows


# ---------------------------------------------------------------------------------------------
# Transmissibilities and well connections

def exact_tranx(case):
    """Two-point radial transmissibilities between cells (k, j) and (k, j+1) for the wedge, in
    OPM's metric units (cP rm3/day/bar): harmonic combination of the exact half-transmissibilities
    theta k dz / ln(edge / node) with the volume-average node radii of node_radii()."""
    theta = math.radians(THETA_DEG)
    a, b = radial_edges()
    rn = node_radii()
    kx = case["PERMX"]
    dz = case["DZ"][:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        out_half = theta * kx[:, :-1] * dz / np.log(b[:-1] / rn[:-1])[None, :]
        in_half = theta * kx[:, 1:] * dz / np.log(rn[1:] / a[1:])[None, :]
        t = CDARCY / (1.0 / out_half + 1.0 / in_half)
    t = np.where((kx[:, :-1] > 0) & (kx[:, 1:] > 0), t, 0.0)
    return np.concatenate([t, np.zeros((NX, 1))], axis=1)   # (NX, NY); last column: no neighbour


def connection_factors(case):
    """CF per layer of the well column: CDARCY theta k dz / ln(r_node0 / r_w) (metric)."""
    theta = math.radians(THETA_DEG)
    rn0 = node_radii()[0]
    return CDARCY * theta * case["PERMX"][:, 0] * case["DZ"] / math.log(rn0 / WELL_RADIUS)


# ---------------------------------------------------------------------------------------------
# OPM deck

def _fmt_values(values, fmt="%.6g", per_line=6):
    vals = [fmt % v for v in values]
    lines = [" ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "\n".join(lines)


def _write_include(path, keyword, values, fmt="%.6g", header=""):
    with open(path, "w") as f:
        if header:
            f.write(header)
        f.write("%s\n%s\n/\n" % (keyword, _fmt_values(values, fmt)))


def deck_grid_values(case, name):
    """A (NX, NY) case array in deck order: I (radial) fastest, then K (layer); NTHETA = 1."""
    return np.asarray(case[name], dtype=np.float64).reshape(-1)


# CASE.DATA of a case (write_deck fills it in; the include files hold the arrays and tables).
# The RUNSPEC of a CO2STORE deck after its grid (brine as OIL, CO2 as GAS dissolving into it,
# metric units, one SGOF table of `sgof_rows` rows, one equilibration region): the radial cases'
# decks and the nested sites' fine decks share it.
RUNSPEC_CO2STORE = """OIL
GAS
DISGAS
CO2STORE
METRIC
START
 1 'JAN' 2020 /
TABDIMS
 1 1 {sgof_rows} 20 /
EQLDIMS
 1 /
"""


def runspec_co2store(sgof_rows):
    return RUNSPEC_CO2STORE.format(sgof_rows=sgof_rows)


# PROPS and SOLUTION of a CO2STORE deck: the SGOF include, rock compressibility, the
# temperature, equilibrium from a datum with no dissolved gas, and the restart at every report
# step. The radial cases' decks and the nested sites' fine decks (data/nested_sites.py) share it.
PROPS_SOLUTION = """PROPS
INCLUDE
 'include/SGOF.INC' /
ROCK
 {pres:.6f} {cr:g} /
RTEMP
 {temp:.6f} /

SOLUTION
EQUIL
 {datum:.6f} {pres:.6f} {owc:.6f} 0 {goc:.6f} 0 1 1* 0 /
RSVD
 {rs_top:.3f} 0.0
 {rs_bot:.3f} 0.0
/
RPTRST
 'BASIC=2' /
"""


def props_solution(datum, pres, cr, temp, owc, goc, rs_top, rs_bot):
    """PROPS_SOLUTION with a deck's values: datum depth and pressure (bar), rock compressibility,
    temperature (degC), the contacts below and above the formation, the RSVD depths."""
    return PROPS_SOLUTION.format(datum=datum, pres=pres, cr=cr, temp=temp, owc=owc, goc=goc,
                                 rs_top=rs_top, rs_bot=rs_bot)


DECK_TEMPLATE = """-- OPM Flow 2022.10 deck written by {gen} (do not edit: regenerate)
-- case {cid}: seed {seed}, index {index}
-- UFNO INJ_RATE_MT_PER_YEAR {rate:.10g}
-- UFNO TEMP_C {temp:.10g}
-- UFNO PRESSURE_BAR {pres:.10g}
-- UFNO SWI {swi:.10g}
-- UFNO VG_LAMBDA {lam:.10g}
-- UFNO THETA_DEG {theta:g}
-- UFNO CO2_SURFACE_DENSITY_KG_PER_SM3 {rho:g}
-- UFNO DAYS_PER_YEAR {dpy:g}
-- Grid: RADIAL, I = radial ({ny} cells from the well), J = theta (1 wedge of {theta:g} deg),
-- K = layers from the top ({nx}); case arrays (X = layer, Y = radial) are K, I.
-- Layers {first_inactive}..{nx} are outside the formation (ACTNUM 0).

RUNSPEC
TITLE
 ufno {cid}
RADIAL
DIMENS
 {ny} 1 {nx} /
{runspec_co2store}WELLDIMS
 1 {nx} 1 1 /
UNIFIN
UNIFOUT

GRID
INIT
INRAD
 {rw:.10g} /
INCLUDE
 'include/DRV.INC' /
DTHETAV
 {theta:g} /
INCLUDE
 'include/DZV.INC' /
TOPS
 {ny}*{depth:.6f} /
INCLUDE
 'include/ACTNUM.INC' /
INCLUDE
 'include/PERMX.INC' /
COPY
 PERMX PERMY /
/
INCLUDE
 'include/PERMZ.INC' /
INCLUDE
 'include/PORO.INC' /
INCLUDE
 'include/MULTX.INC' /

{props_solution}
SUMMARY
FGIT
FGIR
FGIP
FPR
WBHP
 'INJ' /
WGIR
 'INJ' /
WGIT
 'INJ' /

SCHEDULE
RPTRST
 'BASIC=2' /
WELSPECS
 'INJ' 'G1' 1 1 {refdepth:.6f} 'GAS' /
/
COMPDAT
{compdat}
/
WCONINJE
 'INJ' 'GAS' 'OPEN' 'RATE' {q:.8g} 1* {bhp:g} /
/
TSTEP
{tstep}
/
END
"""


def _write_deck_includes(case, inc, hdr, multx):
    """include/*.INC: the grid arrays, ACTNUM, MULTX and the SGOF table."""
    act = (case["PERMX"] > 0).astype(int)
    _write_include(os.path.join(inc, "DRV.INC"), "DRV", case["DR"], "%.10g", hdr)
    _write_include(os.path.join(inc, "DZV.INC"), "DZV", case["DZ"], "%.10g", hdr)
    _write_include(os.path.join(inc, "ACTNUM.INC"), "ACTNUM", act.reshape(-1), "%d", hdr)
    for name in ("PERMX", "PERMZ", "PORO"):
        _write_include(os.path.join(inc, name + ".INC"), name, deck_grid_values(case, name),
                       "%.8g", hdr)
    m = np.ones((NX, NY)) if multx is None else np.asarray(multx, dtype=np.float64)
    _write_include(os.path.join(inc, "MULTX.INC"), "MULTX", m.reshape(-1), "%.8g",
                   hdr + "-- radial transmissibility multipliers: exact / OPM (%s)\n"
                   % ("all 1: not corrected" if multx is None else "from a dry run"))
    rows = sgof_table(case["SWI"], case["VG_LAMBDA"])
    with open(os.path.join(inc, "SGOF.INC"), "w") as f:
        f.write(hdr + "-- SWI %.6f, van Genuchten lambda %.6f; Sg krg krw(brine) Pc[bar]\nSGOF\n"
                % (case["SWI"], case["VG_LAMBDA"]))
        for r in rows:
            f.write("%.7f %.7f %.7f %.7f\n" % tuple(r))
        f.write("/\n")


def _deck_text(case):
    """CASE.DATA's text: DECK_TEMPLATE with the case's values, wells and report steps."""
    meta = case["meta"]
    n_act = meta["n_active"]
    depth = meta["top_depth_m"]
    bottom = depth + THICKNESS
    cf = connection_factors(case)
    perf_layers = [k for k in range(NX) if case["PERF"][k]]
    q = surface_rate_sm3_per_day(case["INJ_RATE"])
    times = case["TIMES"]
    steps = np.diff(np.concatenate(([0.0], times)))
    compdat = "\n".join(
        " 'INJ' 1 1 %d %d 'OPEN' 1* %.8g %.4f /" % (k + 1, k + 1, cf[k], 2 * WELL_RADIUS)
        for k in perf_layers)
    return DECK_TEMPLATE.format(
        gen=GENERATOR, cid=case_id(meta["seed"], meta["index"]), seed=meta["seed"],
        index=meta["index"], rate=case["INJ_RATE"], temp=case["TEMP"],
        pres=case["PRESSURE"], swi=case["SWI"], lam=case["VG_LAMBDA"], theta=THETA_DEG,
        rho=CO2_SURFACE_DENSITY, dpy=DAYS_PER_YEAR, ny=NY, nx=NX, first_inactive=n_act + 1,
        runspec_co2store=runspec_co2store(SGOF_ROWS + 4), rw=WELL_RADIUS, depth=depth,
        props_solution=props_solution(depth, case["PRESSURE"], ROCK_COMPRESSIBILITY,
                                      case["TEMP"], bottom + 10.0, depth - 5.0, depth - 100.0,
                                      bottom + 100.0),
        refdepth=depth + DZ * (perf_layers[0] + 0.5), compdat=compdat, q=q,
        bhp=BHP_LIMIT_BAR, tstep=_fmt_values(steps, "%.10g"))


def write_deck(case, deck_dir, multx=None):
    """Writes CASE.DATA and include/*.INC into deck_dir (created). multx: (NX, NY) multipliers of
    the radial transmissibility (1 where None)."""
    meta = case["meta"]
    inc = os.path.join(deck_dir, "include")
    os.makedirs(inc, exist_ok=True)
    hdr = "-- %s: case %s\n" % (GENERATOR, case_id(meta["seed"], meta["index"]))
    _write_deck_includes(case, inc, hdr, multx)
    with open(os.path.join(deck_dir, "CASE.DATA"), "w") as f:
        f.write(_deck_text(case))


def read_init_tranx(init_path, case):
    """OPM's TRANX from an INIT file as (NX, NY) (0 in inactive cells)."""
    from opm.io.ecl import EclFile
    init = EclFile(init_path)
    tranx = np.asarray(init["TRANX"], dtype=np.float64)
    act = case["PERMX"] > 0
    out = np.zeros((NX, NY))
    if tranx.size != act.sum():
        raise RuntimeError("TRANX has %d values for %d active cells" % (tranx.size, act.sum()))
    out[act] = tranx    # active cells in global order (I fastest, then K) = row-major (X, Y)
    return out


def compute_multx(case, flow="flow", workdir=None):
    """MULTX = exact / OPM radial transmissibility, from the INIT file of a dry run of the deck
    without multipliers (about 0.5 s). Returns (NX, NY) multipliers (1 where undefined)."""
    tmp = tempfile.mkdtemp(prefix="ufno_dry_", dir=workdir)
    try:
        write_deck(case, tmp, multx=None)
        out = os.path.join(tmp, "out")
        r = subprocess.run([flow, "--enable-dry-run=true", "--threads-per-process=1",
                            "--enable-terminal-output=false", "--output-dir=" + out,
                            os.path.join(tmp, "CASE.DATA")],
                           capture_output=True, text=True, timeout=120)
        init = os.path.join(out, "CASE.INIT")
        if r.returncode != 0 or not os.path.exists(init):
            raise RuntimeError("dry run failed (exit %d): %s" % (r.returncode,
                                                               (r.stderr or r.stdout)[-500:]))
        opm = read_init_tranx(init, case)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    exact = exact_tranx(case)
    m = np.ones((NX, NY))
    ok = (opm > 0) & (exact > 0)
    m[ok] = exact[ok] / opm[ok]
    return m


def generate(seed, index, case_dir, flow="flow", multx=True):
    """Writes case_dir/case.h5 and case_dir/deck/ (via a temporary directory, renamed when
    complete). Returns the case."""
    case = sample_case(seed, index)
    os.makedirs(case_dir, exist_ok=True)
    m = compute_multx(case, flow) if multx else None
    deck = os.path.join(case_dir, "deck")
    tmp = deck + ".tmp.%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    write_deck(case, tmp, multx=m)
    shutil.rmtree(deck, ignore_errors=True)
    os.replace(tmp, deck)
    write_case_h5(os.path.join(case_dir, "case.h5"), case)
    return case


def describe(case):
    m = case["meta"]
    act = case["PERMX"] > 0
    kx = case["PERMX"][act]
    return ("%s: %d layers (%.0f m), perf %d-%d, %s/%s, kgeo %.0f mD (P10 %.1f, P90 %.0f), "
            "kz/kr %.3f, phi %.3f, %.2f Mt/yr, %.1f degC, %.1f bar (top %.0f m), Swi %.3f, "
            "lambda %.3f" % (case_id(m["seed"], m["index"]), m["n_active"], m["n_active"] * DZ,
                             m["perf_top"], m["perf_bottom"], m["structure"], m["kernel"],
                             m["kgeo_mD"], np.percentile(kx, 10), np.percentile(kx, 90),
                             m["anisotropy"], case["PORO"][act].mean(), case["INJ_RATE"],
                             case["TEMP"], case["PRESSURE"], m["top_depth_m"], case["SWI"],
                             case["VG_LAMBDA"]))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ufno.cases", description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--end", type=int, required=True, help="exclusive")
    p.add_argument("--out", help="data directory: writes OUT/case_NNNNNN/{case.h5,deck/}")
    p.add_argument("--flow", default="flow", help="flow executable for the MULTX dry run")
    p.add_argument("--no-multx", action="store_true",
                   help="skip the dry run: MULTX all 1 (OPM's own radial transmissibilities)")
    p.add_argument("--print", action="store_true", help="print the sampled parameters only")
    a = p.parse_args(argv)
    for i in range(a.start, a.end):
        if a.print or not a.out:
            print(describe(sample_case(a.seed, i)))
            continue
        d = os.path.join(a.out, "case_%06d" % i)
        c = generate(a.seed, i, d, flow=a.flow, multx=not a.no_multx)
        print("wrote %s  %s" % (d, describe(c)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
