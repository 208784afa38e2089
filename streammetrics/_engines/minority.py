"""Exact binary AUROC and AP of the range path by exchanging only the positives, when they are few.

The range path (:mod:`streammetrics._engines.range_counts`) routes every score to one of R score
ranges -- a pass over every score and, across R workers, (R - 1) / R of them moved. When the
positives are a small share of the rows (at most :func:`use_exchange`'s bound), this module
gives the same values from a cheaper exchange, chosen in the same graph (the task that places
the edges decides, from the class counts every partition task reports):

1. Each partition task keeps its negatives: they are sorted in place where they are
   (:func:`exchange_pieces`), and only the sorted positives travel, to every range task.
   Partition task ``i``'s negatives go to range ``i mod R`` (with one partition task per worker
   thread -- Parquet -- the range task of the same worker: the scheduler places a task where
   most of its input lies).
2. Each range task (:func:`exchange_counts`) merges the sorted positives of every partition
   (a merge of sorted runs), takes their T distinct scores ``t_1 < ... < t_T`` and
   multiplicities ``dp_k``, and ranks them among each of its sorted negative runs by one linear
   merge walk (the compiled kernel where installed, else ``searchsorted``, as
   :func:`~streammetrics._engines.range_counts.range_counts` ranks them): ``L_k`` negatives below ``t_k`` and
   ``E_k`` tied with it. It sends its exact integer share of the doubled Mann-Whitney count,
   ``u2_r = sum_k dp_k (2 L_k + E_k)``, and ``L`` (int32 where its negatives fit, else int64).
3. The root (:func:`combine`) adds the ranges' ``u2_r`` in Python integers and their ``L`` arrays
   in int64: ``AUROC = u2 / (2 P N)`` and the step AP over the global distinct positive scores
   from ``tps_k = P - start_k`` and ``fps_k = N - L_k`` (highest first), given to
   :func:`streammetrics._engines.range_counts.final_values` as one range -- the same integers,
   made float64 once, and the same floating-point steps as one process: bit for bit.

Ray's ``evaluate_parquet`` (:mod:`streammetrics._engines.ray_ranges`) runs the same steps as Ray
tasks; its driver decides before any file task runs, from the labels of every row group of the
files it samples for the edges (an estimate: it decides the cost, never the values).

Only the positives are exchanged (not "the smaller class"): the step AP sums over the distinct
positive scores, and with positives the majority, every one of them would reach the root -- the
range path sends no more.

Data moved: (R - 1) P scores and R T counts, instead of about (R - 1) / R of all scores.
Complexity: a partition task sorts its own runs (O(n_i log n_i): every score sorted once, as
on the range path), a range task O(P log k + n_r + T) for k partition tasks (merge, walk;
O(T log n_r) by ``searchsorted``), the root O(R T).
Memory: a range task holds every positive (the bound keeps it under 1 / (4 R) of the rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import pair_counts, range_counts
from . import ranked as ranked_engine

#: The exchange is used when the positives are at most ``1 / (SHARE_DIVISOR * R)`` of the ranked
#: rows (R ranges). Each of the R range tasks merges and walks all P positives (O(R P) in all)
#: where the range path routes and moves every score (O(n)); measured on 10M rows, 2 workers,
#: in one process: the exchange saves ~0.065 s CPU at 1% positives, ~0.03 s at 5%, breaks even
#: near 15% and loses above (0.05 s at 25%, 0.07 s at 50%) -- before the range path's move of
#: half of all scores. 4 keeps the exchange where it clearly pays (12.5% with 2 workers).
SHARE_DIVISOR = 4


@dataclass(frozen=True)
class Exchange:
    """The edges task's choice of the exchange (instead of range edges): ``n_ranges`` ranges."""

    n_ranges: int


@dataclass(frozen=True)
class ExchangeCounts:
    """What one range task of the exchange sends to the root (see the module docstring)."""

    pos: int  #: every positive (all partitions): the same in every range task
    neg: int  #: this range's negatives
    u2: int  #: this range's share of the doubled Mann-Whitney count, an exact integer
    below: np.ndarray  #: this range's negatives below each distinct positive score, ascending
    starts: np.ndarray | None  #: where each distinct positive score starts in the merged positives (range 0)


def use_exchange(n_pos: int, n_rows: int, n_ranges: int) -> bool:
    """Whether the exchange is used for ``n_pos`` positives among ``n_rows`` ranked rows cut into
    ``n_ranges`` ranges: more than one range and ``n_pos * SHARE_DIVISOR * n_ranges <= n_rows``
    (see :data:`SHARE_DIVISOR`). O(1)."""
    return n_ranges > 1 and n_pos * SHARE_DIVISOR * n_ranges <= n_rows


def head(part: tuple[Any, ...]) -> tuple[Any, Any, int, int, Any]:
    """A partition task's small outputs (:func:`range_counts.partition_parts`): the other members'
    state, the score sample, its positives, its ranked rows and its updates' warnings. O(1)."""
    runs = part[1]
    return part[0], part[2], int(runs[2].shape[0]), int(runs[0].shape[0] + runs[2].shape[0]), part[3]


def choose(heads: Sequence[tuple[Any, ...]], n_ranges: int) -> np.ndarray | Exchange:
    """The edges task: the exchange where :func:`use_exchange` says so, else the R - 1 range
    edges from the partitions' samples (:func:`streammetrics._engines.ranked.range_edges`).
    O(partitions + sampled scores log)."""
    if use_exchange(sum(h[2] for h in heads), sum(h[3] for h in heads), n_ranges):
        return Exchange(n_ranges)
    return ranked_engine.range_edges([h[1] for h in heads], n_ranges)


