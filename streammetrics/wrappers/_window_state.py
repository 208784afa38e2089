"""The states of :class:`~streammetrics.Window`: what both window states share
(:class:`WindowBase`: the row queue, the clock, expiry, merge, the loaded-span checks) and the
window over samples (:class:`WindowState`). The window over queries of the retrieval family is
:class:`~streammetrics.wrappers._window_queries.QueryWindowState`. How they work: see
:mod:`streammetrics.wrappers.window`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.state import State
from streammetrics._core.timestamps import Clock, check_timestamps, clock_now, resolvable
from streammetrics._core.validation import is_scalar, one_value, one_weight

from ._rows import Piece, Rows, canonical_rows, fold, interleave, load_rows, rows_arrays, rows_to_expire, runs


class WindowBase(State):
    """A window's items (rows, or queries) in a :class:`~streammetrics.wrappers._rows.Rows` queue, the
    wrapped state ``inner``, the window's span (``size`` items or ``seconds``), the clock and the
    newest timestamp. Subclasses say what leaving the window does to ``inner``
    (:meth:`_expired_rows`) and how a merge rebuilds it (:meth:`_after_merge`)."""

    #: What the window holds, in error messages.
    unit = "rows"

    def __init__(self, inner: State, size: int | None, seconds: float | None, clock: Clock) -> None:
        self.inner = inner
        self.size, self.seconds, self.clock = size, seconds, clock
        self.rows = Rows()
        self.newest: float | None = None
        self._dirty = False  # ``inner`` must be brought to the rows again before a read

    def _check_untimed(self, timestamp: Any) -> None:
        if self.seconds is None and timestamp is not None:
            raise ValueError("timestamp: only time windows (seconds=...) take timestamps")

    def _stamp(self, piece: Piece) -> None:
        """Timestamps of a piece being applied: one that lost a race with a newer batch (prepared
        before it, applied after) takes the newest timestamp; ``newest`` moves to the piece's."""
        if piece.ts is not None:
            if self.newest is not None and piece.ts[0] < self.newest:
                piece.ts = np.maximum(piece.ts, self.newest)  # lost a race with a newer batch
            t = float(piece.ts[-1])
            self.newest = t if self.newest is None else max(self.newest, t)

    def _expire(self) -> None:
        k = rows_to_expire(self.rows, self.size, self.seconds, self.newest)
        if k > 0:
            self._expired_rows(self.rows.drop_front(k))

    def _expired_rows(self, gone: list[Piece]) -> None:
        """Hook: the pieces ``gone`` left the window (``inner`` still holds them)."""
        self._dirty = True

    def advance(self, timestamp: float) -> None:
        """Declare that time has reached ``timestamp`` (time windows): expire older rows."""
        if self.newest is None or timestamp > self.newest:
            self.newest = float(timestamp)
        self._expire()

    @property
    def n_rows(self) -> int:
        return self.rows.n

    def sample_count(self) -> float:
        """The number of rows in the window. O(1)."""
        return float(self.rows.n)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes() + self.inner.nbytes

    def _check_span(self, n: int, first_ts: float | None, last_ts: float | None,
                    newest: float | None) -> None:
        """Loaded (untrusted) items must fit the window: at most ``size`` of them, or all newer
        than newest - ``seconds``, with ``newest`` set exactly for time windows."""
        if self.seconds is None:
            if newest is not None:
                raise ValueError("state: a count window has no 'newest' timestamp")
            if n > self.size:  # type: ignore[operator]
                raise ValueError(f"state: a window of size {self.size} holds {n} {self.unit}")
        elif n:
            if newest is None:
                raise ValueError(f"state: a time window holding {self.unit} needs 'newest'")
            if newest < last_ts or first_ts <= newest - self.seconds:  # type: ignore[operator]
                raise ValueError("state: window rows lie outside the window")

    def _merge_pieces(self) -> list[Piece]:
        """This window's live items as pieces, for a merge."""
        return [q.live() for q in self.rows]

    def merge(self, other: State) -> None:
        """Count windows: ``other``'s items come after this one's, the last ``size`` stay. Time
        windows: both interleaved by timestamp (stable: this one's first on ties), those not
        newer than the new newest - ``seconds`` leave."""
        assert isinstance(other, WindowBase) and type(other) is type(self)
        mine = self._merge_pieces()
        theirs = [Piece(q.y, q.p, q.w, q.ts) for q in other._merge_pieces()]  # fresh offsets
        if self.seconds is None:
            pieces = mine + theirs
        else:
            pieces = interleave(mine, theirs)
            cand = [t for t in (self.newest, other.newest) if t is not None]
            self.newest = max(cand) if cand else None
        rows = Rows()
        for q in pieces:
            rows.append(self._merge_copy(q))
        self.rows = rows
        self._after_merge()

    def _merge_copy(self, piece: Piece) -> Piece:
        """Hook: the piece a merge stores (``piece`` itself, or a copy)."""
        return piece

    def _after_merge(self) -> None:
        """Hook: bring ``inner`` to the merged rows."""
        self._dirty = True
        self._expire()

    def reset(self) -> None:
        self.inner.reset()
        self.rows = Rows()
        self.newest = None
        self._dirty = False

    def equals(self, other: State) -> bool:
        return type(other) is type(self) and super().equals(other)


