"""scikit-learn 1.9's confusion_matrix_at_thresholds, metric_at_thresholds and
class_likelihood_ratios in streammetrics.functional: equal to scikit-learn on random data with
ties and weights (their own tests run in CI through tests/sklearn_suite_plugin.py)."""

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
