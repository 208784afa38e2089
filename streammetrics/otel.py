"""Export accumulators to OpenTelemetry as observable gauges.

Needs the ``otel`` extra (``pip install 'streammetrics[otel]'``: ``opentelemetry-api`` and
``opentelemetry-sdk``); importing this module without ``opentelemetry-api`` raises
``ImportError`` saying so. The core never imports it.

``register(metric, meter, prefix=...)`` creates, on an OpenTelemetry ``Meter``, observable gauges
that read the current values whenever a reader collects -- no background thread, nothing done
per update. Per member ``m`` (each member of a :class:`~streammetrics.MetricSet`; the metric itself
otherwise, named by ``name`` or its class name in lower case), as in
:mod:`streammetrics.prometheus` with dots:

* ``{prefix}.{m}``: the value. Per-class arrays carry a ``class`` attribute (the class index;
  the per-output values of a regression metric, ``multioutput="raw_values"``, ``output``); a
  confusion matrix ``actual`` and ``predicted`` (multilabel: ``label``, ``actual``,
  ``predicted``). An undefined value (NaN) is not observed: OpenTelemetry's SDK drops
  non-finite measurements, so the series has no point in that collection (alert on absence).
  Curve results are not numbers and are skipped.
* ``{prefix}.{m}.interval_low`` / ``.interval_high``: ``interval(confidence)`` where the metric
  has one (Wilson, DeLong; :class:`~streammetrics.monitoring.Estimated`'s Poisson-binomial one).
* ``{prefix}.{m}.bounds_low`` / ``.bounds_high``: the certified ``bounds()`` of ranking metrics.
* ``{prefix}.{m}.samples``: the (weighted) number of samples behind the value, where the state
  counts them (an ``Estimated``: the weight of the predictions estimated; around a MetricSet, each
  member is exported, with ``Estimated.interval(member=...)`` where it has one).
* ``{prefix}.delayed.{stat}``: every counter of :meth:`~streammetrics.DelayedLabels.stats` when
  ``metric`` is a ``DelayedLabels``.
* ``{prefix}.{m}.collect_errors``: an observable counter of the collections that left ``m`` (or a
  slice of it) out.

A :class:`~streammetrics.Sliced` accumulator (also inside ``DelayedLabels``) is exported slice by
slice: each observation carries the slice's key as attributes (``slice`` for one unnamed key
column, ``slice.<name>`` for named ones; the overflow slice ``__other__``), at most
``max_slices`` slices per collection (those with the most rows), with ``{prefix}.{m}.slice_rows``
(rows per exported slice) and ``{prefix}.{m}.slices`` (slices held).

Reading: each collection takes one snapshot. The first gauge's callback copies the state under
the metric's lock (``metric.copy()``; a ``DelayedLabels`` folds its buffered labels first; a
``Sliced`` copies only the exported slices) and computes every observation from the copy with
the lock released; the other gauges' callbacks return their part of that snapshot, so every
gauge of a collection describes the same state.

Failures never fail the export: a member (or slice) whose value cannot be computed is left out
of that collection and counted in ``collect_errors``; an interval or bounds that fails
unexpectedly is left out alone; the first failure of each kind is logged as a warning on the
``streammetrics.otel`` logger. The library's ``UndefinedMetricWarning`` is dropped on the
collecting thread only, numpy's floating-point warnings are off there.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

try:
    from opentelemetry.metrics import CallbackOptions, Meter, Observation
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "streammetrics.otel needs opentelemetry-api: pip install 'streammetrics[otel]'"
    ) from exc

from streammetrics._core.metric import Metric
from streammetrics._core.params import Param, check_accumulator, check_param
from streammetrics._core.warn import silenced
from streammetrics.monitoring.estimated import Estimated
from streammetrics.wrappers.delayed.core import DelayedLabels
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.core import Sliced
from streammetrics.wrappers.sliced.keys import OTHER
from streammetrics.wrappers.window import Window

__all__ = ["Registration", "register"]

_NAME = Param("text", "not a valid OpenTelemetry instrument name (a letter, then up to 254 "
              "letters, digits, '_', '.', '-' or '/')", pattern=r"[A-Za-z][A-Za-z0-9_.\-/]{0,254}")
_MAX_SLICES = Param("int", "must be an int >= 0", low=0)
_RESERVED = ("class", "actual", "predicted", "label", "slice", "output")
_SUFFIXES = ("", ".interval_low", ".interval_high", ".bounds_low", ".bounds_high", ".samples")
_NO_INTERVAL = (ValueError, AttributeError, TypeError, NotImplementedError)
_AXES = {1: ("class",), 2: ("actual", "predicted"), 3: ("label", "actual", "predicted")}

logger = logging.getLogger("streammetrics.otel")
Attributes = dict[str, Any]


def _attribute_value(value: Any) -> str | int | float | bool:
    """A slice key component as an OpenTelemetry attribute value (text for anything else)."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and -(2**63) <= int(value) < 2**63:
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    try:
        return str(value).encode("utf-8", "backslashreplace").decode("utf-8")
    except Exception:
        return f"<{type(value).__name__}>"


