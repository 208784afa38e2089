"""Evaluate accumulators over a Spark Structured Streaming DataFrame, per key and event-time window.

Install the extra: ``pip install 'streammetrics[spark]'`` (``pyspark`` 3.5+; Spark needs a Java
17+ runtime).

How it runs
-----------
``evaluate_stream(df, metrics, label=..., score=..., window=("ts", "10 minutes"),
watermark="5 minutes")`` returns a streaming DataFrame: one row per metric value of each key and
event-time window, which the caller writes with ``writeStream`` (a checkpoint location makes it
survive restarts). The rows are grouped by the ``by=`` keys and by the window pyspark's
``window()`` gives each row's event time (a tumbling window, or sliding with a third element);
each group keeps its state in Spark's state store (:mod:`streammetrics._engines.spark_stream_state`):
the metrics' own saved form (bytes in the library's versioned, checksummed format, validated
when read back), with the number of rows fed. Two of Spark's operators can keep it
(``state_api=``):

* ``"applyInPandasWithState"`` (the default; pyspark 3.5+, any state store): one state per
  group; each micro-batch loads it, feeds it the group's new rows and saves it again -- the
  whole state rewritten, O(state + new rows).
* ``"transformWithStateInPandas"`` (pyspark 4.0+, the RocksDB state store -- the session's
  ``spark.sql.streaming.stateStore.providerClass`` set to :data:`ROCKSDB_PROVIDER` before the
  query starts): a ``ListState`` per group, each micro-batch appending the state of its own
  rows only, O(new rows); the list is bounded by ``max_parts`` (the micro-batch that would
  exceed it merges the list into one part); an event-time timer at the window's end closes it
  (:mod:`streammetrics._engines.spark_stream_list`).

Retrieval metrics (``query=``, ``doc_id=``): a query's documents may arrive in several
micro-batches, and a retrieval measure folds in each query whole, so a window's state holds its
rows (query and document ids, relevance, score) and the measures are computed on them when the
values are emitted, each query on all its rows in the window: exactly the values of the batch
:func:`streammetrics.spark.evaluate` on the window's rows.

The watermark closes windows: a row whose event time is not later than the watermark of the
previous micro-batch is late and dropped by Spark before it reaches a state (Spark keeps that
one for late rows, the current one for closing windows); a window's state times out
(event-time timeout or timer at the window's end) once the watermark reaches its end, and is
then removed. A row Spark lets through for a window the current watermark has already passed
(micro-batches in close succession, as on an unbounded source) counts in its window, which is
closed in that micro-batch (emitted once in append mode, one update in update mode). In
``"append"`` mode a window's rows are emitted once, when it closes; in ``"update"`` mode each
micro-batch emits the current values of every window it changed (and nothing when a window
closes).

Exactly once: the state store is versioned by micro-batch and checkpointed with the query, so a
query restarted from its checkpoint re-runs an uncommitted micro-batch on the state as it was
before that batch -- a replayed batch is never counted twice (with a replayable source and an
idempotent sink, such as files or Kafka into a file sink). Both state APIs.

Complexity: per micro-batch and changed group, ``applyInPandasWithState`` O(state + new rows);
``transformWithStateInPandas`` O(new rows) written, plus O(state) every ``max_parts``
micro-batches and, in update mode, O(state) read to compute the values. Exact ranking metrics
keep every score of a window in its state (8 bytes each); bounded variants (``max_bytes=``) keep
it fixed; retrieval metrics keep every row of a window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streammetrics._core.params import Param, check_param
from streammetrics._engines.messages import brief
from streammetrics._engines.plan import Columns
from streammetrics._engines.request import Request, make_run
from streammetrics._engines.spark_stream_state import (
    END,
    END_US,
    PART_SCHEMA,
    START,
    START_US,
    Fold,
    ValueStep,
)
from streammetrics.spark import readable_columns

__all__ = ["OUTPUT_MODES", "ROCKSDB_PROVIDER", "STATE_APIS", "evaluate_stream"]

#: What ``output_mode=`` accepts (the query's ``writeStream.outputMode`` must be the same).
OUTPUT_MODES = ("append", "update")
#: What ``state_api=`` accepts: Spark's operator that keeps the windows' states.
STATE_APIS = ("applyInPandasWithState", "transformWithStateInPandas")
#: The state store ``transformWithStateInPandas`` needs, the value of the session's
#: ``spark.sql.streaming.stateStore.providerClass``.
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_PROVIDER_KEY = "spark.sql.streaming.stateStore.providerClass"
_MODE = Param("choice", f"must be one of {OUTPUT_MODES}", choices=OUTPUT_MODES)
_API = Param("choice", f"must be one of {STATE_APIS}", choices=STATE_APIS)
_MAX_PARTS = Param("int", "must be an integer >= 1", low=1)
_RESERVED = (START, END, "metric", "value", "rows", "skipped")


def _check_stream(df: Any) -> None:
    """``df`` is a streaming pyspark DataFrame, else a ValueError saying what it is."""
    if not hasattr(df, "isStreaming") or not hasattr(df, "sparkSession"):
        raise ValueError(f"df: expected a streaming pyspark DataFrame (spark.readStream...), got "
                         f"{type(df).__name__}")
    if not df.isStreaming:
        raise ValueError("df: expected a streaming DataFrame (spark.readStream...), got a batch one; "
                         "use streammetrics.spark.evaluate for a batch DataFrame")


def _window_spec(window: Any, df: Any) -> tuple[str, str, str | None]:
    """``(column, duration, slide)`` of ``window=``, the column a timestamp of ``df``."""
    ok = (isinstance(window, (tuple, list)) and len(window) in (2, 3)
          and all(isinstance(w, str) and w for w in window))
    if not ok:
        raise ValueError("window: expected (event-time column, duration) or (column, duration, slide), "
                         f"e.g. ('ts', '10 minutes'), got {brief(window)}")
    name, duration, slide = window[0], window[1], window[2] if len(window) == 3 else None
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        raise ValueError(f"window: column {brief(name)} is not in the DataFrame (has {brief(list(fields))})")
    if type(fields[name]).__name__ != "TimestampType":
        raise ValueError(f"window: column {name!r} must be a timestamp, got {fields[name].simpleString()} "
                         f"(cast it: F.col({name!r}).cast('timestamp'))")
    return name, duration, slide


def _keys(by: Columns | None, df: Any, used: Sequence[str], event_time: str) -> list[str]:
    """The ``by=`` key columns as a list, each in ``df`` and none an output column's name."""
    if by is None:
        return []
    keys = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else None
    if not keys or not all(isinstance(k, str) for k in keys):
        raise ValueError(f"by: expected a column name or a non-empty list of them, got {brief(by)}")
    missing = [k for k in keys if k not in df.columns]
    if missing:
        raise ValueError(f"by: columns {brief(missing)} are not in the DataFrame "
                         f"(has {brief(list(df.columns))})")
    clash = [k for k in keys if k in _RESERVED or k in used or k == event_time]
    if clash:
        raise ValueError(f"by: key column(s) {brief(clash)} clash with an output or metric column "
                         f"({list(_RESERVED)}, {brief(list(used))} and the event time {event_time!r})")
    return keys


