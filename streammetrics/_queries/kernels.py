"""Private kernels for the retrieval measures: a batch of queries ranked once
(:class:`RankedQueries`, built by :mod:`streammetrics._queries.batch`, which validates the batch)
and any number of per-query measures evaluated on it (definitions: see
docs/definitions/retrieval.md).

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

__all__ = ["MAX_GRADE", "QUERY_OPTIONS", "Group", "QueryOptions", "QueryRows", "RankedQueries", "take_rows"]


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

    def binary(self, rel_level: float) -> np.ndarray:
        """Relevance indicator (grade >= rel_level) in rank order, cached per level."""
        b = self._binary.get(rel_level)
        if b is None:
            b = self._binary[rel_level] = self.grades >= rel_level
        return b

    def tie_average(self, x: np.ndarray) -> np.ndarray:
        """``x`` (q, L) with each entry replaced by the mean over its tie group of equal scores."""
        q, n = x.shape
        if n == 0:
            return x.astype(np.float64)
        if self._tie_ids is None:
            new = np.ones((q, n), dtype=bool)
            new[:, 1:] = self.scores[:, 1:] != self.scores[:, :-1]
            self._tie_ids = np.cumsum(new.ravel()) - 1
        gid = self._tie_ids
        sums = np.bincount(gid, weights=x.ravel().astype(np.float64))
        counts = np.bincount(gid)
        return (sums / counts)[gid].reshape(q, n)


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


def dcg_matrix(gains: np.ndarray, k: int | None) -> np.ndarray:
    """Σ_{i ≤ k} gains[:, i-1] / log2(i + 1) for a (q, L) matrix of gains in rank order."""
    m = gains if k is None else gains[:, :k]
    if m.shape[1] == 0:
        return np.zeros(m.shape[0])
    return (m * _discount(m.shape[1])).sum(axis=1)


_DISCOUNTS: dict[int, np.ndarray] = {}


def _discount(n: int) -> np.ndarray:
    """1 / log2(i + 1) for ranks i = 1..n (cached; read-only)."""
    d = _DISCOUNTS.get(n)
    if d is None:
        d = 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))
        d.flags.writeable = False
        if len(_DISCOUNTS) < 256:
            _DISCOUNTS[n] = d
    return d


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
                out[rows] = dcg_matrix(gain(m, kind), k)
        else:
            for g in self.groups:
                m = -np.sort(-g.grades, axis=1)
                out[g.rows] = dcg_matrix(gain(m, kind), k)
        self._cache[key] = out
        return out


# -- measures: each returns per-query values (n_queries,) or (n_queries, m) ------------------------


def _div(a: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """a / b elementwise, 0 where b <= 0 (trec_eval's convention for empty denominators)."""
    b_arr = np.asarray(b, dtype=np.float64)
    out = np.zeros(np.shape(a))
    np.divide(a, b_arr, out=out, where=b_arr > 0)
    return out


def _binary(g: Group, rel_level: float, ties: str) -> np.ndarray:
    b = g.binary(rel_level).astype(np.float64)
    return g.tie_average(b) if ties == "average" else b


def precision_at_k(rq: RankedQueries, k: int, rel_level: float, ties: str) -> np.ndarray:
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        out[g.rows] = _binary(g, rel_level, ties)[:, :k].sum(axis=1) / k
    return out


def recall_at_k(rq: RankedQueries, k: int, rel_level: float, ties: str) -> np.ndarray:
    hits = precision_at_k(rq, k, rel_level, ties) * k
    return _div(hits, rq.R(rel_level))


def r_precision(rq: RankedQueries, rel_level: float, ties: str) -> np.ndarray:
    r = rq.R(rel_level)
    hits = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        c = np.cumsum(_binary(g, rel_level, ties), axis=1)
        rr = r[g.rows].astype(np.int64)
        col = np.minimum(rr, c.shape[1]) - 1
        hits[g.rows] = np.where(rr > 0, c[np.arange(c.shape[0]), np.maximum(col, 0)], 0.0)
    return _div(hits, r)


def _prec_recall(g: Group, rel_level: float, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = g.binary(rel_level).astype(np.float64)
    c = np.cumsum(b, axis=1)
    prec = c / np.arange(1, c.shape[1] + 1)
    rec = _div(c, r[g.rows][:, None])
    return b, prec, rec


def precision_at_recall(rq: RankedQueries, level: float, rel_level: float) -> np.ndarray:
    r = rq.R(rel_level)
    out = np.zeros(rq.n_queries)
    for g in rq.nonempty_groups():
        _, prec, rec = _prec_recall(g, rel_level, r)
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
        _, prec, rec = _prec_recall(g, rel_level, r)
        hits = np.cumsum(g.binary(rel_level), axis=1)
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
        _, prec, rec = _prec_recall(g, rel_level, r)
        d = np.sqrt((1.0 - rec) ** 2 + (1.0 - prec) ** 2).min(axis=1)
        out[g.rows] = np.where(r[g.rows] > 0, 1.0 - d / math.sqrt(2.0), 0.0)
    return out


def average_precision(rq: RankedQueries, k: int | None, rel_level: float, denominator: str) -> np.ndarray:
    r = rq.R(rel_level)
    total = np.zeros(rq.n_queries)
    for g in rq.groups:
        b = g.binary(rel_level)[:, :k] if k is not None else g.binary(rel_level)
        if b.shape[1] == 0:
            continue
        c = np.cumsum(b, axis=1, dtype=np.float64)
        total[g.rows] = (np.where(b, c, 0.0) / np.arange(1, b.shape[1] + 1)).sum(axis=1)
    denom = np.minimum(r, k) if (k is not None and denominator == "min_k_r") else r
    return _div(total, denom)


def reciprocal_rank(rq: RankedQueries, k: int | None, rel_level: float) -> np.ndarray:
    out = np.zeros(rq.n_queries)
    for g in rq.groups:
        b = g.binary(rel_level)[:, :k] if k is not None else g.binary(rel_level)
        if b.shape[1] == 0:
            continue
        first = np.argmax(b, axis=1)
        out[g.rows] = np.where(b.any(axis=1), 1.0 / (first + 1.0), 0.0)
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
        out[g.rows] = dcg_matrix(x, k)
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
