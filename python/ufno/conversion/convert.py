#!/usr/bin/python3
"""Convert a PyTorch U-FNO / FNO / FNO4d checkpoint into the ufno HDF5 model file read by C++.

Usage:
    python3 -m ufno.convert CHECKPOINT OUT.h5 --variable SG|dP [--fno] [--grid X Y T] [--padding P]
    python3 -m ufno.convert CHECKPOINT OUT.h5 --variable SG|dP --grid A1 A2 A3 A4
                    [--axis-order XYZT|TXYZ] [--padding P1 P2 P3 P4]
                    [--input-normalizer N.pickle] [--output-normalizer N.pickle]
                    [--level GLOBAL|LGR1|LGR2|LGR3|LGR4]                                 (FNO4d)

CHECKPOINT is either a state_dict (keys `conv1.*` for the U-FNO/FNO, `fc0.*` and `conv.*` for the
4-D FNO of nested FNO; optionally under a `module.` prefix) or a whole pickled Net3d / FNO4d as
published (torch.save(model)). The architecture is recognised from the keys. Pickled models refer
to classes of a module `ufno`, `FNO4D` (or `__main__`); those are replaced by empty nn.Module
stand-ins while unpickling, so neither the reference code nor python/ufno/models/net3d.py /
python/ufno/models/fno4d.py needs to be importable. The same holds for the FNO4d's normaliser
pickles (classes UnitGaussianNormalizer and TimeGaussianNormalizer of module
UnitGaussianNormalizer or __main__, replaced by plain-object stand-ins of the same names). The
pickles are otherwise trusted exactly as torch.load trusts them: convert only checkpoints you
would also torch.load.

On any error: one line `ufno_convert: <file>: <what> (<key>)` on stderr, exit status 1, and no
output file (the file is written to OUT.h5.tmp and renamed only when complete). A --level that is
not one of LEVELS is refused the same way with exit status 2, before anything is read.
The file format is described in docs/model-format.md (write_model_file() and
write_fno4d_model_file() below write it).
"""

import argparse
import contextlib
import math
import os
import pickle
import re
import sys
import types
import warnings
import zipfile

import h5py
import numpy as np
import torch

from ufno.data.output_path import check_output

FORMAT = "ufno-model"
FORMAT_VERSION = 1
LEAKY_RELU_SLOPE = 0.1
BATCHNORM_EPS = 1e-5
PREFIX = "conv1."

# (scale, offset, units): physical value = raw network output * scale + offset.
# The dP pair is the z-score of the U-FNO paper's published dP model (Wen et al. 2022): its
# reference code turns the network output into bar as out * 18.772821433027488 +
# 4.172939172019009 (/work/shared/ufno-reference.md, "Outputs"). This table is the only copy in
# the Python code (ufno.make_fixtures and the tests read it from here; docs/model-format.md cites it).
VARIABLES = {
    "dP": (18.772821433027488, 4.172939172019009, "bar"),
    "SG": (1.0, 0.0, "1"),
}

# The levels of the nested chain (docs/nested-sites.md): an FNO4D model file's optional `level`.
LEVELS = ("GLOBAL", "LGR1", "LGR2", "LGR3", "LGR4")

UNET_CONV_BLOCKS = ("conv1", "conv2", "conv2_1", "conv3", "conv3_1")
UNET_DECONV_BLOCKS = ("deconv2", "deconv1", "deconv0")
BN_TENSORS = ("weight", "bias", "running_mean", "running_var")


class ConvertError(Exception):
    """An error to report as `ufno_convert: <file>: <what> (<key>)`."""

    def __init__(self, file, what, key=None):
        super().__init__(what)
        self.file, self.what, self.key = file, what, key

    def line(self):
        what = " ".join(str(self.what).split())  # always a single line
        suffix = " (%s)" % self.key if self.key else ""
        return "ufno_convert: %s: %s%s" % (self.file, what, suffix)


# ---------------------------------------------------------------------------------------------
# Loading

# Modules whose classes are replaced by stand-ins: the U-FNO's (`ufno`), the nested-FNO 4-D
# FNO's (`FNO4D`: FNO4d, Block4d, SpectralConv4d) and its normaliser's.
_STANDIN_MODULES = ("ufno", "__main__", "FNO4D", "UnitGaussianNormalizer")
_standin_classes = {}


def _is_normalizer_class(name):
    # Normalisers are plain objects (mean, std, eps), not nn.Modules.
    return name.endswith("Normalizer")


def _standin_class(name):
    """An empty class named like the pickled one: an nn.Module subclass, whose pickled __dict__
    (the submodules, parameters and buffers) nn.Module.__setstate__ restores, or for a
    `...Normalizer` a plain object, whose __dict__ (mean, std, eps) pickle restores."""
    cls = _standin_classes.get(name)
    if cls is None:
        if _is_normalizer_class(name):
            cls = type(name, (object,), {"__module__": __name__})
        else:
            def forward(self, *args):
                raise RuntimeError("stand-in module %s cannot be run" % name)
            cls = type(name, (torch.nn.Module,), {"forward": forward, "__module__": __name__})
        _standin_classes[name] = cls
    return cls


def _module_getattr(name):
    # Module-level __getattr__ for the stand-in modules and for `__main__`: class names only, so
    # probes such as __path__ or __file__ still fail normally.
    if name.startswith("_"):
        raise AttributeError(name)
    return _standin_class(name)


class _StandinUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module in _STANDIN_MODULES or module.startswith("ufno."):
            return _standin_class(name)
        return super().find_class(module, name)


