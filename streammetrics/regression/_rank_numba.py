"""Compiled inversion counts of the Kendall kernel (the optional ``fast`` extra: numba).

Imported only by :func:`streammetrics.regression._ranks.inversions` on a read of at least
4096 rows (then from ``merge_count.MIN_SIZES["inversions"]``) when numba is installed, never by
``import streammetrics``. Each kernel
is a bottom-up merge sort of the ranks that counts, for every element taken from a right half,
the (weight of the) elements still waiting in the left half: ``sum_{i<j} w_i w_j [r_i > r_j]``.
The unweighted count is an exact int64 (at most n**2 / 2); the weighted one adds the same
products in merge order (not numpy's order: the two paths agree to rounding, not bit for bit).
O(n log n) time, two n-element buffers.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True, boundscheck=False)


@_jit
def inversions_unit(r: Any) -> int:  # pragma: no cover - compiled
    """Pairs i < j with r[i] > r[j] (int64 ranks)."""
    n = r.shape[0]
    a = r.copy()
    b = np.empty_like(a)
    total = 0
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if a[i] <= a[j]:
                    b[k] = a[i]
                    i += 1
                else:
                    b[k] = a[j]
                    total += mid - i
                    j += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
            lo = hi
        a, b = b, a
        width *= 2
    return total


@_jit
def inversions_weighted(r: Any, w: Any) -> float:  # pragma: no cover - compiled
    """``sum_{i<j} w_i w_j [r_i > r_j]`` (int64 ranks, float64 weights)."""
    n = r.shape[0]
    a = r.copy()
    aw = w.copy()
    b = np.empty_like(a)
    bw = np.empty_like(aw)
    total = 0.0
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            left = 0.0
            for t in range(lo, mid):
                left += aw[t]
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if a[i] <= a[j]:
                    b[k] = a[i]
                    bw[k] = aw[i]
                    left -= aw[i]
                    i += 1
                else:
                    b[k] = a[j]
                    bw[k] = aw[j]
                    if i < mid:
                        total += aw[j] * left
                    j += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                bw[k] = aw[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                bw[k] = aw[j]
                j += 1
                k += 1
            lo = hi
        a, b = b, a
        aw, bw = bw, aw
        width *= 2
    return total


@_jit
def inversions_fenwick(r: Any, m: int) -> int:  # pragma: no cover - compiled
    """As :func:`inversions_unit` for ranks in [0, m), with a Fenwick tree of m counts: O(n log m)
    without branch mispredictions; fast while the tree fits in cache (few distinct ranks)."""
    tree = np.zeros(m + 1, dtype=np.int64)
    total = 0
    for i in range(r.shape[0]):
        k = r[i] + 1
        s = 0  # elements so far with rank <= r[i]
        j = k
        while j > 0:
            s += tree[j]
            j -= j & (-j)
        total += i - s
        j = k
        while j <= m:
            tree[j] += 1
            j += j & (-j)
    return total


@_jit
def inversions_fenwick_weighted(r: Any, w: Any, m: int) -> float:  # pragma: no cover - compiled
    """As :func:`inversions_weighted` with a Fenwick tree of m weight sums."""
    tree = np.zeros(m + 1, dtype=np.float64)
    total = 0.0
    seen = 0.0
    for i in range(r.shape[0]):
        k = r[i] + 1
        s = 0.0
        j = k
        while j > 0:
            s += tree[j]
            j -= j & (-j)
        total += w[i] * (seen - s)
        seen += w[i]
        j = k
        while j <= m:
            tree[j] += w[i]
            j += j & (-j)
    return total
