"""The states of :class:`~streammetrics.Decayed`: what both decay states share
(:class:`DecayBase`: the half-life, the clock, the newest coordinate and the reference point of
the absolute weights, their rebase, the loaded counters, the alignment of two shards by time)
and the decay over samples (:class:`DecayedState`). The decay over queries of the retrieval
family is :class:`~streammetrics.wrappers._decay_queries.DecayedQueriesState`. How they work: see
:mod:`streammetrics.wrappers.decay`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import MAX_SAMPLES
from streammetrics._core.state import State
from streammetrics._core.timestamps import Clock, check_timestamps
from streammetrics._core.validation import as_numpy, check_weights, derived_weights, is_scalar, one_weight

from ._rows import Piece, Rows, canonical_rows, interleave, load_rows, optional_float, rows_arrays

#: Rebase when absolute weights would exceed 2 ** RENORM (their squares stay finite).
RENORM = 300.0
_PREFIX = "inner."
_HORIZON = 1100.0  # half-lives after which 0.5 ** age is exactly 0.0 in float64


def _n_rows(state: State, y_true: Any) -> int:
    if is_scalar(y_true):
        return 1
    y = as_numpy(y_true, "y_true")
    if y.ndim == 0 or (getattr(state, "task", None) == "multilabel" and y.ndim == 1):
        return 1
    return int(y.shape[0])


class DecayBase(State):
    """The wrapped state ``inner``, the half-life (in samples / queries, or in seconds with
    ``by_time``) as ``h``, the clock, ``n_seen`` items, the newest coordinate (timestamp, or
    index) and the reference point ``ref`` of absolute weights ``2 ** ((coord - ref) / h)``.
    Subclasses say how the stored sums are rescaled (:meth:`_rescale`)."""

    #: What the decayed items are called in error messages.
    unit = "samples"

    def __init__(self, inner: State, half_life: float | None, half_life_seconds: float | None,
                 clock: Clock) -> None:
        self.inner = inner
        self.half_life, self.half_life_seconds, self.clock = half_life, half_life_seconds, clock
        self.by_time = half_life_seconds is not None
        self.h = float(half_life_seconds if self.by_time else half_life)  # type: ignore[arg-type]
        self.newest: float | None = None  # by time: newest timestamp; else: newest index
        self.ref: float | None = None
        self.n_seen = 0
        self._dirty = False

    def sample_count(self) -> float:
        """The number of items folded in (``n_seen``: samples, or queries). O(1)."""
        return float(self.n_seen)

    def _check_untimed(self, timestamp: Any) -> None:
        if not self.by_time and timestamp is not None:
            raise ValueError("timestamp: only time decay (half_life_seconds=...) takes timestamps")

    def _timestamps(self, timestamp: Any, n: int) -> np.ndarray | None:
        """The batch's per-item timestamps (time decay), else ``None``."""
        return check_timestamps(timestamp, n, self.clock, self.newest) if self.by_time else None

    def _rebase(self, to: float) -> None:
        """Rescale the stored sums so that the reference point becomes ``to``."""
        assert self.ref is not None
        if to != self.ref:
            self._rescale(math.exp2(-(to - self.ref) / self.h))
            self.ref = to

    def _rescale(self, factor: float) -> None:
        """Multiply every stored weight by ``factor``."""
        raise NotImplementedError

    def _gap_factors(self, other_newest: float) -> tuple[float, float, float]:
        """Time decay, merging a shard whose newest timestamp is ``other_newest``: the newer of
        both newest timestamps, and the factors that bring this side and the other to it."""
        assert self.newest is not None
        top = max(self.newest, other_newest)
        return top, math.exp2(-(top - self.newest) / self.h), math.exp2(-(top - other_newest) / self.h)

    def _load_counters(self, arrays: Mapping[str, Any]) -> tuple[float | None, int]:
        """``newest`` and ``n_seen`` of an untrusted state: set together, in range."""
        n_seen = arrays.get("n_seen")
        if (isinstance(n_seen, bool) or not isinstance(n_seen, (int, np.integer))
                or not 0 <= n_seen <= MAX_SAMPLES):
            raise ValueError(f"state: 'n_seen' must be an int in [0, 2**53], got {n_seen!r}")
        if "newest" not in arrays:
            raise ValueError("state: missing entry 'newest'")
        newest = optional_float(arrays["newest"], "newest")
        if (newest is None) != (int(n_seen) == 0):
            raise ValueError(f"state: 'newest' must be set exactly when {self.unit} were seen")
        return newest, int(n_seen)

    def _check_newest_index(self, newest: float | None, n_seen: int) -> None:
        """Decay by count keeps the newest item's index as ``newest``."""
        if not self.by_time and newest is not None and newest != n_seen - 1:
            raise ValueError(f"state: 'newest' must be n_seen - 1 for decay by {self.unit}")

    def reset(self) -> None:
        self.inner.reset()
        self.newest, self.n_seen, self._dirty, self.ref = None, 0, False, None

    def equals(self, other: State) -> bool:
        return type(other) is type(self) and super().equals(other)


