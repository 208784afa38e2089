"""Exponential forgetting for any accumulator (SPEC section 5): classification, ranking, retrieval.

``Decayed(metric, half_life=h)`` weighs the i-th of the n samples seen so far (0-based, in
arrival order: ``update`` calls, then rows) by ``0.5 ** ((n - 1 - i) / h)``: the newest sample
weighs 1, and every row decays individually, even inside one batch.
``Decayed(metric, half_life_seconds=h)`` weighs a sample stamped t_i by
``0.5 ** ((t_newest - t_i) / h)`` (timestamps as for :class:`~streammetrics.Window`:
``update(..., timestamp=...)`` or the injected ``clock``). The value is exactly the undecayed
metric computed with those sample weights (times the sample's own ``sample_weight``) -- e.g.
scikit-learn's ``f1_score(y, pred, sample_weight=decay)``.

How it works
------------
* States that can rescale (every :class:`~streammetrics._state.SummedState`: the confusion
  family, top-k) keep the decayed sums themselves. They are stored with *absolute* weights
  ``2 ** ((coord_i - ref) / h)`` (coord = sample index or timestamp), so an update only weighs
  its own rows -- O(batch), no pass over the state -- and the first read after updates rescales
  the sums once by ``2 ** (-(newest - ref) / h)`` (sums of squared weights by its square, so
  Wilson intervals use the right effective size) and moves ``ref`` to the newest sample: O(state).
  The reference also moves before the absolute weights could approach overflow (every ~300
  half-lives), so any stream length is safe; a gap of more than ~1075 half-lives leaves the old
  weights exactly 0, as in the definition. Rounding: a few ulps per rescale, and old
  contributions (with their error) decay with the mass, so the relative error does not grow
  with the stream length (checked against scikit-learn to 1e-11 after 20k samples).
* Bounded ranking metrics (``AUROC(max_bytes=...)``, AP, curves) rescale too
  (:meth:`~streammetrics._bins.BinnedScores.scale`): O(bins) per read, the state stays under its
  budget, and ``bounds()`` certifies the exact decayed value (scikit-learn with the decay
  weights).
* Other states (the exact ranking buffer: AUROC, AP, curves) keep the rows with their age
  coordinate (sample index or timestamp) and rebuild the wrapped state with the decay weights on
  the first read after an update: O(R log R) for the R rows kept. A row whose decay factor has
  underflowed to 0.0 (age > ~1075 half-lives) has weight exactly 0, which scikit-learn treats as
  absent, so it is dropped: R <= ~1100·h rows by samples. Exact.

Retrieval metrics decay per *query*: the q-th of the n queries seen weighs
``0.5 ** ((n - 1 - q) / h)`` (or ``0.5 ** ((t_newest - t_q) / h)`` with one timestamp per
query), and the value is the decay-weighted mean ``sum_q w_q m_q / sum_q w_q`` of the per-query
values m_q (micro-averaged set measures: the ratio of the decay-weighted pooled counts). The
state is O(1): the weighted sums and the total weight (:class:`DecayedQueriesState`).
``per_query=True`` metrics are refused (their stored values are not decayed).

Rows whose label is the wrapped metric's ``ignore_index`` count as arrivals (they age the other
samples) but contribute nothing.

Merge semantics (shards of one stream): by time, both sides are aligned to the newer of their
newest timestamps (the older side decays by the gap) and added -- exactly the decayed metric of
the union of the shards' samples. By samples there is no global order: each shard's samples
keep the ages they have in their own shard (the states are added).

Concurrent updates: a batch prepared (outside the lock) before another batch was applied is
weighed again when it is applied, so the result is that of some sequential order. In rows mode
a batch racing on timestamps is stamped with the newest timestamp seen.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ._base import Metric
from ._labels import split_labels, with_labels
from ._load_checks import MAX_SAMPLES
from ._state import State
from ._validation import as_numpy, check_weights, derived_weights, is_scalar, one_weight
from .window import (
    Clock,
    _interleave,
    _Piece,
    _Rows,
    _WrappedMetric,
    canonical_rows,
    check_timestamps,
    check_wrappable,
    load_rows,
    metric_from_nested,
    nested_config,
    optional_float,
    query_values,
    register_wrapper,
    rows_arrays,
    spec_layout,
)

__all__ = ["Decayed"]

_PREFIX = "inner."
_HORIZON = 1100.0  # half-lives after which 0.5 ** age is exactly 0.0 in float64
_RENORM = 300.0  # rebase when absolute weights would exceed 2 ** 300 (squares stay finite)


def _n_rows(state: State, y_true: Any) -> int:
    if is_scalar(y_true):
        return 1
    y = as_numpy(y_true, "y_true")
    if y.ndim == 0 or (getattr(state, "task", None) == "multilabel" and y.ndim == 1):
        return 1
    return int(y.shape[0])


def _as_decayed(state: State) -> DecayedState:
    assert isinstance(state, DecayedState)
    return state


class _DecayBase(State):
    """What both decay states share: the wrapped state, the half-life (in samples / queries, or
    in seconds with ``by_time``) as ``h``, and the clock."""

    def __init__(self, inner: State, half_life: float | None, half_life_seconds: float | None,
                 clock: Clock) -> None:
        self.inner = inner
        self.half_life, self.half_life_seconds, self.clock = half_life, half_life_seconds, clock
        self.by_time = half_life_seconds is not None
        self.h = float(half_life_seconds if self.by_time else half_life)  # type: ignore[arg-type]


class DecayedState(_DecayBase):
    """Decayed sums of a rescalable state, or the aged rows of any state (module docstring)."""

    def __init__(self, inner: State, half_life: float | None, half_life_seconds: float | None,
                 clock: Clock) -> None:
        super().__init__(inner, half_life, half_life_seconds, clock)
        self.scaled = type(inner).scale is not State.scale
        self.newest: float | None = None  # by time: newest timestamp; by samples: newest index
        # Scale mode stores sums with absolute weights 2 ** ((coord - ref) / h), so an update
        # never rescales the state; ``sync`` (before any read) rebases ``ref`` to ``newest``.
        self.ref: float | None = None
        self.n_seen = 0
        self.rows = _Rows()  # only without ``scale``: ts = age coordinate
        self._dirty = False

    def key(self) -> Hashable:
        return ("decayed", self.half_life, self.half_life_seconds, type(self.inner).__name__,
                self.inner.key())

    # -- update --------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None, *,
                timestamp: Any = None) -> Any:
        if not self.by_time and timestamp is not None:
            raise ValueError("timestamp: only time decay (half_life_seconds=...) takes timestamps")
        n = _n_rows(self.inner, y_true)
        if n == 0:
            self.inner.prepare(y_true, y_pred, sample_weight)  # validate shapes
            return None
        ts = check_timestamps(timestamp, n, self.clock, self.newest) if self.by_time else None
        if not self.scaled:
            self.inner.prepare(y_true, y_pred, sample_weight)  # validate
            y, p, w = canonical_rows(self.inner, y_true, y_pred, sample_weight)
            coord = ts if ts is not None else np.arange(n, dtype=np.float64)  # offset at apply
            return ("rows", _Piece(y, p, w, coord), n)
        if sample_weight is not None:  # the rules of the wrapped state, before any decay factor
            sample_weight = (one_weight(sample_weight) if n == 1 and np.ndim(sample_weight) == 0
                             else check_weights(sample_weight, n))
        n0, ref = self.n_seen, self.ref
        return self._weighted_delta(y_true, y_pred, sample_weight, ts, n, n0, ref)

    def _weighted_delta(self, y_true: Any, y_pred: Any, sample_weight: Any, ts: np.ndarray | None,
                        n: int, n0: int, ref: float | None) -> Any:
        """The batch prepared with absolute weights 2 ** ((coord - ref) / h) (see ``sync``)."""
        last = float(ts[-1]) if ts is not None else float(n0 + n - 1)
        if ref is None or (last - ref) / self.h > _RENORM:
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
        with derived_weights():  # validated weights times factors up to 2 ** _RENORM
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
        if self.ref is not None and (last - self.ref) / self.h > _RENORM:
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

    def _rebase(self, to: float) -> None:
        """Rescale the stored sums so that the reference point becomes ``to``."""
        assert self.ref is not None
        if to != self.ref:
            self.inner.scale(math.exp2(-(to - self.ref) / self.h))
            self.ref = to

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
        n_seen = arrays.get("n_seen")
        if (isinstance(n_seen, bool) or not isinstance(n_seen, (int, np.integer))
                or not 0 <= n_seen <= MAX_SAMPLES):
            raise ValueError(f"state: 'n_seen' must be an int in [0, 2**53], got {n_seen!r}")
        if "newest" not in arrays:
            raise ValueError("state: missing entry 'newest'")
        newest = optional_float(arrays["newest"], "newest")
        if (newest is None) != (int(n_seen) == 0):
            raise ValueError("state: 'newest' must be set exactly when samples were seen")
        if self.scaled:
            inner = {}
            for k, v in arrays.items():
                if k in ("newest", "n_seen"):
                    continue
                if not k.startswith(_PREFIX):
                    raise ValueError(f"state: unexpected array {k!r} in a Decayed state")
                inner[k[len(_PREFIX):]] = v
            if not self.by_time and newest is not None and newest != int(n_seen) - 1:
                raise ValueError("state: 'newest' must be n_seen - 1 for decay by samples")
            fresh = self.inner.copy()
            fresh.load_arrays(inner)
            self.inner = fresh
            self.rows = _Rows()
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
        self.newest, self.n_seen = newest, int(n_seen)

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes + self.rows.nbytes()

    def merge(self, other: State) -> None:
        assert isinstance(other, DecayedState)
        if other.n_seen == 0:
            return
        if self.scaled:
            self.sync()
            other = _as_decayed(other.copy())
            other.sync()
            theirs = other.inner
            if self.by_time and self.newest is not None and other.newest is not None:
                top = max(self.newest, other.newest)
                if top > self.newest:
                    self.inner.scale(math.exp2(-(top - self.newest) / self.h))
                if top > other.newest:
                    theirs.scale(math.exp2(-(top - other.newest) / self.h))
            self.inner.merge(theirs)
        else:
            pieces = [q.live() for q in other.rows]
            if not self.by_time and self.newest is not None:  # keep each sample's age in its shard
                shift = self.newest - other.newest  # type: ignore[operator]
                pieces = [_Piece(q.y, q.p, q.w, q.ts + shift) for q in pieces]  # type: ignore[operator,arg-type]
            merged = _interleave([q.live() for q in self.rows], pieces)
            rows = _Rows()
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
        self.inner.reset()
        self.rows = _Rows()
        self.newest, self.n_seen, self._dirty, self.ref = None, 0, False, None

    def equals(self, other: State) -> bool:
        return isinstance(other, DecayedState) and super().equals(other)


class DecayedQueriesState(_DecayBase):
    """Decay over queries, for the retrieval family.

    The q-th query of the n seen (0-based, arrival order: ``update`` calls, then queries in
    order of appearance) weighs ``w_q = 0.5 ** ((n - 1 - q) / h)`` by queries, or
    ``0.5 ** ((t_newest - t_q) / h)`` by time (one timestamp per query). The value is the
    decay-weighted mean over queries, ``sum_q w_q m_q / sum_q w_q`` (for micro-averaged set
    measures, the ratio of the decay-weighted pooled counts).

    Stored: ``S = sum_q a_q v_q`` (every per-query value column of the wrapped measure) and
    ``M = sum_q a_q`` with absolute weights ``a_q = 2 ** ((coord_q - ref) / h)``: an update is
    O(queries · width) and never touches the past; the reference moves only to keep the weights
    far from overflow (a weighted mean does not depend on it). Before a read the wrapped
    :class:`~streammetrics.retrieval.QueryState` is loaded, through its ``load_arrays``, with one
    pseudo-query holding ``S / M``, so the wrapped metric's own ``compute`` returns the decayed
    mean. Memory O(width).
    """

    def __init__(self, inner: State, half_life: float | None, half_life_seconds: float | None,
                 clock: Clock) -> None:
        super().__init__(inner, half_life, half_life_seconds, clock)
        self.specs = list(inner.specs)  # type: ignore[attr-defined]
        if any(spec.per_query for spec in self.specs):
            raise ValueError("Decayed: per-query values are not decayed; wrap the metric without "
                             "per_query=True")
        self.width = sum(spec.width for spec in self.specs)
        self.sums = np.zeros(self.width)
        self.mass = 0.0
        self.ref: float | None = None
        self.newest: float | None = None
        self.n_seen = 0
        self._dirty = False

    def key(self) -> Hashable:
        return ("decayed-queries", self.half_life, self.half_life_seconds,
                tuple(spec.name for spec in self.specs))

    def prepare(self, relevance: Any, scores: Any, *, doc_ids: Any = None, judged: Any = None,
                n_relevant: Any = None, query_ids: Any = None, timestamp: Any = None) -> Any:
        if not self.by_time and timestamp is not None:
            raise ValueError("timestamp: only time decay (half_life_seconds=...) takes timestamps")
        vals = query_values(self.specs, relevance, scores, doc_ids=doc_ids, judged=judged,
                            n_relevant=n_relevant, query_ids=query_ids)
        ts = check_timestamps(timestamp, vals.shape[0], self.clock, self.newest) if self.by_time else None
        return vals, ts

    def apply(self, delta: Any) -> None:
        vals, ts = delta
        n = vals.shape[0]
        if n == 0:
            return
        if ts is not None:
            if self.newest is not None and ts[0] < self.newest:
                ts = np.maximum(ts, self.newest)  # lost a race with a newer batch
            coord = ts
        else:  # by queries: coordinates assigned here, so racing updates get consecutive ones
            coord = self.n_seen + np.arange(n, dtype=np.float64)
        last = float(coord[-1])
        if self.ref is None:
            self.ref = last
        elif (last - self.ref) / self.h > _RENORM:
            self._rebase(last)
        a = np.exp2((coord - self.ref) / self.h)
        self.sums += a @ vals
        self.mass += float(a.sum())
        self.n_seen += n
        self.newest = last
        self._dirty = True

    def _rebase(self, to: float) -> None:
        assert self.ref is not None
        if to != self.ref:
            f = math.exp2(-(to - self.ref) / self.h)
            self.sums *= f
            self.mass *= f
            self.ref = to

    def sync(self) -> None:
        """Load the decay-weighted mean into the wrapped state (one pseudo-query)."""
        if not self._dirty:
            return
        if self.n_seen == 0:
            self.inner.reset()
        else:
            self._rebase(self.newest)  # type: ignore[arg-type]  # the stored form (as saved)
            mean = self.sums / self.mass
            arrays: dict[str, Any] = {}
            for spec, a, b in spec_layout(self.specs):
                arrays[f"{spec.name}.count"] = np.array([1], dtype=np.int64)
                arrays[f"{spec.name}.sums"] = mean[a:b].copy()
            self.inner.load_arrays(arrays)
        self._dirty = False

    def arrays(self) -> dict[str, Any]:
        if self.newest is not None and self.ref is not None:
            self._rebase(self.newest)  # the stored form: the newest query weighs 1
        return {"sums": self.sums.copy(), "mass": float(self.mass), "newest": self.newest,
                "n_seen": self.n_seen}

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        expected = {"sums", "mass", "newest", "n_seen"}
        if set(arrays) != expected:
            raise ValueError(f"state: a decayed query state has exactly {sorted(expected)}, got "
                             f"{sorted(arrays)}")
        n_seen = arrays["n_seen"]
        if (isinstance(n_seen, bool) or not isinstance(n_seen, (int, np.integer))
                or not 0 <= n_seen <= MAX_SAMPLES):
            raise ValueError(f"state: 'n_seen' must be an int in [0, 2**53], got {n_seen!r}")
        newest = optional_float(arrays["newest"], "newest")
        if (newest is None) != (int(n_seen) == 0):
            raise ValueError("state: 'newest' must be set exactly when queries were seen")
        if not self.by_time and newest is not None and newest != int(n_seen) - 1:
            raise ValueError("state: 'newest' must be n_seen - 1 for decay by queries")
        sums = arrays["sums"]
        if not isinstance(sums, np.ndarray) or sums.shape != (self.width,) or sums.dtype.kind != "f" \
                or not np.isfinite(sums).all():
            raise ValueError(f"state: 'sums' must be {self.width} finite floats")
        mass = optional_float(arrays["mass"], "mass")
        if mass is None or (mass < 1.0 if int(n_seen) else mass != 0.0):
            raise ValueError("state: 'mass' must be >= 1 (the newest query weighs 1), or 0 when empty")
        # every query weighs at most 1 (merged shards by queries too: each keeps its own ages)
        most = float(n_seen)
        if mass > most * (1.0 + 1e-12):
            raise ValueError(f"state: 'mass' must be at most {most!r} for {int(n_seen)} queries, "
                             f"got {mass!r}")
        if not int(n_seen) and sums.any():
            raise ValueError("state: an empty decayed query state has non-zero sums")
        for spec, a, b in spec_layout(self.specs):  # sums within mass x each measure's range
            spec.check_block(sums[a:b], mass, f"decayed query 'sums' of {spec.name}", 0.5e-9)
        self.sums, self.mass = sums.astype(np.float64), float(mass)
        self.newest, self.n_seen = newest, int(n_seen)
        self.ref = newest
        self._dirty = True
        self.sync()

    @property
    def nbytes(self) -> int:
        return self.sums.nbytes + 8 + self.inner.nbytes

    def merge(self, other: State) -> None:
        """By time: both sides aligned to the newer newest timestamp (the older side decays by
        the gap) and added. By queries: each shard's queries keep their ages in their shard."""
        assert isinstance(other, DecayedQueriesState)
        if other.n_seen == 0:
            return
        theirs = other.arrays()  # rebased to its newest (other is a snapshot)
        if self.n_seen == 0:
            self.sums, self.mass = theirs["sums"], theirs["mass"]
            self.newest = self.ref = theirs["newest"]
            self.n_seen = other.n_seen
            self._dirty = True
            return
        self.arrays()  # rebase to our newest
        assert self.newest is not None
        t_sums, t_mass, t_newest = theirs["sums"], theirs["mass"], float(theirs["newest"])
        if self.by_time:
            top = max(self.newest, t_newest)
            f_mine, f_theirs = math.exp2(-(top - self.newest) / self.h), math.exp2(-(top - t_newest) / self.h)
            self.sums = self.sums * f_mine + t_sums * f_theirs
            self.mass = self.mass * f_mine + t_mass * f_theirs
            self.newest = top
        else:
            self.sums = self.sums + t_sums
            self.mass = self.mass + t_mass
            self.newest = float(self.n_seen + other.n_seen - 1)
        self.ref = self.newest
        self.n_seen += other.n_seen
        self._dirty = True

    def reset(self) -> None:
        self.inner.reset()
        self.sums = np.zeros(self.width)
        self.mass = 0.0
        self.ref = self.newest = None
        self.n_seen = 0
        self._dirty = False

    def equals(self, other: State) -> bool:
        return isinstance(other, DecayedQueriesState) and super().equals(other)


