#!/usr/bin/python3
"""Build the example reservoir case examples/example_case.h5 (format: docs/case-format.md).

Usage:  PYTHONPATH=python /usr/bin/python3 examples/make_example_case.py [--out FILE] [--seed S] [--encode OUT.h5]

The case is deterministic for a given seed (re-running gives a byte-identical file):
  * the paper's radial grid: 96 layers of 200/96 m (X, from the top) by 200 radial cells
    (Y, from the well) of widths dr_i = 3.5938 * 1.035012^i m (about 100 km in all);
  * a 150 m thick formation: the top 72 layers are active, the 24 layers below are outside the
    formation (PERMX = PERMZ = PORO = 0);
  * a layered, heterogeneous, log-normal horizontal permeability kr (PERMX): six stratigraphic
    units with their own mean, a Gaussian field with an exponential covariance correlated over
    about 400 m radially and 4 m vertically (FFT-filtered white noise on a 2 m grid,
    block-averaged in ln k over each radial cell, which is geometric-mean upscaling), three
    thin high-permeability streaks of limited extent and two discontinuous low-permeability
    baffles; geometric mean about 50 mD, clipped to [2, 3000] mD;
  * kz (PERMZ) = kr * anisotropy, the anisotropy a smooth field in [0.1, 0.3] (0.1 in baffles);
  * porosity (PORO) = 0.17 + 0.035 (ln kr - ln 50 mD) + correlated noise, clipped to
    [0.08, 0.30];
  * a well perforated over layers 25..48 (1-based; 50 m in the middle of the formation);
  * 1.0 Mt/yr, 80 degC, 200 bar, Swi 0.2, van Genuchten lambda 0.5 (all inside the ranges of
    the paper's training data) and the paper's 24 report times (1 day to 30 years).

--encode OUT.h5 also writes /input (1, 96, 200, 24, 12) float32: the case encoded into the
network's 12 channels exactly as io/CaseEncoding.cpp does, so that `ufno_predict --case` can be
checked against `ufno_predict --tensor` (about 21 MB; not kept in the repository).
"""

import argparse
import os
import sys

import h5py
import numpy as np

from ufno.data import cases as ufno_cases  # (the case-file writer and reader, and the units of each dataset)
from ufno.data import encoding as ufno_encoding  # (the bit-exact port of io/CaseEncoding.cpp)

NX, NY, NT = 96, 200, 24
DZ = 200.0 / 96.0                      # m; 2.0833 m layers, 200 m in all
DR0, DR_GROWTH = 3.5938, 1.035012      # m; dr_i = DR0 * DR_GROWTH^i
WELL_RADIUS = 0.1                      # m; the grid starts at the wellbore wall
FORMATION_THICKNESS = 150.0            # m; the top 72 layers
PERF_TOP, PERF_BOTTOM = 25, 48         # 1-based inclusive layer indices

GEOMEAN_MD = 50.0                      # geometric mean of kr [mD]
SIGMA_LNK = 0.8                        # standard deviation of ln kr within a unit
CORR_R, CORR_Z = 400.0, 4.0            # m; exponential covariance ranges
K_MIN, K_MAX = 2.0, 3000.0             # mD
FINE_DR = 2.0                          # m; spacing of the fine radial grid of the noise
# Stratigraphic units from the top: (thickness in layers, offset of the mean ln kr).
UNITS = ((10, -0.5), (14, 0.3), (8, -0.4), (16, 0.5), (12, 0.0), (12, -0.3))
# High-permeability streaks: (first layer, thickness in layers, ln kr offset, extent in m).
STREAKS = ((14, 1, 1.8, 6000.0), (30, 2, 1.5, 15000.0), (52, 1, 2.0, 3000.0))
# Baffles: (layer, k in mD, fraction of the radial cells where the baffle is absent).
BAFFLES = ((23, 3.0, 0.35), (44, 5.0, 0.5))

RATE_MT_PER_YEAR = 1.0
TEMP_C = 80.0
PRESSURE_BAR = 200.0
SWI = 0.2
VG_LAMBDA = 0.5
DEFAULT_SEED = 20230517

