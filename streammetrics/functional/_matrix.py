"""One-shot confusion-matrix functions with scikit-learn's signatures.

``confusion_matrix``, ``multilabel_confusion_matrix``, ``accuracy_score``, ``zero_one_loss``,
``hamming_loss``, ``balanced_accuracy_score``, ``matthews_corrcoef`` and ``cohen_kappa_score``.
Each checks and maps the labels (:mod:`streammetrics.functional._targets`), builds the matching
accumulator of :mod:`streammetrics.classification.confusion`, calls ``update`` once and returns ``compute()``:
the counting is the accumulators' kernel. Cost: O(n) for small integer labels, O(n log n)
otherwise (the label union); memory O(C^2) beyond the inputs (O(n·C) for the one-hot indicator
of ``multilabel_confusion_matrix`` on multiclass targets).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from streammetrics._core.averaging import chance_adjusted
from streammetrics._core.docstrings import filled
from streammetrics._core.labels import encode
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.validation import checked_labels
from streammetrics._core.warn import sklearn_compatible
from streammetrics._counts.confusion_counts import ConfusionCounts
from streammetrics.classification.confusion import (
    Accuracy,
    BalancedAccuracy,
    CohenKappa,
    ConfusionMatrix,
    ErrorRate,
    HammingLoss,
    MatthewsCorrCoef,
)

from ._targets import Targets, as_labels, check_targets


def class_codes(t: Targets) -> tuple[int, np.ndarray, np.ndarray]:
    """(number of classes, codes of y_true, codes of y_pred) over the sorted label union.

    At least 2 classes are reported (a single-label task gets an empty second class), since the
    multiclass accumulators need ``num_classes >= 2``."""
    k = t.classes.shape[0]
    c = t.classes
    if (t.y_true.dtype.kind in "iu" and t.y_pred.dtype.kind in "iu" and c.dtype.kind in "iu"
            and k and c[0] == 0 and c[-1] == k - 1):
        # the classes are the sorted union of the labels, so labels 0..k-1 are their own codes
        return max(k, 2), t.y_true, t.y_pred
    return max(k, 2), encode(t.y_true, c), encode(t.y_pred, c)


def _weight_kind(sample_weight: Any) -> str:
    return "i" if sample_weight is None else np.asarray(sample_weight).dtype.kind


def _total(t: Targets) -> float:
    return float(t.y_true.shape[0]) if t.sample_weight is None else float(t.sample_weight.sum())


def _count(value: float, t: Targets) -> float:
    """A normalised score times the total weight (rounded to the integer count if unweighted)."""
    out = value * _total(t)
    return float(round(out)) if t.sample_weight is None else float(out)


def _single(metric: Any, t: Targets) -> Any:
    """``metric`` fed the targets once (codes for single-label tasks) and computed."""
    if t.type == "multilabel-indicator":
        metric.update(t.y_true, t.y_pred, sample_weight=t.sample_weight)
    else:
        _, ct, cp = class_codes(t)  # checked codes in range: handed over (no second check)
        metric._update_checked(checked_labels(ct, cp, t.sample_weight))
    return metric.compute()


def _num_classes(t: Targets) -> int:
    return t.y_true.shape[1] if t.type == "multilabel-indicator" else max(t.classes.shape[0], 2)


def _fed(cls: type, y_true: Any, y_pred: Any, sample_weight: Any) -> tuple[float, Targets]:
    """The value of the accumulator ``cls`` fed once with the checked targets, and the targets."""
    t = check_targets(y_true, y_pred, sample_weight)
    ml = t.type == "multilabel-indicator"
    return float(_single(cls(_num_classes(t), multilabel=ml), t)), t


@filled
def accuracy_score(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> float:
    """Accuracy (subset accuracy for indicator targets), as ``sklearn.metrics.accuracy_score``.

    ``normalize=False`` gives the (weighted) number of correct samples. A thin call to
    :class:`streammetrics.Accuracy`. O(n) (+ the label union).

    Parameters
    ----------
    {sklearn: y_true_y_pred, normalize, sample_weight}

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    value, t = _fed(Accuracy, y_true, y_pred, sample_weight)
    return value if normalize else _count(value, t)


