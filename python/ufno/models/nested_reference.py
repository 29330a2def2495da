"""The reference's own chain, step for step: `predict_full_sg.py` of nested FNO (Wen et al. 2023)
for SG, and the loop of its `eval_sequential_prediction_dp` notebook for dP, written from the
facts of those files (their code is not copied) so that a time-first model set with the
published normaliser objects can be checked against `ufno_predict --case` and
`models/nested_chain.py` (tests/data/nested/published/, python/tests/test_nested_chain.py).

What the reference does, as followed here:
  - input_dict: GLOBAL (1, T, X, Y, Z, 8), the stored (1, X, Y, Z, T, 8) permuted
    (0, 4, 1, 2, 3, 5) by its data code; each well's LGRk (1, X, Y, Z, T, 9) as stored, its 9th
    channel a placeholder (zeros) that the chain replaces by the coarse channel.
  - GLOBAL: the last channel encoded in place with NORMALIZER_DICT['input']['GLOBAL'], the
    network, the output decoded with NORMALIZER_DICT['output']['GLOBAL'].
  - per well, LGR1: the GLOBAL prediction (T, X, Y, Z, 1) cropped to the window in x and y (the
    reference's I1..I2, J1..J2: the LGR box widened by 15 cells; here the site's
    `coarse_window`, which for the reference's nest is the same window; its z range is all of
    GLOBAL there, the window's k0..k1 here) and repeated along z (axis -2) 5 times (the site's
    `coarse_repeat`), permuted (-1, 1, 2, 3, 0) and given a channel axis: (1, X, Y, Z, T, 1);
    concatenated to the level's first 8 channels; permuted (0, 4, 1, 2, 3, 5); its last channel
    encoded with NORMALIZER_DICT['input']['LGR1'] (LGR1 dP's input normaliser in both chains);
    the network; in the dP chain decoded with NORMALIZER_DICT['output']['LGR1'].
  - LGR2: the LGR1 prediction repeated 2 times along z; LGR3, LGR4: the previous prediction as
    it is; each permuted and concatenated as above. The SG chain encodes nothing and decodes
    nothing at these levels; the dP chain encodes the coarse channel and decodes the output with
    the level's normalisers.

The repeats along x and y (1 in the reference) are applied too when a site's `coarse_repeat`
asks for them, the same np.repeat rule.
"""

import torch

from ufno.models import nested_chain as chain


def input_dict(site, dtype=torch.float64):
    """The reference's input_dict of a site file: {'GLOBAL': (1, T, X, Y, Z, 8), well: {'LGRk':
    (1, X, Y, Z, T, 9) with a zero 9th channel}}."""
    d = {"GLOBAL": torch.from_numpy(site.input(site.levels["GLOBAL"])).to(dtype)
         .permute(0, 4, 1, 2, 3, 5).contiguous()}
    for w in site.wells:
        d[w] = {}
        for lv in chain.LGR_LEVELS:
            x = torch.from_numpy(site.input(site.level(w, lv))).to(dtype)
            d[w][lv] = torch.cat([x, torch.zeros(x.shape[:-1] + (1,), dtype=dtype)], dim=-1)
    return d


def _repeat(p, repeat):
    """np.repeat of the prediction (T, X, Y, Z, 1) along x, y and z (axes -4, -3, -2)."""
    for axis, r in zip((-4, -3, -2), repeat):
        if r != 1:
            p = torch.repeat_interleave(p, int(r), dim=axis)
    return p


def predict_full(site, inputs, MODEL_DICT, NORMALIZER_DICT, variable):
    """The reference's chain for `variable` ('SG': predict_full_sg.py; 'dP': the dP notebook's
    loop). MODEL_DICT: {'GLOBAL', 'LGR1'..'LGR4': callable (B, T, X, Y, Z, C) -> (B, T, X, Y, Z,
    1)}; NORMALIZER_DICT: {'input': {level: normaliser}, 'output': {level: normaliser}} with
    encode/decode (the published TimeGaussianNormalizer objects). Returns PRED: {'GLOBAL':
    (1, T, X, Y, Z, 1), well: {'LGRk': (1, T, X, Y, Z, 1)}}."""
    dp = variable == "dP"
    with torch.no_grad():
        PRED = {}
        x = inputs["GLOBAL"].clone()
        x[..., -1:] = NORMALIZER_DICT["input"]["GLOBAL"].encode(x[..., -1:])
        pred = NORMALIZER_DICT["output"]["GLOBAL"].decode(MODEL_DICT["GLOBAL"](x))
        PRED["GLOBAL"] = pred

        for well in site.wells:
            lgr_dict = {}
            level = site.level(well, "LGR1")
            i0, i1, j0, j1, k0, k1 = level.coarse_window
            x_lgr1 = inputs[well]["LGR1"]
            coarse = _repeat(PRED["GLOBAL"][0, ...][:, i0:i1, j0:j1, k0:k1, :],
                             level.coarse_repeat).permute(-1, 1, 2, 3, 0)[..., None]
            x_LGR1 = torch.cat((x_lgr1[..., :-1], coarse), axis=-1)
            x_LGR1 = x_LGR1.permute(0, 4, 1, 2, 3, 5).clone()
            x_LGR1[..., -1:] = NORMALIZER_DICT["input"]["LGR1"].encode(x_LGR1[..., -1:])
            pred = MODEL_DICT["LGR1"](x_LGR1)
            if dp:
                pred = NORMALIZER_DICT["output"]["LGR1"].decode(pred)
            lgr_dict["LGR1"] = pred

            for prev, lv in (("LGR1", "LGR2"), ("LGR2", "LGR3"), ("LGR3", "LGR4")):
                level = site.level(well, lv)
                x_lgr = inputs[well][lv]
                coarse = _repeat(lgr_dict[prev][0, ...], level.coarse_repeat) \
                    .permute(-1, 1, 2, 3, 0)[..., None]
                x_LGR = torch.cat((x_lgr[..., :-1], coarse), axis=-1)
                x_LGR = x_LGR.permute(0, 4, 1, 2, 3, 5).clone()
                if dp:
                    x_LGR[..., -1:] = NORMALIZER_DICT["input"][lv].encode(x_LGR[..., -1:])
                pred = MODEL_DICT[lv](x_LGR)
                if dp:
                    pred = NORMALIZER_DICT["output"][lv].decode(pred)
                lgr_dict[lv] = pred

            PRED[well] = lgr_dict
        return PRED


def as_chain_predictions(site, PRED, variable, preds=None):
    """PRED of predict_full as models/nested_chain.py's {(level path, variable): (nx, ny, nz,
    T)} (GLOBAL only for dP)."""
    preds = {} if preds is None else preds
    if variable == "dP":
        preds[("GLOBAL", "dP")] = PRED["GLOBAL"][0, ..., 0].permute(1, 2, 3, 0)
    for w in site.wells:
        for lv in chain.LGR_LEVELS:
            preds[("%s/%s" % (w, lv), variable)] = PRED[w][lv][0, ..., 0].permute(1, 2, 3, 0)
    return preds
