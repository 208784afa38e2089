"""Property tests: each one-shot function of streammetrics.functional that reads scores or
probabilities equals its accumulator fed the same rows in random batches spread over 2-3
workers, merged and saved/loaded (hypothesis). The label functions:
``test_functional_properties.py``.

Ranking (AUROC binary / one-vs-rest / one-vs-one / multilabel, average precision, top-k), the
curves (ROC, precision-recall, DET, and ``auc`` of a streamed ROC curve: ``auc`` itself has no
accumulator, it integrates the points it is given), DCG / NDCG and the probabilistic losses
(log loss, Brier score, calibration curve).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from functional_parity import TOL, assert_same, fed, quiet, rows, weights
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from laws import Data, make_data, query_feed, streamed

import streammetrics as sm
import streammetrics.functional as F
from streammetrics.retrieval.metrics import DCG, NDCG

SETTINGS = settings(max_examples=25, deadline=None)
NAMES = np.array(["ant", "bee", "cat"])  # the classes of laws.make_data's multiclass kinds
BINARY = ["neg", "pos"]
seeds = st.integers(0, 2**32 - 1)


@st.composite
def scored(draw: Any) -> tuple[np.ndarray, np.ndarray, Any, int]:
    """(labels "neg"/"pos", tied and extreme scores, weights, seed of the batching)."""
    n = draw(st.integers(2, 80))
    y = np.array(draw(st.lists(st.sampled_from(BINARY), min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 2.0, 1e300]), min_size=n, max_size=n)))
    w = weights(draw, n)
    assume(np.unique(y[w != 0] if w is not None else y).shape[0] == 2)
    return y, s, w, draw(seeds)


@SETTINGS
@given(scored(), st.sampled_from([None, 0.3, 0.75]), st.booleans())
def test_binary_ranking_and_curves_equal_streamed_accumulators(case: Any, max_fpr: Any, drop: bool) -> None:
    y, s, w, seed = case
    auroc = fed(lambda: sm.AUROC(classes=BINARY, max_fpr=max_fpr), y, s, w, seed)
    assert_same(F.roc_auc_score(y, s, sample_weight=w, max_fpr=max_fpr), auroc.compute())
    ap = fed(lambda: sm.AveragePrecision(classes=BINARY, pos_label="pos"), y, s, w, seed)
    assert_same(F.average_precision_score(y, s, pos_label="pos", sample_weight=w), ap.compute())
    roc = fed(lambda: sm.ROCCurve(classes=BINARY, drop_intermediate=drop), y, s, w, seed).compute()
    fpr, tpr, thr = F.roc_curve(y, s, pos_label="pos", sample_weight=w, drop_intermediate=drop)
    np.testing.assert_array_equal(thr, roc.thresholds)
    for ours, acc in ((fpr, roc.fpr), (tpr, roc.tpr)):
        np.testing.assert_allclose(ours, acc, **TOL)
    # auc has no accumulator (it integrates the points it is given): of a streamed ROC curve it
    # is the streamed AUROC
    if max_fpr is None:
        np.testing.assert_allclose(F.auc(roc.fpr, roc.tpr), auroc.compute(), **TOL)
    det = fed(lambda: sm.DETCurve(classes=BINARY, drop_intermediate=drop), y, s, w, seed).compute()
    d_fpr, d_fnr, d_thr = F.det_curve(y, s, pos_label="pos", sample_weight=w, drop_intermediate=drop)
    np.testing.assert_array_equal(d_thr, det.thresholds)
    np.testing.assert_allclose(d_fpr, det.fpr, **TOL)
    np.testing.assert_allclose(d_fnr, det.fnr, **TOL)


@SETTINGS
@given(scored(), st.sampled_from(BINARY))
def test_precision_recall_curve_equals_streamed_accumulator(case: Any, pos_label: str) -> None:
    """scikit-learn's layout of the streamed PR curve: increasing thresholds, then the final
    (precision 1, recall 0) point; ``drop_intermediate`` keeps a subsequence with both ends."""
    y, s, w, seed = case
    pr = fed(lambda: sm.PRCurve(classes=BINARY, pos_label=pos_label), y, s, w, seed).compute()
    precision, recall, thr = F.precision_recall_curve(y, s, pos_label=pos_label, sample_weight=w)
    np.testing.assert_allclose(precision, np.append(pr.precision[::-1], 1.0), **TOL)
    np.testing.assert_allclose(recall, np.append(pr.recall[::-1], 0.0), **TOL)
    np.testing.assert_array_equal(thr, pr.thresholds[::-1])
    p2, r2, t2 = F.precision_recall_curve(y, s, pos_label=pos_label, sample_weight=w, drop_intermediate=True)
    kept = np.searchsorted(thr, t2)
    np.testing.assert_array_equal(thr[kept], t2)
    np.testing.assert_array_equal(p2, np.append(precision[kept], 1.0))
    np.testing.assert_array_equal(r2, np.append(recall[kept], 0.0))
    assert kept[0] == 0 and kept[-1] == thr.shape[0] - 1


def multiclass(kind: str, seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.random.Generator]:
    """(class names, scores, positive weights, rng) of laws.make_data's multiclass ``kind``."""
    rng = np.random.default_rng(seed)
    d = make_data(kind, rng, n)
    return NAMES[d.y], d.p, rng.integers(1, 5, n) * 0.5, rng


