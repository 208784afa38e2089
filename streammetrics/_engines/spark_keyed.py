"""``streammetrics.spark.evaluate``'s ``by=`` slices and multiclass one-vs-rest exact AUROC / AP by
(key, score) ranges: the steps of :mod:`streammetrics._engines.keyed_ranges` as Spark jobs, with
the transport of :mod:`streammetrics._engines.spark_ranked` (the frame read once, its output
persisted).

1. ``part`` (the one pass over the frame, :func:`keyed_frame`: ``DataFrame.mapInArrow``): each
   Python task reads its partition's Arrow batches in chunks of about :data:`TUPLES_PER_CHUNK`
   keyed tuples, drops or refuses the rows holding a null (named by their row in the partition,
   as the state path names them), feeds the other members (one state per partition, in the
   set's group order) and makes each chunk's keyed tuples (:func:`keyed_ranges.keyed_part`:
   validated, unsorted, local slice codes); it emits per chunk one ``_HEAD`` row (a sample of
   the tuples, the chunk's slice keys and rows per slice) and the tuples (``_TUPLES`` rows of
   at most :data:`_CHUNK` tuples) before it reads the next chunk, then one ``_STATE`` row (the
   other members' state, the rows skipped for a null). The rows are persisted
   (``MEMORY_AND_DISK``); the driver collects all but the tuples and places the edges
   (:func:`keyed_ranges.edges_of`: a chunk is one of its "tasks").
2. ``route`` (over the persisted tuples, one row at a time): each row's tuples cut into the R
   ranges (:func:`keyed_ranges.route`), one ``_PIECE`` row ``(range, part, seq, piece)`` per
   non-empty piece, and one ``_TOTALS`` row per task (its per-range, per-key totals summed).
   These rows are persisted too; the driver collects the totals (which computes them all),
   releases the first pass's rows and sums the totals into the offsets
   (:func:`keyed_ranges.offsets_of`: O(R + K) numbers, shipped with the range tasks).
3. ``range`` (``groupBy("range").applyInPandas``): the pieces shuffled by range; per range, its
   pieces in a fixed (part, seq) order summarised (:func:`keyed_ranges.range_task`): one row of
   O(keys in range) numbers. The driver computes the values (:func:`keyed_ranges.final_values`).

The driver receives the samples (256 tuples a chunk), the slice keys, one state of the other
members per partition, O(R + K) totals per task and O(R x K) summaries: never the scores.
Memory: a part task one chunk (~60 bytes a tuple while it is built) and the other members'
state; a route task one shipped row (at most :data:`_CHUNK` tuples); a range task its range's
tuples and their sort; Spark's block manager the tuples twice at most (17 bytes a tuple,
25 weighted, plus the code's width: first the pass's, then the routed pieces; spilled to disk
when memory is short). A row of C classes makes C tuples (2C with a micro average).
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states
from streammetrics._core.warn import recorded_from_bytes, recorded_to_bytes
from streammetrics.wrappers.sliced.keys import decode_keys, encode_keys

from . import keyed_envelope, label_codes
from . import keyed_ranges as kr
from .plan import (
    Plan,
    arrow_chunks,
    drop_nulls,
    empty_set,
    merge_bytes,
    state_from_bytes,
    state_of,
    state_to_bytes,
)
from .spark_ranked import RANGES_PER_CORE, batch_rows_set
from .spark_worker import settle

#: Keyed tuples a part task builds at once: its chunks hold this many divided by the tuples a
#: row makes (C classes, 2C with a micro average), at least :data:`_MIN_ROWS` rows.
TUPLES_PER_CHUNK = 1 << 20
_MIN_ROWS = 4096
#: Tuples sampled per chunk to place the edges.
SAMPLE = 256
#: Tuples per shipped row (at most ~100 MiB): far below Arrow's 2 GiB per binary value.
_CHUNK = 1 << 22

#: The kinds of the rows the part pass emits, then the route pass.
_TUPLES, _HEAD, _STATE, _PIECE, _TOTALS = 0, 1, 2, 3, 4
_PART_SCHEMA = "kind int, part long, seq long, head long, data binary, skipped long"
_ROUTED_SCHEMA = "kind int, range int, part long, seq long, data binary"


# -- what crosses Spark as bytes -----------------------------------------------------------------

def tuples_to_bytes(tuples: kr.Tuples) -> bytes:
    """Keyed tuples as bytes: a header (count, the codes' width in bytes, weighted), the scores,
    the weights, the codes in the smallest unsigned type that holds them, the classes. O(n)."""
    codes, scores, pos, w = tuples
    top = int(codes.max()) if codes.shape[0] else 0
    kind = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if top <= np.iinfo(t).max)
    head = np.array([codes.shape[0], np.dtype(kind).itemsize, w is not None], np.int64)
    return b"".join([head.tobytes(), np.ascontiguousarray(scores, np.float64).tobytes(),
                     b"" if w is None else np.ascontiguousarray(w, np.float64).tobytes(),
                     codes.astype(kind).tobytes(), np.ascontiguousarray(pos, bool).tobytes()])


def tuples_from_bytes(data: bytes) -> kr.Tuples:
    """Read back :func:`tuples_to_bytes` (codes as int64; scores and weights read in place,
    read-only). A payload of the wrong size is a ValueError. O(n)."""
    data = bytes(data) if not isinstance(data, bytes) else data
    if len(data) < 24:
        raise ValueError(f"keyed tuples: expected a 24-byte header, got {len(data)} bytes")
    n, width, weighted = (int(v) for v in np.frombuffer(data, np.int64, 3))
    kinds = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    if n < 0 or width not in kinds or weighted not in (0, 1) or \
            len(data) != 24 + n * (8 + 8 * weighted + width + 1):
        raise ValueError(f"keyed tuples: a header of {n} tuples, {width}-byte codes, weighted={weighted} "
                         f"does not fit {len(data)} bytes")
    at = 24
    scores = np.frombuffer(data, np.float64, n, at)
    at += 8 * n
    w = None
    if weighted:
        w = np.frombuffer(data, np.float64, n, at)
        at += 8 * n
    codes = np.frombuffer(data, kinds[width], n, at).astype(np.int64)
    pos = np.frombuffer(data, bool, n, at + width * n)
    return codes, scores, pos, w


def _arrays_to_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    out = io.BytesIO()
    np.savez(out, **dict(arrays))  # type: ignore[arg-type]
    return out.getvalue()


def _arrays_from_bytes(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as archive:
        return {k: archive[k] for k in archive.files}


def _ints(values: Sequence[int]) -> np.ndarray:
    """Python integers of any size (exact pair counts) as a uint8 JSON array."""
    return np.frombuffer(json.dumps(list(values)).encode(), np.uint8)


def _head_bytes(part: kr.KeyedPart, sliced: bool) -> bytes:
    codes, scores, stands = part.sample
    keys = encode_keys(part.keys) if sliced else np.zeros(0, np.uint8)
    warned = np.frombuffer(recorded_to_bytes(part.warned), np.uint8)  # its updates' warnings
    return _arrays_to_bytes({"codes": codes, "scores": scores, "stands": stands, "rows": part.rows,
                             "keys": keys, "warned": warned})


def _head_from_bytes(data: bytes, split: kr.KeyedSplit) -> tuple[Any, ...]:
    """A chunk's head as :func:`keyed_ranges.edges_of` reads it: (None, sample, keys, rows,
    warnings)."""
    a = _arrays_from_bytes(data)
    width = None if split.key_names is None else len(split.key_names)
    keys = decode_keys(a["keys"], width, "slice keys") if split.sliced else [None] * a["rows"].shape[0]
    warned = recorded_from_bytes(a["warned"].tobytes()) if "warned" in a else []
    return None, (a["codes"].astype(np.int64), a["scores"], a["stands"]), keys, a["rows"], warned


def summaries_to_bytes(s: kr.KeyedSummaries) -> bytes:
    """A range's summaries as bytes (the exact pair counts as JSON integers; the keys' AP
    envelopes as :func:`keyed_envelope.to_arrays`' flat arrays). O(codes + envelopes)."""
    arrays = {"codes": s.codes, "pos": s.pos, "neg": s.neg, "pairs": s.pairs, "ap": s.ap}
    if s.u2 is not None:
        arrays["u2"] = _ints(s.u2)
    if s.partial is not None:  # (F, codes): the partial ROC areas of the max_fpr members
        arrays["partial"] = s.partial
    if s.envelope is not None:  # the interpolated / 11-point AP's envelope parts
        arrays.update(keyed_envelope.to_arrays(s.envelope))
    return _arrays_to_bytes(arrays)