class DecayedState(DecayBase):
    """Decayed sums of a rescalable state, or the aged rows of any state (see
    :mod:`streammetrics.wrappers.decay`)."""

    def __init__(self, inner: State, half_life: float | None, half_life_seconds: float | None,
                 clock: Clock) -> None:
        super().__init__(inner, half_life, half_life_seconds, clock)
        self.scaled = type(inner).scale is not State.scale
        # Scale mode stores sums with absolute weights 2 ** ((coord - ref) / h), so an update
        # never rescales the state; ``sync`` (before any read) rebases ``ref`` to ``newest``.
        self.rows = Rows()  # only without ``scale``: ts = age coordinate

    def key(self) -> Hashable:
        return ("decayed", self.half_life, self.half_life_seconds, type(self.inner).__name__,
                self.inner.key())

    # -- update --------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None, *,
                timestamp: Any = None) -> Any:
        self._check_untimed(timestamp)
        n = _n_rows(self.inner, y_true)
        if n == 0:
            self.inner.prepare(y_true, y_pred, sample_weight)  # validate shapes
            return None
        ts = self._timestamps(timestamp, n)
        if not self.scaled:
            self.inner.prepare(y_true, y_pred, sample_weight)  # validate
            y, p, w = canonical_rows(self.inner, y_true, y_pred, sample_weight)
            coord = ts if ts is not None else np.arange(n, dtype=np.float64)  # offset at apply
            return ("rows", Piece(y, p, w, coord), n)
        if sample_weight is not None:  # the rules of the wrapped state, before any decay factor
            sample_weight = (one_weight(sample_weight) if n == 1 and np.ndim(sample_weight) == 0
                             else check_weights(sample_weight, n))
        n0, ref = self.n_seen, self.ref
        return self._weighted_delta(y_true, y_pred, sample_weight, ts, n, n0, ref)

    def _weighted_delta(self, y_true: Any, y_pred: Any, sample_weight: Any, ts: np.ndarray | None,
                        n: int, n0: int, ref: float | None) -> Any:
        """The batch prepared with absolute weights 2 ** ((coord - ref) / h) (see ``sync``)."""
        last = float(ts[-1]) if ts is not None else float(n0 + n - 1)
        if ref is None or (last - ref) / self.h > RENORM:
            ref = last  # provisional after a long gap: ``apply`` rebases and weighs again
        if n == 1:  # keep the per-sample path: a scalar weight for scalar inputs
            f = math.exp2((last - ref) / self.h)
            if sample_weight is None:
                weights: Any = f if is_scalar(y_true) or np.ndim(y_true) == 0 else [f]
            else:
                weights = (float(sample_weight) * f if np.ndim(sample_weight) == 0
                           else np.asarray(sample_weight, dtype=np.float64) * f)
        else:
            coord = ts if ts is not None else n0 + np.arange(n, dtype=np.float64)
            weights = np.exp2((coord - ref) / self.h)
            if sample_weight is not None:
                weights = weights * as_numpy(sample_weight, "sample_weight").astype(np.float64)
        with derived_weights():  # validated weights times factors up to 2 ** RENORM
            delta = self.inner.prepare(y_true, y_pred, weights)
        return ("scaled", delta, n, n0, ref, last, (y_true, y_pred, sample_weight, ts))

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        if delta[0] == "rows":
            _, piece, n = delta
            if self.by_time:
                if self.newest is not None and piece.ts[0] < self.newest:
                    piece.ts = np.maximum(piece.ts, self.newest)
            elif self.newest is not None:
                piece.ts = piece.ts + (self.newest + 1.0)
            self.rows.append(piece)
            self.n_seen += n
            t = float(piece.ts[-1])
            self.newest = t if self.newest is None else max(self.newest, t)
            self._drop_old()
            self._dirty = True
            return
        _, inner_delta, n, n0, ref, last, args = delta
        if self.ref is not None and (last - self.ref) / self.h > RENORM:
            self._rebase(last)  # keep the absolute weights far from overflow
        if (n0 != self.n_seen and not self.by_time) or (self.ref is not None and ref != self.ref):
            # another update (or a rebase) came between prepare and apply: weigh again (the
            # inputs were validated, so this cannot raise)
            y_true, y_pred, sample_weight, ts = args
            again = self._weighted_delta(y_true, y_pred, sample_weight, ts, n, self.n_seen, self.ref)
            inner_delta, last = again[1], again[5]
        elif self.ref is None:
            self.ref = ref
        self.inner.apply(inner_delta)
        self.n_seen += n
        self.newest = last if self.newest is None else max(self.newest, last)

    def _rescale(self, factor: float) -> None:
        self.inner.scale(factor)

    def _drop_old(self) -> None:  # rows mode: weights that underflowed to exactly 0
        if self.newest is not None and self.rows.n:
            k = self.rows.count_not_after(self.newest - _HORIZON * self.h)
            if k:
                self.rows.drop_front(k)

    def sync(self) -> None:
        """Bring the wrapped state to the decay weights relative to the newest sample: rescale
        the stored sums once (scale mode) or rebuild from the aged rows (rows mode)."""
        if self.scaled:
            if self.ref is not None and self.newest is not None:
                self._rebase(self.newest)
            return
        if not self._dirty:
            return
        self.inner.reset()
        for q in self.rows.segments():
            n = len(q)
            y, p, w = q.part(0, n)
            dw = np.exp2(-(self.newest - q.ts[q.lo:q.hi]) / self.h)  # type: ignore[index,operator]
            with derived_weights():  # stored weights times factors down to 0
                self.inner.apply(self.inner.prepare(y, p, dw if w is None else dw * w))
        self._dirty = False

    # -- state protocol ------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        if self.scaled:
            self.sync()
            out = {_PREFIX + k: v for k, v in self.inner.arrays().items()}
        else:
            out = rows_arrays(self.rows)
        out["newest"] = self.newest
        out["n_seen"] = self.n_seen
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        newest, n_seen = self._load_counters(arrays)
        if self.scaled:
            inner = {}
            for k, v in arrays.items():
                if k in ("newest", "n_seen"):
                    continue
                if not k.startswith(_PREFIX):
                    raise ValueError(f"state: unexpected array {k!r} in a Decayed state")
                inner[k[len(_PREFIX):]] = v
            self._check_newest_index(newest, n_seen)
            fresh = self.inner.copy()
            fresh.load_arrays(inner)
            self.inner = fresh
            self.rows = Rows()
            self.ref = newest
        else:
            fresh = self.inner.copy()
            fresh.reset()
            rows, _ = load_rows(arrays, True, lambda q: fresh.apply(fresh.prepare(*q.part(0, len(q)))),
                                "Decayed state", scalars=("newest", "n_seen"))
            if rows.n and (newest is None or rows.pieces[-1].ts[-1] > newest):  # type: ignore[index]
                raise ValueError("state: Decayed rows are newer than 'newest'")
            if rows.n and newest is not None and rows.count_not_after(newest - _HORIZON * self.h):
                raise ValueError(  # they weigh exactly 0: ``_drop_old`` would have dropped them
                    f"state: Decayed rows older than {_HORIZON} half-lives before 'newest' "
                    f"({newest!r})")
            if not self.by_time and any(not np.all(q.ts == np.floor(q.ts)) for q in rows):  # type: ignore[arg-type]
                raise ValueError("state: Decayed sample indices are inconsistent")
            self.rows = rows
            self._dirty = True
        self.newest, self.n_seen = newest, n_seen

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes + self.rows.nbytes()

    def merge(self, other: State) -> None:
        assert isinstance(other, DecayedState)
        if other.n_seen == 0:
            return
        if self.scaled:
            self.sync()
            snap = other.copy()
            assert isinstance(snap, DecayedState)
            snap.sync()
            theirs = snap.inner
            if self.by_time and self.newest is not None and snap.newest is not None:
                _, f_mine, f_theirs = self._gap_factors(snap.newest)
                if f_mine != 1.0:
                    self.inner.scale(f_mine)
                if f_theirs != 1.0:
                    theirs.scale(f_theirs)
            self.inner.merge(theirs)
        else:
            pieces = [q.live() for q in other.rows]
            if not self.by_time and self.newest is not None:  # keep each sample's age in its shard
                shift = self.newest - other.newest  # type: ignore[operator]
                pieces = [Piece(q.y, q.p, q.w, q.ts + shift) for q in pieces]  # type: ignore[operator,arg-type]
            merged = interleave([q.live() for q in self.rows], pieces)
            rows = Rows()
            for q in merged:
                rows.append(q)
            self.rows = rows
            self._dirty = True
        if self.newest is None:
            self.newest = other.newest
        elif self.by_time:
            self.newest = max(self.newest, other.newest)  # type: ignore[type-var]
        elif self.scaled:
            self.newest = float(self.n_seen + other.n_seen - 1)
        self.n_seen += other.n_seen
        if self.scaled:
            self.ref = self.newest
        else:
            self._drop_old()

    def reset(self) -> None:
        super().reset()
        self.rows = Rows()
