"""The closed-form physics estimates of python/ufno/heads/physics.py against values
computed by hand from their formulas, tabulated values and each other's limits."""
import math
import os

import numpy as np
import pytest

from ufno.data import cases as uc
from ufno.data import encoding as ue
from ufno.heads import physics as ph


# Abramowitz & Stegun, table 5.1 (E1(x)), 10 significant digits.
E1_TABLE = [(0.01, 4.037929577), (0.1, 1.822923958), (0.5, 0.5597735948), (1.0, 0.2193839344),
            (2.0, 0.04890051071), (5.0, 0.001148295591), (10.0, 4.156968929e-06)]


@pytest.mark.parametrize("x,value", E1_TABLE)
def test_e1_matches_the_table(x, value):
    assert ph.e1(x) == pytest.approx(value, rel=2e-9)


def test_e1_vectorised_and_continuous_at_the_switch():
    x = np.array([1.0 - 1e-12, 1.0, 1.0 + 1e-12])
    v = ph.e1(x)
    assert v.shape == (3,)
    assert np.ptp(v) < 1e-10
    assert ph.e1(800.0) == 0.0


def test_theis_at_a_hand_computed_point():
    # q 0.05 m3/s, mu 0.5 cP, k 101.3 mD (1e-13 m2), h 50 m, phi 0.2, ct 1e-9 1/Pa,
    # r = 1.7969 m (the first cell centre), t = 1 day.
    q, mu, k, h, phi, ct, r, t = 0.05, 5e-4, 1e-13, 50.0, 0.2, 1e-9, 1.7969, 86400.0
    u = phi * mu * ct * r * r / (4 * k * t)
    assert u == pytest.approx(9.34274e-06, rel=1e-5)
    e1 = -0.5772156649015329 - math.log(u) + u - u * u / 4      # series, u << 1
    expected = q * mu / (4 * math.pi * k * h) * e1
    assert expected / 1e5 == pytest.approx(43.782, rel=1e-4)  # bar, by hand
    assert ph.theis_dp(r, t, q, mu, k, h, phi, ct) == pytest.approx(expected, rel=1e-10)


def test_cooper_jacob_is_the_small_u_limit_and_departs_at_large_u():
    args = (0.03, 4e-4, 2e-13, 30.0, 0.25, 9e-10)
    for r, t in ((1.8, 86400.0), (50.0, 3e8)):
        th = ph.theis_dp(r, t, *args)
        cj = ph.cooper_jacob_dp(r, t, *args)
        assert cj == pytest.approx(th, rel=1e-4)
    far = ph.theis_dp(20000.0, 86400.0, *args)
    assert ph.cooper_jacob_dp(20000.0, 86400.0, *args) < 0 < far   # log form invalid at u > 1


def test_pseudo_steady_state_formula():
    q, mu, k, h, phi, ct, R, r, t = 0.02, 5e-4, 1e-13, 40.0, 0.2, 1e-9, 1e5, 10.0, 9.5e8
    hand = (q * t / (math.pi * R * R * h * phi * ct)
            + q * mu / (2 * math.pi * k * h) * (math.log(R / r) - 0.75 + r * r / (2 * R * R)))
    assert ph.pss_dp(r, t, q, mu, k, h, phi, ct, R) == pytest.approx(hand, rel=1e-12)


def test_cooper_jacob_area_of_review_inverts_the_buildup():
    q, mu, kh, phih, ct, t = 0.04, 5e-4, 1e-13 * 60, 0.2 * 60, 9e-10, 30 * 365.25 * 86400
    r = ph.aor_radius_closed_form(q, mu, kh, phih, ct, t, 10e5)
    dp = ph.cooper_jacob_dp(r, t, q, mu, kh / 60, 60.0, 0.2, ct)
    assert dp == pytest.approx(10e5, rel=1e-9)


def test_unit_conversions():
    assert ph.mass_rate_kg_s(1.0) == pytest.approx(1e9 / (365.25 * 86400), rel=1e-12)
    assert ph.mass_rate_kg_s(1.0) == pytest.approx(31.68809, rel=1e-6)
    assert ph.MD_TO_M2 == pytest.approx(9.869233e-16)
    assert ph.ROCK_COMPRESSIBILITY == pytest.approx(4.5e-10)      # 4.5e-5 1/bar of the decks


