"""Retrieval measures over a stream of queries, equal to trec_eval (definitions: see
docs/definitions/retrieval.md).

Each query is folded in as it arrives -- one query per ``update``, or many per call with
``query_ids=`` -- and only running sums are kept, so memory is constant in the number of queries
(unless ``per_query=True`` asks to keep every query's value).

``update(relevance, scores, *, doc_ids=None, judged=None, n_relevant=None, query_ids=None)``:
``relevance`` are the grades of the retrieved documents (unjudged = 0), ``scores`` the system's
scores (ranked descending), ``doc_ids`` break score ties as trec_eval does (document id descending,
as strings; without ids tied documents keep their input order), ``judged`` the grades of all
judged documents of the query (gives R and the ideal ranking of nDCG), ``n_relevant`` the number R
of relevant documents. With ``query_ids`` the arrays hold many queries (each query's rows
contiguous) and ``judged`` / ``n_relevant`` are mappings from query id (or sequences with one entry
per query in order of appearance). R comes from ``n_relevant``, else ``judged``, else the relevant
retrieved documents. An update with an empty retrieved list is a query scoring 0.

Design -- one ranking per batch for a whole MetricSet: every retrieval measure stores its running
sums in a :class:`QueryState` under a *measure spec* (kind and options). All retrieval metrics
have the same state key, so a :class:`~streammetrics.MetricSet` of NDCG@10, MAP and MRR makes them
share one ``QueryState`` holding the three specs: the batch is validated and ranked once
(:func:`~streammetrics._queries.batch.check_batch`, the expensive part) and each spec adds
O(n) vectorised work. Each spec keeps its own (count, sums), so the state stays O(1) per measure
and every member reads only its own spec. (When a metric is put into a set, its spec is registered
in the shared state; states that already hold data are only shared if they hold identical data.)

Complexity: ``update`` O(n log L) for n rows of queries with L documents, plus O(n) per measure;
``compute`` O(1); memory O(1) per measure (O(queries) with ``per_query=True``). Everything is exact
(float64 sums; streaming, batching and merging agree with a one-shot evaluation to rounding).

Example -- streaming one query, then two more in one call, equals one call with all three::

    >>> import streammetrics as sm
    >>> ms = sm.MetricSet(ndcg=sm.NDCG(10), ap=sm.MAP(), rr=sm.MRR())
    >>> _ = ms.update([2, 0, 1], [0.9, 0.5, 0.1])
    >>> _ = ms.update([0, 1, 1, 0], [0.3, 0.2, 0.8, 0.1], query_ids=["a", "a", "b", "b"])
    >>> {k: round(v, 4) for k, v in ms.compute().items()}
    {'ndcg': 0.8604, 'ap': 0.7778, 'rr': 0.8333}
    >>> one = sm.MetricSet(ndcg=sm.NDCG(10), ap=sm.MAP(), rr=sm.MRR())
    >>> _ = one.update([2, 0, 1, 0, 1, 1, 0], [0.9, 0.5, 0.1, 0.3, 0.2, 0.8, 0.1],
    ...                query_ids=[0, 0, 0, 1, 1, 2, 2])
    >>> one.compute() == ms.compute()
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning, Value
from streammetrics._core.params import nonempty_param
from streammetrics._core.warn import warn
from streammetrics._queries.spec import Spec
from streammetrics._queries.state import QueryState

from ._base import (
    RetrievalMetric,
    check_choice,
    check_fraction,
    check_k,
    check_level,
    check_ties,
)

__all__ = [
    "QueryState",
    "RetrievalMetric",
    "PrecisionAtK",
    "RecallAtK",
    "RPrecision",
    "PrecisionAtRecall",
    "MAP",
    "MRR",
    "CG",
    "DCG",
    "NDCG",
    "InterpolatedPrecision",
    "ElevenPointAP",
    "SystemEfficiency",
    "SetPrecision",
    "SetRecall",
]

ELEVEN_POINTS = tuple(round(i / 10, 1) for i in range(11))


class _AtK(RetrievalMetric[float]):
    """A count of relevant documents in the top k, divided per ``_kind`` (P@k by k, R@k by R)."""

    _kind = ""

    def __init__(self, k: int, *, rel_level: float = 1, ties: str = "first", per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        self.k, self.rel_level = check_k(k), check_level(rel_level, "rel_level")
        self.ties = check_ties(ties, True)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        adaptive = bool(getattr(self, "adaptive_k", False))  # PrecisionAtK's option
        super().__init__(Spec(self._kind, k=self.k, rel_level=self.rel_level, ties=self.ties,
                              adaptive=adaptive, **peer))

    _options: ClassVar[tuple[str, ...]] = ("k", "rel_level", "ties", "per_query", "empty_target_action",
                                          "aggregation", "ignore_index")


@filled
class PrecisionAtK(_AtK):
    """P@k = (relevant documents in the top k) / k; ranks past the list's end are non-relevant.

    trec_eval ``P_k``. With ``ties="average"``: the expected P@k over orders of tied documents.
    With ``adaptive_k=True``: a query of L < k documents divides by L (torchmetrics' option).

    Parameters
    ----------
    {retrieval: k, rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}
    adaptive_k : bool, default False
        Divide by min(k, L) for a query of L documents.

    Examples
    --------
    {example: retrieval}
    >>> sm.PrecisionAtK(2).update(relevance, scores, query_ids=queries).compute()
    0.5
    """

    _kind = "p"

    def __init__(self, k: int, *, rel_level: float = 1, ties: str = "first", per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None, adaptive_k: bool = False) -> None:
        self.adaptive_k = bool(adaptive_k)
        super().__init__(k, rel_level=rel_level, ties=ties, per_query=per_query,
                         empty_target_action=empty_target_action, aggregation=aggregation,
                         ignore_index=ignore_index)

    _options = _AtK._options + ("adaptive_k",)


@filled
class RecallAtK(_AtK):
    """R@k = (relevant documents in the top k) / R (0 when R = 0). trec_eval ``recall_k``.

    Parameters
    ----------
    {retrieval: k, rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.RecallAtK(1).update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    _kind = "r"

    def __init__(self, k: int, *, rel_level: float = 1, ties: str = "first", per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        super().__init__(k, rel_level=rel_level, ties=ties, per_query=per_query,
                         empty_target_action=empty_target_action, aggregation=aggregation,
                         ignore_index=ignore_index)


@filled
class RPrecision(RetrievalMetric[float]):
    """R-precision = (relevant documents in the top R) / R, divided by R even when fewer than R
    were retrieved; 0 when R = 0. trec_eval ``Rprec``.

    Parameters
    ----------
    {retrieval: rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.RPrecision().update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(self, *, rel_level: float = 1, ties: str = "first", per_query: bool = False,
                 empty_target_action: str = "neg", aggregation: str = "mean",
                 ignore_index: int | None = None) -> None:
        self.rel_level = check_level(rel_level, "rel_level")
        self.ties = check_ties(ties, True)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("rprec", rel_level=self.rel_level, ties=self.ties, **peer))

    _options = ("rel_level", "ties", "per_query", "empty_target_action", "aggregation", "ignore_index")


@filled
class PrecisionAtRecall(RetrievalMetric[float]):
    """Precision at the first rank where recall reaches ``r`` (Weber); 0 if it never does or R = 0.

    Parameters
    ----------
    r : float
        The recall level, in [0, 1].
    {retrieval: rel_level, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.PrecisionAtRecall(0.5).update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(self, r: float, *, rel_level: float = 1, per_query: bool = False) -> None:
        self.r, self.rel_level = check_fraction(r, "r"), check_level(rel_level, "rel_level")
        self.per_query = bool(per_query)
        super().__init__(Spec("p_at_r", levels=(self.r,), rel_level=self.rel_level, per_query=self.per_query))

    _options = ("r", "rel_level", "per_query")


@filled
class MAP(RetrievalMetric[float]):
    """Mean average precision. Per query AP = (1/R) Σ_{relevant retrieved d} P(rank(d)) (trec_eval
    ``map``; unretrieved relevant documents add 0, R = 0 gives 0).

    With ``k``: AP@k = Σ_{i≤k} P(i)·rel(i) / min(k, R) (the seeds' definition, default
    ``denominator="min_k_r"``); ``denominator="R"`` divides by R (trec_eval ``map_cut_k``),
    ``"found"`` by the relevant documents in the top k (torchmetrics' ``RetrievalMAP(top_k=k)``;
    without ``k``: the relevant retrieved documents).

    Parameters
    ----------
    {retrieval: k_optional}
    denominator : {'min_k_r', 'R', 'found'}, default 'min_k_r'
        Divide AP@k by min(k, R), by R, or by the relevant documents found in the top k.
    {retrieval: rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.MAP().update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(
        self,
        k: int | None = None,
        *,
        denominator: str = "min_k_r",
        rel_level: float = 1,
        ties: str = "first",
        per_query: bool = False,
        empty_target_action: str = "neg",
        aggregation: str = "mean",
        ignore_index: int | None = None,
    ) -> None:
        self.k = check_k(k, optional=True)
        self.denominator = check_choice(denominator, "denominator", ("min_k_r", "R", "found"))
        self.rel_level, self.ties = check_level(rel_level, "rel_level"), check_ties(ties, False)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        # without a cutoff min(k, R) is R; "found" (relevant retrieved) differs when R is given
        denom = "R" if self.k is None and self.denominator == "min_k_r" else self.denominator
        super().__init__(Spec("ap", k=self.k, rel_level=self.rel_level, denominator=denom, **peer))

    _options = ("k", "denominator", "rel_level", "ties", "per_query", "empty_target_action", "aggregation",
                "ignore_index")


@filled
class MRR(RetrievalMetric[float]):
    """Mean reciprocal rank: per query 1 / (rank of the first relevant document), 0 if none is
    retrieved (RR@k: 0 if it ranks below k). trec_eval ``recip_rank``.

    Parameters
    ----------
    {retrieval: k_optional, rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.MRR().update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(
        self, k: int | None = None, *, rel_level: float = 1, ties: str = "first", per_query: bool = False,
        empty_target_action: str = "neg", aggregation: str = "mean", ignore_index: int | None = None,
    ) -> None:
        self.k = check_k(k, optional=True)
        self.rel_level, self.ties = check_level(rel_level, "rel_level"), check_ties(ties, False)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        super().__init__(Spec("rr", k=self.k, rel_level=self.rel_level, **peer))

    _options: ClassVar[tuple[str, ...]] = ("k", "rel_level", "ties", "per_query", "empty_target_action",
                                          "aggregation", "ignore_index")


@filled
class CG(RetrievalMetric[float]):
    """Cumulative gain CG@k = Σ_{i≤k} max(grade_i, 0); ``normalize=True`` divides by k·rel_max
    (Weber; with binary grades and rel_max = 1 it equals P@k). Grades above ``rel_max`` are a
    ``ValueError``. ``rel_level`` is accepted for uniformity and unused (graded measure).

    Parameters
    ----------
    {retrieval: k}
    normalize : bool, default False
        Divide by k times ``rel_max``.
    rel_max : float, optional
        The largest grade (needed by ``normalize=True``).
    {retrieval: rel_level, ties, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.CG(2).update(relevance, scores, query_ids=queries).compute()
    1.5
    """

    def __init__(
        self,
        k: int,
        *,
        normalize: bool = False,
        rel_max: float | None = None,
        rel_level: float = 1,
        ties: str = "first",
        per_query: bool = False,
    ) -> None:
        self.k, self.normalize = check_k(k), bool(normalize)
        self.rel_max = None if rel_max is None else check_level(rel_max, "rel_max")
        if self.normalize and (self.rel_max is None or self.rel_max <= 0):
            raise ValueError(
                f"rel_max: normalize=True needs the top grade of the scale (> 0), got {rel_max!r}"
            )
        self.rel_level, self.ties = check_level(rel_level, "rel_level"), check_ties(ties, True)
        self.per_query = bool(per_query)
        super().__init__(
            Spec(
                "cg",
                k=self.k,
                ties=self.ties,
                rel_max=self.rel_max if self.normalize else None,
                per_query=self.per_query,
            )
        )

    _options = ("k", "normalize", "rel_max", "rel_level", "ties", "per_query")

    def _scale(self) -> float:
        assert self.k is not None
        return self.k * self.rel_max if (self.normalize and self.rel_max) else 1.0

    def _compute(self) -> Any:
        return float(self._mean()[0] / self._scale())

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, 0] / self._scale()


@filled
class DCG(RetrievalMetric[float]):
    """DCG@k = Σ_{i≤k} g(grade_i) / log2(i + 1); ``gain="linear"``: g = max(grade, 0) (trec_eval),
    ``"exponential"``: g = 2^max(grade, 0) − 1. ``k=None``: the whole list.

    Parameters
    ----------
    {retrieval: k_optional, gain, rel_level, ties, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.DCG(2).update(relevance, scores, query_ids=queries).compute()
    1.5
    """

    def __init__(
        self,
        k: int | None = None,
        *,
        gain: str = "linear",
        rel_level: float = 1,
        ties: str = "first",
        per_query: bool = False,
    ) -> None:
        self.k, self.gain = check_k(k, optional=True), check_choice(gain, "gain", ("linear", "exponential"))
        self.rel_level, self.ties = check_level(rel_level, "rel_level"), check_ties(ties, True)
        self.per_query = bool(per_query)
        super().__init__(Spec(self._kind, k=self.k, gain=self.gain, ties=self.ties, per_query=self.per_query))

    _kind = "dcg"

    _options: ClassVar[tuple[str, ...]] = ("k", "gain", "rel_level", "ties", "per_query")


@filled
class NDCG(DCG):
    """nDCG@k = DCG@k / IDCG@k, the ideal ranking built from all judged documents of the query
    when ``judged`` is given (trec_eval ``ndcg_cut_k``; ``ndcg`` with ``k=None``), else from the
    retrieved documents (scikit-learn's ``ndcg_score``); IDCG = 0 gives 0.

    Parameters
    ----------
    {retrieval: k_optional, gain, rel_level, ties, per_query, empty_target_action, aggregation, ignore_index}

    Examples
    --------
    {example: retrieval}
    >>> sm.NDCG(2).update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    _kind = "ndcg"

    def __init__(self, k: int | None = None, *, gain: str = "linear", rel_level: float = 1,
                 ties: str = "first", per_query: bool = False, empty_target_action: str = "neg",
                 aggregation: str = "mean", ignore_index: int | None = None) -> None:
        self.k, self.gain = check_k(k, optional=True), check_choice(gain, "gain", ("linear", "exponential"))
        self.rel_level, self.ties = check_level(rel_level, "rel_level"), check_ties(ties, True)
        peer = self._peer_options(empty_target_action, aggregation, per_query, ignore_index)
        RetrievalMetric.__init__(self, Spec(self._kind, k=self.k, gain=self.gain, ties=self.ties, **peer))

    _options = ("k", "gain", "rel_level", "ties", "per_query", "empty_target_action", "aggregation",
                "ignore_index")


@filled
class InterpolatedPrecision(RetrievalMetric[Value]):
    """Interpolated precision at recall r = the best precision at any rank whose recall >= r
    (textbook rule, default; 0 if recall r is never reached). ``interpolation="trec"`` uses
    trec_eval 9's ``iprec_at_recall`` rule instead: recall r counts as reached at the rank of the
    ⌊r·R + 0.9⌋-th relevant document (so r = 0.7 with R = 3 is reached by 2 relevant documents).
    ``recall`` is one level (``compute`` gives a float) or a sequence of levels (an array).

    Parameters
    ----------
    recall : float or sequence of float
        The recall level(s), in [0, 1].
    {retrieval: interpolation, rel_level, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.InterpolatedPrecision([0.0, 0.5]).update(relevance, scores, query_ids=queries).compute()
    array([1., 1.])
    """

    def __init__(
        self,
        recall: float | Sequence[float],
        *,
        interpolation: str = "textbook",
        rel_level: float = 1,
        per_query: bool = False,
    ) -> None:
        self.scalar = np.ndim(recall) == 0
        levels = [recall] if self.scalar else nonempty_param(recall, "recall",
                                                             "expected at least one recall level")
        self.recall = tuple(check_fraction(r, "recall") for r in levels)
        self.interpolation = check_choice(interpolation, "interpolation", ("textbook", "trec"))
        self.rel_level, self.per_query = check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(
            Spec(
                "iprec",
                levels=self.recall,
                rel_level=self.rel_level,
                per_query=self.per_query,
                interpolation=None if self.interpolation == "textbook" else self.interpolation,
            )
        )

    _options = ("recall", "interpolation", "rel_level", "per_query")

    def _config_value(self, name: str) -> Any:
        if name == "recall":
            return self.recall[0] if self.scalar else list(self.recall)
        return super()._config_value(name)

    def _compute(self) -> Any:
        m = self._mean()
        return float(m[0]) if self.scalar else m

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, 0] if self.scalar else vals


@filled
class ElevenPointAP(RetrievalMetric[float]):
    """11-point interpolated average precision: the mean of the interpolated precision at recall
    0, 0.1, ..., 1 (textbook rule by default; ``interpolation="trec"`` gives trec_eval's
    ``11pt_avg``, see :class:`InterpolatedPrecision`).

    Parameters
    ----------
    {retrieval: interpolation, rel_level, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.ElevenPointAP().update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(
        self, *, interpolation: str = "textbook", rel_level: float = 1, per_query: bool = False
    ) -> None:
        self.interpolation = check_choice(interpolation, "interpolation", ("textbook", "trec"))
        self.rel_level, self.per_query = check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(
            Spec(
                "iprec",
                levels=ELEVEN_POINTS,
                rel_level=self.rel_level,
                per_query=self.per_query,
                interpolation=None if self.interpolation == "textbook" else self.interpolation,
            )
        )

    _options = ("interpolation", "rel_level", "per_query")

    def _compute(self) -> Any:
        return float(self._mean().mean())

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals.mean(axis=1)


@filled
class SystemEfficiency(RetrievalMetric[float]):
    """System efficiency (Weber) E = 1 − d/√2, d the smallest distance from a per-rank (recall,
    precision) point to (1, 1); 0 when nothing relevant exists or nothing is retrieved.

    Parameters
    ----------
    {retrieval: rel_level, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.SystemEfficiency().update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    def __init__(self, *, rel_level: float = 1, per_query: bool = False) -> None:
        self.rel_level, self.per_query = check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(Spec("eff", rel_level=self.rel_level, per_query=self.per_query))

    _options = ("rel_level", "per_query")


class _SetMeasure(RetrievalMetric[float]):
    _column = 0

    def __init__(self, *, average: str = "macro", rel_level: float = 1, per_query: bool = False) -> None:
        self.average = check_choice(average, "average", ("macro", "micro"))
        self.rel_level, self.per_query = check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(Spec("set", rel_level=self.rel_level, per_query=self.per_query))

    _options = ("average", "rel_level", "per_query")

    def _compute(self) -> Any:
        acc = self._state.acc(self._spec)
        if self.average == "macro":
            return float(self._mean()[self._column])
        denom = acc.sums[3 + self._column]
        if denom == 0:
            warn(
                f"{type(self).__name__}: micro average undefined "
                f"(no {'retrieved' if self._column == 0 else 'relevant'} documents); returning nan",
                UndefinedMetricWarning,
            )
            return float("nan")
        return float(acc.sums[2] / denom)

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, self._column]

    def totals(self) -> dict[str, int]:
        """Pooled counts: ``relevant_retrieved``, ``retrieved``, ``relevant`` (trec_eval's
        ``num_rel_ret``, ``num_ret``, ``num_rel``). O(1)."""
        with self._lock:
            sums = self._state.acc(self._spec).sums
            return {"relevant_retrieved": int(sums[2]), "retrieved": int(sums[3]), "relevant": int(sums[4])}

    def per_query_counts(self) -> np.ndarray:
        """(queries, 3) int array of relevant retrieved, retrieved, relevant (``per_query=True``)."""
        return self._stored_values()[:, 2:5].astype(np.int64)


@filled
class SetPrecision(_SetMeasure):
    """Set precision = relevant retrieved / retrieved (0 for an empty list; trec_eval ``set_P``).
    ``average="macro"``: mean over queries; ``"micro"``: Σ relevant retrieved / Σ retrieved.

    Parameters
    ----------
    {retrieval: average, rel_level, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.SetPrecision().update(relevance, scores, query_ids=queries).compute()
    0.5
    """

    _column = 0

    def __init__(self, *, average: str = "macro", rel_level: float = 1, per_query: bool = False) -> None:
        super().__init__(average=average, rel_level=rel_level, per_query=per_query)


@filled
class SetRecall(_SetMeasure):
    """Set recall = relevant retrieved / R (0 when R = 0; trec_eval ``set_recall``).
    ``average="macro"``: mean over queries; ``"micro"``: Σ relevant retrieved / Σ R.

    Parameters
    ----------
    {retrieval: average, rel_level, per_query}

    Examples
    --------
    {example: retrieval}
    >>> sm.SetRecall().update(relevance, scores, query_ids=queries).compute()
    1.0
    """

    _column = 1

    def __init__(self, *, average: str = "macro", rel_level: float = 1, per_query: bool = False) -> None:
        super().__init__(average=average, rel_level=rel_level, per_query=per_query)
