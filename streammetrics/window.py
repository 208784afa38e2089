"""Sliding windows over any accumulator (SPEC section 5): classification, ranking and retrieval.

``Window(metric, size=W)`` is ``metric`` over exactly the last W samples that arrived;
``Window(metric, seconds=T)`` is ``metric`` over the samples whose timestamp is strictly greater
than (newest timestamp seen - T). Arrival order is the order of ``update`` calls and, within a
batch, the row order. Timestamps come with ``update(..., timestamp=t)`` -- one number for the
batch or one per row, non-decreasing (a decreasing one is a ``ValueError``) -- or, when omitted,
from the injected ``clock`` (default :func:`time.time`). :meth:`Window.advance` moves "now"
forward without a sample so that an idle service's window empties.

How it works
------------
The window keeps its rows (labels, predictions, weights, timestamps; copies of the validated
inputs) in a FIFO of pieces, and the wrapped metric's own state holding exactly those rows. An
update prepares the batch once (the wrapped state's own validation, so errors and atomicity are
the wrapped metric's) and folds it in; rows that fall out of the window are removed lazily on the
next read:

* states that can subtract (every :class:`~streammetrics._state.SummedState`: the confusion
  family, top-k) remove the expired rows with one ``prepare`` of those rows and an element-wise
  subtraction -- exact while weights are integers (float64 sums of integers are exact), so
  ``update`` is O(batch) and a read is O(batch of expired rows + state size);
* with non-integer weights (float subtraction would leave rounding residue where the exact value
  is 0), or for states that cannot subtract, the state is rebuilt from the window's rows on the
  first read after an expiry: O(W) per such read, exact.

* unweighted exact ranking buffers (AUROC, AP, ROC/PR curves) subtract too
  (:meth:`~streammetrics._sorted_buffer.SortedScores.subtract`): the Mann-Whitney pair counts
  change by one signed search of the new and the expired scores against the stored runs
  (O(m log W) for m rows), and the expired scores are tombstoned and purged in one pass once
  they reach max(1024, W/32), so an update + AUROC read costs amortised O(m log W) --
  O(log W) per sample, the read O(1) -- and never re-sorts the window; weighted ranking
  windows are rebuilt. Binary buffers take the expired rows as they are stored
  (:meth:`~streammetrics._sorted_buffer.SortedScores.slide_rows`: they were validated on
  arrival, so no second ``prepare`` and no scratch state), and a window of at most 65536
  samples fed small batches (at most 20 rows) switches to a per-sample *list mode*: each
  class's scores in one sorted Python list, every new or expired score one C bisect in the
  other class (two on ties) plus one insertion or deletion (a memmove of up to W/2 pointers)
  -- no numpy call per batch beyond the new batch's validation; 32 bytes per score instead of
  8 while it lasts. A larger batch switches back to runs (O(W), amortised).

* bounded ranking metrics (``AUROC(max_bytes=...)``, AP, curves) subtract the expired rows'
  bins (:meth:`~streammetrics._bins.BinnedScores.subtract`, O(bins)): the state stays under
  its budget and ``bounds()`` certifies the exact value on exactly the window's rows. Its bins
  never get finer again after coarsening (subtraction cannot undo it), so the estimate depends
  on the stream's history; loading and merging rebuild the state from the rows (a fresh state
  of the window's rows, possibly finer). Memory: the window's rows plus the budget.

Either way the value always equals the wrapped metric computed from scratch on exactly the
window's rows (scikit-learn on the same rows, for exact metrics; bounded ranking metrics keep
their own certificates).

Memory: the rows (O(W) for a count window, O(rows in the last T seconds) for a time window) plus
the wrapped state. Rows whose label is the wrapped metric's ``ignore_index`` occupy window slots
(they arrived) but contribute nothing. A batch larger than the window is stored once and
compacted as it expires.

Merge semantics (shards of one stream): ``a.merge(b)`` for time windows interleaves both
windows' rows by timestamp (stable: on equal timestamps ``a``'s rows come first) and keeps the
rows newer than max(newest_a, newest_b) - T; for count windows, there being no global order,
``b``'s rows are taken to arrive after ``a``'s and the last W of the concatenation are kept.
Merging never widens a window (unlike torcheval's windowed AUROC, whose merge doubles it).
O(rows) plus one rebuild of the state.

Retrieval metrics (``NDCG``, ``MAP``, ``MRR``, ...): the window holds *queries*.
``Window(NDCG(10), size=W)`` is the measure's mean over the last W queries that arrived
(arrival order: ``update`` calls, then queries in order of appearance);
``Window(MAP(), seconds=T)`` over the queries whose timestamp is strictly newer than (newest -
T), with one timestamp per query (``timestamp=`` a scalar for the call or one per query, in
order of appearance). ``update`` takes the retrieval arguments (``relevance, scores, *, doc_ids,
judged, n_relevant, query_ids, timestamp``). The window keeps each query's per-query values (8
bytes per query and value column, independent of the query's length), and a read writes their
count and sums into the wrapped state (:class:`QueryWindowState`). Merge semantics as above, per
query. Two windowed retrieval measures do not share a state in a MetricSet (each ranks the
batch itself).

Persistence stores the rows (segments of rows of one dtype/shape: ``seg{i}.y_true``,
``seg{i}.y_pred``, optionally ``seg{i}.weight`` and ``seg{i}.ts``) and ``newest``; loading
validates the rows through the wrapped state's own ``prepare`` and rebuilds the state, so a file
cannot make the state disagree with its rows. The clock is not persisted (a loaded window uses
:func:`time.time`).
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any

import numpy as np

from ._base import Metric
from ._labels import split_labels, with_labels
from ._load_checks import check_total
from ._sorted_buffer import SortedScores
from ._state import State
from ._timestamps import Clock, _now, check_timestamps, resolvable
from ._validation import as_numpy, is_scalar, one_value, one_weight

__all__ = ["Window"]


_STORABLE = {np.dtype(t) for t in ("<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "|i1",
                                    "<u8", "<u4", "<u2", "|u1", "|b1")}
_COALESCE = 512  # small consecutive pieces of one signature are concatenated up to this size


# -- helpers shared by the service wrappers ---------------------------------------------------
def storable(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous copy in a dtype the file format stores (other floats become float64)."""
    if arr.dtype not in _STORABLE:
        arr = arr.astype(np.float64 if arr.dtype.kind == "f" else np.int64)
    return np.array(arr, copy=True, order="C")


