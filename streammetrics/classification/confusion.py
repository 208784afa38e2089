"""The confusion-matrix family: thin views of one confusion-count kernel (definitions: see
docs/definitions/confusion.md).

Every class here holds a :class:`~streammetrics._counts.confusion_counts.ConfusionCounts` state and reads
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
(O(L) multilabel), independent of n. Beyond ``DENSE_MAX_CLASSES`` (1024) classes the state is
sparse (:mod:`streammetrics._counts.class_counts`): per-class sums, O(C) memory and ``compute`` (O(n)
``update``); :class:`ConfusionMatrix` (and :class:`CohenKappa` with ``labels=``) keep the
occupied cells only, O(distinct (actual, predicted) pairs) memory, O(n log n) ``update``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import (
    chance_adjusted,
    warn_undefined,
    zero_value,
)
from streammetrics._core.docstrings import filled
from streammetrics._core.intervals import wilson
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import Param, check_param, weight_vector_param
from streammetrics._core.warn import warn

from ._base import ConfusionMetric
from ._ratios import (
    F1,
    FDR,
    FOR,
    NPV,
    FallOut,
    FBeta,
    Jaccard,
    MissRate,
    Precision,
    Prevalence,
    Recall,
    Specificity,
)

_KAPPA_WEIGHTS = Param("choice", "must be None, 'linear' or 'quadratic'",
                       choices=(None, "linear", "quadratic"))
_NORMALIZE = Param("choice", "must be None, 'true', 'pred' or 'all'", choices=(None, "true", "pred", "all"))

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



def _sample_errors(m: ConfusionMetric[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(wrong, total) of each sample of a ``multidim_average="samplewise"`` state: binary and
    multiclass count positions (FP + FN of the one class; FN summed over classes), multilabel
    (sample, label) entries (FP + FN summed over labels). O(m·K)."""
    a = m._state.counts()  # type: ignore[attr-defined]
    if m.task == "multiclass":  # each wrong position is one class's FN; each class counts every position
        return a[:, 2].sum(axis=1), a[:, :, 0].sum(axis=1)
    return (a[:, 1] + a[:, 2]).sum(axis=1), a.sum(axis=(1, 2))


@filled
class Accuracy(ConfusionMetric[float]):
    """Accuracy = (TP + TN) / n; multiclass: trace / n; multilabel: subset accuracy.

    Multilabel accuracy is the (weighted) share of rows whose labels are all right, as
    scikit-learn's ``accuracy_score``; use :class:`HammingLoss` for the share of wrong labels.

    With ``multidim_average="samplewise"`` (binary or multiclass) each sample's value is the
    share of its right positions: torchmetrics' ``BinaryAccuracy`` and
    ``MulticlassAccuracy(average="micro")``. torchmetrics' multiclass default
    (``average="macro"``) is the mean recall over the classes seen:
    ``Recall(C, absent_classes="skip")`` with the same ``multidim_average``.

    Parameters
    ----------
    {confusion: num_classes, multilabel, threshold, ignore_index, zero_division, classes, pos_label}
    {confusion: labels, top_k, multidim_average}

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

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None, top_k: int = 1,
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        self.top_k = self._check_top_k(top_k)
        self._top_k_state()  # (Accuracy takes no labels=: the reads cover every class)
        if multidim_average == "samplewise" and self.task == "multilabel":
            raise ValueError(f"multidim_average: {type(self).__name__} of multilabel data is subset "
                             "accuracy, which per-label counts do not hold; 'samplewise' takes binary or "
                             "multiclass data (1 - HammingLoss(multidim_average='samplewise') is the share "
                             "of right labels of each sample)")
        self.multidim_average = self._samplewise_state(multidim_average)

    def _config(self) -> dict[str, Any]:
        return self._with_top_k_and_average(super()._config())

    def _counts(self) -> tuple[float, float, float]:
        """(correct, total, total of squared weights)."""
        st = self._state
        if self.task == "multilabel":
            correct, total, total_w2 = st.rows()
            return float(correct), float(total), float(total_w2)
        correct, total = st.totals()
        return correct, total, st.totals(squared=True)[1]

    def _value(self, correct: float, total: float) -> float:
        return (total - correct) / total if self._complement else correct / total

    def _compute(self) -> float:
        if self.multidim_average == "samplewise":
            errors, positions = _sample_errors(self)
            return self._sample_values(positions - errors, positions)  # type: ignore[return-value]
        correct, total, _ = self._counts()
        if total == 0:
            if self.zero_division == "warn":
                warn_undefined(type(self).__name__, "no samples")
            return zero_value(self.zero_division)
        return self._value(correct, total)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson score interval (effective sample size with weights); (nan, nan) if empty."""
        if self.multidim_average == "samplewise":
            raise ValueError("interval: not defined for sample-wise values")
        with self._lock:
            correct, total, total_w2 = self._counts()
        low, high = wilson(np.array([correct]), np.array([total]), np.array([total_w2]), confidence)
        if self._complement:  # error rate: the interval of 1 - accuracy
            return float(1.0 - high[0]), float(1.0 - low[0])
        return float(low[0]), float(high[0])


