#!/usr/bin/python3
"""Convert a PyTorch U-FNO / FNO checkpoint into the ufno HDF5 model file read by the C++ code.

Usage:
    ufno_convert.py CHECKPOINT OUT.h5 --variable SG|dP [--fno] [--grid X Y T] [--padding P]

CHECKPOINT is either a state_dict (keys `conv1.*`, optionally under a `module.` prefix) or a whole
pickled Net3d as published (torch.save(model)). Pickled models refer to classes of a module `ufno`
(or `__main__`); those are replaced by empty nn.Module stand-ins while unpickling, so neither the
reference code nor python/ufno_torch.py needs to be importable. The pickle is otherwise trusted
exactly as torch.load trusts it: convert only checkpoints you would also torch.load.

On any error: one line `ufno_convert: <file>: <what> (<key>)` on stderr, exit status 1, and no
output file (the file is written to OUT.h5.tmp and renamed only when complete).
The file format is described in python/README.md and in write_model_file() below.
"""

import argparse
import os
import pickle
import re
import sys
import types
import warnings

import h5py
import numpy as np
import torch

FORMAT = "ufno-model"
FORMAT_VERSION = 1
LEAKY_RELU_SLOPE = 0.1
BATCHNORM_EPS = 1e-5
PREFIX = "conv1."

# (scale, offset, units): physical value = raw network output * scale + offset.
# The dP pair is the z-score of the U-FNO paper's published dP model (Wen et al. 2022): its
# reference code turns the network output into bar as out * 18.772821433027488 +
# 4.172939172019009 (/work/shared/ufno-reference.md, "Outputs"). This table is the only copy in
# the Python code (make_fixtures.py and tests read it from here; docs/model-format.md cites it).
VARIABLES = {
    "dP": (18.772821433027488, 4.172939172019009, "bar"),
    "SG": (1.0, 0.0, "1"),
}

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

_STANDIN_MODULES = ("ufno", "__main__")
_standin_classes = {}


def _standin_class(name):
    """An empty nn.Module subclass named like the pickled class; the pickled __dict__ (the
    submodules, parameters and buffers) is restored into it by nn.Module.__setstate__."""
    cls = _standin_classes.get(name)
    if cls is None:
        def forward(self, *args):
            raise RuntimeError("stand-in module %s cannot be run" % name)
        cls = type(name, (torch.nn.Module,), {"forward": forward, "__module__": __name__})
        _standin_classes[name] = cls
    return cls


def _module_getattr(name):
    # Module-level __getattr__ for the stand-in `ufno` and for `__main__`: class names only, so
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
    """While active, `import ufno` gives a module whose every attribute is a stand-in class, and
    names missing from `__main__` resolve to stand-ins too (PEP 562 module __getattr__).

    Needed because torch 1.13.0 (Debian 12's python3-torch) ignores torch.load's pickle_module
    argument unless weights_only=True (`else: pickle_module = pickle` in torch.load; fixed in
    1.13.1). Later versions use _StandinUnpickler directly. Everything is restored on exit.
    """

    _MISSING = object()

    def __enter__(self):
        fake = types.ModuleType("ufno")
        fake.__getattr__ = _module_getattr
        self.previous_ufno = sys.modules.get("ufno", self._MISSING)
        sys.modules["ufno"] = fake
        self.main = sys.modules.get("__main__")
        if self.main is not None:
            self.previous_getattr = self.main.__dict__.get("__getattr__", self._MISSING)
            self.main.__getattr__ = _module_getattr
        return self

    def __exit__(self, *exc):
        if self.previous_ufno is self._MISSING:
            sys.modules.pop("ufno", None)
        else:
            sys.modules["ufno"] = self.previous_ufno
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


def write_model_file(out_path, sd, arch, variable, grid, padding, source, scaling=None):
    """Write the model file atomically (OUT.tmp, then rename). Deterministic: sorted keys, no
    timestamps, fixed attribute order, so equal weights give byte-identical files. `scaling`
    (scale, offset) replaces the paper's de-scaling of the variable (physical = raw * scale +
    offset), for models trained on other data."""
    scale, offset, units = VARIABLES[variable]
    if scaling is not None:
        scale, offset = float(scaling[0]), float(scaling[1])
    tmp = out_path + ".tmp"
    sd = dict(sd)
    for key in arch.expected_shapes():
        if key.endswith(".num_batches_tracked") and key not in sd:
            sd[key] = torch.tensor(0, dtype=torch.int64)
    try:
        with h5py.File(tmp, "w", libver="earliest", track_order=False) as f:
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
        os.replace(tmp, out_path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, (OSError, ValueError, TypeError, UnicodeError)):
            raise ConvertError(os.path.basename(out_path), "cannot write model file: %s" % e)
        raise


def convert(checkpoint, out_path, variable, grid=(96, 200, 24), padding=8, fno=False,
            state_dict=None, source=None, log=sys.stderr, scaling=None):
    """Convert `checkpoint` (or an in-memory `state_dict`) and write `out_path`.

    Returns the Architecture. Raises ConvertError. `source` defaults to the checkpoint's
    basename.
    """
    name = os.path.basename(checkpoint) if checkpoint else (source or "<state_dict>")
    if variable not in VARIABLES:
        raise ConvertError(name, "unknown variable %r (SG or dP)" % variable)
    if state_dict is None:
        state_dict = load_state_dict(checkpoint)
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
                                description="Convert a U-FNO/FNO PyTorch checkpoint to HDF5.")
    p.add_argument("checkpoint")
    p.add_argument("output")
    p.add_argument("--variable", required=True, choices=sorted(VARIABLES))
    p.add_argument("--fno", action="store_true",
                   help="drop the U-Nets and write a plain FNO")
    p.add_argument("--grid", nargs=3, type=int, default=[96, 200, 24], metavar=("X", "Y", "T"),
                   help="unpadded grid (default 96 200 24)")
    p.add_argument("--padding", type=int, default=8, help="padding per axis (default 8)")
    p.add_argument("--output-scaling", nargs=2, type=float, metavar=("SCALE", "OFFSET"),
                   help="physical = raw * SCALE + OFFSET (default: the paper's for the variable)")
    args = p.parse_args(argv)
    try:
        arch = convert(args.checkpoint, args.output, args.variable, args.grid, args.padding,
                       args.fno, scaling=args.output_scaling)
    except ConvertError as e:
        print(e.line(), file=sys.stderr)
        return 1
    print("ufno_convert: wrote %s: %s width %d modes %s layers %d+%d hidden %d variable %s"
          % (args.output, arch.name, arch.width, "x".join(map(str, arch.modes)),
             arch.n_fourier, arch.n_ufourier, arch.hidden, args.variable))
    return 0


if __name__ == "__main__":
    sys.exit(main())
