"""One-shot set-wise scores with scikit-learn's signatures: precision, recall, F-beta, Jaccard.

``precision_score``, ``recall_score``, ``f1_score``, ``fbeta_score``, ``jaccard_score``,
``precision_recall_fscore_support`` (``classification_report`` reads them: :mod:`.report`). Each
maps the labels as scikit-learn does (:func:`_setwise`), feeds the matching accumulators of
:mod:`streammetrics.classification.confusion` (sharing one count state through a
:class:`~streammetrics.MetricSet`)
once and returns their ``compute()``:

* ``average="binary"``: the binary accumulator on ``y == pos_label``;
* ``labels=None`` on single-label targets: the multiclass accumulator over the sorted labels;
* ``labels=[...]`` (scikit-learn's meaning: the classes that the per-class values and averages
  cover) and indicator targets: the multilabel accumulator over the one-hot columns of those
  classes (one-vs-rest counts are the same; micro pools only those classes);
* ``average="samples"`` (indicator targets): the multilabel accumulator on the transposed
  indicator (one "class" per sample), averaged with the sample weights.

``zero_division`` and the undefined-value warnings follow scikit-learn (one
:class:`~streammetrics.UndefinedMetricWarning` per call and measure).
Cost: O(n) for small integer labels and ``labels=None`` (O(n log n) for other labels), O(n·L) with
``labels=`` or indicator targets; memory O(C^2) (O(n·L) for the one-hot indicator).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from streammetrics._core.averaging import average_classes
from streammetrics._core.docstrings import filled
from streammetrics._core.labels import encode
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import Param, check_param
from streammetrics._core.validation import checked_labels
from streammetrics._core.warn import sklearn_compatible
from streammetrics.classification.confusion import ConfusionMatrix, FBeta, Jaccard, Precision, Recall
from streammetrics.wrappers.metricset import MetricSet

from ._targets import Targets, as_labels, check_targets, contains, relay_undefined

__all__ = [
    "f1_score",
    "fbeta_score",
    "jaccard_score",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
]

_BETA = Param("real", "must be a number >= 0", low=0.0, finite=False)
_AVERAGES = (None, "micro", "macro", "weighted", "samples")


class _Fed:
    """Accumulators fed with the mapped targets, and how to read them as scikit-learn would."""

    def __init__(self, metrics: dict[str, Any], average: str | None, samples_weight: Any = None) -> None:
        self.metrics, self.average, self.samples_weight = metrics, average, samples_weight

    def read(self, name: str, skip_nan: bool = True) -> Any:
        value = self.metrics[name].compute()
        if self.average == "samples":
            return average_classes(np.asarray(value), self.samples_weight, skip_nan)
        return value if isinstance(value, np.ndarray) else float(value)


class _NoLabels(_Fed):
    """``labels=[]``: empty per-label arrays, nan class averages and, micro, the zero-division
    value of the empty pooled counts (with a warning for ``"warn"``), as scikit-learn gives."""

    class _Empty:
        def compute(self) -> np.ndarray:
            return np.zeros((0, 2, 2))

    def __init__(self, average: str | None, members: dict[str, Any]) -> None:
        super().__init__({"cm": self._Empty()}, average)
        self.members = members

    def read(self, name: str, skip_nan: bool = True) -> Any:
        if self.average is None:
            return np.zeros(0)
        if self.average != "micro":
            return float("nan")
        zd = self.members[name][1].get("zero_division", "warn")
        if isinstance(zd, str):
            warnings.warn("ill-defined: no labels", sklearn_compatible(UndefinedMetricWarning), stacklevel=2)
            return 0.0
        return float(zd)


def _setwise(
    members: dict[str, Any],
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any,
    pos_label: Any,
    average: str | None,
    sample_weight: Any,
) -> _Fed:
    """scikit-learn's ``_check_set_wise_labels`` + ``multilabel_confusion_matrix``, with the
    counting done by the accumulators ``members`` (name -> (class, keyword arguments))."""
    if average not in _AVERAGES and average != "binary":
        raise ValueError(f"average has to be one of {_AVERAGES}")
    t = check_targets(y_true, y_pred, sample_weight)
    w = t.sample_weight
    if average == "binary":
        if t.type != "binary":
            options = [a for a in _AVERAGES if not (t.type == "multiclass" and a == "samples")]
            raise ValueError(
                f"Target is {t.type} but average='binary'. Please choose another average setting, "
                f"one of {options!r}."
            )
        if not contains(t.classes, pos_label) and t.classes.shape[0] >= 2:
            raise ValueError(f"pos_label={pos_label} is not a valid label. It should be one of {t.classes}")
        ms = _build(members, None, multilabel=False, average="macro")
        ms._update_checked(checked_labels(_is(t.y_true, pos_label), _is(t.y_pred, pos_label), w))
        return _Fed(dict(ms.items()), "binary")
    if pos_label not in (None, 1):
        warnings.warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' (got "
            f"{average!r}). You may use labels=[pos_label] to specify a single positive class.",
            UserWarning,
            stacklevel=3,
        )
    if labels is not None and len(labels) == 0 and average != "samples":
        return _NoLabels(average, members)
    if t.type == "multilabel-indicator":
        yt, yp = _select_columns(t, labels)
        if average == "samples":
            ms = _build(members, yt.shape[0], multilabel=True, average=None)
            ms.update(yt.T, yp.T)
            return _Fed(dict(ms.items()), "samples", w)
        ms = _build(members, yt.shape[1], multilabel=True, average=average)
        ms._update_checked(checked_labels(yt, yp, w))
        return _Fed(dict(ms.items()), average)
    if average == "samples":
        raise ValueError("Samplewise metrics are not available outside of multilabel classification.")
    k = t.classes.shape[0]
    if labels is None and k >= 2:
        ms = _build(members, k, multilabel=False, average=average)
        ms._update_checked(checked_labels(encode(t.y_true, t.classes), encode(t.y_pred, t.classes), w))
        return _Fed(dict(ms.items()), average)
    lab = t.classes if labels is None else as_labels(labels, "labels").ravel()
    cols = np.arange(lab.shape[0])
    ms = _build(members, lab.shape[0], multilabel=True, average=average)
    ms._update_checked(checked_labels(encode(t.y_true, lab)[:, None] == cols,
                                      encode(t.y_pred, lab)[:, None] == cols, w))
    return _Fed(dict(ms.items()), average)


def _is(y: np.ndarray, label: Any) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's elementwise-comparison FutureWarning
        out = np.asarray(y == label)
    return out if out.shape == y.shape else np.zeros(y.shape, dtype=bool)


def _select_columns(t: Targets, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    if labels is None:
        return t.y_true, t.y_pred
    lab = np.asarray(labels).ravel()
    n = t.y_true.shape[1]
    if lab.size and lab.max() >= n:
        raise ValueError(
            f"All labels must be in [0, n labels) for multilabel targets. Got {lab.max()} > {n - 1}"
        )
    if lab.size and lab.min() < 0:
        raise ValueError(f"All labels must be in [0, n labels) for multilabel targets. Got {lab.min()} < 0")
    return t.y_true[:, lab], t.y_pred[:, lab]


def _build(members: dict[str, Any], num_classes: int | None, *, multilabel: bool, average: Any) -> MetricSet:
    built = {}
    for name, (cls, options) in members.items():
        if cls is ConfusionMatrix:
            built[name] = cls(num_classes, multilabel=multilabel)
            continue
        kw = dict(options)
        avg = kw.pop("average", average)
        # the binary accumulator takes no average; per-sample values are read per "class"
        avg = {"binary": "macro", "samples": None}.get(avg, avg)
        built[name] = cls(num_classes, multilabel=multilabel, average=avg, **kw)
    return MetricSet(built)


def _zd(zero_division: Any) -> Any:
    if isinstance(zero_division, str) and zero_division == "nan":
        return np.nan
    return zero_division


def _prf_message(what: str, modifier: str, average: Any, size: int) -> str:
    axis0, axis1 = ("label", "sample") if average == "samples" else ("sample", "label")
    where = "due to" if size == 1 else f"in {axis1}s with"
    return (
        f"{what} is ill-defined and being set to 0.0 {where} no {modifier} {axis0}s. Use `zero_division` "
        "parameter to control this behavior."
    )


def _one(
    cls: type,
    what: str,
    modifier: str,
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any,
    pos_label: Any,
    average: Any,
    sample_weight: Any,
    zero_division: Any,
    skip_nan: bool = True,
    **kw: Any,
) -> Any:
    fed = _setwise(
        {"m": (cls, {"zero_division": _zd(zero_division), **kw})},
        y_true,
        y_pred,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
    )
    size = 1 if average in ("binary", "micro") else 2
    with relay_undefined(_prf_message(what, modifier, average, size)):
        return fed.read("m", skip_nan)


@filled
def precision_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:
    """Precision TP / (TP + FP), as ``sklearn.metrics.precision_score`` (a float, or a float64
    array per label with ``average=None``). A thin call to :class:`streammetrics.Precision`.

    Parameters
    ----------
    {sklearn: y_true_y_pred, labels, pos_label, average, sample_weight, zero_division}

    Returns
    -------
    float or ndarray of float64
        The score, or one per class with ``average=None``.

    Raises
    ------
    {sklearn: raises}
    """
    return _one(
        Precision,
        "Precision",
        "predicted",
        y_true,
        y_pred,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
    )


@filled
def recall_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:
    """Recall TP / (TP + FN), as ``sklearn.metrics.recall_score``. A thin call to
    :class:`streammetrics.Recall`.

    Parameters
    ----------
    {sklearn: y_true_y_pred, labels, pos_label, average, sample_weight, zero_division}

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    {sklearn: raises}
    """
    return _one(
        Recall,
        "Recall",
        "true",
        y_true,
        y_pred,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
    )


@filled
def fbeta_score(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:
    """F-beta (1+β²)TP / ((1+β²)TP + β²FN + FP), as ``sklearn.metrics.fbeta_score``. A thin call
    to :class:`streammetrics.FBeta`.

    Parameters
    ----------
    {sklearn: y_true_y_pred, beta, labels, pos_label, average, sample_weight, zero_division}

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    {sklearn: raises}
    """
    return _one(
        FBeta,
        "F-score",
        "true nor predicted",
        y_true,
        y_pred,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
        beta=beta,
    )


@filled
def f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:
    """F1 = 2TP / (2TP + FP + FN), as ``sklearn.metrics.f1_score``. A thin call to
    :class:`streammetrics.FBeta` with β = 1.

    Parameters
    ----------
    {sklearn: y_true_y_pred, labels, pos_label, average, sample_weight, zero_division}

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    {sklearn: raises}
    """
    return fbeta_score(
        y_true,
        y_pred,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
    )


@filled
def jaccard_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:
    """Jaccard index TP / (TP + FP + FN), as ``sklearn.metrics.jaccard_score`` (its macro
    average keeps nan classes). A thin call to :class:`streammetrics.Jaccard`.

    Parameters
    ----------
    {sklearn: y_true_y_pred, labels, pos_label, average, sample_weight, zero_division}

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    {sklearn: raises}
    """
    return _one(
        Jaccard,
        "Jaccard",
        "true or predicted",
        y_true,
        y_pred,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
        skip_nan=False,
    )


@filled
def precision_recall_fscore_support(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float = 1.0,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = None,
    warn_for: Any = ("precision", "recall", "f-score"),
    sample_weight: Any = None,
    zero_division: Any = "warn",
) -> tuple[Any, Any, Any, Any]:
    """(precision, recall, F-beta, support), as scikit-learn: per-label arrays and the int64
    (float64 if weighted) support with ``average=None``, else three floats and ``None``.

    One count state shared by :class:`~streammetrics.Precision`, :class:`~streammetrics.Recall`
    and :class:`~streammetrics.FBeta` (the support: the recall's denominators).

    Parameters
    ----------
    {sklearn: y_true_y_pred, beta, labels, pos_label, average}
    warn_for : tuple of str
        Which of "precision", "recall", "f-score" warn when undefined.
    {sklearn: sample_weight, zero_division}

    Returns
    -------
    tuple
        (precision, recall, fbeta, support).

    Raises
    ------
    {sklearn: raises}
    """
    return prfs(
        y_true,
        y_pred,
        beta=beta,
        labels=labels,
        pos_label=pos_label,
        averages=(average,),
        warn_for=warn_for,
        sample_weight=sample_weight,
        zero_division=zero_division,
    )[average]


def prfs(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float,
    labels: Any,
    pos_label: Any,
    averages: tuple[Any, ...],
    warn_for: Any,
    sample_weight: Any,
    zero_division: Any,
) -> dict[Any, tuple[Any, Any, Any, Any]]:
    """{average: (precision, recall, F-beta, support)} for several averages from one update
    (the first average picks scikit-learn's path: binary, samples or per label)."""
    zd = _zd(zero_division)
    check_param(beta, "beta", _BETA)
    members: dict[str, Any] = {}
    for i, avg in enumerate(averages):
        members[f"p{i}"] = (Precision, {"zero_division": zd, "average": avg})
        members[f"r{i}"] = (Recall, {"zero_division": zd, "average": avg})
        members[f"f{i}"] = (FBeta, {"zero_division": zd, "beta": beta, "average": avg})
    fed = _setwise(
        members,
        y_true,
        y_pred,
        labels=labels,
        pos_label=pos_label,
        average=averages[0],
        sample_weight=sample_weight,
    )
    result = {}
    for i, average in enumerate(averages):
        size = 1 if average in ("binary", "micro") else 2
        out = []
        for key, what, modifier in (
            ("p", "precision", "predicted"),
            ("r", "recall", "true"),
            ("f", "f-score", "true nor predicted"),
        ):
            message = _prf_message(what.capitalize(), modifier, average, size) if what in warn_for else None
            with relay_undefined(message):
                out.append(fed.read(f"{key}{i}"))
        support = None
        if average is None:  # the recall's per-class denominators: O(C), no C×C matrix
            support = np.zeros(0) if isinstance(fed, _NoLabels) else \
                fed.metrics[f"r{i}"]._state.one_vs_rest().support
            if sample_weight is None:
                support = support.astype(np.int64)
        result[average] = (out[0], out[1], out[2], support)
    return result
