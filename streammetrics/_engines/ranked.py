"""Exact binary ranking metrics from score ranges: no process holds more than its range.

The engine-neutral steps of range-partitioned evaluation
(:func:`streammetrics.dask.evaluate_ranked`). Ranges are half-open score intervals
``[e_{r-1}, e_r)`` (``e_0 = -inf``, ``e_R = +inf``) given by R - 1 non-decreasing edges, so tied
scores always share a range and every score of range r is below every score of range r + 1.

1. Each partition is fed to an exact binary ``AUROC`` twin (the library's own validation,
   ignore_index and weight rules) and gives its negatives and positives as sorted runs
   (:func:`runs_of`); a few evenly spaced ranks of each run are its sample
   (:func:`run_sample`), from which weighted quantiles give the edges (:func:`range_edges`).
2. Each run is cut at the edges (:func:`split_runs`: O(R log n), views).
3. Round one: the weight of every piece (:func:`piece_totals`), summed per range
   (:func:`add_totals`), gives the totals above and below each range (:func:`offsets`) -- before
   any range is merged. Round two, per range: its pieces from every partition are merged
   (:func:`merge_range`, the only place a range is held whole) and summarised with those offsets
   (:func:`range_summary`): its Mann-Whitney pairs, its part of the average precision, its piece
   of the curves. Everything comes from one kernel, the counts at distinct thresholds
   (:func:`streammetrics._scores.thresholds.counts_from_sorted`).
4. :func:`combine`: AUROC = (sum_r U_r + sum_r P_r * N_below_r) / (P N) -- the pairs inside each
   range plus every positive of a range above every negative of the ranges below it; AP = the
   sum of the per-range parts; curves = the per-range pieces, offset and concatenated; the
   partial AUROC (``max_fpr``) = McClish's standardisation of the sum of the ranges' parts of
   the area over FPR <= max_fpr (:func:`partial_areas`: each range's own curve points offset
   by the weight above it; 0 from the ranges beyond, the whole area of those within, the one
   holding the crossing interpolated there as one process does) -- O(1) numbers a range; the KS
   statistic = the largest of the ranges' largest |TPR - FPR| over their own offset curve points
   (the :data:`KS` readout beside the partial areas; one number a range). The gains / lift and
   DET curves read the same concatenated counts as the ROC and PR curves.

Bounded pieces: :func:`chunk_runs` reads a partition (a pandas frame, an Arrow table or
batches) ``chunk_rows`` rows at a time, each chunk validated and sorted on its own and kept as
its own sorted runs (no partition-wide sort or merge: the range merge is a k-way merge anyway);
:func:`sample_chunks`, :func:`split_chunks` and :func:`chunk_totals` are the steps above over
such a list of runs; :func:`take_pieces` splits it into one copy per range, releasing
each run as it goes (so the pieces, not the runs, are what stays until each range is merged). A
partition then costs its runs (8 bytes a score, 16 weighted) plus one
chunk in flight, whatever its size. :func:`iter_chunk_runs` yields the runs one chunk at a time:
an engine that reads the partition again for each step (Spark) keeps none of them, and a
partition task costs one chunk.

Exact: equal to the single-process values up to float rounding (1e-12 relative; bit for bit
counts with unit or integer weights). Memory: a partition task holds its partition's runs, a
range task its range; the root holds O(R) numbers (plus the curves, which are the output).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._scores.exact.runs import merge_many
from streammetrics._scores.protocol import ScoreState
from streammetrics._scores.thresholds import (
    ThresholdCounts,
    average_precision,
    counts_from_ranks,
    counts_from_sorted,
    mcclish,
    partial_roc_area,
    roc_auc_from_counts,
)
from streammetrics.calibration.ks_gains import GainsCurve, KSStatistic, LiftCurve
from streammetrics.ranking._results import PRCurveResult, ROCCurveResult
from streammetrics.ranking.det import DETCurve, DETCurveResult
from streammetrics.ranking.metrics import AUROC, AveragePrecision, PRCurve, ROCCurve
from streammetrics.wrappers.metricset import MetricSet

from . import ap_envelope, label_codes, pair_counts
from .ap_envelope import EnvelopePart
from .plan import Plan, empty_set, feed, feed_arrow

#: (negatives, their weights or None, positives, their weights or None), each ascending.
Runs = tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]

_SUPPORTED = (AUROC, AveragePrecision, ROCCurve, PRCurve, KSStatistic, GainsCurve, LiftCurve, DETCurve)
#: The members that read the counts at every distinct score (the curves: the user asked for them;
#: ``LiftCurve`` is a ``GainsCurve``).
_CURVES = (ROCCurve, PRCurve, GainsCurve, DETCurve)
#: The slot of ``KSStatistic`` among a range's readouts (:func:`readouts`, beside the partial
#: areas' ``max_fpr`` values, all below it): the range's largest |TPR - FPR| over its own curve
#: points offset by the weight above it (:func:`partial_areas`), combined by max, not summed.
KS = math.inf
#: The configuration every metric must have (binary, exact, step AP; AUROC's ``max_fpr`` any).
_REQUIRED = {"num_classes": None, "multilabel": False, "multi_class": "ovr"}
#: The configuration keys that may take any value.
_FREE = {"average", "ignore_index", "drop_intermediate", "max_fpr", "interpolated", "eleven_point"}


def check_metrics(metrics: Mapping[str, Any], free: Iterable[str] = ()) -> Any:
    """Check that every metric is an exact binary AUROC (full or partial area: ``max_fpr``) /
    AveragePrecision (step, interpolated or 11-point) / KSStatistic / ROCCurve / PRCurve /
    GainsCurve / LiftCurve / DETCurve with one common ``ignore_index`` (None for the KS and
    gains members, which have none), all of them ``scores="probability"`` (the twin's
    probability buffer checks the rows: :func:`twin_options`) or none; return that
    ``ignore_index``. ``free``: more configuration keys that may take any value (a route that
    maps ``classes=`` / ``pos_label=`` labels itself)."""
    ignore = prob = None
    required = _REQUIRED
    for i, (name, m) in enumerate(metrics.items()):
        if type(m) not in _SUPPORTED:
            raise ValueError(
                f"metrics: range-partitioned evaluation supports AUROC, AveragePrecision, ROCCurve, PRCurve, "
                f"KSStatistic, GainsCurve, LiftCurve and DETCurve, got {type(m).__name__} ({name!r})")
        cfg = m._config()
        extra = sorted(set(cfg) - set(_REQUIRED) - _FREE - {"scores"} - set(free))
        bad = [k for k in required if k in cfg and cfg[k] != required[k]]
        if extra or bad:
            key = (extra or bad)[0]
            raise ValueError(
                f"metrics: {name!r} must be exact and binary (AUROC, step AP) for "
                f"range-partitioned evaluation, got {key}={cfg.get(key)!r}")
        # KSStatistic / GainsCurve have no ignore_index: their state is that of ignore_index=None
        if i and cfg.get("ignore_index") != ignore:
            raise ValueError(f"metrics: {name!r} has ignore_index={cfg.get('ignore_index')!r}, "
                             f"the others {ignore!r}")
        if i and (cfg.get("scores") == "probability") != prob:
            raise ValueError(f"metrics: {name!r} has scores={cfg.get('scores', 'raw')!r}, the others "
                             f"{'probability' if prob else 'raw or logit'!r} (one state checks "
                             "probabilities, the other not); give them the same scores=")
        ignore, prob = cfg.get("ignore_index"), cfg.get("scores") == "probability"
    return ignore


def twin_options(configs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The options of the ranked members (``metric._config()`` dicts, :func:`check_metrics`) that
    the :func:`runs_config` twin shares to check their rows as they do: ``classes=`` /
    ``pos_label=`` (:func:`~.label_codes.label_options`) and ``scores="probability"`` (its
    exact buffer checks the probabilities). O(members x C)."""
    configs = list(configs)
    labels = label_codes.label_options(configs)
    probability = any(c.get("scores") == "probability" for c in configs)
    return {**labels, "scores": "probability"} if probability else labels


