"""The confusion family's base classes: the constructor (task, threshold, labels, ``zero_division``),
averaging over classes and the one-vs-rest proportions (definitions: see
docs/definitions/confusion.md). The metrics themselves are in :mod:`streammetrics.classification.confusion`
(counts and agreement measures) and :mod:`streammetrics.classification._ratios` (precision, recall,
F-beta, Jaccard and the other per-class ratios).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

import numpy as np

from streammetrics._core.averaging import (
    AVERAGES,
    ZeroDivisionOption,
    average_classes,
    check_zero_division,
    warn_undefined,
    zero_value,
)
from streammetrics._core.intervals import wilson
from streammetrics._core.metric import Metric, R_co, Value
from streammetrics._core.params import Param, check_param, real_param
from streammetrics._counts.confusion_counts import ConfusionCounts
from streammetrics._counts.label_options import label_options
from streammetrics._counts.label_views import SelectedCounts, sample_average_state
from streammetrics._counts.sample_counts import MULTIDIM, SampleCounts, row_average
from streammetrics._counts.tasks import OneVsRest, task_of
from streammetrics._counts.topk_counts import TopKCounts

# The constructor options checked by ``check_param`` (messages as "<name>: <rule>, got <value>").
_AVERAGES_ALL = (*AVERAGES, "binary", "samples")
_AVERAGE = Param("choice", f"must be one of {_AVERAGES_ALL}", choices=_AVERAGES_ALL)
#: ``top_k`` of a binary or multilabel task: 1 only (top-k reads (n, C) multiclass scores).
_TOP_K_ONE = Param("int", "must be 1 unless the task is multiclass (num_classes=C, not multilabel)",
                   low=1, high=1)
#: ``absent_classes``: whether a macro average covers the classes with TP + FP + FN = 0.
ABSENT_CLASSES = ("include", "skip")
_ABSENT = Param("choice", f"must be one of {ABSENT_CLASSES}", choices=ABSENT_CLASSES)
_MULTIDIM = Param("choice", f"must be one of {MULTIDIM}", choices=MULTIDIM)



class ConfusionMetric(ZeroDivisionOption, Metric[R_co]):
    """Common constructor and state of the confusion family."""

    #: whether the metric accepts ``average`` (and needs it for multiclass/multilabel)
    _averaged: ClassVar[bool] = False
    #: whether the metric is defined for multilabel
    _multilabel_ok: ClassVar[bool] = True
    #: whether the metric takes scikit-learn's ``labels=`` (the classes its reads cover)
    _takes_labels: ClassVar[bool] = False
    #: whether the metric reads the matrix itself (with ``labels=``: its selected block), not
    #: only per-class sums: beyond ``DENSE_MAX_CLASSES`` classes its state keeps the cells
    _reads_matrix: ClassVar[bool] = False
    _reads_selected_matrix: ClassVar[bool] = False
    #: ``top_k`` (set by the metrics that take it; 1: predicted labels or the argmax of scores)
    top_k: int = 1
    #: "global" (one value) or "samplewise" (one per sample; :meth:`_samplewise_state`)
    multidim_average: str = "global"

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        multilabel: bool = False,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        zero_division: str | float = "warn",
        classes: Iterable[Hashable] | None = None,
        pos_label: Hashable | None = None,
        labels: Iterable[Hashable] | None = None,
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
        cells = self._reads_matrix or (self._reads_selected_matrix and self._labels.selection is not None)
        selection = self._labels.selection  # labels=: the reads see the selected classes only
        self._state: ConfusionCounts = (
            ConfusionCounts(self.task, num_classes, threshold, ignore_index, cells=cells) if selection is None
            else SelectedCounts(self.task, num_classes, threshold, ignore_index, cells, selection))
        self.ignore_index = self._state.ignore_index  # checked, a Python int (np.int64 -> int)

    def _config(self) -> dict[str, Any]:
        return {
            "num_classes": self.num_classes,
            "multilabel": self.multilabel,
            "threshold": self.threshold,
            "ignore_index": self.ignore_index,
            "zero_division": self._zero_division_config(),
            **self._labels.config(),
        }

    def _check_top_k(self, top_k: Any) -> int:
        """``top_k``: an int in [1, C]; above 1 only for a multiclass task (and, for an averaged
        metric, a class average)."""
        if self.task != "multiclass":
            top_k = check_param(top_k, "top_k", _TOP_K_ONE)
            return top_k
        top_k = check_param(top_k, "top_k", Param(
            "int", f"must be an int in [1, num_classes={self.num_classes}]", low=1, high=self.num_classes))
        if top_k > 1 and getattr(self, "average", None) in ("binary", "samples"):
            raise ValueError(f"top_k: top_k={top_k} needs average in {AVERAGES}, "
                             f"not average={getattr(self, 'average', None)!r}")
        return top_k

    def _top_k_state(self) -> None:
        """With ``top_k`` > 1: the per-class counts of top-k predictions replace the matrix."""
        if self.top_k > 1:
            self._state = TopKCounts(self.num_classes, self.top_k,  # type: ignore[assignment, arg-type]
                                     self.ignore_index, self._labels.selection)

    def _samplewise_state(self, multidim_average: Any) -> str:
        """``multidim_average``: "global" (the state as it is) or "samplewise" (a
        :class:`SampleCounts` state: one value per sample, O(samples) memory); checked against
        the other options (top_k 1, no ``classes=`` / ``pos_label``, no ``average="samples"``)."""
        multidim_average = check_param(multidim_average, "multidim_average", _MULTIDIM)
        if multidim_average == "samplewise":
            if self.top_k != 1:
                raise ValueError(f"top_k: multidim_average='samplewise' takes top_k=1, got {self.top_k}")
            if self._labels.codec is not None:
                raise ValueError("classes: multidim_average='samplewise' reads class codes (no classes= "
                                 "or pos_label=)")
            if getattr(self, "average", None) == "samples":
                raise ValueError("average: 'samples' is not taken with multidim_average='samplewise'")
            self._state = SampleCounts(self.task, self.num_classes, self.threshold,  # type: ignore[assignment]
                                       self.ignore_index, self._labels.selection)
        return str(multidim_average)

    def _with_top_k_and_average(self, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` with ``multidim_average`` and ``top_k`` added where they are not the
        defaults (configurations and saved files without them stay as they were)."""
        if self.multidim_average != "global":
            config["multidim_average"] = self.multidim_average
        if self.top_k != 1:
            config["top_k"] = self.top_k
        return config

    def _sample_values(self, num: np.ndarray, den: np.ndarray) -> np.ndarray:
        """num/den of each sample (``multidim_average="samplewise"``), a sample without a
        position taking ``zero_division`` (one warning if "warn"). O(m)."""
        values, undefined = self._divide(num, den)
        if undefined.any() and self.zero_division == "warn":
            warn_undefined(type(self).__name__, "no positions in some samples")
        return values

    def _divide(self, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """num/den with zero-division values filled in; also returns the zero-denominator mask."""
        num = np.asarray(num, dtype=np.float64)
        den = np.asarray(den, dtype=np.float64)
        undefined = den == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            out = num / np.where(undefined, 1.0, den)
        out[undefined] = zero_value(self.zero_division)
        return out, undefined


class AveragedMetric(ConfusionMetric[Value]):
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
        classes: Iterable[Hashable] | None = None,
        pos_label: Hashable | None = None,
        labels: Iterable[Hashable] | None = None,
        top_k: int = 1,
        absent_classes: str = "include",
        multidim_average: str = "global",
    ) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)
        if isinstance(average, str) and average == "none":  # torchmetrics' spelling of None
            average = None
        self.average = check_param(average, "average", _AVERAGE)
        self.absent_classes = check_param(absent_classes, "absent_classes", _ABSENT)
        self.top_k = self._check_top_k(top_k)
        if average in ("binary", "samples"):  # scikit-learn's; "samples": a per-sample state
            self._state = sample_average_state(self, average)
        else:
            self._top_k_state()
        self.multidim_average = self._samplewise_state(multidim_average)

    def _config(self) -> dict[str, Any]:
        config = {**super()._config(), "average": self.average}
        self._with_top_k_and_average(config)
        if self.absent_classes != "include":  # (as top_k)
            config["absent_classes"] = self.absent_classes
        return config

    def _ratio(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _per_class(self, s: OneVsRest) -> tuple[np.ndarray, np.ndarray]:
        num, den = self._ratio(s)
        return self._divide(num, den)

    #: With ``top_k`` > 1, torchmetrics' precision, recall and NPV skip the classes without a true
    #: sample (TP + FN = 0) instead of those without a true or predicted one.
    _skip_without_true_at_top_k = False

    def _seen(self, s: OneVsRest) -> np.ndarray:
        """The classes a macro average with ``absent_classes='skip'`` covers (torchmetrics' rule)."""
        if self.top_k > 1 and self._skip_without_true_at_top_k:
            return np.asarray((s.tp + s.fn) > 0)
        return np.asarray((s.tp + s.fp + s.fn) > 0)

    def _samplewise(self) -> np.ndarray:
        """One value per sample (``multidim_average="samplewise"``): (m,), or (m, K) per class."""
        s = self._state.one_vs_rest()
        if self.task == "binary" or self.average == "micro":
            pooled = OneVsRest(*(a.sum(axis=1, keepdims=True) for a in (s.tp, s.fp, s.fn, s.tn)))
            values, undefined = self._per_class(pooled)
            values = values[:, 0]
        else:
            values, undefined = self._per_class(s)
        if undefined.any() and self.zero_division == "warn":
            warn_undefined(self._label, self._undefined + " in some samples")
        if self.task == "binary" or self.average in ("micro", "binary") or self.average is None:
            return values
        seen = self._seen(s) if self.average == "macro" and self.absent_classes == "skip" else None
        return row_average(values, s.support if self.average == "weighted" else None, self._skip_nan,
                           seen, zero_value(self.zero_division))

    def _compute(self) -> Value:
        if self.multidim_average == "samplewise":
            return self._samplewise()  # type: ignore[return-value]
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
        if self.average == "macro" and self.absent_classes == "skip":
            seen = self._seen(s)
            if not seen.any():  # nothing seen: undefined (warned above, every class undefined)
                return zero_value(self.zero_division)
            values = values[seen]
        return average_classes(values, s.support if self.average == "weighted" else None,
                               self._skip_nan)


class ProportionMetric(AveragedMetric):
    """A ratio whose numerator counts a subset of its denominator: it has a Wilson interval."""

    def interval(self, confidence: float = 0.95) -> tuple[Value, Value]:
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


