"""PyTorch re-implementation of the 4-D FNO (FNO4d) of nested FNO (Wen et al. 2023).

Written from the facts in /work/shared/nested-fno-reference.md. Like ufno.models.net3d it exists
only to make golden fixtures for the C++ code and to check the converter; nothing runs it at
prediction time. The state_dict keys are the published ones:

    fc0.{weight,bias}                       Linear(in_channels -> width)
    conv.conv{0..3}.weights{1..8}           complex (width, width, m1, m2, m3, m4)
    conv.w{0..3}.{weight,bias}              Conv1d(width, width, 1)
    conv.fc1.{weight,bias}                  Linear(width -> 4 width)
    conv.fc2.{weight,bias}                  Linear(4 width -> 1)

so a model built here converts with ufno.convert like a published checkpoint.

Tensor conventions: the input is channels-last (B, A1, A2, A3, T, C); inside, tensors are
(B, width, A1, A2, A3, T) on the grid zero-padded on both sides of each axis by `padding`
(default (8, 16, 16, 8)); the output, cropped back, is (B, A1, A2, A3, T).
"""

import math
import sys
import types
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

# to_float64 is re-exported: the float64 path of the fixtures.
from ufno.models.net3d import to_float64  # noqa: F401

PADDING = (8, 16, 16, 8)
N_LAYERS = 4
NORMALIZER_EPS = 1e-5

# The 2^(4-1) = 8 corners of the spectrum, as (A1, A2, A3) low/high per weights1..weights8; the
# T axis always keeps its low bins (the rfft half spectrum). Written in this order, so a later
# corner overwrites an earlier one where they overlap (only possible when 2 m > n on an axis).
CORNERS = (
    ("low", "low", "low"),     # weights1
    ("high", "low", "low"),    # weights2
    ("low", "high", "low"),    # weights3
    ("low", "low", "high"),    # weights4
    ("high", "high", "low"),   # weights5
    ("high", "low", "high"),   # weights6
    ("low", "high", "high"),   # weights7
    ("high", "high", "high"),  # weights8
)


def gelu(x):
    """The exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)) (not the tanh approximation)."""
    return F.gelu(x)


def _corner_slice(side, n, m):
    return slice(0, m) if side == "low" else slice(n - m, n)


class SpectralConv4d(nn.Module):
    """rfftn over the last four axes, multiply the 8 corners by weights1..8, irfftn back.

    Input (B, in, n1, n2, n3, n4); output (B, out, n1, n2, n3, n4). Forward transform unscaled,
    inverse scaled by 1/N (PyTorch's default "backward" normalisation).
    """

    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.modes = tuple(int(m) for m in modes)
        if len(self.modes) != 4:
            raise ValueError("SpectralConv4d needs 4 modes, got %r" % (modes,))
        shape = (in_channels, out_channels) + self.modes
        scale = 1.0 / (in_channels * out_channels)
        for k in range(1, 9):
            setattr(self, "weights%d" % k,
                    nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat)))

    def forward(self, x):
        b = x.shape[0]
        n1, n2, n3, n4 = x.shape[-4:]
        m1, m2, m3, m4 = self.modes
        x_ft = torch.fft.rfftn(x, dim=(-4, -3, -2, -1))
        out_ft = torch.zeros((b, self.out_channels, n1, n2, n3, n4 // 2 + 1),
                             dtype=x_ft.dtype, device=x.device)
        for k, (s1, s2, s3) in enumerate(CORNERS, start=1):
            idx = (slice(None), slice(None), _corner_slice(s1, n1, m1),
                   _corner_slice(s2, n2, m2), _corner_slice(s3, n3, m3), slice(0, m4))
            w = getattr(self, "weights%d" % k).to(x_ft.dtype)
            # out[b, o, ...] = sum_i x_ft[b, i, ...] * w[i, o, ...]
            out_ft[idx] = torch.einsum("biwxyz,iowxyz->bowxyz", x_ft[idx], w)
        # irfftn: complex inverses over A1..A3, then the c2r over T, which takes only the real
        # part of the T = 0 (and, n4 even, the Nyquist) bin.
        return torch.fft.irfftn(out_ft, s=(n1, n2, n3, n4), dim=(-4, -3, -2, -1))


class Block4d(nn.Module):
    """The four Fourier layers, the crop and the fc1/GELU/fc2 head (submodule `conv` of FNO4d).

    forward(x, crop): x is (B, width, P1, P2, P3, P4) on the padded grid; `crop` the padding per
    axis; returns (B, A1, A2, A3, T, 1) channels-last.
    """

    def __init__(self, width, modes, hidden=None):
        super().__init__()
        self.width = width
        self.modes = tuple(int(m) for m in modes)
        hidden = 4 * width if hidden is None else hidden
        # Registration order gives the published key order: conv*, w*, fc1, fc2.
        for k in range(N_LAYERS):
            setattr(self, "conv%d" % k, SpectralConv4d(width, width, self.modes))
        for k in range(N_LAYERS):
            setattr(self, "w%d" % k, nn.Conv1d(width, width, 1))
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x, crop):
        b = x.shape[0]
        grid = x.shape[2:]
        for k in range(N_LAYERS):
            spectral = getattr(self, "conv%d" % k)(x)
            # w_k: per-voxel channel mix with bias, as Conv1d over the flattened voxels.
            pointwise = getattr(self, "w%d" % k)(x.reshape(b, self.width, -1))
            x = spectral + pointwise.reshape((b, self.width) + tuple(grid))
            if k < N_LAYERS - 1:
                x = gelu(x)
        x = x[(slice(None), slice(None)) + tuple(slice(p, n - p) for p, n in zip(crop, grid))]
        x = x.permute(0, 2, 3, 4, 5, 1)
        return self.fc2(gelu(self.fc1(x)))


