#!/usr/bin/python3
"""Closed-form physics estimates of the pressure KPIs of a case: the maximum pressure
buildup and the area-of-review radius, from the case's own inputs (an encoded input x0 at the
first report time, or a case file's values), for use as a KPI, a head input or a field check.

Everything is SI inside (Pa, m, s, m2, Pa s, 1/Pa); inputs and outputs in the case's units (bar,
mD, degC, Mt/yr, days).

Fluid properties are those OPM Flow's CO2STORE uses for the project's decks (python/ufno/data/
cases.py: CO2STORE with OIL = brine, GAS = CO2, no SALINITY keyword, so salinity 0):
  * brine density: opm-material SimpleHuDuanH2O (Hu, Duan, Zhu & Chou 2007), pure water;
    its isothermal compressibility c_w = (1/rho) d rho / dp by central difference;
  * brine viscosity: opm-material Brine::liquidViscosity (Batzle & Wang 1992) at salinity 0,
    mu [cP] = 0.1 + 1.65 exp(-0.057138 T_C^0.8) (independent of pressure), which is what
    BrineCo2Pvt::saturatedViscosity returns;
  * CO2 density: opm-material's Span-Wagner table (co2tables.inc, 280-400 K x 0.1-100 MPa,
    bilinear as UniformTabulated2DFunction; runtime/Co2Density.cpp uses the same table and the
    same clamping);
  * CO2 viscosity: opm-material CO2::gasViscosity (Fenghour, Wakeham & Vesovic 1998, as OPM
    codes it) at the table's density;
  * rock compressibility: ROCK 4.5e-5 1/bar of the decks (cases.ROCK_COMPRESSIBILITY);
  * relative permeabilities: the decks' SGOF functions (cases.sgof_table): krw van Genuchten-
    Mualem, krg = (1 - S*)^2 (1 - S*^2), S* = (Sw - Swi)/(1 - Swi); capillarity neglected.
Rate: INJ_RATE Mt/yr of the full circle is INJ_RATE * 1e9 / (365.25 * 86400) kg/s (the decks'
DAYS_PER_YEAR), and q = that / rho_CO2 m3/s at the well's pressure and temperature.

Single-phase line source (Theis 1935):  dP(r, t) = q mu / (4 pi k h) E1(u),
u = phi mu c_t r^2 / (4 k t); for u -> 0, E1(u) -> -gamma - ln u (Cooper & Jacob 1946).
Closed circular domain of radius R (the decks' outer boundary is closed; R = sum DR), pseudo-
steady state (line source, R >> r):  dP(r, t) = q t / (pi R^2 h phi c_t)
    + q mu / (2 pi k h) (ln(R / r) - 3/4 + r^2 / (2 R^2)).
The far-field estimate is Theis until the pseudo-steady state holds (t_DA >= 0.1), then
max(Theis, pseudo-steady state); the numerical solves below treat the boundary exactly.

Two-phase near-well correction (in the spirit of Mathias, Hardisty, Trudell & Zimmerman 2009,
Transport in Porous Media 79, but with the radial Buckley-Leverett saturation profile instead of
their sharp interface): gravity and capillarity neglected, incompressible inside the plume, the
saturation is a function of r^2 / t: r(S)^2 = q t f_g'(S) / (pi h phi) for S above the Welge
front saturation S_f (f_g'(S_f) = f_g(S_f) / S_f). Darcy's law with the total mobility
lambda_t(S) = krw/mu_w + krg/mu_g gives, at a radius r_c inside the plume,
    dP(r_c, t) = dP_brine(r_f, t) + q / (4 pi k h) * integral_{r_c}^{r_f} d ln(r^2) / lambda_t(S(r))
with r_f the front and dP_brine the single-phase (Theis / bounded) brine buildup at r_f.
Where the plume has not reached r_c, dP(r_c, t) is the single-phase value.
The maximum buildup estimate is the largest of these at the report times.

Estimators (their accuracy against OPM Flow: docs/kpis.md "Maximum dP", docs/accuracy.md):
  theis_max_dp_bar          Theis at the first cell centre (DR[0]/2), 1 day, perforated k h.
  max_dp_radial             1-D radial solve (radial_1d_dp_bar, every layer's k h per column,
                            closed outer boundary) + partial penetration + continuous
                            Buckley-Leverett correction (near_well_correction_bar).
  rz_single_phase_dp_bar    single-phase r-z finite volumes on the case's grid (the decks'
                            transmissibilities, a well node over the perforations, closed
                            boundaries): partial penetration and layering without a fitted
                            constant; max over the well column's layers and report times.
  + grid_two_phase_correction_bar   the Buckley-Leverett profile averaged over the grid's cells
                            with upstream mobilities (what a simulator's cells see); the best
                            physics-only maximum is max_t(rz_single_phase[t, col 0] + this).
  rz_implicit_two_phase_dp_bar   the r-z solve as Flow steps it: one implicit step per report
                            interval (Flow's first step is the whole first day), upstream
                            saturations iterated with the pressure, the injected volume at the
                            well's pressure less the dissolved CO2; the first-report buildup
                            within a median 0.1-2.3 % of Flow's (docs/kpis.md "Maximum dP").
  rz_gravity_two_phase_dp_bar    the same with buoyancy: phase-upstream vertical flow in CO2's
                            and brine's own potentials, the well's connections at CO2's
                            gradient, the column's CO2 moved by its potential; its maximum
                            (gravity_max_dp_bar) catches the late maximum at the top of the
                            gas column at the well (docs/accuracy.md, "The maximum dP").
  envelope_bar / aor_radius_m / aor_radius_closed_form   Theis far-field envelope and the
                            area-of-review radius; the r-z solve's envelope is the better one.
The closed forms and the single-phase solves are low at the first report (Flow's day-1 buildup
is ~1.3x the r-z single-phase value: the one-day step's smeared saturations, whose total
mobility is the lowest, which only the implicit solve models), so none is within 10 % of Flow
on its own in most cases;
they are meant as inputs of a KPI head (log estimate as features, or a head predicting
log(Flow / estimate)).
"""

import math
import os
import re

import numpy as np

from ufno.data import cases as _cases
from ufno.data import encoding as _enc

# -- constants ------------------------------------------------------------------------------
MD_TO_M2 = 9.869233e-16            # 1 mD in m2
BAR = 1e5                          # Pa
DAY = 86400.0                      # s
SECONDS_PER_YEAR = _cases.DAYS_PER_YEAR * DAY   # the decks' 365.25 days
EULER_GAMMA = 0.5772156649015329
ROCK_COMPRESSIBILITY = _cases.ROCK_COMPRESSIBILITY / BAR   # 4.5e-10 1/Pa (ROCK of the decks)
BRINE_GRADIENT_BAR_PER_M = _cases.BRINE_GRADIENT           # the decks' hydrostatic, 1000 kg/m3
CRITICAL_DP_BAR = 10.0
CO2_TABLES = os.environ.get("UFNO_CO2_TABLES",
                            "/usr/include/opm/material/components/co2tables.inc")


# -- exponential integral -------------------------------------------------------------------
def e1(x):
    """E1(x) = integral_x^inf exp(-s)/s ds for x > 0 (array or scalar), to ~1e-14 relative:
    the power series -gamma - ln x + sum (-1)^(k+1) x^k / (k k!) for x <= 1, the continued
    fraction (modified Lentz) for x > 1; 0 for x > 700 (underflow)."""
    x = np.asarray(x, np.float64)
    out = np.empty_like(x)
    small = x <= 1.0
    xs = x[small]
    if xs.size:
        s = np.zeros_like(xs)
        term = np.ones_like(xs)
        for k in range(1, 40):
            term = term * (-xs) / k
            s -= term / k
        out[small] = -EULER_GAMMA - np.log(xs) + s
    big = ~small
    xb = x[big]
    if xb.size:
        # E1(x) = exp(-x) * 1/(x + 1 - 1/(x + 3 - 4/(x + 5 - ...)))  (Numerical Recipes expint)
        b = xb + 1.0
        c = np.full_like(xb, 1e300)
        d = 1.0 / b
        h = d.copy()
        for i in range(1, 200):
            an = -float(i * i)
            b = b + 2.0
            d = 1.0 / (an * d + b)
            c = b + an / c
            h = h * c * d
        with np.errstate(under="ignore"):
            out[big] = np.where(xb > 700, 0.0, h * np.exp(-np.minimum(xb, 700)))
    return out if out.ndim else float(out)


def theis_dp(r, t, q, mu, k, h, phi, ct):
    """Theis line-source buildup [Pa]: r [m], t [s], q [m3/s], mu [Pa s], k [m2], h [m],
    phi [1], ct [1/Pa]. Broadcasts."""
    u = phi * mu * ct * np.asarray(r, np.float64) ** 2 / (4.0 * k * np.asarray(t, np.float64))
    return q * mu / (4.0 * math.pi * k * h) * e1(u)


def cooper_jacob_dp(r, t, q, mu, k, h, phi, ct):
    """The small-u limit of theis_dp: q mu / (4 pi k h) (ln(4 k t / (phi mu ct r^2)) - gamma)."""
    return q * mu / (4.0 * math.pi * k * h) * (
        np.log(4.0 * k * np.asarray(t, np.float64) / (phi * mu * ct * np.asarray(r) ** 2))
        - EULER_GAMMA)


def pss_dp(r, t, q, mu, k, h, phi, ct, R):
    """Pseudo-steady-state buildup [Pa] of a line source in a closed circle of radius R."""
    r = np.asarray(r, np.float64)
    return (q * np.asarray(t, np.float64) / (math.pi * R * R * h * phi * ct)
            + q * mu / (2.0 * math.pi * k * h) * (np.log(R / r) - 0.75 + r * r / (2.0 * R * R)))


def bounded_dp(r, t, q, mu, k, h, phi, ct, R=None):
    """Single-phase buildup [Pa]: Theis; with R (closed circle), the pseudo-steady state once
    it holds, t_DA = k t / (phi mu ct pi R^2) >= 0.1 (the classical onset for a centred well),
    taking the larger of the two there. (Taking max(Theis, PSS) at every time is wrong: the
    PSS formula exceeds Theis at early times, when the boundary is not yet felt.)"""
    d = theis_dp(r, t, q, mu, k, h, phi, ct)
    if R is None:
        return d
    t_pss = 0.1 * phi * mu * ct * math.pi * R * R / k
    late = np.asarray(t, np.float64) >= t_pss
    return np.where(late, np.maximum(d, pss_dp(r, t, q, mu, k, h, phi, ct, R)), d)