def summaries_from_bytes(data: bytes) -> kr.KeyedSummaries:
    """Read back :func:`summaries_to_bytes`: per-code arrays of another length than the codes',
    or envelope arrays that do not fit them, are a ValueError. O(codes + envelopes)."""
    a = _arrays_from_bytes(data)
    n = a["codes"].shape[0]
    short = [k for k in ("pos", "neg", "pairs", "ap") if a[k].shape != (n,)]
    if short or ("partial" in a and (a["partial"].ndim != 2 or a["partial"].shape[1] != n)):
        raise ValueError(f"keyed summaries: {(short or ['partial'])[0]} does not hold one number per code "
                         f"of the {n}")
    u2 = None if "u2" not in a else [int(v) for v in json.loads(a["u2"].tobytes())]
    if u2 is not None and len(u2) != n:
        raise ValueError(f"keyed summaries: {len(u2)} exact pair counts for {n} codes")
    return kr.KeyedSummaries(a["codes"].astype(np.int64), a["pos"], a["neg"], a["pairs"], a["ap"], u2,
                             a.get("partial"), keyed_envelope.from_arrays(a, n))


# -- the tasks -------------------------------------------------------------------------------------

def _partition() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def _part_row(kind: int, part: int, seq: int, head: int, data: bytes, skipped: int = 0) -> Any:
    import pyarrow as pa

    schema = pa.schema([("kind", pa.int32()), ("part", pa.int64()), ("seq", pa.int64()), ("head", pa.int64()),
                        ("data", pa.binary()), ("skipped", pa.int64())])
    return pa.RecordBatch.from_pydict({"kind": [kind], "part": [part], "seq": [seq], "head": [head],
                                       "data": [data], "skipped": [skipped]}, schema=schema)


