#!/usr/bin/python3
"""python/ufno/training/grow_modes.py: a network given more Fourier modes computes the same function (every
corner's old weights land at their own frequencies, the new ones are zero), in float64 against
the reference forward and the training forward, and the shipped network grown reads back the
same; fewer modes, a non-.pt output or a file that is no model get one error line, exit 2, no
output."""
import os
import shutil
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.dirname(HERE)
from ufno.training import grow_modes
from ufno.models import fast_forward as ufno_fast_forward
from ufno.conversion import model_file as ufno_model_file
from ufno.models import net3d as ufno_torch
import forked_run  # (the tests' Python runs, in forks: python/tests/forked_run.py)

from cli_checks import check


def run(*args):
    return forked_run.run([sys.executable, *args], capture_output=True, text=True)


def test_grow_modes():
    torch.manual_seed(0)
    attrs = {"width": 4, "modes": [2, 3, 2], "n_fourier": 2, "n_ufourier": 1, "padding": 2,
             "in_channels": 12, "hidden": 16}
    model = ufno_model_file.net3d_of(attrs, torch.float32).eval()
    for p in model.parameters():  # weights of every size, so a misplaced corner shows
        with torch.no_grad():
            p.copy_(torch.randn_like(p) * 0.3)
    grown, gattrs = grow_modes.grow(model, attrs, [3, 4, 3])
    model, grown = ufno_torch.to_float64(model), ufno_torch.to_float64(grown)  # exact copies
    x = torch.rand(2, 14, 14, 6, 12, dtype=torch.float64)  # padded to U-Net-friendly 16 x 16 x 8
    with torch.no_grad():
        y, yg = model(x), grown(x)
        yf = ufno_fast_forward.forward(grown, x)
    check("grown modes: the same function (float64, reference forward)",
          float((y - yg).abs().max()) < 1e-12 * float(y.abs().max()) + 1e-12,
          float((y - yg).abs().max()))
    check("grown modes: the same function (training forward)",
          float((y - yf).abs().max()) < 1e-9, float((y - yf).abs().max()))
    check("grown modes: attributes name the new modes", gattrs["modes"] == [3, 4, 3]
          and attrs["modes"] == [2, 3, 2], gattrs)
    w = grown.conv1.conv0.weights4
    check("grown modes: weights4 (high X, high Y) has the old block at the end, zeros before",
          w.shape[2:] == (3, 4, 3) and float(w[:, :, 0].abs().max()) == 0
          and float(w[:, :, :, 0].abs().max()) == 0 and float(w[:, :, :, :, 2].abs().max()) == 0
          and torch.equal(w[:, :, 1:, 1:, :2], model.conv1.conv0.weights4))
    # A misplaced high corner is a different function: the check above can fail.
    bad = {k: v.clone() for k, v in grown.state_dict().items()}
    bad["conv1.conv0.weights2"] = torch.roll(bad["conv1.conv0.weights2"], 1, dims=2)
    grown.load_state_dict(bad)
    with torch.no_grad():
        check("a corner at the wrong frequencies changes the output",
              float((model(x) - grown(x)).abs().max()) > 1e-3)
    try:
        grow_modes.grow(model, attrs, [1, 3, 2])
        refused = False
    except ValueError:
        refused = True
    check("fewer modes than the model's are refused", refused)

    work = tempfile.mkdtemp(prefix="ufno_grow_test_")
    try:
        shipped = os.path.join(os.path.dirname(PY), "models", "sg_ufno.h5")
        m0 = ufno_model_file.read_model_file(shipped, dtype=torch.float32)[1]["modes"]
        more = [str(int(m) + 1) for m in m0]  # one more mode per axis than the shipped network
        out = os.path.join(work, "g.pt")
        p = run("-m", "ufno.grow_modes", shipped, out, "--modes", *more)
        check("grow_modes.py writes an init file", p.returncode == 0 and os.path.exists(out),
              p.stderr[-300:])
        if p.returncode == 0:
            a, _ = ufno_model_file.read_model_file(shipped, dtype=torch.float64)
            g, ga = ufno_model_file.read_model_file(out, dtype=torch.float64)
            xs = torch.rand(1, 24, 48, 24, 12, dtype=torch.float64)
            with torch.no_grad():
                d = float((a(xs) - g(xs)).abs().max())
            check("the shipped SG network grown to modes %s: same output (float32 weights)"
                  % " ".join(more), d < 1e-6 and ga["modes"] == [int(m) for m in more], d)
        fewer = [str(int(m0[0]) - 1)] + more[1:]
        for args, why in ((["--modes"] + fewer, "fewer than"),
                          (["--modes", "0"] + more[1:], "each in [1, 64]")):
            bad_out = os.path.join(work, "bad.pt")
            p = run("-m", "ufno.grow_modes", shipped, bad_out, *args)
            check("grow_modes.py %s: one error line, exit 2, no output" % " ".join(args),
                  p.returncode == 2 and why in p.stderr and "Traceback" not in p.stderr
                  and not os.path.exists(bad_out), p.stderr[-300:])
        p = run("-m", "ufno.grow_modes", shipped, os.path.join(work, "g.h5"),
                "--modes", *more)
        check("grow_modes.py to a non-.pt output is refused", p.returncode == 2
              and "*.pt" in p.stderr and not os.path.exists(os.path.join(work, "g.h5")))
        junk = os.path.join(work, "junk.h5")
        with open(junk, "wb") as f:
            f.write(b"not a model")
        p = run("-m", "ufno.grow_modes", junk, os.path.join(work, "j.pt"),
                "--modes", *more)
        check("grow_modes.py on a file that is no model: one error line, exit 2", p.returncode == 2
              and "Traceback" not in p.stderr and not os.path.exists(os.path.join(work, "j.pt")),
              p.stderr[-300:])
    finally:
        shutil.rmtree(work, ignore_errors=True)

