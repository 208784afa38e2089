"""Compiled kernels of the exact score buffer (the optional ``fast`` extra: numba).

Imported only by :func:`streammetrics._scores.exact.merge_count.kernels`, on the first read large enough to
use them, never by ``import streammetrics``. Each kernel returns exactly what its numpy
counterpart returns (the same integers, or the same IEEE operations in the same order), so the
two paths agree bit for bit; tests/ranking/test_merge_count.py checks it.

* :func:`ranks` / :func:`rank_left` / :func:`count2_units`: the ``searchsorted`` ranks of needles
  in an ascending run, from :mod:`streammetrics._scores.exact.numba_search` (the galloping and
  level-wise walks), re-exported here: the one module the dispatch loads.
* :func:`radix_sort`: a batch's float64 scores sorted by their bits (numpy's own sort being a
  scalar introsort on this build), the same array as ``np.sort``'s.
* :func:`merge_back`: a small run merged into a large one in place (the large one grown by
  ``realloc``), with no temporary copy.
* :func:`bin_negatives`, :func:`add_upto`, :func:`merge_pending`, :func:`ap_sum`: the counts
  kept at the distinct positive scores brought up to date by merged walks (no search per new
  negative, no scatter; the pending thresholds merged in place from the back),
  and the step average precision read in one pass over the kept counts and the pending new
  thresholds, its terms summed as ``np.sum`` sums them (numpy's pairwise blocks and tree) and
  never written out (the numpy read takes ten passes and an array of terms).
* :func:`partition_below`, :func:`split_classes`: the engines' range path
  (:mod:`streammetrics._engines.range_counts`): scores reordered in place around a range edge,
  and a batch's scores written into one buffer by class, each in one branch-free pass.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .numba_search import count2_units, rank_left, ranks, upper_bound, walk

__all__ = ["add_upto", "ap_sum", "bin_negatives", "count2_units", "insert_pending", "merge_back",
           "merge_pending", "partition_below", "radix_sort", "rank_left", "ranks", "split_classes"]

_jit = numba.njit(cache=True, nogil=True, boundscheck=False)

@_jit
def bin_negatives(key: Any, co: Any, nkey: Any, nb: Any) -> None:  # pragma: no cover - compiled
    """Add each new negative to the bin of the first kept threshold at or above it:
    ``nb[i] += 1`` for ``i = searchsorted(key, nkey[q], "left")`` (none past the last). ``key``
    and ``nkey`` ascending (``key = -score``), ``co`` the coarse index of ``key`` (or empty).
    O(m log gap)."""
    p = key.shape[0]
    at = walk(key, co, nkey, 0)[0]
    for q in range(at.shape[0]):
        i = at[q]
        if i < p:
            nb[i] += 1


@_jit
def add_upto(sk: Any, nkey: Any, sh: Any) -> None:  # pragma: no cover - compiled
    """``sh[j] += #(nkey <= sk[j])`` for ascending ``sk`` and ``nkey``: one merged walk,
    O(S + m)."""
    q = 0
    m = nkey.shape[0]
    for j in range(sk.shape[0]):
        q = upper_bound(nkey, sk[j], q, m)
        sh[j] += q


@_jit
def insert_pending(sk: Any, sa: Any, sc: Any, sh: Any, at: Any, nk: Any, na: Any, nc: Any,
                   nh: Any) -> Any:  # pragma: no cover - compiled
    """The pending thresholds' four arrays with new entries inserted before the indices ``at``
    (non-decreasing; equal ones in their order): ``np.insert(sk, at, nk)`` and likewise
    ``sa``/``na``, ``sc``/``nc``, ``sh``/``nh``, the same arrays, in one pass and one call
    (four ``np.insert`` calls cost ~4x their copying in numpy's argument handling). O(S + f)."""
    s, f = sk.shape[0], nk.shape[0]
    k2 = np.empty(s + f, sk.dtype)
    a2 = np.empty(s + f, sa.dtype)
    c2 = np.empty(s + f, sc.dtype)
    h2 = np.empty(s + f, sh.dtype)
    i = 0
    for q in range(f + 1):
        end = at[q] if q < f else s
        for r in range(i, end):  # the old entries before the next new one
            k2[r + q] = sk[r]
            a2[r + q] = sa[r]
            c2[r + q] = sc[r]
            h2[r + q] = sh[r]
        i = max(i, end)
        if q < f:
            o = i + q
            k2[o] = nk[q]
            a2[o] = na[q]
            c2[o] = nc[q]
            h2[o] = nh[q]
    return k2, a2, c2, h2


@_jit
def merge_pending(key: Any, pw: Any, nb: Any, p: int, sk: Any, sa: Any, sc: Any,
                  sh: Any) -> None:  # pragma: no cover - compiled
    """Merge the pending thresholds into the kept counts in place, from the back.

    ``key``, ``pw``, ``nb`` hold the ``p`` kept thresholds (keys ascending, positives at each,
    negatives in each bin) in their first ``p`` slots and have room for the ``s`` pending ones
    (``sk`` keys, ``sa`` the kept threshold each comes before, non-decreasing, ``sc`` positives,
    ``sh`` negatives at or above each). After the call they hold the merged thresholds, the bins
    recomputed from the negatives at or above each (a kept threshold's: its old prefix sum of
    bins): the same integers as the numpy merge of
    :meth:`streammetrics._scores.positive_counts.PositiveCounts._merge_pending`. A slot is
    written only after its old entry was read. O(p + s) time, no temporary array.
    """
    s = sa.shape[0]
    above = 0  # negatives at or above kept threshold i (its prefix sum of bins)
    for i in range(p):
        above += nb[i]
    i = p - 1
    j = s - 1
    for k in range(p + s - 1, -1, -1):
        if j >= 0 and sa[j] > i:  # pending j sits after kept i
            cur = sh[j]
            key[k] = sk[j]
            pw[k] = sc[j]
            j -= 1
        else:
            cur = above
            above -= nb[i]  # now: at or above kept threshold i - 1 (0 above the first)
            key[k] = key[i]
            pw[k] = pw[i]
            i -= 1
        prev = sh[j] if j >= 0 and sa[j] > i else above  # the entry before slot k
        nb[k] = cur - prev


#: numpy's pairwise summation (``np.sum`` of a contiguous float64 array) sums blocks of at most
#: this many values with eight accumulators and adds the blocks up along a binary tree.
_PW_BLOCK = 128


@_jit
def _pw_sizes(n: int, out: Any, k: Any) -> None:  # pragma: no cover - compiled
    """The lengths of the blocks of numpy's pairwise sum of ``n`` values, in order, from
    ``out[k[0]]`` on (``k[0]`` advanced past them)."""
    if n <= _PW_BLOCK:
        out[k[0]] = n
        k[0] += 1
        return
    n2 = n // 2
    n2 -= n2 % 8
    _pw_sizes(n2, out, k)
    _pw_sizes(n - n2, out, k)


@_jit
def _pw_block(a: Any, n: int) -> float:  # pragma: no cover - compiled
    """numpy's sum of one block of ``n <= 128`` values (eight accumulators from 8 values on)."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    end = n - n % 8
    while i < end:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


@_jit
def _pw_tree(sums: Any, n: int, k: Any) -> float:  # pragma: no cover - compiled
    """The block sums ``sums`` (from ``sums[k[0]]`` on) of ``n`` values added up along numpy's
    pairwise tree."""
    if n <= _PW_BLOCK:
        v = sums[k[0]]
        k[0] += 1
        return v
    n2 = n // 2
    n2 -= n2 % 8
    left = _pw_tree(sums, n2, k)
    right = _pw_tree(sums, n - n2, k)
    return left + right


#: The AP read's kernels: numpy's error model (a float division by zero gives inf / nan, as
#: numpy's does, instead of raising), without which numba guards every division with a branch
#: and LLVM cannot vectorise a loop of them (a / b over 1M float64: 1.3 -> 0.4 ns scalar ->
#: AVX-512). The read never divides by zero (every kept threshold holds a positive).
_jit_np = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")


@_jit_np
def ap_sum(pw: Any, nb: Any, sa: Any, sc: Any, sh: Any, total_pos: float) -> float:  # pragma: no cover
    """The step average precision of the kept counts and the pending thresholds, in one merged
    pass that writes no array of terms.

    ``pw``, ``nb``: positives at each kept threshold and negatives in its bin (decreasing
    score). ``sa``, ``sc``, ``sh``: the pending thresholds (none equal to a kept one), in
    decreasing score: the kept threshold each comes before (non-decreasing), its positives and
    the negatives at or above it. The terms ``(R_o - R_{o-1}) TP_o / (TP_o + FP_o)`` over the
    merged thresholds are the numpy read's (the same IEEE operations in the same order,
    :meth:`streammetrics._scores.positive_counts.PositiveCounts.average_precision`), and their
    sum is ``np.sum``'s of them, bit for bit: the thresholds go in blocks of numpy's pairwise
    summation (at most 128), each block's TP and TP + FP formed by integer prefix sums, its
    terms by vectorised divisions (:func:`_ap_block`), summed as numpy sums a block, and the
    block sums are added along numpy's tree. O(P + S) time, O((P + S) / 64) memory (the array
    of terms it replaces held P + S floats).
    """
    p, s = pw.shape[0], sa.shape[0]
    n = p + s
    if n == 0:
        return 0.0
    sizes = np.zeros(n // 32 + 3, np.int64)  # (a 0 after the last block)
    k = np.zeros(1, np.int64)
    _pw_sizes(n, sizes, k)
    sums = np.empty(k[0], np.float64)
    tps = np.empty(_PW_BLOCK, np.float64)  # TP at each threshold of the block
    den = np.empty(_PW_BLOCK, np.float64)  # TP + FP
    rec = np.empty(_PW_BLOCK, np.float64)
    prec = np.empty(_PW_BLOCK, np.float64)
    term = np.empty(_PW_BLOCK, np.float64)
    i = 0
    j = 0
    tp = 0
    fp = 0
    prev = 0.0
    for b in range(k[0]):
        size = sizes[b]
        if j >= s or sa[j] >= i + size:  # no pending threshold in the block: one tight loop
            for q in range(size):
                tp += pw[i + q]
                fp += nb[i + q]
                tps[q] = np.float64(tp)
                den[q] = np.float64(fp + tp)
            i += size
        else:  # one test per threshold against the next pending one's place (rarely taken)
            nxt = sa[j]
            for q in range(size):
                if i == nxt:  # (every pending one before kept i comes when i reaches it)
                    tp += sc[j]
                    tps[q] = np.float64(tp)
                    den[q] = np.float64(sh[j] + tp)
                    j += 1
                    nxt = sa[j] if j < s else -1
                else:
                    tp += pw[i]
                    fp += nb[i]
                    tps[q] = np.float64(tp)
                    den[q] = np.float64(fp + tp)
                    i += 1
        prev = _ap_block(tps, den, size, total_pos, prev, b == 0, rec, prec, term)
        sums[b] = _pw_block(term, size)
    k[0] = 0
    return _pw_tree(sums, n, k)


@_jit_np
def _ap_block(tps: Any, den: Any, n: int, total_pos: float, prev: float, first: bool, rec: Any,
              prec: Any, term: Any) -> float:  # pragma: no cover - compiled
    """The AP terms of one block into ``term[:n]``: recall ``R = TP / total_pos`` and precision
    ``TP / (TP + FP)`` (``tps``, ``den``), ``(R - R_prev) precision`` (``R`` alone for the very
    first threshold, ``first``; ``prev``: the recall before the block). Returns the block's last
    recall. Each loop is elementwise (vectorised); the operations are :func:`_ap_term`'s."""
    for q in range(n):
        rec[q] = tps[q] / total_pos
    for q in range(n):
        prec[q] = tps[q] / den[q]
    term[0] = (rec[0] if first else rec[0] - prev) * prec[0]
    for q in range(1, n):
        term[q] = (rec[q] - rec[q - 1]) * prec[q]
    return rec[n - 1]


