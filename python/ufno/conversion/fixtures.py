#!/usr/bin/python3
"""Generate the golden fixtures of the C++ tests into tests/data/ (deterministic, fixed seeds).

Usage:  PYTHONPATH=python /usr/bin/python3 -m ufno.make_fixtures [--out DIR] [--ckpt-dir DIR]

Files (all float32 unless noted; see python/README.md for the layouts):
  ufno_small.h5, ufno_small_io.h5   U-FNO (3+3 layers), width 8, modes (4,5,3), variable dP
  fno_small.h5,  fno_small_io.h5    FNO (6 layers),     width 8, modes (4,5,3), variable SG
  spectral_small.h5                 one SpectralConv3d(3 -> 4, modes (3,4,2))
  unet_small.h5                     one U_net(4, 4) with random BatchNorm statistics
  fno4d_small.h5, fno4d_small_io.h5             FNO4d (nested FNO), grid (5,6,7,4), width 6,
                                                modes (2,3,2,3), padding (8,16,16,8), 3 input
                                                channels, variable SG, no normalisers
  fno4d_norm_small.h5, fno4d_norm_small_io.h5   the same sizes, variable dP, with input and
                                                output normalisers
  spectral4d_small.h5               one SpectralConv4d(2 -> 3, modes (2,2,2,4)) on a (6,5,4,6) grid
  plume_radius_head_small.h5        a plume-radius head (python/ufno/heads/plume_radius.py: 2 members,
                                    hidden 8, one output per report time) with its features and
                                    estimates on the three shipped examples
  plume_radius_field_head_small.h5  a plume-radius head that also reads the field's plume radii
                                    (--field-radii: 56 inputs), with its inputs (the examples'
                                    Flow SG standing in for a network's) and estimates on the
                                    three shipped examples
  plume_radius_interval_small.h5    the same head with an interval scaled per report time by
                                    its disagreement and by the joint distance from the training
                                    data (the training_profile_small.h5 profile), and Python's
                                    bounds on the three examples
  dp_envelope_head_small.h5         a dP-envelope head (python/ufno/heads/dp_envelope.py: 2 members,
                                    hidden 8, 48 outputs) with its inputs (the examples' Flow
                                    envelopes standing in for a network's) and estimates on the
                                    three shipped examples, and the digest of ufno_small.h5
  max_dp_envelope_head_small.h5     a maximum-dP head that also reads the network's envelope
                                    (--network-envelope: 52 inputs, 2 members, hidden 8) with its
                                    inputs (the examples' Flow envelopes) and estimates
  nested/                           the nested chain's fixture: a synthetic two-well site file,
                                    the nine FNO4D model files (with `level`) and the PyTorch
                                    chain's prediction file (python/ufno/conversion/
                                    nested_fixtures.py lists the layout)
  pressure_estimates.h5             python/ufno/heads/physics.py's pressure estimates (float64) of the
                                    three shipped examples (/case0..2, the paper's report times) and
                                    of a hand-made homogeneous case (/case3, its inputs and its own
                                    report times): properties, Theis, the r-z solve (its first 8
                                    and last radial columns), the two-phase
                                    correction, the maximum-dP head's physics inputs and the
                                    implicit two-phase r-z solve (its first 8 radial columns, its
                                    largest value in the well's column, that at the first
                                    report time); and three maximum-dP heads with
                                    physics_inputs = "max_dp" (2 members, hidden 8):
                                    /max_dp_head (35 inputs), /max_dp_head_implicit (36, the
                                    last the implicit estimate) and /max_dp_head_first_report
                                    (36, the last its first-report value), with their inputs
                                    and estimates on the examples (/expected,
                                    /expected_implicit, /expected_first_report); the
                                    buoyancy-aware estimate (/caseK/gravity_dp_bar_near, its
                                    first 8 radial columns, and gravity_max_dp_bar) and
                                    /max_dp_head_gravity (36, the last its maximum) with
                                    /expected_gravity, and the plume radius of its gas
                                    saturation per report time (gravity_plume_radius_m)
                                    (add_gravity_pressure_estimates adds these to the file,
                                    the rest untouched); the same with the "brine"
                                    dissolution model (gravity_brine_dp_bar_near and
                                    gravity_brine_envelope_bar; add_brine_dissolution_estimates)
  max_dp_head_small.h5              a maximum-dP head (python/ufno/heads/max_dp.py: 2 members, hidden 8,
                                    random weights, grid 24 x 48) and, under /expected, the
                                    features (float64) and estimates of examples/opm/*/case.h5
The model files go through ufno_convert.convert(), the converter's own code path.

Golden outputs are computed in float64 from the float32 weights and inputs (so they are the exact
answer for those float32 numbers, not PyTorch's float32 rounding) and stored as float32. The
float32 PyTorch result is checked against them as a sanity check.

A tiny model is also saved as a state_dict and as a whole pickled module (classes of module
`ufno`, like the published checkpoints) into --ckpt-dir (default: a fresh temporary directory,
not part of the repository), and both are converted to check the round trip.
"""

import argparse
import copy
import math
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np
import torch

from ufno.conversion import convert as ufno_convert
from ufno.models import fno4d as fno4d_torch
from ufno.models.net3d import (Net3d, SpectralConv3d, U_net, init_random_weights,
                               save_as_published_pickle, to_float64)

