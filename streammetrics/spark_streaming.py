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
each group keeps one state in Spark's state store through ``applyInPandasWithState``: the
metrics' own saved form (bytes in the library's versioned, checksummed format, validated when
read back), with the number of rows fed. Each micro-batch loads a group's state, feeds it the
group's new rows and saves it again.

The watermark closes windows: a row whose event time is not later than the watermark is late and
dropped by Spark before it reaches a state; a window's state times out (event-time timeout at the
window's end) once the watermark passes its end, and is then removed. In ``"append"`` mode a
window's rows are emitted once, when it times out; in ``"update"`` mode each micro-batch emits
the current values of every window it changed (and nothing when a window closes).

Exactly once: the state store is versioned by micro-batch and checkpointed with the query, so a
query restarted from its checkpoint re-runs an uncommitted micro-batch on the state as it was
before that batch -- a replayed batch is never counted twice (with a replayable source and an
idempotent sink, such as files or Kafka into a file sink).

Complexity: per micro-batch and changed group, loading, feeding and saving its state: O(state
+ new rows). Exact ranking metrics keep every score of a window in its state (8 bytes each,
rewritten at each micro-batch that adds to it); bounded variants (``max_bytes=``) keep it fixed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from streammetrics._core.metric import Metric
from streammetrics._core.params import Param, check_param
from streammetrics._engines.plan import (
    Columns,
    Plan,
    empty_set,
    feed,
    normalise,
    state_from_bytes,
    state_to_bytes,
)
from streammetrics._engines.request import Request, Run, make_run, values_table
from streammetrics.spark import readable_columns
from streammetrics.wrappers.metricset import MetricSet

__all__ = ["OUTPUT_MODES", "evaluate_stream"]

#: What ``output_mode=`` accepts (the query's ``writeStream.outputMode`` must be the same).
OUTPUT_MODES = ("append", "update")
_MODE = Param("choice", f"must be one of {OUTPUT_MODES}", choices=OUTPUT_MODES)
_STATE_SCHEMA = "state binary, rows long, skipped long"
_START, _END = "window_start", "window_end"
_END_MS = "__streammetrics_window_end_ms__"
_RESERVED = (_START, _END, "metric", "value", "rows", "skipped")


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
                         f"e.g. ('ts', '10 minutes'), got {window!r}")
    name, duration, slide = window[0], window[1], window[2] if len(window) == 3 else None
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        raise ValueError(f"window: column {name!r} is not in the DataFrame (has {list(fields)})")
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
        raise ValueError(f"by: expected a column name or a non-empty list of them, got {by!r}")
    missing = [k for k in keys if k not in df.columns]
    if missing:
        raise ValueError(f"by: columns {missing} are not in the DataFrame (has {list(df.columns)})")
    clash = [k for k in keys if k in _RESERVED or k in used or k == event_time]
    if clash:
        raise ValueError(f"by: key column(s) {clash} clash with an output or metric column "
                         f"({list(_RESERVED)}, {list(used)} and the event time {event_time!r})")
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
        raise ValueError(f"watermark: expected a delay such as '5 minutes', got {watermark!r}")
    return _spark_call(lambda: df.withWatermark(column, watermark), "watermark", watermark)


def _spark_call(fn: Any, what: str, given: Any) -> Any:
    """``fn()``, Spark refusing the argument (an unparsable duration) a ValueError naming it."""
    try:
        return fn()
    except Exception as exc:  # pyspark's AnalysisException / IllegalArgumentException / ParseException
        if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{what}: Spark refused {given!r}: {reason}") from None


