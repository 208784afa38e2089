"""The ROC and precision-recall curve accumulators (definitions: docs/definitions/ranking.md);
exported by :mod:`streammetrics.ranking.metrics` and the top level.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from numpy.typing import ArrayLike

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._core.docstrings import filled
from streammetrics._core.metric import R_co
from streammetrics._scores.thresholds import (
    ThresholdCounts,
    average_precision_certified,
)

from ._base import RankingMetric
from ._results import PRCurveResult, ROCCurveResult


@filled
class CurveMetric(RankingMetric[R_co]):
    """Base of the curve accumulators (ROC, PR, DET): binary gives one result;
    multiclass/multilabel give a list with one curve per class (in class order), or one pooled
    curve with ``average="micro"``. A curve subclass gives ``_curve(counts)`` and ``_check``;
    ``bounds()`` certifies its area (the AUROC unless ``_stat`` says otherwise).

    Parameters
    ----------
    {ranking: num_classes, multilabel, average, ignore_index, max_bytes, thresholds, scores, labels}

    Examples
    --------
    >>> import streammetrics as sm
    >>> isinstance(sm.ROCCurve(), sm.ranking.CurveMetric)
    True
    """

    def _curve(self, counts: ThresholdCounts) -> Any:
        raise NotImplementedError

    def _check(self, counts: ThresholdCounts) -> None:
        raise NotImplementedError

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        """The certified area the curve's ``bounds()`` report: the AUROC (PR curves: step AP)."""
        if column is None:
            return self._state.pooled_auroc()
        return self._state.auroc(column)

    def _compute(self) -> Any:
        if self.task == "binary" or self.average == "micro":
            counts = self._counts(0 if self.task == "binary" else None)
            self._check(counts)
            return self._curve(counts)
        out = []
        bad = []
        for c in range(self._state.n_columns):
            counts = self._counts(c)
            if counts.total_pos <= 0 or (self._needs_neg and counts.total_neg <= 0):
                bad.append(c)
            out.append(self._curve(counts))
        if bad:
            warn_undefined_nan(self._name, self._what, bad)
        return out

    _needs_neg = True
    _what = "no positives or no negatives"

    def plot(self, ax: Any = None, *, labels: Any = None, **kwargs: Any) -> Any:
        """Draw the current curve (one per class for multiclass / multilabel, named by ``labels``
        or the ``classes`` given) and return the display; see
        :func:`streammetrics.plot.plot_curves` (matplotlib needed: the ``plot`` extra)."""
        from streammetrics.plot import plot_curves

        value = self.compute()
        if labels is None and isinstance(value, list) and self._labels.mapping is not None:
            labels = [str(c) for c in self._labels.mapping.classes][: len(value)]
        return plot_curves(value, ax, labels=labels, **kwargs)