def test_brine_properties_are_opms():
    # Batzle & Wang at salinity 0, by hand: 30^0.8 = 15.1907, A = 0.057138 * 15.1907
    assert ph.brine_viscosity(30.0) == pytest.approx(0.79265e-3, rel=2e-4)
    assert ph.brine_viscosity(125.0) < ph.brine_viscosity(60.0) < ph.brine_viscosity(30.0)
    assert ph.brine_density(25.0, 1.01325) == pytest.approx(997.0, rel=2e-3)
    c = ph.brine_compressibility(60.0, 200.0)
    assert 3.5e-10 < c < 5e-10


@pytest.mark.skipif(not os.path.exists(ph.CO2_TABLES), reason="no opm-material CO2 tables")
def test_co2_density_and_reservoir_rate():
    assert ph.co2_density(40.0, 100.0) == pytest.approx(628.6, rel=5e-3)   # NIST: 628.61
    assert ph.co2_density(40.0, 200.0) > ph.co2_density(40.0, 100.0)
    rho = ph.co2_density(60.0, 200.0)
    assert ph.reservoir_rate(1.0, 60.0, 200.0) == pytest.approx(ph.mass_rate_kg_s(1.0) / rho)
    assert 2e-5 < ph.co2_viscosity(40.0, 100.0) < 1e-4


def test_crossing_radius_rule():
    radii = np.array([1.0, 2.0, 4.0, 8.0])
    assert ph.crossing_radius(radii, [20.0, 15.0, 5.0, 1.0], 10.0) == pytest.approx(3.0)
    assert ph.crossing_radius(radii, [9.0, 15.0, 5.0, 1.0], 10.0) == 0.0
    assert ph.crossing_radius(radii, [30.0, 20.0, 15.0, 11.0], 10.0) == 8.0


def _homogeneous_case(perf=None):
    X, Y = uc.NX, uc.NY
    return {"PERMX": np.full((X, Y), 100.0), "PERMZ": np.full((X, Y), 10.0),
            "PORO": np.full((X, Y), 0.2), "DR": uc.radial_widths(), "DZ": np.full(X, uc.DZ),
            "PERF": np.ones(X, int) if perf is None else perf, "INJ_RATE": 1.0, "TEMP": 60.0,
            "PRESSURE": 200.0, "SWI": 0.2, "VG_LAMBDA": 0.5}


def test_decode_inverts_the_encoding():
    c = _homogeneous_case()
    d = ph.decode(ue.encode_case(c, nt=uc.NT)[:, :, 0, :])
    assert d["rate"] == pytest.approx(1.0, rel=1e-6)
    assert d["temp"] == pytest.approx(60.0, rel=1e-6)
    assert d["pressure"] == pytest.approx(200.0, rel=1e-6)
    assert d["kx"][0, 0] == pytest.approx(100.0, rel=1e-5)
    assert d["perf"].all()


@pytest.mark.skipif(not os.path.exists(ph.CO2_TABLES), reason="no opm-material CO2 tables")
def test_numerical_radial_solves_equal_theis_on_a_homogeneous_case():
    d = ph.from_case(_homogeneous_case())
    p = ph.properties(d)
    t = ph.report_times_s()
    k = p["kh_perf"] / p["h_perf"]
    # the first cell's average pressure is the log profile's at its node radius (2.25 m from
    # the axis; the decks' node radii), before the outer boundary is felt
    theis = ph.theis_dp(2.25, t, p["q"], p["mu_w"], k, p["h_perf"], p["phi_perf"], p["c_t"]) / 1e5
    one_d = ph.radial_1d_dp_bar(d, props=p)[:, 0]
    rz = ph.rz_single_phase_dp_bar([d], props=[p])[0, :, :, 0]
    for k_t in range(4, 16):
        assert one_d[k_t] == pytest.approx(theis[k_t], rel=5e-3)
        assert rz[k_t] == pytest.approx(np.full(uc.NX, theis[k_t]), rel=5e-3)


