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


def _assert_binary_ranking_equals_sklearn(y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> None:
    assert F.roc_auc_score(y, s, sample_weight=w) == pytest.approx(
        skm.roc_auc_score(y, s, sample_weight=w), rel=1e-12)
    assert F.average_precision_score(y, s, sample_weight=w) == pytest.approx(
        skm.average_precision_score(y, s, sample_weight=w), rel=1e-12)
    for name in ("roc_curve", "precision_recall_curve", "det_curve"):
        for a, b in zip(getattr(F, name)(y, s, sample_weight=w), getattr(skm, name)(y, s, sample_weight=w),
                        strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


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
    _assert_binary_ranking_equals_sklearn(y, s, w)


@pytest.mark.parametrize("decimals", [2, None])
def test_weighted_multiclass_ranking_with_zero_weights_equals_sklearn(decimals: int | None) -> None:
    # 6000 rows x 4 classes: every one-vs-rest column takes the one-sort split of a weighted
    # column (sort_split); ties, zero weights and weights of one mixed in
    rng = np.random.default_rng(11)
    n, c = 6000, 4
    y = rng.integers(0, c, n)
    z = rng.normal(size=(n, c))
    z[np.arange(n), y] += 1.0
    if decimals is not None:
        z = np.round(z, decimals)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    w = rng.random(n)
    w[rng.random(n) < 0.1] = 0.0
    w[rng.random(n) < 0.1] = 1.0
    for average in ("macro", "weighted", None):
        ours = F.roc_auc_score(y, p, multi_class="ovr", average=average, sample_weight=w)
        ref = skm.roc_auc_score(y, p, multi_class="ovr", average=average, sample_weight=w)
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
        ours = F.average_precision_score(y, p, average=average, sample_weight=w)
        ref = skm.average_precision_score(y, p, average=average, sample_weight=w)
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_weighted_binary_ranking_with_zero_weights_and_colliding_keys_equals_sklearn() -> None:
    # scores that differ only in their last bits (they share the truncated sort key), signed
    # zeros, zero weights: the key sort's exact fix-up inside each label group
    rng = np.random.default_rng(5)
    n = 9000
    y = (rng.random(n) < 0.4).astype(int)
    s = 1.0 + rng.integers(0, 40, n) * 2.0**-50 + y * 2.0**-49
    s[:500] = np.where(rng.random(500) < 0.5, -0.0, 0.0)
    w = rng.random(n)
    w[rng.random(n) < 0.2] = 0.0
    _assert_binary_ranking_equals_sklearn(y, s, w)


@pytest.mark.parametrize("k", [2, 10])
def test_weighted_confusion_family_over_several_count_blocks_equals_sklearn(k: int) -> None:
    # 70k rows: more than two blocks of the blocked cell counting; zero weights included
    rng = np.random.default_rng(3)
    n = 70_000
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n))
    w = rng.random(n)
    w[rng.random(n) < 0.1] = 0.0
    for name in ("accuracy_score", "hamming_loss", "zero_one_loss", "balanced_accuracy_score"):
        ours = getattr(F, name)(y, p, sample_weight=w)
        assert ours == pytest.approx(getattr(skm, name)(y, p, sample_weight=w), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(F.confusion_matrix(y, p, sample_weight=w),
                               skm.confusion_matrix(y, p, sample_weight=w), rtol=1e-12)