# The repository's python/ folder (the fixtures go to its tests/data, the examples are beside it).
HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SEED = 20220401
GRID = (16, 24, 8)     # unpadded X, Y, T; padded by 8: 24 x 32 x 16 (divisible by 8)
PADDING = 8
WIDTH = 8
MODES = (4, 5, 3)      # different per axis to catch axis mix-ups
BATCH = 2
INACTIVE_ROWS = 3      # bottom X rows with channel 0 (kr) = 0, like cells below the formation


def float64_forward(module, *inputs):
    """Evaluate an eval-mode module in float64 on float32 inputs; returns float64 numpy."""
    m64 = to_float64(copy.deepcopy(module)).eval()
    with torch.no_grad():
        return m64(*(x.double() for x in inputs)).numpy()


def check_close(name, ref64, module, *inputs):
    with torch.no_grad():
        out32 = module(*inputs).numpy()
    err = np.abs(out32 - ref64).max() / max(np.abs(ref64).max(), 1e-30)
    if err > 1e-4:
        sys.exit("make_fixtures: %s: float32 and float64 outputs differ by %.2e" % (name, err))
    return err


def write_datasets(path, datasets, attrs=None):
    tmp = path + ".tmp"
    with h5py.File(tmp, "w", libver="earliest") as f:
        for k, v in (attrs or {}).items():
            f.attrs.create(k, np.bytes_(v.encode("ascii")) if isinstance(v, str) else v)
        for k in sorted(datasets):
            f.create_dataset(k, data=datasets[k], track_times=False)
    os.replace(tmp, path)


def complex_as_real(t):
    """complex (..., ) tensor -> float32 numpy (..., 2) with (real, imag)."""
    return torch.view_as_real(t.detach().to(torch.complex64)).numpy().copy()


