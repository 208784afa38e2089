"""Counts at the distinct positive scores of one column, kept current as batches arrive.

Average precision (and the PR curve's area) needs, at every distinct positive score t, the
positive and negative weight with score >= t. Recomputing them from the sorted runs at each
read merges every run first (O(n log n)); :class:`PositiveCounts` instead keeps, for an
unweighted column, the distinct positive scores ``u`` (ascending), the number of positives at
each (``pw``) and the number of negatives >= each (``neg_ge``), and brings them up to date with
the samples folded in since the last read:

* the new negatives are ranked among ``u`` (O(m log P)) and added to ``neg_ge`` by one
  bincount and one suffix sum (O(P + m));
* a new distinct positive score gets its ``neg_ge`` by one search per stored negative run
  (O(log n) each), and all new ones are inserted by one linear pass (O(P)).

So a read after a batch of m samples costs a few linear passes over the P distinct positive
scores plus O(m log n): no re-sort and no merge of the stored runs. Exact integer counts.
"""

from __future__ import annotations

import numpy as np

from ._curves import ThresholdCounts
from ._sorted_runs import Group, rank_left

__all__ = ["PositiveCounts", "count_ge"]


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
    read by :meth:`counts`.
    """

    __slots__ = ("u", "pw", "neg_ge", "total_pos", "total_neg")

    def __init__(self, counts: ThresholdCounts) -> None:
        self.u = counts.thresholds[::-1].copy()
        tps = np.asarray(counts.tps, dtype=np.int64)[::-1]
        self.pw = np.diff(tps[::-1], prepend=0)[::-1].copy()
        self.neg_ge = np.asarray(counts.fps, dtype=np.int64)[::-1].copy()
        self.total_pos = int(counts.total_pos)
        self.total_neg = int(counts.total_neg)

    def add(self, pos: np.ndarray, neg: np.ndarray, neg_group: Group) -> None:
        """Fold in new positives ``pos`` and negatives ``neg`` (both sorted ascending) that are
        already stored in the column's groups (``neg_group``: its negatives, now including
        ``neg``). O(P + m log n)."""
        u = self.u
        if neg.shape[0] and u.shape[0]:
            # each new negative counts for every threshold <= it: the thresholds 0..j with j
            # the last u <= value
            j = np.searchsorted(u, neg, "right") - 1
            j = j[j >= 0]
            if j.shape[0]:
                per = np.bincount(j, minlength=u.shape[0])
                self.neg_ge += np.cumsum(per[::-1])[::-1]
        self.total_neg += neg.shape[0]
        if pos.shape[0]:
            d, k = _distinct(pos)
            at = np.searchsorted(u, d, "left")
            held = at < u.shape[0]
            held[held] = u[at[held]] == d[held]
            if held.any():
                np.add.at(self.pw, at[held], k[held])
            fresh = ~held
            if fresh.any():
                df, kf, af = d[fresh], k[fresh], at[fresh]
                ge = count_ge(neg_group, df)
                # one scatter of old and new entries into their merged places (one O(P) pass)
                size = u.shape[0] + df.shape[0]
                slot = af + np.arange(df.shape[0])
                old = np.ones(size, dtype=bool)
                old[slot] = False
                for name, fresh_vals in (("u", df), ("pw", kf), ("neg_ge", ge)):
                    cur = getattr(self, name)
                    out = np.empty(size, dtype=cur.dtype)
                    out[old] = cur
                    out[slot] = fresh_vals
                    setattr(self, name, out)
            self.total_pos += pos.shape[0]

    def counts(self) -> ThresholdCounts:
        """The counts at the distinct positive scores, decreasing. O(P)."""
        tps = np.cumsum(self.pw[::-1], dtype=np.float64)  # float64 as every other counts
        fps = self.neg_ge[::-1].astype(np.float64)
        return ThresholdCounts(self.u[::-1], tps, fps, float(self.total_pos),
                               float(self.total_neg))
