"""One-shot ranking scores with scikit-learn's signatures.

``roc_auc_score``, ``average_precision_score``, ``top_k_accuracy_score``, ``dcg_score`` and
``ndcg_score``: thin calls into :class:`streammetrics.AUROC`, :class:`streammetrics.AveragePrecision`,
:class:`streammetrics.TopKAccuracy`, :class:`streammetrics.DCG` and :class:`streammetrics.NDCG`
(one ``update``, one ``compute``). What scikit-learn does beyond the kernels is done here on their
outputs: its class averages (:func:`sklearn_average`: nan classes kept, zero-weight classes set
to 0), AP = 0 for a class without positives, ``log_base`` (a constant factor log2(base)) and
negative gains in ``dcg_score`` (DCG is linear in the gains: DCG(g) = DCG(max(g, 0)) -
DCG(max(-g, 0)) under the same ranking).

Cost: AUROC / AP O(n log n) per class (the accumulators' sort), top-k O(n·C), DCG O(n·L log L).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.labels import encode
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.validation import checked_batch
from streammetrics._core.warn import sklearn_compatible
from streammetrics.classification.topk import TopKAccuracy
from streammetrics.ranking.metrics import AUROC, AveragePrecision
from streammetrics.retrieval.metrics import DCG, NDCG

from ._targets import (
    as_labels,
    as_scores,
    check_consistent_length,
    check_weight,
    column_or_1d,
    contains,
    finite_scores,
    relay_undefined,
    target_type_and_labels,
    type_of_target,
    unique,
)

__all__ = [
    "average_precision_score",
    "dcg_score",
    "ndcg_score",
    "roc_auc_score",
    "sklearn_average",
    "top_k_accuracy_score",
]

_BINARY_AVERAGES = (None, "micro", "macro", "weighted", "samples")
_ONE_CLASS = "Only one class is present in y_true. ROC AUC score is not defined in that case."


def _scores(y_score: Any) -> np.ndarray:
    return finite_scores(as_scores(y_score, "y_score"))


def sklearn_average(values: np.ndarray, weights: np.ndarray | None, average: str | None) -> Any:
    """scikit-learn's average of per-class (or per-sample) binary scores (``_average_binary_score``):
    a nan class makes the average nan, except that classes of weight 0 count as 0; weights summing
    to 0 give 0. ``average=None`` returns ``values``.

    Parameters
    ----------
    values : numpy.ndarray of shape (n,)
        The score of each class (or sample), nan where undefined.
    weights : numpy.ndarray of shape (n,) or None
        The weight of each (None: equal weights).
    average : str or None
        None returns ``values``; any other averaging (``"macro"``, ``"weighted"``, ...) the
        weighted mean.

    Returns
    -------
    float or numpy.ndarray
        The average, or ``values`` when ``average`` is None.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.functional.ranking import sklearn_average
    >>> sklearn_average(np.array([0.5, 1.0]), None, "macro")
    0.75
    >>> sklearn_average(np.array([0.5, np.nan, 1.0]), np.array([1.0, 0.0, 3.0]), "weighted")
    0.875
    """
    if average is None:
        return values
    if weights is not None:
        if math.isclose(float(np.sum(weights)), 0.0, abs_tol=1e-8):
            return 0.0
        values = np.where(weights == 0, 0.0, values)
    return float(np.average(values, weights=weights))


def fed(metric: Any, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> Any:
    """``metric`` (a ranking accumulator, empty, without ``classes=``) fed arrays this module has
    checked (``y`` 0/1, bool or class codes, ``s`` finite scores row-aligned with it, ``w``
    finite float64 weights or None): handed over as one checked batch
    (:func:`~streammetrics._core.validation.checked_batch`), so that the accumulator converts and
    checks none of them again (the weights' bounds only). Returns ``metric``. O(n)."""
    return metric._update_checked(checked_batch(y, s, w))


def _positives(y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """The weight of the positives of each column of a 0/1 matrix."""
    return y.sum(axis=0) if w is None else (y * w[:, None]).sum(axis=0)


def _by_column(
    cls: type, y: np.ndarray, s: np.ndarray, w: np.ndarray | None, average: str | None, **kw: Any
) -> Any:
    """scikit-learn's ``_average_binary_score`` for a 0/1 matrix ``y`` and scores ``s`` (n, L),
    each binary score read from one accumulator over all columns (``average=None``, or
    ``"micro"`` pooling the pairs; ``"samples"`` on the transposed matrices)."""
    if average not in _BINARY_AVERAGES:
        raise ValueError(f"average has to be one of {_BINARY_AVERAGES}")
    check_consistent_length(y, s, w)
    if y.shape != s.shape:
        raise ValueError(f"y_score: expected shape {y.shape}, got {s.shape}")
    if average == "micro":
        return float(
            fed(cls(y.shape[1], multilabel=True, average="micro", **kw), y, s, w).compute()
        )
    if average == "samples":
        values = fed(cls(y.shape[0], multilabel=True, average=None, **kw), y.T, s.T, None).compute()
        return sklearn_average(np.asarray(values, dtype=np.float64), w, average)
    values = fed(cls(y.shape[1], multilabel=True, average=None, **kw), y, s, w).compute()
    weights = _positives(y, w) if average == "weighted" else None
    return sklearn_average(np.asarray(values, dtype=np.float64), weights, average)


def _drop_zero_weights(y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> tuple[Any, Any, Any]:
    if w is None or np.all(w != 0):
        return y, s, w
    keep = w != 0
    return y[keep], s[keep], w[keep]


@filled
def roc_auc_score(
    y_true: Any,
    y_score: Any,
    *,
    average: str | None = "macro",
    sample_weight: Any = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: Any = None,
) -> Any:
    """Area under the ROC curve, as ``sklearn.metrics.roc_auc_score``.

    Binary (the greater label is positive), multilabel indicator (``average`` micro, macro,
    weighted, samples or None) and multiclass (``multi_class="ovr"`` with micro/macro/weighted/None
    or ``"ovo"`` (Hand & Till) with macro/weighted; ``labels`` names the score columns).
    ``max_fpr``: McClish-standardised partial AUC (binary and multilabel only). A column with
    one class only warns (:class:`~streammetrics.UndefinedMetricWarning`) and is nan.
    A thin call to :class:`streammetrics.AUROC`. O(n log n) per class.

    Parameters
    ----------
    {sklearn: y_true, y_score}
    average : {"micro", "macro", "weighted", "samples"} or None, default "macro"
        Class average (binary targets give one value whatever the average).
    {sklearn: sample_weight}
    max_fpr : float in (0, 1], optional
        Standardised partial AUC up to this false-positive rate (binary and multilabel).
    multi_class : {"raise", "ovr", "ovo"}, default "raise"
        Multiclass strategy (one-vs-rest or Hand & Till's one-vs-one; required for multiclass).
    labels : array-like, optional
        The classes naming the score columns, sorted (default: the labels of ``y_true``).

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    {sklearn: raises}
    """
    y = as_labels(y_true, "y_true")
    y_type, present = target_type_and_labels(y, "y_true")
    s = _scores(y_score)
    if multi_class == "ovo" and sample_weight is not None and y_type == "multiclass":
        raise ValueError(
            "sample_weight is not supported for multiclass one-vs-one ROC AUC, 'sample_weight' must "
            "be None in this case."
        )
    w = check_weight(sample_weight, y.shape[0])
    if max_fpr is not None and max_fpr == 1:
        max_fpr = None
    if y_type == "multiclass" or (y_type == "binary" and s.ndim == 2 and s.shape[1] > 2):
        if max_fpr is not None:
            raise ValueError(
                "Partial AUC computation not available in multiclass setting, 'max_fpr' must be set to "
                f"`None`, received `max_fpr={max_fpr}` instead"
            )
        if multi_class == "raise":
            raise ValueError("multi_class must be in ('ovo', 'ovr')")
        return _multiclass_auc(column_or_1d(y, "y_true"), s, labels, multi_class, average, w)
    if y_type == "binary":
        if average not in _BINARY_AVERAGES:
            raise ValueError(f"average has to be one of {_BINARY_AVERAGES}")
        y = column_or_1d(y, "y_true")
        s = column_or_1d(s, "y_score")
        check_consistent_length(y, s, w)
        return _binary_auc(_is(y, present[-1]), s, w, max_fpr)
    if y_type == "multilabel-indicator":
        with relay_undefined(_ONE_CLASS):
            return _by_column(AUROC, (y != 0).astype(np.int8), s, w, average, max_fpr=max_fpr)
    raise ValueError(f"{y_type} format is not supported")


def _is(y: np.ndarray, label: Any) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(y == label)
    return out if out.shape == y.shape else np.zeros(y.shape, dtype=bool)


def _binary_auc(y01: np.ndarray, s: np.ndarray, w: np.ndarray | None, max_fpr: float | None) -> float:
    if y01.all() or not y01.any():
        warnings.warn(
            _ONE_CLASS,
            sklearn_compatible(UndefinedMetricWarning),
            stacklevel=3,
        )
        return float("nan")
    return float(fed(AUROC(max_fpr=max_fpr), y01, s, w).compute())


def _multiclass_auc(
    y: np.ndarray, s: np.ndarray, labels: Any, multi_class: str, average: Any, w: np.ndarray | None
) -> Any:
    if s.ndim != 2:
        raise ValueError(
            "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple "
            f"classes. Got `y_score.shape={s.shape}`."
        )
    if not np.allclose(1, s.sum(axis=1)):
        raise ValueError(
            "Target scores need to be probabilities for multiclass roc_auc, i.e. they should sum up "
            "to 1.0 over classes"
        )
    options: tuple[Any, ...] = ("macro", "weighted", None)
    if multi_class == "ovr":
        options = ("micro", *options)
    if average not in options:
        raise ValueError(f"average must be one of {options} for multiclass problems")
    if multi_class not in ("ovo", "ovr"):
        raise ValueError(
            f"multi_class='{multi_class}' is not supported for multiclass ROC AUC, "
            "multi_class must be in ('ovo', 'ovr')"
        )
    if average is None and multi_class == "ovo":
        raise NotImplementedError("average=None is not implemented for multi_class='ovo'.")
    if labels is not None:
        classes = column_or_1d(as_labels(labels, "labels"), "labels")
        uniq = np.unique(classes)
        if len(uniq) != len(classes):
            raise ValueError("Parameter 'labels' must be unique")
        if not np.array_equal(uniq, classes):
            raise ValueError("Parameter 'labels' must be ordered")
        if len(classes) != s.shape[1]:
            raise ValueError(
                f"Number of given labels, {len(classes)}, not equal to the number of columns in "
                f"'y_score', {s.shape[1]}"
            )
        if np.any(encode(y, classes) < 0):
            raise ValueError("'y_true' contains labels not in parameter 'labels'")
    else:
        classes = unique(y)
        if len(classes) != s.shape[1]:
            raise ValueError("Number of classes in y_true not equal to the number of columns in 'y_score'")
    check_consistent_length(y, s, w)
    codes = encode(y, classes)
    c = classes.shape[0]
    if multi_class == "ovo":
        if w is not None:
            raise ValueError(
                "sample_weight is not supported for multiclass one-vs-one ROC AUC, 'sample_weight' must "
                "be None in this case."
            )
        # scikit-learn averages over the pairs of classes present in y_true, as the accumulator
        # does (it warns about the absent ones; scikit-learn does not)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            return np.float64(fed(AUROC(c, multi_class="ovo", average=average), codes, s, None).compute())
    if average == "micro":
        return float(fed(AUROC(c, average="micro"), codes, s, w).compute())
    with relay_undefined(_ONE_CLASS):
        values = fed(AUROC(c, average=None), codes, s, w).compute()
    weights = None
    if average == "weighted":
        weights = np.bincount(codes, weights=w, minlength=c).astype(np.float64)
    return sklearn_average(np.asarray(values, dtype=np.float64), weights, average)


def _ap_no_positives(values: Any) -> Any:
    """scikit-learn's AP of a class without positives is 0 (its recall is set to 1)."""
    if isinstance(values, np.ndarray):
        return np.where(np.isnan(values), 0.0, values)
    return 0.0 if math.isnan(values) else values


class _APZeroIfNoPositives(AveragePrecision):
    """:class:`~streammetrics.AveragePrecision` read as scikit-learn reads it: 0 (not nan) for a
    class without positives, with a warning."""

    def compute(self) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = super().compute()
        if any(issubclass(x.category, UndefinedMetricWarning) for x in caught):
            warnings.warn(
                "No positive class found in y_true, recall is set to one for all thresholds.",
                sklearn_compatible(UndefinedMetricWarning),
                stacklevel=4,
            )
        return _ap_no_positives(value)


@filled
def average_precision_score(
    y_true: Any, y_score: Any, *, average: str | None = "macro", pos_label: Any = 1, sample_weight: Any = None
) -> Any:
    """Average precision AP = Σ (R_k - R_{k-1}) P_k, as ``sklearn.metrics.average_precision_score``.

    Binary (``pos_label``), multilabel indicator and multiclass (one-vs-rest over the labels of
    ``y_true``, scores of shape (n, C)); ``average`` as in :func:`roc_auc_score`. A class without
    positives gives 0 with a warning. A thin call to :class:`streammetrics.AveragePrecision`.

    Parameters
    ----------
    {sklearn: y_true, y_score}
    average : {"micro", "macro", "weighted", "samples"} or None, default "macro"
        Class average (binary targets give one value whatever the average).
    {sklearn: pos_label, sample_weight}

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    {sklearn: raises}
    """
    y = as_labels(y_true, "y_true")
    y_type, present = target_type_and_labels(y, "y_true")
    s = _scores(y_score)
    w = check_weight(sample_weight, y.shape[0])
    if y_type == "binary":
        y = column_or_1d(y, "y_true")
        if present.shape[0] == 2 and not contains(present, pos_label):
            raise ValueError(f"pos_label={pos_label} is not a valid label. It should be one of {present}")
        if average not in _BINARY_AVERAGES:
            raise ValueError(f"average has to be one of {_BINARY_AVERAGES}")
        s = column_or_1d(s, "y_score")
        check_consistent_length(y, s, w)
        y01, s, w = _drop_zero_weights(_is(y, pos_label), s, w)
        return float(fed(_APZeroIfNoPositives(), y01, s, w).compute())
    if y_type == "multilabel-indicator":
        if pos_label != 1:
            raise ValueError(
                "Parameter pos_label is fixed to 1 for multilabel-indicator y_true. Do not set pos_label "
                "or set pos_label to 1."
            )
        return _by_column(_APZeroIfNoPositives, (y != 0).astype(np.int8), s, w, average)
    if y_type == "multiclass":
        if pos_label != 1:
            raise ValueError(
                "Parameter pos_label is fixed to 1 for multiclass y_true. Do not set pos_label or set "
                "pos_label to 1."
            )
        y = column_or_1d(y, "y_true")
        classes = unique(y)
        if s.shape != (y.shape[0], classes.shape[0]):
            raise ValueError(
                "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple "
                f"classes. Got `y_score.shape={s.shape}`."
            )
        onehot = (encode(y, classes)[:, None] == np.arange(classes.shape[0])).astype(np.int8)
        return _by_column(_APZeroIfNoPositives, onehot, s, w, average)
    raise ValueError(f"{y_type} format is not supported")


@filled
def top_k_accuracy_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int = 2,
    normalize: bool = True,
    sample_weight: Any = None,
    labels: Any = None,
) -> float:
    """Share of samples whose true class is among the ``k`` highest scores, as scikit-learn
    (ties: the higher class index ranks first). Binary scores (n,) with ``k=1``: predicted
    positive iff score > 0.5 (scores in [0, 1]) or > 0. ``normalize=False``: the weight of hits.
    A thin call to :class:`streammetrics.TopKAccuracy`. O(n·C).

    Parameters
    ----------
    {sklearn: y_true, y_score}
    k : int, default 2
        How many top scores count as a hit.
    {sklearn: normalize, sample_weight}
    labels : array-like, optional
        The classes naming the score columns, sorted (default: the labels of ``y_true``).

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    y = column_or_1d(as_labels(y_true, "y_true"), "y_true")
    y_type = type_of_target(y, "y_true")
    if y_type == "binary" and labels is not None and len(labels) > 2:
        y_type = "multiclass"
    if y_type not in ("binary", "multiclass"):
        raise ValueError(f"y type must be 'binary' or 'multiclass', got '{y_type}' instead.")
    s = _scores(y_score)
    if y_type == "binary":
        if s.ndim == 2 and s.shape[1] != 1:
            raise ValueError(
                f"`y_true` is binary while y_score is 2d with {s.shape[1]} classes. If `y_true` does not "
                "contain all the labels, `labels` must be provided."
            )
        s = column_or_1d(s, "y_score")
    elif s.ndim != 2:
        raise ValueError(
            "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple "
            f"classes. Got `y_score.shape={s.shape}`."
        )
    w = check_weight(sample_weight, y.shape[0], allow_all_zero=True)
    check_consistent_length(y, s, w)
    n_score = s.shape[1] if s.ndim == 2 else 2
    if labels is None:
        classes = unique(y)
        if classes.shape[0] != n_score:
            raise ValueError(
                f"Number of classes in 'y_true' ({classes.shape[0]}) not equal to the number of classes in "
                f"'y_score' ({n_score}).You can provide a list of all known classes by assigning it to the "
                "`labels` parameter."
            )
    else:
        classes = column_or_1d(as_labels(labels, "labels"), "labels")
        uniq = np.unique(classes)
        if uniq.shape[0] != classes.shape[0]:
            raise ValueError("Parameter 'labels' must be unique.")
        if not np.array_equal(uniq, classes):
            raise ValueError("Parameter 'labels' must be ordered.")
        if classes.shape[0] != n_score:
            raise ValueError(
                f"Number of given labels ({classes.shape[0]}) not equal to the number of classes in "
                f"'y_score' ({n_score})."
            )
        if np.any(encode(y, classes) < 0):
            raise ValueError("'y_true' contains labels not in parameter 'labels'.")
    c = classes.shape[0]
    if k >= c:
        warnings.warn(
            f"'k' ({k}) greater than or equal to 'n_classes' ({c}) will result in a perfect score and is "
            "therefore meaningless.",
            sklearn_compatible(UndefinedMetricWarning),
            stacklevel=2,
        )
    codes = encode(y, classes)
    if y_type == "binary":
        # column 0: the positive class's score, column 1: the threshold; a tie ranks column 1
        # (the negative class) first, so the positive class wins iff score > threshold
        threshold = 0.5 if s.min() >= 0 and s.max() <= 1 else 0.0
        s = np.column_stack([s, np.full(s.shape[0], threshold, dtype=s.dtype)])
        codes = 1 - codes
    # scikit-learn averages the hits with numpy.average, which raises this
    if normalize and w is not None and w.shape[0] and not w.any():
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    value = float(TopKAccuracy(c, k=min(int(k), c)).update(codes, s, sample_weight=w).compute())
    if normalize:
        return value
    total = float(y.shape[0]) if w is None else float(w.sum())
    return float(round(value * total)) if w is None else value * total


def _dcg_input(y_true: Any, y_score: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    # relevance as float64: -y and sums of int64 grades would wrap around (-(-2**63) == -2**63)
    y = as_scores(y_true, "y_true").astype(np.float64)
    s = _scores(y_score)
    w = None if sample_weight is None else check_weight(sample_weight, y.shape[0], allow_all_zero=True)
    check_consistent_length(y, s, w)
    return y, s, w


def _check_dcg_type(y: np.ndarray) -> None:
    y_type = type_of_target(y, "y_true")
    supported = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")
    if y_type not in supported:
        raise ValueError(f"Only {supported} formats are supported. Got {y_type} instead")


def _per_query(cls: type, y: np.ndarray, s: np.ndarray, k: Any, ignore_ties: bool) -> np.ndarray:
    """Every row's value from one ``cls`` accumulator fed all rows as queries."""
    if s.shape != y.shape:
        raise ValueError(f"y_score: expected shape {y.shape}, got {s.shape}")
    n, m = y.shape
    metric = cls(k, ties="first" if ignore_ties else "average", per_query=True)
    metric.update(y.astype(np.float64).ravel(), s.ravel(), query_ids=np.repeat(np.arange(n), m))
    return np.asarray(metric.per_query_values(), dtype=np.float64)


@filled
def dcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """Discounted cumulative gain Σ_{i≤k} y_(i) / log_base(i + 1), averaged over the rows
    (weighted by ``sample_weight``), as ``sklearn.metrics.dcg_score``. Ties in ``y_score`` get
    the mean gain of their group unless ``ignore_ties`` (then equal to scikit-learn when a row has
    no tied scores). A thin call to :class:`streammetrics.DCG` (one query per row).

    Parameters
    ----------
    y_true : array-like of shape (n_queries, n_documents)
        Relevance grades (one row per query).
    y_score : array-like of shape (n_queries, n_documents)
        Scores ranking each row's documents.
    k : int, optional
        Only the top k documents of each row count.
    log_base : float, default 2
        Base of the logarithm of the discount.
    {sklearn: sample_weight}
    ignore_ties : bool, default False
        Rank tied scores by position instead of averaging their gains.

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    y, s, w = _dcg_input(y_true, y_score, sample_weight)
    _check_dcg_type(y)
    values = _per_query(DCG, np.maximum(y, 0), s, k, ignore_ties)
    if np.any(y < 0):
        values = values - _per_query(DCG, np.maximum(-y, 0), s, k, ignore_ties)
    return float(np.average(values, weights=w)) * math.log2(log_base)


@filled
def ndcg_score(
    y_true: Any, y_score: Any, *, k: int | None = None, sample_weight: Any = None, ignore_ties: bool = False
) -> float:
    """Normalised DCG (DCG / ideal DCG of the row; 0 for a row without relevant documents),
    averaged over the rows, as ``sklearn.metrics.ndcg_score``. A thin call to
    :class:`streammetrics.NDCG` (one query per row).

    Parameters
    ----------
    y_true : array-like of shape (n_queries, n_documents)
        Relevance grades (one row per query).
    y_score : array-like of shape (n_queries, n_documents)
        Scores ranking each row's documents.
    k : int, optional
        Only the top k documents of each row count.
    {sklearn: sample_weight}
    ignore_ties : bool, default False
        Rank tied scores by position instead of averaging their gains.

    Returns
    -------
    float

    Raises
    ------
    {sklearn: raises}
    """
    y, s, w = _dcg_input(y_true, y_score, sample_weight)
    if y.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if y.ndim > 1 and y.shape[1] <= 1:
        raise ValueError(
            f"Computing NDCG is only meaningful when there is more than 1 document. Got {y.shape[1]} instead."
        )
    _check_dcg_type(y)
    return float(np.average(_per_query(NDCG, y, s, k, ignore_ties), weights=w))