def make_network_fixture(out_dir, stem, variable, n_fourier, n_ufourier, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # the constructors draw from the global generator
    model = Net3d(width=WIDTH, modes=MODES, n_fourier=n_fourier, n_ufourier=n_ufourier,
                  padding=PADDING)
    init_random_weights(model, gen)
    model.eval()

    model_path = os.path.join(out_dir, stem + ".h5")
    ufno_convert.convert(None, model_path, variable, GRID, PADDING,
                         state_dict=model.state_dict(), source=stem + ".pt")

    x = torch.rand((BATCH,) + GRID + (12,), generator=gen)
    x[:, GRID[0] - INACTIVE_ROWS:, :, :, 0] = 0.0
    raw = float64_forward(model, x)
    err = check_close(stem, raw, model, x)
    scale, offset, _ = ufno_convert.VARIABLES[variable]
    write_datasets(os.path.join(out_dir, stem + "_io.h5"), {
        "input": x.numpy(),
        "output_raw": raw.astype(np.float32),
        "output": (raw * scale + offset).astype(np.float32),
    }, {"model": stem + ".h5", "seed": np.int64(seed), "reference_precision": "float64"})
    print("  %s: raw output mean %.3f std %.3f; float32 torch rel. error %.1e"
          % (stem, raw.mean(), raw.std(), err))
    return model


def make_spectral_fixture(out_dir, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    layer = SpectralConv3d(3, 4, (3, 4, 2))
    init_random_weights(layer, gen)
    x = torch.randn((2, 3, 10, 12, 8), generator=gen)
    out = float64_forward(layer, x)
    check_close("spectral_small", out, layer, x)
    data = {"input": x.numpy(), "output": out.astype(np.float32)}
    for k in range(1, 5):
        data["weights%d" % k] = complex_as_real(getattr(layer, "weights%d" % k))
    write_datasets(os.path.join(out_dir, "spectral_small.h5"), data, {
        "in_channels": np.int32(3), "out_channels": np.int32(4),
        "modes": np.array([3, 4, 2], dtype=np.int32), "seed": np.int64(seed)})


def make_unet_fixture(out_dir, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    unet = U_net(4, 4, 3, 0.0)
    init_random_weights(unet, gen)
    unet.eval()
    x = torch.randn((1, 4, 16, 24, 8), generator=gen)
    out = float64_forward(unet, x)
    check_close("unet_small", out, unet, x)
    data = {"input": x.numpy(), "output": out.astype(np.float32)}
    for k, v in unet.state_dict().items():
        data[k] = v.numpy().astype(np.int64 if k.endswith("num_batches_tracked") else np.float32)
    write_datasets(os.path.join(out_dir, "unet_small.h5"), data, {
        "width": np.int32(4), "leaky_relu_slope": np.float64(0.1),
        "batchnorm_eps": np.float64(1e-5), "batchnorm_mode": "eval", "seed": np.int64(seed)})


# The 4-D FNO (fno4d_torch.FNO4d): a small grid under the reference padding, with modes and
# extents that differ per axis (to catch axis mix-ups) and odd and even padded extents.
GRID4 = (5, 6, 7, 4)   # A1, A2, A3, T; padded by (8, 16, 16, 8) on both sides: 21 x 38 x 39 x 20
PADDING4 = fno4d_torch.PADDING
WIDTH4 = 6
MODES4 = (2, 3, 2, 3)
IN_CHANNELS4 = 3


def make_fno4d_fixture(out_dir, stem, variable, seed, normalizers):
    """An FNO4d model file (via the converter) and its golden input/output. With `normalizers`,
    the file has both normalisers: /input is then the raw input (its last channel is encoded by
    the input normaliser) and /output the decoded prediction; /output_raw is the network's own
    output in both cases."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = fno4d_torch.FNO4d(width=WIDTH4, modes=MODES4, in_channels=IN_CHANNELS4,
                              padding=PADDING4)
    fno4d_torch.init_random_weights(model, gen)
    model.eval()
    norm_in = norm_out = None
    if normalizers:
        norm_in = fno4d_torch.random_normalizer(GRID4, gen, mean_scale=0.5)
        norm_out = fno4d_torch.random_normalizer(GRID4, gen, mean_scale=3.0)
    model_path = os.path.join(out_dir, stem + ".h5")
    ufno_convert.convert(None, model_path, variable, GRID4, PADDING4,
                         state_dict=model.state_dict(), source=stem + ".pt",
                         input_normalizer=norm_in, output_normalizer=norm_out)

    x = torch.rand((BATCH,) + GRID4 + (IN_CHANNELS4,), generator=gen)
    m64 = fno4d_torch.to_float64(copy.deepcopy(model)).eval()
    with torch.no_grad():
        x64 = x.double()
        if norm_in is not None:
            x64[..., -1] = norm_in.encode(x64[..., -1])
        raw = m64(x64)
        out = raw if norm_out is None else norm_out.decode(raw)
        out32 = fno4d_torch.predict(model, x, norm_in, norm_out)
    raw, out = raw.numpy(), out.numpy()
    err = np.abs(out32.numpy() - out).max() / max(np.abs(out).max(), 1e-30)
    if err > 1e-4:
        sys.exit("make_fixtures: %s: float32 and float64 outputs differ by %.2e" % (stem, err))
    write_datasets(os.path.join(out_dir, stem + "_io.h5"), {
        "input": x.numpy(),
        "output_raw": raw.astype(np.float32),
        "output": out.astype(np.float32),
    }, {"model": stem + ".h5", "seed": np.int64(seed), "reference_precision": "float64"})
    print("  %s: raw output mean %.3f std %.3f; float32 torch rel. error %.1e"
          % (stem, raw.mean(), raw.std(), err))


def make_spectral4d_fixture(out_dir, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    modes = (2, 2, 2, 4)  # m4 = 6/2 + 1: the Nyquist bin of T is kept
    layer = fno4d_torch.SpectralConv4d(2, 3, modes)
    fno4d_torch.init_random_weights(layer, gen, spectral_gains=(1.5,))
    x = torch.randn((2, 2, 6, 5, 4, 6), generator=gen)
    out = float64_forward(layer, x)
    check_close("spectral4d_small", out, layer, x)
    data = {"input": x.numpy(), "output": out.astype(np.float32)}
    for k in range(1, 9):
        data["weights%d" % k] = complex_as_real(getattr(layer, "weights%d" % k))
    write_datasets(os.path.join(out_dir, "spectral4d_small.h5"), data, {
        "in_channels": np.int32(2), "out_channels": np.int32(3),
        "modes": np.array(modes, dtype=np.int32), "seed": np.int64(seed)})


def make_plume_radius_head_fixture(out_dir, seed):
    import glob
    from ufno.heads import common as kpi_head
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    cases = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    x0 = np.stack([ufno_encoding.encode_case(ufno_cases.read_case_h5(c))[:, :, 0, :]
                   for c in cases])
    feats = kpi_head.features(x0)
    times = ufno_encoding.paper_times_days(ufno_cases.NT)
    torch.manual_seed(seed)
    nets = [kpi_head.mlp(feats.shape[1], 8, len(times)).double().eval() for _ in range(2)]
    # Output statistics that rise with time, as log radii do; members see inputs of order one.
    t_mean = np.linspace(3.0, 8.0, len(times))
    head = kpi_head.Head(nets, feats.mean(0) + 0.1, feats.std(0) + 0.5, t_mean,
                         np.full(len(times), 0.3), feats.min(0) - 1.0, feats.max(0) + 1.0)
    path = os.path.join(out_dir, "plume_radius_head_small.h5")
    with h5py.File(path, "w") as f:
        f.attrs["variable"] = "SG"
        kpi_head.write_group(f, "plume_radius_head", head, x0.shape[1:3], "log(radius)",
                             {"times_days": times, "sg_threshold": 0.01})
        f["expected/features"] = feats
        f["expected/radius_m"] = head.predict(feats)
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in cases)


def make_plume_radius_field_head_fixture(out_dir, seed):
    import glob
    from ufno.heads import common as kpi_head
    from ufno.heads import plume_radius as prh
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    cases = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    x0, radii = [], []
    for c in cases:
        x = ufno_encoding.encode_case(ufno_cases.read_case_h5(c))
        x0.append(x[:, :, 0, :])
        with h5py.File(os.path.join(os.path.dirname(c), "target.h5"), "r") as t:
            sg = np.moveaxis(t["SG"][()], 0, -1)  # (X, Y, T)
        radii.append(prh.plume_radii(sg, x[:, :, 0, 0] != 0, x[:, 0, 0, 3] > 0,
                                     0.1 + 0.2 * float(x[0, 0, 0, 7]),
                                     ufno_cases.radial_widths()))
    x0 = np.stack(x0)
    feats = prh.inputs(x0, np.stack(radii))  # Flow's radii stand in for a network's
    times = ufno_encoding.paper_times_days(ufno_cases.NT)
    torch.manual_seed(seed)
    nets = [kpi_head.mlp(feats.shape[1], 8, len(times)).double().eval() for _ in range(2)]
    head = kpi_head.Head(nets, feats.mean(0) + 0.1, feats.std(0) + 0.5,
                         np.linspace(3.0, 8.0, len(times)), np.full(len(times), 0.3),
                         feats.min(0) - 1.0, feats.max(0) + 1.0)
    path = os.path.join(out_dir, "plume_radius_field_head_small.h5")
    with h5py.File(path, "w") as f:
        f.attrs["variable"] = "SG"
        kpi_head.write_group(f, "plume_radius_head", head, x0.shape[1:3], "log(radius)",
                             prh.head_attrs(times, os.path.join(out_dir, "fno_small.h5")),
                             prh.input_names(times, True))
        f["expected/features"] = feats
        f["expected/radius_m"] = head.predict(feats)
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in cases)


def envelope_head_inputs():
    """The shipped examples, their encoded first time slices and the inputs of a head that
    reads a dP network's envelope, Flow's envelope standing in for the network's."""
    import glob
    from ufno.heads import dp_envelope as dp_envelope_head
    from ufno.heads import common as kpi_head
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    cases = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    x0, env = [], []
    for c in cases:
        x = ufno_encoding.encode_case(ufno_cases.read_case_h5(c))
        x0.append(x[:, :, 0, :])
        with h5py.File(os.path.join(os.path.dirname(c), "target.h5"), "r") as t:
            dp = np.moveaxis(t["dP"][()], 0, -1)[None]  # (1, X, Y, T)
        env.append(kpi_head.field_envelope(dp, x[None, :, :, 0, 0] != 0)[0])
    x0, env = np.stack(x0), np.stack(env)
    return cases, x0, dp_envelope_head.inputs(x0, env)


def make_max_dp_envelope_head_fixture(out_dir, seed):
    """A maximum-dP head that reads the network's envelope (ufno.max_dp_head
    --network-envelope), with its estimates on the examples."""
    from ufno.heads import dp_envelope as dp_envelope_head
    from ufno.heads import common as kpi_head
    cases, x0, feats = envelope_head_inputs()
    torch.manual_seed(seed)
    nets = [kpi_head.mlp(feats.shape[1], 8).double().eval() for _ in range(2)]
    head = kpi_head.Head(nets, feats.mean(0) + 0.1, feats.std(0) + 0.5, 4.0, 0.3,
                         feats.min(0) - 1.0, feats.max(0) + 1.0)
    small = os.path.join(out_dir, "ufno_small.h5")
    with h5py.File(os.path.join(out_dir, "max_dp_envelope_head_small.h5"), "w") as f:
        f.attrs["variable"] = "dP"
        kpi_head.write_group(f, "max_dp_head", head, x0.shape[1:3], "log(max dP)",
                             dp_envelope_head.network_attrs(small),
                             dp_envelope_head.input_names())
        f["expected/features"] = feats
        f["expected/max_dp_bar"] = head.predict(feats)
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in cases)


def make_dp_envelope_head_fixture(out_dir, seed):
    from ufno.heads import dp_envelope as dp_envelope_head
    from ufno.heads import common as kpi_head
    cases, x0, feats = envelope_head_inputs()
    Y = x0.shape[2]
    torch.manual_seed(seed)
    nets = [kpi_head.mlp(feats.shape[1], 8, Y).double().eval() for _ in range(2)]
    head = kpi_head.Head(nets, feats.mean(0) + 0.1, feats.std(0) + 0.5,
                         np.linspace(3.0, -1.0, Y), np.full(Y, 0.4), feats.min(0) - 1.0,
                         feats.max(0) + 1.0)
    path = os.path.join(out_dir, "dp_envelope_head_small.h5")
    small = os.path.join(out_dir, "ufno_small.h5")
    with h5py.File(path, "w") as f:
        f.attrs["variable"] = "dP"
        kpi_head.write_group(f, "dp_envelope_head", head, x0.shape[1:3], "log(envelope)",
                             dp_envelope_head.network_attrs(small),
                             dp_envelope_head.input_names())
        f["expected/features"] = feats
        f["expected/envelope_bar"] = head.predict(feats)
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in cases)
        f["expected"].attrs["ufno_small_digest"] = kpi_head.network_digest(small)


def make_max_dp_head_fixture(out_dir, seed):
    import glob
    from ufno.heads import max_dp as max_dp_head
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    cases = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    x0 = np.stack([ufno_encoding.encode_case(ufno_cases.read_case_h5(c))[:, :, 0, :]
                   for c in cases])
    feats = max_dp_head.features(x0)
    torch.manual_seed(seed)
    nets = [max_dp_head.mlp(feats.shape[1], 8).double().eval() for _ in range(2)]
    # Statistics near the examples' own, so that the members see inputs of order one.
    head = max_dp_head.Head(nets, feats.mean(0) + 0.1, feats.std(0) + 0.5, 2.0, 0.7,
                            feats.min(0) - 1.0, feats.max(0) + 1.0)
    path = os.path.join(out_dir, "max_dp_head_small.h5")
    with h5py.File(path, "w") as f:
        f.attrs["variable"] = "dP"
        max_dp_head.write_head_group(f, head, x0.shape[1:3])
        f["expected/features"] = feats
        f["expected/estimate_bar"] = head.predict(feats)
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in cases)


