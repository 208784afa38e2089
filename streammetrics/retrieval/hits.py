"""Hit rate, fall-out and AUROC per query over a stream of queries (torchmetrics'
``RetrievalHitRate``, ``RetrievalFallOut`` and ``RetrievalAUROC``; definitions:
docs/definitions/retrieval.md). All are :class:`~streammetrics.retrieval.metrics.RetrievalMetric` s
on the shared query state, so a MetricSet ranks each batch once for them and the other retrieval
measures.
"""

from __future__ import annotations

from typing import Any

from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param
from streammetrics._queries.spec import Spec

from ._base import RetrievalMetric, check_k, check_level, plain

__all__ = ["HitRateAtK", "FallOutAtK", "AUROCAtK"]

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