@filled
class ErrorRate(Accuracy):
    """Error rate (misclassification rate, zero-one loss) = (FP + FN) / n = 1 - accuracy.

    Parameters
    ----------
    {confusion: num_classes, multilabel, threshold, ignore_index, zero_division, classes, pos_label}
    {confusion: labels}

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.ErrorRate().update([0, 1, 1, 0], [0, 1, 0, 0]).compute()
    0.25
    """

    _complement = True

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)


@filled
class HammingLoss(ConfusionMetric[float]):
    """Hamming loss: the (weighted) share of wrong labels; 1 - accuracy for single-label tasks.

    With ``top_k`` = k > 1 (multiclass scores) it is 1 - top-k accuracy, torchmetrics'
    ``MulticlassHammingDistance(average="micro", top_k=k)``.

    With ``multidim_average="samplewise"`` each sample's value is the share of its wrong
    positions (multilabel: of its wrong (label, position) entries): torchmetrics'
    ``BinaryHammingDistance`` and ``Multiclass`` / ``MultilabelHammingDistance(average="micro")``.

    Parameters
    ----------
    {confusion: num_classes, multilabel, threshold, ignore_index, zero_division, classes, pos_label}
    {confusion: labels, top_k, multidim_average}

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.HammingLoss(2, multilabel=True).update([[1, 0], [0, 1]], [[1, 1], [0, 1]]).compute()
    0.25
    >>> sm.HammingLoss(3, top_k=2).update([0, 2], [[0.5, 0.3, 0.2], [0.5, 0.1, 0.4]]).compute()
    0.0
    """

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None, top_k: int = 1,
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        self.top_k = self._check_top_k(top_k)
        self._top_k_state()  # (the reads cover every class: totals only)
        self.multidim_average = self._samplewise_state(multidim_average)

    def _config(self) -> dict[str, Any]:
        return self._with_top_k_and_average(super()._config())

    def _compute(self) -> float:
        if self.multidim_average == "samplewise":
            errors, positions = _sample_errors(self)
            return self._sample_values(errors, positions)  # type: ignore[return-value]
        if self.task == "multilabel":
            m = self._state.matrix()
            wrong, total = float((m[:, 0, 1] + m[:, 1, 0]).sum()), float(m.sum())
        else:
            correct, total = self._state.totals()
            wrong = total - correct
        if total == 0:
            if self.zero_division == "warn":
                warn_undefined("Hamming loss", "no samples")
            return zero_value(self.zero_division)
        return wrong / total


@filled
class BalancedAccuracy(ConfusionMetric[float]):
    """Balanced accuracy: the mean recall over the classes that occur in ``y_true``.

    Binary with both classes present: (TPR + TNR) / 2. As scikit-learn's
    ``balanced_accuracy_score``; ``adjusted=True`` rescales so that chance is 0 and perfect is 1.
    Not defined for multilabel.

    Parameters
    ----------
    {confusion: num_classes}
    adjusted : bool, default False
        Rescale so that chance is 0 and perfect is 1 (scikit-learn's ``adjusted=True``). With one
        class in ``y_true`` chance is 1 and the rescaling is undefined: nan with an
        :class:`UndefinedMetricWarning`, whatever the score (scikit-learn's function, like
        :func:`streammetrics.functional.balanced_accuracy_score`, divides by 0: -inf, or nan for
        a perfect score).
    {confusion: multilabel, threshold, ignore_index, zero_division, classes, pos_label, labels}

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.BalancedAccuracy(3).update([0, 0, 1, 2], [0, 1, 1, 2]).compute()
    0.8333333333333334
    """

    _multilabel_ok = False

    def __init__(self, num_classes: int | None = None, *, adjusted: bool = False,
                 multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        self.adjusted = bool(adjusted)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "adjusted": self.adjusted}

    def _compute(self) -> float:
        tp, support, _ = self._state.class_sums()
        present = support > 0
        if not present.any():
            if self.zero_division == "warn":
                warn_undefined("Balanced accuracy", "no samples")
            return zero_value(self.zero_division)
        recalls = tp[present] / support[present]
        score = float(np.mean(recalls))
        if self.adjusted:
            if recalls.size == 1:
                # Chance is 1 and chance_adjusted would divide by 0 (scikit-learn's function: -inf
                # below a perfect score, nan at 1, with numpy's RuntimeWarning): this accumulator
                # returns nan, as documented, whatever the score.
                warn("Adjusted balanced accuracy is undefined with only one class in y_true; "
                     "returning nan", UndefinedMetricWarning)
                return float("nan")
            score = chance_adjusted(score, recalls.size)
        return score


