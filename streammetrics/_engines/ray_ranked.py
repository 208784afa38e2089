"""Range-partitioned exact ranking on Ray: the tasks of :func:`streammetrics.ray.evaluate_ranked`.

The steps are those of :mod:`streammetrics._engines.ranked`; this module runs them as Ray tasks
over sources -- the blocks of a Ray Dataset's selected columns (``Dataset.to_arrow_refs``) or
Parquet files read by pyarrow in the tasks (no Ray Data) -- passing object references. Both
per-source tasks are Ray generator tasks (``num_returns="streaming"``): each value they yield is
stored in the object store, as its own object owned by the driver, before the next is made, so
that no task holds more than one chunk of ``chunk_rows`` rows or one range's pieces:

``source -> chunk runs`` (one task per block or file: reads it ``chunk_rows`` rows at a time --
slices of the block, or ``ParquetFile.iter_batches(batch_size=chunk_rows)`` --, feeds each
chunk to an exact binary ``AUROC`` twin and yields the chunk's sorted runs; last, the chunks'
samples, a few hundred ranks each) ``-> edges`` (placed by the driver from the samples, or
given) ``-> split`` (one task per source, given its chunks' runs read in place: yields, range by
range, the list of that range's pieces of every chunk -- a copy of just that range's -- and
last their weights) ``-> totals`` (round one: the driver fetches R pairs of numbers per source
and gets each range's offsets) ``-> range`` (round two: one task per range takes only that
range's object of every source, merges the pieces -- the only place a range is whole -- and
returns its summary) ``-> combine`` on the driver.

Memory: a source task holds one chunk being validated and sorted and its runs (a Ray block
itself is read in place from the object store; a file task also holds pyarrow's read of the
chunk); a split task one range's pieces being written (the runs are read in place); a range
task its pieces (read in place when local) and their merge; the object store holds every
chunk's runs until its source's pieces are written, then the pieces until their range is
summarised (the whole state once, spilled to disk by Ray when full); the driver O(sources x R)
references and numbers and the samples (plus the curves, which are the output). Objects: one
per chunk, R + 1 per source (per-chunk pieces cost Ray ~0.8 s of CPU more per 10M rows at R =
16: measured, not kept).

:func:`evaluate_blocks` is :func:`streammetrics.ray.evaluate`'s path for exact binary AUROC /
AP members of a set over a Ray Dataset's blocks: the kernels of the Parquet range path
(:mod:`streammetrics._engines.range_counts`; unweighted, bit for bit) or the steps above
(weighted), the set's other members fed by the same block tasks (one read of the rows).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import range_counts, ray_ranges
from . import ranked as ranked_engine
from . import ranked_common as common
from .plan import (
    Plan,
    arrow_arrays,
    column,
    compute_recorded,
    drop_nulls,
    empty_set,
    merged,
    rebuild,
    state_of,
)


def _file_chunks(path: str, fs: Any, columns: list[str], chunk_rows: int) -> Iterator[Any]:
    """The record batches of a Parquet file, at most ``chunk_rows`` rows each, read on this
    thread without pre-buffering (measured on 8 files of 2.5M rows in one process: the
    task's peak private memory +53 MiB over idle, against +119 MiB with pyarrow's defaults,
    which read ahead on its I/O threads)."""
    import pyarrow.parquet as pq

    local = range_counts.is_local(fs)
    with range_counts.named_read_errors(path), (open(path, "rb") if local else fs.open(path, "rb")) as f:
        reader = pq.ParquetFile(f, pre_buffer=False)
        yield from reader.iter_batches(batch_size=chunk_rows, columns=columns, use_threads=False)


def _source_task(source: Any, fs: Any, plan: Plan, chunk_rows: int, where: str,
                 sample_size: int) -> Iterator[Any]:
    """One block (an Arrow table; ``fs`` None) or one Parquet file (a path on ``fs``), chunk by
    chunk, as a Ray generator task (``num_returns="streaming"``: each value yielded is stored
    as its own object, owned by the driver, before the next chunk is read): each chunk's sorted
    runs, then, last, their samples."""
    frames = (ranked_engine.row_chunks(source, chunk_rows) if fs is None
              else _file_chunks(source, fs, plan.columns(), chunk_rows))
    samples: list[Any] = []
    with trusted_states():
        for runs in ranked_engine.iter_chunk_runs(frames, plan, where):
            samples.append(ranked_engine.run_sample(runs, sample_size))
            yield runs
            del runs
    yield samples


def _split_task(edges: np.ndarray, *chunks: ranked_engine.Runs) -> Iterator[Any]:
    """One source's chunks (read in place from the object store) cut at ``edges``, as a Ray
    generator task: per range, the list of its pieces of every chunk (a copy of just that
    range's pieces, stored before the next range is cut), then, last, their weights."""
    split = ranked_engine.split_chunks(chunks, edges)  # views
    totals = ranked_engine.chunk_totals(split)
    yield from (pieces for pieces in split)  # a generator: Ray sends into it (a list's iterator has no send)
    yield totals


def _range_task(offset: tuple[float, float, float], totals: tuple[float, float], curves: bool,
                *pieces: list[ranked_engine.Runs]) -> ranked_engine.RangeSummary:
    merged = ranked_engine.merge_range([p for chunk in pieces for p in chunk])
    return ranked_engine.range_summary(merged, offset, totals, curves)


def get(refs: Any) -> Any:
    """``ray.get``, a ValueError raised in a task (a refused row) raised as itself."""
    import ray

    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, ValueError):
            raise ValueError(str(cause)) from exc
        raise


