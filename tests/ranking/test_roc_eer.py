"""``ROCCurveResult.eer()``: torchmetrics' ``BinaryEER`` / ``MulticlassEER(average="none")`` (issue #33),
equal to a brute-force oracle over scikit-learn's full ROC curve (1e-12, weights included) and to
torchmetrics on random data with ties (no weights: torchmetrics takes none); streamed, merged and
reloaded states give the same value."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_curve

import streammetrics as sm


def oracle(y, s, w=None):
    """(FPR + FNR) / 2 at the first point of scikit-learn's full ROC curve where |FPR - FNR| is least."""
    fpr, tpr, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    fnr = 1.0 - tpr
    i = int(np.argmin(np.abs(fpr - fnr)))
    return (fpr[i] + fnr[i]) / 2


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 150), weighted=st.booleans(),
       cut=st.floats(0, 1), drop=st.booleans())
def test_equals_the_oracle_streamed_merged_and_reloaded(seed, n, weighted, cut, drop):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.random(n), 1)  # ties
    w = rng.integers(1, 4, n) * rng.random(n) if weighted else None
    want = oracle(y, s, w)
    k = int(cut * n)
    a = sm.ROCCurve(drop_intermediate=drop).update(y[:k], s[:k], sample_weight=None if w is None else w[:k])
    b = sm.ROCCurve(drop_intermediate=drop).update(y[k:], s[k:], sample_weight=None if w is None else w[k:])
    merged = a.merge(b)
    for m in (merged, sm.loads(sm.dumps(merged))):
        assert abs(m.compute().eer() - want) <= 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_binary_equals_torchmetrics(seed):
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 800)
    s = rng.integers(0, 33, 800) / 32  # ties, exact in float32
    want = float(tmc.BinaryEER()(torch.tensor(s), torch.tensor(y)))
    assert sm.ROCCurve().update(y, s).compute().eer() == pytest.approx(want, abs=1e-6)


def test_multiclass_per_class_equals_torchmetrics():
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 600)
    s = rng.integers(1, 9, (600, 3)).astype(float)
    s /= s.sum(axis=1, keepdims=True)
    want = tmc.MulticlassEER(num_classes=3, average=None)(torch.tensor(s), torch.tensor(y)).numpy()
    got = [c.eer() for c in sm.ROCCurve(3, average=None).update(y, s).compute()]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_one_class_only_is_nan():
    for y in ([1, 1], [0, 0]):
        with pytest.warns(sm.UndefinedMetricWarning):  # the curve's own warning
            curve = sm.ROCCurve().update(y, [0.2, 0.9]).compute()
        assert math.isnan(curve.eer()) and math.isnan(curve.log_auc())


# -- log_auc: torchmetrics' LogAUC ------------------------------------------------------------------
def log_oracle(y, s, w, lo, hi):
    """The trapezoid in (log10 FPR, TPR) over scikit-learn's full ROC curve between lo and hi, the
    ends read by linear interpolation in FPR (lo, hi on no curve point: the reading is unique)."""
    fpr, tpr, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    inside = (fpr > lo) & (fpr < hi)
    x = np.concatenate([[lo], fpr[inside], [hi]])
    t = np.concatenate([[np.interp(lo, fpr, tpr)], tpr[inside], [np.interp(hi, fpr, tpr)]])
    return np.trapezoid(t, np.log10(x)) / (np.log10(hi) - np.log10(lo))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 200), weighted=st.booleans(),
       lo=st.floats(1e-4, 0.3), width=st.floats(1.5, 500.0))
def test_log_auc_equals_the_oracle(seed, n, weighted, lo, width):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.random(n), 1)  # ties: vertical and diagonal segments
    w = rng.integers(1, 4, n) * rng.random(n) if weighted else None
    hi = min(lo * width, 1.0)
    fpr, _, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    if np.isin([lo, hi], fpr).any():  # an end on a curve point: the oracle's reading is ambiguous
        return
    m = sm.ROCCurve().update(y, s, sample_weight=w)
    got = sm.loads(sm.dumps(m)).compute().log_auc((lo, hi))
    assert abs(got - log_oracle(y, s, w, lo, hi)) <= 1e-12


@pytest.mark.parametrize("fpr_range", [(0.001, 0.1), (0.01, 1.0), (0.05, 0.5), (0.25, 0.75)])
def test_log_auc_equals_torchmetrics(fpr_range):
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 2000)
    s = rng.integers(0, 65, 2000) / 64  # ties; ends on curve points too (0.25 of 1000-odd negatives)
    want = float(tmc.BinaryLogAUC(fpr_range=fpr_range)(torch.tensor(s), torch.tensor(y)))
    got = sm.ROCCurve().update(y, s).compute().log_auc(fpr_range)
    assert got == pytest.approx(want, abs=1e-5)  # torchmetrics: float32 rates and logs


def test_log_auc_multiclass_per_class_equals_torchmetrics():
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 900)
    s = rng.integers(1, 9, (900, 3)).astype(float)
    s /= s.sum(axis=1, keepdims=True)
    want = tmc.MulticlassLogAUC(num_classes=3, average=None)(torch.tensor(s), torch.tensor(y)).numpy()
    got = [c.log_auc() for c in sm.ROCCurve(3, average=None).update(y, s).compute()]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


@pytest.mark.parametrize("bad", [(0.0, 0.1), (0.2, 0.1), (0.1, 1.5), (0.1,), "ab", None, (0.1, float("nan"))])
def test_log_auc_refuses_a_bad_range(bad):
    curve = sm.ROCCurve().update([0, 1, 0, 1], [0.1, 0.9, 0.4, 0.3]).compute()
    with pytest.raises(ValueError, match="fpr_range: must"):
        curve.log_auc(bad)