# -- fluid properties -----------------------------------------------------------------------
def brine_density(temp_c, p_bar):
    """Pure-water density [kg/m3], opm-material SimpleHuDuanH2O::liquidDensity_ (Hu et al.
    2007), T in degC, p in bar."""
    T = np.asarray(temp_c, np.float64) + 273.15
    p = np.asarray(p_bar, np.float64) * BAR / 1e6   # MPa
    k0 = (3.27225e-07, -4.20950e-04, 2.32594e-01, -4.16920e+01, 5.71292e+03)
    k1 = (-2.32306e-10, 2.91138e-07, -1.49662e-04, 3.59860e-02, -3.55071)
    k2 = (2.57241e-14, -1.24336e-11, 5.42707e-07)
    k3 = (-4.42028e-18, 2.10007e-15, -8.11491e-11)
    a0 = 1e-3 * (((k0[0] * T + k0[1]) * T + k0[2]) * T + k0[3] + k0[4] / T)
    a1 = 1e-2 * (((k1[0] * T + k1[1]) * T + k1[2]) * T + k1[3] + k1[4] / T)
    a2 = 1e-1 * ((k2[0] * T + k2[1]) * T * T + k2[2])
    a3 = (k3[0] * T + k3[1]) * T * T + k3[2]
    vw = ((a3 * p + a2) * p + a1) * p + a0          # m3/kmol
    return 18.0 / vw                                 # SimpleHuDuanH2O molar mass 18 kg/kmol


def brine_compressibility(temp_c, p_bar):
    """(1/rho) d rho / dp [1/Pa] of brine_density, central difference over +-1 bar."""
    return ((brine_density(temp_c, p_bar + 1.0) - brine_density(temp_c, p_bar - 1.0))
            / (2.0 * BAR) / brine_density(temp_c, p_bar))


def brine_viscosity(temp_c):
    """Brine viscosity [Pa s], opm-material Brine::liquidViscosity (Batzle & Wang 1992) at
    salinity 0: (0.1 + 1.65 exp(-(0.42 * 0.17^2 + 0.045) T_C^0.8)) cP (T_C >= 1.85)."""
    tc = np.maximum(np.asarray(temp_c, np.float64), 275.0 - 273.15)
    a = (0.42 * (0.0 - 0.17) ** 2 + 0.045) * tc ** 0.8
    return (0.1 + 1.65 * np.exp(-a)) * 1e-3


_CO2_TABLE = None


def _co2_table():
    global _CO2_TABLE
    if _CO2_TABLE is None:
        text = open(CO2_TABLES).read()
        start = text.index("TabulatedDensityTraits::vals")
        end = text.index("};", start)
        vals = np.array([float(v) for v in
                         re.findall(r"[-+]?\d\.\d+e[-+]\d+", text[start:end])])
        if vals.size != 200 * 500:
            raise ValueError("%s: expected 200 x 500 densities, read %d" % (CO2_TABLES, vals.size))
        _CO2_TABLE = vals.reshape(200, 500)   # [temperature 280..400 K][pressure 0.1..100 MPa]
    return _CO2_TABLE


def co2_density(temp_c, p_bar):
    """CO2 density [kg/m3] from OPM's Span-Wagner table, bilinear, clamped to 280-400 K and
    1-1000 bar as runtime/Co2Density.cpp."""
    tab = _co2_table()
    T = np.clip(np.asarray(temp_c, np.float64) + 273.15, 280.0, 400.0)
    p = np.clip(np.asarray(p_bar, np.float64) * BAR, 1e5, 1e8)
    fx = (T - 280.0) / (400.0 - 280.0) * 199
    fy = (p - 1e5) / (1e8 - 1e5) * 499
    i = np.clip(np.floor(fx).astype(int), 0, 198)
    j = np.clip(np.floor(fy).astype(int), 0, 498)
    ax, ay = fx - i, fy - j
    return ((1 - ax) * (1 - ay) * tab[i, j] + ax * (1 - ay) * tab[i + 1, j]
            + (1 - ax) * ay * tab[i, j + 1] + ax * ay * tab[i + 1, j + 1])


def co2_viscosity(temp_c, p_bar):
    """CO2 viscosity [Pa s], opm-material CO2::gasViscosity (Fenghour et al. 1998)."""
    T = np.maximum(np.asarray(temp_c, np.float64) + 273.15, 275.0)
    ts = T / 251.196
    lt = np.log(ts)
    sigma = np.exp(0.235156 + lt * (-0.491266 + lt * (5.211155e-2 + lt * (5.347906e-2
                                                                         + lt * -1.537102e-2))))
    mu0 = 1.00697 * np.sqrt(T) / sigma
    rho = co2_density(temp_c, p_bar)
    dmu = (0.4071119e-2 * rho + 0.7198037e-4 * rho ** 2 + 0.2411697e-16 * rho ** 6 / ts ** 3
           + 0.2971072e-22 * rho ** 8 - 0.1627888e-22 * rho ** 8 / ts)
    return (mu0 + dmu) / 1e6


def mass_rate_kg_s(rate_mt_per_year):
    """Full-circle injection mass rate [kg/s] of INJ_RATE Mt/yr (the decks' 365.25-day year)."""
    return np.asarray(rate_mt_per_year, np.float64) * 1e9 / SECONDS_PER_YEAR


def reservoir_rate(rate_mt_per_year, temp_c, p_bar):
    """Injection volume rate at reservoir conditions [m3/s]: mass rate / rho_CO2(p, T)."""
    return mass_rate_kg_s(rate_mt_per_year) / co2_density(temp_c, p_bar)


# -- relative permeability and the Buckley-Leverett profile ---------------------------------
def rel_perms(sg, swi, lam):
    """(krg, krw) of the decks' SGOF functions at gas saturation sg; swi and lam may be arrays
    that broadcast against sg (the r-z solves' cases)."""
    # np.minimum/np.maximum, not np.clip: the solves call this on a column at a time, where
    # np.clip's dispatch costs 7x the arithmetic (the same values).
    s = np.minimum(np.maximum(1.0 - np.asarray(sg, np.float64) / (1.0 - swi), 0.0), 1.0)   # S*
    krw = np.sqrt(s) * (1.0 - (1.0 - s ** (1.0 / lam)) ** lam) ** 2
    krg = (1.0 - s) ** 2 * (1.0 - s ** 2)
    return krg, krw


def bl_pressure_integral(r_c, t, q, k, h, phi, mu_w, mu_g, swi, lam, n=4000):
    """(integral_{r_c}^{r_f} d ln r^2 / lambda_t, r_f) [Pa s, m] of the radial Buckley-Leverett
    profile at time t; the integral is 0 (and r_f the front) where the front has not reached
    r_c. Multiply the integral by q / (4 pi k h) for Pa."""
    smax = 1.0 - swi
    sg = np.linspace(0.0, smax, n + 1)[1:]
    krg, krw = rel_perms(sg, swi, lam)
    lg, lw = krg / mu_g, krw / mu_w
    f = lg / (lg + lw)
    df = np.gradient(f, sg)
    # Welge tangent: the largest f / S (the front saturation)
    ratio = f / sg
    i_f = int(np.argmax(ratio))
    fprime_front = ratio[i_f]
    a = q * t / (math.pi * h * phi)
    r_f = math.sqrt(a * fprime_front)
    if r_f <= r_c:
        return 0.0, r_f
    s_b = sg[i_f:]
    dfb = np.maximum(df[i_f:], 1e-300)
    lnr2 = np.log(a * dfb)
    lt = (lg + lw)[i_f:]
    lnr2 = np.minimum.accumulate(lnr2)           # monotone behind the front
    lo = math.log(r_c * r_c)
    keep = lnr2 >= lo
    x = lnr2[keep]
    y = 1.0 / lt[keep]
    if x.size < 2:
        return 0.0, r_f
    # from r_c (clipped) to the front, trapezoid in ln r^2 (x decreasing with S)
    xs = np.concatenate([[math.log(r_f * r_f)], x, [lo]])
    ys = np.concatenate([[y[0]], y, [y[-1]]])
    return float(np.sum(0.5 * (ys[1:] + ys[:-1]) * (xs[:-1] - xs[1:]))), r_f


# -- the case's inputs ----------------------------------------------------------------------
def fractional_flow(c, p, n):
    """The gas fractional flow on n gas saturations in (0, 1 - Swi]: (sg, gas and water
    mobilities, f_g, df_g/dS by np.gradient, the index of the Welge front, where f_g / S peaks)."""
    sg = np.linspace(0.0, 1.0 - c["swi"], n + 1)[1:]
    krg, krw = rel_perms(sg, c["swi"], c["lam"])
    lg, lw = krg / p["mu_g"], krw / p["mu_w"]
    f = lg / (lg + lw)
    return sg, lg, lw, f, np.gradient(f, sg), int(np.argmax(f / sg))


def decode(x0, dr=None, dz=None):
    """The case's physical inputs from one encoded input x0 (X, Y, >= 9 channels) at the first
    report time: a dict with kx, kz [mD] (X, Y; 0 outside), poro, perf (X,) bool, active (X, Y),
    rate [Mt/yr], temp [degC], pressure [bar], swi, lam, dr (Y,), dz (X,) [m]. The encoding holds
    no absolute DR or DZ: the models' grid (cases.radial_widths, 200/24 m layers) is the
    default."""
    x0 = np.asarray(x0, np.float64)
    act = x0[..., 0] != 0
    X, Y = act.shape
    kx = np.where(act, np.exp(15.0 * x0[..., 0]), 0.0)
    kz = np.where(act, np.exp(15.0 * x0[..., 1]), 0.0)
    return {"kx": kx, "kz": kz, "poro": np.where(act, x0[..., 2], 0.0), "active": act,
            "perf": x0[:, 0, 3] > 0, "rate": float(_enc.decoded_rate(x0[0, 0, 4])),
            "temp": 30.0 + 150.0 * float(x0[0, 0, 5]),
            "pressure": 100.0 + 200.0 * float(x0[0, 0, 6]),
            "swi": 0.1 + 0.2 * float(x0[0, 0, 7]), "lam": 0.3 + 0.4 * float(x0[0, 0, 8]),
            "dr": np.asarray(_cases.radial_widths() if dr is None else dr, np.float64),
            "dz": np.asarray(np.full(X, _cases.DZ) if dz is None else dz, np.float64)}