@_jit
def _ap_term(tp: int, fp: int, total_pos: float, prev: float, o: int) -> Any:  # pragma: no cover
    """The step AP term ``(R - R_prev) TP / (TP + FP)`` (``R`` alone at ``o = 0``) and ``R``."""
    tps = np.float64(tp)
    precision = tps / np.float64(fp + tp)
    recall = tps / total_pos
    return (recall if o == 0 else recall - prev) * precision, recall


_SIGN = np.uint64(1 << 63)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ABS = np.uint64((1 << 63) - 1)
_INF = np.uint64(0x7FF0000000000000)
_BYTE = np.uint64(255)


@_jit
def radix_sort(v: Any) -> bool:  # pragma: no cover - compiled
    """Sort the float64 array ``v`` in place by a least-significant-digit radix sort of its
    order-preserving 64-bit keys (sign bit set for x >= 0, every bit inverted for x < 0): one
    pass builds the eight byte histograms, then one stable scatter per byte (a byte that every
    key shares is skipped). The result is ``np.sort``'s, bit for bit, when ``v`` holds no NaN
    and no -0.0 (whose place among the +0.0 ``np.sort`` leaves to its partitioning): for those
    it returns False at once, ``v`` untouched. numpy's sort here is a scalar introsort (~27 ns
    a value at 1e4); this is ~11. O(n) time, n more keys of memory (a batch's scratch)."""
    n = v.shape[0]
    bits = v.view(np.uint64)
    keys = np.empty(n, np.uint64)
    hist = np.zeros((8, 256), np.int64)
    for i in range(n):
        b = bits[i]
        if b == _SIGN or (b & _ABS) > _INF:  # -0.0 or NaN (before anything is written)
            return False
        k = b ^ (_ALL if b >= _SIGN else _SIGN)
        keys[i] = k
        for d in range(8):
            hist[d, np.intp((k >> np.uint64(8 * d)) & _BYTE)] += 1
    if n == 0:
        return True
    src = keys
    dst = bits
    k0 = keys[0]
    for d in range(8):
        sh = np.uint64(8 * d)
        h = hist[d]
        if h[np.intp((k0 >> sh) & _BYTE)] == n:
            continue
        tot = 0
        for c in range(256):
            t = h[c]
            h[c] = tot
            tot += t
        for i in range(n):
            k = src[i]
            at = np.intp((k >> sh) & _BYTE)
            dst[h[at]] = k
            h[at] += 1
        src, dst = dst, src
    for i in range(n):  # back to the float bits (into v, whichever array holds the keys)
        k = src[i]
        bits[i] = k ^ (_SIGN if k >= _SIGN else _ALL)
    return True


