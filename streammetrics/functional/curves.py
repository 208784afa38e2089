"""One-shot curves with scikit-learn's signatures: ``roc_curve``, ``precision_recall_curve``,
``det_curve`` and ``auc``.

The curves are thin calls into :class:`streammetrics.ROCCurve`, :class:`streammetrics.PRCurve`
and :class:`streammetrics.DETCurve` (one ``update`` of the binary targets ``y == pos_label``, one
``compute``). The PR curve's scikit-learn layout is read off the kernel's counts at the distinct
thresholds (``result.counts``): increasing-threshold order with its final (recall 0, precision 1)
point and its ``drop_intermediate`` (points whose true-positive count equals both neighbours' are
dropped). Zero-weight samples are dropped first (scikit-learn does:
they add no threshold). O(n log n).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.warn import sklearn_compatible
from streammetrics.ranking.det import DETCurve
from streammetrics.ranking.metrics import PRCurve, ROCCurve

from ._targets import (
    as_labels,
    as_scores,
    check_consistent_length,
    check_weight,
    column_or_1d,
    finite_scores,
    target_type_and_labels,
)
from .ranking import fed

__all__ = ["auc", "confusion_matrix_at_thresholds", "det_curve", "metric_at_thresholds",
           "precision_recall_curve", "roc_curve"]


def _binary_targets(
    y_true: Any, y_score: Any, pos_label: Any, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """(y == pos_label, scores, weights) without zero-weight samples, plus the labels of y_true
    (scikit-learn's ``confusion_matrix_at_thresholds`` checks)."""
    y = as_labels(y_true, "y_true")
    y_type, classes = target_type_and_labels(y, "y_true")
    if not (y_type == "binary" or (y_type == "multiclass" and pos_label is not None)):
        raise ValueError(f"{y_type} format is not supported")
    y = column_or_1d(y, "y_true")
    s = column_or_1d(finite_scores(as_scores(y_score, "y_score")), "y_score")
    w = check_weight(sample_weight, y.shape[0])
    check_consistent_length(y, s, w)
    if pos_label is None:
        allowed = ([0, 1], [-1, 1], [0], [-1], [1])
        if classes.dtype.kind in "OUS" or not any(np.array_equal(classes, a) for a in allowed):
            raise ValueError(
                f"y_true takes value in {{{', '.join(repr(c) for c in classes.tolist())}}} and "
                "pos_label is not "
                "specified: either make y_true take value in {0, 1} or {-1, 1} or pass pos_label explicitly."
            )
        pos_label = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y01 = np.asarray(y == pos_label)
    if y01.shape != y.shape:
        y01 = np.zeros(y.shape, dtype=bool)
    if w is not None and not np.all(w != 0):
        keep = w != 0
        y01, s, w = y01[keep], s[keep], w[keep]
    return y01, s, w, classes


def _quiet(metric: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return metric.compute()


@filled
def roc_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds) as ``sklearn.metrics.roc_curve``: ``thresholds[0] = inf`` at
    (0, 0), then the distinct scores in decreasing order (only the corners with
    ``drop_intermediate``). No negatives (positives) makes fpr (tpr) nan, with an
    :class:`~streammetrics.UndefinedMetricWarning`. A thin call to :class:`streammetrics.ROCCurve`.

    Parameters
    ----------
    {sklearn: y_true, y_score}
    pos_label : label, optional
        The positive class (default 1, when the labels are {0, 1} or {-1, 1}).
    {sklearn: sample_weight}
    drop_intermediate : bool
        Keep only the points that change the curve's shape.

    Returns
    -------
    tuple of ndarray
        (fpr, tpr, thresholds).

    Raises
    ------
    {sklearn: raises}
    """
    y01, s, w, _ = _binary_targets(y_true, y_score, pos_label, sample_weight)
    res = _quiet(fed(ROCCurve(drop_intermediate=drop_intermediate), y01, s, w))
    if res.counts.total_neg <= 0:
        warnings.warn(
            "No negative samples in y_true, false positive value should be meaningless",
            sklearn_compatible(UndefinedMetricWarning),
            stacklevel=2,
        )
    if res.counts.total_pos <= 0:
        warnings.warn(
            "No positive samples in y_true, true positive value should be meaningless",
            sklearn_compatible(UndefinedMetricWarning),
            stacklevel=2,
        )
    return res.fpr, res.tpr, res.thresholds.astype(np.float64)


def _kept(tps: np.ndarray) -> np.ndarray:
    """scikit-learn's ``drop_intermediate`` for PR and DET curves: indices of the points whose
    true-positive count differs from a neighbour's (first and last always kept)."""
    if tps.shape[0] <= 2:
        return np.arange(tps.shape[0])
    keep = np.concatenate([[True], (np.diff(tps[:-1]) != 0) | (np.diff(tps[1:]) != 0), [True]])
    return np.flatnonzero(keep)


@filled
def precision_recall_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precision, recall, thresholds) as ``sklearn.metrics.precision_recall_curve``: increasing
    thresholds (the distinct scores), precision and recall one longer, ending at (1, 0). No
    positives sets recall to 1 with a warning. A thin call to :class:`streammetrics.PRCurve`.

    Parameters
    ----------
    {sklearn: y_true, y_score}
    pos_label : label, optional
        The positive class (default 1, when the labels are {0, 1} or {-1, 1}).
    {sklearn: sample_weight}
    drop_intermediate : bool
        Keep only the points that change the curve's shape.

    Returns
    -------
    tuple of ndarray
        (precision, recall, thresholds).

    Raises
    ------
    {sklearn: raises}
    """
    y01, s, w, _ = _binary_targets(y_true, y_score, pos_label, sample_weight)
    res = _quiet(fed(PRCurve(), y01, s, w))
    precision, recall, thresholds = res.precision, res.recall, res.thresholds
    if drop_intermediate:
        idx = _kept(res.counts.tps)
        precision, recall, thresholds = precision[idx], recall[idx], thresholds[idx]
    if res.counts.total_pos <= 0:
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            sklearn_compatible(UndefinedMetricWarning),
            stacklevel=2,
        )
        recall = np.ones(precision.shape[0])
    return (
        np.concatenate([precision[::-1], [1.0]]),
        np.concatenate([recall[::-1], [0.0]]),
        thresholds[::-1],
    )


@filled
def det_curve(
    y_true: Any,
    y_score: Any,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, fnr, thresholds) of the detection error tradeoff curve, as
    ``sklearn.metrics.det_curve`` (decreasing fpr, starting at the last threshold with FP
    unchanged from +inf, ending where FN reaches 0). One class in ``y_true`` is a ``ValueError``.
    A thin call to :class:`streammetrics.DETCurve`.

    Parameters
    ----------
    {sklearn: y_true, y_score}
    pos_label : label, optional
        The positive class (default 1, when the labels are {0, 1} or {-1, 1}).
    {sklearn: sample_weight}
    drop_intermediate : bool
        Keep only the points that change the curve's shape.

    Returns
    -------
    tuple of ndarray
        (fpr, fnr, thresholds).

    Raises
    ------
    {sklearn: raises}
    """
    y01, s, w, classes = _binary_targets(y_true, y_score, pos_label, sample_weight)
    if classes.shape[0] != 2:
        raise ValueError(
            "Only one class is present in y_true. Detection error tradeoff curve is not defined in that case."
        )
    res = _quiet(fed(DETCurve(drop_intermediate=drop_intermediate), y01, s, w))
    return res.fpr, res.fnr, res.thresholds