@pytest.mark.skipif(not os.path.exists(ph.CO2_TABLES), reason="no opm-material CO2 tables")
def test_partial_perforation_raises_the_near_well_buildup():
    perf = np.zeros(uc.NX, int)
    perf[:4] = 1
    full = ph.from_case(_homogeneous_case())
    part = ph.from_case(_homogeneous_case(perf))
    rz_full = ph.rz_single_phase_dp_bar([full])[0, 0, :, 0].max()
    rz_part = ph.rz_single_phase_dp_bar([part])[0, 0, :, 0].max()
    theis_part = ph.theis_max_dp_bar(part)      # flow confined to the 4 perforated layers
    assert rz_full < rz_part < theis_part


@pytest.mark.skipif(not os.path.exists(ph.CO2_TABLES), reason="no opm-material CO2 tables")
def test_mobile_co2_lowers_the_late_near_well_buildup():
    d = ph.from_case(_homogeneous_case())
    corr = ph.near_well_correction_bar(d, alpha=None)
    assert corr[-1] < 0.0            # CO2 (0.03-0.07 cP) is far more mobile than brine
    assert corr[-1] < corr[0]        # and the plume grows


def test_bounded_buildup_is_theis_before_the_boundary_is_felt_and_pss_after():
    q, mu, k, h, phi, ct, R = 0.02, 5e-4, 1e-13, 40.0, 0.2, 1e-9, 1e5
    t_pss = 0.1 * phi * mu * ct * math.pi * R * R / k
    early = 1e-3 * t_pss
    assert ph.bounded_dp(2.0, early, q, mu, k, h, phi, ct, R) == pytest.approx(
        ph.theis_dp(2.0, early, q, mu, k, h, phi, ct))
    late = 10 * t_pss
    assert ph.bounded_dp(2.0, late, q, mu, k, h, phi, ct, R) == pytest.approx(
        ph.pss_dp(2.0, late, q, mu, k, h, phi, ct, R), rel=1e-3)


@pytest.mark.skipif(not os.path.exists(ph.CO2_TABLES), reason="no opm-material CO2 tables")
def test_implicit_two_phase_solve_limits():
    """No injection, no buildup; on a homogeneous case the first day's buildup at the well lies
    above the single-phase solve's (the smeared saturations' low mobility) and below twice it;
    the first cell holds gas, the outer one none."""
    d = ph.from_case(_homogeneous_case())
    p = ph.properties(d)
    times = [1.0, 10.0]
    dp, sat = ph.rz_implicit_two_phase_dp_bar([d], times, [p])
    rz = ph.rz_single_phase_dp_bar([d], times, [p])[0]
    assert rz[0, :, 0].max() < dp[0, 0, :, 0].max() < 2 * rz[0, :, 0].max()
    assert np.isfinite(dp).all() and (dp >= -1e-9).all()
    assert 0.0 < sat[0, 0, 0, 0] < 1.0 - d["swi"]
    assert (sat[0, 0, :, -1] == 0.0).all()              # the gas has not reached the outer cell
    none = dict(d, rate=0.0)
    dp0, sat0 = ph.rz_implicit_two_phase_dp_bar([none], times)
    assert (dp0 == 0.0).all() and (sat0 == 0.0).all()
    # the implicit max is the well column's largest value, as a head reads it
    assert ph.implicit_max_dp_bar([d], times, [p])[0] == pytest.approx(dp[0, :, :, 0].max())
    # its first-report value, from the first step alone, is the full solve's exactly
    assert ph.implicit_first_report_dp_bar([d], times, [p])[0] == dp[0, 0, :, 0].max()
    assert ph.implicit_feature([d], ph.FIRST_REPORT_FEATURE_NAME, times, [p])[0] == \
        pytest.approx(np.log(dp[0, 0, :, 0].max()), rel=1e-15)
    feats, _ = ph.max_dp_physics_features_x0(
        ue.encode_case(_homogeneous_case(), nt=uc.NT)[None, :, :, 0, :],
        names=ph.MAX_DP_FEATURE_NAMES)
    assert feats.shape == (1, 4)
    with pytest.raises(ValueError):
        ph.max_dp_physics_features_x0(np.zeros((1, uc.NX, uc.NY, 12)), names=("log_x",))


