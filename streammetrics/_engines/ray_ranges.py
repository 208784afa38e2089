"""Exact binary AUROC / AP of :func:`streammetrics.ray.evaluate_parquet` by score ranges, on Ray tasks.

The steps and kernels are those of :mod:`streammetrics._engines.range_counts` (Dask's range path);
this module only runs them as Ray tasks over Parquet files read by pyarrow (no Ray Data):

``edges`` (on the driver: R - 1 score quantiles of a sample of a few row groups -- at most
:data:`SAMPLE_FILES` files, one row group each; skipped with one range) ``-> file task`` (one
per group of at most 4 files, :func:`~streammetrics._engines.range_counts.task_slices`: reads
the row groups straight into numpy, feeds the set's other members, validates the ranked scores
as the exact state does and routes them, unsorted, to the R ranges; ``num_returns=R + 1``: the
other members' state, then each range's piece as its own object) ``-> range task`` (one per
range: takes only that range's object of every file task, sorts it once and counts it,
:func:`~streammetrics._engines.range_counts.range_counts`) ``-> driver`` (merges the other
members' states and adds the ranges' counts,
:func:`~streammetrics._engines.range_counts.final_values`).

With few positives among the labels of the sampled files (every row group's: a file sorted by
label has row groups of one class; at most 1/(4R) of their rows), the driver chooses the
exchange of positives instead (:mod:`streammetrics._engines.minority`): each file task sorts
its scores in place and returns its sorted negatives and positives (``num_returns=3``); range
task r counts the negatives of file tasks r, r + R, ... against every file task's positives --
no routing, and the same values bit for bit.

Where the edges fall changes only how the work is shared between the range tasks: any edges give
the single-process values bit for bit (tied scores share a range; the counts are exact). Placing
them from a few row groups read on the driver saves the round trip (and the copy of every
score) that sampling in the file tasks would cost; data sorted by score across files still
spreads, since the sampled files are spread over the list.

Complexity: a file task O(rows) (read, validation, routing O(rows R)); a range task
O(m log m) for its m scores; the driver O(R + distinct positive scores) and the sample. Memory:
a file task its files' scores (8 bytes a score) and their pieces; the object store every score
once (the pieces); the driver 24 bytes per distinct positive score (the AP counts) and the
other members' states.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import label_codes, minority, parquet_reads, range_counts
from . import ranked as ranked_engine
from .plan import Plan

#: Files whose middle row group's scores the driver reads to place the range edges (and whose
#: labels, every row group's, decide the exchange of positives).
SAMPLE_FILES = 4
#: Scores kept from each sampled row group (evenly spaced).
SAMPLE_SCORES = 4096


def range_count() -> int:
    """Score ranges for the active Ray cluster: :data:`range_counts.RANGES_PER_THREAD` per CPU
    (1 with one CPU). O(1)."""
    import ray

    cpus = int(ray.cluster_resources().get("CPU", 1))
    return 1 if cpus <= 1 else range_counts.RANGES_PER_THREAD * cpus


def sample_scores(col: Any, k: int) -> np.ndarray:
    """Up to ``k`` evenly spaced scores of an Arrow column (chunked or not) as float64, read as
    the range tasks read them (``to_numpy``: a dictionary-encoded column decoded, Decimals and
    booleans as numbers); nulls, NaN and a column of non-numbers dropped (the tasks name them):
    only the ranges' balance depends on them. O(k) (a dictionary: its values too)."""
    import pyarrow as pa

    at = np.unique(np.linspace(0, len(col) - 1, min(len(col), k)).astype(np.int64))
    try:
        picked = col.take(pa.array(at)).drop_null()
        v = np.asarray(picked.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError, pa.ArrowException):
        v = np.zeros(0)
    return v[~np.isnan(v)]


