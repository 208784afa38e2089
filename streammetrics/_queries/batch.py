"""Validate a batch of retrieval queries once and rank it in query-aligned blocks.

:func:`check_batch` validates the whole batch (one query, or many with ``query_ids``) with
reductions over the arrays as given -- no copy of the batch -- and :meth:`QueryBatch.blocks`
ranks it in blocks of whole queries of about :data:`BLOCK_ROWS` rows, each a
:class:`~streammetrics._queries.kernels.RankedQueries` that the measures read. A huge ``update``
so costs what the same queries cost in small updates: temporaries are bounded by the block
(a few MB), not by the batch, and every block is ranked while it is in cache. Values are
exact: a query never spans two blocks, and the sums over blocks are the sums a stream of
small updates adds. Ranking rule and definitions: see :mod:`streammetrics._queries.kernels`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.validation import as_numpy, check_scores, first_bad

from .kernels import (
    MAX_GRADE,
    QUERY_OPTIONS,
    Group,
    QueryOptions,
    QueryRows,
    RankedQueries,
    take_rows,
)

if TYPE_CHECKING:
    from typing import Unpack

#: Rows per ranked block (whole queries; a longer query is a block of its own): 65,536 rows
#: keep each float64 temporary at 512 KiB.
BLOCK_ROWS = 1 << 15


@dataclass
class QueryBatch:
    """A validated batch: raw grades and scores, query boundaries and per-query options.

    ``bounds`` are every query's first row, then the number of rows; ``ids`` the
    per-row query ids (``None`` for one query); ``doc_ids`` the per-row document ids;
    ``n_relevant`` the validated counts and ``judged`` the per-query judged grades (as given);
    ``raw``: ``judged`` holds judgment rows that the measures read themselves (blocks are then
    not ranked: :class:`~streammetrics._queries.kernels.QueryRows`).
    """

    rel: np.ndarray
    scores: np.ndarray
    bounds: np.ndarray
    ids: np.ndarray | None
    doc_ids: np.ndarray | None
    n_relevant: np.ndarray | None
    judged: list[Any] | None
    raw: bool = False

    @property
    def n_queries(self) -> int:
        return int(self.bounds.shape[0]) - 1

    def cuts(self, rows: int | None = None) -> np.ndarray:
        """Query indices where blocks start (and the end): whole queries, about ``rows`` rows
        a block (default :data:`BLOCK_ROWS`)."""
        rows = BLOCK_ROWS if rows is None else rows
        nq, n = self.n_queries, self.rel.shape[0]
        if nq <= 1 or n <= rows:
            return np.array([0, nq], dtype=np.int64)
        inner = np.searchsorted(self.bounds[:-1], np.arange(rows, n, rows), side="right") - 1
        return np.unique(np.concatenate(([0], inner, [nq])))

    def blocks(self, rows: int | None = None) -> Iterator[RankedQueries]:
        """The batch ranked block by block (queries in order). O(n log L) in all."""
        c = self.cuts(rows).tolist()
        for qa, qb in zip(c[:-1], c[1:], strict=True):
            yield self.rank(qa, qb)

    def rank(self, qa: int, qb: int) -> RankedQueries:
        """Queries ``qa`` to ``qb`` (exclusive) ranked. O(rows log L)."""
        a, b = int(self.bounds[qa]), int(self.bounds[qb])
        if self.raw:
            assert self.doc_ids is not None and self.judged is not None
            qids = None if self.ids is None else self.ids[self.bounds[qa:qb]].tolist()
            given = QueryRows(self.scores[a:b], self.doc_ids[a:b], self.bounds[qa : qb + 1] - a,
                              self.judged[qa:qb], a)  # fmt: skip
            return RankedQueries(qb - qa, np.diff(self.bounds[qa : qb + 1]), [], qids, None, None, None,
                                 offset=qa, given=given)  # fmt: skip
        rel = self.rel[a:b].astype(np.float64, copy=False)
        sc = self.scores[a:b].astype(np.float64, copy=False)
        lengths, starts = np.diff(self.bounds[qa : qb + 1]), self.bounds[qa:qb] - a
        n_queries = qb - qa
        qids = None if self.ids is None else self.ids[self.bounds[qa:qb]].tolist()
        d = keys = None
        if self.doc_ids is not None:
            d = self.doc_ids[a:b]
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
            ss = take_rows(s, order)
            tied = (ss[:, 1:] == ss[:, :-1]).any(axis=1)
            if d is not None and keys is not None and rid is not None:
                _check_duplicates(d, keys[rid], rid, a)
            if tied.any():  # unstable sort is fast; re-sort only the rows with tied scores
                st = s[tied]
                if d is not None and rid is not None:
                    # trec_eval: tied documents by id descending, compared as strings.
                    sub = d[rid[tied]].astype(str)
                    _, inv = np.unique(sub, return_inverse=True)
                    codes = inv.reshape(sub.shape).max() - inv.reshape(sub.shape)
                    o1 = np.argsort(codes, axis=1)
                    o2 = np.argsort(-take_rows(st, o1), axis=1, kind="stable")
                    order[tied] = take_rows(o1, o2)
                else:  # input order among ties: a stable sort
                    order[tied] = np.argsort(-st, axis=1, kind="stable")
                ss[tied] = take_rows(st, order[tied])
            groups.append(Group(rows, take_rows(g0, order), ss))
        nrel = None if self.n_relevant is None else self.n_relevant[qa:qb]
        jg = jl = None
        if self.judged is not None:
            jg, jl = _judged(self.judged[qa:qb], qids)
        return RankedQueries(n_queries, lengths, groups, qids, nrel, jg, jl, offset=qa)


def _query_bounds(q: np.ndarray) -> np.ndarray:
    """First row of every run of equal ids, then ``len(q)`` (int32 when that fits); rows are
    compared in blocks, counted first so that the result is the only array of its size.
    ``ValueError`` if an id's rows are not contiguous."""
    n = q.shape[0]
    spans = [(a, min(a + BLOCK_ROWS, n - 1)) for a in range(0, n - 1, BLOCK_ROWS)]
    counts = [int(np.count_nonzero(q[a + 1 : b + 1] != q[a:b])) for a, b in spans]
    bounds = np.empty(sum(counts) + 2 if n else 1, dtype=np.int32 if n < 2**31 else np.int64)
    bounds[0], bounds[-1], at = 0, n, 1
    for (a, b), c in zip(spans, counts, strict=True):
        bounds[at : at + c] = np.flatnonzero(q[a + 1 : b + 1] != q[a:b]) + (a + 1)
        at += c
    if n == 0:
        return bounds
    starts = bounds[:-1]
    srt = q[starts]
    srt.sort()  # (a copy of the ids: sorted in place)
    if srt.shape[0] > 1 and (srt[1:] == srt[:-1]).any():
        block = q[starts]
        uniq, reps = np.unique(block, return_counts=True)
        dup = int(np.flatnonzero(reps > 1)[0])
        again = starts[np.flatnonzero(block == uniq[dup])[1]]
        raise ValueError(
            f"query_ids: each query's rows must be contiguous; query {uniq[dup].item()!r} "
            f"reappears at row {int(again)} after another query"
        )
    return bounds