def _with_watermark(df: Any, column: str, watermark: str | None) -> Any:
    """``df`` with a watermark on ``column``: ``watermark`` the delay, or None when ``df`` has one
    on it already."""
    if watermark is None:
        field = next(f for f in df.schema.fields if f.name == column)
        if "spark.watermarkDelayMs" not in field.metadata:
            raise ValueError(f"watermark: give the delay after which rows are late (e.g. '5 minutes'); "
                             f"column {column!r} has no watermark (df.withWatermark) to close windows")
        return df
    if not isinstance(watermark, str) or not watermark:
        raise ValueError(f"watermark: expected a delay such as '5 minutes', got {brief(watermark)}")
    return _spark_call(lambda: df.withWatermark(column, watermark), "watermark", watermark)


def _spark_call(fn: Any, what: str, given: Any) -> Any:
    """``fn()``, Spark refusing the argument (an unparsable duration) a ValueError naming it."""
    try:
        return fn()
    except Exception as exc:  # pyspark's AnalysisException / IllegalArgumentException / ParseException
        if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{what}: Spark refused {brief(given)}: {reason}") from None


def _output_schema(df: Any, keys: list[str]) -> Any:
    """The output rows' schema: the keys (their input types), the window, metric, value, counts."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType, TimestampType

    types = {f.name: f.dataType for f in df.schema.fields}
    return StructType([
        *[StructField(k, types[k], True) for k in keys],
        StructField(START, TimestampType(), False), StructField(END, TimestampType(), False),
        StructField("metric", StringType(), False), StructField("value", DoubleType(), True),
        StructField("rows", LongType(), False), StructField("skipped", LongType(), False),
    ])


def _check_state_api(df: Any, state_api: str) -> str:
    """``state_api=`` checked: a choice of :data:`STATE_APIS` that the installed pyspark and the
    session's state store can run."""
    api = check_param(state_api, "state_api", _API)
    if api == "transformWithStateInPandas":
        import pyspark
        from pyspark.sql import GroupedData

        if not hasattr(GroupedData, "transformWithStateInPandas"):
            raise ValueError(f"state_api: 'transformWithStateInPandas' needs pyspark 4.0 or later, installed "
                             f"{pyspark.__version__}; use state_api='applyInPandasWithState'")
        provider = df.sparkSession.conf.get(_PROVIDER_KEY, None)
        if "RocksDBStateStoreProvider" not in str(provider):
            raise ValueError(f"state_api: 'transformWithStateInPandas' needs the RocksDB state store; set "
                             f"spark.conf.set({_PROVIDER_KEY!r}, {ROCKSDB_PROVIDER!r}) before calling "
                             f"evaluate_stream and starting the query (the session has {provider!r})")
    return api