def make_training_profile_fixture(out_dir, seed):
    """The training statistics of the shipped examples (python/ufno/data/training_profile.py)
    and a profile of 400 synthetic cases around them, with each example's deviations and joint
    distance against it: runtime/TrainingStatistics.cpp and TrainingDistance.cpp must agree."""
    import glob
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    from ufno.data import training_profile as tp
    cases = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    x0 = np.stack([ufno_encoding.encode_case(ufno_cases.read_case_h5(c))[:, :, 0, :]
                   for c in cases])
    stats = tp.statistics(x0)
    rng = np.random.default_rng(seed)
    # Spread so that each example lies inside some ranges, at the edge of others, beyond a few.
    synthetic = stats.mean(0) + rng.normal(0, 1, (400, stats.shape[1])) * \
        (stats.std(0) * 0.3 + 1e-3 * np.abs(stats.mean(0)) + 1e-3)
    prof = tp.profile(synthetic)
    path = os.path.join(out_dir, "training_profile_small.h5")
    with h5py.File(path, "w") as f:
        f.attrs["variable"] = "SG"
        tp.write(f, prof, "400 synthetic cases around the shipped examples", 400)
        f["expected/statistics"] = stats
        f["expected/deviations"] = tp.deviations(prof["quantiles"], stats).astype(np.int32)
        f["expected/joint_distance"] = tp.joint_distance(prof["mean"],
                                                         prof["inverse_covariance"], stats)
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in cases)


