"""One-shot probabilistic metrics with scikit-learn's signatures: ``log_loss``,
``brier_score_loss`` (``sklearn.metrics``) and ``calibration_curve`` (``sklearn.calibration``).

Thin calls into the calibration accumulators. scikit-learn one-hot encodes ``y_true`` against the
classes (``labels`` or those of ``y_true``; binary 1-D probabilities become the two columns
``[1 - p, p]``) and sums a per-cell term over the columns; both terms decompose over the cells
of that one-hot matrix T, so each function feeds the cells to the binary accumulator:

* ``log_loss``: the cells with T = 1 (the true class's probability ``q``, in the input's float
  type) go to :class:`streammetrics.LogLoss` as positives, which clips ``q`` to
  ``[eps, 1 - eps]`` and takes ``-log`` -- scikit-learn's ``xlogy(T, clip(P))`` summed over a row;
* ``brier_score_loss``: the state of :class:`streammetrics.BrierScore` without its bins sums
  ``w (p - t)^2``: fed the codes and the rows (multiclass, rows summing to 1), the positive
  column counted twice (binary targets), or every cell ``(P[i, c], T[i, c])`` as a binary
  sample (indicator targets, rows not summing to 1): scikit-learn's row sum, halved as
  ``scale_by_half`` says.

Rows of probabilities that do not sum to 1 warn (``UserWarning``) and are used as given, as in
scikit-learn. ``calibration_curve`` is one ``update`` of :class:`streammetrics.CalibrationCurve`.
O(n C).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.labels import encode
from streammetrics.calibration import CalibrationCurve, CalibrationCurveResult, LogLoss
from streammetrics.calibration._state import ProbabilityBins

from ._targets import (
    as_labels,
    as_scores,
    check_consistent_length,
    check_weight,
    column_or_1d,
    type_of_target,
    unique,
)

__all__ = ["brier_score_loss", "calibration_curve", "log_loss"]

_Encoded = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]

_BINARY_SETS = ([0, 1], [-1, 1], [0], [-1], [1])


def as_probabilities(y_proba: Any) -> np.ndarray:
    """scikit-learn's ``check_array(dtype=float)``: float32 stays float32, else float64; all
    finite."""
    p = as_scores(y_proba, "y_proba")
    p = p.astype(np.float32 if p.dtype == np.float32 else np.float64, copy=False)
    if p.ndim not in (1, 2):
        raise ValueError(f"y_proba: expected a 1-D or 2-D array, got shape {p.shape}")
    if not np.isfinite(p).all():
        bad = int(np.flatnonzero(~np.isfinite(p.ravel()))[0])
        what = "NaN" if np.isnan(p).any() else "infinity or a value too large"
        raise ValueError(f"Input y_proba contains {what} (first bad value at flat index {bad})")
    return p


def _check_range(p: np.ndarray, lower: str = "lower") -> None:
    if p.size and p.max() > 1:
        raise ValueError(f"y_prob contains values greater than 1: {p.max()}")
    if p.size and p.min() < 0:
        raise ValueError(f"y_prob contains values {lower} than 0: {p.min()}")


def _pos_label(y: np.ndarray, pos_label: Any, classes: np.ndarray | None = None) -> Any:
    """scikit-learn's ``_check_pos_label_consistency``: None means 1 for {0, 1} / {-1, 1}
    (``classes``: ``unique(y)`` if the caller has it)."""
    if pos_label is not None:
        return pos_label
    classes = unique(y) if classes is None else classes
    if classes.dtype.kind in "OUS" or not any(np.array_equal(classes, a) for a in _BINARY_SETS):
        raise ValueError(
            f"y_true takes value in {{{', '.join(repr(c) for c in classes.tolist())}}} and "
            "pos_label is not specified: either make y_true take value in {0, 1} or {-1, 1} or "
            "pass pos_label explicitly."
        )
    return 1


def _one_hot(y: np.ndarray, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """(T, classes) as scikit-learn's ``LabelBinarizer`` (sorted classes; a one-column result
    becomes ``[1 - t, t]``; an indicator matrix is its own encoding)."""
    if labels is not None:
        lab = as_labels(labels, "labels")
        classes = unique(lab)
        if not np.array_equal(classes, lab):
            warnings.warn(
                f"Labels passed were {labels}. But this function assumes labels are ordered "
                f"lexicographically. Pass the ordered labels={classes.tolist()} and ensure that "
                "the columns of y_prob correspond to this ordering.",
                UserWarning,
                stacklevel=3,
            )
        if y.ndim == 1:
            codes = encode(y, classes)
            if np.any(codes < 0):
                undeclared = set(y[codes < 0].tolist())
                raise ValueError(
                    f"y_true contains values {undeclared} not belonging to the passed labels {labels}."
                )
    elif type_of_target(y, "y_true") == "multilabel-indicator":
        classes = np.arange(y.shape[1])
    elif y.ndim == 2 and y.shape[1] > 1:  # scikit-learn's LabelBinarizer refuses these
        raise ValueError("Multioutput target data is not supported with label binarization")
    else:
        classes = unique(column_or_1d(y, "y_true"))
    if classes.shape[0] == 1:
        if labels is None:
            raise ValueError(
                f"y_true contains only one label ({classes[0]}). Please provide the list of all "
                "expected class labels explicitly through the labels argument."
            )
        raise ValueError(f"The labels array needs to contain at least two labels, got {classes}.")
    if y.ndim == 2 and y.shape[1] > 1:
        if type_of_target(y, "y_true") != "multilabel-indicator" or y.shape[1] != classes.shape[0]:
            raise ValueError(f"y_true: unsupported target of shape {y.shape}")
        return (y != 0).astype(np.int8), classes
    codes = encode(column_or_1d(y, "y_true"), classes)
    t = np.zeros((codes.shape[0], classes.shape[0]), dtype=np.int8)
    t[np.arange(codes.shape[0]), codes] = 1
    return t, classes


def multiclass_probabilities(y_true: Any, p: np.ndarray, sample_weight: Any, labels: Any) -> _Encoded:
    """scikit-learn's ``_validate_multiclass_probabilistic_prediction``: (T, P, w), both (n, C)."""
    _check_range(p)
    y = as_labels(y_true, "y_true")
    if type_of_target(y, "y_true") == "unknown":  # scikit-learn's LabelBinarizer refuses it
        raise ValueError(f"Unknown label type: y_true of dtype {y.dtype} and shape {y.shape}")
    check_consistent_length(p, y, sample_weight)
    w = check_weight(sample_weight, p.shape[0])
    t, classes = _one_hot(y, labels)
    if p.ndim == 1:
        p = p[:, None]
    if p.shape[1] == 1:
        p = np.concatenate([1 - p, p], axis=1)
    sums = p.sum(axis=1)
    if not np.all(np.isclose(sums, 1, rtol=np.sqrt(np.finfo(p.dtype).eps))):
        warnings.warn("The y_prob values do not sum to one. Make sure to pass probabilities.",
                      UserWarning, stacklevel=3)
    if classes.shape[0] != p.shape[1]:
        if labels is None:
            raise ValueError(
                f"y_true and y_prob contain different number of classes: {t.shape[1]} vs "
                f"{p.shape[1]}. Please provide the true labels explicitly through the labels "
                f"argument. Classes found in y_true: {classes}"
            )
        raise ValueError(
            "The number of classes in labels is different from that in y_prob. Classes found in "
            f"labels: {classes}"
        )
    return t, p, w


