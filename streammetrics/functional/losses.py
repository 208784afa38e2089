"""scikit-learn 1.9's ``d2_log_loss_score``, ``d2_brier_score`` and ``hinge_loss``: the same input
rules, warnings and errors as scikit-learn (:mod:`streammetrics.functional.calibration`'s checks
of probabilities), the log loss through :class:`streammetrics.LogLoss`.

D² of a loss L: 1 - L(model) / L(null), where the null model predicts for every sample the
(weighted) class shares of ``y_true``; with fewer than two samples it is nan with an
``UndefinedMetricWarning``. The hinge loss: binary, mean(max(0, 1 - y f)) with y in {-1, +1}
(the greater label +1); multiclass (Crammer & Singer), mean(max(0, 1 - (f_y - max_{k != y} f_k))),
the per-sample losses by :func:`~streammetrics.classification.hinge.hinge_terms` (``HingeLoss``'s kernel).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.warn import sklearn_compatible
from streammetrics.calibration import LogLoss
from streammetrics.classification.hinge import hinge_terms

from ._targets import (
    as_labels,
    as_scores,
    check_consistent_length,
    check_weight,
    column_or_1d,
    type_of_target,
    unique,
)
from .calibration import (
    as_probabilities,
    binary_probabilities,
    cell_weights,
    multiclass_probabilities,
    renamed_y_proba,
)

__all__ = ["d2_brier_score", "d2_log_loss_score", "hinge_loss"]


def _too_few(y_proba: Any, y_true: Any, sample_weight: Any) -> bool:
    """scikit-learn's first steps of both D² scores: lengths checked, then fewer than two samples
    is nan with its warning."""
    p = as_labels(y_proba, "y_proba")
    check_consistent_length(p, as_labels(y_true, "y_true"), sample_weight)
    if p.shape[0] < 2:
        warnings.warn("D^2 score is not well-defined with less than two samples.",
                      sklearn_compatible(UndefinedMetricWarning), stacklevel=3)
        return True
    return False


def _weighted_mean(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    return np.average(x, axis=0, weights=w)


@filled
def d2_log_loss_score(
    y_true: Any,
    y_proba: Any = None,
    *,
    sample_weight: Any = None,
    labels: Any = None,
    y_pred: Any = "deprecated",
) -> float:
    """D² of the log loss, as ``sklearn.metrics.d2_log_loss_score``: 1 - log loss / log loss of
    the null model (every sample predicted the weighted class shares of ``y_true``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Probabilities (1-D: of the greater label).
    {sklearn: sample_weight, labels_of_y_true, y_pred_renamed}

    Returns
    -------
    {sklearn: d2}

    Examples
    --------
    >>> round(d2_log_loss_score([0, 1, 1, 0], [0.1, 0.8, 0.7, 0.4]), 6)
    0.568633
    """
    y_proba = renamed_y_proba(y_proba, y_pred)
    if _too_few(y_proba, y_true, sample_weight):
        return math.nan
    t, p, w = multiclass_probabilities(y_true, as_probabilities(y_proba), sample_weight, labels)
    hot = t == 1
    q = p[hot]  # each sample's true-class probabilities, row-major
    loss = LogLoss().update(np.ones(q.shape[0], dtype=np.int8), q, sample_weight=cell_weights(t, w, hot))
    numerator = float(loss._state.totals()[1])
    shares = _weighted_mean(t.astype(np.float64), w)  # the null model's probabilities (float64)
    eps = np.finfo(np.float64).eps
    per_class = (t * (1.0 if w is None else w[:, None])).sum(axis=0)
    seen = per_class > 0
    denominator = float(-(per_class[seen] * np.log(np.clip(shares[seen], eps, 1 - eps))).sum())
    return float(1 - numerator / denominator)


@filled
def d2_brier_score(
    y_true: Any, y_proba: Any, *, sample_weight: Any = None, pos_label: Any = None, labels: Any = None
) -> float:
    """D² of the Brier score, as ``sklearn.metrics.d2_brier_score``: 1 - Brier / Brier of the
    null model (every sample predicted the weighted class shares of ``y_true``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Probabilities (1-D or one column: of ``pos_label``, binary).
    {sklearn: sample_weight}
    pos_label : label, optional
        Binary: the positive class.
    labels : array-like, optional
        Multiclass: the classes (default: those of ``y_true``).

    Returns
    -------
    {sklearn: d2}

    Examples
    --------
    >>> round(d2_brier_score([0, 1, 1, 0], [0.1, 0.8, 0.7, 0.4]), 6)
    0.7
    """
    if _too_few(y_proba, y_true, sample_weight):
        return math.nan
    p = as_probabilities(y_proba)
    if p.ndim == 1 or p.shape[1] == 1:
        t, p, w = binary_probabilities(y_true, p, sample_weight, pos_label)
    else:
        t, p, w = multiclass_probabilities(y_true, p, sample_weight, labels)
    t = t.astype(p.dtype)
    null = _weighted_mean(t, w)
    model = np.average(((t - p) ** 2).sum(axis=1), weights=w)
    baseline = np.average(((t - null) ** 2).sum(axis=1), weights=w)
    return float(1 - model / baseline)


@filled
def hinge_loss(y_true: Any, pred_decision: Any, *, labels: Any = None, sample_weight: Any = None) -> float:
    """Average hinge loss, as ``sklearn.metrics.hinge_loss`` (module docstring): binary with the
    greater label +1 and the other -1; multiclass (more than two labels in ``labels`` or
    ``y_true``) by Crammer & Singer's margin on (n, C) decisions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    pred_decision : array-like of shape (n_samples,) or (n_samples, n_classes)
        Decision values (columns in the sorted order of the classes).
    labels : array-like, optional
        Multiclass: every class (default: those of ``y_true``).
    {sklearn: sample_weight}

    Returns
    -------
    float
        The (weighted) mean loss. O(n C).

    Examples
    --------
    >>> hinge_loss([-1, 1, 1], [-2.2, 1.3, 0.5])
    0.16666666666666666
    """
    check_consistent_length(y_true, pred_decision, sample_weight)
    raw = as_labels(pred_decision, "pred_decision")
    if raw.dtype.kind == "O":  # scikit-learn converts objects to float: its errors for what fails
        try:
            raw = raw.astype(np.float64)
        except TypeError:
            raise TypeError("pred_decision should be an array of floats.") from None
        except ValueError as exc:
            raise ValueError(str(exc)) from None
    d = as_scores(raw, "pred_decision")
    if d.dtype.kind == "f" and not np.isfinite(d).all():
        raise ValueError(f"Input contains {'NaN' if np.isnan(d).any() else 'infinity'}.")
    y = column_or_1d(as_labels(y_true, "y_true"), "y_true")
    if y.dtype.kind == "S" or (y.dtype.kind == "O" and any(isinstance(v, bytes) for v in y)):
        raise TypeError("Support for labels represented as bytes is not supported. Convert the labels to a "
                        "string or integer format.")
    if labels is None and type_of_target(y, "y_true") == "unknown":  # scikit-learn's LabelBinarizer
        raise ValueError(f"Unknown label type: {(y,)!r}")
    w = check_weight(sample_weight, y.shape[0], allow_all_zero=True)
    classes = unique(as_labels(labels, "labels") if labels is not None else y)
    if classes.size > 2:
        if d.ndim <= 1:
            raise ValueError("The shape of pred_decision cannot be 1d arraywith a multiclass target. "
                             "pred_decision shape must be (n_samples, n_classes), that is "
                             f"({y.shape[0]}, {classes.size}). Got: {d.shape}")
        if classes.size != d.shape[1]:
            if labels is None:
                raise ValueError("Please include all labels in y_true or pass labels as third argument")
            raise ValueError("The shape of pred_decision is not consistent with the number of classes. "
                             "With a multiclass target, pred_decision shape must be (n_samples, n_classes), "
                             f"that is ({y.shape[0]}, {classes.size}). Got: {d.shape}")
        codes = np.searchsorted(classes, y)
        if np.any(codes >= classes.size) or np.any(classes[np.minimum(codes, classes.size - 1)] != y):
            bad = y[(codes >= classes.size) | (classes[np.minimum(codes, classes.size - 1)] != y)][0]
            raise ValueError(f"y contains previously unseen labels: {[bad]}")
        losses = hinge_terms(d.astype(np.float64), codes)
    else:
        d = column_or_1d(d, "pred_decision").astype(np.float64)
        sign = np.where(y == classes[-1], 1.0, -1.0) if classes.size == 2 else np.full(y.shape[0], -1.0)
        losses = hinge_terms(d, sign)
    return float(np.average(losses, weights=w))