def _make_pickle_module():
    # torch.load wants a module-like object (it reads __name__, Unpickler, load, ...).
    mod = types.ModuleType("ufno_convert_pickle")
    for attr in dir(pickle):
        if not attr.startswith("__"):
            setattr(mod, attr, getattr(pickle, attr))
    mod.Unpickler = _StandinUnpickler
    mod.load = lambda f, **kw: _StandinUnpickler(f, **kw).load()
    return mod


_PICKLE_MODULE = _make_pickle_module()


class _StandinsInstalled:
    """While active, `import ufno` (and `import FNO4D`, `import UnitGaussianNormalizer`) gives a
    module whose every attribute is a stand-in class, and names missing from `__main__` resolve
    to stand-ins too (PEP 562 module __getattr__).

    Needed because torch 1.13.0 (Debian 12's python3-torch) ignores torch.load's pickle_module
    argument unless weights_only=True (`else: pickle_module = pickle` in torch.load; fixed in
    1.13.1). Later versions use _StandinUnpickler directly. Everything is restored on exit.
    """

    _MISSING = object()

    def __enter__(self):
        self.previous = {}
        for mod in _STANDIN_MODULES:
            if mod == "__main__":
                continue
            fake = types.ModuleType(mod)
            fake.__getattr__ = _module_getattr
            self.previous[mod] = sys.modules.get(mod, self._MISSING)
            sys.modules[mod] = fake
        self.main = sys.modules.get("__main__")
        if self.main is not None:
            self.previous_getattr = self.main.__dict__.get("__getattr__", self._MISSING)
            self.main.__getattr__ = _module_getattr
        return self

    def __exit__(self, *exc):
        for mod, previous in self.previous.items():
            if previous is self._MISSING:
                sys.modules.pop(mod, None)
            else:
                sys.modules[mod] = previous
        if self.main is not None:
            if self.previous_getattr is self._MISSING:
                del self.main.__getattr__
            else:
                self.main.__getattr__ = self.previous_getattr
        return False


def _torch_load(path):
    kwargs = {"map_location": "cpu", "pickle_module": _PICKLE_MODULE}
    try:
        import inspect
        if "weights_only" in inspect.signature(torch.load).parameters:
            kwargs["weights_only"] = False  # a whole pickled model is not "weights only"
    except (TypeError, ValueError):
        pass
    with warnings.catch_warnings(), _StandinsInstalled():
        # Legacy pickles warn that the source of container classes cannot be checked.
        warnings.simplefilter("ignore")
        return torch.load(path, **kwargs)