@filled
def zero_one_loss(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> float:
    """1 - accuracy (``normalize=False``: the weight of misclassified samples), as scikit-learn.

    A thin call to :class:`streammetrics.ErrorRate`. O(n).

    Parameters
    ----------
    {sklearn: y_true_y_pred, normalize, sample_weight}

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    value, t = _fed(ErrorRate, y_true, y_pred, sample_weight)
    if normalize:
        return value
    count = _count(value, t)
    return count if t.sample_weight is None else np.float64(count)  # as scikit-learn


@filled
def hamming_loss(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """The (weighted) share of wrong labels, as ``sklearn.metrics.hamming_loss``.

    A thin call to :class:`streammetrics.HammingLoss`. O(n·L).

    Parameters
    ----------
    {sklearn: y_true_y_pred, sample_weight}

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    value, t = _fed(HammingLoss, y_true, y_pred, sample_weight)
    ml = t.type == "multilabel-indicator"
    return np.float64(value) if ml and t.sample_weight is not None else value  # as scikit-learn


def _single_label(t: Targets) -> None:
    if t.type not in ("binary", "multiclass"):
        raise ValueError(f"{t.type} is not supported")
    if t.classes.shape[0] == 1:  # scikit-learn builds its confusion_matrix, which warns
        _warn_single_label()


def _warn_single_label() -> None:
    warnings.warn(
        "A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have "
        "the correct shape, use the 'labels' parameter to pass all known labels.",
        UserWarning,
        stacklevel=3,
    )


@filled
def matthews_corrcoef(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """Matthews correlation coefficient over the C×C matrix, as scikit-learn (0.0 when a
    denominator is 0). A thin call to :class:`streammetrics.MatthewsCorrCoef`. O(n + C^2).

    Parameters
    ----------
    {sklearn: y_true_y_pred, sample_weight}

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    t = check_targets(y_true, y_pred, sample_weight)
    _single_label(t)
    return float(_single(MatthewsCorrCoef(_num_classes(t)), t))


@filled
def balanced_accuracy_score(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, adjusted: bool = False
) -> float:
    """Mean recall over the classes present in ``y_true``, as scikit-learn (``adjusted``: chance
    is 0). Warns (``UserWarning``) when ``y_pred`` has classes absent from ``y_true``.

    A thin call to :class:`streammetrics.BalancedAccuracy` (whose per-class supports tell which
    classes are absent). O(n + C^2) up to 1024 classes, O(n + C) beyond.

    Parameters
    ----------
    {sklearn: y_true_y_pred, sample_weight}
    adjusted : bool, default False
        Rescale so that chance scores 0 and perfect 1.

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    t = check_targets(y_true, y_pred, sample_weight)
    _single_label(t)
    ba = BalancedAccuracy(_num_classes(t))
    value = float(_single(ba, t))
    support = ba._state.class_sums()[1][: t.classes.shape[0]]  # O(C), whatever the layout
    if np.any(support == 0):
        warnings.warn("y_pred contains classes not in y_true", UserWarning, stacklevel=2)
    if adjusted:  # the plain score, adjusted here: one class in y_true gives scikit-learn's values
        return chance_adjusted(value, int(np.count_nonzero(support)))
    return value


def _matrix_codes(
    y_true: Any, y_pred: Any, labels: Any, sample_weight: Any, name_true: str = "y_true"
) -> tuple[Targets, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Targets, the label list, the codes and weights (rows whose labels are not all in
    ``labels`` dropped) and the mask of the rows kept (None: all) for ``confusion_matrix`` and
    ``cohen_kappa_score``."""
    t = check_targets(y_true, y_pred, sample_weight)
    if t.type not in ("binary", "multiclass"):
        raise ValueError(f"{t.type} is not supported")
    if labels is None:
        lab = t.classes
    else:
        lab = as_labels(labels, "labels").ravel()
        if lab.size == 0:
            raise ValueError("'labels' should contain at least one label.")
        if not np.any(encode(t.y_true, lab) >= 0):
            if name_true == "`y1`":  # cohen_kappa_score's wording
                raise ValueError(
                    "At least one label in `labels` must be present in `y1` (even though "
                    "`cohen_kappa_score` is otherwise agnostic to the order of `y1` and `y2`)."
                )
            raise ValueError(f"At least one label specified must be in {name_true}")
    ct, cp = encode(t.y_true, lab), encode(t.y_pred, lab)
    keep = (ct >= 0) & (cp >= 0)
    w = t.sample_weight
    if keep.all():
        return t, lab, ct, cp, w, None
    ct, cp = ct[keep], cp[keep]
    return t, lab, ct, cp, None if w is None else w[keep], keep


@filled
def confusion_matrix(
    y_true: Any, y_pred: Any, *, labels: Any = None, sample_weight: Any = None, normalize: str | None = None
) -> np.ndarray:
    """Confusion matrix C[i, j] = weight of samples of class ``labels[i]`` predicted
    ``labels[j]``, as ``sklearn.metrics.confusion_matrix``.

    ``labels``: the classes to show, in that order (samples with another label are left out;
    default: the sorted union); ``normalize``: ``None``, ``"true"``, ``"pred"`` or ``"all"``.
    dtype as scikit-learn's: int64 without weights or with integer (or boolean) weights -- exact
    integer sums, a ``ValueError`` where a cell's sum exceeds int64 (scikit-learn's wraps around
    to a negative count) --, float64 with float weights (even all ones) or when normalised. A
    single label found warns (``UserWarning``) as scikit-learn does. A thin call to
    :class:`streammetrics.ConfusionMatrix` (which counts the occupied cells only beyond 1024
    classes). O(n + C^2) (O(n log n + C^2) beyond 1024 classes).

    Parameters
    ----------
    {sklearn: y_true_y_pred}
    labels : array-like, optional
        The classes to show, in that order; samples with other labels are left out.
    {sklearn: sample_weight}
    normalize : {"true", "pred", "all"} or None
        Divide by the row sums, the column sums or the total.

    Returns
    -------
    ndarray of shape (C, C)

    Raises
    ------
    {sklearn: raises}
    """
    t, lab, ct, cp, w, keep = _matrix_codes(y_true, y_pred, labels, sample_weight)
    k = lab.shape[0]
    integer = _weight_kind(sample_weight) in "biu"
    if normalize is None and integer and w is not None and _beyond_float(sample_weight, keep):
        cm = _integer_matrix(ct, cp, max(k, 2), _integer_weights(sample_weight, keep))[:k, :k]
    else:
        matrix = ConfusionMatrix(max(k, 2), normalize=normalize)._update_checked(checked_labels(ct, cp, w))
        cm = matrix.compute()[:k, :k]
    if normalize is None:  # scikit-learn's dtype: int64 for integer or no weights, else float64
        cm = cm.astype(np.int64 if integer else np.float64, copy=False)
    if cm.shape == (1, 1):
        _warn_single_label()
    return cm


@filled
def cohen_kappa_score(
    y1: Any,
    y2: Any,
    *,
    labels: Any = None,
    weights: str | None = None,
    sample_weight: Any = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Cohen's kappa between two annotators (``weights``: ``None``, ``"linear"`` or
    ``"quadratic"`` by position in ``labels``), as ``sklearn.metrics.cohen_kappa_score``.

    Undefined (no label in common, or one label only) warns with
    :class:`~streammetrics.UndefinedMetricWarning` and returns ``replace_undefined_by``. A thin
    call to :class:`streammetrics.CohenKappa` on the same codes as :func:`confusion_matrix`.
    O(n + C^2).

    Parameters
    ----------
    y1, y2 : array-like of shape (n,)
        The two annotators' labels.
    labels : array-like, optional
        The classes to show, in that order; samples with other labels are left out.
    weights : {None, "linear", "quadratic"}
        Disagreement weights by position in ``labels``.
    {sklearn: sample_weight}
    replace_undefined_by : float, default nan
        Returned (with a warning) when kappa is undefined.

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    _, lab, ct, cp, w, _ = _matrix_codes(y1, y2, labels, sample_weight, name_true="`y1`")
    k = lab.shape[0]
    value = float(
        CohenKappa(max(k, 2), weights=weights, zero_division=np.nan)
        ._update_checked(checked_labels(ct, cp, w)).compute()
    )
    if np.isnan(value):
        empty = ct.shape[0] == 0 or (w is not None and not np.any(w))
        what = (
            "`y2` contains no labels that are present in both `y1` and `labels`."
            if empty
            else "`y1`, `y2` and `labels` have only one label in common."
        )
        warnings.warn(
            f"{what} `cohen_kappa_score` is undefined and set to the value defined by the "
            f"`replace_undefined_by` param, which is set to {replace_undefined_by}.",
            sklearn_compatible(UndefinedMetricWarning),
            stacklevel=2,
        )
        return replace_undefined_by
    return value


@filled
def multilabel_confusion_matrix(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, labels: Any = None, samplewise: bool = False
) -> np.ndarray:
    """One-vs-rest 2×2 matrices ``[[TN, FP], [FN, TP]]`` per label (or per sample with
    ``samplewise=True``, indicator targets only), as scikit-learn, shape (L, 2, 2).

    ``labels``: the classes (column indices for indicators) to report, in that order. int64
    without weights, float64 with. A thin call to :class:`streammetrics.ConfusionMatrix` with
    ``multilabel=True`` (single-label targets are fed as their one-hot indicator over
    ``labels``). O(n·L).

    Parameters
    ----------
    {sklearn: y_true_y_pred, sample_weight, labels}
    samplewise : bool, default False
        One matrix per sample (indicator targets only).

    Returns
    -------
    ndarray of shape (L, 2, 2)

    Raises
    ------
    {sklearn: raises}
    """
    t = check_targets(y_true, y_pred, sample_weight)
    w = t.sample_weight
    if labels is not None and len(labels) == 0 and not samplewise:
        return np.zeros((0, 2, 2), dtype=np.int64 if w is None else np.float64)
    if t.type == "multilabel-indicator":
        yt, yp = t.y_true, t.y_pred
        if labels is not None:
            lab = np.asarray(labels).ravel()
            if lab.size and lab.max() >= yt.shape[1]:
                raise ValueError(
                    "All labels must be in [0, n labels) for multilabel targets. "
                    f"Got {lab.max()} > {yt.shape[1] - 1}"
                )
            if lab.size and lab.min() < 0:
                raise ValueError(
                    f"All labels must be in [0, n labels) for multilabel targets. Got {lab.min()} < 0"
                )
            yt, yp = yt[:, lab], yp[:, lab]
        if samplewise:
            out = ConfusionMatrix(yt.shape[0], multilabel=True).update(yt.T, yp.T).compute()
            if w is not None:
                return _samplewise_weighted(out, sample_weight, yt.shape[1])
        else:
            out = ConfusionMatrix(yt.shape[1], multilabel=True).update(yt, yp, sample_weight=w).compute()
    else:
        if samplewise:
            raise ValueError("Samplewise metrics are not available outside of multilabel classification.")
        lab = t.classes if labels is None else as_labels(labels, "labels").ravel()
        classes = t.classes if labels is None else _union_labels(t.classes, lab)
        k = classes.shape[0]
        state = ConfusionCounts("multiclass", max(k, 2))  # per-class sums only beyond 1024 classes
        state.apply(state.prepare(encode(t.y_true, classes), encode(t.y_pred, classes), w))
        s = state.one_vs_rest()
        out = np.stack([s.tn, s.fp, s.fn, s.tp], axis=1).reshape(-1, 2, 2)[encode(lab, classes)]
    return out.astype(np.int64 if w is None else np.float64, copy=False)  # scikit-learn's dtypes


def _samplewise_weighted(counts: np.ndarray, sample_weight: Any, num_labels: int) -> np.ndarray:
    """Per-sample (n, 2, 2) ``counts`` times each sample's weight, in scikit-learn's dtype: that
    of ``w * L - tp`` with ``tp`` = (int32 label counts) x ``w`` (int64 for integer and boolean
    weights, int32 for narrow integers, float64 for floats); integer products beyond int64 are
    a ``ValueError`` (scikit-learn's wrap around). O(n)."""
    raw = np.asarray(sample_weight).reshape(-1)
    dtype = np.result_type((raw[:0] * num_labels).dtype, np.result_type(np.int32, raw.dtype))
    if dtype.kind in "iu":
        top = int(raw.max()) * num_labels if raw.size else 0
        if top > np.iinfo(dtype).max:
            raise ValueError(f"sample_weight: an integer weight times the {num_labels} labels reaches "
                             f"{top}, beyond {dtype} (scikit-learn's count wraps around); pass "
                             "float weights")
        return counts.astype(dtype) * raw.astype(dtype)[:, None, None]
    return counts.astype(dtype) * raw.astype(dtype)[:, None, None]


def _integer_weights(sample_weight: Any, keep: np.ndarray | None) -> np.ndarray:
    """The integer (or boolean) weights as given, of the rows kept, as int64 or uint64."""
    raw = np.asarray(sample_weight).reshape(-1)
    raw = raw.astype(np.uint64 if raw.dtype.kind == "u" else np.int64)
    return raw if keep is None else raw[keep]


def _beyond_float(sample_weight: Any, keep: np.ndarray | None) -> bool:
    """True if integer weights may sum beyond 2**53, where float64 sums stop being exact."""
    w = _integer_weights(sample_weight, keep)
    return bool(w.size) and float(np.abs(w.astype(np.float64)).sum()) > 2.0**53


def _integer_matrix(ct: np.ndarray, cp: np.ndarray, k: int, w: np.ndarray) -> np.ndarray:
    """The (k, k) int64 matrix of exact integer weight sums per cell (Python integers while
    summing); ``ValueError`` naming the cell whose sum int64 cannot hold. O(n log n + k^2)."""
    cells = np.multiply(ct, k, dtype=np.int64, casting="unsafe") + cp.astype(np.int64)
    order = np.argsort(cells, kind="stable")
    cells = cells[order]
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    sums = np.add.reduceat(w[order].astype(object), starts)  # exact: Python integers
    top = max(sums, key=abs)
    if not -(2**63) <= top < 2**63:
        cell = int(cells[starts[list(sums).index(top)]])
        raise ValueError(
            f"sample_weight: the integer weights of the samples of class index {cell // k} predicted "
            f"as class index {cell % k} sum to {top}, beyond int64 (scikit-learn's int64 count "
            "wraps around); pass float weights for a float64 matrix"
        )
    out = np.zeros(k * k, dtype=np.int64)
    out[cells[starts]] = np.array(list(sums), dtype=np.int64)
    return out.reshape(k, k)


def _union_labels(classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    try:
        return np.union1d(classes, labels)
    except TypeError:  # strings and numbers: the unknown labels only widen the list
        return np.concatenate([classes.astype(object), labels[encode(labels, classes) < 0].astype(object)])


