"""A stable argsort at the speed of numpy's vectorised sort (the exact ranking state's kernel).

numpy sorts 64-bit numbers with a vectorised quicksort (x86-simd-sort / Highway), several times
faster than its stable argsort (a timsort over index arrays), which is what a weighted batch of
scores needs: the weights must follow their scores. :func:`stable_argsort` returns exactly
``np.argsort(values, kind="stable")`` of a float array: every value becomes an order-preserving
unsigned 64-bit key whose low ``ceil(log2 n)`` bits are replaced by the sample's index, one
vectorised ``sort`` orders the keys, and the (rare) groups of distinct values that shared their
truncated key are re-sorted exactly. O(n log n); 3-6x faster than numpy's stable argsort at
1e6-1e7 samples (see ``benchmarks/bench_functional.py``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

#: Below this many values numpy's own calls are as fast (their per-call overhead dominates).
_MIN_FAST = 4096
_TOP = np.uint64(1 << 63)


def _keys(values: np.ndarray) -> np.ndarray:
    """Unsigned 64-bit keys in the order of ``values`` (float, no NaN): equal values give equal
    keys (-0.0 counts as +0.0), a smaller value a smaller key. O(n)."""
    bits = np.add(values, 0.0, dtype=np.float64).view(np.int64)  # + 0.0 maps -0.0 to +0.0
    flip = bits >> 63  # 0 for x >= 0, -1 (all ones) for x < 0
    flip |= np.int64(-(1 << 63))
    bits ^= flip  # x >= 0: set the sign bit; x < 0: invert every bit
    return bits.view(np.uint64)


#: Elements per chunk of :func:`_packed_keys` and :func:`_gather` (their temporaries stay in
#: the cache; the Python loop costs ~1 us a chunk).
_CHUNK = 1 << 16


def _packed_keys(values: np.ndarray, b: int, pos: np.ndarray | None = None) -> np.ndarray:
    """The sort keys of :func:`stable_argsort` (``pos`` None) or :func:`sort_split`: each
    value's :func:`_keys` (shifted right by one bit and its top bit set for ``pos`` rows, when
    ``pos`` is given), its low ``b`` bits replaced by the row index. Built chunk by chunk into
    one new array: the temporaries stay in the cache instead of being n-element arrays, each
    a fresh mapping whose pages fault in (at 1e7 values that was 60 % of building the keys).
    O(n)."""
    n = values.shape[0]
    low = np.uint64((1 << b) - 1)
    out = np.empty(n, dtype=np.uint64)
    one = np.uint64(1)
    for i in range(0, n, _CHUNK):
        j = min(i + _CHUNK, n)
        k = out[i:j]
        np.copyto(k, _keys(values[i:j]))
        if pos is not None:
            k >>= one
        k &= ~low
        k |= np.arange(i, j, dtype=np.uint64)
        if pos is not None:
            _set_top_bit(k, pos[i:j])
    return out


def _gather(order: np.ndarray, low: np.uint64, values: np.ndarray,
            other: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(order, values[order], other[order])`` from the sorted packed keys ``order`` (the row
    index in their low bits, ``low`` the mask; masked in place): one pass of chunks reading the
    index of a chunk once for both gathers. O(n)."""
    n = order.shape[0]
    ordered = np.empty(n, dtype=values.dtype)
    carried = None if other is None else np.empty(n, dtype=other.dtype)
    for i in range(0, n, _CHUNK):
        j = min(i + _CHUNK, n)
        idx = order[i:j]
        idx &= low
        ix = idx.view(np.intp)
        values.take(ix, out=ordered[i:j], mode="clip")  # (mode "raise" would buffer ``out``)
        if other is not None and carried is not None:
            other.take(ix, out=carried[i:j], mode="clip")
    return order.view(np.intp), ordered, carried


