"""The one per-query kernel of the IR measures: AP, P@k, R@k, R-precision, reciprocal rank, DCG
and nDCG of many queries at once, read off their relevance in rank order.

Every caller ranks first and hands over matrices of shape ``(q, n)``: ``q`` queries of ``n``
ranked documents each (callers group queries by length). Three callers share it:

* the retrieval accumulators (:mod:`streammetrics._queries.kernels`, ``rounding="numpy"``);
* ``streammetrics.trec``'s per-query measures (``trec/_kernels.py``: one query, ``q = 1``) and
  its block-at-a-time fast path (``trec/batched.py``), both ``rounding="trec_eval"``.

Definitions (docs/definitions/retrieval.md): with rel(i) the relevance of the document at rank
i, hits(k) = Σ_{i≤k} rel(i), P(i) = hits(i) / i and R the number of relevant documents,

* P@k = hits(k) / k; R@k = hits(k) / R; R-precision = hits(min(R, n)) / R;
* AP@k = Σ_{i≤k} P(i)·rel(i) / R (or / min(k, R));
* RR@k = 1 / (rank of the first relevant document), 0 if none is in the top k;
* DCG@k = Σ_{i≤k} gain_i / log2(i + 1); nDCG@k = DCG@k / IDCG@k.

A value whose denominator is 0 (R = 0, IDCG = 0) is 0, as in trec_eval.

Options
-------
ties : {"first", "average"}
    How documents of equal score share ranks. ``"first"``: the order given, which the caller's
    ranking has fixed -- trec_eval's rule orders tied scores by document id descending (as
    strings; :class:`~streammetrics._queries.batch.QueryBatch` with ``doc_ids``, trec's readers),
    the retrieval accumulators without ids keep the input order. ``"average"``: the caller
    replaces each relevance or gain by its mean over the tie group (:func:`tie_average` of
    :func:`tie_groups`) before handing it over: the expected value over every order of the tied
    documents (McSherry & Najork 2008), exact for the measures linear in the relevance (P@k,
    R@k, R-precision, DCG).
rounding : {"numpy", "trec_eval"}
    The order of the floating-point operations. ``"trec_eval"``: every sum runs left to right
    in rank order (trec_eval's C loops; a row-wise ``cumsum``), DCG divides each gain by
    ``log2(i + 1)``, so values equal trec_eval's (and pytrec_eval's) to the last bit.
    ``"numpy"``: sums are numpy's (pairwise) row sums over the top k, DCG multiplies by a cached
    ``1 / log2(i + 1)``: faster; equal to trec_eval's within rounding (a relative difference
    below n·2⁻⁵³ for n ranks). Counts (hits of 0/1 relevance) are exact either way.

Cost: O(q·n) per measure (O(q·k) for one cutoff k with ``"numpy"``); nothing loops over
documents or queries in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

Rounding = Literal["numpy", "trec_eval"]
#: The rounding options (see the module docstring).
ROUNDINGS: tuple[str, ...] = ("numpy", "trec_eval")


def divide(a: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """``a / b`` elementwise, 0 where ``b <= 0`` (trec_eval's convention for an empty denominator).

    Parameters
    ----------
    a : numpy.ndarray
        Numerators.
    b : numpy.ndarray or float
        Denominators, broadcast against ``a``.

    Returns
    -------
    numpy.ndarray of float64, the shape of ``a``

    Notes
    -----
    O(a.size).
    """
    b_arr = b if type(b) is np.ndarray and b.dtype == np.float64 else np.asarray(b, dtype=np.float64)
    return np.divide(a, b_arr, out=np.zeros(np.shape(a)), where=b_arr > 0)  # type: ignore[no-any-return]


def tie_groups(scores: np.ndarray) -> np.ndarray:
    """Flat tie-group ids of a ``(q, n)`` matrix of scores in rank order (equal neighbours share one).

    Parameters
    ----------
    scores : numpy.ndarray of shape (q, n)
        Each query's scores, ranked (ties adjacent).

    Returns
    -------
    numpy.ndarray of int64, shape (q * n,)
        Group ids, increasing along the flattened matrix; a group never spans two queries.

    Notes
    -----
    O(q·n).
    """
    q, n = scores.shape
    new = np.ones((q, n), dtype=bool)
    new[:, 1:] = scores[:, 1:] != scores[:, :-1]
    return np.cumsum(new.ravel()) - 1  # type: ignore[no-any-return]


def tie_average(x: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``x`` (q, n) with each entry replaced by the mean over its tie group (``ties="average"``).

    Parameters
    ----------
    x : numpy.ndarray of shape (q, n)
        Relevance or gains in rank order.
    groups : numpy.ndarray of int64, shape (q * n,)
        :func:`tie_groups` of the scores.

    Returns
    -------
    numpy.ndarray of float64, shape (q, n)

    Notes
    -----
    O(q·n).
    """
    q, n = x.shape
    if n == 0:
        return x.astype(np.float64)
    sums = np.bincount(groups, weights=x.ravel().astype(np.float64))
    counts = np.bincount(groups)
    return (sums / counts)[groups].reshape(q, n)  # type: ignore[no-any-return]


_DISCOUNTS: dict[int, np.ndarray] = {}
_LOG2_RANKS: dict[int, np.ndarray] = {}
_RANKS: dict[int, np.ndarray] = {}


def _discount(n: int) -> np.ndarray:
    """1 / log2(i + 1) for ranks i = 1..n (numpy's rounding multiplies by it)."""
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))  # type: ignore[no-any-return]


