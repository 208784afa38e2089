"""Exact binary AUROC and AP of :func:`streammetrics.spark.evaluate` over a Parquet scan, by score ranges.

The score-range idea of :mod:`streammetrics._engines.range_counts` (Dask) on Spark, where moving
data between Python tasks is what costs: each shuffled or collected byte crosses the JVM
(measured on ``local[2]``, a loaded machine: collecting 80 MB of bytes ~0.6 s of CPU, shuffling
them ~0.5 s, against ~0.1 s for a Python task to read and validate the 10M rows they hold).
So nothing is shuffled: each of R range tasks reads every row group of the scan itself
(pyarrow, as :mod:`streammetrics._engines.spark_files` does) and keeps only the scores of its
range -- the files are the shuffle. In one Spark job:

1. The driver cuts R - 1 score edges at the quantiles of a sample: up to
   :data:`SAMPLE_GROUPS` evenly spaced row groups' scores, read on the driver (the edges only
   balance the ranges; any edges give the same values).
2. Range task r reads every row group (label and score columns; a null is refused naming its
   file and row) and keeps the scores with ``edges[r-1] <= s < edges[r]``, split by label. Its
   share (1/R of the row groups) it validates as the exact score state does and feeds to the
   set's other members; the other rows it does not check -- each row is in one share, whose
   task refuses it (the error one process raises for that batch) and so fails the job. It
   sorts its scores once (:func:`range_counts.range_counts`) and sends the driver its
   positives, negatives, doubled Mann-Whitney count and -- only when the set holds an
   ``AveragePrecision`` -- per distinct positive score, the positives and negatives added
   there, in the smallest unsigned integer type that holds them (usually one byte each, where
   :class:`range_counts.RangeCounts` holds 24); AUROC alone needs only the three numbers.
3. The driver rebuilds each range's counts and computes the values with
   :func:`range_counts.final_values`: the same floating-point steps as one process, bit for bit.

Taken where :func:`range_counts.split_of` takes the Dask range path (exact binary AUROC / AP
sharing one score state; no weights, slices or other ``update`` keywords; numeric label and
score), with ``nulls="error"``, on the direct Parquet path and on at most :data:`MAX_RANGES`
cores. R is the session's default parallelism: every range task reads all the rows, so the
reads grow as R times the rows -- beyond a few cores (and off this path: weights,
``nulls="skip"``, any other frame) the ranked members go by
:mod:`streammetrics._engines.spark_ranked`'s shuffled ranges (each row read once, its
sorted runs persisted and shuffled).

Complexity: each range task O(n) reads and validation plus O(n_r log n_r) for its sort; the
driver O(sampled row groups + distinct positive scores). Memory: a task one ~1M-row batch
plus its range's scores (8 bytes each, twice while it sorts them: the kept pieces and their
concatenation) -- where the general path's driver holds every score; the driver, with an
``AveragePrecision`` member, ~2 bytes per distinct positive score while it receives them, 24
while it computes AP (AUROC alone: three numbers per range).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from streammetrics._core.metric import trusted_states
from streammetrics._core.warn import recorded

from . import label_codes, range_counts
from . import ranked as ranked_engine
from .messages import located
from .plan import Plan, arrow_arrays, arrow_chunks, column, drop_nulls, empty_set, state_of
from .rest_order import checked_rows
from .spark_files import Piece, batches_of, numpy_dtype, open_file
from .spark_worker import settle

#: At most this many ranges (each range task reads every row).
MAX_RANGES = 4
#: Row groups whose scores the driver reads to place the edges, and scores kept from each.
SAMPLE_GROUPS = 4
SAMPLE_PER_GROUP = 4096
_EMPTY = np.zeros(0)


def split_for(df: Any, run: Any) -> range_counts.Split | None:
    """The split of ``run``'s set when the range path gives its exact values (see the module
    docstring) on at most :data:`MAX_RANGES` cores (R = the cores: a range task holds one
    core's share of the scores), else None -- then
    :func:`streammetrics._engines.spark_ranked.split_for` takes the ranked members."""
    plan = run.plan
    if not run.request.compute or plan.nulls != "error" or plan.family == "retrieval":
        return None
    if df.sparkSession.sparkContext.defaultParallelism > MAX_RANGES:  # a range would exceed a core's share
        return None
    other = np.dtype(object)  # not a number: split_of refuses it
    types = {f.name: numpy_dtype(type(f.dataType).__name__) or other for f in df.schema.fields}
    return range_counts.split_of(run.template, plan, types, labels=True)


def range_total(parallelism: int) -> int:
    """The number of ranges on ``parallelism`` cores: one per core, at most :data:`MAX_RANGES`."""
    return max(1, min(MAX_RANGES, parallelism))


def sample_edges(pieces: Sequence[Piece], score: str, n_ranges: int) -> np.ndarray:
    """R - 1 edges at the quantiles of up to :data:`SAMPLE_GROUPS` evenly spaced row groups'
    scores (:data:`SAMPLE_PER_GROUP` each, NaN dropped), read on the driver; a file that cannot
    be read there is left to the tasks (the edges only balance the ranges). O(sampled rows)."""
    if n_ranges <= 1:
        return np.zeros(0)
    groups = [(p.source, g) for p in pieces for g in range(p.first_group, p.stop_group)]
    at = np.linspace(0, len(groups) - 1, min(SAMPLE_GROUPS, len(groups))).astype(np.int64)
    picks = sorted({groups[i] for i in at})
    samples: list[tuple[np.ndarray, np.ndarray]] = []
    for source, g in picks:
        try:
            arr = open_file(source).read_row_group(g, columns=[score]).column(0)
            v = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
        except Exception:  # noqa: BLE001 -- the task reading this row group names the problem
            continue
        v = v[~np.isnan(v)]
        samples.append(ranked_engine.run_sample((v, None, v[:0], None), SAMPLE_PER_GROUP))
    return ranked_engine.range_edges(samples, n_ranges)


def _rows(pieces: Sequence[Piece], plan: Plan) -> Iterator[tuple[np.ndarray, np.ndarray, str]]:
    """The ``(labels, scores, where)`` of the pieces' row groups, ~1M rows at a time, as the direct
    path reads them (a null refused naming its file and row; ``where`` the file and the batch's
    first row, for a refused value's message). O(rows read)."""
    columns = plan.columns()
    assert isinstance(plan.label, str) and isinstance(plan.score, str)  # range_counts.split_of
    for piece in pieces:
        offset = piece.first_row
        for chunk in arrow_chunks(batches_of(piece, columns)):
            arrays = arrow_arrays(chunk, plan)
            where = f"the Parquet file {piece.source!r} from row {offset}"
            if arrays is not None:
                yield arrays[plan.label], arrays[plan.score], where
            else:  # a null or a NaN: refused naming the row (nulls="error")
                rows = chunk.replace_schema_metadata(None).to_pandas()
                df, _ = drop_nulls(rows, plan, piece.source, offset)
                yield column(df, plan.label, "label"), column(df, plan.score, "score"), where
            offset += chunk.num_rows


def _range_mask(s: np.ndarray, edges: np.ndarray, r: int) -> np.ndarray | None:
    """Which scores fall in range r, ``edges[r-1] <= s < edges[r]`` (the ranges of
    :func:`range_counts.route_runs`: a score's range is the number of edges <= it); None for
    every score (one range). O(n)."""
    if edges.shape[0] == 0:
        return None
    if r == 0:
        return s < edges[0]
    if r == edges.shape[0]:
        return s >= edges[-1]
    return (s >= edges[r - 1]) & (s < edges[r])


def _packed(counts: np.ndarray) -> np.ndarray:
    """Non-negative integer counts (float64) in the smallest unsigned type holding them."""
    top = float(counts.max()) if counts.shape[0] else 0.0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return counts.astype(dtype)
    return counts.astype(np.uint64)


class Refused(NamedTuple):
    """A range task's refusal of a row of its share: the piece's index and the ValueError's
    message (returned, not raised, so that the driver raises the first piece's: one process's
    error whichever task fails first)."""

    piece: int
    message: str


def range_task(plan: Plan, split: range_counts.Split, pieces: Sequence[Piece], share: tuple[int, int],
               edges: np.ndarray, r: int) -> tuple[Any, int, int, int, np.ndarray, np.ndarray, Any] | Refused:
    """Range ``r``'s task: every piece read, the scores of range r kept and counted; the pieces
    ``pieces[share[0]:share[1]]`` validated and fed to the other members. Returns
    the other members' state (or None), the range's positives, negatives and doubled
    Mann-Whitney count, and per distinct positive score (decreasing) the positives and the
    negatives added there (packed, :func:`_packed`), and the warnings its share's updates raise
    (:func:`~streammetrics._core.warn.recorded`); or, where a row of its share is refused,
    :class:`Refused` (a bad row outside the share ends that piece's reading: its share's task
    refuses it)."""
    with trusted_states(), recorded() as warned:  # only its share is checked and fed: no copies
        rest = None if split.rest is None else empty_set(split.rest)
        kept: list[ranked_engine.Runs] = []  # per batch, the range's negatives and positives
        codec, checks = label_codes.ranked_codec(split.ranked), label_codes.ranked_checks(split.ranked)
        for i, piece in enumerate(pieces):
            owned = share[0] <= i < share[1]
            try:
                for y, p, where in _rows([piece], plan):
                    runs = [_EMPTY, _EMPTY]
                    with located(plan.fed(), where):  # a refused value: its column and rows named
                        code = functools.partial(label_codes.coded, y, codec, plan.label, where)
                        for group, s in _validated(split, rest, (y, code), p, edges, r,
                                                   checks if owned else None):
                            runs[group] = s
                    kept.append((runs[0], None, runs[1], None))
            except ValueError as exc:
                if owned:  # the first bad row of this share, returned: the driver picks the first
                    return Refused(i, str(exc))
                break  # a bad row outside the share: its share's task refuses it, first
        counts = range_counts.range_counts(kept, thresholds=False)  # the range's one sort
        del kept
        if not wants_ap(split):  # AUROC alone reads only u2, P and N: no count per score is sent
            none = np.zeros(0, dtype=np.uint8)
            state = None if rest is None else state_of(rest)
            return state, counts.pos, counts.neg, counts.u2, none, none, warned
        dp = np.diff(counts.tps, prepend=0.0)
        dn = np.diff(counts.fps, prepend=0.0)
        return (None if rest is None else state_of(rest), counts.pos, counts.neg, counts.u2,
                _packed(dp), _packed(dn), warned)


def wants_ap(split: range_counts.Split) -> bool:
    """Whether a ranked member is an ``AveragePrecision`` (the only one that reads the counts at
    the distinct positive scores; ``AUROC`` reads each range's u2, P and N). O(members)."""
    return any(cfg["class"] == "AveragePrecision" for cfg in split.ranked.values())


def _validated(split: range_counts.Split, rest: Any, labels: tuple[Any, Any], p: np.ndarray,
               edges: np.ndarray, r: int, owned: Any) -> list[tuple[int, np.ndarray]]:
    """The ``(group, scores)`` of the rows whose score is in range r (group 1: positives, 0:
    negatives). In the task's share (``owned``: the ranked members' empty state,
    :func:`label_codes.ranked_checks`; None outside it) every row is checked as that exact
    score state checks it (its ``check``: ``score_batch``, or the probability buffer's),
    ``rest`` (the set's other members, or None) fed every row after it, the errors in the set's
    group order (:func:`.rest_order.checked_rows`);
    outside it nothing is checked -- the share's task refuses a bad row, failing the job --
    and the rows are split as the state splits valid rows (labels 1 and 0, ``ignore_index``
    dropped). ``labels``: the rows' labels as given (what ``rest`` is fed) and the function
    that maps them to the ranked members' codes (:func:`label_codes.coded`). O(n)."""
    y_in, code = labels
    if owned is None:
        y = code()
    else:
        with checked_rows(split, y_in, p):
            batch = owned.check(code(), p)
        if rest is not None:
            rest.update(y_in, p, **split.kwargs)
        y, p = batch.y, batch.s
    s = np.asarray(p, dtype=np.float64)
    mask = _range_mask(s, edges, r)
    if split.ignore_index is not None:
        keep = y != split.ignore_index
        mask = keep if mask is None else mask & keep
    return [(g, s.compress(y == g if mask is None else mask & (y == g))) for g in (0, 1)]


def unpacked(result: tuple[Any, ...]) -> range_counts.RangeCounts:
    """A range task's counts as :class:`range_counts.RangeCounts`, without the thresholds
    themselves (the root's AUROC and step AP read only the counts at them). O(T_r)."""
    _, pos, neg, u2, dp, dn, *_ = result
    tps = np.cumsum(dp, dtype=np.float64)
    fps = np.cumsum(dn, dtype=np.float64)
    return range_counts.RangeCounts(pos, neg, u2, _EMPTY, tps, fps)


def run_ranges(df: Any, plan: Plan, split: range_counts.Split, tasks: list[list[Piece]]
               ) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """The values (in the set's member order) and the warnings one process raises: one Spark
    job of R range tasks (see the module docstring)."""
    sc = df.sparkSession.sparkContext
    pieces = [p for t in tasks for p in t]
    n_ranges = min(range_total(sc.defaultParallelism), len(tasks))
    edges = sample_edges(pieces, str(plan.score), n_ranges)
    n_ranges = edges.shape[0] + 1
    bounds = [sum(len(t) for t in tasks[: len(tasks) * i // n_ranges]) for i in range(n_ranges + 1)]
    shares = list(zip(bounds[:-1], bounds[1:], strict=True))

    def one(r: int) -> Any:
        result = range_task(plan, split, pieces, shares[r], edges, r)
        settle()  # the daemon's collection after the task: cheap
        return result

    results = sc.parallelize(range(n_ranges), n_ranges).map(one).collect()
    refused = [res for res in results if isinstance(res, Refused)]
    if refused:  # the shares are contiguous in file order: the first piece's is the first bad row
        raise ValueError(min(refused).message)
    with trusted_states():
        rest = [res[0] for res in results if res[0] is not None]
        return range_counts.final_values(rest, [unpacked(res) for res in results], split,
                                         [res[6] for res in results])  # the tasks' warnings