def _shape_of(x: Any) -> tuple[Any, tuple[int, ...] | None]:
    """``(x, its shape)``: arrays and tensors as given, a nested list as a numpy array, a flat
    list as given with shape ``(len,)`` (anything else: shape None, ``x`` unchanged)."""
    shape = getattr(x, "shape", None)
    if shape is not None:
        try:
            return x, tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            return x, None
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError):  # ragged: check_batch names it
            return x, None
        return arr, arr.shape
    if isinstance(x, (list, tuple)):
        return x, (len(x),)
    return x, None


def flatten_rows(relevance: Any, scores: Any, options: Any) -> tuple[Any, Any, Any]:
    """torchmetrics' multidimensional inputs: when ``relevance`` or ``scores`` (or a row option,
    ``query_ids`` / ``doc_ids``) has shape ``(N, ...)`` with two or more dimensions, every row
    argument given must have that same shape, and all are flattened in C order (as
    torchmetrics' ``.flatten()``). A mismatch is a ``ValueError`` naming the argument and both
    shapes. 1-D inputs pass unchanged (one view, no copy). O(1) for arrays (a C-contiguous
    reshape is a view), O(n) for nested lists."""
    given = {"relevance": relevance, "scores": scores,
             **{k: options.get(k) for k in ("query_ids", "doc_ids")}}
    shaped = {k: _shape_of(v) for k, v in given.items() if v is not None}
    if not any(s is not None and len(s) >= 2 for _, s in shaped.values()):
        return relevance, scores, options
    ref_name, (_, ref) = next(iter(shaped.items()))
    for name, (_, shape) in shaped.items():
        if shape != ref:
            got = "no shape" if shape is None else f"shape {shape}"
            raise ValueError(f"{name}: expected the shape of {ref_name} {ref} (multidimensional "
                             f"inputs are flattened together), got {got}")
    flat = {k: x.reshape(-1) for k, (x, _) in shaped.items()}
    out = dict(options)
    out.update({k: v for k, v in flat.items() if k in ("query_ids", "doc_ids")})
    return flat.get("relevance", relevance), flat["scores"], out


