"""Sorted runs of scores: the storage of the exact score buffer and its counting kernels.

A :class:`Group` holds one group's scores (of one column and label) as a few sorted numpy runs
of geometrically decreasing size (an LSM layout), optional weights with their cumulative sums, a
coarse index on large runs, a small sorted tail for samples folded one at a time and tombstones
for removed samples. :func:`count2` counts doubled Mann-Whitney pairs of needles against a run;
:func:`merge_sorted` / :func:`delete_sorted` keep runs sorted. See
:mod:`streammetrics._scores.exact.buffer` for how the buffer uses them and their costs.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from typing import Any

import numpy as np
from sortedcontainers import SortedList

from .merge_count import coarse_arg, kernels_at, kernels_for
from .sort_kernels import run_starts, stable_sort_with
from .spill import MAP_MIN, map_of, mapped_empty, regrow


def cumw(w: np.ndarray) -> np.ndarray:
    """Cumulative weights with a leading 0 (``cw[i]`` = weight of the first i elements)."""
    out = np.empty(w.shape[0] + 1)
    out[0] = 0.0
    np.cumsum(w, out=out[1:])
    return out


#: Block size of the coarse index kept for large runs, and the run size from which it pays off.
_BLOCK = 64
COARSE_MIN = 1 << 18
#: A new run is merged into the last one while it is at least 1/RATIO of its size; for a group
#: searched by over BUSY times more new samples than it receives, 1/RATIO_BUSY.
RATIO = 2
RATIO_BUSY = 16
BUSY = 2
#: The ratio for the batches the exact buffer folds in (``SortedScores._fold``) into a group
#: that is not busy: fewer runs for each later batch to be ranked in, for a little more
#: merging (read after each of 1000 batches of 10k at 1e7, CPU: AUROC 2.3 -> 2.15 s numpy,
#: 1.9 -> 1.73 s compiled; compiled AP 5.28 -> 5.1 s; at 2M within 1-8 %, never slower).
RATIO_FOLD = 8
#: :func:`rank_left` of fewer needles in a run without a coarse index stays in numpy at any
#: size: one ``searchsorted`` call, ~0.7 us faster a call than the compiled walk's dispatch
#: (``benchmarks/bench_kernels.py``, 8-100 needles in 1e3-1e5 scores: 0.77-0.84x).
_FEW_NEEDLES = 256
#: Up to this many unweighted needles, :func:`count2` searches both sides directly.
_SMALL_NEEDLES = 256
#: :meth:`Group.count2` searches a run in the needles (not the needles in the run) when the run
#: is under 1/_FLIP of them: unweighted, as soon as it is the smaller side (each search then
#: costs about the same, so the fewer the better: AUROC read after each of 200 batches of 10k,
#: 0.70 -> 0.62 s CPU); weighted, from 1/4 (the float sums then keep the rounding they had).
_FLIP = 1
_FLIP_WEIGHTED = 4
#: Runs smaller than this always merge with the next run pushed (small batches then cost one
#: short merge, not one more run to search on every later fold).
_MIN_RUN = 1024
#: Samples folded one at a time go to a SortedList tail of at most this many before becoming a run.
TAIL_MAX = 4096


def coarse_index(values: np.ndarray) -> np.ndarray | None:
    """The last element of every full block of ``_BLOCK`` (None for runs too small to need it)."""
    if values.shape[0] < COARSE_MIN:
        return None
    return values[_BLOCK - 1 :: _BLOCK].copy()


def rank_left(values: np.ndarray, coarse: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """``np.searchsorted(values, x, "left")``, faster on large runs.

    numpy's search walks each needle's path alone, so on a run larger than the cache every
    needle waits for one memory miss after another. Here the first levels go through the small,
    cache-resident ``coarse`` index (1/64 of the run), and the last six levels are done for all
    needles at once, level by level (branch-free lower bound inside a block of 64): the loads of
    one level are independent, so their misses overlap. Same O(log n) per needle. With the
    compiled kernels (:mod:`streammetrics._scores.exact.merge_count`): one galloping pass over the needles.
    """
    fast = (kernels_for(values, x, "rank_left")
            if coarse is not None or x.shape[0] >= _FEW_NEEDLES else None)
    if fast is not None:
        return fast.rank_left(values, coarse_arg(values, coarse, x), np.ascontiguousarray(x))
    if coarse is None:
        return np.searchsorted(values, x, "left")
    pos = np.searchsorted(coarse, x, "left")
    pos *= _BLOCK  # every element of the blocks before is < x; the answer is in this block
    step = _BLOCK // 2
    idx = np.empty_like(pos)
    while step >= 1:
        np.add(pos, step - 1, out=idx)
        pos += (values.take(idx, mode="clip") < x) * step
        step //= 2
    pos += values.take(pos, mode="clip") < x
    n = values.shape[0]
    # Past the end, the clipped probes read the last value: if it is < x the walk overshoots n.
    np.minimum(pos, n, out=pos)
    return pos


def count2(
    values: np.ndarray,
    cw: np.ndarray | None,
    x: np.ndarray,
    xw: np.ndarray | None,
    coarse: np.ndarray | None = None,
) -> int | float:
    """``sum_i xw_i * (L(x_i) + R(x_i))`` with L / R the weight of ``values`` below / at-or-below.

    ``values`` is sorted ascending, ``cw`` its cumulative weights (``None``: unit weights), ``x``
    any array of needles (sorted needles are faster), ``xw`` their weights (``None``: units),
    ``coarse`` the run's :func:`coarse_index`. The result is an exact int when both sides are
    unweighted. O(len(x) · log len(values)); a run of equal needles is searched once (with its
    summed weight), and the at-or-below side only for needles that tie with a stored value.
    """
    n = values.shape[0]
    if n == 0 or x.shape[0] == 0:
        return 0
    fast = kernels_for(values, x, "count2")
    if fast is not None and cw is None and xw is None:
        co = coarse_arg(values, coarse, x)
        return int(fast.count2_units(values, co, np.ascontiguousarray(x)))
    if coarse is None and cw is None and xw is None and x.shape[0] <= _SMALL_NEEDLES:
        # few needles (a small batch or a window's expiry): two plain searches beat the
        # tie-probing path's extra numpy calls
        return int(values.searchsorted(x, "left").sum(dtype=np.int64)) + int(
            values.searchsorted(x, "right").sum(dtype=np.int64))
    starts = run_starts(x)  # tied needles: search each distinct one once, with its weight
    if starts is not None:
        x, xw = x[starts], (np.diff(starts, append=x.shape[0]) if xw is None
                            else np.add.reduceat(xw, starts))
    if 32 * x.shape[0] >= n:
        coarse = None  # dense sorted needles: numpy's own search already walks the run in order
    left, right = _left_right(values, coarse, x)
    if cw is None:
        if xw is None:
            return int(left.sum(dtype=np.int64)) + int(right.sum(dtype=np.int64))
        if xw.dtype.kind == "i":  # integer multiplicities: an exact int
            return int(xw @ left) + int(xw @ right)
        return float(xw @ left.astype(np.float64)) + float(xw @ right.astype(np.float64))
    per = cw[left]
    per += per if right is left else cw[right]  # no tie: L = R, one gather (exact: 2x)
    return float(per.sum()) if xw is None else float(xw @ per)


def _left_right(
    values: np.ndarray, coarse: np.ndarray | None, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``searchsorted`` of ``x`` in ``values``, left and right (the same array when no needle
    ties with a stored value): compiled in one pass, or a left search plus a right search of
    the needles that tie."""
    fast = kernels_for(values, x, "ranks")
    if fast is not None:
        left, right = fast.ranks(values, coarse_arg(values, coarse, x), np.ascontiguousarray(x))
        return left, right
    left = rank_left(values, coarse, x)
    probe = np.minimum(left, values.shape[0] - 1)
    tie = values[probe] == x
    n_tie = int(np.count_nonzero(tie))
    if 2 * n_tie > x.shape[0]:
        return left, np.searchsorted(values, x, "right")
    if n_tie:
        right = left.copy()
        right[tie] = np.searchsorted(values, x[tie], "right")
        return left, right
    return left, left


