"""The sorted score buffer shared by every exact ranking metric (SPEC section 3).

Layout
------
The state is a grid of *groups*: K columns (binary: 1; multiclass: one per class, one-vs-rest;
multilabel: one per label) times G groups per column. In the default layout G = 2: group 1 holds
the scores (of that column) of the samples that are positive for the column, group 0 those of the
negatives. For one-vs-one AUROC (``by_class=True``, multiclass only) G = C: group k of column c
holds column-c scores of the samples of true class k, and the positive group of column c is c.

Each group keeps its scores at their input precision (float16/32/64; integer scores become
float64) as a few sorted numpy runs of geometrically decreasing size (an LSM layout: a new run is
merged into the last one while it is at least 1/4 of its size, so there are O(log n) runs), plus
optional per-sample weights with their cumulative sums. Runs of 256k or more also keep a coarse
index (every 64th value, 1/64 of the run) that speeds up ranking needles in them. Samples folded
in one at a time go to a ``sortedcontainers.SortedList`` tail (at most 4096, then it becomes a
run). Labels need no storage: the group says what they are.

Alongside, ``u2[c, g]`` is twice the Mann-Whitney statistic of column c's positives against group
g (a tied pair counts 1/2, so 2U is an exact integer for unit weights; with float weights it is a
float): ``u2[c, g] = sum_{p, n} w_p w_n (2 [s_p > s_n] + [s_p = s_n])``. AUROC (one-vs-rest or
one-vs-one) is then an O(1) read: ``sum_g u2[c, g] / (2 P_c N_c)``. Unweighted, ``u2`` is int64
until a column could hold about 3e9 samples, then Python ints: exact at any size (``_u2_counter``).

Complexity
----------
* ``update`` (``prepare`` + ``apply``): validation and one split of the batch into groups (a few
  vectorised passes, O(n)); ``apply`` only queues the copies (O(1)). A single sample given as
  scalars takes a pure-Python path and costs one tuple append.
* The queue is folded in lazily, on the next read: the queued scores of each group are sorted once
  (O(m log m)), ranked against the stored runs of the opposite groups (O(m log n) per run,
  O(log n) runs) to bring ``u2`` up to date, and pushed as a new run (amortised O(log(n/m)) merge
  passes per element, each a linear merge of two sorted runs). Reading after every batch
  therefore never re-sorts the stored scores. A few queued single samples are folded one by one
  instead: a bisect per run and a SortedList insertion, O(log n) each, so ``update`` + ``compute``
  per sample (river style) costs microseconds.
* ``subtract(other)`` (sliding windows) removes samples held by ``other`` and folds the queue in
  the same pass: the changes to ``u2`` are one signed search per stored run, and removed scores
  become tombstones (a small sorted structure subtracted from every count) purged in one O(n)
  pass when they reach max(1024, n/32) -- amortised O(log n) per removed sample, no re-sort.
  Runs shorter than 1024 always merge with the next one pushed, so a stream of small batches
  does not pile up runs to search. A binary window's expired rows come in through
  ``slide_rows`` (trusted rows: no validation, no scratch state); a binary state of at most
  ``_FLAT_MAX`` samples fed small batches switches to *list mode* (each group one sorted plain
  Python list, updated sample by sample with C bisects: no numpy call per batch), see
  ``SortedScores._flat_slide``.
* Memory: one score per sample and column (8 bytes for float64 scores, 4 for float32), plus 16
  bytes per sample once non-unit weights appear. While a batch is queued its copy adds the same
  again. Samples of weight 0 are dropped (as scikit-learn drops them).

Persistence stores, for every group in (column, group) order, its scores as one sorted run
(``values`` concatenated, ``offsets`` delimiting the groups) and, if any weight differed from 1,
``weights``. ``u2`` is derived and recomputed on load, so an untrusted file cannot make it
inconsistent with the scores.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right, insort
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
from sortedcontainers import SortedList

from ._base import states_trusted
from ._load_checks import check_total, reserve
from ._sort_kernels import run_starts, stable_sort_with
from ._state import State
from ._u2_counter import as_python, counter_copy, exact_u2
from ._validation import (
    as_numpy,
    check_binary_labels,
    check_class_labels,
    check_multilabel_batch,
    check_offsets,
    check_scores,
    check_weights,
    first_bad,
    is_scalar,
    one_label,
    one_score,
    one_weight,
)

__all__ = ["SortedScores", "count2", "delete_sorted", "merge_sorted"]

_PY_SCALARS = (int, float, bool)
#: Entries :meth:`SortedScores.arrays` adds inside ``trusted_states()`` (never written to files:
#: ``load_arrays`` outside that block rejects them as unexpected arrays).
_TRUSTED_U2 = "trusted.u2"
_TRUSTED_DTYPE = "trusted.dtype"
_FLOAT_KINDS = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)}


def _score_dtype(arr: np.ndarray) -> np.ndarray:
    """Keep float16/32/64 scores as they are; anything else (ints, bools) becomes float64."""
    if arr.dtype in _FLOAT_KINDS:
        return arr
    return arr.astype(np.float64)


def _cumw(w: np.ndarray) -> np.ndarray:
    """Cumulative weights with a leading 0 (``cw[i]`` = weight of the first i elements)."""
    out = np.empty(w.shape[0] + 1)
    out[0] = 0.0
    np.cumsum(w, out=out[1:])
    return out


#: Block size of the coarse index kept for large runs, and the run size from which it pays off.
_BLOCK = 64
_COARSE_MIN = 1 << 18
#: A new run is merged into the last one while it is at least 1/_RATIO of its size; for a group
#: searched by over _BUSY times more new samples than it receives, 1/_RATIO_BUSY.
_RATIO = 2
_RATIO_BUSY = 16
_BUSY = 2
#: Up to this many unweighted needles, :func:`count2` searches both sides directly.
_SMALL_NEEDLES = 256
#: Runs smaller than this always merge with the next run pushed (small batches then cost one
#: short merge, not one more run to search on every later fold).
_MIN_RUN = 1024
#: Samples folded one at a time go to a SortedList tail of at most this many before becoming a run.
_TAIL_MAX = 4096
#: A read folds at most this many queued scalar samples one by one (more: as one batch).
_SCALAR_FOLD_MAX = 64
#: Queued batches (or single samples) folded in without waiting for a read.
_MAX_QUEUED = 4096
#: List mode of :meth:`SortedScores.remove_groups` (a small binary window fed small batches):
#: states of at most _FLAT_MAX samples go to list mode after _STREAK consecutive batches of at
#: most _PER_SAMPLE_MAX changed (added + removed) samples, and back to runs on a batch of more
#: than _LIST_MAX.
_FLAT_MAX = 1 << 16
_PER_SAMPLE_MAX = 40
_LIST_MAX = 160
_STREAK = 4


def coarse_index(values: np.ndarray) -> np.ndarray | None:
    """The last element of every full block of ``_BLOCK`` (None for runs too small to need it)."""
    if values.shape[0] < _COARSE_MIN:
        return None
    return values[_BLOCK - 1 :: _BLOCK].copy()


def rank_left(values: np.ndarray, coarse: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """``np.searchsorted(values, x, "left")``, faster on large runs.

    numpy's search walks each needle's path alone, so on a run larger than the cache every
    needle waits for one memory miss after another. Here the first levels go through the small,
    cache-resident ``coarse`` index (1/64 of the run), and the last six levels are done for all
    needles at once, level by level (branch-free lower bound inside a block of 64): the loads of
    one level are independent, so their misses overlap. Same O(log n) per needle.
    """
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
    left = rank_left(values, coarse, x)
    probe = np.minimum(left, n - 1)
    tie = values[probe] == x
    n_tie = int(np.count_nonzero(tie))
    if 2 * n_tie > x.shape[0]:
        right = np.searchsorted(values, x, "right")
    elif n_tie:
        right = left.copy()
        right[tie] = np.searchsorted(values, x[tie], "right")
    else:
        right = left
    if cw is None:
        if xw is None:
            return int(left.sum(dtype=np.int64)) + int(right.sum(dtype=np.int64))
        if xw.dtype.kind == "i":  # integer multiplicities: an exact int
            return int(xw @ left) + int(xw @ right)
        return float(xw @ left.astype(np.float64)) + float(xw @ right.astype(np.float64))
    per = cw[left]
    per += per if right is left else cw[right]  # no tie: L = R, one gather (exact: 2x)
    return float(per.sum()) if xw is None else float(xw @ per)


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


def _signed(add: np.ndarray, remove: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Needles ``add`` (sign +1) then ``remove`` (sign -1) as one array with int64 signs."""
    if remove.shape[0] == 0:
        return add, np.ones(add.shape[0], dtype=np.int64)
    if add.shape[0] == 0:
        return remove, np.full(remove.shape[0], -1, dtype=np.int64)
    sign = np.ones(add.shape[0] + remove.shape[0], dtype=np.int64)
    sign[add.shape[0]:] = -1
    return np.concatenate([add, remove]), sign