def canonical_rows(
    state: State, y_true: Any, y_pred: Any, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The batch as row arrays (one sample becomes a batch of one). Call after validation.

    A scalar ``y_true`` (or, for a multilabel state, a 1-D row) is one sample.
    """
    if is_scalar(y_true) and is_scalar(y_pred):  # the per-sample path
        w1 = None if sample_weight is None else np.array([one_weight(sample_weight)])
        # as the kinds a batch would make of them (a Python int beyond int64 is a float64 score)
        return (storable(as_numpy(one_value(y_true, "y_true"), "y_true").reshape(1)),
                storable(as_numpy(one_value(y_pred, "y_pred"), "y_pred").reshape(1)), w1)
    y = as_numpy(y_true, "y_true")
    p = as_numpy(y_pred, "y_pred")
    multilabel = getattr(state, "task", None) == "multilabel"
    if y.ndim == 0 or (multilabel and y.ndim == 1):
        y, p = y[None], p[None]
        if sample_weight is not None and is_scalar(sample_weight):
            sample_weight = [sample_weight]
    w = None if sample_weight is None else as_numpy(sample_weight, "sample_weight").astype(np.float64)
    if w is not None:
        w = w.reshape(-1)
    return storable(y), storable(p), (None if w is None else np.array(w, copy=True))


def check_wrappable(metric: Any, wrapper: str) -> Metric:
    """The wrapped metric must be one empty classification accumulator (not a set or wrapper)."""
    from .metricset import MetricSet

    if not isinstance(metric, Metric) or isinstance(metric, MetricSet):
        raise ValueError(
            f"{wrapper}: metric must be one accumulator (wrap each member and put the wrappers in a "
            f"MetricSet), got {type(metric).__name__}"
        )
    if isinstance(metric, _WRAPPERS):
        raise ValueError(f"{wrapper}: cannot wrap a {type(metric).__name__}")
    if metric.family not in ("classification", "retrieval"):
        raise ValueError(f"{wrapper}: supports classification and retrieval metrics, got family "
                         f"{metric.family!r}")
    twin = type(metric)._from_config(metric._config())
    with metric._lock:
        if not metric._state.equals(twin._state):
            raise ValueError(f"{wrapper}: wrap an empty metric (this one already holds samples)")
    return twin


def nested_config(metric: Metric) -> dict[str, Any]:
    return {"class": type(metric).__name__, "config": metric._config()}


def metric_from_nested(spec: Any, wrapper: str) -> Metric:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("config"), Mapping):
        raise ValueError(f"state: bad metric entry in a {wrapper} config")
    name = spec.get("class")
    target = Metric._registry.get(name) if isinstance(name, str) else None
    if target is None:
        raise ValueError(f"state: unknown metric class {spec.get('class')!r}")
    return target._from_config(spec["config"])


def optional_float(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"state: {name!r} must be a number or None, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"state: {name!r} must be finite, got {v!r}")
    return v


# -- the row FIFO -------------------------------------------------------------------------------
class _Piece:
    """Rows of one batch (or of several small batches of one signature). Rows [lo, hi) of the
    arrays are live: rows before ``lo`` have expired, and a small tail piece grows in place past
    ``hi`` (written only beyond ``hi``, so views of live rows never change)."""

    __slots__ = ("y", "p", "w", "ts", "lo", "hi", "_sig")

    def __init__(self, y: np.ndarray, p: np.ndarray, w: np.ndarray | None, ts: np.ndarray | None) -> None:
        self.y, self.p, self.w, self.ts, self.lo, self.hi = y, p, w, ts, 0, y.shape[0]
        self._sig: Hashable = None

    def __len__(self) -> int:
        return self.hi - self.lo

    def signature(self) -> Hashable:
        if self._sig is None:
            self._sig = (self.y.dtype.str, self.y.shape[1:], self.p.dtype.str, self.p.shape[1:],
                         self.w is None, self.ts is None)
        return self._sig

    def part(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Rows [a, b) of the live rows."""
        s = slice(self.lo + a, self.lo + b)
        return self.y[s], self.p[s], (None if self.w is None else self.w[s])

    def live(self) -> _Piece:
        if self.lo == 0 and self.hi == self.y.shape[0]:
            return self
        s = slice(self.lo, self.hi)
        return _Piece(self.y[s], self.p[s], None if self.w is None else self.w[s],
                      None if self.ts is None else self.ts[s])

    def integral(self) -> bool:
        w = self.w if self.w is None else self.w[self.lo:self.hi]
        return w is None or bool(np.all(w == np.floor(w)))

    def extend(self, other: _Piece) -> None:
        """Append ``other``'s live rows (same signature) in place; amortised O(len(other))."""
        n = len(other)
        fields = ("y", "p", "w", "ts")
        if self.hi + n > self.y.shape[0]:
            cap = max(16, 2 * (len(self) + n))
            for f in fields:
                a = getattr(self, f)
                if a is not None:
                    grown = np.empty((cap, *a.shape[1:]), dtype=a.dtype)
                    grown[: len(self)] = a[self.lo:self.hi]
                    setattr(self, f, grown)
            self.hi -= self.lo
            self.lo = 0
        src = other.lo
        for f in fields:
            a = getattr(self, f)
            if a is not None:
                a[self.hi:self.hi + n] = getattr(other, f)[src:src + n]
        self.hi += n


def _concat(pieces: list[_Piece]) -> _Piece:
    live = [q.live() for q in pieces]
    if len(live) == 1:
        return live[0]
    return _Piece(
        np.concatenate([q.y for q in live]),
        np.concatenate([q.p for q in live]),
        None if live[0].w is None else np.concatenate([q.w for q in live]),  # type: ignore[misc]
        None if live[0].ts is None else np.concatenate([q.ts for q in live]),  # type: ignore[misc]
    )


def _runs(pieces: list[_Piece]) -> list[_Piece]:
    """Consecutive pieces of one signature concatenated (fewer, larger prepares)."""
    out: list[_Piece] = []
    run: list[_Piece] = []
    for q in pieces:
        if run and run[0].signature() != q.signature():
            out.append(_concat(run))
            run = []
        run.append(q)
    if run:
        out.append(_concat(run))
    return out


class _Rows:
    """FIFO of pieces with amortised O(1) append and expiry per row. Single samples given as
    scalars collect in a plain-Python ``tail`` (no numpy per sample) that becomes a piece when it
    is read, reaches ``_COALESCE`` rows, or a different kind of row arrives."""

    def __init__(self) -> None:
        self.pieces: deque[_Piece] = deque()
        self.n = 0
        self.tail: list[tuple[Any, Any, Any, Any]] = []
        self.tail_sig: Hashable = None

    def append_one(self, y: Any, p: Any, w: float | None, ts: float | None) -> None:
        sig = (type(y), type(p), w is None, ts is None)
        if self.tail and sig != self.tail_sig:
            self.flush_tail()
        self.tail_sig = sig
        self.tail.append((y, p, w, ts))
        self.n += 1
        if len(self.tail) >= _COALESCE:
            self.flush_tail()

    def flush_tail(self) -> None:
        if not self.tail:
            return
        tail, self.tail = self.tail, []
        ys, ps, ws, tss = zip(*tail, strict=True)
        piece = _Piece(storable(np.array(ys)), storable(np.array(ps)),
                       None if ws[0] is None else np.array(ws, dtype=np.float64),
                       None if tss[0] is None else np.array(tss, dtype=np.float64))
        self.n -= len(tail)
        self.append(piece)

    def append(self, piece: _Piece) -> None:
        n = len(piece)
        if n == 0:
            return
        self.flush_tail()
        if self.pieces:
            last = self.pieces[-1]
            if len(last) + n <= _COALESCE and last.signature() == piece.signature():
                last.extend(piece)
                self.n += n
                return
        self.pieces.append(piece)
        self.n += n

    def count_not_after(self, cutoff: float) -> int:
        """Number of leading rows whose timestamp is <= cutoff."""
        k = 0
        for q in self.pieces:
            ts = q.ts[q.lo:q.hi]  # type: ignore[index]
            if ts[-1] <= cutoff:
                k += len(q)
                continue
            return k + int(np.searchsorted(ts, cutoff, side="right"))
        for row in self.tail:
            if row[3] > cutoff:
                break
            k += 1
        return k

    def drop_front(self, k: int) -> list[_Piece]:
        """Remove the first k rows; returns them as pieces."""
        if k > self.n - len(self.tail):
            self.flush_tail()
        out: list[_Piece] = []
        while k > 0 and self.pieces:
            q = self.pieces[0]
            m = len(q)
            if m <= k:
                out.append(q.live())
                self.pieces.popleft()
                k -= m
                self.n -= m
                continue
            y, p, w = q.part(0, k)
            ts = None if q.ts is None else q.ts[q.lo:q.lo + k]
            out.append(_Piece(y, p, w, ts))
            q.lo += k
            self.n -= k
            if q.lo > q.y.shape[0] // 2 and q.lo > _COALESCE:  # compact: free the expired half
                self.pieces[0] = _Piece(*(None if a is None else a[q.lo:q.hi].copy()
                                          for a in (q.y, q.p, q.w, q.ts)))  # type: ignore[arg-type]
            k = 0
        return out

    def segments(self) -> list[_Piece]:
        """The live rows as maximal runs of one signature (concatenated)."""
        self.flush_tail()
        return _runs(list(self.pieces))

    def __iter__(self) -> Iterator[_Piece]:
        self.flush_tail()
        return iter(self.pieces)

    def nbytes(self) -> int:
        self.flush_tail()
        return sum(sum(a.nbytes for a in (q.y, q.p, q.w, q.ts) if a is not None) for q in self.pieces)


def _rows_to_expire(rows: _Rows, size: int | None, seconds: float | None, newest: float | None) -> int:
    """How many leading rows leave the window: beyond the last ``size`` (count windows), or
    with a timestamp <= newest - ``seconds`` (time windows). O(pieces + log rows)."""
    if size is not None:
        return rows.n - size
    if newest is not None and rows.n:
        assert seconds is not None
        return rows.count_not_after(newest - seconds)
    return 0


def _fold(state: State, piece: _Piece) -> None:
    """Fold a piece's rows into ``state`` (rows were validated when they arrived)."""
    if len(piece):
        y, p, w = piece.part(0, len(piece))
        state.apply(state.prepare(y, p, w))


_SEG = re.compile(r"^seg(\d+)\.(y_true|y_pred|weight|ts)$")


def rows_arrays(rows: _Rows) -> dict[str, Any]:
    """Persistable form of a row FIFO: maximal runs of one signature as ``seg{i}.*`` arrays."""
    out: dict[str, Any] = {}
    for i, seg in enumerate(rows.segments()):
        out[f"seg{i}.y_true"] = seg.y.copy()
        out[f"seg{i}.y_pred"] = seg.p.copy()
        if seg.w is not None:
            out[f"seg{i}.weight"] = seg.w.copy()
        if seg.ts is not None:
            out[f"seg{i}.ts"] = seg.ts.copy()
    return out


def load_rows(
    arrays: Mapping[str, Any], timed: bool, fold: Callable[[_Piece], None], what: str,
    scalars: tuple[str, ...] = ("newest",),
) -> tuple[_Rows, float | None]:
    """Validate ``seg{i}.*`` arrays (untrusted) into a row FIFO, folding every piece through
    ``fold`` (which validates the rows with the wrapped state's ``prepare``). Returns the rows
    and the ``newest`` scalar."""
    segs: dict[int, dict[str, np.ndarray]] = {}
    for key, value in arrays.items():
        if key in scalars:
            continue
        m = _SEG.match(key)
        if m is None:
            raise ValueError(f"state: unexpected array {key!r} in a {what}")
        if not isinstance(value, np.ndarray):
            raise ValueError(f"state: {what} entry {key!r} must be an array")
        segs.setdefault(int(m.group(1)), {})[m.group(2)] = value
    if sorted(segs) != list(range(len(segs))):
        raise ValueError(f"state: {what} segments must be numbered 0..k-1")
    for name in scalars:
        if name not in arrays:
            raise ValueError(f"state: missing entry {name!r}")
    newest = optional_float(arrays["newest"], "newest")
    rows = _Rows()
    last_ts = -math.inf
    for i in range(len(segs)):
        seg = segs[i]
        if "y_true" not in seg or "y_pred" not in seg:
            raise ValueError(f"state: {what} segment {i} needs y_true and y_pred")
        y, p = seg["y_true"], seg["y_pred"]
        n = y.shape[0] if y.ndim else -1
        if n < 1 or p.ndim == 0 or p.shape[0] != n:
            raise ValueError(f"state: {what} segment {i} has inconsistent row counts")
        w = seg.get("weight")
        if w is not None and (w.shape != (n,) or w.dtype.kind != "f"):
            raise ValueError(f"state: {what} segment {i} weight must be float of shape ({n},)")
        if w is not None:
            check_total(w, f"seg{i}.weight")
        ts = seg.get("ts")
        if timed != (ts is not None):
            raise ValueError(f"state: {what} segment {i} {'lacks' if timed else 'has'} timestamps")
        if ts is not None:
            if ts.shape != (n,) or ts.dtype.kind != "f" or not np.isfinite(ts).all():
                raise ValueError(f"state: {what} segment {i} has invalid timestamps")
            ts = ts.astype(np.float64)
            if ts[0] < last_ts or (n > 1 and bool((np.diff(ts) < 0).any())):
                raise ValueError(f"state: {what} timestamps must be non-decreasing")
            last_ts = float(ts[-1])
        piece = _Piece(storable(y), storable(p), None if w is None else w.astype(np.float64), ts)
        try:
            fold(piece)
        except ValueError as exc:
            raise ValueError(f"state: {what} segment {i} holds invalid rows ({exc})") from exc
        rows.append(piece)
    if timed and newest is not None and rows.n and newest < last_ts:
        raise ValueError(f"state: {what} 'newest' is older than its rows")
    return rows, newest


class WindowState(State):
    """The window's rows plus the wrapped state holding exactly them (see the module docstring)."""

    def __init__(self, inner: State, size: int | None, seconds: float | None, clock: Clock) -> None:
        self.inner = inner
        self.size, self.seconds, self.clock = size, seconds, clock
        self.rows = _Rows()
        self.newest: float | None = None
        self._expired: list[_Piece] = []  # removed from rows, still inside ``inner``
        self._dirty = False  # ``inner`` must be rebuilt from the rows
        self._scratch = inner.copy()
        self._scratch.reset()
        # Only the State protocol: a state that overrides ``subtract`` can remove expired rows.
        self._can_subtract = type(inner).subtract is not State.subtract
        self._trusted = isinstance(inner, SortedScores) and inner.task == "binary"

    def key(self) -> Hashable:
        return ("window", self.size, self.seconds, type(self.inner).__name__, self.inner.key())

    # -- update --------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None, *,
                timestamp: Any = None) -> Any:
        if self.seconds is None and timestamp is not None:
            raise ValueError("timestamp: only time windows (seconds=...) take timestamps")
        delta = self.inner.prepare(y_true, y_pred, sample_weight)
        if is_scalar(y_true) and is_scalar(y_pred) and (sample_weight is None or is_scalar(sample_weight)):
            t = None
            if self.seconds is not None:  # one sample: a scalar timestamp
                t = float(check_timestamps(timestamp, 1, self.clock, self.newest, self.seconds)[0]) \
                    if timestamp is not None else resolvable(_now(self.clock, self.newest), self.seconds)
            w1 = None if sample_weight is None else one_weight(sample_weight)
            return ("one", delta, one_value(y_true, "y_true"), one_value(y_pred, "y_pred"), w1, t)
        y, p, w = canonical_rows(self.inner, y_true, y_pred, sample_weight)
        n = y.shape[0]
        ts = None
        if self.seconds is not None:
            ts = check_timestamps(timestamp, n, self.clock, self.newest, self.seconds)
        return ("rows", delta, _Piece(y, p, w, ts))

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
        if piece.ts is not None and self.newest is not None and piece.ts[0] < self.newest:
            piece.ts = np.maximum(piece.ts, self.newest)  # lost a race with a newer batch
        self.rows.append(piece)
        if not self._dirty:
            self.inner.apply(inner_delta)
        if piece.ts is not None:
            t = float(piece.ts[-1])
            self.newest = t if self.newest is None else max(self.newest, t)
        self._expire()

    def _expire(self) -> None:
        k = _rows_to_expire(self.rows, self.size, self.seconds, self.newest)
        if k <= 0:
            return
        gone = self.rows.drop_front(k)
        if self.rows.n == 0:
            self.inner.reset()
            self._expired, self._dirty = [], False
        elif not self._can_subtract:
            self._expired, self._dirty = [], True  # rebuilt from the rows on the next read
        elif not self._dirty:
            self._expired.extend(gone)
            if len(self._expired) > 64:  # bound the backlog between reads
                self.sync()

    def advance(self, timestamp: float) -> None:
        """Declare that time has reached ``timestamp`` (time windows): expire older rows."""
        if self.newest is None or timestamp > self.newest:
            self.newest = float(timestamp)
        self._expire()

    def sync(self) -> None:
        """Bring ``inner`` to exactly the window's rows. Called under the owner's lock."""
        if self._expired and not self._dirty:
            if self._trusted and all(q.w is None for q in self._expired):
                # binary exact ranking: the expired rows go straight to per-group scores (no
                # second validation, no scratch state)
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
                    for q in _runs(self._expired):
                        _fold(scratch, q)
                    self.inner.subtract(scratch)
                except Exception:  # noqa: BLE001 - fall back to the exact rebuild
                    self._dirty = True
            else:
                self._dirty = True
        self._expired = []
        if self._dirty:
            self.inner.reset()
            for q in self.rows.segments():
                _fold(self.inner, q)
            self._dirty = False

    # -- reads -----------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return self.rows.n

    def arrays(self) -> dict[str, Any]:
        out = rows_arrays(self.rows)
        out["newest"] = self.newest
        return out

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes() + self.inner.nbytes

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        timed = self.seconds is not None
        fresh = self.inner.copy()
        fresh.reset()
        rows, newest = load_rows(arrays, timed, lambda piece: _fold(fresh, piece), "window")
        last_ts = float(rows.pieces[-1].ts[-1]) if (timed and rows.n) else None  # type: ignore[index]
        if not timed and newest is not None:
            raise ValueError("state: a count window has no 'newest' timestamp")
        if timed:
            if newest is None and rows.n:
                raise ValueError("state: a time window holding rows needs 'newest'")
            first_ts = float(rows.pieces[0].ts[0]) if rows.n else None  # type: ignore[index]
            if newest is not None and first_ts is not None and (
                newest < last_ts or first_ts <= newest - self.seconds  # type: ignore[operator]
            ):
                raise ValueError("state: window rows lie outside the window")
        elif rows.n > self.size:  # type: ignore[operator]
            raise ValueError(f"state: a window of size {self.size} holds {rows.n} rows")
        self.inner, self.rows, self.newest = fresh, rows, newest
        self._expired, self._dirty = [], False

    # -- merge, reset ------------------------------------------------------------------------------
    def merge(self, other: State) -> None:
        assert isinstance(other, WindowState)
        mine, theirs = list(self.rows.segments()), list(other.rows.segments())
        if self.seconds is None:
            pieces = mine + [_Piece(q.y, q.p, q.w, q.ts) for q in theirs]
        else:
            pieces = _interleave(mine, theirs)
            cand = [t for t in (self.newest, other.newest) if t is not None]
            self.newest = max(cand) if cand else None
        rows = _Rows()
        for q in pieces:
            rows.append(q)
        self.rows = rows
        self._expired, self._dirty = [], True
        self._expire()
        self.sync()

    def reset(self) -> None:
        self.inner.reset()
        self.rows = _Rows()
        self.newest = None
        self._expired, self._dirty = [], False

    def equals(self, other: State) -> bool:
        return isinstance(other, WindowState) and super().equals(other)


