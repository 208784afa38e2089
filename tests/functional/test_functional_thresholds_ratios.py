"""scikit-learn 1.9's confusion_matrix_at_thresholds, metric_at_thresholds and
class_likelihood_ratios in streammetrics.functional: equal to scikit-learn on random data with
ties and weights (their own tests run in CI through tests/_support/sklearn_suite_plugin.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics.functional as F

skm = pytest.importorskip("sklearn.metrics")


def _data(seed: int, n: int, levels: int, weighted: bool):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.integers(0, levels, n) / levels
    w = rng.integers(0, 4, n).astype(float) if weighted else None  # zero weights included
    return y, s, w


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), levels=st.integers(1, 8), weighted=st.booleans())
def test_confusion_matrix_at_thresholds_equals_sklearn(seed, n, levels, weighted):
    y, s, w = _data(seed, n, levels, weighted)
    if w is not None and not w.any():
        w[0] = 1.0
    ours = F.confusion_matrix_at_thresholds(y, s, sample_weight=w)
    theirs = skm.confusion_matrix_at_thresholds(y, s, sample_weight=w)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert a.dtype == b.dtype and a.shape == b.shape
    ints = F.confusion_matrix_at_thresholds(y, (s * levels).astype(np.int64), sample_weight=w)[-1]
    assert ints.dtype == np.int64  # the scores' dtype, as scikit-learn


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), levels=st.integers(1, 6), weighted=st.booleans())
def test_metric_at_thresholds_equals_sklearn(seed, n, levels, weighted):
    y, s, w = _data(seed, n, levels, weighted)
    if w is not None and not w.any():
        w[0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = F.metric_at_thresholds(y, s, skm.f1_score, sample_weight=w, metric_params={"zero_division": 0.0})
        theirs = skm.metric_at_thresholds(y, s, skm.f1_score, sample_weight=w, metric_params={"zero_division": 0.0})
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours[1], theirs[1])


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), weighted=st.booleans(),
       replace=st.sampled_from([np.nan, 1.0, {"LR+": 2.0, "LR-": 0.25}, {"LR+": np.inf, "LR-": np.nan}]))
def test_class_likelihood_ratios_equal_sklearn(seed, n, weighted, replace):
    rng = np.random.default_rng(seed)
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    w = rng.random(n) + 0.1 if weighted else None
    outcomes = []
    for fn in (F.class_likelihood_ratios, skm.class_likelihood_ratios):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                value = fn(y, p, sample_weight=w, replace_undefined_by=replace)
            except ValueError as exc:
                value = type(exc)
        messages = sorted(str(x.message) for x in seen if not issubclass(x.category, RuntimeWarning))
        outcomes.append((value, messages))
    (ours, our_msgs), (theirs, their_msgs) = outcomes
    if isinstance(theirs, type):
        assert ours is theirs
        return
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, equal_nan=True)
    assert our_msgs == their_msgs


def test_likelihood_ratios_refuse_multiclass_and_bad_replacement():
    with pytest.raises(ValueError, match="only supports binary classification"):
        F.class_likelihood_ratios([0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="replace_undefined_by"):
        F.class_likelihood_ratios([0, 1], [0, 1], replace_undefined_by={"LR+": 0.5, "LR-": 0.5})


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40), classes=st.integers(2, 4), weighted=st.booleans())
def test_d2_scores_and_hinge_equal_sklearn(seed, n, classes, weighted):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)[: min(classes, n)]  # every class present when n allows
    w = rng.random(n) + 0.05 if weighted else None
    labels = list(range(classes))
    if classes == 2:
        p = np.round(rng.random(n), 3)
        dec = np.round(rng.normal(size=n), 2)
    else:
        q = rng.integers(1, 6, (n, classes)).astype(float)
        p = q / q.sum(axis=1, keepdims=True)
        dec = np.round(rng.normal(size=(n, classes)), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [
            (F.d2_log_loss_score(y, p, sample_weight=w, labels=labels),
             skm.d2_log_loss_score(y, p, sample_weight=w, labels=labels)),
            (F.d2_brier_score(y, p, sample_weight=w, labels=labels),
             skm.d2_brier_score(y, p, sample_weight=w, labels=labels)),
            (F.hinge_loss(y, dec, sample_weight=w, labels=labels),
             skm.hinge_loss(y, dec, sample_weight=w, labels=labels)),
        ]
    for ours, theirs in pairs:
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12, nan_ok=True)


def test_d2_needs_two_samples_and_hinge_binary_signs():
    with pytest.warns(UserWarning, match="D\\^2 score is not well-defined with less than two samples"):
        assert np.isnan(F.d2_brier_score([1], [0.7]))
    assert F.hinge_loss(["b", "a", "b"], [0.5, -2.0, 1.5]) == skm.hinge_loss(["b", "a", "b"], [0.5, -2.0, 1.5])
    assert F.hinge_loss([3, 3], [0.5, -2]) == skm.hinge_loss([3, 3], [0.5, -2])  # one class: all -1
