"""Kernels of the whole-set regression metrics: weighted percentiles, mid-ranks and Kendall's
pair counts ("Needs the whole set" and "Rank correlations" in docs/definitions/regression.md).

* :func:`weighted_percentile`: scikit-learn's ``_weighted_percentile`` (``inverted_cdf``, or
  ``averaged_inverted_cdf`` with ``average=True``) of sorted values with positive weights. O(log n)
  after the O(n) cumulative sum.
* :func:`mid_ranks`: the (weighted) average rank of every value, ``W_< + W_= / 2`` (plus 1/2
  unweighted: scipy's ``rankdata(method="average")``). O(n) on sorted values.
* :func:`kendall_terms`: ``(C - D, pairs not tied in x, pairs not tied in y)`` of weighted
  pairs (pair weight ``w_i w_j``), from one ordering by (x, y) and the weighted inversion count
  of the y ranks in that order, O(n log n): compiled (numba, the ``fast`` extra) from
  ``merge_count.MIN_SIZES["inversions"]`` rows (numba loaded from 4096) -- a Fenwick tree
  over the ranks up to :data:`FENWICK_MAX` distinct values, a bottom-up merge sort above --
  else numpy, one pass per bit of the ranks. Unweighted, every count is an exact integer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._scores.exact.merge_count import kernels_at
from streammetrics._scores.exact.sort_kernels import stable_argsort, stable_sort_with

#: Up to this many distinct ranks the compiled count uses a Fenwick tree (it stays in cache),
#: above it a bottom-up merge sort.
FENWICK_MAX = 1 << 18
_EPS = float(np.finfo(np.float64).eps)


def weighted_percentile(v: np.ndarray, w: np.ndarray | None, rank: float, average: bool) -> float:
    """scikit-learn's weighted percentile of ascending ``v`` with positive weights ``w`` (None:
    1 each) at ``rank`` percent: the first value whose cumulative weight reaches
    ``rank / 100 * W`` (0: the first of positive weight); with ``average``, when that cumulative
    weight exceeds the target by at most the float64 epsilon, the mean of that value and the
    next. nan for no values. O(n) (the cumulative sum) plus O(log n)."""
    n = v.shape[0]
    if n == 0:
        return math.nan
    cw = np.arange(1.0, n + 1.0) if w is None else np.cumsum(w)
    t = rank / 100 * float(cw[-1])
    if t == 0:
        t = float(np.nextafter(t, t + 1))
    i = min(int(np.searchsorted(cw, t, "left")), n - 1)
    if average and not float(cw[i]) - t > _EPS:
        return float((v[i] + v[min(i + 1, n - 1)]) / 2)
    return float(v[i])


def lex_order(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, order_y)``: the rows sorted by x then y (ties of both in input order), and the
    stable order of y alone. Two stable argsorts (radix style: y first, then x). O(n log n)."""
    order_y = stable_argsort(y)
    order = order_y[stable_argsort(x[order_y])]
    return order, order_y


def lex_carry(x: np.ndarray, z: np.ndarray, payload: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unweighted rows sorted by (x, z) without an index permutation: ``(zs, xs, carried)`` with
    ``zs`` the sorted z, ``xs`` the sorted x and ``carried`` = ``payload(zs)`` (one value per
    row, e.g. z's ranks) in the (x, z) order. Two stable sorts that carry values along (radix
    style: z first, then x). O(n log n)."""
    zs, xo = stable_sort_with(z, x)
    xs, carried = stable_sort_with(np.ascontiguousarray(xo), payload(zs))
    return zs, xs, carried


def dense_ranks(sorted_values: np.ndarray) -> np.ndarray:
    """0, 1, ... per distinct value of an ascending array (int64). O(n)."""
    out = np.zeros(sorted_values.shape[0], dtype=np.int64)
    if sorted_values.shape[0] > 1:
        np.cumsum(sorted_values[1:] != sorted_values[:-1], out=out[1:])
    return out


def _group_sums(sorted_values: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Weight (or count) of each run of equal values of an ascending array."""
    n = sorted_values.shape[0]
    if n == 0:
        return np.zeros(0)
    starts = np.flatnonzero(np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]]))
    if w is None:
        return np.diff(np.append(starts, n))
    return np.add.reduceat(w, starts)


def mid_ranks(sorted_values: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """The average rank of each element of an ascending array: ``W_< + (W_= + 1) / 2``
    unweighted (scipy's average ranks, exact halves), ``W_< + W_= / 2`` weighted. O(n)."""
    n = sorted_values.shape[0]
    if n == 0:
        return np.zeros(0)
    new = np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]])
    starts = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    if w is None:
        sizes = np.diff(np.append(starts, n))
        return (starts + (sizes + 1) / 2.0)[gid]
    gw = np.add.reduceat(w, starts)
    below = np.cumsum(gw) - gw
    return (below + gw / 2.0)[gid]