GENERATOR = "examples/make_example_case.py"


def radial_grid():
    """Cell widths, cell edges (from the well axis) and cell centres, in m."""
    dr = DR0 * DR_GROWTH ** np.arange(NY)
    outer = WELL_RADIUS + np.cumsum(dr)
    inner = outer - dr
    return dr, inner, outer, 0.5 * (inner + outer)


def paper_times():
    """t_k = sum_{i<=k} 1.421245^i days, k = 0..23 (as io/CaseEncoding.cpp)."""
    return np.cumsum(1.421245 ** np.arange(NT))


def gaussian_field(rng, n_layers, inner, outer, corr_r, corr_z):
    """Standard normal field on (n_layers, NY) cells: white noise on a (layer, 2 m) grid,
    filtered with the spectrum of an anisotropic exponential covariance, block-averaged over
    each radial cell and rescaled to unit variance."""
    extent = outer[-1] + 4.0 * corr_r            # padding against the periodic wrap-around
    nr = int(np.ceil(extent / FINE_DR))
    nz = n_layers + int(np.ceil(8.0 * corr_z / DZ))
    kz = np.fft.fftfreq(nz, d=DZ)[:, None]       # cycles per m
    kr = np.fft.rfftfreq(nr, d=FINE_DR)[None, :]
    # 2-D spectral density of exp(-|h|) with |h| scaled by the ranges: (1 + (2 pi k L)^2)^-3/2.
    spectrum = (1.0 + (2 * np.pi) ** 2 * ((kz * corr_z) ** 2 + (kr * corr_r) ** 2)) ** -1.5
    noise = rng.standard_normal((nz, nr))
    fine = np.fft.irfft2(np.fft.rfft2(noise) * np.sqrt(spectrum), s=(nz, nr))[:n_layers]
    # Block average over each radial cell [inner, outer): integrate the piecewise-constant fine
    # field (cell j covers [j h, (j+1) h) from the axis) and difference at the cell edges.
    cum = np.concatenate((np.zeros((n_layers, 1)), np.cumsum(fine, axis=1) * FINE_DR), axis=1)
    grid = np.arange(nr + 1) * FINE_DR
    at = np.stack([np.interp(np.concatenate((inner, outer)), grid, row) for row in cum])
    field = (at[:, NY:] - at[:, :NY]) / (outer - inner)
    # Unit variance at the well, where the cells are smaller than the correlation length; the
    # large outer cells keep their (physically) reduced variance.
    near = field[:, outer < 2.0 * corr_r]
    return (field - near.mean()) / near.std()


def build_case(seed):
    rng = np.random.default_rng(seed)
    dr, inner, outer, centre = radial_grid()
    n_active = int(round(FORMATION_THICKNESS / DZ))
    assert sum(u[0] for u in UNITS) == n_active

    unit_mean = np.concatenate([np.full(n, off) for n, off in UNITS])[:, None]
    lnk = np.log(GEOMEAN_MD) + unit_mean + SIGMA_LNK * gaussian_field(
        rng, n_active, inner, outer, CORR_R, CORR_Z)
    # Streaks: laterally continuous to a given radius, tapering off over a third of it.
    for top, thick, offset, extent in STREAKS:
        taper = np.clip((extent - centre) / (extent / 3.0), 0.0, 1.0)
        lnk[top:top + thick, :] += offset * taper[None, :]
    # Baffles: a thin tight layer with holes where a smooth lateral field is low.
    aniso = 0.1 + 0.2 * _uniform(gaussian_field(rng, n_active, inner, outer, 2 * CORR_R, 3 * CORR_Z))
    for layer, k_md, absent in BAFFLES:
        lateral = gaussian_field(rng, 1, inner, outer, 1500.0, CORR_Z)[0]
        present = lateral > np.quantile(lateral, absent)
        lnk[layer, present] = np.log(k_md) + 0.2 * rng.standard_normal(int(present.sum()))
        aniso[layer, present] = 0.1
    kr_active = np.clip(np.exp(lnk), K_MIN, K_MAX)

    poro_noise = gaussian_field(rng, n_active, inner, outer, CORR_R, CORR_Z)
    poro_active = np.clip(0.17 + 0.035 * (np.log(kr_active) - np.log(GEOMEAN_MD))
                          + 0.012 * poro_noise, 0.08, 0.30)

    permx = np.zeros((NX, NY))
    permz = np.zeros((NX, NY))
    poro = np.zeros((NX, NY))
    permx[:n_active] = away_from_one_md(kr_active)
    permz[:n_active] = away_from_one_md(kr_active * aniso)
    poro[:n_active] = poro_active
    perf = np.zeros(NX, dtype=np.int32)
    perf[PERF_TOP - 1:PERF_BOTTOM] = 1
    return {
        "PERMX": permx, "PERMZ": permz, "PORO": poro, "DR": dr, "DZ": np.full(NX, DZ),
        "PERF": perf, "INJ_RATE": RATE_MT_PER_YEAR, "TEMP": TEMP_C, "PRESSURE": PRESSURE_BAR,
        "SWI": SWI, "VG_LAMBDA": VG_LAMBDA, "TIMES": paper_times(), "n_active": n_active,
    }


