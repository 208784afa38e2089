"""Delayed labels: score now, learn the truth later (SPEC section 5).

An inference service knows its prediction at request time and the label minutes or days later.
``DelayedLabels(metric, capacity=..., ttl=...)`` holds the pending predictions:
``predict(ids, y_score)`` stores them, ``label(ids, y_true)`` moves the matching ones into
``metric`` (any accumulator, a :class:`~streammetrics.MetricSet`, a
:class:`~streammetrics.Window` or :class:`~streammetrics.Decayed`), so ``compute()`` -- the
wrapped metric's value -- is exactly the metric over the labelled (prediction, label) pairs.

Nothing is dropped silently. ``stats()`` counts:

* ``predicted`` / ``labelled``: predictions stored / pairs fed to the metric;
* ``replaced``: a ``predict`` for an id that was still pending (the new prediction wins);
* ``evicted``: the oldest pending predictions pushed out by ``capacity``;
* ``expired``: pending predictions older than ``ttl`` seconds (checked on every call);
* ``unknown``: labels whose id was not pending (never predicted, already labelled, evicted or
  expired) -- a ``KeyError`` naming the id by default (``on_unknown="raise"``; then nothing of
  that call is applied), or counted and skipped with ``on_unknown="count"``;
* ``pending``: predictions waiting for a label.

Ids are ints or strings. All pending predictions share one dtype and row shape (a float score,
an int label, or a row of C scores), so that a batch of labels becomes one update of the metric.

Complexity: ``predict`` and ``label`` O(k) dictionary operations for k ids plus the metric's
update of the k labelled rows; memory O(capacity) (about 150 bytes per pending prediction plus
its scores). Thread-safe: every call holds the wrapper's lock.

Persistence stores the wrapped metric's state (prefix ``metric.``), the pending predictions
(prefix ``pending.``: ids, scores, weights, times) and the counters, so a restarted service
resumes with its backlog.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ._base import RESERVED_KEYS, Metric
from ._state import State
from ._validation import as_numpy, check_scores, check_weights, first_bad
from .window import Clock, metric_from_nested, nested_config

__all__ = ["DelayedLabels"]

_STATS = ("predicted", "labelled", "replaced", "evicted", "expired", "unknown")
_MSEP = "metric."
_PSEP = "pending."
_INT64 = (-(2**63), 2**63 - 1)
_FLOAT_SPEC = (np.dtype(np.float64).str, ())


class _NoState(State):
    """DelayedLabels is fed by ``predict``/``label``; it never shares a state in a MetricSet."""

    def key(self) -> Hashable:
        return ("delayed", id(self))

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("DelayedLabels: feed it with predict(ids, y_score) and label(ids, y_true)")

    def arrays(self) -> dict[str, Any]:
        return {}

    def equals(self, other: State) -> bool:
        return other is self


def _check_ids(ids: Any) -> tuple[list[int | str], bool]:
    """Ids as a list of Python ints/strs (and whether a single id was given)."""
    single = isinstance(ids, (str, int, np.integer)) and not isinstance(ids, (bool, np.bool_))
    seq = [ids] if single else (ids.tolist() if isinstance(ids, np.ndarray) else list(ids))
    out: list[int | str] = []
    for i, x in enumerate(seq):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, str, np.integer)):
            raise ValueError(f"ids: must be ints or strings; first invalid value {x!r} at index {i}")
        if isinstance(x, str):
            out.append(x)
        else:
            v = int(x)
            if not _INT64[0] <= v <= _INT64[1]:
                raise ValueError(f"ids: integer ids must fit in int64; got {v} at index {i}")
            out.append(v)
    if len(set(out)) != len(out):
        seen: set[int | str] = set()
        for i, x in enumerate(out):
            if x in seen:
                raise ValueError(f"ids: duplicate id {x!r} at index {i}")
            seen.add(x)
    return out, single


class DelayedLabels(Metric):
    """Pending predictions that feed ``metric`` when their labels arrive (module docstring).

    Parameters
    ----------
    metric
        The accumulator (or MetricSet / Window / Decayed) that labelled pairs feed.
    capacity
        Maximum number of pending predictions (>= 1); the oldest is evicted (and counted) first.
    ttl
        Seconds a prediction may wait for its label (None: forever); older ones are expired and
        counted.
    on_unknown
        ``"raise"`` (default): a label for an id that is not pending is a ``KeyError``;
        ``"count"``: it is counted in ``stats()["unknown"]`` and skipped.
    clock
        Time source for ttl (default :func:`time.time`); not persisted.

    Example
    -------
    >>> from streammetrics import DelayedLabels, Recall
    >>> d = DelayedLabels(Recall(), capacity=1000)
    >>> d.predict(["a", "b", "c"], [0.9, 0.2, 0.7])
    >>> d.label(["c", "a"], [1, 0])  # returns how many pairs were fed
    2
    >>> d.compute(), d.stats()["pending"]
    (1.0, 1)
    """

    family = "delayed"

    def __init__(self, metric: Metric, *, capacity: int = 100_000, ttl: float | None = None,
                 on_unknown: str = "raise", clock: Clock | None = None) -> None:
        super().__init__()
        if not isinstance(metric, Metric) or isinstance(metric, DelayedLabels):
            raise ValueError(f"DelayedLabels: metric must be an accumulator, got {type(metric).__name__}")
        if metric.family != "classification":
            raise ValueError(
                f"DelayedLabels: supports classification-family metrics, got family {metric.family!r}"
            )
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError(f"capacity: must be an int >= 1, got {capacity!r}")
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, (int, float, np.integer, np.floating))
            or not (math.isfinite(float(ttl)) and float(ttl) > 0)
        ):
            raise ValueError(f"ttl: must be a finite number of seconds > 0 or None, got {ttl!r}")
        if on_unknown not in ("raise", "count"):
            raise ValueError(f"on_unknown: must be 'raise' or 'count', got {on_unknown!r}")
        if clock is not None and not callable(clock):
            raise ValueError(f"clock: must be callable, got {clock!r}")
        self._metric = metric
        self.capacity = int(capacity)
        self.ttl = None if ttl is None else float(ttl)
        self.on_unknown = on_unknown
        self.clock: Clock = clock or time.time
        self._state = _NoState()
        self._pending: OrderedDict[int | str, tuple[Any, float | None, float]] = OrderedDict()
        self._spec: tuple[str, tuple[int, ...]] | None = None  # dtype and row shape of pending
        self._stats = dict.fromkeys(_STATS, 0)

    # -- configuration -------------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        return {"metric": nested_config(self._metric), "capacity": self.capacity, "ttl": self.ttl,
                "on_unknown": self.on_unknown}

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> DelayedLabels:
        extra = set(config) - {"metric", "capacity", "ttl", "on_unknown"}
        if extra:
            raise ValueError(f"state: bad configuration for DelayedLabels: unexpected {sorted(extra)}")
        inner = metric_from_nested(config.get("metric"), "DelayedLabels")
        if isinstance(inner, DelayedLabels):
            raise ValueError("state: DelayedLabels cannot wrap DelayedLabels")
        return cls(inner, capacity=config.get("capacity", 0), ttl=config.get("ttl"),
                   on_unknown=config.get("on_unknown", ""))

    def __repr__(self) -> str:
        return (f"DelayedLabels({self._metric!r}, capacity={self.capacity}, ttl={self.ttl}, "
                f"on_unknown={self.on_unknown!r})")

    @property
    def metric(self) -> Metric:
        """The wrapped accumulator."""
        return self._metric

    # -- the service API -------------------------------------------------------------------------
    def update(self, *args: Any, **kwargs: Any) -> DelayedLabels:  # type: ignore[override]
        raise ValueError("DelayedLabels: feed it with predict(ids, y_score) and label(ids, y_true)")

    def _expire(self, now: float) -> None:
        if self.ttl is None:
            return
        cutoff = now - self.ttl
        pending = self._pending
        while pending:
            first = next(iter(pending))
            if pending[first][2] > cutoff:
                break
            pending.popitem(last=False)
            self._stats["expired"] += 1
        if not pending:
            self._spec = None

    def predict(self, ids: Any, y_score: Any, *, sample_weight: Any = None,
                timestamp: float | None = None) -> None:
        """Store predictions (one id with one score / row of scores, or a batch) until their
        labels arrive. Validated and atomic; O(k)."""
        if type(y_score) is float and sample_weight is None and type(ids) in (int, str):
            self._predict_one(ids, y_score, timestamp)  # the per-request path
            return
        keys, single = _check_ids(ids)
        s = as_numpy(y_score, "y_score")
        if single:
            s = s[None]
        k = len(keys)
        if s.ndim == 0 or s.shape[0] != k:
            raise ValueError(f"y_score: expected {k} rows (one per id), got shape {s.shape}")
        if s.dtype.kind == "f":
            s = check_scores(s, "y_score")
        if s.dtype not in (np.float64, np.float32, np.float16, np.int64, np.bool_):
            s = s.astype(np.float64 if s.dtype.kind == "f" else np.int64)
        if single and sample_weight is not None and np.ndim(sample_weight) == 0:
            sample_weight = [sample_weight]
        w = check_weights(sample_weight, k)
        now = float(self.clock() if timestamp is None else timestamp)
        if not math.isfinite(now):
            raise ValueError(f"timestamp: must be finite, got {now!r}")
        spec = (s.dtype.str, s.shape[1:])
        with self._lock:
            self._expire(now)
            if self._spec is not None and spec != self._spec and k:
                raise ValueError(
                    f"y_score: pending predictions have dtype {self._spec[0]} and row shape "
                    f"{self._spec[1]}; got {spec[0]} {spec[1]} (keep one kind of prediction)"
                )
            if k:
                self._spec = spec
            pending = self._pending
            rows = list(s.copy())
            for i, key in enumerate(keys):
                if key in pending:
                    del pending[key]
                    self._stats["replaced"] += 1
                pending[key] = (rows[i], None if w is None else float(w[i]), now)
            self._stats["predicted"] += k
            while len(pending) > self.capacity:
                pending.popitem(last=False)
                self._stats["evicted"] += 1

    def _predict_one(self, key: int | str, score: float, timestamp: float | None) -> None:
        """``predict`` of one id with a Python float score: no numpy on the way."""
        if score != score:
            raise ValueError("y_score: scores must not be NaN; got nan")
        if type(key) is int and not _INT64[0] <= key <= _INT64[1]:
            raise ValueError(f"ids: integer ids must fit in int64; got {key}")
        now = float(self.clock() if timestamp is None else timestamp)
        if not math.isfinite(now):
            raise ValueError(f"timestamp: must be finite, got {now!r}")
        with self._lock:
            self._expire(now)
            if self._spec is not None and self._spec != _FLOAT_SPEC:
                raise ValueError(
                    f"y_score: pending predictions have dtype {self._spec[0]} and row shape "
                    f"{self._spec[1]}; got <f8 () (keep one kind of prediction)"
                )
            self._spec = _FLOAT_SPEC
            pending = self._pending
            if key in pending:
                del pending[key]
                self._stats["replaced"] += 1
            pending[key] = (np.float64(score), None, now)
            self._stats["predicted"] += 1
            if len(pending) > self.capacity:
                pending.popitem(last=False)
                self._stats["evicted"] += 1

    def label(self, ids: Any, y_true: Any, *, timestamp: float | None = None) -> int:
        """Feed the labelled pending predictions to the metric; returns how many were fed.

        An id that is not pending: ``KeyError`` (nothing applied) or counted and skipped,
        per ``on_unknown``. Labels the metric rejects: ``ValueError``, nothing applied.
        O(k) plus the metric's update.
        """
        if type(ids) in (int, str) and type(y_true) is int and timestamp is None:
            return self._label_one(ids, y_true)  # the per-request path
        keys, single = _check_ids(ids)
        y = as_numpy(y_true, "y_true")
        if single:
            y = y[None]
        k = len(keys)
        if y.ndim == 0 or y.shape[0] != k:
            raise ValueError(f"y_true: expected {k} labels (one per id), got shape {y.shape}")
        now = float(self.clock() if timestamp is None else timestamp)
        with self._lock:
            self._expire(now)
            pending = self._pending
            found = [i for i, key in enumerate(keys) if key in pending]
            missing = k - len(found)
            if missing and self.on_unknown == "raise":
                first = next(key for key in keys if key not in pending)
                raise KeyError(
                    f"label: id {first!r} is not pending (never predicted, already labelled, "
                    f"evicted or expired); {missing} of {k} ids unknown"
                )
            if len(found) == 1 and y.ndim == 1 and np.ndim(pending[keys[found[0]]][0]) == 0:
                # one binary sample: the metrics' per-sample (scalar) paths
                score, weight, _ = pending[keys[found[0]]]
                self._metric.update(y[found[0]].item(), score.item(), sample_weight=weight)
            elif found:
                entries = [pending[keys[i]] for i in found]
                scores = np.stack([e[0] for e in entries])
                weights = None
                if any(e[1] is not None for e in entries):
                    weights = np.array([1.0 if e[1] is None else e[1] for e in entries])
                labels = y if len(found) == k else y[np.asarray(found)]
                self._metric.update(labels, scores, sample_weight=weights)
            for i in found:
                del pending[keys[i]]
            if not pending:
                self._spec = None
            self._stats["labelled"] += len(found)
            self._stats["unknown"] += missing
            return len(found)

    def _label_one(self, key: int | str, y: int) -> int:
        """``label`` of one id with a Python int label: no numpy on the way."""
        now = float(self.clock())
        with self._lock:
            self._expire(now)
            entry = self._pending.get(key)
            if entry is None:
                if self.on_unknown == "raise":
                    raise KeyError(
                        f"label: id {key!r} is not pending (never predicted, already labelled, "
                        "evicted or expired); 1 of 1 ids unknown"
                    )
                self._stats["unknown"] += 1
                return 0
            score, weight, _ = entry
            if np.ndim(score) == 0:
                self._metric.update(y, score.item(), sample_weight=weight)
            else:
                self._metric.update(np.array([y]), score[None],
                                    sample_weight=None if weight is None else [weight])
            del self._pending[key]
            if not self._pending:
                self._spec = None
            self._stats["labelled"] += 1
            return 1

    def expire(self, timestamp: float | None = None) -> None:
        """Apply the ttl now (it is also applied on every predict/label/stats call)."""
        with self._lock:
            self._expire(float(self.clock() if timestamp is None else timestamp))

    def stats(self) -> dict[str, int]:
        """Counters (see the module docstring) after applying the ttl."""
        with self._lock:
            self._expire(float(self.clock()))
            return {**self._stats, "pending": len(self._pending)}

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    # -- accumulator protocol ----------------------------------------------------------------------
    def compute(self) -> Any:
        """The wrapped metric's value over the labelled pairs."""
        return self._metric.compute()

    def _compute(self) -> Any:
        return self._metric._compute()

    def merge(self, *others: Metric) -> DelayedLabels:
        """Add other wrappers' metrics, counters and pending predictions (an id pending in both
        keeps the newer prediction and counts as replaced). Capacity and ttl then apply."""
        for other in others:
            self._check_mergeable(other)
        snaps = []
        for other in others:
            assert isinstance(other, DelayedLabels)
            with other._lock:
                snaps.append((other._metric.copy(), OrderedDict(other._pending), other._spec,
                              dict(other._stats)))
        with self._lock:
            for _, _, spec, _ in snaps:
                if spec is not None and self._spec is not None and spec != self._spec:
                    raise ValueError("merge: pending predictions of different dtype or shape")
            for metric, pending, spec, stats in snaps:
                self._metric.merge(metric)
                for key, entry in pending.items():
                    if key in self._pending:
                        self._stats["replaced"] += 1
                        if self._pending[key][2] > entry[2]:
                            continue
                        del self._pending[key]
                    self._pending[key] = entry
                if spec is not None:
                    self._spec = spec
                for name in _STATS:
                    self._stats[name] += stats[name]
            self._pending = OrderedDict(sorted(self._pending.items(), key=lambda kv: kv[1][2]))
            while len(self._pending) > self.capacity:
                self._pending.popitem(last=False)
                self._stats["evicted"] += 1
        return self

    def reset(self) -> DelayedLabels:
        with self._lock:
            self._metric.reset()
            self._pending.clear()
            self._spec = None
            self._stats = dict.fromkeys(_STATS, 0)
        return self

    def copy(self) -> DelayedLabels:
        out = super().copy()
        out.clock = self.clock
        return out

    @property
    def nbytes(self) -> int:
        with self._lock:
            rows = sum(np.asarray(e[0]).nbytes + 150 for e in self._pending.values())
            return self._metric.nbytes + rows

    def _state_arrays(self) -> dict[str, Any]:
        inner = self._metric.state_dict()
        out: dict[str, Any] = {_MSEP + k: v for k, v in inner.items() if k not in RESERVED_KEYS}
        keys = list(self._pending)
        entries = list(self._pending.values())
        is_str = np.array([isinstance(x, str) for x in keys], dtype=bool)
        encoded = [x.encode("utf-8") if isinstance(x, str) else b"" for x in keys]
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        out[_PSEP + "ids_int"] = np.array([0 if isinstance(x, str) else x for x in keys], dtype=np.int64)
        out[_PSEP + "is_str"] = is_str
        out[_PSEP + "str_bytes"] = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        out[_PSEP + "str_offsets"] = offsets
        if entries:
            out[_PSEP + "scores"] = np.stack([e[0] for e in entries])
        else:
            out[_PSEP + "scores"] = np.zeros(0)
        out[_PSEP + "weights"] = np.array([math.nan if e[1] is None else e[1] for e in entries])
        out[_PSEP + "times"] = np.array([e[2] for e in entries], dtype=np.float64)
        for name in _STATS:
            out["stats." + name] = self._stats[name]
        return out

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        inner: dict[str, Any] = {}
        pend: dict[str, Any] = {}
        stats: dict[str, int] = {}
        for key, value in arrays.items():
            if key.startswith(_MSEP):
                inner[key[len(_MSEP):]] = value
            elif key.startswith(_PSEP):
                pend[key[len(_PSEP):]] = value
            elif key.startswith("stats.") and key[6:] in _STATS:
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                    raise ValueError(f"state: counter {key!r} must be an int >= 0, got {value!r}")
                stats[key[6:]] = int(value)
            else:
                raise ValueError(f"state: unexpected entry {key!r} in DelayedLabels")
        if set(stats) != set(_STATS):
            raise ValueError(f"state: DelayedLabels counters missing: {sorted(set(_STATS) - set(stats))}")
        names = ("ids_int", "is_str", "str_bytes", "str_offsets", "scores", "weights", "times")
        if set(pend) != set(names) or not all(isinstance(pend[n], np.ndarray) for n in names):
            raise ValueError(f"state: DelayedLabels needs arrays {[_PSEP + n for n in names]}")
        ids_int, is_str = pend["ids_int"], pend["is_str"]
        raw, offsets = pend["str_bytes"], pend["str_offsets"]
        scores, weights, times = pend["scores"], pend["weights"], pend["times"]
        k = ids_int.shape[0] if ids_int.ndim == 1 else -1
        ok = (
            k >= 0 and ids_int.dtype.kind in "iu" and is_str.shape == (k,) and is_str.dtype == np.bool_
            and raw.ndim == 1 and raw.dtype == np.uint8 and offsets.shape == (k + 1,)
            and offsets.dtype.kind in "iu" and weights.shape == (k,) and weights.dtype.kind == "f"
            and times.shape == (k,) and times.dtype.kind == "f"
            and (k == 0 or (scores.ndim >= 1 and scores.shape[0] == k))
        )
        if not ok:
            raise ValueError("state: DelayedLabels pending arrays have inconsistent shapes or dtypes")
        if k > self.capacity:
            raise ValueError(f"state: {k} pending predictions exceed capacity {self.capacity}")
        if k and (offsets[0] != 0 or offsets[-1] != raw.shape[0] or bool((np.diff(offsets) < 0).any())):
            raise ValueError("state: DelayedLabels id offsets are corrupted")
        if k and not np.isfinite(times).all():
            raise ValueError("state: DelayedLabels pending times must be finite")
        bad_w = ~np.isnan(weights) & ~(np.isfinite(weights) & (weights >= 0))
        if bad_w.any():
            raise ValueError(f"state: DelayedLabels pending weight at index {first_bad(bad_w)} is invalid")
        if k and scores.dtype.kind == "f" and np.isnan(scores).any():
            raise ValueError("state: DelayedLabels pending scores hold NaN")
        data = raw.tobytes()
        keys: list[int | str] = []
        try:
            for i in range(k):
                keys.append(data[offsets[i]:offsets[i + 1]].decode("utf-8") if is_str[i] else int(ids_int[i]))
        except UnicodeDecodeError as exc:
            raise ValueError(f"state: DelayedLabels string id is not UTF-8 ({exc})") from exc
        if len(set(keys)) != k:
            raise ValueError("state: DelayedLabels pending ids are not unique")
        metric = type(self._metric)._from_config(self._metric._config())
        metric._load_arrays(inner)
        pending: OrderedDict[int | str, tuple[Any, float | None, float]] = OrderedDict()
        rows = list(scores) if k else []
        for i, ident in enumerate(keys):
            w = float(weights[i])
            pending[ident] = (rows[i], None if math.isnan(w) else w, float(times[i]))
        self._metric = metric
        self._pending = pending
        self._spec = (scores.dtype.str, scores.shape[1:]) if k else None
        self._stats = stats
