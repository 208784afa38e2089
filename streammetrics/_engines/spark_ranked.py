"""Range-partitioned exact ranking on Spark: the jobs of :func:`streammetrics.spark.evaluate_ranked`.

The steps are those of :mod:`streammetrics._engines.ranked`; this module runs them as Spark jobs
over the selected columns, the frame computed once:

1. ``route`` (the one pass over the frame, :func:`routed_frame`): each Python task reads its
   partition's Arrow batches (``DataFrame.mapInArrow``) ``chunk_rows`` rows at a time into
   exact binary ``AUROC`` twins (:func:`streammetrics._engines.ranked.iter_chunk_runs`) and
   emits each chunk's sorted runs as one row and, unless the edges are given, a few hundred
   evenly spaced ranks of them, before it reads the next chunk; then the rows it skipped for a
   null and, for ``spark.evaluate``, the partition's state of the set's other members, fed the
   same chunks (:class:`Rest`). The rows are persisted (``MEMORY_AND_DISK``); the driver
   collects all but the runs and places the R - 1 edges.
2. ``totals`` (round one, over the persisted runs, one row at a time): per partition, each run
   cut at the edges and the weight of each piece, summed (one row of R pairs of numbers); the
   driver adds them and gets each range's offsets.
3. ``pieces`` and round two: per persisted run, one row ``(range, part, seq, piece bytes)`` per
   non-empty piece (of at most ``_CHUNK`` scores), shuffled by range
   (``groupBy("range").applyInPandas``); per range, its pieces are merged (the only place a
   range is whole) and summarised with its offsets into one row; the driver combines R
   summaries. The persisted rows are then released.

Before, each job read and sorted every partition again (three passes, four with
``spark.evaluate``'s other members): on a 1M-row ``createDataFrame`` frame each pass cost the
JVM about as much as the whole state path. Memory: a routing task holds one chunk being
validated and sorted (~50 bytes x ``chunk_rows``) and its rows (8 bytes a score, 16 weighted),
whatever the partition's size; a totals or pieces task one persisted run; a range task its
range's rows, decoded in place, and their merge (about 3-4 times the range); Spark's block
manager the persisted runs (8 bytes a score, 16 weighted: spilled to disk when memory is
short), then the shuffle files; the driver O(partitions x R) numbers plus the samples (plus
the curves, which are the output).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import range_counts
from . import ranked as ranked_engine
from . import ranked_common as common
from .dask_ranked import CHUNK_ROWS
from .plan import Plan, Shape, empty_set, state_to_bytes
from .rest_order import rest_fed
from .spark_worker import settle

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


#: The kinds of the rows the routing pass emits: a chunk's sorted runs, a partition's sample and
#: skipped-null count, a partition's state of the set's other members.
_RUNS, _SAMPLE, _STATE = 0, 1, 2
_ROUTED_SCHEMA = "kind int, part long, seq long, data binary, more binary, skipped long"


@dataclasses.dataclass(frozen=True)
class Rest:
    """The set's other members, fed in the routing pass beside the ranked twin (each chunk after
    the twin): their plan and the members whose groups come before the exact group (a chunk
    the twin refuses is offered to them first, :func:`.rest_order.rest_fed`: one process's
    error)."""

    plan: Plan
    before: tuple[str, ...]


def _routed_batch(kind: int, part: int, seq: int, data: bytes, more: bytes = b"", skipped: int = 0) -> Any:
    import pyarrow as pa

    schema = pa.schema([("kind", pa.int32()), ("part", pa.int64()), ("seq", pa.int64()),
                        ("data", pa.binary()), ("more", pa.binary()), ("skipped", pa.int64())])
    return pa.RecordBatch.from_pydict({"kind": [kind], "part": [part], "seq": [seq], "data": [data],
                                       "more": [more], "skipped": [skipped]}, schema=schema)


def _route_task(plan: Plan, k: int, chunk_rows: int, rest: Rest | None,
                batches: Iterator[Any]) -> Iterator[Any]:
    """The one pass over a partition: per chunk of ``chunk_rows`` rows, its sorted runs in one
    row (``_RUNS``, cut in rows of at most ``_CHUNK`` scores) and, for ``k`` > 0, one row of
    their sample (``_SAMPLE``: ``k`` ranks per run and class, each with the number of scores it
    stands for), both emitted before the next chunk is read; then a ``_SAMPLE`` row of no rank
    holding the rows skipped for a null, and with ``rest`` one row of the other members' state
    fed the same chunks (``_STATE``). Memory: one chunk and the other members' state."""
    part = _part()
    skipped = [0]
    tables = _tables(batches, chunk_rows)
    if plan.nulls == "skip":
        tables = _null_rows(tables, plan.columns(), skipped)
    seq = 0
    with trusted_states():
        acc = None if rest is None else empty_set(rest.plan.config, rest.plan.kind)
        with rest_fed(tables, acc, None if rest is None else rest.plan, () if rest is None else rest.before,
                      f"Spark partition {part}") as fed:
            for runs in ranked_engine.iter_chunk_runs(fed, plan, f"Spark partition {part}"):
                for piece in common.chunks(runs, _CHUNK):
                    yield _routed_batch(_RUNS, part, seq, common.piece_to_bytes(piece))
                    seq += 1
                if k:
                    values, counts = ranked_engine.run_sample(runs, k)
                    yield _routed_batch(_SAMPLE, part, seq, values.tobytes(), counts.tobytes())
                del runs
        settle()  # the daemon's collection after the task: cheap
        yield _routed_batch(_SAMPLE, part, seq, b"", b"", skipped[0])
        if acc is not None:
            yield _routed_batch(_STATE, part, 0, state_to_bytes(acc))