class WindowState(WindowBase):
    """The window's rows plus the wrapped state holding exactly them (see
    :mod:`streammetrics.wrappers.window`)."""

    def __init__(self, inner: State, size: int | None, seconds: float | None, clock: Clock) -> None:
        super().__init__(inner, size, seconds, clock)
        self._expired: list[Piece] = []  # removed from rows, still inside ``inner``
        self._scratch = inner.copy()
        self._scratch.reset()
        # Only the State protocol: a state that overrides ``subtract`` can remove expired rows,
        # and one that ``supports_row_slide`` takes them as stored (no second validation).
        self._can_subtract = type(inner).subtract is not State.subtract
        self._trusted = inner.supports_row_slide

    def key(self) -> Hashable:
        return ("window", self.size, self.seconds, type(self.inner).__name__, self.inner.key())

    # -- update --------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None, *,
                timestamp: Any = None) -> Any:
        self._check_untimed(timestamp)
        delta = self.inner.prepare(y_true, y_pred, sample_weight)
        if is_scalar(y_true) and is_scalar(y_pred) and (sample_weight is None or is_scalar(sample_weight)):
            t = None
            if self.seconds is not None:  # one sample: a scalar timestamp
                t = float(check_timestamps(timestamp, 1, self.clock, self.newest, self.seconds)[0]) \
                    if timestamp is not None else resolvable(clock_now(self.clock, self.newest), self.seconds)
            w1 = None if sample_weight is None else one_weight(sample_weight)
            return ("one", delta, one_value(y_true, "y_true"), one_value(y_pred, "y_pred"), w1, t)
        y, p, w = canonical_rows(self.inner, y_true, y_pred, sample_weight)
        n = y.shape[0]
        ts = None
        if self.seconds is not None:
            ts = check_timestamps(timestamp, n, self.clock, self.newest, self.seconds)
        return ("rows", delta, Piece(y, p, w, ts))

    def apply(self, delta: Any) -> None:
        if delta[0] == "one":
            _, inner_delta, y, p, w, t = delta
            if t is not None and self.newest is not None and t < self.newest:
                t = self.newest  # lost a race with a newer batch
            self.rows.append_one(y, p, w, t)
            if not self._dirty:
                self.inner.apply(inner_delta)
            if t is not None:
                self.newest = t
            self._expire()
            return
        _, inner_delta, piece = delta
        if len(piece) == 0:
            return
        self._stamp(piece)
        self.rows.append(piece)
        if not self._dirty:
            self.inner.apply(inner_delta)
        self._expire()

    def _expired_rows(self, gone: list[Piece]) -> None:
        if self.rows.n == 0:
            self.inner.reset()
            self._expired, self._dirty = [], False
        elif not self._can_subtract:
            self._expired, self._dirty = [], True  # rebuilt from the rows on the next read
        elif not self._dirty:
            self._expired.extend(gone)
            if len(self._expired) > 64:  # bound the backlog between reads
                self.sync()

    def sync(self) -> None:
        """Bring ``inner`` to exactly the window's rows. Called under the owner's lock."""
        if self._expired and not self._dirty:
            if self._trusted and all(q.w is None for q in self._expired):
                # e.g. binary exact ranking: the expired rows go straight to per-group scores
                # (no second validation, no scratch state)
                try:
                    gone = self._expired
                    if len(gone) == 1:
                        y, p, _ = gone[0].part(0, len(gone[0]))
                    else:
                        y = np.concatenate([q.y[q.lo:q.hi] for q in gone])
                        p = np.concatenate([q.p[q.lo:q.hi] for q in gone])
                    self.inner.slide_rows(y, p)  # type: ignore[attr-defined]
                except Exception:  # noqa: BLE001 - fall back to the exact rebuild
                    self._dirty = True
            elif self._can_subtract and all(q.integral() for q in self._expired):
                try:
                    scratch = self._scratch
                    scratch.reset()
                    for q in runs(self._expired):
                        fold(scratch, q)
                    self.inner.subtract(scratch)
                except Exception:  # noqa: BLE001 - fall back to the exact rebuild
                    self._dirty = True
            else:
                self._dirty = True
        self._expired = []
        if self._dirty:
            self.inner.reset()
            for q in self.rows.segments():
                fold(self.inner, q)
            self._dirty = False

    # -- reads -----------------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        out = rows_arrays(self.rows)
        out["newest"] = self.newest
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        timed = self.seconds is not None
        fresh = self.inner.copy()
        fresh.reset()
        rows, newest = load_rows(arrays, timed, lambda piece: fold(fresh, piece), "window")
        first_ts = float(rows.pieces[0].ts[0]) if (timed and rows.n) else None  # type: ignore[index]
        last_ts = float(rows.pieces[-1].ts[-1]) if (timed and rows.n) else None  # type: ignore[index]
        self._check_span(rows.n, first_ts, last_ts, newest)
        self.inner, self.rows, self.newest = fresh, rows, newest
        self._expired, self._dirty = [], False

    # -- merge, reset ------------------------------------------------------------------------------
    def _merge_pieces(self) -> list[Piece]:
        return list(self.rows.segments())

    def _after_merge(self) -> None:
        self._expired, self._dirty = [], True
        self._expire()
        self.sync()

    def reset(self) -> None:
        super().reset()
        self._expired = []