def _output_schema(df: Any, keys: list[str]) -> Any:
    """The output rows' schema: the keys (their input types), the window, metric, value, counts."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType, TimestampType

    types = {f.name: f.dataType for f in df.schema.fields}
    return StructType([
        *[StructField(k, types[k], True) for k in keys],
        StructField(_START, TimestampType(), False), StructField(_END, TimestampType(), False),
        StructField("metric", StringType(), False), StructField("value", DoubleType(), True),
        StructField("rows", LongType(), False), StructField("skipped", LongType(), False),
    ])


class _Step:
    """The function ``applyInPandasWithState`` runs per group and micro-batch (picklable: the
    plan, the result shape and the output layout only)."""

    def __init__(self, run: Run, metrics: Any, keys: list[str], mode: str) -> None:
        self.plan: Plan = run.plan
        self.run = run
        self.single = (type(metrics).__name__ if isinstance(metrics, Metric)
                       and not isinstance(metrics, MetricSet) else None)
        self.keys = keys
        self.mode = mode

    def __call__(self, key: tuple[Any, ...], frames: Iterator[Any], state: Any) -> Iterator[Any]:
        *values, start, end, end_ms = key
        if state.hasTimedOut:  # the watermark passed the window's end: emit (append), drop
            payload, rows, skipped = state.get
            state.remove()
            if self.mode == "append":
                yield self._rows(values, start, end, payload, rows, skipped)
            return
        acc = empty_set(self.plan.config, self.plan.kind)
        rows = skipped = 0
        if state.exists:
            payload, rows, skipped = state.get
            acc = state_from_bytes(bytes(payload))  # from the checkpoint: validated as any file
        where = f"the micro-batch rows of window [{start}, {end})" + (f" of key {tuple(values)}"
                                                                      if values else "")
        for frame in frames:
            if len(frame):
                dropped = feed(acc, frame, self.plan, where)
                rows += len(frame) - dropped
                skipped += dropped
        payload = state_to_bytes(acc)
        state.update((payload, rows, skipped))
        state.setTimeoutTimestamp(int(end_ms))
        if self.mode == "update":
            yield self._rows(values, start, end, payload, rows, skipped)

    def _rows(self, keys: list[Any], start: Any, end: Any, payload: bytes, rows: int,
              skipped: int) -> Any:
        """The window's output rows: one per metric value (array values one per element)."""
        with warnings.catch_warnings():  # an undefined value (one class in a window) is NaN
            warnings.simplefilter("ignore")
            values = self.run.result_of_bytes(bytes(payload))
        table = values_table({self.single: values} if self.single else values, {}, None)
        for i, name in enumerate(self.keys):
            table.insert(i, name, keys[i])
        width = len(self.keys)
        table.insert(width, _START, start)
        table.insert(width + 1, _END, end)
        table["rows"] = rows
        table["skipped"] = skipped
        return table


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
    by: Columns | None = None,
    output_mode: str = "append",
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
        Classification, ranking and regression metrics (retrieval metrics are refused: a
        micro-batch may split a query).
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
    by : str or list of str, optional
        Key columns: one state per key and window.
    output_mode : {"append", "update"}
        ``"append"``: a window's rows once, when the watermark passes its end; ``"update"``: a
        window's current rows at every micro-batch that adds to it. Write the result with the
        same ``writeStream.outputMode``.
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
        ``rows`` (rows fed to the window) and ``skipped`` (rows skipped for a null).

    Raises
    ------
    ValueError
        ``df`` not a streaming DataFrame; a column missing; the window's column not a timestamp;
        a duration or delay Spark cannot parse; no watermark; an unknown ``output_mode``.

    Notes
    -----
    Complexity: per micro-batch, O(state + new rows) for every key and window it touches; the
    state store holds one state per open window and key (exact ranking: 8 bytes per score).

    Examples
    --------
    >>> from streammetrics.spark_streaming import evaluate_stream          # doctest: +SKIP
    >>> out = evaluate_stream(stream, sm.AUROC(), label="y", score="p",     # doctest: +SKIP
    ...                       window=("ts", "10 minutes"), watermark="5 minutes")
    >>> out.writeStream.outputMode("append").format("parquet").option(      # doctest: +SKIP
    ...     "checkpointLocation", "chk/").start("auroc/")
    """
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    _check_stream(df)
    mode = check_param(output_mode, "output_mode", _MODE)
    column, duration, slide = _window_spec(window, df)
    if normalise(metrics)[0].family == "retrieval":
        raise ValueError("metrics: retrieval metrics need each query's rows together, which a "
                         "micro-batch may split; use classification, ranking or regression metrics")
    request = Request(label=label, score=score, target=target, prediction=prediction, weight=weight,
                      positive_index=positive_index, nulls=nulls, update_kwargs=update_kwargs)
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
                            w.start.alias(_START), w.end.alias(_END),
                            F.unix_millis(w.end).alias(_END_MS))
    return frame.groupBy(*keys, _START, _END, _END_MS).applyInPandasWithState(
        _Step(run, metrics, keys, mode), _output_schema(df, keys), _STATE_SCHEMA, mode,
        GroupStateTimeout.EventTimeTimeout)
