"""Range-partitioned exact ranking on Spark: the jobs of :func:`streammetrics.spark.evaluate_ranked`.

The steps are those of :mod:`streammetrics._engines.ranked`; this module runs them as Spark jobs
over the selected columns, each Python task reading its partition's Arrow batches
(``DataFrame.mapInArrow``) ``chunk_rows`` rows at a time into exact binary ``AUROC`` twins,
each chunk's sorted runs used and dropped before the next chunk is read
(:func:`streammetrics._engines.ranked.iter_chunk_runs`):

1. ``sample`` (skipped when the edges are given): per partition, a few hundred evenly spaced
   ranks of each chunk's runs (one small row); the driver places the R - 1 edges.
2. ``totals`` (round one): per partition, each chunk's runs cut at the edges and the weight of
   each piece, summed (one row of R pairs of numbers); the driver adds them and gets each
   range's offsets.
3. ``pieces`` and round two: per chunk of each partition, one row ``(range, part, seq, piece
   bytes)`` per non-empty piece (of at most ``_CHUNK`` scores), shuffled by range
   (``groupBy("range").applyInPandas``); per range, its pieces are merged (the only place a
   range is whole) and summarised with its offsets into one row; the driver combines R
   summaries.

A partition is read and sorted once per job (two or three times in all): Spark keeps no Python
object between jobs, and re-reading costs time, not memory -- nothing but the shuffle's own
files holds the pieces. Memory: a partition task holds one chunk being validated and sorted
(~50 bytes x ``chunk_rows``) and its rows (8 bytes a score, 16 weighted), whatever the
partition's size; a range task its range's rows, decoded in place, and their merge (about 3-4
times the range); the driver O(partitions x R) numbers (plus the curves, which are the output).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import range_counts
from . import ranked as ranked_engine
from . import ranked_common as common
from .dask_ranked import CHUNK_ROWS
from .plan import Plan, Shape, empty_set

#: Scores per shipped row (32 MiB of float64, 64 with weights): bounds a task's output buffer and
#: stays far below Arrow's 2 GiB per binary value.
_CHUNK = 1 << 22


def _tables(batches: Iterator[Any], rows: int) -> Iterator[Any]:
    """Spark's Arrow batches regrouped into tables of ``rows`` rows (the last one shorter;
    zero-copy slices)."""
    import pyarrow as pa

    held: list[Any] = []
    count = 0
    for batch in batches:
        held.append(batch)
        count += batch.num_rows
        while count >= rows:
            table = pa.Table.from_batches(held)
            yield table.slice(0, rows)
            rest = table.slice(rows)
            held, count = rest.to_batches(), rest.num_rows
    if count:
        yield pa.Table.from_batches(held)


def _runs(plan: Plan, chunk_rows: int, batches: Iterator[Any],
          nulls: list[int] | None = None) -> Iterator[ranked_engine.Runs]:
    """The partition's sorted runs, one chunk of ``chunk_rows`` rows at a time (rows named in an
    error by their position in the partition); nothing of a chunk is kept once the next is read.
    With ``nulls`` (a one-item list), the rows holding a null that ``plan.nulls="skip"`` drops
    are added to ``nulls[0]``."""
    where = f"Spark partition {_part()}"
    tables = _tables(batches, chunk_rows)
    if nulls is not None and plan.nulls == "skip":
        tables = _null_rows(tables, plan.columns(), nulls)
    with trusted_states():
        yield from ranked_engine.iter_chunk_runs(tables, plan, where)


def _null_rows(tables: Iterator[Any], columns: list[str], count: list[int]) -> Iterator[Any]:
    """The tables unchanged, the rows holding a null or a NaN in ``columns`` -- those
    :func:`~streammetrics._engines.plan.drop_nulls` drops -- added to ``count[0]``. O(rows)."""
    import pyarrow.compute as pc

    for table in tables:
        mask = None
        for name in columns:
            null = pc.is_null(table.column(name), nan_is_null=True)
            mask = null if mask is None else pc.or_(mask, null)
        if mask is not None:
            count[0] += int(pc.sum(mask).as_py() or 0)
        yield table


def _part() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def _sample_task(plan: Plan, k: int, chunk_rows: int, batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    values, counts = ranked_engine.sample_chunks(_runs(plan, chunk_rows, batches), k)
    yield pa.RecordBatch.from_pydict({"values": [values.tobytes()], "counts": [counts.tobytes()]},
                                     schema=pa.schema([("values", pa.binary()), ("counts", pa.binary())]))


def _totals_task(plan: Plan, edges: np.ndarray, chunk_rows: int, batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    part = _part()
    totals = np.zeros((edges.shape[0] + 1, 2))
    skipped = [0]
    for runs in _runs(plan, chunk_rows, batches, skipped):  # each chunk's pieces counted, then dropped
        pieces = ranked_engine.split_runs(runs, edges)
        totals += np.asarray(ranked_engine.piece_totals(pieces), dtype=np.float64)
    yield pa.RecordBatch.from_pydict({"part": [part], "totals": [totals.tobytes()], "skipped": skipped},
                                     schema=pa.schema([("part", pa.int64()), ("totals", pa.binary()),
                                                       ("skipped", pa.int64())]))


_PIECE_SCHEMA = "range int, part long, seq long, piece binary"


def _pieces_task(plan: Plan, edges: np.ndarray, chunk_rows: int, batches: Iterator[Any]) -> Iterator[Any]:
    """Per chunk, one batch of rows, one per non-empty piece of each range (of at most
    ``_CHUNK`` scores), emitted before the next chunk is read: the task holds one chunk."""
    import pyarrow as pa

    schema = pa.schema([("range", pa.int32()), ("part", pa.int64()), ("seq", pa.int64()),
                        ("piece", pa.binary())])
    part = _part()
    seq = [0] * (edges.shape[0] + 1)  # per range, the pieces sent so far: their order in the merge
    for runs in _runs(plan, chunk_rows, batches):
        ranges, seqs, data = [], [], []
        for r, piece in enumerate(ranked_engine.split_runs(runs, edges)):
            for chunk in common.chunks(piece, _CHUNK):
                ranges.append(r)
                seqs.append(seq[r])
                data.append(common.piece_to_bytes(chunk))
                seq[r] += 1
        del runs
        if data:
            yield pa.RecordBatch.from_pydict({"range": ranges, "part": [part] * len(data), "seq": seqs,
                                              "piece": data}, schema=schema)


def _range_task(offsets: list[tuple[float, float, float]], totals: tuple[float, float], curves: bool,
                rows: Any, max_fprs: tuple[float, ...] = ()) -> Any:
    """Round two of one range (a pandas group of its rows): merge, summarise, one row out."""
    import pandas as pd

    rows = rows.sort_values(["part", "seq"], kind="stable")  # a fixed order: the same floats every run
    r = int(rows["range"].iloc[0])
    pieces = [common.piece_from_bytes(b) for b in rows["piece"]]
    del rows
    summary = ranked_engine.range_summary(ranked_engine.merge_range(pieces), offsets[r], totals, curves,
                                          max_fprs)
    return pd.DataFrame({"range": [r], "summary": [common.summary_to_bytes(summary)]})


def _edges(frame: Any, req: common.RankedRequest) -> np.ndarray:
    if req.edges is not None:
        return req.edges
    plan, k, rows_at_once = req.plan, req.sample_size, req.chunk_rows
    rows = frame.mapInArrow(lambda it: _sample_task(plan, k, rows_at_once, it),
                            "values binary, counts binary").collect()
    samples = [(np.frombuffer(bytes(v), dtype=np.float64), np.frombuffer(bytes(c), dtype=np.float64))
               for v, c in rows]
    return ranked_engine.range_edges(samples, req.n_ranges)


def _totals(frame: Any, req: common.RankedRequest,
            edges: np.ndarray) -> tuple[list[tuple[float, float]], int]:
    """Each range's (P_r, N_r) and the rows skipped for a null (``nulls="skip"``)."""
    plan, rows_at_once = req.plan, req.chunk_rows
    rows = frame.mapInArrow(lambda it: _totals_task(plan, edges, rows_at_once, it),
                            "part long, totals binary, skipped long").collect()
    per_part = [np.frombuffer(bytes(t), dtype=np.float64).reshape(-1, 2) for _, t, _ in sorted(rows)]
    skipped = sum(int(n) for _, _, n in rows)
    if not per_part:
        return [(0.0, 0.0)] * req.n_ranges, skipped
    return ranked_engine.add_totals([[(float(p), float(n)) for p, n in t] for t in per_part]), skipped


