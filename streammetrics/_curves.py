"""One kernel for every ranking curve: counts at distinct thresholds (SPEC section 3).

Everything score-based is a view of :class:`ThresholdCounts` -- for thresholds t_1 > t_2 > ...,
the (weighted) number of positives ``tps`` and negatives ``fps`` with score >= t, plus the totals
P and N. ROC and PR curves, AUROC with ``max_fpr``, average precision (plain, interpolated,
11-point), the trapezoidal PR area and threshold selection are all computed from it, exactly as
scikit-learn factors its curves through ``_binary_clf_curve``. The exact sorted buffer produces
the counts by ranking sorted scores (:func:`counts_from_sorted`); any other producer (binned
counts: cumulative sums of per-bin counts) can feed the same views.

Conventions: a sample is predicted positive at threshold t iff its score >= t; tied scores move
together; ROC curves start at (0, 0) with threshold +inf (scikit-learn's layout); PR curves have
one point per distinct score in decreasing-threshold order (without scikit-learn's appended
(recall 0, precision 1) point).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._base import UndefinedMetricWarning

__all__ = [
    "ThresholdCounts",
    "counts_from_sorted",
    "ROCCurveResult",
    "PRCurveResult",
    "OperatingPoint",
    "CRITERIA",
    "average_precision",
    "roc_auc_from_counts",
    "drop_intermediate_points",
]

CRITERIA = (
    "accuracy",
    "youden",
    "closest",
    "tpr_at_tnr",
    "tnr_at_tpr",
    "precision_at_recall",
    "recall_at_precision",
    "f1",
    "fbeta",
)


@dataclass(frozen=True)
class ThresholdCounts:
    """Cumulative counts at distinct thresholds in decreasing order.

    ``tps[i]`` / ``fps[i]``: weight of positives / negatives with score >= ``thresholds[i]``.
    ``total_pos`` / ``total_neg``: P and N over all samples (the counts at the lowest threshold
    when the thresholds cover every score).
    """

    thresholds: np.ndarray
    tps: np.ndarray
    fps: np.ndarray
    total_pos: float
    total_neg: float


def _suffix_weight(v: np.ndarray, w: np.ndarray | None, t: np.ndarray) -> np.ndarray:
    """Weight of the elements of ascending ``v`` that are >= each t (summed from the top, the
    order scikit-learn's cumulative sums use)."""
    n = v.shape[0]
    above = n - np.searchsorted(v, t, "left")
    if w is None:
        return above.astype(np.float64)
    top = np.empty(n + 1)
    top[0] = 0.0
    np.cumsum(w[::-1], out=top[1:])
    return top[above]


def counts_from_sorted(
    pos: np.ndarray,
    pos_w: np.ndarray | None,
    neg: np.ndarray,
    neg_w: np.ndarray | None,
    thresholds: np.ndarray | None = None,
) -> ThresholdCounts:
    """Counts at ``thresholds`` (default: every distinct score) from ascending score arrays.

    ``pos_w`` / ``neg_w`` are the weights (``None``: unit weights). Cost O((n + T) log n) for T
    thresholds: one linear merge of the two sorted runs for the distinct scores, then two
    ``searchsorted`` passes.
    """
    if thresholds is None:
        both = np.concatenate([pos, neg]).astype(np.float64, copy=False)
        both.sort(kind="stable")  # two sorted runs: a linear merge
        if both.shape[0]:
            last = np.empty(both.shape[0], dtype=bool)
            np.not_equal(both[1:], both[:-1], out=last[:-1])
            last[-1] = True
            thresholds = both[last][::-1]
        else:
            thresholds = both
    tps = _suffix_weight(pos, pos_w, thresholds)
    fps = _suffix_weight(neg, neg_w, thresholds)
    # totals summed in the same order as the counts, so the lowest threshold gives exactly P, N
    everything = np.array([-np.inf])
    total_pos = float(_suffix_weight(pos, pos_w, everything)[0])
    total_neg = float(_suffix_weight(neg, neg_w, everything)[0])
    return ThresholdCounts(np.asarray(thresholds, dtype=np.float64), tps, fps, total_pos, total_neg)


def drop_intermediate_points(counts: ThresholdCounts) -> ThresholdCounts:
    """Drop thresholds whose ROC point is collinear with its neighbours (scikit-learn's rule:
    keep the ends and every point where the second difference of fps or tps is non-zero)."""
    fps, tps = counts.fps, counts.tps
    if fps.shape[0] <= 2:
        return counts
    keep = np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
    idx = np.flatnonzero(keep)
    return ThresholdCounts(counts.thresholds[idx], tps[idx], fps[idx], counts.total_pos, counts.total_neg)


def _roc_arrays(counts: ThresholdCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tps = np.concatenate([[0.0], counts.tps])
    fps = np.concatenate([[0.0], counts.fps])
    thr = np.concatenate([[np.inf], counts.thresholds])
    fpr = np.full(fps.shape, np.nan) if counts.total_neg <= 0 else fps / counts.total_neg
    tpr = np.full(tps.shape, np.nan) if counts.total_pos <= 0 else tps / counts.total_pos
    return fpr, tpr, thr


def roc_auc_from_counts(counts: ThresholdCounts, max_fpr: float | None = None) -> float:
    """Trapezoidal area under the ROC curve; with ``max_fpr`` the McClish-standardised partial
    area, as scikit-learn computes it (on the curve without collinear points). nan if P or N is
    0. O(T)."""
    if counts.total_pos <= 0 or counts.total_neg <= 0:
        return math.nan
    fpr, tpr, _ = _roc_arrays(drop_intermediate_points(counts))
    if max_fpr is None or max_fpr == 1:
        return float(np.trapezoid(tpr, fpr))
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    y_at = np.interp(max_fpr, [fpr[stop - 1], fpr[stop]], [tpr[stop - 1], tpr[stop]])
    tpr = np.append(tpr[:stop], y_at)
    fpr = np.append(fpr[:stop], max_fpr)
    partial = float(np.trapezoid(tpr, fpr))
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1 + (partial - min_area) / (max_fpr - min_area))


def average_precision(
    counts: ThresholdCounts, interpolated: bool = False, eleven_point: bool = False
) -> float:
    """Average precision from counts at (at least) every threshold where positives occur.

    Step (default): AP = sum_k (R_k - R_{k-1}) P_k, R_0 = 0 (scikit-learn's
    ``average_precision_score``). ``interpolated``: P_k replaced by max_{j >= k} P_j (the best
    precision at recall >= R_k). ``eleven_point``: mean of the interpolated precision at recall
    0, 0.1, ..., 1. nan if P = 0. O(T).
    """
    P = counts.total_pos
    if P <= 0:
        return math.nan
    tps, fps = counts.tps, counts.fps
    ps = tps + fps
    precision = np.divide(tps, ps, out=np.zeros_like(tps), where=ps != 0)
    if interpolated or eleven_point:
        interp = np.maximum.accumulate(precision[::-1])[::-1]
        if eleven_point:
            levels = np.arange(11)
            # first point (highest threshold) whose recall reaches i/10, compared exactly
            reach = np.searchsorted(tps * 10.0, levels * P, "left")
            vals = np.where(reach < tps.shape[0], interp[np.minimum(reach, tps.shape[0] - 1)], 0.0)
            return float(vals.mean())
        precision = interp
    recall = tps / P
    prev = np.concatenate([[0.0], recall[:-1]])
    return float(max(0.0, float(np.sum((recall - prev) * precision))))


# -- operating points and threshold selection ----------------------------------------------------
@dataclass(frozen=True)
class OperatingPoint:
    """Confusion counts and metrics at one threshold (predicted positive iff score >= threshold).

    ``float(point)`` is the threshold. Undefined ratios are nan.
    """

    threshold: float
    tp: float
    fp: float
    fn: float
    tn: float
    criterion: str | None = None
    value: float | None = field(default=None)

    def __float__(self) -> float:
        return float(self.threshold)

    @staticmethod
    def _ratio(a: float, b: float) -> float:
        return a / b if b > 0 else math.nan

    @property
    def tpr(self) -> float:
        """Recall / sensitivity TP / P."""
        return self._ratio(self.tp, self.tp + self.fn)

    recall = sensitivity = tpr

    @property
    def fpr(self) -> float:
        return self._ratio(self.fp, self.fp + self.tn)

    @property
    def tnr(self) -> float:
        """Specificity TN / N."""
        return self._ratio(self.tn, self.fp + self.tn)

    specificity = tnr

    @property
    def fnr(self) -> float:
        return self._ratio(self.fn, self.tp + self.fn)

    @property
    def precision(self) -> float:
        return self._ratio(self.tp, self.tp + self.fp)

    @property
    def npv(self) -> float:
        return self._ratio(self.tn, self.tn + self.fn)

    @property
    def accuracy(self) -> float:
        return self._ratio(self.tp + self.tn, self.tp + self.fp + self.fn + self.tn)

    @property
    def youden(self) -> float:
        return self.tpr - self.fpr

    @property
    def f1(self) -> float:
        return self.fbeta(1.0)

    def fbeta(self, beta: float = 1.0) -> float:
        b2 = beta * beta
        return self._ratio((1 + b2) * self.tp, (1 + b2) * self.tp + b2 * self.fn + self.fp)

    def __repr__(self) -> str:
        return (
            f"OperatingPoint(threshold={self.threshold!r}, tpr={self.tpr:.6g}, fpr={self.fpr:.6g}, "
            f"precision={self.precision:.6g}, accuracy={self.accuracy:.6g})"
        )


def _point(counts: ThresholdCounts, i: int, criterion: str | None = None) -> OperatingPoint:
    tp, fp = float(counts.tps[i]), float(counts.fps[i])
    return OperatingPoint(
        float(counts.thresholds[i]), tp, fp, counts.total_pos - tp, counts.total_neg - fp, criterion
    )


def operating_point_at(counts: ThresholdCounts, threshold: float) -> OperatingPoint:
    """Counts at an arbitrary threshold: those of the lowest distinct score that is >= it."""
    t = float(threshold)
    if t != t:
        raise ValueError("threshold: must not be NaN")
    thr = counts.thresholds
    # thresholds are decreasing; count of distinct scores >= t
    k = int(thr.shape[0] - np.searchsorted(thr[::-1], t, "left"))
    if k == 0:
        return OperatingPoint(t, 0.0, 0.0, counts.total_pos, counts.total_neg)
    tp, fp = float(counts.tps[k - 1]), float(counts.fps[k - 1])
    return OperatingPoint(t, tp, fp, counts.total_pos - tp, counts.total_neg - fp)


def best_threshold(
    counts: ThresholdCounts, criterion: str, value: float | None = None, beta: float = 1.0
) -> OperatingPoint:
    """The threshold that is best under ``criterion`` among the distinct scores (ties go to the
    higher threshold). See :data:`CRITERIA`; the constrained criteria need ``value`` in [0, 1].
    If no threshold satisfies the constraint (or the criterion is undefined on the data), the
    result has threshold nan and an :class:`UndefinedMetricWarning` is issued. O(T)."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion: must be one of {CRITERIA}, got {criterion!r}")
    constrained = criterion in ("tpr_at_tnr", "tnr_at_tpr", "precision_at_recall", "recall_at_precision")
    if constrained:
        if value is None or isinstance(value, bool):
            raise ValueError(f"value: criterion {criterion!r} needs value= in [0, 1]")
        value = float(value)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"value: must be in [0, 1], got {value!r}")
    elif value is not None:
        raise ValueError(f"value: criterion {criterion!r} takes no value")
    beta = float(beta)
    if criterion == "fbeta" and not (beta > 0 and math.isfinite(beta)):
        raise ValueError(f"beta: must be finite and > 0, got {beta!r}")
    P, N = counts.total_pos, counts.total_neg
    v = 0.0 if value is None else value
    tp, fp = counts.tps, counts.fps
    fn, tn = P - tp, N - fp
    n_t = tp.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = tp / P
        fpr = fp / N
        tnr = tn / N
        precision = tp / (tp + fp)
        if criterion == "accuracy":
            score = (tp + tn) / (P + N)
        elif criterion == "youden":
            score = tpr - fpr
        elif criterion == "closest":
            score = -np.sqrt(fpr * fpr + (1.0 - tpr) ** 2)
        elif criterion == "tpr_at_tnr":
            score = np.where(tnr >= v, tpr, np.nan)
        elif criterion == "tnr_at_tpr":
            score = np.where(tpr >= v, tnr, np.nan)
        elif criterion == "precision_at_recall":
            score = np.where(tpr >= v, precision, np.nan)
        elif criterion == "recall_at_precision":
            score = np.where(precision >= v, tpr, np.nan)
        else:
            b2 = 1.0 if criterion == "f1" else beta * beta
            score = (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)
    if n_t == 0 or np.isnan(score).all():
        warnings.warn(
            f"best_threshold: no threshold satisfies {criterion!r}"
            + (f" with value={value}" if value is not None else "")
            + " on the data seen; returning threshold nan",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return OperatingPoint(math.nan, math.nan, math.nan, math.nan, math.nan, criterion, value)
    i = int(np.nanargmax(score))  # first maximum = highest threshold
    pt = _point(counts, i, criterion)
    return OperatingPoint(pt.threshold, pt.tp, pt.fp, pt.fn, pt.tn, criterion, value)


class _CurveResult:
    """Shared part of the curve results: the counts, ``at`` and ``best_threshold``."""

    counts: ThresholdCounts

    def at(self, threshold: float) -> OperatingPoint:
        """Confusion counts and metrics at ``threshold`` (score >= threshold is positive).
        O(log T)."""
        return operating_point_at(self.counts, threshold)

    def best_threshold(
        self, criterion: str, value: float | None = None, *, beta: float = 1.0
    ) -> OperatingPoint:
        """Best threshold under ``criterion`` (see :data:`CRITERIA`); ties go to the higher
        threshold; candidates are the distinct scores (never the curve's +inf start). O(T)."""
        return best_threshold(self.counts, criterion, value, beta)

    @property
    def total_pos(self) -> float:
        return self.counts.total_pos

    @property
    def total_neg(self) -> float:
        return self.counts.total_neg


class ROCCurveResult(_CurveResult):
    """A ROC curve: ``fpr``, ``tpr``, ``thresholds`` in scikit-learn's layout (``thresholds[0] =
    +inf`` at (0, 0), then the distinct scores in decreasing order). ``drop_intermediate=True``
    keeps only the corners, as ``roc_curve(drop_intermediate=True)``. ``area()`` is the AUROC
    (trapezoid). fpr (tpr) is nan when there are no negatives (positives)."""

    def __init__(self, counts: ThresholdCounts, drop_intermediate: bool = False) -> None:
        self.counts = counts
        shown = drop_intermediate_points(counts) if drop_intermediate else counts
        self.fpr, self.tpr, self.thresholds = _roc_arrays(shown)

    def area(self, max_fpr: float | None = None) -> float:
        """AUROC (McClish-standardised partial area with ``max_fpr``); nan if undefined."""
        return roc_auc_from_counts(self.counts, max_fpr)

    def __iter__(self) -> Any:  # fpr, tpr, thresholds = curve
        return iter((self.fpr, self.tpr, self.thresholds))

    def __repr__(self) -> str:
        return f"ROCCurveResult(points={self.fpr.shape[0]}, P={self.total_pos:g}, N={self.total_neg:g})"


class PRCurveResult(_CurveResult):
    """A precision-recall curve: ``precision``, ``recall``, ``thresholds``, one point per distinct
    score in decreasing-threshold order (scikit-learn's ``precision_recall_curve`` reversed,
    without its appended (recall 0, precision 1) point). Recall is nan when there are no
    positives."""

    def __init__(self, counts: ThresholdCounts) -> None:
        self.counts = counts
        tps, fps = counts.tps, counts.fps
        ps = tps + fps
        self.precision = np.divide(tps, ps, out=np.zeros_like(tps), where=ps != 0)
        if counts.total_pos > 0:
            self.recall = tps / counts.total_pos
        else:
            self.recall = np.full(tps.shape, np.nan)
        self.thresholds = counts.thresholds

    def area(self, method: str = "step") -> float:
        """Area under the PR curve. ``"step"``: average precision (no interpolation);
        ``"interpolated"``: interpolated AP; ``"eleven_point"``: 11-point interpolated AP;
        ``"trapezoid"``: trapezoidal area over the curve with the (recall 0, precision 1) start
        point, i.e. scikit-learn's ``auc(recall, precision)`` -- optimistic, labelled as such.
        nan when there are no positives."""
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

    def __iter__(self) -> Any:  # precision, recall, thresholds = curve
        return iter((self.precision, self.recall, self.thresholds))

    def __repr__(self) -> str:
        return f"PRCurveResult(points={self.precision.shape[0]}, P={self.total_pos:g}, N={self.total_neg:g})"
