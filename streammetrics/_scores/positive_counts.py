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
:mod:`streammetrics._scores.exact.merge_count`), nothing of size P is rewritten per batch:
:meth:`PositiveCounts.add` adds the new negatives to their bins by one merged walk (O(m log
gap)) and keeps the new distinct positive scores aside as *pending* thresholds (each with the
kept threshold it comes before and the negatives at or above it, found by one search per stored
negative run); the read is one pass over the kept counts and the pending thresholds that sums
the average precision terms as ``np.sum`` would and writes no array (O(P + S), no merge, no
shift). The pending thresholds are
merged into the kept counts when they outgrow 1/32 of them (O(P), amortised O(m) per batch), in
place: the kept arrays grow where they are and the merge writes them from the back, so no second
copy of them is made and none is left freed but resident on the heap.
Both paths give the same counts and the same average precision bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._scores.exact.merge_count import coarse_arg, kernels, kernels_at
from streammetrics._scores.exact.runs import Group, coarse_index, rank_left
from streammetrics._scores.exact.spill import grown

from .thresholds import ThresholdCounts

#: A prefix sum over the bins costs about as much as this many searches of one needle in one
#: stored run (sequential adds against cache-missing probes).
_PREFIX_PER_SEARCH = 64
#: Thresholds per block of the numpy average-precision read (its temporaries' size), at least.
_READ_BLOCK = 1 << 14
#: The compiled path merges its pending thresholds into the kept ones past 1/_PENDING_SHARE of
#: them (and at least _PENDING_MIN): the read then pays at most that much more, the merge
#: (O(P)) runs once per P/_PENDING_SHARE new distinct positive scores. Each batch's new ones
#: are inserted into the pending arrays (``numba_kernels.insert_pending``: O(S) each), so
#: fewer pending ones cost less per batch than the more frequent merges add: AP read after
#: each of 1000 batches of 10k at 1e7 (compiled, CPU, alternated in one process, 2026-12-06,
#: load 14-21): 1/8 4.62 s, 1/32 4.29 s (median of 3); 1/8 4.70, 1/32 4.50, 1/64 4.47 s
#: (median of 2); the same value.
_PENDING_SHARE = 32
_PENDING_MIN = 1 << 12
_NO_INT = np.zeros(0, dtype=np.int64)
#: The kept per-threshold counts (``pw``, ``nb``) are int32 while the column holds at most this
#: many samples (every kept count, and every prefix sum formed in place, is at most the column's
#: total), int64 past it: half the memory traffic of the read, which is one pass over them (a
#: compiled read of 1M thresholds: 3.9 -> 2.3 ns per threshold), and 8 bytes less per distinct
#: positive score kept.
_NARROW_MAX = 2**31 - 1


def _count_dtype(total: int) -> type[np.signedinteger[Any]]:
    """The dtype of the kept counts of a column of ``total`` samples."""
    return np.int32 if total <= _NARROW_MAX else np.int64


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


