"""A held-out set shifted from the training data's distribution: other perforations and rates,
and another field family (docs/accuracy.md, "Intervals"). Deterministic (seed 4747).
Usage: PYTHONPATH=python /usr/bin/python3 scripts/make_shifted_cases.py OUT_DIR TEST_SPLIT_DIR
(TEST_SPLIT_DIR: the unpacked test split of ../shared/data, case_NNNNNN/case.h5).
A: 16 test-split geologies (every 9th test case) with a new rate (log-uniform 0.2..2 Mt/yr, the
   training draw is uniform) and a new perforation: one interval of 1..3 layers at the top or
   bottom of the formation (short, off-centre completions).
B: 16 layer-cake cases of this script's own sampler: 4..24 layers, per-layer kr log-uniform
   10..2000 mD constant along the radius, kz/kr 0.01..0.3, porosity 0.1..0.3 per layer,
   perforation over the upper or lower half, rate uniform 0.3..2, T, P, Swi, lambda uniform
   in the training ranges. Geology redrawn while PRESSURE + injectivity estimate > 500 bar.
Writes OUT_DIR/third_NN/case.h5 (no meta attributes); scripts/make-shifted-set.sh runs Flow."""
import os
import sys

import numpy as np
from ufno.data import cases as uc
out, test_dir = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(4747)
tests = sorted(d for d in os.listdir(test_dir) if d.startswith("case_"))
k = 0
for name in tests[::9][:16]:
    c = uc.read_case_h5(os.path.join(test_dir, name, "case.h5"))
    n_act = int((c["PERMX"][:, 0] > 0).sum())
    for attempt in range(100):
        rate = float(np.exp(rng.uniform(np.log(0.2), np.log(2.0))))
        L = int(rng.integers(1, min(3, n_act) + 1))
        perf = np.zeros(uc.NX, np.int32)
        if rng.uniform() < 0.5:
            perf[:L] = 1
        else:
            perf[n_act - L:n_act] = 1
        if c["PRESSURE"] + uc.injectivity_estimate_bar(rate, c["PERMX"], perf) <= 500:
            break
    c.update(INJ_RATE=rate, PERF=perf)
    c.pop("meta", None)
    d = os.path.join(out, "third_%02d" % k); os.makedirs(d, exist_ok=True)
    uc.write_case_h5(os.path.join(d, "case.h5"), c, generator="scripts/make_shifted_cases.py A from " + name)
    k += 1
for j in range(16):
    rate = rng.uniform(0.3, 2.0); temp = rng.uniform(30, 125); pres = rng.uniform(100, 300)
    swi = rng.uniform(0.1, 0.3); lam = rng.uniform(0.3, 0.7)
    for attempt in range(200):
        n_act = int(rng.integers(4, 25))
        kl = np.exp(rng.uniform(np.log(10), np.log(2000), n_act))
        ratio = np.exp(rng.uniform(np.log(0.01), np.log(0.3)))
        phil = rng.uniform(0.1, 0.3, n_act)
        kx = np.zeros((uc.NX, uc.NY)); kx[:n_act] = kl[:, None]
        perf = np.zeros(uc.NX, np.int32)
        half = max(1, n_act // 2)
        if rng.uniform() < 0.5: perf[:half] = 1
        else: perf[n_act - half:n_act] = 1
        if pres + uc.injectivity_estimate_bar(rate, np.maximum(kx, 1e-3), perf) <= 500:
            break
    phi = np.zeros((uc.NX, uc.NY)); phi[:n_act] = phil[:, None]
    c = {"PERMX": kx, "PERMZ": kx * ratio, "PORO": phi, "DR": uc.radial_widths(),
         "DZ": np.full(uc.NX, uc.DZ), "PERF": perf, "INJ_RATE": rate, "TEMP": temp,
         "PRESSURE": pres, "SWI": swi, "VG_LAMBDA": lam, "TIMES": uc.report_times()}
    d = os.path.join(out, "third_%02d" % k); os.makedirs(d, exist_ok=True)
    uc.write_case_h5(os.path.join(d, "case.h5"), c, generator="scripts/make_shifted_cases.py B layer-cake")
    k += 1
print("wrote", k)