def _check_attributes(attributes: Mapping[str, Any] | None) -> Attributes:
    out: Attributes = {}
    for k, v in (attributes or {}).items():
        if not isinstance(k, str) or not k or k in _RESERVED or k.startswith("slice."):
            raise ValueError(f"attributes: invalid or reserved name {k!r} (reserved: "
                             f"{', '.join(_RESERVED)}, slice.*)")
        if not isinstance(v, (str, bool, int, float)):
            raise ValueError(f"attributes: the value of {k!r} must be a str, bool, int or float, "
                             f"got {type(v).__name__}")
        out[k] = v
    return out


class _EstimatedMember:
    """Member ``name`` of an ``Estimated(MetricSet)``, read as a metric: its value, its
    ``interval`` where ``Estimated.interval`` has one, its ``bounds``, the estimate's count."""

    def __init__(self, estimate: Estimated, name: str) -> None:
        self._m = estimate.metric[name]  # type: ignore[index]
        self._lock, self._state = estimate._lock, estimate._state
        if type(self._m).__name__ in ("Accuracy", "Precision", "Recall"):
            self.interval = lambda confidence=0.95: estimate.interval(confidence, member=name)
        if hasattr(self._m, "bounds"):
            self.bounds = self._m.bounds

    def compute(self) -> Any:
        return self._m.compute()


def _members(metric: Metric, name: str) -> dict[str, Any]:
    """The exported members of a snapshot: a MetricSet's, an ``Estimated(MetricSet)``'s, or
    the metric itself under ``name``."""
    if isinstance(metric, MetricSet):
        return dict(metric.items())
    if isinstance(metric, Estimated) and isinstance(metric.metric, MetricSet):
        return {n: _EstimatedMember(metric, n) for n, _ in metric.metric.items()}
    return {name: metric}