def stable_argsort(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` of a 1-D float array, computed with one vectorised
    sort of 64-bit keys; the result is the same permutation (ties keep their input order).

    Each key is the value's order-preserving 64-bit pattern with its low ``b = ceil(log2 n)``
    bits replaced by the index: distinct values that differ only in those bits (relative
    difference below 2**(b - 52)) may come out in index order; they are found by one comparison
    pass and re-sorted with a stable ``lexsort`` of their groups. Other dtypes, arrays holding
    NaN and small arrays go to ``np.argsort``. O(n log n) time, two n-element temporaries.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values to order.

    Returns
    -------
    ndarray of intp, shape (n,)
        The stable sorting permutation.
    """
    return _order(values)[0]


def stable_sort_with(values: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values[order], other[order])`` for ``order = stable_argsort(values)`` (e.g. scores and
    their weights), gathering ``values`` once. O(n log n).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values to sort.
    other : ndarray of shape (n,)
        Carried along (its element i follows ``values[i]``).

    Returns
    -------
    tuple of ndarray
        The sorted values and ``other`` in the same order.
    """
    if values.ndim == 1 and _is_sorted(values):  # e.g. the groups of :func:`sort_split`
        return values, other
    order, ordered = _order(values)
    return ordered, other.take(order)


def sort_split(
    values: np.ndarray, pos: np.ndarray, weights: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """Split ``values`` and ``weights`` by the boolean ``pos`` and sort each group stably by
    value, with one vectorised sort: ``((values[~pos][o0], weights[~pos][o0]), (values[pos][o1],
    weights[pos][o1]))`` for ``o0`` / ``o1`` the :func:`stable_argsort` of each group, so the
    result is the very arrays :func:`stable_sort_with` gives for each group.

    Each key is the value's order-preserving 64-bit pattern shifted right by one bit, its top
    bit set for ``pos`` rows and its low ``ceil(log2 n)`` bits replaced by the row index: one
    ``sort`` orders the rows by (group, value, index) without a separate split and without an
    index sort per group. Distinct values sharing their truncated key are re-sorted exactly as
    in :func:`stable_argsort`, inside their group. None when the fast path does not apply
    (fewer than 4096 rows, non-float values, NaN): split and sort the groups instead.
    O(n log n) time; the two groups are views of two n-element arrays.

    Parameters
    ----------
    values : ndarray of float of shape (n,)
        The scores.
    pos : ndarray of bool of shape (n,)
        The group of each row (True: the second group).
    weights : ndarray of shape (n,)
        Carried along with the values.

    Returns
    -------
    tuple or None
        ``((values, weights) of the False rows, (values, weights) of the True rows)``, each
        ascending by value (ties in row order).
    """
    if pos.dtype != np.bool_ or pos.shape != values.shape or not _fast(values):
        return None
    n = values.shape[0]
    b = (n - 1).bit_length()
    keys = _packed_keys(values, b, pos)
    keys.sort()
    _, ordered, carried = _gather(keys, np.uint64((1 << b) - 1), values, weights)
    assert carried is not None
    del keys
    n0 = n - int(np.count_nonzero(pos))
    for lo, hi in ((0, n0), (n0, n)):
        seg = ordered[lo:hi]
        bad = np.flatnonzero(seg[1:] < seg[:-1])
        if bad.shape[0]:  # (the weights follow their values: permuted alike)
            _resort_groups(carried[lo:hi], seg, b + 1, bad)
    return (ordered[:n0], carried[:n0]), (ordered[n0:], carried[n0:])


def _is_sorted(values: np.ndarray) -> bool:
    """Whether ``values`` is non-decreasing (then its stable sorting permutation is the
    identity); a short prefix is checked first, so unsorted input costs O(1). O(n)."""
    head = values[:64]
    if not bool(np.all(head[1:] >= head[:-1])):
        return False
    return bool(np.all(values[1:] >= values[:-1]))


def _fast(values: np.ndarray) -> bool:
    """Whether the packed-key sort applies: a 1-D float array of 4096 to 2**40 values, no NaN."""
    n = values.shape[0]
    return (values.ndim == 1 and _MIN_FAST <= n < 1 << 40 and values.dtype.kind == "f"
            and values.dtype.itemsize <= 8 and not np.isnan(values.min()))


def _set_top_bit(keys: np.ndarray, rows: np.ndarray) -> None:
    """``keys[rows] |= 2**63`` in place, through the keys' most significant bytes (a third of the
    cost of a masked ``bitwise_or``). O(n)."""
    if sys.byteorder == "little" and keys.flags.c_contiguous:
        top = keys.view(np.uint8)[7::8]
        np.bitwise_or(top, np.left_shift(rows.view(np.uint8), np.uint8(7)), out=top)
    else:
        np.bitwise_or(keys, _TOP, out=keys, where=rows)


def _order(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(stable sorting permutation, values in that order): see :func:`stable_argsort`."""
    n = values.shape[0]
    if not _fast(values):
        order = np.argsort(values, kind="stable")
        return order, values[order]
    b = (n - 1).bit_length()
    keys = _packed_keys(values, b)
    keys.sort()
    order, ordered, _ = _gather(keys, np.uint64((1 << b) - 1), values, None)
    bad = np.flatnonzero(ordered[1:] < ordered[:-1])
    if bad.shape[0]:
        _resort_groups(order, ordered, b, bad)
    return order, ordered


#: Widening steps :func:`_resort_groups` takes before it scans the whole array instead.
_MAX_STEPS = 32


def _resort_groups(order: np.ndarray, ordered: np.ndarray, b: int, bad: np.ndarray) -> None:
    """Re-sort, in place (``order`` -- or any array permuted alike -- and ``ordered``), the
    groups of equal truncated key (``_keys >> b``) that hold an out-of-order pair ``bad[i],
    bad[i] + 1``: a stable sort by value inside each group (its elements are in index order,
    so ties keep it). The groups are found by widening each pair while its neighbours share
    the key (a few steps: such groups are small), or by one pass over the array if that takes
    long. O(k log k) for the k elements re-sorted (plus O(n) in the rare fallback)."""
    n, shift = ordered.shape[0], np.uint64(b)

    def high(idx: np.ndarray) -> np.ndarray:
        return _keys(ordered[idx]) >> shift

    lo, hi = bad.copy(), bad + 2  # each group: [lo, hi)
    for _ in range(_MAX_STEPS):
        grow_lo = np.flatnonzero(lo > 0)
        grow_lo = grow_lo[high(lo[grow_lo] - 1) == high(lo[grow_lo])]
        grow_hi = np.flatnonzero(hi < n)
        grow_hi = grow_hi[high(hi[grow_hi]) == high(hi[grow_hi] - 1)]
        if not grow_lo.shape[0] and not grow_hi.shape[0]:
            break
        lo[grow_lo] -= 1
        hi[grow_hi] += 1
    else:  # a large group: find every group boundary in one pass
        keys = _keys(ordered) >> shift
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        ends = np.append(starts[1:], n)
        groups = np.searchsorted(starts, bad, "right") - 1
        lo, hi = starts[groups], ends[groups]
    lo, first = np.unique(lo, return_index=True)
    hi = hi[first]
    sizes = hi - lo
    pos = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    gid = np.repeat(np.arange(lo.shape[0]), sizes)
    perm = np.lexsort((ordered[pos], gid))
    order[pos] = order[pos][perm]
    ordered[pos] = ordered[pos][perm]


def runs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values, lengths)`` of the runs of equal consecutive elements of ``x`` (for sorted
    ``x``: its distinct values and their multiplicities), or None when fewer than half of the
    elements repeat their predecessor (then the runs do not save enough to pay for themselves).
    O(n).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Any 1-D array (sorted arrays have the longest runs).

    Returns
    -------
    tuple of ndarray or None
        The first element of each run and the run lengths (int64), or None.
    """
    starts = run_starts(x)
    if starts is None:
        return None
    return x[starts], np.diff(starts, append=x.shape[0])


def run_starts(x: np.ndarray) -> np.ndarray | None:
    """Start of every run of equal consecutive elements of ``x``, or None when fewer than half
    of the elements repeat their predecessor (see :func:`runs`). O(n)."""
    n = x.shape[0]
    if n < _MIN_FAST:
        return None
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(x[1:], x[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return None if 2 * starts.shape[0] > n else starts


def suffix_weight(w: np.ndarray | None, above: np.ndarray) -> np.ndarray:
    """Weight of the top ``above[i]`` elements of an ascending run with weights ``w`` (None:
    unit weights), summed from the top -- the order of scikit-learn's cumulative sums. O(n).

    Parameters
    ----------
    w : ndarray of shape (n,) or None
        The weights of the run, in ascending score order.
    above : ndarray of int
        How many elements, counted from the top of the run.

    Returns
    -------
    ndarray of float64
    """
    if w is None:
        return above.astype(np.float64)
    return suffix_sums(w)[above]


def suffix_sums(w: np.ndarray) -> np.ndarray:
    """``top[i]``: the weight of the last i elements of ``w``, summed from the end (``top[0]`` =
    0, ``top[n]`` the total). O(n).

    Parameters
    ----------
    w : ndarray of shape (n,)
        Weights in ascending score order.

    Returns
    -------
    ndarray of float64, shape (n + 1,)
    """
    top = np.empty(w.shape[0] + 1)
    top[0] = 0.0
    np.cumsum(w[::-1], out=top[1:])
    return top


def threshold_counts(
    pos: np.ndarray, pos_w: np.ndarray | None, neg: np.ndarray, neg_w: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """``(thresholds, tps, fps, P, N)`` at every distinct score of two ascending runs: the
    thresholds in decreasing order, the weight of positives / negatives scoring >= each, and
    the totals. One linear merge of the two runs (a stable argsort, which merges two sorted
    runs in one pass; tied scores enter it once, with their multiplicity) gives both the
    distinct scores and, by counting each run's elements up to every group end, the counts --
    no binary search. O(n).

    Parameters
    ----------
    pos, neg : ndarray
        Ascending scores of the positives and of the negatives.
    pos_w, neg_w : ndarray or None
        Their weights (None: unit weights).

    Returns
    -------
    tuple
        thresholds (float64, decreasing), tps, fps (float64), P, N.
    """
    n_pos, n_neg = pos.shape[0], neg.shape[0]
    # tied scores (runs in a sorted array) enter the merge once, with their multiplicity
    ps, ns = run_starts(pos), run_starts(neg)
    pv, pc = (pos, None) if ps is None else (pos[ps], np.diff(ps, append=n_pos))
    nv, nc = (neg, None) if ns is None else (neg[ns], np.diff(ns, append=n_neg))
    both = np.concatenate([pv, nv]).astype(np.float64, copy=False)
    order = np.argsort(both, kind="stable")
    merged = both[order]
    if merged.shape[0]:
        last = np.empty(merged.shape[0], dtype=bool)
        np.not_equal(merged[1:], merged[:-1], out=last[:-1])
        last[-1] = True
        ends = np.flatnonzero(last)
    else:
        ends = np.zeros(0, dtype=np.intp)
    from_pos = order < pv.shape[0]
    if pc is None and nc is None:
        pos_upto = np.cumsum(from_pos)[ends]  # positives <= each distinct score (ascending)
        all_upto = ends + 1
    else:
        mult = np.concatenate([np.ones(pv.shape[0], dtype=np.intp) if pc is None else pc,
                               np.ones(nv.shape[0], dtype=np.intp) if nc is None else nc])[order]
        all_upto = np.cumsum(mult)[ends]
        mult[~from_pos] = 0
        pos_upto = np.cumsum(mult)[ends]
    neg_upto = all_upto - pos_upto
    # scores >= the k-th distinct score: all but those <= the (k-1)-th
    pos_above = n_pos - np.concatenate([[0], pos_upto])[:-1]
    neg_above = n_neg - np.concatenate([[0], neg_upto])[:-1]
    out: list[Any] = [merged[ends][::-1]]
    for w, above, n in ((pos_w, pos_above, n_pos), (neg_w, neg_above, n_neg)):
        if w is None:
            out.append(above[::-1].astype(np.float64))
        else:
            top = suffix_sums(w)  # one cumulative sum gives the counts and the total
            out.append(top[above[::-1]])
            n = top[n]
        out.append(float(n))
    thresholds, tps, total_pos, fps, total_neg = out
    return thresholds, tps, fps, total_pos, total_neg
