"""Removing samples from the exact score buffer: sliding windows.

:class:`SortedSlide` is the part of :class:`~streammetrics._scores.exact.buffer.SortedScores` that
removes samples (``subtract``, ``slide_rows``, ``remove_groups``): the pair counts ``u2``
change by one signed search per stored run, removed scores become tombstones purged in one
O(n) pass, and a small binary window fed small batches works on plain sorted Python lists
(*list mode*). Complexities are on each method.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import TYPE_CHECKING

import numpy as np

from streammetrics._core.state import State
from streammetrics._scores.batches import score_dtype

from .runs import FlatList, merge_sorted, rank2, signed_needles
from .u2_counter import exact_u2

if TYPE_CHECKING:
    from collections.abc import Hashable

    from streammetrics._scores.batches import Parts

    from .runs import Group
    from .spill import Spill

#: List mode of :meth:`SortedScores.remove_groups` (a small binary window fed small batches):
#: states of at most FLAT_MAX samples go to list mode after _STREAK consecutive batches of at
#: most _PER_SAMPLE_MAX changed (added + removed) samples, and back to runs on a batch of more
#: than _LIST_MAX.
FLAT_MAX = 1 << 16
_PER_SAMPLE_MAX = 40
_LIST_MAX = 160
_STREAK = 4


def _remove_held(held: list[float], x: float, what: str) -> None:
    """Delete one ``x`` from the sorted list ``held``; ``ValueError`` if it holds none. O(n)."""
    j = bisect_left(held, x)
    if j == len(held) or held[j] != x:
        raise ValueError(f"remove: {what} score {x!r} is not held")
    del held[j]


class SortedSlide:
    """Removal methods of the exact score buffer (a base of
    :class:`~streammetrics._scores.exact.buffer.SortedScores`; see the module docstring)."""

    # the buffer's layout and storage (set by SortedScores)
    task: str
    ignore_index: int | None
    n_columns: int
    n_groups: int
    _groups: list[list[Group]]
    _u2: np.ndarray
    _room: int
    _weighted: bool
    _dtype: np.dtype | None
    _pending: list[Parts]
    _spills: dict[tuple[int, int], Spill]
    _scalars: list[tuple[int, float, float | None]]
    _small_streak: int

    if TYPE_CHECKING:  # SortedScores' own methods

        def key(self) -> Hashable: ...

        def _flush(self) -> None: ...

        def pos_group(self, column: int) -> int: ...

        def _drop_positive_counts(self) -> None: ...

        def _ensure_u2(self) -> None: ...

    def subtract(self, other: State) -> None:
        """Remove the samples held by ``other`` (a state of the same key holding a sub-multiset
        of the samples folded into this one -- the caller's contract, as for
        :meth:`State.subtract`; a sliding window is the user). Unweighted states only: weighted
        ones raise ``NotImplementedError`` (float weights cannot be removed without residue; the
        window rebuilds them instead).

        Batches still queued in this state are folded in by the same pass: with A the queued
        samples and R the removed ones, ``u2`` changes by the pairs of (A - R) against the stored
        samples -- one search of the signed needles A u R per stored run and opposite group,
        O((|A| + |R|) log n) -- plus the pairs inside (A - R) (O(m log m)). The added scores are
        pushed as a run and the removed ones tombstoned (see ``Group.remove``), purged in one
        O(n) pass once they reach max(1024, n/32) of a group, so AUROC reads stay O(1) and a
        sliding window costs amortised O(log n) per sample. ``other`` is read, not changed.
        """
        if not isinstance(other, SortedSlide) or other.key() != self.key():
            raise ValueError("subtract: the other state has a different configuration")
        self.remove_groups(other._sample_groups())  # NotImplementedError if weighted

    def split_trusted(self, y: np.ndarray, s: np.ndarray) -> list[list[np.ndarray]]:
        """Rows that this (binary) state's ``prepare`` already accepted once -- a window's
        expired rows -- as sorted per-group scores ``[[negatives, positives]]``, without
        validating them again: rows labelled ``ignore_index`` are dropped, scores take the
        state's score dtype. O(m log m), a handful of numpy calls."""
        assert self.task == "binary"
        s = score_dtype(s)
        if self.ignore_index is None:
            pos = y.astype(bool, copy=False)
            neg = ~pos
        else:
            pos = y == 1
            neg = y == 0
            if self.ignore_index in (0, 1):
                if self.ignore_index == 1:
                    pos = np.zeros_like(pos)
                else:
                    neg = np.zeros_like(neg)
        sn, sp = s[neg], s[pos]
        sn.sort()
        sp.sort()
        return [[sn, sp]]

    def slide_rows(self, y: np.ndarray, s: np.ndarray) -> None:
        """Remove rows that this binary state's ``prepare`` accepted once (a window's expired
        rows: labels ``y``, scores ``s``; the caller's contract is that they are held) and fold
        the queue in. In list mode (see :meth:`_flat_slide`) with few changes this is one
        plain-Python pass -- no re-validation, no numpy temporaries, no sorting. Otherwise
        ``remove_groups(split_trusted(y, s))``: no re-validation either."""
        self._ensure_u2()
        neg_g, pos_g = self._groups[0]
        if (type(neg_g.tail) is not FlatList or type(pos_g.tail) is not FlatList or neg_g.runs
                or pos_g.runs or self._scalars or self._spills or self._dtype != np.float64):
            self.remove_groups(self.split_trusted(y, s))
            return
        adds: list[tuple[list[float], list[float]]] = []
        n_changes = y.shape[0]
        for parts in self._pending:
            (_, _, vn, wn), (_, _, vp, wp) = parts
            if wn is not None or wp is not None or vn.dtype != np.float64 or vp.dtype != np.float64:
                self.remove_groups(self.split_trusted(y, s))
                return
            n_changes += vn.shape[0] + vp.shape[0]
            adds.append((vn.tolist(), vp.tolist()))
        if n_changes > _LIST_MAX:
            self.remove_groups(self.split_trusted(y, s))
            return
        self._pending = []
        rn: list[float] = []
        rp: list[float] = []
        ignore = self.ignore_index
        for label, x in zip(y.tolist(), s.astype(np.float64, copy=False).tolist(), strict=True):
            if label != ignore:
                (rp if label else rn).append(x)
        self._slide_lists(adds, rn, rp)

    def remove_groups(self, rem: list[list[np.ndarray]]) -> None:
        """Remove unit-weight samples given as sorted per-group scores ``rem[col][grp]`` (a
        sub-multiset of the samples folded in or queued -- the caller's contract) and fold the
        queue in: see :meth:`subtract`. Binary states whose groups are single runs of at most
        ``FLAT_MAX`` samples in all (a small window) take the flat path: the queued and removed
        scores are counted against the one run of the other group (two searches each) and
        inserted into / deleted from their group's run in place of runs and tombstones, so a
        window of W <= ``FLAT_MAX`` costs about 30 numpy calls per batch and O(m log W + W)
        (a memmove) however small the batch."""
        if (self._weighted or any(w is not None for parts in self._pending for *_, w in parts)
                or any(w is not None for *_, w in self._scalars)):
            self._flush()
            raise NotImplementedError("weighted ranking buffers are rebuilt, not subtracted")
        self._ensure_u2()  # removals change the pair counts: they must be current
        self._drop_positive_counts()
        groups = self._groups
        queued = self._queued_groups()
        for col in range(self.n_columns):
            for g in range(self.n_groups):
                if rem[col][g].shape[0] > groups[col][g].total + queued[col][g].shape[0]:
                    self._flush()
                    raise ValueError("subtract: the other state holds samples this one does not")
        self._pending, self._scalars, self._spills = [], [], {}
        if self.task == "binary" and self._flat_slide(queued[0], rem[0]):
            return
        for row in groups:
            for grp in row:
                grp.flush_tail()  # the searches below cover the runs only
        dtypes = {v.dtype for row in queued for v in row if v.shape[0]}
        if self._dtype is not None:
            dtypes.add(self._dtype)
        if not dtypes:
            return  # empty, and nothing to remove (checked above)
        target = np.result_type(*dtypes)
        if self._dtype is not None and target != self._dtype:
            for row in groups:
                for grp in row:
                    grp.promote(target)
        self._dtype = target
        add = [[v.astype(target, copy=False) for v in row] for row in queued]
        rv = [[v.astype(target, copy=False) for v in row] for row in rem]
        n = sum(v.shape[0] for row in add for v in row)
        self._u2, self._room = exact_u2(self._u2, groups, n, self._room)
        u2 = self._u2
        for col in range(self.n_columns):
            p = self.pos_group(col)
            pos = groups[col][p]
            xp, sp = signed_needles(add[col][p], rv[col][p])
            for g in range(self.n_groups):
                if g == p:
                    continue
                xn, sn = signed_needles(add[col][g], rv[col][g])
                d = 0
                if xp.shape[0]:
                    d += groups[col][g].count2_signed(xp, sp)
                if xn.shape[0]:
                    d += 2 * int(pos.total) * int(sn.sum()) - pos.count2_signed(xn, sn)
                    if xp.shape[0]:  # pairs inside (A - R): A_n and R_n are each sorted
                        an, rn = add[col][g], rv[col][g]
                        lr = an.searchsorted(xp, "left") + an.searchsorted(xp, "right")
                        if rn.shape[0]:
                            lr -= rn.searchsorted(xp, "left") + rn.searchsorted(xp, "right")
                        d += int(np.dot(sp, lr))
                u2[col, g] += d
        for col in range(self.n_columns):
            for g in range(self.n_groups):
                grp = groups[col][g]
                if add[col][g].shape[0]:
                    grp.push(add[col][g], None, add[col][g].shape[0])
                if rv[col][g].shape[0]:
                    grp.remove(rv[col][g])

    def _flat_slide(self, add: list[np.ndarray], rem: list[np.ndarray]) -> bool:
        """The list mode of :meth:`remove_groups` for small binary windows (``add`` / ``rem``
        the sorted queued / removed scores of the negatives and positives). Returns False,
        changing nothing but the representation, when the generic runs-and-tombstones path
        should do the work instead.

        In list mode each group is one sorted plain Python list (a :class:`FlatList` tail, no
        runs): every added or removed score is a C bisect in the other group (two on ties) and
        one insertion or deletion (a memmove of pointers), O(log W) comparisons, no numpy call
        -- cheaper than the generic path's few dozen numpy calls when a batch changes a handful
        of samples. After ``_STREAK`` consecutive batches of at most ``_PER_SAMPLE_MAX`` changed
        samples a state of at most ``FLAT_MAX`` samples goes to list mode (an O(W)
        conversion); a batch of more than ``_LIST_MAX`` changes takes it back to runs (O(W)).
        """
        neg_g, pos_g = self._groups[0]
        an, ap = add
        rn, rp = rem
        n_add = an.shape[0] + ap.shape[0]
        changes = n_add + rn.shape[0] + rp.shape[0]
        listed = type(neg_g.tail) is FlatList and type(pos_g.tail) is FlatList \
            and not neg_g.runs and not pos_g.runs
        f64 = self._dtype == np.float64 and all(v.dtype == np.float64 for v in add if v.shape[0])
        if listed:
            if changes <= _LIST_MAX and f64:
                self._slide_listed(an, ap, rn, rp)
                return True
            neg_g.flush_tail()
            pos_g.flush_tail()
            self._small_streak = 0
            return False
        if changes > _PER_SAMPLE_MAX:
            self._small_streak = 0
            return False
        self._small_streak += 1
        size = int(neg_g.total) + int(pos_g.total) + n_add
        if self._small_streak < _STREAK or size > FLAT_MAX or not f64:
            return False
        for grp in (neg_g, pos_g):
            v, _ = grp.consolidate()  # flushes the tail, purges tombstones
            grp.tail = FlatList(v.tolist())
            grp.runs, grp.wts, grp.cws, grp.coarse = [], [], [], []
        self._slide_listed(an, ap, rn, rp)
        return True

    def _slide_listed(
        self, an: np.ndarray, ap: np.ndarray, rn: np.ndarray, rp: np.ndarray
    ) -> None:
        """List mode: add ``an`` / ``ap``, then remove ``rn`` / ``rp`` (see :meth:`_flat_slide`)."""
        self._slide_lists([(an.tolist(), ap.tolist())], rn.tolist(), rp.tolist())

    def _slide_lists(self, adds: list[tuple[list[float], list[float]]], rn: list[float],
                     rp: list[float]) -> None:
        """The list-mode kernel: add every (negatives, positives) pair of ``adds``, then remove
        the scores ``rn`` / ``rp``, keeping ``u2`` and the totals exact. A removed score that is
        not held raises ``ValueError`` (a broken contract; the state is then inconsistent and
        the caller rebuilds it)."""
        neg_g, pos_g = self._groups[0]
        ln = neg_g.tail.a  # type: ignore[union-attr]
        lp = pos_g.tail.a  # type: ignore[union-attr]
        n = sum(len(an) + len(ap) for an, ap in adds)
        self._u2, self._room = exact_u2(self._u2, self._groups, n, self._room)
        u2 = int(self._u2[0, 0])
        # u2 counts 2 per (pos > neg) pair and 1 per tie: see rank2
        try:
            for an, ap in adds:
                for x in ap:
                    u2 += rank2(ln, x)
                    insort(lp, x)
                npos = len(lp)
                for x in an:
                    u2 += 2 * npos - rank2(lp, x)
                    insort(ln, x)
            for x in rp:
                _remove_held(lp, x, "positive")
                u2 -= rank2(ln, x)
            npos = len(lp)
            for x in rn:
                _remove_held(ln, x, "negative")
                u2 -= 2 * npos - rank2(lp, x)
        finally:
            self._u2[0, 0] = u2
            neg_g.total, pos_g.total = len(ln), len(lp)

    def _purge_tombstones(self) -> None:
        """Delete removed samples from the runs of every group that has tombstones. O(n)."""
        for row in self._groups:
            for grp in row:
                if grp.dead is not None:
                    grp.consolidate()

    def _queued_groups(self) -> list[list[np.ndarray]]:
        """The queued unit-weight samples (batches and single samples) per group, each sorted.
        Does not change the state."""
        k, g = self.n_columns, self.n_groups
        vs: list[list[list[np.ndarray]]] = [[[] for _ in range(g)] for _ in range(k)]
        for parts in self._pending:
            for col, gi, v, _ in parts:
                if v.shape[0]:
                    vs[col][gi].append(v)
        for gi, x, _ in self._scalars:
            vs[0][gi].append(np.array([x]))
        for (col, gi), sp in self._spills.items():
            vs[col][gi].append(sp.values())
        out = []
        for row in vs:
            out_row = []
            for arrs in row:
                v = np.concatenate(arrs) if len(arrs) > 1 else (arrs[0].copy() if arrs else np.zeros(0))
                v.sort()
                out_row.append(v)
            out.append(out_row)
        return out

    def _sample_groups(self) -> list[list[np.ndarray]]:
        """Every group's unit-weight samples (stored runs, tail and queue) as one sorted run,
        without folding the queue into ``u2``; weighted states raise ``NotImplementedError``.
        The value is unchanged."""
        if self._weighted:
            raise NotImplementedError("weighted ranking buffers are rebuilt, not subtracted")
        if any(w is not None for parts in self._pending for *_, w in parts) or any(
                w is not None for *_, w in self._scalars):
            raise NotImplementedError("weighted ranking buffers are rebuilt, not subtracted")
        queued = self._queued_groups()
        out = []
        for col, row in enumerate(self._groups):
            out_row = []
            for gi, grp in enumerate(row):
                q = queued[col][gi]
                if grp.runs or grp.tail:
                    v, _ = grp.consolidate()
                    if q.shape[0]:
                        q, _ = merge_sorted(v, None, q, None)
                    else:
                        q = v
                out_row.append(q)
            out.append(out_row)
        return out
