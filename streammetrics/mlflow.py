"""MLflow: log accumulators' values, intervals and curves to the active run.

Install the extra: ``pip install 'streammetrics[mlflow]'``. Importing this module imports
``mlflow`` (``import streammetrics`` never does).

Usage::

    import mlflow, streammetrics as sm
    from streammetrics.mlflow import log_metrics

    with mlflow.start_run():
        for step, (y, s) in enumerate(batches):
            metrics.update(y, s)
            log_metrics(metrics, step=step)       # "auroc", "auroc_lower", "auroc_upper", ...

What is logged, per member of the set:

* every scalar value, under its name (``prefix`` first);
* its interval, where the metric has one, as ``<name>_lower`` / ``<name>_upper``: the certified
  bounds of a bounded (``max_bytes=``) ranking metric, otherwise the metric's confidence
  interval (``interval(confidence)``);
* with ``artifacts=True``, every non-scalar value (per-class arrays, confusion matrices, curves)
  as one JSON artifact ``streammetrics/<prefix><name>[_step<step>].json`` (curves as their
  ``to_dict()`` arrays: thresholds, rates, ...; nan and infinities as ``null``);
* with ``plots=True`` (and matplotlib installed, the ``plot`` extra), the plot of every member
  that draws itself (ROC, PR, DET, calibration and gains curves, confusion matrices, reports:
  their ``.plot()``, bounded curves with their certified envelopes) as a PNG artifact
  ``streammetrics/<prefix><name>[_step<step>].png``.

Complexity: one ``compute()`` plus the intervals' cost (O(1) for counts, a bootstrap where the
metric uses one), and one MLflow call per kind of record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import mlflow
import numpy as np

from streammetrics._engines.callbacks import as_metric_set, intervals, scalar_values

__all__ = ["log_metrics", "jsonable", "figures"]


def jsonable(value: Any) -> Any:
    """A computed value as JSON-ready data: arrays as lists, result objects as dicts of fields.

    nan and infinities become ``None`` (JSON has no such numbers).

    Parameters
    ----------
    value : Any
        What ``compute()`` returned (a float, an array, a result object, a dict of them).

    Returns
    -------
    Any
        Plain lists, dicts, strings, numbers and ``None``, for ``json.dumps(..., allow_nan=False)``.
    """
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "to_dict") and callable(value.to_dict):  # curve results: their arrays
        return jsonable(value.to_dict())
    if hasattr(value, "_asdict"):
        return jsonable(value._asdict())
    if hasattr(value, "__dict__"):
        return {k: jsonable(v) for k, v in vars(value).items() if not k.startswith("_")}
    return value


def log_metrics(
    metrics: Any,
    step: int | None = None,
    *,
    prefix: str = "",
    confidence: float = 0.95,
    with_intervals: bool = True,
    artifacts: bool = True,
    plots: bool = True,
) -> dict[str, float]:
    """Log the accumulators' values (and intervals, curves) to the active MLflow run.

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        The accumulators to compute (not modified).
    step : int, optional
        MLflow step of the scalar records (and suffix of the artifact names).
    prefix : str
        Prefix of every logged name.
    confidence : float
        Level of the confidence intervals (the certified bounds of bounded metrics are exact).
    with_intervals : bool
        Log ``<name>_lower`` / ``<name>_upper``.
    artifacts : bool
        Log non-scalar values as JSON artifacts.
    plots : bool
        Log the plot of every member that draws itself as a PNG artifact (skipped when
        matplotlib is not installed).

    Returns
    -------
    dict of str -> float
        Every scalar record that was logged.

    Examples
    --------
    >>> import mlflow, streammetrics as sm                                  # doctest: +SKIP
    >>> with mlflow.start_run():                                            # doctest: +SKIP
    ...     log_metrics(sm.MetricSet(f1=sm.F1()).update([0, 1], [0.2, 0.9]), step=0)
    {'f1': 1.0, 'f1_lower': ..., 'f1_upper': ...}
    """
    ms = as_metric_set(metrics)
    values = ms.compute()
    records = scalar_values(values, prefix)
    if with_intervals:
        for name, (lo, hi) in intervals(ms, confidence).items():
            records[f"{prefix}{name}_lower"] = lo
            records[f"{prefix}{name}_upper"] = hi
    if records:
        mlflow.log_metrics(records, step=step)
    if artifacts:
        suffix = "" if step is None else f"_step{step}"
        for name, value in values.items():
            if f"{prefix}{name}" in records:
                continue
            mlflow.log_dict(jsonable(value), f"streammetrics/{prefix}{name}{suffix}.json")
    if plots:
        suffix = "" if step is None else f"_step{step}"
        for name, figure in figures(ms, values):
            mlflow.log_figure(figure, f"streammetrics/{prefix}{name}{suffix}.png")
            import matplotlib.pyplot as plt

            plt.close(figure)
    return records


def figures(ms: Any, values: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(name, matplotlib Figure)`` of every member of ``ms`` that draws itself (its
    accumulator's ``.plot()``, else its value's); empty when matplotlib is not installed.

    Parameters
    ----------
    ms : MetricSet
        The accumulators, by name.
    values : Mapping[str, Any]
        Their computed values (``ms.compute()``), by the same names.

    Returns
    -------
    list of (str, matplotlib.figure.Figure)
        One figure per member that draws itself, in the order of ``values``.
    """
    try:
        import matplotlib.pyplot  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        return []
    out = []
    for name, value in values.items():
        source = ms[name] if callable(getattr(ms[name], "plot", None)) else value
        if callable(getattr(source, "plot", None)):
            out.append((name, source.plot().figure_))
    return out