class Decayed(_WrappedMetric):
    """``metric`` with exponential forgetting: by samples (``half_life``) or by time
    (``half_life_seconds``). See the module docstring for the exact weights.

    Parameters
    ----------
    metric
        An empty accumulator (classification, ranking, or retrieval -- then per query).
    half_life, half_life_seconds
        Exactly one, > 0: the number of samples -- retrieval: queries -- (or seconds) after
        which a sample weighs 1/2.
    clock
        Time source for updates without ``timestamp`` (time decay); default :func:`time.time`.

    ``update(y_true, y_pred, *, sample_weight=None, timestamp=None)``; ``compute()`` is the
    wrapped metric's value under the decay weights; ``interval()`` / ``bounds()`` pass through.
    Complexity (confusion family): ``update`` O(batch), a read O(state); see the module
    docstring for the ranking metrics.

    Example
    -------
    >>> import numpy as np
    >>> from sklearn.metrics import recall_score
    >>> from streammetrics import Decayed, Recall
    >>> y, p = np.array([1, 1, 0, 1]), np.array([0, 1, 1, 1])
    >>> d = Decayed(Recall(), half_life=2).update(y[:2], p[:2]).update(y[2:], p[2:])
    >>> w = 0.5 ** ((3 - np.arange(4)) / 2)
    >>> bool(abs(d.compute() - recall_score(y, p, sample_weight=w)) < 1e-12)
    True
    """

    def __init__(self, metric: Metric, *, half_life: float | None = None,
                 half_life_seconds: float | None = None, clock: Clock | None = None) -> None:
        super().__init__()
        if (half_life is None) == (half_life_seconds is None):
            raise ValueError("Decayed: give exactly one of half_life= (samples) or half_life_seconds=")
        for name, v in (("half_life", half_life), ("half_life_seconds", half_life_seconds)):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (
                math.isfinite(float(v)) and float(v) > 0
            ):
                raise ValueError(f"{name}: must be a finite number > 0, got {v!r}")
        if clock is not None and not callable(clock):
            raise ValueError(f"clock: must be callable, got {clock!r}")
        self._metric = check_wrappable(metric, "Decayed")
        self.family = self._metric.family
        self.half_life = None if half_life is None else float(half_life)
        self.half_life_seconds = None if half_life_seconds is None else float(half_life_seconds)
        state_type = DecayedQueriesState if self.family == "retrieval" else DecayedState
        inner, codec = split_labels(self._metric._state)  # rows are stored as class codes
        self._state: DecayedState | DecayedQueriesState = with_labels(state_type(
            inner, self.half_life, self.half_life_seconds, clock or time.time
        ), codec)

    def _config(self) -> dict[str, Any]:
        return {"metric": nested_config(self._metric), "half_life": self.half_life,
                "half_life_seconds": self.half_life_seconds}

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> Decayed:
        extra = set(config) - {"metric", "half_life", "half_life_seconds"}
        if extra:
            raise ValueError(f"state: bad configuration for Decayed: unexpected {sorted(extra)}")
        return cls(metric_from_nested(config.get("metric"), "Decayed"),
                   half_life=config.get("half_life"), half_life_seconds=config.get("half_life_seconds"))

    def __repr__(self) -> str:
        h = (f"half_life={self.half_life}" if self.half_life is not None
             else f"half_life_seconds={self.half_life_seconds}")
        return f"Decayed({self._metric!r}, {h})"

    @property
    def n_seen(self) -> int:
        """Samples seen (rows of every update, including ``ignore_index`` rows)."""
        with self._lock:
            return self._state.n_seen



register_wrapper(Decayed)
