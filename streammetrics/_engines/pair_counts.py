"""Exact integer pair counts of sorted scores: the kernels every range path shares.

A range (or a worker's share) holds its negatives ``nv`` and positives ``pv``, each sorted;
its doubled Mann-Whitney count is ``sum_k dp_k (2 below_k + tied_k)`` over the distinct
positive scores (multiplicity ``dp_k``; ``below_k`` / ``tied_k`` the negatives below and tied
with it), an exact integer. :func:`distinct_scores` finds the distinct positive scores,
:func:`ranks` their ranks in the negatives (the compiled walk where installed and large
enough), :func:`doubled_pairs` adds them up. Used by :mod:`.range_counts`, :mod:`.minority`,
:mod:`.ranked` (unit-weight summaries) and :mod:`.keyed_ranges`.
"""

from __future__ import annotations

import numpy as np

from streammetrics._scores.exact import merge_count


def distinct_scores(pv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct values of the sorted scores ``pv``: where each starts in ``pv`` (int64),
    the values (ascending) and their multiplicities (``np.diff(starts, append=len(pv))``,
    without temporaries of ``pv``'s length beyond one bool mask). O(len(pv))."""
    n = int(pv.shape[0])
    new = np.empty(n, dtype=bool)
    if n:
        new[0] = True
        np.not_equal(pv[1:], pv[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    del new
    dp = np.empty_like(starts)
    if starts.shape[0]:
        np.subtract(starts[1:], starts[:-1], out=dp[:-1])
        dp[-1] = n - starts[-1]
    return starts, pv[starts], dp


def ranks(v: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(searchsorted(v, x, "left"), searchsorted(v, x, "right"))`` of ascending needles ``x``
    in ascending ``v``, as int64: the compiled walk where installed and large enough, else numpy."""
    mod = merge_count.kernels_for(v, x)
    if mod is not None:
        left, right = mod.ranks(v, merge_count.coarse_arg(v, None), np.ascontiguousarray(x))
        return left, right
    return (np.searchsorted(v, x, "left").astype(np.int64, copy=False),
            np.searchsorted(v, x, "right").astype(np.int64, copy=False))


def doubled_pairs(dp: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    """sum_k dp_k (left_k + right_k) exactly: each positive of a distinct score counts twice the
    negatives below it and once those tied with it (int64 while it cannot overflow, else Python
    ints). ``right`` is overwritten (with ``left + right``: no temporary)."""
    if dp.shape[0] == 0:
        return 0
    bound = int(dp.sum()) * (2 * int(right[-1]) + 1)
    both = np.add(left, right, out=right)
    if bound < 2**62:
        return int(np.dot(dp, both))
    return int(np.dot(dp.astype(object), both.astype(object)))
