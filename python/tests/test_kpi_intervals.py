"""The KPI intervals' arithmetic (python/ufno/heads/intervals.py) on synthetic residuals with known
quantiles: split-conformal quantiles cover new draws at the stated rate, the distance bins
separate cases of different spread, the scorer counts what it should."""
import numpy as np

from ufno.heads import intervals as iv


def test_conformal_quantiles_are_the_order_statistics():
    r = np.arange(1.0, 100.0)  # 99 residuals 1..99
    lo, hi = iv.conformal_quantiles(r, 0.9)
    # n = 99: hi = ceil(100 * 0.95) = 95th smallest, lo = floor(100 * 0.05) = 5th smallest
    assert lo[0] == 5.0 and hi[0] == 95.0
    lo, hi = iv.conformal_quantiles(np.stack([r, -r], 1), 0.9)
    assert list(lo) == [5.0, -95.0] and list(hi) == [95.0, -5.0]


def test_intervals_cover_new_draws_at_the_stated_rate():
    rng = np.random.default_rng(3)
    est = np.exp(rng.normal(0, 1, 4000))
    truth = est * np.exp(rng.normal(0.1, 0.2, 4000))  # a bias and a known spread
    d = np.ones(4000)
    a = iv.calibrate(est[:2000], truth[:2000], d[:2000], bins=1)
    # the 5 % and 95 % quantiles of N(0.1, 0.2): 0.1 -+ 1.645 x 0.2
    assert abs(a["interval_log_lo"][0] - (0.1 - 0.329)) < 0.03
    assert abs(a["interval_log_hi"][0] - (0.1 + 0.329)) < 0.03
    lo, hi, far = iv.interval(a, est[2000:], d[2000:])
    rep = iv.coverage_report(lo, hi, truth[2000:], est[2000:])
    assert 0.88 <= rep["coverage"] <= 0.92 and not far.any()
    # median width: exp(0.429) - exp(-0.229) = 0.741, in % of the estimate
    assert abs(rep["median_width_pct"] - 74.1) < 3


def test_distance_bins_give_far_cases_wider_intervals_and_flag_the_farthest():
    rng = np.random.default_rng(4)
    n = 3000
    d = rng.uniform(0, 3, n)
    est = np.ones(n)
    truth = np.exp(rng.normal(0, 0.05 + 0.1 * d))  # spread grows with the distance
    a = iv.calibrate(est, truth, d, bins=3)
    width = a["interval_log_hi"] - a["interval_log_lo"]
    assert len(a["interval_distance_edges"]) == 2 and width[0] < width[1] < width[2]
    lo, hi, far = iv.interval(a, np.ones(4), np.array([0.5, 1.5, 2.5, 5.0]))
    assert list(far) == [False, False, False, True]
    assert hi[3] / lo[3] > hi[2] / lo[2]
    # each bin covers its own cases at about the stated rate
    lo, hi, _ = iv.interval(a, est, d)
    for band in ((0, 1), (1, 2), (2, 3)):
        m = (d >= band[0]) & (d < band[1])
        assert 0.85 <= iv.coverage_report(lo[m], hi[m], truth[m], est[m])["coverage"] <= 0.95


def test_feature_distance_is_the_rms_of_standardised_features():
    f = np.array([[1.0, 2.0, 99.0], [3.0, 2.0, 99.0]])
    d = iv.feature_distance(f, [1.0, 2.0], [2.0, 1.0])  # the third column is not a feature
    assert np.allclose(d, [0.0, np.sqrt(0.5)])


def test_coverage_report_counts_inside_and_width():
    rep = iv.coverage_report([1, 1, 1, 1], [3, 3, 3, 3], [2, 3, 4, 0], [2, 2, 2, 2])
    assert rep["cases"] == 3 and abs(rep["coverage"] - 2 / 3) < 1e-12
    assert rep["median_width_pct"] == 100.0
    # An estimate of 0 (no area of review) where the truth has one counts, inside or not.
    rep = iv.coverage_report([0, 0], [2.5, 1.0], [2.0, 3.0], [0, 0])
    assert rep["cases"] == 2 and rep["coverage"] == 0.5