def _routed_runs(batches: Iterator[Any]) -> Iterator[tuple[int, ranked_engine.Runs]]:
    """The (partition, runs) of the routed ``_RUNS`` rows, one at a time, in their order."""
    for batch in batches:
        parts, data = batch.column(1).to_pylist(), batch.column(3)
        for i, part in enumerate(parts):
            yield part, common.piece_from_bytes(data[i].as_py())


def _totals_task(edges: np.ndarray, batches: Iterator[Any]) -> Iterator[Any]:
    """Round one over the routed runs: per partition, each run cut at the edges and the weight
    of each piece, summed in the runs' order (one row of R pairs of numbers). O(runs x R log c)."""
    import pyarrow as pa

    per_part: dict[int, np.ndarray] = {}
    for part, runs in _routed_runs(batches):
        totals = per_part.setdefault(part, np.zeros((edges.shape[0] + 1, 2)))
        pieces = ranked_engine.split_runs(runs, edges)
        totals += np.asarray(ranked_engine.piece_totals(pieces), dtype=np.float64)
    parts = sorted(per_part)
    settle()
    yield pa.RecordBatch.from_pydict({"part": parts, "totals": [per_part[p].tobytes() for p in parts]},
                                     schema=pa.schema([("part", pa.int64()), ("totals", pa.binary())]))


_PIECE_SCHEMA = "range int, part long, seq long, piece binary"


def _pieces_task(edges: np.ndarray, batches: Iterator[Any]) -> Iterator[Any]:
    """Per routed run, one batch of rows, one per non-empty piece of each range (of at most
    ``_CHUNK`` scores), emitted before the next run is read: the task holds one run."""
    import pyarrow as pa

    schema = pa.schema([("range", pa.int32()), ("part", pa.int64()), ("seq", pa.int64()),
                        ("piece", pa.binary())])
    seq: dict[int, list[int]] = {}  # per partition and range, the pieces sent so far: the merge's order
    for part, runs in _routed_runs(batches):
        sent = seq.setdefault(part, [0] * (edges.shape[0] + 1))
        ranges, seqs, data = [], [], []
        for r, piece in enumerate(ranked_engine.split_runs(runs, edges)):
            for chunk in common.chunks(piece, _CHUNK):
                ranges.append(r)
                seqs.append(sent[r])
                data.append(common.piece_to_bytes(chunk))
                sent[r] += 1
        del runs
        if data:
            yield pa.RecordBatch.from_pydict({"range": ranges, "part": [part] * len(data), "seq": seqs,
                                              "piece": data}, schema=schema)
    settle()