@filled
class ROCCurve(CurveMetric[ROCCurveResult | list[ROCCurveResult]]):
    """The ROC curve (FPR(t), TPR(t)) at every distinct score t, starting at (0, 0) for t = +inf;
    ``compute()`` returns a :class:`ROCCurveResult` (``fpr``, ``tpr``, ``thresholds``,
    ``best_threshold``, ``at``, ``area``) equal to ``sklearn.metrics.roc_curve(...,
    drop_intermediate=False)``, or with ``drop_intermediate=True`` to scikit-learn's default.
    Multiclass / multilabel: a list with one curve per class (one-vs-rest, in class order), or
    one pooled curve with ``average="micro"``. O(n log n) per ``compute`` (a linear merge of the
    sorted positives and negatives, then a ranking of the distinct scores).

    Binned (``max_bytes`` / ``thresholds``): one point per bin edge, each an exact point of the
    exact curve; ``exact``, ``envelope()``, ``area_bounds(max_fpr)``, ``at`` count ranges and
    ``best_threshold``'s ``score_bound`` / ``search_range`` certify the rest
    (:class:`ROCCurveResult`); O(bins) per ``compute``.

    Parameters
    ----------
    {ranking: num_classes}
    drop_intermediate : bool, default False
        Drop the points that are not corners of the curve (scikit-learn's default ``True``).
    {ranking: multilabel, average, ignore_index, max_bytes, thresholds, scores, labels}

    Examples
    --------
    {example: ranking}
    >>> curve = sm.ROCCurve().update(y_true, y_score).compute()
    >>> curve.fpr.tolist(), curve.tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    >>> curve.thresholds.tolist()
    [inf, 0.8, 0.4, 0.35, 0.1]
    """

    _name = "ROCCurve"

    def __init__(self, num_classes: int | None = None, *, drop_intermediate: bool = False,
                 multilabel: bool = False,
                 average: str | None = "macro", ignore_index: int | None = None, max_bytes: int | None = None,
                 thresholds: int | ArrayLike | None = None, scores: str = "raw",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None) -> None:
        self.drop_intermediate = bool(drop_intermediate)
        super().__init__(num_classes, multilabel=multilabel, average=average, ignore_index=ignore_index,
                         max_bytes=max_bytes, thresholds=thresholds, scores=scores, classes=classes,
                         pos_label=pos_label)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "drop_intermediate": self.drop_intermediate}

    def _curve(self, counts: ThresholdCounts) -> ROCCurveResult:
        return ROCCurveResult(counts, self.drop_intermediate)

    def _check(self, counts: ThresholdCounts) -> None:
        if counts.total_pos <= 0 or counts.total_neg <= 0:
            warn_undefined_nan(self._name, "no positives or no negatives: tpr or fpr is nan")


@filled
class PRCurve(CurveMetric[PRCurveResult | list[PRCurveResult]]):
    """The precision-recall curve at every distinct score (decreasing threshold); ``compute()``
    returns a :class:`PRCurveResult` (``precision``, ``recall``, ``thresholds``, ``area(method=
    "step" | "interpolated" | "eleven_point" | "trapezoid")``, ``best_threshold``, ``at``) equal to
    ``sklearn.metrics.precision_recall_curve`` reversed, without its appended (0, 1) point.
    Multiclass / multilabel: one curve per class, or one pooled curve with ``average="micro"``.
    O(n log n) per ``compute``.

    Binned (``max_bytes`` / ``thresholds``): one point per bin edge, each an exact point of the
    exact curve, with ``precision_low`` / ``precision_high`` per point, ``envelope()``,
    ``area_bounds(method)`` and the certified ``best_threshold`` (:class:`PRCurveResult`);
    O(bins) per ``compute``.

    Parameters
    ----------
    {ranking: num_classes, multilabel, average, ignore_index, max_bytes, thresholds, scores, labels}

    Examples
    --------
    {example: ranking}
    >>> curve = sm.PRCurve().update(y_true, y_score).compute()
    >>> curve.precision.tolist(), curve.recall.tolist()
    ([1.0, 0.5, 0.6666666666666666, 0.5], [0.5, 0.5, 1.0, 1.0])
    >>> float(curve.area())
    0.8333333333333333
    """

    _name = "PRCurve"
    _needs_neg = False
    _what = "no positives: recall is nan"

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", ignore_index: int | None = None, max_bytes: int | None = None,
                 thresholds: int | ArrayLike | None = None, scores: str = "raw",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, average=average, ignore_index=ignore_index,
                         max_bytes=max_bytes, thresholds=thresholds, scores=scores, classes=classes,
                         pos_label=pos_label)

    def _curve(self, counts: ThresholdCounts) -> PRCurveResult:
        return PRCurveResult(counts)

    def _check(self, counts: ThresholdCounts) -> None:
        if counts.total_pos <= 0:
            warn_undefined_nan(self._name, "no positives: recall is nan")

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        return average_precision_certified(self._counts(column, positive_thresholds=True))