def load_state_dict(path):
    """Load CHECKPOINT and return its state_dict as {key: tensor} (keys as stored)."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise ConvertError(name, "no such checkpoint file")
    if os.path.getsize(path) == 0:
        raise ConvertError(name, "checkpoint file is empty")
    try:
        obj = _torch_load(path)
    except Exception as e:  # torch raises many kinds (pickle, zip, EOF, runtime) on bad files
        raise ConvertError(name, "cannot load checkpoint (corrupted or truncated?): %s: %s"
                           % (type(e).__name__, e))
    # Tolerate the usual training wrappers {"state_dict": ...} / {"model": ...}.
    if isinstance(obj, dict) and not any(torch.is_tensor(v) for v in obj.values()):
        for k in ("state_dict", "model_state_dict", "model"):
            if k in obj:
                obj = obj[k]
                break
    if isinstance(obj, torch.nn.Module):
        obj = obj.state_dict()
    if not isinstance(obj, dict):
        raise ConvertError(name, "checkpoint holds a %s, not a model or a state_dict"
                           % type(obj).__name__)
    sd = {}
    for k, v in obj.items():
        if not torch.is_tensor(v):
            raise ConvertError(name, "state_dict entry is a %s, not a tensor" % type(v).__name__,
                               k)
        sd[str(k)] = v.detach().cpu()
    return sd


def canonical_keys(sd, name):
    """Strip `module.`, add the `conv1.` prefix to a bare SimpleBlock3d state_dict, and rename
    the old `output_layer0` to `output_layer`."""
    if sd and all(k.startswith("module.") for k in sd):
        sd = {k[len("module."):]: v for k, v in sd.items()}
    if PREFIX + "fc0.weight" not in sd:
        if "fc0.weight" in sd:
            sd = {PREFIX + k: v for k, v in sd.items()}
        else:
            raise ConvertError(name, "not a U-FNO/FNO state_dict: missing tensor",
                               PREFIX + "fc0.weight")
    out = {}
    for k, v in sd.items():
        new = re.sub(r"^(conv1\.unet\d+\.)output_layer0\.", r"\1output_layer.", k)
        if new in out:
            raise ConvertError(name, "both output_layer and output_layer0 present", new)
        # Pre-1.8 FNO code stored complex weights as real tensors with a trailing (re, im) axis.
        if (re.search(r"\.weights[1-4]$", new) and v.is_floating_point() and v.dim() == 6
                and v.shape[-1] == 2):
            v = torch.view_as_complex(v.to(torch.float32).contiguous())
        out[new] = v
    return out


# ---------------------------------------------------------------------------------------------
# Architecture

class Architecture:
    """Hyperparameters inferred from a state_dict."""

    def __init__(self, width, modes, n_fourier, n_ufourier, in_channels, hidden):
        self.width, self.modes = width, tuple(modes)
        self.n_fourier, self.n_ufourier = n_fourier, n_ufourier
        self.in_channels, self.hidden = in_channels, hidden

    @property
    def name(self):
        return "UFNO" if self.n_ufourier > 0 else "FNO"

    def expected_shapes(self):
        """{key: shape} of every tensor; spectral weights are complex (shape without the 2)."""
        w, h, c = self.width, self.hidden, self.in_channels
        s = {"fc0.weight": (w, c), "fc0.bias": (w,),
             "fc1.weight": (h, w), "fc1.bias": (h,),
             "fc2.weight": (1, h), "fc2.bias": (1,)}
        n_layers = self.n_fourier + self.n_ufourier
        for k in range(n_layers):
            for j in range(1, 5):
                s["conv%d.weights%d" % (k, j)] = (w, w) + self.modes
            s["w%d.weight" % k] = (w, w, 1)
            s["w%d.bias" % k] = (w,)
        for k in range(self.n_fourier, n_layers):
            u = "unet%d." % k
            for blk in UNET_CONV_BLOCKS:
                s[u + blk + ".0.weight"] = (w, w, 3, 3, 3)
                for t in BN_TENSORS:
                    s[u + blk + ".1." + t] = (w,)
                s[u + blk + ".1.num_batches_tracked"] = ()
            for blk in UNET_DECONV_BLOCKS:
                cin = w if blk == "deconv2" else 2 * w
                s[u + blk + ".0.weight"] = (cin, w, 4, 4, 4)  # ConvTranspose3d: (in, out, k...)
                s[u + blk + ".0.bias"] = (w,)
            s[u + "output_layer.weight"] = (w, 2 * w, 3, 3, 3)
            s[u + "output_layer.bias"] = (w,)
        return {PREFIX + k: v for k, v in s.items()}


def _shape_of(sd, key, name, ndim):
    if key not in sd:
        raise ConvertError(name, "missing tensor", key)
    shape = tuple(sd[key].shape)
    if len(shape) != ndim:
        raise ConvertError(name, "tensor has shape %s, expected %d dimensions" % (shape, ndim),
                           key)
    return shape


def infer_architecture(sd, name):
    """Infer the hyperparameters and check every key and shape against them."""
    width, in_channels = _shape_of(sd, PREFIX + "fc0.weight", name, 2)
    hidden, _ = _shape_of(sd, PREFIX + "fc1.weight", name, 2)
    w1 = _shape_of(sd, PREFIX + "conv0.weights1", name, 5)
    modes = w1[2:]

    layers = sorted(int(m.group(1)) for m in
                    (re.match(r"^conv1\.conv(\d+)\.weights1$", k) for k in sd) if m)
    n_layers = len(layers)
    if layers != list(range(n_layers)):
        missing = min(set(range(max(layers) + 1)) - set(layers))
        raise ConvertError(name, "Fourier layers are not numbered 0..%d" % max(layers),
                           PREFIX + "conv%d.weights1" % missing)
    unets = sorted({int(m.group(1)) for m in
                    (re.match(r"^conv1\.unet(\d+)\.", k) for k in sd) if m})
    n_ufourier = len(unets)
    n_fourier = n_layers - n_ufourier
    if unets != list(range(n_fourier, n_layers)):
        # U layers must be the last ones (plain layers first) and belong to a Fourier layer.
        bad = next(u for u in unets if u < n_fourier or u >= n_layers)
        raise ConvertError(name, "U-Net of layer %d: U-Fourier layers must be the last %d of %d"
                           " Fourier layers" % (bad, n_ufourier, n_layers),
                           PREFIX + "unet%d" % bad)

    arch = Architecture(width, modes, n_fourier, n_ufourier, in_channels, hidden)
    expected = arch.expected_shapes()
    for key in sorted(expected):
        if key not in sd:
            if key.endswith(".num_batches_tracked"):
                continue  # absent in very old checkpoints; filled with 0 when writing
            raise ConvertError(name, "missing tensor", key)
    for key in sorted(sd):
        if key not in expected:
            raise ConvertError(name, "unexpected tensor for a %s of %d+%d layers"
                               % (arch.name, n_fourier, n_ufourier), key)
        t = sd[key]
        if tuple(t.shape) != expected[key]:
            raise ConvertError(name, "tensor has shape %s, expected %s"
                               % (tuple(t.shape), expected[key]), key)
        is_spectral = re.search(r"\.weights[1-4]$", key) is not None
        if key.endswith(".num_batches_tracked"):
            ok = not t.is_floating_point() and not t.is_complex()
        elif is_spectral:
            ok = t.is_complex()
        else:
            ok = t.is_floating_point()
        if not ok:
            raise ConvertError(name, "tensor has unexpected dtype %s" % t.dtype, key)
        if (t.is_floating_point() or t.is_complex()) and not bool(torch.isfinite(t).all()):
            raise ConvertError(name, "tensor has non-finite values", key)
    return arch


def check_grid(arch, grid, padding, name):
    """The padded grid must hold the retained modes, and divide by 8 for the U-Nets."""
    if padding < 0:
        raise ConvertError(name, "padding %d is negative" % padding)
    if any(g <= 0 for g in grid):
        raise ConvertError(name, "grid %s must be positive" % (tuple(grid),))
    padded = [g + padding for g in grid]
    key = PREFIX + "conv0.weights1"
    limits = (padded[0] // 2, padded[1] // 2, padded[2] // 2 + 1)
    for axis, m, lim in zip("XYT", arch.modes, limits):
        if m > lim:
            raise ConvertError(name, "%s modes %d exceed %d allowed by the padded grid %s"
                               % (axis, m, lim, tuple(padded)), key)
    if arch.n_ufourier > 0:
        for axis, p in zip("XYT", padded):
            if p % 8:
                raise ConvertError(name, "padded %s extent %d is not divisible by 8 (U-Net)"
                                   % (axis, p), PREFIX + "unet%d" % arch.n_fourier)


# ---------------------------------------------------------------------------------------------
# Writing

def _str_attr(value):
    # Fixed-length ASCII (H5T_STR_NULLPAD, size = length): the simplest string to read from C.
    return np.bytes_(value.encode("ascii"))


def _as_array(key, t):
    """Tensor -> numpy array as stored: float32; complex as float32 with a trailing (re, im)
    axis; num_batches_tracked as int64."""
    if key.endswith(".num_batches_tracked"):
        return np.asarray(t.numpy(), dtype=np.int64)
    if t.is_complex():
        return np.ascontiguousarray(torch.view_as_real(t.to(torch.complex64)).numpy())
    return np.ascontiguousarray(t.to(torch.float32).numpy())


@contextlib.contextmanager
def _atomic_model_file(out_path):
    """An HDF5 file written under OUT.tmp and renamed to OUT only when the block completes, with
    the deterministic settings every model file uses; a failure leaves no file and reports write
    errors as one ConvertError line."""
    tmp = out_path + ".tmp"
    try:
        with h5py.File(tmp, "w", libver="earliest", track_order=False) as f:
            yield f
        os.replace(tmp, out_path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, (OSError, ValueError, TypeError, UnicodeError)):
            raise ConvertError(os.path.basename(out_path), "cannot write model file: %s" % e)
        raise


def write_model_file(out_path, sd, arch, variable, grid, padding, source, scaling=None):
    """Write the model file atomically (OUT.tmp, then rename). Deterministic: sorted keys, no
    timestamps, fixed attribute order, so equal weights give byte-identical files. `scaling`
    (scale, offset) replaces the paper's de-scaling of the variable (physical = raw * scale +
    offset), for models trained on other data."""
    scale, offset, units = VARIABLES[variable]
    if scaling is not None:
        scale, offset = float(scaling[0]), float(scaling[1])
    sd = dict(sd)
    for key in arch.expected_shapes():
        if key.endswith(".num_batches_tracked") and key not in sd:
            sd[key] = torch.tensor(0, dtype=torch.int64)
    with _atomic_model_file(out_path) as f:
        a = f.attrs
        a.create("format", _str_attr(FORMAT))
        a.create("format_version", np.int32(FORMAT_VERSION))
        a.create("architecture", _str_attr(arch.name))
        a.create("variable", _str_attr(variable))
        a.create("width", np.int32(arch.width))
        a.create("modes", np.array(arch.modes, dtype=np.int32))
        a.create("n_fourier", np.int32(arch.n_fourier))
        a.create("n_ufourier", np.int32(arch.n_ufourier))
        a.create("in_channels", np.int32(arch.in_channels))
        a.create("hidden", np.int32(arch.hidden))
        a.create("padding", np.array([padding] * 3, dtype=np.int32))
        a.create("grid", np.array(grid, dtype=np.int32))
        a.create("output_scale", np.float64(scale))
        a.create("output_offset", np.float64(offset))
        a.create("output_units", _str_attr(units))
        a.create("leaky_relu_slope", np.float64(LEAKY_RELU_SLOPE))
        a.create("batchnorm_eps", np.float64(BATCHNORM_EPS))
        a.create("batchnorm_mode", _str_attr("eval"))
        a.create("source", _str_attr(source))
        for key in sorted(sd):
            d = f.create_dataset(key, data=_as_array(key, sd[key]), track_times=False)
            d.attrs.create("units", _str_attr("1"))


# ---------------------------------------------------------------------------------------------
# The 4-D FNO of nested FNO (FNO4d; docs/model-format.md, section "FNO4D")

FNO4D = "FNO4D"
FNO4D_PADDING = (8, 16, 16, 8)  # both sides of (A1, A2, A3, T), as the reference pads
FNO4D_LAYERS = 4
FNO4D_SPECTRAL = re.compile(r"^conv\.conv\d+\.weights\d+$")
NORMALIZER_EPS = 1e-5
NORMALIZERS = ("input_normalizer", "output_normalizer")
# The axis orders of an FNO4D's grid (A1, A2, A3, A4): the project's (x, y, z, t), which a file
# without `axis_order` has, and the published models' (t, x, y, z).
AXIS_ORDERS = ("XYZT", "TXYZ")
# A normaliser's kind: the pointwise UnitGaussianNormalizer (mean and std of the grid's shape,
# with eps) or the per-report-time TimeGaussianNormalizer (one mean and std per time, no eps).
POINTWISE, PER_TIME = "pointwise", "time"


# How messages name the axes of each order (the project's grid axes are generic, A1..A3).
AXIS_NAMES = {"XYZT": ("A1", "A2", "A3", "T"), "TXYZ": ("T", "X", "Y", "Z")}


def time_axis(axis_order):
    """The index of the time axis among (A1, A2, A3, A4)."""
    return axis_order.index("T")


def is_fno4d(sd):
    """True for an FNO4d state_dict: its block is the submodule `conv` (keys `conv.*`), where
    the U-FNO's is `conv1`."""
    keys = list(sd)
    if keys and all(k.startswith("module.") for k in keys):
        keys = [k[len("module."):] for k in keys]
    return any(k.startswith("conv.") for k in keys)