def _uniform(g):
    """Map a standard normal field to [0, 1] through its empirical ranks (keeps correlation)."""
    ranks = np.argsort(np.argsort(g, axis=None)).reshape(g.shape)
    return (ranks + 0.5) / g.size


def write_case(path, case, seed):
    """Through python/ufno/data/cases.py's writer, with the file and dataset descriptions."""
    n_active = case["n_active"]
    description = (
        "Example CO2 injection case for ufno_predict --case: a %.0f m thick layered, "
        "heterogeneous formation (layers 1-%d of %d active, %d-%d below it inactive), "
        "log-normal kr with geometric mean ~%.0f mD, kz/kr 0.1-0.3, porosity 0.08-0.30, "
        "perforated over layers %d-%d, %.1f Mt/yr, %.0f degC, %.0f bar, Swi %.1f, lambda %.1f."
        % (FORMATION_THICKNESS, n_active, NX, n_active + 1, NX, GEOMEAN_MD, PERF_TOP,
           PERF_BOTTOM, RATE_MT_PER_YEAR, TEMP_C, PRESSURE_BAR, SWI, VG_LAMBDA))
    ufno_cases.write_case_h5(path, case, generator="%s --seed %d" % (GENERATOR, seed),
                             description=description, describe_datasets=True)


def away_from_one_md(k):
    """k with values within 0.1 % of 1 mD moved to 0.1 % away: the encoding is ln(k) / 15 and 0
    marks an inactive cell, so an active 1 mD cell would read as inactive (the draws of some
    seeds land there; the default seed's draws do not, so its file is unchanged)."""
    k = np.array(k, dtype=np.float64)
    near = np.abs(np.log(k)) <= 1e-3
    k[near] = np.exp(np.where(np.log(k[near]) < 0, -1.001e-3, 1.001e-3))
    return k


