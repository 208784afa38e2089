"""Property tests: each one-shot function of streammetrics.functional equals its accumulator fed
the same data in random batches, merged and saved/loaded (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
from functional_parity import assert_same
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import streammetrics as sm
import streammetrics.functional as F

SETTINGS = settings(max_examples=25, deadline=None)
ALPHABET = ["ant", "bee", "cat", "dog"]


def _streamed(make: Any, cut: int, *arrays: Any, weights: Any = None, **kw: Any) -> Any:
    """``make()`` fed arrays[:cut] and arrays[cut:] in two accumulators, merged, saved, loaded."""
    a, b = make(), make()
    wa = None if weights is None else weights[:cut]
    wb = None if weights is None else weights[cut:]
    a.update(*(x[:cut] for x in arrays), sample_weight=wa, **kw)
    b.update(*(x[cut:] for x in arrays), sample_weight=wb, **kw)
    return sm.loads(sm.dumps(a.merge(b)))


@st.composite
def labelled(draw: Any) -> tuple[np.ndarray, np.ndarray, Any, int]:
    n = draw(st.integers(2, 60))
    yt = np.array(draw(st.lists(st.sampled_from(ALPHABET), min_size=n, max_size=n)))
    yp = np.array(draw(st.lists(st.sampled_from(ALPHABET), min_size=n, max_size=n)))
    w = draw(st.none() | st.lists(st.just(0.0) | st.floats(2.0**-128, 5.0), min_size=n, max_size=n).map(np.array))
    return yt, yp, w, draw(st.integers(0, n))


@SETTINGS
@given(labelled(), st.sampled_from(["micro", "macro", "weighted", None]))
def test_f1_and_confusion_matrix_equal_streamed_accumulators(case: Any, average: Any) -> None:
    yt, yp, w, cut = case
    classes = np.unique(np.concatenate([yt, yp]))
    assume(classes.shape[0] >= 2 and (w is None or w.sum() > 0))
    ct, cp = np.searchsorted(classes, yt), np.searchsorted(classes, yp)
    k = classes.shape[0]
    f1 = _streamed(lambda: sm.F1(k, average=average, zero_division=0.0), cut, ct, cp, weights=w)
    assert_same(F.f1_score(yt, yp, average=average, sample_weight=w, zero_division=0.0), f1.compute())
    cm = _streamed(lambda: sm.ConfusionMatrix(k), cut, ct, cp, weights=w)
    ours = F.confusion_matrix(yt, yp, sample_weight=w)
    np.testing.assert_allclose(ours, cm.compute(), rtol=1e-12, atol=1e-12)
    kappa = _streamed(
        lambda: sm.CohenKappa(k, weights="quadratic", zero_division=np.nan), cut, ct, cp, weights=w
    )
    value = kappa.compute()
    if not np.isnan(value):
        assert_same(F.cohen_kappa_score(yt, yp, weights="quadratic", sample_weight=w), value)


@st.composite
def scored(draw: Any) -> tuple[np.ndarray, np.ndarray, Any, int]:
    n = draw(st.integers(2, 80))
    y = np.array(draw(st.lists(st.sampled_from(["neg", "pos"]), min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 2.0, 1e300]), min_size=n, max_size=n)))
    w = draw(st.none() | st.lists(st.floats(0.1, 5.0), min_size=n, max_size=n).map(np.array))
    return y, s, w, draw(st.integers(0, n))


@SETTINGS
@given(scored())
def test_ranking_functions_equal_streamed_accumulators(case: Any) -> None:
    y, s, w, cut = case
    y01 = y == "pos"
    assume(y01.any() and not y01.all())
    auroc = _streamed(sm.AUROC, cut, y01, s, weights=w)
    assert_same(F.roc_auc_score(y, s, sample_weight=w), auroc.compute())
    ap = _streamed(sm.AveragePrecision, cut, y01, s, weights=w)
    assert_same(F.average_precision_score(y, s, pos_label="pos", sample_weight=w), ap.compute())
    roc = _streamed(lambda: sm.ROCCurve(drop_intermediate=True), cut, y01, s, weights=w).compute()
    fpr, tpr, thr = F.roc_curve(y, s, pos_label="pos", sample_weight=w)
    for ours, acc in ((fpr, roc.fpr), (tpr, roc.tpr), (thr, roc.thresholds)):
        np.testing.assert_array_equal(ours, acc)


@SETTINGS
@given(st.integers(2, 12), st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 3]))
def test_ndcg_equals_streamed_accumulator(rows: int, docs: int, seed: int, k: Any) -> None:
    rng = np.random.default_rng(seed)
    rel = rng.integers(0, 3, (rows, docs))
    score = np.round(rng.normal(size=(rows, docs)), 0)
    cut = int(rng.integers(0, rows + 1))
    qid = np.repeat(np.arange(rows), docs)
    a, b = sm.NDCG(k, ties="average"), sm.NDCG(k, ties="average")
    if cut:
        a.update(rel[:cut].ravel(), score[:cut].ravel(), query_ids=qid[: cut * docs])
    if cut < rows:
        b.update(rel[cut:].ravel(), score[cut:].ravel(), query_ids=qid[cut * docs :])
    merged = sm.loads(sm.dumps(a.merge(b)))
    np.testing.assert_allclose(F.ndcg_score(rel, score, k=k), merged.compute(), rtol=1e-12, atol=1e-12)
