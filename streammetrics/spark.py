"""Evaluate accumulators over PySpark DataFrames: per-partition states, merged in a tree.

Install the extra: ``pip install 'streammetrics[spark]'`` (``pyspark``; Spark needs a Java 17+
runtime, e.g. Debian's ``openjdk-17-jre-headless``).

How it runs
-----------
``evaluate(df, metrics, label=..., score=...)`` selects the named columns and runs one Python
task per partition through ``DataFrame.mapInArrow``: the task feeds the partition's Arrow record
batches, coalesced into chunks of about a million rows (numeric columns straight to numpy, no
pandas), to an empty twin of ``metrics`` (so a classification partition is never held whole in
memory) and emits one row, its state in the library's versioned, checksummed format. Those
states are merged by the levels of ``RDD.treeReduce`` (fan-in set by ``depth``) on the
executors; the driver collects the last level's few states, reads each once, merges them in one
k-way merge and computes the values. Nothing is pickled as an accumulator object: a state
crosses Spark as bytes and is validated when read back.

When every selected column is a number and the session keeps Spark's default of 10,000 rows
per Arrow batch (``spark.sql.execution.arrow.maxRecordsPerBatch``), ``evaluate`` sets it to
~1M rows (at most 64 MiB a batch) for the duration of its job and restores it afterwards; a
query another thread runs on the same session meanwhile sees the larger batches too.

Retrieval metrics need each query's rows in one partition: the frame is repartitioned by the
query column (a hash shuffle) unless ``query_partitioned=True`` says it already is; a partition's
rows are then grouped by query before they are fed.

Because a state is a function of the multiset of rows it has seen and merge is associative and
commutative, any partitioning, empty partitions and any partition order give the
single-process result (bit for bit for counts with unit or integer weights and for the exact
ranking buffers; within float rounding for sums of float weights, retrieval means and exact
binary AUROC / AP by shuffled score ranges: every frame but a plain Parquet scan, and weights).

Exact binary ``AUROC`` / ``AveragePrecision`` members sharing one score state never gather
every score on the driver when values are asked for (``compute=True``), on any frame:

* over a plain Parquet scan read by the tasks, unweighted, ``nulls="error"``, on at most 4
  cores, by score ranges without a shuffle (:mod:`streammetrics._engines.spark_ranges`): R
  range tasks (one per core) each read every row group and keep their range's scores, and the
  driver receives counts -- each range's positives, negatives and Mann-Whitney count, plus with
  an ``AveragePrecision`` the counts at its distinct positive scores (in the smallest unsigned
  type that holds them: usually one or two bytes each) -- the same values, bit for bit, as one
  process;
* on any other frame (``createDataFrame``, a filtered or computed frame, any URI, any number
  of cores), weighted or with ``nulls="skip"``, by the shuffled score ranges of
  :func:`evaluate_ranked` (:mod:`streammetrics._engines.spark_ranked`; 8 ranges per core, the
  frame computed once: its sorted runs are persisted for the shuffle): no process holds more
  than its range, the driver O(partitions x R) numbers; within 1e-12 of one process.

``by=`` slices (binary members) and multiclass one-vs-rest ``AUROC`` / ``AveragePrecision``
(one numeric score column per class, any ``average``, micro too), and both, go by (key, score)
ranges on any frame, weighted or not, either ``nulls``
(:mod:`streammetrics._engines.spark_keyed`, the steps of
:mod:`streammetrics._engines.keyed_ranges`): one pass over the frame makes each chunk's keyed
tuples (persisted) and sends the driver a sample, the slice keys and the other members' state
per partition; a second pass routes the tuples to R ranges (8 per core; persisted) and sends
per-range totals; the pieces are shuffled by range and each range task sends O(keys in range)
numbers: the driver holds O(R x K) numbers for K slices x classes, within 1e-12 of one
process (unweighted AUROC bit for bit).

The set's other members go by their states as above (on the shuffled and keyed routes fed in
the same pass, each partition's state merged on the driver). Still gathered on the driver (one
score per row, 8 bytes, 16 weighted; ``max_bytes=`` bounded variants instead):
``compute=False`` (the merged accumulators are asked for), the curves (``ROCCurve``,
``PRCurve``, ``GainsCurve``...: use :func:`evaluate_ranked`); string labels with ``by=`` are
refused by the keyed tasks as ``Sliced`` refuses them (naming the column, the partition and the
value); an exact ``KSStatistic`` beside AUROC / AP takes the shuffled ranges (each range sends its
largest |TPR - FPR|), with ``by=`` or multiclass the keyed ranges. Several exact AUROC / AP
state groups (one-vs-one beside one-vs-rest, another ``ignore_index``) go by the keyed ranges
together, wherever the other
members' groups sit in the member order, each group mapping ``classes=`` / ``pos_label=``
labels with its own codec; ``scores="probability"`` members take the routes of raw scores (each
task checks the rows with the group's own probability state). A vector score column (MLlib
``VectorUDT`` or arrays) with ``by=`` or multiclass takes the keyed ranges; ``classes=`` /
``pos_label=`` members with string labels, and ``DecimalType`` scores or labels (read as
float64, as the state path reads them), take the routes of numeric columns
(:mod:`streammetrics._engines.label_codes`). See docs/scale-out.md.

Complexity: one ``update`` pass per partition on the executors, ``depth`` rounds of merges; the
driver holds one merged state -- counts for the members above, one score per row for the
gathered ones listed above.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from streammetrics._core.metric import trusted_states
from streammetrics._core.params import FLAG, Param, check_param
from streammetrics._engines.dask_ranked import CHUNK_ROWS
from streammetrics._engines.plan import (
    Columns,
    Plan,
    arrow_chunks,
    brief,
    empty_set,
    feed,
    feed_arrow,
    merge_bytes,
    merged,
    state_from_bytes,
    state_to_bytes,
)
from streammetrics._engines.request import Request, Run, engine_evaluate, make_run, values_table, warn_skipped
from streammetrics._engines.spark_worker import settle

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["evaluate", "evaluate_ranked"]

#: A column ``evaluate`` reads: its name or a Spark ``Column`` expression.
SparkColumn: TypeAlias = "str | Column"
#: One or more of them (``label``, ``score``, ``target``, ``prediction``).
SparkColumns: TypeAlias = "str | Column | Sequence[str | Column]"

_STATE_SCHEMA = "state binary, skipped long"
_DEPTH = Param("int", "must be an integer >= 1", low=1)


def _partition_states(plan: Plan, batches: Iterator[Any]) -> Iterator[Any]:
    """One partition's task: feed its Arrow record batches, coalesced into chunks of about a
    million rows (:func:`~streammetrics._engines.plan.arrow_chunks`; numeric columns straight
    to numpy), and emit one row holding the state and the number of rows skipped for a null
    (``nulls="skip"``)."""
    import pyarrow as pa
    from pyspark import TaskContext

    context = TaskContext.get()
    where = f"Spark partition {context.partitionId() if context is not None else '?'}"
    skipped = 0
    with trusted_states():
        acc = empty_set(plan.config, plan.kind)
        if plan.family == "retrieval":  # a query's rows may span batches: feed the partition once
            table = pa.Table.from_batches(list(batches))
            if table.num_rows:
                skipped += feed(acc, table.to_pandas(), plan, where)
        else:
            offset = 0
            for chunk in arrow_chunks(batches):
                skipped += feed_arrow(acc, chunk, plan, where, offset)
                offset += chunk.num_rows
        payload = state_to_bytes(acc)
    settle()  # the daemon's collection after the task: cheap
    yield pa.RecordBatch.from_pydict({"state": [payload], "skipped": [skipped]},
                                     schema=pa.schema([("state", pa.binary()), ("skipped", pa.int64())]))


def _merge_rows(batches: Iterator[Any]) -> Iterator[Any]:
    """A merge task of the tree: the (state, skipped rows) rows of its partition in, one row
    out, their states merged in one k-way merge (all made by this module's tasks: trusted)."""
    import pyarrow as pa

    payloads: list[bytes] = []
    skipped = 0
    for batch in batches:
        payloads += [p for p in batch.column(0).to_pylist() if p]
        skipped += sum(batch.column(1).to_pylist())
    payload = merge_bytes(payloads)
    settle()
    yield pa.RecordBatch.from_pydict({"state": [payload], "skipped": [skipped]},
                                     schema=pa.schema([("state", pa.binary()), ("skipped", pa.int64())]))


def _tree_levels(states: Any, parts: int, depth: int) -> Any:
    """The executor-side levels of ``RDD.treeReduce(..., depth)`` (the same fan-in), as
    DataFrame steps: each level shuffles the state rows into ``parts / scale`` partitions and
    merges each partition's in one task; what is left is what ``treeReduce``'s last step would
    fold on the driver. Everything stays Arrow (no row pickled through an RDD)."""
    scale = max(math.ceil(parts ** (1.0 / depth)), 2)
    level = float(parts)
    while level > scale + level / scale:
        level /= scale
        states = states.repartition(int(level)).mapInArrow(_merge_rows, _STATE_SCHEMA)
    return states


def _collected(states: Any) -> list[tuple[bytes, int]]:
    """The state rows on the driver: as Arrow where PySpark has ``toArrow`` (4.0+), else rows."""
    if hasattr(states, "toArrow"):
        table = states.toArrow()
        return list(zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True))
    return [(bytes(row[0]), int(row[1])) for row in states.collect()]