class FNO4d(nn.Module):
    """fc0 lift, zero padding on both sides, Block4d. Input (B, A1, A2, A3, T, in_channels);
    output (B, A1, A2, A3, T)."""

    def __init__(self, width=28, modes=(6, 10, 10, 10), in_channels=9, padding=PADDING,
                 hidden=None):
        super().__init__()
        self.width = width
        self.modes = tuple(int(m) for m in modes)
        self.padding = tuple(int(p) for p in padding)
        if len(self.padding) != 4 or min(self.padding) < 0:
            raise ValueError("padding must be 4 non-negative ints, got %r" % (padding,))
        self.fc0 = nn.Linear(in_channels, width)
        self.conv = Block4d(width, self.modes, hidden)

    def forward(self, x):
        x = self.fc0(x).permute(0, 5, 1, 2, 3, 4)
        p1, p2, p3, p4 = self.padding
        # F.pad lists the last axis first: (T, A3, A2, A1), each (before, after).
        x = F.pad(x, (p4, p4, p3, p3, p2, p2, p1, p1))
        return self.conv(x, self.padding)[..., 0]


class UnitGaussianNormalizer:
    """Pointwise Gaussian normaliser, attribute-compatible with the published pickles (mean, std,
    eps; mean and std of one sample's shape). Encode (x - mean) / (std + eps); decode
    x * (std + eps) + mean. Tensors are cast to the argument's dtype."""

    def __init__(self, mean, std, eps=NORMALIZER_EPS):
        self.mean = mean
        self.std = std
        self.eps = eps

    def encode(self, x):
        mean, std = self.mean.to(x.dtype), self.std.to(x.dtype)
        return (x - mean) / (std + self.eps)

    def decode(self, x):
        mean, std = self.mean.to(x.dtype), self.std.to(x.dtype)
        return x * (std + self.eps) + mean


class TimeGaussianNormalizer:
    """Per-report-time Gaussian normaliser, attribute-compatible with the published pickles
    (`normalizer/*_DP_val.pickle` of nested FNO: mean and std of shape (1, T, 1, 1, 1, 1), the
    time axis of (B, T, X, Y, Z, C), no eps). Encode (x - mean) / std; decode x * std + mean,
    broadcasting as the tensors' shapes do. Tensors are cast to the argument's dtype."""

    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def encode(self, x):
        mean, std = self.mean.to(x.dtype), self.std.to(x.dtype)
        return (x - mean) / std

    def decode(self, x):
        mean, std = self.mean.to(x.dtype), self.std.to(x.dtype)
        return x * std + mean


def predict(model, x, input_normalizer=None, output_normalizer=None):
    """The full prediction: encode the last input channel, run the network, decode the output.
    x (B, A1, A2, A3, T, C) in the model's dtype; returns (B, A1, A2, A3, T)."""
    if input_normalizer is not None:
        x = x.clone()
        x[..., -1] = input_normalizer.encode(x[..., -1])
    y = model(x)
    if output_normalizer is not None:
        y = output_normalizer.decode(y)
    return y


class NormalizedFNO4d(nn.Module):
    """FNO4d plus optional normalisers (what a model file with normaliser datasets holds)."""

    def __init__(self, net, input_normalizer=None, output_normalizer=None):
        super().__init__()
        self.net = net
        self.input_normalizer = input_normalizer
        self.output_normalizer = output_normalizer

    def forward(self, x):
        return predict(self.net, x, self.input_normalizer, self.output_normalizer)