def ignore_index_of(specs: Any) -> int | None:
    """The ``ignore_index`` the specs share (None: no row is dropped; trec's specs have none)."""
    found = {getattr(spec, "ignore_index", None) for spec in specs}
    assert len(found) <= 1, found  # a query state holds specs of one ignore_index only
    return found.pop() if found else None


def drop_ignored(relevance: Any, scores: Any, options: Any, ignore_index: int | None) -> tuple[Any, Any, Any]:
    """``(relevance, scores, options)`` without the rows whose relevance equals ``ignore_index``
    (torchmetrics' option): ``scores``, ``doc_ids`` and ``query_ids`` lose the same rows; a
    query all of whose rows are dropped disappears (its ``judged`` / ``n_relevant`` must then
    be mappings by query id). Inputs that :func:`check_batch` will refuse (not one row per
    entry, not numbers) pass unchanged so that its message names them as given. O(n)."""
    if ignore_index is None or relevance is None:
        return relevance, scores, options
    given = (relevance, scores, options.get("doc_ids"), options.get("query_ids"))
    if any(isinstance(a, np.ma.MaskedArray) and np.ma.getmaskarray(a).any() for a in given):
        return relevance, scores, options  # np.asarray would drop the mask: check_batch refuses it
    try:
        rel = np.asarray(relevance)
        keep = np.asarray(rel != ignore_index, dtype=bool)
    except (TypeError, ValueError):
        return relevance, scores, options
    if rel.ndim != 1 or rel.dtype.kind not in "biuf" or keep.all():
        return relevance, scores, options
    rows = {"scores": scores, **{k: options.get(k) for k in ("doc_ids", "query_ids")}}
    arrays = {k: np.asarray(v) for k, v in rows.items() if v is not None}
    if any(a.ndim != 1 or a.shape[0] != rel.shape[0] for a in arrays.values()) \
            or arrays["scores"].dtype.kind not in "biuf":
        return relevance, scores, options
    check_scores(arrays["scores"], "scores")  # a dropped row's score is still checked (NaN, ...)
    out = dict(options)
    for k, a in arrays.items():
        if k != "scores":
            out[k] = a[keep]
    qids = arrays.get("query_ids")
    if qids is not None:
        kept = set(qids[keep].tolist())
        gone = [q for q in dict.fromkeys(qids[~keep].tolist()) if q not in kept]
        for name in ("judged", "n_relevant"):
            v = options.get(name)
            if gone and v is not None and not isinstance(v, Mapping):
                raise ValueError(f"{name}: query {gone[0]!r} has only rows with relevance == ignore_index "
                                 f"({ignore_index}); give {name} as a mapping from query id")
    return rel[keep], arrays["scores"][keep], out


def check_batch(
    relevance: Any, scores: Any, *, raw_judged: bool = False, **options: Unpack[QueryOptions]
) -> QueryBatch:
    """Validate a batch (one query, or many with ``query_ids``) without copying it.

    ``options`` are the :class:`~streammetrics._queries.kernels.QueryOptions` (an unknown
    name is a ``TypeError``, as Python gives for a function's keywords). Raises ``ValueError``
    naming the argument and first offending value (duplicate documents and the per-query
    measures' own checks are found while ranking, :meth:`QueryBatch.rank`); never mutates
    anything. O(n) reductions plus O(queries log queries).

    ``raw_judged``: the measures read each query's ``judged`` entry (judgment rows naming
    documents) and rank the query themselves; ``relevance`` must then be None (the rows give
    every judgment), ``doc_ids`` and ``judged`` are required and ``n_relevant`` is refused.
    """
    unknown = sorted(set(options) - QUERY_OPTIONS)
    if unknown:
        raise TypeError(f"update() got an unexpected keyword argument {unknown[0]!r}")
    doc_ids, judged = options.get("doc_ids"), options.get("judged")
    n_relevant, query_ids = options.get("n_relevant"), options.get("query_ids")
    if raw_judged:
        _check_raw(relevance, doc_ids, judged, n_relevant)
        rel = np.zeros(_as_1d(scores, "scores").shape[0])
    else:
        rel = _as_1d(relevance, "relevance")
        _check_grades(rel, "relevance")
    sc = _as_1d(scores, "scores")
    n = rel.shape[0]
    if sc.shape[0] != n:
        raise ValueError(f"scores: expected {n} scores (one per row of relevance), got {sc.shape[0]}")
    sc = check_scores(sc, "scores")

    q: np.ndarray | None = None
    if query_ids is None:
        bounds = np.array([0, n], dtype=np.int64)
    else:
        q = _ids(query_ids, "query_ids", n)
        bounds = _query_bounds(q)
    n_queries = bounds.shape[0] - 1
    d = None if doc_ids is None else _ids(doc_ids, "doc_ids", n)

    qids = None if q is None else q[bounds[:-1]].tolist() if _needs_ids(n_relevant, judged) else None
    nrel = None
    if n_relevant is not None:
        vals = [n_relevant] if q is None else _lookup(n_relevant, qids, "n_relevant", n_queries)
        nrel = _counts(vals, qids)
    parts = None
    if judged is not None:
        parts = [judged] if q is None else _lookup(judged, qids, "judged", n_queries)
    return QueryBatch(rel, sc, bounds, q, d, nrel, parts, raw_judged)


