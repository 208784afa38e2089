"""Spark ``evaluate`` over a plain Parquet scan: the files' row groups read by pyarrow in the tasks.

:func:`streammetrics.spark.evaluate` runs one Python task per partition through
``DataFrame.mapInArrow``: the JVM decodes the Parquet pages, converts them to rows and to Arrow
and sends them over a local socket to the Python worker. On 10M rows (``local[2]``) that
transfer alone costs ~4.0 s of CPU, while reading the rows and summing a column inside the JVM
costs 0.82 s and one Python process reads them with pyarrow and evaluates them in ~0.5 s.

When the DataFrame is a plain scan of Parquet files -- its optimised logical plan one file
relation of the Parquet format, without partition columns, optionally under a projection of
its columns (no filter, no computed or renamed column, no join, no cache, not streaming) --
this module lets the Spark tasks read the files themselves: the driver reads each file's
footer (pyarrow), checks that every used column has in each file the Arrow type Spark's own
reader gives it (numbers, booleans, strings; anything else, or a file pyarrow cannot open: the
``mapInArrow`` path), and splits the row groups into contiguous pieces of about equal rows; a
Python task per piece list (``SparkContext.parallelize(...).mapPartitions``) reads its row
groups with pyarrow in batches of ~1M rows, feeds them to an empty twin of the metrics
(:func:`~streammetrics._engines.plan.feed_arrow`, the same function the ``mapInArrow`` tasks
use: the same rows reach ``update`` with the same dtypes) and emits its state as bytes. Only the
pieces' names go in and the states come out; the rows never cross the JVM.

Nulls follow ``nulls=`` as on the other path; a refused row is named by its file and its row
in the file. The states are merged in the levels of ``RDD.treeReduce`` (``depth``), the last
level on the driver in one k-way merge, as :func:`streammetrics.spark.evaluate` does.

Complexity: the driver O(files) footer reads (in a few threads) and O(row groups) to split
them; each task one ``update`` pass over its rows; memory per task one ~1M-row batch plus its
state.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from .plan import ARROW_CHUNK_ROWS, Plan, arrow_chunks, empty_set, feed_arrow, merge_bytes, state_to_bytes
from .spark_worker import settle

#: Spark SQL type name -> the Arrow type names pyarrow reads from Parquet for it (what Spark's
#: own reader gives the column). Any other type: the ``mapInArrow`` path.
ARROW_TYPES = {
    "ByteType": ("int8",), "ShortType": ("int16",), "IntegerType": ("int32",), "LongType": ("int64",),
    "FloatType": ("float",), "DoubleType": ("double",), "BooleanType": ("bool",),
    "StringType": ("string", "large_string", "string_view"),
}
#: Spark SQL numeric type name -> the numpy dtype its column reads as (None: not a number).
_NUMPY = {"ByteType": "int8", "ShortType": "int16", "IntegerType": "int32", "LongType": "int64",
          "FloatType": "float32", "DoubleType": "float64", "BooleanType": "bool",
          "DecimalType": "float64"}  # read as the state path reads it: Decimal objects -> float64


def numpy_dtype(spark_type: str) -> np.dtype[Any] | None:
    """The numpy dtype a column of Spark SQL type ``spark_type`` (its class name) is read as
    when it is a number or a boolean, else None. A decimal is float64: pyarrow gives its
    ``Decimal`` objects, which :func:`~.plan.column` makes float64 (each correctly rounded) on
    the state path and on the routes alike."""
    name = _NUMPY.get(spark_type)
    return None if name is None else np.dtype(name)


#: Footers read at once on the driver (remote files: one round trip each).
FOOTER_THREADS = 8


@dataclass(frozen=True)
class Piece:
    """Consecutive row groups ``[first_group, stop_group)`` of one Parquet file, whose first row
    is row ``first_row`` of the file (``source``: a local path or a URI pyarrow opens)."""

    source: str
    first_group: int
    stop_group: int
    first_row: int


def scan_files(df: Any, columns: Sequence[str]) -> list[str] | None:
    """The files of ``df`` when it is a plain Parquet scan reading ``columns`` (see the module
    docstring), as Spark lists them (``DataFrame.inputFiles``); None otherwise (any other plan,
    a Spark Connect frame, a plan Spark cannot show)."""
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        if plan.isStreaming():
            return None
        if plan.getClass().getSimpleName() == "Project":
            exprs = plan.projectList()
            if not all(exprs.apply(i).getClass().getSimpleName() == "AttributeReference"
                       for i in range(exprs.size())):
                return None
            plan = plan.child()
        if plan.getClass().getSimpleName() != "LogicalRelation":
            return None
        relation = plan.relation()
        if (relation.getClass().getSimpleName() != "HadoopFsRelation"
                or relation.fileFormat().getClass().getSimpleName() != "ParquetFileFormat"
                or not relation.partitionSchema().isEmpty()):
            return None
        names = set(relation.dataSchema().fieldNames())
    except Exception:  # not a JVM plan of this shape (Spark Connect, another version): the general path
        return None
    if not all(c in names for c in columns):
        return None
    return [str(f) for f in df.inputFiles()]


def _source(uri: str) -> str:
    """A file as pyarrow opens it: a ``file:`` URI as its local path, any other URI as is."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return unquote(parsed.path)
    return uri


