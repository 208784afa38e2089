"""Fairlearn's disparity summaries, computed through :class:`~streammetrics.Sliced`.

Same names, signatures and values as ``fairlearn.metrics`` (0.10+):

* ``demographic_parity_difference`` / ``_ratio``: the spread of the selection rate
  P(h(X) = 1 | A = a) over the groups a of the sensitive features;
* ``equalized_odds_difference`` / ``_ratio``: the larger (``agg="worst_case"``) or the mean
  (``agg="mean"``) of the spreads of the true positive rate P(h(X) = 1 | A = a, Y = 1) and of the
  false positive rate P(h(X) = 1 | A = a, Y = 0); a group with no positives (negatives) has rate 0,
  as Fairlearn's (scikit-learn's normalised confusion matrix).

``method="between_groups"`` compares the groups with each other (max - min, min / max),
``"to_overall"`` each group with the value over all rows (see :meth:`Sliced.difference`).
``sensitive_features``: one column (an array or list), several (a 2-D array, a tuple of arrays, a
dict or a DataFrame; groups are their combinations). ``y_true`` and ``y_pred`` are 0/1 labels
({-1, 1} are read as {0, 1}, as Fairlearn does; scores are thresholded at 0.5).

Cost: one pass (one grouping and one scatter-add over (group, confusion cell)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._docstrings import filled
from .._params import Param, check_param
from .._validation import as_numpy
from ..confusion import FallOut, Recall
from ..metricset import MetricSet
from ..selection import SelectionRate
from ..sliced import METHODS, Sliced

__all__ = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
]

AGGS = ("worst_case", "mean")
_METHOD = Param("choice", f"must be one of {METHODS}", choices=METHODS)
_AGG = Param("choice", f"must be one of {AGGS}", choices=AGGS, optional=True)


def _labels(y: Any, name: str) -> np.ndarray:
    arr = as_numpy(y, name).reshape(-1) if np.ndim(y) else as_numpy(y, name).reshape(1)
    if arr.dtype.kind in "iu" and arr.size and int(arr.min()) == -1:
        if not np.isin(arr, (-1, 1)).all():
            bad = arr[~np.isin(arr, (-1, 1))][0]
            raise ValueError(f"{name}: labels must be in {{0, 1}} or {{-1, 1}}; got {bad!r}")
        return (arr == 1).astype(np.int8)
    return arr


def _features(sensitive_features: Any) -> Any:
    sf = sensitive_features
    columns = getattr(sf, "columns", None)
    if columns is not None and hasattr(sf, "__getitem__"):  # a DataFrame
        cols = [np.asarray(sf[c]) for c in columns]
        return cols[0] if len(cols) == 1 else {str(c): v for c, v in zip(columns, cols, strict=True)}
    if isinstance(sf, (dict, tuple)):
        return sf
    arr = np.asarray(sf)
    if arr.ndim == 2:
        return arr[:, 0] if arr.shape[1] == 1 else tuple(arr[:, j] for j in range(arr.shape[1]))
    return sf


def _sliced(metric: Any, y_true: Any, y_pred: Any, sensitive_features: Any,
            sample_weight: Any) -> Sliced:
    s = Sliced(metric, max_slices=2**31 - 1)
    return s.update(_labels(y_true, "y_true"), _labels(y_pred, "y_pred"),
                    slices=_features(sensitive_features), sample_weight=sample_weight)


def _check(method: str, agg: str | None = None) -> None:
    check_param(method, "method", _METHOD)
    check_param(agg, "agg", _AGG)


def _spread(kind: str, metric: Any, y_true: Any, y_pred: Any, sensitive_features: Any, method: str,
            sample_weight: Any, agg: str | None = None) -> Any:
    """The spread (``kind``: "difference" or "ratio") between the groups of ``metric``'s value(s),
    the options checked first."""
    _check(method, agg)
    s = _sliced(metric, y_true, y_pred, sensitive_features, sample_weight)
    return s.difference(method=method) if kind == "difference" else s.ratio(method=method)


@filled
def demographic_parity_difference(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                                  method: str = "between_groups", sample_weight: Any = None) -> float:
    """Largest minus smallest group selection rate (``method="to_overall"``: the largest
    distance of a group's rate from the overall rate). 0 means parity. O(n).

    Parameters
    ----------
    {fairness: y_true_y_pred, sensitive_features, method, sample_weight}

    Returns
    -------
    float
        The spread of the selection rates, in [0, 1].

    Examples
    --------
    >>> from streammetrics.functional import demographic_parity_difference
    >>> demographic_parity_difference([1, 0, 1, 0], [1, 1, 0, 0], sensitive_features=["a", "a", "b", "b"])
    1.0
    """
    selection = SelectionRate(zero_division=0.0)
    return float(_spread("difference", selection, y_true, y_pred, sensitive_features, method, sample_weight))


@filled
def demographic_parity_ratio(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                             method: str = "between_groups", sample_weight: Any = None) -> float:
    """Smallest over largest group selection rate (``"to_overall"``: the smallest of each
    group's rate over the overall rate, taken as at most 1). 1 means parity. O(n).

    Parameters
    ----------
    {fairness: y_true_y_pred, sensitive_features, method, sample_weight}

    Returns
    -------
    float
        The ratio of the selection rates, in [0, 1].

    Examples
    --------
    >>> from streammetrics.functional import demographic_parity_ratio
    >>> demographic_parity_ratio([1, 0, 1, 0], [1, 1, 1, 0], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    selection = SelectionRate(zero_division=0.0)
    return float(_spread("ratio", selection, y_true, y_pred, sensitive_features, method, sample_weight))


def _rates() -> MetricSet:
    return MetricSet(tpr=Recall(zero_division=0.0), fpr=FallOut(zero_division=0.0))


def _odds(kind: str, y_true: Any, y_pred: Any, sensitive_features: Any, method: str,
          sample_weight: Any, agg: str) -> float:
    """The spreads (``kind``: "difference" or "ratio") of the true and of the false positive
    rate, combined by ``agg``: the worse one (the larger difference, the smaller ratio) or the
    mean."""
    spread = _spread(kind, _rates(), y_true, y_pred, sensitive_features, method, sample_weight, agg)
    pair = [float(spread["tpr"]), float(spread["fpr"])]
    if agg == "mean":
        return float(np.mean(pair))
    return max(pair) if kind == "difference" else min(pair)


@filled
def equalized_odds_difference(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                              method: str = "between_groups", sample_weight: Any = None,
                              agg: str = "worst_case") -> float:
    """The larger (``agg="mean"``: the mean) of the true positive rate difference and the false
    positive rate difference between groups. 0 means equalized odds. O(n).

    Parameters
    ----------
    {fairness: y_true_y_pred, sensitive_features, method, sample_weight, agg}

    Returns
    -------
    float
        The combined difference, in [0, 1].

    Examples
    --------
    >>> from streammetrics.functional import equalized_odds_difference
    >>> y_true, y_pred, group = [1, 0, 1, 0], [1, 0, 0, 0], ["a", "a", "b", "b"]
    >>> equalized_odds_difference(y_true, y_pred, sensitive_features=group)
    1.0
    """
    return _odds("difference", y_true, y_pred, sensitive_features, method, sample_weight, agg)


@filled
def equalized_odds_ratio(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                         method: str = "between_groups", sample_weight: Any = None,
                         agg: str = "worst_case") -> float:
    """The smaller (``agg="mean"``: the mean) of the true positive rate ratio and the false
    positive rate ratio between groups. 1 means equalized odds. O(n).

    Parameters
    ----------
    {fairness: y_true_y_pred, sensitive_features, method, sample_weight, agg}

    Returns
    -------
    float
        The combined ratio, in [0, 1].

    Examples
    --------
    >>> from streammetrics.functional import equalized_odds_ratio
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 1, 0, 0], [1, 1, 1, 0, 1, 0, 1, 1]
    >>> equalized_odds_ratio(y_true, y_pred, sensitive_features=["a"] * 4 + ["b"] * 4)
    0.5
    """
    return _odds("ratio", y_true, y_pred, sensitive_features, method, sample_weight, agg)
