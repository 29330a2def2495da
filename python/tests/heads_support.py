"""What the KPI-head tests share: the head kinds (HEADS), synthetic encoded inputs, a data set
file, one training run with its first checks, and the check that a head leaves the model's own
arrays alone."""
import os

import h5py
import numpy as np

from cli_checks import check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DP_MODEL = os.path.join(ROOT, "tests", "data", "ufno_small.h5")  # a dP model file
SG_MODEL = os.path.join(ROOT, "tests", "data", "fno_small.h5")   # an SG model file

# kind: (task module, the variable of its model file, the arguments it needs besides
# --data, --model and --out).
HEADS = {
    "max_dp": ("ufno.max_dp_head", "dP", []),
    "plume_radius": ("ufno.plume_radius_head", "SG", []),
    "co2_mass": ("ufno.co2_mass_head", "SG", ["--flow-kpis", "kpis.csv"]),
    "dp_envelope": ("ufno.dp_envelope_head", "dP", []),
    "dp_field_scale": ("ufno.dp_field_scale_head", "dP", []),
}


def encoded(rng, n, X, Y, T=None):
    """Encoded inputs (N, X, Y[, T], 12): ln k / 15 in (0.1, 0.5), ln kz one less, porosity in
    (0.1, 0.3), the top two layers perforated, the five scalars in (0, 1); constant in time."""
    x = np.zeros((n, X, Y, 12), np.float32)
    x[..., 0] = rng.uniform(0.1, 0.5, (n, X, Y))
    x[..., 1] = x[..., 0] - 0.1
    x[..., 2] = rng.uniform(0.1, 0.3, (n, X, Y))
    x[:, :2, 0, 3] = 1
    x[..., 4:9] = rng.uniform(0, 1, (n, 1, 1, 5))
    return x if T is None else np.repeat(x[:, :, :, None, :], T, axis=3)


def write_data(path, inputs, **fields):
    """An assembled data set: /input, the given fields, /seed 1 and /index 0..N-1."""
    with h5py.File(path, "w") as h:
        h["input"] = inputs
        for k, v in fields.items():
            h[k] = v
        h["seed"] = np.ones(len(inputs), np.int64)
        h["index"] = np.arange(len(inputs), dtype=np.int64)
    return path


def train(cli, args, out, what="training writes the model file with its head"):
    """One training run (cli.run(args + --out OUT)): exit 0 and OUT written."""
    p = cli.run(args + ["--out", out])
    check(what, p.returncode == 0 and os.path.exists(out), p.stderr[-500:])
    return p


def check_model_kept(model, out):
    """The model's own arrays and attributes are in OUT unchanged (the head is added only)."""
    with h5py.File(model) as a, h5py.File(out) as b:
        same = all(np.array_equal(a[k][()], b[k][()]) for k in a if isinstance(
            a[k], h5py.Dataset)) and dict(a.attrs).keys() == dict(b.attrs).keys()
    check("the model's own arrays and attributes are unchanged", same)


def check_envelope_group(out, group, model, columns, outputs, hidden):
    """A head that reads the network's envelope (dP-envelope, dP field-scale): one output per
    radial column, the columns it reads, the digest of the model's network; the copy's own
    digest is the model's (a head sits in a group)."""
    from ufno.heads import common
    with h5py.File(out) as b:
        g = b[group]
        check("head attributes: one output per radial column, the columns read, the digest of "
              "the model's network",
              g["member0/fc2.weight"].shape == (outputs, hidden) and
              list(g.attrs["envelope_columns"]) == list(columns) and
              g.attrs["network_digest"] == common.network_digest(model) and
              len(g.attrs["features"].split(",")) == 32 + len(columns))
    check("the copy's network digest is the model's (the head is in a group)",
          common.network_digest(out) == common.network_digest(model))