class _FlatList:
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


class _Group:
    """One group's scores: sorted runs (largest first) with optional weights and their cumsums."""

    __slots__ = ("runs", "wts", "cws", "coarse", "tail", "total", "dead")

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []
        self.wts: list[np.ndarray | None] = []
        self.cws: list[np.ndarray | None] = []
        self.coarse: list[np.ndarray | None] = []
        # unit-weight float64 samples folded one at a time (a small window's list mode: all of
        # the group's samples, in a _FlatList)
        self.tail: SortedList | _FlatList | None = None
        self.total: int | float = 0  # weight of the live samples (runs + tail - dead)
        # Removed unit-weight samples still physically present in ``runs``/``tail`` (tombstones;
        # unweighted groups only): every count subtracts them, ``consolidate`` purges them.
        self.dead: _Group | None = None

    def count2_scalar(self, x: float) -> int | float:
        """:func:`count2` for one unit-weight needle: O(log n) per run, no temporaries."""
        s: int | float = 0
        for v, cw in zip(self.runs, self.cws, strict=True):
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
        if len(self.tail) >= _TAIL_MAX and type(self.tail) is not _FlatList:  # list mode stays
            self.flush_tail()

    def flush_tail(self) -> None:
        """Turn the tail into a sorted run (a list-mode tail is dropped: later single samples
        go to a fresh ``SortedList``)."""
        if type(self.tail) is _FlatList:
            tail, self.tail = self.tail, None
            if tail:
                self.push(np.array(tail.a, dtype=np.float64), None, 0)
        elif self.tail:
            v = np.fromiter(self.tail, dtype=np.float64, count=len(self.tail))
            self.tail.clear()
            self.push(v, None, 0)

    def count2(self, x: np.ndarray, xw: np.ndarray | None) -> int | float:
        """See :func:`count2`, summed over the runs; ``x`` must be sorted.

        A run much smaller than the needles is searched the other way round (its elements in
        the needles, a cache-resident haystack), using sum_x (L_v + R_v)(x) = 2 W_v W_x -
        sum_v (L_x + R_x)(v).
        """
        s: int | float = 0
        x_cw: np.ndarray | None = None
        x_total: int | float = x.shape[0] if xw is None else float(xw.sum())
        for v, w, cw, co in zip(self.runs, self.wts, self.cws, self.coarse, strict=True):
            if 4 * v.shape[0] < x.shape[0]:
                if xw is not None and x_cw is None:
                    x_cw = _cumw(xw)
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
            self.dead = _Group()
        self.dead.push(values, None, values.shape[0])
        self.total -= values.shape[0]
        live = self.total
        if self.dead.total >= min(live / 4, max(_MIN_RUN, live / 32)):
            self.consolidate()

    def push(self, v: np.ndarray, w: np.ndarray | None, total: int | float, ratio: int = 0) -> None:
        """Add a sorted run and restore the geometric shape: merge it into the last run while it
        is at least 1/``ratio`` of its size (default ``_RATIO``; a larger ratio means fewer runs
        to search and more merging)."""
        if v.shape[0] == 0:
            return
        ratio = ratio or _RATIO
        self.total += total
        runs, wts, cws, coarse = self.runs, self.wts, self.cws, self.coarse
        while runs and (ratio * v.shape[0] >= runs[-1].shape[0] or runs[-1].shape[0] < _MIN_RUN):
            a, aw = runs.pop(), wts.pop()
            cws.pop()
            coarse.pop()
            v, w = merge_sorted(a, aw, v, w)
        runs.append(v)
        wts.append(w)
        cws.append(None if w is None else _cumw(w))
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
        self.cws = [None if w is None else _cumw(w)]
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


