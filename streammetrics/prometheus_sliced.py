"""Expose a :class:`~streammetrics.Sliced` accumulator to Prometheus: the slice as a label.

``register_sliced(sliced)`` (or ``registry.register(SlicedCollector(sliced))``) exports, per
slice, the gauges :class:`~streammetrics.prometheus.MetricsCollector` exports for one accumulator
(value, interval ends, bounds, samples; per member for a MetricSet), each sample carrying the
slice's key as labels: one label per key column (their names; ``slice`` for one unnamed column),
the overflow slice as ``__other__``. Label names that are not valid Prometheus names have their
invalid characters replaced by ``_``.

Series cap: a scrape exports at most ``max_slices`` slices (default 100) -- those with the most
rows (ties: first seen first) -- and reports how many were left out in
``{prefix}_{name}_slices_omitted``; ``{prefix}_{name}_slices`` is the number of slices held.
Slices below the accumulator's ``min_count`` are exported with their sample count only.

Needs the ``prometheus`` extra. Cost per scrape: a copy of the Sliced state under its lock
(O(state size)), then, without the lock, one collector pass per exported slice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ._params import Param, check_accumulator, check_param
from ._slice_keys import OTHER
from .metricset import MetricSet
from .prometheus import REGISTRY, CollectorRegistry, GaugeMetricFamily, MetricsCollector
from .sliced import Sliced

__all__ = ["SlicedCollector", "register_sliced"]

_MAX_SLICES = Param("int", "must be an int >= 0", low=0)
_LABEL = re.compile(r"[^a-zA-Z0-9_]")


def _label_name(name: str) -> str:
    out = _LABEL.sub("_", name)
    return out if re.match(r"^[a-zA-Z_]", out) else f"_{out}"


class SlicedCollector:
    """A prometheus-client collector over one :class:`~streammetrics.Sliced` accumulator.

    Parameters
    ----------
    sliced
        The accumulator to expose.
    max_slices
        The most slices exported per scrape (an int >= 0; the slices with the most rows).
    name, prefix, labels
        As :class:`~streammetrics.prometheus.MetricsCollector`; ``name`` defaults to the
        wrapped metric's class name, lower case.
    **kwargs
        ``confidence``, ``per_class`` and ``max_series`` of
        :class:`~streammetrics.prometheus.MetricsCollector` (``max_series`` applies per slice).

    Examples
    --------
    >>> from prometheus_client import CollectorRegistry
    >>> import streammetrics as sm
    >>> from streammetrics.prometheus_sliced import SlicedCollector
    >>> sliced = sm.Sliced(sm.Recall())
    >>> registry = CollectorRegistry()
    >>> registry.register(SlicedCollector(sliced))
    >>> _ = sliced.update([1, 0, 1, 1], [1, 0, 0, 1], slices=["us", "us", "fr", "fr"])
    >>> registry.get_sample_value("streammetrics_recall", {"slice": "fr"})
    0.5
    """

    def __init__(self, sliced: Sliced, *, max_slices: int = 100, name: str | None = None,
                 prefix: str = "streammetrics", labels: Mapping[str, str] | None = None,
                 **kwargs: Any) -> None:
        check_accumulator(sliced, "sliced", kind=Sliced)
        self.max_slices = check_param(max_slices, "max_slices", _MAX_SLICES)
        self.sliced = sliced
        self.prefix = prefix
        self.labels = dict(labels or {})
        self.kwargs = kwargs
        inner = sliced.metric
        self._name = name or ("sliced" if isinstance(inner, MetricSet) else type(inner).__name__.lower())
        # validates prefix, name, labels and kwargs once
        MetricsCollector(sliced.metric, name=self._name, prefix=prefix, labels=self.labels, **kwargs)

    def describe(self) -> list[Any]:
        return []

    def _key_labels(self, key: Any, names: tuple[str, ...] | None) -> dict[str, str]:
        if key is OTHER:
            cols = [_label_name(n) for n in names] if names else ["slice"]
            return dict.fromkeys(cols, "__other__")
        if names is None:
            return {"slice": str(key)}
        values = key if len(names) > 1 else (key,)
        return {_label_name(n): str(v) for n, v in zip(names, values, strict=True)}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        snap = self.sliced.copy()
        counts = snap.counts()
        names = snap.key_names
        order = sorted(counts, key=lambda k: -counts[k])  # stable: first seen first on ties
        chosen = order[: self.max_slices]
        families: dict[str, GaugeMetricFamily] = {}
        for key in chosen:
            labels = {**self.labels, **self._key_labels(key, names)}
            inner = snap.slice(key)
            if counts[key] < snap.min_count:
                continue  # undefined: only counted below
            collector = MetricsCollector(inner, name=self._name, prefix=self.prefix, labels=labels,
                                         **self.kwargs)
            for fam in collector.collect():
                mine = families.get(fam.name)
                if mine is None:
                    families[fam.name] = fam
                else:
                    mine.samples.extend(fam.samples)
        base = f"{self.prefix}_{self._name}"
        for suffix, value, doc in (
            ("slices", len(counts), "slices held by the Sliced accumulator"),
            ("slices_omitted", len(counts) - len(chosen), "slices not exported (max_slices)"),
            ("slices_absorbed", snap.n_absorbed, "distinct keys folded into the overflow slice"),
        ):
            fam = GaugeMetricFamily(f"{base}_{suffix}", doc, labels=list(self.labels))
            fam.add_metric(list(self.labels.values()), float(value))
            families[fam.name] = fam
        rows = GaugeMetricFamily(f"{base}_slice_rows", "rows seen per exported slice",
                                 labels=[*self.labels, *self._key_labels(chosen[0], names)]
                                 if chosen else list(self.labels))
        for key in chosen:
            rows.add_metric([*self.labels.values(), *self._key_labels(key, names).values()],
                            float(counts[key]))
        families[rows.name] = rows
        yield from families.values()


def register_sliced(sliced: Sliced, registry: CollectorRegistry | None = None,
                    **kwargs: Any) -> SlicedCollector:
    """Register a :class:`SlicedCollector` (default registry: prometheus-client's global one).

    Parameters
    ----------
    sliced : Sliced
        The accumulator to expose.
    registry : prometheus_client.CollectorRegistry, optional
        Where to register it (default: prometheus-client's global ``REGISTRY``).
    **kwargs
        The options of :class:`SlicedCollector` (``max_slices``, ``name``, ``prefix``, ...).

    Returns
    -------
    SlicedCollector
        The registered collector (unregister it with ``registry.unregister``).
    """
    collector = SlicedCollector(sliced, **kwargs)
    (REGISTRY if registry is None else registry).register(collector)  # type: ignore[arg-type]
    return collector
