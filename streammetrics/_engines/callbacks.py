"""What the framework integrations share: the metrics they own, the values they log.

Lightning (:mod:`streammetrics.lightning`), Keras (:mod:`streammetrics.keras`), Hugging Face
(:mod:`streammetrics.hf`), MLflow (:mod:`streammetrics.mlflow`) and TensorBoard
(:mod:`streammetrics.tensorboard`) all take "the metrics" in the same three shapes and log the
same flat ``{name: float}`` mapping; this module is that common part, with no framework import.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.metric import Metric
from streammetrics.wrappers.metricset import MetricSet

from .messages import brief


def as_metric_set(metrics: Any, what: str = "metrics") -> MetricSet:
    """The user's accumulators as one :class:`MetricSet` (the same objects, not copies).

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        A single metric is named after its class in lower case (``AUROC()`` -> ``"auroc"``).
    what : str
        The argument name used in error messages.

    Returns
    -------
    MetricSet
        ``metrics`` itself when it is one; otherwise a set holding the given objects.
    """
    if isinstance(metrics, MetricSet):
        return metrics
    if isinstance(metrics, Metric):
        return MetricSet({type(metrics).__name__.lower(): metrics})
    if isinstance(metrics, Mapping) and metrics:
        for name, m in metrics.items():
            if not isinstance(m, Metric):
                raise ValueError(f"{what}: {brief(name)} is not a streammetrics metric "
                                 f"(got {type(m).__name__})")
        return MetricSet(dict(metrics))
    raise ValueError(
        f"{what}: expected a MetricSet, a metric or a non-empty mapping of metrics, got {brief(metrics)}"
    )


def _scalar(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return float(value)
    return None


def scalar_values(values: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The scalar entries of a ``compute()`` result, as ``{prefix + name: float}``.

    Per-class arrays, matrices and curve results are left out (they go to artifacts or plots);
    an undefined value (nan) is kept as nan, which every logger here accepts. O(len(values)).
    """
    out: dict[str, float] = {}
    for name, value in values.items():
        v = _scalar(value)
        if v is not None:
            out[f"{prefix}{name}"] = v
    return out


def intervals(ms: MetricSet, confidence: float = 0.95) -> dict[str, tuple[float, float]]:
    """``{name: (lower, upper)}`` for every member that reports an interval around a scalar value.

    A bounded (``max_bytes=``) ranking metric gives its certified bounds (``bounds()``); a metric
    with a confidence interval (``interval(confidence)``) gives that. Members without one, or whose
    interval is not a pair of scalars (e.g. per class), are left out.
    """
    out: dict[str, tuple[float, float]] = {}
    for name, m in ms.items():
        pair: Any = None
        try:
            if getattr(m, "max_bytes", None) is not None and hasattr(m, "bounds"):
                pair = m.bounds()
            elif hasattr(m, "interval"):
                pair = m.interval(confidence)
        except (ValueError, TypeError, NotImplementedError):
            continue
        if isinstance(pair, tuple) and len(pair) == 2:
            lo, hi = _scalar(pair[0]), _scalar(pair[1])
            if lo is not None and hi is not None and not (math.isnan(lo) and math.isnan(hi)):
                out[name] = (lo, hi)
    return out


def to_numpy(x: Any) -> Any:
    """A framework tensor as a numpy array (detached, on the CPU); anything else unchanged."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch tensors (Keras' torch backend too)
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        return x.numpy()
    return x
