#!/usr/bin/python3
"""Read a ufno model file (docs/model-format.md) back into the PyTorch re-implementation.

The inverse of ufno_convert.write_model_file: the datasets are the state_dict entries under their
own names (complex spectral weights as a trailing (re, im) axis), the attributes give the
architecture and the de-scaling physical = raw * output_scale + output_offset. Used to check the
C++ prediction of a shipped model against PyTorch on the same weights. A file of architecture FNO4D
(the 4-D FNO of nested FNO) reads into fno4d_torch.NormalizedFNO4d: the FNO4d with its optional
input and output normalisers.

write_init_file saves a U-FNO / FNO model file's weights and attributes as a PyTorch file
(INIT.pt), which read_model_file also reads, without h5py: ufno.train --init on a machine whose
Python has PyTorch but not h5py (the lent GPU machine).
"""
import json
import os

import numpy as np
import torch

from ufno.models import fno4d as fno4d_torch
from ufno.models import net3d as ufno_torch


def _attr_str(v):
    return v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)


def _plain(v):
    """An attribute as a plain Python value (torch.load's safe mode refuses numpy objects)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v.item() if isinstance(v, np.generic) else v


def write_init_file(model_path, out_path):
    """model_path's U-FNO / FNO weights and attributes as a PyTorch file for read_model_file."""
    model, attrs = read_model_file(model_path, dtype=torch.float32)
    if attrs.get("architecture") == "FNO4D":
        raise ValueError("an FNO4D model file has no training path here")
    save_init_file(model, attrs, out_path)


def save_init_file(model, attrs, out_path):
    """A U-FNO / FNO and its model-file attributes as the PyTorch file read_model_file reads
    (written to a temporary name and renamed)."""
    tmp = "%s.tmp.%d" % (out_path, os.getpid())
    # The attributes as JSON text: PyTorch 1.13's safe loader refuses pickled floats.
    torch.save({"ufno_init": 1, "attrs_json": json.dumps({k: _plain(v) for k, v in attrs.items()}),
                "state_dict": model.state_dict()}, tmp)
    os.replace(tmp, out_path)


def net3d_of(attrs, dtype):
    """The U-FNO / FNO a model file's attributes describe, random weights, in dtype."""
    model = ufno_torch.Net3d(width=int(attrs["width"]), modes=tuple(int(m) for m in attrs["modes"]),
                             n_fourier=int(attrs["n_fourier"]), n_ufourier=int(attrs["n_ufourier"]),
                             padding=int(np.asarray(attrs["padding"]).flat[0]),
                             in_channels=int(attrs["in_channels"]), hidden=int(attrs["hidden"]))
    return ufno_torch.to_float64(model) if dtype == torch.float64 else model


def _read_init_file(path, dtype):
    try:
        d = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # a PyTorch without weights_only
        d = torch.load(path, map_location="cpu")
    if not isinstance(d, dict) or d.get("ufno_init") != 1:
        raise ValueError("%s: not a file of ufno.conversion.model_file.write_init_file" % path)
    attrs = json.loads(d["attrs_json"])
    model = net3d_of(attrs, dtype)
    model.load_state_dict({k: v.to(dtype) if v.is_floating_point() else v
                           for k, v in d["state_dict"].items()})
    model.eval()
    return model, attrs


def read_model_file(path, dtype=torch.float64):
    """(model in eval mode, attrs dict) for the model file at `path` (or a write_init_file file,
    by its .pt suffix)."""
    if str(path).endswith(".pt"):
        return _read_init_file(path, dtype)
    import h5py  # here only: a .pt init file needs PyTorch alone
    with h5py.File(path, "r") as f:
        attrs = {k: (_attr_str(v) if isinstance(v, (bytes, np.bytes_, str)) else v)
                 for k, v in f.attrs.items()}
        arrays = {}
        f.visititems(lambda name, obj: arrays.__setitem__(name.replace("/", "."), obj[()])
                     if isinstance(obj, h5py.Dataset) else None)
    if attrs.get("architecture") == "FNO4D":
        return _read_fno4d(attrs, arrays, dtype), attrs
    model = net3d_of(attrs, dtype)
    _load_arrays(model, arrays)
    return model, attrs


def _load_arrays(model, arrays):
    sd = model.state_dict()
    for key, ref in sd.items():
        a = arrays[key]
        if ref.is_complex():
            t = torch.view_as_complex(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)))
        else:
            t = torch.from_numpy(np.asarray(a))
        sd[key] = t.to(ref.dtype).reshape(ref.shape)
    model.load_state_dict(sd)
    model.eval()


def _read_fno4d(attrs, arrays, dtype):
    net = fno4d_torch.FNO4d(width=int(attrs["width"]),
                            modes=tuple(int(m) for m in attrs["modes"]),
                            in_channels=int(attrs["in_channels"]),
                            padding=tuple(int(p) for p in attrs["padding"]),
                            hidden=int(attrs["hidden"]))
    if dtype == torch.float64:
        net = fno4d_torch.to_float64(net)
    _load_arrays(net, arrays)
    norms = []
    order = attrs.get("axis_order", "XYZT")
    for label in ("input_normalizer", "output_normalizer"):
        if label + ".mean" not in arrays:
            norms.append(None)
        elif attrs.get(label + "_kind", "pointwise") == "time":
            # One value per report time, shaped to broadcast along the time axis of the
            # (B, A1, A2, A3, A4) channel or output it applies to.
            shape = [1, 1, 1, 1]
            shape[order.index("T")] = -1
            norms.append(fno4d_torch.TimeGaussianNormalizer(
                torch.from_numpy(arrays[label + ".mean"]).reshape(shape),
                torch.from_numpy(arrays[label + ".std"]).reshape(shape)))
        else:
            norms.append(fno4d_torch.UnitGaussianNormalizer(
                torch.from_numpy(arrays[label + ".mean"]), torch.from_numpy(arrays[label + ".std"]),
                float(attrs["normalizer_eps"])))
    model = fno4d_torch.NormalizedFNO4d(net, *norms).eval()
    model.axis_order = order
    return model


def predict(model, attrs, x):
    """Physical prediction (B, X, Y, T) of the encoded input x (B, X, Y, T, C), as numpy. For an
    FNO4D, x is (B, A1, A2, A3, T, C) before normalisation and the result (B, A1, A2, A3, T) is
    decoded by the output normaliser (if the file has one)."""
    with torch.no_grad():
        p = next(model.parameters())
        raw = model(torch.from_numpy(np.asarray(x)).to(p.dtype)).numpy()
    if attrs.get("architecture") == "FNO4D":
        return raw
    return raw * float(attrs["output_scale"]) + float(attrs["output_offset"])
