"""The training data's profile (python/ufno/data/training_profile.py): each statistic against its
definition on hand-made encoded cases, the quantiles and deviations on synthetic statistics, the
joint distance against a direct sum, and the task writing a profile into a copy of a model."""
import math
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from ufno.data import encoding, pack
from ufno.data import training_profile as tp

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.normpath(os.path.join(HERE, ".."))
FIXTURE_MODEL = os.path.normpath(os.path.join(HERE, "..", "..", "tests", "data", "fno_small.h5"))


def encoded(lnk, lnkz, poro, perf, rate=1.0, temp=60.0, pres=150.0, swi=0.2, lam=0.5):
    """(1, X, Y, 11) encoded input of ln kx, ln kz, porosity (X, Y; 0 outside the formation in
    lnk = nan) and per-layer perforation flags."""
    X, Y = lnk.shape
    x = np.zeros((1, X, Y, 11))
    act = ~np.isnan(lnk)
    x[0, ..., 0] = np.where(act, np.nan_to_num(lnk) / 15.0, 0.0)
    x[0, ..., 1] = np.where(act, np.nan_to_num(lnkz) / 15.0, 0.0)
    x[0, ..., 2] = np.where(act, poro, 0.0)
    x[0, :, 0, 3] = perf
    x[0, ..., 4] = encoding.encoded_rate(rate)
    x[0, ..., 5] = (temp - 30) / 150
    x[0, ..., 6] = (pres - 100) / 200
    x[0, ..., 7] = (swi - 0.1) / 0.2
    x[0, ..., 8] = (lam - 0.3) / 0.4
    return x


def stat(x, name):
    return tp.statistics(x)[0, tp.NAMES.index(name)]


def test_scalars_decode_what_was_encoded():
    lnk = np.full((4, 6), math.log(100.0))
    x = encoded(lnk, lnk - 2, np.full((4, 6), 0.2), [1, 0, 0, 0], rate=1.7, temp=95, pres=230,
                swi=0.25, lam=0.65)
    for name, want in (("INJ_RATE", 1.7), ("TEMP", 95), ("PRESSURE", 230), ("SWI", 0.25),
                       ("VG_LAMBDA", 0.65)):
        assert stat(x, name) == pytest.approx(want, rel=1e-12)


def test_completion_and_formation_counts():
    lnk = np.full((6, 5), math.log(50.0))
    lnk[4:] = np.nan  # a formation of 4 layers
    x = encoded(lnk, lnk, np.full((6, 5), 0.2), [0, 0, 1, 1, 0, 0])
    assert stat(x, "formation_layers") == 4
    assert stat(x, "perforated_layers") == 2
    # layers 2 and 3 of 0..3: mean 2.5 over a span of 3
    assert stat(x, "perforation_position") == pytest.approx(2.5 / 3)


def test_field_statistics_against_their_definitions():
    rng = np.random.default_rng(1)
    lnk = rng.normal(4.0, 1.0, (5, 8))
    lnk[4, 5:] = np.nan
    lnkz = lnk - 1.5
    poro = 0.1 + 0.02 * np.nan_to_num(lnk) + rng.normal(0, 0.01, (5, 8))
    x = encoded(lnk, lnkz, poro, [1, 1, 0, 0, 0])
    act = ~np.isnan(lnk)
    k, p = lnk[act], poro[act]
    assert stat(x, "log10_permx_mean") == pytest.approx(k.mean() / math.log(10), rel=1e-12)
    assert stat(x, "log10_permx_std") == pytest.approx(k.std() / math.log(10), rel=1e-12)
    assert stat(x, "log10_kz_kx_mean") == pytest.approx(-1.5 / math.log(10), rel=1e-12)
    assert stat(x, "porosity_mean") == pytest.approx(p.mean(), rel=1e-12)
    assert stat(x, "porosity_std") == pytest.approx(p.std(), rel=1e-12)
    assert stat(x, "permx_porosity_correlation") == pytest.approx(np.corrcoef(k, p)[0, 1],
                                                                  rel=1e-12)
    within = sum(((row[~np.isnan(row)] - row[~np.isnan(row)].mean()) ** 2).sum() for row in lnk)
    assert stat(x, "permx_lateral_fraction") == pytest.approx(
        within / ((k - k.mean()) ** 2).sum(), rel=1e-12)