def training_profile_main():
    """`python3 -c 'from ufno.conversion.fixtures import training_profile_main as m; m()'`:
    only this fixture."""
    make_training_profile_fixture(os.path.join(os.path.dirname(HERE), "tests", "data"), SEED + 14)


def make_plume_radius_interval_fixture(out_dir):
    """plume_radius_interval_small.h5: plume_radius_field_head_small.h5 with an interval scaled
    by the disagreement in a window of report times and by the joint distance from the training
    data (training_profile_small.h5's profile), and Python's bounds on the three examples
    (python/ufno/heads/intervals.py interval): runtime/KpiHeadEstimator.cpp must agree. Made
    from the other two fixtures, which must exist."""
    import glob
    from ufno.heads import common as kpi_head
    from ufno.heads import intervals
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    from ufno.data import training_profile as tp
    src = os.path.join(out_dir, "plume_radius_field_head_small.h5")
    path = os.path.join(out_dir, "plume_radius_interval_small.h5")
    shutil.copyfile(src, path)
    cases = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    x0 = np.stack([ufno_encoding.encode_case(ufno_cases.read_case_h5(c))[:, :, 0, :]
                   for c in cases])
    head = kpi_head.read_group(path, "plume_radius_head")
    k = len(head.t_mean)
    attrs = {"interval_coverage": 0.9, "interval_distance_edges": np.zeros(0),
             "interval_log_lo": -np.linspace(0.8, 1.4, k), "interval_log_hi": np.linspace(1.0, 1.6, k),
             "interval_distance_limit": 1e6, "interval_calibration": "a fixture",
             "interval_scale": intervals.FIELD_RADIUS_DISAGREEMENT, "interval_scale_floor": 0.05,
             "interval_scale_window": np.int64(2), "interval_joint_exponent": 1.3,
             "interval_joint_reference": 10.0}
    with h5py.File(path, "r+") as f:
        feats = f["expected/features"][()]
        with h5py.File(os.path.join(out_dir, "training_profile_small.h5"), "r") as pf:
            pf.copy(tp.GROUP, f)
        for name, v in attrs.items():
            f["plume_radius_head"].attrs[name] = v
    prof = tp.read(path)
    joint = tp.joint_distance(prof["mean"], prof["inverse_covariance"], tp.statistics(x0))
    est = head.predict(feats)
    scale = intervals.field_radius_disagreement(est, feats[:, -k:], 0.05, 2)
    d = intervals.feature_distance(feats, head.f_mean, head.f_std)
    lo, hi, _ = intervals.interval(attrs, est, d, scale, joint)
    with h5py.File(path, "r+") as f:
        del f["expected"]
        f["expected/features"] = feats
        f["expected/radius_m"] = est
        f["expected/joint_distance"] = joint
        f["expected/lo"] = lo
        f["expected/hi"] = hi
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                for c in cases)


def plume_radius_interval_main():
    """`python3 -c 'from ufno.conversion.fixtures import plume_radius_interval_main as m; m()'`:
    only this fixture."""
    make_plume_radius_interval_fixture(os.path.join(os.path.dirname(HERE), "tests", "data"))


def pressure_estimates_hand_made_case():
    """The homogeneous case of pressure_estimates.h5: the models' grid, the upper 10 of 24 layers
    perforated."""
    from ufno.data import cases as ufno_cases
    X, Y = ufno_cases.NX, ufno_cases.NY
    perf = np.zeros(X, np.int32)
    perf[:10] = 1
    return {"PERMX": np.full((X, Y), 120.0), "PERMZ": np.full((X, Y), 15.0),
            "PORO": np.full((X, Y), 0.22), "DR": ufno_cases.radial_widths(),
            "DZ": np.full(X, ufno_cases.DZ), "PERF": perf, "INJ_RATE": 1.2, "TEMP": 55.0,
            "PRESSURE": 180.0, "SWI": 0.2, "VG_LAMBDA": 0.5}


PRESSURE_ESTIMATES_HAND_MADE_TIMES = np.array([0.5, 1.0, 3.0, 10.0, 30.0, 100.0, 365.25, 3652.5])


