"""The fast paths of ``streammetrics.functional`` give scikit-learn's values: Brier score by rows
(one class per row, rows summing to 1) and by cells (rows that do not sum to 1, indicator
targets), labels 0..k-1 used as their own codes versus shifted or two-valued labels, and the
ranking functions on tied, weighted scores (the sorting kernels' paths)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics.functional as F


@settings(max_examples=25, deadline=None)
@given(n=st.integers(6, 300), c=st.integers(3, 6), normalised=st.booleans(), weighted=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_brier_by_rows_and_by_cells_equal_sklearn(n: int, c: int, normalised: bool, weighted: bool,
                                                  seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    y[:c] = np.arange(c)  # every class present
    p = rng.random((n, c))
    if normalised:
        p /= p.sum(axis=1, keepdims=True)
    w = rng.random(n) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = F.brier_score_loss(y, p, sample_weight=w)
        ref = skm.brier_score_loss(y, p, sample_weight=w)
    assert ours == pytest.approx(ref, rel=1e-12, abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 400), k=st.integers(1, 5), shift=st.sampled_from([0, 0, 3, -2]),
       weighted=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_label_codes_fast_path_equals_sklearn(n: int, k: int, shift: int, weighted: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n) + shift
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n) + shift)
    w = rng.random(n) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("accuracy_score", "hamming_loss", "zero_one_loss", "balanced_accuracy_score"):
            ours = getattr(F, name)(y, p, sample_weight=w)
            assert ours == pytest.approx(getattr(skm, name)(y, p, sample_weight=w), rel=1e-12, abs=1e-12)
        assert np.allclose(F.confusion_matrix(y, p, sample_weight=w), skm.confusion_matrix(y, p, sample_weight=w))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("decimals", [2, None])
def test_ranking_on_large_tied_weighted_scores_equals_sklearn(weighted: bool, decimals: int | None) -> None:
    # 20k samples: large enough for the sorting kernels' vectorised paths (tied needles, merged
    # threshold counts, the 64-bit key argsort of weighted scores)
    rng = np.random.default_rng(7)
    n = 20_000
    y = (rng.random(n) < 0.3).astype(int)
    s = rng.normal(size=n) + y
    if decimals is not None:
        s = np.round(s, decimals)
    w = rng.random(n) if weighted else None
    assert F.roc_auc_score(y, s, sample_weight=w) == pytest.approx(
        skm.roc_auc_score(y, s, sample_weight=w), rel=1e-12)
    assert F.average_precision_score(y, s, sample_weight=w) == pytest.approx(
        skm.average_precision_score(y, s, sample_weight=w), rel=1e-12)
    for name in ("roc_curve", "precision_recall_curve", "det_curve"):
        for a, b in zip(getattr(F, name)(y, s, sample_weight=w), getattr(skm, name)(y, s, sample_weight=w),
                        strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
