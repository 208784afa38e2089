"""Expose a :class:`~streammetrics.Sliced` accumulator to Prometheus: the slice as a label.

``register_sliced(sliced)`` (or ``registry.register(SlicedCollector(sliced))``; ``sliced`` may
also be a :class:`~streammetrics.DelayedLabels` around a Sliced, whose counters are then
exported as ``{prefix}_delayed_{stat}``) exports, per
slice, the gauges :class:`~streammetrics.prometheus.MetricsCollector` exports for one accumulator
(value, interval ends, bounds, samples; per member for a MetricSet), each sample carrying the
slice's key as labels: one label per key column (their names; ``slice`` for one unnamed column),
the overflow slice as ``__other__``. Label names: the characters a Prometheus label name cannot
hold become ``_``; a name that would clash with a constant label, a reserved label (``class``,
``actual``, ``predicted``, ``label``), another key column's label or start with ``__`` (reserved
by Prometheus) is prefixed with ``slice_`` (as often as needed). Label values are UTF-8 text
whatever the key: see :mod:`streammetrics.prometheus` (lone surrogates escaped, ints too long
for ``str`` in hexadecimal).

Series cap: a scrape exports at most ``max_slices`` slices (default 100) -- those with the most
rows (ties: first seen first, ``OTHER`` last) -- and reports how many were left out in
``{prefix}_{name}_slices_omitted``; ``{prefix}_{name}_slices`` is the number of slices held,
``{prefix}_{name}_slices_absorbed`` the distinct keys folded into ``OTHER`` and
``{prefix}_{name}_slice_rows`` the rows of each exported slice. Slices below the accumulator's
``min_count`` are exported with their row count only.

Failures never fail the scrape (prometheus-client would answer HTTP 500 for the whole
registry): a slice whose key cannot be made into labels, whose labels equal another exported
slice's (e.g. the keys ``1`` and ``"1"``), or whose member fails to compute is left out of the
scrape -- the other slices are exported -- and counted in ``{prefix}_{name}_collect_errors_total``
(0 while nothing failed), the first failure of each kind logged as a warning on the
``streammetrics.prometheus`` logger.

Cost per scrape: under the Sliced's lock, one pass over the slices' row counts (8 bytes per
slice) to choose the ``max_slices`` largest, and a copy of those slices' accumulators only --
never a copy of the whole state; then, without the lock, one collector pass per exported slice.
An ``update`` on another thread waits at most for that choice and those copies.

Needs the ``prometheus`` extra.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from streammetrics._core.params import Param, check_accumulator, check_param
from streammetrics.wrappers.delayed.core import DelayedLabels
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.core import Sliced
from streammetrics.wrappers.sliced.keys import OTHER

from .prometheus import (
    REGISTRY,
    CollectErrors,
    CollectorRegistry,
    CounterMetricFamily,
    Family,
    GaugeMetricFamily,
    MetricsCollector,
    check_labels,
    check_names,
    label_value,
)

__all__ = ["SlicedCollector", "register_sliced"]

_MAX_SLICES = Param("int", "must be an int >= 0", low=0)
_LABEL = re.compile(r"[^a-zA-Z0-9_]")
_RESERVED = ("class", "actual", "predicted", "label")


def _label_name(name: str) -> str:
    out = _LABEL.sub("_", name)
    return out if re.match(r"^[a-zA-Z_]", out) else f"_{out}"


class SlicedCollector:
    """A prometheus-client collector over one :class:`~streammetrics.Sliced` accumulator.

    Parameters
    ----------
    sliced
        The accumulator to expose: a Sliced, or a DelayedLabels around one (its counters are
        exported too, as ``{prefix}_delayed_{stat}``).
    max_slices
        The most slices exported per scrape (an int >= 0; the slices with the most rows).
    name, prefix, labels
        As :class:`~streammetrics.prometheus.MetricsCollector`; ``name`` defaults to the
        wrapped metric's class name, lower case.
    **kwargs
        ``confidence``, ``per_class`` and ``max_series`` of
        :class:`~streammetrics.prometheus.MetricsCollector` (``max_series`` applies per slice).

    Notes
    -----
    Cost per scrape: O(slices) for choosing the exported slices (a partition of their row
    counts) and O(``max_slices`` x the wrapped state) for copying and rendering them; the
    Sliced's lock is held for the choice and the copies only (module docstring).

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

    def __init__(self, sliced: Sliced | DelayedLabels, *, max_slices: int = 100, name: str | None = None,
                 prefix: str = "streammetrics", labels: Mapping[str, str] | None = None,
                 **kwargs: Any) -> None:
        delayed = sliced if isinstance(sliced, DelayedLabels) and isinstance(sliced._metric, Sliced) \
            else None
        target = check_accumulator(sliced if delayed is None else delayed._metric, "sliced", kind=Sliced)
        self.max_slices = check_param(max_slices, "max_slices", _MAX_SLICES)
        self.sliced: Sliced = target
        self.delayed = delayed
        self._stats = list(delayed.stats()) if delayed is not None else []
        self.prefix = prefix
        self.labels = check_labels(labels)
        self.kwargs = kwargs
        inner = target.metric
        self._name = name or ("sliced" if isinstance(inner, MetricSet) else type(inner).__name__.lower())
        # validates prefix, name, labels and kwargs once
        self._template = MetricsCollector(target.metric, name=self._name, prefix=prefix,
                                          labels=self.labels, **kwargs)
        self.errors = CollectErrors([self._name], f"SlicedCollector({prefix}_{self._name})")
        check_names(self.describe())

    def describe(self) -> list[Family]:
        """Every family a scrape can export (empty ones): the wrapped metric's gauges, the
        ``_slices``, ``_slices_omitted``, ``_slices_absorbed`` and ``_slice_rows`` gauges and the
        ``_collect_errors`` counter (prometheus-client's registry refuses a second collector
        exporting one of these names). O(members)."""
        base = f"{self.prefix}_{self._name}"
        out: list[Family] = [f for f in self._template.describe() if f.type == "gauge"]
        out += [GaugeMetricFamily(f"{base}{suffix}", "")
                for suffix in ("_slices", "_slices_omitted", "_slices_absorbed", "_slice_rows")]
        out += [GaugeMetricFamily(f"{self.prefix}_delayed_{stat}", "") for stat in self._stats]
        out.append(CounterMetricFamily(f"{base}_collect_errors", ""))
        return out

    def _key_label_names(self, names: tuple[str, ...] | None) -> list[str]:
        """The label name of each key column (module docstring). O(columns)."""
        taken = set(self.labels) | set(_RESERVED)
        out = []
        for col in (["slice"] if names is None else [_label_name(n) for n in names]):
            if col.startswith("__"):
                col = f"slice{col}"
            while col in taken:
                col = f"slice_{col}"
            taken.add(col)
            out.append(col)
        return out

    @staticmethod
    def _key_values(key: Any, width: int) -> list[str]:
        """The label values of one slice key (``__other__`` for the overflow slice)."""
        if key is OTHER:
            return ["__other__"] * width
        values = key if width > 1 else (key,)
        if not isinstance(values, tuple) or len(values) != width:
            raise ValueError(f"a slice key {label_value(key)[:100]} does not have {width} columns")
        return [label_value(v) for v in values]

    def collect(self) -> Iterator[Family]:
        """The families of one scrape (called by prometheus-client). Never raises: a slice that
        fails is left out and counted (module docstring).

        Returns
        -------
        iterator of prometheus_client.core.Metric
            One family per exported name.
        """
        try:
            families = self._families()
        except Exception as exc:
            self.errors.record(self._name, "every slice", exc)
            families = []
        yield from families
        yield from self.errors.families(self.prefix, self.labels)

    def _families(self) -> list[Family]:
        stats: dict[str, int] = {}
        if self.delayed is not None:  # the only locked step (the Sliced's lock, inside)
            with self.delayed._lock:
                self.delayed._flush_locked()  # batched labels: the scrape sees every one
                chosen, held, absorbed = self.sliced._largest(self.max_slices)
                stats = self.delayed.stats()
        else:
            chosen, held, absorbed = self.sliced._largest(self.max_slices)
        label_names = self._key_label_names(self.sliced.key_names)
        const = list(self.labels.values())
        base = f"{self.prefix}_{self._name}"
        families: dict[str, Family] = {}
        rows = GaugeMetricFamily(f"{base}_slice_rows", "rows seen per exported slice",
                                 labels=[*self.labels, *label_names])
        seen: set[tuple[str, ...]] = set()
        for key, count, metric in chosen:
            try:
                values = self._key_values(key, len(label_names))
                if tuple(values) in seen:
                    raise ValueError(f"the slice key {label_value(key)[:100]} gives the labels "
                                     f"{values} of another exported slice")
            except ValueError as exc:
                self.errors.record(self._name, "a slice", exc)
                continue
            seen.add(tuple(values))
            rows.add_metric([*const, *values], float(count))
            if count < self.sliced.min_count:
                continue  # undefined: only counted
            labels = {**self.labels, **dict(zip(label_names, values, strict=True))}
            collector = MetricsCollector(metric, name=self._name, prefix=self.prefix, labels=labels,
                                         **self.kwargs)
            for fam in collector._render(collector.members, None, self.errors, counted=self._name):
                mine = families.get(fam.name)
                if mine is None:
                    families[fam.name] = fam
                else:
                    mine.samples.extend(fam.samples)
        for suffix, value, doc in (
            ("slices", held, "slices held by the Sliced accumulator"),
            ("slices_omitted", held - len(chosen), "slices not exported (max_slices)"),
            ("slices_absorbed", absorbed, "distinct keys folded into the overflow slice"),
        ):
            fam = GaugeMetricFamily(f"{base}_{suffix}", doc, labels=list(self.labels))
            fam.add_metric(const, float(value))
            families[fam.name] = fam
        families[rows.name] = rows
        for stat, value in stats.items():
            fam = GaugeMetricFamily(f"{self.prefix}_delayed_{stat}", f"DelayedLabels counter {stat!r}",
                                    labels=list(self.labels))
            fam.add_metric(const, float(value))
            families[fam.name] = fam
        return list(families.values())


def register_sliced(sliced: Sliced | DelayedLabels, registry: CollectorRegistry | None = None,
                    **kwargs: Any) -> SlicedCollector:
    """Register a :class:`SlicedCollector` (default registry: prometheus-client's global one).

    Parameters
    ----------
    sliced : Sliced or DelayedLabels
        The accumulator to expose (a DelayedLabels around a Sliced too).
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
