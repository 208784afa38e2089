"""Expose accumulators to Prometheus through prometheus-client's custom-collector interface.

Needs the ``prometheus`` extra (``pip install prometheus-client``); importing this module without
it raises ``ImportError`` saying so. The core never imports it.

``register(metric)`` (or ``registry.register(MetricsCollector(metric))``) makes every scrape read
the current values -- no background thread, nothing done per update. For a
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
* ``{prefix}_{m}_samples``: the (weighted) number of samples behind the value where the state
  counts them: the window's length, the decayed sample count, the confusion counts' total, the
  ranking states' total weight (exact or bounded: ``max_bytes=`` / ``thresholds=``), the
  calibration sums' total weight.
* for DelayedLabels, ``{prefix}_delayed_{stat}`` for every counter of ``stats()`` (pending,
  labelled, expired, evicted, unknown, ...).

Regression members (``MeanSquaredError``, ``MedianAbsoluteError``, ``IntervalCoverage``, ...)
follow the same convention: per-output values (``multioutput="raw_values"``) carry an ``output``
label instead of ``class``, a bounded whole-set metric (``max_bytes=``) exports its certified
``_bounds_low`` / ``_high`` (per output too), ``IntervalCoverage`` its Wilson ``_interval_*``.

An :class:`~streammetrics.monitoring.Estimated` accumulator (performance estimated from
probabilities, before labels) is exported like a metric: ``{prefix}_{name}`` (``name`` default
``estimated``) with its ``interval()`` as ``_interval_low`` / ``_high`` and the expected sample
count (the probabilities' total weight) as ``_samples``. Around a MetricSet
(``Estimated(MetricSet(acc=..., recall=...))``) each member ``m`` is exported as a member of a
MetricSet is, ``{prefix}_{m}`` (as :mod:`streammetrics.otel` does): its estimated value, its
interval where :meth:`~streammetrics.monitoring.Estimated.interval` has one for it (Accuracy,
Precision, Recall), its bounds where the wrapped member has them, and the expected samples.
Beside the realised metrics in one registry, give the estimate its own prefix
(``prefix="streammetrics_estimated"``).
* ``{prefix}_{m}_collect_errors_total``: a counter of the scrapes that left ``m`` out (below).

A :class:`~streammetrics.Sliced` accumulator (also inside DelayedLabels) is refused here: it is
exported slice by slice, the slice as a label, by :mod:`streammetrics.prometheus_sliced`.

Extra constant ``labels`` (e.g. ``{"model": "v3"}``) are attached to every sample.

Failures never fail the scrape: prometheus-client answers HTTP 500 for the whole registry -- every
other collector's metrics too -- when one collector raises, so this one never does. A member whose
value cannot be computed or exported (``compute`` raises, a warning the process turned into an
error is raised from inside it, a value ``float`` refuses) is left out of that scrape whole, the
other members are exported as usual; an interval or bounds pair that fails unexpectedly is left
out alone (its member's value is still exported); if the state's snapshot itself fails, every
member is left out of that scrape. Each skip adds 1 to the counter
``{prefix}_{m}_collect_errors_total`` (exported for every member from the first scrape on, 0 while
nothing failed: alert on ``increase(...[10m]) > 0``), and the first failure of each kind per member
is logged as a warning on the ``streammetrics.prometheus`` logger, with its traceback; later ones
are only counted. The library's own warnings (``UndefinedMetricWarning``: the value is NaN) are
dropped on the scrape's thread only, whatever the warning filters, and numpy's floating-point
warnings are off there (``np.errstate``); the process-wide filters are never touched.

Label values are always valid UTF-8 text: characters UTF-8 cannot encode (lone surrogates such as
``"\\ud800"``) are written as backslash escapes, an int too long for ``str`` in hexadecimal. The
constant ``labels`` must be such text already (``ValueError`` otherwise).

Names: :meth:`MetricsCollector.describe` lists every family name a collector can export, so
prometheus-client's registry refuses (``ValueError``, at ``register``) a second collector that
would export a family of the same name -- two families of one name in one exposition make
Prometheus reject the whole scrape. Give each collector its own ``prefix`` (or member names).

Locking: a scrape holds the metric's lock only while it copies the state (``metric.copy()``,
O(state size), no validation; a DelayedLabels with ``batch_size > 1`` folds its buffered labels
in first, so a scrape is never stale). Every value, interval and text line is then computed from
the copy with the lock released, so ``update`` on other threads waits at most for that copy, and
all gauges of one scrape describe the same state. The exposition work happens only on a scrape.

Per-class series (``per_class``, ``max_series``): an array value exports one series per class
(a C-class confusion matrix: C² series, 1M for C = 1000 -- seconds to render and heavy for
Prometheus). ``per_class="auto"`` (default) exports array-valued gauges while the scrape stays
within ``max_series`` series (default 10,000): gauges are taken in order (members in order; for
each its value, interval ends, bounds ends), and one that would push the scrape past the cap is
left out whole -- never truncated -- and counted in ``{prefix}_{m}_omitted_series`` (the number of
series not exported for member ``m``; present only when something was left out). Scalar gauges
(values, scalar intervals, sample counts, counters) are always exported. ``per_class=False``
exports no array values (all counted as omitted); ``per_class=True`` exports all of them, with no
cap (an explicit opt-in for large C).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

try:
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
    from prometheus_client.core import Metric as Family
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "streammetrics.prometheus needs prometheus-client: pip install 'streammetrics[prometheus]'"
    ) from exc

from streammetrics._core.metric import Metric
from streammetrics._core.params import Param, check_accumulator, check_param
from streammetrics._core.warn import silenced
from streammetrics.monitoring.estimated import Estimated
from streammetrics.wrappers.decay import Decayed
from streammetrics.wrappers.delayed.core import DelayedLabels
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.core import Sliced
from streammetrics.wrappers.window import Window

__all__ = ["MetricsCollector", "register"]

#: A Prometheus metric name, and a label name (``class``, ``actual``, ``predicted``, ``label``:
#: reserved for the labels this collector sets).
_METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_PREFIX = Param("text", "not a valid Prometheus metric name", pattern=_METRIC_NAME)
_FULL_NAME = Param("text", "does not make a valid Prometheus metric name", pattern=_METRIC_NAME)
_LABEL_NAME = Param("text", "invalid or reserved label name (reserved: class, actual, predicted, label, "
                    "output)", pattern=r"[a-zA-Z_][a-zA-Z0-9_]*",
                    excluded=("class", "actual", "predicted", "label", "output"))
_PER_CLASS = Param("choice", "must be True, False or 'auto'", choices=(True, False, "auto"))
_MAX_SERIES = Param("int", "must be an int >= 0", low=0)
#: The gauges one member can export, by suffix of ``{prefix}_{member}``.
_SUFFIXES = ("", "_interval_low", "_interval_high", "_bounds_low", "_bounds_high", "_samples",
             "_omitted_series")
#: What a value's interval()/bounds() raises where the metric simply has none (e.g. a macro
#: average has no Wilson interval): left out silently. Anything else is a collect error.
_NO_INTERVAL = (ValueError, AttributeError, TypeError, NotImplementedError)

logger = logging.getLogger("streammetrics.prometheus")


def label_value(value: Any) -> str:
    """``value`` as a Prometheus label value, which must be valid UTF-8 text.

    ``str(value)``, except: an int too long for ``str`` (Python's 4300-digit limit) is written in
    hexadecimal (``0x...``); characters UTF-8 cannot encode (lone surrogates) become backslash
    escapes (``"\\ud800"``); a value whose ``str`` raises becomes ``<TypeName>``. Never raises.
    O(len(text)).
    """
    try:
        text = value if isinstance(value, str) else str(value)
    except ValueError:
        text = hex(value) if isinstance(value, int) else f"<{type(value).__name__}>"
    except Exception:
        text = f"<{type(value).__name__}>"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def check_labels(labels: Mapping[str, Any] | None) -> dict[str, str]:
    """The constant ``labels`` as ``{name: text}``: each name a valid label name (not one of the
    reserved ones), each value turned into text by ``str``, which must be encodable as UTF-8;
    ``ValueError`` naming the first bad entry otherwise. O(len(labels))."""
    out: dict[str, str] = {}
    for k, v in (labels or {}).items():
        check_param(k, "labels", _LABEL_NAME)
        try:
            text = v if isinstance(v, str) else str(v)
            text.encode("utf-8")
        except Exception:
            shown = label_value(v)[:200]
            raise ValueError(f"labels: the value of {k!r} must be text UTF-8 can encode, got "
                             f"{shown!r} ({type(v).__name__})") from None
        out[k] = text
    return out


class CollectErrors:
    """The failures one collector skipped, counted per name (the
    ``{prefix}_{name}_collect_errors_total`` counters); the first failure of each exception type
    per name is logged as a warning with its traceback. Thread-safe (scrapes may overlap).

    Parameters
    ----------
    names : iterable of str
        The counted names (members); each counter starts at 0.
    owner : str
        What the log lines name (the collector's prefix and name).
    """

    def __init__(self, names: Iterable[str], owner: str) -> None:
        self.counts = dict.fromkeys(names, 0)
        self.owner = owner
        self._logged: set[tuple[str, type]] = set()
        self._lock = threading.Lock()

    def record(self, name: str, what: str, exc: BaseException) -> None:
        """Count one skipped ``what`` of ``name`` (log it if its kind is new). O(1)."""
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            first = (name, type(exc)) not in self._logged
            self._logged.add((name, type(exc)))
        if first:
            logger.warning(
                "%s: %s left out of the Prometheus scrape (%s: %s); the scrape goes on, each "
                "such failure adds 1 to %s_collect_errors_total, and later %s failures of %r "
                "are counted, not logged", self.owner, what, type(exc).__name__,
                label_value(exc)[:300], name, type(exc).__name__, name, exc_info=exc)

    def families(self, prefix: str, labels: Mapping[str, str]) -> list[CounterMetricFamily]:
        """One counter family per name. O(names)."""
        with self._lock:
            counts = dict(self.counts)
        out = []
        for name, count in counts.items():
            fam = CounterMetricFamily(f"{prefix}_{name}_collect_errors",
                                      "failures left out of Prometheus scrapes (see the log)",
                                      labels=list(labels))
            fam.add_metric(list(labels.values()), float(count))
            out.append(fam)
        return out


def check_names(names: list[Family]) -> None:
    """``ValueError`` if two of the families (a counter with its ``_total`` sample) would
    export the same name. O(names)."""
    seen: set[str] = set()
    for fam in names:
        for name in (fam.name, f"{fam.name}_total") if fam.type == "counter" else (fam.name,):
            if name in seen:
                raise ValueError(f"name: two gauges of this collector would both be named {name!r}; "
                                 "rename a member")
            seen.add(name)


def _samples(metric: Metric) -> float | None:
    """The (weighted) number of samples behind ``metric``'s value, as its state declares it
    (:meth:`~streammetrics._core.state.State.sample_count`: a window's length, the decayed count, the
    confusion counts' total (multilabel: of the first label), the exact buffer's or the bins'
    total weight, the calibration sums' total weight); None for the states that do not count
    (retrieval, sliced). Read under the metric's lock. O(classes) or O(bins)."""
    with metric._lock:
        return metric._state.sample_count()


class _EstimatedMember:
    """One member of a snapshot ``Estimated(MetricSet(...))``, read as the collector reads a
    metric: its estimated value, its interval (:meth:`Estimated.interval` with ``member=``), the
    bounds of the wrapped member where it has them, and the expected number of samples (the
    estimator's total weight, under its lock). Not an accumulator: a view of one copy."""

    family = "estimated"

    def __init__(self, estimated: Estimated, name: str) -> None:
        self._estimated = estimated
        self._name = name
        wrapped = _estimated_set(estimated)
        assert wrapped is not None
        self._inner: Metric = wrapped[name]
        self._lock = estimated._lock
        self._state = estimated._state

    @property
    def kind(self) -> str:
        return f"Estimated {type(self._inner).__name__}"

    def __repr__(self) -> str:
        return f"Estimated({self._inner!r})"

    def __getattr__(self, what: str) -> Any:
        if what == "bounds" and hasattr(self._inner, "bounds"):
            return self._inner.bounds
        raise AttributeError(what)

    def compute(self) -> Any:
        return self._inner.compute()

    def interval(self, confidence: float = 0.95) -> tuple[Any, Any]:
        return self._estimated.interval(confidence, member=self._name)


def _estimated_set(metric: Metric) -> MetricSet | None:
    """The MetricSet an ``Estimated`` wraps (exported member by member), else None."""
    inner = metric.metric if isinstance(metric, Estimated) else None
    return inner if isinstance(inner, MetricSet) else None


class MetricsCollector:
    """A prometheus-client collector over one accumulator, MetricSet or DelayedLabels.

    Every scrape reads the current values; nothing is done per update. Gauges per member
    ``m``: ``{prefix}_{m}`` (the value; per-class arrays carry a ``class`` label),
    ``{prefix}_{m}_interval_low`` / ``_high``, ``{prefix}_{m}_bounds_low`` / ``_high``,
    ``{prefix}_{m}_samples``, ``{prefix}_{m}_collect_errors_total`` (scrapes that left ``m``
    out; a scrape never fails because of one member), and for DelayedLabels
    ``{prefix}_delayed_{stat}`` (module docstring).

    Parameters
    ----------
    metric : Metric
        What to expose. A MetricSet (or a DelayedLabels around one) exposes each member.
    name : str, optional
        Member name for a single accumulator (default: its class name, lower case).
    prefix : str, default "streammetrics"
        Metric-name prefix.
    labels : mapping of str to str, optional
        Constant labels for every sample (``class``, ``actual``, ``predicted`` and ``label`` are
        reserved).
    confidence : float or None, default 0.95
        Confidence level of the exported ``interval()`` gauges (None: do not export them).
    per_class : {"auto", True, False}, default "auto"
        ``"auto"``: array-valued (per-class) gauges while the scrape holds at most
        ``max_series`` series; ``True``: all of them, no cap; ``False``: none (module docstring).
    max_series : int, default 10000
        The cap of ``per_class="auto"`` (an int >= 0).

    Attributes
    ----------
    members : dict of str to Metric
        The exposed members by name.

    Notes
    -----
    Cost per scrape: a copy of the state under the lock (O(state size)), then, without the
    lock, one ``compute`` (plus ``interval``/``bounds``) per member and one sample per series.

    Examples
    --------
    >>> from prometheus_client import CollectorRegistry
    >>> import streammetrics as sm
    >>> from streammetrics.prometheus import MetricsCollector
    >>> metrics = sm.MetricSet(recall=sm.Recall(), auroc=sm.AUROC())
    >>> registry = CollectorRegistry()
    >>> registry.register(MetricsCollector(metrics, labels={"model": "v3"}))
    >>> _ = metrics.update([1, 0, 1, 1], [0.9, 0.2, 0.3, 0.8])
    >>> round(registry.get_sample_value("streammetrics_recall", {"model": "v3"}), 4)
    0.6667
    >>> registry.get_sample_value("streammetrics_auroc_samples", {"model": "v3"})
    4.0
    """

    def __init__(self, metric: Metric, *, name: str | None = None, prefix: str = "streammetrics",
                 labels: Mapping[str, str] | None = None, confidence: float | None = 0.95,
                 per_class: bool | str = "auto", max_series: int = 10_000) -> None:
        check_accumulator(metric)
        check_param(prefix, "prefix", _PREFIX)
        self.per_class = check_param(per_class, "per_class", _PER_CLASS)
        self.max_series = check_param(max_series, "max_series", _MAX_SERIES)
        self.metric = metric
        self.prefix = prefix
        self.labels = check_labels(labels)
        self.confidence = confidence
        inner = metric._metric if isinstance(metric, DelayedLabels) else metric
        if isinstance(inner, Sliced):
            raise ValueError(
                "metric: a Sliced accumulator (also inside DelayedLabels) is exported slice by "
                "slice by streammetrics.prometheus_sliced.register_sliced (SlicedCollector); "
                "this collector would copy its whole state on every scrape and export no value"
            )
        self._inner = inner
        self._name = name or type(inner).__name__.lower()
        if isinstance(inner, MetricSet):
            self.members = dict(inner.items())
        elif (wrapped := _estimated_set(inner)) is not None:
            self.members = dict(wrapped.items())
        else:
            self.members = {self._name: inner}
        for member in self.members:
            check_param(f"{prefix}_{member}", "name", _FULL_NAME)
        self._stats = list(metric.stats()) if isinstance(metric, DelayedLabels) else []
        self.errors = CollectErrors(self.members, f"{type(self).__name__}({prefix}_{self._name})")
        check_names(self.describe())

    def describe(self) -> list[Family]:
        """Every family a scrape can export (empty ones): the value, interval, bounds, samples
        and omitted-series gauges of each member, the DelayedLabels counters and the
        ``..._collect_errors`` counters. prometheus-client's registry uses them to refuse a
        second collector exporting a family of the same name. O(members)."""
        out: list[Family] = [GaugeMetricFamily(f"{self.prefix}_{m}{suffix}", "")
                             for m in self.members for suffix in _SUFFIXES]
        # the per-key families of a dict value (monitoring.Drift, also inside Window / Decayed)
        out += [GaugeMetricFamily(f"{self.prefix}_{m}_{key}{suffix}", "")
                for m, metric in self.members.items()
                for key in getattr(getattr(metric, "metric", metric), "value_keys", ())
                for suffix in ("", "_bounds_low", "_bounds_high")]
        out += [GaugeMetricFamily(f"{self.prefix}_delayed_{stat}", "") for stat in self._stats]
        out += [CounterMetricFamily(f"{self.prefix}_{m}_collect_errors", "") for m in self.members]
        return out

    def _snapshot(self) -> tuple[dict[str, Metric], dict[str, int] | None]:
        """Copies of the members (and the DelayedLabels counters): the only step that holds
        the metric's lock, for the time of a copy of its state."""
        metric = self.metric
        stats = None
        if isinstance(metric, DelayedLabels):
            with metric._lock:
                metric._flush_locked()  # batched labels: the scrape sees every one
                inner = metric._metric.copy()
                stats = metric.stats()
        else:
            inner = metric.copy()
        members: dict[str, Any]
        if isinstance(inner, MetricSet):
            members = dict(inner.items())
        elif (wrapped := _estimated_set(inner)) is not None:
            assert isinstance(inner, Estimated)
            members = {m: _EstimatedMember(inner, m) for m in wrapped}
        else:
            members = {self._name: inner}
        return members, stats

    def collect(self) -> Iterator[Family]:
        """The families of one scrape, all from one snapshot of the state (called by
        prometheus-client). Never raises: a member that fails is left out and counted
        (module docstring).

        Returns
        -------
        iterator of prometheus_client.core.Metric
            One family per exported name.
        """
        try:
            members, stats = self._snapshot()
        except Exception as exc:  # every member is left out of this scrape
            for member in self.members:
                self.errors.record(member, "the state's snapshot", exc)
            members, stats = {}, None
        out = self._render(members, stats, self.errors)
        yield from out
        yield from self.errors.families(self.prefix, self.labels)

    def _render(self, members: Mapping[str, Metric], stats: Mapping[str, int] | None,
                errors: CollectErrors, counted: str | None = None) -> list[Family]:
        """The families of the snapshot ``members`` (and ``stats``); a failing member is left
        out and recorded in ``errors`` under its name (or under ``counted``)."""
        out: list[Family] = []
        budget = [self.max_series]  # series the "auto" cap still allows in this scrape
        with silenced(), np.errstate(all="ignore"):
            for member, m in members.items():
                before = budget[0]
                try:
                    out.extend(self._member(member, m, budget, errors, counted or member))
                except Exception as exc:
                    budget[0] = before
                    where = f" (labels {self.labels})" if self.labels else ""
                    errors.record(counted or member, f"member {member!r}{where}", exc)
        for stat, value in (stats or {}).items():
            fam = self._family(f"{self.prefix}_delayed_{stat}", f"DelayedLabels counter {stat!r}", [])
            fam.add_metric(list(self.labels.values()), float(value))
            out.append(fam)
        return out

    # -- helpers -----------------------------------------------------------------------------------
    def _family(self, name: str, doc: str, extra: list[str]) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, label_value(doc), labels=[*self.labels, *extra])

    def _emit(self, name: str, doc: str, value: Any, budget: list[int],
              omitted: list[int], axis: str = "class") -> GaugeMetricFamily | None:
        """One gauge family for a scalar or an array value (None: not exportable, or an array
        left out by ``per_class``; then its series count is added to ``omitted[0]``). A 1-D
        value's label is ``axis`` (``"class"``; ``"output"`` for the regression family)."""
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            number = float(value)  # OverflowError for an int beyond float: a collect error
            fam = self._family(name, doc, [])
            fam.add_metric(list(self.labels.values()), number)
            budget[0] -= 1
            return fam
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf" or value.ndim > 3:
            return None
        if value.ndim and (self.per_class is False
                           or (self.per_class == "auto" and value.size > budget[0])):
            omitted[0] += value.size
            return None
        axes = {1: [axis], 2: ["actual", "predicted"], 3: ["label", "actual", "predicted"]}[value.ndim] \
            if value.ndim else []
        fam = self._family(name, doc, axes)
        const = list(self.labels.values())
        flat = value.astype(np.float64).ravel().tolist()
        for idx, v in zip(np.ndindex(value.shape), flat, strict=True):
            fam.add_metric([*const, *map(str, idx)], v)
        budget[0] -= value.size
        return fam

    def _member(self, member: str, m: Metric, budget: list[int], errors: CollectErrors,
                counted: str) -> list[GaugeMetricFamily]:
        base = f"{self.prefix}_{member}"
        kind = type(m._metric).__name__ if isinstance(m, (Window, Decayed)) else type(m).__name__
        if isinstance(m, _EstimatedMember):
            kind = m.kind
        axis = "output" if getattr(m, "family", None) == "regression" else "class"
        out: list[GaugeMetricFamily] = []
        omitted = [0]
        value = m.compute()
        # a value that is a dict of numbers (monitoring.Drift: {"psi": ..., "ks": ...}): one
        # gauge family per key, ``{base}_{key}``, and its bounds per key the same way
        parts = value if isinstance(value, dict) else {None: value}
        for key, part in parts.items():
            name = base if key is None else f"{base}_{key}"
            fam = self._emit(name, f"{repr(m)[:200]}" + ("" if key is None else f" [{key}]"), part,
                             budget, omitted, axis)
            if fam is not None:
                out.append(fam)
        if not out and not omitted[0]:
            return out  # not a number (e.g. a curve): nothing to export
        for what in ("interval", "bounds"):
            if not hasattr(m, what) or (what == "interval" and self.confidence is None):
                continue
            try:
                with contextlib.suppress(*_NO_INTERVAL):
                    read = getattr(m, what)
                    pairs = read(self.confidence) if what == "interval" else read()
                    pairs = pairs if isinstance(value, dict) and isinstance(pairs, dict) else {None: pairs}
                    for key, pair in pairs.items():
                        name = base if key is None else f"{base}_{key}"
                        fams = [self._emit(f"{name}_{what}_{end}", f"{kind} {what} {end} end", v, budget,
                                           omitted, axis)
                                for end, v in zip(("low", "high"), pair, strict=True)]
                        out.extend(f for f in fams if f is not None)
            except Exception as exc:  # an unexpected failure: the value is still exported
                errors.record(counted, f"the {what} of member {member!r}", exc)
        try:
            n = _samples(m)
        except Exception as exc:  # unexpected: the value is still exported
            errors.record(counted, f"the sample count of member {member!r}", exc)
            n = None
        if n is not None:
            f = self._emit(f"{base}_samples", f"{kind}: (weighted) samples behind the value", n,
                           budget, omitted)
            if f is not None:
                out.append(f)
        if omitted[0]:
            f = self._emit(f"{base}_omitted_series", f"{kind}: per-class series not exported "
                           "(per_class / max_series)", omitted[0], budget, omitted)
            if f is not None:
                out.append(f)
        return out


def register(metric: Metric, registry: CollectorRegistry | None = None, **kwargs: Any) -> MetricsCollector:
    """Register a :class:`MetricsCollector` for ``metric`` and return it.

    Parameters
    ----------
    metric : Metric
        What to expose (an accumulator, a MetricSet, a wrapper or a DelayedLabels).
    registry : prometheus_client.CollectorRegistry, optional
        Where to register (default: prometheus-client's global ``REGISTRY``, which its
        ``start_http_server`` serves).
    **kwargs
        The keyword arguments of :class:`MetricsCollector` (``name``, ``prefix``, ``labels``,
        ``confidence``, ``per_class``, ``max_series``).

    Returns
    -------
    MetricsCollector
        The registered collector (``registry.unregister(collector)`` removes it). prometheus-client
        raises ``ValueError`` if the registry already holds a collector exporting one of its
        family names (give it another ``prefix``).

    Examples
    --------
    >>> from prometheus_client import CollectorRegistry, generate_latest
    >>> import streammetrics as sm
    >>> from streammetrics.prometheus import register
    >>> registry = CollectorRegistry()
    >>> f1 = sm.F1().update([1, 0, 1], [0.8, 0.3, 0.6])
    >>> _ = register(f1, registry)
    >>> print(generate_latest(registry).decode().splitlines()[2])
    streammetrics_f1 1.0
    """
    collector = MetricsCollector(metric, **kwargs)
    (REGISTRY if registry is None else registry).register(collector)  # type: ignore[arg-type]
    return collector
