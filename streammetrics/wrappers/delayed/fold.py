"""Batched folding of :class:`~streammetrics.DelayedLabels` (``batch_size > 1``).

For per-request services: one metric update per labelled
pair costs the metric's whole per-call overhead (validation, locks, every member of a
MetricSet, every window/decay bookkeeping step) for one row. With ``batch_size=B`` a single
label (``label(id, int)``) is checked and buffered instead, and the buffer is folded into the
metric as one batch update -- rows in arrival order, so the value is exactly the one the
per-pair updates would have given (count windows hold the same last W rows, sample-decay
weighs the same rows, to rounding) -- when

* B pairs are buffered;
* the oldest buffered pair is ``max_delay`` seconds old (checked on every ``predict`` /
  ``label`` call, so under traffic the metric lags by at most B pairs and ``max_delay`` s);
* anything reads or moves the metric: ``compute()``, ``metric``, ``flush()``, ``state_dict()``
  / ``save`` / checkpoints, ``merge``, ``copy``, ``nbytes`` and the Prometheus collector.

So every read through the wrapper is exact and up to date; only code that reaches into the
wrapped metric while holding a reference from before can see it lag. Time-based wrapped
metrics (``Window(seconds=...)``, ``Decayed(half_life_seconds=...)``) stamp the rows with the
fold time, at most ``max_delay`` s after the label arrived under traffic (an idle service should
call ``flush()`` from a timer, as ``examples/service.py`` does). A label is validated when it
arrives: the first label of each value (per kind of prediction; for hard predictions, per
(label, prediction) value pair) is checked against the metric with a dry run of its update (so
a pair the metric rejects is still a ``ValueError`` from ``label`` with nothing applied); the
range of scores (for a row of scores, also of its sums) that passed with each label is
remembered, so later pairs cost a dictionary look-up and a few comparisons, and a score outside
that range (e.g. 1.5 for a ``scores="probability"`` metric, or a probability row that does not
sum to 1) gets its own dry run (``delayed/checks.py``); a real target (regression) always
does. Batches of ids, and labels with
an explicit ``timestamp``, fold the buffer and then update the metric directly.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from streammetrics._core.metric import Metric

from .checks import covered, dry_run, kind_error, summary, widened
from .pending import pending_scalar

__all__ = ["BatchedFolding"]


class BatchedFolding:
    """The buffer of labelled pairs of ``DelayedLabels`` and the label-time checks (a mixin:
    ``DelayedLabels`` holds the metric, the lock, the counters and the kind of the pending
    predictions)."""

    _metric: Metric
    _lock: threading.RLock
    _stats: dict[str, int]
    _spec: tuple[str, tuple[int, ...]] | None
    _sliced: bool
    _regression: bool

    def _init_folding(self) -> None:
        """The empty buffer and label-check maps (``__init__``)."""
        # Labelled (label, score, weight) triples waiting to be folded in, the time the oldest
        # arrived plus max_delay, and their kind of prediction.
        self._buffer: list[tuple[Any, Any, float | None]] = []
        self._flush_at = math.inf  # the oldest buffered pair's arrival + max_delay
        self._buffer_spec: tuple[str, tuple[int, ...]] | None = None
        # kind of prediction -> {label (hard kinds: (label, prediction)): the (lowest, highest)
        # score that passed with it}
        self._checked: dict[Any, dict[Any, tuple[float, ...]]] = {}
        self._ok_spec: Any = None  # the kind whose map is ``_ok_labels`` (the current one)
        self._ok_labels: dict[Any, tuple[float, ...]] = {}
        self._kinds_ok: set[Any] = set()  # (kind, slice-key layout) the metric takes

    def _check_kind(self, spec: tuple[str, tuple[int, ...]], names: Any, what: str) -> None:
        """``ValueError`` (naming ``what``) if the metric refuses every prediction of this
        kind (dtype and row shape), e.g. rows of 3 scores for a binary metric: a dry run of zero
        rows (``checks.kind_error``), once per kind and slice-key layout."""
        key = (spec, names)
        if key in self._kinds_ok:
            return
        error = kind_error(self._metric, spec, (names,) if self._sliced else None)
        if error is not None:
            raise ValueError(f"{what}: {type(self._metric).__name__} refuses predictions of dtype "
                             f"{spec[0]} and row shape {spec[1]} ({error})")
        self._kinds_ok.add(key)

    def flush(self) -> int:
        """Fold the buffered labelled pairs into the metric now; returns how many were folded.
        Call it from a timer in an idle service (reads through the wrapper flush anyway)."""
        with self._lock:
            return self._flush_locked()

    def _flush_locked(self) -> int:
        """One batch update of the buffered pairs, in arrival order (the lock is held).

        Atomic: the buffer is emptied only once the update succeeded. If the wrapped metric
        raises anything but a ``ValueError`` (updates are atomic, so nothing was folded), the
        pairs stay buffered -- they were already counted as labelled -- and the error
        propagates; on the pair-by-pair fallback, the pairs not yet folded stay buffered.
        """
        buf = self._buffer
        if not buf:
            return 0
        labels = np.array([e[0] for e in buf], dtype=np.float64 if self._regression else np.int64)
        scores = np.array([e[1] for e in buf], dtype=np.float64) if type(buf[0][1]) is float \
            else np.stack([e[1] for e in buf])
        weights = None
        if any(e[2] is not None for e in buf):
            weights = np.array([1.0 if e[2] is None else e[2] for e in buf])
        try:
            self._metric.update(labels, scores, sample_weight=weights)
        except ValueError:
            # Every pair passed a dry run when it arrived, so this takes a metric whose rules
            # depend on more than the label value; fold pair by pair and count the refusals.
            i = 0
            try:
                for i in range(len(buf)):
                    try:
                        self._metric.update(labels[i:i + 1], scores[i:i + 1],
                                            sample_weight=None if weights is None else weights[i:i + 1])
                    except ValueError:
                        self._stats["rejected"] += 1
            except BaseException:
                self._buffer = buf[i:]  # pair i and later were not folded
                raise
        self._buffer = []
        self._buffer_spec = None
        self._flush_at = math.inf
        return len(buf)

    def _check_label(self, y: float, score: Any, weight: float | None) -> None:
        """``ValueError`` if the metric rejects the pair; a dry run unless pairs with this label
        and kind already passed over ranges that hold it (see ``delayed/checks.py``). Real
        targets (regression) are not remembered (they seldom repeat): always a dry run."""
        if self._regression:
            dry_run(self._metric, y, score, weight, pending_scalar)
            return
        spec = self._spec
        if spec is not self._ok_spec:
            self._ok_labels = self._checked.setdefault(spec, {})
            self._ok_spec = spec
        # Hard predictions (int/bool kinds) are checked by the metric like labels, so their
        # value is part of what passed.
        key: Any = y
        if spec is not None and spec[0][1] in "iub" and np.ndim(score) == 0:
            key = (y, pending_scalar(score))
        summ = summary(score)
        seen = self._ok_labels.get(key)
        if not covered(seen, summ):
            dry_run(self._metric, y, score, weight, pending_scalar)
            self._ok_labels[key] = widened(seen, summ)