class Registration:
    """The observable instruments :func:`register` created for one accumulator.

    Parameters
    ----------
    metric : Metric
        An accumulator, a MetricSet, a Sliced, or a DelayedLabels around one of them.
    meter : opentelemetry.metrics.Meter
        Where the instruments are created.
    prefix : str, default "streammetrics"
        The instruments' name prefix.
    name : str, optional
        Member name of a single accumulator (default: its class name, lower case).
    attributes : mapping, optional
        Constant attributes of every observation (names ``class``, ``actual``, ``predicted``,
        ``label``, ``slice`` and ``slice.*`` are reserved).
    confidence : float or None, default 0.95
        Confidence level of the exported intervals (None: none exported).
    max_slices : int, default 100
        Around ``Sliced``: the most slices exported per collection.

    Attributes
    ----------
    instruments : dict of str to instrument
        The observable gauges and counters, by name.
    errors : dict of str to int
        Collections that left each member out (what ``collect_errors`` exports).

    Notes
    -----
    Cost per collection: a copy of the state under the lock (Sliced: of the exported slices),
    then one ``compute`` (plus ``interval`` / ``bounds``) per member and slice without the lock.
    """

    def __init__(self, metric: Metric, meter: Meter, *, prefix: str = "streammetrics",
                 name: str | None = None, attributes: Mapping[str, Any] | None = None,
                 confidence: float | None = 0.95, max_slices: int = 100) -> None:
        check_accumulator(metric)
        check_param(prefix, "prefix", _NAME)
        self.max_slices = check_param(max_slices, "max_slices", _MAX_SLICES)
        self.metric = metric
        self.attributes = _check_attributes(attributes)
        self.confidence = confidence
        self.delayed = metric if isinstance(metric, DelayedLabels) else None
        inner = metric._metric if isinstance(metric, DelayedLabels) else metric
        self.sliced = inner if isinstance(inner, Sliced) else None
        template = inner.metric if isinstance(inner, Sliced) else inner
        if isinstance(template, Estimated) and isinstance(template.metric, (Sliced, Window)):
            raise ValueError("metric: an Estimated around Sliced or a Window is not exported yet; "
                             "register the estimate of each slice, or of the window's metric")
        grouped = template.metric if isinstance(template, Estimated) else template
        self._name = name or ("sliced" if self.sliced is not None and isinstance(template, MetricSet)
                              else type(template).__name__.lower())
        members = [n for n, _ in grouped.items()] if isinstance(grouped, MetricSet) else [self._name]
        names = [f"{prefix}.{m}{s}" for m in members for s in _SUFFIXES]
        if self.sliced is not None:
            names += [f"{prefix}.{self._name}.slice_rows", f"{prefix}.{self._name}.slices"]
        if self.delayed is not None:
            names += [f"{prefix}.delayed.{stat}" for stat in self.delayed.stats()]
        counted = members if self.sliced is None else [self._name]
        for n in names + [f"{prefix}.{m}.collect_errors" for m in counted]:
            check_param(n, "name", _NAME)
        if len(set(names)) != len(names):
            raise ValueError("name: two instruments would have the same name; rename a member")
        self.prefix = prefix
        self.errors = dict.fromkeys(counted, 0)
        self._logged: set[tuple[str, type]] = set()
        self._lock = threading.Lock()
        self._snapshot: dict[str, list[Observation]] = {}
        self._first = names[0]
        self._closed = False
        self.instruments: dict[str, Any] = {}
        for n in names:
            self.instruments[n] = meter.create_observable_gauge(
                n, callbacks=[self._callback(n)], description=f"streammetrics: {n}")
        for m in counted:
            n = f"{prefix}.{m}.collect_errors"
            self.instruments[n] = meter.create_observable_counter(
                n, callbacks=[self._error_callback(m)],
                description="collections that left this member out (see the streammetrics.otel log)")

    def close(self) -> None:
        """Stop exporting: the instruments observe nothing from now on (the OpenTelemetry API
        cannot remove an instrument). O(1)."""
        self._closed = True

    # -- callbacks ---------------------------------------------------------------------------
    def _callback(self, name: str) -> Any:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            if self._closed:
                return []
            with self._lock:
                if name == self._first:
                    self._snapshot = self._collect()
                return list(self._snapshot.get(name, []))
        return observe

    def _error_callback(self, member: str) -> Any:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            if self._closed:
                return []
            with self._lock:
                return [Observation(self.errors[member], dict(self.attributes))]
        return observe

    def _record(self, member: str, what: str, exc: BaseException) -> None:
        self.errors[member] = self.errors.get(member, 0) + 1
        if (member, type(exc)) not in self._logged:
            self._logged.add((member, type(exc)))
            logger.warning("%s.%s: %s left out of the OpenTelemetry collection (%s: %s); later "
                           "failures of this kind are counted in %s.%s.collect_errors, not logged",
                           self.prefix, member, what, type(exc).__name__, str(exc)[:300],
                           self.prefix, member, exc_info=exc)

    # -- one collection ----------------------------------------------------------------------
    def _collect(self) -> dict[str, list[Observation]]:
        """Every observation of one collection, from one snapshot. Never raises."""
        out: dict[str, list[Observation]] = {}
        try:
            parts, stats, held = self._read()
        except Exception as exc:
            for member in self.errors:
                self._record(member, "the state's snapshot", exc)
            return out
        base = f"{self.prefix}.{self._name}"
        with silenced(), np.errstate(all="ignore"):
            for attrs, rows, metric in parts:
                if rows is not None:
                    out.setdefault(f"{base}.slice_rows", []).append(Observation(rows, attrs))
                    if rows < self.sliced.min_count:  # type: ignore[union-attr]
                        continue  # undefined: only counted
                members = _members(metric, self._name)
                for member, m in members.items():
                    counted = member if self.sliced is None else self._name
                    try:
                        self._member(out, f"{self.prefix}.{member}", m, attrs, counted)
                    except Exception as exc:
                        self._record(counted, f"member {member!r} (attributes {attrs})", exc)
        if held is not None:
            out[f"{base}.slices"] = [Observation(held, dict(self.attributes))]
        for stat, value in (stats or {}).items():
            out[f"{self.prefix}.delayed.{stat}"] = [Observation(value, dict(self.attributes))]
        return out

    def _read(self) -> tuple[list[tuple[Attributes, int | None, Metric]], dict[str, int] | None, int | None]:
        """Copies of what is exported (the only step under the metric's lock): (attributes, slice
        rows, accumulator) triples, the DelayedLabels counters, the number of slices held."""
        stats = None
        with self.delayed._lock if self.delayed is not None else contextlib.nullcontext():
            if self.delayed is not None:
                self.delayed._flush_locked()
                stats = self.delayed.stats()
            if self.sliced is None:
                inner = self.delayed._metric if self.delayed is not None else self.metric
                return [(dict(self.attributes), None, inner.copy())], stats, None
            chosen, held, _ = self.sliced._largest(self.max_slices)
        names = self.sliced.key_names
        parts: list[tuple[Attributes, int | None, Metric]] = []
        for key, rows, metric in chosen:
            attrs = dict(self.attributes)
            if key is OTHER:
                cols = ["__other__"] * (1 if names is None else len(names))
            else:
                cols = list(key) if names is not None and isinstance(key, tuple) else [key]
            columns = ["slice"] if names is None else [f"slice.{n}" for n in names]
            for col, v in zip(columns, cols, strict=False):
                attrs[col] = _attribute_value(v)
            parts.append((attrs, rows, metric))
        return parts, stats, held

    def _emit(self, out: dict[str, list[Observation]], name: str, value: Any, attrs: Attributes,
              axis: str = "class") -> bool:
        """Observations of a scalar or array value under ``name`` (a 1-D value's attribute:
        ``axis``); False if not a number."""
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            value = np.float64(value)
        if not isinstance(value, np.ndarray | np.float64) or value.dtype.kind not in "biuf" or value.ndim > 3:
            return False
        obs = out.setdefault(name, [])
        if value.ndim == 0:
            if np.isfinite(value):
                obs.append(Observation(float(value), attrs))
            return True
        axes = (axis,) if value.ndim == 1 else _AXES[value.ndim]
        for idx, v in zip(np.ndindex(value.shape), value.astype(np.float64).ravel().tolist(), strict=True):
            if np.isfinite(v):  # the SDK drops non-finite measurements (with a warning)
                obs.append(Observation(v, {**attrs, **dict(zip(axes, idx, strict=True))}))
        return True

    def _member(self, out: dict[str, list[Observation]], base: str, m: Any, attrs: Attributes,
                counted: str) -> None:
        staged: dict[str, list[Observation]] = {}
        axis = "output" if getattr(m, "family", None) == "regression" else "class"
        if not self._emit(staged, base, m.compute(), attrs, axis):
            return  # not a number (a curve): nothing to export
        for what in ("interval", "bounds"):
            if not hasattr(m, what) or (what == "interval" and self.confidence is None):
                continue
            try:
                with contextlib.suppress(*_NO_INTERVAL):
                    read = getattr(m, what)
                    pair = read(self.confidence) if what == "interval" else read()
                    for end, v in zip(("low", "high"), pair, strict=True):
                        self._emit(staged, f"{base}.{what}_{end}", v, attrs, axis)
            except Exception as exc:  # unexpected: the value is still exported
                self._record(counted, f"the {what} of {base}", exc)
        try:
            with m._lock:
                n = m._state.sample_count()
            if n is not None:
                self._emit(staged, f"{base}.samples", n, attrs)
        except Exception as exc:
            self._record(counted, f"the sample count of {base}", exc)
        for k, v in staged.items():
            out.setdefault(k, []).extend(v)


