"""The window over queries of :class:`~streammetrics.Window` for the retrieval family."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.state import State
from streammetrics._core.timestamps import Clock, check_timestamps
from streammetrics._queries.values import (
    TIMED_QUERY_OPTIONS,
    TimedQueryOptions,
    check_values,
    nan_columns,
    query_values,
    spec_layout,
    split_timestamp,
    write_query_sums,
)

from ._rows import Piece, Rows, optional_float
from ._window_state import WindowBase

if TYPE_CHECKING:
    from typing import Unpack


class QueryWindowState(WindowBase):
    """A window over queries for the retrieval family: the last ``size`` queries, or those whose
    timestamp is strictly newer than newest - ``seconds`` (one timestamp per query).

    Keeps every window query's per-query values of the wrapped measure(s) -- ``(queries, width)``
    float64, 8 bytes per query and value column, whatever the queries' lengths -- and, before a
    read, writes their count and sums (and the values, for ``per_query=True``) into the wrapped
    :class:`~streammetrics.retrieval.metrics.QueryState` through its ``load_arrays``; the mean over the
    window's queries is then the wrapped metric's own ``compute``. The sums are re-added from
    the rows on the first read after a change: O(W · width) vectorised, no drift.
    """

    unit = "queries"

    def __init__(self, inner: State, size: int | None, seconds: float | None, clock: Clock) -> None:
        super().__init__(inner, size, seconds, clock)
        self.specs = list(inner.specs)  # type: ignore[attr-defined]
        self.width = sum(spec.width for spec in self.specs)
        # rows: y = values (q, width), p = empty (q, 0), ts = one per query

    def key(self) -> Hashable:
        return ("window-queries", self.size, self.seconds, tuple(spec.name for spec in self.specs))

    #: The keyword arguments ``prepare`` takes (a MetricSet passes only these to it).
    update_keywords = TIMED_QUERY_OPTIONS

    def prepare(self, relevance: Any, scores: Any, **options: Unpack[TimedQueryOptions]) -> Any:
        timestamp, rest = split_timestamp(options)
        self._check_untimed(timestamp)
        vals = query_values(self.specs, relevance, scores, **rest)
        n = vals.shape[0]
        sec = self.seconds
        ts = None if sec is None else check_timestamps(timestamp, n, self.clock, self.newest, sec)
        return Piece(vals, np.zeros((n, 0)), None, ts)

    def apply(self, delta: Any) -> None:
        piece: Piece = delta
        if len(piece) == 0:
            return
        self._stamp(piece)
        self.rows.append(piece)
        self._dirty = True
        self._expire()

    def values(self) -> np.ndarray:
        """The window's per-query values in arrival order, (queries, width)."""
        live = [q.y[q.lo:q.hi] for q in self.rows]
        return np.concatenate(live) if live else np.zeros((0, self.width))

    def sync(self) -> None:
        """Write the window's query count and sums into the wrapped state."""
        if not self._dirty:
            return
        vals = self.values()
        write_query_sums(self.inner, self.specs, vals.shape[0], vals.sum(axis=0), vals)
        self._dirty = False

    def arrays(self) -> dict[str, Any]:
        out: dict[str, Any] = {"values": self.values().copy()}
        if self.seconds is not None:
            live = [q.ts[q.lo:q.hi] for q in self.rows]  # type: ignore[index]
            out["ts"] = np.concatenate(live) if live else np.zeros(0)
        out["newest"] = self.newest
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        timed = self.seconds is not None
        expected = {"values", "newest"} | ({"ts"} if timed else set())
        missing = expected - set(arrays)
        if missing:
            raise ValueError(f"state: missing entries {sorted(missing)} in a query window")
        extra = set(arrays) - expected
        if extra:
            raise ValueError(f"state: unexpected arrays {sorted(extra)} in a query window")
        vals = check_values(arrays["values"], self.width, "query window", nan_columns(self.specs))
        for spec, a, b in spec_layout(self.specs):  # per measure: values within its range
            spec.check_block(vals[:, a:b], None, f"query window values of {spec.name}", 0.5e-9)
        n = vals.shape[0]
        newest = optional_float(arrays["newest"], "newest")
        ts = None
        if timed:
            ts = arrays["ts"]
            if not isinstance(ts, np.ndarray) or ts.shape != (n,) or ts.dtype.kind != "f" \
                    or not np.isfinite(ts).all():
                raise ValueError(f"state: query window 'ts' must be {n} finite floats")
            ts = ts.astype(np.float64)
            if n > 1 and bool((np.diff(ts) < 0).any()):
                raise ValueError("state: query window timestamps must be non-decreasing")
        self._check_span(n, None if ts is None or not n else float(ts[0]),
                         None if ts is None or not n else float(ts[-1]), newest)
        rows = Rows()
        if n:
            rows.append(Piece(vals, np.zeros((n, 0)), None, ts))
        self.rows, self.newest, self._dirty = rows, newest, True
        self.sync()

    def _merge_copy(self, piece: Piece) -> Piece:
        return Piece(piece.y.copy(), piece.p, None, None if piece.ts is None else piece.ts.copy())
