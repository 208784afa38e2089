"""The sorted score buffer shared by every exact ranking metric (docs/definitions/ranking.md).

It implements :class:`~streammetrics._scores.protocol.ScoreState` (the protocol the ranking
metrics read). Its parts: batch validation in :mod:`streammetrics._scores.batches` (shared with
the bins), the sorted runs and counting kernels in :mod:`streammetrics._scores.exact.runs`, removal
for sliding windows in :mod:`streammetrics._scores.exact.slide`, saving, loading and merging in
:mod:`streammetrics._scores.exact.persist`, the queue of large batches in
:mod:`streammetrics._scores.exact.spill`; this module keeps the pair counts
``u2`` current and answers reads.

Layout
------
The state is a grid of *groups*: K columns (binary: 1; multiclass: one per class, one-vs-rest;
multilabel: one per label) times G groups per column. In the default layout G = 2: group 1 holds
the scores (of that column) of the samples that are positive for the column, group 0 those of the
negatives. For one-vs-one AUROC (``by_class=True``, multiclass only) G = C: group k of column c
holds column-c scores of the samples of true class k, and the positive group of column c is c.

Each group keeps its scores at their input precision (float16/32/64; integer scores become
float64) as a few sorted numpy runs of geometrically decreasing size (an LSM layout: a new run is
merged into the last one while it is at least 1/8 of its size -- 1/2 for single samples and
removals, 1/16 if searched far more than it grows: O(log n) runs), plus optional per-sample
weights with their cumulative sums. Runs of 256k or more also keep a coarse index (every 64th
value, 1/64 of the run) that speeds up ranking needles in them. Samples folded in one at a
time go to a ``sortedcontainers.SortedList`` tail (at most 4096, then it becomes a run). Labels
need no storage: the group says what they are.

Alongside, ``u2[c, g]`` is twice the Mann-Whitney statistic of column c's positives against group
g (a tied pair counts 1/2, so 2U is an exact integer for unit weights; with float weights it is a
float): ``u2[c, g] = sum_{p, n} w_p w_n (2 [s_p > s_n] + [s_p = s_n])``. AUROC (one-vs-rest or
one-vs-one) is then an O(1) read: ``sum_g u2[c, g] / (2 P_c N_c)``. ``u2`` is kept current
only once it has been read (``_u2_live``): until then folds skip the pair counting (an AP or
curve reader never pays for it), and the first read counts every stored pair once, O(n log n).
Unweighted, ``u2`` is int64 until a column could hold about 3e9 samples, then Python ints: exact
at any size (``u2_counter``).

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
  ``FLAT_MAX`` samples fed small batches switches to *list mode* (each group one sorted plain
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

import math
import sys
from collections.abc import Hashable
from typing import Any

import numpy as np

from streammetrics._scores.batches import Parts, ScoreBatches, check_layout
from streammetrics._scores.positive_counts import PositiveCounts
from streammetrics._scores.protocol import PairScores, ScoreState
from streammetrics._scores.thresholds import ThresholdCounts, counts_from_sorted

from .persist import BufferPersistence
from .runs import (
    BUSY,
    RATIO,
    RATIO_BUSY,
    RATIO_FOLD,
    TAIL_MAX,
    Group,
    coarse_index,
    copy_groups,
    count2,
    cumw,
    merge_many,
    sorted_batch,
)
from .slide import FLAT_MAX, SortedSlide
from .spill import SPILL_MIN, Spill, can_spill
from .u2_counter import as_python, exact_u2

#: A read folds at most this many queued scalar samples one by one (more: as one batch).
_SCALAR_FOLD_MAX = 64
#: Queued batches (or single samples) folded in without waiting for a read.
_MAX_QUEUED = 4096


class SortedScores(BufferPersistence, SortedSlide, ScoreBatches, ScoreState):
    """Exact sorted score buffer (see the module docstring)."""

    def __init__(
        self,
        task: str,
        num_classes: int | None = None,
        ignore_index: int | None = None,
        by_class: bool = False,
    ) -> None:
        self.task = task
        layout = check_layout(task, num_classes, ignore_index, by_class)
        self.num_classes, self.ignore_index, self.n_columns = layout
        self.by_class = bool(by_class)
        self.n_groups = self.n_columns if self.by_class else 2
        self.supports_row_slide = task == "binary"  # :meth:`slide_rows` is binary only
        self._init_storage()

    def _init_storage(self) -> None:
        k, g = self.n_columns, self.n_groups
        self._groups = [[Group() for _ in range(g)] for _ in range(k)]
        self._u2: np.ndarray = np.zeros((k, g), dtype=np.int64)
        #: False until ``u2`` is first read: folds then skip the pair counting (an AP-only
        #: state never pays for it), and the first read counts every pair once (:meth:`_ensure_u2`)
        self._u2_live = False
        self._room = 0  # samples that can be added before u2 must be checked (u2_counter)
        self._weighted = False
        self._dtype: np.dtype | None = None
        self._pending: list[Parts] = []
        #: large queues of one group, in memory-mapped chunks (:mod:`.spill`; see ``_spill``)
        self._spills: dict[tuple[int, int], Spill] = {}
        self._qbytes = 0  # bytes queued in ``_pending`` since the last fold
        self._qgroup: dict[tuple[int, int], int] = {}  # per group, once ``_qbytes`` >= SPILL_MIN
        self._scalars: list[tuple[int, float, float | None]] = []
        self._small_streak = 0  # consecutive small flat slides (see ``_flat_slide``)
        self._drop_positive_counts()

    def _drop_positive_counts(self) -> None:
        """Forget the AP read cache (after anything but appending samples)."""
        #: column -> its counts at the distinct positive scores, kept current by the log of
        #: sorted batches folded in since the last read (:mod:`streammetrics._scores.positive_counts`)
        self._pcounts: dict[int, PositiveCounts] = {}
        self._plog: list[list[list[tuple[np.ndarray, np.ndarray | None]]]] = []
        self._plog_n = 0

    def _log_fold(self, new: list[list[tuple[np.ndarray, np.ndarray | None]]], n: int) -> None:
        """Keep the batch folded in for the AP read cache, or drop the cache when the batches
        since the last read outgrow 1/16 of the state (a rebuild is then as cheap)."""
        if not self._pcounts:
            return
        self._plog.append(new)
        self._plog_n += n
        if self._plog_n > max(1 << 16, sum(int(g.total) for row in self._groups for g in row) // 16):
            self._drop_positive_counts()

    def _positive_counts(self, column: int) -> PositiveCounts:
        """Counts at the distinct positive scores of an unweighted one-vs-rest column, from the
        cache brought up to date (built by one full read the first time)."""
        self._flush()
        if self._plog:
            log = self._plog
            self._plog, self._plog_n = [], 0
            for col, kept in self._pcounts.items():
                # all at once: a new positive's negatives are counted in the stored runs, which
                # already hold every logged batch
                pos, neg = (log[0][col][1][0], log[0][col][0][0]) if len(log) == 1 else (
                    np.sort(np.concatenate([b[col][1][0] for b in log])),
                    np.sort(np.concatenate([b[col][0][0] for b in log])))
                kept.add(pos, neg, self._groups[col][0])
        cached = self._pcounts.get(column)
        if cached is not None and cached.total_pos == self._groups[column][1].total:
            return cached
        pv, _, nv, _ = self.column(column)
        cached = PositiveCounts.from_sorted(pv, nv)
        self._pcounts[column] = cached
        return cached

    def step_average_precision(self, column: int) -> float | None:
        """The step average precision of an unweighted one-vs-rest column from the counts kept
        at its distinct positive scores (:mod:`streammetrics._scores.positive_counts`), else None.
        O(P + m log n) after the first read."""
        self._flush()
        if self._weighted or self.by_class:
            return None
        return self._positive_counts(column).average_precision()

    def pos_group(self, column: int) -> int:
        """Index of the positive group of ``column``."""
        return column if self.by_class else 1

    def key(self) -> Hashable:
        return ("sorted_scores", self.task, self.num_classes, self.ignore_index, self.by_class)

    # -- applying (never raises) ---------------------------------------------------------------
    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        if type(delta) is tuple:
            self._scalars.append(delta[1:])
            if len(self._scalars) >= _MAX_QUEUED:
                self._flush()  # bound the queue's Python overhead when nothing is ever read
            return
        if self._spills or self._qbytes >= SPILL_MIN:
            delta = self._spill(delta)
            if not delta:
                return
        else:
            self._qbytes += sum(v.nbytes for _, _, v, _ in delta)
        self._pending.append(delta)
        if len(self._pending) >= _MAX_QUEUED:
            self._flush()

    def _spill(self, parts: Parts) -> Parts:
        """The parts of a batch that stay in the queue: a group's unit-weight scores go to its
        :class:`~streammetrics._scores.exact.spill.Spill` once the queue holds ``SPILL_MIN``
        bytes and that group has received as many since (a large queue then costs its size
        while it waits and goes back to the system once folded, see :mod:`.spill`). O(m)."""
        spills = self._spills
        if spills and any((col, grp) in spills and (w is not None or v.dtype != spills[col, grp].dtype)
                          for col, grp, v, w in parts):
            # a spilled group gets weights or another dtype: fold the queue first, so that each
            # group's scores keep their queue order (ties of weighted scores keep it, as unspilled)
            self._flush()
            self._qbytes = sum(v.nbytes for _, _, v, _ in parts)
            return parts
        kept: Parts = []
        counts = self._qgroup
        for part in parts:
            col, grp, v, w = part
            key = (col, grp)
            sp = spills.get(key)
            if w is None and sp is None and can_spill(v):
                counts[key] = counts.get(key, 0) + v.nbytes
                if counts[key] >= SPILL_MIN:
                    sp = spills[key] = Spill(v.dtype)
            if sp is not None and w is None and v.dtype == sp.dtype:
                sp.append(v)
            else:
                kept.append(part)
        return kept

    def _take_spills(self, bucket: list[list[list[np.ndarray]]],
                     wbucket: list[list[list[np.ndarray | None]]]) -> None:
        """Move the spilled queues into ``bucket`` (before the single samples are added): one
        array per group, the group's other queued unit-weight arrays of the same dtype copied
        after it (no second concatenation); else the spill after them, in queue order."""
        spills, self._spills = self._spills, {}
        for (col, grp), sp in spills.items():
            vs, ws = bucket[col][grp], wbucket[col][grp]
            if all(w is None for w in ws) and all(v.dtype == sp.dtype for v in vs):
                bucket[col][grp] = [sp.take(vs)]  # unit weights: the order does not show
                wbucket[col][grp] = [None]
            else:  # (queued before the spill began: the spill comes after them)
                vs.append(sp.take())
                ws.append(None)

    def _flush(self) -> None:
        """Fold the queued batches and samples in: sort them per group, update ``u2``, push runs."""
        if not self._pending and not self._scalars and not self._spills:
            return
        self._qbytes = 0
        self._qgroup = {}
        if (
            not self._pending
            and not self._spills
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
        if self._spills:
            self._take_spills(bucket, wbucket)
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
                row.append(sorted_batch(vs, ws))
            new.append(row)
        self._fold(new)

    def _fold_scalars(self) -> None:
        """The per-sample read path: each queued unit-weight sample is ranked against the other
        class (O(log n) per run, a bisect in the SortedList tail) and inserted into its class's
        tail. A read after every sample therefore costs microseconds, not a batch fold."""
        scalars, self._scalars = self._scalars, []
        self._drop_positive_counts()
        neg, pos = self._groups[0]
        if not self._u2_live:
            for grp, x, _ in scalars:
                (pos if grp == 1 else neg).add_scalar(x)
            if self._dtype is None:
                self._dtype = np.dtype(np.float64)
            return
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
            self._drop_positive_counts()
            for groups in self._groups:
                for group in groups:
                    group.promote(target)
        self._dtype = target
        if not self._weighted and any(w is not None for row in new for _, w in row):
            self._purge_tombstones()  # tombstones are unit samples of unweighted groups only
            self._drop_positive_counts()
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)
        n = sum(v.shape[0] for row in new for v, _ in row)
        live = self._u2_live
        if live:
            self._u2, self._room = exact_u2(self._u2, self._groups, n, self._room)
        u2 = self._u2
        for col in range(self.n_columns):
            p = self.pos_group(col)
            row = [(v.astype(target, copy=False), w) for v, w in new[col]]
            pv, pw = row[p]
            old_p = self._groups[col][p]
            totals = [(v.shape[0] if w is None else float(w.sum())) for v, w in row]
            for grp in range(self.n_groups):
                if grp == p or not live:
                    continue
                nv, nw = row[grp]
                d: int | float = 0
                if pv.shape[0]:
                    d += self._groups[col][grp].count2(pv, pw)
                if nv.shape[0]:
                    d += 2 * old_p.total * totals[grp] - old_p.count2(nv, nw)
                    if pv.shape[0] and inner_u2 is None:
                        d += count2(nv, None if nw is None else cumw(nw), pv, pw, coarse_index(nv))
                if inner_u2 is not None:
                    d += as_python(inner_u2[col, grp])
                u2[col, grp] += d
            # Balance merging against searching: a group whose runs are searched by many more
            # needles (the other groups' new samples) than it receives is kept in fewer runs.
            n_new = sum(v.shape[0] for v, _ in row)
            for grp in range(self.n_groups):
                v, w = row[grp]
                busy = n_new - v.shape[0] > BUSY * v.shape[0]
                self._groups[col][grp].push(v, w, totals[grp], RATIO_BUSY if busy else RATIO_FOLD)
        self._log_fold(new, n)

    def _ensure_u2(self) -> None:
        """Make ``u2`` live: fold the queue in and, the first time, count every pair of the
        stored samples (each positive group, as one sorted run, ranked in the runs of the
        other groups: O(n log n) once); later folds keep it current. O(1) when live."""
        if self._u2_live:
            return
        self._flush()
        self._u2_live = True
        k, g = self.n_columns, self.n_groups
        zero = np.zeros((k, g), dtype=np.float64 if self._weighted else np.int64)
        self._u2, self._room = exact_u2(zero, self._groups, 1, 0)
        for col in range(k):
            p = self.pos_group(col)
            pos = self._groups[col][p]
            if not pos.total:
                continue
            pv, pw = copy_groups([[pos]])[0][0].consolidate()  # a copy: the layout stays
            for grp in range(g):
                other = self._groups[col][grp]
                if grp == p or not other.total:
                    continue
                d = other.count2(pv, pw)
                if other.tail:
                    tail = np.fromiter(other.tail, dtype=np.float64, count=len(other.tail))
                    d += count2(tail, None, pv, pw)
                self._u2[col, grp] += d

    # -- reads (call under the owner's lock) ---------------------------------------------------
    def u2(self) -> np.ndarray:
        """``u2[c, g]``: 2 x Mann-Whitney U of column c's positives vs group g (live; read only)."""
        self._flush()
        self._ensure_u2()
        return self._u2

    def binary_stat(self) -> tuple[int | float, int | float, int | float]:
        """(2U, P, N) of a binary state, as exact ints for unit weights. O(1) once folded."""
        self._flush()
        self._ensure_u2()
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
        nv, nw = merge_many(negs)
        return pv, pw, nv, nw

    def pooled(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]:
        """Positives and negatives of every column pooled (micro averaging), each sorted."""
        self._flush()
        pos, neg = [], []
        for col in range(self.n_columns):
            pv, pw, nv, nw = self.column(col)
            pos.append((pv, pw))
            neg.append((nv, nw))
        pv, pw = merge_many(pos)
        nv, nw = merge_many(neg)
        return pv, pw, nv, nw

    # -- the score-state protocol (streammetrics._scores.protocol) ---------------------------------
    #: A window may hand this state its expired rows unvalidated (:meth:`slide_rows`; binary
    #: states only: the instance attribute set in ``__init__`` says which).
    supports_row_slide = True

    def pair_scores(self) -> PairScores:
        """This buffer itself: every score is kept (:meth:`u2`, :meth:`totals`, :meth:`group`,
        :meth:`column`; one-vs-one AUROC and DeLong's interval read them). O(1)."""
        return self

    @property
    def is_exact(self) -> bool:
        """Always True: every score is kept."""
        return True

    def column_exact(self, column: int) -> bool:
        """Always True: every score is kept."""
        return True

    def counts(self, column: int, *, positive_thresholds: bool = False) -> ThresholdCounts:
        """Counts at every distinct score of ``column`` (or only at its positives' distinct
        scores). O(n log n): a linear merge of the sorted runs, then a ranking. Unweighted
        one-vs-rest columns at positive thresholds: O(P + m log n) after the first read (P
        distinct positive scores, m samples folded in since the last read)."""
        self._flush()  # (a queued weighted batch makes the state weighted)
        if positive_thresholds and not self._weighted and not self.by_class:
            return self._positive_counts(column).counts()
        pv, pw, nv, nw = self.column(column)
        return counts_from_sorted(pv, pw, nv, nw, positive_only=positive_thresholds)

    def pooled_counts(self, *, positive_thresholds: bool = False) -> ThresholdCounts:
        """Counts of every column pooled (micro averaging), as :meth:`counts`."""
        pv, pw, nv, nw = self.pooled()
        return counts_from_sorted(pv, pw, nv, nw, positive_only=positive_thresholds)

    def support(self) -> np.ndarray:
        """Positive weight of every column, shape (K,)."""
        tot = self.totals()
        return np.array([tot[c, self.pos_group(c)] for c in range(tot.shape[0])])

    def auroc(self, column: int) -> tuple[float, float, float]:
        """(v, v, v): the exact AUROC of ``column`` from the live pair counts ``u2`` (unit
        weights: Python ints, one correctly rounded division); nan without positives or
        negatives. O(1) once the queue is folded (O(G) for one-vs-one layouts)."""
        if self.task == "binary":  # the O(1) read
            u2b, pb, nb = self.binary_stat()
            v = math.nan if pb <= 0 or nb <= 0 else u2b / (2 * pb * nb)
            return v, v, v
        u2 = self.u2()
        tot = self.totals()
        P = tot[column, self.pos_group(column)]
        N = tot[column].sum() - P
        if P <= 0 or N <= 0:
            v = math.nan
        elif not self._weighted:
            v = int(u2[column].sum()) / (2 * int(P) * int(N))
        else:
            v = float(u2[column].sum()) / (2.0 * P * N)
        return v, v, v

    def pooled_auroc(self) -> tuple[float, float, float]:
        """(v, v, v): the exact AUROC of every column pooled (micro), counting the pairs of
        the pooled sorted scores. O(n log n)."""
        pv, pw, nv, nw = self.pooled()
        if pv.shape[0] == 0 or nv.shape[0] == 0:
            return math.nan, math.nan, math.nan
        P = float(pv.shape[0] if pw is None else pw.sum())
        N = float(nv.shape[0] if nw is None else nw.sum())
        cw = None if nw is None else np.concatenate([[0.0], np.cumsum(nw)])
        u2 = count2(nv, cw, pv, pw)
        v = u2 / (2 * int(P) * int(N)) if isinstance(u2, int) else float(u2) / (2.0 * P * N)
        return v, v, v

    def check_invariants(self) -> None:
        """Assert every internal invariant (for tests): runs sorted and geometric, totals and
        cumulative weights consistent, ``u2`` equal to a recount from scratch. O(n log n)."""
        self._ensure_u2()
        for row in self._groups:
            for grp in row:
                sizes = [r.shape[0] for r in grp.runs]
                assert all(min(RATIO, RATIO_BUSY) * b < a for a, b in zip(sizes, sizes[1:], strict=False))
                total: int | float = 0
                if grp.tail is not None:
                    grp.tail._check()
                    assert len(grp.tail) < max(TAIL_MAX, FLAT_MAX + 1)
                for v, w, cw, co in zip(grp.runs, grp.wts, grp.cws, grp.coarse, strict=True):
                    assert v.shape[0] > 0 and not (v[1:] < v[:-1]).any()
                    ref = coarse_index(v)
                    assert (co is None) == (ref is None)
                    if co is not None and ref is not None:
                        assert np.array_equal(co, ref)
                    assert w is not None or cw is None  # unit runs: none; weighted: lazy
                    if w is not None and cw is not None:
                        assert w.shape == v.shape and np.array_equal(cw, cumw(w))
                    total += v.shape[0] if w is None else float(w.sum())
                total += len(grp.tail) if grp.tail else 0
                if grp.dead is not None:
                    assert not self._weighted
                    total -= grp.dead.total
                assert abs(total - grp.total) <= 1e-9 * max(1.0, abs(total))
        fresh = SortedScores(self.task, self.num_classes, self.ignore_index, self.by_class)
        fresh._u2_live = True
        fresh._fold(
            [
                [(v.copy(), None if w is None else w.copy()) for v, w in (g.consolidate() for g in row)]
                for row in copy_groups(self._groups)
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

    # -- generic state protocol: arrays, load_arrays, merge, merge_many in :mod:`.persist` --

    def reset(self) -> None:
        self._init_storage()

    @property
    def nbytes(self) -> int:
        n = sum(grp.nbytes for row in self._groups for grp in row) + self._u2.nbytes
        for parts in self._pending:
            for _, _, v, w in parts:
                n += v.nbytes + (0 if w is None else w.nbytes)
        n += sum(sp.nbytes for sp in self._spills.values())
        n += len(self._scalars) * (sys.getsizeof((0, 0.0, None)) + 32)
        return n

    def sorted_values(self, column: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every sample of ``column`` in increasing score order (negatives first on ties) with
        its weight and positive weight (see :meth:`ScoreState.sorted_values`); faster than the
        default's distinct scores. O(n): one stable merge of the two sorted runs."""
        pv, pw, nv, nw = self.column(column)
        v = np.concatenate([nv, pv]).astype(np.float64)
        order = np.argsort(v, kind="stable")
        w = np.ones(v.shape[0])
        if pw is not None or nw is not None:
            w = np.concatenate([np.ones(nv.shape[0]) if nw is None else nw,
                                np.ones(pv.shape[0]) if pw is None else pw])[order]
        return v[order], w, np.where(order >= nv.shape[0], w, 0.0)
