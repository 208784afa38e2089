"""``DETCurve``: equal to ``sklearn.metrics.det_curve``, streaming (batches, merge, save/load),
sharing ``ROCCurve``'s state in a MetricSet; ``functional.det_curve`` is a thin call to it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import det_curve

import streammetrics as sm
from streammetrics import functional as F


def _data(seed: int, n: int, ties: bool, weighted: bool):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.random(n), 1) if ties else rng.random(n)
    w = rng.random(n) + 0.05 if weighted else None
    return y, s, w


def _equal(ours, ref):
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 200), ties=st.booleans(),
       weighted=st.booleans(), drop=st.booleans(), cuts=st.integers(1, 4))
def test_det_curve_equals_sklearn_streamed_merged_saved(seed, n, ties, weighted, drop, cuts):
    y, s, w = _data(seed, n, ties, weighted)
    ref = det_curve(y, s, sample_weight=w, drop_intermediate=drop)
    parts = np.array_split(np.arange(n), cuts)
    workers = []
    for idx in parts:
        m = sm.DETCurve(drop_intermediate=drop)
        m.update(y[idx], s[idx], sample_weight=None if w is None else w[idx])
        workers.append(m)
    merged = workers[0].merge(*workers[1:])
    _equal(merged.compute(), ref)
    _equal(sm.loads(sm.dumps(merged)).compute(), ref)
    _equal(F.det_curve(y, s, sample_weight=w, drop_intermediate=drop), ref)


def test_det_curve_shares_roc_state_in_a_metricset():
    y, s, _ = _data(3, 100, True, False)
    ms = sm.MetricSet(roc=sm.ROCCurve(), det=sm.DETCurve(), auc=sm.AUROC())
    assert ms.groups == [["roc", "det", "auc"]]
    out = ms.update(y, s).compute()
    _equal(out["det"], det_curve(y, s))
    roc = out["roc"]
    # the DET points are ROC points: fnr = 1 - tpr at the same thresholds
    for f, fn, t in zip(*out["det"], strict=True):
        i = int(np.flatnonzero(roc.thresholds == t)[0])
        assert f == roc.fpr[i] and fn == pytest.approx(1 - roc.tpr[i], abs=1e-15)


def test_multiclass_one_curve_per_class():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 90)
    p = rng.dirichlet(np.ones(3), 90)
    curves = sm.DETCurve(3).update(y, p).compute()
    assert len(curves) == 3
    for c, curve in enumerate(curves):
        _equal(curve, det_curve(y == c, p[:, c]))


def test_one_class_is_nan_with_a_warning_and_the_function_raises():
    m = sm.DETCurve().update([1, 1], [0.2, 0.4])
    with pytest.warns(sm.UndefinedMetricWarning, match="DETCurve"):
        fpr, fnr, _ = m.compute()
    assert np.isnan(fpr).all()
    with pytest.raises(ValueError, match="Only one class"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F.det_curve([1, 1], [0.2, 0.4])
