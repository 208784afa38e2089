"""The confusion-matrix family: thin views of one confusion-count kernel (definitions: see
docs/definitions/confusion.md).

Every class here holds a :class:`~streammetrics._confusion_counts.ConfusionCounts` state and reads
its value from it; nothing is counted twice. Task: ``num_classes=None`` is binary (labels 0/1,
scores thresholded with ``score >= threshold``), ``num_classes=C`` multiclass (labels in [0, C)
or scores of shape (n, C), predicted class = argmax, first index on ties), ``multilabel=True``
with ``num_classes=L`` multilabel ((n, L) labels or scores thresholded per label).

Per class c the counts are one-vs-rest (c vs not c): TP, FP, FN, TN; P = TP+FN, N = FP+TN,
PP = TP+FP, PN = FN+TN. ``average``: ``"micro"`` pools the per-class numerators and denominators,
``"macro"`` is the unweighted mean over all classes, ``"weighted"`` weights by support P_c (a plain
mean if every support is 0), ``None`` returns the per-class array. A zero denominator takes
``zero_division`` (``"warn"``: 0.0 plus one :class:`UndefinedMetricWarning` per ``compute``
naming the classes; or 0.0, 1.0, nan -- a macro or weighted average skips nan classes, as
scikit-learn does).

Complexity: ``update`` O(n) vectorised (a few numpy passes); ``compute`` O(C^2); memory O(C^2)
(O(L) multilabel), independent of n.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ._averaging import (
    AVERAGES,
    ZeroDivisionOption,
    average_classes,
    check_zero_division,
    warn_undefined,
    zero_value,
)
from ._base import Metric, UndefinedMetricWarning
from ._confusion_counts import ConfusionCounts, OneVsRest, task_of
from ._intervals import wilson
from ._label_options import label_options
from ._label_views import sample_average_state
from ._params import Param, check_param, float_array_param, real_param
from ._warnings import warn

__all__ = [
    "ConfusionMatrix",
    "Accuracy",
    "ErrorRate",
    "HammingLoss",
    "Precision",
    "Recall",
    "Specificity",
    "FallOut",
    "MissRate",
    "NPV",
    "FDR",
    "FOR",
    "Prevalence",
    "FBeta",
    "F1",
    "Jaccard",
    "BalancedAccuracy",
    "WeightedAccuracy",
    "MatthewsCorrCoef",
    "CohenKappa",
]

# The constructor options checked by ``check_param`` (messages as "<name>: <rule>, got <value>").
_AVERAGES_ALL = (*AVERAGES, "binary", "samples")
_AVERAGE = Param("choice", f"must be one of {_AVERAGES_ALL}", choices=_AVERAGES_ALL)
_KAPPA_WEIGHTS = Param("choice", "must be None, 'linear' or 'quadratic'",
                       choices=(None, "linear", "quadratic"))
_NORMALIZE = Param("choice", "must be None, 'true', 'pred' or 'all'", choices=(None, "true", "pred", "all"))


class _ConfusionMetric(ZeroDivisionOption, Metric):
    """Common constructor and state of the confusion family."""

    #: whether the metric accepts ``average`` (and needs it for multiclass/multilabel)
    _averaged: ClassVar[bool] = False
    #: whether the metric is defined for multilabel
    _multilabel_ok: ClassVar[bool] = True
    #: whether the metric takes scikit-learn's ``labels=`` (the classes its reads cover)
    _takes_labels: ClassVar[bool] = False

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        multilabel: bool = False,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        zero_division: str | float = "warn",
        classes: Any = None,
        pos_label: Any = None,
        labels: Any = None,
    ) -> None:
        super().__init__()
        self._labels = label_options(num_classes, multilabel, classes=classes, pos_label=pos_label,
                                     labels=labels, ignore_index=ignore_index, hard_predictions=True,
                                     takes_labels=self._takes_labels, owner=type(self).__name__)
        num_classes = self._labels.num_classes
        self.num_classes = num_classes
        self.multilabel = bool(multilabel)
        self.task = task_of(num_classes, self.multilabel)
        if self.task == "multilabel" and not self._multilabel_ok:
            raise ValueError(f"multilabel: {type(self).__name__} is not defined for multilabel data")
        self.threshold = real_param(threshold, "threshold")
        self.ignore_index = ignore_index
        self.zero_division = check_zero_division(zero_division)
        self._state: ConfusionCounts = ConfusionCounts(
            self.task, num_classes, threshold, ignore_index
        )
        self.ignore_index = self._state.ignore_index  # checked, a Python int (np.int64 -> int)
        self._state = self._labels.attach(self._state)  # classes / pos_label / labels= reads

    def _config(self) -> dict[str, Any]:
        return {
            "num_classes": self.num_classes,
            "multilabel": self.multilabel,
            "threshold": self.threshold,
            "ignore_index": self.ignore_index,
            "zero_division": self._zero_division_config(),
            **self._labels.config(),
        }

    def _divide(self, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """num/den with zero-division values filled in; also returns the zero-denominator mask."""
        num = np.asarray(num, dtype=np.float64)
        den = np.asarray(den, dtype=np.float64)
        undefined = den == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            out = num / np.where(undefined, 1.0, den)
        out[undefined] = zero_value(self.zero_division)
        return out, undefined


class _Averaged(_ConfusionMetric):
    """A per-class ratio num_c / den_c of one-vs-rest counts, averaged per ``average``."""

    _averaged = True
    _takes_labels = True
    #: name used in warnings
    _label: ClassVar[str] = "metric"
    #: what an undefined value means, for the warning
    _undefined: ClassVar[str] = "the denominator is 0"
    #: macro/weighted averages skip nan classes (scikit-learn's rule); Jaccard does not
    _skip_nan: ClassVar[bool] = True

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        multilabel: bool = False,
        average: str | None = "macro",
        threshold: float = 0.5,
        ignore_index: int | None = None,
        zero_division: str | float = "warn",
        **label_args: Any,
    ) -> None:
        super().__init__(
            num_classes,
            multilabel=multilabel,
            threshold=threshold,
            ignore_index=ignore_index,
            zero_division=zero_division,
            **label_args,
        )
        self.average = check_param(average, "average", _AVERAGE)
        if average in ("binary", "samples"):  # scikit-learn's; "samples": a per-sample state
            self._state = sample_average_state(self, average)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "average": self.average}

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _per_class(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        num, den = self._ratio(s)
        return self._divide(num, den)

    def _compute(self) -> Any:
        if self.average == "samples":
            value, undefined = self._state.value(zero_value(self.zero_division))  # type: ignore[attr-defined]
            if undefined and self.zero_division == "warn":
                warn_undefined(self._label, self._undefined + " in some samples")
            return value
        s = self._state.one_vs_rest()
        if self.task == "binary":
            values, undefined = self._per_class(s)
            if undefined[0] and self.zero_division == "warn":
                warn_undefined(self._label, self._undefined)
            return float(values[0])
        if self.average == "micro":
            pooled = OneVsRest(
                s.tp.sum(keepdims=True),
                s.fp.sum(keepdims=True),
                s.fn.sum(keepdims=True),
                s.tn.sum(keepdims=True),
            )
            values, undefined = self._per_class(pooled)
            if undefined[0] and self.zero_division == "warn":
                warn_undefined(self._label, self._undefined)
            return float(values[0])
        values, undefined = self._per_class(s)
        if undefined.any() and self.zero_division == "warn":
            warn_undefined(self._label, self._undefined, np.flatnonzero(undefined))
        if self.average is None:
            return values
        return average_classes(values, s.support if self.average == "weighted" else None,
                               self._skip_nan)


class _Proportion(_Averaged):
    """A ratio whose numerator counts a subset of its denominator: it has a Wilson interval."""

    def interval(self, confidence: float = 0.95) -> tuple[Any, Any]:
        """Wilson score interval of the proportion (binary, per-class or micro values).

        The weighted version uses the effective sample size (sum w)^2 / sum w^2 of the
        denominator. An empty denominator gives (nan, nan). O(C^2).
        """
        if self.task != "binary" and self.average not in ("micro", None):
            raise ValueError(
                "interval: defined for binary, per-class (average=None) and micro values, "
                f"not average={self.average!r}"
            )
        with self._lock:
            s = self._state.one_vs_rest()
            s2 = self._state.one_vs_rest(squared=True)
        num, den = self._ratio(s)
        _, den2 = self._ratio(s2)
        if self.average == "micro" and self.task != "binary":
            num, den, den2 = num.sum(keepdims=True), den.sum(keepdims=True), den2.sum(keepdims=True)
        low, high = wilson(num, den, den2, confidence)
        if self.task == "binary" or self.average == "micro":
            return float(low[0]), float(high[0])
        return low, high


class Precision(_Proportion):
    """Precision (PPV) = TP / (TP + FP) = TP / PP.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    multilabel : bool, default False
        Labels and predictions are (n, L) indicator / score matrices.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        How per-class values combine for multiclass and multilabel tasks; ``None`` returns the
        per-class array (see docs/definitions/confusion.md#averaging).
    threshold : float, default 0.5
        Scores or probabilities given as ``y_pred`` are predicted positive when ``>= threshold``
        (binary, multilabel); multiclass scores predict their argmax.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped (padding).
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio (zero denominator); ``'warn'`` gives 0.0 with an
        :class:`~streammetrics.UndefinedMetricWarning`.
    **label_args
        The labels as the data has them, in class order (binary: ``[negative, positive]``)
        (``classes=``); Binary tasks only: the positive label (one of ``classes`` when given)
        (``pos_label=``); scikit-learn's ``labels=``: the classes per-class values, averages and
        matrices cover, in that order (multiclass and multilabel) (``labels=``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.Precision(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.6666666666666666
    >>> sm.Precision(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([1. , 0. , 0.5])
    """

    _label = "Precision"
    _undefined = "no predicted samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tp, s.predicted


class Recall(_Proportion):
    """Recall (TPR, sensitivity, hit rate) = TP / (TP + FN) = TP / P.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.Recall(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.6666666666666666
    >>> sm.Recall(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([1. , 0. , 0.5])
    """

    _label = "Recall"
    _undefined = "no true samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tp, s.support


class Specificity(_Proportion):
    """Specificity (TNR, selectivity) = TN / (TN + FP) = TN / N.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.Specificity(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.5
    >>> sm.Specificity(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([1.        , 0.66666667, 0.5       ])
    """

    _label = "Specificity"
    _undefined = "no negative samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tn, s.tn + s.fp


class FallOut(_Proportion):
    """Fall-out (FPR) = FP / (FP + TN) = FP / N = 1 - specificity.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.FallOut(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.5
    >>> sm.FallOut(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([0.        , 0.33333333, 0.5       ])
    """

    _label = "Fall-out"
    _undefined = "no negative samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fp, s.fp + s.tn


class MissRate(_Proportion):
    """Miss rate (FNR) = FN / (TP + FN) = FN / P = 1 - recall.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.MissRate(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.3333333333333333
    >>> sm.MissRate(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([0. , 1. , 0.5])
    """

    _label = "Miss rate"
    _undefined = "no true samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fn, s.support


class NPV(_Proportion):
    """Negative predictive value = TN / (TN + FN) = TN / PN.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.NPV(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.5
    >>> sm.NPV(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([1.        , 0.66666667, 0.5       ])
    """

    _label = "NPV"
    _undefined = "no predicted negatives"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tn, s.tn + s.fn


class FDR(_Proportion):
    """False discovery rate = FP / (TP + FP) = 1 - precision.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.FDR(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.3333333333333333
    >>> sm.FDR(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([0. , 1. , 0.5])
    """

    _label = "FDR"
    _undefined = "no predicted samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fp, s.predicted


class FOR(_Proportion):
    """False omission rate = FN / (FN + TN) = 1 - NPV.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.FOR(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.5
    >>> sm.FOR(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([0.        , 0.33333333, 0.5       ])
    """

    _label = "FOR"
    _undefined = "no predicted negatives"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fn, s.fn + s.tn


class Prevalence(_Proportion):
    """Prevalence = P / n (per class: the share of samples whose actual class is c).

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.Prevalence(zero_division=0.0)
    >>> m.update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.6
    >>> sm.Prevalence(3, average=None, zero_division=0.0).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([0.25, 0.25, 0.5 ])
    """

    _label = "Prevalence"
    _undefined = "no samples"

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.support, s.total


class Jaccard(_Averaged):
    """Jaccard index = TP / (TP + FP + FN), as scikit-learn's ``jaccard_score``.

    Unlike precision/recall/F, scikit-learn's macro Jaccard does not skip nan classes
    (``zero_division=nan`` makes the macro average nan); so does this one.

    Parameters
    ----------
    num_classes : int, optional
        None: binary; C: multiclass; L with ``multilabel=True``.
    multilabel : bool, default False
        Multilabel (n, L) inputs.
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        Averaging over classes.
    threshold : float, default 0.5
        Scores at or above it predict positive.
    ignore_index : int, optional
        Rows with this ``y_true`` are skipped.
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio.
    **label_args
        ``classes=``, ``pos_label=``, ``labels=`` (see :class:`Precision`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.Jaccard().update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.5
    >>> sm.Jaccard(3, average="micro").update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    0.3333333333333333
    """

    _label = "Jaccard"
    _undefined = "no true or predicted samples"
    _skip_nan = False

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tp, s.tp + s.fp + s.fn


class FBeta(_Averaged):
    """F-beta = (1+β²)·TP / ((1+β²)·TP + β²·FN + FP); β=1 is F1, β=0 precision, β=inf recall.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    beta : float, default 1.0
        Weight of recall against precision (>= 0, ``inf`` allowed): 0 is precision, ``inf`` recall.
    **kwargs
        The arguments of :class:`Precision` (``multilabel``, ``average``, ``threshold``,
        ``ignore_index``, ``zero_division``, ``classes``, ``pos_label``, ``labels``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.FBeta(beta=2.0).update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.6666666666666666
    """

    _label = "F-score"
    _undefined = "no true nor predicted samples"

    def __init__(self, num_classes: int | None = None, *, beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        if not (isinstance(beta, float) and math.isinf(beta) and beta > 0):  # beta=inf: recall
            beta = real_param(beta, "beta", "a number >= 0 (or inf)")
        if not beta >= 0:
            raise ValueError(f"beta: must be >= 0, got {beta!r}")
        self.beta = beta

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "beta": self.beta}

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        if math.isinf(self.beta):
            return s.tp, s.support
        b2 = self.beta**2
        return (1 + b2) * s.tp, b2 * s.support + s.predicted


class F1(FBeta):
    """F1 = 2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    **kwargs
        The arguments of :class:`Precision` (``multilabel``, ``average``, ``threshold``,
        ``ignore_index``, ``zero_division``, ``classes``, ``pos_label``, ``labels``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.F1().update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.6666666666666666
    >>> sm.F1(3, average="weighted").update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    0.5
    """

    def __init__(self, num_classes: int | None = None, **kwargs: Any) -> None:
        kwargs.pop("beta", None)
        super().__init__(num_classes, beta=1.0, **kwargs)

    def _config(self) -> dict[str, Any]:
        config = super()._config()
        config.pop("beta")
        return config


class Accuracy(_ConfusionMetric):
    """Accuracy = (TP + TN) / n; multiclass: trace / n; multilabel: subset accuracy.

    Multilabel accuracy is the (weighted) share of rows whose labels are all right, as
    scikit-learn's ``accuracy_score``; use :class:`HammingLoss` for the share of wrong labels.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    multilabel : bool, default False
        Labels and predictions are (n, L) indicator / score matrices.
    threshold : float, default 0.5
        Scores or probabilities given as ``y_pred`` are predicted positive when ``>= threshold``
        (binary, multilabel); multiclass scores predict their argmax.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped (padding).
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio (zero denominator); ``'warn'`` gives 0.0 with an
        :class:`~streammetrics.UndefinedMetricWarning`.
    classes : sequence, optional
        The labels as the data has them, in class order (binary: ``[negative, positive]``).
    pos_label : optional
        Binary tasks only: the positive label (one of ``classes`` when given).
    labels : sequence, optional
        scikit-learn's ``labels=``: the classes per-class values, averages and matrices cover, in
        that order (multiclass and multilabel).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.Accuracy().update([0, 1, 1, 0], [0.2, 0.9, 0.4, 0.1]).compute()
    0.75
    >>> sm.Accuracy(classes=["cat", "dog"]).update(["cat", "dog", "dog"], ["cat", "cat", "dog"]).compute()
    0.6666666666666666
    """

    #: ErrorRate reads the complement of the same counts
    _complement: ClassVar[bool] = False

    def _counts(self) -> tuple[float, float, float]:
        """(correct, total, total of squared weights)."""
        st = self._state
        if self.task == "multilabel":
            correct, total, total_w2 = st.rows()
            return float(correct), float(total), float(total_w2)
        m = st.matrix()
        return float(np.trace(m)), float(m.sum()), float(st.matrix_w2().sum())

    def _value(self, correct: float, total: float) -> float:
        return (total - correct) / total if self._complement else correct / total

    def _compute(self) -> float:
        correct, total, _ = self._counts()
        if total == 0:
            if self.zero_division == "warn":
                warn_undefined(type(self).__name__, "no samples")
            return zero_value(self.zero_division)
        return self._value(correct, total)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson score interval (effective sample size with weights); (nan, nan) if empty."""
        with self._lock:
            correct, total, total_w2 = self._counts()
        low, high = wilson(np.array([correct]), np.array([total]), np.array([total_w2]), confidence)
        if self._complement:  # error rate: the interval of 1 - accuracy
            return float(1.0 - high[0]), float(1.0 - low[0])
        return float(low[0]), float(high[0])


class ErrorRate(Accuracy):
    """Error rate (misclassification rate, zero-one loss) = (FP + FN) / n = 1 - accuracy.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    multilabel : bool, default False
        Labels and predictions are (n, L) indicator / score matrices.
    threshold : float, default 0.5
        Scores or probabilities given as ``y_pred`` are predicted positive when ``>= threshold``
        (binary, multilabel); multiclass scores predict their argmax.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped (padding).
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio (zero denominator); ``'warn'`` gives 0.0 with an
        :class:`~streammetrics.UndefinedMetricWarning`.
    classes : sequence, optional
        The labels as the data has them, in class order (binary: ``[negative, positive]``).
    pos_label : optional
        Binary tasks only: the positive label (one of ``classes`` when given).
    labels : sequence, optional
        scikit-learn's ``labels=``: the classes per-class values, averages and matrices cover, in
        that order (multiclass and multilabel).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.ErrorRate().update([0, 1, 1, 0], [0, 1, 0, 0]).compute()
    0.25
    """

    _complement = True


class HammingLoss(_ConfusionMetric):
    """Hamming loss: the (weighted) share of wrong labels; 1 - accuracy for single-label tasks.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    multilabel : bool, default False
        Labels and predictions are (n, L) indicator / score matrices.
    threshold : float, default 0.5
        Scores or probabilities given as ``y_pred`` are predicted positive when ``>= threshold``
        (binary, multilabel); multiclass scores predict their argmax.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped (padding).
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio (zero denominator); ``'warn'`` gives 0.0 with an
        :class:`~streammetrics.UndefinedMetricWarning`.
    classes : sequence, optional
        The labels as the data has them, in class order (binary: ``[negative, positive]``).
    pos_label : optional
        Binary tasks only: the positive label (one of ``classes`` when given).
    labels : sequence, optional
        scikit-learn's ``labels=``: the classes per-class values, averages and matrices cover, in
        that order (multiclass and multilabel).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.HammingLoss(2, multilabel=True).update([[1, 0], [0, 1]], [[1, 1], [0, 1]]).compute()
    0.25
    """

    def _compute(self) -> float:
        m = self._state.matrix()
        if self.task == "multilabel":
            wrong, total = float((m[:, 0, 1] + m[:, 1, 0]).sum()), float(m.sum())
        else:
            wrong, total = float(m.sum() - np.trace(m)), float(m.sum())
        if total == 0:
            if self.zero_division == "warn":
                warn_undefined("Hamming loss", "no samples")
            return zero_value(self.zero_division)
        return wrong / total


class BalancedAccuracy(_ConfusionMetric):
    """Balanced accuracy: the mean recall over the classes that occur in ``y_true``.

    Binary with both classes present: (TPR + TNR) / 2. As scikit-learn's
    ``balanced_accuracy_score``; ``adjusted=True`` rescales so that chance is 0 and perfect is 1.
    Not defined for multilabel.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    adjusted : bool, default False
        Rescale so that chance is 0 and perfect is 1 (scikit-learn's ``adjusted=True``).
    **kw
        The task arguments of :class:`Accuracy` (``multilabel``, ``threshold``, ``ignore_index``,
        ``zero_division``, ``classes``, ``pos_label``, ``labels``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.BalancedAccuracy(3).update([0, 0, 1, 2], [0, 1, 1, 2]).compute()
    0.8333333333333334
    """

    _multilabel_ok = False

    def __init__(self, num_classes: int | None = None, *, adjusted: bool = False, **kw: Any) -> None:
        super().__init__(num_classes, **kw)
        self.adjusted = bool(adjusted)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "adjusted": self.adjusted}

    def _compute(self) -> float:
        m = self._state.matrix()
        support = m.sum(axis=1)
        present = support > 0
        if not present.any():
            if self.zero_division == "warn":
                warn_undefined("Balanced accuracy", "no samples")
            return zero_value(self.zero_division)
        recalls = np.diag(m)[present] / support[present]
        score = float(np.mean(recalls))
        if self.adjusted:
            if recalls.size == 1:  # chance is 1: (score - 1) / 0, nan as scikit-learn gives
                warn("Adjusted balanced accuracy is undefined with only one class in y_true; "
                     "returning nan", UndefinedMetricWarning)
                return float("nan")
            chance = 1.0 / recalls.size
            score = (score - chance) / (1.0 - chance)
        return score


class WeightedAccuracy(_ConfusionMetric):
    """Class-weighted accuracy A_w = Σ_c w_c · TPR(c) (the Binder lecture's A_{2,w}, A_{C,w}).

    ``weights``: one non-negative weight per class in class order, summing to 1 (binary:
    ``[w_0, w_1]``, so A = w_1·TPR + w_0·TNR). ``None`` means uniform weights (balanced
    accuracy when every class occurs). A class with positive weight and no samples has an
    undefined recall, which takes ``zero_division``. Not defined for multilabel.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    weights : array-like
        One non-negative weight per class in class order (binary ``[w_0, w_1]``), summing to 1.
    **kw
        The task arguments of :class:`Accuracy` (``multilabel``, ``threshold``, ``ignore_index``,
        ``zero_division``, ``classes``, ``pos_label``, ``labels``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.WeightedAccuracy(weights=[0.25, 0.75]).update([0, 0, 1, 1], [0, 1, 1, 1]).compute()
    0.875
    """

    _multilabel_ok = False

    def __init__(self, num_classes: int | None = None, *, weights: Any = None, **kw: Any) -> None:
        super().__init__(num_classes, **kw)
        k = self._state.num_classes
        if weights is None:
            w = np.full(k, 1.0 / k)
        else:
            w = float_array_param(weights, "weights", f"{k} class weights")
            if w.shape != (k,):
                raise ValueError(f"weights: expected {k} class weights, got shape {w.shape}")
            if not (np.isfinite(w).all() and (w >= 0).all()):
                raise ValueError(f"weights: must be finite and >= 0, got {w.tolist()}")
            if abs(w.sum() - 1.0) > 1e-9:
                raise ValueError(f"weights: must sum to 1, got sum {w.sum()!r}")
        self.weights = w

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "weights": self.weights.tolist()}

    def _compute(self) -> float:
        m = self._state.matrix()
        recall, undefined = self._divide(np.diag(m), m.sum(axis=1))
        used = undefined & (self.weights > 0)
        if used.any() and self.zero_division == "warn":
            warn_undefined("Recall", "no true samples", np.flatnonzero(used))
        return float(np.dot(self.weights, recall))


class MatthewsCorrCoef(_ConfusionMetric):
    """Matthews correlation coefficient over the whole C×C matrix (scikit-learn's formula).

    MCC = (c·s − Σ_k p_k·t_k) / sqrt((s² − Σ p_k²)(s² − Σ t_k²)) with c the trace, s the total,
    t_k the actual and p_k the predicted class totals; 0.0 when the denominator is 0 (as
    scikit-learn). Binary: (TP·TN − FP·FN) / sqrt(PP·P·N·PN). Not defined for multilabel.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    multilabel : bool, default False
        Labels and predictions are (n, L) indicator / score matrices.
    threshold : float, default 0.5
        Scores or probabilities given as ``y_pred`` are predicted positive when ``>= threshold``
        (binary, multilabel); multiclass scores predict their argmax.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped (padding).
    zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'
        The value of an undefined ratio (zero denominator); ``'warn'`` gives 0.0 with an
        :class:`~streammetrics.UndefinedMetricWarning`.
    classes : sequence, optional
        The labels as the data has them, in class order (binary: ``[negative, positive]``).
    pos_label : optional
        Binary tasks only: the positive label (one of ``classes`` when given).
    labels : sequence, optional
        scikit-learn's ``labels=``: the classes per-class values, averages and matrices cover, in
        that order (multiclass and multilabel).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.MatthewsCorrCoef().update([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]).compute()
    0.16666666666666666
    """

    _multilabel_ok = False

    def _compute(self) -> float:
        m = self._state.matrix()
        t, p = m.sum(axis=1), m.sum(axis=0)
        c, s = float(np.trace(m)), float(m.sum())
        cov_ytyp = c * s - float(np.dot(t, p))
        cov_ypyp = s * s - float(np.dot(p, p))
        cov_ytyt = s * s - float(np.dot(t, t))
        if cov_ypyp * cov_ytyt == 0:
            return 0.0
        return cov_ytyp / math.sqrt(cov_ytyt * cov_ypyp)


class CohenKappa(_ConfusionMetric):
    """Cohen's kappa between actual and predicted classes, as scikit-learn's.

    κ = 1 − Σ W∘C / Σ W∘E with E = outer(row totals, column totals) / total and W the
    disagreement weights: ``weights=None`` (0 on the diagonal, 1 elsewhere), ``"linear"``
    (|i−j|) or ``"quadratic"`` ((i−j)²). Undefined (Σ W∘E = 0) takes ``zero_division``.
    Not defined for multilabel.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    weights : {None, 'linear', 'quadratic'}, default None
        Disagreement weights between classes (scikit-learn's ``weights=``).
    **kw
        The task arguments of :class:`Accuracy` (``multilabel``, ``threshold``, ``ignore_index``,
        ``zero_division``, ``classes``, ``pos_label``, ``labels``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.CohenKappa(3, weights="linear").update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    0.4285714285714286
    """

    _multilabel_ok = False
    _takes_labels = True

    def __init__(self, num_classes: int | None = None, *, weights: str | None = None, **kw: Any) -> None:
        super().__init__(num_classes, **kw)
        self.weights = check_param(weights, "weights", _KAPPA_WEIGHTS)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "weights": self.weights}

    def _compute(self) -> float:
        m = self._state.matrix()
        k = m.shape[0]
        total = m.sum()
        idx = np.arange(k)
        if self.weights is None:
            w = 1.0 - np.eye(k)
        elif self.weights == "linear":
            w = np.abs(idx[:, None] - idx[None, :]).astype(np.float64)
        else:
            w = ((idx[:, None] - idx[None, :]) ** 2).astype(np.float64)
        expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / total if total else np.zeros_like(m)
        denom = float((w * expected).sum())
        if denom == 0:
            if self.zero_division == "warn":
                warn_undefined("Cohen's kappa", "the expected disagreement is 0")
            return zero_value(self.zero_division)
        return 1.0 - float((w * m).sum()) / denom


def _counts_dtype(m: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """``m`` as int64 if it holds unit-weight counts (equal to the squared-weight sums and
    integral, so the conversion is exact), else unchanged (float64)."""
    if np.array_equal(m, w2) and bool((m == np.round(m)).all()) and (m.size == 0 or float(m.max()) < 2.0**63):
        return m.astype(np.int64)
    return m


class ConfusionMatrix(_ConfusionMetric):
    """The confusion matrix: rows = actual, columns = predicted (scikit-learn's orientation).

    Binary: ``[[TN, FP], [FN, TP]]``; multiclass: (C, C); multilabel: (L, 2, 2) like
    ``multilabel_confusion_matrix``. ``normalize``: ``None``, ``"true"`` (rows sum to 1),
    ``"pred"`` (columns) or ``"all"``; empty rows give 0.

    dtype, as scikit-learn: counts are int64 while the state holds unit-weight counts (no
    ``sample_weight``, or weights that were all 0 or 1), float64 weighted sums otherwise
    (decided from the state itself -- each cell's sum of weights equals its sum of squared
    weights and is an integer -- so it survives merge, copy, save and load; a merge with a
    weighted state gives float64); normalized matrices are float64.

    Parameters
    ----------
    num_classes : int, optional
        ``None`` (default) for a binary task; C for C classes (multiclass), or L labels with
        ``multilabel=True``. May be omitted when ``classes`` is given.
    normalize : {None, 'true', 'pred', 'all'}, default None
        Normalise over actual classes (rows), predicted classes (columns) or everything, as
        scikit-learn's ``confusion_matrix``.
    **kw
        The task arguments of :class:`Accuracy` (``multilabel``, ``threshold``, ``ignore_index``,
        ``zero_division``, ``classes``, ``pos_label``, ``labels``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.ConfusionMatrix(3).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 1, 1]])
    """

    _takes_labels = True

    def __init__(self, num_classes: int | None = None, *, normalize: str | None = None, **kw: Any) -> None:
        super().__init__(num_classes, **kw)
        self.normalize = check_param(normalize, "normalize", _NORMALIZE)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "normalize": self.normalize}

    def _compute(self) -> np.ndarray:
        m = self._state.matrix().copy()
        if self.normalize is None:
            return _counts_dtype(m, self._state.matrix_w2())
        axis: Any = {"true": -1, "pred": -2, "all": (-2, -1)}[self.normalize]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = m / m.sum(axis=axis, keepdims=True)
        return np.nan_to_num(out)

    def plot(self, ax: Any = None, *, display_labels: Any = None, **kwargs: Any) -> Any:
        """Heatmap of the current matrix (binary / multiclass; rows actual, columns predicted),
        classes named by ``display_labels``, else the ``labels=`` / ``classes=`` given; returns
        the display (``im_``, ``text_``, ``ax_``, ``figure_``). See
        :func:`streammetrics.plot.plot_confusion_matrix` (matplotlib: the ``plot`` extra)."""
        from .plot import plot_confusion_matrix

        if display_labels is None:
            if self._labels.labels is not None:
                display_labels = [str(c) for c in self._labels.labels]
            elif self._labels.mapping is not None:
                display_labels = [str(c) for c in self._labels.mapping.classes]
        return plot_confusion_matrix(self.compute(), ax, display_labels=display_labels, **kwargs)


# Aliases (the other names of the same measures, see docs/definitions/confusion.md).
TPR = Sensitivity = Recall
TNR = Specificity
FPR = FallOut
FNR = MissRate
PPV = Precision