def from_case(c):
    """The same dict from a case file's values (cases.read_case_h5)."""
    kx = np.asarray(c["PERMX"], np.float64)
    act = kx > 0
    perf = np.asarray(c["PERF"]) != 0 if "PERF" in c else np.zeros(kx.shape[0], bool)
    if "PERF" not in c:
        perf[int(c["PERF_TOP"]) - 1:int(c["PERF_BOTTOM"])] = True
    return {"kx": kx, "kz": np.where(act, np.asarray(c["PERMZ"], np.float64), 0.0),
            "poro": np.where(act, np.asarray(c["PORO"], np.float64), 0.0), "active": act,
            "perf": perf, "rate": float(c["INJ_RATE"]), "temp": float(c["TEMP"]),
            "pressure": float(c["PRESSURE"]), "swi": float(c["SWI"]),
            "lam": float(c["VG_LAMBDA"]), "dr": np.asarray(c["DR"], np.float64),
            "dz": np.asarray(c["DZ"], np.float64)}


def properties(c):
    """Derived quantities of a decoded case: radii, kh of the perforated and of all layers,
    the fluid properties at the perforations' mid-depth initial pressure."""
    dr, dz, act, perf = c["dr"], c["dz"], c["active"], c["perf"] & c["active"][:, 0]
    r_out = np.cumsum(dr)
    centre = r_out - dr / 2.0                       # cumulative DR, as the KPIs measure radii
    z_mid = np.cumsum(dz) - dz / 2.0
    p_perf = c["pressure"] + BRINE_GRADIENT_BAR_PER_M * float(z_mid[perf].mean())
    kh_perf = float((c["kx"][:, 0] * dz * perf).sum()) * MD_TO_M2       # m3
    h_perf = float((dz * perf).sum())
    phi_perf = float((c["poro"][:, 0] * dz * perf).sum() / h_perf)
    kh_col = (c["kx"] * dz[:, None]).sum(0) * MD_TO_M2                  # (Y,) all layers
    h_act = (act * dz[:, None]).sum(0)
    phih_col = (c["poro"] * dz[:, None]).sum(0)
    # series (harmonic in ln r) average of the columns' kh: radial flow crosses them in turn
    w = np.log(r_out / np.concatenate([[r_out[0] / 2.0], r_out[:-1]]))
    kh_all = float(w.sum() / (w / np.maximum(kh_col, 1e-30)).sum())
    h_all = float((h_act * w).sum() / w.sum())
    # pore volume per unit area averaged by area (the closed domain's storage)
    area = math.pi * (r_out ** 2 - np.concatenate([[0.0], r_out[:-1]]) ** 2)
    phih_all = float((phih_col * area).sum() / area.sum())
    p_mid_all = c["pressure"] + BRINE_GRADIENT_BAR_PER_M * float(
        (z_mid * act[:, 0] * dz).sum() / (act[:, 0] * dz).sum())
    mu_w = float(brine_viscosity(c["temp"]))
    return {"r_centre": centre, "r_outer": float(r_out[-1]), "p_perf": p_perf,
            "kh_perf": kh_perf, "h_perf": h_perf, "phi_perf": phi_perf, "kh_col": kh_col,
            "kh_all": kh_all, "h_all": h_all, "phih_all": phih_all, "mu_w": mu_w,
            "mu_g": float(co2_viscosity(c["temp"], p_perf)),
            "c_w": float(brine_compressibility(c["temp"], p_mid_all)),
            "c_t": ROCK_COMPRESSIBILITY + float(brine_compressibility(c["temp"], p_mid_all)),
            "rho_co2": float(co2_density(c["temp"], p_perf)),
            "q": float(reservoir_rate(c["rate"], c["temp"], p_perf))}


def report_times_s(times_days=None):
    return (_cases.report_times() if times_days is None else np.asarray(times_days)) * DAY


def near_well_dp_bar(c, times_days=None, r=None, kh="perf", two_phase=True, bounded=True,
                     props=None):
    """The buildup [bar] at radius r (default: the centre of the first radial cell, DR[0]/2)
    at each report time: single-phase line source (kh "perf": the perforated layers' k h and
    thickness; "all": every active layer's) bounded by the closed outer radius, with the two-
    phase Buckley-Leverett correction inside the plume (two_phase)."""
    p = props or properties(c)
    t = report_times_s(times_days)
    r = p["r_centre"][0] if r is None else r
    if kh == "perf":
        k_h, h, phi = p["kh_perf"], p["h_perf"], p["phi_perf"]
    else:
        k_h, h, phi = p["kh_all"], p["h_all"], p["phih_all"] / p["h_all"]
    k = k_h / h
    R = p["r_outer"] if bounded else None
    out = np.empty(len(t))
    for i, ti in enumerate(t):
        if two_phase:
            integral, r_f = bl_pressure_integral(
                r, ti, p["q"], p["kh_perf"] / p["h_perf"], p["h_perf"], p["phi_perf"],
                p["mu_w"], p["mu_g"], c["swi"], c["lam"])
        else:
            integral, r_f = 0.0, 0.0
        if integral > 0.0:
            brine = bounded_dp(r_f, ti, p["q"], p["mu_w"], k, h, phi, p["c_t"], R)
            two = p["q"] / (4.0 * math.pi * p["kh_perf"]) * integral
            out[i] = float(brine) + two
        else:
            out[i] = float(bounded_dp(r, ti, p["q"], p["mu_w"], k, h, phi, p["c_t"], R))
    return out / BAR


def max_dp_bar(c, **kw):
    """The maximum-buildup estimate [bar]: the largest near_well_dp_bar over the report times."""
    return float(np.max(near_well_dp_bar(c, **kw)))


def theis_max_dp_bar(c, props=None):
    """The single-phase line-source estimate: Theis at the first cell centre, first report
    time (1 day), perforated k h, brine viscosity, c_t = c_rock + c_brine [bar]."""
    p = props or properties(c)
    return float(theis_dp(p["r_centre"][0], DAY, p["q"], p["mu_w"], p["kh_perf"] / p["h_perf"],
                          p["h_perf"], p["phi_perf"], p["c_t"])) / BAR


def envelope_bar(c, times_days=None, kh="all", bounded=True, props=None, radii=None):
    """Single-phase far-field envelope [bar] at the radial cell centres (or `radii`): the
    largest over report times of the line-source buildup (Theis; bounded by the closed outer
    radius: max(Theis, pseudo-steady state)); with a constant rate both grow with time, so it
    is the value at the last report time."""
    p = props or properties(c)
    t = report_times_s(times_days)[-1]
    r = p["r_centre"] if radii is None else np.asarray(radii, np.float64)
    if kh == "all":
        k_h, h, phi = p["kh_all"], p["h_all"], p["phih_all"] / p["h_all"]
    else:
        k_h, h, phi = p["kh_perf"], p["h_perf"], p["phi_perf"]
    R = p["r_outer"] if bounded else None
    return bounded_dp(r, t, p["q"], p["mu_w"], k_h / h, h, phi, p["c_t"], R) / BAR


def crossing_radius(radii, env, critical=CRITICAL_DP_BAR):
    """Where an envelope (descending outward in general) falls through `critical`, by the rule
    of docs/kpis.md: between the centres of the last column above it and the next, linearly in
    dP; 0 when the first column is not above; the last radius when every column is."""
    env = np.asarray(env, np.float64)
    above = env > critical
    if not above[0]:
        return 0.0
    if above.all():
        return float(radii[-1])
    j = int(np.argmin(above)) - 1   # last column above before the first not above
    a, b = env[j], env[j + 1]
    frac = (a - critical) / (a - b) if a > b else 1.0
    return float(radii[j] + frac * (radii[j + 1] - radii[j]))


def aor_radius_m(c, critical=CRITICAL_DP_BAR, **kw):
    """The area-of-review radius [m] at `critical` bar: where the far-field envelope falls
    through it, on a fine logarithmic radius grid out to the outer radius (0 when even the
    first cell centre stays below)."""
    p = kw.pop("props", None) or properties(c)
    radii = np.geomspace(p["r_centre"][0], p["r_centre"][-1], 2000)
    env = envelope_bar(c, props=p, radii=radii, **kw)
    return crossing_radius(radii, env, critical)


def aor_radius_closed_form(q, mu, kh, phi_h, ct, t, critical_pa, R=None):
    """Theis-only AoR (infinite domain, Cooper-Jacob): r = sqrt(2.2458 k t / (phi mu ct))
    exp(-2 pi kh critical / (q mu)); with phi_h = phi h, k = kh / h. Returns m."""
    # Cooper-Jacob: dP = q mu/(4 pi kh) (ln(4 k t/(phi mu ct r^2)) - gamma) = critical
    # -> r^2 = 4 k t / (phi mu ct) exp(-gamma) exp(-4 pi kh critical / (q mu))
    k_over_phi = kh / phi_h
    return math.sqrt(4.0 * k_over_phi * t / (mu * ct) * math.exp(-EULER_GAMMA)
                     * math.exp(-4.0 * math.pi * kh * critical_pa / (q * mu)))


# -- the Flow side ----------------------------------------------------------------------------
def flow_aor_radius(envelope, dr, critical=CRITICAL_DP_BAR):
    """Flow's area-of-review radius [m] from its envelope (largest dP over report times and
    layers per radial column, common.field_envelope) by docs/kpis.md's envelope rule, at the
    cell centres (cumulative DR)."""
    dr = np.asarray(dr, np.float64)
    return crossing_radius(np.cumsum(dr) - dr / 2.0, envelope, critical)


