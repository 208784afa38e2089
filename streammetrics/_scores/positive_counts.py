"""Counts at the distinct positive scores of one column, kept current as batches arrive.

Average precision (and the PR curve's area) needs, at every distinct positive score t, the
positive and negative weight with score >= t. Recomputing them from the sorted runs at each
read merges every run first (O(n log n)); :class:`PositiveCounts` instead keeps, for an
unweighted column, the distinct positive scores ``u`` (ascending), the number of positives at
each (``pw``) and the number of negatives between each and the next (``nb``), and brings them up
to date with the samples folded in since the last read:

* the new negatives are ranked among ``u`` (O(m log P)) and each adds one to its bin (O(m));
* a new distinct positive score gets its negatives above by one search per stored negative run
  (O(log n) each), and all new ones are inserted by one linear pass (O(P)).

A read forms the cumulative counts by two suffix sums; the average precision is then one
division and one dot product: a few linear passes over the P distinct positive scores plus
O(m log n), no re-sort and no merge of the stored runs. Exact integer counts.

With the compiled kernels (states of ``min_size`` scores and more,
:mod:`streammetrics._scores.exact.merge_count`), :meth:`PositiveCounts.add` is one merged pass over the kept
and the new thresholds and the new negatives (O(P + m): no search of the new negatives, no
scatter), after one search per stored negative run of each new distinct positive score (O(d log
n)); the pass also forms the average precision terms, and the read after it returns the value
formed then. Both paths give the same counts and the same average precision bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._scores.exact.merge_count import kernels_at
from streammetrics._scores.exact.runs import Group, rank_left

from .thresholds import ThresholdCounts

#: A prefix sum over the bins costs about as much as this many searches of one needle in one
#: stored run (sequential adds against cache-missing probes).
_PREFIX_PER_SEARCH = 64
#: Thresholds per block of the numpy average-precision read (its temporaries' size), at least.
_READ_BLOCK = 1 << 14


def count_ge(group: Group, x: np.ndarray) -> np.ndarray:
    """Number of ``group``'s live samples (unweighted, tail flushed) >= each of ``x`` (int64).
    O(len(x) log n) per run."""
    out = np.zeros(x.shape[0], dtype=np.int64)
    for v, co in zip(group.runs, group.coarse, strict=True):
        # x holds stored scores (exact in the run's dtype): search in that dtype, no upcast
        out += v.shape[0] - rank_left(v, co, x.astype(v.dtype, copy=False))
    if group.tail:
        tail = np.asarray(list(group.tail), dtype=np.float64)
        out += tail.shape[0] - np.searchsorted(tail, x, "left")
    if group.dead is not None:
        out -= count_ge(group.dead, x)
    return out


def _distinct(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of ascending ``v`` (float64) and their multiplicities (int64)."""
    if v.shape[0] == 0:
        return v.astype(np.float64), np.zeros(0, dtype=np.int64)
    new = np.empty(v.shape[0], dtype=bool)
    new[0] = True
    np.not_equal(v[1:], v[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return v[starts].astype(np.float64), np.diff(starts, append=v.shape[0]).astype(np.int64)


def _grow(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` (1-D, referenced by no view: the counts are never handed out) resized to ``size``
    in place: numpy's ``resize`` reallocates, so a large array is remapped rather than copied.
    An array that does not own contiguous data is copied first."""
    if not (a.flags.owndata and a.flags.c_contiguous):
        a = a.copy()
    a.resize(size, refcheck=False)
    return a


class PositiveCounts:
    """Counts of one unweighted column at its distinct positive scores (module docstring).

    Built from :class:`ThresholdCounts` at the positive thresholds, updated by :meth:`add`,
    read by :meth:`counts` or :meth:`average_precision`. Kept in decreasing score order, per
    distinct positive score ``u[i]`` (stored negated, ``key = -u``, ascending for searches): the
    positives at it (``pw``) and the negatives in ``[u[i], u[i-1])`` (``nb``; the first bin is
    open above), both int64, so a new negative is one increment and a read forms the
    cumulative counts by two contiguous integer prefix sums.
    """

    __slots__ = ("key", "pw", "nb", "total_pos", "total_neg", "_ap")

    def __init__(self, counts: ThresholdCounts) -> None:
        self.key = np.negative(counts.thresholds, dtype=np.float64)
        self.pw = np.diff(np.asarray(counts.tps, dtype=np.int64), prepend=0)
        self.nb = np.diff(np.asarray(counts.fps, dtype=np.int64), prepend=0)
        self.total_pos = int(counts.total_pos)
        self.total_neg = int(counts.total_neg)
        self._ap: float | None = None  # the average precision formed by a compiled add

    @classmethod
    def from_sorted(cls, pos: np.ndarray, neg: np.ndarray) -> PositiveCounts:
        """The counts of unit-weight positives ``pos`` and negatives ``neg`` (each ascending, one
        dtype): the positives' distinct scores and multiplicities from one pass over ``pos``, the
        negatives at or above each from one search of those scores in ``neg`` (the same
        integers as :meth:`__init__` of :func:`streammetrics._scores.thresholds.counts_from_sorted` at the
        distinct positive scores). O(P + D log N) for D distinct positive scores."""
        self = cls.__new__(cls)
        self.total_pos, self.total_neg = int(pos.shape[0]), int(neg.shape[0])
        self._ap = None
        if not pos.shape[0]:
            self.key = np.zeros(0)
            self.pw, self.nb = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            return self
        # the temporaries are made and dropped in an order that keeps at most four arrays of
        # the D distinct scores alive at once (the three kept ones and one more)
        last = np.empty(pos.shape[0], dtype=bool)
        last[-1] = True
        np.not_equal(pos[1:], pos[:-1], out=last[:-1])
        ends = np.flatnonzero(last)  # the last of each run of equal scores, ascending
        del last
        d = ends.shape[0]
        self.pw = np.empty(d, dtype=np.int64)  # multiplicities, decreasing score
        pw_up = self.pw[::-1]
        pw_up[0] = ends[0] + 1
        np.subtract(ends[1:], ends[:-1], out=pw_up[1:])
        u = pos[ends]  # ascending distinct scores, in the runs' dtype
        del ends
        below = rank_left(neg, None, u)  # negatives < each: one search
        # negatives in [u[i], u[i-1]) (decreasing score; the first bin open above)
        self.nb = np.empty(d, dtype=np.int64)
        nb_up = self.nb[::-1]
        np.subtract(below[1:], below[:-1], out=nb_up[:-1])
        nb_up[-1] = neg.shape[0] - below[-1]
        del below
        self.key = np.negative(u[::-1], dtype=np.float64)
        return self

    def add(self, pos: np.ndarray, neg: np.ndarray, neg_group: Group) -> None:
        """Fold in new positives ``pos`` and negatives ``neg`` (both sorted ascending) that are
        already stored in the column's groups (``neg_group``: its negatives, now including
        ``neg``). O(m log n) for m new samples, plus one O(P) insertion pass when a new
        distinct positive score appears. With the compiled kernels: one merged pass over the kept
        and new thresholds (O(P + m) plus the searches of the new distinct positive scores in
        the stored runs), which also forms the average precision that the next read returns."""
        self._ap = None
        fast = kernels_at(self.total_pos + self.total_neg + pos.shape[0] + neg.shape[0])
        if fast is not None:
            self._fold_compiled(fast, pos, neg, neg_group)
            return
        key, nb = self.key, self.nb
        p = key.shape[0]
        if neg.shape[0] and p:
            # a new negative s falls in the bin of the highest threshold <= s (none: dropped)
            j = rank_left(key, None, np.negative(neg[::-1], dtype=np.float64))
            j = j[: np.searchsorted(j, p, "left")]
            if j.shape[0]:  # j is sorted: one increment per distinct bin, by its multiplicity
                new = np.empty(j.shape[0], dtype=bool)
                new[0] = True
                np.not_equal(j[1:], j[:-1], out=new[1:])
                starts = np.flatnonzero(new)
                nb[j[starts]] += np.diff(starts, append=j.shape[0])
        self.total_neg += neg.shape[0]
        if not pos.shape[0]:
            return
        d, k = _distinct(pos)
        d, k = d[::-1], k[::-1]  # decreasing score: ascending key
        kd = np.negative(d)
        at = rank_left(key, None, kd)
        held = at < p
        held[held] = key[at[held]] == kd[held]
        if held.any():
            np.add.at(self.pw, at[held], k[held])
        self.total_pos += pos.shape[0]
        fresh = ~held
        if not fresh.any():
            return
        df, kf, af = d[fresh], k[fresh], at[fresh]
        f = df.shape[0]
        ge = count_ge(neg_group, df[::-1])[::-1]  # negatives >= each new threshold
        # negatives >= the old threshold just above each new one's gap (0 above the top): one
        # search per gap in every stored run, or, when that costs more, one prefix sum of the
        # bins (already holding the new negatives)
        ge_above = np.zeros(f, dtype=np.int64)
        inner = af > 0
        if inner.any():
            ai = af[inner]
            if p <= _PREFIX_PER_SEARCH * ai.shape[0] * max(1, len(neg_group.runs)):
                ge_above[inner] = np.cumsum(nb)[ai - 1]
            else:
                ge_above[inner] = count_ge(neg_group, -key[ai - 1][::-1])[::-1]
        # the threshold above a new one: the previous new one in the same gap, else the old one
        same = np.zeros(f, dtype=bool)
        same[1:] = af[1:] == af[:-1]
        ge_prev = ge_above.copy()
        ge_prev[same] = ge[:-1][same[1:]]
        nb_f = ge - ge_prev
        # the old threshold below each gap keeps only the negatives under the gap's last new one
        last = np.ones(f, dtype=bool)
        last[:-1] = ~same[1:]
        below = last & (af < p)
        nb[af[below]] -= ge[below] - ge_above[below]
        # one scatter of old and new entries into their merged places (one O(P) pass)
        size = p + f
        slot = af + np.arange(f)
        old = np.ones(size, dtype=bool)
        old[slot] = False
        del key, nb  # one array at a time: the old one is freed before the next is built
        for name, fresh_vals in (("key", np.negative(df)), ("pw", kf), ("nb", nb_f)):
            cur = getattr(self, name)
            out = np.empty(size, dtype=cur.dtype)
            out[old] = cur
            out[slot] = fresh_vals
            del cur
            setattr(self, name, out)
            del out

    def _fold_compiled(self, fast: Any, pos: np.ndarray, neg: np.ndarray, neg_group: Group) -> None:
        """:meth:`add` by :func:`streammetrics._scores.exact.numba_kernels.fold_ap`: the new distinct positive
        scores' negatives above are counted in the stored runs, then one merged pass writes the
        new counts and the average precision terms."""
        d, k = _distinct(pos)
        ge = count_ge(neg_group, d)[::-1] if d.shape[0] else np.zeros(0, dtype=np.int64)
        self.total_pos += pos.shape[0]
        self.total_neg += neg.shape[0]
        nkey = np.negative(neg[::-1], dtype=np.float64)
        dkey = np.negative(d[::-1])
        p, shift = self.key.shape[0], d.shape[0]
        size = p + shift
        # in place: each array grows by the new thresholds (realloc) and its entries move up by
        # as many; the merged pass then reads entry i at i + shift and writes merged entry
        # o <= i + shift, so nothing is overwritten before it is read and no second copy of
        # the counts is ever alive (the peak memory of the read-every path stays that of the
        # numpy path, one array of P at a time: here the step terms)
        arrays = [_grow(a, size) for a in (self.key, self.pw, self.nb)]
        if shift:
            for a in arrays:
                fast.shift_up(a, p, shift)
        key2, pw2, nb2 = arrays
        step = np.empty(size, dtype=np.float64)
        o = fast.fold_ap(key2[shift:], pw2[shift:], nb2[shift:], nkey, dkey,
                         np.ascontiguousarray(k[::-1]), np.ascontiguousarray(ge),
                         float(self.total_pos), key2, pw2, nb2, step)
        if o < size:  # some new positives fell on kept thresholds
            key2, pw2, nb2 = (_grow(a, o) for a in arrays)
        self.key, self.pw, self.nb = key2, pw2, nb2
        self._ap = float(max(0.0, float(np.sum(step[:o])))) if self.total_pos > 0 else math.nan

    def counts(self) -> ThresholdCounts:
        """The counts at the distinct positive scores, decreasing. O(P)."""
        return ThresholdCounts(np.negative(self.key), np.cumsum(self.pw, dtype=np.float64),
                               np.cumsum(self.nb, dtype=np.float64), float(self.total_pos),
                               float(self.total_neg))

    def average_precision(self) -> float:
        """Step average precision, sum_i (R_i - R_{i-1}) TP_i / (TP_i + FP_i) over the distinct
        positive scores (nan without positives), with the same floating-point steps as
        :func:`streammetrics._scores.thresholds.average_precision` (so equal to it bit for bit). O(P): two
        integer prefix sums and a few contiguous passes, no BLAS call."""
        if self.total_pos <= 0:
            return math.nan
        if self._ap is not None:
            return self._ap
        fast = kernels_at(self.total_pos + self.total_neg)
        if fast is not None:
            e = np.zeros(0)
            step = np.empty(self.pw.shape[0], dtype=np.float64)
            fast.fold_ap(self.key, self.pw, self.nb, e, e, np.zeros(0, dtype=np.int64),
                         np.zeros(0, dtype=np.int64), float(self.total_pos), self.key, self.pw,
                         self.nb, step)
            return float(max(0.0, float(np.sum(step))))
        p = self.pw.shape[0]
        step = np.empty(p, dtype=np.float64)
        tp0 = fp0 = 0
        prev = 0.0
        block = max(_READ_BLOCK, -(-p // 16))  # at most 16 blocks: few numpy calls per read
        for lo in range(0, p, block):  # in blocks: the temporaries stay small
            hi = min(lo + block, p)
            tp = np.cumsum(self.pw[lo:hi])
            tp += tp0
            fp = np.cumsum(self.nb[lo:hi])
            fp += fp0
            tp0, fp0 = int(tp[-1]), int(fp[-1])
            fp += tp
            tps = tp.astype(np.float64)
            precision = np.divide(tps, fp)
            recall = np.divide(tps, float(self.total_pos), out=tps)
            out = step[lo:hi]
            out[0] = recall[0] - prev if lo else recall[0]
            np.subtract(recall[1:], recall[:-1], out=out[1:])
            prev = float(recall[-1])
            out *= precision
        return float(max(0.0, float(np.sum(step))))
