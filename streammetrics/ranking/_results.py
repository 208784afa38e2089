"""Curve results of the ranking accumulators: :class:`ROCCurveResult` and :class:`PRCurveResult`.

Both are views of one :class:`~streammetrics._scores.thresholds.ThresholdCounts` (from the exact sorted
buffer or from bins); ``at`` and ``best_threshold`` come from :mod:`streammetrics.ranking._operating_points`,
areas and their certificates from :mod:`streammetrics._scores.thresholds`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._scores.thresholds import (
    Polyline,
    ThresholdCounts,
    average_precision,
    average_precision_bounds,
    drop_intermediate_points,
    guard,
    kept_points,
    roc_arrays,
    roc_auc_bounds,
    roc_auc_from_counts,
    roc_envelope,
)
from streammetrics.plot._output import CurveOutput

from ._operating_points import OperatingPoint, best_threshold, operating_point_at


class _CurveResult(CurveOutput):
    """Shared part of the curve results: the counts, ``at``, ``best_threshold``, the summary (the
    area, with its bounds when binned), unpacking into the first three arrays, and the repr."""

    counts: ThresholdCounts
    #: The area's name in the summary ("AUC", "AP").
    _area_name = ""

    def area(self) -> float:
        raise NotImplementedError

    def area_bounds(self) -> tuple[float, float]:
        raise NotImplementedError

    def _summary(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [(self._area_name, self.area())]
        if not self.is_exact:
            out.append((f"{self._area_name} bounds", self.area_bounds()))
        return out

    def __iter__(self) -> Any:  # fpr, tpr, thresholds = roc; precision, recall, thresholds = pr
        return iter(tuple(getattr(self, c) for c in self._output_columns[:3]))

    def __repr__(self) -> str:
        extra = "" if self.is_exact else ", binned"
        return (
            f"{type(self).__name__}(points={self._points()}, P={self.total_pos:g}, "
            f"N={self.total_neg:g}{extra})"
        )

    def at(self, threshold: float) -> OperatingPoint:
        """Confusion counts and metrics at ``threshold`` (score >= threshold is positive); from a
        binned state, a threshold strictly inside a bin gives count ranges (see
        :class:`OperatingPoint`). O(log T).

        Parameters
        ----------
        threshold : float
            Any threshold (``+-inf`` allowed, not NaN).

        Returns
        -------
        OperatingPoint
            The confusion counts and metrics there.
        """
        return operating_point_at(self.counts, threshold)

    def best_threshold(
        self, criterion: str, value: float | None = None, *, beta: float = 1.0
    ) -> OperatingPoint:
        """Best threshold under ``criterion`` (see
        :data:`~streammetrics.ranking._operating_points.CRITERIA`); ties go to the higher threshold;
        candidates are the distinct scores (never the curve's +inf start), or the bin
        edges of a binned state, where the result is exact, with ``score_bound`` /
        ``search_range`` certifying how much better a threshold inside a bin could be. O(T).

        Parameters
        ----------
        criterion : str
            One of :data:`~streammetrics.ranking._operating_points.CRITERIA`.
        value : float, optional
            The constraint in [0, 1] of the constrained criteria (``"tpr_at_tnr"``, ...).
        beta : float, default 1.0
            The beta of ``"fbeta"``.

        Returns
        -------
        OperatingPoint
            The chosen threshold with its counts and certificates.
        """
        return best_threshold(self.counts, criterion, value, beta)

    @property
    def is_exact(self) -> bool:
        """True when the whole curve is known (every segment exact)."""
        return bool(np.all(self.exact))

    exact: np.ndarray

    @property
    def total_pos(self) -> float:
        return self.counts.total_pos

    @property
    def total_neg(self) -> float:
        return self.counts.total_neg


@filled
class ROCCurveResult(_CurveResult):
    """A ROC curve: ``fpr``, ``tpr``, ``thresholds`` in scikit-learn's layout (``thresholds[0] =
    +inf`` at (0, 0), then the distinct scores in decreasing order). ``drop_intermediate=True``
    keeps only the corners, as ``roc_curve(drop_intermediate=True)``. ``area()`` is the AUROC
    (trapezoid). fpr (tpr) is nan when there are no negatives (positives).

    From a binned state the points are at the bin edges and each is an exact point of the exact
    curve (its threshold: the lowest score of the bin); ``exact[i]`` says whether the exact
    curve between point i - 1 and point i is the straight segment drawn (always for exact
    accumulators) or only known to lie in their box, ``envelope()`` gives the two polylines
    around it and ``area_bounds()`` the certified area.

    Parameters
    ----------
    {curves: counts, drop_intermediate}

    Attributes
    ----------
    fpr, tpr : numpy.ndarray
        False and true positive rates, from (0, 0) at ``thresholds[0] = +inf``.
    thresholds : numpy.ndarray
        ``+inf``, then the distinct scores (or bin edges) in decreasing order.
    exact : numpy.ndarray of bool
        Whether the segment ending at each point is exact (always True for exact accumulators).
    {curves: read_from, is_exact, totals}

    Examples
    --------
    {example: ranking}
    >>> curve = sm.ROCCurve().update(y_true, y_score).compute()
    >>> curve
    ROCCurveResult(points=5, P=2, N=2)
    >>> fpr, tpr, thresholds = curve
    >>> tpr.tolist()
    [0.0, 0.5, 0.5, 1.0, 1.0]
    >>> curve.area()
    0.75
    >>> curve.at(0.35).tpr, curve.best_threshold("youden").threshold
    (1.0, 0.8)
    >>> curve.area_bounds()
    (0.75, 0.75)
    >>> curve.eer()  # FPR = FNR = 0.5 at threshold 0.4
    0.5
    >>> round(curve.log_auc((0.1, 1.0)), 6)  # torchmetrics' BinaryLogAUC(fpr_range=(0.1, 1.0))
    0.650515
    """

    def __init__(self, counts: ThresholdCounts, drop_intermediate: bool = False) -> None:
        self.counts = counts
        mixed = counts.mixed()
        if drop_intermediate:
            idx = kept_points(counts)
            shown = drop_intermediate_points(counts)
            # a kept segment is exact iff every segment it replaces is
            seen = np.concatenate([[0], np.cumsum(mixed)])
            prev = np.concatenate([[-1], idx[:-1]])
            seg_mixed = seen[idx + 1] - seen[prev + 1] > 0
        else:
            shown, seg_mixed = counts, mixed
        self.fpr, self.tpr, self.thresholds = roc_arrays(shown)
        self.exact = np.concatenate([[True], ~seg_mixed])

    @filled
    def area(self, max_fpr: float | None = None) -> float:
        """AUROC (McClish-standardised partial area with ``max_fpr``); nan if undefined.
        Binned state: the trapezoid over the bin edges (ties inside a bin count 1/2).

        Parameters
        ----------
        {curves: max_fpr}

        Returns
        -------
        float
            The (standardised partial) AUROC.
        """
        return roc_auc_from_counts(self.counts, max_fpr)

    @filled
    def area_bounds(self, max_fpr: float | None = None) -> tuple[float, float]:
        """Certified (low, high) of the exact AUROC (partial, standardised, with ``max_fpr``):
        the areas under ``envelope()``; (v, v) for an exact curve. O(T).

        Parameters
        ----------
        {curves: max_fpr}

        Returns
        -------
        (low, high) : tuple of float
            The certified range of the exact AUROC.
        """
        return roc_auc_bounds(self.counts, max_fpr)

    def eer(self) -> float:
        """Equal error rate, as torchmetrics' ``BinaryEER``: at the point of the curve (every
        distinct threshold, from (0, 0) at ``+inf``; collinear points included whatever
        ``drop_intermediate``) where the false positive rate and the false negative rate
        FNR = 1 - TPR are closest -- the first such point in decreasing-threshold order --
        (FPR + FNR) / 2. nan when there are no positives or no negatives. From a binned state the
        points are the bin edges. O(T).

        Returns
        -------
        float
            The equal error rate, in [0, 1].
        """
        if not (self.counts.total_pos > 0 and self.counts.total_neg > 0):
            return math.nan
        fpr, tpr, _ = roc_arrays(self.counts)
        fnr = 1.0 - tpr
        i = int(np.argmin(np.abs(fpr - fnr)))
        return float((fpr[i] + fnr[i]) / 2)

    def log_auc(self, fpr_range: tuple[float, float] = (0.001, 0.1)) -> float:
        """The area under the ROC curve over log10(FPR) in ``fpr_range``, divided by the range's
        width in log10 units (so in [0, 1]), as torchmetrics' ``BinaryLogAUC``: the TPR at each
        end of the range read on the curve's segment that starts at the last point with
        FPR <= it (linear in FPR), then the trapezoid in (log10 FPR, TPR) over those two points
        and every point of the full curve between them. nan when there are no positives or no
        negatives. From a binned state the points are the bin edges. O(T).

        Parameters
        ----------
        fpr_range : tuple of float, default (0.001, 0.1)
            ``(low, high)`` with 0 < low < high <= 1.

        Returns
        -------
        float
            The normalised log-FPR area.
        """
        lo, hi = _fpr_range(fpr_range)
        if not (self.counts.total_pos > 0 and self.counts.total_neg > 0):
            return math.nan
        fpr, tpr, _ = roc_arrays(self.counts)
        ends = np.array([lo, hi])
        j = np.clip(np.searchsorted(fpr, ends, side="right") - 1, 0, fpr.shape[0] - 2)
        dx = fpr[j + 1] - fpr[j]
        slope = np.divide(tpr[j + 1] - tpr[j], dx, out=np.zeros(2), where=dx > 0)
        # both coordinates rise along the curve: each sorted on its own keeps the pairs
        x = np.sort(np.concatenate([fpr, ends]))
        y = np.sort(np.concatenate([tpr, tpr[j] + slope * (ends - fpr[j])]))
        with np.errstate(divide="ignore"):
            lx = np.log10(x)
        bounds = np.log10(ends)
        first = int(np.flatnonzero(lx == bounds[0])[-1])
        last = int(np.flatnonzero(lx == bounds[1])[-1])
        return float(np.trapezoid(y[first:last + 1], lx[first:last + 1]) / (bounds[1] - bounds[0]))

    def envelope(self) -> tuple[Polyline, Polyline]:
        """``(lower, upper)``, each an ``(fpr, tpr)`` polyline from (0, 0) to (1, 1): the exact
        ROC curve lies between them. Exact curve: both are the curve. O(T).

        Returns
        -------
        (lower, upper) : tuple of Polyline
            Two ``(fpr, tpr)`` array pairs.
        """
        return roc_envelope(self.counts)

    _output_columns = ("fpr", "tpr", "thresholds", "exact")
    _area_name = "AUC"


def _fpr_range(fpr_range: Any) -> tuple[float, float]:
    """``(low, high)`` with 0 < low < high <= 1, as floats; ``ValueError`` naming ``fpr_range``."""
    try:
        lo, hi = (float(v) for v in fpr_range)
    except (TypeError, ValueError):
        raise ValueError(f"fpr_range: must be two numbers (low, high), got {fpr_range!r}") from None
    if not 0 < lo < hi <= 1:
        raise ValueError(f"fpr_range: must satisfy 0 < low < high <= 1, got {fpr_range!r}")
    return lo, hi


@filled
class PRCurveResult(_CurveResult):
    """A precision-recall curve: ``precision``, ``recall``, ``thresholds``, one point per distinct
    score in decreasing-threshold order (scikit-learn's ``precision_recall_curve`` reversed,
    without its appended (recall 0, precision 1) point). Recall is nan when there are no
    positives.

    From a binned state the points are at the bin edges, each an exact point of the exact curve.
    The exact curve's points with a threshold in [thresholds[i], thresholds[i - 1]) (bin i) have
    recall in [recall[i - 1], recall[i]] (recall[-1] = 0) and precision in
    [``precision_low[i]``, ``precision_high[i]``] = [tp_{i-1} / (tp_{i-1} + fp_i), tp_i / (tp_i +
    fp_{i-1})] (the box's worst and best corners); ``exact[i]`` is True when that range is the
    single value ``precision[i]`` (always for exact accumulators). ``envelope()`` draws those
    boxes, ``area_bounds(method)`` certifies every area.

    Attributes
    ----------
    precision, recall : numpy.ndarray
        Precision and recall at each threshold (decreasing threshold).
    thresholds : numpy.ndarray
        The distinct scores (or bin edges), decreasing.
    precision_low, precision_high : numpy.ndarray
        The certified range of the exact curve's precision in each bin (equal to ``precision`` for
        exact accumulators).
    exact : numpy.ndarray of bool
        Whether that range is a single value.
    {curves: read_from, is_exact, totals}

    Examples
    --------
    {example: ranking}
    >>> curve = sm.PRCurve().update(y_true, y_score).compute()
    >>> precision, recall, thresholds = curve
    >>> precision.tolist(), recall.tolist()
    ([1.0, 0.5, 0.6666666666666666, 0.5], [0.5, 0.5, 1.0, 1.0])
    >>> curve.area("step"), curve.area("trapezoid")
    (0.8333333333333333, 0.7916666666666666)
    >>> curve.best_threshold("f1").threshold
    0.35
    """

    def __init__(self, counts: ThresholdCounts) -> None:
        self.counts = counts
        tps, fps = counts.tps, counts.fps
        ps = tps + fps
        self.precision = np.divide(tps, ps, out=np.zeros(tps.shape), where=ps != 0)
        if counts.total_pos > 0:
            self.recall = tps / counts.total_pos
        else:
            self.recall = np.full(tps.shape, np.nan)
        self.thresholds = counts.thresholds
        if counts.binned:
            tp0, fp0 = counts.previous()
            self.precision_low = _corner_precision(tp0, fps, 1.0)
            self.precision_high = _corner_precision(tps, fp0, 0.0)
        else:
            self.precision_low = self.precision_high = self.precision
        self.exact = self.precision_low == self.precision_high

    @filled
    def area(self, method: str = "step") -> float:
        """Area under the PR curve. ``"step"``: average precision (no interpolation);
        ``"interpolated"``: interpolated AP; ``"eleven_point"``: 11-point interpolated AP;
        ``"trapezoid"``: trapezoidal area over the curve with the (recall 0, precision 1) start
        point, i.e. scikit-learn's ``auc(recall, precision)`` -- optimistic, labelled as such.
        nan when there are no positives. Binned state: the value over the bin edges (a bin's
        scores count as tied).

        Parameters
        ----------
        {curves: pr_area}

        Returns
        -------
        float
            The area (nan without positives).
        """
        if method == "step":
            return average_precision(self.counts)
        if method == "interpolated":
            return average_precision(self.counts, interpolated=True)
        if method == "eleven_point":
            return average_precision(self.counts, eleven_point=True)
        if method == "trapezoid":
            if self.counts.total_pos <= 0:
                return math.nan
            r = np.concatenate([[0.0], self.recall])
            p = np.concatenate([[1.0], self.precision])
            return float(np.trapezoid(p, r))
        raise ValueError(
            f"method: must be 'step', 'interpolated', 'eleven_point' or 'trapezoid', got {method!r}"
        )

    @filled
    def area_bounds(self, method: str = "step") -> tuple[float, float]:
        """Certified (low, high) of ``area(method)`` on the exact data; (v, v) for an exact
        curve. Step / interpolated / 11-point: :func:`average_precision_bounds`; trapezoid: the
        exact polyline stays in the boxes, so Σ_i Δrecall_i · precision_low/high[i]. O(T).

        Parameters
        ----------
        {curves: pr_area}

        Returns
        -------
        (low, high) : tuple of float
            The certified range of the area on the exact data.
        """
        v = self.area(method)
        if math.isnan(v) or not self.counts.binned:
            return v, v
        if method == "trapezoid":
            dr = np.diff(self.recall, prepend=0.0)
            lo = float(np.sum(dr * self.precision_low))
            hi = float(np.sum(dr * self.precision_high))
            lo, hi = guard(lo, hi)
            return min(lo, v), max(hi, v)
        return average_precision_bounds(self.counts, method == "interpolated", method == "eleven_point")

    def envelope(self) -> tuple[Polyline, Polyline]:
        """``(lower, upper)``, each a ``(recall, precision)`` step polyline over recall from 0:
        bin i spans recall [recall[i - 1], recall[i]] at ``precision_low[i]`` /
        ``precision_high[i]``; every point of the exact PR curve lies between them. O(T).

        Returns
        -------
        (lower, upper) : tuple of Polyline
            Two ``(recall, precision)`` array pairs.
        """
        r0 = np.concatenate([[0.0], self.recall])[:-1]
        x = np.stack([r0, self.recall], 1).ravel()
        return (
            (x, np.repeat(self.precision_low, 2)),
            (x, np.repeat(self.precision_high, 2)),
        )

    _output_columns = ("precision", "recall", "thresholds", "precision_low", "precision_high", "exact")
    _area_name = "AP"


def _corner_precision(tp: np.ndarray, fp: np.ndarray, empty: float) -> np.ndarray:
    """tp / (tp + fp) at a box corner. A corner (0, 0) is no point of the curve: as the low
    corner (tp_{i-1}, fp_i) it means the bin holds only positives (every point has precision
    1), as the high corner (tp_i, fp_{i-1}) only negatives (precision 0): ``empty``."""
    den = tp + fp
    return np.divide(tp, den, out=np.full(tp.shape, empty), where=den != 0)