class PositiveCounts:
    """Counts of one unweighted column at its distinct positive scores (module docstring).

    Built from :class:`ThresholdCounts` at the positive thresholds, updated by :meth:`add`,
    read by :meth:`counts` or :meth:`average_precision`. Kept in decreasing score order, per
    distinct positive score ``u[i]`` (stored negated, ``key = -u``, ascending for searches): the
    positives at it (``pw``) and the negatives in ``[u[i], u[i-1])`` (``nb``; the first bin is
    open above), int32 (int64 past 2**31 - 1 samples: :data:`_NARROW_MAX`), so a new negative
    is one increment and a read forms the cumulative counts by two contiguous integer prefix
    sums. The compiled path also keeps
    *pending* thresholds beside them (``sk``, ``sa``, ``sc``, ``sh``: :meth:`_no_pending`), merged
    in by :meth:`counts`, by the numpy path and when they outgrow 1/32 of the kept ones.
    """

    __slots__ = ("key", "pw", "nb", "total_pos", "total_neg", "kco", "sk", "sa", "sc", "sh")

    def __init__(self, counts: ThresholdCounts) -> None:
        self.key = np.negative(counts.thresholds, dtype=np.float64)
        self.total_pos = int(counts.total_pos)
        self.total_neg = int(counts.total_neg)
        dt = _count_dtype(self.total_pos + self.total_neg)
        self.pw = np.diff(np.asarray(counts.tps, dtype=np.int64), prepend=0).astype(dt)
        self.nb = np.diff(np.asarray(counts.fps, dtype=np.int64), prepend=0).astype(dt)
        self._no_pending()

    def _no_pending(self) -> None:
        """No pending thresholds. Pending (compiled path, see the module docstring), in
        decreasing score: ``sk`` their keys (none equal to a kept key), ``sa`` the index of the
        kept threshold each comes before, ``sc`` their positives and ``sh`` the negatives at or
        above each (kept current as negatives arrive)."""
        self.sk = np.zeros(0)
        self.sa, self.sc, self.sh = _NO_INT, _NO_INT, _NO_INT
        self.kco: np.ndarray | None = None  # the coarse index of ``key`` (built when needed)

    @classmethod
    def from_sorted(cls, pos: np.ndarray, neg: np.ndarray) -> PositiveCounts:
        """The counts of unit-weight positives ``pos`` and negatives ``neg`` (each ascending, one
        dtype): the positives' distinct scores and multiplicities from one pass over ``pos``, the
        negatives at or above each from one search of those scores in ``neg`` (the same
        integers as :meth:`__init__` of :func:`streammetrics._scores.thresholds.counts_from_sorted` at the
        distinct positive scores). O(P + D log N) for D distinct positive scores."""
        self = cls.__new__(cls)
        self.total_pos, self.total_neg = int(pos.shape[0]), int(neg.shape[0])
        self._no_pending()
        dt = _count_dtype(self.total_pos + self.total_neg)
        if not pos.shape[0]:
            self.key = np.zeros(0)
            self.pw, self.nb = np.zeros(0, dtype=dt), np.zeros(0, dtype=dt)
            return self
        # the temporaries are made and dropped in an order that keeps at most four arrays of
        # the D distinct scores alive at once (the three kept ones and one more)
        last = np.empty(pos.shape[0], dtype=bool)
        last[-1] = True
        np.not_equal(pos[1:], pos[:-1], out=last[:-1])
        ends = np.flatnonzero(last)  # the last of each run of equal scores, ascending
        del last
        d = ends.shape[0]
        self.pw = np.empty(d, dtype=dt)  # multiplicities, decreasing score
        pw_up = self.pw[::-1]
        pw_up[0] = ends[0] + 1
        np.subtract(ends[1:], ends[:-1], out=pw_up[1:])
        u = pos[ends]  # ascending distinct scores, in the runs' dtype
        del ends
        below = rank_left(neg, None, u)  # negatives < each: one search
        # negatives in [u[i], u[i-1]) (decreasing score; the first bin open above)
        self.nb = np.empty(d, dtype=dt)
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
        distinct positive score appears. With the compiled kernels (:meth:`_add_compiled`):
        O(m log n + S), no pass over the P kept thresholds except the amortised merge of the
        pending ones."""
        self._widen(pos.shape[0] + neg.shape[0])
        fast = kernels_at(self.total_pos + self.total_neg + pos.shape[0] + neg.shape[0], "add")
        if fast is not None:
            self._add_compiled(fast, pos, neg, neg_group)
            return
        self._merge_pending()
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
                ge_above[inner] = np.cumsum(nb, dtype=nb.dtype)[ai - 1]
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
        self.kco = None
        for name, fresh_vals in (("key", np.negative(df)), ("pw", kf), ("nb", nb_f)):
            cur = getattr(self, name)
            out = np.empty(size, dtype=cur.dtype)
            out[old] = cur
            out[slot] = fresh_vals
            del cur
            setattr(self, name, out)
            del out

    def _widen(self, added: int) -> None:
        """Make the kept counts int64 before ``added`` more samples could take them past int32
        (:data:`_NARROW_MAX`). O(P) once, O(1) otherwise."""
        if self.pw.dtype == np.int32 and self.total_pos + self.total_neg + added > _NARROW_MAX:
            self.pw = self.pw.astype(np.int64)
            self.nb = self.nb.astype(np.int64)

    def _add_compiled(self, fast: Any, pos: np.ndarray, neg: np.ndarray, neg_group: Group) -> None:
        """:meth:`add` by merged walks: the new negatives go to their kept bins
        (:func:`~streammetrics._scores.exact.numba_kernels.bin_negatives`) and raise the
        pending thresholds' counts (:func:`~streammetrics._scores.exact.numba_kernels.add_upto`);
        new positives at a kept or pending threshold add to it, the other new distinct scores
        become pending (their negatives above counted in the stored runs). O(m log n + S)."""
        key = self.key
        p = key.shape[0]
        if self.kco is None:
            self.kco = coarse_index(key)
        kco = self.kco
        self.total_neg += neg.shape[0]
        if neg.shape[0]:
            nkey = np.negative(neg[::-1], dtype=np.float64)
            if p:
                fast.bin_negatives(key, coarse_arg(key, kco, nkey), nkey, self.nb)
            if self.sk.shape[0]:
                fast.add_upto(self.sk, nkey, self.sh)
        if not pos.shape[0]:
            return
        self.total_pos += pos.shape[0]
        d, k = _distinct(pos)
        dkey = np.negative(d[::-1])
        k = k[::-1]
        at = rank_left(key, kco, dkey) if p else np.zeros(dkey.shape[0], dtype=np.int64)
        held = at < p
        held[held] = key[at[held]] == dkey[held]
        if held.any():  # distinct keys: distinct kept thresholds
            self.pw[at[held]] += k[held]
        rest = ~held
        if not rest.any():
            return
        dkey, k, at = dkey[rest], k[rest], at[rest]
        sk = self.sk
        sj = np.searchsorted(sk, dkey, "left")
        if sk.shape[0]:
            same = sj < sk.shape[0]
            same[same] = sk[sj[same]] == dkey[same]
            if same.any():
                self.sc[sj[same]] += k[same]
                fresh = ~same
                dkey, k, at, sj = dkey[fresh], k[fresh], at[fresh], sj[fresh]
        if not dkey.shape[0]:
            return
        ge = count_ge(neg_group, np.negative(dkey[::-1]))[::-1]  # negatives at or above each
        del key  # (the merge below grows the kept arrays in place: no other reference)
        self.sk, self.sa, self.sc, self.sh = fast.insert_pending(  # np.insert of each, at once
            sk, self.sa, self.sc, self.sh, sj, dkey, at.astype(np.int64, copy=False),
            k.astype(np.int64, copy=False), ge.astype(np.int64, copy=False))
        if self.sk.shape[0] > max(_PENDING_MIN, p // _PENDING_SHARE):
            self._merge_pending()

    def _merge_pending(self) -> None:
        """Merge the pending thresholds into the kept counts and recompute the bins from the
        negatives at or above every merged threshold. With the compiled kernels loaded: the
        kept arrays grown in place (:func:`~streammetrics._scores.exact.spill.grown`) and merged
        into from the back (:func:`~streammetrics._scores.exact.numba_kernels.merge_pending`):
        no temporary of size P, and no freed block of it left on the heap (a merge of ~1M
        thresholds left up to 7 MB of them resident). Else one scatter per array (old entries
        and pending ones into their merged places), one array of P at a time. The same
        integers either way. O(P + S)."""
        s = self.sk.shape[0]
        if not s:
            return
        p = self.key.shape[0]
        size = p + s
        fast = kernels()
        if fast is not None:
            # in place: each kept array grown (its pages remapped, or realloc; a copy only
            # when it is held elsewhere), then merged into from the back
            for name in ("key", "pw", "nb"):
                box = [getattr(self, name)]
                setattr(self, name, _NO_INT)
                setattr(self, name, grown(box, size))
            fast.merge_pending(self.key, self.pw, self.nb, p, self.sk, self.sa, self.sc, self.sh)
            self._no_pending()
            return
        slot = self.sa + np.arange(s)
        old = np.ones(size, dtype=bool)
        old[slot] = False
        fp = np.empty(size, dtype=self.nb.dtype)  # negatives at or above each merged threshold
        fp[old] = np.cumsum(self.nb, dtype=self.nb.dtype, out=self.nb)  # (the old bins are replaced below)
        fp[slot] = self.sh
        self.nb = nb = np.empty(size, dtype=self.pw.dtype)
        nb[0] = fp[0]
        np.subtract(fp[1:], fp[:-1], out=nb[1:])
        del fp, nb
        for name, pending in (("key", self.sk), ("pw", self.sc)):
            cur = getattr(self, name)
            out = np.empty(size, dtype=cur.dtype)
            out[old] = cur
            out[slot] = pending
            del cur
            setattr(self, name, out)
            del out
        self._no_pending()  # (and the coarse index of the old keys)

    def counts(self) -> ThresholdCounts:
        """The counts at the distinct positive scores, decreasing. O(P)."""
        self._merge_pending()
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
        fast = kernels_at(self.total_pos + self.total_neg, "ap")
        if fast is not None:
            total = fast.ap_sum(self.pw, self.nb, self.sa, self.sc, self.sh, float(self.total_pos))
            return float(max(0.0, float(total)))
        self._merge_pending()
        p = self.pw.shape[0]
        step = np.empty(p, dtype=np.float64)
        tp0 = fp0 = 0
        prev = 0.0
        block = max(_READ_BLOCK, -(-p // 16))  # at most 16 blocks: few numpy calls per read
        for lo in range(0, p, block):  # in blocks: the temporaries stay small
            hi = min(lo + block, p)
            tp = np.cumsum(self.pw[lo:hi], dtype=self.pw.dtype)  # (no overflow: at most the total)
            tp += tp0
            fp = np.cumsum(self.nb[lo:hi], dtype=self.nb.dtype)
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