def canonical_fno4d_keys(sd):
    """Strip a `module.` prefix; read real (..., 2) spectral weights as complex."""
    if sd and all(k.startswith("module.") for k in sd):
        sd = {k[len("module."):]: v for k, v in sd.items()}
    out = {}
    for k, v in sd.items():
        if (FNO4D_SPECTRAL.match(k) and v.is_floating_point() and v.dim() == 7
                and v.shape[-1] == 2):
            v = torch.view_as_complex(v.to(torch.float32).contiguous())
        out[k] = v
    return out


class Fno4dArchitecture:
    """Hyperparameters of an FNO4d, inferred from its state_dict."""

    name = FNO4D
    n_layers = FNO4D_LAYERS

    def __init__(self, width, modes, in_channels, hidden):
        self.width, self.modes = width, tuple(modes)
        self.in_channels, self.hidden = in_channels, hidden

    def expected_shapes(self):
        """{key: shape}; spectral weights are complex (shape without the (re, im) axis)."""
        w, h = self.width, self.hidden
        s = {"fc0.weight": (w, self.in_channels), "fc0.bias": (w,),
             "conv.fc1.weight": (h, w), "conv.fc1.bias": (h,),
             "conv.fc2.weight": (1, h), "conv.fc2.bias": (1,)}
        for k in range(self.n_layers):
            for j in range(1, 9):
                s["conv.conv%d.weights%d" % (k, j)] = (w, w) + self.modes
            s["conv.w%d.weight" % k] = (w, w, 1)
            s["conv.w%d.bias" % k] = (w,)
        return s


