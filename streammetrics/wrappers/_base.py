"""What the service wrappers share: ``Window``, ``Decayed`` and ``DelayedLabels``.

A wrapper holds one wrapped accumulator (``_metric``) and an injected clock, and saves its
configuration as the wrapped metric's nested configuration (``{"class": ..., "config": ...}``
under ``"metric"``) next to its own constructor parameters (:class:`Wrapper`: declared once per
wrapper in ``_params``, read back by one ``_from_config``). The sample-reweighting wrappers
(``Window``, ``Decayed``; :class:`SampleWrapper`) also share ``update`` (classification and
retrieval arguments), the synchronisation of the wrapped metric's state before a read, and the
pass-through of ``interval``/``bounds``. The row queue they keep lives in :mod:`._rows`; the
timestamps in :mod:`._timestamps`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from numpy.typing import ArrayLike

from streammetrics._core.metric import Metric, R_co
from streammetrics._core.params import check_accumulator
from streammetrics._core.timestamps import Clock

from .metricset import MetricSet


def resolve_clock(clock: Clock | None) -> Clock:
    """The ``clock`` argument of a wrapper: a callable, or ``None`` for :func:`time.time`."""
    if clock is not None and not callable(clock):
        raise ValueError(f"clock: must be callable, got {clock!r}")
    return clock or time.time


def nested_config(metric: Metric) -> dict[str, Any]:
    """The wrapped metric's class name and configuration, as a wrapper's config stores them."""
    return {"class": type(metric).__name__, "config": metric._config()}


def metric_from_nested(spec: Any, wrapper: str) -> Metric:
    """An empty metric from a :func:`nested_config` entry of an (untrusted) ``wrapper`` config."""
    if not isinstance(spec, Mapping) or not isinstance(spec.get("config"), Mapping):
        raise ValueError(f"state: bad metric entry in a {wrapper} config")
    name = spec.get("class")
    target = Metric._registry.get(name) if isinstance(name, str) else None
    if target is None:
        raise ValueError(f"state: unknown metric class {spec.get('class')!r}")
    return target._from_config(spec["config"])


class Wrapper(Metric[R_co]):
    """Base of the wrappers: the wrapped ``_metric``, an injected clock, and the configuration.

    Subclasses list their constructor keywords in ``_params`` (saved after the nested metric,
    in that order) and, for keywords added after files were first written, a value to use when
    a file lacks them in ``_param_defaults``.
    """

    _metric: Metric[R_co]
    #: Constructor keywords saved in the configuration next to the nested metric.
    _params: ClassVar[tuple[str, ...]] = ()
    #: Values of keywords a configuration may lack (files written before they existed).
    _param_defaults: ClassVar[Mapping[str, Any]] = {}

    def _config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": nested_config(self._metric)}
        for name in self._params:
            out[name] = getattr(self, name)
        return out

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> Any:
        extra = set(config) - {"metric", *cls._params}
        if extra:
            raise ValueError(f"state: bad configuration for {cls.__name__}: unexpected {sorted(extra)}")
        inner = metric_from_nested(config.get("metric"), cls.__name__)
        cls._check_nested(inner)
        kwargs = {name: config.get(name, cls._param_defaults.get(name)) for name in cls._params}
        return cls(inner, **kwargs)  # type: ignore[call-arg]  # subclasses take (metric, **params)

    @classmethod
    def _check_nested(cls, metric: Metric) -> None:
        """Hook: reject a loaded nested metric this wrapper cannot hold (``ValueError``)."""

    def _clock_home(self) -> Any:
        """The object whose ``clock`` attribute is the wrapper's clock."""
        return self

    def copy(self) -> Any:
        out = super().copy()
        out._clock_home().clock = self._clock_home().clock  # configuration, not state
        return out


_W = TypeVar("_W", bound="SampleWrapper[Any]")

#: ``update(y_score)`` of a metric without labels (``family == "drift"``; ``"estimated"``:
#: ``update(y_prob)``): y_pred not given.
_SCORES_ONLY: Any = object()