def binary_probabilities(y_true: Any, p: np.ndarray, sample_weight: Any, pos_label: Any) -> _Encoded:
    """scikit-learn's ``_validate_binary_probabilistic_prediction``: (T, P, w), both (n, 2)."""
    y = column_or_1d(as_labels(y_true, "y_true"), "y_true")
    p = column_or_1d(p, "y_proba")
    check_consistent_length(p, y, sample_weight)
    w = check_weight(sample_weight, p.shape[0])
    y_type = type_of_target(y, "y_true")
    if y_type != "binary":
        raise ValueError(
            f"The type of the target inferred from y_true is {y_type} but should be binary "
            "according to the shape of y_prob."
        )
    _check_range(p, "less")
    try:
        pos = _pos_label(y, pos_label)
    except ValueError:
        classes = unique(y)
        if classes.dtype.kind in "OUS":
            raise
        pos = classes[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = np.asarray(y == pos)
    if t1.shape != y.shape:
        t1 = np.zeros(y.shape, dtype=bool)
    t = np.stack([~t1, t1], axis=1).astype(np.int8)
    return t, np.stack([1 - p, p], axis=1), w


def _brier_sum(y: np.ndarray, p: np.ndarray, w: np.ndarray | None, num_classes: int | None) -> float:
    """The weighted sum of Brier terms, from the state of :class:`streammetrics.BrierScore`
    without its decomposition bins (``n_bins=0``: the totals only). O(n C)."""
    state = ProbabilityBins(num_classes, 0, "right", False)
    state.apply(state.prepare(y, p, w))
    return float(state.totals()[2])


def cell_weights(t: np.ndarray, w: np.ndarray | None, keep: np.ndarray | None = None) -> np.ndarray | None:
    """Per-cell weights (each sample's weight on each of its columns)."""
    if w is None:
        return None
    full = np.broadcast_to(w[:, None], t.shape)
    return full[keep] if keep is not None else full.ravel()


def renamed_y_proba(y_proba: Any, y_pred: Any) -> Any:
    """scikit-learn 1.9's rename of ``y_pred`` to ``y_proba`` (``log_loss``, ``d2_log_loss_score``):
    the old name still works, with a ``FutureWarning`` (at the caller's caller); both given is a
    ``ValueError``. Returns the probabilities given."""
    if isinstance(y_pred, str) and y_pred == "deprecated":
        return y_proba
    if y_proba is not None:
        raise ValueError(
            "Cannot use both `y_pred` and `y_proba`. `y_pred` is deprecated, use `y_proba` instead."
        )
    warnings.warn(
        "`y_pred` was renamed to `y_proba` in version 1.9 and will be removed in 1.11. Use "
        "`y_proba` instead.",
        FutureWarning,
        stacklevel=3,
    )
    return y_pred


@filled
def log_loss(
    y_true: Any,
    y_proba: Any = None,
    *,
    normalize: bool = True,
    sample_weight: Any = None,
    labels: Any = None,
    y_pred: Any = "deprecated",
) -> float:
    """Log loss (cross-entropy) as ``sklearn.metrics.log_loss``: the (weighted) mean, or with
    ``normalize=False`` the sum, of ``-log`` of the probability given to the true class, clipped
    to ``[eps, 1 - eps]`` (eps of the input's float type). A thin call to
    :class:`streammetrics.LogLoss`.

    Parameters
    ----------
    y_true : array-like of shape (n,) or indicator matrix (n, C)
        True labels (any hashable labels).
    y_proba : array-like of shape (n,) or (n, C)
        Probabilities; 1-D (or one column): of the greater label (binary). Columns in the
        sorted order of the classes.
    normalize : bool
        Mean (True) or sum (False) of the per-sample losses.
    {sklearn: sample_weight}
    {sklearn: labels_of_y_true, y_pred_renamed}

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    y_proba = renamed_y_proba(y_proba, y_pred)
    t, p, w = multiclass_probabilities(y_true, as_probabilities(y_proba), sample_weight, labels)
    hot = t == 1
    q = p[hot]  # row-major: each sample's true-class probabilities, in the input's float type
    metric = LogLoss().update(np.ones(q.shape[0], dtype=np.int8), q, sample_weight=cell_weights(t, w, hot))
    total = metric._state.totals()[1]  # the (weighted) sum of -log(clip(q))
    if not normalize:
        return float(total)
    n = float(t.shape[0]) if w is None else float(w.sum())
    return float(total / n)


@filled
def brier_score_loss(
    y_true: Any,
    y_proba: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    scale_by_half: Any = "auto",
) -> float:
    """Brier score as ``sklearn.metrics.brier_score_loss``: the (weighted) mean over samples of
    ``sum_c (P[i, c] - T[i, c])^2`` over the one-hot columns, halved if ``scale_by_half`` (default
    ``"auto"``: halved for 1-D or two-column probabilities). A thin call to
    :class:`streammetrics.BrierScore`.

    Parameters
    ----------
    y_true : array-like of shape (n,) or indicator matrix (n, C)
        True labels.
    y_proba : array-like of shape (n,) or (n, C)
        Probabilities; 1-D (or one column): of ``pos_label`` (binary).
    {sklearn: sample_weight}
    pos_label : label, optional
        Binary: the positive class (default 1 for {0, 1} / {-1, 1}, else the greater label).
    labels : array-like, optional
        Multiclass: the classes (default: those of ``y_true``).
    scale_by_half : bool or "auto"

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    p = as_probabilities(y_proba)
    if p.ndim == 1 or p.shape[1] == 1:
        t, p, w = binary_probabilities(y_true, p, sample_weight, pos_label)
        halve = True
        # the two cells of a row have the same square: (p - t)^2 = ((1 - p) - (1 - t))^2
        total = 2.0 * _brier_sum(t[:, 1], p[:, 1], w, None)
    else:
        t, p, w = multiclass_probabilities(y_true, p, sample_weight, labels)
        halve = p.shape[1] < 3
        by_row: float | None = None
        if as_labels(y_true, "y_true").ndim == 1:  # one class per row: the multiclass kernel
            try:
                by_row = _brier_sum(t.argmax(axis=1), p, w, p.shape[1])
            except ValueError:  # rows that do not sum to 1 (scikit-learn only warns): by cell
                by_row = None
        # else the sum of w (p - t)^2 over the cells
        total = _brier_sum(t.ravel(), p.ravel(), cell_weights(t, w), None) if by_row is None else by_row
    n = float(t.shape[0]) if w is None else float(w.sum())
    score = total / n
    if scale_by_half == "auto" and halve or scale_by_half is True:
        score *= 0.5
    return float(score)


@filled
def calibration_curve(
    y_true: Any, y_prob: Any, *, pos_label: Any = None, n_bins: int = 5, strategy: str = "uniform"
) -> tuple[np.ndarray, np.ndarray]:
    """(prob_true, prob_pred) of the reliability curve, as ``sklearn.calibration.calibration_curve``
    (binary; the non-empty bins in order). A thin call to :class:`streammetrics.CalibrationCurve`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels (two classes at most).
    y_prob : array-like of shape (n,)
        Probabilities of ``pos_label``, in [0, 1].
    pos_label : label, optional
        The positive class (default 1 for {0, 1} / {-1, 1}).
    n_bins : int
    strategy : {"uniform", "quantile"}

    Returns
    -------
    tuple of ndarray
        (prob_true, prob_pred).

    Raises
    ------
    {sklearn: raises}
    """
    y = column_or_1d(as_labels(y_true, "y_true"), "y_true")
    p = column_or_1d(np.asarray(as_scores(y_prob, "y_prob"), dtype=np.float64), "y_prob")
    check_consistent_length(y, p)
    classes = unique(y) if pos_label is None else None  # once, in scikit-learn's order of checks
    pos = _pos_label(y, pos_label, classes)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError("y_prob has values outside [0, 1].")
    classes = unique(y) if classes is None else classes
    if classes.shape[0] > 2:
        raise ValueError(f"Only binary classification is supported. Provided labels {classes}.")
    if strategy not in ("uniform", "quantile"):
        raise ValueError(
            "Invalid entry to 'strategy' input. Strategy must be either 'quantile' or 'uniform'."
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y01 = np.asarray(y == pos)
    if y01.shape != y.shape:
        y01 = np.zeros(y.shape, dtype=bool)
    res = CalibrationCurve(n_bins=n_bins, strategy=strategy).update(y01.astype(np.int8), p).compute()
    assert isinstance(res, CalibrationCurveResult)  # binary: one curve
    return res.prob_true, res.prob_pred