def infer_fno4d_architecture(sd, name):
    """Width, modes, channels and hidden size from the shapes; then every key, shape and dtype
    is checked against them."""
    width, in_channels = _shape_of(sd, "fc0.weight", name, 2)
    hidden, _ = _shape_of(sd, "conv.fc1.weight", name, 2)
    modes = _shape_of(sd, "conv.conv0.weights1", name, 6)[2:]
    arch = Fno4dArchitecture(width, modes, in_channels, hidden)
    expected = arch.expected_shapes()
    for key in sorted(expected):
        if key not in sd:
            raise ConvertError(name, "missing tensor", key)
    for key in sorted(sd):
        if key not in expected:
            raise ConvertError(name, "unexpected tensor for an FNO4D of %d Fourier layers"
                               % arch.n_layers, key)
        t = sd[key]
        if tuple(t.shape) != expected[key]:
            raise ConvertError(name, "tensor has shape %s, expected %s"
                               % (tuple(t.shape), expected[key]), key)
        ok = t.is_complex() if FNO4D_SPECTRAL.match(key) else t.is_floating_point()
        if not ok:
            raise ConvertError(name, "tensor has unexpected dtype %s" % t.dtype, key)
        if not bool(torch.isfinite(t).all()):
            raise ConvertError(name, "tensor has non-finite values", key)
    return arch