def _inversions_numpy(r: np.ndarray, w: np.ndarray | None) -> int | float:
    """``sum_{i<j} w_i w_j [r_i > r_j]`` for int ranks ``r`` in [0, m): one level per bit of
    the ranks, high bit first; at each level the array is stably ordered by the higher bits
    and a 1-bit element before a 0-bit element of the same group is an inversion. O(n log m)."""
    n = r.shape[0]
    if n < 2:
        return 0
    top = int(r.max())
    total: int | float = 0
    cur = r.copy()
    ww = None if w is None else w.copy()
    for b in range(max(top.bit_length() - 1, 0), -1, -1):
        hi = cur >> (b + 1)
        bit = (cur >> b) & 1
        new = np.empty(n, dtype=bool)
        new[0] = True
        np.not_equal(hi[1:], hi[:-1], out=new[1:])
        start = np.maximum.accumulate(np.where(new, np.arange(n), 0))
        ones = bit if ww is None else bit * ww
        c1 = np.cumsum(ones)
        before = c1 - (c1 - ones)[start]  # ones of this group up to and including j
        zero = bit == 0
        if ww is None:
            total += int(before[zero].sum())
        else:
            total += float(np.dot(ww[zero], before[zero]))
        # stable partition of each group: its 0-bits, then its 1-bits
        zi = zero.astype(np.int64)
        cz = np.cumsum(zi)
        zb = cz - (cz - zi)[start]  # zeros of this group up to and including j
        ends = np.append(np.flatnonzero(new)[1:], n) - 1
        zeros_in_group = zb[ends][np.cumsum(new) - 1]
        ones_incl = np.arange(n) - start + 1 - zb
        dest = np.where(zero, start + zb - 1, start + zeros_in_group + ones_incl - 1)
        nxt = np.empty_like(cur)
        nxt[dest] = cur
        cur = nxt
        if ww is not None:
            nw = np.empty_like(ww)
            nw[dest] = ww
            ww = nw
    return total


def inversions(r: np.ndarray, w: np.ndarray | None) -> int | float:
    """``sum_{i<j} w_i w_j [r_i > r_j]`` (an exact int unweighted) for int64 ranks ``r`` >= 0:
    a compiled bottom-up merge sort from ``merge_count.MIN_SIZES["inversions"]`` rows (numba
    loaded from 4096) when numba is installed,
    else numpy (:func:`_inversions_numpy`). O(n log n)."""
    mod = kernels_at(r.shape[0], "inversions")
    if mod is not None:
        from . import _rank_numba  # imports numba (installed: kernels() found it)

        rc = np.ascontiguousarray(r)
        m = int(rc.max()) + 1
        if m <= FENWICK_MAX:  # the tree stays in cache: no branch mispredictions
            if w is None:
                return int(_rank_numba.inversions_fenwick(rc, m))
            return float(_rank_numba.inversions_fenwick_weighted(rc, np.ascontiguousarray(w), m))
        if w is None:
            return int(_rank_numba.inversions_unit(rc))
        return float(_rank_numba.inversions_weighted(rc, np.ascontiguousarray(w)))
    return _inversions_numpy(r, w)


def _square_sum(g: np.ndarray) -> Any:
    if g.dtype.kind in "iu":
        return int(np.dot(g.astype(np.int64), g.astype(np.int64)))
    return float(np.dot(g, g))


def kendall_terms(x: np.ndarray, y: np.ndarray, w: np.ndarray | None
                  ) -> tuple[int | float, int | float, int | float]:
    """``(C - D, Dx, Dy)`` over pairs of rows with pair weight ``w_i w_j``: C - D the weighted
    concordant minus discordant pairs, Dx (Dy) the weight of pairs not tied in x (y), each
    ``(W**2 - sum_g W_g**2) / 2`` over the groups of equal values. Kendall's tau-b is
    ``(C - D) / sqrt(Dx) / sqrt(Dy)``. Exact ints unweighted. O(n log n)."""
    n = x.shape[0]
    if n < 2:
        return 0, 0, 0
    if w is None:  # two carrying sorts, no index permutation (the fast path)
        ysorted, xs, r = lex_carry(x, y, dense_ranks)
        gx, gy = _group_sums(xs, None), _group_sums(ysorted, None)
        # pairs tied in both x and y: runs of equal (x, y rank) in the lexicographic order
        same = np.empty(n, dtype=bool)
        same[0] = True
        np.not_equal(xs[1:], xs[:-1], out=same[1:])
        same[1:] |= r[1:] != r[:-1]
        gxy = np.diff(np.append(np.flatnonzero(same), n))
        dx2, dy2 = n * n - _square_sum(gx), n * n - _square_sum(gy)
        y_only2 = _square_sum(gy) - _square_sum(gxy)
        return (dx2 - y_only2) // 2 - 2 * int(inversions(r, None)), dx2 // 2, dy2 // 2
    order, order_y = lex_order(x, y)
    xs, ys = x[order], y[order]
    ws = w[order]
    ysorted = y[order_y]
    yrank = np.empty(n, dtype=np.int64)
    yrank[order_y] = dense_ranks(ysorted)
    r = yrank[order]
    gx = _group_sums(xs, ws)
    gy = _group_sums(ysorted, w[order_y])
    same = np.concatenate([[True], (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])])
    gxy = np.add.reduceat(ws, np.flatnonzero(same))
    big = float(ws.sum())
    # one group of equal values: no pair untied, exactly (W**2 - W_g**2 of two sums of the same
    # weights in another order would leave a rounding residue instead of 0)
    dx2 = 0.0 if len(gx) == 1 else big * big - _square_sum(gx)
    dy2 = 0.0 if len(gy) == 1 else big * big - _square_sum(gy)
    y_only2 = _square_sum(gy) - _square_sum(gxy)
    return (dx2 - y_only2) / 2 - 2 * float(inversions(r, ws)), dx2 / 2, dy2 / 2
