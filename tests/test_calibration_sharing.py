"""One exact probability buffer for AUROC, AP, KS, gains and quantile calibration in a
MetricSet: the set holds one state and every value equals the separate metric's."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score

import streammetrics as sm


def members(num_classes=None):
    kw = {} if num_classes is None else {"num_classes": num_classes}
    out = {
        "auroc": lambda: sm.AUROC(scores="probability", **kw),
        "ap": lambda: sm.AveragePrecision(scores="probability", **kw),
        "ks": lambda: sm.KSStatistic(scores="probability", **kw),
        "gains": lambda: sm.GainsCurve(scores="probability", **kw),
        "curve": lambda: sm.CalibrationCurve(4, "quantile", **kw),
    }
    if num_classes is None:
        out["ece"] = lambda: sm.CalibrationError(n_bins=6, strategy="quantile")
    else:
        out["ece"] = lambda: sm.CalibrationError(num_classes, n_bins=6, strategy="quantile", classwise=True)
    return out


def same(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, z in zip(a, b, strict=True):
            same(x, z)
    elif hasattr(a, "__dataclass_fields__"):
        for f in ("gain", "fraction", "prob_true", "prob_pred", "counts"):
            if hasattr(a, f):
                np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("num_classes", [None, 3])
def test_one_buffer_and_values_equal_separate_metrics(num_classes):
    rng = np.random.default_rng(3)
    n = 1200
    if num_classes is None:
        y, p = rng.integers(0, 2, n), np.round(rng.random(n), 2)
    else:
        y, p = rng.integers(0, num_classes, n), rng.dirichlet(np.ones(num_classes), n)
    w = rng.integers(1, 3, n).astype(float)
    make = members(num_classes)
    ms = sm.MetricSet({k: f() for k, f in make.items()})
    assert ms.groups == [list(make)]
    assert len({id(m._state) for _, m in ms.items()}) == 1
    for lo in range(0, n, 300):
        ms.update(y[lo:lo + 300], p[lo:lo + 300], sample_weight=w[lo:lo + 300])
    got = ms.compute()
    for k, f in make.items():
        same(got[k], f().update(y, p, sample_weight=w).compute())
    back = sm.loads(sm.dumps(ms)).compute()
    for k in make:
        same(back[k], got[k])
    if num_classes is None:  # the trusted references
        assert abs(got["auroc"] - roc_auc_score(y, p, sample_weight=w)) <= 1e-12
        unweighted = sm.MetricSet({k: f() for k, f in make.items()}).update(y, p).compute()
        true, pred = calibration_curve(y, p, n_bins=4, strategy="quantile")
        np.testing.assert_allclose(unweighted["curve"].prob_true, true, rtol=1e-12)
        np.testing.assert_allclose(unweighted["curve"].prob_pred, pred, rtol=1e-12)


def test_shared_buffer_checks_probabilities_once_and_atomically():
    ms = sm.MetricSet(auroc=sm.AUROC(scores="probability"), ece=sm.CalibrationError(strategy="quantile"))
    ms.update([0, 1], [0.2, 0.9])
    before = sm.dumps(ms)
    with pytest.raises(ValueError, match=r"\[0, 1\].*1\.5"):
        ms.update([0, 1], [0.3, 1.5])
    assert sm.dumps(ms) == before
    with pytest.raises(ValueError, match="sum to 1"):
        sm.AUROC(3, scores="probability").update([0, 1], [[0.5, 0.5, 0.5], [0.2, 0.3, 0.5]])
    # raw scores keep their own buffer (any number is a score there)
    assert len(sm.MetricSet(a=sm.AUROC(), e=sm.CalibrationError(strategy="quantile")).groups) == 2
