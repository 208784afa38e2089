"""Exact AUROC / AP of many binary problems at once by (key, score) ranges: slices, classes, labels.

``by=`` slices, multiclass one-vs-rest and multilabel ``AUROC`` / ``AveragePrecision`` are many
binary problems over the same rows: each row gives one or more *keyed tuples* (key, score,
positive, weight) --

* ``by=`` (binary metrics): key = the slice, one tuple per row;
* multiclass one-vs-rest: key = the class c, C tuples per row (score column c, positive when
  the label is c); a micro average is one more binary problem over the n x C tuples (key C);
* multilabel: key = the label l, L tuples per row (score column l, positive when entry l is
  1; an entry equal to ``ignore_index`` left out), micro the pooled n x L tuples (key L);
* one-vs-one AUROC: key = the ordered class pair (i, j), 2 (C - 1) tuples per row (a row of
  class y is a positive of (y, j) with score column y, a negative of (i, y) with score column
  i); the root applies Hand & Till's rule (``AUROC._ovo_given``);
* with slices: key = slice x width + column (width: :attr:`KeyedSplit.width`; the split and
  the layout are :mod:`streammetrics._engines.keyed_split`'s);
* several exact state groups in one set (one-vs-one beside one-vs-rest, another
  ``ignore_index``): each group's columns after the previous group's within a slice (key =
  slice x width + the group's start + column), each row checked and keyed by each group.

A partial ``AUROC(max_fpr=m)`` (any of these) adds, per key, the key's part of the area over
FPR <= m to each range's summary (``ranked.partial_areas`` with the key's offsets); the root
sums the parts and standardises them (``ranked.combine``: McClish). An interpolated or 11-point
AP adds, per key of the columns it reads, the key's per-level maxima and (interpolated) its
precision envelope (``ap_envelope.range_part`` with the key's offsets, shipped as
:mod:`.keyed_envelope`'s flat arrays); the root walks them up per key (``ranked.combine``).

Keys are integers ("problems"): ``slice * width + column``. The tuples are cut into R ranges in
the composite order (key, score) at R - 1 edges that are (key, score) pairs (weighted quantiles
of a sample, :func:`edges_of`), so a range holds contiguous per-key segments and tied (key,
score) pairs share a range; a key spans consecutive ranges (its codes lie between the range's
edge keys). Steps, engine-neutral (:mod:`streammetrics._engines.dask_keyed` wires them for Dask):

1. :func:`keyed_part`: a task's rows validated (the exact state's checks,
   ``KeyedSplit.checks``: ``score_batch``, or the probability buffer's), its slice keys factorised as
   ``Sliced`` factorises them (local codes), its tuples unsorted, the other members fed, a
   sample of the tuples.
2. :func:`edges_of`: the global slice keys (first seen first), each task's map from local to
   global codes, the rows per slice, the R - 1 (key, score) edges.
3. :func:`route`: a task's tuples to the ranges (R pieces) and each range's per-key totals
   (P, N) over the key span of that range (round one: no range is merged yet).
4. :func:`offsets_of`: per range and key, the positive and negative weight above the range and
   the negative weight below it, and each key's totals (O(R + K) numbers).
5. :func:`range_task`: a range's pieces sorted once in (key, class, score) order (a stable
   radix sort of the small (key, class) code, then each segment's scores: measured 4-8x
   cheaper than ``np.lexsort``), each key segment summarised by the ranked kernel's
   :func:`~streammetrics._engines.ranked.range_summary` with its offsets (and, in the
   columns a partial AUROC reads, its part of each partial area): O(keys in range) numbers.
6. :func:`final_values`: per key, :func:`~streammetrics._engines.ranked.combine`; then each
   member's own ``compute`` rule from those values (binary, micro, or per class with its
   average and warnings: ``RankingMetric._value_given``), per slice; the other members' merged
   state computed beside them.

Exact within float rounding (1e-12 relative): the per-range pair counts are floats; with unit
weights AUROC comes from exact integer pair counts (``range_counts``' kernels), one process's
bit for bit. Memory: a range task its range's tuples; the root O(R x K) numbers for K keys
(the size of the output).

Other engines take the same steps, only the transport differs: Ray's ``evaluate``
(:mod:`streammetrics._engines.ray_keyed`: a task per group of blocks for ``keyed_part``, its
head returned apart, ``edges_of`` on the driver, a task per group for ``route`` with
``num_returns=R + 1``, ``offsets_of`` on the driver, a task per range, ``final_values`` on the
driver; ``evaluate_parquet`` reads such sets with Ray Data, then the same). Not wired yet: a
pyarrow reader in Ray's tasks (as ``ray_ranges``), and Spark, as ``spark_ranked`` does: one pass for the heads
(collected), one that routes each partition's tuples and emits (range, piece) rows plus the
totals, the totals collected
and ``offsets_of`` broadcast, the pieces shuffled by range into ``range_task``, the summaries
collected. ``keyed_part`` reads any iterable of ``(labels, scores, weights, slices)`` batches
(:func:`frame_batches` makes them from pandas frames).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streammetrics._core.warn import Recorded, recorded, reissued
from streammetrics._scores.exact.sort_kernels import stable_sort_with
from streammetrics.calibration.ks_gains import KSStatistic
from streammetrics.ranking.metrics import AUROC, AveragePrecision
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.keys import cross, factorize, short_repr, split_slices
from streammetrics.wrappers.sliced.results import SlicedResults

from . import keyed_envelope, label_codes
from . import ranked as ranked_engine
from .keyed_envelope import KeyedEnvelopes
from .keyed_split import VECTOR as VECTOR
from .keyed_split import KeyedSplit as KeyedSplit
from .keyed_split import Tuples as Tuples
from .keyed_split import batch_tuples, pair_codes
from .keyed_split import split_of as split_of
from .messages import located
from .plan import (
    Plan,
    compute_recorded,
    drop_nulls,
    empty_set,
    ids,
    merged,
    numbers,
    rebuild,
    state_of,
    task_columns,
)
from .rest_order import checked_rows


@dataclass
class KeyedPart:
    """One task's output: the rest's state, its tuples, a sample of them, its slice keys."""

    rest: dict[str, Any] | None
    tuples: Tuples
    sample: tuple[np.ndarray, np.ndarray, np.ndarray]  #: (codes, scores, weight each stands for)
    keys: list[Any]  #: the task's slice keys, local code order
    rows: np.ndarray  #: rows per local slice (what ``Sliced`` counts)
    warned: Recorded = field(default_factory=list)  #: its updates' warnings (:func:`recorded`)

    def head(self) -> tuple[Any, ...]:
        """The small part (rest state, sample, keys, rows, warnings): what the edges and the root need."""
        return self.rest, self.sample, self.keys, self.rows, self.warned


def frame_batches(frames: Sequence[Any], plan: Plan, first: int = 0,
                  where: str = "Dask partition") -> Iterable[tuple[Any, ...]]:
    """``(labels, scores, weights, slices, where)`` of pandas partitions ``first``, ``first +
    1``, ... (nulls dropped or refused as :func:`~streammetrics._engines.plan.drop_nulls` does;
    empty ones skipped; ``where`` names the partition). O(rows)."""
    for i, df in enumerate(frames):
        if not len(df):
            continue
        at = f"{where} {first + i}"
        df, _ = drop_nulls(df, plan, at)
        if not len(df):
            continue
        slices: Any = None
        if isinstance(plan.by, str):
            slices = ids(df, plan.by)
        elif plan.by is not None:
            slices = {name: ids(df, name) for name in plan.by}
        cols, bad = task_columns(df, plan, at)  # a bad score / weight raised after the labels' check
        # Sliced reads labels as numbers (no codec maps them first); update's order: y, s, w
        y = numbers(cols[0], plan.label, "label", at) if slices is not None else cols[0]
        yield y, cols[1], cols[2] if len(cols) > 2 else None, slices, at
        if bad is not None:
            raise bad


def _slice_codes(slices: Any, n: int, local: dict[Any, int]) -> np.ndarray:
    """Each row's local slice code; new keys (as ``Sliced`` factorises them: its key objects)
    added to ``local`` in first-seen order. O(n) (O(n log n) for strings)."""
    if slices is None:
        local.setdefault(None, 0)
        return np.zeros(n, np.int64)
    names, columns = split_slices(slices, n)
    facts = [factorize(c, "slices" if names is None else f"slices[{nm!r}]")
             for c, nm in zip(columns, names or (None,), strict=True)]
    fact = facts[0] if len(facts) == 1 else cross(facts)
    uniq, inv = np.unique(fact.codes, return_inverse=True)
    lut = np.array([local.setdefault(k, len(local)) for k in fact.keys(uniq)], dtype=np.int64)
    return lut[inv.reshape(-1)]


def keyed_part(batches: Iterable[tuple[Any, ...]], split: KeyedSplit, sample_size: int,
               acc: Any = None) -> KeyedPart:
    """A task's rows (:func:`frame_batches`; a batch's ``where`` optional) as keyed tuples, each
    exact group's labels mapped by its own codec (:func:`label_codes.coded`) and checked as its
    state checks them (:attr:`KeyedSplit.checks`: ``scores="probability"`` too), unsorted (see
    the module docstring), with the other members fed, the task's slice keys and rows per slice,
    and up to ``sample_size`` evenly spaced tuples. A refused batch raises one process's error
    (:func:`_checked`). Tuples of weight 0 are left out (a zero weight is a removal). ``acc``:
    the other members' accumulator to feed instead of a fresh one (the caller's, kept across
    calls; its state not in the part). O(n x width)."""
    rest = acc if acc is not None or split.rest is None else empty_set(split.rest, split.rest_kind)
    local: dict[Any, int] = {}
    groups, starts, stride = split.groups, split.starts, split.width
    out: list[Tuples] = []
    row_codes: list[np.ndarray] = []
    columns = split.fed or {"label": split.label}
    warned: Recorded = []
    for y, p, w, slices, *at in batches:
        kwargs = dict(split.kwargs) if slices is None else {"slices": slices}  # keywords: no slices
        # a refused value: its column and batch named; the updates' warnings kept for the caller
        with located(columns, at[0] if at else ""), recorded() as kept:
            checked = _checked(y, p, w, kwargs, split, groups, at[0] if at else "")
            if rest is not None:
                rest.update(y, p, sample_weight=w, **kwargs)
            rows = _slice_codes(slices, checked[0].y.shape[0], local)
        warned = reissued(warned, kept)
        row_codes.append(rows)
        for g, start, b in zip(groups, starts, checked, strict=True):
            out += batch_tuples(b.y, b.s, b.w, rows, g, stride, start)
    tuples = _joined(out)
    m = tuples[0].shape[0]
    idx = np.unique(np.linspace(0, max(0, m - 1), min(sample_size, m)).astype(np.int64))
    stands = np.full(idx.shape[0], m / max(1, idx.shape[0]))
    counts = np.zeros(0, np.int64)
    if row_codes:
        counts = np.bincount(np.concatenate(row_codes), minlength=len(local))
    return KeyedPart(None if rest is None or acc is not None else state_of(rest), tuples,
                     (tuples[0][idx], tuples[1][idx], stands), list(local), counts, warned)


def _checked(y: Any, p: Any, w: Any, kwargs: dict[str, Any], split: KeyedSplit,
             groups: Sequence[KeyedSplit], where: str) -> list[Any]:
    """Each exact group's batch (``groups``: :attr:`KeyedSplit.groups`) checked as its members' ``update``
    checks it: the labels mapped by the group's codec, then its state's ``check`` (once per
    layout, ``ignore_index`` and probability checks, among groups without a codec). A group
    that refuses the batch: one process's error, the first in the set's group order -- the
    other members whose groups come before it check the batch first (:func:`.rest_order.checked_first`: a
    fresh accumulator, on the error path only); when every group accepts, the caller's
    ``update`` of the other members raises theirs. O(n x groups)."""
    out: list[Any] = []
    done: dict[Any, Any] = {}
    for g in groups:
        key = (type(g.checks), g.ignore_index) if g.codec is None else id(g)
        with checked_rows(split, y, p, w, g.before, kwargs):
            if key not in done:
                done[key] = g.checks.check(label_codes.coded(y, g.codec, split.label, where), p, w)
        out.append(done[key])
    return out


def _joined(parts: list[Tuples]) -> Tuples:
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool), None
    if len(parts) == 1:
        return parts[0]
    weighted = any(p[3] is not None for p in parts)
    w = None
    if weighted:
        w = np.concatenate([np.ones(p[0].shape[0]) if p[3] is None else p[3] for p in parts])
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]), w)


@dataclass(frozen=True)
class KeyedEdges:
    """The global keys and the R - 1 (key, score) edges every range task and the root share."""

    codes: np.ndarray  #: edge problem codes, non-decreasing
    scores: np.ndarray  #: edge scores (non-decreasing within one code)
    keys: list[Any]  #: the global slice keys (first seen first; ``[None]`` without slices)
    maps: list[np.ndarray]  #: per task: local slice code -> global slice code
    rows: np.ndarray  #: rows per global slice
    n_problems: int  #: slices x width
    width: int  #: problems per slice

    def span(self, r: int) -> tuple[int, int]:
        """The codes range ``r`` may hold: ``[lo, hi]`` (a key between its edges' keys)."""
        lo = int(self.codes[r - 1]) if r > 0 else 0
        hi = int(self.codes[r]) if r < self.codes.shape[0] else max(0, self.n_problems - 1)
        return lo, max(lo, hi)


def edges_of(heads: Sequence[tuple[Any, ...]], n_ranges: int, split: KeyedSplit) -> KeyedEdges:
    """The global slice keys (``Sliced``'s cap: more than ``max_slices`` is its ValueError), the
    rows per slice and R - 1 edges at the weighted quantiles 1/R, ..., (R-1)/R of the tasks'
    samples in (key, score) order. O(keys + sample log sample)."""
    index: dict[Any, int] = {}
    maps = []
    for _, _, keys, _, *_ in heads:
        maps.append(np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64))
        if split.sliced and len(index) > split.max_slices:
            beyond = list(index)[split.max_slices]
            raise ValueError(f"slices: more than max_slices={split.max_slices} distinct slice keys (first "
                             f"key beyond the cap: {short_repr(beyond)}); raise max_slices or pass "
                             "overflow='other'")
    if not index and not split.sliced:
        index[None] = 0  # no rows: the set's values, undefined
    rows = np.zeros(len(index), np.int64)
    width = split.width
    codes, scores, counts = [], [], []
    for (_, (c, s, k), _, n, *_), gmap in zip(heads, maps, strict=True):
        np.add.at(rows, gmap, n)
        codes.append(gmap[c // width] * width + c % width)
        scores.append(s)
        counts.append(k)
    ec, es = np.zeros(n_ranges - 1, np.int64), np.zeros(n_ranges - 1)
    c_all = np.concatenate(codes) if codes else np.zeros(0, np.int64)
    if c_all.shape[0] and n_ranges > 1:
        s_all, k_all = np.concatenate(scores), np.concatenate(counts)
        order = np.lexsort((s_all, c_all))
        cum = np.cumsum(k_all[order])
        at = np.searchsorted(cum, cum[-1] * np.arange(1, n_ranges) / n_ranges, "left")
        at = np.minimum(at, order.shape[0] - 1)
        ec, es = c_all[order][at], s_all[order][at].astype(np.float64)
    return KeyedEdges(ec, es, list(index), maps, rows, len(index) * width, width)


def range_ids(codes: np.ndarray, scores: np.ndarray, edges: KeyedEdges) -> np.ndarray:
    """Each tuple's range: the number of edges at or below its (code, score), lexicographically
    (ties share a range). O(n log R): one search over the edge codes, then one over the edge
    scores of each distinct edge code among the tuples of that code."""
    ec, es = edges.codes, edges.scores
    rid = np.searchsorted(ec, codes, "left").astype(np.int64)
    for u in np.unique(ec):
        a, b = np.searchsorted(ec, u, "left"), np.searchsorted(ec, u, "right")
        at = np.flatnonzero(codes == u)
        if at.shape[0]:
            rid[at] += np.searchsorted(es[a:b], scores[at], "right")
    return rid


def route(part: KeyedPart, edges: KeyedEdges, index: int) -> tuple[list[Tuples], list[np.ndarray]]:
    """A task's tuples with global codes, cut into the R ranges (copies, one per range), and per
    range its (2, span) positive / negative weight per code of the range's span (round one).
    O(n log R)."""
    codes, scores, pos, w = part.tuples
    width = edges.width
    gmap = edges.maps[index]
    codes = gmap[codes // width] * width + codes % width if codes.shape[0] else codes
    n_ranges = edges.codes.shape[0] + 1
    rid = range_ids(codes, scores, edges)
    order = np.argsort(rid.astype(np.uint16 if n_ranges < 2**16 else np.int64), kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(rid, minlength=n_ranges))])
    pieces: list[Tuples] = []
    totals: list[np.ndarray] = []
    for r in range(n_ranges):
        sel = order[bounds[r] : bounds[r + 1]]
        piece = (codes[sel], scores[sel], pos[sel], None if w is None else w[sel])
        pieces.append(piece)
        lo, hi = edges.span(r)
        wt = np.ones(sel.shape[0]) if piece[3] is None else piece[3]
        rel = piece[0] - lo
        totals.append(np.stack([np.bincount(rel, wt * piece[2], hi - lo + 1),
                                np.bincount(rel, wt * ~piece[2], hi - lo + 1)]))
    return pieces, totals


@dataclass(frozen=True)
class KeyedOffsets:
    """Per range, per code of its span: weights above and below; per code, the totals."""

    above_pos: list[np.ndarray]
    above_neg: list[np.ndarray]
    below_neg: list[np.ndarray]
    pos: np.ndarray  #: P per problem code
    neg: np.ndarray  #: N per problem code


def offsets_of(totals: Sequence[Sequence[np.ndarray]], edges: KeyedEdges) -> KeyedOffsets:
    """Round one summed: each range's per-code totals over the tasks, the weights above each
    range (positive, negative) and below it (negative) per code, and each code's totals, as
    :func:`streammetrics._engines.ranked.offsets` per key. O(tasks x (K + R))."""
    n_ranges = edges.codes.shape[0] + 1
    per = [np.sum([t[r] for t in totals], axis=0) if totals else np.zeros((2, 1)) for r in range(n_ranges)]
    run_p, run_n = np.zeros(edges.n_problems + 1), np.zeros(edges.n_problems + 1)
    above_p: list[np.ndarray] = [np.zeros(0)] * n_ranges
    above_n: list[np.ndarray] = [np.zeros(0)] * n_ranges
    for r in reversed(range(n_ranges)):
        lo, hi = edges.span(r)
        above_p[r], above_n[r] = run_p[lo : hi + 1].copy(), run_n[lo : hi + 1].copy()
        run_p[lo : hi + 1] += per[r][0]
        run_n[lo : hi + 1] += per[r][1]
    below: list[np.ndarray] = []
    run_b = np.zeros(edges.n_problems + 1)
    for r in range(n_ranges):
        lo, hi = edges.span(r)
        below.append(run_b[lo : hi + 1].copy())
        run_b[lo : hi + 1] += per[r][1]
    return KeyedOffsets(above_p, above_n, below, run_p[: edges.n_problems], run_n[: edges.n_problems])


@dataclass(frozen=True)
class KeyedSummaries:
    """What a range task sends the root: per code it holds, the ranked kernel's summary."""

    codes: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    pairs: np.ndarray
    ap: np.ndarray
    #: unweighted: each code's doubled Mann-Whitney count inside the range, an exact integer
    #: (ties 1/2), so that AUROC is one process's ``u2 / (2 P N)`` bit for bit; else None
    u2: list[int] | None = None
    #: (F, codes): per ``max_fpr`` asked (the sorted union of ``range_task``'s ``max_fprs``),
    #: each code's part of the partial ROC area (0 where its column reads none); else None
    partial: np.ndarray | None = None
    #: with ``range_task``'s ``envelopes``: each code's share of the interpolated and 11-point
    #: AP (:mod:`.keyed_envelope`; no part where its column reads none); else None
    envelope: KeyedEnvelopes | None = None


def range_task(pieces: Sequence[Tuples], offsets: KeyedOffsets, edges: KeyedEdges, r: int,
               ap: bool | Sequence[bool] = True,
               max_fprs: Sequence[Sequence[float]] = (),
               envelopes: Sequence[Sequence[tuple[bool, bool]]] = ()) -> KeyedSummaries:
    """One range: its pieces joined and sorted once in (code, class, score) order -- a stable
    radix sort of the small code ``2 (code - lo) + positive``, then each segment's scores --
    and each code's segment summarised by :func:`streammetrics._engines.ranked.range_summary`
    with its offsets: no curve pass with unit weights (their exact pair count ``u2``, from the
    same ranking as the AP's counts, is what the root reads), no AP without ``ap`` (a bool, or
    per column of a slice: :attr:`KeyedSplit.ap_columns`, e.g. not the pooled micro problem
    of a macro AP; such a code's AP part is 0, which no member reads). ``max_fprs``, per
    column of a slice (:attr:`KeyedSplit.partial_columns`; empty: none anywhere), the
    ``max_fpr`` values whose part of the partial ROC area each code of that column carries
    (``ranked.partial_areas``, from the code's curve points offset by its weights above the
    range): the summaries' ``partial`` rows, one per value of their sorted union. ``envelopes``,
    per column (:attr:`KeyedSplit.envelope_columns`; empty: none), the interpolated / 11-point
    AP readouts for which each code of that column carries its share
    (``range_summary(envelope=True)``; the precision envelope itself only where an interpolated
    member reads it, the 11 levels alone for 11-point): the summaries' ``envelope``. A code's
    segments are consecutive: found by one pass over the segment codes, not a search per code.
    O(n_r log n_r) plus O(1) numpy calls per code (O(n_r) more per partial area)."""
    codes, s, pos, w = _joined([p for p in pieces if p[0].shape[0]])
    lo, _ = edges.span(r)
    k2 = (codes - lo) * 2 + pos
    k2 = k2.astype(np.uint16) if k2.shape[0] and int(k2.max()) < 2**16 else k2
    order = np.argsort(k2, kind="stable")
    k2, s = k2[order], s[order]
    w = None if w is None else w[order]
    starts = np.zeros(0, np.int64)
    if k2.shape[0]:
        starts = np.flatnonzero(np.concatenate([[True], k2[1:] != k2[:-1]]))
    ends = np.append(starts[1:], k2.shape[0]) if starts.shape[0] else starts
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        if w is None:
            s[a:b].sort()
        else:
            s[a:b], w[a:b] = stable_sort_with(s[a:b], w[a:b])  # np.argsort(kind="stable")'s order
    seg_code = (k2[starts].astype(np.int64) // 2) if starts.shape[0] else np.zeros(0, np.int64)
    seg_pos = (k2[starts] % 2).astype(bool) if starts.shape[0] else np.zeros(0, bool)
    # a code's segments are consecutive (negatives, then positives): where each code's begin
    first = seg_code
    if seg_code.shape[0]:
        first = np.flatnonzero(np.concatenate([[True], seg_code[1:] != seg_code[:-1]]))
    out_codes = seg_code[first]
    n = out_codes.shape[0]
    vals = np.zeros((4, n))
    u2: list[int] | None = None if w is not None else []
    empty = (s[:0], None if w is None else w[:0])
    bounds = np.append(first, seg_code.shape[0]).tolist()
    seg = list(zip(starts.tolist(), ends.tolist(), seg_pos.tolist(), strict=True))
    ab_p, ab_n, be_n = (offsets.above_pos[r].tolist(), offsets.above_neg[r].tolist(),
                        offsets.below_neg[r].tolist())
    tot_p, tot_n = offsets.pos.tolist(), offsets.neg.tolist()
    width = edges.width
    per_column = [bool(ap)] * width if isinstance(ap, bool) else [bool(a) for a in ap]
    fprs = sorted({float(m) for col in max_fprs for m in col})
    partial = np.zeros((len(fprs), n)) if fprs else None
    env_column = list(envelopes) if any(envelopes) else []
    parts: list[Any] = []
    full: list[bool] = []  # per code: an interpolated member reads its envelope
    for j, rel in enumerate(out_codes.tolist()):
        runs = [empty, empty]
        for a, b, positive in seg[bounds[j] : bounds[j + 1]]:
            runs[positive] = (s[a:b], None if w is None else w[a:b])
        off = (float(ab_p[rel]), float(ab_n[rel]), float(be_n[rel]))
        tot = (float(tot_p[lo + rel]), float(tot_n[lo + rel]))
        ms = tuple(max_fprs[(lo + rel) % width]) if fprs else ()
        readouts = env_column[(lo + rel) % width] if env_column else ()
        # unit weights: the exact pair count u2 (the root reads it, not pairs), no curve pass
        # unless a partial area reads the curve
        summ = ranked_engine.range_summary((*runs[0], *runs[1]), off, tot, curves=False, max_fprs=ms,
                                           ap=per_column[(lo + rel) % width],
                                           exact_pairs=u2 is not None, envelope=bool(readouts))
        vals[:, j] = summ.pos, summ.neg, summ.pairs, summ.ap_part
        if partial is not None:
            partial[[fprs.index(m) for m in ms], j] = summ.partial
        if u2 is not None:
            assert summ.u2 is not None
            u2.append(summ.u2)
        if env_column:
            parts.append(summ.envelope)
            full.append((True, False) in readouts)
    return KeyedSummaries(out_codes + lo, vals[0], vals[1], vals[2], vals[3], u2, partial,
                          keyed_envelope.pack(parts, full) if env_column else None)


def problem_values(summaries: Sequence[KeyedSummaries], offsets: KeyedOffsets, max_fprs: Sequence[float] = (),
                   partial: dict[float, np.ndarray] | None = None,
                   kinds: dict[tuple[bool, bool], np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per problem code, AUROC and AP: :func:`streammetrics._engines.ranked.combine` of its range
    summaries (ranges in increasing order); with ``max_fprs`` (the summaries' sorted union,
    :attr:`KeyedSplit.max_fprs`), each code's McClish-standardised partial AUROC per value m
    put in ``partial[m]`` (``combine``'s: the sum of its ranges' parts; nan without positives
    or negatives); per AP readout ``(interpolated, eleven_point)`` among the keys of ``kinds``
    (:func:`ranked.ap_kind`), each code's AP by that readout put in ``kinds[readout]`` (from
    the summaries' envelopes; nan for a code none carries, or without positives).
    O(R x K x (1 + F)) for F values, plus the envelopes' sizes."""
    k = offsets.pos.shape[0]
    per: list[list[ranked_engine.RangeSummary]] = [[] for _ in range(k)]
    for sm in summaries:
        parts = [()] * sm.codes.shape[0] if sm.partial is None else sm.partial.T.tolist()
        envs = [None] * sm.codes.shape[0] if sm.envelope is None else sm.envelope.parts()
        rows = zip(sm.codes.tolist(), sm.pos.tolist(), sm.neg.tolist(), sm.pairs.tolist(), sm.ap.tolist(),
                   parts, envs, strict=True)
        for code, p, n, pairs, ap, part, env in rows:
            per[code].append(ranked_engine.RangeSummary(0, p, n, pairs, ap, None, tuple(part),
                                                        envelope=env))
    auroc, ap = np.full(k, math.nan), np.full(k, math.nan)
    partial = {} if partial is None else partial
    for m in max_fprs:
        partial[float(m)] = np.full(k, math.nan)
    kinds = {} if kinds is None else kinds
    for kind in kinds:
        kinds[kind] = np.full(k, math.nan)
    for code in range(k):
        res = ranked_engine.combine(per[code], (float(offsets.pos[code]), float(offsets.neg[code])), max_fprs)
        auroc[code], ap[code] = res["auroc"], res["ap"]
        for m in max_fprs:
            partial[float(m)][code] = res["partial"][m]
        for kind in kinds:
            kinds[kind][code] = res["ap_kinds"].get(kind, math.nan)
    if summaries and all(sm.u2 is not None for sm in summaries):  # unit weights: exact integers
        doubled = [0] * k
        below = [0] * k
        for sm in summaries:  # ranges in increasing order: the negatives below each range
            assert sm.u2 is not None
            for code, p, n, u in zip(sm.codes.tolist(), sm.pos.tolist(), sm.neg.tolist(), sm.u2, strict=True):
                doubled[code] += u + 2 * int(p) * below[code]
                below[code] += int(n)
        for code in range(k):
            p, n = int(offsets.pos[code]), int(offsets.neg[code])
            auroc[code] = doubled[code] / (2 * p * n) if p > 0 and n > 0 else math.nan
    return auroc, ap


def _ovo_value(m: AUROC, areas: np.ndarray, pos: np.ndarray, c: int) -> float:
    """A one-vs-one AUROC member's value from a slice's C (C - 1) pair problems: their areas
    (full or partial, per :func:`~.keyed_split.pair_codes` column) and positive weights (pair
    (i, j)'s positives are class i: its weight), by the member's own rule
    (:meth:`AUROC._ovo_given`). O(C^2)."""
    w = np.array([pos[pair_codes(i, 1 if i == 0 else 0, c)] for i in range(c)], dtype=np.float64)
    return m._ovo_given(w, lambda i, j: float(areas[pair_codes(i, j, c)]))


def final_values(rest_states: Sequence[Mapping[str, Any]], summaries: Sequence[KeyedSummaries],
                 offsets: KeyedOffsets, edges: KeyedEdges, split: KeyedSplit,
                 warned: Sequence[Recorded] = ()) -> tuple[Any, Recorded]:
    """The root: the other members merged and computed; each ranked member's value per slice
    from the problems' AUROC / AP by the member's own rule (:meth:`RankingMetric._value_given`:
    binary, micro, or per class averaged, with its warnings); values in the set's member order
    (``{key: values}`` with slices, a :class:`SlicedResults`); the warnings the tasks' updates
    kept (``warned``: each head's, :func:`~streammetrics._core.warn.reissued`) before compute's,
    as one process raises them. O(R x K + slices x members)."""
    rest: Any = {}
    caught = reissued(*warned)
    if split.rest is not None:
        states = [rebuild(split.rest, s, split.rest_kind) for s in rest_states]
        rest, more_rest = compute_recorded(merged(states))
        caught += more_rest
    partial: dict[float, np.ndarray] = {}
    kinds: dict[tuple[bool, bool], np.ndarray] = {  # the interpolated / 11-point readouts asked
        ranked_engine.ap_kind(cfg["config"]): np.zeros(0) for g in split.groups for cfg in g.ranked.values()
        if cfg["class"] == "AveragePrecision" and ranked_engine.needs_envelope([cfg["config"]])}
    auroc, ap = problem_values(summaries, offsets, split.max_fprs, partial, kinds)
    kinds[(False, False)] = ap
    at = {n: (g, start) for g, start in zip(split.groups, split.starts, strict=True) for n in g.ranked}
    where = {n: at[n] for n in split.names if n in at}  # the set's member order (its warnings')
    twin = empty_set({"members": {n: cfg for g in split.groups for n, cfg in g.ranked.items()},
                      "groups": [list(g.ranked) for g in split.groups]})
    assert isinstance(twin, MetricSet)
    stride = split.width
    out: dict[Any, Any] = {}
    import warnings

    with warnings.catch_warnings(record=True) as more:
        warnings.simplefilter("always")
        for g, key in enumerate(edges.keys):
            got: dict[str, Any] = {}
            for name, (group, start) in where.items():  # each group's columns from its start
                base, width, c = g * stride + start, group.width, group.n_classes
                m = twin[name]
                if isinstance(m, KSStatistic):  # per class (binary: one), its own warning
                    got[name] = m._given(partial[ranked_engine.KS][base : base + c])
                    continue
                assert isinstance(m, (AUROC, AveragePrecision))
                if isinstance(m, AUROC):
                    arr = auroc if m.max_fpr is None or m.max_fpr == 1 else partial[float(m.max_fpr)]
                else:  # the AP by the member's readout (step, interpolated, 11-point)
                    arr = kinds[ranked_engine.ap_kind(m._config())]
                if isinstance(m, AUROC) and m.multi_class == "ovo":
                    got[name] = _ovo_value(m, arr[base : base + width], offsets.pos[base : base + width], c)
                elif m.task == "binary":
                    got[name] = m._value_given(float(arr[base]), None, None, m._undefined)
                elif m.average == "micro":
                    got[name] = m._value_given(float(arr[base + c]), None, None, m._undefined)
                else:
                    columns = arr[base : base + c].copy()
                    got[name] = m._value_given(None, columns, offsets.pos[base : base + c], m._undefined)
            row = rest.get(key, {}) if split.sliced else rest
            values = {n: got[n] if n in got else row[n] for n in split.names}
            out[key] = values["m"] if split.bare else values
    caught += [(str(w.message), w.category) for w in more]
    if not split.sliced:
        return out[None], caught
    rows = edges.rows.tolist()
    return SlicedResults(out, counts=dict(zip(edges.keys, rows, strict=True)), key_names=split.key_names,
                         min_count=0), caught