def open_file(source: str) -> Any:
    """``pyarrow.parquet.ParquetFile`` of a local path or a URI (``pyarrow.fs`` resolves it)."""
    import pyarrow.parquet as pq

    if source.startswith("/"):
        return pq.ParquetFile(source)
    from pyarrow import fs

    filesystem, path = fs.FileSystem.from_uri(source)
    return pq.ParquetFile(filesystem.open_input_file(path))


def _groups(source: str, types: dict[str, tuple[str, ...]]) -> list[tuple[int, int]] | None:
    """The (rows, bytes) of each row group of one file, or None if a used column is missing or
    has another type than Spark reads (or the footer cannot be read)."""
    try:
        meta = open_file(source).metadata
        schema = meta.schema.to_arrow_schema()
    except Exception:  # unreadable here: Spark's reader reports it as it does today
        return None
    for name, allowed in types.items():
        i = schema.get_field_index(name)
        if i < 0 or str(schema.field(i).type) not in allowed:
            return None
    groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
    return [(g.num_rows, g.total_byte_size) for g in groups]


def split_groups(files: Sequence[tuple[str, Sequence[tuple[int, int]]]], n_tasks: int) -> list[list[Piece]]:
    """The row groups of ``files`` (source, [(rows, bytes), ...]) cut into at most ``n_tasks``
    contiguous lists of pieces of about equal rows (row groups without a row dropped; no empty
    list). O(row groups)."""
    flat: list[tuple[str, int, int, int]] = []  # source, group, rows, first row
    for source, groups in files:
        first = 0
        for g, (rows, _) in enumerate(groups):
            if rows:
                flat.append((source, g, rows, first))
            first += rows
    total = sum(r for _, _, r, _ in flat)
    n_tasks = max(1, min(n_tasks, len(flat)))
    tasks: list[list[Piece]] = []
    done = 0
    cut = 1
    current: list[tuple[str, int, int, int]] = []
    for item in flat:
        current.append(item)
        done += item[2]
        if done * n_tasks >= cut * total and cut < n_tasks:
            tasks.append(_pieces(current))
            current, cut = [], cut + 1
    if current:
        tasks.append(_pieces(current))
    return tasks


def _pieces(groups: list[tuple[str, int, int, int]]) -> list[Piece]:
    """Consecutive row groups of one file joined into one piece."""
    out: list[Piece] = []
    for source, g, _, first in groups:
        last = out[-1] if out else None
        if last is not None and last.source == source and last.stop_group == g:
            out[-1] = Piece(source, last.first_group, g + 1, last.first_row)
        else:
            out.append(Piece(source, g, g + 1, first))
    return out