@filled
def auc(x: Any, y: Any) -> float:
    """Area under a curve by the trapezoidal rule, as ``sklearn.metrics.auc``: ``x`` must be
    monotonic (increasing or decreasing), at least 2 points. O(n).

    Parameters
    ----------
    x, y : array-like of shape (m,)
        Curve points; ``x`` monotonic.

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    xs, ys = as_scores(x, "x"), as_scores(y, "y")
    for name, arr in (("x", xs), ("y", ys)):
        if arr.dtype.kind == "b":  # scikit-learn subtracts x (refused by numpy) and adds y with "or"
            raise ValueError(f"{name}: expected numbers, got booleans")
    xa = column_or_1d(np.asarray(xs, dtype=np.float64), "x")
    ya = column_or_1d(np.asarray(ys, dtype=np.float64), "y")
    check_consistent_length(xa, ya)
    if xa.shape[0] < 2:
        raise ValueError(
            f"At least 2 points are needed to compute area under curve, but x.shape = {xa.shape}"
        )
    direction = 1.0
    dx = np.diff(xa)
    if np.any(dx < 0):
        if np.all(dx <= 0):
            direction = -1.0
        else:
            raise ValueError(f"x is neither increasing nor decreasing : {np.ravel(np.asarray(x))}.")
    return float(direction * np.trapezoid(ya, xa))


@filled
def confusion_matrix_at_thresholds(
    y_true: Any, y_score: Any, *args: Any, pos_label: Any = None, sample_weight: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The binary confusion counts at every distinct score, as
    ``sklearn.metrics.confusion_matrix_at_thresholds``: (tns, fps, fns, tps, thresholds) with
    the thresholds decreasing and ``score >= threshold`` predicted positive -- the
    counts-at-thresholds kernel every curve reads (:class:`streammetrics.ROCCurve`'s
    ``result.counts``). Zero-weight samples add no threshold. O(n log n).

    Parameters
    ----------
    {sklearn: y_true, y_score}
    *args
        ``pos_label`` and ``sample_weight`` given by position: accepted with scikit-learn 1.9's
        ``FutureWarning`` (keyword-only from its 1.11).
    pos_label : label, optional
        The positive class (default 1, when the labels are {0, 1} or {-1, 1}).
    {sklearn: sample_weight}

    Returns
    -------
    tuple of ndarray
        (tns, fps, fns, tps, thresholds); the counts in float64, the thresholds in the
        scores' dtype.

    Raises
    ------
    {sklearn: raises}
    """
    if args:
        if len(args) > 2:
            raise TypeError(f"confusion_matrix_at_thresholds() takes 2 positional arguments (4 with the "
                            f"deprecated pos_label and sample_weight) but {2 + len(args)} were given")
        names = ("pos_label", "sample_weight")[: len(args)]
        shown = ", ".join(f"{n}={a!r}" for n, a in zip(names, args, strict=True))
        warnings.warn(f"Pass {shown} as keyword args. From version 1.11 passing these as positional "
                      "arguments will result in an error", FutureWarning, stacklevel=2)
        pos_label = args[0]
        sample_weight = args[1] if len(args) > 1 else sample_weight
    y01, s, w, _ = _binary_targets(y_true, y_score, pos_label, sample_weight)
    counts = _quiet(fed(ROCCurve(), y01, s, w)).counts
    tps = np.asarray(counts.tps, dtype=np.float64)
    fps = np.asarray(counts.fps, dtype=np.float64)
    if tps.shape[0] == 0:
        empty = np.zeros(0)
        return empty, empty, empty, empty, as_scores(y_score, "y_score")[:0]
    kind = as_scores(y_score, "y_score").dtype  # scikit-learn returns the scores' own dtype
    thresholds = np.asarray(counts.thresholds).astype(kind if kind.kind in "biuf" else s.dtype, copy=False)
    return fps[-1] - fps, fps, tps[-1] - tps, tps, thresholds