def check_fno4d_grid(arch, grid, padding, name, axis_order="XYZT"):
    """Modes must be positive and fit the padded grid: m1..m3 <= P/2, m4 <= P4/2 + 1."""
    if grid is None or len(grid) != 4:
        raise ConvertError(name, "an FNO4D needs --grid %s (4 values), got %s"
                           % (" ".join(AXIS_NAMES[axis_order]), "none" if grid is None
                              else " ".join(map(str, grid))))
    if len(padding) != 4:
        raise ConvertError(name, "an FNO4D needs --padding P1 P2 P3 P4 (4 values), got %s"
                           % " ".join(map(str, padding)))
    if any(g <= 0 for g in grid):
        raise ConvertError(name, "grid %s must be positive" % (tuple(grid),))
    if any(p < 0 for p in padding):
        raise ConvertError(name, "padding %s is negative" % (tuple(padding),))
    padded = tuple(g + 2 * p for g, p in zip(grid, padding))
    limits = (padded[0] // 2, padded[1] // 2, padded[2] // 2, padded[3] // 2 + 1)
    key = "conv.conv0.weights1"
    for axis, m, lim in zip(AXIS_NAMES[axis_order], arch.modes, limits):
        if m < 1:
            raise ConvertError(name, "%s modes %d must be at least 1" % (axis, m), key)
        if m > lim:
            raise ConvertError(name, "%s modes %d exceed %d allowed by the padded grid %s"
                               % (axis, m, lim, padded), key)


def _load_pickle(path, what):
    """A torch.save file (zip or legacy) or a plain pickle, with the stand-in classes."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise ConvertError(name, "no such %s file" % what)
    try:
        return _torch_load(path)
    except Exception as e:
        if zipfile.is_zipfile(path):
            raise ConvertError(name, "cannot load %s (corrupted or truncated?): %s: %s"
                               % (what, type(e).__name__, e))
    try:
        with open(path, "rb") as f, warnings.catch_warnings(), _StandinsInstalled():
            warnings.simplefilter("ignore")
            return _StandinUnpickler(f).load()
    except Exception as e:
        raise ConvertError(name, "cannot load %s (corrupted or truncated?): %s: %s"
                           % (what, type(e).__name__, e))


def _squeezed(shape):
    return tuple(n for n in shape if n != 1)


def load_normalizer(path, label, grid, axis_order="XYZT"):
    """Read a UnitGaussianNormalizer or TimeGaussianNormalizer pickle and check it
    (check_normalizer)."""
    return check_normalizer(_load_pickle(path, "%s pickle" % label), os.path.basename(path),
                            label, grid, axis_order)


def normalizer_kind(obj):
    """PER_TIME for a TimeGaussianNormalizer (by class name, or a dict without `eps`), else
    POINTWISE (a UnitGaussianNormalizer)."""
    if isinstance(obj, dict):
        return POINTWISE if "eps" in obj else PER_TIME
    return PER_TIME if type(obj).__name__ == "TimeGaussianNormalizer" else POINTWISE


def check_normalizer(obj, name, label, grid, axis_order="XYZT"):
    """(mean, std, eps, kind) of a normaliser object (its attributes, or a dict of them).

    UnitGaussianNormalizer (kind POINTWISE): mean and std (torch tensors or numpy arrays) must
    have the grid's shape (A1, A2, A3, A4), up to axes of size 1 (one sample of the last input
    channel, or of the output); they are returned reshaped to the grid, as float32, with eps.
    TimeGaussianNormalizer (kind PER_TIME; the published files, mean and std of shape
    (1, T, 1, 1, 1, 1)): one value per report time, T the grid's time extent, any other axes of
    size 1; returned as float32 (T,), eps None (it has none)."""
    kind = normalizer_kind(obj)
    cls = "TimeGaussianNormalizer" if kind == PER_TIME else "UnitGaussianNormalizer"

    def field(attr):
        if isinstance(obj, dict):
            if attr in obj:
                return obj[attr]
        elif attr in getattr(obj, "__dict__", {}):
            return obj.__dict__[attr]
        raise ConvertError(name, "not a %s (a %s without `%s`)"
                           % (cls, type(obj).__name__, attr))

    arrays = {}
    grid = tuple(int(g) for g in grid)
    if kind == PER_TIME:
        T = grid[time_axis(axis_order)]
        shape = (T,)
    for attr in ("mean", "std"):
        v = field(attr)
        if torch.is_tensor(v):
            if not (v.is_floating_point() and not v.is_complex()):
                raise ConvertError(name, "%s %s has dtype %s, not a real float"
                                   % (label, attr, v.dtype))
            a = v.detach().cpu().to(torch.float64).numpy()
        elif isinstance(v, np.ndarray) and v.dtype.kind == "f":
            a = v.astype(np.float64)
        else:
            raise ConvertError(name, "%s %s is a %s, not a float tensor"
                               % (label, attr, type(v).__name__))
        if kind == PER_TIME:
            if a.size != T or _squeezed(a.shape) != _squeezed(shape):
                raise ConvertError(name, "%s %s has shape %s, expected one value per report time"
                                   " (%d, as (1, %d, 1, 1, 1, 1); a TimeGaussianNormalizer)"
                                   % (label, attr, tuple(a.shape), T, T))
        elif a.size != math.prod(grid) or _squeezed(a.shape) != _squeezed(grid):
            raise ConvertError(name, "%s %s has shape %s, expected the grid (%s) = %s"
                               % (label, attr, tuple(a.shape), ", ".join(AXIS_NAMES[axis_order]),
                                  grid))
        if not np.isfinite(a).all():
            raise ConvertError(name, "%s %s has non-finite values" % (label, attr))
        arrays[attr] = np.ascontiguousarray(
            a.reshape(shape if kind == PER_TIME else grid).astype(np.float32))
    if kind == PER_TIME:
        if (arrays["std"] <= 0).any():
            raise ConvertError(name, "%s std is not positive at every report time (a"
                               " TimeGaussianNormalizer divides by it, with no eps)" % label)
        return arrays["mean"], arrays["std"], None, PER_TIME
    eps = field("eps")
    if torch.is_tensor(eps) and eps.numel() == 1:
        eps = eps.item()
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise ConvertError(name, "%s eps is a %s, not a number" % (label, type(eps).__name__))
    eps = float(eps)
    if not math.isfinite(eps) or eps < 0:
        raise ConvertError(name, "%s eps %r is not a finite non-negative number" % (label, eps))
    if (arrays["std"] < 0).any():
        raise ConvertError(name, "%s std has negative values" % label)
    if ((arrays["std"].astype(np.float64) + eps) == 0).any():
        raise ConvertError(name, "%s std + eps is zero somewhere" % label)
    return arrays["mean"], arrays["std"], eps, POINTWISE


def write_fno4d_model_file(out_path, sd, arch, variable, grid, padding, source,
                           normalizers=None, normalizer_eps=NORMALIZER_EPS, level=None,
                           axis_order=None, kinds=None):
    """Write an FNO4D model file atomically and deterministically (sorted datasets, no
    timestamps). `normalizers` maps "input_normalizer"/"output_normalizer" to (mean, std)
    float32 arrays of the grid's shape, or of shape (T,) where `kinds` maps the label to
    PER_TIME (written as the attribute `<label>_kind = "time"`); `level` (one of LEVELS, or None)
    is the nested chain's level, written as the string attribute `level`; `axis_order` (one of
    AXIS_ORDERS, or None: not written, which means XYZT) the attribute `axis_order`."""
    if level is not None and level not in LEVELS:
        raise ValueError("level %r is not one of %s" % (level, ", ".join(LEVELS)))
    if axis_order is not None and axis_order not in AXIS_ORDERS:
        raise ValueError("axis order %r is not one of %s" % (axis_order, ", ".join(AXIS_ORDERS)))
    kinds = kinds or {}
    units = VARIABLES[variable][2]
    datasets = {k: (_as_array(k, v), "1") for k, v in sd.items()}
    for label, (mean, std) in sorted((normalizers or {}).items()):
        # The output normaliser's mean and std are in the output's units; the converter does not
        # know the units of the input's last channel.
        u = units if label == "output_normalizer" else "1"
        datasets[label + ".mean"] = (np.ascontiguousarray(mean, dtype=np.float32), u)
        datasets[label + ".std"] = (np.ascontiguousarray(std, dtype=np.float32), u)
    with _atomic_model_file(out_path) as f:
        a = f.attrs
        a.create("format", _str_attr(FORMAT))
        a.create("format_version", np.int32(FORMAT_VERSION))
        a.create("architecture", _str_attr(FNO4D))
        a.create("variable", _str_attr(variable))
        if level is not None:
            a.create("level", _str_attr(level))
        if axis_order is not None:
            a.create("axis_order", _str_attr(axis_order))
        for label in NORMALIZERS:
            if kinds.get(label) == PER_TIME and label in (normalizers or {}):
                a.create(label + "_kind", _str_attr(PER_TIME))
        a.create("width", np.int32(arch.width))
        a.create("modes", np.array(arch.modes, dtype=np.int32))
        a.create("padding", np.array(padding, dtype=np.int32))
        a.create("grid", np.array(grid, dtype=np.int32))
        a.create("in_channels", np.int32(arch.in_channels))
        a.create("hidden", np.int32(arch.hidden))
        a.create("n_layers", np.int32(arch.n_layers))
        a.create("output_units", _str_attr(units))
        a.create("normalizer_eps", np.float64(normalizer_eps))
        a.create("source", _str_attr(source))
        for key in sorted(datasets):
            data, u = datasets[key]
            d = f.create_dataset(key, data=data, track_times=False)
            d.attrs.create("units", _str_attr(u))


def convert_fno4d(sd, out_path, variable, grid, padding, name, source,
                  input_normalizer=None, output_normalizer=None, level=None, axis_order=None):
    """Check and write an FNO4d (sd: as loaded). The normalisers are pickle paths or objects
    with mean and std (and eps for a UnitGaussianNormalizer); `axis_order` (None: XYZT, not
    written) names the grid's axes. Returns the Fno4dArchitecture."""
    if axis_order is not None and axis_order not in AXIS_ORDERS:
        raise ConvertError(name, "unknown axis order %r (%s)" % (axis_order,
                                                                 ", ".join(AXIS_ORDERS)))
    order = axis_order or "XYZT"
    sd = canonical_fno4d_keys(sd)
    arch = infer_fno4d_architecture(sd, name)
    if padding is None:
        padding = FNO4D_PADDING
    elif isinstance(padding, (int, np.integer)):
        padding = (int(padding),)  # refused below: an FNO4D pads each axis by its own amount
    else:
        padding = tuple(int(p) for p in padding)
    grid = None if grid is None else tuple(int(g) for g in grid)
    check_fno4d_grid(arch, grid, padding, name, order)
    normalizers, eps_of, kinds = {}, {}, {}
    for label, src in zip(NORMALIZERS, (input_normalizer, output_normalizer)):
        if src is None:
            continue
        what = label.replace("_normalizer", " normaliser")
        if isinstance(src, (str, os.PathLike)):
            mean, std, eps, kind = load_normalizer(os.fspath(src), what, grid, order)
            src_name = os.path.basename(os.fspath(src))
        else:
            src_name = "<%s>" % label
            mean, std, eps, kind = check_normalizer(src, src_name, what, grid, order)
        normalizers[label] = (mean, std)
        kinds[label] = kind
        if eps is not None:  # a TimeGaussianNormalizer has no eps
            eps_of[label] = (eps, src_name)
    eps_values = sorted({e for e, _ in eps_of.values()})
    if len(eps_values) > 1:
        raise ConvertError(eps_of["output_normalizer"][1],
                           "output normaliser eps %r differs from the input normaliser's %r"
                           " (a model file holds one normalizer_eps)"
                           % (eps_of["output_normalizer"][0], eps_of["input_normalizer"][0]))
    eps = eps_values[0] if eps_values else NORMALIZER_EPS
    write_fno4d_model_file(out_path, sd, arch, variable, grid, padding, source or name,
                           normalizers, eps, level, axis_order, kinds)
    return arch