def merge_sorted(
    a: np.ndarray, aw: np.ndarray | None, b: np.ndarray, bw: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Merge two ascending runs (and their weights; ``None`` = unit weights). O(n) to O(n log n)."""
    if a.dtype != b.dtype:
        dt = np.result_type(a.dtype, b.dtype)
        a, b = a.astype(dt), b.astype(dt)
    if aw is None and bw is None:
        out = np.concatenate([a, b])
        out.sort(kind="stable")  # timsort: two sorted runs merge in linear time
        return out, None
    v = np.concatenate([a, b])
    order = np.argsort(v, kind="stable")
    w = np.concatenate(
        [
            np.ones(a.shape[0]) if aw is None else aw,
            np.ones(b.shape[0]) if bw is None else bw,
        ]
    )
    return v[order], w[order]


def merge_into_last(runs: list[np.ndarray], b: np.ndarray) -> np.ndarray:
    """Pop the last run and merge the unweighted run ``b`` into it: in place when the popped
    run is held nowhere else, else as :func:`merge_sorted`. Runs of ``MAP_MIN`` bytes and more
    live in private anonymous maps of their own (:func:`~streammetrics._scores.exact.spill.mapped_empty`,
    one copy when a run first gets that large): grown by remapping their pages (no copy) and
    handed back to the system when freed, so the merges of a long stream leave no freed heap
    blocks resident. Smaller runs grow by ``realloc``. No second copy of the large run at any
    time; the same values either way. O(n)."""
    a = runs.pop()  # the list's reference gone: ``a`` is now the only one unless shared
    na, n = a.shape[0], a.shape[0] + b.shape[0]
    if a.dtype == b.dtype:
        grown: np.ndarray | None = None
        mm = map_of(a)
        if mm is not None:  # a mapped run (see below): grown by remapping its pages
            dtype = a.dtype
            del a
            grown = regrow(mm, dtype, n)
            if grown is None:  # shared: a view of it remains
                a = np.frombuffer(mm, dtype=dtype)
        elif n * a.itemsize >= MAP_MIN:
            # a large run moves to a map of its own, once: freed, it goes back to the system
            # (a heap block freed by a later realloc stays resident), grown later without a copy
            grown = mapped_empty(n, a.dtype)
            if grown is not None:
                grown[:na] = a
                del a
        if grown is None and mm is None:
            try:
                a.resize(n, refcheck=True)
            except ValueError:  # a copy of the state (or a caller) holds it, or it is a view
                pass
            else:
                grown = a
        if grown is not None:
            fast = kernels_for(grown[:na], b, "merge_back")
            if fast is not None:
                fast.merge_back(grown, na, np.ascontiguousarray(b))
            else:
                grown[na:] = b
                grown.sort(kind="stable")  # timsort: two sorted runs, merged in one pass
            return grown
    return merge_sorted(a, None, b, None)[0]


#: :func:`concat_owned` copies the queue in this many chunks (its peak: 1 + 1/_CHUNKS copies).
_CHUNKS = 3


def concat_owned(vs: list[np.ndarray]) -> np.ndarray:
    """Concatenate the arrays of ``vs`` (emptied) in ``_CHUNKS`` chunks: the first chunk is one
    ``np.concatenate``, each next one is appended by growing the result in place (``realloc``)
    after which its arrays are released -- so the queue and its concatenation never both exist
    whole (peak 1 + 1/_CHUNKS copies instead of 2). Falls back to one ``np.concatenate`` when
    the result cannot grow in place. O(n)."""
    total = sum(v.shape[0] for v in vs)
    dtype = np.result_type(*vs)
    vs.reverse()
    out: np.ndarray | None = None
    n = 0
    while vs:
        take: list[np.ndarray] = []
        m = 0
        while vs and _CHUNKS * m < total:
            m += vs[-1].shape[0]
            take.append(vs.pop())
        if out is None:
            out = np.concatenate(take, dtype=dtype)
        else:
            try:
                out.resize(n + m, refcheck=True)
            except ValueError:  # pragma: no cover - the result is this function's own array
                vs.reverse()
                return np.concatenate([out[:n], *take, *vs], dtype=dtype)
            np.concatenate(take, out=out[n:])
        n += m
        del take
    return np.zeros(0, dtype=dtype) if out is None else out


def delete_sorted(values: np.ndarray, remove: np.ndarray) -> np.ndarray:
    """``values`` (sorted) minus the multiset ``remove`` (sorted; each element present, as many
    times as it is removed). O(n + m log n), no sort: the k-th copy of a removed value is the
    k-th stored copy of it. A missing value is an ``AssertionError`` (a broken contract)."""
    m = remove.shape[0]
    if m == 0:
        return values
    idx = np.searchsorted(values, remove, "left")
    idx += np.arange(m) - np.searchsorted(remove, remove, "left")  # rank among equal removals
    if idx[-1] >= values.shape[0] or not np.array_equal(values[np.minimum(idx, values.shape[0] - 1)], remove):
        raise AssertionError("delete_sorted: a removed value is not held")
    keep = np.ones(values.shape[0], dtype=bool)
    keep[idx] = False
    return values[keep]


def signed_needles(add: np.ndarray, remove: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Needles ``add`` (sign +1) then ``remove`` (sign -1) as one array with int64 signs."""
    if remove.shape[0] == 0:
        return add, np.ones(add.shape[0], dtype=np.int64)
    if add.shape[0] == 0:
        return remove, np.full(remove.shape[0], -1, dtype=np.int64)
    sign = np.ones(add.shape[0] + remove.shape[0], dtype=np.int64)
    sign[add.shape[0]:] = -1
    return np.concatenate([add, remove]), sign


class FlatList:
    """A sorted plain Python list with the part of the ``SortedList`` interface a group's tail
    needs. Insertion and removal are a C bisect and a memmove of pointers: for the few
    thousand to ~100k scores of a small window's group this beats ``SortedList``'s Python-level
    bookkeeping, and ``a[i]`` is O(1) (the tie test of :meth:`SortedScores.slide_rows`)."""

    __slots__ = ("a",)

    def __init__(self, values: Any = ()) -> None:
        self.a: list[float] = list(values)  # the caller passes sorted values

    def __len__(self) -> int:
        return len(self.a)

    def __iter__(self) -> Any:
        return iter(self.a)

    def bisect_left(self, x: float) -> int:
        return bisect_left(self.a, x)

    def bisect_right(self, x: float) -> int:
        return bisect_right(self.a, x)

    def add(self, x: float) -> None:
        insort(self.a, x)

    def remove(self, x: float) -> None:
        a = self.a
        i = bisect_left(a, x)
        if i == len(a) or a[i] != x:
            raise ValueError(f"{x!r} is not held")
        del a[i]

    def clear(self) -> None:
        self.a.clear()

    def _check(self) -> None:
        a = self.a
        assert all(a[i] <= a[i + 1] for i in range(len(a) - 1))


class Group:
    """One group's scores: sorted runs (largest first) with optional weights and their cumsums."""

    __slots__ = ("runs", "wts", "cws", "coarse", "tail", "total", "dead")

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []
        self.wts: list[np.ndarray | None] = []
        #: cumulative weights of each weighted run (:func:`cumw`), built on first use by
        #: :meth:`cum_weights` (only pair counting reads them): None until then, and for unit runs
        self.cws: list[np.ndarray | None] = []
        self.coarse: list[np.ndarray | None] = []
        # unit-weight float64 samples folded one at a time (a small window's list mode: all of
        # the group's samples, in a FlatList)
        self.tail: SortedList | FlatList | None = None
        self.total: int | float = 0  # weight of the live samples (runs + tail - dead)
        # Removed unit-weight samples still physically present in ``runs``/``tail`` (tombstones;
        # unweighted groups only): every count subtracts them, ``consolidate`` purges them.
        self.dead: Group | None = None

    def cum_weights(self) -> list[np.ndarray | None]:
        """The cumulative weights of every run (None: a unit-weight run), building those not
        built yet. O(n) the first time after a push, O(runs) after."""
        cws = self.cws
        for i, w in enumerate(self.wts):
            if w is not None and cws[i] is None:
                cws[i] = cumw(w)
        return cws

    def count2_scalar(self, x: float) -> int | float:
        """:func:`count2` for one unit-weight needle: O(log n) per run, no temporaries."""
        s: int | float = 0
        for v, cw in zip(self.runs, self.cum_weights(), strict=True):
            left = int(v.searchsorted(x, "left"))
            right = left if left == v.shape[0] or v[left] != x else int(v.searchsorted(x, "right"))
            s += left + right if cw is None else float(cw[left] + cw[right])
        if self.tail:
            s += self.tail.bisect_left(x) + self.tail.bisect_right(x)
        if self.dead is not None:
            s -= self.dead.count2_scalar(x)
        return s

    def add_scalar(self, x: float) -> None:
        """Insert one unit-weight sample into the SortedList tail (O(log n))."""
        if self.tail is None:
            self.tail = SortedList()
        self.tail.add(x)
        self.total += 1
        if len(self.tail) >= TAIL_MAX and type(self.tail) is not FlatList:  # list mode stays
            self.flush_tail()

    def flush_tail(self) -> None:
        """Turn the tail into a sorted run (a list-mode tail is dropped: later single samples
        go to a fresh ``SortedList``)."""
        if type(self.tail) is FlatList:
            tail, self.tail = self.tail, None
            if tail:
                self.push(np.array(tail.a, dtype=np.float64), None, 0)
        elif self.tail:
            v = np.fromiter(self.tail, dtype=np.float64, count=len(self.tail))
            self.tail.clear()
            self.push(v, None, 0)

    def count2(self, x: np.ndarray, xw: np.ndarray | None) -> int | float:
        """See :func:`count2`, summed over the runs; ``x`` must be sorted.

        A run smaller than the needles (unweighted; weighted: under a quarter of them, see
        ``_FLIP``) is searched the other way round (its elements in the needles, the fewer
        searches), using sum_x (L_v + R_v)(x) = 2 W_v W_x - sum_v (L_x + R_x)(v): exact ints
        either way. O(min(len(x), len(run)) · log max(...)) per run.
        """
        s: int | float = 0
        x_cw: np.ndarray | None = None
        x_total: int | float = x.shape[0] if xw is None else float(xw.sum())
        for v, w, cw, co in zip(self.runs, self.wts, self.cum_weights(), self.coarse, strict=True):
            if (_FLIP if w is None and xw is None else _FLIP_WEIGHTED) * v.shape[0] < x.shape[0]:
                if xw is not None and x_cw is None:
                    x_cw = cumw(xw)
                v_total = v.shape[0] if cw is None else float(cw[-1])
                s += 2 * v_total * x_total - count2(x, x_cw, v, w)
            else:
                s += count2(v, cw, x, xw, co)
        if self.dead is not None:
            s -= self.dead.count2(x, xw)
        return s

    def count2_signed(self, x: np.ndarray, sign: np.ndarray) -> int:
        """``sum_i sign_i (L(x_i) + R(x_i))`` over the live samples of an unweighted group
        (runs minus tombstones; the tail must be flushed). Exact int; O(len(x) log n) per run."""
        s = 0
        for v in self.runs:
            s += int(np.dot(sign, v.searchsorted(x, "left") + v.searchsorted(x, "right")))
        if self.dead is not None:
            s -= self.dead.count2_signed(x, sign)
        return s

    def remove(self, values: np.ndarray) -> None:
        """Remove unit-weight samples (``values`` sorted, a sub-multiset of this unweighted
        group's samples -- the caller's contract): recorded as tombstones (a push into ``dead``,
        amortised O(m log(n/m))), purged by one O(n) pass once they reach max(1024, n/32) (or
        n/4 for small groups), or on :meth:`consolidate`. So at most a few tombstone runs are
        searched per count, and the purges cost amortised O(1) moves per removed sample."""
        if values.shape[0] == 0:
            return
        if self.dead is None:
            self.dead = Group()
        self.dead.push(values, None, values.shape[0])
        self.total -= values.shape[0]
        live = self.total
        if self.dead.total >= min(live / 4, max(_MIN_RUN, live / 32)):
            self.consolidate()

    def push(self, v: np.ndarray, w: np.ndarray | None, total: int | float, ratio: int = 0) -> None:
        """Add a sorted run and restore the geometric shape: merge it into the last run while it
        is at least 1/``ratio`` of its size (default ``RATIO``; a larger ratio means fewer runs
        to search and more merging)."""
        if v.shape[0] == 0:
            return
        ratio = ratio or RATIO
        self.total += total
        runs, wts, cws, coarse = self.runs, self.wts, self.cws, self.coarse
        while runs and (ratio * v.shape[0] >= runs[-1].shape[0] or runs[-1].shape[0] < _MIN_RUN):
            aw = wts.pop()
            cws.pop()
            coarse.pop()
            if aw is None and w is None:
                v = merge_into_last(runs, v)
            else:
                v, w = merge_sorted(runs.pop(), aw, v, w)
        runs.append(v)
        wts.append(w)
        cws.append(None)  # built on first use (:meth:`cum_weights`)
        coarse.append(coarse_index(v))

    def consolidate(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Merge every run into one (purging tombstones) and return it (values, weights or None)."""
        self.flush_tail()
        if not self.runs:
            self.dead = None
            return np.zeros(0), None
        if len(self.runs) > 1:
            if all(w is None for w in self.wts):
                v = np.concatenate(self.runs)
                v.sort(kind="stable")
                w = None
            else:
                v = np.concatenate(self.runs)
                order = np.argsort(v, kind="stable")
                w = np.concatenate(
                    [
                        np.ones(r.shape[0]) if rw is None else rw
                        for r, rw in zip(self.runs, self.wts, strict=True)
                    ]
                )[order]
                v = v[order]
        elif self.dead is not None:
            v, w = self.runs[0], self.wts[0]
        else:
            return self.runs[0], self.wts[0]
        if self.dead is not None:  # purge the tombstones (unweighted groups only)
            assert w is None, "tombstones are purged before a group gets weights"
            dv, _ = self.dead.consolidate()
            self.dead = None
            v = delete_sorted(v, dv.astype(v.dtype, copy=False))
            if v.shape[0] == 0:
                self.runs, self.wts, self.cws, self.coarse = [], [], [], []
                return v, None
        self.runs, self.wts = [v], [w]
        self.cws = [None]  # built on first use (:meth:`cum_weights`)
        self.coarse = [coarse_index(v)]
        return v, w

    def promote(self, dtype: np.dtype) -> None:
        self.runs = [r.astype(dtype) for r in self.runs]
        self.coarse = [coarse_index(r) for r in self.runs]
        if self.dead is not None:
            self.dead.promote(dtype)

    @property
    def nbytes(self) -> int:
        n = 0
        for v, w, cw, co in zip(self.runs, self.wts, self.cws, self.coarse, strict=True):
            n += v.nbytes + (0 if w is None else w.nbytes) + (0 if cw is None else cw.nbytes)
            n += 0 if co is None else co.nbytes
        if self.tail:
            n += 40 * len(self.tail)  # list slot + float object, roughly
        if self.dead is not None:
            n += self.dead.nbytes
        return n


def copy_groups(groups: list[list[Group]]) -> list[list[Group]]:
    out = []
    for row in groups:
        new_row = []
        for grp in row:
            g = Group()
            g.runs, g.wts, g.cws, g.total = list(grp.runs), list(grp.wts), list(grp.cws), grp.total
            g.coarse = list(grp.coarse)
            g.tail = None if grp.tail is None else (
                FlatList(grp.tail) if isinstance(grp.tail, FlatList) else SortedList(grp.tail))
            g.dead = None if grp.dead is None else copy_groups([[grp.dead]])[0][0]
            new_row.append(g)
        out.append(new_row)
    return out


#: :func:`sort_batch` sorts by radix up to this many scores (its scratch: as many keys), by
#: ``ndarray.sort`` (in place, no scratch) beyond: a read-once stream's whole queue, for one, is
#: sorted there, so its peak memory stays one copy of the scores.
_RADIX_MAX = 1 << 16


def sort_batch(v: np.ndarray) -> None:
    """Sort ``v`` in place, as ``v.sort()`` does (the same array, bit for bit): a contiguous
    float64 batch of at most ``_RADIX_MAX`` scores by the compiled radix sort
    (:func:`~streammetrics._scores.exact.numba_kernels.radix_sort`; a batch of 1e4: 2.4x
    faster), else, and for one holding NaN or -0.0, by numpy. O(n) / O(n log n)."""
    n = v.shape[0]
    if n <= _RADIX_MAX and v.dtype == np.float64 and v.flags.c_contiguous and v.flags.writeable:
        fast = kernels_at(n, "sort")
        if fast is not None and fast.radix_sort(v):
            return
    v.sort()


def sorted_batch(vs: list[np.ndarray], ws: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray | None]:
    """Concatenate queued arrays of one group and sort them (with their weights). Unweighted,
    ``vs`` is consumed (see :func:`concat_owned`)."""
    if not vs:
        return np.zeros(0), None
    if all(w is None for w in ws):
        # The queued arrays are this state's own copies (made by ``prepare``): sort in place.
        v = concat_owned(vs) if len(vs) > 1 else vs[0]
        sort_batch(v)
        return v, None
    v = np.concatenate(vs) if len(vs) > 1 else vs[0]
    w = ws[0] if len(ws) == 1 and ws[0] is not None else np.concatenate(
        [np.ones(a.shape[0]) if b is None else b for a, b in zip(vs, ws, strict=True)])
    return stable_sort_with(v, w)


def merge_many(
    items: list[tuple[np.ndarray, np.ndarray | None]],
) -> tuple[np.ndarray, np.ndarray | None]:
    """Merge several sorted runs (with optional weights) into one sorted run."""
    items = [it for it in items if it[0].shape[0]]
    if not items:
        return np.zeros(0), None
    if len(items) == 1:
        return items[0]
    vs = [v for v, _ in items]
    ws = [w for _, w in items]
    return sorted_batch(vs, ws)


def rank2(lst: list[float], x: float) -> int:
    """2 * #(elements < x) + #(elements == x) of a sorted list: ``x``'s doubled Mann-Whitney
    count against it (the right bisect only when ``x`` is held). O(log n)."""
    i = bisect_left(lst, x)
    return i + bisect_right(lst, x, i) if i < len(lst) and lst[i] == x else 2 * i
