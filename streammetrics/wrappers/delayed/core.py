"""Delayed labels: score now, learn the truth later.

The definitions: docs/definitions/service.md#delayed-labels.

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
  expired): counted and skipped by default (``on_unknown="skip"``), or a ``ValueError`` naming
  the first one with nothing of the call applied (``"raise"``; see ``delayed/unknown.py``);
* ``rejected``: labelled pairs the metric refused when a buffered batch was folded in (see
  below; a pair is checked when its label arrives, so this stays 0 unless the metric's own
  rules depend on more than the label value, the kind of prediction and the range of the
  scores);
* ``pending``: predictions waiting for a label; ``buffered``: labelled pairs not yet folded in.

Batched folding (``batch_size > 1``), for per-request services: single labels are checked when
they arrive and folded into the metric in batches of B pairs (after at most ``max_delay``
seconds under traffic, and before anything reads or moves the metric), with exactly the value
per-pair updates would give: see ``delayed/fold.py``.

Sliced evaluation: wrap a :class:`~streammetrics.Sliced` (``DelayedLabels(Sliced(F1()))``) and
give each prediction its slice key, ``predict(ids, y_score, slices=...)``; the key waits with
the prediction (counted by ``capacity``, saved and merged with it) and ``label`` feeds each row
to its slice: see ``delayed/slices.py``. (``batch_size`` must then be 1.)

Ids are ints or strings. All pending predictions share one dtype and row shape (a float score,
an int label, or a row of C scores), so that a batch of labels becomes one update of the metric.

Regression (issue #30): around a regression metric the predictions are real (float64: one per
id, a row of k outputs, or a ``[lower, upper]`` interval) and the labels real targets; NaN, inf
and predictions outside the metric's domain are refused by ``predict`` (``delayed/targets.py``);
``estimate()`` is a ``ValueError``.

Complexity: ``predict`` and ``label`` O(k) dictionary operations for k ids plus the metric's
update of the k labelled rows (with ``batch_size=B``: one update per B single labels, i.e. the
update's fixed cost divided by B); memory O(capacity + B) (about 150 bytes per pending
prediction plus its scores). Thread-safe: every call holds the wrapper's lock, and a fold runs
under it, so batches reach the metric whole and in label order.

Persistence stores the wrapped metric's state (prefix ``metric.``), the pending predictions
(prefix ``pending.``: ids, scores, weights, times) and the counters, so a restarted service
resumes with its backlog: see ``delayed/persist.py``.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from streammetrics._core.labels import numeric_or_labels
from streammetrics._core.metric import Metric, R_co
from streammetrics._core.params import Param, check_accumulator, check_param
from streammetrics._core.timestamps import Clock, call_time
from streammetrics._core.validation import as_numpy, check_weights, kept_predictions, one_score
from streammetrics.wrappers._base import Wrapper, resolve_clock

from .estimate import estimate_pending
from .order import reorder_tail
from .pending import (
    FLOAT_SPEC,
    INT64_RANGE,
    NoState,
    check_ids,
    pending_scalar,
)
from .persist import STATS, SavedPending
from .slices import KeyLayout, check_layout, key_bytes, row_keys, slices_argument
from .targets import RealChecks, real_labels
from .unknown import LabelReport, check_on_unknown, unknown_error

__all__ = ["DelayedLabels"]

_AT_LEAST_ONE = Param("int", "must be an int >= 1", low=1)
_TTL = Param("real", "must be a finite number of seconds > 0 or None", low=0.0, low_open=True, optional=True)
_MAX_DELAY = Param("real", "must be a finite number of seconds > 0", low=0.0, low_open=True)

_time = time.time  # the default clock: the per-request paths skip validating its readings



def _merge_snapshot(other: DelayedLabels) -> tuple[tuple[Metric, Any, Any, dict[str, int]], KeyLayout]:
    """What ``merge`` reads of another wrapper, taken under its lock: a copy of its metric, its
    pending predictions, their spec and counters, and its slice-key layout."""
    other._flush_locked()
    return ((other._metric.copy(), OrderedDict(other._pending), other._spec, dict(other._stats)),
            other._slice_names)


class DelayedLabels(SavedPending, RealChecks, Wrapper[R_co]):
    """Pending predictions that feed ``metric`` when their labels arrive (module docstring).

    Parameters
    ----------
    metric
        The accumulator (or MetricSet / Window / Decayed / Sliced) that labelled pairs feed: a
        classification metric (scores or hard predictions, class labels) or a regression metric
        (real predictions -- a float, a row of k outputs, a ``[lower, upper]`` interval -- and
        real targets; see ``delayed/targets.py``: what concerns a prediction alone, NaN / inf
        or a value outside the metric's domain, is refused by ``predict``).
    capacity
        Maximum number of pending predictions (>= 1); the oldest is evicted (and counted) first.
    ttl
        Seconds a prediction may wait for its label (None: forever); older ones are expired and
        counted.
    on_unknown
        An id labelled that is not pending: ``"skip"`` (default; old name ``"count"``) counts
        and skips it; ``"raise"``: ``ValueError`` (also a ``KeyError``), nothing labelled.
    clock
        Time source for ttl and ``max_delay`` (default :func:`time.time`); not persisted.
    batch_size
        Fold single labels into the metric in batches of this many pairs (1, the default: one
        update per label). See "Batched folding" in the module docstring.
    max_delay
        With ``batch_size > 1``: seconds a labelled pair may wait in the buffer before the
        next ``predict``/``label`` call folds it (> 0; default 1.0).

    Examples
    --------
    >>> from streammetrics import DelayedLabels, Recall
    >>> d = DelayedLabels(Recall(), capacity=1000)
    >>> d.predict(["a", "b", "c"], [0.9, 0.2, 0.7])
    >>> d.label(["c", "a"], [1, 0])  # returns how many pairs were fed
    2
    >>> d.compute(), d.stats()["pending"]
    (1.0, 1)
    >>> from streammetrics import MeanAbsoluteError
    >>> r = DelayedLabels(MeanAbsoluteError())
    >>> r.predict([1, 2, 3], [2.5, 0.0, 4.0])
    >>> r.label([3, 1], [3.0, 2.0]), r.compute()
    (2, 0.75)
    """

    family = "delayed"
    _params: ClassVar[tuple[str, ...]] = ("capacity", "ttl", "on_unknown", "batch_size", "max_delay")
    _param_defaults: ClassVar[Mapping[str, Any]] = {"capacity": 0, "on_unknown": "skip",
                                                     "batch_size": 1, "max_delay": 1.0}

    def __init__(self, metric: Metric[R_co], *, capacity: int = 100_000, ttl: float | None = None,
                 on_unknown: str = "skip", clock: Clock | None = None, batch_size: int = 1,
                 max_delay: float = 1.0) -> None:
        super().__init__()
        check_accumulator(metric, refused=(DelayedLabels,))
        sliced = metric.family == "sliced"
        family = metric.metric.family if sliced else metric.family  # type: ignore[attr-defined]
        if family not in ("classification", "regression"):
            raise ValueError(f"DelayedLabels: supports classification and regression metrics (or a "
                             f"Sliced of them), got family {family!r}")
        capacity = check_param(capacity, "capacity", _AT_LEAST_ONE)
        ttl = check_param(ttl, "ttl", _TTL)
        on_unknown = check_on_unknown(on_unknown)
        clock = resolve_clock(clock)
        batch_size = check_param(batch_size, "batch_size", _AT_LEAST_ONE)
        max_delay = check_param(max_delay, "max_delay", _MAX_DELAY)
        if sliced and batch_size > 1:
            raise ValueError(
                f"batch_size: batched folding is not available around Sliced (every label() "
                f"call updates its slices); got {batch_size!r}"
            )
        self._metric = metric
        self._sliced = sliced
        self._slice_names: KeyLayout = None  # key columns of the pending rows (around Sliced)
        self.capacity = int(capacity)
        self.ttl = None if ttl is None else float(ttl)
        self.on_unknown = on_unknown
        self.clock: Clock = clock
        self._state = NoState()
        # id -> (score, weight or None, time[, slice key around Sliced]), oldest first
        self._pending: OrderedDict[int | str, tuple[Any, ...]] = OrderedDict()
        self._spec: tuple[str, tuple[int, ...]] | None = None  # dtype and row shape of pending
        self._stats = dict.fromkeys(STATS, 0)
        self._expire_at = math.inf  # no pending prediction can expire before this time
        self._newest = -math.inf  # no pending prediction is newer (pending stays in time order)
        self.batch_size = int(batch_size)
        self.max_delay = float(max_delay)
        self._init_folding()
        self._init_real(metric)

    # -- configuration -------------------------------------------------------------------------
    @classmethod
    def _check_nested(cls, metric: Metric) -> None:
        if isinstance(metric, DelayedLabels):
            raise ValueError("state: DelayedLabels cannot wrap DelayedLabels")

    def _check_mergeable(self, other: Metric) -> None:
        """Like the base check, but the folding knobs (batch_size, max_delay) may differ."""
        if type(other) is not type(self):
            raise ValueError(f"merge: cannot merge {type(other).__name__} into {type(self).__name__}")
        mine, theirs = self._config(), other._config()
        for key in ("batch_size", "max_delay"):
            mine.pop(key)
            theirs.pop(key)
        if mine != theirs:
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            detail = ", ".join(f"{k}: {mine.get(k)!r} vs {theirs.get(k)!r}" for k in diff)
            raise ValueError(f"merge: configuration mismatch ({detail})")

    def __repr__(self) -> str:
        extra = (f", batch_size={self.batch_size}, max_delay={self.max_delay}"
                 if self.batch_size > 1 else "")
        return (f"DelayedLabels({self._metric!r}, capacity={self.capacity}, ttl={self.ttl}, "
                f"on_unknown={self.on_unknown!r}{extra})")

    @property
    def metric(self) -> Metric[R_co]:
        """The wrapped accumulator (buffered labelled pairs are folded in first)."""
        self.flush()
        return self._metric

    def _set_float_spec(self) -> None:
        """Pending predictions become Python-float scores (``ValueError`` if other kinds are
        pending); labelled pairs of another kind still buffered are folded first."""
        spec = self._spec
        if spec is not None and spec != FLOAT_SPEC:
            raise ValueError(
                f"y_score: pending predictions have dtype {spec[0]} and row shape "
                f"{spec[1]}; got <f8 () (keep one kind of prediction)"
            )
        self._check_kind(FLOAT_SPEC, None, "y_score")
        self._spec = FLOAT_SPEC
        if self._buffer and self._buffer_spec is not FLOAT_SPEC:
            self._flush_locked()

    # -- the service API -------------------------------------------------------------------------
    def update(self, *args: Any, **kwargs: Any) -> DelayedLabels:  # type: ignore[override]
        raise ValueError("DelayedLabels: feed it with predict(ids, y_score) and label(ids, y_true)")

    def _expire(self, now: float) -> None:
        """Drop the pending predictions older than ttl (from the front: oldest first) and note
        when the next one can expire (``_expire_at``, so the per-request paths skip the walk)."""
        if self.ttl is None:
            return
        cutoff = now - self.ttl
        pending = self._pending
        while pending:
            first = next(iter(pending))
            t = pending[first][2]
            if t > cutoff:
                self._expire_at = t + self.ttl
                return
            pending.popitem(last=False)
            self._stats["expired"] += 1
        self._spec = None
        self._expire_at = math.inf

    def predict(self, ids: Any, y_score: Any, *, sample_weight: Any = None,
                timestamp: float | None = None, slices: Any = None) -> None:
        """Store predictions (one id with one score / row of scores, or a batch) until their
        labels arrive. Validated and atomic; O(k). A kind of prediction (dtype, row shape) the
        metric refuses whatever the label -- rows of 3 scores for a binary metric -- is a
        ``ValueError`` here (a dry run of zero rows, once per kind), not from a later ``label``.

        ``timestamp`` (default: the clock) may be in any order: a prediction older than pending
        ones takes its place in time order (O(j) for the j newer ones), so ``ttl`` expiry and
        ``capacity`` eviction always drop the oldest by prediction time.

        ``slices`` (required around :class:`~streammetrics.Sliced`, refused otherwise): one
        slice key per id, or a tuple / dict of key columns, as ``Sliced.update`` takes them;
        each pending prediction keeps its key, and its label feeds the slice it names.
        """
        if slices is not None or self._sliced:
            self._predict_batch(ids, y_score, sample_weight, timestamp, slices)
            return
        if type(y_score) is float and sample_weight is None and timestamp is None \
                and ((t := type(ids)) is str or (t is int and INT64_RANGE[0] <= ids <= INT64_RANGE[1])) \
                and y_score == y_score and self.clock is _time:
            # The per-request path: one id, a Python float score (not NaN), the default clock.
            # Everything else (and every error) goes through the general paths below.
            if self._regression:
                self._check_real_one(y_score)  # finite, in the metric's domain of predictions
            self._store_one(ids, y_score, _time())
            return
        if type(y_score) is float and sample_weight is None and type(ids) in (int, str):
            self._predict_one(ids, y_score, timestamp)  # one id, another clock or a timestamp
            return
        self._predict_batch(ids, y_score, sample_weight, timestamp, None)

    def _predict_batch(self, ids: Any, y_score: Any, sample_weight: Any, timestamp: float | None,
                       slices: Any) -> None:
        """The general ``predict``: validated and atomic (the slice keys too). O(k)."""
        if slices is not None and not self._sliced:
            raise ValueError(f"slices: only a DelayedLabels around Sliced takes slice keys; "
                             f"this one wraps {type(self._metric).__name__}")
        keys, single = check_ids(ids)
        s = as_numpy(y_score, "y_score")
        if single:
            s = s[None]
        k = len(keys)
        if s.ndim == 0 or s.shape[0] != k:
            raise ValueError(f"y_score: expected {k} rows (one per id), got shape {s.shape}")
        if not self._regression:
            s = kept_predictions(s, "y_score")
        if single and sample_weight is not None and np.ndim(sample_weight) == 0:
            sample_weight = [sample_weight]
        w = check_weights(sample_weight, k)
        if self._regression:  # float64, finite, in the metric's domain (delayed/targets.py)
            s = self._check_real(s, w)
        names: KeyLayout = None
        row_key: list[Any] = []
        if self._sliced:
            names, row_key = row_keys(slices, k)
            self._metric.check_key_names(names)  # type: ignore[attr-defined]
        now = call_time(self.clock, timestamp)
        spec = (s.dtype.str, s.shape[1:])
        if spec == FLOAT_SPEC:
            spec = FLOAT_SPEC  # the fast paths compare by identity
        if k:
            self._check_kind(spec, names, "y_score")
        with self._lock:
            self._expire(now)
            if self._spec is not None and spec != self._spec and k:
                raise ValueError(
                    f"y_score: pending predictions have dtype {self._spec[0]} and row shape "
                    f"{self._spec[1]}; got {spec[0]} {spec[1]} (keep one kind of prediction)"
                )
            if self._sliced and self._pending and k:
                check_layout(self._slice_names, names, "slices")
            if spec == self._spec:
                spec = self._spec  # keep one object per kind (the fast paths compare identity)
            if self._buffer and (spec != self._buffer_spec or now >= self._flush_at):
                self._flush_locked()
            if k:
                self._spec = spec
                self._slice_names = names
            pending = self._pending
            rows = list(s.copy())
            for i, key in enumerate(keys):
                if key in pending:
                    del pending[key]
                    self._stats["replaced"] += 1
                entry = (rows[i], None if w is None else float(w[i]), now)
                pending[key] = entry + (row_key[i],) if self._sliced else entry
            if now < self._newest:
                reorder_tail(pending, k, now)  # an older timestamp: put in time order
            else:
                self._newest = now
            if self.ttl is not None and k:
                self._expire_at = min(self._expire_at, now + self.ttl)
            self._stats["predicted"] += k
            while len(pending) > self.capacity:
                pending.popitem(last=False)
                self._stats["evicted"] += 1

    def _predict_one(self, key: int | str, score: float, timestamp: float | None) -> None:
        """``predict`` of one id with a Python float score: no numpy on the way."""
        score = one_score(score, "y_score")  # NaN: the batch path's message
        if self._regression:
            self._check_real_one(score)
        if type(key) is int and not INT64_RANGE[0] <= key <= INT64_RANGE[1]:
            check_ids(key)  # raises, with the batch path's message
        now = call_time(self.clock, timestamp)
        self._store_one(key, score, now)

    def _store_one(self, key: int | str, score: float, now: float) -> None:
        """Store one validated prediction (a Python float score) made at ``now``. O(1)."""
        with self._lock:
            if now >= self._expire_at:  # only when the oldest pending prediction may expire
                self._expire(now)
            if self._spec is not FLOAT_SPEC:
                self._set_float_spec()
            if now >= self._flush_at:
                self._flush_locked()
            pending = self._pending
            stats = self._stats
            if key in pending:
                del pending[key]
                stats["replaced"] += 1
            pending[key] = (score, None, now)  # a Python float: float64 when stacked
            if now < self._newest:
                reorder_tail(pending, 1, now)  # an older timestamp: put in time order
            else:
                self._newest = now
            if self.ttl is not None and now + self.ttl < self._expire_at:
                self._expire_at = now + self.ttl
            stats["predicted"] += 1
            if len(pending) > self.capacity:
                pending.popitem(last=False)
                stats["evicted"] += 1

    def label(self, ids: Any, y_true: Any, *, timestamp: float | None = None) -> int:
        """Feed the labelled pending predictions to the metric; returns how many were fed.

        An id that is not pending: counted and skipped, or ``ValueError`` with nothing applied,
        per ``on_unknown``. Labels the metric rejects: ``ValueError``, nothing applied.
        O(k) plus the metric's update.
        """
        if type(ids) in (int, str) and (type(y_true) is int or (type(y_true) is float and self._regression)) \
                and timestamp is None and not self._sliced:
            return self._label_one(ids, y_true)  # the per-request path
        return self.label_report(ids, y_true, timestamp=timestamp).fed

    def label_report(self, ids: Any, y_true: Any, *, timestamp: float | None = None) -> LabelReport:
        """:meth:`label`, also returning the ids skipped as unknown (``on_unknown="skip"``)."""
        if type(ids) in (int, str) and (type(y_true) is int or (type(y_true) is float and self._regression)) \
                and timestamp is None and not self._sliced:
            fed = self._label_one(ids, y_true)
            return LabelReport(fed, () if fed else (ids,))
        keys, single = check_ids(ids)
        # real targets (regression: float64, finite, indexed as given), or labels as users have
        # them (classes=)
        y = real_labels(y_true) if self._regression else np.asarray(numeric_or_labels(y_true, "y_true"))
        if single:
            y = y[None]
        k = len(keys)
        if y.ndim == 0 or y.shape[0] != k:
            raise ValueError(f"y_true: expected {k} labels (one per id), got shape {y.shape}")
        now = call_time(self.clock, timestamp)
        with self._lock:
            self._expire(now)
            self._flush_locked()  # buffered pairs arrived first
            pending = self._pending
            found = [i for i, key in enumerate(keys) if key in pending]
            unknown = [key for key in keys if key not in pending] if len(found) < k else []
            if unknown and self.on_unknown == "raise":
                raise unknown_error(unknown[0], len(unknown), k)
            try:
                self._feed([pending[keys[i]] for i in found], y if len(found) == k else y[found])
            except ValueError as exc:
                if len(found) == k:
                    raise
                raise ValueError(f"{exc} (indices count the {len(found)} ids of this call that "
                                 f"were pending, in call order)") from None
            for i in found:
                del pending[keys[i]]
            if not pending:
                self._spec = None
            self._stats["labelled"] += len(found)
            self._stats["unknown"] += len(unknown)
            return LabelReport(len(found), tuple(unknown))

    def _feed(self, entries: list[tuple[Any, ...]], labels: np.ndarray) -> None:
        """Feed the pending ``entries`` with their ``labels`` to the metric (one update; the
        lock is held). ``ValueError`` from the metric: nothing changed."""
        if not entries:
            return
        if len(entries) == 1 and labels.ndim == 1 and np.ndim(entries[0][0]) == 0 and not self._sliced:
            # one binary sample: the metrics' per-sample (scalar) paths
            self._metric.update(labels[0].item(), pending_scalar(entries[0][0]), sample_weight=entries[0][1])
            return
        scores = np.stack([e[0] for e in entries])
        weights = None
        if any(e[1] is not None for e in entries):
            weights = np.array([1.0 if e[1] is None else e[1] for e in entries])
        kwargs: dict[str, Any] = {}
        if self._sliced:  # each row to the slice it was predicted in
            kwargs["slices"] = slices_argument(self._slice_names, [e[3] for e in entries])
        self._metric.update(labels, scores, sample_weight=weights, **kwargs)

    def _label_one(self, key: int | str, y: int | float) -> int:
        """``label`` of one id with a Python int label (regression: or float): no numpy on the
        way (buffered when ``batch_size > 1``)."""
        now = _time() if self.clock is _time else float(self.clock())
        with self._lock:
            if now >= self._expire_at:
                self._expire(now)
            pending = self._pending
            entry = pending.get(key)
            if entry is None:
                if self.on_unknown == "raise":
                    raise unknown_error(key, 1, 1)
                self._stats["unknown"] += 1
                return 0
            score, weight, _ = entry
            if self.batch_size > 1:
                spec = self._spec
                seen = self._ok_labels.get(y) if spec is FLOAT_SPEC and spec is self._ok_spec else None
                if seen is None or not seen[0] <= score <= seen[1]:
                    self._check_label(y, score, weight)  # ValueError: nothing changed
                buf = self._buffer
                if buf and spec is not self._buffer_spec and spec != self._buffer_spec:
                    self._flush_locked()
                    buf = self._buffer
                if not buf:
                    self._flush_at = now + self.max_delay
                    self._buffer_spec = spec
                buf.append((y, score, weight))
                del pending[key]
                if not pending:
                    self._spec = None
                self._stats["labelled"] += 1
                if len(buf) >= self.batch_size or now >= self._flush_at:
                    self._flush_locked()
                return 1
            if np.ndim(score) == 0:
                self._metric.update(y, pending_scalar(score), sample_weight=weight)
            else:
                self._metric.update(np.array([y]), score[None],
                                    sample_weight=None if weight is None else [weight])
            del pending[key]
            if not pending:
                self._spec = None
            self._stats["labelled"] += 1
            return 1

    def estimate(self, *, include_labelled: bool = False) -> Any:
        """The wrapped metric *estimated* over the pending predictions (CBPE, see
        :class:`~streammetrics.monitoring.Estimated`), next to :meth:`compute`'s realised value.

        Each pending prediction (a probability of class 1, or a row of C probabilities)
        counts as every class weighted by its probability (times its weight); with
        ``include_labelled=True`` the labelled pairs count too, as they are. Around ``Sliced``
        each pending row counts in its slice. A service alarms when, for the same rows, the
        realised value drifts from the estimate (calibration drift: docs/monitoring.md).

        Parameters
        ----------
        include_labelled : bool, default=False
            Also count the labelled pairs (realised) with the estimate of the pending ones.

        Returns
        -------
        Any
            The value as :meth:`compute` gives it (nan with an ``UndefinedMetricWarning`` while
            nothing is pending). ``ValueError`` for hard-label predictions, a wrapped ``Window``
            or ``Decayed``, a regression metric (CBPE estimates a classifier's metric from its
            probabilities; a regression prediction carries no distribution of its target), or a
            metric ``Estimated`` refuses. O(pending · C) plus the wrapped
            metric's update and read.

        Examples
        --------
        >>> from streammetrics import AUROC, DelayedLabels
        >>> d = DelayedLabels(AUROC())
        >>> d.predict([1, 2, 3, 4], [0.9, 0.3, 0.8, 0.2])
        >>> d.label([1, 2], [1, 0])
        2
        >>> d.compute(), round(d.estimate(), 4)  # realised on ids 1, 2; expected on ids 3, 4
        (1.0, 0.8)
        """
        return estimate_pending(self, include_labelled)

    def expire(self, timestamp: float | None = None) -> None:
        """Apply the ttl now (it is also applied on every predict/label/stats call)."""
        with self._lock:
            self._expire(call_time(self.clock, timestamp))

    def stats(self) -> dict[str, int]:
        """Counters (see the module docstring) after applying the ttl."""
        with self._lock:
            self._expire(float(self.clock()))
            return {**self._stats, "pending": len(self._pending), "buffered": len(self._buffer)}

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    # -- accumulator protocol ----------------------------------------------------------------------
    def compute(self) -> R_co:
        """The wrapped metric's value over the labelled pairs (buffered pairs folded in first)."""
        with self._lock:
            self._flush_locked()
        return self._metric.compute()  # the metric's own lock: predictions go on meanwhile

    def _compute(self) -> R_co:
        self._flush_locked()
        return self._metric._compute()

    def merge(self, *others: Metric) -> DelayedLabels:
        """Add other wrappers' metrics, counters and pending predictions (an id pending in both
        keeps the newer prediction and counts as replaced). Capacity and ttl then apply."""
        taken = self._snapshots(others, _merge_snapshot)
        snaps = [snap for snap, _ in taken]
        layouts: list[KeyLayout] = [layout for _, layout in taken]
        with self._lock:
            self._flush_locked()
            names = self._slice_names
            held = bool(self._pending)
            for (_, pending, spec, _), theirs in zip(snaps, layouts, strict=True):
                if spec is not None and self._spec is not None and spec != self._spec:
                    raise ValueError("merge: pending predictions of different dtype or shape")
                if pending:  # the pending rows' key columns must agree (around Sliced)
                    if held:
                        check_layout(names, theirs, "merge")
                    names, held = theirs, True
            self._metric.merge(*[snap[0] for snap in snaps])  # one call: all or nothing
            self._slice_names = names
            for _, pending, spec, stats in snaps:
                for key, entry in pending.items():
                    if key in self._pending:
                        self._stats["replaced"] += 1
                        if self._pending[key][2] > entry[2]:
                            continue
                        del self._pending[key]
                    self._pending[key] = entry
                if spec is not None:
                    self._spec = spec
                for name in STATS:
                    self._stats[name] += stats[name]
            self._pending = OrderedDict(sorted(self._pending.items(), key=lambda kv: kv[1][2]))
            self._newest = max([self._newest] + [e[2] for e in self._pending.values()][-1:])
            self._expire_at = -math.inf  # recomputed by the next call
            while len(self._pending) > self.capacity:
                self._pending.popitem(last=False)
                self._stats["evicted"] += 1
        return self

    def reset(self) -> DelayedLabels:
        with self._lock:
            self._metric.reset()
            self._pending.clear()
            self._expire_at = math.inf
            self._newest = -math.inf
            self._spec = None
            self._slice_names = None
            self._buffer = []
            self._buffer_spec = None
            self._flush_at = math.inf
            self._stats = dict.fromkeys(STATS, 0)
        return self

    @property
    def nbytes(self) -> int:
        with self._lock:
            self._flush_locked()
            rows = sum(np.asarray(e[0]).nbytes + 150 for e in self._pending.values())
            if self._sliced:  # each pending row's slice key (a str, int or tuple of them)
                rows += sum(key_bytes(e[3]) for e in self._pending.values())
            return self._metric.nbytes + rows