def _check_raw(relevance: Any, doc_ids: Any, judged: Any, n_relevant: Any) -> None:
    """The arguments of a batch whose judgments are rows in ``judged`` (``raw_judged``)."""
    if relevance is not None:
        raise ValueError("relevance: these measures take every judgment from judged= (rows naming "
                         f"documents); pass relevance=None, got {type(relevance).__name__}")  # fmt: skip
    if doc_ids is None:
        raise ValueError("doc_ids: required, the judgment rows in judged= name documents")
    if judged is None:
        raise ValueError("judged: required, each query's judgment rows (judged={query id: rows})")
    if n_relevant is not None:
        raise ValueError("n_relevant: not taken; the judgment rows in judged= give every judgment")


def reads_rows(spec: Any) -> bool:
    """Whether ``spec`` reads each query's ``judged`` entry as judgment rows naming documents and
    ranks the query itself (a spec's ``raw_judged`` attribute; default False): such specs share a
    state and a batch only with each other (``check_batch(..., raw_judged=True)``)."""
    return bool(getattr(spec, "raw_judged", False))


def _needs_ids(*options: Any) -> bool:
    """Whether any per-query option is looked up by query id (or names queries in messages)."""
    return any(o is not None for o in options)


def prepare_queries(relevance: Any, scores: Any, **options: Unpack[QueryOptions]) -> RankedQueries:
    """The whole batch validated (:func:`check_batch`) and ranked as one block."""
    batch = check_batch(relevance, scores, **options)
    return batch.rank(0, batch.n_queries)


# -- validation helpers --------------------------------------------------------------------------


def _as_1d(x: Any, name: str) -> np.ndarray:
    arr = as_numpy(x, name)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    return arr


def _check_grades(g: np.ndarray, name: str) -> None:
    """Refuse grades that are not finite numbers within +-MAX_GRADE: one reduction each way on
    the array as given (no float64 copy; a NaN propagates), a locating pass only on failure."""
    if g.size and not (g.min() >= -MAX_GRADE and g.max() <= MAX_GRADE):
        f = g.astype(np.float64)
        idx = first_bad(~(np.abs(f) <= MAX_GRADE))
        raise ValueError(
            f"{name}: grades must be finite numbers in [-2**128, 2**128]; first invalid value "
            f"{f[idx]!r} at index {idx}"
        )


def _ids(x: Any, name: str, n: int) -> np.ndarray:
    if isinstance(x, np.ma.MaskedArray) and np.ma.getmaskarray(x).any():  # np.asarray drops the mask
        idx = first_bad(np.ma.getmaskarray(x).ravel())
        raise ValueError(f"{name}: masked arrays are not supported (masked entry at index {idx}); "
                         "pass the unmasked rows, e.g. .compressed() of a mask shared by all arguments")
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


def _check_duplicates(d: np.ndarray, keys: np.ndarray, idx: np.ndarray, offset: int) -> None:
    """Reject a document id that occurs twice within one query (rows of ``idx``, of a block
    starting at row ``offset`` of the batch); equal keys are confirmed on the ids themselves
    (hash collisions are not duplicates)."""
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
                raise ValueError(f"doc_ids: duplicate document {v!r} at row {pos + offset} within one query")
            seen[v] = pos