#: Rows and bytes of one record batch ``evaluate`` asks for (numeric columns, 8 bytes a value
#: at most): the rows of the chunks its tasks feed (``plan.ARROW_CHUNK_ROWS``).
_BATCH_MAX_ROWS = 1 << 20
_BATCH_BYTES = 64 << 20


@contextlib.contextmanager
def _batch_rows(frame: Any) -> Iterator[None]:
    """Inside the block, Spark sends the frame's rows to Python in record batches of up to
    ~1M rows (at most :data:`_BATCH_BYTES`) instead of its default 10,000, when every column is
    a number and the session keeps the default; the setting is restored after the block.
    (Measured on 10M rows, local[2], a loaded machine: the JVM's CPU 5.7 -> 4.9 s, the Python
    tasks' 1.5 -> 1.0 s.)"""
    from pyspark.sql.types import BooleanType, NumericType

    from streammetrics._engines.spark_ranked import BATCH_ROWS, batch_rows_set

    session = frame.sparkSession
    fields = frame.schema.fields
    before = session.conf.get(BATCH_ROWS, None)
    if not fields or before not in (None, "10000") or not all(
            isinstance(f.dataType, NumericType | BooleanType) for f in fields):
        yield
        return
    with batch_rows_set(session, min(_BATCH_MAX_ROWS, _BATCH_BYTES // (8 * len(fields)))):
        yield


def _driver_merge(pairs: list[tuple[bytes, int]]) -> tuple[Any, int]:
    """The partial states, collected on the driver, merged there in one k-way merge (the merged
    accumulator, None without a state; the skipped rows): each read once, never written again
    (made by this module's tasks: trusted)."""
    kept = [p for p, _ in pairs if p]
    with trusted_states():
        acc = merged([state_from_bytes(p) for p in kept]) if kept else None
    return acc, sum(n for _, n in pairs)


def _value_error(exc: Exception) -> ValueError | TypeError | None:
    """The ValueError a Python task raised (a bad value in the rows) -- or its TypeError (an
    ``update`` keyword the members refuse, as one process raises it) --, from Spark's exception."""
    lines = [ln for ln in str(exc).splitlines() if ln.startswith(("ValueError: ", "TypeError: "))]
    if not lines:
        return None
    kind, _, message = lines[-1].partition(": ")
    return ValueError(message) if kind == "ValueError" else TypeError(message)


@contextlib.contextmanager
def _task_errors() -> Iterator[None]:
    """Inside the block, a row a Python task refused raises the ValueError (or an ``update``
    keyword's TypeError) the task raised."""
    try:
        yield
    except Exception as exc:
        error = _value_error(exc)
        if error is None:
            raise
        raise error from exc


def _grouped(df: Any, request: Request) -> tuple[Any, Request]:
    """``df.groupBy(...)`` given as the frame: the frame and ``by=`` its grouping columns."""
    if type(df).__name__ != "GroupedData":
        return df, request
    from pyspark.sql import functions as F

    frame = df._df
    keys = df.agg(F.count(F.lit(1)).alias("__streammetrics_n__")).columns[:-1]  # analysed, not run
    odd = [k for k in keys if k not in frame.columns]
    if odd or not keys:
        raise ValueError(f"df: a grouped frame must be grouped by column names, got {brief(odd or keys)}")
    if request.by is not None:
        raise ValueError(f"by: the frame is already grouped by {brief(keys)}; got by={brief(request.by)} "
                         "as well")
    return frame, dataclasses.replace(request, by=keys[0] if len(keys) == 1 else keys)


def _expressions(df: Any, request: Request) -> tuple[Any, Request]:
    """Spark ``Column`` expressions given as columns (``label=F.col("p")[1]``): selected under
    names of their own, the request naming those."""
    from pyspark.sql import Column

    extra: list[Any] = []
    changes: dict[str, Any] = {}
    for what in ("label", "score", "target", "prediction", "weight"):
        spec = getattr(request, what)
        specs = spec if isinstance(spec, (list, tuple)) else [spec]
        if not any(isinstance(c, Column) for c in specs):
            continue
        names = []
        for i, c in enumerate(specs):
            if isinstance(c, Column):
                names.append(f"__streammetrics_{what}_{i}__")
                extra.append(c.alias(names[-1]))
            else:
                names.append(c)
        changes[what] = names if isinstance(spec, (list, tuple)) else names[0]
    if not extra:
        return df, request
    return df.select("*", *extra), dataclasses.replace(request, **changes)


def readable_columns(df: Any, names: list[str]) -> list[Any]:
    """The selected columns, an MLlib vector column (``VectorUDT``, dense or sparse) read as an
    array of doubles (``pyspark.ml.functions.vector_to_array``) under its own name."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in df.schema.fields}
    out: list[Any] = []
    for name in names:
        if type(types.get(name)).__name__ == "VectorUDT":
            from pyspark.ml.functions import vector_to_array

            out.append(vector_to_array(F.col(name)).alias(name))
        else:
            out.append(F.col(name))
    return out


@engine_evaluate
def evaluate(
    df: Any,
    metrics: Any,
    *,
    label: SparkColumns | None = None,
    score: SparkColumns | None = None,
    target: SparkColumns | None = None,
    prediction: SparkColumns | None = None,
    weight: SparkColumn | None = None,
    query: str | None = None,
    doc_id: str | None = None,
    query_partitioned: bool = False,
    depth: int = 2,
    compute: bool = True,
    by: Columns | None = None,
    positive_index: int = 1,
    nulls: str = "error",
    as_frame: bool = False,
    direct_parquet: bool = True,
    **update_kwargs: Any,
) -> Any:
    """Run accumulators over a PySpark DataFrame on the executors and merge their states in a tree.

    Parameters
    ----------
    df : pyspark.sql.DataFrame or GroupedData
        The rows. Only the named columns are read. A ``df.groupBy("k", ...)`` of column names
        means the frame with ``by=`` those columns (``by=`` itself then not given). ``label``,
        ``score`` (or their aliases) and ``weight`` may also be Spark ``Column`` expressions
        (``F.col("probability")``, ``vector_to_array(F.col("probability"))[1]``,
        ``F.col("y").cast("int")``), evaluated in the same job.
    {engine: metrics, label, score, target_prediction, weight, query_doc_id, query_partitioned}
    depth : int
        Depth of ``RDD.treeReduce`` (>= 1; 1 merges every state on the driver).
    {engine: compute, by, positive_index, nulls, as_frame}
    direct_parquet : bool
        When ``df`` is a plain scan of Parquet files (``spark.read.parquet(...)``, optionally
        with a selection of its columns: no filter, no computed or renamed column, no join, no
        cache, no partition columns) and every used column is a number, a boolean or a string
        of the type Spark reads, the Python tasks read the files' row groups themselves with
        pyarrow: the rows never cross from the JVM to Python (True, the default; the same
        values). False: always Spark's reader and ``mapInArrow``
        (:mod:`streammetrics._engines.spark_files`). The executors must open the files as the
        driver does (a local path, or a URI ``pyarrow.fs`` resolves).
    {engine: update_kwargs}

    Returns
    -------
    {engine: returns}

    Notes
    -----
    Complexity: one ``update`` pass per partition; ``depth`` merge rounds; the driver receives
    one state. A direct Parquet read also reads each file's footer on the driver.

    Exact binary ``AUROC`` / ``AveragePrecision`` members (one score state, full or partial
    area -- ``max_fpr``: the shuffled ranges --, step AP;
    weighted or not, either ``nulls``) never bring every score to the driver: over a plain
    Parquet scan (unweighted, ``nulls="error"``, at most 4 cores) by score ranges, each of R
    range tasks reading every row, bit for bit as one process; on any other frame by the
    shuffled ranges of :func:`evaluate_ranked` (the frame computed once, within 1e-12); the
    driver receives counts, not scores, and the other members' states as usual (see the
    module docstring); so do ``by=`` slices, multiclass one-vs-rest / one-vs-one and
    multilabel AUROC (also partial: ``max_fpr``) / AP (also interpolated and 11-point), by
    (key, score) ranges (one numeric score column per class or label; the driver O(R x K)
    numbers for K slices x classes). The driver does hold one score per row (8 bytes, 16
    weighted) for ``compute=False``, the curves and other exact ranking metrics: use
    :func:`evaluate_ranked` (curves) or the bounded ``max_bytes=`` variants beyond the
    driver's memory.

    Examples
    --------
    >>> import streammetrics as sm                                          # doctest: +SKIP
    >>> from streammetrics.spark import evaluate                            # doctest: +SKIP
    >>> evaluate(df, sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p")  # doctest: +SKIP
    {'auroc': 0.91, 'f1': 0.77}
    """
    depth = check_param(depth, "depth", _DEPTH)
    direct = check_param(direct_parquet, "direct_parquet", FLAG)
    df, request = _grouped(df, Request.of(locals()))
    df, request = _expressions(df, request)
    run = make_run(metrics, request, available=list(df.columns))
    out = _evaluate(df, run, depth, direct)
    if not as_frame:
        return out
    table = values_table(out, metrics, request.by)
    if not len(table):  # nothing to infer the key columns' types from
        keys = [f"`{c}` string" for c in table.columns[:-2]]
        return df.sparkSession.createDataFrame([], ", ".join([*keys, "metric string, value double"]))
    return df.sparkSession.createDataFrame(table)


def _evaluate(df: Any, run: Run, depth: int, direct: bool = False) -> Any:
    """:func:`evaluate` of a checked run (``direct``: a plain Parquet scan read by pyarrow in
    the tasks, where it applies)."""
    plan = run.plan
    tasks = None
    if direct and run.shuffle_on is None:
        from streammetrics._engines import spark_files

        tasks = spark_files.plan_pieces(df, plan)
        if tasks is not None and not tasks:  # no file holds a row
            return run.result(None)
        if tasks is not None:
            from streammetrics._engines import spark_ranges

            split = spark_ranges.split_for(df, run)
            if split is not None:  # exact binary AUROC / AP: by score ranges, no state of every score
                with _task_errors():
                    values, caught = spark_ranges.run_ranges(df, plan, split, tasks)
                return run.shape.deliver(values, caught, sliced=False)
    from streammetrics._engines import spark_ranked

    ranked = spark_ranked.split_for(run)
    if ranked is not None:  # exact binary AUROC / AP on any frame: shuffled ranges, no gather
        return _split_evaluate(df, run, ranked, depth, tasks)
    from streammetrics._engines import spark_keyed

    keyed = spark_keyed.split_for(df, run)
    if keyed is not None:  # by= slices, multiclass one-vs-rest AUROC / AP: (key, score) ranges
        frame = df.select(*readable_columns(df, plan.columns()))
        with _task_errors(), _batch_rows(frame):
            values, caught, skipped = spark_keyed.keyed_values(frame, plan, keyed,
                                                               spark_keyed.range_count(df.sparkSession))
        run.report_skipped(skipped)
        return run.shape.deliver(values, caught, sliced=plan.by is not None)
    acc, skipped = _states(df, run, depth, tasks)
    run.report_skipped(skipped)
    return run.result(acc)


def _states(df: Any, run: Run, depth: int, tasks: Any = None) -> tuple[Any, int]:
    """The run's merged accumulator (None: no partition) and the rows skipped for a null: the
    states of the partitions -- or of the direct Parquet ``tasks``' pieces -- merged in a tree."""
    plan = run.plan
    if tasks is not None:
        from streammetrics._engines import spark_files

        with _task_errors():
            return _driver_merge(spark_files.run_pieces(df, plan, tasks, depth))
    frame = df.select(*readable_columns(df, plan.columns()))
    if run.shuffle_on is not None:
        frame = frame.repartition(run.shuffle_on)
    states = frame.mapInArrow(lambda batches: _partition_states(plan, batches), _STATE_SCHEMA)
    parts = frame.rdd.getNumPartitions()
    if parts == 0:
        return None, 0
    with _task_errors():
        # ``RDD.treeReduce`` but the last level: its ``reduce`` would merge the partial states
        # pairwise on the driver and write each merge back to bytes, only to read it again.
        with _batch_rows(frame):
            collected = _collected(_tree_levels(states, parts, depth))
        return _driver_merge(collected)


def _split_evaluate(df: Any, run: Run, split: Any, depth: int, tasks: Any) -> Any:
    """:func:`evaluate` of a set whose exact binary AUROC / AP members go by shuffled score
    ranges (:mod:`streammetrics._engines.spark_ranked`: no process holds more than its range)
    and its other members by their states, fed in the same pass over the frame (each chunk in
    the set's group order, so that a row both refuse is refused as one process refuses it) and
    merged on the driver -- or, over the direct Parquet ``tasks`` (not None), read by those
    tasks first (which names a null by its file) and merged in a tree. Values in the set's
    member order, the warnings of each part."""
    from streammetrics._engines import ranked_common, spark_ranked
    from streammetrics._engines.plan import Shape, compute_recorded, empty_set

    req = spark_ranked.set_request(split, run.plan, df.sparkSession.sparkContext.defaultParallelism)
    rest_run = None if split.rest is None else dataclasses.replace(
        run, template=empty_set(split.rest), shape=Shape("set"),
        plan=dataclasses.replace(run.plan, config=split.rest))
    acc = None
    if rest_run is not None and tasks is not None:  # the same rows skipped as the ranked part
        acc, _ = _states(df, rest_run, depth, tasks)
    rest = None
    if rest_run is not None and tasks is None:
        rest = spark_ranked.Rest(rest_run.plan, split.before)
    frame = df.select(*readable_columns(df, run.plan.columns() if rest is not None else req.plan.columns()))
    with _task_errors(), _batch_rows(frame):
        (summaries, totals), skipped, states = spark_ranked.counted_summaries(frame, req, rest)
    parts: dict[str, Any] = dict(ranked_common.values(req, summaries, totals))  # warns as one process
    caught: list[tuple[str, type[Warning]]] = []
    if rest_run is not None:
        if rest is not None:
            acc, _ = _driver_merge(states)
        values, caught = compute_recorded(rest_run.template if acc is None else acc)
        parts.update(values)
    run.report_skipped(skipped)
    return run.shape.deliver({n: parts[n] for n in split.names}, caught, sliced=False)


def evaluate_ranked(
    df: Any,
    metrics: Any,
    *,
    label: str,
    score: str,
    weight: str | None = None,
    ranges: int | Sequence[float] = 8,
    sample_size: int = 256,
    chunk_rows: int = CHUNK_ROWS,
    nulls: str = "error",
) -> Any:
    """Exact binary AUROC, AP, ROC and PR curves over a PySpark DataFrame, range by range.

    :func:`streammetrics.dask.evaluate_ranked` on Spark (the same parameters, values and
    errors): each partition's scores are sorted in its Python task and cut at R - 1 score edges
    (weighted quantiles of a sample of every partition, or given); each piece travels as one
    Arrow row in a shuffle by range; one task per range merges its pieces and sends a few
    numbers. No process holds every score (:mod:`streammetrics._engines.spark_ranked`).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The rows (only ``label``, ``score`` and ``weight`` are read).
    metrics : MetricSet, Metric or mapping of name -> Metric
        Exact binary ``AUROC`` (full area), ``AveragePrecision`` (step), ``KSStatistic``,
        ``ROCCurve``, ``PRCurve``, ``GainsCurve`` / ``LiftCurve``, ``DETCurve``.
    label, score : str
        The 0/1 label and the score columns.
    weight : str, optional
        The ``sample_weight`` column.
    ranges : int or sequence of float
        The number R of score ranges (default 8), or the R - 1 non-decreasing edges.
    sample_size : int
        Ranks sampled from each partition's sorted runs (per chunk) to place the edges.
    chunk_rows : int
        Rows validated and sorted at a time (default 262,144); the values do not depend on it.

    nulls : {"error", "skip"}
        Rows holding a null (or NaN) in ``label``, ``score`` or ``weight``: refused (a
        ValueError naming the column and the row) or dropped by the tasks (their number reported
        by a ``NullRowsSkipped`` warning), as ``evaluate`` does.
    Returns
    -------
    dict or value
        In the shape of ``metrics``: floats for AUROC, AP and KS, ``ROCCurveResult`` /
        ``PRCurveResult`` / ``GainsCurveResult`` / ``DETCurveResult`` for the curves (assembled
        on the driver: one point per distinct score).

    Raises
    ------
    ValueError
        Another metric or configuration, a missing column, bad ``ranges`` / ``sample_size``, or
        any input the metrics reject (the row named).

    Notes
    -----
    Equal to the single-process exact values up to float rounding (1e-12 relative). One pass
    reads and sorts every partition, ``chunk_rows`` rows at a time; its sorted runs are
    persisted (``MEMORY_AND_DISK``, 8 bytes a score, 16 weighted) for the totals and the
    shuffle, then released. Memory: a partition task one chunk (its sorted scores sent before
    the next is read), whatever the partition's size; a range task about 3-4 times its range; the
    driver O(partitions x R) numbers.
    """
    from streammetrics._engines import ranked_common, spark_ranked

    req = ranked_common.request(metrics, label=label, score=score, weight=weight, ranges=ranges,
                                sample_size=sample_size, chunk_rows=chunk_rows,
                                available=list(df.columns), nulls=nulls)
    try:
        (summaries, totals), skipped, _ = spark_ranked.counted_summaries(df.select(*req.plan.columns()), req)
    except Exception as exc:  # a row refused in a Python task: the ValueError it raised
        error = _value_error(exc)
        if error is None:
            raise
        raise error from exc
    warn_skipped(skipped, req.plan.columns())
    return ranked_common.values(req, summaries, totals)