def check_case(path):
    """Re-read the file and apply the rules of io/CaseFile.cpp; returns the arrays read."""
    c = ufno_cases.read_case_h5(path)
    with h5py.File(path, "r") as f:
        for name, units in ufno_cases.UNITS.items():
            u = f[name].attrs["units"]
            assert (u.decode() if isinstance(u, bytes) else str(u)) == units, name
    kx, kz, phi = c["PERMX"], c["PERMZ"], c["PORO"]
    for name in ("PERMX", "PERMZ", "PORO"):
        assert c[name].shape == (NX, NY) and c[name].dtype == np.float64, name
        assert np.isfinite(c[name]).all(), name
    assert c["DR"].shape == (NY,) and (c["DR"] > 0).all()
    assert c["DZ"].shape == (NX,) and (c["DZ"] > 0).all()
    assert (kx >= 0).all() and (kz >= 0).all()
    act = kx > 0
    assert (kz[act] > 0).all()
    assert ((phi[act] > 0) & (phi[act] <= 1)).all()
    # ln(k)/15 is the encoded value and 0 marks inactive cells: active k must not be 1 mD.
    assert (np.abs(np.log(kx[act])) > 1e-3).all() and (np.abs(np.log(kz[act])) > 1e-3).all()
    perf = c["PERF"]
    assert perf.shape == (NX,) and set(np.unique(perf)) <= {0, 1} and perf.sum() > 0
    assert act[perf == 1, 0].all(), "perforated layer inactive at the well"
    assert c["INJ_RATE"] > 0 and c["PRESSURE"] > 0 and 0 <= c["SWI"] < 1 and c["VG_LAMBDA"] > 0
    t = c["TIMES"]
    assert t.ndim == 1 and len(t) == NT and (t > 0).all() and (np.diff(t) > 0).all()
    for name, lo, hi in (("INJ_RATE", 0.2, 2.0), ("TEMP", 30, 180), ("PRESSURE", 100, 300),
                         ("SWI", 0.1, 0.3), ("VG_LAMBDA", 0.3, 0.7)):
        assert lo <= c[name] <= hi, "%s outside the training range" % name
    return c


def encode(c):
    """The 12-channel encoding of io/CaseEncoding.cpp: (1, X, Y, T, 12) float32, by
    python/ufno/data/encoding.py (the project's bit-exact port of the C++ reader and encoder)."""
    return ufno_encoding.encode_case(c)[None]


def summary(c, n_active):
    act = c["PERMX"] > 0
    kx, kz, phi = c["PERMX"][act], c["PERMZ"][act], c["PORO"][act]
    lines = [
        "grid %dx%d, %d active layers (%.0f m), %d inactive below" % (
            NX, NY, n_active, n_active * DZ, NX - n_active),
        "radial extent %.0f m (dr %.2f .. %.0f m)" % (
            WELL_RADIUS + c["DR"].sum(), c["DR"][0], c["DR"][-1]),
        "PERMX: geometric mean %.1f mD, min %.1f, P10 %.1f, P90 %.1f, max %.0f mD" % (
            np.exp(np.log(kx).mean()), kx.min(), np.percentile(kx, 10),
            np.percentile(kx, 90), kx.max()),
        "PERMZ/PERMX: %.2f .. %.2f; PORO: %.3f .. %.3f (mean %.3f)" % (
            (kz / kx).min(), (kz / kx).max(), phi.min(), phi.max(), phi.mean()),
        "near-well ln k std %.2f (first 50 radial cells)" % np.log(c["PERMX"][:n_active, :50]).std(),
        "perforated layers %d..%d; rate %.2f Mt/yr, %.0f degC, %.0f bar, Swi %.2f, lambda %.2f" % (
            np.flatnonzero(c["PERF"])[0] + 1, np.flatnonzero(c["PERF"])[-1] + 1, c["INJ_RATE"],
            c["TEMP"], c["PRESSURE"], c["SWI"], c["VG_LAMBDA"]),
    ]
    return lines


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(here, "example_case.h5"))
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--encode", metavar="OUT.h5",
                   help="also write the encoded network input /input (1,96,200,24,12)")
    args = p.parse_args()

    case = build_case(args.seed)
    write_case(args.out, case, args.seed)
    c = check_case(args.out)
    print("make_example_case: wrote %s (%d bytes)" % (args.out, os.path.getsize(args.out)))
    for line in summary(c, case["n_active"]):
        print("  " + line)
    if args.encode:
        x = encode(c)
        tmp = args.encode + ".tmp"
        with h5py.File(tmp, "w", libver="earliest") as f:
            f.attrs.create("source", ufno_cases._ascii(os.path.basename(args.out)))
            f.create_dataset("input", data=x, track_times=False)
        os.replace(tmp, args.encode)
        print("make_example_case: wrote %s (/input %s float32)"
              % (args.encode, "x".join(map(str, x.shape))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
