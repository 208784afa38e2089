"""``Sliced``: any accumulator per segment of the stream, with the disparities people report.

``Sliced(F1()).update(y, p, slices=country)`` keeps one F1 per country (regression metrics
alike; ``Sliced(Drift(ref)).update(y_score, slices=country)`` and ``Sliced(Estimated(m))``,
which take no labels, the drift or estimated performance per country); ``compute()`` is
``{country: f1}``, ``overall()`` the F1 of every row, and ``group_min``, ``group_max``,
``difference`` and ``ratio`` summarise the spread between slices as Fairlearn's ``MetricFrame``
does. Several key columns (``slices={"country": c, "device": d}`` or a tuple of arrays) give the
crossed slices (keys are tuples) and, beside them, each column alone (:meth:`Sliced.marginal`).

Each slice is a full accumulator of the wrapped kind: exact stays exact, bounded stays certified,
and intervals (Wilson, DeLong) exist per slice where the wrapped metric has them.

Cost: one grouping pass per batch whatever the number of slices. Keys are factorised once
(small-range integers are their own codes; strings one sort). Confusion metrics (and MetricSets
of them sharing one state) are validated once and counted for all slices by one ``bincount`` over
(slice, cell); other metrics get their rows grouped by one stable ``argsort`` and each slice's
state its contiguous block. Memory: slices x the wrapped state (``nbytes``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.metric import Metric
from streammetrics._core.params import Param, check_accumulator, check_param
from streammetrics.wrappers.metricset import MetricSet

from .controls import check_controls, control_groups, controls_param
from .keys import OTHER, OtherSlice
from .results import SlicedResults, UndefinedSlice
from .state import SlicedState, order_dependent
from .store import SliceStore, states_of, twin_of, wrapped


def _states(metric: Metric) -> list[Any]:
    """The states whose contents tell whether ``metric`` is empty (an Estimated's: its
    wrapped metric's and its moments)."""
    if metric.family == "estimated":
        return [*states_of(wrapped(metric)), metric._state]
    return states_of(metric)

__all__ = ["Sliced", "UndefinedSlice", "OTHER", "OtherSlice"]

#: The families whose accumulators Sliced takes (``Metric.family``).
FAMILIES = ("classification", "regression", "drift", "estimated")
class _NotGiven:
    """The default of ``y_pred``: not given (Drift and Estimated take the scores alone)."""

    def __repr__(self) -> str:
        return "<not given>"


#: ``update(y_score, *, slices, ...)`` of a metric without labels: no ``y_pred`` given.
_SCORES_ONLY: Any = _NotGiven()
OVERFLOWS = ("error", "other")
METHODS = ("between_groups", "to_overall")
ERRORS = ("raise", "coerce")


_MAX_SLICES = Param("int", "must be an int >= 1", low=1)
_MIN_COUNT = Param("int", "must be an int >= 0", low=0)
_OVERFLOW = Param("choice", f"must be one of {OVERFLOWS}", choices=OVERFLOWS)
_METHOD = Param("choice", f"must be one of {METHODS}", choices=METHODS)
_ERRORS = Param("choice", f"must be one of {ERRORS}", choices=ERRORS)


class Sliced(Metric[SlicedResults]):
    """One accumulator per slice of the stream (see the module docstring).

    Parameters
    ----------
    metric : Metric or MetricSet
        An empty accumulator of a family with a per-row update: classification (a confusion
        or ranking metric, a calibration metric), regression, ``monitoring.Drift`` or
        ``monitoring.Estimated``; or a ``Window`` or ``Decayed`` around one, or a MetricSet of
        them. Every slice holds an accumulator of its class and configuration. Retrieval
        metrics (query-grouped) and ``DelayedLabels`` are refused, the error saying which
        families are taken (``DelayedLabels(Sliced(metric))`` slices delayed labels).
    max_slices : int, default 10_000
        The most distinct slice keys kept (per key column alone, and crossed).
    overflow : {"error", "other"}, default "error"
        A key beyond ``max_slices``: ``"error"`` refuses the batch (``ValueError`` naming the
        cap; nothing changes); ``"other"`` folds its rows into the slice ``OTHER``, which counts
        the distinct keys it absorbed (:attr:`n_absorbed`): exactly up to 4096 keys (it keeps
        them, to count shared keys once across merges), then as a HyperLogLog estimate (16 KiB,
        about 0.8 % relative error), so its memory stays bounded whatever the stream. New keys
        of a batch take the free slots in an order fixed by the batch's keys (sorted, for
        integers).
    min_count : int, default 0
        A slice with fewer rows is reported as :class:`UndefinedSlice` (with its row count) and
        left out of the disparity summaries.
    controls : str or sequence of str, optional
        The key columns that are control features (Fairlearn's ``MetricFrame(...,
        control_features=...)``): the names of some of the columns given as a dict
        (``slices={"region": r, "sex": s}``; a tuple's columns are ``"key0"``, ``"key1"``,
        ...), at least one column left as sensitive. ``compute()`` still gives every crossed
        slice; :meth:`overall` and the disparity summaries (``group_min``, ``group_max``,
        ``difference``, ``ratio``) give one value per control group, ``{control key: value}``
        (a tuple key for several control columns), computed over the slices of that group
        (``"to_overall"``: against that group's overall value). Not with ``overflow="other"``
        (a control group's rows must all keep their keys) nor with windows or decay (a group's
        overall value is the merge of its slices).

    Notes
    -----
    ``update(y_true, y_pred, *, slices, sample_weight=None, **kwargs)`` (classification and
    regression; regression targets of shape (n,) or (n, k), checked once for the whole batch,
    one number of outputs k for every slice); ``update(y_score, *, slices, sample_weight=None)``
    for the metrics without labels (``Drift``: scores, ``Estimated``: probabilities), whose
    labels are refused (``TypeError``). ``slices`` gives one
    key per row: an array or list, or a tuple of arrays / a dict of named arrays for several key
    columns (crossed slices keyed by tuples, plus each column alone). A key is a string, an
    integer in [-2**63, 2**64) (booleans count as 0/1), a float (grouped by value as Fairlearn's
    ``MetricFrame`` groups a float feature: ``-0.0`` and ``0.0`` one slice keyed as it first
    occurred, ``1`` and ``1.0`` one slice, NaN refused), or a tuple of strings, integers,
    booleans and finite floats (``zip(a, b)``, a pandas ``MultiIndex``; not nested); the keys of
    one column are all of one kind (strings, numbers or tuples: ``1`` and ``"1"`` would be one
    exported label). A key that
    could not be saved or exported (a lone surrogate, a 5000-digit integer, a masked entry) is
    refused with a ``ValueError`` naming it; nothing changes. Further keyword arguments
    (``timestamp=`` of a time window) go to the wrapped states, per-row arrays split by slice.

    Complexity: ``update`` O(n) for small-range integer keys, O(n log n) for strings (one sort)
    plus the wrapped metric's cost on the batch; ``compute`` O(slices x the wrapped compute),
    vectorised over slices for binary ratio metrics (precision, recall, F-beta, ...) and their
    Wilson intervals; ``save`` / ``load`` O(state size), the file's header independent of the
    number of slices.
    Overflow slices and undefined slices are left out of ``group_min``/``group_max``/
    ``difference``/``ratio``. A slice value that is a dict (a MetricSet's, a Drift's
    statistics) is summarised per key. Drift: ``group_max`` is the worst segment per
    statistic; ``difference`` and ``ratio`` are refused (a drift statistic is a distance
    from the reference already; see docs/slices.md).

    Examples
    --------
    >>> import numpy as np, streammetrics as sm
    >>> s = sm.Sliced(sm.Recall())
    >>> _ = s.update(np.array([1, 1, 0, 1]), np.array([1, 0, 0, 1]), slices=["a", "a", "b", "b"])
    >>> s.compute()
    {'a': 0.5, 'b': 1.0}
    >>> s.difference()
    0.5
    >>> mae = sm.Sliced(sm.MeanAbsoluteError())
    >>> mae.update([1.0, 2.0, 4.0], [1.5, 2.0, 3.0], slices=["a", "b", "b"]).compute()
    {'a': 0.5, 'b': 0.5}
    >>> from streammetrics.monitoring import Drift
    >>> d = sm.Sliced(Drift([0.1, 0.4, 0.5, 0.9])).update([0.1, 0.8, 0.9], slices=["a", "b", "b"])
    >>> round(d.compute()["b"]["ks"], 3)
    0.75
    """

    family = "sliced"

    def __init__(self, metric: Metric, *, max_slices: int = 10_000, overflow: str = "error",
                 min_count: int = 0, controls: str | Sequence[str] | None = None) -> None:
        super().__init__()
        check_accumulator(metric, refused=(Sliced,))
        if metric.family == "delayed":
            raise ValueError(
                "metric: to slice delayed labels, wrap the other way round: "
                "DelayedLabels(Sliced(metric), ...), and give each prediction its slice key "
                "with predict(ids, y_score, slices=...)"
            )
        if metric.family not in FAMILIES:
            raise ValueError(
                f"metric: Sliced takes classification and regression accumulators "
                f"(update(y_true, y_pred)), monitoring.Drift and monitoring.Estimated "
                f"(update(y_score)), a Window, Decayed or MetricSet of them; got "
                f"{type(metric).__name__} of family {metric.family!r}"
            )
        inner = getattr(metric, "metric", None) if metric.family == "estimated" else None
        if inner is not None and inner.family == "sliced":
            raise ValueError("metric: this Estimated wraps a Sliced already: use either "
                             "Estimated(Sliced(metric)) or Sliced(Estimated(metric)), not both")
        self.max_slices = check_param(max_slices, "max_slices", _MAX_SLICES)
        self.overflow = overflow = check_param(overflow, "overflow", _OVERFLOW)
        self.min_count = check_param(min_count, "min_count", _MIN_COUNT)
        self.controls = controls_param(controls)
        if self.controls is not None and overflow == "other":
            raise ValueError("controls: not with overflow='other': a control group's overall value "
                             "needs every row's key (raise max_slices instead)")
        if self.controls is not None and order_dependent(metric):
            raise ValueError("controls: not with a Window or Decayed metric: a control group's overall "
                             "value is the merge of its slices, which a window's or decay's is not")
        template = twin_of(metric)
        with metric._lock:
            if not all(a.equals(b) for a, b in zip(_states(metric), _states(template), strict=True)):
                raise ValueError("metric: wrap an empty accumulator (this one already holds samples)")
        self.metric = template
        self._state: SlicedState = SlicedState(template, self.max_slices, overflow)

    # -- configuration ---------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        return {
            "metric": {"class": type(self.metric).__name__, "config": self.metric._config()},
            "max_slices": self.max_slices,
            "overflow": self.overflow,
            "min_count": self.min_count,
            **({} if self.controls is None else {"controls": list(self.controls)}),
        }

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> Sliced:
        spec = config.get("metric")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("config"), Mapping):
            raise ValueError("state: a Sliced config needs 'metric': {'class', 'config'}")
        name = spec.get("class")
        target = Metric._registry.get(name) if isinstance(name, str) else None
        if target is None or target is Sliced:
            raise ValueError(f"state: unknown metric class {name!r}")
        rest = {k: v for k, v in config.items() if k != "metric"}
        try:
            return cls(target._from_config(spec["config"]), **rest)
        except TypeError as exc:
            raise ValueError(f"state: bad configuration for Sliced: {exc}") from None

    # -- update ----------------------------------------------------------------------------
    def update(self, y_true: ArrayLike, y_pred: ArrayLike = _SCORES_ONLY, *,  # type: ignore[override]
               slices: Any, sample_weight: ArrayLike | None = None, **kwargs: Any) -> Sliced:
        """Fold in one batch with its slice keys. Atomic: a rejected batch (bad labels, bad
        keys, a key beyond the cap with ``overflow="error"``) changes nothing. Holds the lock
        for the whole batch (new keys must be admitted in one order). O(n) to group the rows
        (O(n log n) for string keys) plus the wrapped metric's update of each slice's rows.

        Parameters
        ----------
        y_true : array-like
            Classification and regression: the labels or targets, shape (n,) or (n, k).
            Drift and Estimated, which take no labels: the scores (``y_score``, shape (n,) or
            (n, C)) or probabilities (``y_prob``), given alone: ``update(y_score, slices=...)``.
        y_pred : array-like
            The predictions or scores, row-aligned with ``y_true``; not given for Drift and
            Estimated.
        slices : array-like, tuple or dict of array-like
            One key per row (see the class notes); several key columns as a tuple or a dict.
        sample_weight : array-like, optional
            One finite non-negative weight per row (default: 1 each).
        **kwargs
            Passed to each slice's accumulator (``timestamp=`` of a time window), per-row
            arrays split by slice.

        Returns
        -------
        Sliced
            ``self``.

        Raises
        ------
        TypeError
            ``y_pred`` missing for a metric with labels, or given to one without (Drift,
            Estimated); nothing changes.
        ValueError
            A bad batch or key (naming the argument and the first offending value); nothing
            changes.
        """
        if self._state.mode != "labels":
            if y_pred is not _SCORES_ONLY:
                what = "scores" if self._state.mode == "scores" else "probabilities"
                raise TypeError(
                    f"update() of Sliced({type(self.metric).__name__}) takes no labels: "
                    f"update(y_score, *, slices, sample_weight=None) with the {what} alone; "
                    f"got a second positional argument (y_pred)")
            y_true, y_pred = None, y_true  # type: ignore[assignment]
        elif y_pred is _SCORES_ONLY:
            raise TypeError(f"update() of Sliced({type(self.metric).__name__}) missing 1 required "
                            "positional argument: 'y_pred'")
        with self._lock:
            delta = self._state.prepare(y_true, y_pred, sample_weight, slices=slices, **kwargs)
            if self.controls is not None and delta is not None:
                new_stores = delta[0]  # (names, ...) of a first batch, else None: the names held
                check_controls(self.controls, self._state.names if new_stores is None else new_stores[0],
                               "slices")
            self._state.apply(delta)
        return self

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        super()._load_arrays(arrays)
        if self.controls is not None and self._state.fed:
            check_controls(self.controls, self._state.names, "state")

    def _members(self) -> list[str] | None:
        """The names of a slice's value when it is a mapping (a MetricSet's members, an
        Estimated MetricSet's, a Drift's statistics), else None."""
        m = self.metric
        if m.family == "estimated":
            m = wrapped(m)
        if isinstance(m, MetricSet):
            return list(m)
        if m.family == "drift":
            drift = getattr(m, "metric", m)  # a Window or Decayed around a Drift
            keys = getattr(drift, "value_keys", None)
            return None if keys is None else list(keys)
        return None

    # -- per-slice reads -------------------------------------------------------------------
    def _map(self, store: SliceStore | None, fn: Callable[[Metric], Any],
             names: tuple[str, ...] | None = None, vectorised: bool = False,
             confidence: float | None = None) -> SlicedResults:
        """``fn`` of every slice's accumulator (and ``OTHER``'s), as :class:`SlicedResults`.
        ``vectorised``: ``fn`` is ``compute`` (or ``interval(confidence)``), which the store
        may give for all slots at once (:meth:`SliceStore.values`)."""
        if store is None:
            return SlicedResults({}, counts={}, key_names=names, min_count=self.min_count)
        keys = list(store.keys) + ([OTHER] if store.has_other() else [])
        slots = list(range(1, len(store.keys) + 1)) + ([0] if store.has_other() else [])
        rows = store.rows.tolist()
        counts = {key: rows[slot] for key, slot in zip(keys, slots, strict=True)}
        defined = [slot for slot in slots if rows[slot] >= self.min_count]
        got = store.values(np.asarray(defined, np.intp), confidence) if vectorised and defined else None
        value_of = dict(zip(defined, got if got is not None
                            else [fn(store.metric(slot)) for slot in defined], strict=True))
        out: dict[Any, Any] = {}
        for key, slot in zip(keys, slots, strict=True):
            if slot in value_of:
                out[key] = value_of[slot]
            else:
                undefined = UndefinedSlice(rows[slot])
                members = self._members()
                out[key] = undefined if members is None else {name: undefined for name in members}
        return SlicedResults(out, counts=counts, key_names=names, min_count=self.min_count)

    def _compute(self) -> SlicedResults:
        """``{slice key: value}`` (a dict with notebook output: ``_repr_html_``,
        ``to_pandas()``, ``to_dict()``, and ``plot()`` of curve values)."""
        return self._map(self._state.crossed, lambda m: m.compute(), self._state.names, True)

    def overall(self) -> Any:
        """The wrapped metric's value over every row seen (all slices together); with
        ``controls``, ``{control key: value}`` over each control group's rows (as
        ``MetricFrame.overall``). O(the wrapped compute), or O(slices) merges with controls."""
        with self._lock:
            if self.controls is not None:
                return {ck: total.compute() for ck, _, total in self._control_groups()}
            return self._state.overall_metric().compute()

    def _control_groups(self) -> list[tuple[Any, list[Any], Metric]]:
        """``(control key, its crossed slice keys, the accumulator of its rows)`` per control
        group (under the lock)."""
        assert self.controls is not None
        return control_groups(self.metric, self._state.crossed, self._state.names, self.controls)

    def marginal(self, name: str | int) -> dict[Any, Any]:
        """``{key: value}`` over key column ``name`` alone (its name, or its position), when
        several key columns were given. O(keys x the wrapped compute)."""
        with self._lock:
            names = self._state.names
            if names is None or len(names) < 2:
                raise ValueError("marginal: needs several key columns (slices=tuple or dict)")
            if isinstance(name, str):
                if name not in names:
                    raise ValueError(f"marginal: unknown key column {name!r} (have {list(names)})")
                j = names.index(name)
            elif (isinstance(name, (int, np.integer)) and not isinstance(name, bool)
                  and 0 <= name < len(names)):
                j = int(name)
            else:
                raise ValueError(f"marginal: expected a key column name or position, got {name!r}")
            return self._map(self._state.marginals[j], lambda m: m.compute(), (names[j],), True)

    def counts(self) -> dict[Any, int]:
        """``{key: number of rows}`` of every crossed slice (and ``OTHER``)."""
        with self._lock:
            store = self._state.crossed
            if store is None:
                return {}
            out = {k: int(store.rows[s]) for k, s in store.slots()}
            if store.has_other():
                out[OTHER] = int(store.rows[0])
            return out

    def slice(self, key: Any) -> Metric:
        """An independent copy of one slice's accumulator (``KeyError`` if never seen)."""
        with self._lock:
            store = self._state.crossed
            slot = 0 if key is OTHER else (None if store is None else store.index.get(key))
            if store is None or slot is None or (slot == 0 and not store.has_other()):
                raise KeyError(key)
            return store.metric(slot).copy()

    def _largest(self, n: int) -> tuple[list[tuple[Any, int, Metric]], int, int]:
        """The ``n`` slices with the most rows (ties: first seen first, ``OTHER`` last) as
        ``(key, rows, independent copy of its accumulator)``, most rows first, with the number
        of slices held and :attr:`n_absorbed`: one consistent read under the lock (a Prometheus
        scrape). O(slices) for the choice (one partition of the row counts, 8 bytes per slice)
        plus the copies of the ``n`` chosen accumulators -- never a copy of the whole state."""
        with self._lock:
            store = self._state.crossed
            if store is None:
                return [], 0, 0
            keys: list[tuple[Any, int]] = []
            rows = store.rows[1 : len(store.keys) + 1]
            if store.has_other():
                rows = np.append(rows, store.rows[0])  # OTHER after every key on ties
            held = int(rows.shape[0])
            if n <= 0:
                chosen = np.zeros(0, np.intp)
            elif n < held:
                kth = np.partition(rows, held - n)[held - n]  # the n-th largest count
                above = np.flatnonzero(rows > kth)
                chosen = np.concatenate([above, np.flatnonzero(rows == kth)[: n - above.shape[0]]])
            else:
                chosen = np.arange(held)
            chosen = chosen[np.argsort(-rows[chosen], kind="stable")]
            for i in chosen.tolist():
                keys.append((OTHER, 0) if i == len(store.keys) else (store.keys[i], i + 1))
            out = [(key, int(store.rows[slot]), store.metric(slot).copy()) for key, slot in keys]
            return out, held, store.absorbed.count()

    def check_key_names(self, names: tuple[str, ...] | None) -> None:
        """``ValueError`` unless an update with key columns ``names`` (None: one unnamed
        column) would be accepted: the columns this accumulator was fed, if any, holding the
        ``controls`` columns and another. O(columns)."""
        if self.controls is not None:
            check_controls(self.controls, names, "slices")
        with self._lock:
            if self._state.fed and names != self._state.names:
                shown = SlicedState.shown
                raise ValueError(
                    f"slices: this accumulator was fed the key columns {shown(self._state.names)}, "
                    f"got {shown(names)}"
                )

    @property
    def key_names(self) -> tuple[str, ...] | None:
        """Names of the key columns (None: one unnamed column, or nothing seen yet)."""
        return self._state.names

    @property
    def n_absorbed(self) -> int:
        """Distinct keys folded into the ``OTHER`` slice (``overflow="other"``): exact up to
        4096, then a HyperLogLog estimate (relative standard error about 0.8 %)."""
        with self._lock:
            store = self._state.crossed
            return 0 if store is None else store.absorbed.count()

    def interval(self, confidence: float = 0.95) -> dict[Any, Any]:
        """``{key: interval}`` of every slice whose metric has ``interval()`` (a MetricSet:
        ``{key: {member: interval}}`` for the members that have one for their averaging mode).
        ``ValueError`` if the wrapped metric has none."""
        def one(m: Metric) -> Any:
            if isinstance(m, MetricSet):
                out = {}
                for name, x in m.items():
                    if hasattr(x, "interval"):
                        with contextlib.suppress(ValueError):  # e.g. no interval for macro averages
                            out[name] = x.interval(confidence)
                return out
            inner = getattr(m, "metric", None) if m.family == "estimated" else None
            if isinstance(inner, MetricSet):  # an Estimated set: the members that have one
                got = {}
                for name in inner:
                    with contextlib.suppress(ValueError):
                        got[name] = m.interval(confidence, member=name)  # type: ignore[attr-defined]
                return got
            if not hasattr(m, "interval"):
                raise ValueError(f"interval: {type(m).__name__} has no interval()")
            return m.interval(confidence)

        with self._lock:
            return self._map(self._state.crossed, one, self._state.names, True, confidence)

    def bounds(self) -> dict[Any, Any]:
        """``{key: (low, high)}``: the certified interval of every slice (bounded ranking
        metrics; equal ends while exact)."""
        def one(m: Metric) -> Any:
            if not hasattr(m, "bounds"):
                raise ValueError(f"bounds: {type(m).__name__} has no bounds()")
            return m.bounds()

        with self._lock:
            return self._map(self._state.crossed, one, self._state.names)

    # -- disparities (Fairlearn MetricFrame's definitions) ---------------------------------
    def _groups(self, errors: str) -> list[tuple[Any, list[Any], Any]]:
        """``(control key, slice values, overall value)`` of each control group; one group
        (control key None) of every slice without ``controls``."""
        check_param(errors, "errors", _ERRORS)
        with self._lock:
            values = {k: v for k, v in self._compute().items() if k is not OTHER}
            if self.controls is None:
                return [(None, list(values.values()), self._state.overall_metric().compute())]
            return [(ck, [values[k] for k in keys], total.compute())
                    for ck, keys, total in self._control_groups()]

    def _summary(self, fn: Callable[[list[float], float], float], errors: str) -> Any:
        members = self._members()

        def one(values: list[Any], overall: Any) -> Any:
            if members is not None:
                return {name: fn(_scalars([v[name] for v in values], errors), _one(overall[name]))
                        for name in members}
            return fn(_scalars(values, errors), _one(overall))

        groups = self._groups(errors)
        if self.controls is None:
            return one(*groups[0][1:])
        return {ck: one(values, overall) for ck, values, overall in groups}

    def _no_drift_spread(self, what: str) -> None:
        if self._state.mode == "scores":
            raise ValueError(
                f"{what}: a drift statistic is already a distance (from the reference); a "
                "difference or ratio of two segments' distances says nothing about how the "
                "segments differ. Read the worst segment with group_max() (per statistic), or "
                "compare two segments' scores with a Drift whose reference is one of them")

    def group_min(self, errors: str = "raise") -> Any:
        """The smallest slice value (nan slices skipped; all nan or none: nan). A MetricSet:
        ``{member: value}``. Non-scalar values: ``ValueError`` (``errors="raise"``) or nan
        (``"coerce"``). With ``controls``: ``{control key: value}``, the smallest within each
        control group (as for every disparity summary). O(slices)."""
        return self._summary(lambda v, o: _nanmin(v), errors)

    def group_max(self, errors: str = "raise") -> Any:
        """The largest slice value (see :meth:`group_min`)."""
        return self._summary(lambda v, o: _nanmax(v), errors)

    def difference(self, method: str = "between_groups", errors: str = "coerce") -> Any:
        """``"between_groups"``: ``group_max - group_min``; ``"to_overall"``: the largest
        ``|slice value - overall value|``. nan slices are skipped."""
        method = check_param(method, "method", _METHOD)
        self._no_drift_spread("difference")
        if method == "between_groups":
            return self._summary(lambda v, o: _nanmax(v) - _nanmin(v), errors)
        return self._summary(lambda v, o: _nanmax([abs(x - o) for x in v]), errors)

    def ratio(self, method: str = "between_groups", errors: str = "coerce") -> Any:
        """``"between_groups"``: ``group_min / group_max``; ``"to_overall"``: the smallest of
        ``slice / overall`` taken as at most 1 (x > 1 becomes 1/x). A zero denominator gives
        inf or nan as float division does (nan skipped)."""
        method = check_param(method, "method", _METHOD)
        self._no_drift_spread("ratio")
        if method == "between_groups":
            return self._summary(lambda v, o: _divide(_nanmin(v), _nanmax(v)), errors)

        def to_overall(v: list[float], o: float) -> float:
            ratios = [_divide(x, o) for x in v]
            return _nanmin([1.0 / r if r > 1 else r for r in ratios])

        return self._summary(to_overall, errors)


def _one(value: Any) -> float:
    return float(value) if _is_scalar(value) else math.nan


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _scalars(values: list[Any], errors: str) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, UndefinedSlice):
            continue
        if _is_scalar(v):
            out.append(float(v))
        elif errors == "raise":
            raise ValueError(
                f"errors='raise': a slice value is not a scalar ({type(v).__name__}); "
                "pass errors='coerce' to treat it as nan"
            )
        else:
            out.append(math.nan)
    return out


def _nanmin(v: list[float]) -> float:
    kept = [x for x in v if not math.isnan(x)]
    return min(kept) if kept else math.nan


def _nanmax(v: list[float]) -> float:
    kept = [x for x in v if not math.isnan(x)]
    return max(kept) if kept else math.nan


def _divide(a: float, b: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))