def _log2_ranks(n: int) -> np.ndarray:
    """log2(i + 1) for ranks i = 1..n (trec_eval's rounding divides by it)."""
    return np.log2(np.arange(n) + 2.0)  # type: ignore[no-any-return]


def _ranks(n: int) -> np.ndarray:
    """The ranks 1..n as float64."""
    return np.arange(1.0, n + 1.0)


def _cached(cache: dict[int, np.ndarray], n: int, make: Callable[[int], np.ndarray]) -> np.ndarray:
    """``make(n)`` kept read-only in ``cache`` (at most 256 lengths)."""
    d = cache.get(n)
    if d is None:
        d = make(n)
        d.flags.writeable = False
        if len(cache) < 256:
            cache[n] = d
    return d


def _columns(values: list[np.ndarray], q: int) -> np.ndarray:
    """Per-query vectors (each shape (q,)) as the columns of a (q, len(values)) matrix."""
    if len(values) == 1:
        return values[0][:, None]
    return np.stack(values, axis=1) if values else np.zeros((q, 0))


def _left_to_right_at(terms: np.ndarray, cutoffs: Sequence[int | None]) -> np.ndarray:
    """Σ_{i≤k} terms[:, i-1] summed left to right (C's loop order) at each cutoff k (None: all),
    shape (q, len(cutoffs)). O(q·n)."""
    return _read_at(np.cumsum(terms, axis=1), cutoffs)


#: The column index of each (cutoffs, n) read (:func:`_read_at`): a slice for one cutoff, an
#: index array for several, None when a cutoff reads no rank (k = 0 or n = 0).
_READS: dict[tuple[tuple[int | None, ...], int], slice | np.ndarray | None] = {}


def _read_at(total: np.ndarray, cutoffs: Sequence[int | None]) -> np.ndarray:
    """``total[:, k - 1]`` at each cutoff k (None or beyond n: the last column; k = 0: 0), shape
    (q, len(cutoffs)). A view of ``total`` for one cutoff (callers do not write to it)."""
    q, n = total.shape
    key = (tuple(cutoffs), n)
    if key in _READS:
        idx = _READS[key]
    else:
        m = [n if k is None else max(min(k, n), 0) for k in cutoffs]
        idx = None if min(m, default=1) == 0 else slice(m[0] - 1, m[0]) if len(m) == 1 else np.array(m) - 1
        if isinstance(idx, np.ndarray):
            idx.flags.writeable = False
        if len(_READS) < 4096:
            _READS[key] = idx
    if idx is not None:
        return total[:, idx]
    m = [n if k is None else max(min(k, n), 0) for k in cutoffs]
    return np.concatenate([np.zeros((q, 1)), total], axis=1)[:, m]