def chunk_rows(split: kr.KeyedSplit) -> int:
    """Rows per chunk of a part task: :data:`TUPLES_PER_CHUNK` over the tuples a row makes."""
    per_row = sum(g.n_classes * (1 + int(g.micro)) if g.n_classes > 1 else 1 for g in split.groups)
    return max(_MIN_ROWS, TUPLES_PER_CHUNK // per_row)


def _part_task(plan: Plan, split: kr.KeyedSplit, batches: Iterator[Any]) -> Iterator[Any]:
    """The one pass over a partition (module docstring, step 1). Memory: one chunk and the
    other members' state."""
    part = _partition()
    where = f"Spark partition {part}"
    rest = None if split.rest is None else dataclasses.replace(plan, config=split.rest, kind=split.rest_kind)
    rows = chunk_rows(split)
    skipped = offset = seq = head = 0
    with trusted_states():
        acc = None if rest is None else empty_set(rest.config, rest.kind)
        for table in arrow_chunks(batches, rows):
            for start in range(0, table.num_rows, rows):
                chunk = table.slice(start, rows)
                df, dropped = drop_nulls(chunk.to_pandas(), plan, where, offset)
                skipped, offset = skipped + dropped, offset + chunk.num_rows
                if not len(df):
                    continue
                # the other members: one state for the partition (acc), fed in the set's order
                got = kr.keyed_part(kr.frame_batches([df], plan, part, "Spark partition"), split, SAMPLE, acc)
                yield _part_row(_HEAD, part, seq, head, _head_bytes(got, split.sliced))
                seq += 1
                codes, scores, pos, w = got.tuples
                del got
                for a in range(0, codes.shape[0], _CHUNK):
                    b = a + _CHUNK
                    piece = (codes[a:b], scores[a:b], pos[a:b], None if w is None else w[a:b])
                    yield _part_row(_TUPLES, part, seq, head, tuples_to_bytes(piece))
                    seq += 1
                head += 1
        settle()  # the daemon's collection after the task: cheap (spark_worker)
        yield _part_row(_STATE, part, seq, 0, b"" if acc is None else state_to_bytes(acc), skipped)


def _route_task(edges: kr.KeyedEdges, index: Mapping[tuple[int, int], int],
                batches: Iterator[Any]) -> Iterator[Any]:
    """Step 2 over the persisted ``_TUPLES`` rows, one at a time: their pieces (one row each,
    emitted before the next row is read), then the task's totals summed (one row)."""
    import pyarrow as pa

    schema = pa.schema([("kind", pa.int32()), ("range", pa.int32()), ("part", pa.int64()),
                        ("seq", pa.int64()), ("data", pa.binary())])
    totals: list[np.ndarray] | None = None
    first = -1
    empty = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    for batch in batches:
        parts, seqs, heads = (batch.column(c).to_pylist() for c in ("part", "seq", "head"))
        data = batch.column("data")
        for i, (part, seq, head) in enumerate(zip(parts, seqs, heads, strict=True)):
            first = part if first < 0 else first
            keyed = kr.KeyedPart(None, tuples_from_bytes(data[i].as_py()), empty, [], np.zeros(0, np.int64))
            pieces, tot = kr.route(keyed, edges, index[(part, head)])
            del keyed
            totals = tot if totals is None else [a + b for a, b in zip(totals, tot, strict=True)]
            kept = [(r, p) for r, p in enumerate(pieces) if p[0].shape[0]]
            if kept:
                columns = {"kind": [_PIECE] * len(kept), "range": [r for r, _ in kept],
                           "part": [part] * len(kept), "seq": [seq] * len(kept),
                           "data": [tuples_to_bytes(p) for _, p in kept]}
                yield pa.RecordBatch.from_pydict(columns, schema=schema)
    settle()
    if totals is not None:
        data_ = np.concatenate([t.ravel() for t in totals]).tobytes()
        yield pa.RecordBatch.from_pydict({"kind": [_TOTALS], "range": [0], "part": [first], "seq": [0],
                                          "data": [data_]}, schema=schema)


def _range_task(offsets: kr.KeyedOffsets, edges: kr.KeyedEdges, ap: Sequence[bool], rows: Any,
                max_fprs: Sequence[Sequence[float]] = (),
                envelopes: Sequence[Sequence[tuple[bool, bool]]] = ()) -> Any:
    """Step 3 for one range (a pandas group of its piece rows): one row of its summaries
    (``max_fprs``: per column, the partial areas its members read; ``envelopes``: per column,
    the interpolated / 11-point AP readouts that read it)."""
    import pandas as pd

    rows = rows.sort_values(["part", "seq"], kind="stable")  # a fixed order: the same floats every run
    r = int(rows["range"].iloc[0])
    pieces = [tuples_from_bytes(b) for b in rows["data"]]
    del rows
    summaries = kr.range_task(pieces, offsets, edges, r, ap, max_fprs, envelopes)
    settle()
    return pd.DataFrame({"range": [r], "summary": [summaries_to_bytes(summaries)]})


# -- the driver ------------------------------------------------------------------------------------

def keyed_frame(frame: Any, plan: Plan, split: kr.KeyedSplit) -> Any:
    """The part pass over ``frame`` (a DataFrame holding the plan's columns; lazy)."""
    return frame.mapInArrow(lambda it: _part_task(plan, split, it), _PART_SCHEMA)


def _totals_of(rows: Sequence[Any], edges: kr.KeyedEdges) -> list[list[np.ndarray]]:
    """The tasks' totals rows (by their first partition) as :func:`keyed_ranges.offsets_of` reads them."""
    n_ranges = edges.codes.shape[0] + 1
    sizes = [2 * (hi - lo + 1) for lo, hi in (edges.span(r) for r in range(n_ranges))]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    out = []
    for row in sorted(rows, key=lambda r: int(r[2])):
        flat = np.frombuffer(bytes(row[4]), np.float64)
        if flat.shape[0] != bounds[-1]:
            raise ValueError(f"keyed totals: expected {int(bounds[-1])} numbers, got {flat.shape[0]}")
        out.append([flat[bounds[r] : bounds[r + 1]].reshape(2, -1) for r in range(n_ranges)])
    return out


def keyed_values(frame: Any, plan: Plan, split: kr.KeyedSplit,
                 n_ranges: int) -> tuple[Any, list[tuple[str, type[Warning]]], int]:
    """The values (``Sliced``'s ``{key: values}`` with ``by=``), the warnings one process raises
    and the rows skipped for a null, over ``frame`` (its columns those of ``plan``) in
    ``n_ranges`` ranges: the jobs of the module docstring (a ValueError raised in a task reaches
    the caller as Spark's exception). O(rows x width) in the tasks; the driver O(chunks x
    sample + tasks x (R + K) + R x K) numbers and the partitions' states of the other members."""
    from pyspark import StorageLevel

    part = keyed_frame(frame, plan, split).persist(StorageLevel.MEMORY_AND_DISK)
    routed = None
    try:
        small = part.filter(f"kind != {_TUPLES}").collect()  # the pass: every row computed and kept
        heads = sorted((r for r in small if r[0] == _HEAD), key=lambda r: (r[1], r[3]))
        index = {(int(r[1]), int(r[3])): i for i, r in enumerate(heads)}
        states = [bytes(r[4]) for r in sorted(small, key=lambda r: r[1]) if r[0] == _STATE]
        skipped = sum(int(r[5]) for r in small if r[0] == _STATE)
        decoded = [_head_from_bytes(r[4], split) for r in heads]
        edges = kr.edges_of(decoded, n_ranges, split)
        warned = [h[4] for h in decoded]  # the chunks' warnings, in partition order
        del small, heads, decoded
        with batch_rows_set(getattr(frame, "sparkSession", None), 1):  # a task reads one row at a time
            routed = (part.filter(f"kind = {_TUPLES}")
                      .mapInArrow(lambda it: _route_task(edges, index, it), _ROUTED_SCHEMA)
                      .persist(StorageLevel.MEMORY_AND_DISK))
            totals = routed.filter(f"kind = {_TOTALS}").collect()  # the routing: every piece kept
            part.unpersist()
            offsets = kr.offsets_of(_totals_of(totals, edges), edges)
            ap, fprs, envs = split.ap_columns, split.partial_columns, split.envelope_columns
            rows = (routed.filter(f"kind = {_PIECE}").select("range", "part", "seq", "data")
                    .groupBy("range").applyInPandas(lambda g: _range_task(offsets, edges, ap, g, fprs, envs),
                                                    "range int, summary binary")
                    .collect())
    finally:
        part.unpersist()
        if routed is not None:
            routed.unpersist()
    got = {int(r): summaries_from_bytes(s) for r, s in rows}
    summaries = [got[r] if r in got else kr.range_task([], offsets, edges, r, ap, fprs, envs)
                 for r in range(n_ranges)]
    rest: list[dict[str, Any]] = []
    if split.rest is not None:
        with trusted_states():  # made by this module's tasks
            merged_bytes = merge_bytes(states)
            acc = state_from_bytes(merged_bytes) if merged_bytes else empty_set(split.rest, split.rest_kind)
            rest = [state_of(acc)]
    with trusted_states():
        values, caught = kr.final_values(rest, summaries, offsets, edges, split, warned)
    return values, caught, skipped


def _dtypes(frame: Any) -> dict[str, Any]:
    """The frame's columns as the numpy types ``keyed_ranges.split_of`` reads: integers, floats,
    booleans; decimals as float64 (pyarrow gives ``Decimal`` objects, which
    :func:`~.plan.column` makes float64 on the state path and here alike); strings as objects
    (labels that ``classes=`` / ``pos_label=`` map); an MLlib vector or an array of numbers as
    :data:`~.keyed_split.VECTOR` (one score vector per row, :func:`~.plan.vector_scores`); the
    rest left out (the state path)."""
    from pyspark.sql import types as T

    out: dict[str, Any] = {}
    for f in frame.schema.fields:
        t = f.dataType
        if isinstance(t, T.BooleanType):
            out[f.name] = np.dtype(bool)
        elif isinstance(t, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
            out[f.name] = np.dtype(np.int64)
        elif isinstance(t, T.FloatType | T.DoubleType | T.DecimalType):
            out[f.name] = np.dtype(np.float64)
        elif isinstance(t, T.StringType):
            out[f.name] = np.dtype(object)
        elif type(t).__name__ == "VectorUDT" or (isinstance(t, T.ArrayType) and isinstance(
                t.elementType, T.FloatType | T.DoubleType | T.IntegerType | T.LongType)):
            out[f.name] = kr.VECTOR
    return out


def split_for(frame: Any, run: Any) -> kr.KeyedSplit | None:
    """The keyed split of ``run`` over ``frame`` (:func:`keyed_ranges.split_of`) when its values
    are asked for and its exact ranking group is keyed (``by=`` slices, multiclass one-vs-rest
    over one numeric column per class or one vector column), else None (the state path).
    O(members)."""
    plan = run.plan
    if not run.request.compute or run.shuffle_on is not None or plan.family != "classification":
        return None
    return kr.split_of(run.template, plan, label_codes.sliced_labels(plan, _dtypes(frame)), labels=True)


def range_count(session: Any) -> int:
    """Ranges of the keyed jobs: :data:`spark_ranked.RANGES_PER_CORE` per core, at least 8."""
    return max(8, RANGES_PER_CORE * max(1, int(session.sparkContext.defaultParallelism)))