def convert(checkpoint, out_path, variable, grid=None, padding=None, fno=False,
            state_dict=None, source=None, log=sys.stderr, scaling=None,
            input_normalizer=None, output_normalizer=None, level=None, axis_order=None):
    """Convert `checkpoint` (or an in-memory `state_dict`) and write `out_path`.

    The architecture comes from the keys: an FNO4d (`conv.*`) or a U-FNO/FNO (`conv1.*`).
    U-FNO/FNO: grid (X, Y, T), default (96, 200, 24); padding an int, default 8.
    FNO4d: grid (A1, A2, A3, A4), required, in `axis_order` (XYZT, the default, or TXYZ, the
    published models' order: written as the attribute `axis_order` when given); padding 4 ints,
    default (8, 16, 16, 8); optional normalisers (pickle paths, or UnitGaussianNormalizer /
    TimeGaussianNormalizer objects); optional level (one of LEVELS, the nested chain's level).
    Returns the Architecture / Fno4dArchitecture. Raises ConvertError. `source` defaults to the
    checkpoint's basename.
    """
    name = os.path.basename(checkpoint) if checkpoint else (source or "<state_dict>")
    if variable not in VARIABLES:
        raise ConvertError(name, "unknown variable %r (SG or dP)" % variable)
    if level is not None and level not in LEVELS:
        raise ConvertError(name, "unknown level %r (%s)" % (level, ", ".join(LEVELS)))
    if state_dict is None:
        state_dict = load_state_dict(checkpoint)
    if is_fno4d(state_dict):
        if fno:
            raise ConvertError(name, "--fno applies to a U-FNO; this is an FNO4D checkpoint")
        if scaling is not None:
            raise ConvertError(name, "--output-scaling applies to a U-FNO/FNO; an FNO4D"
                               " de-scales with --output-normalizer")
        return convert_fno4d(state_dict, out_path, variable, grid, padding, name, source,
                             input_normalizer, output_normalizer, level, axis_order)
    if axis_order is not None:
        raise ConvertError(name, "--axis-order applies to an FNO4D checkpoint, not a U-FNO/FNO")
    if level is not None:
        raise ConvertError(name, "--level applies to an FNO4D checkpoint (the nested chain),"
                           " not a U-FNO/FNO")
    if input_normalizer is not None or output_normalizer is not None:
        raise ConvertError(name, "normalisers apply to an FNO4D checkpoint, not a U-FNO/FNO")
    grid = (96, 200, 24) if grid is None else grid
    if len(grid) != 3:
        raise ConvertError(name, "a U-FNO/FNO needs --grid X Y T (3 values), got %s"
                           % " ".join(map(str, grid)))
    if padding is None:
        padding = 8
    elif not isinstance(padding, int):
        if len(padding) != 1:
            raise ConvertError(name, "a U-FNO/FNO takes one --padding value, got %s"
                               % " ".join(map(str, padding)))
        padding = int(padding[0])
    sd = canonical_keys(state_dict, name)
    if fno:
        dropped = sorted(k for k in sd if re.match(r"^conv1\.unet\d+\.", k))
        if dropped:
            layers = sorted({int(re.match(r"^conv1\.unet(\d+)\.", k).group(1)) for k in dropped})
            print("ufno_convert: %s: --fno: dropping the U-Nets of layers %s (%d tensors);"
                  " architecture FNO" % (name, ",".join(map(str, layers)), len(dropped)),
                  file=log)
            sd = {k: v for k, v in sd.items() if k not in dropped}
    arch = infer_architecture(sd, name)
    check_grid(arch, grid, padding, name)
    write_model_file(out_path, sd, arch, variable, tuple(grid), padding, source or name, scaling)
    return arch