def _sources(data: Any, req: common.RankedRequest) -> list[tuple[Any, Any, str]]:
    """``(source, fs, where)`` of each block (``data`` a Ray Dataset) or Parquet file (``data``
    the ``(fs, files)`` of :func:`~streammetrics._engines.range_counts.parquet_files`)."""
    if isinstance(data, tuple):
        fs, files = data
        return [(f, fs, f) for f in files]
    blocks = data.select_columns(req.plan.columns()).to_arrow_refs()
    return [(b, None, f"Ray block {i}") for i, b in enumerate(blocks)]


def split_refs(data: Any, req: common.RankedRequest) -> tuple[list[list[Any]], list[tuple[float, float]]]:
    """Per block or file, the object references of its R pieces; and each range's (P_r, N_r)."""
    import ray

    source_task = ray.remote(_source_task).options(num_returns="streaming")
    split_task = ray.remote(_split_task).options(num_returns="streaming")
    plan = ray.put(req.plan)
    running: list[Any] = [source_task.remote(s, fs, plan, req.chunk_rows, where, req.sample_size)
                          for s, fs, where in _sources(data, req)]  # all submitted before any waits
    chunks = [list(refs) for refs in running]  # per source: its chunks' runs, then their samples
    samples: list[list[Any]] = get([refs[-1] for refs in chunks])  # a refused row raises here
    edges = req.edges if req.edges is not None else ranked_engine.range_edges(
        [smp for per_source in samples for smp in per_source], req.n_ranges)
    splitting: list[Any] = [split_task.remote(edges, *refs[:-1]) for refs in chunks if len(refs) > 1]
    del chunks, running  # each chunk's runs are freed once its source's pieces are written
    split = [list(refs) for refs in splitting]
    pieces = [refs[:-1] for refs in split]
    per_source = get([refs[-1] for refs in split])
    if not per_source:
        return pieces, [(0.0, 0.0)] * req.n_ranges
    return pieces, ranked_engine.add_totals(per_source)


def range_summaries(data: Any, req: common.RankedRequest) -> common.Summaries:
    """The per-range summaries (increasing ranges) and the totals (P, N)."""
    import ray

    pieces, totals = split_refs(data, req)
    offsets, total = ranked_engine.offsets(totals), common.grand(totals)
    range_task = ray.remote(_range_task)
    futures = [range_task.remote(offsets[r], total, req.curves, *[p[r] for p in pieces])
               for r in range(req.n_ranges)]
    del pieces
    summaries: Sequence[ranked_engine.RangeSummary] = get(futures)
    return list(summaries), total


# -- ray.evaluate over a Dataset's blocks: the ranked members by score ranges --------------------

#: Blocks the driver samples (a few thousand scores each) to place the range edges.
SAMPLE_BLOCKS = 4


def dataset_split(template: Any, plan: Plan, types: Mapping[str, Any]) -> range_counts.Split | None:
    """The split of ``template`` for :func:`evaluate_blocks` (``types``: the dataset's column
    types, Arrow or numpy), or None where the state path applies: the set's exact score state
    serves only full-area binary ``AUROC`` / step ``AveragePrecision`` members, fed one numeric
    label, score and (optionally) weight column, without ``by`` or ``update`` keywords
    (:func:`range_counts.split_of`, weights allowed here). O(members)."""
    dtypes: dict[str, Any] = {}
    for name, kind in types.items():
        with contextlib.suppress(NotImplementedError, TypeError, AttributeError):
            dtypes[name] = np.dtype(kind.to_pandas_dtype() if hasattr(kind, "to_pandas_dtype") else kind)
    if plan.weight is not None and not (isinstance(plan.weight, str) and plan.weight in dtypes
                                        and dtypes[plan.weight].kind in "biuf"):
        return None
    return range_counts.split_of(template, dataclasses.replace(plan, weight=None), dtypes)