def _interleave(a: list[_Piece], b: list[_Piece]) -> list[_Piece]:
    """Stable merge of two timestamp-sorted piece lists (``a`` first on ties)."""
    if not a or not b:
        return a + b
    src = a + b
    ts = np.concatenate([q.ts for q in src])  # type: ignore[misc]
    pid = np.concatenate([np.full(len(q), i) for i, q in enumerate(src)])
    row = np.concatenate([np.arange(len(q)) for q in src])
    order = np.argsort(ts, kind="stable")
    pid, row = pid[order], row[order]
    cut = np.flatnonzero(np.diff(pid)) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [pid.shape[0]]])
    out: list[_Piece] = []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        q = src[int(pid[s])]
        lo, hi = int(row[s]), int(row[e - 1]) + 1
        out.append(_Piece(q.y[lo:hi], q.p[lo:hi], None if q.w is None else q.w[lo:hi],
                          None if q.ts is None else q.ts[lo:hi]))
    return out


# -- retrieval: windows of queries ---------------------------------------------------------------
def query_values(specs: list[Any], relevance: Any, scores: Any, *, doc_ids: Any = None,
                 judged: Any = None, n_relevant: Any = None,
                 query_ids: Any = None) -> np.ndarray:
    """Every query's values of every spec, (queries, total width): the batch validated and
    ranked once (:func:`~streammetrics._ranking_queries.prepare_queries`)."""
    from . import _ranking_queries as K

    rq = K.prepare_queries(relevance, scores, doc_ids=doc_ids, judged=judged, n_relevant=n_relevant,
                           query_ids=query_ids)
    cols = [np.asarray(spec.evaluate(rq), dtype=np.float64).reshape(rq.n_queries, spec.width)
            for spec in specs]
    return np.ascontiguousarray(np.hstack(cols)) if cols else np.zeros((rq.n_queries, 0))


