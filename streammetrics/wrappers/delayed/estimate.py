"""``DelayedLabels.estimate``: the wrapped metric estimated over the pending predictions (CBPE,
through :class:`~streammetrics.monitoring.Estimated`); see the method's docstring in ``core``."""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics.wrappers._base import SampleWrapper

from .slices import slices_argument

__all__ = ["estimate_pending"]


def estimate_pending(d: Any, include_labelled: bool) -> Any:
    """The estimate of ``d`` (a ``DelayedLabels``) over its pending predictions (and, with
    ``include_labelled``, its labelled pairs as they are). O(pending · C) plus the wrapped
    metric's update and read."""
    if d._regression:
        raise ValueError("estimate: not defined for regression metrics (CBPE estimates a "
                         "classifier's metric from calibrated class probabilities; a regression "
                         "prediction carries no distribution of its target); compute() gives "
                         "the value over the labelled pairs")
    from streammetrics.monitoring.estimated import Estimated  # the same layer; imported when used

    with d._lock:
        d._flush_locked()
        entries = list(d._pending.values())
        if isinstance(d._metric, SampleWrapper):
            raise ValueError("estimate: not defined around a Window or Decayed (their rows are "
                             "the labelled ones); wrap the plain metric")
        if d._spec is not None and np.dtype(d._spec[0]).kind != "f":
            raise ValueError(f"estimate: the pending predictions are labels (dtype "
                             f"{d._spec[0]}); an estimate needs probabilities")
        est = Estimated(type(d._metric)._from_config(d._metric._config()))
        labelled = d._metric.copy() if include_labelled else None
        kwargs: dict[str, Any] = {}
        if d._sliced and entries:
            kwargs["slices"] = slices_argument(d._slice_names, [e[3] for e in entries])
    if entries:
        probs = np.stack([np.asarray(e[0], dtype=np.float64) for e in entries])
        weights = None
        if any(e[1] is not None for e in entries):
            weights = np.array([1.0 if e[1] is None else e[1] for e in entries])
        est.update(probs, sample_weight=weights, **kwargs)
    if labelled is not None:
        est.metric.merge(labelled)
    return est.compute()