def pieces_frame(frame: Any, plan: Plan, edges: np.ndarray, chunk_rows: int) -> Any:
    """The shuffled rows ``(range, part, seq, piece)`` (a DataFrame, lazy): what travels."""
    return frame.mapInArrow(lambda it: _pieces_task(plan, edges, chunk_rows, it), _PIECE_SCHEMA)


def range_summaries(df: Any, req: common.RankedRequest) -> common.Summaries:
    """The per-range summaries (increasing ranges; a range no piece reached summarised empty)
    and the totals (P, N): the three jobs of the module docstring (a ValueError raised in a
    task reaches the caller as Spark's exception)."""
    return counted_summaries(df, req)[0]


def counted_summaries(df: Any, req: common.RankedRequest) -> tuple[common.Summaries, int]:
    """:func:`range_summaries` and the rows skipped for a null (``req.plan.nulls="skip"``,
    counted in the totals job). Three jobs, each reading and sorting every partition once;
    the driver O(partitions x R) numbers."""
    frame = df.select(*req.plan.columns())
    edges = _edges(frame, req)
    totals, skipped = _totals(frame, req, edges)
    offsets, total = ranked_engine.offsets(totals), common.grand(totals)
    curves, fprs = req.curves, req.max_fprs
    rows = (pieces_frame(frame, req.plan, edges, req.chunk_rows).groupBy("range")
            .applyInPandas(lambda g: _range_task(offsets, total, curves, g, fprs),
                           "range int, summary binary")
            .collect())
    got = {int(r): common.summary_from_bytes(bytes(s)) for r, s in rows}
    empty = common.empty_runs()
    summaries = [got[r] if r in got else ranked_engine.range_summary(empty, offsets[r], total, curves, fprs)
                 for r in range(req.n_ranges)]
    return (summaries, total), skipped