def make_pressure_estimates_fixture(out_dir, seed):
    """pressure_estimates.h5 (module docstring): the C++ twin's reference values
    (runtime/PressureEstimates.cpp, tests/test_pressure_estimates.cpp)."""
    import glob
    from ufno.data import cases as ufno_cases
    from ufno.data import encoding as ufno_encoding
    from ufno.heads import common as kpi_head
    from ufno.heads import physics
    paths = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "examples", "opm", "*",
                                          "case.h5")))
    examples = [ufno_cases.read_case_h5(c) for c in paths]
    runs = [(c, None) for c in examples]
    runs.append((pressure_estimates_hand_made_case(), PRESSURE_ESTIMATES_HAND_MADE_TIMES))
    path = os.path.join(out_dir, "pressure_estimates.h5")
    physics_inputs, theis_all, implicit_inputs, first_report_inputs = [], [], [], []
    with h5py.File(path, "w") as f:
        for k, (case, times) in enumerate(runs):
            g = f.create_group("case%d" % k)
            d = physics.from_case(case)
            p = physics.properties(d)
            g["times_days"] = ufno_cases.report_times() if times is None else times
            rz = physics.rz_single_phase_dp_bar([d], times, [p])[0]
            g["rz_dp_bar_near"] = rz[:, :, :8]     # the first 8 radial columns (T, X, 8)
            g["rz_dp_bar_outer"] = rz[:, :, -1]    # and the outermost (T, X)
            g["rz_envelope_bar"] = rz.max(0).max(0)  # over times and layers (Y)
            g["two_phase_bar"] = physics.grid_two_phase_correction_bar(d, times, p)
            feats, theis = physics.max_dp_physics_features(d, times)
            g["features"] = feats
            imp = physics.rz_implicit_two_phase_dp_bar([d], times, [p])[0][0]
            g["implicit_dp_bar_near"] = imp[:, :, :8]   # (T, X, 8)
            g.attrs["implicit_max_dp_bar"] = imp[:, :, 0].max()
            # the full solve's first-report value (the programs run its first step alone)
            g.attrs["implicit_first_report_dp_bar"] = imp[0, :, 0].max()
            g.attrs["theis_bar"] = theis
            for name in ("p_perf", "kh_perf", "h_perf", "phi_perf", "mu_w", "mu_g", "c_w",
                         "c_t", "rho_co2", "q"):
                g.attrs[name] = p[name]
            g.attrs["r_centre0"] = p["r_centre"][0]
            if k < len(paths):
                g.attrs["case"] = os.path.relpath(paths[k], os.path.dirname(HERE))
                physics_inputs.append(feats)
                theis_all.append(theis)
                implicit_inputs.append(math.log(max(imp[:, :, 0].max(), physics.PHYSICS_FLOOR_BAR)))
                first_report_inputs.append(math.log(max(imp[0, :, 0].max(),
                                                        physics.PHYSICS_FLOOR_BAR)))
            else:
                for name in ("PERMX", "PERMZ", "PORO", "DR", "DZ", "PERF"):
                    g[name] = case[name]
                for name in ("INJ_RATE", "TEMP", "PRESSURE", "SWI", "VG_LAMBDA"):
                    g.attrs[name] = case[name]
        # A maximum-dP head on the 32 case features and the three physics inputs, estimating
        # log(Flow max dP / Theis).
        x0 = np.stack([ufno_encoding.encode_case(c)[:, :, 0, :] for c in examples])
        inputs = np.concatenate([kpi_head.features(x0), np.stack(physics_inputs)], 1)
        torch.manual_seed(seed)
        nets = [kpi_head.mlp(inputs.shape[1], 8).double().eval() for _ in range(2)]
        head = kpi_head.Head(nets, inputs.mean(0) + 0.1, inputs.std(0) + 0.5, 0.3, 0.2,
                             inputs.min(0) - 1.0, inputs.max(0) + 1.0)
        kpi_head.write_group(f, "max_dp_head", head, x0.shape[1:3], "log(max dP / Theis)",
                             {"physics_inputs": "max_dp"},
                             list(kpi_head.FEATURES) + list(physics.PHYSICS_FEATURE_NAMES))
        ratio = head.predict(inputs)
        f["expected/inputs"] = inputs
        f["expected/ratio"] = ratio
        f["expected/max_dp_bar"] = np.asarray(theis_all) * ratio
        f["expected"].attrs["cases"] = ",".join(os.path.relpath(c, os.path.dirname(HERE))
                                                 for c in paths)
        # A newer one that also reads the implicit two-phase estimate (its last input).
        inputs = np.concatenate([inputs, np.asarray(implicit_inputs)[:, None]], 1)
        nets = [kpi_head.mlp(inputs.shape[1], 8).double().eval() for _ in range(2)]
        head = kpi_head.Head(nets, inputs.mean(0) + 0.1, inputs.std(0) + 0.5, 0.3, 0.2,
                             inputs.min(0) - 1.0, inputs.max(0) + 1.0)
        kpi_head.write_group(f, "max_dp_head_implicit", head, x0.shape[1:3],
                             "log(max dP / Theis)", {"physics_inputs": "max_dp"},
                             list(kpi_head.FEATURES) + list(physics.MAX_DP_FEATURE_NAMES))
        ratio = head.predict(inputs)
        f["expected_implicit/inputs"] = inputs
        f["expected_implicit/ratio"] = ratio
        f["expected_implicit/max_dp_bar"] = np.asarray(theis_all) * ratio
        # And one whose last input is the implicit estimate's first-report value instead.
        inputs = np.concatenate([inputs[:, :-1], np.asarray(first_report_inputs)[:, None]], 1)
        nets = [kpi_head.mlp(inputs.shape[1], 8).double().eval() for _ in range(2)]
        head = kpi_head.Head(nets, inputs.mean(0) + 0.1, inputs.std(0) + 0.5, 0.3, 0.2,
                             inputs.min(0) - 1.0, inputs.max(0) + 1.0)
        kpi_head.write_group(f, "max_dp_head_first_report", head, x0.shape[1:3],
                             "log(max dP / Theis)", {"physics_inputs": "max_dp"},
                             list(kpi_head.FEATURES) + list(physics.FIRST_REPORT_FEATURE_NAMES))
        ratio = head.predict(inputs)
        f["expected_first_report/inputs"] = inputs
        f["expected_first_report/ratio"] = ratio
        f["expected_first_report/max_dp_bar"] = np.asarray(theis_all) * ratio
    add_gravity_pressure_estimates(path, seed + 1)
    add_brine_dissolution_estimates(path)


