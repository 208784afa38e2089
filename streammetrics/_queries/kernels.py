"""Private kernels for the retrieval measures: a batch of queries ranked once
(:class:`RankedQueries`, built by :mod:`streammetrics._queries.batch`, which validates the batch)
and any number of per-query measures evaluated on it (definitions: see
docs/definitions/retrieval.md). The measures themselves are the one per-query kernel of
:mod:`streammetrics._queries.per_query` (``rounding="numpy"``), which ``streammetrics.trec``
shares; this module gathers each group of equal-length queries into its matrices.

A batch is ``Q`` queries laid out flat (each query's rows contiguous). Ranking never loops over
documents in Python: queries are grouped by their number of retrieved documents ``L`` (a loop over
*distinct lengths*, usually a handful), each group is gathered into a ``(q, L)`` matrix and sorted
along its rows in one numpy call. Every measure is then a few vectorised passes over those
matrices. Cost of ranking: O(n log L) for n rows; each measure adds O(n) (or
O(q·k) for a cutoff k).

Ranking rule (trec_eval's): score descending; ties broken by document id descending *as strings*
when ``doc_ids`` are given, else by input order (a stable sort). Measures that take
``ties="average"`` replace each gain by the mean gain of its tie group (expected value over all
orders of the tied documents, McSherry & Najork 2008), which is exact for measures linear in the
gains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from streammetrics._core.validation import first_bad

from . import per_query


class QueryOptions(TypedDict, total=False):
    """The keyword arguments of every retrieval ``update`` besides ``relevance`` and ``scores``
    -- their one definition; each defaults to ``None``.

    Attributes
    ----------
    doc_ids : array-like, optional
        One document id per row; ties of score are broken by id descending, compared as strings
        (trec_eval's rule). Without ids tied documents keep their input order.
    judged : array-like or mapping, optional
        The grades of all judged documents of the query (gives R and the ideal ranking of
        nDCG); with ``query_ids`` a mapping from query id, or one entry per query in order.
    n_relevant : int, sequence or mapping, optional
        The number R of relevant documents of the query (per query with ``query_ids``).
    query_ids : array-like, optional
        One query id per row, each query's rows contiguous: the batch holds many queries.
    """

    doc_ids: Any
    judged: Any
    n_relevant: Any
    query_ids: Any


#: The names of :class:`QueryOptions`.
QUERY_OPTIONS: frozenset[str] = frozenset(QueryOptions.__optional_keys__)


@dataclass
class Group:
    """Queries of one length ``L``: ``rows`` index the batch's queries; matrices are (q, L)."""

    rows: np.ndarray
    grades: np.ndarray
    scores: np.ndarray
    _tie_ids: np.ndarray | None = None
    _binary: dict[float, np.ndarray] = field(default_factory=dict)
    _ranked: dict[tuple[float, str], per_query.Ranked] | None = None

    def binary(self, rel_level: float) -> np.ndarray:
        """Relevance indicator (grade >= rel_level) in rank order, cached per level."""
        b = self._binary.get(rel_level)
        if b is None:
            b = self._binary[rel_level] = self.grades >= rel_level
        return b

    def tie_average(self, x: np.ndarray) -> np.ndarray:
        """``x`` (q, L) with each entry replaced by the mean over its tie group of equal scores."""
        if x.shape[1] and self._tie_ids is None:
            self._tie_ids = per_query.tie_groups(self.scores)
        return per_query.tie_average(x, self._tie_ids if self._tie_ids is not None else np.zeros(0, np.int64))

    def ranked(self, rel_level: float, ties: str = "first") -> per_query.Ranked:
        """The per-query kernel over the relevance indicator (tie-averaged with ``ties="average"``),
        cached per (level, ties)."""
        if self._ranked is None:
            self._ranked = {}
        key = (rel_level, ties)
        rk = self._ranked.get(key)
        if rk is None:
            b = self.binary(rel_level)
            rk = self._ranked[key] = per_query.Ranked(self.tie_average(b) if ties == "average" else b)
        return rk


def take_rows(a: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``np.take_along_axis(a, order, axis=1)``, with a cheap path for one row."""
    if a.shape[0] == 1:
        return a[0][order[0]][None, :]
    return np.take_along_axis(a, order, axis=1)


#: Largest |grade|: sums of grades over any feasible number of documents and queries (fewer
#: than 2**100 in all) stay far below the float64 range (2**1024).
MAX_GRADE = 2.0**128
#: Largest |per-query value| (an exponential gain grows fast): sums over any feasible number of
#: queries (decay weights of up to 2**300 included) stay finite.
MAX_QUERY_VALUE = 2.0**256


def _segment_sorted_desc(
    values: np.ndarray, lengths: np.ndarray, k: int | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per segment, the values sorted descending and cut to ``k``: list of (rows, (q, ≤k) matrix)."""
    starts = np.zeros(lengths.shape[0], dtype=np.int64)
    if lengths.shape[0] > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    out = []
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        if length == 0:
            out.append((rows, np.zeros((rows.shape[0], 0))))
            continue
        idx = starts[rows][:, None] + np.arange(length)
        m = -np.sort(-values[idx], axis=1)
        out.append((rows, m if k is None else m[:, :k]))
    return out


def gain(grades: np.ndarray, kind: str) -> np.ndarray:
    """Gain of graded relevance: ``linear`` max(g, 0), ``exponential`` 2^max(g, 0) − 1."""
    g = np.maximum(grades, 0.0)
    return g if kind == "linear" else np.exp2(g) - 1.0


@dataclass
class QueryRows:
    """A block's queries as given, not ranked: for measures that rank and judge each query
    themselves from judgment rows (``streammetrics.trec`` with ``judgments="prefs"``, ...).

    ``scores`` and ``doc_ids`` are the block's rows in input order, ``bounds`` every query's
    first row then the number of rows, ``judged`` each query's ``judged`` entry as given (None
    when absent), ``first_row`` the block's first row within the batch (for messages).
    """

    scores: np.ndarray
    doc_ids: np.ndarray
    bounds: np.ndarray
    judged: list[Any]
    first_row: int = 0


@dataclass
class RankedQueries:
    """A validated batch of queries, each ranked once; measures read it (see module docstring).

    ``n_queries`` queries with ``lengths`` retrieved documents each; ``groups`` hold the ranked
    grades; ``R`` / ideal DCG values are computed on demand (cached per ``rel_level`` / cutoff).
    """

    n_queries: int
    lengths: np.ndarray
    groups: list[Group]
    qids: list[Any] | None
    n_relevant: np.ndarray | None
    judged: np.ndarray | None
    judged_lengths: np.ndarray | None
    #: Index of the first query within the whole batch (blocks of a large batch).
    offset: int = 0
    #: The queries as given, unranked (``groups`` empty): batches checked with ``raw_judged``.
    given: QueryRows | None = None
    _cache: dict[Any, Any] = field(default_factory=dict)

    def _where(self, i: int) -> str:
        return f"query {self.qids[i]!r}" if self.qids is not None else f"query {i}"

    def hits_total(self, rel_level: float) -> np.ndarray:
        """Relevant retrieved documents per query."""
        key = ("hits", rel_level)
        if key not in self._cache:
            out = np.zeros(self.n_queries)
            for g in self.groups:
                out[g.rows] = g.binary(rel_level).sum(axis=1)
            self._cache[key] = out
        return self._cache[key]  # type: ignore[no-any-return]

    def nonempty_groups(self) -> list[Group]:
        """The groups whose queries retrieved at least one document."""
        return [g for g in self.groups if g.grades.shape[1]]

    def R(self, rel_level: float) -> np.ndarray:
        """Number of relevant documents per query (float64), validated against the retrieved."""
        key = ("R", rel_level)
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        hits = self.hits_total(rel_level)
        counted = None
        if self.judged is not None:
            assert self.judged_lengths is not None
            seg = np.repeat(np.arange(self.n_queries), self.judged_lengths)
            counted = np.bincount(
                seg, weights=(self.judged >= rel_level).astype(np.float64), minlength=self.n_queries
            )
        if self.n_relevant is not None:
            r = self.n_relevant
            if counted is not None and (counted != r).any():
                i = first_bad(counted != r)
                assert isinstance(i, int)
                raise ValueError(
                    f"judged/n_relevant: disagree for {self._where(i)}: judged has {int(counted[i])} "
                    f"grades >= rel_level={rel_level}, n_relevant is {int(r[i])}"
                )
        elif counted is not None:
            r = counted
        else:
            r = hits
        if (hits > r).any():
            i = first_bad(hits > r)
            assert isinstance(i, int)
            raise ValueError(
                f"relevance: {self._where(i)} retrieved {int(hits[i])} relevant documents "
                f"(grade >= {rel_level}) but n_relevant/judged say only {int(r[i])} exist"
            )
        self._cache[key] = r
        return r

    def ideal_dcg(self, k: int | None, kind: str) -> np.ndarray:
        """IDCG@k per query: from all judged grades if given, else from the retrieved grades."""
        key = ("idcg", k, kind)
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        out = np.zeros(self.n_queries)
        if self.judged is not None:
            assert self.judged_lengths is not None
            for rows, m in _segment_sorted_desc(self.judged, self.judged_lengths, k):
                out[rows] = per_query.dcg(gain(m, kind), k)
        else:
            for g in self.groups:
                m = -np.sort(-g.grades, axis=1)
                out[g.rows] = per_query.dcg(gain(m, kind), k)
        self._cache[key] = out
        return out


# -- measures: each returns per-query values (n_queries,) or (n_queries, m) ------------------------


_div = per_query.divide


def precision_at_k(
    rq: RankedQueries, k: int, rel_level: float, ties: str, adaptive: bool = False
) -> np.ndarray:
    """P@k per query (:meth:`.per_query.Ranked.precision_at`); ``adaptive``: P@min(k, L) for a
    query of L documents (torchmetrics' ``adaptive_k``)."""
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups() if adaptive else rq.groups:
        kk = min(k, g.grades.shape[1]) if adaptive else k
        out[g.rows] = g.ranked(rel_level, ties).precision_at([kk])[:, 0]
    return out


def recall_at_k(rq: RankedQueries, k: int, rel_level: float, ties: str) -> np.ndarray:
    """R@k per query (:meth:`.per_query.Ranked.recall_at`)."""
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        out[g.rows] = g.ranked(rel_level, ties).recall_at([k], r[g.rows])[:, 0]
    return out


def f1_at_k(rq: RankedQueries, k: int, rel_level: float, ties: str) -> np.ndarray:
    """F1@k per query: the harmonic mean 2PR / (P + R) of P@k = hits(k) / k and R@k = hits(k) / R,
    0 when both are 0 (ranx's ``f1@k``, in its order of operations). O(q·k) per group."""
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        hits = g.ranked(rel_level, ties).hits(k)
        p, rec = hits / k, _div(hits, r[g.rows])
        total = p + rec
        out[g.rows] = 2.0 * _div(p * rec, total)
    return out


def precision_recall_curve(rq: RankedQueries, k: int, rel_level: float, ties: str,
                           adaptive: bool = False) -> np.ndarray:
    """P@1..P@k then R@1..R@k per query, shape (queries, 2k) (torchmetrics'
    ``retrieval_precision_recall_curve``): ranks past a list's end are non-relevant; with
    ``adaptive`` a query of L < j documents divides P@j by L. O(queries · k)."""
    r = rq.R(rel_level)
    out = np.zeros((rq.n_queries, 2 * k))
    ranks = np.arange(1, k + 1, dtype=np.float64)
    for g in rq.nonempty_groups():
        n = g.grades.shape[1]
        cum = g.ranked(rel_level, ties).cum[:, :k]
        if n < k:  # the hits stay at the list's total past its end
            cum = np.concatenate([cum, np.repeat(cum[:, -1:], k - n, axis=1)], axis=1)
        out[g.rows, :k] = cum / (np.minimum(ranks, n) if adaptive else ranks)
        out[g.rows, k:] = _div(cum, r[g.rows][:, None])
    return out


def r_precision(rq: RankedQueries, rel_level: float, ties: str) -> np.ndarray:
    """R-precision per query (:meth:`.per_query.Ranked.r_precision`)."""
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        out[g.rows] = g.ranked(rel_level, ties).r_precision(r[g.rows])
    return out


def _prec_recall(g: Group, rel_level: float, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Precision and recall at every rank of the group's queries."""
    rk = g.ranked(rel_level)
    return rk.precision, _div(rk.cum, r[g.rows][:, None])


def precision_at_recall(rq: RankedQueries, level: float, rel_level: float) -> np.ndarray:
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        prec, rec = _prec_recall(g, rel_level, r)
        reach = (rec >= level) & (r[g.rows] > 0)[:, None]
        first = np.argmax(reach, axis=1)
        rows = np.arange(prec.shape[0])
        out[g.rows] = np.where(reach.any(axis=1), prec[rows, first], 0.0)
    return out


def interpolated_precision(
    rq: RankedQueries, levels: tuple[float, ...], rel_level: float, rule: str = "textbook"
) -> np.ndarray:
    """Best precision at any rank whose recall reaches each level (0 if never reached).

    ``rule="textbook"``: recall = hits / R >= level. ``rule="trec"``: trec_eval 9's
    ``iprec_at_recall``: hits >= floor(level · R + 0.9) (a level that needs 0 hits is reached
    at every rank).
    """
    r = rq.R(rel_level)
    out = np.zeros((rq.n_queries, len(levels)))
    for g in rq.nonempty_groups():
        prec, rec = _prec_recall(g, rel_level, r)
        hits = g.ranked(rel_level).cum
        rg = r[g.rows]
        # best precision at ranks with recall >= level: a suffix max of precision.
        suffix = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
        has = (rg > 0)[:, None]
        for j, level in enumerate(levels):
            if rule == "trec":
                need = np.floor(level * rg + 0.9)[:, None]
                reach = (hits >= need) & has
            else:
                reach = (rec >= level) & has
            first = np.argmax(reach, axis=1)
            out[g.rows, j] = np.where(reach.any(axis=1), suffix[np.arange(prec.shape[0]), first], 0.0)
    return out


def system_efficiency(rq: RankedQueries, rel_level: float) -> np.ndarray:
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        prec, rec = _prec_recall(g, rel_level, r)
        d = np.sqrt((1.0 - rec) ** 2 + (1.0 - prec) ** 2).min(axis=1)
        out[g.rows] = np.where(r[g.rows] > 0, 1.0 - d / math.sqrt(2.0), 0.0)
    return out


def average_precision(rq: RankedQueries, k: int | None, rel_level: float, denominator: str) -> np.ndarray:
    """AP@k per query (:meth:`.per_query.Ranked.average_precision`)."""
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        rk = g.ranked(rel_level)
        if denominator == "found":  # torchmetrics: the relevant documents found in the top k
            n = g.grades.shape[1]
            out[g.rows] = _div(rk.precision_sum(k), rk.hits(n if k is None else k))
        else:
            out[g.rows] = rk.average_precision(r[g.rows], k, denominator)
    return out


def reciprocal_rank(rq: RankedQueries, k: int | None, rel_level: float) -> np.ndarray:
    """Reciprocal rank per query (:meth:`.per_query.Ranked.reciprocal_rank`)."""
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        out[g.rows] = g.ranked(rel_level).reciprocal_rank(k)
    return out


def cumulative_gain(rq: RankedQueries, k: int, ties: str) -> np.ndarray:
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        x = gain(g.grades, "linear")
        if ties == "average":
            x = g.tie_average(x)
        out[g.rows] = x[:, :k].sum(axis=1)
    return out


def dcg(rq: RankedQueries, k: int | None, kind: str, ties: str) -> np.ndarray:
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        x = gain(g.grades, kind)
        if ties == "average":
            x = g.tie_average(x)
        out[g.rows] = per_query.dcg(x, k)
    return out


def ndcg(rq: RankedQueries, k: int | None, kind: str, ties: str) -> np.ndarray:
    """DCG / IDCG (0 when IDCG = 0). A DCG above the ideal one (beyond rounding) means the
    retrieved grades are not among the judged grades: a ValueError."""
    d, ideal = dcg(rq, k, kind, ties), rq.ideal_dcg(k, kind)
    over = d > ideal * (1.0 + 1e-12)
    if over.any():
        i = first_bad(over)
        assert isinstance(i, int)
        raise ValueError(
            f"relevance: {rq._where(i)} has DCG {float(d[i])!r} above the ideal DCG "
            f"{float(ideal[i])!r} of its judged grades (a retrieved grade missing from judged)"
        )
    return _div(d, ideal)


def set_counts(rq: RankedQueries, rel_level: float) -> np.ndarray:
    """Columns: set precision, set recall, relevant retrieved, retrieved, relevant (R)."""
    r = rq.R(rel_level)
    hits = rq.hits_total(rel_level)
    ret = rq.lengths.astype(np.float64)
    return np.column_stack([_div(hits, ret), _div(hits, r), hits, ret, r])


def hit_rate(rq: RankedQueries, k: int | None, rel_level: float) -> np.ndarray:
    """1 if a relevant document is in the top k (``None``: anywhere in the list), else 0."""
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        n = g.grades.shape[1]
        out[g.rows] = g.ranked(rel_level).success_at([n if k is None else k])[:, 0]
    return out


def non_relevant_total(rq: RankedQueries, rel_level: float) -> np.ndarray:
    """Non-relevant documents of each query's list (grade < rel_level), float64 (queries,)."""
    return rq.lengths.astype(np.float64) - rq.hits_total(rel_level)


def fall_out(rq: RankedQueries, k: int | None, rel_level: float) -> np.ndarray:
    """Non-relevant documents in the top k / non-relevant documents in the list (0 when none)."""
    total = non_relevant_total(rq, rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        top = g.binary(rel_level) if k is None else g.binary(rel_level)[:, :k]
        out[g.rows] = _div((~top).sum(axis=1).astype(np.float64), total[g.rows])
    return out


def auroc_at_k(rq: RankedQueries, k: int | None, rel_level: float,
               max_fpr: float | None = None) -> np.ndarray:
    """AUROC of each query's top k (``None``: its whole list): the share of (relevant,
    non-relevant) pairs the scores order correctly, a tie counting 1/2 (Mann-Whitney); 0 when
    the top k lacks either kind (torchmetrics' ``retrieval_auroc``). With ``max_fpr`` < 1 the
    standardised partial AUC (:func:`_partial_auroc`). O(q·k) per group."""
    if max_fpr is not None and max_fpr < 1:
        return _partial_auroc(rq, k, rel_level, max_fpr)
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        s = g.scores if k is None else g.scores[:, :k]
        b = g.binary(rel_level)[:, : s.shape[1]]
        q, n = s.shape
        neg = ~b
        grp = per_query.tie_groups(s)  # ties adjacent in rank order; no group spans two rows
        ends = np.append(grp[1:] != grp[:-1], True)
        at_or_above = np.cumsum(neg, axis=1, dtype=np.float64).ravel()[ends]  # per tie group
        tied = np.bincount(grp, weights=neg.ravel().astype(np.float64))
        n_neg = neg.sum(axis=1, dtype=np.float64)
        below = np.repeat(n_neg, n) - at_or_above[grp]  # non-relevant scored strictly lower
        won = np.where(b.ravel(), below + 0.5 * tied[grp], 0.0).reshape(q, n).sum(axis=1)
        out[g.rows] = _div(won, b.sum(axis=1, dtype=np.float64) * n_neg)
    return out


def _partial_auroc(rq: RankedQueries, k: int | None, rel_level: float, max_fpr: float) -> np.ndarray:
    """The area under each query's ROC curve (top k) up to false positive rate ``max_fpr``, tied
    scores a straight segment, McClish-standardised: ``(1 + (A - m**2/2) / (m - m**2/2)) / 2``
    (scikit-learn's ``roc_auc_score(max_fpr=m)``, torchmetrics' ``RetrievalAUROC(max_fpr=m)``);
    0 when the top k lacks either kind. Each tie group is one segment of the curve, clipped at
    ``m``. O(q·k) per group."""
    out = np.zeros(rq.n_queries)
    m = float(max_fpr)
    for g in rq.nonempty_groups():
        s = g.scores if k is None else g.scores[:, :k]
        b = g.binary(rel_level)[:, : s.shape[1]]
        q, n = s.shape
        neg = ~b
        grp = per_query.tie_groups(s)  # ties adjacent in rank order; no group spans two rows
        ends = np.append(grp[1:] != grp[:-1], True)
        row = np.repeat(np.arange(q), n)[ends]  # the query of every tie group
        n_pos, n_neg = b.sum(axis=1, dtype=np.float64), neg.sum(axis=1, dtype=np.float64)
        fp1 = np.cumsum(neg, axis=1, dtype=np.float64).ravel()[ends]  # the curve at each group's end
        tp1 = np.cumsum(b, axis=1, dtype=np.float64).ravel()[ends]
        fp0 = fp1 - np.bincount(grp, weights=neg.ravel().astype(np.float64))  # ... and start
        tp0 = tp1 - np.bincount(grp, weights=b.ravel().astype(np.float64))
        defined = (n_pos > 0) & (n_neg > 0)
        fn, tn = np.where(defined, n_neg, 1.0)[row], np.where(defined, n_pos, 1.0)[row]
        x0, x1, y0, y1 = fp0 / fn, fp1 / fn, tp0 / tn, tp1 / tn
        width = np.clip(m - x0, 0.0, x1 - x0)  # the segment's part at false positive rates <= m
        run = x1 - x0
        ym = y0 + (y1 - y0) * np.divide(width, run, out=np.zeros_like(run), where=run > 0)
        area = np.bincount(row, weights=width * (y0 + ym) / 2, minlength=q)
        lo = m * m / 2
        out[g.rows] = np.where(defined, 0.5 * (1 + (area - lo) / (m - lo)), 0.0)
    return out
