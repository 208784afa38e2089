"""One exact probability buffer for AUROC, AP, KS, gains and quantile calibration in a
MetricSet: the set holds one state and every value equals the separate metric's."""

from __future__ import annotations

import numpy as np
import pytest
from calibration_oracles import quantile_error
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
    with pytest.warns(UserWarning, match="do not sum to one"):  # as scikit-learn: used as given
        sm.AUROC(3, scores="probability").update([0, 1], [[0.5, 0.5, 0.5], [0.2, 0.3, 0.5]])
    # raw scores keep their own buffer (any number is a score there)
    assert len(sm.MetricSet(a=sm.AUROC(), e=sm.CalibrationError(strategy="quantile")).groups) == 2


def test_binary_logits_share_the_raw_score_buffer():
    rng = np.random.default_rng(8)
    n = 2000
    y = rng.integers(0, 2, n)
    z = np.round(rng.normal(size=n) * 3 + y, 1)  # logits with ties
    z[:5] = [40.0, 45.0, -50.0, np.inf, -np.inf]  # the sigmoid saturates: distinct logits, equal p
    w = rng.integers(1, 3, n)
    make = {
        "auroc": lambda: sm.AUROC(),
        "ap": lambda: sm.AveragePrecision(),
        "ks": lambda: sm.KSStatistic(),
        "gains": lambda: sm.GainsCurve(),
        "ece": lambda: sm.CalibrationError(n_bins=6, strategy="quantile", from_logits=True),
        "mce": lambda: sm.CalibrationError(n_bins=9, strategy="quantile", norm="max", from_logits=True),
        "curve": lambda: sm.CalibrationCurve(4, "quantile", from_logits=True),
    }
    ms = sm.MetricSet({k: f() for k, f in make.items()})
    lone = sm.AUROC()
    assert ms.groups == [list(make)]
    for lo in range(0, n, 500):
        ms.update(y[lo:lo + 500], z[lo:lo + 500], sample_weight=w[lo:lo + 500].astype(float))
        lone.update(y[lo:lo + 500], z[lo:lo + 500], sample_weight=w[lo:lo + 500].astype(float))
    assert ms.nbytes == lone.nbytes  # one buffer: the set costs what AUROC alone costs
    got = ms.compute()
    for k, f in make.items():
        same(got[k], f().update(y, z, sample_weight=w.astype(float)).compute())
    back = sm.loads(sm.dumps(ms)).compute()
    for k in make:
        same(back[k], got[k])
    p = 1.0 / (1.0 + np.exp(-z))  # the trusted references, on the probabilities
    assert abs(got["ece"] - quantile_error(p, y, w, 6, "l1")) <= 1e-12
    assert abs(got["mce"] - quantile_error(p, y, w, 9, "max")) <= 1e-12
    unweighted = sm.CalibrationCurve(4, "quantile", from_logits=True).update(y, z).compute()
    true, pred = calibration_curve(y, p, n_bins=4, strategy="quantile")
    np.testing.assert_allclose(unweighted.prob_true, true, rtol=1e-12)
    np.testing.assert_allclose(unweighted.prob_pred, pred, rtol=1e-12)
    # the same values as from the probabilities themselves (their own buffer)
    assert abs(sm.CalibrationError(n_bins=6, strategy="quantile").update(y, p, sample_weight=w).compute()
               - got["ece"]) <= 1e-12


def test_logit_buffer_errors_name_y_pred_and_change_nothing():
    m = sm.CalibrationError(strategy="quantile", from_logits=True).update([0, 1], [-1.0, 2.0])
    before = sm.dumps(m)
    with pytest.raises(ValueError, match="y_pred: scores must not be NaN; first NaN at index 1"):
        m.update([0, 1], [0.5, np.nan])
    with pytest.raises(ValueError, match="y_pred: expected shape"):
        sm.CalibrationCurve(3, "quantile", from_logits=True).update([0, 1], [0.5])
    assert sm.dumps(m) == before


@pytest.mark.parametrize("from_logits", [False, True])
def test_top_label_quantile_members_share_one_buffer(from_logits):
    rng = np.random.default_rng(9)
    n, c = 1500, 4
    y = rng.integers(0, c, n)
    z = rng.normal(size=(n, c)) + np.eye(c)[y]
    x = z if from_logits else np.exp(z) / np.exp(z).sum(1, keepdims=True)
    make = {
        f"{norm}_{b}": (lambda norm=norm, b=b: sm.CalibrationError(
            c, n_bins=b, norm=norm, strategy="quantile", from_logits=from_logits))
        for norm in ("l1", "l2", "max") for b in (5, 10)
    }
    ms = sm.MetricSet({k: f() for k, f in make.items()})
    lone = make["l1_5"]()
    assert ms.groups == [list(make)]
    for lo in range(0, n, 400):
        ms.update(y[lo:lo + 400], x[lo:lo + 400])
        lone.update(y[lo:lo + 400], x[lo:lo + 400])
    assert ms.nbytes == lone.nbytes
    got = ms.compute()
    for k, f in make.items():
        assert got[k] == f().update(y, x).compute()
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    assert abs(got["l1_10"] - quantile_error(conf, correct, np.ones(n, int), 10, "l1")) <= 1e-12
    assert abs(got["max_5"] - quantile_error(conf, correct, np.ones(n, int), 5, "max")) <= 1e-12
    # the top-label confidences are data no ranking buffer holds: a second buffer of n values
    mixed = sm.MetricSet(top=make["l1_5"](), auroc=sm.AUROC(c, scores="probability" if not from_logits else "raw"))
    assert len(mixed.groups) == 2


def test_bounded_binary_probabilities_share_the_bounded_bins():
    rng = np.random.default_rng(12)
    n, budget = 6000, 4096
    y = rng.integers(0, 2, n)
    p = np.clip(rng.beta(2, 3, n) + 0.2 * y, 0, 1)
    make = {
        "auroc": lambda: sm.AUROC(scores="probability", max_bytes=budget),
        "ks": lambda: sm.KSStatistic(scores="probability", max_bytes=budget),
        "ece": lambda: sm.CalibrationError(n_bins=8, strategy="quantile", max_bytes=budget),
        "mce": lambda: sm.CalibrationError(n_bins=8, strategy="quantile", norm="max", max_bytes=budget),
        "curve": lambda: sm.CalibrationCurve(5, "quantile", max_bytes=budget),
    }
    ms = sm.MetricSet({k: f() for k, f in make.items()})
    lone = make["auroc"]()
    assert ms.groups == [list(make)]
    for lo in range(0, n, 1500):
        ms.update(y[lo:lo + 1500], p[lo:lo + 1500])
        lone.update(y[lo:lo + 1500], p[lo:lo + 1500])
    assert ms.nbytes == lone.nbytes <= budget
    got = ms.compute()
    for k, f in make.items():
        same(got[k], f().update(y, p).compute())
    assert not ms["ece"].is_exact and not got["curve"].exact
    for k, norm in (("ece", "l1"), ("mce", "max")):
        lo, hi = ms[k].bounds()
        assert lo <= quantile_error(p, y, np.ones(n, int), 8, norm) <= hi
    back = sm.loads(sm.dumps(ms))
    assert back["ece"].bounds() == ms["ece"].bounds()
    with pytest.raises(ValueError, match=r"y_pred: .*\[0, 1\]"):
        make["ece"]().update([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="NaN"):
        make["curve"]().update([0, 1], [0.5, np.nan])