@_jit
def merge_back(a: Any, na: int, b: Any) -> None:  # pragma: no cover - compiled
    """Merge ascending ``b`` into ascending ``a[:na]`` in place, ``a`` already holding
    ``na + len(b)`` slots: from the back, the larger first (on ties ``b``'s, so that ``a``'s
    equal values stay first: the result of a stable sort of ``a[:na]`` then ``b``). No
    temporary: a slot is written only once its value has been read."""
    i = na - 1
    j = b.shape[0] - 1
    k = na + j
    while j >= 0:
        if i >= 0 and a[i] > b[j]:
            a[k] = a[i]
            i -= 1
        else:
            a[k] = b[j]
            j -= 1
        k -= 1


@_jit
def partition_below(v: Any, edge: float) -> int:  # pragma: no cover - compiled
    """Reorder ``v`` in place so that its scores below ``edge`` come first; returns how many
    there are (``np.count_nonzero(v < edge)``). A branch-free Lomuto pass: each score is
    swapped to the end of the part below and that part grows by the comparison's result, so no
    branch depends on the data (random scores mispredict half of a branching pass's jumps).
    The order inside each part is unspecified, as ``ndarray.partition``'s. O(n), no memory."""
    k = 0
    for j in range(v.shape[0]):
        t = v[j]
        below = t < edge
        v[j] = v[k]
        v[k] = t
        k += below
    return k


@_jit
def split_classes(y: Any, s: Any, buf: Any, n_neg: int, n_pos: int) -> Any:  # pragma: no cover
    """Write scores ``s`` into ``buf`` by label: a zero label's at ``buf[n_neg]`` onwards, the
    others' from ``buf[len(buf) - n_pos - 1]`` backwards; returns the new ``(n_neg, n_pos)``.
    Branch-free: each score is written to both free ends and only its class's count moves (the
    other slot is overwritten later, or is the same slot when one is left). The caller keeps
    ``n_neg + n_pos + len(s) <= len(buf)``. O(n), no memory."""
    top = buf.shape[0] - 1
    for k in range(s.shape[0]):
        x = s[k]
        pos = y[k] != 0
        buf[n_neg] = x
        buf[top - n_pos] = x
        n_pos += pos
        n_neg += 1 - pos
    return n_neg, n_pos
