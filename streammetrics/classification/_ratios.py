"""The per-class ratios of the confusion family: precision, recall, specificity, fall-out, miss
rate, NPV, FDR, FOR, prevalence, Jaccard and F-beta (definitions: see
docs/definitions/confusion.md). Exported by :mod:`streammetrics.classification.confusion` and the top level.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param, real_param
from streammetrics._counts.tasks import OneVsRest

from ._base import AveragedMetric, ProportionMetric

_BETA = Param("real", "must be >= 0", low=0.0, finite=False)
#: Above this beta, F-beta is computed divided by beta**2 (beta**2 times a count of up to
#: MAX_SUM = 1e150 would overflow float64 further up: beta=1e200 raised OverflowError).
_LARGE_BETA = 2.0**200


@filled
class Precision(ProportionMetric):
    """Precision (PPV) = TP / (TP + FP) = TP / PP.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.Precision(zero_division=0.0).update(y_true, y_pred).compute()
    0.6666666666666666
    >>> sm.Precision(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([1. , 0. , 0.5])
    """

    _label = "Precision"
    _skip_without_true_at_top_k = True
    _undefined = "no predicted samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tp, s.predicted


@filled
class Recall(ProportionMetric):
    """Recall (TPR, sensitivity, hit rate) = TP / (TP + FN) = TP / P.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.Recall(zero_division=0.0).update(y_true, y_pred).compute()
    0.6666666666666666
    >>> sm.Recall(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([1. , 0. , 0.5])
    """

    _label = "Recall"
    _skip_without_true_at_top_k = True
    _undefined = "no true samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tp, s.support


@filled
class Specificity(ProportionMetric):
    """Specificity (TNR, selectivity) = TN / (TN + FP) = TN / N.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.Specificity(zero_division=0.0).update(y_true, y_pred).compute()
    0.5
    >>> sm.Specificity(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([1.        , 0.66666667, 0.5       ])
    """

    _label = "Specificity"
    _undefined = "no negative samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tn, s.tn + s.fp


@filled
class FallOut(ProportionMetric):
    """Fall-out (FPR) = FP / (FP + TN) = FP / N = 1 - specificity.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.FallOut(zero_division=0.0).update(y_true, y_pred).compute()
    0.5
    >>> sm.FallOut(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([0.        , 0.33333333, 0.5       ])
    """

    _label = "Fall-out"
    _undefined = "no negative samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fp, s.fp + s.tn


@filled
class MissRate(ProportionMetric):
    """Miss rate (FNR) = FN / (TP + FN) = FN / P = 1 - recall.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.MissRate(zero_division=0.0).update(y_true, y_pred).compute()
    0.3333333333333333
    >>> sm.MissRate(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([0. , 1. , 0.5])
    """

    _label = "Miss rate"
    _undefined = "no true samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fn, s.support


@filled
class NPV(ProportionMetric):
    """Negative predictive value = TN / (TN + FN) = TN / PN.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.NPV(zero_division=0.0).update(y_true, y_pred).compute()
    0.5
    >>> sm.NPV(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([1.        , 0.66666667, 0.5       ])
    """

    _label = "NPV"
    _skip_without_true_at_top_k = True
    _undefined = "no predicted negatives"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tn, s.tn + s.fn


@filled
class FDR(ProportionMetric):
    """False discovery rate = FP / (TP + FP) = 1 - precision.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.FDR(zero_division=0.0).update(y_true, y_pred).compute()
    0.3333333333333333
    >>> sm.FDR(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([0. , 1. , 0.5])
    """

    _label = "FDR"
    _undefined = "no predicted samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fp, s.predicted


@filled
class FOR(ProportionMetric):
    """False omission rate = FN / (FN + TN) = 1 - NPV.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.FOR(zero_division=0.0).update(y_true, y_pred).compute()
    0.5
    >>> sm.FOR(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([0.        , 0.33333333, 0.5       ])
    """

    _label = "FOR"
    _undefined = "no predicted negatives"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.fn, s.fn + s.tn


@filled
class Prevalence(ProportionMetric):
    """Prevalence = P / n (per class: the share of samples whose actual class is c).

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.Prevalence(zero_division=0.0).update(y_true, y_pred).compute()
    0.6
    >>> sm.Prevalence(3, average=None, zero_division=0.0).update(y3_true, y3_pred).compute()
    array([0.25, 0.25, 0.5 ])
    """

    _label = "Prevalence"
    _undefined = "no samples"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.support, s.total


@filled
class Jaccard(AveragedMetric):
    """Jaccard index = TP / (TP + FP + FN), as scikit-learn's ``jaccard_score``.

    Unlike precision/recall/F, scikit-learn's macro Jaccard does not skip nan classes
    (``zero_division=nan`` makes the macro average nan); so does this one.

    With ``absent_classes="skip"`` a multiclass macro average also skips the class
    ``ignore_index`` when it lies in [0, C) (no true sample is left in it, only predictions),
    as torchmetrics' ``MulticlassJaccardIndex`` gives it weight 0; the default ``"include"``
    averages it in (0, or ``zero_division`` if it is never predicted). torchmetrics' micro
    average also drops that class's FP from the pooled denominator; this one does not
    (docs/definitions/confusion.md#averaging).

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.Jaccard().update(y_true, y_pred).compute()
    0.5
    >>> sm.Jaccard(3, average="micro").update(y3_true, y3_pred).compute()
    0.3333333333333333
    """

    _label = "Jaccard"
    _undefined = "no true or predicted samples"
    _skip_nan = False

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        return s.tp, s.tp + s.fp + s.fn

    def _seen(self, s: OneVsRest) -> np.ndarray:
        """The classes seen (TP + FP + FN > 0) other than a multiclass ``ignore_index`` in [0, C)
        (torchmetrics' ``_jaccard_index_reduce`` weights it 0). O(K)."""
        seen = super()._seen(s)
        ii = self.ignore_index
        if self.task == "multiclass" and ii is not None and 0 <= ii < int(self.num_classes):  # type: ignore[arg-type]
            selection = self._labels.selection
            at = [ii] if selection is None else np.flatnonzero(selection == ii)
            seen = seen.copy()
            seen[..., at] = False
        return seen


@filled
class FBeta(AveragedMetric):
    """F-beta = (1+β²)·TP / ((1+β²)·TP + β²·FN + FP); β=1 is F1, β=0 precision, β=inf recall.

    Parameters
    ----------
    {confusion: num_classes}
    beta : float, default 1.0
        Weight of recall against precision (>= 0, ``inf`` allowed): 0 is precision, ``inf`` recall.
    {confusion: multilabel, average, threshold, ignore_index, zero_division, classes, pos_label}
    {confusion: labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.FBeta(beta=2.0).update(y_true, y_pred).compute()
    0.6666666666666666
    """

    _label = "F-score"
    _undefined = "no true nor predicted samples"

    def __init__(self, num_classes: int | None = None, *, beta: float = 1.0, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)
        if not (isinstance(beta, float) and math.isinf(beta) and beta > 0):  # beta=inf: recall
            beta = real_param(beta, "beta", "a number >= 0 (or inf)")
        self.beta = beta = check_param(beta, "beta", _BETA)  # a float by now: the message shows it

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "beta": self.beta}

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        if math.isinf(self.beta):
            return s.tp, s.support
        if self.beta <= _LARGE_BETA:
            b2 = self.beta**2
            return (1 + b2) * s.tp, b2 * s.support + s.predicted
        # beta**2 (or its products with the counts) would overflow: numerator and denominator
        # divided by beta**2, which tends to recall (beta=inf); where the shrunken FP term
        # underflows with no true samples, tp is 0 and the value stays 0, not undefined
        inv = (1.0 / self.beta) ** 2
        den = s.support + inv * s.predicted
        den = np.where((den == 0) & (s.predicted > 0), np.finfo(np.float64).tiny, den)
        return (1 + inv) * s.tp, den


@filled
class F1(FBeta):
    """F1 = 2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall.

    Parameters
    ----------
    {confusion: num_classes, multilabel, average, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels, top_k, absent_classes}
    {confusion: multidim_average}

    Examples
    --------
    {example: confusion}
    >>> sm.F1().update(y_true, y_pred).compute()
    0.6666666666666666
    >>> sm.F1(3, average="weighted").update(y3_true, y3_pred).compute()
    0.5
    """

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn", classes: Iterable[Hashable] | None = None,
                 pos_label: Hashable | None = None, labels: Iterable[Hashable] | None = None,
                 top_k: int = 1, absent_classes: str = "include",
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, beta=1.0, multilabel=multilabel, average=average, threshold=threshold,
                         ignore_index=ignore_index, zero_division=zero_division, classes=classes,
                         pos_label=pos_label, labels=labels, top_k=top_k,
                         absent_classes=absent_classes, multidim_average=multidim_average)

    def _config(self) -> dict[str, Any]:
        config = super()._config()
        config.pop("beta")
        return config


