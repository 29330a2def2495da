#!/usr/bin/python3
"""Python port of io/CaseEncoding.cpp: a reservoir case -> the network's 12 input channels.

It must give the same float32 values as the C++ encoder, bit for bit. For that it follows the
C++ code operation by operation:
  * the arrays PERMX, PERMZ, PORO, DR and DZ are used in double precision, as io/CaseFile.cpp
    reads them since it uses h5::File::read_block_double. Before that change the reader went
    through float32 (h5::File::read_block, H5T_NATIVE_FLOAT): arrays_as_float32=True (or
    ARRAYS_AS_FLOAT32) reproduces a build of that older code. Scalars and TIMES are double in
    both;
  * every value is computed in double precision and rounded to float32 once, at the end;
  * ln k uses the C library's log (math.log), as std::log does, not numpy's vectorised log,
    whose last bit can differ;
  * the radial coordinate is the running sum of DR (sequential, as the C++ loop; np.cumsum is
    sequential too) normalised min-max: (r[y] - r[0]) / (r[Y-1] - r[0]);
  * the vertical coordinate is x / (X - 1), the time coordinate t / t[T-1];
  * the rate is encoded as (rate * (1e6/365.0*1000.0/1.862) - 3e5) / (3e6 - 3e5) with the
    constant evaluated left to right as in C++.

Channels (index: value), X = layers from the top, Y = radial cells from the well:
  0: ln(PERMX)/15 in active cells (PERMX > 0), else 0   1: ln(PERMZ)/15 (active), else 0
  2: PORO (active), else 0                              3: 1 at y = 0 in perforated layers
  4: encoded INJ_RATE   5: (TEMP - 30)/150   6: (PRESSURE - 100)/200   7: (SWI - 0.1)/0.2
  8: (VG_LAMBDA - 0.3)/0.4   9: radial coordinate   10: vertical coordinate   11: time
"""

import math

import numpy as np

N_CHANNELS = 12
RATE_Q_MIN, RATE_Q_MAX = 3e5, 3e6
MT_PER_YEAR_TO_Q = 1e6 / 365.0 * 1000.0 / 1.862   # same evaluation order as the C++ constexpr


def paper_times_days(n):
    """t_k = sum_{i<=k} 1.421245^i days, accumulated as in paper_times_days() (C++)."""
    t, s = [], 0.0
    for k in range(n):
        s += math.pow(1.421245, k)
        t.append(s)
    return np.array(t, dtype=np.float64)


def encoded_rate(rate_mt_per_year):
    return (rate_mt_per_year * MT_PER_YEAR_TO_Q - RATE_Q_MIN) / (RATE_Q_MAX - RATE_Q_MIN)


def decoded_rate(a):
    return (a * (RATE_Q_MAX - RATE_Q_MIN) + RATE_Q_MIN) / MT_PER_YEAR_TO_Q


def decoded_swi(a):
    return 0.1 + 0.2 * a


def physical_output(variable, raw, x):
    """The rules of runtime/Predictor.cpp physical_value (docs/kpis.md) on a network output raw
    (N, X, Y, T) with its encoded input x (N, X, Y, T, 12): 0 outside the formation (channel 0
    exactly 0); SG clamped to [0, 1 - SWI]."""
    raw = np.asarray(raw)
    active = x[..., 0] != 0
    out = np.where(active, raw, 0.0).astype(raw.dtype)
    if variable == "SG":
        sg_max = (1.0 - decoded_swi(x[..., 7].astype(np.float64))).astype(np.float32)
        out = np.where(active, np.clip(out, 0.0, sg_max), 0.0).astype(raw.dtype)
    return out


def scalar_channels(case):
    """The five encoded scalars (channels 4..8), in double precision."""
    return [encoded_rate(float(case["INJ_RATE"])),
            (float(case["TEMP"]) - 30.0) / 150.0,
            (float(case["PRESSURE"]) - 100.0) / 200.0,
            (float(case["SWI"]) - 0.1) / 0.2,
            (float(case["VG_LAMBDA"]) - 0.3) / 0.4]


ARRAYS_AS_FLOAT32 = False   # True: the C++ reader before read_block_double (float32 reads)


def as_read(a, arrays_as_float32=None):
    """An array as io/CaseFile.cpp holds it (double; through float32 for the older reader)."""
    if arrays_as_float32 is None:
        arrays_as_float32 = ARRAYS_AS_FLOAT32
    a = np.asarray(a, dtype=np.float64)
    return a.astype(np.float32).astype(np.float64) if arrays_as_float32 else a


def _log_over_15(a, active):
    out = np.zeros(a.shape, dtype=np.float32)
    for idx in zip(*np.nonzero(active)):
        out[idx] = np.float32(math.log(float(a[idx])) / 15.0)
    return out


def encode_case(case, nt=None, arrays_as_float32=None):
    """Channel-last (X, Y, T, 12) float32 encoding of one case.

    case: a mapping with PERMX, PERMZ, PORO (X, Y), DR (Y), DZ (X), PERF (X), the scalars
    INJ_RATE, TEMP, PRESSURE, SWI, VG_LAMBDA and optionally TIMES (days). Without TIMES the
    paper's nt times are used (nt required then); with TIMES, nt must be None or len(TIMES).
    arrays_as_float32: see ARRAYS_AS_FLOAT32 (None: that module default)."""
    # Arrays as the C++ reader has them.
    permx = as_read(case["PERMX"], arrays_as_float32)
    permz = as_read(case["PERMZ"], arrays_as_float32)
    poro = as_read(case["PORO"], arrays_as_float32)
    dr = as_read(case["DR"], arrays_as_float32)
    perf = np.asarray(case["PERF"])
    X, Y = permx.shape
    times = case.get("TIMES") if hasattr(case, "get") else None
    if times is None:
        if nt is None:
            raise ValueError("no TIMES in the case: give nt")
        times = paper_times_days(nt)
    times = np.asarray(times, dtype=np.float64)
    T = len(times)
    if nt is not None and nt != T:
        raise ValueError("TIMES has %d report times but %d were asked for" % (T, nt))

    r = np.cumsum(dr)
    r0 = r[0]
    rspan = r[Y - 1] - r[0] if Y > 1 else 1.0
    active = permx > 0

    cell = np.zeros((X, Y, N_CHANNELS), dtype=np.float32)
    cell[:, :, 0] = _log_over_15(permx, active)
    cell[:, :, 1] = _log_over_15(permz, active)
    cell[:, :, 2] = np.where(active, poro, 0.0).astype(np.float32)
    cell[:, 0, 3] = (perf != 0).astype(np.float32)
    for k, a in enumerate(scalar_channels(case)):
        cell[:, :, 4 + k] = np.float32(a)
    cell[:, :, 9] = ((r - r0) / rspan).astype(np.float32)[None, :]
    xs = np.arange(X, dtype=np.float64)
    cell[:, :, 10] = (xs / (X - 1) if X > 1 else np.zeros(X)).astype(np.float32)[:, None]

    out = np.empty((X, Y, T, N_CHANNELS), dtype=np.float32)
    out[...] = cell[:, :, None, :]
    out[:, :, :, 11] = (times / times[T - 1]).astype(np.float32)[None, None, :]
    return out

