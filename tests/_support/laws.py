"""One registry of every public metric and the helpers of the shared protocol laws.

A :class:`Case` is a representative configuration of a public metric: how to build it, which
kind of data it reads, how to feed it a slice of that data, and which of the protocol laws hold
for it (a count window does not merge into the one-shot stream, a decayed stream does not see k
copies as a weight of k, ...). ``tests/test_protocol_laws.py`` runs every law over every case.

Data are rows with a group per row: a group is the unit a batch may not cut (a query of the
retrieval metrics and of trec_eval's measures in ``streammetrics.trec``; a single row otherwise).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import streammetrics as sm
import streammetrics.calibration as smc
import streammetrics.retrieval.metrics as smr
import streammetrics.trec as smt
from streammetrics.monitoring import Drift, Estimated
from streammetrics.retrieval.metrics import (
    CG,
    DCG,
    MAP,
    MRR,
    NDCG,
    ElevenPointAP,
    InterpolatedPrecision,
    PrecisionAtK,
    PrecisionAtRecall,
    RecallAtK,
    RPrecision,
    SetPrecision,
    SetRecall,
    SystemEfficiency,
)
from streammetrics.trec import NOT_IN_QRELS, UNJUDGED, DiversityMeasures, TrecMeasure, TrecMeasures

C = 3  # classes of the multiclass data, columns of the multilabel data

ALL_LAWS = frozenset({"split", "merge", "save_load", "copy", "unit_weights", "integer_weights", "prefix",
                      "rejected", "window_equals_plain", "per_sample"})


@dataclasses.dataclass(frozen=True)
class Data:
    """Rows of one stream: labels, predictions, the group of each row (contiguous) and its id."""

    y: np.ndarray
    p: np.ndarray
    groups: np.ndarray

    @property
    def n_groups(self) -> int:
        return int(self.groups[-1]) + 1 if len(self.groups) else 0

    def rows(self, keep_groups: np.ndarray) -> np.ndarray:
        """Indices of the rows whose group is in ``keep_groups`` (a boolean mask over groups)."""
        return np.flatnonzero(keep_groups[self.groups]) if len(self.groups) else np.zeros(0, int)


def make_data(kind: str, rng: np.random.Generator, n: int) -> Data:
    """``n`` groups of data of one kind (ties, edges and, for ranking, infinite scores)."""
    groups = np.arange(n)
    levels = int(rng.integers(1, 6))
    if kind == "binary_scores":
        y, p = rng.integers(0, 2, n), np.round(rng.random(n) * levels) / levels
    elif kind == "ranking_scores":
        p = np.round(rng.random(n) * levels) / levels
        p[rng.random(n) < 0.05] = np.inf
        p[rng.random(n) < 0.05] = -np.inf
        y = rng.integers(0, 2, n)
    elif kind == "distinct_scores":  # more distinct scores than a bounded metric's 16 bins (few ties)
        y, p = rng.integers(0, 2, n), np.round(rng.random(n) ** 2, 3)
    elif kind == "binary_labels":
        y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    elif kind == "string_labels":
        names = np.array(["ant", "bee", "cat"])
        y, p = names[rng.integers(0, C, n)], names[rng.integers(0, C, n)]
    elif kind == "string_binary_scores":
        y = np.array(["neg", "pos"])[rng.integers(0, 2, n)]
        p = np.round(rng.random(n) * levels) / levels
    elif kind == "multiclass_scores":
        y, p = rng.integers(0, C, n), np.round(rng.random((n, C)) * levels) / levels
    elif kind == "multiclass_labels":
        y, p = rng.integers(0, C, n), rng.integers(0, C, n)
    elif kind == "multilabel_scores":
        y, p = rng.integers(0, 2, (n, C)), np.round(rng.random((n, C)) * levels) / levels
    elif kind == "multilabel_labels":
        y, p = rng.integers(0, 2, (n, C)), rng.integers(0, 2, (n, C))
    elif kind == "multiclass_grid":  # multidim_average="samplewise": 2 positions a sample
        y, p = rng.integers(0, C, (n, 2)), rng.integers(0, C, (n, 2))
    elif kind == "probabilities":
        y, p = rng.integers(0, 2, n), rng.integers(0, 9, n) / 8  # 0 and 1 included
    elif kind == "multiclass_probabilities":
        q = rng.integers(0, 5, (n, C)).astype(float) + np.eye(C)[rng.integers(0, C, n)]
        y, p = rng.integers(0, C, n), q / q.sum(axis=1, keepdims=True)
    elif kind == "logits":
        y, p = rng.integers(0, C, n), rng.integers(-3, 4, (n, C)).astype(float)
    elif kind in ("continuous", "continuous_multioutput"):  # regression: ties, outliers, signs
        shape = (n,) if kind == "continuous" else (n, C)
        y = np.round(rng.normal(size=shape) * levels) / levels
        y[rng.random(shape) < 0.05] *= 50.0
        p = y + np.round(rng.normal(size=shape) * levels) / (2 * levels)
    elif kind == "positive_continuous":  # y >= 0 (zeros included), y_pred > 0: logs, Tweedie
        y = rng.integers(0, 5, n) / levels
        p = rng.integers(1, 9, n) / levels
    elif kind == "scores_only":  # no labels (streammetrics.monitoring.Drift): y is unused
        y, p = np.zeros(n, dtype=np.int64), np.round(rng.random(n) * levels) / levels
    elif kind == "intervals":  # regression: a target and its [lower, upper] interval (ties, bounds hit)
        y = np.round(rng.normal(size=n) * levels) / levels
        center = y + np.round(rng.normal(size=n) * levels) / levels
        half = np.abs(np.round(rng.normal(size=n) * levels)) / levels
        p = np.stack([center - half, center + half], axis=1)
    elif kind == "queries":
        sizes = rng.integers(1, 6, n)
        groups = np.repeat(np.arange(n), sizes)
        m = len(groups)
        y = rng.integers(0, 4, m) * (rng.random(m) < 0.6)
        p = np.round(rng.random(m) * levels) / levels
    else:
        raise AssertionError(kind)
    return Data(y, p, groups)


def plain_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
               groups: np.ndarray) -> None:
    metric.update(y, p, sample_weight=w)


def query_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
               groups: np.ndarray) -> None:
    assert w is None
    metric.update(y, p, query_ids=groups)


def judgments(y: np.ndarray, rows: np.ndarray, groups: np.ndarray, trec: bool
               ) -> tuple[np.ndarray, dict[int, np.ndarray], np.ndarray]:
    """The relevance, judged grades and document ids of a batch of query rows, each a function of
    the row and its query alone (so any split or partition gives every row the same judgment).

    A retrieved row of grade 0 whose index is 4 mod 5 is missing from the qrels; one at 3 mod 7
    is judged negative (-1); query q also judged ``q mod 4`` documents it did not retrieve (grades
    1, 2, 0), so R counts relevant documents outside the run. Rows are passed as ``relevance`` as
    trec_eval's codes (:data:`NOT_IN_QRELS`, :data:`UNJUDGED`) with ``trec``, else as the grade
    the retrieval family reads (0 for a document outside the qrels, the negative grade as given).
    """
    y = np.asarray(y)
    rows = np.asarray(rows)
    missing = (y == 0) & (rows % 5 == 4)
    negative = (y == 0) & (rows % 7 == 3) & ~missing
    grades = np.where(negative, -1, y)
    relevance = np.where(missing, NOT_IN_QRELS, np.where(negative, UNJUDGED, y)) if trec else grades
    judged = {}
    for q in np.unique(groups).tolist():
        in_q = (groups == q) & ~missing
        judged[q] = np.concatenate([grades[in_q], np.array([1, 2, 0])[: q % 4]]).astype(float)
    return relevance, judged, np.char.add("d", rows.astype(str))


def judged_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                groups: np.ndarray) -> None:
    """Query rows with the judged grades of each query and document ids (ties broken by id); a
    batch of one query without query ids (an update without them is one query), so that a split
    or a partition sends a query by either path."""
    assert w is None
    relevance, judged, docs = judgments(y, rows, groups, trec=False)
    if len(judged) == 1:
        metric.update(relevance, p, doc_ids=docs, judged=judged.popitem()[1])
    else:
        metric.update(relevance, p, doc_ids=docs, judged=judged, query_ids=groups)


def trec_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
              groups: np.ndarray) -> None:
    """As :func:`judged_feed`, with trec_eval's codes for documents outside the qrels and judged
    negative."""
    assert w is None
    relevance, judged, docs = judgments(y, rows, groups, trec=True)
    metric.update(relevance, p, doc_ids=docs, judged=judged, query_ids=groups)


def subtopic_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                  groups: np.ndarray) -> None:
    """Query rows with subtopic judgment rows (``DiversityMeasures``), each a function of the row
    and its query alone: document ``d<row>`` judged its grade for subtopic ``s<row mod 3>``, and 1
    for the next subtopic too when the row is even and relevant; query q also judges ``q mod 3``
    documents it did not retrieve."""
    assert w is None
    y, rows, groups = np.asarray(y), np.asarray(rows), np.asarray(groups)
    judged: dict[int, list[tuple[str, str, int]]] = {}
    for q in np.unique(groups).tolist():
        at = np.flatnonzero(groups == q).tolist()
        judged[q] = [(f"s{rows[i] % 3}", f"d{rows[i]}", int(y[i])) for i in at]
        judged[q] += [(f"s{(rows[i] + 1) % 3}", f"d{rows[i]}", 1) for i in at if rows[i] % 2 == 0 and y[i] > 0]
        judged[q] += [("s0", f"u{q}_{j}", 1) for j in range(q % 3)]
    metric.update(None, p, doc_ids=np.char.add("d", rows.astype(str)), judged=judged, query_ids=groups)


def delayed_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                 groups: np.ndarray) -> None:
    """Predictions first, then their labels (in reverse order: labels arrive in any order)."""
    metric.predict(rows, p, sample_weight=w)
    metric.label(rows[::-1], y[::-1])


def sliced_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                groups: np.ndarray) -> None:
    """Slice keys that belong to the rows (so any split gives each row the same key)."""
    keys = np.array(["a", "b", "c"])[np.asarray(rows) % 3]
    metric.update(y, p, slices=keys, sample_weight=w)


def sliced_scores_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                       groups: np.ndarray) -> None:
    """A Sliced metric without labels (Drift, Estimated): the scores alone, with the keys of
    :func:`sliced_feed`."""
    keys = np.array(["a", "b", "c"])[np.asarray(rows) % 3]
    metric.update(p, slices=keys, sample_weight=w)


def estimated_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                   groups: np.ndarray) -> None:
    """Probabilities only (``streammetrics.monitoring.Estimated``): the labels are not given."""
    metric.update(p, sample_weight=w)


def drift_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
               groups: np.ndarray) -> None:
    """Scores only (``streammetrics.monitoring.Drift``): no labels."""
    metric.update(p, sample_weight=w)


@dataclasses.dataclass(frozen=True)
class Case:
    make: Callable[[], Any]
    kind: str
    feed: Callable[..., None] = plain_feed
    laws: frozenset[str] = ALL_LAWS
    #: exact (bit for bit) comparisons where unit weights make every statistic an integer
    exact: bool = True
    #: compare the saved states (not only the values) in the split and merge laws
    compare_state: bool = True
    #: the state keeps per-query values in arrival order: the merge law compares the states of an
    #: in-order merge of contiguous pieces (and the per-query values of any partition as a multiset)
    arrival_order: bool = False
    #: relative tolerance of the comparisons that are not exact (weighted sums in another order)
    rtol: float = 1e-12
    #: readouts beside ``compute()`` that the laws compare too (a curve's certificates, an interval)
    readouts: Callable[[Any], Any] | None = None
    #: the value is undefined (nan) below this many rows, also for one row of weight k >= 2: the
    #: integer-weight law keeps that many rows of positive weight and holds from there
    min_rows: int = 0


def query_case(make: Callable[[], Any], feed: Callable[..., None] = query_feed,
               laws: frozenset[str] | None = None, **options: Any) -> Case:
    """A case of the query-grouped families (retrieval, trec): no sample weights; values are means
    over queries, equal up to the order of the sum (to 1e-12)."""
    return Case(make, "queries", feed, NOT_WEIGHTED if laws is None else laws, exact=False, rtol=1e-12,
                **options)


def without(*names: str) -> frozenset[str]:
    return ALL_LAWS - set(names)


NOT_WEIGHTED = without("unit_weights", "integer_weights")
SAMPLEWISE_LAWS = without("unit_weights", "integer_weights", "per_sample", "merge")
# a wrapper is not wrapped again; a query metric takes no weights
WRAPPER_LAWS = without("window_equals_plain", "integer_weights")
ESTIMATED_LAWS = without("window_equals_plain", "rejected")
#: Drift takes no labels: no mismatched-label batch to reject (its own rejected batches:
#: tests/monitoring/test_drift_inputs.py)
DRIFT_LAWS = without("rejected", "per_sample")
DRIFT_WRAPPER_LAWS = WRAPPER_LAWS - {"rejected", "per_sample", "merge"}
DRIFT_REF = np.round(np.random.default_rng(31).random((40, 3)) * 4) / 4  # ties, edges on the data's levels

def curve_readouts(metric: Any) -> list[Any]:
    """Every certified readout of a binary ROC or PR curve (``ROCCurve``, ``PRCurve``, or each
    such member of a set): the envelope, the area bounds, the best thresholds and a point."""
    members = [metric[k] for k in metric] if isinstance(metric, sm.MetricSet) else [metric]
    out: list[Any] = []
    for m in members:
        if not isinstance(m, (sm.ROCCurve, sm.PRCurve)):
            continue
        c = m.compute()
        if isinstance(m, sm.ROCCurve):
            out += [c.envelope(), c.area_bounds(), c.area_bounds(0.1)]
        else:
            out += [c.envelope(), c.area_bounds("interpolated"), c.area_bounds("eleven_point")]
        for criterion, value in (("youden", None), ("f1", None), ("tpr_at_tnr", 0.8)):
            b = c.best_threshold(criterion, value)
            out += [b.threshold, b.tp, b.fp, b.score, b.score_bound, b.search_range]
        pt = c.at(0.37)
        out += [pt.tp, pt.fp, pt.tp_range, pt.fp_range]
    return out


def estimated_interval(metric: Any) -> Any:
    """The interval an ``Estimated`` metric gives of the value the labels will give."""
    return metric.interval()


def retrieval_metrics(per_query: bool = False) -> dict[str, sm.Metric]:
    """One of each retrieval accumulator with its common options (tie handling, cutoffs, gains)."""
    pq = {"per_query": per_query}
    return {
        "p5": PrecisionAtK(5, **pq),
        "p3avg": PrecisionAtK(3, ties="average", **pq),
        "r5": RecallAtK(5, **pq),
        "rprec": RPrecision(**pq),
        "par": PrecisionAtRecall(0.5, **pq),
        "map": MAP(**pq),
        "map3": MAP(3, **pq),
        "mrr": MRR(**pq),
        "cg": CG(4, normalize=True, rel_max=3, **pq),
        "dcg": DCG(5, gain="exponential", **pq),
        "ndcg": NDCG(10, **pq),
        "ndcg_avg": NDCG(ties="average", **pq),
        "iprec": InterpolatedPrecision([0.2, 0.8], **pq),
        "e11": ElevenPointAP(**pq),
        "eff": SystemEfficiency(**pq),
        "sp": SetPrecision(average="micro", **pq),
        "sr": SetRecall(**pq),
    }


REGISTRY: dict[str, Case] = {
    # confusion family
    "binary_f1_scores": Case(lambda: sm.F1(zero_division=0.0), "binary_scores"),
    "binary_precision_labels": Case(lambda: sm.Precision(zero_division=1.0), "binary_labels"),
    "binary_recall": Case(lambda: sm.Recall(zero_division=0.0), "binary_scores"),
    "binary_specificity": Case(lambda: sm.Specificity(zero_division=0.0), "binary_scores"),
    "binary_fallout": Case(lambda: sm.FallOut(zero_division=0.0), "binary_labels"),
    "binary_missrate": Case(lambda: sm.MissRate(zero_division=0.0), "binary_scores"),
    "binary_fdr": Case(lambda: sm.FDR(zero_division=0.0), "binary_scores"),
    "binary_for": Case(lambda: sm.FOR(zero_division=0.0), "binary_labels"),
    "binary_prevalence": Case(lambda: sm.Prevalence(zero_division=0.0), "binary_labels"),
    "binary_error_rate": Case(lambda: sm.ErrorRate(zero_division=0.0), "binary_scores"),
    "binary_mcc": Case(lambda: sm.MatthewsCorrCoef(), "binary_scores"),
    "binary_kappa": Case(lambda: sm.CohenKappa(zero_division=0.0), "binary_labels"),
    "binary_npv": Case(lambda: sm.NPV(zero_division=np.nan), "binary_scores"),
    "binary_weighted_accuracy": Case(lambda: sm.WeightedAccuracy(weights=[0.2, 0.8], zero_division=0.0),
                                     "binary_scores"),
    "multiclass_recall_macro": Case(lambda: sm.Recall(C, zero_division=0.0), "multiclass_scores"),
    "multiclass_fbeta_weighted": Case(
        lambda: sm.FBeta(C, beta=2.0, average="weighted", zero_division=0.0), "multiclass_labels"),
    "multiclass_jaccard_none": Case(lambda: sm.Jaccard(C, average=None, zero_division=0.0),
                                    "multiclass_labels"),
    "multiclass_accuracy": Case(lambda: sm.Accuracy(C, zero_division=0.0), "multiclass_scores"),
    "multiclass_balanced": Case(lambda: sm.BalancedAccuracy(C, zero_division=0.0), "multiclass_labels"),
    "multiclass_confusion": Case(lambda: sm.ConfusionMatrix(C), "multiclass_labels"),
    "multiclass_topk": Case(lambda: sm.TopKAccuracy(C, k=2, zero_division=0.0), "multiclass_scores"),
    # top_k > 1: the per-class top-k counts (streammetrics._counts.topk_counts), every average
    "topk_precision_macro": Case(lambda: sm.Precision(C, top_k=2, zero_division=0.0), "multiclass_scores"),
    "topk_recall_micro": Case(lambda: sm.Recall(C, top_k=2, average="micro", zero_division=0.0),
                              "multiclass_scores", readouts=lambda m: m.interval()),
    "topk_f1_weighted": Case(lambda: sm.F1(C, top_k=2, average="weighted", zero_division=0.0),
                             "multiclass_scores"),
    "topk_fbeta_none": Case(lambda: sm.FBeta(C, beta=2.0, top_k=2, average=None, zero_division=0.0),
                            "multiclass_scores"),
    "topk_accuracy": Case(lambda: sm.Accuracy(C, top_k=2, zero_division=0.0), "multiclass_scores",
                          readouts=lambda m: m.interval()),
    "topk_specificity_labels": Case(lambda: sm.Specificity(C, top_k=2, labels=[2, 0], average=None,
                                                           zero_division=0.0), "multiclass_scores"),
    # StatScores: the counts themselves, a view of the same kernels
    "stat_scores_binary": Case(lambda: sm.StatScores(), "binary_scores"),
    "stat_scores_macro": Case(lambda: sm.StatScores(C), "multiclass_labels"),
    "stat_scores_topk_none": Case(lambda: sm.StatScores(C, top_k=2, average=None), "multiclass_scores"),
    "stat_scores_multilabel_weighted": Case(lambda: sm.StatScores(C, multilabel=True, average="weighted"),
                                            "multilabel_scores"),
    "topk_hamming": Case(lambda: sm.HammingLoss(C, top_k=2, zero_division=0.0), "multiclass_scores"),
    "skip_absent_f1": Case(lambda: sm.F1(C, absent_classes="skip", zero_division=0.0), "multiclass_labels"),
    # multidim_average="samplewise": one value per sample (its positions); the state keeps the
    # samples in arrival order, unweighted (merge: tests/classification/test_samplewise.py)
    "samplewise_binary_f1": Case(lambda: sm.F1(multidim_average="samplewise", zero_division=0.0),
                                 "multilabel_scores", laws=SAMPLEWISE_LAWS),
    "samplewise_precision_none": Case(lambda: sm.Precision(C, average=None, multidim_average="samplewise",
                                                           zero_division=0.0), "multiclass_grid",
                                      laws=SAMPLEWISE_LAWS),
    "samplewise_accuracy": Case(lambda: sm.Accuracy(C, multidim_average="samplewise", zero_division=0.0),
                                "multiclass_grid", laws=SAMPLEWISE_LAWS),
    "samplewise_hamming": Case(lambda: sm.HammingLoss(C, multidim_average="samplewise", zero_division=0.0),
                               "multiclass_grid", laws=SAMPLEWISE_LAWS),
    "samplewise_stat_scores": Case(lambda: sm.StatScores(C, average="weighted", multidim_average="samplewise"),
                                   "multiclass_grid", laws=SAMPLEWISE_LAWS),
    "multilabel_specificity_micro": Case(
        lambda: sm.Specificity(C, multilabel=True, average="micro", zero_division=0.0), "multilabel_scores"),
    "multilabel_subset_accuracy": Case(lambda: sm.Accuracy(C, multilabel=True, zero_division=0.0),
                                       "multilabel_labels"),
    "multilabel_hamming": Case(lambda: sm.HammingLoss(C, multilabel=True, zero_division=0.0),
                               "multilabel_scores"),
    "classes_precision": Case(lambda: sm.Precision(classes=["ant", "bee", "cat"], zero_division=0.0),
                              "string_labels"),
    "report": Case(lambda: sm.ClassificationReport(C, zero_division=0.0), "multiclass_labels"),
    "confusion_set": Case(lambda: sm.MetricSet(p=sm.Precision(zero_division=0.0), r=sm.Recall(zero_division=0.0),
                                               f=sm.F1(zero_division=0.0), a=sm.Accuracy(zero_division=0.0),
                                               prefix="val/"),
                          "binary_scores", laws=without("window_equals_plain")),
    # ranking family (exact and bounded)
    "binary_auroc": Case(lambda: sm.AUROC(), "ranking_scores"),
    "binary_partial_auroc": Case(lambda: sm.AUROC(max_fpr=0.3), "ranking_scores"),
    "binary_ap": Case(lambda: sm.AveragePrecision(), "ranking_scores"),
    "binary_ap_11pt": Case(lambda: sm.AveragePrecision(eleven_point=True), "ranking_scores"),
    "binary_roc": Case(lambda: sm.ROCCurve(), "ranking_scores"),
    "binary_pr": Case(lambda: sm.PRCurve(), "ranking_scores"),
    "binary_det": Case(lambda: sm.DETCurve(), "binary_scores"),
    "multiclass_auroc_macro": Case(lambda: sm.AUROC(C), "multiclass_scores"),
    "multiclass_auroc_ovo": Case(lambda: sm.AUROC(C, multi_class="ovo", average="weighted"), "multiclass_scores"),
    "multiclass_ap_micro": Case(lambda: sm.AveragePrecision(C, average="micro"), "multiclass_scores"),
    "multilabel_auroc_none": Case(lambda: sm.AUROC(C, multilabel=True, average=None), "multilabel_scores"),
    "multilabel_roc": Case(lambda: sm.ROCCurve(C, multilabel=True), "multilabel_scores"),
    "multiclass_det": Case(lambda: sm.DETCurve(C), "multiclass_scores"),
    "classes_auroc": Case(lambda: sm.AUROC(classes=["neg", "pos"]), "string_binary_scores"),
    "bounded_auroc": Case(lambda: sm.AUROC(max_bytes=4096), "binary_scores"),
    "bounded_ap_multiclass": Case(lambda: sm.AveragePrecision(C, max_bytes=8192), "multiclass_scores"),
    "bounded_roc": Case(lambda: sm.ROCCurve(max_bytes=4096), "binary_scores"),
    "fixed_thresholds_pr": Case(lambda: sm.PRCurve(thresholds=[0.25, 0.5, 0.75]), "binary_scores"),
    # ... binned: more distinct scores than the 16 bins of 416 bytes (splits and merges give the
    # single stream's bins bit for bit, and its certificates), raw and probability keys, and a grid
    "binned_set": Case(lambda: sm.MetricSet(
        auroc=sm.AUROC(max_bytes=416, scores="probability"), roc=sm.ROCCurve(max_bytes=416, scores="probability"),
        ap=sm.AveragePrecision(max_bytes=416), pr=sm.PRCurve(max_bytes=416), grid=sm.PRCurve(thresholds=12)),
        "distinct_scores", laws=without("window_equals_plain"), readouts=curve_readouts),
    "ranking_set": Case(lambda: sm.MetricSet(a=sm.AUROC(), ap=sm.AveragePrecision(), r=sm.ROCCurve(),
                                             p=sm.PRCurve()), "ranking_scores", laws=without("window_equals_plain")),
    # label ranking (multilabel scores): weighted means of per-sample values
    "coverage_error": Case(lambda: sm.CoverageError(C), "multilabel_scores", exact=False),
    "lrap": Case(lambda: sm.LabelRankingAveragePrecision(), "multilabel_scores", exact=False),
    "label_ranking_loss": Case(lambda: sm.LabelRankingLoss(C), "multilabel_scores", exact=False),
    "label_ranking_set": Case(lambda: sm.MetricSet(c=sm.CoverageError(), a=sm.LabelRankingAveragePrecision(),
                                                   loss=sm.LabelRankingLoss()), "multilabel_scores", exact=False,
                               laws=without("window_equals_plain")),
    # calibration family
    "logloss": Case(lambda: sm.LogLoss(), "probabilities", exact=False),
    "logloss_mc": Case(lambda: sm.LogLoss(C), "multiclass_probabilities", exact=False),
    "brier": Case(lambda: sm.BrierScore(n_bins=4), "probabilities", exact=False),
    "brier_mc": Case(lambda: sm.BrierScore(C, n_bins=4), "multiclass_probabilities", exact=False),
    "ece": Case(lambda: sm.CalibrationError(n_bins=5), "probabilities", exact=False),
    # torchmetrics' ignore_index (issue #33): the rows labelled 0 are left out
    "ece_ignore_index": Case(lambda: sm.CalibrationError(n_bins=5, ignore_index=0), "probabilities", exact=False),
    # ... on every state a CalibrationError may hold: top-label and one-vs-rest bins, the probability
    # buffer, the raw score buffer (binary logits), the quantile state (top-label), bounded bins
    "rmsce_mc_ignore_index": Case(lambda: sm.CalibrationError(C, n_bins=5, norm="l2", ignore_index=1),
                                  "multiclass_probabilities", exact=False),
    "mce_classwise_ignore_index": Case(lambda: sm.CalibrationError(C, n_bins=5, norm="max", classwise=True,
                                                                   ignore_index=2),
                                       "multiclass_probabilities", exact=False),
    "quantile_ece_ignore_index": Case(lambda: sm.CalibrationError(n_bins=4, strategy="quantile", ignore_index=1),
                                      "probabilities", exact=False),
    "quantile_logits_ignore_index": Case(lambda: sm.CalibrationError(n_bins=3, strategy="quantile",
                                                                     from_logits=True, ignore_index=0),
                                         "binary_scores", exact=False),
    "quantile_top_ignore_index": Case(lambda: sm.CalibrationError(C, n_bins=4, strategy="quantile", norm="l2",
                                                                  ignore_index=0),
                                      "multiclass_probabilities", exact=False),
    "bounded_quantile_ignore_index": Case(lambda: sm.CalibrationError(n_bins=4, strategy="quantile",
                                                                      max_bytes=2048, ignore_index=0),
                                          "probabilities", exact=False),
    "mce_mc": Case(lambda: sm.CalibrationError(C, n_bins=5, norm="max"), "multiclass_probabilities", exact=False),
    "rmsce_classwise": Case(lambda: sm.CalibrationError(C, n_bins=5, norm="l2", classwise=True),
                            "multiclass_probabilities", exact=False),
    "logits_ece": Case(lambda: sm.CalibrationError(C, n_bins=5, from_logits=True), "logits", exact=False),
    "calibration_curve": Case(lambda: sm.CalibrationCurve(4), "probabilities", exact=False),
    "calibration_curve_mc": Case(lambda: sm.CalibrationCurve(4, num_classes=C), "multiclass_probabilities", exact=False),
    "ks": Case(lambda: sm.KSStatistic(), "binary_scores"),
    "gains": Case(lambda: sm.GainsCurve(), "binary_scores"),
    "lift": Case(lambda: sm.LiftCurve(), "binary_scores"),
    "calibration_set": Case(lambda: sm.MetricSet(b=sm.BrierScore(n_bins=5), e=sm.CalibrationError(n_bins=5),
                                                 l=sm.LogLoss()), "probabilities",
                            laws=without("window_equals_plain"), exact=False),
    "quantile_ece": Case(lambda: sm.CalibrationError(n_bins=4, strategy="quantile"), "probabilities", exact=False),
    "quantile_mce_top": Case(lambda: sm.CalibrationError(C, n_bins=4, strategy="quantile", norm="max"),
                             "multiclass_probabilities", exact=False),
    "quantile_classwise_l2": Case(lambda: sm.CalibrationError(C, n_bins=4, strategy="quantile", norm="l2",
                                                             classwise=True), "multiclass_probabilities", exact=False),
    "quantile_curve_logits": Case(lambda: sm.CalibrationCurve(3, "quantile", from_logits=True), "ranking_scores",
                                  exact=False),
    "bounded_quantile_rmsce": Case(lambda: sm.CalibrationError(n_bins=4, strategy="quantile", norm="l2",
                                                               max_bytes=2048), "probabilities", exact=False),
    "bounded_calibration_curve": Case(lambda: sm.CalibrationCurve(3, "quantile", max_bytes=2048), "probabilities",
                                      exact=False),
    "window_quantile_ece_logits": Case(lambda: sm.Window(sm.CalibrationError(n_bins=4, strategy="quantile",
                                                                             from_logits=True), size=7),
                                       "ranking_scores", laws=WRAPPER_LAWS - {"merge"}, exact=False,
                                       compare_state=False),
    "decayed_quantile_curve": Case(lambda: sm.Decayed(sm.CalibrationCurve(3, "quantile"), half_life=3.0),
                                   "probabilities", laws=WRAPPER_LAWS - {"merge"}, exact=False,
                                   compare_state=False),
    # regression family (continuous targets; sums in another order agree to rounding)
    "reg_mse": Case(lambda: sm.MeanSquaredError(), "continuous", exact=False),
    "reg_rmse_raw": Case(lambda: sm.RootMeanSquaredError(multioutput="raw_values"), "continuous_multioutput",
                         laws=without("per_sample"), exact=False),  # a fresh metric takes a 1-D row as a batch
    "reg_mae_weights": Case(lambda: sm.MeanAbsoluteError(multioutput=[0.2, 0.3, 0.5]), "continuous_multioutput",
                            exact=False),
    "reg_r2": Case(lambda: sm.R2Score(), "continuous", exact=False),
    "reg_r2_variance_weighted": Case(lambda: sm.R2Score(multioutput="variance_weighted", force_finite=False),
                                     "continuous_multioutput", laws=without("per_sample"), exact=False),
    "reg_explained_variance": Case(lambda: sm.ExplainedVariance(multioutput=[1.0, 2.0, 3.0]),
                                   "continuous_multioutput", exact=False),
    # zero targets make terms of 1/eps: the compensation residues differ by split (values agree)
    "reg_mape": Case(lambda: sm.MeanAbsolutePercentageError(), "continuous", exact=False, compare_state=False),
    "reg_msle": Case(lambda: sm.MeanSquaredLogError(), "positive_continuous", exact=False),
    "reg_rmsle": Case(lambda: sm.RootMeanSquaredLogError(), "positive_continuous", exact=False),
    "reg_pinball": Case(lambda: sm.PinballLoss(0.1, multioutput=[0.5, 0.25, 0.25]), "continuous_multioutput",
                        exact=False),
    "reg_tweedie": Case(lambda: sm.TweedieDeviance(power=1.5), "positive_continuous", exact=False),
    "reg_max_error": Case(lambda: sm.MaxError(), "continuous"),
    # TweedieDeviance over several outputs (an extension); D² Tweedie: deviance sums around the
    # running mean (states differ by arrival order, values agree), nan below two rows
    "reg_tweedie_raw": Case(lambda: sm.TweedieDeviance(power=0, multioutput="raw_values"),
                            "continuous_multioutput", laws=without("per_sample"), exact=False),
    "reg_d2_tweedie": Case(lambda: sm.D2TweedieScore(power=1.5), "positive_continuous", exact=False,
                           compare_state=False, min_rows=2),
    "reg_d2_tweedie_normal_weights": Case(lambda: sm.D2TweedieScore(power=0, multioutput=[0.2, 0.3, 0.5]),
                                          "continuous_multioutput", laws=without("per_sample"), exact=False,
                                          compare_state=False, min_rows=2),
    "reg_decayed_d2_tweedie": Case(lambda: sm.Decayed(sm.D2TweedieScore(power=1), half_life=3.0),
                                   "positive_continuous", laws=WRAPPER_LAWS - {"merge"}, exact=False,
                                   compare_state=False, min_rows=2),
    "reg_set": Case(lambda: sm.MetricSet(mse=sm.MeanSquaredError(), rmse=sm.RootMeanSquaredError(),
                                         mae=sm.MeanAbsoluteError(), r2=sm.R2Score(), ev=sm.ExplainedVariance()),
                    "continuous", laws=without("window_equals_plain"), exact=False),
    # a window rebuilds float moments from its stored row pieces, which a pickle coalesces: a
    # copy agrees to rounding, not bit for bit (the save/load law allows that; "copy" is exact)
    "reg_window_r2": Case(lambda: sm.Window(sm.R2Score(), size=7), "continuous",
                          laws=WRAPPER_LAWS - {"merge", "copy"}, exact=False, compare_state=False),
    "reg_decayed_mse": Case(lambda: sm.Decayed(sm.MeanSquaredError(), half_life=3.0), "continuous",
                            laws=WRAPPER_LAWS - {"merge"}, exact=False, compare_state=False),
    "reg_decayed_max_error": Case(lambda: sm.Decayed(sm.MaxError(), half_life=3.0), "continuous",
                                  laws=WRAPPER_LAWS - {"merge"}, exact=False, compare_state=False),
    # regression, whole-set metrics: every value kept (a 1-D row fed alone is a batch of one output)
    "reg_median_ae": Case(lambda: sm.MedianAbsoluteError(), "continuous"),
    "reg_median_ae_raw": Case(lambda: sm.MedianAbsoluteError(multioutput="raw_values"), "continuous_multioutput",
                              laws=without("per_sample")),
    "reg_median_ae_bounded": Case(lambda: sm.MedianAbsoluteError(max_bytes=600), "continuous"),
    # D² is nan below two rows of positive weight (scikit-learn's rule), also for one row of weight
    # k >= 2: repetition holds from two rows
    "reg_d2_pinball": Case(lambda: sm.D2PinballScore(0.3), "continuous", exact=False, min_rows=2),
    "reg_d2_absolute_weights": Case(lambda: sm.D2AbsoluteErrorScore(multioutput=[0.2, 0.3, 0.5]),
                                    "continuous_multioutput", laws=without("per_sample"), exact=False, min_rows=2),
    "reg_d2_bounded": Case(lambda: sm.D2PinballScore(0.7, max_bytes=1000), "continuous", exact=False, min_rows=2),
    "reg_d2_absolute_bounded": Case(lambda: sm.D2AbsoluteErrorScore(max_bytes=800), "continuous",
                                    laws=frozenset({"integer_weights"}), exact=False, min_rows=2),
    # the co-moments keep their means relative to the first row seen: states differ by arrival
    # order, values agree
    "reg_pearson": Case(lambda: sm.PearsonCorrCoef(), "continuous", exact=False, compare_state=False),
    "reg_ccc_raw": Case(lambda: sm.ConcordanceCorrCoef(multioutput="raw_values"), "continuous_multioutput",
                        laws=without("per_sample"), exact=False, compare_state=False),
    "reg_interval_coverage": Case(lambda: sm.IntervalCoverage(), "intervals", exact=False),
    "reg_interval_width": Case(lambda: sm.IntervalWidth(multioutput="raw_values"), "intervals", exact=False),
    "reg_interval_score": Case(lambda: sm.IntervalScore(0.2), "intervals", exact=False),
    "reg_interval_set": Case(lambda: sm.MetricSet(c=sm.IntervalCoverage(), w=sm.IntervalWidth(),
                                                  s=sm.IntervalScore(0.1)), "intervals",
                             laws=without("window_equals_plain"), exact=False),
    # the rows are kept in arrival order (the values are read in sorted order: exact after any split)
    "reg_spearman": Case(lambda: sm.SpearmanCorrCoef(), "continuous", compare_state=False),
    "reg_kendall": Case(lambda: sm.KendallTau(), "continuous", compare_state=False),
    "reg_kendall_raw": Case(lambda: sm.KendallTau(multioutput="raw_values"), "continuous_multioutput",
                            laws=without("per_sample"), compare_state=False),
    # retrieval family (query batches; no sample weights)
    "precision_at_k": query_case(lambda: PrecisionAtK(3, ties="average")),
    "recall_at_k": query_case(lambda: RecallAtK(5)),
    "r_precision": query_case(lambda: RPrecision()),
    "precision_at_recall": query_case(lambda: PrecisionAtRecall(0.5)),
    "map": query_case(lambda: MAP(3, per_query=True), arrival_order=True),
    "mrr": query_case(lambda: MRR()),
    "cg": query_case(lambda: CG(4, normalize=True, rel_max=3)),
    "dcg": query_case(lambda: DCG(5, gain="exponential")),
    "ndcg": query_case(lambda: NDCG(10, ties="average")),
    "interpolated_precision": query_case(lambda: InterpolatedPrecision([0.2, 0.8])),
    "eleven_point_ap": query_case(lambda: ElevenPointAP()),
    "system_efficiency": query_case(lambda: SystemEfficiency()),
    "set_precision": query_case(lambda: SetPrecision(average="micro")),
    "set_recall": query_case(lambda: SetRecall(per_query=True), arrival_order=True),
    # torchmetrics' options: empty queries scored 1 / skipped; a median over kept per-query values
    "hit_rate_at_k": query_case(lambda: sm.HitRateAtK(3, empty_target_action="pos")),
    "f1_at_k": query_case(lambda: sm.F1AtK(3, ties="average", per_query=True), arrival_order=True),  # ranx's f1
    "precision_recall_at_k": query_case(lambda: sm.PrecisionRecallAtK(4, adaptive_k=True, per_query=True),
                                        arrival_order=True),
    "recall_at_fixed_precision": query_case(lambda: sm.RecallAtFixedPrecision(0.4, 5, aggregation="median"),
                                            arrival_order=True),
    "fall_out_at_k": query_case(lambda: sm.FallOutAtK(2, empty_target_action="skip", aggregation="median"),
                                laws=NOT_WEIGHTED - {"window_equals_plain"}, arrival_order=True),  # Window: no "skip"
    "map_skip_max": query_case(lambda: MAP(3, empty_target_action="skip", aggregation="max", per_query=True),
                               laws=NOT_WEIGHTED - {"window_equals_plain"}, arrival_order=True),
    "auroc_at_k": query_case(lambda: sm.AUROCAtK(4, aggregation="min"), arrival_order=True),
    "auroc_at_k_max_fpr": query_case(lambda: sm.AUROCAtK(max_fpr=0.3, per_query=True), arrival_order=True),
    "ndcg_ignore_index": query_case(lambda: NDCG(5, ignore_index=0)),  # the law data's zero grades dropped
    "map_found": query_case(lambda: MAP(2, denominator="found")),
    "precision_adaptive_k": query_case(lambda: PrecisionAtK(4, adaptive_k=True)),
    "retrieval_set": query_case(lambda: sm.MetricSet(ndcg=NDCG(10), ap=MAP(), rr=MRR()),
                                laws=NOT_WEIGHTED - {"window_equals_plain"}),
    # ... with judged grades (R and the ideal ranking from documents outside the run) and document ids
    "judged_set": query_case(lambda: sm.MetricSet(retrieval_metrics(per_query=True)), judged_feed,
                             NOT_WEIGHTED - {"window_equals_plain"}, arrival_order=True),
    "judged_ndcg": query_case(lambda: NDCG(ties="average", per_query=True), judged_feed, arrival_order=True),
    # trec_eval's measures (streammetrics.trec), fed trec_eval's codes for unjudged documents
    "trec_measures": query_case(lambda: TrecMeasures(["map", "P.5,10", "ndcg_cut.10", "bpref", "gm_map",
                                                      "num_rel_ret", "num_q", "nDCG@10", "RBP(p=0.8)",
                                                      "iprec_at_recall..2,.8", "Rprec_mult.0.5", "recip_rank"],
                                                     per_query=True), trec_feed, arrival_order=True),
    "trec_official": query_case(lambda: TrecMeasures(), trec_feed),
    "trec_measure": query_case(lambda: TrecMeasure("bpref", rel_level=2, judged_only=True, max_docs=4), trec_feed),
    # ir_measures' Accuracy@k: a mean over the queries that define it (a per-column count in the state)
    "trec_accuracy": query_case(lambda: TrecMeasures(["Accuracy@5", "Accuracy(rel=2)", "map"], per_query=True),
                                trec_feed, arrival_order=True),
    # ir_measures' C/W/L user-model measures (its cwl_eval provider): values in [0, 1], every query counts
    "trec_cwl": query_case(lambda: TrecMeasures(["INST(T=2, max_rel=3)", "BPM(T=1, max_rel=2)@5", "SDCG(max_rel=3)@10",
                                                 "NERR10(p=0.8, max_rel=3)", "NERR8(max_rel=2, min_rel=1)@4"],
                                                per_query=True), trec_feed, arrival_order=True),
    # ndeval's diversity measures: each query's subtopic judgment rows in judged=
    "trec_diversity": query_case(lambda: DiversityMeasures(["alpha_nDCG@5", "alpha_DCG@3", "ERR_IA@2",
                                                            "nERR_IA@5", "P_IA@3", "StRecall@4", "AP_IA",
                                                            "NRBP", "nNRBP(rel=2)"], per_query=True),
                                 subtopic_feed, arrival_order=True),
    "trec_diversity_cut": query_case(lambda: DiversityMeasures("alpha_nDCG(alpha=0.25)@10", rel_level=2,
                                                               judged_only=True, max_docs=3), subtopic_feed),
    "trec_measure_v10": query_case(lambda: TrecMeasure("11pt_avg", trec_version=10, num_docs=50, per_query=True),
                                   trec_feed, arrival_order=True),
    # wrappers: a window of the last 7 rows does not merge into the one-shot stream; a decayed
    # stream reads k copies as k steps of decay, not as a weight of k
    "window_f1": Case(lambda: sm.Window(sm.F1(zero_division=0.0), size=7), "binary_scores",
                      laws=WRAPPER_LAWS - {"merge"}, compare_state=False),
    "window_auroc": Case(lambda: sm.Window(sm.AUROC(), size=5), "ranking_scores", laws=WRAPPER_LAWS - {"merge"},
                         compare_state=False),
    "window_large_auroc": Case(lambda: sm.Window(sm.AUROC(), size=10_000), "ranking_scores",
                               laws=WRAPPER_LAWS, compare_state=False),
    "window_map": Case(lambda: sm.Window(MAP(), size=4), "queries", query_feed,
                       laws=NOT_WEIGHTED - {"merge", "window_equals_plain"}, exact=False, compare_state=False),
    "decayed_accuracy": Case(lambda: sm.Decayed(sm.Accuracy(C, zero_division=0.0), half_life=5.0),
                             "multiclass_labels", laws=WRAPPER_LAWS - {"merge"}, exact=False,
                             compare_state=False),
    "decayed_auroc": Case(lambda: sm.Decayed(sm.AUROC(), half_life=3.0), "binary_scores",
                          laws=WRAPPER_LAWS - {"merge"}, exact=False, compare_state=False),
    "delayed_precision": Case(lambda: sm.DelayedLabels(sm.Precision(zero_division=0.0)), "binary_scores",
                              delayed_feed, laws=without("window_equals_plain"), compare_state=False),
    "selection_rate": Case(lambda: sm.SelectionRate(), "binary_scores"),
    "hinge": Case(lambda: sm.HingeLoss(), "binary_scores", exact=False),
    "hinge_squared_mc": Case(lambda: sm.HingeLoss(C, squared=True), "logits", exact=False),
    "hinge_one_vs_all": Case(lambda: sm.HingeLoss(C, multiclass_mode="one-vs-all"), "logits", exact=False),
    # ignore_index inside [0, C): the rows of class 2 are skipped
    "hinge_ignore_index": Case(lambda: sm.HingeLoss(C, multiclass_mode="one-vs-all", ignore_index=2), "logits",
                               exact=False),
    "sliced_f1": Case(lambda: sm.Sliced(sm.F1(zero_division=0.0)), "binary_scores", sliced_feed,
                      laws=WRAPPER_LAWS, compare_state=False),
    "sliced_set": Case(lambda: sm.Sliced(sm.MetricSet(auroc=sm.AUROC(), acc=sm.Accuracy(zero_division=0.0))),
                       "ranking_scores", sliced_feed, laws=WRAPPER_LAWS, compare_state=False),
    # Sliced around regression metrics, Drift and Estimated (issues #30, #31)
    "sliced_regression_set": Case(lambda: sm.Sliced(sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(),
                                                                 r2=sm.R2Score())),
                                  "continuous", sliced_feed, laws=WRAPPER_LAWS, exact=False, compare_state=False),
    "sliced_mae_multioutput": Case(lambda: sm.Sliced(sm.MeanAbsoluteError(multioutput="raw_values")),
                                   "continuous_multioutput", sliced_feed, laws=WRAPPER_LAWS, exact=False,
                                   compare_state=False),
    "sliced_drift": Case(lambda: sm.Sliced(Drift(DRIFT_REF[:, 0], bins=4)), "scores_only", sliced_scores_feed,
                         DRIFT_LAWS & WRAPPER_LAWS, exact=False, compare_state=False),
    "sliced_drift_multiclass": Case(lambda: sm.Sliced(Drift(DRIFT_REF, bins=3)), "multiclass_scores",
                                    sliced_scores_feed, DRIFT_LAWS & WRAPPER_LAWS, exact=False, compare_state=False),
    "sliced_estimated_set": Case(lambda: sm.Sliced(Estimated(sm.MetricSet(acc=sm.Accuracy(zero_division=0.0),
                                                                          auroc=sm.AUROC()))),
                                 "probabilities", sliced_scores_feed, ESTIMATED_LAWS & WRAPPER_LAWS, exact=False,
                                 compare_state=False),
    "delayed_ece": Case(lambda: sm.DelayedLabels(sm.CalibrationError(n_bins=5)), "probabilities",
                        delayed_feed, laws=without("window_equals_plain"), compare_state=False),
    "delayed_bounded_quantile_mce": Case(lambda: sm.DelayedLabels(sm.CalibrationError(
        n_bins=4, strategy="quantile", norm="max", max_bytes=4096)), "probabilities", delayed_feed,
        laws=without("window_equals_plain"), exact=False, compare_state=False),
    # reg-delayed: DelayedLabels around regression metrics (issue #30), predictions then targets
    "delayed_reg_errors": Case(lambda: sm.DelayedLabels(sm.MetricSet(
        mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(), mx=sm.MaxError())),
        "continuous", delayed_feed, laws=without("window_equals_plain"), exact=False, compare_state=False),
    "delayed_reg_positive": Case(lambda: sm.DelayedLabels(sm.MetricSet(
        msle=sm.MeanSquaredLogError(), tw=sm.TweedieDeviance(power=1.5))), "positive_continuous",
        delayed_feed, laws=without("window_equals_plain"), exact=False, compare_state=False),
    "delayed_reg_multioutput": Case(lambda: sm.DelayedLabels(sm.MeanSquaredError(multioutput="raw_values")),
                                    "continuous_multioutput", delayed_feed,
                                    laws=without("window_equals_plain", "per_sample"), exact=False,
                                    compare_state=False),
    "delayed_reg_intervals": Case(lambda: sm.DelayedLabels(sm.MetricSet(
        c=sm.IntervalCoverage(), w=sm.IntervalWidth(), s=sm.IntervalScore(0.1))), "intervals",
        delayed_feed, laws=without("window_equals_plain"), exact=False, compare_state=False),
    "delayed_reg_median": Case(lambda: sm.DelayedLabels(sm.MedianAbsoluteError(), batch_size=3), "continuous",
                               delayed_feed, laws=without("window_equals_plain"), compare_state=False),
    # estimated performance (streammetrics.monitoring): probabilities without labels, so no
    # mismatched-label batch to reject (tests/monitoring/test_estimated_inputs.py rejects theirs)
    "estimated_binary_set": Case(lambda: Estimated(sm.MetricSet(
        acc=sm.Accuracy(zero_division=0.0), f1=sm.F1(zero_division=0.0), auroc=sm.AUROC(),
        ap=sm.AveragePrecision())), "probabilities", estimated_feed, laws=ESTIMATED_LAWS, exact=False),
    "estimated_multiclass_set": Case(lambda: Estimated(sm.MetricSet(
        acc=sm.Accuracy(C, zero_division=0.0), f1=sm.F1(C, average=None, zero_division=0.0),
        auroc=sm.AUROC(C), ap=sm.AveragePrecision(C, average="micro"))), "multiclass_probabilities",
        estimated_feed, laws=ESTIMATED_LAWS, exact=False),
    "estimated_window_auroc": Case(lambda: Estimated(sm.Window(sm.AUROC(), size=14)), "probabilities",
                                   estimated_feed, laws=ESTIMATED_LAWS - {"merge", "integer_weights"},
                                   exact=False, compare_state=False),
    "estimated_precision": Case(lambda: Estimated(sm.Precision(zero_division=0.0)), "probabilities",
                                estimated_feed, laws=ESTIMATED_LAWS, exact=False, readouts=estimated_interval),
    "estimated_recall": Case(lambda: Estimated(sm.Recall(zero_division=0.0)), "probabilities",
                             estimated_feed, laws=ESTIMATED_LAWS - {"per_sample", "prefix", "integer_weights"},
                             exact=False, readouts=estimated_interval),
    # reg-delayed: windows and decay around Estimated (issue #31): the last W predictions, or
    # each prediction weighed by its decay (no labels, so no mismatched batch to reject)
    "window_estimated_set": Case(lambda: sm.Window(Estimated(sm.MetricSet(
        acc=sm.Accuracy(zero_division=0.0), p=sm.Precision(zero_division=0.0), auroc=sm.AUROC())), size=7),
        "probabilities", estimated_feed, laws=WRAPPER_LAWS - {"merge", "rejected"}, exact=False,
        compare_state=False),
    "decayed_estimated_accuracy": Case(lambda: sm.Decayed(Estimated(sm.Accuracy(C, zero_division=0.0)),
                                                          half_life=3.0), "multiclass_probabilities",
                                       estimated_feed, laws=WRAPPER_LAWS - {"merge", "rejected"}, exact=False,
                                       compare_state=False),
    "decayed_estimated_auroc": Case(lambda: sm.Decayed(Estimated(sm.AUROC()), half_life=2.0), "probabilities",
                                    estimated_feed, laws=WRAPPER_LAWS - {"merge", "rejected"}, exact=False,
                                    compare_state=False),
    # drift of the scores against a reference (streammetrics.monitoring), no labels
    "drift": Case(lambda: Drift(DRIFT_REF[:, 0], bins=4), "scores_only", drift_feed, DRIFT_LAWS,
                  exact=False, rtol=1e-12),
    "drift_multiclass": Case(lambda: Drift(DRIFT_REF, bins=3), "multiclass_scores", drift_feed, DRIFT_LAWS,
                             exact=False, rtol=1e-12),
    "drift_bounded": Case(lambda: Drift(DRIFT_REF[:, 1], max_bytes=2048), "scores_only", drift_feed,
                          DRIFT_LAWS, exact=False, rtol=1e-12),
    # (issue #31: the bounded multiclass Drift, and Estimated around one metric)
    "drift_multiclass_bounded": Case(lambda: Drift(DRIFT_REF, bins=3, max_bytes=6144), "multiclass_scores",
                                     drift_feed, DRIFT_LAWS, exact=False, rtol=1e-12),
    "estimated_auroc": Case(lambda: Estimated(sm.AUROC()), "probabilities", estimated_feed,
                            laws=ESTIMATED_LAWS, exact=False),
    "window_drift": Case(lambda: sm.Window(Drift(DRIFT_REF[:, 0], bins=4), size=7), "scores_only", drift_feed,
                         DRIFT_WRAPPER_LAWS, exact=False, compare_state=False),
    "decayed_drift_multiclass": Case(lambda: sm.Decayed(Drift(DRIFT_REF, bins=3), half_life=3.0),
                                     "multiclass_scores", drift_feed, DRIFT_WRAPPER_LAWS, exact=False,
                                     compare_state=False),
    "decayed_bounded_drift": Case(lambda: sm.Decayed(Drift(DRIFT_REF[:, 2], max_bytes=2048), half_life=3.0),
                                  "scores_only", drift_feed, DRIFT_WRAPPER_LAWS, exact=False, compare_state=False),
}


# -- Sliced with float keys and control columns (issue #33, Fairlearn parity) ---------------------
def sliced_controls_feed(metric: Any, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                         groups: np.ndarray) -> None:
    """Two key columns that belong to the rows: a control column (strings) and a float
    sensitive column with both zeros (one slice)."""
    r = np.asarray(rows)
    keys = {"region": np.array(["n", "s"])[r % 2], "age": np.array([-0.0, 18.5, 0.0, 40.0, 65.25])[r % 5]}
    metric.update(y, p, slices=keys, sample_weight=w)


REGISTRY["sliced_controls_floats"] = Case(
    lambda: sm.Sliced(sm.MetricSet(recall=sm.Recall(zero_division=0.0), sel=sm.SelectionRate()),
                      controls="region"),
    "binary_scores", sliced_controls_feed, laws=WRAPPER_LAWS, compare_state=False)
REGISTRY["sliced_controls_auroc"] = Case(
    lambda: sm.Sliced(sm.AUROC(), controls=["region"]), "ranking_scores", sliced_controls_feed,
    laws=WRAPPER_LAWS, compare_state=False)
NAMES = sorted(REGISTRY)


def public_metric_classes() -> set[type]:
    """Every concrete :class:`streammetrics.Metric` subclass that ``streammetrics``,
    ``streammetrics.calibration``, ``streammetrics.retrieval.metrics`` and ``streammetrics.trec`` export
    (the base itself not)."""
    found: set[type] = set()
    for module in (sm, smc, smr, smt):
        for name in getattr(module, "__all__", dir(module)):
            obj = getattr(module, name, None)
            if inspect.isclass(obj) and issubclass(obj, sm.Metric) and obj is not sm.Metric \
                    and obj.__name__ != "RetrievalMetric" and not inspect.isabstract(obj):
                found.add(obj)
    return found


def flat(value: Any) -> list[np.ndarray]:
    """Any result (number, array, dict, list, tuple or result dataclass) as a list of float arrays."""
    if isinstance(value, dict):
        return [a for k in sorted(value, key=str) for a in flat(value[k])]
    if isinstance(value, (list, tuple)) and not (value and np.isscalar(value[0])):
        return [a for x in value for a in flat(x)]
    if dataclasses.is_dataclass(value):
        return [a for f in dataclasses.fields(value) for a in flat(getattr(value, f.name))]
    if value is None or isinstance(value, str):
        return []
    arr = np.asarray(value)
    if arr.dtype.kind in "OUS":
        return []  # class names and other labels are compared by the state laws
    return [arr]


@functools.cache
def _bounds_without_arguments(cls: type) -> bool:
    """Whether ``cls`` has a ``bounds()`` that takes no argument."""
    bounds = getattr(cls, "bounds", None)
    return callable(bounds) and all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in list(inspect.signature(bounds).parameters.values())[1:])


def certified(metric: Any) -> list[np.ndarray]:
    """``is_exact`` and the certified ``bounds()`` of a metric that has them (each member of a
    set; a wrapper's pass through to the metric it wraps), as arrays. The bounds of an exact
    metric are (value, value): left out (a difference in ``is_exact`` already shows)."""
    if isinstance(metric, sm.MetricSet):
        return [a for name in metric for a in certified(metric[name])]
    out = []
    if isinstance(getattr(type(metric), "is_exact", None), property):
        out.append(np.asarray(metric.is_exact))
        if metric.is_exact:
            return out
    if _bounds_without_arguments(type(metric)):
        try:
            out += flat(metric.bounds())
        except (AttributeError, ValueError) as exc:  # a wrapper of a metric without bounds
            if "has no bounds()" not in str(exc):
                raise
    return out


def result(metric: Any, parts: bool = True, readouts: Callable[[Any], Any] | None = None) -> list[np.ndarray]:
    """The metric's value as arrays; with ``parts``, its certified bounds and ``is_exact``
    (where it has them), a Brier score's decomposition and the case's ``readouts`` too (every
    part a law covers; without, the value only: all a ``Window`` of the metric has)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = flat(metric.compute())
        if parts:
            out += certified(metric)
        if parts and isinstance(metric, sm.BrierScore):
            out += flat(metric.decomposition())
        if parts and readouts is not None:
            out += flat(readouts(metric))
        return out


def assert_same(a: list[np.ndarray], b: list[np.ndarray], exact: bool = False, rtol: float = 1e-9,
                atol: float = 1e-12, dtype: bool = True) -> None:
    """Equal lists of arrays: equal shapes and (with ``dtype``) dtypes, equal values bit for bit
    (``exact``) or to ``rtol``/``atol``, nan equal to nan."""
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape
        if dtype:
            assert x.dtype == y.dtype, (x.dtype, y.dtype)
        if exact or x.dtype.kind == "b" or y.dtype.kind == "b":
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def canonical_state(metric: Any) -> tuple[Any, dict[str, Any]]:
    """The saved state's configuration and arrays, with the weights of tied scores put in a
    canonical order (the order of equal scores depends on arrival order and carries no meaning)."""
    sd = metric.state_dict()
    out = {k: v for k, v in sd.items() if k not in ("class", "format_version", "config")}
    for prefix in {k.rpartition("values")[0] for k in out if k.endswith("values")}:
        w_key, o_key = prefix + "weights", prefix + "offsets"
        if w_key in out and o_key in out:
            v, w, off = out[prefix + "values"], out[w_key], out[o_key]
            if v.ndim == 1 and w.shape == v.shape:
                group = np.repeat(np.arange(len(off) - 1), np.diff(off))
                order = np.lexsort((w, v, group))
                out[w_key] = w[order]
    return sd.get("config"), out


def assert_same_state(m1: Any, m2: Any, exact: bool = False, rtol: float = 1e-9) -> None:
    c1, s1 = canonical_state(m1)
    c2, s2 = canonical_state(m2)
    assert c1 == c2 and s1.keys() == s2.keys()
    for k in s1:
        x, y = np.asarray(s1[k]), np.asarray(s2[k])
        if exact or x.dtype.kind not in "fc":
            np.testing.assert_array_equal(x, y, err_msg=k)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-12, err_msg=k)


