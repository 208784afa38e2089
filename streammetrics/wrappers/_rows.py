"""The row queue of the sliding-window and decay wrappers, and its persisted form.

A wrapper that must remember its rows (a ``Window``; a ``Decayed`` over a state that cannot
rescale) keeps them -- copies of the validated labels, predictions, weights and one timestamp
(or age coordinate) per row -- in a FIFO of :class:`Piece` objects, :class:`Rows`. Appending a
batch and expiring rows from the front are amortised O(1) per row; single samples given as
Python scalars collect in a plain-Python tail (no numpy call per sample). :func:`rows_arrays`
writes the rows as ``seg{i}.y_true``, ``seg{i}.y_pred`` and optionally ``seg{i}.weight`` and
``seg{i}.ts`` (maximal runs of one dtype/shape), and :func:`load_rows` reads them back from an
untrusted file, validating every segment with the wrapped state's own ``prepare``.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_total
from streammetrics._core.state import State
from streammetrics._core.validation import as_numpy, is_scalar, one_value, one_weight

_STORABLE = {np.dtype(t) for t in ("<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "|i1",
                                    "<u8", "<u4", "<u2", "|u1", "|b1")}
_COALESCE = 512  # small consecutive pieces of one signature are concatenated up to this size


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


def optional_float(value: Any, name: str) -> float | None:
    """A loaded scalar entry (``newest``, ``mass``): ``None`` or a finite real number (untrusted
    input: ``ValueError`` naming the entry otherwise)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"state: {name!r} must be a number or None, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"state: {name!r} must be finite, got {v!r}")
    return v



# -- the row FIFO -------------------------------------------------------------------------------
class Piece:
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

    def live(self) -> Piece:
        if self.lo == 0 and self.hi == self.y.shape[0]:
            return self
        s = slice(self.lo, self.hi)
        return Piece(self.y[s], self.p[s], None if self.w is None else self.w[s],
                      None if self.ts is None else self.ts[s])

    def integral(self) -> bool:
        w = self.w if self.w is None else self.w[self.lo:self.hi]
        return w is None or bool(np.all(w == np.floor(w)))

    def extend(self, other: Piece) -> None:
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


def concat(pieces: list[Piece]) -> Piece:
    live = [q.live() for q in pieces]
    if len(live) == 1:
        return live[0]
    return Piece(
        np.concatenate([q.y for q in live]),
        np.concatenate([q.p for q in live]),
        None if live[0].w is None else np.concatenate([q.w for q in live]),  # type: ignore[misc]
        None if live[0].ts is None else np.concatenate([q.ts for q in live]),  # type: ignore[misc]
    )


def runs(pieces: list[Piece]) -> list[Piece]:
    """Consecutive pieces of one signature concatenated (fewer, larger prepares)."""
    out: list[Piece] = []
    run: list[Piece] = []
    for q in pieces:
        if run and run[0].signature() != q.signature():
            out.append(concat(run))
            run = []
        run.append(q)
    if run:
        out.append(concat(run))
    return out


class Rows:
    """FIFO of pieces with amortised O(1) append and expiry per row. Single samples given as
    scalars collect in a plain-Python ``tail`` (no numpy per sample) that becomes a piece when it
    is read, reaches ``_COALESCE`` rows, or a different kind of row arrives."""

    def __init__(self) -> None:
        self.pieces: deque[Piece] = deque()
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
        piece = Piece(storable(np.array(ys)), storable(np.array(ps)),
                       None if ws[0] is None else np.array(ws, dtype=np.float64),
                       None if tss[0] is None else np.array(tss, dtype=np.float64))
        self.n -= len(tail)
        self.append(piece)

    def append(self, piece: Piece) -> None:
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

    def drop_front(self, k: int) -> list[Piece]:
        """Remove the first k rows; returns them as pieces."""
        if k > self.n - len(self.tail):
            self.flush_tail()
        out: list[Piece] = []
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
            out.append(Piece(y, p, w, ts))
            q.lo += k
            self.n -= k
            if q.lo > q.y.shape[0] // 2 and q.lo > _COALESCE:  # compact: free the expired half
                self.pieces[0] = Piece(*(None if a is None else a[q.lo:q.hi].copy()
                                          for a in (q.y, q.p, q.w, q.ts)))  # type: ignore[arg-type]
            k = 0
        return out

    def segments(self) -> list[Piece]:
        """The live rows as maximal runs of one signature (concatenated)."""
        self.flush_tail()
        return runs(list(self.pieces))

    def __iter__(self) -> Iterator[Piece]:
        self.flush_tail()
        return iter(self.pieces)

    def nbytes(self) -> int:
        self.flush_tail()
        return sum(sum(a.nbytes for a in (q.y, q.p, q.w, q.ts) if a is not None) for q in self.pieces)


def rows_to_expire(rows: Rows, size: int | None, seconds: float | None, newest: float | None) -> int:
    """How many leading rows leave the window: beyond the last ``size`` (count windows), or
    with a timestamp <= newest - ``seconds`` (time windows). O(pieces + log rows)."""
    if size is not None:
        return rows.n - size
    if newest is not None and rows.n:
        assert seconds is not None
        return rows.count_not_after(newest - seconds)
    return 0


def fold(state: State, piece: Piece) -> None:
    """Fold a piece's rows into ``state`` (rows were validated when they arrived)."""
    if len(piece):
        y, p, w = piece.part(0, len(piece))
        state.apply(state.prepare(y, p, w))


_SEG = re.compile(r"^seg(\d+)\.(y_true|y_pred|weight|ts)$")


def rows_arrays(rows: Rows) -> dict[str, Any]:
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
    arrays: Mapping[str, Any], timed: bool, fold: Callable[[Piece], None], what: str,
    scalars: tuple[str, ...] = ("newest",),
) -> tuple[Rows, float | None]:
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
    rows = Rows()
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
        piece = Piece(storable(y), storable(p), None if w is None else w.astype(np.float64), ts)
        try:
            fold(piece)
        except ValueError as exc:
            raise ValueError(f"state: {what} segment {i} holds invalid rows ({exc})") from exc
        rows.append(piece)
    if timed and newest is not None and rows.n and newest < last_ts:
        raise ValueError(f"state: {what} 'newest' is older than its rows")
    return rows, newest


def interleave(a: list[Piece], b: list[Piece]) -> list[Piece]:
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
    out: list[Piece] = []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        q = src[int(pid[s])]
        lo, hi = int(row[s]), int(row[e - 1]) + 1
        out.append(Piece(q.y[lo:hi], q.p[lo:hi], None if q.w is None else q.w[lo:hi],
                          None if q.ts is None else q.ts[lo:hi]))
    return out