# -- spark.evaluate's ranked members on any frame -------------------------------------------------

#: Score ranges per core of ``spark.evaluate``'s ranked members (:func:`set_request`): a range
#: task then holds about an eighth of a core's share of the scores (the sizing of
#: ``evaluate_ranked``: baseline + ~0.6 x a share per Python worker).
RANGES_PER_CORE = 8
#: Ranks sampled per chunk and class to place the edges (``evaluate_ranked``'s default).
SAMPLE_SIZE = 256


def split_for(run: Any) -> range_counts.Split | None:
    """The split of ``run``'s set when its exact binary ``AUROC`` / ``AveragePrecision`` members
    (one score state) can go by these ranges on any frame, else None: values asked for
    (``compute``), no ``by=`` slices, no retrieval, no other ``update`` keywords, one label and
    one score column (:func:`range_counts.split_of`'s rule, with weights and either ``nulls``:
    the twin each chunk feeds checks the column types as the state does). O(members)."""
    plan = run.plan
    if not run.request.compute or plan.by is not None or plan.family == "retrieval":
        return None
    names = {c: np.dtype(np.float64) for c in plan.columns()}  # the twin validates every column
    return range_counts.split_of(run.template, dataclasses.replace(plan, weight=None), names, offsets=True)


def set_request(split: range_counts.Split, plan: Plan, cores: int) -> common.RankedRequest:
    """The ``evaluate_ranked`` request of ``split``'s ranked members: an exact binary ``AUROC``
    twin with their ``ignore_index`` fed the run's label, score, weight and vector element,
    refusing or skipping nulls as the run does; :data:`RANGES_PER_CORE` ranges per core (at
    least 8), sampled edges, no curves. O(members)."""
    template = empty_set({"members": split.ranked, "groups": [list(split.ranked)]})
    twin = Plan(config=ranked_engine.runs_config(split.ignore_index), family="classification",
                label=plan.label, score=plan.score, weight=plan.weight, positive_index=plan.positive_index,
                task=plan.task, nulls=plan.nulls)
    n_ranges = max(8, RANGES_PER_CORE * max(1, cores))
    return common.RankedRequest(template, Shape("set"), twin, n_ranges, None, SAMPLE_SIZE, False, CHUNK_ROWS)