def _sorted_in_place(v: np.ndarray) -> np.ndarray:
    if not v.flags.writeable:
        v = v.copy()
    v.sort()
    return v


def exchange_pieces(parts: tuple[Any, ...], index: int, n_ranges: int) -> list[ranked_engine.Runs]:
    """Partition task ``index``'s R pieces for the exchange: its runs sorted in place (copied
    first where not writeable); piece r holds the sorted positives, and piece ``index mod R``
    also the sorted negatives (the others none). O(n log n) for the partition's n scores."""
    nv = _sorted_in_place(parts[1][0])
    pv = _sorted_in_place(parts[1][2])
    own = index % n_ranges
    return [(nv if r == own else nv[:0], None, pv, None) for r in range(n_ranges)]


def routed(parts: tuple[Any, ...], how: np.ndarray | Exchange, index: int) -> list[ranked_engine.Runs]:
    """A partition task's pieces as the edges task chose: :func:`exchange_pieces` or the range
    path's in-place routing (:func:`range_counts.partition_runs`)."""
    if isinstance(how, Exchange):
        return exchange_pieces(parts, index, how.n_ranges)
    return range_counts.partition_runs(parts, how)


def _merged_positives(pieces: Sequence[ranked_engine.Runs]) -> np.ndarray:
    """Every partition's sorted positives as one sorted float64 array: a merge of sorted runs
    (timsort finds the runs; O(P log k) for k runs)."""
    runs = [np.asarray(p[2], dtype=np.float64) for p in pieces]
    v = np.concatenate(runs) if runs else np.zeros(0)
    if len(runs) > 1:
        v.sort(kind="stable")
    return v


def exchange_counts(pieces: Sequence[ranked_engine.Runs], first: bool, counts: bool = True) -> ExchangeCounts:
    """One range task of the exchange (its pieces: every partition task's piece for it): the
    merged positives' distinct scores ranked among each sorted negative run of the range
    (:func:`streammetrics._engines.range_counts` ranks them alike), summed; ``first``: the range
    that also sends the distinct scores' starts; without ``counts`` (AUROC only) neither ``L``
    nor the starts are sent (empty): O(1) numbers. O(P log k + sum over runs of (n_run + T))."""
    pv = _merged_positives(pieces)
    n_pos = int(pv.shape[0])
    starts, asc, dp = pair_counts.distinct_scores(pv)  # asc: distinct positive scores, ascending
    del pv
    below = np.zeros(asc.shape[0], dtype=np.int64)
    u2, n_neg = 0, 0
    for p in pieces:
        nv = p[0]
        if nv.shape[0] == 0 or asc.shape[0] == 0:
            n_neg += int(nv.shape[0])
            continue
        left, right = pair_counts.ranks(np.asarray(nv, dtype=np.float64), asc)
        np.add(below, left, out=below)
        u2 += pair_counts.doubled_pairs(dp, left, right)  # sum dp (left + right): 2 below + ties
        n_neg += int(nv.shape[0])
    if not counts:
        below, starts = below[:0], starts[:0]
    if n_neg < 2**31:
        below = below.astype(np.int32)
    return ExchangeCounts(n_pos, n_neg, u2, below, starts if first else None)


def counted(pieces: Sequence[ranked_engine.Runs], how: np.ndarray | Exchange,
            index: int, ap: bool = True) -> range_counts.RangeCounts | ExchangeCounts:
    """Range task ``index`` as the edges task chose: :func:`exchange_counts` or the range path's
    sort and count (:func:`range_counts.range_counts`, without the thresholds); without ``ap``
    (AUROC only) each sends the root O(1) numbers, not counts at the distinct positive scores."""
    if isinstance(how, Exchange):
        return exchange_counts(pieces, index == 0, ap)
    return range_counts.range_counts(pieces, False, ap)


def combine(counts: Sequence[ExchangeCounts]) -> range_counts.RangeCounts:
    """The exchange's range counts (range 0 first) as the one range of the range path whose counts they are
    (:func:`range_counts.final_values` then gives the values, as one process does): ``u2``
    summed exactly, ``tps = P - starts`` and ``fps = N - sum L``, highest score first, made
    float64 once from exact integers. O(R T)."""
    first = counts[0]
    starts = first.starts
    if starts is None or any(c.pos != first.pos or c.below.shape != starts.shape for c in counts):
        raise AssertionError("the exchange's range tasks saw different positives")
    n_neg = sum(c.neg for c in counts)
    below = np.zeros(starts.shape[0], dtype=np.int64)
    for c in counts:
        np.add(below, c.below, out=below)
    tps = np.subtract(first.pos, starts[::-1], dtype=np.float64)
    fps = np.subtract(n_neg, below[::-1], dtype=np.float64)
    return range_counts.RangeCounts(first.pos, n_neg, sum(c.u2 for c in counts), np.zeros(0), tps, fps)


def final_values(rest_states: Sequence[Any], counts: Sequence[range_counts.RangeCounts | ExchangeCounts],
                 split: range_counts.Split, warned: Sequence[Any] = ()) -> tuple[dict[str, Any], list[Any]]:
    """The root of either path: :func:`range_counts.final_values` over the range counts, or over
    :func:`combine` of the exchange's (``warned``: the tasks' warnings). O(states + R T)."""
    if counts and isinstance(counts[0], ExchangeCounts):
        ex = [c for c in counts if isinstance(c, ExchangeCounts)]
        return range_counts.final_values(rest_states, [combine(ex)], split, warned)
    ranges = [c for c in counts if isinstance(c, range_counts.RangeCounts)]
    return range_counts.final_values(rest_states, ranges, split, warned)
