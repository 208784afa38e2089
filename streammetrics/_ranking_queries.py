"""Private kernels for the retrieval measures: validate a batch of queries, rank every query
once, and evaluate any number of per-query measures on the ranked batch (definitions: see
docs/definitions/retrieval.md).

A batch is ``Q`` queries laid out flat (each query's rows contiguous). Ranking never loops over
documents in Python: queries are grouped by their number of retrieved documents ``L`` (a loop over
*distinct lengths*, usually a handful), each group is gathered into a ``(q, L)`` matrix and sorted
along its rows in one numpy call. Every measure is then a few vectorised passes over those
matrices. Cost of :func:`prepare_queries`: O(n log L) for n rows; each measure adds O(n) (or
O(q·k) for a cutoff k).

Ranking rule (trec_eval's): score descending; ties broken by document id descending *as strings*
when ``doc_ids`` are given, else by input order (a stable sort). Measures that take
``ties="average"`` replace each gain by the mean gain of its tie group (expected value over all
orders of the tied documents, McSherry & Najork 2008), which is exact for measures linear in the
gains.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from ._validation import as_numpy, check_scores, first_bad

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["QUERY_OPTIONS", "Group", "QueryOptions", "RankedQueries", "prepare_queries"]


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


def _as_1d(x: Any, name: str) -> np.ndarray:
    arr = as_numpy(x, name)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    return arr


def _take(a: np.ndarray, order: np.ndarray) -> np.ndarray:
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


def _check_grades(g: np.ndarray, name: str) -> np.ndarray:
    g = g.astype(np.float64, copy=False)
    # one reduction each way: a NaN propagates, inf or a grade beyond the bound shows
    if g.size and not (g.min() >= -MAX_GRADE and g.max() <= MAX_GRADE):
        bad = ~(np.abs(g) <= MAX_GRADE)
        idx = first_bad(bad)
        raise ValueError(
            f"{name}: grades must be finite numbers in [-2**128, 2**128]; first invalid value "
            f"{g[idx]!r} at index {idx}"
        )
    return g


def _ids(x: Any, name: str, n: int) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected {n} ids (one per row of relevance), got shape {arr.shape}")
    if arr.dtype.kind == "f" and n and np.isnan(arr).any():
        idx = first_bad(np.isnan(arr))
        raise ValueError(f"{name}: ids must not be NaN; first NaN at index {idx}")
    if arr.dtype.kind not in "biuUSO" and arr.dtype.kind != "f":
        raise ValueError(f"{name}: ids must be strings or integers, got dtype {arr.dtype}")
    return arr


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


def _lookup(mapping: Any, qids: list[Any] | None, name: str, n_queries: int) -> list[Any]:
    """Per-query values from a mapping (by query id) or a sequence aligned with the queries."""
    if isinstance(mapping, Mapping):
        if qids is None:
            raise ValueError(f"{name}: a mapping needs query_ids=")
        return [mapping.get(q) for q in qids]
    seq = list(mapping)
    if len(seq) != n_queries:
        raise ValueError(
            f"{name}: expected a mapping from query id or one entry per query ({n_queries}), got {len(seq)}"
        )
    return seq


def _counts(vals: list[Any], qids: list[Any] | None) -> np.ndarray:
    """``n_relevant`` values as float64, each a non-negative integer (vectorised check)."""
    try:
        arr = np.asarray(vals)  # numbers only (float64 would parse strings)
        ok = arr.dtype.kind in "biuf" and arr.ndim == 1
        arr = arr.astype(np.float64) if ok else arr
        ok = ok and bool(
            (np.isfinite(arr) & (arr >= 0) & (arr == np.floor(np.where(np.isfinite(arr), arr, 0)))).all()
        )
    except (TypeError, ValueError):
        ok = False
    if ok:
        return arr
    for i, v in enumerate(vals):  # locate the first bad entry for the message
        where = f"query {qids[i]!r}" if qids is not None else f"entry {i}"
        if v is None:
            raise ValueError(f"n_relevant: no entry for {where}")
        try:
            if isinstance(v, (str, bytes)):
                raise TypeError
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"n_relevant: expected a non-negative integer for {where}, got {v!r}") from None
        if not (math.isfinite(f) and f >= 0 and f == int(f)):
            raise ValueError(f"n_relevant: expected a non-negative integer for {where}, got {v!r}")
    raise ValueError("n_relevant: expected one non-negative integer per query")  # pragma: no cover


def _judged(parts: list[Any], qids: list[Any] | None) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate per-query judged grades (one C-level concatenate; slow path only for errors)."""
    items = [() if p is None else p for p in parts]
    try:
        lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        flat = np.concatenate(items) if items else np.zeros(0)
        fast = flat.ndim == 1 and flat.shape[0] == int(lengths.sum()) and flat.dtype.kind in "biuf"
    except (TypeError, ValueError):
        fast = False
    if not fast:
        arrays = []
        for i, p in enumerate(items):
            where = f"judged[{qids[i]!r}]" if qids is not None else "judged"
            arrays.append(_as_1d(p, where).astype(np.float64))
        lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        flat = np.concatenate(arrays) if arrays else np.zeros(0)
    flat = flat.astype(np.float64, copy=False)
    if flat.size and not (np.abs(flat) <= MAX_GRADE).all():
        pos = first_bad(~(np.abs(flat) <= MAX_GRADE))
        assert isinstance(pos, int)
        q = int(np.searchsorted(np.cumsum(lengths), pos, side="right"))
        where = f" of query {qids[q]!r}" if qids is not None else ""
        raise ValueError(
            f"judged: grades must be finite numbers in [-2**128, 2**128]; invalid value {flat[pos]!r}{where}"
        )
    return flat, lengths



