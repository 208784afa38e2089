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
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import parquet_reads
from . import ranked as ranked_engine
from . import ranked_common as common
from .plan import Plan


def _file_chunks(path: str, fs: Any, columns: list[str], chunk_rows: int) -> Iterator[Any]:
    """The record batches of a Parquet file, at most ``chunk_rows`` rows each, read on this
    thread without pre-buffering (measured on 8 files of 2.5M rows in one process: the
    task's peak private memory +53 MiB over idle, against +119 MiB with pyarrow's defaults,
    which read ahead on its I/O threads)."""
    import pyarrow.parquet as pq

    local = parquet_reads.is_local(fs)
    with parquet_reads.named_read_errors(path), (open(path, "rb") if local else fs.open(path, "rb")) as f:
        reader = pq.ParquetFile(f, pre_buffer=False)
        yield from reader.iter_batches(batch_size=chunk_rows, columns=columns, use_threads=False)


def _source_task(source: Any, fs: Any, plan: Plan, chunk_rows: int, where: str,
                 sample_size: int) -> Iterator[Any]:
    """One block (an Arrow table; ``fs`` None) or one Parquet file (a path on ``fs``), chunk by
    chunk, as a Ray generator task (``num_returns="streaming"``: each value yielded is stored
    as its own object, owned by the driver, before the next chunk is read): each chunk's sorted
    runs, then, last, their samples and the rows dropped for a null (``plan.nulls="skip"``)."""
    frames = (ranked_engine.row_chunks(source, chunk_rows) if fs is None
              else _file_chunks(source, fs, plan.columns(), chunk_rows))
    samples: list[Any] = []
    skipped = [0]
    with trusted_states():
        for runs in ranked_engine.iter_chunk_runs(frames, plan, where, skipped):
            samples.append(ranked_engine.run_sample(runs, sample_size))
            yield runs
            del runs
    yield samples, skipped[0]


def _split_task(edges: np.ndarray, *chunks: ranked_engine.Runs) -> Iterator[Any]:
    """One source's chunks (read in place from the object store) cut at ``edges``, as a Ray
    generator task: per range, the list of its pieces of every chunk (a copy of just that
    range's pieces, stored before the next range is cut), then, last, their weights."""
    split = ranked_engine.split_chunks(chunks, edges)  # views
    totals = ranked_engine.chunk_totals(split)
    yield from (pieces for pieces in split)  # a generator: Ray sends into it (a list's iterator has no send)
    yield totals


def _range_task(offset: tuple[float, float, float], totals: tuple[float, float], curves: bool,
                max_fprs: tuple[float, ...], envelope: bool,
                *pieces: list[ranked_engine.Runs]) -> ranked_engine.RangeSummary:
    merged = ranked_engine.merge_range([p for chunk in pieces for p in chunk])
    return ranked_engine.range_summary(merged, offset, totals, curves, max_fprs, envelope=envelope)


def get(refs: Any) -> Any:
    """``ray.get``, a ValueError raised in a task (a refused row) raised as itself; of a list,
    the first task's in the list that failed (the earliest blocks' or files' refusal, as one
    process names the first bad row), not the first to fail. O(refs) more only on an error."""
    import ray

    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as first:
        failed = first
        for ref in refs if isinstance(refs, list) else ():
            try:
                ray.get(ref)
            except ray.exceptions.RayTaskError as earlier:
                failed = earlier
                break
        cause = getattr(failed, "cause", None)
        if isinstance(cause, ValueError):
            raise ValueError(str(cause)) from failed
        raise failed from first if failed is not first else None


def _sources(data: Any, req: common.RankedRequest) -> list[tuple[Any, Any, str]]:
    """``(source, fs, where)`` of each block (``data`` a Ray Dataset) or Parquet file (``data``
    the ``(fs, files)`` of :func:`~streammetrics._engines.parquet_reads.parquet_files`)."""
    if isinstance(data, tuple):
        fs, files = data
        return [(f, fs, f) for f in files]
    blocks = data.select_columns(req.plan.columns()).to_arrow_refs()
    return [(b, None, f"Ray block {i}") for i, b in enumerate(blocks)]


def split_refs(data: Any, req: common.RankedRequest,
               skipped: list[int] | None = None) -> tuple[list[list[Any]], list[tuple[float, float]]]:
    """Per block or file, the object references of its R pieces; and each range's (P_r, N_r);
    the rows the tasks dropped for a null are added to ``skipped[0]``."""
    import ray

    source_task = ray.remote(_source_task).options(num_returns="streaming")
    split_task = ray.remote(_split_task).options(num_returns="streaming")
    plan = ray.put(req.plan)
    running: list[Any] = [source_task.remote(s, fs, plan, req.chunk_rows, where, req.sample_size)
                          for s, fs, where in _sources(data, req)]  # all submitted before any waits
    chunks = [list(refs) for refs in running]  # per source: its chunks' runs, then their samples
    tails = get([refs[-1] for refs in chunks])  # a refused row raises here
    samples: list[list[Any]] = [smp for smp, _ in tails]
    if skipped is not None:
        skipped[0] += sum(n for _, n in tails)
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


def range_summaries(data: Any, req: common.RankedRequest,
                    skipped: list[int] | None = None) -> common.Summaries:
    """The per-range summaries (increasing ranges) and the totals (P, N); the rows dropped for a
    null are added to ``skipped[0]``."""
    import ray

    pieces, totals = split_refs(data, req, skipped)
    offsets, total = ranked_engine.offsets(totals), common.grand(totals)
    range_task = ray.remote(_range_task)
    futures = [range_task.remote(offsets[r], total, req.curves, req.max_fprs, req.envelope,
                                 *[p[r] for p in pieces])
               for r in range(req.n_ranges)]
    del pieces
    summaries: Sequence[ranked_engine.RangeSummary] = get(futures)
    return list(summaries), total