def _range_task(offsets: list[tuple[float, float, float]], totals: tuple[float, float], curves: bool,
                rows: Any, max_fprs: tuple[float, ...] = (), envelope: bool = False) -> Any:
    """Round two of one range (a pandas group of its rows): merge, summarise, one row out."""
    import pandas as pd

    rows = rows.sort_values(["part", "seq"], kind="stable")  # a fixed order: the same floats every run
    r = int(rows["range"].iloc[0])
    pieces = [common.piece_from_bytes(b) for b in rows["piece"]]
    del rows
    summary = ranked_engine.range_summary(ranked_engine.merge_range(pieces), offsets[r], totals, curves,
                                          max_fprs, envelope=envelope)
    settle()
    return pd.DataFrame({"range": [r], "summary": [common.summary_to_bytes(summary)]})


def routed_frame(frame: Any, req: common.RankedRequest, rest: Rest | None = None) -> Any:
    """The routing pass over ``frame`` (a DataFrame, lazy): the rows of :func:`_route_task`,
    sampled when the request has no edges."""
    plan, rows_at_once = req.plan, req.chunk_rows
    k = req.sample_size if req.edges is None else 0
    return frame.mapInArrow(lambda it: _route_task(plan, k, rows_at_once, rest, it), _ROUTED_SCHEMA)


def _runs_rows(routed: Any) -> Any:
    return routed.filter(f"kind = {_RUNS}")


def _edges(req: common.RankedRequest, rows: list[Any]) -> np.ndarray:
    if req.edges is not None:
        return req.edges
    samples = [(np.frombuffer(bytes(r[3]), dtype=np.float64), np.frombuffer(bytes(r[4]), dtype=np.float64))
               for r in sorted(rows, key=lambda r: (r[1], r[2]))]
    return ranked_engine.range_edges(samples, req.n_ranges)


def _totals(routed: Any, req: common.RankedRequest, edges: np.ndarray) -> list[tuple[float, float]]:
    """Each range's (P_r, N_r), from the routed runs (a job over the persisted rows)."""
    rows = _runs_rows(routed).mapInArrow(lambda it: _totals_task(edges, it),
                                         "part long, totals binary").collect()
    per_part = [np.frombuffer(bytes(t), dtype=np.float64).reshape(-1, 2) for _, t in sorted(rows)]
    if not per_part:
        return [(0.0, 0.0)] * req.n_ranges
    return ranked_engine.add_totals([[(float(p), float(n)) for p, n in t] for t in per_part])


def pieces_frame(routed: Any, edges: np.ndarray) -> Any:
    """The shuffled rows ``(range, part, seq, piece)`` of the routed runs (a DataFrame, lazy):
    what travels."""
    return _runs_rows(routed).mapInArrow(lambda it: _pieces_task(edges, it), _PIECE_SCHEMA)


def range_summaries(df: Any, req: common.RankedRequest) -> common.Summaries:
    """The per-range summaries (increasing ranges; a range no piece reached summarised empty)
    and the totals (P, N): the jobs of the module docstring (a ValueError raised in a task
    reaches the caller as Spark's exception)."""
    return counted_summaries(df.select(*req.plan.columns()), req)[0]


#: The session setting of the rows per Arrow record batch Spark sends a Python task.
BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"