def sample_edges(files: Sequence[str], fs: Any, plan: Plan, n_ranges: int,
                 codec: Any = None) -> np.ndarray | minority.Exchange:
    """R - 1 edges at the score quantiles of the middle row group of up to :data:`SAMPLE_FILES`
    files spread over ``files`` (:data:`SAMPLE_SCORES` evenly spaced scores of each; NaN
    and nulls dropped; a file pyarrow cannot read, or whose label or score column is not numeric,
    a ValueError naming it; a label the codec refuses is left to the file tasks, which name its
    row) -- or the exchange of positives
    (:mod:`streammetrics._engines.minority`) where the positives among the labels of every row
    group of those files (read one row group at a time, the label column only) are few enough
    (:func:`~streammetrics._engines.minority.use_exchange`: exact for the sampled files, an
    estimate for the others, which only decides the cost, never the values). O(rows of the
    sampled files) for the labels, O(sampled row groups) for the scores. ``codec``: the ranked
    members' label codec (:func:`label_codes.ranked_codec`), which maps the labels first."""
    if n_ranges <= 1:
        return np.zeros(0)
    import pyarrow.parquet as pq

    picks = np.unique(np.linspace(0, len(files) - 1, min(SAMPLE_FILES, len(files))).astype(np.int64))
    values = []
    positives, rows = 0, 0
    for i in picks:
        name = files[int(i)]
        with fs.open(name, "rb") as f, parquet_reads.named_read_errors(name):
            reader = pq.ParquetFile(f)
            parquet_reads.check_columns(reader.schema_arrow, parquet_reads.plan_columns(plan), name,
                                       str(plan.label) if codec is not None else None)
            if reader.num_row_groups:
                group = reader.read_row_group(reader.num_row_groups // 2, columns=[plan.score])
                values.append(sample_scores(group.column(0), SAMPLE_SCORES))
            for g in range(reader.num_row_groups):  # every row group's labels, one at a time: a
                # file sorted by label has row groups of one class (ignored labels count as rows)
                raw = reader.read_row_group(g, columns=[plan.label]).column(0).drop_null().to_numpy(
                    zero_copy_only=False)
                try:
                    y = np.asarray(label_codes.coded(raw, codec, plan.label), dtype=np.float64)
                except ValueError:  # a label the codec refuses: the file task names it, at its
                    continue  # row in the file (here the nulls are dropped) after any null before it
                y = y[~np.isnan(y)]
                rows += int(y.shape[0])
                positives += int(np.count_nonzero(y))
    if rows and minority.use_exchange(positives, rows, n_ranges):
        return minority.Exchange(n_ranges)
    v = np.concatenate(values) if values else np.zeros(0)
    return ranked_engine.range_edges([(v, np.ones(v.shape[0]))], n_ranges)


def _file_task(files: Sequence[str], fs: Any, plan: Plan, split: range_counts.Split,
               edges: np.ndarray | minority.Exchange) -> list[Any]:
    """The other members' state (or None) and the updates' warnings, then the R routed pieces of
    ``files``' scores (for the exchange: the sorted negatives, then the sorted positives). The
    footers are read first: a file that is not Parquet, or whose label or score column is not
    numeric as in the first file, is named before any row is read."""
    with trusted_states():
        footers = parquet_reads.parquet_footers(files, fs, parquet_reads.plan_columns(plan),
                                               label_codes.mapped_column(split))
        rows = sum(f.num_rows for f in footers)
        batches = parquet_reads.parquet_batches(files, fs, plan, footers)
        parts = range_counts.partition_parts(batches, split, 1, rows)
        if isinstance(edges, minority.Exchange):
            own = minority.exchange_pieces(parts, 0, 1)[0]
            return [(parts[0], parts[3]), own[0], own[2]]
        return [(parts[0], parts[3]), *range_counts.route_runs(parts, edges)]


def _range_task(ap: bool, *pieces: ranked_engine.Runs) -> range_counts.RangeCounts:
    """One score range's counts; without ``ap`` (AUROC only) O(1) numbers, not counts at every
    distinct positive score."""
    return range_counts.range_counts(pieces, counts=ap)


def _exchange_task(first: bool, ap: bool, n_negative: int, *runs: np.ndarray) -> minority.ExchangeCounts:
    """One range of the exchange: its file tasks' sorted negatives (the first ``n_negative`` of
    ``runs``; Ray resolves only top-level arguments), then every file task's sorted positives
    (:func:`~streammetrics._engines.minority.exchange_counts`); without ``ap`` (AUROC only) O(1)
    numbers."""
    none = np.zeros(0)
    pieces: list[ranked_engine.Runs] = [(n, None, none, None) for n in runs[:n_negative]]
    pieces += [(none, None, p, None) for p in runs[n_negative:]]
    return minority.exchange_counts(pieces, first, ap)


def evaluate_files(files: Sequence[str], fs: Any, plan: Plan,
                   split: range_counts.Split) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """The values of the range path over ``files`` (an fsspec filesystem's Parquet files) and the
    warnings one process raises (see the module docstring)."""
    import ray

    from .ray_ranked import get

    n_ranges = range_count()
    edges = sample_edges(files, fs, plan, n_ranges, label_codes.ranked_codec(split.ranked))
    exchange = isinstance(edges, minority.Exchange)
    file_task = ray.remote(_file_task).options(num_returns=3 if exchange else n_ranges + 1)
    plan_ref, split_ref, fs_ref = ray.put(plan), ray.put(split), ray.put(fs)  # once, not per task
    parts: list[Any] = [file_task.remote(files[s], fs_ref, plan_ref, split_ref, edges)
                        for s in range_counts.task_slices(len(files), n_ranges)]
    ranges: list[Any]
    if exchange:  # range r: the negatives of file tasks r, r + R, ...; every task's positives
        exchange_task = ray.remote(_exchange_task)
        ranges = [exchange_task.remote(r == 0, split.ap, len(parts[r::n_ranges]),
                                       *[p[1] for p in parts[r::n_ranges]], *[p[2] for p in parts])
                  for r in range(n_ranges)]
    else:
        range_task = ray.remote(_range_task)
        ranges = [range_task.remote(split.ap, *[p[r + 1] for p in parts]) for r in range(n_ranges)]
    heads = get([p[0] for p in parts])  # a refused row raises here
    counts = get(ranges)
    with trusted_states():  # the states were made by the file tasks
        return minority.final_values([s for s, _ in heads if s is not None], counts, split,
                                     [w for _, w in heads])
