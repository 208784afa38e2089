"""Hit rate, fall-out, AUROC per query and the precision-recall curve over ranks over a stream of
queries (torchmetrics' ``RetrievalHitRate``, ``RetrievalFallOut``, ``RetrievalAUROC``,
``RetrievalPrecisionRecallCurve`` and ``RetrievalRecallAtFixedPrecision``), and F1@k (ranx's
``f1``; definitions:
docs/definitions/retrieval.md). All are :class:`~streammetrics.retrieval.metrics.RetrievalMetric` s
on the shared query state, so a MetricSet ranks each batch once for them and the other retrieval
measures.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import Param, check_param
from streammetrics._core.warn import warn
from streammetrics._queries.spec import Spec

from ._base import RetrievalMetric, check_fraction, check_k, check_level, check_ties, plain

__all__ = ["HitRateAtK", "FallOutAtK", "AUROCAtK", "PrecisionRecallAtK", "RecallAtFixedPrecision", "F1AtK"]

_FPR_RULE = "expected a false positive rate in (0, 1] or None"
_MAX_FPR = Param("number", _FPR_RULE, low=0.0, high=1.0, low_open=True, finite_rule=_FPR_RULE)


@filled
class HitRateAtK(RetrievalMetric[float]):
    """Hit rate HR@k: 1 if a relevant document is among the top k, else 0, averaged over queries
    (trec_eval ``success_k``; torchmetrics ``RetrievalHitRate(top_k=k)``). ``k=None``: anywhere in
    the list.

    Complexity: as every retrieval measure, ``update`` O(n log L) for n rows of queries with L
    documents, ``compute`` O(1), memory O(1) (O(queries) with ``per_query`` or an aggregation
    other than the mean).

    Parameters
    ----------
    {retrieval: k_optional, rel_level, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.HitRateAtK(1).update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(self, k: int | None = None, *, rel_level: float = 1, per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        self.k, self.rel_level = check_k(k, optional=True), check_level(rel_level, "rel_level")
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("hit", k=self.k, rel_level=self.rel_level, **peer))

    _options = ("k", "rel_level", "per_query", "empty_target_action", "aggregation", "ignore_index")


@filled
class FallOutAtK(RetrievalMetric[float]):
    """Fall-out@k = (non-relevant documents in the top k) / (non-relevant documents in the
    query's list) (a list without one: ``empty_target_action``), averaged over queries (torchmetrics
    ``RetrievalFallOut(top_k=k)``; lower is better). ``k=None``: the whole list (1 for every
    query with a non-relevant document). The documents of the list are the query's rows:
    ``judged`` and ``n_relevant`` are not read. ``empty_target_action`` acts on queries whose
    list holds no non-relevant document, and its default is torchmetrics' (``'pos'``).

    Complexity: as every retrieval measure, ``update`` O(n log L) for n rows of queries with L
    documents, ``compute`` O(1), memory O(1) (O(queries) with ``per_query`` or an aggregation
    other than the mean).

    Parameters
    ----------
    {retrieval: k_optional, rel_level, per_query, empty_target_action_fallout, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.FallOutAtK(1).update(relevance, scores, query_ids=queries).compute()
    0.0
    """

    def __init__(self, k: int | None = None, *, rel_level: float = 1, per_query: bool = False,
                 empty_target_action: str = "pos", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        self.k, self.rel_level = check_k(k, optional=True), check_level(rel_level, "rel_level")
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("fallout", k=self.k, rel_level=self.rel_level, **peer))

    _options = ("k", "rel_level", "per_query", "empty_target_action", "aggregation", "ignore_index")


@filled
class AUROCAtK(RetrievalMetric[float]):
    """AUROC per query, averaged over queries: among the query's top k documents, the share of
    (relevant, non-relevant) pairs whose scores order them correctly, a tie of scores counting
    1/2; 0 when the top k holds no relevant or no non-relevant document (torchmetrics
    ``RetrievalAUROC(top_k=k)``). ``k=None``: the whole list. With ``max_fpr`` each query's
    value is its standardised partial AUC: the area A under its ROC curve up to false positive
    rate m = ``max_fpr`` (tied scores a straight segment), McClish-corrected to
    ``(1 + (A - m**2/2) / (m - m**2/2)) / 2`` (scikit-learn's ``roc_auc_score(max_fpr=m)``,
    torchmetrics' ``RetrievalAUROC(max_fpr=m)``). (:class:`~streammetrics.AUROC` is the ranking
    family's AUROC over all rows.)

    Complexity: as every retrieval measure, ``update`` O(n log L) for n rows of queries with L
    documents, ``compute`` O(1), memory O(1) (O(queries) with ``per_query`` or an aggregation
    other than the mean).

    Parameters
    ----------
    {retrieval: k_optional, rel_level, per_query, empty_target_action, aggregation, ignore_index}
    max_fpr : float or None, default None
        Partial AUC up to this false positive rate, in (0, 1] (1 or None: the whole curve).

    Examples
    --------
    {example: retrieval}
    >>> sm.AUROCAtK().update(relevance, scores, query_ids=queries).compute()
    1.0
    >>> round(sm.AUROCAtK(max_fpr=0.5).update([0, 1, 0, 1], [0.9, 0.8, 0.7, 0.6]).compute(), 4)
    0.3333
    """

    def __init__(self, k: int | None = None, *, rel_level: float = 1, per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None, max_fpr: float | None = None) -> None:
        self.k, self.rel_level = check_k(k, optional=True), check_level(rel_level, "rel_level")
        self.max_fpr = None if max_fpr is None else float(check_param(max_fpr, "max_fpr", _MAX_FPR))
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("auroc", k=self.k, rel_level=self.rel_level, max_fpr=self.max_fpr, **peer))

    _options = ("k", "rel_level", "per_query", "empty_target_action", "aggregation", "ignore_index",
                "max_fpr")

    def _config_value(self, name: str) -> Any:
        if name == "max_fpr" and self.max_fpr is not None:
            return plain(self.max_fpr)
        return super()._config_value(name)