def _block_columns(table: Any, plan: Plan) -> tuple[list[np.ndarray], int]:
    """A block's label, score (and weight) columns as numpy, rows holding a null dropped or
    refused as the state path does (:func:`~streammetrics._engines.plan.drop_nulls`: the column
    and row named, "of a Ray block"), and the rows dropped."""
    names = [c for c in (plan.label, plan.score, plan.weight) if isinstance(c, str)]
    arrays = arrow_arrays(table, plan) if table.num_rows else None
    if arrays is not None:
        return [arrays[c] for c in names], 0
    df, skipped = drop_nulls(table.to_pandas(), plan, "a Ray block")
    whats = ("label", "score", "weight")
    return [column(df, c, what) for c, what in zip(names, whats, strict=False)], skipped


def _blocks_task(plan: Plan, split: range_counts.Split, edges: np.ndarray, *blocks: Any) -> list[Any]:
    """A few blocks (Arrow tables, read in place): ``(the other members' state or None, rows
    skipped for a null, per range (P_r, N_r) or None)``, then each range's piece as its own
    object. Unweighted: the scores validated into one buffer by class and routed unsorted
    (:func:`range_counts.partition_parts`, :func:`range_counts.partition_runs`: the kernels of
    the Parquet range path); weighted: each chunk's sorted runs from an exact ``AUROC`` twin
    (:func:`ranked.iter_chunk_runs`), cut at the edges (per range a list of pieces)."""
    from .dask_ranked import CHUNK_ROWS

    with trusted_states():
        skipped, fed = 0, []
        for table in blocks:
            cols, dropped = _block_columns(table, plan)
            skipped += dropped
            if cols[0].shape[0]:
                fed.append(cols)
        if plan.weight is None:
            parts = range_counts.partition_parts([(c[0], c[1]) for c in fed], split, 1,
                                                 sum(c[0].shape[0] for c in fed))
            return [(parts[0], skipped, None), *range_counts.partition_runs(parts, edges)]
        import pyarrow as pa

        twin = Plan(config=ranked_engine.runs_config(split.ignore_index), family="classification",
                    label="y", score="s", weight="w")
        rest = None if split.rest is None else empty_set(split.rest)
        runs: list[ranked_engine.Runs] = []
        for y, s, w in fed:  # each group's errors in the set's order, as one update would raise them
            if rest is not None and not split.ranked_first:
                rest.update(y, s, sample_weight=w)
            frame = pa.table({"y": y, "s": s, "w": w})
            runs += ranked_engine.iter_chunk_runs(ranked_engine.row_chunks(frame, CHUNK_ROWS), twin,
                                                  "a Ray block")
            if rest is not None and split.ranked_first:
                rest.update(y, s, sample_weight=w)
        pieces = ranked_engine.split_chunks(runs, edges)
        head = (None if rest is None else state_of(rest), skipped, ranked_engine.chunk_totals(pieces))
        return [head, *pieces]


def _sample_task(table: Any, score: str) -> np.ndarray:
    """Evenly spaced scores of a block (nulls, NaN and non-numbers dropped: the block tasks
    name them): only the ranges' balance depends on them."""
    try:
        v = np.asarray(table.column(score).drop_null().to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError):
        return np.zeros(0)
    at = np.linspace(0, v.shape[0] - 1, min(v.shape[0], ray_ranges.SAMPLE_SCORES)).astype(np.int64)
    v = v[np.unique(at)]
    return v[~np.isnan(v)]


def _count_task(thresholds: bool, *pieces: ranked_engine.Runs) -> range_counts.RangeCounts:
    """One range's counts (:func:`range_counts.range_counts`); with AUROC alone (no
    ``thresholds``) only its four numbers: the counts at its distinct positive scores dropped."""
    counts = range_counts.range_counts(pieces, False)
    if thresholds:
        return counts
    return dataclasses.replace(counts, tps=counts.tps[:0], fps=counts.fps[:0])