def main(argv=None):
    p = argparse.ArgumentParser(prog="ufno_convert",
                                description="Convert a U-FNO/FNO or FNO4d PyTorch checkpoint to"
                                            " HDF5.")
    p.add_argument("checkpoint")
    p.add_argument("output")
    p.add_argument("--variable", required=True, choices=sorted(VARIABLES))
    p.add_argument("--fno", action="store_true",
                   help="drop the U-Nets and write a plain FNO")
    p.add_argument("--grid", nargs="+", type=int, default=None, metavar="N",
                   help="unpadded grid: X Y T (U-FNO/FNO; default 96 200 24) or A1 A2 A3 A4"
                        " in --axis-order (FNO4d; required)")
    p.add_argument("--axis-order", choices=AXIS_ORDERS, default=None,
                   help="FNO4d: the axes of the grid: XYZT (the default; not written) or TXYZ"
                        " (the published nested-FNO models: --grid T X Y Z); written as the"
                        " attribute axis_order")
    p.add_argument("--padding", nargs="+", type=int, default=None, metavar="P",
                   help="U-FNO/FNO: padding at the end of each axis (default 8); FNO4d: P1 P2 P3"
                        " P4 on both sides of each axis (default 8 16 16 8)")
    p.add_argument("--output-scaling", nargs=2, type=float, metavar=("SCALE", "OFFSET"),
                   help="physical = raw * SCALE + OFFSET (default: the paper's for the variable)")
    p.add_argument("--input-normalizer", metavar="PICKLE",
                   help="FNO4d: UnitGaussianNormalizer or TimeGaussianNormalizer of the last"
                        " input channel")
    p.add_argument("--output-normalizer", metavar="PICKLE",
                   help="FNO4d: UnitGaussianNormalizer or TimeGaussianNormalizer of the output")
    p.add_argument("--level", metavar="LEVEL",
                   help="FNO4d: the nested chain's level, written as the attribute `level`: %s"
                        % ", ".join(LEVELS))
    args = p.parse_args(argv)
    if args.level is not None and args.level not in LEVELS:
        print("ufno_convert: %s: unknown --level %r (%s)"
              % (os.path.basename(args.checkpoint), args.level, ", ".join(LEVELS)),
              file=sys.stderr)
        return 2
    try:
        check_output(args.output, [args.checkpoint, args.input_normalizer,
                                   args.output_normalizer], "output")
    except ValueError as e:
        print("ufno_convert: %s" % e, file=sys.stderr)
        return 2
    try:
        arch = convert(args.checkpoint, args.output, args.variable, args.grid, args.padding,
                       args.fno, scaling=args.output_scaling,
                       input_normalizer=args.input_normalizer,
                       output_normalizer=args.output_normalizer, level=args.level,
                       axis_order=args.axis_order)
    except ConvertError as e:
        print(e.line(), file=sys.stderr)
        return 1
    if arch.name == FNO4D:
        print("ufno_convert: wrote %s: %s width %d modes %s in_channels %d hidden %d variable %s"
              " normalisers %s%s" % (args.output, arch.name, arch.width,
                                      "x".join(map(str, arch.modes)), arch.in_channels,
                                      arch.hidden, args.variable,
                                      "+".join(n for n, v in (("input", args.input_normalizer),
                                                              ("output", args.output_normalizer))
                                               if v) or "none",
                                      "" if args.level is None else " level " + args.level))
    else:
        print("ufno_convert: wrote %s: %s width %d modes %s layers %d+%d hidden %d variable %s"
              % (args.output, arch.name, arch.width, "x".join(map(str, arch.modes)),
                 arch.n_fourier, arch.n_ufourier, arch.hidden, args.variable))
    return 0


if __name__ == "__main__":
    sys.exit(main())
