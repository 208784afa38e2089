"""The ``transformWithStateInPandas`` processor of :func:`streammetrics.spark_streaming.evaluate_stream`
(``state_api="transformWithStateInPandas"``; pyspark 4.0+, RocksDB state store).

Per key and event-time window, a ``ListState`` of saved parts (:mod:`spark_stream_state`): each
micro-batch that has rows for the window appends one part holding only those rows' state
(O(new rows) written), instead of rewriting the window's whole state as ``applyInPandasWithState``
does. The list is bounded: a micro-batch that would make it longer than ``max_parts`` merges
the saved parts and its own into one and puts that single part back (O(state), once every
``max_parts`` micro-batches of a window). An event-time timer at the window's end closes it:
when the watermark reaches the timer, the parts are merged, the values computed and emitted
(append mode), and the window's state and timer removed. In update mode each micro-batch with
rows for a window reads and merges its parts to emit its current values (O(state) read; the
writes stay O(new rows)).

Importing this module imports pyspark's ``StatefulProcessor`` (pyspark 4.0+):
:func:`streammetrics.spark_streaming.evaluate_stream` imports it only when asked for this API.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from streammetrics._engines.spark_stream_state import PART_SCHEMA, Fold, Part, timer_ms, window_where

#: The number of saved parts a window's list holds at most, by default.
MAX_PARTS = 32


class ListStep(StatefulProcessor):
    """The processor ``transformWithStateInPandas`` runs per key and window (its grouping key is
    the ``by=`` keys, then the window's start and end in epoch microseconds).

    State per key and window: ``parts``, a ``ListState`` of saved parts (state bytes, rows fed,
    rows skipped), and ``count``, a ``ValueState`` holding the list's length (so that appending
    never reads the list); one event-time timer at the window's end.

    Parameters
    ----------
    fold : Fold
        The window's parts and output rows.
    mode : {"append", "update"}
        The output mode.
    max_parts : int
        The most parts a window's list holds (>= 1).

    Notes
    -----
    Complexity per micro-batch and window it has rows for: O(new rows) to make and append the
    part (retrieval: plus O(state) to read the window's saved rows, which the new rows are
    checked against before anything is written); every ``max_parts``-th part of a window,
    O(state) to merge the list into one part;
    update mode, O(state) to read and merge the list and compute. At the window's close,
    O(state) to merge and compute.
    """

    def __init__(self, fold: Fold, mode: str, max_parts: int = MAX_PARTS) -> None:
        self.fold = fold
        self.mode = mode
        self.max_parts = max_parts

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.parts = handle.getListState("parts", PART_SCHEMA)
        self.count = handle.getValueState("count", "parts long")

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[Any]:  # noqa: N802, N803
        *values, start_us, end_us = key
        saved = self.count.get()
        count = 0 if saved is None else int(saved[0])
        # retrieval rows are checked against the window's saved rows (duplicate documents, whole
        # queries): the parts are read before anything is written
        held = self._read() if count and (self.fold.rows_kept or count + 1 > self.max_parts) else []
        new = self.fold.absorb(None, rows, window_where(values, start_us, end_us),
                               earlier=[p[0] for p in held] if self.fold.rows_kept else ())
        if count == 0:
            self.handle.registerTimer(timer_ms(end_us))
        if count + 1 > self.max_parts:  # bound the list: its parts and the new one merged into one
            merged = self.fold.combine([*held, new])
            self.parts.put([merged])
            self.count.update((1,))
        else:
            self.parts.appendValue(new)
            self.count.update((count + 1,))
        if self.mode == "update":
            yield self._emit(values, start_us, end_us, self._read())

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:  # noqa: N802, N803
        *values, start_us, end_us = key
        parts = self._read()
        self.parts.clear()
        self.count.clear()
        if self.mode == "append" and parts:
            yield self._emit(values, start_us, end_us, parts)

    def close(self) -> None:
        """Nothing to release."""

    def _read(self) -> list[Part]:
        """The window's saved parts, in the order they were appended."""
        return [(bytes(p[0]), int(p[1]), int(p[2])) for p in self.parts.get()]

    def _emit(self, values: list[Any], start_us: int, end_us: int, parts: list[Part]) -> Any:
        acc = self.fold.accumulator(parts)
        return self.fold.table(values, start_us, end_us, acc, sum(p[1] for p in parts),
                               sum(p[2] for p in parts))