def _fixture_cases(f):
    """(group, decoded case, report times or None) of every /caseK of an open
    pressure_estimates.h5: the examples it names, at their own times, and the hand-made case."""
    from ufno.data import cases as ufno_cases
    from ufno.heads import physics
    k = 0
    while "case%d" % k in f:
        g = f["case%d" % k]
        if "case" in g.attrs:
            case = ufno_cases.read_case_h5(os.path.join(os.path.dirname(HERE), g.attrs["case"]))
            times = None
        else:
            case = pressure_estimates_hand_made_case()
            times = PRESSURE_ESTIMATES_HAND_MADE_TIMES
        yield g, physics.from_case(case), times
        k += 1


def add_gravity_pressure_estimates(path, seed):
    """Adds the buoyancy-aware estimate (physics.rz_gravity_two_phase_dp_bar) to
    pressure_estimates.h5 at `path`, leaving what is there as it is: /caseK/gravity_dp_bar_near
    (its first 8 radial columns, (T, X, 8)) and the attributes gravity_max_dp_bar (its largest
    value in the well's column) and gravity_plume_radius_m (its gas saturation's plume radius at
    each report time, plume_radius.plume_radii), and /max_dp_head_gravity (36 inputs, the last
    log_rz_gravity_two_phase_max_dp_bar) with its inputs and estimates under /expected_gravity."""
    from ufno.heads import common as kpi_head
    from ufno.heads import physics
    from ufno.heads import plume_radius
    gravity_inputs, theis = [], []
    with h5py.File(path, "a") as f:
        for g, d, times in _fixture_cases(f):
            dps, sats = physics.rz_gravity_two_phase_dp_bar([d], times, [physics.properties(d)])
            dp = dps[0]
            # Its gas saturation's plume radius at every report time, by the KPI rule.
            g.attrs["gravity_plume_radius_m"] = plume_radius.plume_radii(
                np.moveaxis(sats[0], 0, -1), d["active"], d["perf"], d["swi"], d["dr"])
            if "gravity_dp_bar_near" in g:
                del g["gravity_dp_bar_near"]
            g["gravity_dp_bar_near"] = dp[:, :, :8]
            g.attrs["gravity_max_dp_bar"] = dp[:, :, 0].max()
            if times is None:
                gravity_inputs.append(math.log(max(dp[:, :, 0].max(),
                                                   physics.PHYSICS_FLOOR_BAR)))
                theis.append(g.attrs["theis_bar"])
        base = f["expected/inputs"][()]
        inputs = np.concatenate([base, np.asarray(gravity_inputs)[:, None]], 1)
        torch.manual_seed(seed)
        nets = [kpi_head.mlp(inputs.shape[1], 8).double().eval() for _ in range(2)]
        head = kpi_head.Head(nets, inputs.mean(0) + 0.1, inputs.std(0) + 0.5, 0.3, 0.2,
                             inputs.min(0) - 1.0, inputs.max(0) + 1.0)
        kpi_head.write_group(f, "max_dp_head_gravity", head, f["max_dp_head"].attrs["grid"],
                             "log(max dP / Theis)", {"physics_inputs": "max_dp"},
                             list(kpi_head.FEATURES) + list(physics.GRAVITY_FEATURE_NAMES))
        ratio = head.predict(inputs)
        if "expected_gravity" in f:
            del f["expected_gravity"]
        f["expected_gravity/inputs"] = inputs
        f["expected_gravity/ratio"] = ratio
        f["expected_gravity/max_dp_bar"] = np.asarray(theis) * ratio


def add_brine_dissolution_estimates(path):
    """Adds the buoyancy-aware estimate with the "brine" dissolution model
    (physics.DISSOLUTION_MODELS) to pressure_estimates.h5 at `path`, leaving what is there as it
    is: /caseK/gravity_brine_dp_bar_near (its first 8 radial columns, (T, X, 8)) and the
    attribute gravity_brine_envelope_bar (its largest value over report times and layers at
    every radial column, where the two models differ most)."""
    from ufno.heads import physics
    with h5py.File(path, "a") as f:
        for g, d, times in _fixture_cases(f):
            dp = physics.rz_gravity_two_phase_dp_bar([d], times, [physics.properties(d)],
                                                     dissolution="brine")[0][0]
            if "gravity_brine_dp_bar_near" in g:
                del g["gravity_brine_dp_bar_near"]
            g["gravity_brine_dp_bar_near"] = dp[:, :, :8]
            g.attrs["gravity_brine_envelope_bar"] = dp.max(axis=(0, 1))


def pressure_estimates_brine_main():
    """`python3 -c 'from ufno.conversion.fixtures import pressure_estimates_brine_main as m;
    m()'`: adds the brine-dissolution estimate to tests/data/pressure_estimates.h5, the rest of
    the file untouched (add_brine_dissolution_estimates)."""
    p = argparse.ArgumentParser(description="add the brine-dissolution estimate to "
                                "tests/data/pressure_estimates.h5")
    p.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "data"))
    args = p.parse_args()
    add_brine_dissolution_estimates(os.path.join(args.out, "pressure_estimates.h5"))


