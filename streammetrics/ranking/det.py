"""The detection error tradeoff (DET) curve: ``DETCurve``, beside ``ROCCurve`` and on its state.

With the cumulative counts at the distinct scores in decreasing order (``tps``, ``fps``,
prepended by (0, 0) at threshold +inf) and P, N the totals, scikit-learn's ``det_curve`` keeps
the points from the last one whose FP count equals the first's to the first one whose TP count
reaches P, and returns them reversed (increasing threshold): ``fpr = fps / N``,
``fnr = (P - tps) / P``. ``drop_intermediate`` first drops the points whose TP count equals both
neighbours' (scikit-learn's rule). Same state as ``ROCCurve`` (one in a MetricSet);
``bounds()`` certifies the ROC area, as ``ROCCurve``'s.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._core.docstrings import filled
from streammetrics._scores.thresholds import ThresholdCounts
from streammetrics.plot._output import CurveOutput

from .metrics import CurveMetric

__all__ = ["DETCurve", "DETCurveResult", "det_points"]


def det_points(counts: ThresholdCounts, drop_intermediate: bool = False) -> tuple[np.ndarray, ...]:
    """(fpr, fnr, thresholds) of scikit-learn's ``det_curve`` from ROC counts (module
    docstring); nan rates when P or N is 0. O(T).

    Parameters
    ----------
    counts : ThresholdCounts
        Positive and negative counts at the distinct thresholds (decreasing).
    drop_intermediate : bool, default False
        Drop the points that are not corners of the curve, as scikit-learn's option.

    Returns
    -------
    fpr, fnr, thresholds : numpy.ndarray
        False positive and false negative rates at increasing thresholds (decreasing fpr).
    """
    tps = np.concatenate([[0.0], counts.tps])
    fps = np.concatenate([[0.0], counts.fps])
    thresholds = np.concatenate([[np.inf], counts.thresholds.astype(np.float64)])
    if drop_intermediate and tps.shape[0] > 2:
        keep = np.concatenate([[True], (np.diff(tps[:-1]) != 0) | (np.diff(tps[1:]) != 0), [True]])
        tps, fps, thresholds = tps[keep], fps[keep], thresholds[keep]
    first = int(np.searchsorted(fps, fps[0], side="right")) - 1
    last = int(np.searchsorted(tps, tps[-1])) + 1
    sl = slice(max(first, 0), last)
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr = fps[sl][::-1] / fps[-1]
        fnr = (tps[-1] - tps[sl])[::-1] / tps[-1]
    return fpr, fnr, thresholds[sl][::-1]


@filled
class DETCurveResult(CurveOutput):
    """A DET curve in scikit-learn's layout: ``fpr``, ``fnr``, ``thresholds`` (increasing
    threshold, decreasing fpr), and the ``counts`` it was read from. Unpacks as
    ``fpr, fnr, thresholds = result``.

    Parameters
    ----------
    {curves: counts, drop_intermediate}

    Attributes
    ----------
    fpr : numpy.ndarray
        False positive rates, decreasing (increasing threshold).
    fnr : numpy.ndarray
        False negative rates at the same thresholds.
    thresholds : numpy.ndarray
        The distinct scores, increasing.
    counts : ThresholdCounts
        The counts at distinct thresholds the curve was read from.

    Examples
    --------
    {example: ranking}
    >>> result = sm.DETCurve().update(y_true, y_score).compute()
    >>> result.fnr.tolist()
    [0.0, 0.5, 0.5]
    >>> fpr, fnr, thresholds = result
    """

    def __init__(self, counts: ThresholdCounts, drop_intermediate: bool = False) -> None:
        self.counts = counts
        self.fpr, self.fnr, self.thresholds = det_points(counts, drop_intermediate)

    def __iter__(self) -> Any:
        return iter((self.fpr, self.fnr, self.thresholds))

    _output_columns = ("fpr", "fnr", "thresholds")

    def __repr__(self) -> str:
        return (f"DETCurveResult(points={self.fpr.shape[0]}, P={self.counts.total_pos:g}, "
                f"N={self.counts.total_neg:g})")


@filled
class DETCurve(CurveMetric[DETCurveResult | list[DETCurveResult]]):
    """The detection error tradeoff curve (FPR(t), FNR(t)); ``compute()`` returns a
    :class:`DETCurveResult` equal to ``sklearn.metrics.det_curve(..., drop_intermediate=)``.
    Multiclass / multilabel: one curve per class (one-vs-rest), or one pooled curve with
    ``average="micro"``. No positives or no negatives: nan rates, with an
    :class:`~streammetrics.UndefinedMetricWarning` (scikit-learn's function raises).

    Takes ``ROCCurve``'s arguments and shares its state in a MetricSet. O(n log n) per
    ``compute`` (binned state: O(bins), the points at the bin edges).

    Parameters
    ----------
    {ranking: num_classes}
    drop_intermediate : bool, default False
        Drop the points that are not corners of the curve.
    {ranking: multilabel, average, ignore_index, max_bytes, thresholds, scores, labels}

    Examples
    --------
    >>> fpr, fnr, thr = DETCurve().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).compute()
    >>> fpr.tolist(), fnr.tolist(), thr.tolist()
    ([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.35, 0.4, 0.8])
    """

    _name = "DETCurve"

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

    def _curve(self, counts: ThresholdCounts) -> DETCurveResult:
        return DETCurveResult(counts, self.drop_intermediate)

    def _check(self, counts: ThresholdCounts) -> None:
        if counts.total_pos <= 0 or counts.total_neg <= 0:
            warn_undefined_nan(self._name, "no positives or no negatives: fpr or fnr is nan")