# -- numerical radial single-phase solve (bounded, heterogeneous columns) -------------------
def radial_1d_dp_bar(c, times_days=None, props=None, substeps=12):
    """Single-phase brine buildup [bar] (T, Y) at every radial cell and report time, from a
    1-D radial finite-volume solve over the grid's columns (each column's k h summed over its
    layers, its pore volume phi h times the annulus, total compressibility c_t), with the
    closed outer boundary of the decks: implicit Euler, `substeps` geometric steps per report
    interval (the first from t/1e3), the rate into the first cell. Exact two-point radial
    transmissibilities between cell-average (node) radii, as the decks' MULTX makes Flow's."""
    p = props or properties(c)
    dr = c["dr"]
    r_out = 0.1 + np.cumsum(dr)                     # the decks' radii include the well's 0.1 m
    r_in = r_out - dr
    rn = np.exp((r_out ** 2 * np.log(r_out) - r_in ** 2 * np.log(r_in))
                / (r_out ** 2 - r_in ** 2) - 0.5)
    kh = p["kh_col"]
    with np.errstate(divide="ignore"):
        half_out = 2 * math.pi * kh[:-1] / np.log(r_out[:-1] / rn[:-1])
        half_in = 2 * math.pi * kh[1:] / np.log(rn[1:] / r_in[1:])
    tr = 1.0 / (1.0 / half_out + 1.0 / half_in) / p["mu_w"]       # m3/(Pa s)
    phih = (c["poro"] * c["dz"][:, None]).sum(0)
    stor = phih * math.pi * (r_out ** 2 - r_in ** 2) * p["c_t"]      # m3/Pa
    t_rep = report_times_s(times_days)
    steps = []
    prev = 0.0
    for k, tk in enumerate(t_rep):
        start = prev if prev > 0 else tk / 1e3
        if prev == 0:
            steps.append(np.geomspace(start, tk, substeps * 2))
        else:
            steps.append(np.geomspace(prev, tk, substeps + 1)[1:])
        prev = tk
    Y = len(dr)
    pres = np.zeros(Y)
    out = np.zeros((len(t_rep), Y))
    t_now = 0.0
    k_rep = 0
    times = np.concatenate(steps)
    rhs_src = np.zeros(Y)
    rhs_src[0] = p["q"]
    for tn in times:
        dt = tn - t_now
        a = np.zeros(Y)
        b = stor / dt
        cc = np.zeros(Y)
        a[1:] = -tr
        cc[:-1] = -tr
        b = b.copy()
        b[:-1] += tr
        b[1:] += tr
        d = stor / dt * pres + rhs_src
        # Thomas algorithm
        cp = np.empty(Y)
        dp = np.empty(Y)
        cp[0] = cc[0] / b[0]
        dp[0] = d[0] / b[0]
        for i in range(1, Y):
            m = b[i] - a[i] * cp[i - 1]
            cp[i] = cc[i] / m
            dp[i] = (d[i] - a[i] * dp[i - 1]) / m
        x = np.empty(Y)
        x[-1] = dp[-1]
        for i in range(Y - 2, -1, -1):
            x[i] = dp[i] - cp[i] * x[i + 1]
        pres = x
        t_now = tn
        if k_rep < len(t_rep) and abs(tn - t_rep[k_rep]) <= 1e-9 * t_rep[k_rep]:
            out[k_rep] = pres
            k_rep += 1
    return out / BAR


def partial_penetration_radius(c, props=None, alpha=0.5):
    """The radius [m] within which the flow stays in the perforated layers:
    alpha * H * sqrt(kx / kz) with H the active thickness at the well and kx/kz the well
    column's thickness-weighted mean ratio."""
    p = props or properties(c)
    act = c["active"][:, 0]
    H = float((c["dz"] * act).sum())
    kx = float((c["kx"][:, 0] * c["dz"] * act).sum())
    kz = float((c["kz"][:, 0] * c["dz"] * act).sum())
    return alpha * H * math.sqrt(kx / max(kz, 1e-30))


def near_well_correction_bar(c, times_days=None, props=None, alpha=0.5, two_phase=True):
    """Added to the 1-D (full-thickness) solution at the first cell: (1) partial penetration,
    q mu_w / (2 pi) (1/kh_perf - 1/kh_0) ln(r_pp / r_c) for r_pp > r_c; (2) the two-phase
    Buckley-Leverett correction q/(4 pi kh(r)) * integral (1/lambda_t - mu_w) d ln r^2 from r_c
    to the front, kh(r) = kh_perf inside r_pp and kh_0 (the well column's) outside.
    Returns (T,) bar."""
    p = props or properties(c)
    t = report_times_s(times_days)
    r_c = p["r_centre"][0]
    kh0 = float(p["kh_col"][0])
    khp = p["kh_perf"]
    # alpha None: no partial-penetration term, the plume's flow in the perforated layers only
    rpp = math.inf if alpha is None else partial_penetration_radius(c, p, alpha)
    pp = 0.0
    if alpha is not None and rpp > r_c and khp < kh0:
        pp = p["q"] * p["mu_w"] / (2 * math.pi) * (1 / khp - 1 / kh0) * math.log(rpp / r_c)
    out = np.full(len(t), pp)
    if not two_phase:
        return out / BAR
    sg, lg, lw, f, df, i_f = fractional_flow(c, p, 3000)
    lt = (lg + lw)[i_f:]
    dfb = np.maximum(df[i_f:], 1e-300)
    lo = math.log(r_c * r_c)
    for k, tk in enumerate(t):
        a = p["q"] * tk / (math.pi * p["h_perf"] * p["phi_perf"])
        lnr2 = np.minimum.accumulate(np.log(a * dfb))
        lnf = math.log(a * f[i_f] / sg[i_f])
        if lnf <= lo:
            continue
        keep = lnr2 >= lo
        xs = np.concatenate([[lnf], lnr2[keep], [lo]])
        yv = 1.0 / lt[keep]
        ys = np.concatenate([[yv[0] if yv.size else 1 / lt[0]], yv,
                             [yv[-1] if yv.size else 1 / lt[0]]])
        mid_x = 0.5 * (xs[1:] + xs[:-1])
        khr = np.where(np.exp(0.5 * mid_x) < rpp, khp, kh0)
        integrand = (0.5 * (ys[1:] + ys[:-1]) - p["mu_w"]) / khr
        out[k] += p["q"] / (4 * math.pi) * float(np.sum(integrand * (xs[:-1] - xs[1:])))
    return out / BAR


def max_dp_radial(c, times_days=None, props=None, alpha=0.5, two_phase=True, field=None):
    """Maximum-buildup estimate [bar]: the 1-D radial solution at the first cell plus the
    near-well corrections, the largest over report times. `field` a radial_1d_dp_bar result
    to reuse."""
    p = props or properties(c)
    f = radial_1d_dp_bar(c, times_days, p) if field is None else field
    return float(np.max(f[:, 0] + near_well_correction_bar(c, times_days, p, alpha, two_phase)))


# -- numerical single-phase r-z solve (partial penetration, layering, closed boundary) ------
def _column_elimination(blocks, rhs, txm):
    """Solves the r-z block-tridiagonal system over the radial columns: diagonal blocks
    (N, Y, X, X), right-hand sides (N, Y, X), columns j and j + 1 coupled by -diag(txm[:, j])
    (radial transmissibilities (N, Y - 1, X)). Forward: M_j = B_j + diag(t) M_{j-1}^{-1} diag(t),
    r_j += t g_{j-1}; then back substitution: (N, Y, X). runtime/PressureEstimates.cpp
    ColumnElimination is the C++ twin."""
    N, Y, X = rhs.shape
    Minv_c = np.zeros((N, Y, X, X))
    g = np.zeros((N, Y, X))
    M = blocks[:, 0]
    for j in range(Y):
        if j > 0:
            M = blocks[:, j] + txm[:, j - 1][:, :, None] * Minv_c[:, j - 1]
            r = rhs[:, j] + txm[:, j - 1] * g[:, j - 1]
        else:
            r = rhs[:, 0]
        if j < Y - 1:
            sol = np.linalg.solve(M, np.concatenate(
                [np.eye(X)[None] * (-txm[:, j])[:, None, :], r[:, :, None]], 2))
            Minv_c[:, j] = sol[:, :, :X]
            g[:, j] = sol[:, :, X]
        else:
            g[:, j] = np.linalg.solve(M, r[:, :, None])[:, :, 0]
    x = np.zeros((N, Y, X))
    x[:, Y - 1] = g[:, Y - 1]
    for j in range(Y - 2, -1, -1):
        x[:, j] = g[:, j] - np.einsum("nab,nb->na", Minv_c[:, j], x[:, j + 1])
    return x


