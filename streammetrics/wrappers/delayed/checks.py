"""Label-time checks of ``DelayedLabels`` with batched folding (``batch_size > 1``).

A single labelled pair is buffered, not fed, so it is checked when its label arrives with a dry
run of the metric's update (``State.prepare``: validates, changes nothing). A dry run per label
would cost what batching saves, so what passed is remembered per (kind of prediction, label):
the range of the scores and, for a row of scores, the range of the row sums. A later pair whose
scores and sum lie inside the ranges that passed skips the dry run; the metrics' rules on a
prediction are of that shape (not NaN; within a range such as [0, 1]; a probability row sums to
1 within a tolerance), so every pair skipped would have passed. Anything else is dry-run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics.wrappers.metricset import MetricSet

from .slices import slices_argument

__all__ = ["covered", "dry_run", "kind_error", "summary", "widened"]

_ONES: dict[tuple[int, np.dtype[Any]], np.ndarray] = {}  # (length, dtype) -> ones, for row sums


def summary(score: Any) -> tuple[float, ...]:
    """(lowest, highest) of a pair's score; for a row of scores also its sum (a row-times-ones
    product, as the probability checks compute it). NaN propagates (and is never covered)."""
    if type(score) is float:
        return (score, score)
    row = np.asarray(score)
    if row.ndim == 0:
        v = float(row)
        return (v, v)
    lo, hi = float(row.min()), float(row.max())
    if row.ndim == 1 and row.dtype.kind == "f":
        ones = _ONES.get((row.shape[0], row.dtype))
        if ones is None:
            ones = _ONES[row.shape[0], row.dtype] = np.ones(row.shape[0], dtype=row.dtype)
        return (lo, hi, float(row @ ones))
    return (lo, hi, float(row.sum(dtype=np.float64)))


def covered(seen: tuple[float, ...] | None, summ: tuple[float, ...]) -> bool:
    """Whether a pair with summary ``summ`` lies inside the ranges in ``seen`` (lowest score,
    highest score[, lowest sum, highest sum]) that passed a dry run."""
    if seen is None or not (seen[0] <= summ[0] and summ[1] <= seen[1]):
        return False
    return len(summ) == 2 or seen[2] <= summ[2] <= seen[3]


def widened(seen: tuple[float, ...] | None, summ: tuple[float, ...]) -> tuple[float, ...]:
    """The ranges of ``seen`` widened to hold a pair with summary ``summ`` that passed."""
    mine = summ[:2] + summ[2:] * 2  # a row: its sum is both ends of its range
    if seen is None:
        return mine
    return (min(seen[0], mine[0]), max(seen[1], mine[1])) + (
        (min(seen[2], mine[2]), max(seen[3], mine[3])) if len(mine) == 4 else ())


def dry_run(metric: Any, y: float, score: Any, weight: float | None, scalar: Any) -> None:
    """The metric's (every member's, for a MetricSet) input checks on one pair; ``ValueError``
    if it rejects it. ``scalar`` turns a 0-d score into a Python scalar."""
    owners = metric._owners() if isinstance(metric, MetricSet) else [metric]
    if type(score) is float or np.ndim(score) == 0:
        args: tuple[Any, ...] = (y, scalar(score), weight)
    else:
        args = (np.array([y]), score[None], None if weight is None else [weight])
    for owner in owners:
        owner._prepare(*args)


def kind_error(metric: Any, spec: tuple[str, tuple[int, ...]], sliced: Any = None) -> str | None:
    """Why the metric refuses every prediction of this kind (dtype, row shape), or None.

    A dry run of zero rows (``State.prepare`` changes nothing), with labels of shape ``(0,)``
    and, for rows, ``(0, *row)`` (multilabel, k regression outputs) or ``(0, *row[:-1])`` (k
    prediction intervals): the metric's checks of dimensions and row lengths
    run, its checks of values have nothing to look at. ``sliced``: the slice-key layout when the
    metric is a :class:`~streammetrics.Sliced` (``(names,)``; None otherwise): its template
    metric's checks, then the key columns. O(1).
    """
    if sliced is not None:  # Sliced checks no row of an empty batch: ask its template too
        error = kind_error(metric.metric, spec)
        if error is not None:
            return error
    dtype, row = np.dtype(spec[0]), tuple(spec[1])
    scores = np.zeros((0, *row), dtype=dtype)
    owners = metric._owners() if isinstance(metric, MetricSet) else [metric]
    kwargs: dict[str, Any] = {}
    if sliced is not None:
        kwargs["slices"] = slices_argument(sliced[0], [])
    # (0, *row[:-1]): the labels of rows of k intervals (regression, (n, k, 2) predictions)
    shapes = [(0,)] + ([(0, *row)] if row else []) + ([(0, *row[:-1])] if len(row) >= 2 else [])
    error = ""
    for shape in shapes:
        try:
            for owner in owners:
                owner._prepare(np.zeros(shape, dtype=np.int64), scores, None, **kwargs)
        except ValueError as exc:
            error = error or str(exc)  # the 1-D labels' reason (the usual layout)
            continue
        return None
    return error
