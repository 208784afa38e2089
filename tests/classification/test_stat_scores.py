"""``StatScores`` (torchmetrics' ``*StatScores``): exact against scikit-learn's
``multilabel_confusion_matrix`` with weights, against torchmetrics 1.9 (integer counts exact; the
macro / weighted means torchmetrics takes in float32 to 1e-6), with ``top_k`` and
``ignore_index``; the streaming laws run over the ``stat_scores_*`` entries of
tests/_support/laws.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_topk_confusion import _unambiguous_rows, oracle_counts, tied_data

import streammetrics as sm

AVERAGES = ("micro", "macro", "weighted", None)


def rows_of(mcm: np.ndarray) -> np.ndarray:
    """(C, 5) [tp, fp, tn, fn, support] of scikit-learn's (C, 2, 2) one-vs-rest matrices."""
    tn, fp, fn, tp = mcm[:, 0, 0], mcm[:, 0, 1], mcm[:, 1, 0], mcm[:, 1, 1]
    return np.stack([tp, fp, tn, fn, tp + fn], axis=1).astype(np.float64)


def averaged(rows: np.ndarray, average: str | None) -> np.ndarray:
    if average is None:
        return rows
    if average == "micro":
        return rows.sum(axis=0)
    if average == "weighted" and rows[:, 4].sum() > 0:
        return np.average(rows, axis=0, weights=rows[:, 4])
    return rows.mean(axis=0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), c=st.integers(2, 6), n=st.integers(0, 40),
       weighted=st.booleans(), multilabel=st.booleans())
def test_counts_equal_sklearn_with_weights(seed, c, n, weighted, multilabel):
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, n) * 0.5 if weighted else None
    if w is not None and n:
        w[0] += 1.0  # (scikit-learn refuses weights that are all 0)
    if multilabel:
        y, p = rng.integers(0, 2, (n, c)), rng.integers(0, 2, (n, c))
    else:
        y, p = rng.integers(0, c, n), rng.integers(0, c, n)
    labels = None if multilabel else list(range(c))
    mcm = (skm.multilabel_confusion_matrix(y, p, sample_weight=w, labels=labels) if n
           else np.zeros((c, 2, 2)))
    for average in AVERAGES:
        m = sm.StatScores(c, multilabel=multilabel, average=average)
        m.update(y[: n // 2], p[: n // 2], sample_weight=None if w is None else w[: n // 2])
        m.update(y[n // 2:], p[n // 2:], sample_weight=None if w is None else w[n // 2:])
        np.testing.assert_allclose(m.compute(), averaged(rows_of(mcm), average), rtol=1e-12, atol=0)
    if not multilabel and n:  # labels=: the selected classes' rows, in that order
        sel = [c - 1, 0]
        got = sm.StatScores(c, average=None, labels=sel).update(y, p, sample_weight=w).compute()
        np.testing.assert_allclose(got, rows_of(mcm)[sel], rtol=1e-12, atol=0)


def test_binary_equals_the_positive_class():
    y, p = np.array([0, 1, 1, 0, 1, 1]), np.array([0.9, 0.7, 0.2, 0.1, 0.5, 0.6])
    got = sm.StatScores().update(y, p).compute()
    pred = p >= 0.5
    tp, fp = int((pred & (y == 1)).sum()), int((pred & (y == 0)).sum())
    fn, tn = int((~pred & (y == 1)).sum()), int((~pred & (y == 0)).sum())
    np.testing.assert_array_equal(got, [tp, fp, tn, fn, tp + fn])


def _torch():
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    return torch, tmc


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("ignore", [None, -1, 1])
def test_multiclass_equals_torchmetrics(average, ignore):
    torch, tmc = _torch()
    rng = np.random.default_rng(11)
    for c in (2, 3, 6):
        y, p = rng.integers(0, c, 200), rng.integers(0, c, 200)
        if ignore is not None:
            y[::7] = ignore
        peer = tmc.MulticlassStatScores(num_classes=c, average=average or "none", ignore_index=ignore)
        want = peer(torch.from_numpy(p), torch.from_numpy(y)).numpy()
        got = sm.StatScores(c, average=average, ignore_index=ignore).update(y, p).compute()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("average", AVERAGES)
def test_multiclass_top_k_equals_torchmetrics(average):
    torch, tmc = _torch()
    rng = np.random.default_rng(5)
    compared = 0
    for c in (3, 5):
        for k in range(2, c + 1):
            y, s = tied_data(rng, 300, c, levels=4)
            keep = _unambiguous_rows(y, s, k)  # torch.topk leaves the order of ties unspecified
            y, s = y[keep], s[keep]
            peer = tmc.MulticlassStatScores(num_classes=c, top_k=k, average=average or "none")
            want = peer(torch.from_numpy(s.astype(np.float32)), torch.from_numpy(y)).numpy()
            got = sm.StatScores(c, top_k=k, average=average).update(y, s).compute()
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
            compared += 1
    assert compared == 6


def test_top_k_weighted_counts_equal_the_oracle():
    rng = np.random.default_rng(2)
    y, s = tied_data(rng, 80, 4)
    w = rng.integers(0, 3, 80).astype(np.float64)
    tp, fp, fn, tn = oracle_counts(y, s, 2, w)
    got = sm.StatScores(4, top_k=2, average=None).update(y, s, sample_weight=w).compute()
    np.testing.assert_array_equal(got, np.stack([tp, fp, tn, fn, tp + fn], axis=1))


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("ignore", [None, -1])
def test_multilabel_and_binary_equal_torchmetrics(average, ignore):
    torch, tmc = _torch()
    rng = np.random.default_rng(13)
    y = rng.integers(0, 2, (150, 4))
    s = (rng.integers(0, 20, (150, 4)) + 0.5) / 20  # never at the threshold (> vs >=)
    if ignore is not None:
        y[rng.random(y.shape) < 0.1] = ignore
    peer = tmc.MultilabelStatScores(num_labels=4, average=average or "none", ignore_index=ignore)
    want = peer(torch.from_numpy(s.astype(np.float32)), torch.from_numpy(y)).numpy()
    got = sm.StatScores(4, multilabel=True, average=average, ignore_index=ignore).update(y, s).compute()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    peer = tmc.BinaryStatScores(ignore_index=ignore)
    want = peer(torch.from_numpy(s[:, 0].astype(np.float32)), torch.from_numpy(y[:, 0])).numpy()
    got = sm.StatScores(ignore_index=ignore).update(y[:, 0], s[:, 0]).compute()
    np.testing.assert_array_equal(got, want)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="average"):
        sm.StatScores(3, average="samples")
    with pytest.raises(ValueError, match="top_k"):
        sm.StatScores(3, multilabel=True, top_k=2)
    m = sm.StatScores(3, average="none", top_k=2)
    assert m.average is None and type(m)(**m._config())._state.key() == m._state.key()


def test_shares_the_confusion_state_in_a_metric_set():
    ms = sm.MetricSet(s=sm.StatScores(3, average=None), r=sm.Recall(3, average=None))
    ms.update([0, 1, 2, 2], [0, 2, 2, 1])
    assert ms["s"]._state is ms["r"]._state
    np.testing.assert_array_equal(ms.compute()["r"], [1.0, 0.0, 0.5])