def rz_single_phase_dp_bar(cs, times_days=None, props=None, substeps=4, first_steps=8):
    """Single-phase brine buildup [bar] (N, T, X, Y) of a batch of decoded cases on their r-z
    grids: implicit Euler on the two-point finite-volume system of the decks (full circle;
    radial transmissibilities between node radii as cases.exact_tranx, vertical ones between
    layer centres with the harmonic kz; the injector as a well node at uniform pressure over
    its perforated cells, connection factors 2 pi kx dz / ln(r_node0 / r_w); closed outer and
    top/bottom boundaries; gravity and capillarity neglected: dP is the buildup over the
    initial hydrostatic state). Storage phi V c_t, c_t = c_rock + c_brine(T, P) per case.
    Solved by block-tridiagonal elimination over the radial columns (each block the column's
    layers), batched over the cases. Every case must share the grid's shape and DR."""
    props = props or [properties(c) for c in cs]
    N = len(cs)
    X, Y = cs[0]["kx"].shape
    q = np.array([p["q"] for p in props])
    tx, tz, _, stor, cf, act, _ = _rz_geometry(cs, props)
    cfs = cf.sum(1)                                           # (N,)
    # the constant part of each column's block: vertical couplings and radial diagonals
    base = np.zeros((N, Y, X, X))
    ix = np.arange(X)
    diag = np.zeros((N, X, Y))
    diag[:, :, :-1] += tx
    diag[:, :, 1:] += tx
    diag[:, :-1, :] += tz
    diag[:, 1:, :] += tz
    base[:, :, ix, ix] = np.moveaxis(diag, 1, 2)
    base[:, :, ix[:-1], ix[1:]] -= np.moveaxis(tz, 1, 2)
    base[:, :, ix[1:], ix[:-1]] -= np.moveaxis(tz, 1, 2)
    # the well node eliminated: + diag(cf) - cf cf^T / sum cf in column 0, source q cf / sum cf
    base[:, 0] += (np.eye(X)[None] * cf[:, :, None]
                   - cf[:, :, None] * cf[:, None, :] / np.maximum(cfs, 1e-300)[:, None, None])
    src = np.zeros((N, X, Y))
    src[:, :, 0] = q[:, None] * cf / np.maximum(cfs, 1e-300)[:, None]
    t_rep = report_times_s(times_days)
    times = [np.geomspace(t_rep[0] / 1e3, t_rep[0], first_steps)]
    for k in range(1, len(t_rep)):
        times.append(np.geomspace(t_rep[k - 1], t_rep[k], substeps + 1)[1:])
    times = np.concatenate(times)
    pres = np.zeros((N, X, Y))
    out = np.zeros((N, len(t_rep), X, Y))
    t_now, k_rep = 0.0, 0
    st = np.moveaxis(stor, 2, 1)                              # (N, Y, X)
    txm = np.moveaxis(tx, 2, 1)                               # (N, Y-1, X)
    for tn in times:
        dt = tn - t_now
        blocks = base.copy()
        blocks[:, :, ix, ix] += st / dt
        rhs = np.moveaxis(stor / dt * pres + src, 2, 1)       # (N, Y, X)
        x = _column_elimination(blocks, rhs, txm)
        pres = np.where(act, np.moveaxis(x, 1, 2), 0.0)
        t_now = tn
        if k_rep < len(t_rep) and abs(tn - t_rep[k_rep]) <= 1e-9 * t_rep[k_rep]:
            out[:, k_rep] = pres
            k_rep += 1
    return out / BAR


def grid_two_phase_correction_bar(c, times_days=None, props=None, n=3000):
    """The two-phase correction of the first cell's buildup [bar] (T,) as a simulator on the
    case's radial grid sees it: the radial Buckley-Leverett profile averaged over each cell
    (by area), each radial connection carrying the upstream (inner) cell's total mobility,
    q / (2 pi kh_perf) sum_j ln(r_node[j+1] / r_node[j]) (1 / lambda_t(S_j) - mu_w). The front's
    smearing over the coarse cells lowers the mobility of the cells it crosses: at the first
    report the correction is positive where the continuous one (near_well_correction_bar) is
    about 0."""
    p = props or properties(c)
    dr = c["dr"]
    rw = _cases.WELL_RADIUS
    r_out = rw + np.cumsum(dr)
    r_in = r_out - dr
    rn = np.exp((r_out ** 2 * np.log(r_out) - r_in ** 2 * np.log(r_in))
                / (r_out ** 2 - r_in ** 2) - 0.5)
    swi, lam = c["swi"], c["lam"]
    sg, lg, lw, f, df, i_f = fractional_flow(c, p, n)
    s_b = sg[i_f:]
    dfb = np.minimum.accumulate(np.maximum(df[i_f:], 0.0))    # r^2 / a, decreasing in S
    t = report_times_s(times_days)
    out = np.zeros(len(t))
    wlog = np.log(rn[1:] / rn[:-1])
    for k, tk in enumerate(t):
        a = p["q"] * tk / (math.pi * p["h_perf"] * p["phi_perf"])
        r2 = a * dfb                                          # decreasing with S
        r2_front = a * f[i_f] / sg[i_f]
        # cell-average saturation: integral of S d(r^2) over [r_in^2, r_out^2]
        # S(r^2) for r^2 < r2_front; cumulative integral along r^2 increasing
        x = np.concatenate([[0.0], r2[::-1], [r2_front]])
        y = np.concatenate([[s_b[-1]], s_b[::-1], [s_b[0]]])
        cum = np.concatenate([[0.0], np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(x))])
        def integral(z):
            z = np.minimum(z, r2_front)
            return np.interp(z, x, cum)
        sbar = (integral(r_out ** 2) - integral(r_in ** 2)) / (r_out ** 2 - r_in ** 2)
        kg, kw = rel_perms(sbar, swi, lam)
        lt = kg / p["mu_g"] + kw / p["mu_w"]
        out[k] = p["q"] / (2 * math.pi * p["kh_perf"]) * float(
            np.sum(wlog * (1.0 / lt[:-1] - p["mu_w"])))
    return out / BAR


# -- the r-z solve as the simulator steps it: implicit two-phase, one step per report interval ---
DISSOLVED_MASS_FRACTION = 0.05   # CO2 mass fraction of brine in contact with gas
DISSOLVED_DENSITY = 1190.0       # kg/m3: 44 g/mol over a partial molar volume of ~37 cm3/mol
SWEPT_SATURATION = 1e-6          # a cell holds gas (its brine dissolves CO2) above this
# Where the implicit estimates' injected CO2 dissolves, by name: (the gas saturation above which a
# cell's brine is saturated with CO2, whether only the brine's share 1 - S of its pore volume
# dissolves it). "pore_volume", every cell the front has touched and its whole pore volume, is
# what the shipped maximum-dP and plume-radius heads read; it dissolves too much: the
# buoyancy-aware estimate's far field is low by a median 13 % at the outer columns of the
# validation cases and its area of review 11 % too close. "brine" counts the brine of the cells
# the plume holds, gas above 0.05: its area of review is within 10 % of Flow's in 59 of the 99
# validation cases that have one, against 34 (above 1e-6: 41, 0.01: 54, 0.1: 58; docs/kpis.md).
DISSOLUTION_MODELS = {"pore_volume": (SWEPT_SATURATION, False), "brine": (0.05, True)}


def _rz_geometry(cs, props):
    """The r-z finite-volume system of rz_single_phase_dp_bar (brine mobilities): (tx (N, X,
    Y-1), tz (N, X-1, Y), pore volume (N, X, Y), storage (N, X, Y), well connections (N, X),
    active (N, X, Y), perforated (N, X))."""
    X, Y = cs[0]["kx"].shape
    dr = cs[0]["dr"]
    rw = _cases.WELL_RADIUS
    r_out = rw + np.cumsum(dr)
    r_in = r_out - dr
    rn = np.exp((r_out ** 2 * np.log(r_out) - r_in ** 2 * np.log(r_in))
                / (r_out ** 2 - r_in ** 2) - 0.5)
    area = math.pi * (r_out ** 2 - r_in ** 2)
    kx = np.stack([c["kx"] for c in cs]) * MD_TO_M2
    kz = np.stack([c["kz"] for c in cs]) * MD_TO_M2
    act = np.stack([c["active"] for c in cs])
    dz = np.stack([c["dz"] for c in cs])
    poro = np.stack([c["poro"] for c in cs])
    mu = np.array([p["mu_w"] for p in props])[:, None, None]
    ct = np.array([p["c_t"] for p in props])[:, None, None]
    perf = np.stack([c["perf"] & c["active"][:, 0] for c in cs])
    with np.errstate(divide="ignore", invalid="ignore"):
        ho = 2 * math.pi * kx[:, :, :-1] * dz[:, :, None] / np.log(r_out[:-1] / rn[:-1])
        hi = 2 * math.pi * kx[:, :, 1:] * dz[:, :, None] / np.log(rn[1:] / r_in[1:])
        tx = np.where(act[:, :, :-1] & act[:, :, 1:], 1 / (1 / ho + 1 / hi), 0.0) / mu
        hz = kz / (dz[:, :, None] / 2)
        tz = np.where(act[:, :-1] & act[:, 1:], area * 1 / (1 / hz[:, :-1] + 1 / hz[:, 1:]),
                      0.0) / mu
    pv = np.where(act, poro * dz[:, :, None] * area, 1.0)
    cf = np.where(perf, 2 * math.pi * kx[:, :, 0] * dz / math.log(rn[0] / rw), 0.0) / mu[:, :, 0]
    return (np.nan_to_num(tx), np.nan_to_num(tz), pv, pv * ct, cf, act, perf)


def _rz_implicit_step(tx, tz, cf, stor, dt, pres, q, sink):
    """One implicit Euler step of the r-z pressure system with transmissibilities tx, tz and
    well connections cf (mobilities included), the well node at total rate q (N,) eliminated,
    a volume sink (N, X, Y) [m3/s]: (pressure (N, X, Y) [Pa], well connection rates (N, X)).
    Block-tridiagonal elimination over the radial columns (_column_elimination)."""
    N, X, Y = stor.shape
    ix = np.arange(X)
    cfs = np.maximum(cf.sum(1), 1e-300)
    diag = np.zeros((N, X, Y))
    diag[:, :, :-1] += tx
    diag[:, :, 1:] += tx
    diag[:, :-1, :] += tz
    diag[:, 1:, :] += tz
    diag += stor / dt
    blocks = np.zeros((N, Y, X, X))
    blocks[:, :, ix, ix] = np.moveaxis(diag, 1, 2)
    tzm = np.moveaxis(tz, 1, 2)
    blocks[:, :, ix[:-1], ix[1:]] -= tzm
    blocks[:, :, ix[1:], ix[:-1]] -= tzm
    blocks[:, 0] += (np.eye(X)[None] * cf[:, :, None]
                     - cf[:, :, None] * cf[:, None, :] / cfs[:, None, None])
    src = stor / dt * pres - sink
    src[:, :, 0] += q[:, None] * cf / cfs[:, None]
    rhs = np.moveaxis(src, 2, 1)
    x = _column_elimination(blocks, rhs, np.moveaxis(tx, 2, 1))
    pn = np.moveaxis(x, 1, 2)
    pw = (q + (cf * pn[:, :, 0]).sum(1)) / cfs
    return pn, cf * (pw[:, None] - pn[:, :, 0])