# Spectral gains per Fourier layer for the fixtures' small grids under the reference padding:
# layer 0 sees an input that is zero outside the unpadded grid (a few hundred of ~10^5 padded
# voxels), so its kept modes hold little of the signal and need a far larger gain than layers
# 1..3, whose inputs fill the padded grid.
FIXTURE_SPECTRAL_GAINS = (40.0, 2.0, 1.5, 1.5)


def init_random_weights(model, gen, spectral_gains=FIXTURE_SPECTRAL_GAINS, linear_gain=1.5):
    """Re-draw every weight of an FNO4d from the torch.Generator `gen` so that the spectral and
    the pointwise paths of every Fourier layer both contribute O(1) (python/tests/test_fno4d.py
    checks it for the fixtures' sizes), so a golden output catches a mistake in either and in
    every corner (the eight weight tensors are independent draws). PyTorch's default init makes
    small test networks nearly constant.

    Spectral weights: complex N(0, 1) + i N(0, 1) times spectral_gains[k] / sqrt(width) in layer
    k. Linear and Conv1d weights: N(0, 1) * linear_gain / sqrt(fan_in) (fc0 with gain 1);
    biases N(0, 0.1^2). A bare SpectralConv4d gets spectral_gains[0]."""
    with torch.no_grad():
        layer_of = {}
        if isinstance(model, FNO4d):
            for k in range(N_LAYERS):
                layer_of[id(getattr(model.conv, "conv%d" % k))] = k
        for name, m in model.named_modules():
            if isinstance(m, SpectralConv4d):
                gain = spectral_gains[layer_of.get(id(m), 0)]
                for k in range(1, 9):
                    w = getattr(m, "weights%d" % k)
                    re = torch.randn(w.shape, generator=gen)
                    im = torch.randn(w.shape, generator=gen)
                    w.copy_(torch.complex(re, im) * (gain / math.sqrt(m.in_channels)))
            elif isinstance(m, (nn.Linear, nn.Conv1d)):
                gain = 1.0 if name.split(".")[-1] == "fc0" else linear_gain
                fan_in = m.weight[0].numel()
                scale = gain / math.sqrt(fan_in)
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * scale)
                if m.bias is not None:
                    m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))
    return model


def random_normalizer(shape, gen, mean_scale=1.0):
    """A UnitGaussianNormalizer with random float32 mean (N(0, mean_scale^2)) and std in
    [0.5, 1.5), drawn from `gen`."""
    mean = mean_scale * torch.randn(shape, generator=gen)
    std = 0.5 + torch.rand(shape, generator=gen)
    return UnitGaussianNormalizer(mean, std, NORMALIZER_EPS)


class _ClassesInModule:
    """While active, `classes` claim module `module_name`, and a module of that name holding them
    is in sys.modules, so pickle records them as `module_name.ClassName` (pickle checks that the
    name imports back to the same object)."""

    def __init__(self, module_name, classes):
        self.module_name, self.classes = module_name, classes

    def __enter__(self):
        fake = types.ModuleType(self.module_name)
        for c in self.classes:
            setattr(fake, c.__name__, c)
        self.previous = sys.modules.get(self.module_name)
        self.old = {c: c.__module__ for c in self.classes}
        sys.modules[self.module_name] = fake
        for c in self.classes:
            c.__module__ = self.module_name
        return self

    def __exit__(self, *exc):
        for c, m in self.old.items():
            c.__module__ = m
        if self.previous is None:
            sys.modules.pop(self.module_name, None)
        else:
            sys.modules[self.module_name] = self.previous
        return False


def save_as_published_pickle(model, path, **save_kwargs):
    """torch.save(model) with the classes recorded as FNO4D.FNO4d, FNO4D.Block4d and
    FNO4D.SpectralConv4d, like the published whole-model checkpoints."""
    with _ClassesInModule("FNO4D", (FNO4d, Block4d, SpectralConv4d)), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Couldn't retrieve source code")
        torch.save(model, path, **save_kwargs)


def save_normalizer_pickle(normalizer, path, use_torch_save=True, module="UnitGaussianNormalizer"):
    """Pickle a UnitGaussianNormalizer or TimeGaussianNormalizer as class
    `module`.<its class> (UnitGaussianNormalizer.UnitGaussianNormalizer by default; the published
    files are __main__.TimeGaussianNormalizer): with torch.save (default) or with plain
    pickle.dump (the tensors then pickle themselves)."""
    with _ClassesInModule(module, (type(normalizer),)):
        if use_torch_save:
            torch.save(normalizer, path)
        else:
            import pickle
            with open(path, "wb") as f:
                pickle.dump(normalizer, f)
