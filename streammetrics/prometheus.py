"""Expose accumulators to Prometheus through prometheus-client's custom-collector interface.

Needs the ``prometheus`` extra (``pip install prometheus-client``); importing this module without
it raises ``ImportError`` saying so. The core never imports it.

``register(metric)`` (or ``registry.register(MetricsCollector(metric))``) makes every scrape read
the current values -- no background thread, no copy of the state. For a
:class:`~streammetrics.MetricSet` (also inside :class:`~streammetrics.DelayedLabels`) each member
``m`` becomes gauges named ``{prefix}_{m}``:

* ``{prefix}_{m}``: the value. Per-class arrays carry a ``class`` label; a confusion matrix
  ``actual`` and ``predicted`` labels (multilabel: ``label``, ``actual``, ``predicted``).
  Undefined values are exported as NaN (Prometheus' own convention). Curve results (ROC/PR)
  are not scalar and are skipped.
* ``{prefix}_{m}_interval_low`` / ``_high``: the statistical interval (``interval()``, Wilson /
  DeLong) where the metric has one for its averaging mode.
* ``{prefix}_{m}_bounds_low`` / ``_high``: the certified interval (``bounds()``) of ranking
  metrics (equal to the value while the state is exact).
* ``{prefix}_{m}_samples``: the (weighted) number of samples behind the value where it is
  known: the window's length, the decayed sample count, the confusion counts' total.
* for DelayedLabels, ``{prefix}_delayed_{stat}`` for every counter of ``stats()`` (pending,
  labelled, expired, evicted, unknown, ...).

Extra constant ``labels`` (e.g. ``{"model": "v3"}``) are attached to every sample. A scrape
holds the metric's lock while it reads, so all gauges of one scrape describe the same state; a
DelayedLabels with ``batch_size > 1`` folds its buffered labels in first, so a scrape is never
stale. The exposition work (compute, text format) happens only on a scrape, never per update.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

try:
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client.core import GaugeMetricFamily
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "streammetrics.prometheus needs prometheus-client: pip install 'streammetrics[prometheus]'"
    ) from exc

from ._base import Metric
from .decay import Decayed
from .delayed import DelayedLabels
from .metricset import MetricSet
from .window import Window

__all__ = ["MetricsCollector", "register"]

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def _samples(metric: Metric) -> float | None:
    if isinstance(metric, Window):
        return float(metric._state.n_rows)
    if isinstance(metric, Decayed):
        return float(metric._state.n_seen)
    state = metric._state
    counts = getattr(state, "matrix", None)
    if callable(counts):
        m = np.asarray(counts())
        return float(m[0].sum() if m.ndim == 3 else m.sum())
    totals = getattr(state, "totals", None)
    if callable(totals):
        t = np.asarray(totals())
        return float(t[0].sum()) if t.size else 0.0
    return None


class MetricsCollector:
    """A prometheus-client collector over one accumulator, MetricSet or DelayedLabels.

    Parameters
    ----------
    metric
        What to expose. A MetricSet (or a DelayedLabels around one) exposes each member.
    name
        Member name for a single accumulator (default: its class name, lower case).
    prefix
        Metric-name prefix (default ``"streammetrics"``).
    labels
        Constant labels for every sample.
    confidence
        Confidence level of the exported ``interval()`` gauges (None: do not export them).

    Cost per scrape: one ``compute`` (plus ``interval``/``bounds``) per member, under the lock.
    """

    def __init__(self, metric: Metric, *, name: str | None = None, prefix: str = "streammetrics",
                 labels: Mapping[str, str] | None = None, confidence: float | None = 0.95) -> None:
        if not isinstance(metric, Metric):
            raise ValueError(f"metric: expected a streammetrics accumulator, got {type(metric).__name__}")
        if not _NAME.match(prefix):
            raise ValueError(f"prefix: not a valid Prometheus metric name: {prefix!r}")
        self.metric = metric
        self.prefix = prefix
        self.labels = {str(k): str(v) for k, v in (labels or {}).items()}
        for k in self.labels:
            if not re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", k) or k in ("class", "actual", "predicted", "label"):
                raise ValueError(f"labels: invalid or reserved label name {k!r}")
        self.confidence = confidence
        inner = metric.metric if isinstance(metric, DelayedLabels) else metric
        self._inner = inner
        if isinstance(inner, MetricSet):
            self.members = dict(inner.items())
        else:
            self.members = {name or type(inner).__name__.lower(): inner}
        for member in self.members:
            if not _NAME.match(f"{prefix}_{member}"):
                raise ValueError(f"name: {member!r} does not make a valid Prometheus metric name")

    def describe(self) -> list[Any]:
        return []  # names depend on the values; skip the registry's duplicate check

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self.metric._lock, self._inner._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(self.metric, DelayedLabels):
                self.metric._flush_locked()  # batched labels: the scrape sees every one
            out: list[GaugeMetricFamily] = []
            for member, m in self.members.items():
                out.extend(self._member(member, m))
            if isinstance(self.metric, DelayedLabels):
                for stat, value in self.metric.stats().items():
                    fam = self._family(f"{self.prefix}_delayed_{stat}",
                                       f"DelayedLabels counter {stat!r}", [])
                    fam.add_metric(list(self.labels.values()), float(value))
                    out.append(fam)
        yield from out

    # -- helpers -----------------------------------------------------------------------------------
    def _family(self, name: str, doc: str, extra: list[str]) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, doc, labels=[*self.labels, *extra])

    def _emit(self, name: str, doc: str, value: Any) -> GaugeMetricFamily | None:
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            fam = self._family(name, doc, [])
            fam.add_metric(list(self.labels.values()), float(value))
            return fam
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf" or value.ndim > 3:
            return None
        axes = {1: ["class"], 2: ["actual", "predicted"], 3: ["label", "actual", "predicted"]}[value.ndim] \
            if value.ndim else []
        fam = self._family(name, doc, axes)
        for idx in np.ndindex(value.shape):
            fam.add_metric([*self.labels.values(), *(str(i) for i in idx)], float(value[idx]))
        return fam

    def _member(self, member: str, m: Metric) -> list[GaugeMetricFamily]:
        base = f"{self.prefix}_{member}"
        kind = type(m._metric).__name__ if isinstance(m, (Window, Decayed)) else type(m).__name__
        out: list[GaugeMetricFamily] = []
        fam = self._emit(base, f"{repr(m)[:200]}", m._compute())
        if fam is None:
            return out
        out.append(fam)
        pairs: list[tuple[str, Any]] = []
        if self.confidence is not None and hasattr(m, "interval"):
            with contextlib.suppress(ValueError, AttributeError, TypeError, NotImplementedError):
                pairs.append(("interval", m.interval(self.confidence)))
        if hasattr(m, "bounds"):
            with contextlib.suppress(ValueError, AttributeError, TypeError, NotImplementedError):
                pairs.append(("bounds", m.bounds()))
        for what, (low, high) in pairs:
            for end, v in (("low", low), ("high", high)):
                f = self._emit(f"{base}_{what}_{end}", f"{kind} {what} {end} end", v)
                if f is not None:
                    out.append(f)
        n = _samples(m)
        if n is not None:
            f = self._emit(f"{base}_samples", f"{kind}: (weighted) samples behind the value", n)
            if f is not None:
                out.append(f)
        return out


def register(metric: Metric, registry: CollectorRegistry | None = None, **kwargs: Any) -> MetricsCollector:
    """Register a :class:`MetricsCollector` for ``metric`` (default registry: prometheus-client's
    global ``REGISTRY``) and return it (``registry.unregister(collector)`` removes it)."""
    collector = MetricsCollector(metric, **kwargs)
    (REGISTRY if registry is None else registry).register(collector)  # type: ignore[arg-type]
    return collector