@filled
class WeightedAccuracy(ConfusionMetric[float]):
    """Class-weighted accuracy A_w = Σ_c w_c · TPR(c) (the Binder lecture's A_{2,w}, A_{C,w}).

    ``weights``: one non-negative weight per class in class order, summing to 1 (binary:
    ``[w_0, w_1]``, so A = w_1·TPR + w_0·TNR). ``None`` means uniform weights (balanced
    accuracy when every class occurs). A class with positive weight and no samples has an
    undefined recall, which takes ``zero_division``. Not defined for multilabel.

    Parameters
    ----------
    {confusion: num_classes}
    weights : array-like, optional
        One non-negative weight per class in class order (binary ``[w_0, w_1]``), summing to 1.
    {confusion: multilabel, threshold, ignore_index, zero_division, classes, pos_label, labels}

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.WeightedAccuracy(weights=[0.25, 0.75]).update([0, 0, 1, 1], [0, 1, 1, 1]).compute()
    0.875
    """

    _multilabel_ok = False

    def __init__(self, num_classes: int | None = None, *, weights: ArrayLike | None = None,
                 multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        k = self._state.num_classes
        self.weights = np.full(k, 1.0 / k) if weights is None else weight_vector_param(weights, "weights", k)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "weights": self.weights.tolist()}

    def _compute(self) -> float:
        tp, support, _ = self._state.class_sums()
        recall, undefined = self._divide(tp, support)
        used = undefined & (self.weights > 0)
        if used.any() and self.zero_division == "warn":
            warn_undefined("Recall", "no true samples", np.flatnonzero(used))
        return float(np.dot(self.weights, recall))


@filled
class MatthewsCorrCoef(ConfusionMetric[float]):
    """Matthews correlation coefficient over the whole C×C matrix (scikit-learn's formula).

    MCC = (c·s − Σ_k p_k·t_k) / sqrt((s² − Σ p_k²)(s² − Σ t_k²)) with c the trace, s the total,
    t_k the actual and p_k the predicted class totals; 0.0 when the denominator is 0 (as
    scikit-learn). Binary: (TP·TN − FP·FN) / sqrt(PP·P·N·PN). Not defined for multilabel.

    Parameters
    ----------
    {confusion: num_classes, multilabel, threshold, ignore_index, zero_division, classes, pos_label}
    {confusion: labels}

    Examples
    --------
    {example: confusion}
    >>> sm.MatthewsCorrCoef().update(y_true, y_pred).compute()
    0.16666666666666666
    """

    _multilabel_ok = False

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)

    def _compute(self) -> float:
        _, t, p = self._state.class_sums()
        c, s = self._state.totals()
        # Each variance is Σ_{i≠j} x_i·x_j >= 0, taken against its own total (one true or one
        # predicted class: exactly 0, where float weights could leave -1 ulp and a math domain
        # error) and clamped at 0 against rounding.
        st, sp = float(t.sum()), float(p.sum())
        cov_ytyp = c * s - float(np.dot(t, p))
        cov_ypyp = max(sp * sp - float(np.dot(p, p)), 0.0)
        cov_ytyt = max(st * st - float(np.dot(t, t)), 0.0)
        if cov_ypyp * cov_ytyt == 0:
            return 0.0
        return cov_ytyp / math.sqrt(cov_ytyt * cov_ypyp)