def register(metric: Metric, meter: Meter, **kwargs: Any) -> Registration:
    """Export ``metric`` through observable gauges created on ``meter``.

    Parameters
    ----------
    metric : Metric
        An accumulator, a MetricSet, a Sliced, an ``Estimated`` or a DelayedLabels around one.
    meter : opentelemetry.metrics.Meter
        E.g. ``opentelemetry.metrics.get_meter("my-service")``.
    **kwargs
        The keyword arguments of :class:`Registration` (``prefix``, ``name``, ``attributes``,
        ``confidence``, ``max_slices``).

    Returns
    -------
    Registration
        Its ``instruments`` by name; ``close()`` stops the export.

    Examples
    --------
    >>> from opentelemetry.sdk.metrics import MeterProvider
    >>> from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    >>> import streammetrics as sm
    >>> from streammetrics import otel
    >>> reader = InMemoryMetricReader()
    >>> meter = MeterProvider(metric_readers=[reader]).get_meter("service")
    >>> f1 = sm.F1().update([1, 0, 1], [0.8, 0.3, 0.6])
    >>> _ = otel.register(f1, meter, prefix="model")
    >>> data = reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
    >>> {m.name: m.data.data_points[0].value for m in data if m.name in ("model.f1", "model.f1.samples")}
    {'model.f1': 1.0, 'model.f1.samples': 3.0}
    """
    return Registration(metric, meter, **kwargs)