def evaluate_blocks(frame: Any, plan: Plan, split: range_counts.Split
                    ) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]], int] | None:
    """:func:`streammetrics.ray.evaluate` of a set with exact binary AUROC / AP members by score
    ranges over ``frame``'s blocks (its selected columns, ``Dataset.to_arrow_refs``: read once,
    held in the object store): the values in the set's order, the warnings one process raises
    and the rows skipped for a null; None for a dataset of no block.

    The driver samples the scores of up to :data:`SAMPLE_BLOCKS` blocks to place one range edge
    per CPU; one task per group of at most 4 blocks validates the rows (feeding the set's other
    members), and stores each range's piece of its scores as its own object; one task per range
    takes only that range's pieces. Unweighted, the ranges are sorted and counted as on the
    Parquet range path (:func:`range_counts.range_counts`, :func:`range_counts.final_values`:
    the single-process values bit for bit); weighted, merged and summarised as by
    :func:`streammetrics.ray.evaluate_ranked` (within 1e-12). The driver receives O(R)
    numbers per range (plus, for AP without weights, 24 bytes per distinct positive score) and
    one state of the other members per task: never the scores.
    """
    import ray

    blocks = frame.to_arrow_refs()
    if not blocks:
        return None
    n_ranges = ray_ranges.range_count()
    edges = np.zeros(0)
    if n_ranges > 1:
        picks = np.unique(np.linspace(0, len(blocks) - 1, min(SAMPLE_BLOCKS, len(blocks))).astype(np.int64))
        score = plan.score
        assert isinstance(score, str)  # dataset_split: one score column
        sample = get([ray.remote(_sample_task).remote(blocks[int(i)], score) for i in picks])
        v = np.concatenate(sample)
        edges = ranked_engine.range_edges([(v, np.ones(v.shape[0]))], n_ranges)
    task = ray.remote(_blocks_task).options(num_returns=n_ranges + 1)
    plan_ref, split_ref = ray.put(plan), ray.put(split)
    parts: list[Any] = [task.remote(plan_ref, split_ref, edges, *blocks[s])
                        for s in range_counts.task_slices(len(blocks), n_ranges)]
    del blocks  # each block is freed once its task is done (unless the dataset holds it)
    if plan.weight is None:
        wants_ap = any(cfg["class"] != "AUROC" for cfg in split.ranked.values())
        count_task = ray.remote(_count_task)
        ranges = [count_task.remote(wants_ap, *[p[r + 1] for p in parts]) for r in range(n_ranges)]
        heads = get([p[0] for p in parts])  # a refused row raises here
        counts = get(ranges)
        with trusted_states():  # the states were made by the block tasks
            values, caught = range_counts.final_values([h[0] for h in heads if h[0] is not None],
                                                       counts, split)
        return values, caught, sum(h[1] for h in heads)
    heads = get([p[0] for p in parts])
    totals = ranked_engine.add_totals([h[2] for h in heads])
    offsets, total = ranked_engine.offsets(totals), common.grand(totals)
    range_task = ray.remote(_range_task)
    summaries = get([range_task.remote(offsets[r], total, False, *[p[r + 1] for p in parts])
                     for r in range(n_ranges)])
    with trusted_states():
        values, caught = _weighted_values([h[0] for h in heads if h[0] is not None], summaries,
                                          total, split)
    return values, caught, sum(h[1] for h in heads)


def _weighted_values(rest_states: Sequence[Mapping[str, Any]],
                     summaries: Sequence[ranked_engine.RangeSummary], total: tuple[float, float],
                     split: range_counts.Split
                     ) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """:func:`range_counts.final_values` for weighted ranges: the other members merged and
    computed, AUROC and AP from the range summaries (:func:`ranked.combine`); an undefined
    value (a class of no weight) with the warning one process raises. O(states + R)."""
    values: dict[str, Any] = {}
    caught: list[tuple[str, type[Warning]]] = []
    if split.rest is not None:
        values, caught = compute_recorded(merged([rebuild(split.rest, s) for s in rest_states]))
    res = ranked_engine.combine(summaries, total)
    P, N = total
    ranked: dict[str, Any] = {}
    if P <= 0 or N <= 0:  # a twin with the same classes present warns alike
        twin = empty_set({"members": split.ranked, "groups": [list(split.ranked)]})
        rows = [1] * (P > 0) + [0] * (N > 0)
        if rows:
            twin.update(np.array(rows), np.full(len(rows), 0.5))
        undefined, more = compute_recorded(twin)
        caught += more
        ranked = {n: v for n, v in undefined.items() if v != v}
    for name, cfg in split.ranked.items():
        if name not in ranked:
            ranked[name] = float(res["auroc"] if cfg["class"] == "AUROC" else res["ap"])
    return {n: ranked[n] if n in ranked else values[n] for n in split.names}, caught