@filled
class CohenKappa(ConfusionMetric[float]):
    """Cohen's kappa between actual and predicted classes, as scikit-learn's.

    κ = 1 − Σ W∘C / Σ W∘E with E = outer(row totals, column totals) / total and W the
    disagreement weights: ``weights=None`` (0 on the diagonal, 1 elsewhere), ``"linear"``
    (|i−j|) or ``"quadratic"`` ((i−j)²). Undefined (Σ W∘E = 0) takes ``zero_division``.
    Not defined for multilabel.

    Parameters
    ----------
    {confusion: num_classes}
    weights : {None, 'linear', 'quadratic'}, default None
        Disagreement weights between classes (scikit-learn's ``weights=``).
    {confusion: multilabel, threshold, ignore_index, zero_division, classes, pos_label, labels}

    Examples
    --------
    {example: confusion}
    >>> sm.CohenKappa(3, weights="linear").update(y3_true, y3_pred).compute()
    0.4285714285714286
    """

    _multilabel_ok = False
    _takes_labels = True
    _reads_selected_matrix = True  # the kappa of a labels= selection reads its block

    def __init__(self, num_classes: int | None = None, *, weights: str | None = None,
                 multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        self.weights = check_param(weights, "weights", _KAPPA_WEIGHTS)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "weights": self.weights}

    def _compute(self) -> float:
        observed, denom = self._state.kappa_sums(self.weights)
        if denom == 0:
            if self.zero_division == "warn":
                warn_undefined("Cohen's kappa", "the expected disagreement is 0")
            return zero_value(self.zero_division)
        return 1.0 - observed / denom


@filled
class ConfusionMatrix(ConfusionMetric[np.ndarray]):
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
    {confusion: num_classes}
    normalize : {None, 'true', 'pred', 'all'}, default None
        Normalise over actual classes (rows), predicted classes (columns) or everything, as
        scikit-learn's ``confusion_matrix`` (torchmetrics' ``"none"`` is ``None``).
    {confusion: multilabel, threshold, ignore_index, zero_division, classes, pos_label, labels}

    Examples
    --------
    {example: confusion}
    >>> sm.ConfusionMatrix(3).update(y3_true, y3_pred).compute()
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 1, 1]])
    """

    _takes_labels = True
    _reads_matrix = True

    def __init__(self, num_classes: int | None = None, *, normalize: str | None = None,
                 multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        if isinstance(normalize, str) and normalize == "none":  # torchmetrics' spelling of None
            normalize = None
        self.normalize = check_param(normalize, "normalize", _NORMALIZE)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "normalize": self.normalize}

    def _compute(self) -> np.ndarray:
        st = self._state
        m = st.matrix()
        m = m if st.layout != "dense" else m.copy()  # a sparse store builds a fresh matrix
        if self.normalize is None:
            return m.astype(np.int64) if st.unit_counts() else m
        axis: Any = {"true": -1, "pred": -2, "all": (-2, -1)}[self.normalize]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = m / m.sum(axis=axis, keepdims=True)
        return np.nan_to_num(out)

    def plot(self, ax: Any = None, *, display_labels: Any = None, label: Any = None, **kwargs: Any) -> Any:
        """Heatmap of the current matrix, rows actual, columns predicted; returns the display
        (``im_``, ``text_``, ``ax_``, ``figure_``). Binary / multiclass: one (C, C) heatmap, see
        :func:`streammetrics.plot.plot_confusion_matrix`. Multilabel: one 2x2 panel per label
        in a grid of axes (``ax``: None or a sequence of L Axes; ``display.axes_``), or only
        ``label`` (a name or an index) on ``ax``, see
        :func:`streammetrics.plot.plot_multilabel_confusion`. Classes / labels are named by
        ``display_labels``, else the ``labels=`` / ``classes=`` given. O(C^2) (multilabel:
        O(L)); matplotlib: the ``plot`` extra."""
        from streammetrics.plot import plot_confusion_matrix, plot_multilabel_confusion

        if display_labels is None:
            if self._labels.labels is not None:
                display_labels = [str(c) for c in self._labels.labels]
            elif self._labels.mapping is not None:
                display_labels = [str(c) for c in self._labels.mapping.classes]
        if self.task == "multilabel":
            return plot_multilabel_confusion(self.compute(), ax, label_names=display_labels, label=label,
                                             **kwargs)
        if label is not None:
            raise ValueError(f"label: only for a multilabel matrix (this one is {self.task}), got {label!r}")
        return plot_confusion_matrix(self.compute(), ax, display_labels=display_labels, **kwargs)


# Aliases (the other names of the same measures, see docs/definitions/confusion.md).
TPR = Sensitivity = Recall
TNR = Specificity
FPR = FallOut
FNR = MissRate
PPV = Precision