def test_score_tables_matches_cases_and_counts_coverage(tmp_path):
    """ufno_kpis tables (ufno's with intervals, Flow's) joined by case: coverage, width, within
    10 % and the signed error per KPI, per year for the plume radius."""
    from ufno.heads import calibrate
    header = ["case", "fields", "plume_radius_m_10yr", "plume_radius_m_lo_10yr",
              "plume_radius_m_hi_10yr", "max_dP_bar", "max_dP_bar_lo", "max_dP_bar_hi"]
    assert calibrate.interval_kpis(header) == [
        ("plume_radius_m_10yr", "plume_radius_m_lo_10yr", "plume_radius_m_hi_10yr"),
        ("max_dP_bar", "max_dP_bar_lo", "max_dP_bar_hi")]
    u = tmp_path / "u.csv"
    f = tmp_path / "f.csv"
    u.write_text(",".join(header) + "\n"
                 "a,x,100,90,120,10,8,12\n"
                 "b,x,100,90,120,10,nan,nan\n"
                 "c,x,200,150,250,20,15,30\n"
                 "only_ufno,x,1,1,1,1,1,1\n")
    f.write_text(",".join(header[:3] + header[5:6]) + "\n"
                 "a,y,105,11\n"
                 "b,y,130,11\n"
                 "c,y,260,21\n")
    rep = calibrate.score_tables(str(u), str(f))
    assert rep["plume_radius_m_10yr"]["cases"] == 3
    assert abs(rep["plume_radius_m_10yr"]["coverage"] - 1 / 3) < 1e-12  # only a's 105 in
    assert rep["plume_radius_m_10yr"]["within_10pct"] == 1
    assert rep["max_dP_bar"]["cases"] == 2  # b has no interval
    assert rep["max_dP_bar"]["coverage"] == 1.0


def test_kpi_intervals_refuses_bad_options_in_one_line(tmp_path):
    """python3 -m ufno.kpi_intervals: a coverage outside [0.5, 1), --out with --score or neither,
    a data set that cannot be read, and --out on the model file itself are each one line naming
    what is wrong, and nothing is written."""
    import os
    import shutil
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    model = tmp_path / "dp.h5"
    shutil.copy(os.path.join(root, "tests", "data", "max_dp_head_small.h5"), model)
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"not hdf5")
    out = tmp_path / "out.h5"
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"), OMP_NUM_THREADS="1")
    for args, say in (
            (["--data", str(junk), "--model", str(model), "--out", str(out), "--coverage", "1.5"],
             "--coverage"),
            (["--data", str(junk), "--model", str(model)], "give --out"),
            (["--data", str(junk), "--model", str(model), "--out", str(out), "--score"],
             "give --out"),
            (["--data", str(junk), "--model", str(model), "--out", str(out)], "junk.h5"),
            (["--data", str(junk), "--model", str(model), "--out", str(model)],
             "is the input file")):
        p = subprocess.run([sys.executable, "-m", "ufno.kpi_intervals"] + args, env=env,
                           capture_output=True, text=True, timeout=300)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert p.returncode != 0 and len(lines) == 1 and say in lines[0], (args, p.stderr)
        assert lines[0].startswith("kpi_intervals: "), p.stderr
        assert not out.exists()


def test_scaled_intervals_follow_the_case_scale_and_keep_their_coverage():
    """Residuals whose spread is proportional to a known per-case scale: the scaled interval
    covers each scale band at about the stated rate, where one unscaled interval over-covers the
    small-scale cases and under-covers the large ones."""
    rng = np.random.default_rng(5)
    n = 6000
    scale = rng.uniform(0.05, 0.6, n)
    est = np.exp(rng.normal(0, 1, n))
    truth = est * np.exp(rng.normal(0, 1, n) * scale)
    d = np.ones(n)
    a = iv.calibrate(est[:3000], truth[:3000], d[:3000], bins=1, scale=scale[:3000],
                     scale_name=iv.FIELD_RADIUS_DISAGREEMENT, scale_floor=0.05)
    assert a["interval_scale"] == iv.FIELD_RADIUS_DISAGREEMENT
    assert abs(a["interval_log_hi"][0] - 1.645) < 0.1  # the quantile of N(0, 1)
    lo, hi, _ = iv.interval(a, est[3000:], d[3000:], scale[3000:])
    plain = iv.calibrate(est[:3000], truth[:3000], d[:3000], bins=1)
    plo, phi, _ = iv.interval(plain, est[3000:], d[3000:])
    t, s = truth[3000:], scale[3000:]
    for band in ((0.05, 0.2), (0.45, 0.6)):
        m = (s >= band[0]) & (s < band[1])
        assert 0.86 <= iv.coverage_report(lo[m], hi[m], t[m], est[3000:][m])["coverage"] <= 0.94
    small, large = s < 0.2, s >= 0.45
    assert iv.coverage_report(plo[small], phi[small], t[small], est[3000:][small])["coverage"] > 0.97
    assert iv.coverage_report(plo[large], phi[large], t[large], est[3000:][large])["coverage"] < 0.85
    try:
        iv.interval(a, est[3000:], d[3000:])
        assert False, "a scaled interval needs the cases' scales"
    except ValueError:
        pass


def test_field_radius_disagreement_is_the_rms_log_gap_plus_the_floor():
    est = np.array([[100.0, 200.0], [50.0, 50.0]])
    log_field = np.log(np.array([[100.0, 100.0], [50.0, 50.0]]))
    s = iv.field_radius_disagreement(est, log_field, floor=0.05)
    assert np.allclose(s, [0.05 + np.log(2.0) / np.sqrt(2.0), 0.05])


