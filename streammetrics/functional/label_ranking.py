"""scikit-learn's label-ranking functions (``coverage_error``,
``label_ranking_average_precision_score``, ``label_ranking_loss``) on the accumulators of
:mod:`streammetrics.ranking.label_ranking`: the same input rules and errors, one ``update``, the value."""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.labels import is_sparse
from streammetrics.ranking.label_ranking import CoverageError, LabelRankingAveragePrecision, LabelRankingLoss

from ._targets import as_scores, check_consistent_length, check_weight, type_of_target

__all__ = ["coverage_error", "label_ranking_average_precision_score", "label_ranking_loss"]


def _two_d(y: Any, name: str, *, sparse: bool, ensure_2d: bool) -> np.ndarray:
    """scikit-learn's ``check_array`` for these functions: dense (sparse ``y_true`` densified
    where scikit-learn accepts it), numeric and finite, 2-D when asked."""
    if is_sparse(y):
        if not sparse:
            raise TypeError("Sparse data was passed for y_true, but dense data is required. Use "
                            "'.toarray()' to convert to a dense numpy array.")
        y = y.toarray()
    arr = as_scores(y, name)
    if ensure_2d and arr.ndim != 2:
        raise ValueError(
            f"Expected 2D array, got {'scalar' if arr.ndim == 0 else '1D'} array instead:\narray={arr}.\n"
            "Reshape your data either using array.reshape(-1, 1) if your data has a single feature "
            "or array.reshape(1, -1) if it contains a single sample."
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"Input {name} contains {'NaN' if np.isnan(arr).any() else 'infinity'}.")
    return arr


def _inputs(y_true: Any, y_score: Any, sample_weight: Any, allowed: tuple[str, ...], *, sparse: bool,
            ensure_2d: bool, binary_2d: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    y = _two_d(y_true, "y_true", sparse=sparse, ensure_2d=ensure_2d)
    s = _two_d(y_score, "y_score", sparse=False, ensure_2d=ensure_2d)
    check_consistent_length(y, s, sample_weight)
    y_type = type_of_target(y, input_name="y_true")
    if y_type not in allowed and not (binary_2d and y_type == "binary" and y.ndim == 2):
        raise ValueError(f"{y_type} format is not supported")
    if y.shape != s.shape:
        raise ValueError("y_true and y_score have different shape")
    w = check_weight(sample_weight, y.shape[0], allow_all_zero=True)
    return y, s, w


def _value(metric: Any, y: np.ndarray, s: np.ndarray, w: np.ndarray | None, *,
           nan_on_zero: bool = False) -> float:
    """One update, the value. All-zero weights: numpy.average's ``ZeroDivisionError`` as
    scikit-learn's coverage error and loss raise it, or (LRAP, which divides itself) nan with an
    ``UndefinedMetricWarning``."""
    if w is not None and not w.any() and not nan_on_zero:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return float(metric.update((y != 0).astype(np.int8), s, sample_weight=w).compute())


def coverage_error(y_true: Any, y_score: Any, *, sample_weight: Any = None) -> float:
    """Coverage error (``sklearn.metrics.coverage_error``): the mean over samples of how many
    top-scored labels cover every relevant one; see :class:`streammetrics.CoverageError`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Binary label indicators.
    y_score : array-like of shape (n_samples, n_labels)
        Scores (higher: more likely relevant).
    sample_weight : array-like of shape (n_samples,), optional
        Sample weights.

    Returns
    -------
    float
        The coverage error. O(n L log(n L)).

    Examples
    --------
    >>> coverage_error([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    2.5
    """
    y, s, w = _inputs(y_true, y_score, sample_weight, ("multilabel-indicator",), sparse=False, ensure_2d=True)
    return _value(CoverageError(), y, s, w)


def label_ranking_average_precision_score(y_true: Any, y_score: Any, *, sample_weight: Any = None) -> float:
    """Label-ranking average precision (``sklearn.metrics.label_ranking_average_precision_score``);
    see :class:`streammetrics.LabelRankingAveragePrecision`.

    Parameters
    ----------
    y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label indicators.
    y_score : array-like of shape (n_samples, n_labels)
        Scores (higher: more likely relevant).
    sample_weight : array-like of shape (n_samples,), optional
        Sample weights.

    Returns
    -------
    float
        The LRAP, in [0, 1]. O(n L log(n L)).

    Examples
    --------
    >>> label_ranking_average_precision_score([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    0.41666666666666663
    """
    y, s, w = _inputs(y_true, y_score, sample_weight, ("multilabel-indicator",), sparse=True, ensure_2d=False,
                      binary_2d=True)
    return _value(LabelRankingAveragePrecision(), y, s, w, nan_on_zero=True)


def label_ranking_loss(y_true: Any, y_score: Any, *, sample_weight: Any = None) -> float:
    """Label-ranking loss (``sklearn.metrics.label_ranking_loss``): the mean share of wrongly
    ordered (relevant, irrelevant) label pairs; see :class:`streammetrics.LabelRankingLoss`.

    Parameters
    ----------
    y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label indicators.
    y_score : array-like of shape (n_samples, n_labels)
        Scores (higher: more likely relevant).
    sample_weight : array-like of shape (n_samples,), optional
        Sample weights.

    Returns
    -------
    float
        The loss, in [0, 1]. O(n L log(n L)).

    Examples
    --------
    >>> label_ranking_loss([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    0.75
    """
    y, s, w = _inputs(y_true, y_score, sample_weight, ("multilabel-indicator",), sparse=True, ensure_2d=False)
    return _value(LabelRankingLoss(), y, s, w)