def spec_layout(specs: list[Any]) -> list[tuple[Any, int, int]]:
    """(spec, first column, end column) of every spec in a values matrix."""
    out, at = [], 0
    for spec in specs:
        out.append((spec, at, at + spec.width))
        at += spec.width
    return out


def check_values(values: Any, width: int, what: str) -> np.ndarray:
    """Untrusted per-query values: a finite float matrix with ``width`` columns."""
    if not isinstance(values, np.ndarray) or values.ndim != 2 or values.shape[1] != width \
            or values.dtype.kind != "f":
        raise ValueError(f"state: {what} 'values' must be a float array of shape (n, {width})")
    values = values.astype(np.float64)
    if values.size and not np.isfinite(values).all():
        raise ValueError(f"state: {what} 'values' holds non-finite numbers")
    return values


class QueryWindowState(State):
    """A window over queries for the retrieval family: the last ``size`` queries, or those whose
    timestamp is strictly newer than newest - ``seconds`` (one timestamp per query).

    Keeps every window query's per-query values of the wrapped measure(s) -- ``(queries, width)``
    float64, 8 bytes per query and value column, whatever the queries' lengths -- and, before a
    read, writes their count and sums (and the values, for ``per_query=True``) into the wrapped
    :class:`~streammetrics.retrieval.QueryState` through its ``load_arrays``; the mean over the
    window's queries is then the wrapped metric's own ``compute``. The sums are re-added from
    the rows on the first read after a change: O(W · width) vectorised, no drift.
    """

    def __init__(self, inner: State, size: int | None, seconds: float | None, clock: Clock) -> None:
        self.inner = inner
        self.size, self.seconds, self.clock = size, seconds, clock
        self.specs = list(inner.specs)  # type: ignore[attr-defined]
        self.width = sum(spec.width for spec in self.specs)
        self.rows = _Rows()  # y = values (q, width), p = empty (q, 0), ts = one per query
        self.newest: float | None = None
        self._dirty = False

    def key(self) -> Hashable:
        return ("window-queries", self.size, self.seconds, tuple(spec.name for spec in self.specs))

    def prepare(self, relevance: Any, scores: Any, *, doc_ids: Any = None, judged: Any = None,
                n_relevant: Any = None, query_ids: Any = None, timestamp: Any = None) -> Any:
        if self.seconds is None and timestamp is not None:
            raise ValueError("timestamp: only time windows (seconds=...) take timestamps")
        vals = query_values(self.specs, relevance, scores, doc_ids=doc_ids, judged=judged,
                            n_relevant=n_relevant, query_ids=query_ids)
        n = vals.shape[0]
        sec = self.seconds
        ts = None if sec is None else check_timestamps(timestamp, n, self.clock, self.newest, sec)
        return _Piece(vals, np.zeros((n, 0)), None, ts)

    def apply(self, delta: Any) -> None:
        piece: _Piece = delta
        if len(piece) == 0:
            return
        if piece.ts is not None:
            if self.newest is not None and piece.ts[0] < self.newest:
                piece.ts = np.maximum(piece.ts, self.newest)  # lost a race with a newer batch
            t = float(piece.ts[-1])
            self.newest = t if self.newest is None else max(self.newest, t)
        self.rows.append(piece)
        self._dirty = True
        self._expire()

    def _expire(self) -> None:
        k = _rows_to_expire(self.rows, self.size, self.seconds, self.newest)
        if k > 0:
            self.rows.drop_front(k)
            self._dirty = True

    def advance(self, timestamp: float) -> None:
        if self.newest is None or timestamp > self.newest:
            self.newest = float(timestamp)
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
        arrays: dict[str, Any] = {}
        sums = vals.sum(axis=0)
        for spec, a, b in spec_layout(self.specs):
            arrays[f"{spec.name}.count"] = np.array([vals.shape[0]], dtype=np.int64)
            arrays[f"{spec.name}.sums"] = sums[a:b].copy()
            if spec.per_query:
                arrays[f"{spec.name}.values"] = vals[:, a:b].copy()
        self.inner.load_arrays(arrays)
        self._dirty = False

    @property
    def n_rows(self) -> int:
        return self.rows.n

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
        vals = check_values(arrays["values"], self.width, "query window")
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
            if n and (newest is None or newest < ts[-1] or ts[0] <= newest - self.seconds):  # type: ignore[operator]
                raise ValueError("state: window rows lie outside the window")
        else:
            if newest is not None:
                raise ValueError("state: a count window has no 'newest' timestamp")
            if n > self.size:  # type: ignore[operator]
                raise ValueError(f"state: a window of size {self.size} holds {n} queries")
        rows = _Rows()
        if n:
            rows.append(_Piece(vals, np.zeros((n, 0)), None, ts))
        self.rows, self.newest, self._dirty = rows, newest, True
        self.sync()

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes() + self.inner.nbytes

    def merge(self, other: State) -> None:
        """Count windows: ``other``'s queries come after this one's, the last ``size`` stay.
        Time windows: both interleaved by timestamp (stable), older than the new newest - T
        leave."""
        assert isinstance(other, QueryWindowState)
        mine, theirs = list(self.rows), list(other.rows)
        if self.seconds is None:
            pieces = [q.live() for q in mine + theirs]
        else:
            pieces = _interleave([q.live() for q in mine], [q.live() for q in theirs])
            cand = [t for t in (self.newest, other.newest) if t is not None]
            self.newest = max(cand) if cand else None
        rows = _Rows()
        for q in pieces:
            rows.append(_Piece(q.y.copy(), q.p, None, None if q.ts is None else q.ts.copy()))
        self.rows = rows
        self._dirty = True
        self._expire()

    def reset(self) -> None:
        self.inner.reset()
        self.rows = _Rows()
        self.newest = None
        self._dirty = False

    def equals(self, other: State) -> bool:
        return isinstance(other, QueryWindowState) and super().equals(other)