def pressure_estimates_gravity_main():
    """`python3 -c 'from ufno.conversion.fixtures import pressure_estimates_gravity_main as m;
    m()'`: adds the buoyancy-aware estimate to tests/data/pressure_estimates.h5, the rest of the
    file untouched (add_gravity_pressure_estimates)."""
    p = argparse.ArgumentParser(description="add the buoyancy-aware estimate to "
                                "tests/data/pressure_estimates.h5")
    p.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "data"))
    args = p.parse_args()
    torch.set_num_threads(1)
    add_gravity_pressure_estimates(os.path.join(args.out, "pressure_estimates.h5"), SEED + 14)


def pressure_estimates_main():
    """`python3 -c 'from ufno.conversion.fixtures import pressure_estimates_main as m; m()'`:
    tests/data/pressure_estimates.h5 alone (main() writes it with the others)."""
    p = argparse.ArgumentParser(description="write tests/data/pressure_estimates.h5")
    p.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "data"))
    args = p.parse_args()
    torch.set_num_threads(1)
    make_pressure_estimates_fixture(args.out, SEED + 13)
    make_training_profile_fixture(args.out, SEED + 14)


def make_checkpoints(ckpt_dir, seed):
    """A tiny U-FNO as state_dict and as a published-style pickle; both must convert alike."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Net3d(width=4, modes=(2, 3, 2), n_fourier=2, n_ufourier=1, hidden=16)
    init_random_weights(model, gen)
    # Same basename in two folders: the model file records the checkpoint's basename.
    paths = {}
    for kind in ("state_dict", "pickled"):
        d = os.path.join(ckpt_dir, kind)
        os.makedirs(d, exist_ok=True)
        paths[kind] = os.path.join(d, "tiny.pt")
    torch.save(model.state_dict(), paths["state_dict"])
    save_as_published_pickle(model, paths["pickled"])
    outputs = []
    for kind, p in sorted(paths.items()):
        out = os.path.join(os.path.dirname(p), "tiny.h5")
        ufno_convert.convert(p, out, "SG", GRID, PADDING)
        with open(out, "rb") as f:
            outputs.append(f.read())
        print("  checkpoint %s -> %s" % (p, out))
    if outputs[0] != outputs[1]:
        sys.exit("make_fixtures: state_dict and pickled checkpoints convert differently")
    print("  round trip: state_dict and pickled conversions are byte-identical")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "data"))
    p.add_argument("--ckpt-dir", default=None,
                   help="where the round-trip checkpoints go (default: a new temporary dir)")
    args = p.parse_args()
    torch.set_num_threads(1)  # small problems; keep the machine free for builds
    os.makedirs(args.out, exist_ok=True)

    print("make_fixtures: writing into %s" % args.out)
    make_network_fixture(args.out, "ufno_small", "dP", 3, 3, SEED)
    make_network_fixture(args.out, "fno_small", "SG", 6, 0, SEED + 1)
    make_spectral_fixture(args.out, SEED + 2)
    make_unet_fixture(args.out, SEED + 3)
    make_fno4d_fixture(args.out, "fno4d_small", "SG", SEED + 5, normalizers=False)
    make_fno4d_fixture(args.out, "fno4d_norm_small", "dP", SEED + 6, normalizers=True)
    make_spectral4d_fixture(args.out, SEED + 7)
    make_max_dp_head_fixture(args.out, SEED + 8)
    make_plume_radius_head_fixture(args.out, SEED + 9)
    make_dp_envelope_head_fixture(args.out, SEED + 10)
    make_plume_radius_field_head_fixture(args.out, SEED + 11)
    make_max_dp_envelope_head_fixture(args.out, SEED + 12)
    make_pressure_estimates_fixture(args.out, SEED + 13)
    make_training_profile_fixture(args.out, SEED + 14)
    make_plume_radius_interval_fixture(args.out)
    names = ["max_dp_head_small.h5", "plume_radius_head_small.h5", "dp_envelope_head_small.h5",
             "plume_radius_field_head_small.h5", "max_dp_envelope_head_small.h5", "ufno_small.h5", "ufno_small_io.h5", "fno_small.h5", "fno_small_io.h5",
             "spectral_small.h5", "unet_small.h5", "fno4d_small.h5", "fno4d_small_io.h5",
             "fno4d_norm_small.h5", "fno4d_norm_small_io.h5", "spectral4d_small.h5",
             "pressure_estimates.h5", "training_profile_small.h5",
             "plume_radius_interval_small.h5"]
    total = 0
    for n in names:
        size = os.path.getsize(os.path.join(args.out, n))
        total += size
        print("  %-20s %9d bytes" % (n, size))
    print("  %-20s %9d bytes" % ("total", total))

    from ufno.conversion import nested_fixtures
    nested = os.path.join(args.out, "nested")
    nested_fixtures.make_nested_fixture(nested)
    total = 0
    for n in nested_fixtures.fixture_files(nested):
        size = os.path.getsize(os.path.join(nested, n))
        total += size
        print("  nested/%-20s %9d bytes" % (n, size))
    print("  nested/%-20s %9d bytes" % ("total", total))

    ckpt_dir = args.ckpt_dir or tempfile.mkdtemp(prefix="ufno_ckpt_")
    make_checkpoints(ckpt_dir, SEED + 4)


if __name__ == "__main__":
    main()