def _id_keys(d: np.ndarray) -> np.ndarray:
    """int64 keys equal for equal ids (the ids themselves, or Python's string hash)."""
    if d.dtype.kind in "biu":
        return d.astype(np.int64)
    if d.dtype.kind == "f":
        return d.view(np.int64) if d.dtype.itemsize == 8 else d.astype(np.float64).view(np.int64)
    items = d.tolist() if d.dtype.kind == "O" else d.astype(str).tolist()
    return np.fromiter(map(hash, items), dtype=np.int64, count=d.shape[0])


def _check_duplicates(d: np.ndarray, keys: np.ndarray, idx: np.ndarray) -> None:
    """Reject a document id that occurs twice within one query (rows of ``idx``); equal keys
    are confirmed on the ids themselves (hash collisions are not duplicates)."""
    if keys.shape[1] < 2:
        return
    srt = np.sort(keys, axis=1)
    for r in np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1)):
        rows = idx[r].tolist()
        seen: dict[Any, int] = {}
        for pos in rows:
            v = d[pos]
            v = v.item() if isinstance(v, np.generic) else v
            if v in seen:
                raise ValueError(f"doc_ids: duplicate document {v!r} at row {pos} within one query")
            seen[v] = pos


def prepare_queries(relevance: Any, scores: Any, **options: Unpack[QueryOptions]) -> RankedQueries:
    """Validate a batch (one query, or many with ``query_ids``) and rank each query.

    ``options`` are the :class:`QueryOptions` (an unknown name is a ``TypeError``, as Python
    gives for a function's keywords). Raises ``ValueError`` naming the argument and first
    offending value; never mutates anything.
    """
    unknown = sorted(set(options) - QUERY_OPTIONS)
    if unknown:
        raise TypeError(f"update() got an unexpected keyword argument {unknown[0]!r}")
    doc_ids, judged = options.get("doc_ids"), options.get("judged")
    n_relevant, query_ids = options.get("n_relevant"), options.get("query_ids")
    rel = _check_grades(_as_1d(relevance, "relevance"), "relevance")
    sc = _as_1d(scores, "scores")
    n = rel.shape[0]
    if sc.shape[0] != n:
        raise ValueError(f"scores: expected {n} scores (one per row of relevance), got {sc.shape[0]}")
    sc = check_scores(sc, "scores").astype(np.float64, copy=False)

    qids: list[Any] | None
    if query_ids is None:
        lengths = np.array([n], dtype=np.int64)
        starts = np.zeros(1, dtype=np.int64)
        qids = None
    else:
        q = _ids(query_ids, "query_ids", n)
        if n == 0:
            lengths = np.zeros(0, dtype=np.int64)
            starts = lengths
            qids = []
        else:
            change = np.empty(n, dtype=bool)
            change[0] = True
            np.not_equal(q[1:], q[:-1], out=change[1:])
            starts = np.flatnonzero(change)
            lengths = np.diff(np.append(starts, n))
            block = q[starts]
            uniq, first, counts = np.unique(block, return_index=True, return_counts=True)
            if uniq.shape[0] != block.shape[0]:
                dup = int(np.flatnonzero(counts > 1)[0])
                again = starts[np.flatnonzero(block == uniq[dup])[1]]
                raise ValueError(
                    f"query_ids: each query's rows must be contiguous; query {uniq[dup].item()!r} "
                    f"reappears at row {int(again)} after another query"
                )
            qids = block.tolist()
    n_queries = lengths.shape[0]

    d = keys = None
    if doc_ids is not None:
        d = _ids(doc_ids, "doc_ids", n)
        keys = _id_keys(d)

    groups: list[Group] = []
    distinct = lengths[:1] if n_queries <= 1 or (lengths == lengths[0]).all() else np.unique(lengths)
    for length in distinct:
        if distinct.shape[0] == 1:  # every query has the same length: the flat arrays reshape
            rows = np.arange(n_queries)
            s, g0 = sc.reshape(n_queries, length), rel.reshape(n_queries, length)
        else:
            rows = np.flatnonzero(lengths == length)
            idx = starts[rows][:, None] + np.arange(length)
            s, g0 = sc[idx], rel[idx]
        if length == 0:
            groups.append(Group(rows, s, s))
            continue
        rid = starts[rows][:, None] + np.arange(length) if d is not None else None
        order = np.argsort(-s, axis=1)
        ss = _take(s, order)
        tied = (ss[:, 1:] == ss[:, :-1]).any(axis=1)
        if d is not None and keys is not None and rid is not None:
            _check_duplicates(d, keys[rid], rid)
        if tied.any():  # unstable sort is fast; re-sort only the rows with tied scores
            st = s[tied]
            if d is not None and rid is not None:
                # trec_eval: tied documents by id descending, compared as strings.
                sub = d[rid[tied]].astype(str)
                _, inv = np.unique(sub, return_inverse=True)
                codes = inv.reshape(sub.shape).max() - inv.reshape(sub.shape)
                o1 = np.argsort(codes, axis=1)
                o2 = np.argsort(-_take(st, o1), axis=1, kind="stable")
                order[tied] = _take(o1, o2)
            else:  # input order among ties: a stable sort
                order[tied] = np.argsort(-st, axis=1, kind="stable")
            ss[tied] = _take(st, order[tied])
        groups.append(Group(rows, _take(g0, order), ss))

    nrel = None
    if n_relevant is not None:
        vals = [n_relevant] if qids is None else _lookup(n_relevant, qids, "n_relevant", n_queries)
        nrel = _counts(vals, qids)

    jg = jl = None
    if judged is not None:
        parts = [judged] if qids is None else _lookup(judged, qids, "judged", n_queries)
        jg, jl = _judged(parts, qids)

    return RankedQueries(n_queries, lengths, groups, qids, nrel, jg, jl)


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