def _injected_volumes(t, pres, S, mdot, perf, nperf, temp, p_perf, pv, act, dissolved,
                      dissolution="pore_volume"):
    """(gas volume at the well's pressure, the volume the dissolved CO2 frees, the sink's
    weights) after injecting for t seconds: the implicit estimates' injected volumes (the C++
    injected_volumes), the CO2 dissolving as DISSOLUTION_MODELS[dissolution] says."""
    threshold, in_brine = DISSOLUTION_MODELS[dissolution]
    mass = mdot * t
    dp_well = (pres[:, :, 0] * perf).sum(1) / nperf / BAR
    rho = co2_density(temp, p_perf + dp_well)
    swept = pv * (S > threshold) * act
    if in_brine:
        swept = swept * (1.0 - S)
    total = swept.sum((1, 2))
    m_dis = np.minimum(dissolved * 1000.0 * total, 0.9 * mass)
    return (mass / rho, m_dis * (1.0 / rho - 1.0 / DISSOLVED_DENSITY),
            swept / np.maximum(total, 1e-30)[:, None, None])


def rz_implicit_two_phase_dp_bar(cs, times_days=None, props=None, iters=3, bisections=22,
                                 sweeps=2, relax=0.5, dissolved=DISSOLVED_MASS_FRACTION):
    """Two-phase buildup [bar] (N, T, X, Y) and gas saturation (N, T, X, Y) of a batch of
    decoded cases, as a fully implicit simulator with one time step per report interval sees
    them (OPM Flow's first step is the whole first day: its first-day saturations are the
    one-step upstream solution, far below the Buckley-Leverett profile near the well, where the
    total mobility is lowest). Each step iterates `iters` times: the r-z pressure system of
    rz_single_phase_dp_bar with every connection at its upstream (inner; for vertical ones the
    mean) cell's total mobility mu_w (krg/mu_g + krw/mu_w) and the well's connections at the
    first column's, then the upstream implicit saturation of each cell, column by column
    outward (`bisections` halvings; `sweeps` Jacobi sweeps over a column's layers for the
    vertical fluxes, gravity and capillarity neglected). The injected volume is the mass over
    Span-Wagner's density at the perforations' mean first-column pressure, less the volume of
    the CO2 that dissolves (mass fraction `dissolved` of the brine of the cells holding gas,
    as a sink over them by pore volume, at DISSOLVED_DENSITY); these volume terms move by
    `relax` per iteration."""
    props = props or [properties(c) for c in cs]
    N = len(cs)
    X, Y = cs[0]["kx"].shape
    tx0, tz0, pv, stor, cf0, act, perf = _rz_geometry(cs, props)
    mu_w = np.array([p["mu_w"] for p in props])[:, None, None]
    mu_g = np.array([p["mu_g"] for p in props])[:, None, None]
    swi = np.array([c["swi"] for c in cs])[:, None, None]
    lam = np.array([c["lam"] for c in cs])[:, None, None]
    smax = (1.0 - swi)[:, :, 0]

    def mobility(S, k):
        """(total mobility relative to brine's, gas fractional flow) at saturations S of
        shape (N, X, Y) (k = None) or (N, X) (k = 0)."""
        sl = (slice(None), slice(None), k) if k is not None else (Ellipsis,)
        sw, lm, mw, mg = swi[sl], lam[sl], mu_w[sl], mu_g[sl]
        krg, krw = rel_perms(S, sw, lm)
        lg, lw = krg / mg, krw / mw
        return (lg + lw) * mw, lg / (lg + lw)

    def transport(S_old, qw, fx, fz, dt):
        S = np.zeros_like(S_old)
        inflow = np.maximum(qw, 0.0)                 # gas into column 0 from the well
        for j in range(Y):
            if not (inflow > 0).any() and not (S_old[:, :, j:] > 0).any():
                break
            out_r = fx[:, :, j] if j < Y - 1 else np.zeros((N, X))
            down, up = np.maximum(fz[:, :, j], 0.0), np.maximum(-fz[:, :, j], 0.0)
            out_v = np.zeros((N, X))
            out_v[:, :-1] += down
            out_v[:, 1:] += up
            out = out_r + out_v
            a = pv[:, :, j] / dt
            so = S_old[:, :, j]
            sj = np.zeros((N, X))
            for sweep in range(sweeps):
                fin = inflow.copy()
                if sweep:
                    fj = mobility(sj, 0)[1]
                    fin[:, 1:] += down * fj[:, :-1]
                    fin[:, :-1] += up * fj[:, 1:]
                lo = np.zeros((N, X))
                hi = np.broadcast_to(smax, (N, X)).copy()
                for _ in range(bisections):
                    mid = 0.5 * (lo + hi)
                    above = a * (mid - so) + out * mobility(mid, 0)[1] - fin > 0
                    hi = np.where(above, mid, hi)
                    lo = np.where(above, lo, mid)
                none = (so <= 0) & (fin * dt <= 1e-9 * pv[:, :, j])
                sj = np.where(act[:, :, j] & ~none, 0.5 * (lo + hi), 0.0)
            S[:, :, j] = sj
            inflow = out_r * mobility(sj, 0)[1]
        return S

    mdot = np.array([float(mass_rate_kg_s(c["rate"])) for c in cs])
    temp = np.array([c["temp"] for c in cs])
    p_perf = np.array([p["p_perf"] for p in props])
    nperf = np.maximum(perf.sum(1), 1)

    def volumes(t, pres, S):
        return _injected_volumes(t, pres, S, mdot, perf, nperf, temp, p_perf, pv, act, dissolved)

    t_rep = report_times_s(times_days)
    pres = np.zeros((N, X, Y))
    S = np.zeros((N, X, Y))
    out = np.zeros((N, len(t_rep), X, Y))
    sat = np.zeros((N, len(t_rep), X, Y))
    v_gas = np.zeros(N)
    v_dis = np.zeros(N)
    q = np.array([p["q"] for p in props])
    t_now = 0.0
    for k, tn in enumerate(t_rep):
        dt = tn - t_now
        m = mobility(S, None)[0]
        Sn, sink = S, np.zeros((N, X, Y))
        for _ in range(iters + 1):
            pn, qw = _rz_implicit_step(tx0 * m[:, :, :-1], tz0 * 0.5 * (m[:, :-1] + m[:, 1:]),
                                       cf0 * m[:, :, 0], stor, dt, pres, q, sink)
            pn = np.where(act, pn, 0.0)
            if _ == iters:
                break
            fx = np.maximum(tx0 * m[:, :, :-1] * (pn[:, :, :-1] - pn[:, :, 1:]), 0.0)
            fz = tz0 * 0.5 * (m[:, :-1] + m[:, 1:]) * (pn[:, :-1] - pn[:, 1:])
            Sn = transport(S, qw, fx, fz, dt)
            m = mobility(Sn, None)[0]
            vg, vd, w = volumes(tn, pn, Sn)
            q = relax * np.maximum((vg - v_gas) / dt, 0.0) + (1 - relax) * q
            sink = (relax * (np.maximum(vd - v_dis, 0.0) / dt)[:, None, None] * w
                    + (1 - relax) * sink)
        v_gas, v_dis, _w = volumes(tn, pn, Sn)
        pres, S = pn, Sn
        out[:, k] = pres
        sat[:, k] = S
        t_now = tn
    return out / BAR, sat


GRAVITY = 9.80665                # m/s2


