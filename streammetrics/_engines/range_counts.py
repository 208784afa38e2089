"""Exact binary AUROC and AP of :func:`streammetrics.dask.evaluate` from score ranges, bit for bit.

``evaluate`` used to gather every partition's sorted scores on one worker, which then sorted and
ranked them all: a serial O(n log n) step at the root. When a ``MetricSet`` holds exact binary
``AUROC`` / ``AveragePrecision`` members that share one score state (and no weights, no slices),
``evaluate`` instead routes every partition's (unsorted) scores to R ranges cut at R - 1 score
edges (sampled quantiles, :mod:`streammetrics._engines.ranked`), sorts each range once on a worker --
every score is sorted once, as in one process -- and sends to the root only what it needs to
give the single-process values with the same floating-point steps:

* AUROC: each range's doubled Mann-Whitney count ``u2_r`` (an exact integer: pairs inside the
  range, a tie counting 1/2), its positives ``P_r`` and negatives ``N_r``. The root adds
  ``u2 = sum_r u2_r + 2 P_r N_below_r`` in Python integers and divides once,
  ``u2 / (2 P N)`` -- the one correctly rounded division one process does.
* AP: each range's counts at its distinct positive scores (positives and negatives at or above
  each, inside the range). The root offsets them by the ranges above and computes the step AP
  over the concatenation (:func:`streammetrics._scores.thresholds.average_precision`): the same sum, in
  the same order, as one process. The root holds 24 bytes per distinct positive score (not 8
  per score); :func:`streammetrics.dask.evaluate_ranked` avoids even that, within 1e-12.

The other members of the set travel as ordinary states and are merged as before.
Complexity: a partition task O(n) (validation, the split by class into one buffer, sampling),
routing O(n R) in place (R - 1 blocked comparisons per score and one ``ndarray.partition``;
O(n log R) beyond 8 ranges, and always with the compiled kernels: one branch-free pass per
level of edges), a range task sorts its pieces (O(n_r log n_r)) and counts them in
one linear merge; the root O(R + distinct positive scores).

Memory: ``distributed``'s workers run with glibc's mmap threshold pinned at 128 KiB (its
``MALLOC_TRIM_THRESHOLD_``), so every larger array is a fresh mapping, page-faulted on first
touch. The path allocates few: each partition task one buffer for its scores, the routing
none (views), each range task the one array it sorts; scratch arrays stay under 128 KiB.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streammetrics._core.warn import Recorded, recorded, reissued
from streammetrics._scores.exact import merge_count
from streammetrics._scores.thresholds import ThresholdCounts, average_precision
from streammetrics.calibration.ks_gains import KSStatistic
from streammetrics.ranking.metrics import AUROC, AveragePrecision
from streammetrics.wrappers.metricset import MetricSet

from . import keyed_split, label_codes
from . import ranked as ranked_engine
from .messages import located
from .pair_counts import distinct_scores, doubled_pairs, ranks
from .plan import (
    Plan,
    compute_recorded,
    drop_nulls,
    empty_set,
    labels_first,
    merged,
    numeric_dtype,
    rebuild,
    state_of,
    task_columns,
)
from .rest_order import checked_rows, rest_keywords

#: Score ranges per worker thread (measured on 10M rows, 2 workers: 1 range each spends ~20% less
#: CPU in all processes than 2 -- half the piece and range tasks -- and no more wall time).
RANGES_PER_THREAD = 1
#: At most this many partitions feed one state (fewer tasks; each holds its partitions at once).
MAX_FRAMES_PER_TASK = 4


@dataclass(frozen=True)
class Split:
    """How ``evaluate`` splits a MetricSet: the score-state group evaluated by ranges, the rest."""

    names: tuple[str, ...]  #: every member of the set, in order
    ranked: dict[str, Any]  #: the ranked members' configurations (class name, config)
    rest: dict[str, Any] | None  #: the MetricSet configuration of the other members
    ignore_index: int | None  #: the ranked members' common ``ignore_index``
    before: tuple[str, ...]  #: the rest's members whose groups come before the ranked one (error order)
    label: str = "label"  #: the label column (named in a refused label's message)
    fed: Mapping[str, Any] | None = None  #: the engine arguments' columns (:meth:`.Plan.fed`): messages
    kwargs: Mapping[str, Any] = field(default_factory=dict)  #: the rest's keywords (rest_keywords)

    @property
    def ap(self) -> bool:
        """Whether a ranked member is ``AveragePrecision`` (else AUROC only: the ranges send the
        root their three counts, not the counts at every distinct positive score)."""
        return any(cfg["class"] == "AveragePrecision" for cfg in self.ranked.values())

    @property
    def ap_kinds(self) -> tuple[tuple[bool, bool], ...]:
        """The distinct ``(interpolated, eleven_point)`` readouts of the ranked AP members (step:
        ``(False, False)``), the AP values :func:`final_values` computes. O(members)."""
        return tuple(sorted({ranked_engine.ap_kind(cfg["config"]) for cfg in self.ranked.values()
                             if cfg["class"] == "AveragePrecision"}))

    @property
    def envelope(self) -> bool:
        """Whether a ranked AP member reads the interpolated or 11-point AP (the ranked kernel's
        summaries then carry their envelopes, :func:`ranked.needs_envelope`). O(members)."""
        return ranked_engine.needs_envelope(cfg["config"] for cfg in self.ranked.values()
                                            if cfg["class"] == "AveragePrecision")

    @property
    def max_fprs(self) -> tuple[float, ...]:
        """The readouts each range computes with its offsets known (the ranked kernel,
        :func:`ranked.readouts`): the ranked AUROC members' distinct ``max_fpr`` below 1 (partial
        areas), then the KS slot with a ``KSStatistic`` member."""
        return ranked_engine.readouts((cfg["class"], cfg["config"]) for cfg in self.ranked.values())


def split_of(template: Any, plan: Plan, dtypes: Mapping[str, Any], weighted: bool = False,
             offsets: bool = False, labels: bool = False) -> Split | None:
    """The split of ``template`` (a MetricSet) if the range path gives its exact values, else None.

    Taken when a state group holds only exact binary full-area ``AUROC`` / ``AveragePrecision``
    members (step, interpolated or 11-point: the root gets the counts at every distinct positive
    score, :func:`final_values`), fed one numeric label and score column (``dtypes``: the
    frame's column dtypes, :func:`~.plan.numeric_dtype`; a column missing from them takes the
    general path) with unit weights, no slices, ``update`` keywords only the other members take
    (:func:`.rest_order.rest_keywords`): the first such group (``scores="probability"`` too:
    :func:`label_codes.ranked_checks`) goes by ranges, every other (F1...) as states, before,
    between or after it (:func:`.rest_order.checked_first`).
    ``weighted``: a numeric weight column instead (the ranked engine's route). ``offsets`` (range
    tasks that know the weights above them: the ranked kernel): the group may also hold partial
    AUROCs (``max_fpr``; without, None), interpolated / 11-point AP from the ranges' envelopes
    (:mod:`.ap_envelope`; without, from the root's counts). None when the set holds more exact
    groups the keyed ranges serve together (:func:`.keyed_split.split_of`): they take the set.
    ``labels`` (a route that maps labels, :mod:`.label_codes`): the members may also have
    ``classes=`` / ``pos_label=``; the label column may then hold strings, objects or categoricals.
    """
    if weighted != (plan.weight is not None):
        return None
    if weighted and not (isinstance(plan.weight, str) and numeric_dtype(dtypes.get(plan.weight))):
        return None
    if (plan.by is not None or not isinstance(plan.label, str) or not isinstance(plan.score, str)
            or not numeric_dtype(dtypes.get(plan.score)) or not isinstance(template, MetricSet)):
        return None
    groups = template.groups
    ranked, ignore = _served(template, groups, label_codes.LABEL_KEYS if labels else ())
    kwargs = rest_keywords(template, ranked, plan.update_kwargs)
    if kwargs is None or ranked and keyed_split.split_of(template, plan, dtypes, labels=labels) is not None:
        return None  # more than one exact group: every one by the keyed ranges, none gathered
    mapped = bool(ranked) and label_codes.maps_labels(template[n]._config() for n in ranked[0])
    if not label_codes.label_column(dtypes.get(plan.label), mapped):
        return None
    if not ranked or (not offsets and ranked_engine.readouts(
            (type(template[n]).__name__, template[n]._config()) for n in ranked[0])):
        return None
    order = tuple(n for n, _ in template.items())
    others = [n for n in order if n not in ranked[0]]
    rest = None
    if others:
        twin = MetricSet({n: type(template[n])._from_config(template[n]._config()) for n in others})
        rest = twin._config()
        if rest["groups"] != [g for g in groups if g is not ranked[0]]:
            return None
    cfg, before = template._config()["members"], tuple(n for g in groups[:groups.index(ranked[0])] for n in g)
    return Split(order, {n: cfg[n] for n in ranked[0]}, rest, ignore, before, plan.label, plan.fed(), kwargs)


def _served(template: Any, groups: Sequence[Sequence[str]],
            free: Iterable[str] = ()) -> tuple[list[Any], Any]:
    """``([group], ignore_index)`` of the first group of exact binary AUROC / AP members
    (:func:`ranked.check_metrics`, ``free`` its more keys), or ``([], None)``. O(members)."""
    for g in groups:
        if all(type(template[n]) in (AUROC, AveragePrecision, KSStatistic) for n in g):
            try:
                return [g], ranked_engine.check_metrics({n: template[n] for n in g}, free)
            except ValueError:
                continue
    return [], None


def partition_parts(batches: Iterable[tuple[Any, ...]], split: Split, sample_size: int,
                    rows: int = 0) -> tuple[Any, ...]:
    """A few partitions fed at once, as ``(labels, scores)`` column batches (or ``(labels,
    scores, where)``: ``where`` names the batch's rows in a refused label's message): the other
    members' state (or None), the ranked members' negative and positive scores (validated as
    the exact state validates them, the labels mapped first by the members' codec,
    :func:`label_codes.coded`), unsorted, and an evenly spaced sample of them to place the edges.

    The scores of both classes go straight into one float64 buffer (:class:`_ClassBuffer`,
    ``rows`` long where the caller knows the row count, else grown), not into per-batch copies
    joined at the end: one allocation per task. Last, the warnings the batches' updates raise
    (:func:`~streammetrics._core.warn.recorded`), for the caller. O(n)."""
    scores = _ClassBuffer(rows)
    rest = None if split.rest is None else empty_set(split.rest)
    codec, checks = label_codes.ranked_codec(split.ranked), label_codes.ranked_checks(split.ranked)
    warned: Recorded = []
    for y, p, *at in batches:  # a refused value: its column and batch named
        with located(split.fed or {"label": split.label}, at[0] if at else ""), recorded() as kept:
            with checked_rows(split, y, p):  # errors in the set's group order
                batch = checks.check(label_codes.coded(y, codec, split.label, at[0] if at else ""), p)
            scores.add(batch, split.ignore_index)
            if rest is not None:
                rest.update(y, p, **split.kwargs)
        warned = reissued(warned, kept)
    runs = scores.runs()
    return None if rest is None else state_of(rest), runs, ranked_engine.run_sample(runs, sample_size), warned


class _ClassBuffer:
    """One task's validated binary scores by class in one float64 buffer: the negatives from its
    front, the positives from its back (what the exact state's split gives, without a copy
    per batch and per class joined later). Grows (doubling) when more rows come than it was
    made for. A batch is split in blocks of :data:`_SPLIT_BLOCK` rows, whose scratch arrays
    (the class mask, ``compress``'s indices) stay in the CPU cache and under glibc's mmap
    threshold: ``distributed``'s workers pin it at 128 KiB, so that every larger temporary is
    a fresh mapping, page-faulted on first touch (measured: 2-3x faster than one ``compress``
    per class and batch, with no page faults). Where the compiled kernels are installed, one
    branch-free pass per batch instead (``numba_kernels.split_classes``: 2.6-5.8x faster than
    the blocks; the order inside a class differs, which nothing counts)."""

    def __init__(self, rows: int) -> None:
        try:  # rows: a file footer's claim; beyond memory (a corrupt footer) the buffer grows
            self.buf = np.empty(max(0, rows), dtype=np.float64)
        except (MemoryError, ValueError):
            self.buf = np.empty(0, dtype=np.float64)
        self.n_neg = 0
        self.n_pos = 0

    def _reserve(self, k: int) -> None:
        size = self.buf.shape[0]
        if self.n_neg + self.n_pos + k <= size:
            return
        new = np.empty(max(2 * size, self.n_neg + self.n_pos + k), dtype=np.float64)
        new[: self.n_neg] = self.buf[: self.n_neg]
        new[new.shape[0] - self.n_pos :] = self.buf[size - self.n_pos :]
        self.buf = new

    def add(self, batch: Any, ignore_index: int | None) -> None:
        """Add a checked batch (:func:`score_batch`): labels ``ignore_index`` dropped, scores
        made float64 (exact for every float and int kind the state accepts). O(n)."""
        y, s = batch.y, batch.s
        if ignore_index is not None:
            keep = y != ignore_index
            if not keep.all():
                y, s = y[keep], s[keep]
        if s.dtype != np.float64:
            s = s.astype(np.float64)
        n = s.shape[0]
        self._reserve(n)
        buf, size = self.buf, self.buf.shape[0]
        # the compiled pass where installed (numba loaded for a task's whole buffer, not a batch)
        mod = merge_count.kernels_at(max(n, size), "split") if y.dtype.kind in "biuf" else None
        if mod is not None:
            self.n_neg, self.n_pos = mod.split_classes(y, s, buf, self.n_neg, self.n_pos)
            return
        mask = np.empty(min(n, _SPLIT_BLOCK), dtype=bool)
        for start in range(0, n, _SPLIT_BLOCK):  # small blocks: no temporary as long as the batch
            block = s[start : start + _SPLIT_BLOCK]
            m = mask[: block.shape[0]]
            np.not_equal(y[start : start + _SPLIT_BLOCK], 0, out=m)
            k = int(np.count_nonzero(m))
            end = size - self.n_pos
            np.compress(m, block, out=buf[end - k : end])
            np.logical_not(m, out=m)
            np.compress(m, block, out=buf[self.n_neg : self.n_neg + block.shape[0] - k])
            self.n_neg += block.shape[0] - k
            self.n_pos += k

    def runs(self) -> ranked_engine.Runs:
        """The negatives and positives (views of the buffer, unsorted)."""
        return (self.buf[: self.n_neg], None, self.buf[self.buf.shape[0] - self.n_pos :], None)


def frame_batches(frames: Sequence[Any], plan: Plan, first: int = 0) -> Iterator[tuple[Any, Any, str]]:
    """The ``(labels, scores, where)`` batches of pandas partitions (empty ones skipped);
    ``frames`` are the frame's partitions ``first``, ``first + 1``, ..., so a null (and a label
    the ranked members' codec refuses) is named by its partition's number; a bad label before
    a bad score (:func:`~.plan.labels_first`)."""
    for i, df in enumerate(frames):
        if len(df):
            where = f"Dask partition {first + i}"
            df, _ = drop_nulls(df, plan, where)  # nulls="error": the row named
            yield from labels_first([(*task_columns(df, plan, where), where)])


def per_thread(n_frames: int, n_ranges: int) -> int:
    """The ``cap`` of :func:`task_slices` that gives one task per worker thread (for tasks that
    read their partitions one at a time: Parquet files)."""
    return max(1, -(-n_frames // max(1, n_ranges // RANGES_PER_THREAD)))


def task_slices(n_frames: int, n_ranges: int, cap: int = MAX_FRAMES_PER_TASK) -> list[slice]:
    """Partitions fed to each task: at most ``cap`` (default :data:`MAX_FRAMES_PER_TASK`: a
    task holds its partitions at once), in as few tasks as that allows, rounded up to a
    multiple of the worker threads (``n_ranges / RANGES_PER_THREAD``) so that the tasks
    balance over them; the partitions split as evenly as possible."""
    threads = max(1, n_ranges // RANGES_PER_THREAD)
    n_tasks = -(-n_frames // cap)
    n_tasks = min(n_frames, threads * -(-n_tasks // threads))
    bounds = [n_frames * i // max(1, n_tasks) for i in range(n_tasks + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _route(v: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    """``v`` split by range: piece r holds the scores with ``edges[r-1] <= s < edges[r]`` (the
    half-open ranges of :func:`streammetrics._engines.ranked.split_runs`; tied scores share a range).
    A score's range is the number of edges <= it: R - 1 vectorised comparisons, then one
    selection per range, block by block (:data:`_BLOCK` scores, so that the passes stay in
    cache); beyond :data:`_MASKED_RANGES` ranges, a stable counting sort of the range ids."""
    n_ranges = edges.shape[0] + 1
    if n_ranges == 1 or v.shape[0] == 0:
        return [v] + [v[:0]] * (n_ranges - 1)
    if n_ranges > _MASKED_RANGES:
        ids = np.searchsorted(edges, v, "right").astype(np.uint16 if n_ranges < 2**16 else np.intp)
        ends = np.cumsum(np.bincount(ids, minlength=n_ranges))
        return np.split(v[np.argsort(ids, kind="stable")], ends[:-1])
    out: list[list[np.ndarray]] = [[] for _ in range(n_ranges)]
    ids = np.empty(min(_BLOCK, v.shape[0]), dtype=np.uint8)
    mask = np.empty(ids.shape[0], dtype=bool)
    for start in range(0, v.shape[0], _BLOCK):
        block = v[start : start + _BLOCK]
        i, m = ids[: block.shape[0]], mask[: block.shape[0]]
        i.fill(0)
        for e in edges:
            np.greater_equal(block, e, out=m)
            np.add(i, m, out=i)
        for r in range(n_ranges):
            np.equal(i, r, out=m)
            out[r].append(block.compress(m))
    return [x[0] if len(x) == 1 else np.concatenate(x) for x in out]


#: Up to this many ranges, :func:`_route` selects each range with a mask (R passes over one
#: byte per score; measured faster than the counting sort for small R).
_MASKED_RANGES = 8
#: Scores per block of :func:`_route` (its passes over a block stay in the CPU cache).
_BLOCK = 1 << 17


def route_runs(parts: tuple[Any, ...], edges: np.ndarray) -> list[ranked_engine.Runs]:
    """The unsorted runs of :func:`partition_parts` output routed to the R ranges the R - 1
    ``edges`` define: R pieces (copies), each sorted once by its range's task. O(n R) (with
    ``R`` > 8: O(n log R)); no partition sorts its scores."""
    negs, poss = _route(parts[1][0], edges), _route(parts[1][2], edges)
    return [(n, None, p, None) for n, p in zip(negs, poss, strict=True)]

def partition_runs(parts: tuple[Any, ...], edges: np.ndarray) -> list[ranked_engine.Runs]:
    """:func:`route_runs` in place: each run of :func:`partition_parts` output is reordered
    (``ndarray.partition`` at the number of its scores below each edge) so that range r is one
    contiguous slice, and the R pieces are views of it -- no copy, no new memory (a run that
    is not writeable is copied first). Only the order inside a run changes, which nothing
    counts. O(n R) comparisons (O(n log R) beyond 8 ranges) and an O(n) selection; where the
    compiled kernels are installed, ``ceil(log2 R)`` branch-free passes instead
    (:func:`_compiled_cuts`: 11-17x faster than the count and ``ndarray.partition``)."""
    negs, poss = _partition(parts[1][0], edges), _partition(parts[1][2], edges)
    return [(n, None, p, None) for n, p in zip(negs, poss, strict=True)]


def _partition(v: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    n_ranges = edges.shape[0] + 1
    n = v.shape[0]
    if n_ranges == 1 or n == 0:
        return [v] + [v[:0]] * (n_ranges - 1)
    if not v.flags.writeable:
        v = v.copy()
    mod = merge_count.kernels_at(n, "partition") if v.dtype == np.float64 and v.flags.c_contiguous else None
    if mod is not None:
        cuts = _compiled_cuts(mod, v, edges)
    else:
        cuts = _below(v, edges)
        kth = sorted({c for c in cuts if 0 < c < n})
        if kth:
            v.partition(kth)  # exactly cuts[j] scores are < edges[j]: they are the cuts[j] smallest
    bounds = [0, *cuts, n]
    return [v[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _compiled_cuts(mod: Any, v: np.ndarray, edges: np.ndarray) -> list[int]:
    """:func:`_partition`'s reordering by the compiled pass (``mod.partition_below``): the
    middle edge splits ``v``, then each side by the edges on its side (a side's scores are all
    below, or all at or above, the edges of the other), so every score is passed over
    ``ceil(log2 R)`` times. Returns, for each edge, how many scores are below it -- where range
    ``j + 1`` starts. Same cuts and the same score set per range as ``ndarray.partition`` at
    :func:`_below`'s counts. O(n log R), no memory."""
    cuts = [0] * edges.shape[0]
    todo = [(0, edges.shape[0], 0, v.shape[0])]  # edges[lo:hi] cut v[a:b]
    while todo:
        lo, hi, a, b = todo.pop()
        if lo < hi:
            m = (lo + hi) // 2
            cut = a + int(mod.partition_below(v[a:b], float(edges[m])))
            cuts[m] = cut
            todo += [(lo, m, a, cut), (m + 1, hi, cut, b)]
    return cuts


def _below(v: np.ndarray, edges: np.ndarray) -> list[int]:
    """For each edge, how many scores are below it (non-decreasing, as the edges), block by
    block with small scratch arrays (no array as long as ``v``)."""
    counts = np.zeros(edges.shape[0] + 1, dtype=np.int64)
    if edges.shape[0] < _MASKED_RANGES:
        mask = np.empty(min(_SCRATCH, v.shape[0]), dtype=bool)
        below = [0] * edges.shape[0]
        for start in range(0, v.shape[0], _SCRATCH):
            block = v[start : start + _SCRATCH]
            m = mask[: block.shape[0]]
            for j, e in enumerate(edges):
                np.less(block, e, out=m)
                below[j] += int(np.count_nonzero(m))
        return below
    for start in range(0, v.shape[0], _SCRATCH // 8):  # ranges by count of edges <= score
        ids = np.searchsorted(edges, v[start : start + _SCRATCH // 8], "right")
        counts += np.bincount(ids, minlength=counts.shape[0])
    return [int(c) for c in np.cumsum(counts)[:-1]]


#: Rows per block of :meth:`_ClassBuffer.add` (its index arrays at most 64 KiB).
_SPLIT_BLOCK = 1 << 13
#: Scores per block of :func:`_below`: its scratch arrays stay under glibc's mmap threshold
#: (128 KiB), which ``distributed``'s workers keep at that minimum (every larger array a fresh,
#: page-faulted mapping).
_SCRATCH = 1 << 16


@dataclass(frozen=True)
class RangeCounts:
    """What one score range sends to the root (see the module docstring)."""

    pos: int
    neg: int
    u2: int
    thresholds: np.ndarray  #: the range's distinct positive scores, decreasing (or empty)
    tps: np.ndarray  #: positives of the range scoring >= each
    fps: np.ndarray  #: negatives of the range scoring >= each


def _sorted_scores(arrays: list[np.ndarray]) -> np.ndarray:
    """One range's scores of one class from its pieces: a new float64 array, sorted once."""
    v = np.concatenate(arrays, dtype=np.float64) if arrays else np.zeros(0)
    v.sort()
    return v



def range_counts(pieces: Sequence[ranked_engine.Runs], thresholds: bool = True,
                 counts: bool = True) -> RangeCounts:
    """Sort one range's pieces (every partition's, unsorted) and count them: the range's only
    sort (one per class). The distinct positive scores are the run starts of the sorted
    positives; each is ranked among the sorted negatives (left and right), as one process's
    exact buffer ranks them (the compiled kernels where installed, else ``searchsorted``):
    ``u2 = sum dp (left + right)`` over distinct positive scores of multiplicity ``dp``.
    Without ``thresholds`` the distinct scores themselves are left out (empty): the root's
    AUROC and step AP need only the counts at them; without ``counts`` (AUROC only) the counts
    at them too: the range sends O(1) numbers. O(n_r log n_r) for the sort, O(T log n_r)
    for the T distinct positive scores."""
    nv = _sorted_scores([p[0] for p in pieces])
    pv = _sorted_scores([p[2] for p in pieces])
    n_pos, n_neg = int(pv.shape[0]), int(nv.shape[0])
    starts, asc, dp = distinct_scores(pv)
    del pv
    left, right = ranks(nv, asc)
    u2 = doubled_pairs(dp, left, right)
    if not counts:
        return RangeCounts(n_pos, n_neg, u2, asc[:0], np.zeros(0), np.zeros(0))
    # counts at or above each distinct score, decreasing: exact integers, made float64 once
    tps = np.subtract(n_pos, starts[::-1], dtype=np.float64)
    fps = np.subtract(n_neg, left[::-1], dtype=np.float64)
    return RangeCounts(n_pos, n_neg, u2, asc[::-1] if thresholds else asc[:0], tps, fps)


def final_values(rest_states: Sequence[Mapping[str, Any]], ranges: Sequence[RangeCounts], split: Split,
                 warned: Sequence[Recorded] = ()) -> tuple[dict[str, Any], Recorded]:
    """The root: the other members merged and computed, the ranked ones from the range counts
    (ranges in increasing score order); values in the set's member order, with the warnings
    one process raises: the tasks' updates' (``warned``, :func:`partition_parts`' last item,
    each distinct one once), then compute's. O(states + R + distinct positive scores)."""
    values: dict[str, Any] = {}
    caught = reissued(*warned)
    if split.rest is not None:
        values, more_rest = compute_recorded(merged([rebuild(split.rest, s) for s in rest_states]))
        caught += more_rest
    P = sum(r.pos for r in ranges)
    N = sum(r.neg for r in ranges)
    ranked, more = undefined(split, P > 0, N > 0)
    caught += more
    below, u2 = 0, 0
    for r in ranges:
        u2 += r.u2 + 2 * r.pos * below
        below += r.neg
    auroc = u2 / (2 * P * N) if P > 0 and N > 0 else math.nan
    ap: dict[tuple[bool, bool], float] = {}
    if P > 0 and split.ap:
        size = sum(r.tps.shape[0] for r in ranges)
        tps, fps = np.empty(size), np.empty(size)  # the ranges' counts offset, highest first
        above_p, above_n, at = 0, 0, 0
        for r in reversed(ranges):  # highest scores first
            k = r.tps.shape[0]
            np.add(r.tps, above_p, out=tps[at : at + k])
            np.add(r.fps, above_n, out=fps[at : at + k])
            above_p, above_n, at = above_p + r.pos, above_n + r.neg, at + k
        # the step AP reads only the counts: the thresholds where every range sent them
        full = all(r.thresholds.shape[0] == r.tps.shape[0] for r in ranges)
        thr = np.concatenate([r.thresholds for r in reversed(ranges)]) if full else np.zeros(0)
        counts = ThresholdCounts(thr, tps, fps, float(P), float(N))
        ap = {kind: average_precision(counts, *kind) for kind in split.ap_kinds}
    return assemble(split, values, ranked, auroc, ap), caught


def undefined(split: Split, positives: bool, negatives: bool) -> tuple[dict[str, Any], list[Any]]:
    """The ranked members undefined (nan) for want of a class, with the warnings one process
    raises: a twin with the same classes present computes them. O(1)."""
    if positives and negatives:
        return {}, []
    twin = empty_set({"members": split.ranked, "groups": [list(split.ranked)]})
    rows = [1] * positives + [0] * negatives
    if rows:
        twin.update(np.array(rows), np.full(len(rows), 0.5))
    values, caught = compute_recorded(twin)
    return {n: v for n, v in values.items() if math.isnan(v)}, caught


def summarised(split: Split, rest: Mapping[str, Any], summaries: Sequence[ranked_engine.RangeSummary],
               totals: tuple[float, float]) -> tuple[dict[str, Any], list[Any]]:
    """The values in the set's member order from the ranked routes' range summaries
    (:func:`ranked.combine`, the partial AUROCs of ``split.max_fprs`` included) and the other
    members' values ``rest``, with the warnings one process raises for an undefined ranked
    member (:func:`undefined`). O(R + members)."""
    res = ranked_engine.combine(summaries, totals, split.max_fprs)
    ranked, caught = undefined(split, totals[0] > 0, totals[1] > 0)
    return assemble(split, rest, ranked, float(res["auroc"]), res["ap_kinds"], res["partial"]), caught


def assemble(split: Split, rest: Mapping[str, Any], ranked: Mapping[str, Any], auroc: float,
             ap: Mapping[tuple[bool, bool], float],
             partial: Mapping[float, float] | None = None) -> dict[str, Any]:
    """The values in the set's member order: the other members' (``rest``), the undefined
    ranked ones (``ranked``), else ``auroc`` / ``ap`` by class (an AUROC with ``max_fpr``
    below 1 or a KS: its value in ``partial``, :func:`ranked.combine`'s; ``ap`` the AP per
    readout ``(interpolated, eleven_point)``, :func:`ranked.ap_kind`). O(members)."""
    got = dict(ranked)
    res = {"auroc": auroc, "partial": partial or {}, "ap_kinds": ap}
    for name, cfg in split.ranked.items():
        if name not in got:
            got[name] = ranked_engine.config_value(res, cfg)
    return {n: got[n] if n in got else rest[n] for n in split.names}


def range_count() -> int:
    """How many score ranges ``evaluate`` cuts: :data:`RANGES_PER_THREAD` per worker thread of
    the active ``distributed`` client (1 with a single thread or without a client)."""
    try:
        from distributed import default_client

        threads = sum(default_client().nthreads().values())
    except (ImportError, ValueError):
        return 1
    return 1 if threads <= 1 else RANGES_PER_THREAD * threads