@pytest.mark.skipif(not os.path.exists(ph.CO2_TABLES), reason="no opm-material CO2 tables")
def test_gravity_two_phase_solve_on_a_homogeneous_column():
    """On a homogeneous, fully perforated case nothing flows vertically without gravity, so the
    estimate without buoyancy is the implicit one exactly; with it the well's column holds CO2
    from top to bottom and its buildup rises upward by close to (rho_brine - rho_CO2) g dz a
    layer (a column in which CO2 is continuous: CO2's gradient, brine's hydrostatic
    subtracted); no injection, no buildup."""
    d = ph.from_case(_homogeneous_case())
    p = ph.properties(d)
    times = [1.0, 10.0, 100.0]
    dp0, sat0 = ph.rz_gravity_two_phase_dp_bar([d], times, [p], gravity=0.0)
    dpi, sati = ph.rz_implicit_two_phase_dp_bar([d], times, [p])
    np.testing.assert_allclose(dp0, dpi, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sat0, sati, rtol=1e-9, atol=1e-12)
    dp, sat = ph.rz_gravity_two_phase_dp_bar([d], times, [p])
    assert np.isfinite(dp).all()
    assert (sat[0, :, :, 0] > 0.2).all()                 # CO2 all the way up the well's column
    rho_w = ph.brine_density(d["temp"], p["p_perf"])
    step = (rho_w - p["rho_co2"]) * 9.80665 * d["dz"][0] / 1e5   # about 0.21 bar
    rise = -np.diff(dp[0, -1, :, 0]) / step              # layer to layer, upward, last report
    assert 0.8 < rise[1:-1].min() and rise.max() < 1.0
    # the top of the column lies above the estimate without buoyancy
    assert dp[0, -1, 0, 0] > dpi[0, -1, 0, 0] + 0.25 * step * (uc.NX - 1)
    assert ph.gravity_max_dp_bar([d], times, [p])[0] == pytest.approx(dp[0, :, :, 0].max())
    # a head reading it gets log of its maximum over the paper's report times
    x0 = ue.encode_case(_homogeneous_case(), nt=uc.NT)[None, :, :, 0, :]
    feats, _ = ph.max_dp_physics_features_x0(x0, names=ph.GRAVITY_FEATURE_NAMES)
    assert feats.shape == (1, 4)
    assert feats[0, 3] == pytest.approx(
        np.log(ph.gravity_max_dp_bar([ph.decode(x0[0])])[0]), rel=1e-12)
    none = dict(d, rate=0.0)
    dpn, satn = ph.rz_gravity_two_phase_dp_bar([none], times)
    assert (dpn == 0.0).all() and (satn == 0.0).all()


def test_gravity_summary_is_the_well_column_reduced():
    """The three summary inputs are the well column's maximum, its first report and the first
    report day reaching the maximum, as logarithms; a head reading them gets six physics
    inputs, the first four those of a head reading the maximum alone."""
    d = ph.from_case(_homogeneous_case())
    times = [1.0, 10.0, 100.0]
    dp, _ = ph.rz_gravity_two_phase_dp_bar([d], times)
    column = dp[0, :, :, 0].max(axis=1)
    assert np.array_equal(ph.gravity_well_column_dp_bar([d], times)[0], column)
    got = ph.gravity_summary_features([d], times)[0]
    k = int(np.argmax(column))
    assert got[0] == np.log(column.max())
    assert got[1] == np.log(column[0])
    assert got[2] == np.log(times[k])
    x0 = ue.encode_case(_homogeneous_case(), nt=uc.NT)[None, :, :, 0, :]
    summary, _ = ph.max_dp_physics_features_x0(x0, names=ph.GRAVITY_SUMMARY_FEATURE_NAMES)
    gravity, _ = ph.max_dp_physics_features_x0(x0, names=ph.GRAVITY_FEATURE_NAMES)
    assert summary.shape == (1, 6)
    np.testing.assert_array_equal(summary[:, :4], gravity)
    with pytest.raises(ValueError):
        ph.max_dp_physics_features_x0(x0, names=ph.GRAVITY_SUMMARY_FEATURE_NAMES[:5])