@SETTINGS
@given(seeds, st.integers(3, 50), st.booleans(), st.sampled_from(["micro", "macro", "weighted", None]))
def test_multiclass_ranking_equals_streamed_accumulators(seed: int, n: int, weighted: bool, average: Any) -> None:
    """One-vs-rest AUROC and AP (weighted too), one-vs-one AUROC, top-k accuracy."""
    y, p, w, rng = multiclass("multiclass_probabilities", seed, n)
    assume(np.unique(y).shape[0] == 3)
    w = w if weighted else None
    auroc = streamed(lambda: sm.AUROC(3, classes=NAMES, average=average), rows(y, p), w, rng)
    assert_same(quiet(F.roc_auc_score, y, p, multi_class="ovr", average=average, sample_weight=w),
                quiet(auroc.compute))
    ap = streamed(lambda: sm.AveragePrecision(3, classes=NAMES, average=average), rows(y, p), w, rng)
    assert_same(F.average_precision_score(y, p, average=average, sample_weight=w), ap.compute())
    if average in ("macro", "weighted"):
        ovo = streamed(lambda: sm.AUROC(3, classes=NAMES, multi_class="ovo", average=average), rows(y, p), None, rng)
        assert_same(F.roc_auc_score(y, p, multi_class="ovo", average=average), np.float64(ovo.compute()))
    for k in (1, 2):
        top = streamed(lambda k=k: sm.TopKAccuracy(3, k=k, classes=NAMES), rows(y, p), w, rng).compute()
        assert_same(F.top_k_accuracy_score(y, p, k=k, sample_weight=w), top)
        total = n if w is None else w.sum()
        np.testing.assert_allclose(F.top_k_accuracy_score(y, p, k=k, normalize=False, sample_weight=w),
                                   top * total, **TOL)


@SETTINGS
@given(seeds, st.integers(2, 40), st.booleans(), st.sampled_from(["micro", "macro", "weighted", None]))
def test_multilabel_ranking_equals_streamed_accumulators(seed: int, n: int, weighted: bool, average: Any) -> None:
    rng = np.random.default_rng(seed)
    d = make_data("multilabel_scores", rng, n)
    L = d.y.shape[1]
    w = rng.integers(1, 5, n) * 0.5 if weighted else None
    assume(bool(np.all(d.y.any(axis=0))) and not np.any(d.y.all(axis=0)))  # every column has both
    auroc = streamed(lambda: sm.AUROC(L, multilabel=True, average=average), d, w, rng)
    assert_same(F.roc_auc_score(d.y, d.p, average=average, sample_weight=w), auroc.compute())
    ap = streamed(lambda: sm.AveragePrecision(L, multilabel=True, average=average), d, w, rng)
    assert_same(F.average_precision_score(d.y, d.p, average=average, sample_weight=w), ap.compute())


def queries(rel: np.ndarray, score: np.ndarray) -> Data:
    """One query per row of the (n_queries, n_documents) matrices."""
    q, m = rel.shape
    return Data(rel.ravel().astype(np.float64), score.ravel(), np.repeat(np.arange(q), m))