class _WrappedMetric(Metric):
    """What every sample-reweighting wrapper (``Window``, ``Decayed``) shares: it holds a twin of
    the wrapped metric whose state is kept in sync with the wrapper's state before each read, and
    passes ``interval``/``bounds`` through to it."""

    _metric: Metric
    _forward_merges = False  # forward(): samples carry order / time: update, not merge
    _state: Any  # a wrapper state with ``inner``, ``clock`` and ``sync()``

    @property
    def metric(self) -> Metric:
        """The wrapped accumulator (its state is the wrapper's inner state)."""
        return self._metric

    def update(self, y_true: Any, y_pred: Any, *, sample_weight: Any = None,  # type: ignore[override]
               timestamp: Any = None, **query_kwargs: Any) -> Any:
        """Fold in a batch (or one sample), with per-row or per-batch ``timestamp``. Atomic.

        Retrieval metrics take their own update arguments -- ``update(relevance, scores, *,
        doc_ids=None, judged=None, n_relevant=None, query_ids=None, timestamp=None)`` -- with
        one timestamp per query (or one for the call)."""
        if self.family == "retrieval":
            if sample_weight is not None:
                raise TypeError("update() of a retrieval metric takes no sample_weight")
            return self._update_state(y_true, y_pred, timestamp=timestamp, **query_kwargs)
        if query_kwargs:
            raise TypeError(f"update() got unexpected keyword arguments {sorted(query_kwargs)}")
        return self._update_state(y_true, y_pred, sample_weight, timestamp=timestamp)

    def _synced(self) -> Metric:
        self._state.sync()
        self._metric._state = self._state.inner
        return self._metric

    def _compute(self) -> Any:
        return self._synced()._compute()

    def _passthrough(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self._metric, name):
            raise AttributeError(f"{type(self._metric).__name__} has no {name}()")
        with self._lock:
            return getattr(self._synced(), name)(*args, **kwargs)

    def interval(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped metric's statistical ``interval`` on the wrapper's (weighted) samples."""
        return self._passthrough("interval", *args, **kwargs)

    def bounds(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped metric's certified ``bounds`` on the wrapper's (weighted) samples."""
        return self._passthrough("bounds", *args, **kwargs)

    def copy(self) -> Any:
        out = super().copy()
        out._state.clock = self._state.clock  # an injected clock is configuration, not state
        return out


class Window(_WrappedMetric):
    """``metric`` over a sliding window of the stream: the last ``size`` samples, or the samples
    of the last ``seconds`` (strictly newer than newest - seconds).

    Parameters
    ----------
    metric
        An empty accumulator (``F1()``, ``ConfusionMatrix(num_classes=3)``, ``AUROC()``,
        ``AUROC(max_bytes=...)``, ``NDCG(10)``, ...). The window holds its own twin of it.
    size, seconds
        Exactly one: a count window of ``size`` >= 1 samples (retrieval: queries), or a time
        window of ``seconds`` > 0.
    clock
        Time source for updates without ``timestamp`` (time windows); default :func:`time.time`.

    ``update(y_true, y_pred, *, sample_weight=None, timestamp=None)`` folds in a batch (or one
    sample); ``compute()`` is the wrapped metric's value on exactly the window's samples.
    ``interval()`` and ``bounds()`` pass through when the wrapped metric has them.

    Complexity: ``update`` O(batch); a read O(expired rows + state) for subtractable states with
    integer weights (unweighted exact AUROC: amortised O(log W) per new or expired row, the
    value O(1); small windows fed small batches: a bisect and a list insertion / deletion per
    row), O(W) after an expiry otherwise (see the module docstring). Memory: the rows
    plus the wrapped state.

    Example
    -------
    >>> from streammetrics import F1, Window
    >>> w = Window(F1(), size=3)
    >>> _ = w.update([1, 0, 1, 1], [1, 1, 0, 1])  # the window holds the last 3 rows
    >>> round(w.compute(), 6)  # F1 of y=[0, 1, 1], pred=[1, 0, 1]
    0.5
    """

    def __init__(self, metric: Metric, *, size: int | None = None, seconds: float | None = None,
                 clock: Clock | None = None) -> None:
        super().__init__()
        if (size is None) == (seconds is None):
            raise ValueError("Window: give exactly one of size= (samples) or seconds= (time)")
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))
                                 or size < 1):
            raise ValueError(f"size: must be an int >= 1, got {size!r}")
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer, np.floating)):
                raise ValueError(f"seconds: must be a number > 0, got {seconds!r}")
            if not (math.isfinite(float(seconds)) and float(seconds) > 0):
                raise ValueError(f"seconds: must be finite and > 0, got {seconds!r}")
        if clock is not None and not callable(clock):
            raise ValueError(f"clock: must be callable, got {clock!r}")
        self._metric = check_wrappable(metric, "Window")
        self.family = self._metric.family
        self.size = None if size is None else int(size)
        self.seconds = None if seconds is None else float(seconds)
        state_type = QueryWindowState if self.family == "retrieval" else WindowState
        inner, codec = split_labels(self._metric._state)  # rows are stored as class codes
        self._state: WindowState | QueryWindowState = with_labels(state_type(
            inner, self.size, self.seconds, clock or time.time
        ), codec)

    def _config(self) -> dict[str, Any]:
        return {"metric": nested_config(self._metric), "size": self.size, "seconds": self.seconds}

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> Window:
        extra = set(config) - {"metric", "size", "seconds"}
        if extra:
            raise ValueError(f"state: bad configuration for Window: unexpected {sorted(extra)}")
        return cls(metric_from_nested(config.get("metric"), "Window"),
                   size=config.get("size"), seconds=config.get("seconds"))

    def advance(self, timestamp: float | None = None) -> Window:
        """Time windows: move "now" to ``timestamp`` (default: the clock) without a sample, so
        rows older than ``timestamp - seconds`` leave. Earlier than the newest seen: no-op."""
        if self.seconds is None:
            raise ValueError("advance: only time windows (seconds=...) have a clock")
        t = check_timestamps(self._state.clock() if timestamp is None else timestamp, 1,
                             self._state.clock, None)[0]
        with self._lock:
            self._state.advance(float(t))
        return self

    def __len__(self) -> int:
        """Number of samples in the window."""
        with self._lock:
            return self._state.n_rows

    def __repr__(self) -> str:
        span = f"size={self.size}" if self.size is not None else f"seconds={self.seconds}"
        return f"Window({self._metric!r}, {span})"



_WRAPPERS: tuple[type, ...] = (Window,)


def register_wrapper(cls: type) -> None:
    """Wrappers cannot be wrapped again (``Window(Decayed(...))`` is refused)."""
    global _WRAPPERS
    _WRAPPERS = (*_WRAPPERS, cls)