@contextlib.contextmanager
def batch_rows_set(session: Any, rows: int) -> Iterator[None]:
    """Inside the block, Spark sends a Python task up to ``rows`` rows per Arrow record batch
    (``session``: a SparkSession; None, a stand-in of the tests, changes nothing); the
    session's setting is restored after the block (unset if it was)."""
    if session is None:
        yield
        return
    before = session.conf.get(BATCH_ROWS, None)
    session.conf.set(BATCH_ROWS, str(rows))
    try:
        yield
    finally:
        if before is None:
            session.conf.unset(BATCH_ROWS)
        else:
            session.conf.set(BATCH_ROWS, before)


def counted_summaries(frame: Any, req: common.RankedRequest,
                      rest: Rest | None = None) -> tuple[common.Summaries, int, list[tuple[bytes, int]]]:
    """:func:`range_summaries` of ``frame`` (holding the columns the twin and ``rest`` read), the
    rows skipped for a null (``req.plan.nulls="skip"``) and with ``rest`` the partitions' states
    of the other members, fed in the same pass ((state bytes, 0) pairs, by partition).

    One pass reads and sorts every partition (:func:`routed_frame`); its rows are persisted
    (memory, else disk: the chunks' sorted runs, 8 bytes a score, 16 weighted) for the two jobs
    over them -- the totals, then the pieces shuffled by range -- and released at the end. The
    driver holds O(partitions x R) numbers."""
    from pyspark import StorageLevel

    routed = routed_frame(frame, req, rest).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        small = routed.filter(f"kind != {_RUNS}").collect()  # the pass: every row computed and kept
        skipped = sum(int(r[5]) for r in small if r[0] == _SAMPLE)
        states = [(bytes(r[3]), 0) for r in sorted(small, key=lambda r: r[1]) if r[0] == _STATE]
        edges = _edges(req, [r for r in small if r[0] == _SAMPLE])
        with batch_rows_set(getattr(frame, "sparkSession", None), 1):  # a task reads one run at a time
            totals = _totals(routed, req, edges)
            offsets, total = ranked_engine.offsets(totals), common.grand(totals)
            curves, fprs, envelope = req.curves, req.max_fprs, req.envelope
            rows = (pieces_frame(routed, edges).groupBy("range")
                    .applyInPandas(lambda g: _range_task(offsets, total, curves, g, fprs, envelope),
                                   "range int, summary binary")
                    .collect())
    finally:
        routed.unpersist()
    got = {int(r): common.summary_from_bytes(bytes(s)) for r, s in rows}
    empty = common.empty_runs()
    summaries = [got[r] if r in got else ranked_engine.range_summary(empty, offsets[r], total, curves, fprs,
                                                                              envelope=req.envelope)
                 for r in range(req.n_ranges)]
    return (summaries, total), skipped, states


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
    return range_counts.split_of(run.template, dataclasses.replace(plan, weight=None), names, offsets=True,
                                 labels=True)


def set_request(split: range_counts.Split, plan: Plan, cores: int) -> common.RankedRequest:
    """The ``evaluate_ranked`` request of ``split``'s ranked members: an exact binary ``AUROC``
    twin with their ``ignore_index`` fed the run's label, score, weight and vector element,
    refusing or skipping nulls as the run does; :data:`RANGES_PER_CORE` ranges per core (at
    least 8), sampled edges, no curves. O(members)."""
    template = empty_set({"members": split.ranked, "groups": [list(split.ranked)]})
    labels = ranked_engine.twin_options(cfg["config"] for cfg in split.ranked.values())
    twin = Plan(config=ranked_engine.runs_config(split.ignore_index, labels), family="classification",
                label=plan.label, score=plan.score, weight=plan.weight, positive_index=plan.positive_index,
                task=plan.task, nulls=plan.nulls)
    n_ranges = max(8, RANGES_PER_CORE * max(1, cores))
    return common.RankedRequest(template, Shape("set"), twin, n_ranges, None, SAMPLE_SIZE, False, CHUNK_ROWS)