def test_field_radius_disagreement_in_a_window_of_report_times():
    # gaps log 2 at the first of four times, 0 elsewhere: window 1 sees it at times 0 and 1 only
    est = np.array([[200.0, 100.0, 100.0, 100.0]])
    log_field = np.log(np.full((1, 4), 100.0))
    s = iv.field_radius_disagreement(est, log_field, floor=0.05, window=1)
    g = np.log(2.0)
    assert s.shape == (1, 4)
    assert np.allclose(s[0], [0.05 + g / np.sqrt(2), 0.05 + g / np.sqrt(3), 0.05, 0.05])
    # window 0: each time's own gap; a window over all times: the old RMS at every time
    assert np.allclose(iv.field_radius_disagreement(est, log_field, 0.05, 0)[0],
                       [0.05 + g, 0.05, 0.05, 0.05])
    assert np.allclose(iv.field_radius_disagreement(est, log_field, 0.05, 3)[0],
                       iv.field_radius_disagreement(est, log_field, 0.05)[0])


def test_joint_distance_exponent_is_recovered_and_keeps_coverage_near_and_far():
    """Residuals whose spread grows as joint^2: the fitted exponent is about 2, and the scaled
    interval covers the near and the far cases at about the stated rate, where one interval for
    all over-covers the near and under-covers the far."""
    rng = np.random.default_rng(11)
    n = 8000
    joint = np.exp(rng.uniform(np.log(2.5), np.log(6.0), n))
    est = np.exp(rng.normal(0, 1, n))
    truth = est * np.exp(rng.normal(0, 0.05, n) * (joint / 4.0) ** 2)
    d = np.ones(n)
    half = n // 2
    a = iv.calibrate(est[:half], truth[:half], d[:half], bins=1, joint=joint[:half])
    assert abs(a["interval_joint_exponent"] - 2.0) < 0.15
    assert abs(a["interval_joint_reference"] - np.median(joint[:half])) < 1e-12
    lo, hi, _ = iv.interval(a, est[half:], d[half:], joint=joint[half:])
    plain = iv.calibrate(est[:half], truth[:half], d[:half], bins=1)
    plo, phi, _ = iv.interval(plain, est[half:], d[half:])
    t, e, j = truth[half:], est[half:], joint[half:]
    near, far = j < 3.2, j > 5.0
    for m in (near, far):
        assert 0.86 <= iv.coverage_report(lo[m], hi[m], t[m], e[m])["coverage"] <= 0.94
    assert iv.coverage_report(plo[near], phi[near], t[near], e[near])["coverage"] > 0.97
    assert iv.coverage_report(plo[far], phi[far], t[far], e[far])["coverage"] < 0.8
    try:
        iv.interval(a, est[half:], d[half:])
        assert False, "an interval with a joint exponent needs the cases' joint distances"
    except ValueError:
        pass


def test_joint_exponent_is_never_negative_nor_beyond_its_cap():
    rng = np.random.default_rng(12)
    joint = np.exp(rng.uniform(1.0, 2.0, 500))
    shrinking = rng.normal(0, 1, 500) / joint ** 2  # farther cases err less
    assert iv.fit_joint_exponent(shrinking, np.ones(500), joint, 4.0) == 0.0
    exploding = rng.normal(0, 1, 500) * joint ** 8
    assert iv.fit_joint_exponent(exploding, np.ones(500), joint, 4.0) == iv.JOINT_EXPONENT_MAX


def test_pooled_quantiles_are_nearer_the_true_ones_and_keep_coverage():
    """Twelve outputs with the same N(0, 0.2) residuals, 150 calibration cases: quantiles pooled
    over five neighbouring outputs scatter less around 1.645 x 0.2 than each output's own, and
    cover new draws at about the stated rate."""
    rng = np.random.default_rng(13)
    n, k = 150, 12
    est = np.exp(rng.normal(0, 1, (n + 4000, k)))
    truth = est * np.exp(rng.normal(0, 0.2, (n + 4000, k)))
    d = np.ones(n + 4000)
    own = iv.calibrate(est[:n], truth[:n], d[:n], bins=1)
    pooled = iv.calibrate(est[:n], truth[:n], d[:n], bins=1, pool=2)
    true_hi = 1.645 * 0.2
    err = lambda a: np.sqrt(np.mean((np.asarray(a["interval_log_hi"]) - true_hi) ** 2))
    assert err(pooled) < err(own)
    lo, hi, _ = iv.interval(pooled, est[n:], d[n:])
    cover = ((truth[n:] >= lo) & (truth[n:] <= hi)).mean()
    assert 0.87 <= cover <= 0.94
    # pool 0 is each output's own quantiles
    same = iv.calibrate(est[:n], truth[:n], d[:n], bins=1, pool=0)
    assert np.array_equal(same["interval_log_hi"], own["interval_log_hi"])
