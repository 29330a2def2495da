#!/usr/bin/python3
"""ufno.train on a tiny synthetic data set (no flow needed): the paper's metrics on hand-made
arrays, the deterministic split, two epochs then a resumed third (the log continues, the
checkpoint advances), the export of a model file whose attributes carry the dP scaling, a warm
start from that file, and the fast training forward against the reference network in float64
(outputs and every parameter's gradient, Nyquist bin included)."""
import csv
import json
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
from ufno.training import train as train_ufno
from ufno.models import fast_forward as ufno_fast_forward
from ufno.models import net3d as ufno_torch
import forked_run  # (the tests' Python runs, in forks: python/tests/forked_run.py)

from cli_checks import check


def fast_forward_matches(modes, fno, shape):
    """Largest relative difference, over the output and every parameter gradient, between the
    reference network and ufno_fast_forward.forward, in float64 with random weights."""
    gen = torch.Generator().manual_seed(7)
    model = ufno_torch.Net3d(width=5, modes=modes, n_fourier=6 if fno else 3,
                             n_ufourier=0 if fno else 3, hidden=8)
    ufno_torch.to_float64(ufno_torch.init_random_weights(model, gen)).train()
    params = list(model.parameters())
    for q in params:
        q.requires_grad_(True)
    x = torch.rand(shape, dtype=torch.float64, generator=gen)
    worst = 0.0
    outs = [model(x), ufno_fast_forward.forward(model, x)]
    grads = [torch.autograd.grad((o * o).sum(), params) for o in outs]
    for a, b in [(outs[0], outs[1])] + list(zip(grads[0], grads[1])):
        worst = max(worst, float((a - b).norm() / a.norm().clamp_min(1e-300)))
    return worst


