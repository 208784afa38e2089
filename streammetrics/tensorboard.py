"""TensorBoard: write accumulators' values (and intervals) through torch's ``SummaryWriter``.

Needs torch and the ``tensorboard`` package (``pip install 'streammetrics[tensorboard]'``).
Importing this module imports nothing; :func:`log_scalars` uses the writer it is given.

Usage::

    from torch.utils.tensorboard import SummaryWriter
    from streammetrics.tensorboard import log_scalars

    writer = SummaryWriter("runs/eval")
    log_scalars(writer, metrics, step=epoch, prefix="val/")   # "val/auroc", "val/auroc_lower", ...

The records are the ones :func:`streammetrics.mlflow.log_metrics` writes (the same names and
values): each scalar value, and ``<name>_lower`` / ``<name>_upper`` where the metric has an
interval. Complexity: one ``compute()`` and one ``add_scalar`` per record.
"""

from __future__ import annotations

from typing import Any

from streammetrics._engines.callbacks import as_metric_set, intervals, scalar_values

__all__ = ["log_scalars"]


def log_scalars(
    writer: Any,
    metrics: Any,
    step: int | None = None,
    *,
    prefix: str = "",
    confidence: float = 0.95,
    with_intervals: bool = True,
) -> dict[str, float]:
    """Write the scalar values (and intervals) of ``metrics`` with ``writer.add_scalar``.

    Parameters
    ----------
    writer : torch.utils.tensorboard.SummaryWriter
        Any object with ``add_scalar(tag, value, global_step)``.
    metrics : MetricSet, Metric or mapping of name -> Metric
        The accumulators to compute (not modified).
    step : int, optional
        The ``global_step`` of the records.
    prefix : str
        Prefix of every tag (e.g. ``"val/"``).
    confidence : float
        Level of the confidence intervals.
    with_intervals : bool
        Also write ``<name>_lower`` / ``<name>_upper``.

    Returns
    -------
    dict of str -> float
        Every record written.

    Examples
    --------
    >>> import streammetrics as sm
    >>> class Writer:
    ...     def add_scalar(self, tag, value, global_step=None):
    ...         print(tag, value, global_step)
    >>> _ = log_scalars(Writer(), {"acc": sm.Accuracy().update([0, 1], [0.2, 0.4])}, step=3,
    ...                 with_intervals=False)
    acc 0.5 3
    """
    ms = as_metric_set(metrics)
    records = scalar_values(ms.compute(), prefix)
    if with_intervals:
        for name, (lo, hi) in intervals(ms, confidence).items():
            records[f"{prefix}{name}_lower"] = lo
            records[f"{prefix}{name}_upper"] = hi
    for tag, value in records.items():
        writer.add_scalar(tag, value, step)
    return records