def rz_gravity_two_phase_dp_bar(cs, times_days=None, props=None, iters=3, bisections=22,
                                sweeps=12, relax=0.5, dissolved=DISSOLVED_MASS_FRACTION,
                                gravity=GRAVITY, dissolution="pore_volume"):
    """rz_implicit_two_phase_dp_bar with buoyancy: buildup [bar] (N, T, X, Y) and gas saturation
    (N, T, X, Y), one implicit step per report interval as there. The buildup is over the
    brine's initial hydrostatic pressure, so brine's potential difference between two layers is
    their buildup's and CO2's is that less (rho_brine - rho_CO2) g times their centres' distance
    (brine density at the perforations' pressure, CO2's Span-Wagner density there):
      - each vertical connection carries brine at its upstream cell's brine mobility and CO2 at
        the cell upstream in CO2's potential (phase-upstream: counter-current flow lets CO2 rise
        while brine sinks), the CO2's buoyancy a source in the pressure system;
      - an injecting well holds CO2, so its pressure rises with depth by CO2's gradient, not
        brine's, and its buildup falls: connection k injects cf_k (p_well - (rho_brine -
        rho_CO2) g (z_k - z_ref) - p_k), z_ref the perforations' mean depth;
      - the saturation step moves CO2 vertically by its own potential and mobility, `sweeps`
        Jacobi sweeps over each column's layers (the vertical inflows from the sweep before;
        CO2 crosses up to `sweeps` layers a step: 12 gave the maximum as 24 did on validation
        cases, 3 and 6 less).
    Capillarity neglected. About 6 s for one case alone on one core, 4.5 s a case in a batch
    of 4, 1.2 s in batches of 64 (its loops are over columns and layers, vectorised over the
    batch; 2-core x86-64 machine, 2026-11-28). With `gravity` 0 there is no
    buoyancy, and the vertical connections carry the upstream cell's total mobility in place of
    rz_implicit_two_phase_dp_bar's mean of the two cells'. `dissolution` names the
    DISSOLUTION_MODELS entry the injected CO2 dissolves by."""
    props = props or [properties(c) for c in cs]
    N = len(cs)
    X, Y = cs[0]["kx"].shape
    tx0, tz0, pv, stor, cf0, act, perf = _rz_geometry(cs, props)
    mu_w = np.array([p["mu_w"] for p in props])[:, None, None]
    mu_g = np.array([p["mu_g"] for p in props])[:, None, None]
    swi = np.array([c["swi"] for c in cs])[:, None, None]
    lam = np.array([c["lam"] for c in cs])[:, None, None]
    smax = (1.0 - swi)[:, :, 0]
    dz = np.stack([c["dz"] for c in cs])
    temp = np.array([c["temp"] for c in cs])
    p_perf = np.array([p["p_perf"] for p in props])
    drho_g = (brine_density(temp, p_perf) - np.array([p["rho_co2"] for p in props])) * gravity
    head = drho_g[:, None] * 0.5 * (dz[:, :-1] + dz[:, 1:])      # (N, X - 1) [Pa]
    zc = np.cumsum(dz, 1) - dz / 2.0
    z_ref = (zc * perf).sum(1) / np.maximum(perf.sum(1), 1)
    injects = np.array([c["rate"] > 0 for c in cs])               # else the well holds brine
    h_well = -(drho_g * injects)[:, None] * (zc - z_ref[:, None])   # (N, X) [Pa]

    def phases(S, k):
        """(brine relative permeability, CO2 mobility over brine's viscosity, CO2 fractional
        flow) at saturations S (N, X, Y) (k = None) or (N, X) (k = 0)."""
        sl = (slice(None), slice(None), k) if k is not None else (Ellipsis,)
        krg, krw = rel_perms(S, swi[sl], lam[sl])
        mg = krg * mu_w[sl] / mu_g[sl]
        return krw, mg, mg / (mg + krw)

    def step(tx, tz, cf, dt, pres, q, sink):
        """_rz_implicit_step with the well's connections at p_well + h_well."""
        cfh = cf * h_well
        sink_h = sink.copy()
        sink_h[:, :, 0] -= cfh
        pn, _ = _rz_implicit_step(tx, tz, cf, stor, dt, pres, q - cfh.sum(1), sink_h)
        pw = (q - cfh.sum(1) + (cf * pn[:, :, 0]).sum(1)) / np.maximum(cf.sum(1), 1e-300)
        return pn, cf * (pw[:, None] + h_well - pn[:, :, 0])

    def transport(S_old, qw, fx, wz, dt):
        S = np.zeros_like(S_old)
        inflow = np.maximum(qw, 0.0)                 # CO2 into column 0 from the well
        for j in range(Y):
            if not (inflow > 0).any() and not (S_old[:, :, j:] > 0).any():
                break
            out_r = fx[:, :, j] if j < Y - 1 else np.zeros((N, X))
            w = wz[:, :, j]                 # (N, X - 1) CO2 transmissibility x potential, down
            down, up = np.maximum(w, 0.0), np.maximum(-w, 0.0)
            cout = np.zeros((N, X))
            cout[:, :-1] += down
            cout[:, 1:] += up
            a = pv[:, :, j] / dt
            so = S_old[:, :, j]
            sj = np.zeros((N, X))
            for sweep in range(sweeps):
                fin = inflow.copy()
                if sweep:
                    mgj = phases(sj, 0)[1]
                    fin[:, 1:] += down * mgj[:, :-1]
                    fin[:, :-1] += up * mgj[:, 1:]
                # Zero in inactive cells and in those that hold no CO2 and receive none: no
                # bisection where no cell of the column has CO2 to place.
                moving = act[:, :, j] & ~((so <= 0) & (fin * dt <= 1e-9 * pv[:, :, j]))
                lo = np.zeros((N, X))
                hi = np.broadcast_to(smax, (N, X)).copy()
                for _ in range(bisections if moving.any() else 0):
                    mid = 0.5 * (lo + hi)
                    _krw, mg, f = phases(mid, 0)
                    above = a * (mid - so) + out_r * f + cout * mg - fin > 0
                    hi = np.where(above, mid, hi)
                    lo = np.where(above, lo, mid)
                new = np.where(moving, 0.5 * (lo + hi), 0.0)
                # A sweep after the first that changed nothing is the sweeps' fixed point: the
                # next would read the same saturations (runtime/PressureEstimates.cpp likewise).
                done = sweep > 0 and np.array_equal(new, sj)
                sj = new
                if done:
                    break
            S[:, :, j] = sj
            inflow = out_r * phases(sj, 0)[2]
        return S

    mdot = np.array([float(mass_rate_kg_s(c["rate"])) for c in cs])
    nperf = np.maximum(perf.sum(1), 1)

    def volumes(t, pres, S):
        return _injected_volumes(t, pres, S, mdot, perf, nperf, temp, p_perf, pv, act, dissolved,
                                dissolution)

    t_rep = report_times_s(times_days)
    pres = np.zeros((N, X, Y))
    S = np.zeros((N, X, Y))
    out = np.zeros((N, len(t_rep), X, Y))
    sat = np.zeros((N, len(t_rep), X, Y))
    v_gas = np.zeros(N)
    v_dis = np.zeros(N)
    q = np.array([p["q"] for p in props])
    t_now = 0.0
    for k, tn in enumerate(t_rep):
        dt = tn - t_now
        krw, mg, _f = phases(S, None)
        Sn, sink, pprev = S, np.zeros((N, X, Y)), pres
        for it in range(iters + 1):
            dpv = pprev[:, :-1] - pprev[:, 1:]                   # brine potential, down
            mw_up = np.where(dpv > 0, krw[:, :-1], krw[:, 1:])
            mg_up = np.where(dpv - head[:, :, None] > 0, mg[:, :-1], mg[:, 1:])
            buoy = tz0 * mg_up * head[:, :, None]                # CO2's buoyant flux, up
            src = np.zeros((N, X, Y))
            src[:, :-1] += buoy
            src[:, 1:] -= buoy
            m = krw + mg
            pn, qw = step(tx0 * m[:, :, :-1], tz0 * (mw_up + mg_up), cf0 * m[:, :, 0], dt,
                          pres, q, sink - src)
            pn = np.where(act, pn, 0.0)
            if it == iters:
                break
            fx = np.maximum(tx0 * m[:, :, :-1] * (pn[:, :, :-1] - pn[:, :, 1:]), 0.0)
            wz = tz0 * ((pn[:, :-1] - pn[:, 1:]) - head[:, :, None])
            Sn = transport(S, qw, fx, wz, dt)
            krw, mg, _f = phases(Sn, None)
            pprev = pn
            vg, vd, w = volumes(tn, pn, Sn)
            q = relax * np.maximum((vg - v_gas) / dt, 0.0) + (1 - relax) * q
            sink = (relax * (np.maximum(vd - v_dis, 0.0) / dt)[:, None, None] * w
                    + (1 - relax) * sink)
        v_gas, v_dis, _w = volumes(tn, pn, Sn)
        pres, S = pn, Sn
        out[:, k] = pres
        sat[:, k] = S
        t_now = tn
    return out / BAR, sat


def gravity_well_column_dp_bar(cs, times_days=None, props=None):
    """(N, T) the largest rz_gravity_two_phase_dp_bar over the well column's layers at each
    report time [bar]."""
    return rz_gravity_two_phase_dp_bar(cs, times_days, props)[0][:, :, :, 0].max(axis=2)


def gravity_summary_features(cs, times_days=None, props=None):
    """(N, 3) a maximum-dP head's GRAVITY_SUMMARY inputs: of the buoyancy-aware estimate's well
    column (gravity_well_column_dp_bar), log(max(its maximum, 1e-3)), log(max(its first-report
    value, 1e-3)) and log(the report day of its maximum, the first where it ties)."""
    t = np.asarray(_cases.report_times() if times_days is None else times_days, np.float64)
    col = gravity_well_column_dp_bar(cs, times_days, props)
    return np.stack([np.log(np.maximum(col.max(axis=1), PHYSICS_FLOOR_BAR)),
                     np.log(np.maximum(col[:, 0], PHYSICS_FLOOR_BAR)),
                     np.log(t[np.argmax(col, axis=1)])], axis=1)


def gravity_max_dp_bar(cs, times_days=None, props=None):
    """(N,) the largest rz_gravity_two_phase_dp_bar in the well's column over layers and
    report times [bar]."""
    return rz_gravity_two_phase_dp_bar(cs, times_days, props)[0][:, :, :, 0].max(axis=(1, 2))


# -- the inputs of a maximum-dP head (physics_inputs = "max_dp") ------------------------------
# Read after the 32 case features by a maximum-dP head that estimates log(Flow's max dP /
# Theis); runtime/PressureEstimates.cpp (max_dp_physics_features) is the C++ twin, equal to
# these to ~1e-9 relative (tests/test_pressure_estimates.cpp, fixture by
# ufno.conversion.fixtures.make_pressure_estimates_fixture).
PHYSICS_FEATURE_NAMES = ("log_theis_max_dp_bar", "log_rz_two_phase_max_dp_bar",
                         "log_rz_first_report_dp_bar")
# A newer maximum-dP head also reads the implicit two-phase r-z estimate (the largest of
# rz_implicit_two_phase_dp_bar in the well's column over layers and report times) as its last
# input; what a head file's feature names list decides which of the two sets is computed.
IMPLICIT_FEATURE_NAME = "log_rz_implicit_two_phase_max_dp_bar"
MAX_DP_FEATURE_NAMES = PHYSICS_FEATURE_NAMES + (IMPLICIT_FEATURE_NAME,)
# Or, instead, the implicit estimate's value at the first report time (the largest over the
# well column's layers): Flow's maximum is usually its first-report buildup, and a late maximum
# the estimate misses (a gas column's buoyancy) then does not move the head's input.
FIRST_REPORT_FEATURE_NAME = "log_rz_implicit_first_report_dp_bar"
FIRST_REPORT_FEATURE_NAMES = PHYSICS_FEATURE_NAMES + (FIRST_REPORT_FEATURE_NAME,)
# Or the buoyancy-aware estimate's maximum (rz_gravity_two_phase_dp_bar; its C++ twin
# rz_gravity_two_phase_max_dp_bar in runtime/PressureEstimates.cpp: the programs compute it for
# a head that names it).
GRAVITY_FEATURE_NAME = "log_rz_gravity_two_phase_max_dp_bar"
GRAVITY_FEATURE_NAMES = PHYSICS_FEATURE_NAMES + (GRAVITY_FEATURE_NAME,)
IMPLICIT_FEATURE_NAMES = (IMPLICIT_FEATURE_NAME, FIRST_REPORT_FEATURE_NAME, GRAVITY_FEATURE_NAME)
# Or the buoyancy-aware estimate summarised by three inputs (gravity_summary_features): its
# maximum, its first-report value and the report day of its maximum, which tell the first day's
# spike at the well from a gas column's later maximum at the top of the well's column.
GRAVITY_SUMMARY_NAMES = (GRAVITY_FEATURE_NAME, "log_rz_gravity_first_report_dp_bar",
                         "log_rz_gravity_max_day")