def metric_at_thresholds(
    y_true: Any, y_score: Any, metric_func: Any, *, sample_weight: Any = None, metric_params: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """``metric_func(y_true, y_score >= t)`` at every distinct score t (decreasing), as
    ``sklearn.metrics.metric_at_thresholds``: the samples sorted by decreasing score
    (zero-weight ones left out) are handed to ``metric_func`` with the 0/1 predictions (int32)
    and, when given, ``sample_weight=`` and ``metric_params``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels, handed to ``metric_func`` as they are.
    y_score : array-like of shape (n_samples,)
        Scores.
    metric_func : callable
        ``metric_func(y_true, y_pred, **metric_params)``.
    sample_weight : array-like of shape (n_samples,), optional
        Sample weights (passed on as ``sample_weight=``).
    metric_params : dict, optional
        More keyword arguments for ``metric_func``.

    Returns
    -------
    tuple of ndarray
        (metric values, thresholds). O(T) calls of ``metric_func`` on n samples for T
        distinct scores, as scikit-learn; for the confusion measures,
        :func:`confusion_matrix_at_thresholds` gives every threshold in one O(n log n) pass.
    """
    y = column_or_1d(as_labels(y_true, "y_true"), "y_true")
    if y.dtype.kind == "f" and not np.isfinite(y).all():  # scikit-learn's assert_all_finite
        raise ValueError(f"Input contains {'NaN' if np.isnan(y).any() else 'infinity'}.")
    s = column_or_1d(finite_scores(as_scores(y_score, "y_score")), "y_score")
    check_consistent_length(y, s, sample_weight)
    w = check_weight(sample_weight, y.shape[0])
    if w is not None:
        keep = w != 0
        y, s, w = y[keep], s[keep], w[keep]
    order = np.argsort(-s, kind="stable") if s.dtype.kind != "b" else np.argsort(~s, kind="stable")
    y, s = y[order], s[order]
    params = {**(metric_params or {}), **({"sample_weight": w[order]} if w is not None else {})}
    last = np.r_[np.flatnonzero(np.diff(s)), s.shape[0] - 1] if s.shape[0] else np.zeros(0, dtype=np.intp)
    thresholds = s[last]
    values = [metric_func(y, (s >= t).astype(np.int32), **params) for t in thresholds]
    return np.asarray(values), thresholds