_Parts = list[tuple[int, int, np.ndarray, "np.ndarray | None"]]


class SortedScores(State):
    """Exact sorted score buffer (see the module docstring)."""

    def __init__(
        self,
        task: str,
        num_classes: int | None = None,
        ignore_index: int | None = None,
        by_class: bool = False,
    ) -> None:
        if task not in ("binary", "multiclass", "multilabel"):
            raise ValueError(f"task: must be binary, multiclass or multilabel, got {task!r}")
        if by_class and task != "multiclass":
            raise ValueError("by_class: only meaningful for multiclass scores")
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer))
        ):
            raise ValueError(f"ignore_index: must be an int or None, got {ignore_index!r}")
        self.task = task
        self.num_classes = None if task == "binary" else int(num_classes)  # type: ignore[arg-type]
        self.ignore_index = None if ignore_index is None else int(ignore_index)
        self.by_class = bool(by_class)
        self.n_columns = 1 if task == "binary" else int(num_classes)  # type: ignore[arg-type]
        self.n_groups = self.n_columns if self.by_class else 2
        reserve(384.0 * self.n_columns * self.n_groups, f"num_classes={self.num_classes}")
        self._init_storage()

    def _init_storage(self) -> None:
        k, g = self.n_columns, self.n_groups
        self._groups = [[_Group() for _ in range(g)] for _ in range(k)]
        self._u2: np.ndarray = np.zeros((k, g), dtype=np.int64)
        self._room = 0  # samples that can be added before u2 must be checked (_u2_counter)
        self._weighted = False
        self._dtype: np.dtype | None = None
        self._pending: list[_Parts] = []
        self._scalars: list[tuple[int, float, float | None]] = []
        self._small_streak = 0  # consecutive small flat slides (see ``_flat_slide``)

    def pos_group(self, column: int) -> int:
        """Index of the positive group of ``column``."""
        return column if self.by_class else 1

    def key(self) -> Hashable:
        return ("sorted_scores", self.task, self.num_classes, self.ignore_index, self.by_class)

    # -- preparing a batch (validation; never mutates) ---------------------------------------
    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        if self.task == "binary" and (
            (type(y_true) in _PY_SCALARS and type(y_score) in _PY_SCALARS)
            or (is_scalar(y_true) and is_scalar(y_score))
        ):
            return self._prepare_one(y_true, y_score, sample_weight)
        y = as_numpy(y_true, "y_true")
        s = as_numpy(y_score, "y_score")
        if self.task == "multilabel":
            return self._prepare_multilabel(y, s, sample_weight)
        if y.ndim == 0:  # one sample: a label with a score (binary) or a row of scores
            y = y.reshape(1)
            s = s.reshape(1, -1) if self.task == "multiclass" else s.reshape(1)
            if sample_weight is not None and is_scalar(sample_weight):
                sample_weight = [sample_weight]
        if y.ndim != 1:
            raise ValueError(f"y_true: expected a 1-D array of labels, got shape {y.shape}")
        n = y.shape[0]
        if self.task == "binary":
            if s.shape != (n,):
                raise ValueError(f"y_score: expected shape ({n},) like y_true, got {s.shape}")
        else:
            c = self.n_columns
            if s.shape != (n, c):
                raise ValueError(f"y_score: expected scores of shape ({n}, {c}), got {s.shape}")
        w = check_weights(sample_weight, n)
        if self.task == "binary":
            y = check_binary_labels(y, "y_true", self.ignore_index)
        else:
            y = check_class_labels(y, "y_true", self.n_columns, self.ignore_index)
        s = _score_dtype(check_scores(s, "y_score"))
        if n == 0:
            return None
        keep = None
        if self.ignore_index is not None:
            keep = y != self.ignore_index
        w, keep = _unit_or_positive(w, keep)
        if keep is not None:
            y, s = y[keep], s[keep]
            w = None if w is None else w[keep]
        if y.shape[0] == 0:
            return None
        if self.task == "binary":
            pos = y.astype(bool, copy=False)
            neg = ~pos
            return [  # compress: a third faster than boolean indexing
                (0, 0, s.compress(neg), None if w is None else w.compress(neg)),
                (0, 1, s.compress(pos), None if w is None else w.compress(pos)),
            ]
        return self._split_multiclass(y.astype(np.intp, copy=False), s, w)

    def _split_multiclass(self, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> _Parts:
        c = self.n_columns
        parts: _Parts = []
        if self.by_class:
            order = np.argsort(y, kind="stable")
            counts = np.bincount(y, minlength=c)
            ends = np.cumsum(counts)
            block = s[order].T.copy()  # (C, n): column-major copy, rows grouped by class
            wb = None if w is None else w[order]
            for k in range(c):
                lo, hi = int(ends[k] - counts[k]), int(ends[k])
                if hi == lo:
                    continue
                for col in range(c):
                    parts.append((col, k, block[col, lo:hi], None if wb is None else wb[lo:hi]))
            return parts
        onehot = y[None, :] == np.arange(c)[:, None]  # (C, n)
        st = np.ascontiguousarray(s.T)  # one copy; boolean selections then read contiguous rows
        for col in range(c):  # compress: a third faster than boolean indexing
            m = onehot[col]
            nm = ~m
            pos_v, neg_v = st[col].compress(m), st[col].compress(nm)
            parts.append((col, 1, pos_v, None if w is None else w.compress(m)))
            parts.append((col, 0, neg_v, None if w is None else w.compress(nm)))
        return parts

    def _prepare_multilabel(self, y: np.ndarray, s: np.ndarray, sample_weight: Any) -> Any:
        num_labels = self.n_columns
        y, s, w = check_multilabel_batch(y, s, sample_weight, num_labels, "y_score")
        n = y.shape[0]
        y = check_binary_labels(y, "y_true", self.ignore_index)
        s = _score_dtype(check_scores(s, "y_score"))
        if n == 0:
            return None
        w, keep = _unit_or_positive(w, None)
        if keep is not None:
            y, s = y[keep], s[keep]
            w = None if w is None else w[keep]
        yt, st = y.T, s.T
        parts: _Parts = []
        for col in range(num_labels):
            lab = yt[col]
            if self.ignore_index is not None:
                pos = lab == 1
                neg = lab == 0
            else:
                pos = lab.astype(bool, copy=False)
                neg = ~pos
            parts.append((col, 1, st[col][pos], None if w is None else w[pos]))
            parts.append((col, 0, st[col][neg], None if w is None else w[neg]))
        return parts

    def _prepare_one(self, y: Any, p: Any, sample_weight: Any) -> Any:
        """The per-sample path: plain Python, no numpy (about a microsecond). The same rules and
        messages as a batch (the shared ``one_*`` helpers fall back to the array checks)."""
        w = None if sample_weight is None else one_weight(sample_weight)
        label = one_label(y, "y_true", None, self.ignore_index)
        score = one_score(p, "y_score")
        if label is None or w == 0.0:
            return None
        return ("one", label, score, None if w == 1.0 else w)

    # -- applying (never raises) ---------------------------------------------------------------
    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        if type(delta) is tuple:
            self._scalars.append(delta[1:])
            if len(self._scalars) >= _MAX_QUEUED:
                self._flush()  # bound the queue's Python overhead when nothing is ever read
            return
        self._pending.append(delta)
        if len(self._pending) >= _MAX_QUEUED:
            self._flush()

    def _flush(self) -> None:
        """Fold the queued batches and samples in: sort them per group, update ``u2``, push runs."""
        if not self._pending and not self._scalars:
            return
        if (
            not self._pending
            and len(self._scalars) <= _SCALAR_FOLD_MAX
            and (self._dtype is None or self._dtype == np.float64)
            and all(w is None for _, _, w in self._scalars)
        ):
            self._fold_scalars()
            return
        k, g = self.n_columns, self.n_groups
        bucket: list[list[list[np.ndarray]]] = [[[] for _ in range(g)] for _ in range(k)]
        wbucket: list[list[list[np.ndarray | None]]] = [[[] for _ in range(g)] for _ in range(k)]
        pending, self._pending = self._pending, []
        for parts in pending:
            for col, grp, v, w in parts:
                if v.shape[0]:
                    bucket[col][grp].append(v)
                    wbucket[col][grp].append(w)
        del pending
        if self._scalars:
            scalars, self._scalars = self._scalars, []
            for grp in (0, 1):
                vals = [v for (gg, v, _) in scalars if gg == grp]
                if not vals:
                    continue
                arr = np.asarray(vals, dtype=np.float64)
                sw = [1.0 if ww is None else ww for (gg, _, ww) in scalars if gg == grp]
                warr = None if all(ww is None for (gg, _, ww) in scalars if gg == grp) else np.asarray(sw)
                bucket[0][grp].append(arr)
                wbucket[0][grp].append(warr)
        new: list[list[tuple[np.ndarray, np.ndarray | None]]] = []
        for col in range(k):
            row = []
            for grp in range(g):
                vs, ws = bucket[col][grp], wbucket[col][grp]
                bucket[col][grp] = []
                row.append(_sorted_batch(vs, ws))
            new.append(row)
        self._fold(new)

    def _fold_scalars(self) -> None:
        """The per-sample read path: each queued unit-weight sample is ranked against the other
        class (O(log n) per run, a bisect in the SortedList tail) and inserted into its class's
        tail. A read after every sample therefore costs microseconds, not a batch fold."""
        scalars, self._scalars = self._scalars, []
        neg, pos = self._groups[0]
        self._u2, self._room = exact_u2(self._u2, self._groups, len(scalars), self._room)
        u2 = self._u2
        for grp, x, _ in scalars:
            if grp == 1:
                u2[0, 0] += neg.count2_scalar(x)
                pos.add_scalar(x)
            else:
                u2[0, 0] += 2 * pos.total - pos.count2_scalar(x)
                neg.add_scalar(x)
        if self._dtype is None:
            self._dtype = np.dtype(np.float64)

    def _fold(self, new: list[list[tuple[np.ndarray, np.ndarray | None]]],
              inner_u2: np.ndarray | None = None) -> None:
        """Add sorted per-group arrays ``new[col][grp] = (values, weights|None)``; update ``u2``.
        ``inner_u2``: the pairs within ``new`` when already known (a merged state's own ``u2``),
        which saves counting them again."""
        for groups in self._groups:
            for group in groups:
                group.flush_tail()
        dtypes = {v.dtype for row in new for v, _ in row if v.shape[0]}
        if not dtypes:
            return
        target = np.result_type(*dtypes) if self._dtype is None else np.result_type(self._dtype, *dtypes)
        if self._dtype is not None and target != self._dtype:
            for groups in self._groups:
                for group in groups:
                    group.promote(target)
        self._dtype = target
        if not self._weighted and any(w is not None for row in new for _, w in row):
            self._purge_tombstones()  # tombstones are unit samples of unweighted groups only
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)
        n = sum(v.shape[0] for row in new for v, _ in row)
        self._u2, self._room = exact_u2(self._u2, self._groups, n, self._room)
        u2 = self._u2
        for col in range(self.n_columns):
            p = self.pos_group(col)
            row = [(v.astype(target, copy=False), w) for v, w in new[col]]
            pv, pw = row[p]
            old_p = self._groups[col][p]
            totals = [(v.shape[0] if w is None else float(w.sum())) for v, w in row]
            for grp in range(self.n_groups):
                if grp == p:
                    continue
                nv, nw = row[grp]
                d: int | float = 0
                if pv.shape[0]:
                    d += self._groups[col][grp].count2(pv, pw)
                if nv.shape[0]:
                    d += 2 * old_p.total * totals[grp] - old_p.count2(nv, nw)
                    if pv.shape[0] and inner_u2 is None:
                        d += count2(nv, None if nw is None else _cumw(nw), pv, pw, coarse_index(nv))
                if inner_u2 is not None:
                    d += as_python(inner_u2[col, grp])
                u2[col, grp] += d
            # Balance merging against searching: a group whose runs are searched by many more
            # needles (the other groups' new samples) than it receives is kept in fewer runs.
            n_new = sum(v.shape[0] for v, _ in row)
            for grp in range(self.n_groups):
                v, w = row[grp]
                busy = n_new - v.shape[0] > _BUSY * v.shape[0]
                self._groups[col][grp].push(v, w, totals[grp], _RATIO_BUSY if busy else _RATIO)

    # -- reads (call under the owner's lock) ---------------------------------------------------
    def u2(self) -> np.ndarray:
        """``u2[c, g]``: 2 x Mann-Whitney U of column c's positives vs group g (live; read only)."""
        self._flush()
        return self._u2

    def binary_stat(self) -> tuple[int | float, int | float, int | float]:
        """(2U, P, N) of a binary state, as exact ints for unit weights. O(1) once folded."""
        self._flush()
        neg, pos = self._groups[0]
        return as_python(self._u2[0, 0]), pos.total, neg.total

    def totals(self) -> np.ndarray:
        """Total weight of every group, shape (K, G)."""
        self._flush()
        return np.array([[float(grp.total) for grp in row] for row in self._groups], dtype=np.float64)

    def group(self, column: int, grp: int) -> tuple[np.ndarray, np.ndarray | None]:
        """One group's scores as a single sorted run (consolidated in place)."""
        self._flush()
        return self._groups[column][grp].consolidate()

    def column(self, column: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]:
        """(positive scores, weights, negative scores, weights) of one column, each sorted."""
        self._flush()
        p = self.pos_group(column)
        pv, pw = self.group(column, p)
        negs = [self.group(column, g) for g in range(self.n_groups) if g != p]
        nv, nw = _merge_many(negs)
        return pv, pw, nv, nw

    def pooled(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]:
        """Positives and negatives of every column pooled (micro averaging), each sorted."""
        self._flush()
        pos, neg = [], []
        for col in range(self.n_columns):
            pv, pw, nv, nw = self.column(col)
            pos.append((pv, pw))
            neg.append((nv, nw))
        pv, pw = _merge_many(pos)
        nv, nw = _merge_many(neg)
        return pv, pw, nv, nw

    def check_invariants(self) -> None:
        """Assert every internal invariant (for tests): runs sorted and geometric, totals and
        cumulative weights consistent, ``u2`` equal to a recount from scratch. O(n log n)."""
        self._flush()
        for row in self._groups:
            for grp in row:
                sizes = [r.shape[0] for r in grp.runs]
                assert all(min(_RATIO, _RATIO_BUSY) * b < a for a, b in zip(sizes, sizes[1:], strict=False))
                total: int | float = 0
                if grp.tail is not None:
                    grp.tail._check()
                    assert len(grp.tail) < max(_TAIL_MAX, _FLAT_MAX + 1)
                for v, w, cw, co in zip(grp.runs, grp.wts, grp.cws, grp.coarse, strict=True):
                    assert v.shape[0] > 0 and not (v[1:] < v[:-1]).any()
                    ref = coarse_index(v)
                    assert (co is None) == (ref is None)
                    if co is not None and ref is not None:
                        assert np.array_equal(co, ref)
                    assert (w is None) == (cw is None)
                    if w is not None and cw is not None:
                        assert w.shape == v.shape and cw.shape[0] == v.shape[0] + 1
                    total += v.shape[0] if w is None else float(w.sum())
                total += len(grp.tail) if grp.tail else 0
                if grp.dead is not None:
                    assert not self._weighted
                    total -= grp.dead.total
                assert abs(total - grp.total) <= 1e-9 * max(1.0, abs(total))
        fresh = SortedScores(self.task, self.num_classes, self.ignore_index, self.by_class)
        fresh._fold(
            [
                [(v.copy(), None if w is None else w.copy()) for v, w in (g.consolidate() for g in row)]
                for row in _copy_groups(self._groups)
            ]
        )
        np.testing.assert_allclose(fresh._u2, self._u2, rtol=1e-12, atol=1e-9)
        if not self._weighted:
            assert self._u2.dtype in (np.int64, object)
            assert fresh._u2.tolist() == self._u2.tolist()

    @property
    def is_weighted(self) -> bool:
        self._flush()
        return self._weighted

    # -- generic state protocol -------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        self._flush()
        values, offsets, weights = [], [0], []
        for row in self._groups:
            for grp in row:
                v, w = grp.consolidate()
                values.append(v)
                offsets.append(offsets[-1] + v.shape[0])
                weights.append(np.ones(v.shape[0]) if w is None else w)
        dtype = self._dtype if self._dtype is not None else np.dtype(np.float64)
        out: dict[str, Any] = {
            "values": np.concatenate(values).astype(dtype) if values else np.zeros(0),
            "offsets": np.asarray(offsets, dtype=np.int64),
        }
        if self._weighted:
            out["weights"] = np.concatenate(weights) if weights else np.zeros(0)
        if states_trusted():  # pickling / in-process copies: carry the derived counts along
            out[_TRUSTED_U2] = self._u2.copy()
            out[_TRUSTED_DTYPE] = "" if self._dtype is None else self._dtype.str
        return out

    def _load_trusted(self, arrays: Mapping[str, Any]) -> None:
        """Restore a state written by :meth:`arrays` under ``trusted_states()`` as given: one
        sorted run per group and the stored ``u2``, no validation, no re-ranking. O(n) (a copy
        of the scores, plus the cumulative weights and coarse index of each run)."""
        values = np.asarray(arrays["values"])
        offsets = np.asarray(arrays["offsets"], dtype=np.int64)
        weights = arrays.get("weights")
        self._init_storage()
        for col in range(self.n_columns):
            for grp in range(self.n_groups):
                i = col * self.n_groups + grp
                lo, hi = int(offsets[i]), int(offsets[i + 1])
                v = values[lo:hi].copy()
                w = None if weights is None else np.asarray(weights[lo:hi], dtype=np.float64).copy()
                self._groups[col][grp].push(v, w, v.shape[0] if w is None else float(w.sum()))
        self._weighted = weights is not None
        self._u2 = counter_copy(arrays[_TRUSTED_U2], self._weighted)
        dtype = arrays[_TRUSTED_DTYPE]
        self._dtype = np.dtype(dtype) if dtype else None

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        if _TRUSTED_U2 in arrays and states_trusted():
            self._load_trusted(arrays)
            return
        extra = set(arrays) - {"values", "offsets", "weights"}
        if extra:
            raise ValueError(f"state: unexpected arrays {sorted(extra)}")
        for name in ("values", "offsets"):
            if name not in arrays:
                raise ValueError(f"state: missing array {name!r}")
        values = np.asarray(arrays["values"])
        offsets = np.asarray(arrays["offsets"])
        if values.ndim != 1 or values.dtype not in _FLOAT_KINDS:
            raise ValueError(
                f"state: array 'values' must be 1-D float16/32/64, got {values.dtype} {values.shape}"
            )
        if values.size and np.isnan(values).any():
            raise ValueError(f"state: array 'values' holds NaN at index {first_bad(np.isnan(values))}")
        ng = self.n_columns * self.n_groups
        offsets = check_offsets(offsets, "offsets", ng, values.shape[0], "values")
        weights = None
        if "weights" in arrays:
            weights = np.asarray(arrays["weights"])
            if weights.shape != values.shape or weights.dtype.kind not in "iuf":
                raise ValueError(
                    f"state: array 'weights' must match 'values' ({values.shape}), got {weights.shape}"
                )
            weights = weights.astype(np.float64)
            if weights.size and not (np.isfinite(weights).all() and (weights > 0).all()):
                raise ValueError("state: array 'weights' must be finite and > 0")
            check_total(weights, "weights")
        if values.shape[0] > 1:
            down = values[1:] < values[:-1]
            down[offsets[1:-1][(offsets[1:-1] > 0) & (offsets[1:-1] < values.shape[0])] - 1] = False
            if down.any():
                raise ValueError(
                    "state: array 'values' is not sorted within its groups "
                    f"(index {int(np.argmax(down)) + 1})"
                )
        new = []
        for col in range(self.n_columns):
            row = []
            for grp in range(self.n_groups):
                i = col * self.n_groups + grp
                lo, hi = int(offsets[i]), int(offsets[i + 1])
                row.append((values[lo:hi].copy(), None if weights is None else weights[lo:hi].copy()))
            new.append(row)
        self._init_storage()
        self._fold(new)
        if weights is not None and not self._weighted:
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)

    def merge(self, other: State) -> None:
        assert isinstance(other, SortedScores)
        other._flush()
        self._flush()
        new = [[grp.consolidate() for grp in row] for row in other._groups]
        new = [[(v.copy(), None if w is None else w.copy()) for v, w in row] for row in new]
        self._fold(new, other._u2.copy())  # the pairs within ``other``: counted in its u2
        if other._weighted and not self._weighted:
            self._purge_tombstones()
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)

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
        pushed as a run and the removed ones tombstoned (see ``_Group.remove``), purged in one
        O(n) pass once they reach max(1024, n/32) of a group, so AUROC reads stay O(1) and a
        sliding window costs amortised O(log n) per sample. ``other`` is read, not changed.
        """
        if not isinstance(other, SortedScores) or other.key() != self.key():
            raise ValueError("subtract: the other state has a different configuration")
        self.remove_groups(other._sample_groups())  # NotImplementedError if weighted

    def split_trusted(self, y: np.ndarray, s: np.ndarray) -> list[list[np.ndarray]]:
        """Rows that this (binary) state's ``prepare`` already accepted once -- a window's
        expired rows -- as sorted per-group scores ``[[negatives, positives]]``, without
        validating them again: rows labelled ``ignore_index`` are dropped, scores take the
        state's score dtype. O(m log m), a handful of numpy calls."""
        assert self.task == "binary"
        s = _score_dtype(s)
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
        neg_g, pos_g = self._groups[0]
        if (type(neg_g.tail) is not _FlatList or type(pos_g.tail) is not _FlatList or neg_g.runs
                or pos_g.runs or self._scalars or self._dtype != np.float64):
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
        ``_FLAT_MAX`` samples in all (a small window) take the flat path: the queued and removed
        scores are counted against the one run of the other group (two searches each) and
        inserted into / deleted from their group's run in place of runs and tombstones, so a
        window of W <= ``_FLAT_MAX`` costs about 30 numpy calls per batch and O(m log W + W)
        (a memmove) however small the batch."""
        if (self._weighted or any(w is not None for parts in self._pending for *_, w in parts)
                or any(w is not None for *_, w in self._scalars)):
            self._flush()
            raise NotImplementedError("weighted ranking buffers are rebuilt, not subtracted")
        groups = self._groups
        queued = self._queued_groups()
        for col in range(self.n_columns):
            for g in range(self.n_groups):
                if rem[col][g].shape[0] > groups[col][g].total + queued[col][g].shape[0]:
                    self._flush()
                    raise ValueError("subtract: the other state holds samples this one does not")
        self._pending, self._scalars = [], []
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
            xp, sp = _signed(add[col][p], rv[col][p])
            for g in range(self.n_groups):
                if g == p:
                    continue
                xn, sn = _signed(add[col][g], rv[col][g])
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

        In list mode each group is one sorted plain Python list (a :class:`_FlatList` tail, no
        runs): every added or removed score is a C bisect in the other group (two on ties) and
        one insertion or deletion (a memmove of pointers), O(log W) comparisons, no numpy call
        -- cheaper than the generic path's few dozen numpy calls when a batch changes a handful
        of samples. After ``_STREAK`` consecutive batches of at most ``_PER_SAMPLE_MAX`` changed
        samples a state of at most ``_FLAT_MAX`` samples goes to list mode (an O(W)
        conversion); a batch of more than ``_LIST_MAX`` changes takes it back to runs (O(W)).
        """
        neg_g, pos_g = self._groups[0]
        an, ap = add
        rn, rp = rem
        n_add = an.shape[0] + ap.shape[0]
        changes = n_add + rn.shape[0] + rp.shape[0]
        listed = type(neg_g.tail) is _FlatList and type(pos_g.tail) is _FlatList \
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
        if self._small_streak < _STREAK or size > _FLAT_MAX or not f64:
            return False
        for grp in (neg_g, pos_g):
            v, _ = grp.consolidate()  # flushes the tail, purges tombstones
            grp.tail = _FlatList(v.tolist())
            grp.runs, grp.wts, grp.cws, grp.coarse = [], [], [], []
        self._slide_listed(an, ap, rn, rp)
        return True

    def _slide_listed(self, an: np.ndarray, ap: np.ndarray, rn: np.ndarray, rp: np.ndarray) -> None:
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
        # u2 counts 2 per (pos > neg) pair and 1 per tie: see _rank2
        try:
            for an, ap in adds:
                for x in ap:
                    u2 += _rank2(ln, x)
                    insort(lp, x)
                npos = len(lp)
                for x in an:
                    u2 += 2 * npos - _rank2(lp, x)
                    insort(ln, x)
            nn, npos = len(ln), len(lp)
            for x in rp:
                j = bisect_left(lp, x)
                if j == npos or lp[j] != x:
                    raise ValueError(f"remove: positive score {x!r} is not held")
                del lp[j]
                npos -= 1
                u2 -= _rank2(ln, x)
            for x in rn:
                j = bisect_left(ln, x)
                if j == nn or ln[j] != x:
                    raise ValueError(f"remove: negative score {x!r} is not held")
                del ln[j]
                nn -= 1
                u2 -= 2 * npos - _rank2(lp, x)
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

    def reset(self) -> None:
        self._init_storage()

    @property
    def nbytes(self) -> int:
        n = sum(grp.nbytes for row in self._groups for grp in row) + self._u2.nbytes
        for parts in self._pending:
            for _, _, v, w in parts:
                n += v.nbytes + (0 if w is None else w.nbytes)
        n += len(self._scalars) * (sys.getsizeof((0, 0.0, None)) + 32)
        return n