def plan_pieces(df: Any, plan: Plan) -> list[list[Piece]] | None:
    """The pieces of each task when ``df`` is a plain Parquet scan the tasks can read (see the
    module docstring), None otherwise. The tasks: the session's default parallelism, or more
    where the row groups hold more than ``spark.sql.files.maxPartitionBytes`` each (uncompressed
    bytes), never more than the row groups; ``[]`` when no file holds a row."""
    from concurrent.futures import ThreadPoolExecutor

    if plan.family == "retrieval":  # a query's rows must meet in one task: the general path
        return None
    files = scan_files(df, plan.columns())
    if files is None:
        return None
    spark_types = {f.name: type(f.dataType).__name__ for f in df.schema.fields}
    types: dict[str, tuple[str, ...]] = {}
    for name in plan.columns():
        allowed = ARROW_TYPES.get(spark_types.get(name, ""))
        if allowed is None:
            return None
        types[name] = allowed
    sources = [_source(f) for f in files]
    with ThreadPoolExecutor(max(1, min(FOOTER_THREADS, len(sources)))) as pool:
        groups = list(pool.map(lambda s: _groups(s, types), sources))
    if any(g is None for g in groups):
        return None
    found = [(s, g) for s, g in zip(sources, groups, strict=True) if g]
    session = df.sparkSession
    parallelism = session.sparkContext.defaultParallelism
    limit = _bytes(session.conf.get("spark.sql.files.maxPartitionBytes", "128m"))
    size = sum(b for _, g in found for _, b in g)
    return split_groups(found, max(parallelism, math.ceil(size / limit)))


def _bytes(text: str) -> int:
    """A Spark size setting (``134217728``, ``128m``, ``1g``, ``64k``, ``1024b``) in bytes."""
    text = text.strip().lower()
    units = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    for suffix in ("kb", "mb", "gb", "tb"):
        if text.endswith(suffix):
            text = text[:-1]
    mult = units.get(text[-1:], 1)
    try:
        return max(1, int(float(text.rstrip("bkmgt")) * mult))
    except ValueError:
        return 128 << 20


def batches_of(piece: Piece, columns: list[str]) -> Iterator[Any]:
    """A piece's rows in Arrow record batches of up to ~1M rows, read by pyarrow on this core."""
    reader = open_file(piece.source)
    yield from reader.iter_batches(batch_size=ARROW_CHUNK_ROWS, columns=columns, use_threads=False,
                                   row_groups=range(piece.first_group, piece.stop_group))


def pieces_state(plan: Plan, pieces: Sequence[Piece]) -> tuple[bytes, int]:
    """One task: its pieces' rows fed to an empty twin of the metrics, chunk by chunk (nulls per
    ``plan.nulls``, a refused row named by its file and its row there); its state as bytes and
    the rows skipped for a null."""
    skipped = 0
    columns = plan.columns()
    with trusted_states():
        acc = empty_set(plan.config, plan.kind)
        for piece in pieces:
            offset = piece.first_row
            for chunk in arrow_chunks(batches_of(piece, columns)):
                # no pandas metadata: the rows read as the mapInArrow path reads them
                skipped += feed_arrow(acc, chunk.replace_schema_metadata(None), plan,
                                      f"the Parquet file {piece.source!r}", offset)
                offset += chunk.num_rows
        return state_to_bytes(acc), skipped


def _task(plan: Plan, tasks: Iterator[list[Piece]]) -> Iterator[tuple[bytes, int]]:
    for pieces in tasks:
        state = pieces_state(plan, pieces)
        settle()  # the daemon's collection after the task: cheap
        yield state


def _merge(pairs: Iterator[tuple[bytes, int]]) -> Iterator[tuple[bytes, int]]:
    """A merge task of the tree: its (state, skipped) pairs in, one out (one k-way merge)."""
    payloads: list[bytes] = []
    skipped = 0
    for payload, n in pairs:
        if payload:
            payloads.append(payload)
        skipped += n
    merged = merge_bytes(payloads)
    settle()
    yield merged, skipped


def run_pieces(df: Any, plan: Plan, tasks: list[list[Piece]], depth: int) -> list[tuple[bytes, int]]:
    """The tasks' states, merged by the executor-side levels of ``RDD.treeReduce(..., depth)``
    (the fan-in of :func:`streammetrics.spark._tree_levels`), collected: what is left for the
    driver's one k-way merge."""
    sc = df.sparkSession.sparkContext
    parts = len(tasks)
    states = sc.parallelize(tasks, parts).mapPartitions(lambda it: _task(plan, it))
    scale = max(math.ceil(parts ** (1.0 / depth)), 2)
    level = float(parts)
    while level > scale + level / scale:
        level /= scale
        states = states.repartition(int(level)).mapPartitions(_merge)
    return [(bytes(p), int(n)) for p, n in states.collect()]