def test_train():
    for modes, fno, shape in [((2, 3, 2), False, (2, 8, 16, 8, 12)),
                              ((3, 2, 9), False, (1, 8, 8, 8, 12)),    # mt = T/2 + 1: Nyquist
                              ((4, 5, 3), True, (2, 7, 9, 5, 12))]:     # odd extents (FNO)
        err = fast_forward_matches(modes, fno, shape)
        check("fast forward = reference, modes %s%s" % (modes, " FNO" if fno else ""), err < 1e-10, err)
    # Metrics on arrays small enough to work out by hand.
    true = np.zeros((1, 1, 2, 1))
    true[0, 0, 0, 0] = 0.5
    pred = np.array([0.4, 0.02]).reshape(1, 1, 2, 1)
    check("plume error: cells where true != 0 or |pred| > 0.01",
          abs(train_ufno.plume_error(pred, true) - (0.1 + 0.02) / 2) < 1e-12)
    t = np.array([2.0, -4.0]).reshape(1, 1, 2, 1)
    pr = np.array([1.0, -4.0]).reshape(1, 1, 2, 1)
    check("pressure error: |pred - true| / max|true| at that time",
          abs(train_ufno.pressure_error(pr, t, np.ones_like(t)) - (0.25 + 0) / 2) < 1e-12)
    # Spurious gas: predicted gas where Flow has none, relative to Flow's gas (0.2 / 0.5).
    tg = torch.tensor([0.5, 0.0, 0.0]).reshape(1, 1, 3, 1)
    pg = torch.tensor([0.4, 0.15, -0.05]).reshape(1, 1, 3, 1)
    check("spurious gas: |pred| where Flow has no gas over Flow's gas",
          abs(float(train_ufno.spurious_gas(pg, tg, torch.ones_like(tg))) - 0.2 / 0.5) < 1e-6)
    check("spurious gas: none for a perfect prediction",
          float(train_ufno.spurious_gas(tg, tg, torch.ones_like(tg))) == 0.0)
    # Gas volume: sum(weight SG) against Flow's over two times: volumes 0.5, 1.0 (Flow) and
    # 0.4, 1.0 (ufno): 0.1 / 1.5.
    wv = torch.tensor([1.0, 3.0]).reshape(1, 1, 2)
    tv = torch.tensor([[0.2, 0.4], [0.1, 0.2]]).reshape(1, 1, 2, 2)
    pv = torch.tensor([[0.1, 0.4], [0.1, 0.2]]).reshape(1, 1, 2, 2)
    check("gas volume error: relative error of sum(pore volume x SG) over the times",
          abs(float(train_ufno.gas_volume_error(pv, tv, wv)) - 0.1 / 1.5) < 1e-6)
    # Peak dP: largest reservoir value per time, 10 vs 8 bar and 4 vs 4 bar; the larger value
    # outside the reservoir (mask 0) does not count: (0.25 + 0) / 2.
    tp = torch.tensor([[8.0, 4.0], [1.0, 2.0], [50.0, 50.0]]).reshape(1, 1, 3, 2)
    pp = torch.tensor([[10.0, 3.0], [2.0, 4.0], [0.0, 0.0]]).reshape(1, 1, 3, 2)
    mp = torch.tensor([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]).reshape(1, 1, 3, 2)
    check("peak dP error: largest reservoir value per time, relative, averaged",
          abs(float(train_ufno.peak_pressure_error(pp, tp, mp)) - 0.125) < 1e-6)
    check("maximum dP error: largest over cells and times (10 vs 8)",
          abs(train_ufno.max_pressure_error(pp.numpy(), tp.numpy(), mp.numpy()) - 0.25) < 1e-12)
    # Front radius: the farthest radial cell above 0.01 in any layer; late times only.
    r_outer = np.array([10.0, 20.0, 40.0, 80.0])
    tf = np.zeros((1, 2, 4, 2))
    pf = np.zeros((1, 2, 4, 2))
    tf[0, 0, :2, :] = 0.3      # Flow's front at cell 1 (20 m), both times
    pf[0, 1, :3, 1] = 0.3      # ufno's at cell 2 (40 m) at the late time, in the other layer
    pf[0, 0, 3, 0] = 0.3       # a speck at the early time, which is not scored
    check("front radius error: farthest cell above the threshold, late times only",
          abs(train_ufno.front_radius_error(pf, tf, r_outer, np.array([False, True])) - 1.0)
          < 1e-12)
    x = torch.ones(1, 2, 3, 1)
    check("loss is zero for a perfect prediction", float(train_ufno.paper_loss(x, x, x)) == 0.0)
    check("split is deterministic", train_ufno.split_of(1, 5) == train_ufno.split_of(1, 5))

    work = tempfile.mkdtemp(prefix="ufno_train_test_")
    try:
        rng = np.random.default_rng(0)
        n, X, Y, T = 12, 8, 16, 8
        data = os.path.join(work, "data.h5")
        with h5py.File(data, "w") as f:
            inp = rng.random((n, X, Y, T, 12), dtype=np.float32)
            inp[:, -2, :, :, 0] = 0  # inactive bottom rows
            f["input"] = inp
            f["SG"] = rng.random((n, X, Y, T), dtype=np.float32)
            f["dP"] = 10 * rng.random((n, X, Y, T), dtype=np.float32) + 3
            f["seed"] = np.ones(n, dtype=np.int64)
            f["index"] = np.arange(n, dtype=np.int64)
        run = os.path.join(work, "run")
        cmd = [sys.executable, "-m", "ufno.train", "--data", data,
               "--variable", "dP", "--run", run, "--width", "4", "--modes", "2", "2", "2",
               "--threads", "1", "--batch", "4"]
        p = forked_run.run(cmd + ["--epochs", "2", "--keep-epochs"], capture_output=True, text=True)
        check("two epochs run", p.returncode == 0, p.stderr[-500:])
        p = forked_run.run(cmd + ["--epochs", "3", "--keep-epochs",
                                  "--export", os.path.join(work, "dp.h5")],
                           capture_output=True, text=True)
        check("a rerun resumes", "resuming after epoch 2" in p.stderr, p.stderr[-500:])
        rows = list(csv.DictReader(open(os.path.join(run, "log.csv"))))
        check("log has epochs 1, 2, 3", [r["epoch"] for r in rows] == ["1", "2", "3"], rows)
        check("checkpoint at epoch 3", torch.load(os.path.join(run, "checkpoint.pt"))["epoch"] == 3)
        kept = [torch.load(os.path.join(run, "ckpt_epoch%d.pt" % e))["epoch"] for e in (1, 2, 3)]
        check("--keep-epochs keeps each epoch's own checkpoint across the resume", kept == [1, 2, 3],
              kept)
        exp = [sys.executable, "-m", "ufno.export_checkpoint"]
        pe = forked_run.run(exp + [run, os.path.join(work, "last.h5"), "--last", "--grid",
                                   str(X), str(Y), str(T)], capture_output=True, text=True)
        check("export_checkpoint writes the last epoch", pe.returncode == 0
              and "(epoch 3)" in pe.stderr, pe.stderr[-300:])
        pe = forked_run.run(exp + [run, os.path.join(work, "e2.h5"), "--epoch", "2", "--grid",
                                   str(X), str(Y), str(T)], capture_output=True, text=True)
        check("export_checkpoint --epoch 2 writes epoch 2", pe.returncode == 0
              and "(epoch 2)" in pe.stderr, pe.stderr[-300:])
        pe = forked_run.run(exp + [run, os.path.join(work, "e9.h5"), "--epoch", "9"],
                            capture_output=True, text=True)
        check("export_checkpoint --epoch of an epoch not kept is one error line, exit 2, no file",
              pe.returncode == 2 and "ckpt_epoch9.pt" in pe.stderr and "Traceback" not in pe.stderr
              and not os.path.exists(os.path.join(work, "e9.h5")), pe.stderr[-300:])
        with open(os.path.join(work, "keep.h5"), "wb") as f:
            f.write(b"an earlier export")
        for bad in ("0", "-3", "two", "99999999999999999999"):
            pe = forked_run.run(exp + [run, os.path.join(work, "keep.h5"), "--epoch", bad],
                                capture_output=True, text=True)
            with open(os.path.join(work, "keep.h5"), "rb") as f:
                kept_out = f.read()
            check("export_checkpoint --epoch %s is refused, exit 2, the existing output untouched"
                  % bad, pe.returncode == 2 and "Traceback" not in pe.stderr
                  and kept_out == b"an earlier export", pe.stderr[-300:])
        pe = forked_run.run(exp + [run, os.path.join(work, "e1.h5"), "--epoch", "1", "--last"],
                            capture_output=True, text=True)
        check("export_checkpoint refuses --epoch with --last", pe.returncode == 2
              and not os.path.exists(os.path.join(work, "e1.h5")), pe.stderr[-300:])
        pe2 = forked_run.run(exp + [os.path.join(work, "no_run"), os.path.join(work, "x.h5")],
                             capture_output=True, text=True)
        check("export_checkpoint without a checkpoint is one error line, exit 2, no file",
              pe2.returncode == 2 and "not a ufno.train checkpoint" in pe2.stderr
              and "Traceback" not in pe2.stderr and not os.path.exists(os.path.join(work, "x.h5")),
              pe2.stderr[-300:])
        # --schedule cosine-time: the rate falls to 0 over the given training minutes, then the
        # run stops, mid-epoch if need be, scores and saves; --slim writes the small file a lent
        # GPU machine returns, which export_checkpoint reads.
        slim = os.path.join(work, "slim.pt")
        pc = forked_run.run(cmd[:cmd.index("--run")] + [
            "--run", os.path.join(work, "cos"), "--width", "4", "--modes", "2", "2", "2",
            "--epochs", "1000", "--schedule", "cosine-time",
            "--cosine-minutes", "0.05", "--slim", slim], capture_output=True, text=True)
        crows = list(csv.DictReader(open(os.path.join(work, "cos", "log.csv"))))
        check("cosine-time: stops when its minutes are spent, well before --epochs",
              pc.returncode == 0 and 1 <= len(crows) < 1000,
              (pc.stderr[-300:], len(crows)))
        check("cosine-time: every logged epoch trained (none empty after the schedule ends)",
              all(float(r["train_loss"]) > 0 for r in crows), crows[-2:])
        sl = torch.load(slim)
        ck = torch.load(os.path.join(work, "cos", "checkpoint.pt"))
        # The checkpoint keeps the seconds trained (the resume below trains no further). No
        # floor on them: a loaded machine measures less, and no test asserts on elapsed time.
        check("cosine-time: the training seconds are kept for a resume",
              float(ck.get("train_seconds", 0)) > 0, ck.get("train_seconds"))
        pr = forked_run.run(cmd[:cmd.index("--run")] + [
            "--run", os.path.join(work, "cos"), "--width", "4", "--modes", "2", "2", "2",
            "--epochs", "1000", "--schedule", "cosine-time", "--cosine-minutes", "0.05"],
            capture_output=True, text=True)
        check("cosine-time: a resume after the schedule is spent trains nothing",
              pr.returncode == 0 and "minutes are spent" in pr.stderr
              and len(list(csv.DictReader(open(os.path.join(work, "cos", "log.csv"))))) == len(crows),
              pr.stderr[-300:])
        check("--slim: best and last weights, scaling, arguments, no optimiser",
              sl["slim"] == 1 and sl["best"]["model"] is not None and sl["model"] is not None
              and "optimizer" not in sl and sl["epoch"] == len(crows)
              and sl["args"]["schedule"] == "cosine-time", sorted(sl))
        for extra, tag in (([], "best"), (["--last"], "last")):
            pe = forked_run.run(exp + [slim, os.path.join(work, "slim_%s.h5" % tag), "--grid",
                                       str(X), str(Y), str(T)] + extra,
                                capture_output=True, text=True)
            check("export_checkpoint reads a slim file (%s epoch)" % tag, pe.returncode == 0
                  and os.path.exists(os.path.join(work, "slim_%s.h5" % tag)), pe.stderr[-300:])
        sl["model"] = None
        torch.save(sl, slim)
        pe = forked_run.run(exp + [slim, os.path.join(work, "slim_none.h5"), "--last"],
                            capture_output=True, text=True)
        check("export_checkpoint --last of a slim file without the last weights is refused",
              pe.returncode == 2 and "best epoch's weights only" in pe.stderr
              and not os.path.exists(os.path.join(work, "slim_none.h5")), pe.stderr[-300:])
        pe = forked_run.run(exp + [slim, os.path.join(work, "slim_e.h5"), "--epoch", "1"],
                            capture_output=True, text=True)
        check("export_checkpoint --epoch of a slim file is refused", pe.returncode == 2
              and "needs a run directory" in pe.stderr, pe.stderr[-300:])
        for bad in (work, os.path.join(work, "no_dir", "s.pt")):
            pb = forked_run.run(cmd[:cmd.index("--run")] + [
                "--run", os.path.join(work, "slimbad"), "--slim", bad],
                capture_output=True, text=True)
            check("--slim %s is one error line, exit 2, before any training" % bad,
                  pb.returncode == 2 and "--slim" in pb.stderr and "Traceback" not in pb.stderr
                  and not os.path.exists(os.path.join(work, "slimbad", "log.csv")),
                  pb.stderr[-300:])
        for bad in ("0", "nan", "-1"):
            pb = forked_run.run(cmd[:cmd.index("--run")] + [
                "--run", os.path.join(work, "cosbad"), "--schedule", "cosine-time",
                "--cosine-minutes", bad], capture_output=True, text=True)
            check("--cosine-minutes %s is one error line, exit 2" % bad, pb.returncode == 2
                  and "--cosine-minutes" in pb.stderr and "Traceback" not in pb.stderr,
                  pb.stderr[-300:])
        # average_models: the mean of every floating-point array; a file of another
        # architecture or scaling is refused with one line and leaves no output.
        from ufno.training import average_models
        avg = os.path.join(work, "avg.h5")
        shifted = os.path.join(work, "shifted.h5")
        shutil.copy(os.path.join(work, "dp.h5"), shifted)
        with h5py.File(shifted, "r+") as fs:
            fs.visititems(lambda name, o: o.write_direct(o[()] + np.float32(1.0) + o[()])
                          if isinstance(o, h5py.Dataset) and o.dtype.kind == "f" else None)
        pa = forked_run.run([sys.executable, "-m", "ufno.average_models",
                             avg, os.path.join(work, "dp.h5"), shifted,
                             "--source", "mean of two"], capture_output=True, text=True)
        with h5py.File(avg, "r") as fa, h5py.File(os.path.join(work, "dp.h5"), "r") as f1, \
                h5py.File(shifted, "r") as f2:
            names = [k for k in f1 if isinstance(f1[k], h5py.Dataset) and f1[k].dtype.kind == "f"]
            worst = max(float(np.abs(fa[k][()] - (f1[k][()].astype(np.float64) + f2[k][()]) / 2).max())
                        for k in names)
            check("average_models: every array is the mean of the files' (%d arrays)" % len(names),
                  pa.returncode == 0 and names and worst < 1e-6, (pa.stderr[-300:], worst))
            check("average_models: attributes kept, source replaced",
                  fa.attrs["source"] == b"mean of two"
                  and fa.attrs["output_scale"] == f1.attrs["output_scale"], dict(fa.attrs))
        # A maximum-dP head in the first file is kept as it is, never averaged (the second
        # file has none, or another one).
        headed = os.path.join(work, "headed.h5")
        shutil.copy(os.path.join(work, "dp.h5"), headed)
        with h5py.File(headed, "r+") as fh:
            fh["max_dp_head/feature_mean"] = np.arange(3.0)
            fh["max_dp_head"].attrs["members"] = np.int32(1)
            fh["plume_radius_head/feature_std"] = np.arange(4.0)
            fh["dp_field_scale_head/feature_mean"] = np.arange(5.0)
            fh["dp_field_scale_head"].attrs["network_digest"] = "0123456789abcdef"
            fh["dp_envelope_head/feature_mean"] = np.arange(6.0)
            fh["training_profile/mean"] = np.arange(7.0)
        avg2 = os.path.join(work, "avg2.h5")
        average_models.average(avg2, [headed, shifted])
        with h5py.File(avg2, "r") as fa:
            check("average_models: the first file's maximum-dP head is copied, not averaged",
                  "max_dp_head" in fa and list(fa["max_dp_head/feature_mean"][()]) == [0, 1, 2]
                  and int(fa["max_dp_head"].attrs["members"]) == 1)
            check("average_models: the first file's plume-radius head is copied, not averaged",
                  "plume_radius_head" in fa
                  and list(fa["plume_radius_head/feature_std"][()]) == [0, 1, 2, 3])
            check("average_models: the first file's dP field-scale head is copied, not averaged",
                  "dp_field_scale_head" in fa
                  and list(fa["dp_field_scale_head/feature_mean"][()]) == [0, 1, 2, 3, 4])
        # export_checkpoint --heads-from: the heads of the case alone are copied, the heads
        # that read the network's output are not; a model of the other variable is refused.
        hx = os.path.join(work, "with_heads.h5")
        pe = forked_run.run(exp + [run, hx, "--grid", str(X), str(Y), str(T),
                                   "--heads-from", headed], capture_output=True, text=True)
        with h5py.File(hx, "r") as fh:
            check("export_checkpoint --heads-from copies what reads the case alone (maximum-dP "
                  "head, a dP-envelope head without a network digest, the training profile)",
                  pe.returncode == 0 and "max_dp_head" in fh
                  and list(fh["max_dp_head/feature_mean"][()]) == [0, 1, 2]
                  and list(fh["dp_envelope_head/feature_mean"][()]) == [0, 1, 2, 3, 4, 5]
                  and list(fh["training_profile/mean"][()]) == [0, 1, 2, 3, 4, 5, 6]
                  and "dp_field_scale_head" not in fh and "plume_radius_head" not in fh,
                  pe.stderr[-300:])
        # An envelope head that reads a network's envelope (its digest) stays behind.
        with h5py.File(headed, "r+") as fh:
            fh["dp_envelope_head"].attrs["network_digest"] = "0123456789abcdef"
        hy = os.path.join(work, "with_heads2.h5")
        pe = forked_run.run(exp + [run, hy, "--grid", str(X), str(Y), str(T),
                                   "--heads-from", headed], capture_output=True, text=True)
        with h5py.File(hy, "r") as fh:
            check("export_checkpoint --heads-from leaves a head with a network digest behind",
                  pe.returncode == 0 and "dp_envelope_head" not in fh and "max_dp_head" in fh,
                  pe.stderr[-300:])
        with h5py.File(headed, "r+") as fh:
            fh.attrs["variable"] = "SG"
        pe = forked_run.run(exp + [run, os.path.join(work, "wrong.h5"), "--grid", str(X), str(Y),
                                   str(T), "--heads-from", headed], capture_output=True, text=True)
        check("export_checkpoint --heads-from a model of the other variable: one error line, "
              "exit 2, no output", pe.returncode == 2 and "not dP" in pe.stderr
              and "Traceback" not in pe.stderr and not os.path.exists(os.path.join(work, "wrong.h5"))
              and not [f for f in os.listdir(work) if ".export." in f], pe.stderr[-300:])
        other = os.path.join(work, "other.h5")
        shutil.copy(os.path.join(work, "dp.h5"), other)
        with h5py.File(other, "r+") as fo:
            fo.attrs["output_scale"] = fo.attrs["output_scale"] * 2
        bad_out = os.path.join(work, "bad_avg.h5")
        pb = forked_run.run([sys.executable, "-m", "ufno.average_models",
                             bad_out, os.path.join(work, "dp.h5"), other],
                            capture_output=True, text=True)
        check("average_models: another scaling is one error line, exit 2, no output",
              pb.returncode == 2 and "attributes" in pb.stderr and "Traceback" not in pb.stderr
              and not os.path.exists(bad_out), pb.stderr[-300:])
        try:
            average_models.average(bad_out, [os.path.join(work, "dp.h5")])
            one_refused = False
        except ValueError:
            one_refused = True
        check("average_models: one file is refused", one_refused and not os.path.exists(bad_out))
        split = json.load(open(os.path.join(run, "split.json")))
        check("split covers every case once",
              sorted(sum(split.values(), [])) == sorted("s1_i%06d" % i for i in range(n)))
        m = h5py.File(os.path.join(work, "dp.h5"), "r")
        vals = h5py.File(data, "r")["dP"][()]
        check("export carries the z-score scaling",
              m.attrs["output_scale"] > 1 and 3 < m.attrs["output_offset"] < 13
              and list(m.attrs["grid"]) == [X, Y, T], dict(m.attrs))
        check("metrics written", "test_pressure_error" in json.load(open(os.path.join(run, "metrics.json"))))
        # More data later: the best epoch is scored again on the grown validation set.
        grown = os.path.join(work, "grown.h5")
        with h5py.File(data, "r") as f, h5py.File(grown, "w") as g:
            more = 40
            g["input"] = np.concatenate([f["input"][()]] * (more // n + 1))[:more]
            g["SG"] = np.concatenate([f["SG"][()]] * (more // n + 1))[:more]
            g["dP"] = np.concatenate([f["dP"][()]] * (more // n + 1))[:more]
            g["seed"] = np.ones(more, dtype=np.int64)
            g["index"] = np.arange(more, dtype=np.int64)
        p = forked_run.run([c if c != data else grown for c in cmd] + ["--epochs", "4"],
                           capture_output=True, text=True)
        check("a resumed run on grown data scores its best epoch on today's validation cases",
              p.returncode == 0 and "validation cases of today's data" in p.stderr, p.stderr[-500:])
        warm = os.path.join(work, "warm")
        p = forked_run.run(cmd[:cmd.index("--run")] + ["--run", warm, "--threads", "1", "--epochs", "1",
                                                       "--init", os.path.join(work, "dp.h5"),
                                                       "--peak-weight", "1",
                                                       "--export", os.path.join(work, "dp2.h5")],
                           capture_output=True, text=True)
        check("a warm start begins from the model file", p.returncode == 0
              and "starting from" in p.stderr and "scores" in p.stderr, p.stderr[-500:])
        check("a dP run reports the maximum-dP error", "maximum dP error (median)" in p.stderr,
              p.stderr[-500:])
        m2 = h5py.File(os.path.join(work, "dp2.h5"), "r")
        check("a warm start keeps the file's scaling",
              m2.attrs["output_scale"] == m.attrs["output_scale"]
              and m2.attrs["output_offset"] == m.attrs["output_offset"])
        p = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w2"),
                                                       "--variable", "SG", "--init", os.path.join(work, "dp.h5")],
                           capture_output=True, text=True)
        p2 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w3"),
                                                        "--init", data],
                            capture_output=True, text=True)
        check("a warm start from a file that is no model file is one error line, exit 2",
              p2.returncode == 2 and "not a readable model file" in p2.stderr
              and "Traceback" not in p2.stderr, p2.stderr[-300:])
        check("a warm start from a model of the other variable is refused",
              p.returncode == 2 and "predicts dP" in p.stderr, p.stderr[-300:])
        p3 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w4"),
                                                        "--front-weight", "1"],
                            capture_output=True, text=True)
        check("--front-weight is refused for dP", p3.returncode == 2
              and "for SG only" in p3.stderr, p3.stderr[-300:])
        p4 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w5"),
                                                        "--mass-weight", "1"],
                            capture_output=True, text=True)
        check("--mass-weight is refused for dP", p4.returncode == 2
              and "for SG only" in p4.stderr, p4.stderr[-300:])
        p6 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w7"),
                                                        "--variable", "SG", "--peak-weight", "1"],
                            capture_output=True, text=True)
        check("--peak-weight is refused for SG", p6.returncode == 2
              and "for dP only" in p6.stderr, p6.stderr[-300:])
        p7 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w8"),
                                                        "--peak-weight", "nan"],
                            capture_output=True, text=True)
        check("--peak-weight nan is one error line, exit 2", p7.returncode == 2
              and "must be a number in [0, 1000]" in p7.stderr and "Traceback" not in p7.stderr,
              p7.stderr[-300:])
        # --train-cases: a chosen list of training cases (repeats oversample); a validation or
        # test case in it is refused, so it never leaks into training.
        train_ids = split["train"]
        pick = os.path.join(work, "pick.txt")
        with open(pick, "w") as f:
            f.write("# near the examples\n%s\n%s\n\n%s\n" % (train_ids[0], train_ids[1], train_ids[0]))
        seeds_ = np.ones(n, dtype=np.int64)
        idx_ = np.arange(n, dtype=np.int64)
        rows_of = {"s1_i%06d" % i: i for i in range(n)}
        all_train = [rows_of[c] for c in train_ids]
        got = train_ufno.chosen_training_cases(pick, all_train, seeds_, idx_)
        check("--train-cases: rows in the file's order, repeats kept",
              got == [rows_of[train_ids[0]], rows_of[train_ids[1]], rows_of[train_ids[0]]], got)
        p8 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w9"),
                                                        "--epochs", "1", "--train-cases", pick],
                            capture_output=True, text=True)
        check("a run on chosen training cases trains", p8.returncode == 0
              and "epoch 1" in p8.stderr, p8.stderr[-300:])
        leak = os.path.join(work, "leak.txt")
        held_out = (split["val"] + split["test"])[0]
        with open(leak, "w") as f:
            f.write("%s\n%s\n" % (train_ids[0], held_out))
        p9 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w10"),
                                                        "--train-cases", leak],
                            capture_output=True, text=True)
        check("--train-cases with a held-out case is one error line naming it, exit 2",
              p9.returncode == 2 and "line 2: %s is not a training case" % held_out in p9.stderr
              and "Traceback" not in p9.stderr, p9.stderr[-300:])
        binary = os.path.join(work, "binary.txt")
        with open(binary, "wb") as f:
            f.write(b"\xff\xfe\x00garbage")
        p11 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w12"),
                                                         "--train-cases", binary],
                             capture_output=True, text=True)
        check("--train-cases with a binary file is one error line, exit 2",
              p11.returncode == 2 and "--train-cases" in p11.stderr
              and "Traceback" not in p11.stderr, p11.stderr[-300:])
        empty = os.path.join(work, "empty.txt")
        open(empty, "w").close()
        p10 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w11"),
                                                         "--train-cases", empty],
                             capture_output=True, text=True)
        check("--train-cases with no ids is refused", p10.returncode == 2
              and "no case ids" in p10.stderr, p10.stderr[-300:])
        for bad in ("nan", "-1", "1e9"):
            p5 = forked_run.run(cmd[:cmd.index("--run")] + ["--run", os.path.join(work, "w6"),
                                                            "--front-weight", bad],
                                capture_output=True, text=True)
            check("--front-weight %s is one error line, exit 2" % bad, p5.returncode == 2
                  and "must be a number in [0, 1000]" in p5.stderr and "Traceback" not in p5.stderr,
                  p5.stderr[-300:])
    finally:
        shutil.rmtree(work, ignore_errors=True)