@SETTINGS
@given(st.integers(1, 12), st.integers(2, 6), seeds, st.sampled_from([None, 1, 3]), st.booleans(), st.booleans())
def test_dcg_and_ndcg_equal_streamed_accumulators(rows_: int, docs: int, seed: int, k: Any, weighted: bool,
                                                  ignore_ties: bool) -> None:
    """Unweighted: the accumulators' mean over queries; weighted: their per-query values (in the
    original order) averaged with the row weights."""
    rng = np.random.default_rng(seed)
    rel = rng.integers(0, 3, (rows_, docs))
    score = np.round(rng.normal(size=(rows_, docs)), 0)
    w = rng.random(rows_) + 0.1 if weighted else None
    ties = "first" if ignore_ties else "average"
    data = queries(rel, score)
    for fn, cls in ((F.dcg_score, DCG), (F.ndcg_score, NDCG)):
        merged = streamed(lambda cls=cls: cls(k, ties=ties, per_query=True), data, None, rng, query_feed,
                          in_order=True)
        expected = np.average(merged.per_query_values(), weights=w) if weighted else merged.compute()
        ours = fn(rel, score, k=k, sample_weight=w, ignore_ties=ignore_ties)
        np.testing.assert_allclose(ours, expected, **TOL, err_msg=fn.__name__)
    # log_base rescales every discount by the same factor log2(base)
    np.testing.assert_allclose(F.dcg_score(rel, score, k=k, log_base=10, ignore_ties=ignore_ties),
                               F.dcg_score(rel, score, k=k, ignore_ties=ignore_ties) * math.log2(10), **TOL)


@SETTINGS
@given(seeds, st.integers(2, 60), st.booleans(), st.booleans())
def test_log_loss_and_brier_equal_streamed_calibration_accumulators(seed: int, n: int, weighted: bool,
                                                                    normalize: bool) -> None:
    """Binary (1-D probabilities of "pos", 0 and 1 included: clipped) and multiclass rows."""
    rng = np.random.default_rng(seed)
    d = make_data("probabilities", rng, n)
    y = np.array(BINARY)[d.y]
    w = rng.integers(0, 4, n) * 0.5 if weighted else None
    assume(np.unique(y).shape[0] == 2 and (w is None or w.sum() > 0))
    total = n if w is None else w.sum()
    ms = streamed(lambda: sm.MetricSet(loss=sm.LogLoss(classes=BINARY), brier=sm.BrierScore(classes=BINARY)),
                  rows(y, d.p), w, rng).compute()
    np.testing.assert_allclose(F.log_loss(y, d.p, normalize=normalize, sample_weight=w),
                               ms["loss"] * (1.0 if normalize else total), **TOL)
    assert_same(F.brier_score_loss(y, d.p, pos_label="pos", sample_weight=w), ms["brier"])
    y3, p3, w3, rng = multiclass("multiclass_probabilities", seed, n)
    assume(np.unique(y3).shape[0] == 3)
    w3 = w3 if weighted else None
    ms = streamed(lambda: sm.MetricSet(loss=sm.LogLoss(3, classes=NAMES), brier=sm.BrierScore(3, classes=NAMES)),
                  rows(y3, p3), w3, rng).compute()
    assert_same(F.log_loss(y3, p3, sample_weight=w3), ms["loss"])
    assert_same(F.brier_score_loss(y3, p3, sample_weight=w3), ms["brier"])
    assert_same(F.brier_score_loss(y3, p3, sample_weight=w3, scale_by_half=True), ms["brier"] / 2)


@SETTINGS
@given(seeds, st.integers(2, 60), st.integers(1, 6), st.sampled_from(["uniform", "quantile"]))
def test_calibration_curve_equals_streamed_accumulator(seed: int, n: int, n_bins: int, strategy: str) -> None:
    rng = np.random.default_rng(seed)
    d = make_data("probabilities", rng, n)
    y = np.array(BINARY)[d.y]
    curve = streamed(lambda: sm.CalibrationCurve(n_bins, strategy, classes=BINARY), rows(y, d.p), None, rng)
    res = curve.compute()
    prob_true, prob_pred = F.calibration_curve(y, d.p, pos_label="pos", n_bins=n_bins, strategy=strategy)
    np.testing.assert_allclose(prob_true, res.prob_true, **TOL)
    np.testing.assert_allclose(prob_pred, res.prob_pred, **TOL)