GRAVITY_SUMMARY_FEATURE_NAMES = PHYSICS_FEATURE_NAMES + GRAVITY_SUMMARY_NAMES
# The inputs a maximum-dP head may read after the three above, by ufno.max_dp_head's --implicit.
EXTRA_INPUTS = {"max": (IMPLICIT_FEATURE_NAME,), "first-report": (FIRST_REPORT_FEATURE_NAME,),
                "gravity": (GRAVITY_FEATURE_NAME,), "gravity-summary": GRAVITY_SUMMARY_NAMES}
PHYSICS_FLOOR_BAR = 1e-3         # under every logarithm
TWO_PHASE_FLOOR_BAR = 0.05       # under each report's r-z + two-phase buildup


def _physics_features(theis, col0, g2ph):
    """The three features from Theis [bar], the r-z solve's well-column maximum col0 (T,) and
    the two-phase correction (T,)."""
    col0 = np.asarray(col0, np.float64)
    two = float(np.max(np.maximum(col0 + np.asarray(g2ph, np.float64), TWO_PHASE_FLOOR_BAR)))
    return np.array([math.log(max(theis, PHYSICS_FLOOR_BAR)),
                     math.log(max(two, PHYSICS_FLOOR_BAR)),
                     math.log(max(float(col0[0]), PHYSICS_FLOOR_BAR))])


def max_dp_physics_features(c, times_days=None):
    """(features (3,), theis [bar]) of one decoded case (from_case or decode): in the order and
    with the names of PHYSICS_FEATURE_NAMES,
      log(max(theis, 1e-3)),
      log(max(max_t max(col0[t] + g2ph[t], 0.05), 1e-3)),
      log(max(col0[0], 1e-3)),
    theis = theis_max_dp_bar, col0[t] = the largest rz_single_phase_dp_bar over the layers of
    the first radial column at report time t (default substeps and first_steps), g2ph =
    grid_two_phase_correction_bar, at the report times `times_days` (None: the paper's)."""
    p = properties(c)
    theis = theis_max_dp_bar(c, p)
    col0 = rz_single_phase_dp_bar([c], times_days, [p])[0, :, :, 0].max(1)
    g2ph = grid_two_phase_correction_bar(c, times_days, p)
    return _physics_features(theis, col0, g2ph), theis


def implicit_max_dp_bar(cs, times_days=None, props=None):
    """(N,) the largest rz_implicit_two_phase_dp_bar in the well's column over layers and
    report times [bar]."""
    return rz_implicit_two_phase_dp_bar(cs, times_days, props)[0][:, :, :, 0].max(axis=(1, 2))


def implicit_first_report_dp_bar(cs, times_days=None, props=None):
    """(N,) the largest rz_implicit_two_phase_dp_bar in the well's column over layers at the
    first report time [bar]. Only the steps to that report are run: a step reads the ones
    before it only, so this is the full solve's first-report value."""
    t = np.asarray(_cases.report_times() if times_days is None else times_days, np.float64)[:1]
    return rz_implicit_two_phase_dp_bar(cs, t, props)[0][:, 0, :, 0].max(axis=1)


def implicit_feature(cs, name, times_days=None, props=None):
    """(N,) the implicit input `name` (one of IMPLICIT_FEATURE_NAMES) of decoded cases:
    log(max(estimate, 1e-3))."""
    f = {IMPLICIT_FEATURE_NAME: implicit_max_dp_bar,
         FIRST_REPORT_FEATURE_NAME: implicit_first_report_dp_bar,
         GRAVITY_FEATURE_NAME: gravity_max_dp_bar}[name]
    return np.log(np.maximum(f(cs, times_days, props), PHYSICS_FLOOR_BAR))


def extra_features(cs, names, times_days=None, props=None):
    """(N, len(names)) the inputs `names` (a value of EXTRA_INPUTS) of decoded cases."""
    if tuple(names) == GRAVITY_SUMMARY_NAMES:
        return gravity_summary_features(cs, times_days, props)
    (name,) = names
    return implicit_feature(cs, name, times_days, props)[:, None]


def max_dp_physics_features_x0(x0, times_days=None, dr=None, dz=None, chunk=64,
                               names=PHYSICS_FEATURE_NAMES):
    """The same for a batch of encoded inputs x0 (N, X, Y, >= 9 channels) at the first report
    time (decode; dr, dz as decode's): (features (N, len(names)), theis (N,)), names
    PHYSICS_FEATURE_NAMES, MAX_DP_FEATURE_NAMES (then also log(max(implicit_max_dp_bar,
    1e-3))), FIRST_REPORT_FEATURE_NAMES (then log(max(implicit_first_report_dp_bar, 1e-3))) or
    GRAVITY_FEATURE_NAMES (then log(max(gravity_max_dp_bar, 1e-3)), about 1.5 s a case) or
    GRAVITY_SUMMARY_FEATURE_NAMES (then gravity_summary_features, from the same solve).
    The r-z solves run batched, `chunk` cases at a time (the implicit one 32)."""
    names = tuple(names)
    if names != PHYSICS_FEATURE_NAMES and names[3:] not in EXTRA_INPUTS.values():
        raise ValueError("physics inputs %s: not a set this version computes" % (names,))
    x0 = np.asarray(x0)
    cs = [decode(x, dr, dz) for x in x0]
    ps = [properties(c) for c in cs]
    feats = np.empty((len(cs), len(names)))
    theis = np.empty(len(cs))
    for s in range(0, len(cs), chunk):
        rz = rz_single_phase_dp_bar(cs[s:s + chunk], times_days, ps[s:s + chunk])
        for i in range(s, min(s + chunk, len(cs))):
            theis[i] = theis_max_dp_bar(cs[i], ps[i])
            g2ph = grid_two_phase_correction_bar(cs[i], times_days, ps[i])
            feats[i, :3] = _physics_features(theis[i], rz[i - s, :, :, 0].max(1), g2ph)
    if len(names) > 3:
        for s in range(0, len(cs), 32):
            feats[s:s + 32, 3:] = extra_features(cs[s:s + 32], names[3:], times_days,
                                                 ps[s:s + 32])
    return feats, theis


# -- the inputs of a dP-envelope head (physics_inputs = "envelope") ---------------------------
# After the 32 case features: the three maximum-dP estimates above, then the r-z single-phase
# solve's envelope (its largest buildup over report times and layers) at radial columns, as
# log(max(envelope, 0.01)); runtime/PressureEstimates.cpp computes the same.
ENVELOPE_FLOOR_BAR = 0.01


def rz_envelope_feature_names(columns):
    return ["log_rz_envelope_r%d" % c for c in columns]


# The buoyancy-aware solve's envelope columns as a dP-envelope head names them, by the solve's
# dissolution model (runtime/KpiHeadEstimator.cpp kGravityEnvelopePrefixes).
GRAVITY_ENVELOPE_PREFIXES = {"pore_volume": "log_rz_gravity_envelope_r",
                             "brine": "log_rz_gravity_brine_envelope_r"}


def gravity_envelope_feature_names(columns, dissolution="pore_volume"):
    return [GRAVITY_ENVELOPE_PREFIXES[dissolution] + "%d" % c for c in columns]


def gravity_envelope_bar(cs, times_days=None, props=None, dissolution="pore_volume"):
    """(N, Y) the buoyancy-aware estimate's envelope: rz_gravity_two_phase_dp_bar's largest
    value over report times and layers at each radial column [bar]. Its far field carries the
    injected CO2's volume at reservoir conditions and the plume's mobility, which the
    single-phase solve's does not: where it falls through 10 bar is within 10 % of Flow's area
    of review in 34 of 99 validation cases (the single-phase envelope's: 10), and a dP-envelope
    head reading both does better still (docs/kpis.md, "Area of review"). With `dissolution`
    "brine" (DISSOLUTION_MODELS) it is within 10 % in 59 of the 99."""
    return rz_gravity_two_phase_dp_bar(cs, times_days, props,
                                       dissolution=dissolution)[0].max(axis=(1, 2))


def envelope_physics_features_x0(x0, columns, times_days=None, dr=None, dz=None, chunk=64,
                                 gravity=False):
    """(N, 3 + len(columns)) inputs of a dP-envelope head with physics inputs, for encoded
    inputs x0 (N, X, Y, >= 9 channels) at the first report time: max_dp_physics_features, then
    log(max(envelope[c], 0.01)) of the r-z solve's envelope at each column c; with gravity (a
    DISSOLUTION_MODELS name, True for "pore_volume"), then the same of gravity_envelope_bar
    (N, 3 + 2 len(columns); about 1.5 s a case)."""
    x0 = np.asarray(x0)
    cs = [decode(x, dr, dz) for x in x0]
    ps = [properties(c) for c in cs]
    out = np.empty((len(cs), len(PHYSICS_FEATURE_NAMES) + len(columns)))
    for s in range(0, len(cs), chunk):
        rz = rz_single_phase_dp_bar(cs[s:s + chunk], times_days, ps[s:s + chunk])
        for i in range(s, min(s + chunk, len(cs))):
            theis = theis_max_dp_bar(cs[i], ps[i])
            g2ph = grid_two_phase_correction_bar(cs[i], times_days, ps[i])
            env = rz[i - s].max(0).max(0)
            out[i, :3] = _physics_features(theis, rz[i - s, :, :, 0].max(1), g2ph)
            out[i, 3:] = np.log(np.maximum(env[list(columns)], ENVELOPE_FLOOR_BAR))
    if not gravity:
        return out
    g = gravity_envelope_x0(x0, times_days, dr, dz,
                            dissolution="pore_volume" if gravity is True else gravity)
    return np.concatenate([out, np.log(np.maximum(g[:, list(columns)], ENVELOPE_FLOOR_BAR))], 1)


def gravity_envelope_x0(x0, times_days=None, dr=None, dz=None, chunk=16,
                        dissolution="pore_volume"):
    """(N, Y) gravity_envelope_bar of encoded inputs x0 (N, X, Y, >= 9 channels), `chunk`
    cases a solve."""
    cs = [decode(x, dr, dz) for x in np.asarray(x0)]
    ps = [properties(c) for c in cs]
    return np.concatenate([gravity_envelope_bar(cs[s:s + chunk], times_days, ps[s:s + chunk],
                                                dissolution)
                           for s in range(0, len(cs), chunk)])