def evaluate_stream(
    df: Any,
    metrics: Any,
    *,
    window: Sequence[str],
    watermark: str | None = None,
    label: Columns | None = None,
    score: Columns | None = None,
    target: Columns | None = None,
    prediction: Columns | None = None,
    weight: str | None = None,
    query: str | None = None,
    doc_id: str | None = None,
    by: Columns | None = None,
    output_mode: str = "append",
    state_api: str = "applyInPandasWithState",
    max_parts: int = 32,
    positive_index: int = 1,
    nulls: str = "error",
    **update_kwargs: Any,
) -> Any:
    """Per-key, per-event-time-window metric values of a streaming DataFrame, as a streaming
    DataFrame whose state lives in Spark's state store.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A streaming DataFrame (``spark.readStream...``). Only the named columns are read.
    metrics : MetricSet, Metric or mapping of name -> Metric
        The templates (their configuration only): every key and window gets an empty twin.
        Classification, ranking, regression or retrieval metrics (retrieval: give ``query=``).
    window : tuple of str
        ``(column, duration)`` for tumbling windows or ``(column, duration, slide)`` for sliding
        ones, as pyspark's ``window(column, duration, slide)``: ``("ts", "10 minutes")``. The
        column must be a timestamp. A row with a null event time falls in no window (Spark's
        ``window()`` drops it).
    watermark : str, optional
        How late a row may arrive, ``df.withWatermark(column, watermark)``: ``"5 minutes"``. None
        when ``df`` already has a watermark on the window's column.
    label, score, target, prediction, weight : str or list of str, optional
        The columns, as in :func:`streammetrics.spark.evaluate` (an MLlib vector score column
        gives binary metrics its element ``positive_index``).
    query, doc_id : str, optional
        Retrieval metrics: the query id column (required) and the document id column (breaks
        ties in score as trec_eval does). A window's value of a query is computed on all the
        query's rows that fall in the window, whichever micro-batches they came in; a query
        whose rows fall in two windows counts once in each, on its rows there.
    by : str or list of str, optional
        Key columns: one state per key and window.
    output_mode : {"append", "update"}
        ``"append"``: a window's rows once, when the watermark passes its end; ``"update"``: a
        window's current rows at every micro-batch that adds to it (retrieval: each query on its
        rows so far). Write the result with the same ``writeStream.outputMode``.
    state_api : {"applyInPandasWithState", "transformWithStateInPandas"}
        Spark's operator that keeps the states. ``"applyInPandasWithState"`` (the default, any
        pyspark 3.5+ and state store): one saved state per window, rewritten at each
        micro-batch that adds to it. ``"transformWithStateInPandas"`` (pyspark 4.0+, the RocksDB
        state store: set ``spark.sql.streaming.stateStore.providerClass`` to
        :data:`ROCKSDB_PROVIDER` first): a list per window, each micro-batch appending the state
        of its own rows only, closed by an event-time timer.
    max_parts : int
        ``"transformWithStateInPandas"``: the most saved parts a window's list holds; the
        micro-batch that would exceed it merges the list into one part (>= 1; 1 rewrites the
        state each time, as ``applyInPandasWithState`` does).
    positive_index : int
        A vector score column: the element binary metrics take.
    nulls : {"error", "skip"}
        A row with a null in a used column fails the query (a ValueError naming the column and
        the row) or is skipped (counted in ``skipped``).
    **update_kwargs
        Passed to every ``update``.

    Returns
    -------
    pyspark.sql.DataFrame
        A streaming DataFrame with columns: the ``by`` keys, ``window_start``, ``window_end``
        (timestamps), ``metric`` (its name; an array value one row per element, ``cm[0, 1]``),
        ``value`` (double; NaN where undefined, e.g. AUROC of a window with one class),
        ``rows`` (rows fed to the window; retrieval: documents) and ``skipped`` (rows skipped
        for a null).

    Raises
    ------
    ValueError
        ``df`` not a streaming DataFrame; a column missing; the window's column not a timestamp;
        a duration or delay Spark cannot parse; no watermark; an unknown ``output_mode`` or
        ``state_api``; ``"transformWithStateInPandas"`` on pyspark < 4 or without the RocksDB
        state store; retrieval metrics without ``query``.

    Notes
    -----
    Complexity, per micro-batch and key and window it has rows for: ``applyInPandasWithState``
    O(state + new rows) (the state read and written back); ``transformWithStateInPandas``
    O(new rows) written, plus O(state) once every ``max_parts`` micro-batches of the window and,
    in update mode, O(state) read to emit the values. At a window's close, O(state). The state
    store holds the open windows' states: exact ranking metrics 8 bytes per score, retrieval
    metrics every row (their query and document ids, relevance and score).

    Examples
    --------
    >>> from streammetrics.spark_streaming import evaluate_stream          # doctest: +SKIP
    >>> out = evaluate_stream(stream, sm.AUROC(), label="y", score="p",     # doctest: +SKIP
    ...                       window=("ts", "10 minutes"), watermark="5 minutes")
    >>> out.writeStream.outputMode("append").format("parquet").option(      # doctest: +SKIP
    ...     "checkpointLocation", "chk/").start("auroc/")
    """
    from pyspark.sql import functions as F

    _check_stream(df)
    mode = check_param(output_mode, "output_mode", _MODE)
    api = _check_state_api(df, state_api)
    parts = check_param(max_parts, "max_parts", _MAX_PARTS)
    column, duration, slide = _window_spec(window, df)
    request = Request(label=label, score=score, target=target, prediction=prediction, weight=weight,
                      query=query, doc_id=doc_id, positive_index=positive_index, nulls=nulls,
                      update_kwargs=update_kwargs)
    run = make_run(metrics, request, available=list(df.columns))
    used = run.plan.columns()
    keys = _keys(by, df, used, column)
    df = _with_watermark(df, column, watermark)
    windowed = _spark_call(
        lambda: df.select(*keys, F.col(column), *readable_columns(df, [c for c in used if c != column]),
                          (F.window(column, duration, slide) if slide else F.window(column, duration))
                          .alias("__streammetrics_window__")),
        "window", tuple(window))
    w = F.col("__streammetrics_window__")
    frame = windowed.select(*keys, F.col(column), *[F.col(c) for c in used if c != column],
                            F.unix_micros(w.start).alias(START_US), F.unix_micros(w.end).alias(END_US))
    fold = Fold(run, metrics, keys)
    grouped = frame.groupBy(*keys, START_US, END_US)
    if api == "transformWithStateInPandas":
        from streammetrics._engines.spark_stream_list import ListStep

        return grouped.transformWithStateInPandas(ListStep(fold, mode, parts), _output_schema(df, keys),
                                                  mode, "EventTime")
    from pyspark.sql.streaming.state import GroupStateTimeout

    return grouped.applyInPandasWithState(ValueStep(fold, mode), _output_schema(df, keys), PART_SCHEMA, mode,
                                          GroupStateTimeout.EventTimeTimeout)
