"""Compiled kernels of the exact score buffer (the optional ``fast`` extra: numba).

Imported only by :func:`streammetrics._merge_count.kernels`, on the first read large enough to
use them, never by ``import streammetrics``. Each kernel returns exactly what its numpy
counterpart returns (the same integers, or the same IEEE operations in the same order), so the
two paths agree bit for bit; tests/test_merge_count.py checks it.

* :func:`ranks` / :func:`rank_left` / :func:`count2_units`: the ``searchsorted`` ranks of needles
  in an ascending run. Consecutive needles are searched from the previous answer (a short linear
  probe, then a galloping search), so sorted needles cost O(log gap) each instead of a full
  binary search with its branch mispredictions: 3x faster than ``np.searchsorted`` on 2M scores.
  Unsorted needles stay correct (a needle below its predecessor restarts from 0).
* :func:`ap_steps`: the per-threshold terms of the step average precision from the kept counts,
  in one pass instead of ten numpy passes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

__all__ = ["ap_steps", "count2_units", "rank_left", "ranks"]

_jit = numba.njit(cache=True, nogil=True, boundscheck=False)
#: Needles tried one by one past the previous answer before galloping.
_PROBE = 8


@_jit
def _lower(v: Any, t: Any, lo: int, n: int) -> int:  # pragma: no cover - compiled
    """First index >= ``lo`` whose value is >= ``t`` (every index below ``lo`` is < ``t``)."""
    k = 0
    while lo < n and v[lo] < t and k < _PROBE:
        lo += 1
        k += 1
    if lo >= n or v[lo] >= t:
        return lo
    step = _PROBE
    hi = lo + step
    while hi < n and v[hi] < t:
        lo = hi
        step *= 2
        hi = lo + step
    if hi > n:
        hi = n
    lo += 1  # v[lo] < t: the answer is in (lo, hi]
    while lo < hi:
        mid = (lo + hi) >> 1
        if v[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit
def _upper(v: Any, t: Any, lo: int, n: int) -> int:  # pragma: no cover - compiled
    """First index >= ``lo`` whose value is > ``t`` (every index below ``lo`` is <= ``t``)."""
    k = 0
    while lo < n and v[lo] <= t and k < _PROBE:
        lo += 1
        k += 1
    if lo >= n or v[lo] > t:
        return lo
    step = _PROBE
    hi = lo + step
    while hi < n and v[hi] <= t:
        lo = hi
        step *= 2
        hi = lo + step
    if hi > n:
        hi = n
    lo += 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if v[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit
def ranks(v: Any, x: Any) -> Any:  # pragma: no cover - compiled
    """``(searchsorted(v, x, "left"), searchsorted(v, x, "right"))`` as int64 arrays."""
    n, m = v.shape[0], x.shape[0]
    left = np.empty(m, np.int64)
    right = np.empty(m, np.int64)
    lo = 0
    for k in range(m):
        t = x[k]
        if k and t < x[k - 1]:
            lo = 0
        lo = _lower(v, t, lo, n)
        left[k] = lo
        right[k] = lo if lo == n or v[lo] != t else _upper(v, t, lo, n)
    return left, right


@_jit
def rank_left(v: Any, x: Any) -> Any:  # pragma: no cover - compiled
    """``searchsorted(v, x, "left")`` as an int64 array."""
    n, m = v.shape[0], x.shape[0]
    left = np.empty(m, np.int64)
    lo = 0
    for k in range(m):
        t = x[k]
        if k and t < x[k - 1]:
            lo = 0
        lo = _lower(v, t, lo, n)
        left[k] = lo
    return left


@_jit
def count2_units(v: Any, x: Any) -> int:  # pragma: no cover - compiled
    """``sum(searchsorted(v, x, "left") + searchsorted(v, x, "right"))`` (int64: exact while
    ``2 len(v) len(x) < 2**63``, the bound the pair counter keeps)."""
    n, m = v.shape[0], x.shape[0]
    s = 0
    lo = 0
    for k in range(m):
        t = x[k]
        if k and t < x[k - 1]:
            lo = 0
        lo = _lower(v, t, lo, n)
        s += lo
        s += lo if lo == n or v[lo] != t else _upper(v, t, lo, n)
    return s


@_jit
def ap_steps(pw: Any, nb: Any, total_pos: float) -> Any:  # pragma: no cover - compiled
    """``step[i] = (R_i - R_{i-1}) * TP_i / (TP_i + FP_i)`` with ``TP``, ``FP`` the running sums
    of ``pw``, ``nb`` (int64) and ``R = TP / total_pos``: the same IEEE operations, in the same
    order, as :meth:`streammetrics._positive_counts.PositiveCounts.average_precision`."""
    p = pw.shape[0]
    step = np.empty(p, np.float64)
    tp = 0
    fp = 0
    prev = 0.0
    for i in range(p):
        tp += pw[i]
        fp += nb[i]
        tps = np.float64(tp)
        precision = tps / np.float64(fp + tp)
        recall = tps / total_pos
        step[i] = (recall if i == 0 else recall - prev) * precision
        prev = recall
    return step