def _copy_groups(groups: list[list[_Group]]) -> list[list[_Group]]:
    out = []
    for row in groups:
        new_row = []
        for grp in row:
            g = _Group()
            g.runs, g.wts, g.cws, g.total = list(grp.runs), list(grp.wts), list(grp.cws), grp.total
            g.coarse = list(grp.coarse)
            g.tail = None if grp.tail is None else (
                _FlatList(grp.tail) if isinstance(grp.tail, _FlatList) else SortedList(grp.tail))
            g.dead = None if grp.dead is None else _copy_groups([[grp.dead]])[0][0]
            new_row.append(g)
        out.append(new_row)
    return out


def _unit_or_positive(
    w: np.ndarray | None, keep: np.ndarray | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Drop weights that are all 1 (unit mode) and rows of weight 0 (they change nothing)."""
    if w is None:
        return None, keep
    if keep is not None:
        if (w[keep] == 1.0).all():
            return None, keep
    elif (w == 1.0).all():
        return None, None
    zero = w == 0.0
    if zero.any():
        keep = ~zero if keep is None else keep & ~zero
    return w, keep


def _sorted_batch(vs: list[np.ndarray], ws: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray | None]:
    """Concatenate queued arrays of one group and sort them (with their weights)."""
    if not vs:
        return np.zeros(0), None
    if all(w is None for w in ws):
        # The queued arrays are this state's own copies (made by ``prepare``): sort in place.
        v = np.concatenate(vs) if len(vs) > 1 else vs[0]
        v.sort()
        return v, None
    v = np.concatenate(vs) if len(vs) > 1 else vs[0]
    w = ws[0] if len(ws) == 1 and ws[0] is not None else np.concatenate(
        [np.ones(a.shape[0]) if b is None else b for a, b in zip(vs, ws, strict=True)])
    return stable_sort_with(v, w)


def _merge_many(
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
    return _sorted_batch(vs, ws)


def _rank2(lst: list[float], x: float) -> int:
    """2 * #(elements < x) + #(elements == x) of a sorted list: ``x``'s doubled Mann-Whitney
    count against it (the right bisect only when ``x`` is held). O(log n)."""
    i = bisect_left(lst, x)
    return i + bisect_right(lst, x, i) if i < len(lst) and lst[i] == x else 2 * i