def dcg_at(gains: np.ndarray, cutoffs: Sequence[int | None], rounding: Rounding = "numpy") -> np.ndarray:
    """DCG@k = Σ_{i≤k} gains[:, i-1] / log2(i + 1) of every query at every cutoff.

    Parameters
    ----------
    gains : numpy.ndarray of shape (q, n)
        Each query's gains in rank order (for the ideal DCG: sorted descending).
    cutoffs : sequence of int or None
        The cutoffs k (None: the whole list; a k beyond n reads the whole list).
    rounding : {"numpy", "trec_eval"}, default "numpy"
        ``"trec_eval"``: terms ``gain / log2(i + 1)`` summed left to right;
        ``"numpy"``: ``gain * (1 / log2(i + 1))`` summed by numpy.

    Returns
    -------
    numpy.ndarray of float64, shape (q, len(cutoffs))

    Notes
    -----
    O(q·n) (``"numpy"``: O(q·k) per cutoff).
    """
    q, n = gains.shape
    if n == 0:
        return np.zeros((q, len(cutoffs)))
    if rounding == "trec_eval":
        # trec_eval skips zero gains; adding their 0.0 terms changes no bit of a sum
        return _left_to_right_at(gains / _cached(_LOG2_RANKS, n, _log2_ranks), cutoffs)
    return _columns([dcg(gains, k) for k in cutoffs], q)


def dcg(gains: np.ndarray, k: int | None = None, rounding: Rounding = "numpy") -> np.ndarray:
    """DCG@k of every query at one cutoff: :func:`dcg_at` for ``cutoffs=[k]``, shape (q,).

    Parameters
    ----------
    gains : numpy.ndarray of shape (q, n)
        Each query's gains in rank order.
    k : int or None, default None
        The cutoff (None: the whole list).
    rounding : {"numpy", "trec_eval"}, default "numpy"
        As in :func:`dcg_at`.

    Returns
    -------
    numpy.ndarray of float64, shape (q,)

    Notes
    -----
    O(q·k) (``"trec_eval"``: O(q·n)).
    """
    if rounding == "trec_eval":
        return dcg_at(gains, [k], rounding)[:, 0]
    m = gains if k is None else gains[:, : max(k, 0)]
    return (m * _cached(_DISCOUNTS, m.shape[1], _discount)).sum(axis=1)  # type: ignore[no-any-return]