def partial_fprs(configs: Iterable[Mapping[str, Any]]) -> tuple[float, ...]:
    """The distinct ``max_fpr`` below 1 of the AUROC configurations among ``configs`` (a
    metric's ``_config()``), increasing: the partial areas each range computes
    (:func:`range_summary`). ``max_fpr=1`` is the full area. O(members)."""
    return tuple(sorted({float(c["max_fpr"]) for c in configs
                         if c.get("max_fpr") is not None and c["max_fpr"] != 1}))


def readouts(members: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[float, ...]:
    """The readouts each range computes from its curve points offset by the weight above it
    (:func:`partial_areas`) for ``members``, (class name, ``_config()``) pairs: the partial
    areas' distinct ``max_fpr`` (:func:`partial_fprs`), then :data:`KS` when a member is a
    ``KSStatistic``. O(members)."""
    pairs = list(members)
    ks = any(name == KSStatistic.__name__ for name, _ in pairs)
    return partial_fprs(cfg for _, cfg in pairs) + ((KS,) if ks else ())


def wants_curve(members: Iterable[Any]) -> bool:
    """Whether a metric among ``members`` reads the counts at every distinct score (ROC, PR,
    gains / lift, DET curves: the ranges then send their curve pieces). O(members)."""
    return any(isinstance(m, _CURVES) for m in members)


def runs_config(ignore_index: Any, labels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The configuration of the exact binary ``AUROC`` twin that validates each partition;
    ``labels``: the ranked members' ``classes=`` / ``pos_label=`` and ``scores=`` (its own codec
    then maps each batch's labels, its state checks the rows, as theirs do: :func:`twin_options`)."""
    return MetricSet(s=AUROC(ignore_index=ignore_index, **dict(labels or {})))._config()


def runs_of(acc: MetricSet) -> Runs:
    """The sorted negatives and positives of a fed :func:`runs_config` twin, read through the
    exact buffer's pair-level view (:meth:`~streammetrics._scores.protocol.PairScores.group`): each
    group's scores sorted increasing as float64 copies, with their weights -- None for an
    unweighted state, 1.0 for the unit samples of a weighted one. O(n)."""
    state = acc["s"]._state
    assert isinstance(state, ScoreState)
    pairs = state.pair_scores()
    assert pairs is not None  # the twin's AUROC is exact: its buffer keeps every score

    def run(grp: int) -> tuple[np.ndarray, np.ndarray | None]:
        v, w = pairs.group(0, grp)
        weights = None if not pairs.is_weighted else np.ones(v.shape[0]) if w is None else np.array(w)
        return np.array(v, dtype=np.float64), weights

    pos = pairs.pos_group(0)
    nv, nw = run(1 - pos)  # binary: the negatives' group, then the positives'
    pv, pw = run(pos)
    return nv, nw, pv, pw


def row_chunks(frame: Any, chunk_rows: int) -> Iterator[Any]:
    """Consecutive slices of at most ``chunk_rows`` rows of a pandas DataFrame or an Arrow
    table / record batch (views: nothing is copied). O(rows / chunk_rows)."""
    n = len(frame) if hasattr(frame, "iloc") else frame.num_rows
    for a in range(0, n, chunk_rows):
        yield frame.iloc[a : a + chunk_rows] if hasattr(frame, "iloc") else frame.slice(a, chunk_rows)


def iter_chunk_runs(frames: Iterable[Any], plan: Plan, where: str = "",
                    skipped: list[int] | None = None) -> Iterator[Runs]:
    """The sorted runs of each frame of ``frames`` (pandas DataFrames, Arrow tables or record
    batches, e.g. :func:`row_chunks` of a partition), one at a time, skipping frames with no
    score.

    Each frame is fed to its own exact binary ``AUROC`` twin (``plan.config``, see
    :func:`runs_config`: the library's validation, null, weight and ``ignore_index`` rules; a
    bad row is named by its position counted over every frame, in ``where``; an Arrow frame's
    numeric columns go straight to numpy, :func:`~streammetrics._engines.plan.feed_arrow`), its
    runs are taken (:func:`runs_of`) and the twin is dropped before the runs are yielded. Memory: one
    frame's validation and sort in flight plus whatever the caller keeps of the runs yielded;
    O(c log c) time per frame of c rows. ``skipped``: the rows dropped for a null
    (``plan.nulls="skip"``) are added to ``skipped[0]``.
    """
    offset = 0
    for frame in frames:
        rows = len(frame) if hasattr(frame, "iloc") else frame.num_rows
        if rows:
            acc = empty_set(plan.config, plan.kind)
            if hasattr(frame, "iloc"):
                dropped = feed(acc, frame, plan, where, offset)
            else:  # Arrow: numeric columns straight to numpy, else through pandas (a null named)
                dropped = feed_arrow(acc, frame, plan, where, offset)
            if skipped is not None:
                skipped[0] += dropped
            del frame
            assert isinstance(acc, MetricSet)
            runs = runs_of(acc)
            del acc
            if runs[0].shape[0] or runs[2].shape[0]:
                yield runs
            del runs
        offset += rows


def chunk_runs(frames: Iterable[Any], plan: Plan, where: str = "",
               skipped: list[int] | None = None) -> list[Runs]:
    """:func:`iter_chunk_runs` kept: the list of every frame's sorted runs (``skipped`` as
    there). Memory: the runs (8 bytes a score, 16 weighted) plus one frame's validation and sort
    in flight; O(n log c) time for frames of c rows."""
    return list(iter_chunk_runs(frames, plan, where, skipped))


def sample_chunks(chunks: Iterable[Runs], k: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """:func:`run_sample` of each of a partition's runs, concatenated (up to ``k`` ranks per run
    and class, each with the number of scores it stands for)."""
    samples = [run_sample(r, k) for r in chunks]
    if not samples:
        return np.zeros(0), np.zeros(0)
    return np.concatenate([s[0] for s in samples]), np.concatenate([s[1] for s in samples])


def split_chunks(chunks: Iterable[Runs], edges: np.ndarray) -> list[list[Runs]]:
    """Per range, the pieces of each of a partition's runs in it (views, :func:`split_runs`).
    O(len(chunks) x R log c)."""
    out: list[list[Runs]] = [[] for _ in range(edges.shape[0] + 1)]
    for runs in chunks:
        for r, piece in enumerate(split_runs(runs, edges)):
            if piece[0].shape[0] or piece[2].shape[0]:
                out[r].append(piece)
    return out


def take_pieces(chunks: list[Runs], edges: np.ndarray) -> list[list[Runs]]:
    """Per range, one piece of a partition: its runs' pieces in that range copied, one after
    the other, into one array per class -- in ascending order within each run's part but NOT
    sorted as a whole (the range's merge sorts anyway: :func:`merge_unsorted`) -- with each run
    removed from ``chunks`` as soon as it is copied (``chunks`` is left empty).

    Whoever held ``chunks`` then no longer holds the runs, and each range's piece -- one array
    per class, not a view of every run -- is freed (returned to the system when large) once its
    range has taken it: the partition's memory shrinks range by range instead of staying whole
    until the last range is done. Memory: the runs plus one run at a time. O(n) copying plus
    O(k x R log c) for k runs of c scores.
    """
    n_ranges = edges.shape[0] + 1
    weighted = any(r[1] is not None or r[3] is not None for r in chunks)
    cuts = [[np.concatenate([[0], np.searchsorted(v, edges, "left"), [v.shape[0]]]) for v in (r[0], r[2])]
            for r in chunks]
    sizes = [[sum(int(c[k][i + 1] - c[k][i]) for c in cuts) for k in (0, 1)] for i in range(n_ranges)]
    vals = [[np.empty(n) for n in row] for row in sizes]
    wts = [[np.empty(n) for n in row] if weighted else [None, None] for row in sizes]
    fill = [[0, 0] for _ in range(n_ranges)]
    chunks.reverse()  # popped from the end: in their order, each freed once copied
    cuts.reverse()
    while chunks:
        runs, cut = chunks.pop(), cuts.pop()
        for k, (v, w) in enumerate(((runs[0], runs[1]), (runs[2], runs[3]))):
            for i in range(n_ranges):
                a, b = int(cut[k][i]), int(cut[k][i + 1])
                at = fill[i][k]
                vals[i][k][at : at + b - a] = v[a:b]
                dst = wts[i][k]
                if dst is not None:
                    dst[at : at + b - a] = 1.0 if w is None else w[a:b]
                fill[i][k] = at + b - a
        del runs
    return [[(vals[i][0], wts[i][0], vals[i][1], wts[i][1])] if sizes[i][0] or sizes[i][1] else []
            for i in range(n_ranges)]


def _sorted_union(items: list[tuple[np.ndarray, np.ndarray | None]]) -> tuple[np.ndarray, np.ndarray | None]:
    items = [(v, w) for v, w in items if v.shape[0]]
    if not items:
        return np.zeros(0), None
    v = np.concatenate([np.asarray(a, dtype=np.float64) for a, _ in items])  # a new array, always
    if all(w is None for _, w in items):
        v.sort()
        return v, None
    w = np.concatenate([np.ones(a.shape[0]) if b is None else b for a, b in items])
    order = np.argsort(v, kind="stable")
    return v[order], w[order]


def merge_unsorted(pieces: Sequence[Runs]) -> Runs:
    """One range's sorted runs from pieces in any order (e.g. :func:`take_pieces`'): each
    class concatenated into a new array and sorted (the pieces are not changed). O(n log n)."""
    nv, nw = _sorted_union([(p[0], p[1]) for p in pieces])
    pv, pw = _sorted_union([(p[2], p[3]) for p in pieces])
    return nv, nw, pv, pw


def chunk_totals(split: Sequence[Sequence[Runs]]) -> list[tuple[float, float]]:
    """(P, N) of each range's pieces of one partition (:func:`split_chunks`), summed over its
    runs: round one of :func:`piece_totals` for a chunked partition. O(n)."""
    return [(float(sum(t[0] for t in tot)), float(sum(t[1] for t in tot)))
            for tot in ([range_totals(p) for p in pieces] for pieces in split)]


def run_sample(runs: Runs, k: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``k`` evenly spaced ranks of each run and the number of samples each stands for."""
    vals, counts = [], []
    for v in (runs[0], runs[2]):
        n = v.shape[0]
        if n == 0:
            continue
        idx = np.unique(np.linspace(0, n - 1, min(k, n)).astype(np.int64))
        vals.append(v[idx])
        counts.append(np.full(idx.shape[0], n / idx.shape[0]))
    if not vals:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(vals), np.concatenate(counts)


def range_edges(samples: Sequence[tuple[np.ndarray, np.ndarray]], n_ranges: int) -> np.ndarray:
    """R - 1 non-decreasing edges at the weighted quantiles 1/R, ..., (R-1)/R of the samples
    (repeated edges -- heavy ties -- give empty ranges). O(s log s) for s sampled values."""
    v = np.concatenate([s[0] for s in samples]) if samples else np.zeros(0)
    c = np.concatenate([s[1] for s in samples]) if samples else np.zeros(0)
    if v.shape[0] == 0:
        return np.zeros(n_ranges - 1)
    order = np.argsort(v, kind="stable")
    v, cum = v[order], np.cumsum(c[order])
    at = np.searchsorted(cum, cum[-1] * np.arange(1, n_ranges) / n_ranges, "left")
    return np.asarray(v[np.minimum(at, v.shape[0] - 1)], dtype=np.float64)


def split_runs(runs: Runs, edges: np.ndarray) -> list[Runs]:
    """The pieces of ``runs`` in each of the R ranges ``edges`` define (views). O(R log n)."""
    cuts = []
    for v in (runs[0], runs[2]):
        cuts.append(np.concatenate([[0], np.searchsorted(v, edges, "left"), [v.shape[0]]]))
    out: list[Runs] = []
    (nv, nw, pv, pw), (cn, cp) = runs, cuts
    for r in range(edges.shape[0] + 1):
        a, b, c, d = int(cn[r]), int(cn[r + 1]), int(cp[r]), int(cp[r + 1])
        out.append((nv[a:b], None if nw is None else nw[a:b], pv[c:d], None if pw is None else pw[c:d]))
    return out


def _merge(items: list[tuple[np.ndarray, np.ndarray | None]]) -> tuple[np.ndarray, np.ndarray | None]:
    if any(w is not None for _, w in items):  # one weighted piece: give the others unit weights
        items = [(v, np.ones(v.shape[0]) if w is None else w) for v, w in items]
    # merge_many concatenates (a new array) before it sorts: the pieces themselves are not changed
    v, w = merge_many([(np.asarray(v, dtype=np.float64), w) for v, w in items])
    return v, w


def merge_range(pieces: Sequence[Runs]) -> Runs:
    """One range's sorted runs from its pieces of every partition (a k-way merge per class)."""
    nv, nw = _merge([(p[0], p[1]) for p in pieces])
    pv, pw = _merge([(p[2], p[3]) for p in pieces])
    return nv, nw, pv, pw


def _total(v: np.ndarray, w: np.ndarray | None) -> float:
    return float(v.shape[0]) if w is None else float(w.sum())


def range_totals(runs: Runs) -> tuple[float, float]:
    """(P_r, N_r): the range's positive and negative weight (round one)."""
    return _total(runs[2], runs[3]), _total(runs[0], runs[1])


def piece_totals(pieces: Sequence[Runs]) -> list[tuple[float, float]]:
    """(P, N) of each piece of one partition: round one needs no range to be merged. O(n)."""
    return [range_totals(p) for p in pieces]


def add_totals(per_partition: Sequence[Sequence[tuple[float, float]]]) -> list[tuple[float, float]]:
    """Each range's (P_r, N_r), summed over the partitions' pieces. O(partitions x R)."""
    n_ranges = len(per_partition[0]) if per_partition else 0
    return [(float(sum(t[r][0] for t in per_partition)), float(sum(t[r][1] for t in per_partition)))
            for r in range(n_ranges)]


def offsets(totals: Sequence[tuple[float, float]]) -> list[tuple[float, float, float]]:
    """Per range: (positive weight above it, negative weight above it, negative weight below
    it), ranges in increasing score order. O(R)."""
    p = np.array([t[0] for t in totals], dtype=np.float64)
    n = np.array([t[1] for t in totals], dtype=np.float64)
    p_above = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])
    n_above = np.concatenate([np.cumsum(n[::-1])[::-1][1:], [0.0]])
    n_below = np.concatenate([[0.0], np.cumsum(n)[:-1]])
    return [(float(a), float(b), float(c)) for a, b, c in zip(p_above, n_above, n_below, strict=True)]


@dataclass(frozen=True)
class RangeSummary:
    """What a range sends to the root: its totals, Mann-Whitney pairs, AP part, curve pieces."""

    n_scores: int
    pos: float
    neg: float
    pairs: float  # within the range: U_r (ties count 1/2) plus P_r x (negatives below)
    ap_part: float
    curve: ThresholdCounts | None  # counts at every distinct score, offset by the ranges above
    #: per max_fpr asked (:func:`partial_fprs`): the range's part of the ROC area over FPR <= it
    partial: tuple[float, ...] = ()
    #: with ``exact_pairs`` (unit weights): 2 U_r, the range's own doubled Mann-Whitney count,
    #: an exact integer (ties 1/2; ``range_counts``' kernels); else None
    u2: int | None = None
    #: with ``envelope``: the range's share of the interpolated and 11-point AP
    #: (:func:`~streammetrics._engines.ap_envelope.range_part`); else None
    envelope: EnvelopePart | None = None


def _shift(c: ThresholdCounts, tp: float, fp: float, total_pos: float, total_neg: float) -> ThresholdCounts:
    return ThresholdCounts(c.thresholds, c.tps + tp, c.fps + fp, total_pos, total_neg)


def range_summary(runs: Runs, offset: tuple[float, float, float], totals: tuple[float, float],
                  curves: bool, max_fprs: Sequence[float] = (), *, ap: bool = True,
                  exact_pairs: bool = False, envelope: bool = False) -> RangeSummary:
    """Round two: the range's summary given the weights above and below it and the totals (P, N).

    ``pairs`` = U_r + P_r * N_below, with U_r the range's own Mann-Whitney count (from the
    area of its own ROC curve; with ``exact_pairs``, unit weights only, from the exact integer
    ``u2`` = 2 U_r instead); ``ap_part`` (0 without ``ap``) = sum over the range's positive
    thresholds k of (R_k - R_{k-1}) P_k with the counts offset by the ranges above (the first
    R_{k-1} is the recall above the range); ``partial``, per ``max_fprs``, its part of the ROC
    area over FPR <= max_fpr (:func:`partial_areas`); with ``envelope`` (an interpolated or
    11-point AP asked), its share of those (:func:`~streammetrics._engines.ap_envelope.range_part`:
    its precision envelope and per-level maxima, at most 2 numbers per distinct positive score).

    The counts at every distinct score (one linear merge) are made only for what reads them:
    curves, partial areas, the curve-area pairs. The AP's counts at the distinct positive
    scores and ``u2`` come from one ranking of those scores among the negatives
    (:func:`~streammetrics._engines.pair_counts.distinct_scores`, ``pair_counts.ranks``,
    ``pair_counts.doubled_pairs``; the counts by
    :func:`~streammetrics._scores.thresholds.counts_from_ranks`): the same numbers as the
    given-thresholds search. O(n_r) after the merge (plus O(T log n_r) for T distinct positive
    scores without the compiled kernels).
    """

    nv, nw, pv, pw = runs
    p_above, n_above, n_below = offset
    P, N = totals
    p_r, n_r = range_totals(runs)
    if exact_pairs and (nw is not None or pw is not None):
        raise ValueError("exact_pairs: the exact pair count needs unit weights")
    need_ap = ap and P > 0 and p_r > 0
    pairs = p_r * n_below
    every = None
    if curves or max_fprs or (not exact_pairs and p_r > 0 and n_r > 0):
        every = counts_from_sorted(pv, pw, nv, nw)
        if not exact_pairs and p_r > 0 and n_r > 0:
            pairs += roc_auc_from_counts(every) * p_r * n_r
    u2, ap_part, env = None, 0.0, None
    # the envelope also of a range whose positives weigh 0: its thresholds bound those above it
    need_env = envelope and ap and P > 0 and pv.shape[0] > 0
    if need_ap or need_env or exact_pairs:
        starts, asc, dp = pair_counts.distinct_scores(pv)
        left, right = pair_counts.ranks(nv, asc)
        if need_ap or need_env:
            n_pos, n_neg = pv.shape[0], nv.shape[0]
            counts = counts_from_ranks(asc[::-1], ((n_pos - starts)[::-1], pw, n_pos),
                                       ((n_neg - left)[::-1], nw, n_neg), pos_scores=pv)
            if need_env:
                env = ap_envelope.range_part(counts, (p_above, n_above), P)
        if need_ap:
            pr = _shift(counts, p_above, n_above, P, N)
            # the kernel starts from recall 0, not from the recall above (none above: nothing to
            # take back -- and the top threshold may weigh 0, whose precision is 0/0)
            first = pr.tps[0] / (pr.tps[0] + pr.fps[0]) if p_above > 0 else 0.0
            ap_part = average_precision(pr) - (p_above / P) * first
        if exact_pairs:
            u2 = pair_counts.doubled_pairs(dp, left, right)  # overwrites right
            pairs += u2 / 2
    curve = _shift(every, p_above, n_above, P, N) if curves and every is not None else None
    partial = partial_areas(every, (p_above, n_above), totals, max_fprs) if every is not None else ()
    return RangeSummary(nv.shape[0] + pv.shape[0], p_r, n_r, pairs, ap_part, curve, partial, u2, env)


def partial_areas(every: ThresholdCounts, above: tuple[float, float], totals: tuple[float, float],
                  max_fprs: Sequence[float]) -> tuple[float, ...]:
    """A range's part of the ROC area over FPR <= m, for each m of ``max_fprs``: its curve
    points (``every``: its counts at each of its distinct scores) offset by the positive and
    negative weight ``above`` it, from the point where the ranges above end, in rates of the
    totals (P, N); :func:`~streammetrics._scores.thresholds.partial_roc_area` of that polyline
    -- 0 for a range starting beyond m, its whole area for one ending within, the range
    holding FPR = m interpolated there as one process does. The parts add up to the partial
    area (the ranges' polylines join end to start). For m = :data:`KS` the range's largest
    |TPR - FPR| over the same points (the first is the last point of the ranges above: never
    beyond the statistic), whose maximum over the ranges is the KS statistic -- with unit
    weights the same floating-point steps as one process's
    (:func:`streammetrics.calibration._business_curves.ks_certified`), bit for bit. All 0 when
    P or N is 0 (undefined). O(n_r) per m."""
    P, N = totals
    if not max_fprs or P <= 0 or N <= 0:
        return tuple(0.0 for _ in max_fprs)
    fpr = np.concatenate([[0.0], every.fps]) + above[1]
    tpr = np.concatenate([[0.0], every.tps]) + above[0]
    fpr /= N
    tpr /= P
    return tuple(float(np.max(np.abs(tpr - fpr))) if m == KS else partial_roc_area(fpr, tpr, m)
                 for m in max_fprs)


def _concat(parts: list[ThresholdCounts], P: float, N: float) -> ThresholdCounts:
    """The per-range pieces (increasing ranges) as one curve in decreasing threshold order."""
    parts = parts[::-1]
    if not parts:
        return ThresholdCounts(np.zeros(0), np.zeros(0), np.zeros(0), P, N)
    return ThresholdCounts(np.concatenate([c.thresholds for c in parts]),
                           np.concatenate([c.tps for c in parts]),
                           np.concatenate([c.fps for c in parts]), P, N)


def combine(summaries: Sequence[RangeSummary], totals: tuple[float, float],
            max_fprs: Sequence[float] = ()) -> dict[str, Any]:
    """The values from the per-range summaries (ranges in increasing score order).

    Returns ``{"auroc", "ap", "curve", "partial", "ap_kinds"}``: AUROC and AP (nan when
    undefined; ``ap_kinds`` the AP per readout ``(interpolated, eleven_point)``, the
    interpolated ones from the summaries' envelopes where they carry them), the
    counts at every distinct score behind the ROC and PR curves (``None`` unless the summaries
    carry them) and, per ``max_fprs`` (those the summaries were made with), the
    McClish-standardised partial AUROC from the sum of the ranges' parts
    (:func:`~streammetrics._scores.thresholds.mcclish`; nan when undefined), at :data:`KS` the
    KS statistic, the largest of the ranges' gaps. Read an AUROC
    member's value with :func:`auroc_value`. O(R) plus the curve's size.
    """
    P, N = totals
    auroc = math.nan if P <= 0 or N <= 0 else sum(s.pairs for s in summaries) / (P * N)
    ap = math.nan if P <= 0 else max(0.0, sum(s.ap_part for s in summaries))
    curve = None
    if summaries and summaries[0].curve is not None:
        curve = _concat([s.curve for s in summaries if s.curve is not None], P, N)
    partial = {m: math.nan if P <= 0 or N <= 0
               else max(s.partial[i] for s in summaries) if m == KS
               else mcclish(sum(s.partial[i] for s in summaries), m)
               for i, m in enumerate(max_fprs)}
    kinds = {(False, False): ap}
    if P <= 0:  # undefined whatever the readout
        kinds.update({(True, False): math.nan, (False, True): math.nan})
    elif any(s.envelope is not None for s in summaries):
        interp, eleven = ap_envelope.combine([s.envelope or ap_envelope.NONE for s in summaries],
                                             [s.pos for s in summaries])
        kinds[(True, False)] = interp
        kinds[(False, True)] = eleven
    return {"auroc": auroc, "ap": ap, "curve": curve, "partial": partial, "ap_kinds": kinds}


def ap_kind(config: Mapping[str, Any]) -> tuple[bool, bool]:
    """An AveragePrecision configuration's readout as ``(interpolated, eleven_point)``: step
    ``(False, False)``, interpolated ``(True, False)``, 11-point ``(False, True)`` (11-point wins
    when both are set, as in :func:`~streammetrics._scores.thresholds.average_precision`). O(1)."""
    if config.get("eleven_point", False):
        return False, True
    return bool(config.get("interpolated", False)), False


def ap_value(res: Mapping[str, Any], config: Mapping[str, Any]) -> float:
    """An AveragePrecision member's value from :func:`combine`'s result, by its readout
    (:func:`ap_kind`). O(1)."""
    return float(res["ap_kinds"][ap_kind(config)])


def needs_envelope(configs: Iterable[Mapping[str, Any]]) -> bool:
    """Whether an AveragePrecision configuration among ``configs`` (a metric's ``_config()``)
    asks for the interpolated or 11-point AP: the range summaries then carry their envelopes
    (``range_summary(envelope=True)``). O(members)."""
    return any(c.get("interpolated") or c.get("eleven_point") for c in configs)


def auroc_value(res: Mapping[str, Any], max_fpr: float | None) -> float:
    """An AUROC member's value from :func:`combine`'s result: the full area, or (``max_fpr``
    below 1) the standardised partial one. O(1)."""
    return float(res["auroc"] if max_fpr is None or max_fpr == 1 else res["partial"][float(max_fpr)])


def config_value(res: Mapping[str, Any], member: Mapping[str, Any]) -> float:
    """A ranked member's value from :func:`combine`'s result by its MetricSet configuration
    (``{"class", "config"}``): AUROC (:func:`auroc_value`), KS (the :data:`KS` readout), else
    AP (:func:`ap_value`). O(1)."""
    if member["class"] == AUROC.__name__:
        return auroc_value(res, member["config"].get("max_fpr"))
    if member["class"] == KSStatistic.__name__:
        return float(res["partial"][KS])
    return ap_value(res, member["config"])


def member_values(members: Iterable[tuple[str, Any]], res: Mapping[str, Any]) -> dict[str, Any]:
    """Each member's value from :func:`combine`'s result, warning as one process does where a
    value is undefined: AUROC (:func:`auroc_value`), AP (:func:`ap_value`) and KS (the
    :data:`KS` readout) as floats, the curves as ``ROCCurveResult`` / ``PRCurveResult`` /
    ``GainsCurveResult`` (gains and lift) / ``DETCurveResult``. ``members``: (name, metric) pairs, e.g. a
    MetricSet's ``items()``. O(members) plus the curves' size."""
    out: dict[str, Any] = {}
    for name, m in members:
        if isinstance(m, AUROC):
            out[name] = auroc_value(res, m.max_fpr)
            if out[name] != out[name]:
                warn_undefined_nan("AUROC", "no positives or no negatives")
        elif isinstance(m, AveragePrecision):
            out[name] = ap_value(res, m._config())
            if out[name] != out[name]:
                warn_undefined_nan("AveragePrecision", "no positives")
        elif isinstance(m, KSStatistic):
            out[name] = m._given(np.array([res["partial"][KS]]))
        elif isinstance(m, ROCCurve):
            out[name] = ROCCurveResult(res["curve"], m.drop_intermediate)
        elif isinstance(m, GainsCurve):
            out[name] = GainsCurve._result(res["curve"])
            if math.isnan(out[name].max_lift):
                warn_undefined_nan(m._name, "no positives")
        elif isinstance(m, DETCurve):
            out[name] = DETCurveResult(res["curve"], m.drop_intermediate)
            m._check(res["curve"])
        else:
            out[name] = PRCurveResult(res["curve"])
    return out
