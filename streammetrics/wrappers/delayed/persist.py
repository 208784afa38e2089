"""The saved form of :class:`~streammetrics.DelayedLabels`: its state arrays and their loading.

Persistence stores the wrapped metric's state (prefix ``metric.``), the pending predictions
(prefix ``pending.``: ids, scores, weights, times; around ``Sliced`` their slice keys) and the
counters (prefix ``stats.``), so a restarted service resumes with its backlog. A loaded file is
untrusted: its counters, pending predictions and keys are checked, and its kind of prediction
must be one the wrapped metric takes (regression: the predictions' own checks too). Buffered
labelled pairs are folded before saving, so a file never holds a buffer.

Complexity: O(pending) plus the wrapped metric's ``state_dict`` / load.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import split_entries
from streammetrics._core.metric import RESERVED_KEYS

from .checks import kind_error
from .fold import BatchedFolding
from .pending import load_pending, pending_arrays
from .slices import KeyLayout, key_arrays, load_key_arrays
from .targets import check_loaded

__all__ = ["STATS", "SavedPending"]

#: The counters of ``DelayedLabels.stats()`` that a file holds (``pending`` / ``buffered`` are
#: counted when read).
STATS = ("predicted", "labelled", "replaced", "evicted", "expired", "unknown", "rejected")
_OPTIONAL_STATS = {"rejected"}  # absent from files written before batched folding
_MSEP = "metric."
_PSEP = "pending."


class SavedPending(BatchedFolding):
    """``_state_arrays`` and ``_load_arrays`` of ``DelayedLabels`` (a mixin over its batched
    folding: ``DelayedLabels`` holds the pending predictions, their kind and the clock's
    bookkeeping)."""

    _pending: OrderedDict[int | str, tuple[Any, ...]]
    _slice_names: KeyLayout
    _expire_at: float
    _newest: float
    capacity: int

    def _state_arrays(self) -> dict[str, Any]:
        self._flush_locked()  # the caller (state_dict) holds the lock
        inner = self._metric.state_dict()
        out: dict[str, Any] = {_MSEP + k: v for k, v in inner.items() if k not in RESERVED_KEYS}
        for name, arr in pending_arrays(self._pending).items():
            out[_PSEP + name] = arr
        if self._sliced:  # each pending row's slice key, in the same order
            keys = [e[3] for e in self._pending.values()]
            for name, arr in key_arrays(self._slice_names, keys).items():
                out[_PSEP + name] = arr
        for name in STATS:
            out["stats." + name] = self._stats[name]
        return out

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        inner, pend, counters = split_entries(arrays, (_MSEP, _PSEP, "stats."), "DelayedLabels")
        stats: dict[str, int] = {}
        for name, value in counters.items():
            if name not in STATS:
                raise ValueError(f"state: unexpected entry {'stats.' + name!r} in DelayedLabels")
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"state: counter {'stats.' + name!r} must be an int >= 0, got {value!r}")
            stats[name] = int(value)
        missing = set(STATS) - set(stats) - _OPTIONAL_STATS
        if missing:
            raise ValueError(f"state: DelayedLabels counters missing: {sorted(missing)}")
        for name in _OPTIONAL_STATS:
            stats.setdefault(name, 0)
        names: KeyLayout = None
        row_key = None
        if self._sliced:
            extra: dict[str, Any] = {name: pend.pop(name) for name in ("slice_names", "slice_keys")
                                     if name in pend}
            k = np.shape(pend.get("ids_int", ()))[0] if np.ndim(pend.get("ids_int", ())) == 1 else 0
            names, row_key = load_key_arrays(extra, k)
        pending, spec, newest = load_pending(pend, self.capacity, row_key)
        metric = type(self._metric)._from_config(self._metric._config())
        metric._load_arrays(inner)
        if spec is not None:
            error = kind_error(metric, spec, (names,) if self._sliced else None)
            if error is not None:
                raise ValueError(f"state: pending.scores of dtype {spec[0]} and row shape {spec[1]} "
                                 f"are refused by the wrapped {type(metric).__name__} ({error})")
            if self._regression:  # what predict checks: float64, finite, in the metric's domain
                check_loaded(metric, list(pending.values()))
        self._metric = metric
        self._pending = pending
        self._spec = spec
        self._slice_names = names
        self._stats = stats
        self._expire_at = -math.inf  # recomputed by the next call
        self._newest = newest
        self._buffer = []
        self._buffer_spec = None
        self._flush_at = math.inf