class Ranked:
    """The per-query kernel: ``q`` queries' relevance in rank order and the measures read off it.

    Parameters
    ----------
    rel : numpy.ndarray of shape (q, n)
        Relevance of each ranked document: bool (relevant or not), or float in [0, 1] (a
        tie-averaged indicator, :func:`tie_average`; the hit-count measures only).
    rounding : {"numpy", "trec_eval"}, default "numpy"
        The order of the floating-point operations (see the module docstring).

    Notes
    -----
    The measures that divide by R take it, per query (float64, shape (q,), non-negative whole
    numbers), as an argument.
    The hit counts ``cum`` (O(q·n), one row-wise ``cumsum``) and the precisions at each rank are
    computed once, on first use, and shared by every measure read.
    """

    __slots__ = ("rel", "rounding", "_hits", "_prec", "_first")

    def __init__(self, rel: np.ndarray, rounding: Rounding = "numpy") -> None:
        if rounding not in ROUNDINGS:
            raise ValueError(f"rounding: must be one of {ROUNDINGS}, got {rounding!r}")
        self.rel = rel
        self.rounding = rounding
        self._hits: np.ndarray | None = None
        self._prec: np.ndarray | None = None
        self._first: np.ndarray | None = None

    @property
    def cum(self) -> np.ndarray:
        """hits(i) at every rank i = 1..n, shape (q, n) (float64; whole numbers for bool relevance)."""
        if self._hits is None:
            self._hits = np.cumsum(self.rel, axis=1, dtype=np.float64)
            self._hits.flags.writeable = False  # shared by every measure (and their views)
        return self._hits

    @property
    def precision(self) -> np.ndarray:
        """P(i) = hits(i) / i at every rank i, shape (q, n)."""
        if self._prec is None:
            n = self.rel.shape[1]
            self._prec = self.cum / _cached(_RANKS, n, _ranks)
        return self._prec

    def hits_at(self, cutoffs: Sequence[int]) -> np.ndarray:
        """hits(k) per query and cutoff (float64, shape (q, len(cutoffs))); ranks past the end
        of a list count as non-relevant. Counts of bool relevance are read off the cumulative
        hits when they exist (exact); tie-averaged relevance with ``"numpy"`` is summed per cutoff."""
        if self.rounding == "numpy" and (self._hits is None or self.rel.dtype != bool):
            return _columns([self.hits(k) for k in cutoffs], self.rel.shape[0])
        return _read_at(self.cum, cutoffs)

    def hits(self, k: int) -> np.ndarray:
        """hits(k) per query at one cutoff (float64, shape (q,)): :meth:`hits_at` for ``[k]``."""
        if self.rounding == "numpy" and (self._hits is None or self.rel.dtype != bool):
            return self.rel[:, : max(k, 0)].sum(axis=1, dtype=np.float64)  # type: ignore[no-any-return]
        return _read_at(self.cum, [k])[:, 0]

    def precision_at(self, cutoffs: Sequence[int]) -> np.ndarray:
        """P@k = hits(k) / k (divided by k even when fewer than k were retrieved), shape (q, len(cutoffs))."""
        if len(cutoffs) == 1:
            return (self.hits(cutoffs[0]) / cutoffs[0])[:, None]  # type: ignore[no-any-return]
        return self.hits_at(cutoffs) / np.asarray(cutoffs, dtype=np.float64)

    def recall_at(self, cutoffs: Sequence[int], R: np.ndarray) -> np.ndarray:
        """R@k = hits(k) / R (0 when R = 0), shape (q, len(cutoffs))."""
        return divide(self.hits_at(cutoffs), R[:, None])

    def success_at(self, cutoffs: Sequence[int]) -> np.ndarray:
        """1 if a relevant document is in the top k, else 0, shape (q, len(cutoffs))."""
        return np.where(self.hits_at(cutoffs) > 0, 1.0, 0.0)

    def r_precision(self, R: np.ndarray) -> np.ndarray:
        """hits(min(R, n)) / R, divided by R even when fewer than R were retrieved (0 when R = 0)."""
        q, n = self.rel.shape
        if n == 0:
            return np.zeros(q)
        k = np.minimum(R, n).astype(np.int64)  # k = 0 only where R = 0: a value of 0
        return divide(self.cum[np.arange(q), np.maximum(k, 1) - 1], R)

    def precision_sum_at(self, cutoffs: Sequence[int | None]) -> np.ndarray:
        """Σ_{i≤k} P(i)·rel(i) (AP's numerator) per query and cutoff, shape (q, len(cutoffs)).

        ``rel`` must be bool. ``"trec_eval"``: one left-to-right sum, read at each cutoff;
        ``"numpy"``: a row sum over the top k per cutoff.
        """
        if self.rounding == "trec_eval":
            return _left_to_right_at(np.where(self.rel, self.precision, 0.0), cutoffs)
        return _columns([self.precision_sum(k) for k in cutoffs], self.rel.shape[0])

    def precision_sum(self, k: int | None = None) -> np.ndarray:
        """Σ_{i≤k} P(i)·rel(i) per query at one cutoff (None: all), shape (q,): :meth:`precision_sum_at`."""
        if self.rounding == "trec_eval":
            return self.precision_sum_at([k])[:, 0]
        n = self.rel.shape[1]
        m = n if k is None else max(min(k, n), 0)
        b = self.rel[:, :m]
        c = self.cum[:, :m] if self._hits is not None else np.cumsum(b, axis=1, dtype=np.float64)
        return (np.where(b, c, 0.0) / _cached(_RANKS, m, _ranks)).sum(axis=1)  # type: ignore[no-any-return]

    def average_precision(self, R: np.ndarray, k: int | None = None, denominator: str = "R") -> np.ndarray:
        """AP@k = Σ_{i≤k} P(i)·rel(i) / D with D = R (``denominator="R"``, trec_eval) or
        min(k, R) (``"min_k_r"``); 0 when D = 0. ``k=None``: the whole list (``rel`` bool)."""
        total = self.precision_sum(k)
        return divide(total, np.minimum(R, k) if (k is not None and denominator == "min_k_r") else R)

    def reciprocal_rank(self, k: int | None = None) -> np.ndarray:
        """1 / (rank of the first relevant document), 0 if none is in the top k (``rel`` bool)."""
        if self._first is None:
            q, n = self.rel.shape
            first = np.argmax(self.rel, axis=1) + 1.0 if n else np.zeros(q)
            self._first = np.where(self.rel.any(axis=1), first, np.inf)  # inf: no relevant document
        rank = self._first
        return 1.0 / rank if k is None else np.where(rank <= k, 1.0 / rank, 0.0)