def test_lateral_fraction_tells_layer_cake_from_lateral_variation():
    layers = np.repeat(np.array([[1.0], [3.0], [5.0]]), 6, axis=1)  # constant along each layer
    columns = np.repeat(np.arange(6.0)[None, :], 3, axis=0)          # the same in every layer
    poro = np.full((3, 6), 0.2)
    assert stat(encoded(layers, layers, poro, [1, 0, 0]), "permx_lateral_fraction") == 0
    assert stat(encoded(columns, columns, poro, [1, 0, 0]),
                "permx_lateral_fraction") == pytest.approx(1.0)
    flat = np.full((3, 6), 2.0)  # homogeneous: no variance, 0
    assert stat(encoded(flat, flat, poro, [1, 0, 0]), "permx_lateral_fraction") == 0


def test_quantiles_and_deviations():
    s = np.stack([np.arange(1001.0), np.zeros(1001)], 1)  # 0..1000 and a constant
    q = tp.quantiles(s)
    assert list(q[0]) == [0.0, 5.0, 500.0, 995.0, 1000.0]
    dev = tp.deviations(q, np.array([[500.0, 0.0], [2.0, 0.0], [1009.0, 0.0], [1011.0, 0.0],
                                     [-11.0, 0.0], [500.0, 1e-9]]))
    # inside; outer 1 %; beyond the maximum within the 1 % tolerance; beyond it; below; the
    # constant's range is a point: any departure is beyond it
    assert dev[:, 0].tolist() == [0, 1, 1, 2, 2, 0]
    assert dev[:, 1].tolist() == [0, 0, 0, 0, 0, 2]
    with pytest.raises(ValueError):
        tp.quantiles(np.array([[1.0, np.nan], [2.0, 3.0]]))


def test_joint_distance_is_the_mahalanobis_distance():
    rng = np.random.default_rng(2)
    a = rng.normal(0, 1, 20000)
    s = np.stack([a, a + rng.normal(0, 0.1, 20000)], 1)  # two statistics that move together
    mean, inv = tp.joint_model(s)
    d = tp.joint_distance(mean, inv, np.array([[1.0, 1.0], [1.0, -1.0]]))
    # along the correlation a point one sigma out is near; across it, far
    assert d[0] < 1.5 and d[1] > 10
    v = np.array([1.0, -1.0]) - mean
    assert d[1] == pytest.approx(math.sqrt(v @ inv @ v))


def small_pack(path, n=12, X=5, Y=8, T=3):
    rng = np.random.default_rng(3)
    const = np.zeros((n, X, Y, 11), np.float32)
    for i in range(n):
        lnk = rng.normal(4.0, 0.5, (X, Y))
        const[i] = encoded(lnk, lnk - 1, np.full((X, Y), 0.2), [1] + [0] * (X - 1),
                           rate=0.3 + 0.1 * i)[0]
    pack.write_pack(str(path), "SG", {
        "input_const": const.astype(np.float16), "input_time": np.zeros((X, Y, T), np.float32),
        "target": rng.uniform(0, 1, (n, X, Y, T)).astype(np.float32), "seed": np.full(n, 2, np.int64),
        "index": np.arange(n, dtype=np.int64)})


def test_the_task_writes_a_profile_into_a_copy_of_the_model(tmp_path):
    p = tmp_path / "p_SG.ufnopack"
    small_pack(p)
    model = tmp_path / "m.h5"
    with h5py.File(FIXTURE_MODEL, "r") as src, h5py.File(model, "w") as dst:
        for k in src:
            src.copy(k, dst)
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        dst.attrs["variable"] = "SG"
    out = tmp_path / "out.h5"
    env = dict(os.environ, PYTHONPATH=PYTHON)
    r = subprocess.run([sys.executable, "-m", "ufno.training_profile", "--pack", str(p),
                        "--model", str(model), "--out", str(out), "--split", "all"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    prof = tp.read(str(out))
    assert prof["names"] == list(tp.NAMES)
    rate = prof["quantiles"][tp.NAMES.index("INJ_RATE")]
    assert rate[0] == pytest.approx(0.3, rel=2e-3) and rate[4] == pytest.approx(1.4, rel=2e-3)
    assert tp.read(str(model)) is None  # the input is untouched
    # The output may not be the model itself.
    r = subprocess.run([sys.executable, "-m", "ufno.training_profile", "--pack", str(p),
                        "--model", str(model), "--out", str(model), "--split", "all"],
                       env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "training_profile:" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