class SampleWrapper(Wrapper[R_co]):
    """What every sample-reweighting wrapper (``Window``, ``Decayed``) shares: it holds a twin
    of the wrapped metric whose state (``self._state.inner``) is kept in sync with the wrapper's
    state before each read, and passes ``interval``/``bounds`` through to it."""

    _forward_merges = False  # forward(): samples carry order / time: update, not merge
    _state: Any  # a wrapper state with ``inner``, ``clock`` and ``sync()``

    def _wrap(self, metric: Metric[R_co], wrapper: str, states: tuple[type, type], *params: Any,
              clock: Clock | None) -> None:
        """Hold an empty twin of ``metric`` (checked by :func:`check_wrappable`, the messages
        naming ``wrapper``) and the wrapper state ``states[0](inner, *params, clock)``
        (``states[1]`` for a retrieval metric), its rows stored as class codes (the wrapped
        metric's label step, :attr:`_codec`, runs before the wrapper state's ``prepare``). O(1)."""
        clock = resolve_clock(clock)
        self._metric = check_wrappable(metric, wrapper)
        self.family = self._metric.family
        state_type = states[1] if self.family == "retrieval" else states[0]
        self._state = state_type(self._metric._state, *params, clock)

    @functools.cached_property
    def _codec(self) -> Any:
        """The wrapped metric's label step: the wrapper's rows are stored as class codes."""
        return self._metric._codec

    @property
    def metric(self) -> Metric[R_co]:
        """The wrapped accumulator (its state is the wrapper's inner state)."""
        return self._metric

    def update(self: _W, y_true: ArrayLike, y_pred: ArrayLike = _SCORES_ONLY, *,  # type: ignore[override]
               sample_weight: ArrayLike | None = None,
               timestamp: Any = None, **query_kwargs: Any) -> _W:
        """Fold in a batch (or one sample), with per-row or per-batch ``timestamp``. Atomic.

        Retrieval metrics take their own update arguments -- ``update(relevance, scores, *,
        doc_ids=None, judged=None, n_relevant=None, query_ids=None, timestamp=None)`` -- with
        one timestamp per query (or one for the call). A metric without labels
        (``monitoring.Drift``; ``monitoring.Estimated``: ``y_prob``) takes ``update(y_score, *,
        sample_weight=None, timestamp=None)``."""
        if self.family in ("drift", "estimated"):
            if y_pred is not _SCORES_ONLY or query_kwargs:
                raise TypeError(f"update() of {type(self._metric).__name__} takes the scores only: "
                                "update(y_score, *, sample_weight=None, timestamp=None)")
            y_true, y_pred = self._state.inner.rows_of(y_true)
        elif y_pred is _SCORES_ONLY:
            raise TypeError("update() missing 1 required positional argument: 'y_pred'")
        if self.family == "retrieval":
            if sample_weight is not None:
                raise TypeError("update() of a retrieval metric takes no sample_weight")
            return self._update_state(y_true, y_pred, timestamp=timestamp, **query_kwargs)
        if query_kwargs:
            raise TypeError(f"update() got unexpected keyword arguments {sorted(query_kwargs)}")
        return self._update_state(y_true, y_pred, sample_weight, timestamp=timestamp)

    def _synced(self) -> Metric[R_co]:
        self._state.sync()
        self._metric._state = self._state.inner
        return self._metric

    def _compute(self) -> R_co:
        return self._synced()._compute()

    def _passthrough(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self._metric, name):
            raise AttributeError(f"{type(self._metric).__name__} has no {name}()")
        with self._lock:
            return getattr(self._synced(), name)(*args, **kwargs)

    def interval(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped metric's statistical ``interval`` on the wrapper's (weighted) samples."""
        return self._passthrough("interval", *args, **kwargs)

    def bounds(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped metric's certified ``bounds`` on the wrapper's (weighted) samples."""
        return self._passthrough("bounds", *args, **kwargs)

    def _clock_home(self) -> Any:
        return self._state  # the state reads the clock when an update has no timestamp


# Abstract bases, not classes a saved file may name.
for _abstract in (Wrapper, SampleWrapper):
    if Metric._registry.get(_abstract.__name__) is _abstract:
        del Metric._registry[_abstract.__name__]


def check_wrappable(metric: Any, wrapper: str) -> Metric:
    """The wrapped metric must be one empty classification or retrieval accumulator (not a set
    or another sample wrapper); returns an empty twin of it."""
    check_accumulator(metric, refused=(MetricSet,), rule="expected one accumulator, not a MetricSet (wrap "
                      "each member and put the wrappers in a MetricSet)")
    check_accumulator(metric, refused=(SampleWrapper,), rule=f"a {wrapper} cannot wrap a Window or Decayed")
    if metric.family not in ("classification", "retrieval", "regression", "drift", "estimated"):
        raise ValueError(f"{wrapper}: supports classification, regression, retrieval, drift and estimated "
                         f"metrics, got family {metric.family!r}")
    if metric.family == "estimated" and not metric._state.windowable:  # type: ignore[attr-defined]
        inner = type(metric.metric).__name__  # type: ignore[attr-defined]
        raise ValueError(f"{wrapper}: wraps an Estimated of a plain metric or a MetricSet (its rows are "
                         f"prepared again without keywords), not of {inner}; wrap the {wrapper} "
                         f"inside: Estimated({wrapper}(...))")
    twin = type(metric)._from_config(metric._config())
    with metric._lock:
        if not metric._state.equals(twin._state):
            raise ValueError(f"{wrapper}: wrap an empty metric (this one already holds samples)")
    return twin
