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
dict or a DataFrame; groups are their combinations) of strings, integers or floats -- floats
grouped as ``MetricFrame`` groups them: by value, ``-0.0`` and ``0.0`` one group, NaN refused.
Fairlearn's functions take no ``control_features`` (``MetricFrame`` does: ``Sliced(...,
controls=...)``). ``y_true`` and ``y_pred`` are 0/1 labels
({-1, 1} are read as {0, 1}, as Fairlearn does). Scores and other labels are a ``ValueError``:
Fairlearn's equalized odds refuses them, and its selection rate counts only the values equal to
1 as selected (a score of 0.7 is "not selected"), which gives a silent, meaningless rate.
``demographic_parity_*`` read ``y_true`` for its length only, as Fairlearn does. A scalar
``sample_weight`` weighs every row alike (Fairlearn broadcasts it).

Cost: one pass (one grouping and one scatter-add over (group, confusion cell)).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param
from streammetrics.classification.confusion import FallOut, Recall
from streammetrics.classification.selection import SelectionRate
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.core import METHODS, Sliced

from ._targets import as_labels, as_scores, column_or_1d

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
    """Fairlearn's binary labels: 1-D (or a column), every value in {0, 1} or every value in
    {-1, 1} (booleans and integral floats too; -1 read as 0); ``ValueError`` naming the first
    other value (a score, a third label, NaN). O(n)."""
    arr = column_or_1d(as_scores(y, name), name)
    if arr.dtype.kind == "b":
        return arr.astype(np.int8)
    ones = arr == 1
    other = -1 if arr.size and (arr == -1).any() else 0
    bad = ~(ones | (arr == other))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}: values must be from {{0, 1}} or {{-1, 1}} (Fairlearn's rule; scores and other "
            f"labels are not predictions); first other value {arr[i].item()!r} at index {i}"
        )
    return ones.astype(np.int8)


def _length(y: Any, name: str) -> int:
    """The number of rows of ``y``, whose values Fairlearn's selection rate does not read."""
    return int(as_labels(y, name).shape[0])


def _features(sensitive_features: Any) -> Any:
    sf = sensitive_features
    columns = getattr(sf, "columns", None)
    if columns is not None and hasattr(sf, "__getitem__"):  # a DataFrame
        cols = [np.asarray(sf[c]) for c in columns]
        return cols[0] if len(cols) == 1 else {str(c): v for c, v in zip(columns, cols, strict=True)}
    if isinstance(sf, (dict, tuple)):
        return sf
    if isinstance(sf, list) and any(isinstance(v, (list, tuple, np.ndarray)) for v in sf):
        raise ValueError("sensitive_features: feature lists must be of scalar types (Fairlearn's rule); "
                         "pass several columns as a 2-D array, a tuple of arrays, a dict or a DataFrame")
    arr = as_labels(sf, "sensitive_features")
    if arr.ndim == 2:
        return arr[:, 0] if arr.shape[1] == 1 else tuple(arr[:, j] for j in range(arr.shape[1]))
    return arr


def _weights(sample_weight: Any, n: int) -> Any:
    """``sample_weight``, a scalar broadcast to ``n`` rows as Fairlearn does."""
    if isinstance(sample_weight, (numbers.Real, np.number)) or (
        isinstance(sample_weight, np.ndarray) and sample_weight.ndim == 0
    ):
        return np.full(n, sample_weight)
    return sample_weight


def _sliced(metric: Any, y_true: Any, y_pred: Any, sensitive_features: Any,
            sample_weight: Any, *, selection: bool = False) -> Sliced:
    pred = _labels(y_pred, "y_pred")
    if selection:  # Fairlearn's selection rate reads y_true's length only
        n = _length(y_true, "y_true")
        if n != pred.shape[0]:
            raise ValueError(f"y_pred: expected {n} rows like y_true, got {pred.shape[0]}")
        true = np.zeros(n, dtype=np.int8)
    else:
        true = _labels(y_true, "y_true")
    s = Sliced(metric, max_slices=2**31 - 1)
    return s.update(true, pred, slices=_features(sensitive_features),
                    sample_weight=_weights(sample_weight, pred.shape[0]))


def _check(method: str, agg: str | None = None) -> None:
    check_param(method, "method", _METHOD)
    check_param(agg, "agg", _AGG)


def _spread(kind: str, metric: Any, y_true: Any, y_pred: Any, sensitive_features: Any, method: str,
            sample_weight: Any, agg: str | None = None) -> Any:
    """The spread (``kind``: "difference" or "ratio") between the groups of ``metric``'s value(s),
    the options checked first."""
    _check(method, agg)
    s = _sliced(metric, y_true, y_pred, sensitive_features, sample_weight,
                selection=isinstance(metric, SelectionRate))
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