def assert_state_unchanged(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert before.keys() == after.keys()
    for k in before:
        if isinstance(before[k], np.ndarray):
            np.testing.assert_array_equal(before[k], after[k], err_msg=k)
        else:
            assert before[k] == after[k], k


def per_query_sorted(metric: Any) -> list[np.ndarray]:
    """Every per-query value a metric (or each member of a set) keeps, each column's rows sorted:
    the values as a multiset, whatever order the queries arrived or merged in."""
    members = [metric[k] for k in metric] if isinstance(metric, sm.MetricSet) else [metric]
    out = []
    for m in members:
        if not getattr(getattr(m, "_spec", None), "per_query", False):
            continue
        for a in flat(m.per_query_values()):
            rows = a.reshape(len(a), int(np.prod(a.shape[1:])))
            out.append(rows[np.lexsort(rows.T[::-1])])
    return out


def feed(case: Case, metric: Any, data: Data, w: np.ndarray | None = None, cuts: Any = (),
         keep_groups: np.ndarray | None = None) -> Any:
    """Feed the rows of the kept groups (all by default), in batches cut before the given groups."""
    keep = np.ones(data.n_groups, bool) if keep_groups is None else keep_groups
    bounds = [0, *sorted(cuts), data.n_groups]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        in_batch = np.zeros(data.n_groups, bool)
        in_batch[a:b] = True
        rows = data.rows(in_batch & keep)
        case.feed(metric, data.y[rows], data.p[rows], None if w is None else w[rows], rows, data.groups[rows])
    return metric


def bad_batches(data: Data) -> list[tuple[np.ndarray, np.ndarray]]:
    """Batches every metric rejects: labels and predictions of different lengths, and a NaN
    prediction."""
    y, p = data.y, data.p
    nan_p = p.astype(float).copy() if p.dtype.kind in "fiu" else p.copy()
    out = [(y[:-1], p)]
    if nan_p.dtype.kind == "f":
        nan_p.reshape(len(nan_p), -1)[len(nan_p) // 2, 0] = np.nan
        out.append((y, nan_p))
    return out


def streamed(make: Callable[[], Any], data: Data, w: np.ndarray | None, rng: np.random.Generator,
             feeder: Callable[..., None] = plain_feed, in_order: bool = False) -> Any:
    """``make()`` fed ``data`` as a deployment would: each group (row, or query) sent to one of
    2-3 workers at random, each worker's share in random batches (:func:`feed`), the workers
    merged and the result saved and loaded. With ``in_order`` the workers hold consecutive runs
    of groups, so that the merged metric sees the groups in their original order (for per-query
    values read back by position)."""
    parts = int(rng.integers(2, 4))
    owner = rng.integers(0, parts, data.n_groups)
    if in_order:
        owner.sort()
    cuts = rng.integers(0, data.n_groups + 1, int(rng.integers(0, 4))).tolist()
    case = Case(make, "streamed", feeder)
    workers = [feed(case, make(), data, w, cuts, keep_groups=owner == i) for i in range(parts)]
    return sm.loads(sm.dumps(workers[0].merge(*workers[1:])))