#: The longest curve (its 2 * max_k running sums are allocated by the constructor).
MAX_CURVE_K = 2**16
_MAX_K = Param("int", f"expected an integer from 1 to {MAX_CURVE_K}", low=1, high=MAX_CURVE_K)


@filled
class PrecisionRecallAtK(RetrievalMetric[tuple[np.ndarray, np.ndarray, np.ndarray]]):
    """The precision-recall curve over ranks: P@j and R@j for j = 1..``max_k``, each averaged over
    queries (torchmetrics' ``RetrievalPrecisionRecallCurve``). Ranks past a query's list are
    non-relevant (``adaptive_k=True``: a query of L < j documents divides P@j by L); R@j is
    0 for a query without relevant documents. ``compute()`` is ``(precision, recall, top_k)``,
    three arrays of ``max_k`` values (``top_k`` = 1..max_k).

    Complexity: ``update`` O(n log L + queries · max_k) for n rows of queries with L documents,
    ``compute`` O(max_k), memory O(max_k) (O(queries · max_k) with ``per_query`` or an
    aggregation other than the mean).

    Parameters
    ----------
    max_k : int
        The longest cutoff, 1 to 65536 (torchmetrics' ``max_k=None``, the longest list seen, has
        no fixed size to stream: give it).
    adaptive_k : bool, default False
        Divide P@j by min(j, L) for a query of L documents.
    {retrieval: rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> curve = sm.PrecisionRecallAtK(2).update(relevance, scores, query_ids=queries).compute()
    >>> [values.tolist() for values in curve]  # precision, recall, top_k
    [[1.0, 0.5], [1.0, 1.0], [1, 2]]
    """

    def __init__(self, max_k: int, *, adaptive_k: bool = False, rel_level: float = 1, ties: str = "first",
                 per_query: bool = False, empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        self.max_k = int(check_param(max_k, "max_k", _MAX_K))
        self.adaptive_k = bool(adaptive_k)
        self.rel_level, self.ties = check_level(rel_level, "rel_level"), check_ties(ties, True)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("prcurve", k=self.max_k, rel_level=self.rel_level, ties=self.ties,
                              adaptive=self.adaptive_k, **peer))

    _options: ClassVar[tuple[str, ...]] = ("max_k", "adaptive_k", "rel_level", "ties", "per_query",
                                          "empty_target_action", "aggregation", "ignore_index")

    def _curve(self) -> np.ndarray:
        """The aggregated columns, P@1..P@k then R@1..R@k (NaN, with a warning, before any query)."""
        aggregation = self.aggregation
        if aggregation == "mean":
            return self._mean()
        vals = self._state.acc(self._spec).values()
        assert vals is not None
        if vals.shape[0] == 0:
            warn(f"{type(self).__name__}: no queries counted; the {aggregation} is undefined (nan)",
                 UndefinedMetricWarning)
            return np.full(vals.shape[1], np.nan)
        if aggregation == "median":  # the lower median per column, as torch.median (torchmetrics)
            return np.partition(vals, (vals.shape[0] - 1) // 2, axis=0)[(vals.shape[0] - 1) // 2]
        return vals.min(axis=0) if aggregation == "min" else vals.max(axis=0)  # type: ignore[no-any-return]

    def _compute(self) -> Any:
        curve = self._curve()
        k = self.max_k
        return curve[:k].copy(), curve[k:].copy(), np.arange(1, k + 1)

    def _per_query(self, vals: np.ndarray) -> Any:
        """Per query: ``(precision, recall)``, each (queries, max_k)."""
        return vals[:, : self.max_k].copy(), vals[:, self.max_k :].copy()

    def per_query_values(self) -> Any:
        """``(precision, recall)``: every query's curve in update order, each (queries, max_k)
        (needs ``per_query=True``). O(queries · max_k)."""
        return super().per_query_values()


@filled
class RecallAtFixedPrecision(PrecisionRecallAtK):
    """The highest recall of the precision-recall curve over ranks (:class:`PrecisionRecallAtK`,
    averaged over queries) at which precision is at least ``min_precision``, and its cutoff
    (torchmetrics' ``RetrievalRecallAtFixedPrecision``): ``compute()`` is ``(recall, k)``, the
    largest k among equal recalls; ``(0.0, max_k)`` when no cutoff reaches ``min_precision`` or
    the best recall is 0.

    Complexity: as :class:`PrecisionRecallAtK`.

    Parameters
    ----------
    min_precision : float
        The precision to reach, in [0, 1].
    max_k : int
        The longest cutoff, 1 to 65536.
    adaptive_k : bool, default False
        Divide P@j by min(j, L) for a query of L documents.
    {retrieval: rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.RecallAtFixedPrecision(0.8, max_k=2).update(relevance, scores, query_ids=queries).compute()
    (1.0, 1)
    """

    def __init__(self, min_precision: float, max_k: int, *, adaptive_k: bool = False, rel_level: float = 1,
                 ties: str = "first", per_query: bool = False, empty_target_action: str = "neg",
                 aggregation: str = "mean", ignore_index: int | None = None) -> None:
        self.min_precision = check_fraction(min_precision, "min_precision")
        super().__init__(max_k, adaptive_k=adaptive_k, rel_level=rel_level, ties=ties, per_query=per_query,
                         empty_target_action=empty_target_action, aggregation=aggregation,
                         ignore_index=ignore_index)

    _options: ClassVar[tuple[str, ...]] = ("min_precision", *PrecisionRecallAtK._options)

    def _config_value(self, name: str) -> Any:
        if name == "min_precision":
            return plain(self.min_precision)
        return super()._config_value(name)

    def _compute(self) -> Any:
        curve = self._curve()
        k = self.max_k
        if np.isnan(curve).all():
            return float("nan"), k
        precision, recall = curve[:k], curve[k:]
        reach = np.flatnonzero(precision >= self.min_precision)
        if not len(reach):
            return 0.0, k
        best = float(recall[reach].max())
        at = int(reach[recall[reach] == best].max()) + 1  # the largest k among equal recalls
        return best, (k if best == 0.0 else at)


@filled
class F1AtK(RetrievalMetric[float]):
    """F1@k, the harmonic mean 2PR / (P + R) of P@k = hits(k) / k and R@k = hits(k) / R per query
    (0 when both are 0), averaged over queries: ranx's ``f1@k`` (``streammetrics trec -m f1@k``
    computes the same value with trec_eval's ranking). With ``ties="average"``: the expected F1@k
    over orders of tied documents (F1@k = 2·hits(k) / (k + R) is linear in the hits).

    Complexity: as every retrieval measure, ``update`` O(n log L) for n rows of queries with L
    documents, ``compute`` O(1), memory O(1) (O(queries) with ``per_query`` or an aggregation
    other than the mean).

    Parameters
    ----------
    {retrieval: k, rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> round(sm.F1AtK(2).update(relevance, scores, query_ids=queries).compute(), 4)
    0.6667
    """

    def __init__(self, k: int, *, rel_level: float = 1, ties: str = "first", per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        self.k, self.rel_level = check_k(k), check_level(rel_level, "rel_level")
        self.ties = check_ties(ties, True)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("f1", k=self.k, rel_level=self.rel_level, ties=self.ties, **peer))

    _options = ("k", "rel_level", "ties", "per_query", "empty_target_action", "aggregation", "ignore_index")
