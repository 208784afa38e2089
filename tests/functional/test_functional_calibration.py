"""``log_loss``, ``brier_score_loss`` and ``calibration_curve`` of ``streammetrics.functional``
against scikit-learn (to 1e-12) and against the accumulators fed in batches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import calibration as skc
from sklearn import metrics as skm

import streammetrics as sm
from streammetrics import functional as F

RTOL = 1e-12


def _data(seed: int, k: int, n: int, weighted: bool, labels: str) -> tuple:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)  # every class present
    p = rng.dirichlet(np.ones(k), n) if k > 2 else rng.random(n)
    if k > 2 and n > 3:
        p[0] = np.eye(k)[y[0]]  # a perfect row: clipping at 1 - eps
        p[1] = np.eye(k)[(y[1] + 1) % k]  # a wrong certain row: clipping at eps
    w = rng.random(n) + 0.01 if weighted else None
    if labels == "str":
        y = np.array([f"c{v}" for v in y])
    elif labels == "sparse":
        y = y * 7 + 3
    return y, p, w


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(2, 6),
    n=st.integers(6, 300),
    weighted=st.booleans(),
    labels=st.sampled_from(["int", "str", "sparse"]),
    normalize=st.booleans(),
)
def test_log_loss_equals_sklearn(seed, k, n, weighted, labels, normalize):
    y, p, w = _data(seed, k, n, weighted, labels)
    ours = F.log_loss(y, p, normalize=normalize, sample_weight=w)
    ref = skm.log_loss(y, p, normalize=normalize, sample_weight=w)
    assert ours == pytest.approx(ref, rel=RTOL, abs=1e-15)
    assert isinstance(ours, float)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(2, 6),
    n=st.integers(6, 300),
    weighted=st.booleans(),
    labels=st.sampled_from(["int", "str", "sparse"]),
    scale=st.sampled_from(["auto", True, False]),
)
def test_brier_score_loss_equals_sklearn(seed, k, n, weighted, labels, scale):
    y, p, w = _data(seed, k, n, weighted, labels)
    pos = {"int": None, "str": "c1", "sparse": 10}[labels] if k == 2 else None
    ours = F.brier_score_loss(y, p, sample_weight=w, pos_label=pos, scale_by_half=scale)
    ref = skm.brier_score_loss(y, p, sample_weight=w, pos_label=pos, scale_by_half=scale)
    assert ours == pytest.approx(ref, rel=RTOL, abs=1e-15)


def test_brier_and_log_loss_labels_and_two_columns():
    y = np.array(["eggs", "spam", "ham", "spam"])
    p = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.1, 0.8, 0.0], [0.2, 0.5, 0.3, 0.0],
                  [0.0, 0.0, 1.0, 0.0]])
    labels = ["eggs", "ham", "spam", "yams"]
    for f, g in ((F.log_loss, skm.log_loss), (F.brier_score_loss, skm.brier_score_loss)):
        assert f(y, p, labels=labels) == pytest.approx(g(y, p, labels=labels), rel=RTOL)
    y01 = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.1, 0.8, 1.0, 0.0, 0.4])
    two = np.column_stack([1 - p1, p1])
    indicator = np.column_stack([1 - y01, y01])
    for f, g in ((F.log_loss, skm.log_loss), (F.brier_score_loss, skm.brier_score_loss)):
        for yy, pp in ((y01, p1), (y01, two), (indicator, two), (y01, p1[:, None])):
            assert f(yy, pp) == pytest.approx(g(yy, pp), rel=RTOL)


def test_float32_clipping_matches_sklearn_to_float32_precision():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([1.0, 0.0, 1.0, 0.0, 0.5], dtype=np.float32)  # eps of float32, not float64
    assert F.log_loss(y, p) == pytest.approx(skm.log_loss(y, p), rel=1e-6)
    assert F.log_loss(y, p) < 10  # float64 eps would give about 14.4


def test_unnormalized_rows_warn_and_are_used_as_given():
    y = np.array([0, 1, 1, 0])
    p = np.array([[0.2, 0.7], [0.6, 0.3], [0.4, 0.7], [0.8, 0.3]])
    for f, g in ((F.log_loss, skm.log_loss), (F.brier_score_loss, skm.brier_score_loss)):
        with pytest.warns(UserWarning, match="do not sum to one"):
            ours = f(y, p)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert ours == pytest.approx(g(y, p), rel=RTOL)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: F.log_loss([2, 2], [[0.2, 0.8], [0.6, 0.4]]), "only one label"),
        (lambda: F.log_loss([1, 0, 2], [[0.3, 0.7], [0.6, 0.4], [0.4, 0.6]]), "different number"),
        (lambda: F.log_loss(["a", "b"], [[0.9, 0.1], [0.1, 0.9]], labels=["a", "c"]), "not belonging"),
        (lambda: F.log_loss([0, 1], [0.5, 0.5], y_pred=[0.5, 0.5]), "Cannot use both"),
        (lambda: F.brier_score_loss([0, 1, 2], [0.2, 0.5, 0.1]), "should be binary"),
        (lambda: F.brier_score_loss([0, 1], [0.2, 1.5]), "greater than 1"),
        (lambda: F.brier_score_loss([0, 1], [0.2]), "inconsistent numbers"),
        (lambda: F.calibration_curve([0, 1, 2], [0.2, 0.5, 0.1], pos_label=1), "Only binary"),
        (lambda: F.calibration_curve(["a", "b"], [0.2, 0.5]), "pos_label is not specified"),
        (lambda: F.calibration_curve([0, 1], [0.2, 1.5]), "outside"),
    ],
)
def test_errors_where_sklearn_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_log_loss_y_pred_is_deprecated():
    with pytest.warns(FutureWarning, match="renamed to `y_proba`"):
        value = F.log_loss([0, 1], y_pred=[0.2, 0.9])
    assert value == pytest.approx(skm.log_loss([0, 1], [0.2, 0.9]), rel=RTOL)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 300),
    n_bins=st.integers(1, 12),
    strategy=st.sampled_from(["uniform", "quantile"]),
    labels=st.sampled_from(["int", "pm1", "str"]),
)
def test_calibration_curve_equals_sklearn(seed, n, n_bins, strategy, labels):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.round(rng.random(n), 1)  # values on bin edges too
    pos = None
    if labels == "pm1":
        y = 2 * y - 1
    elif labels == "str":
        y, pos = np.where(y == 1, "yes", "no"), "yes"
    ours = F.calibration_curve(y, p, pos_label=pos, n_bins=n_bins, strategy=strategy)
    ref = skc.calibration_curve(y, p, pos_label=pos, n_bins=n_bins, strategy=strategy)
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-15)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 200), cuts=st.integers(1, 4))
def test_functions_equal_accumulators_in_batches(seed, n, cuts):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    p = rng.random(n)
    w = rng.random(n) + 0.01
    parts = np.array_split(np.arange(n), cuts)
    loss, brier = sm.LogLoss(), sm.BrierScore()
    for idx in parts:
        loss.update(y[idx], p[idx], sample_weight=w[idx])
        brier.update(y[idx], p[idx], sample_weight=w[idx])
    assert F.log_loss(y, p, sample_weight=w) == pytest.approx(loss.compute(), rel=1e-12)
    assert F.brier_score_loss(y, p, sample_weight=w) == pytest.approx(brier.compute(), rel=1e-12)
