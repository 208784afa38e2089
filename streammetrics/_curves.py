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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._base import UndefinedMetricWarning
from ._params import real_param
from ._sort_kernels import suffix_weight, threshold_counts
from ._warnings import warn

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

#: A curve as (x, y) arrays.
Polyline = tuple[np.ndarray, np.ndarray]

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
    #: True for the lower bin edges of a binned state whose bins may hold several distinct
    #: scores: exact at the thresholds, order unknown inside each bin (module docstring).
    binned: bool = False

    def steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Positive and negative weight added at each threshold (the bins, decreasing score)."""
        return np.diff(self.tps, prepend=0.0), np.diff(self.fps, prepend=0.0)

    def mixed(self) -> np.ndarray:
        """Per threshold i, True when the exact curve between point i - 1 and point i is only
        known to lie in their box: a binned bin holding both classes. All False when exact."""
        if not self.binned:
            return np.zeros(self.tps.shape[0], dtype=bool)
        dp, dn = self.steps()
        return (dp > 0) & (dn > 0)

    def previous(self) -> tuple[np.ndarray, np.ndarray]:
        """(tp, fp) of the point before each threshold (0 before the first)."""
        return np.concatenate([[0.0], self.tps])[:-1], np.concatenate([[0.0], self.fps])[:-1]


def _suffix_weight(v: np.ndarray, w: np.ndarray | None, t: np.ndarray) -> np.ndarray:
    """Weight of the elements of ascending ``v`` that are >= each t (summed from the top, the
    order scikit-learn's cumulative sums use)."""
    return suffix_weight(w, v.shape[0] - np.searchsorted(v, t, "left"))


def counts_from_sorted(
    pos: np.ndarray,
    pos_w: np.ndarray | None,
    neg: np.ndarray,
    neg_w: np.ndarray | None,
    thresholds: np.ndarray | None = None,
) -> ThresholdCounts:
    """Counts at ``thresholds`` (default: every distinct score) from ascending score arrays.

    ``pos_w`` / ``neg_w`` are the weights (``None``: unit weights). Cost O(n) for the default
    thresholds (one linear merge of the two sorted runs, see
    :func:`streammetrics._sort_kernels.threshold_counts`), O((n + T) log n) for T given ones.
    """
    if thresholds is None:  # one linear merge of the two runs, no binary search
        return ThresholdCounts(*threshold_counts(pos, pos_w, neg, neg_w))
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
    if counts.fps.shape[0] <= 2:
        return counts
    idx = _kept_points(counts)
    return ThresholdCounts(
        counts.thresholds[idx],
        counts.tps[idx],
        counts.fps[idx],
        counts.total_pos,
        counts.total_neg,
        counts.binned,
    )


def _kept_points(counts: ThresholdCounts) -> np.ndarray:
    """Indices :func:`drop_intermediate_points` keeps."""
    fps, tps = counts.fps, counts.tps
    if fps.shape[0] <= 2:
        return np.arange(fps.shape[0])
    keep = np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
    return np.flatnonzero(keep)


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
    return _mcclish(float(np.trapezoid(tpr, fpr)), max_fpr)


def _guard(lo: float, hi: float, floor: float = 0.0, ceil: float = 1.0) -> tuple[float, float]:
    """Widen certified ends by 1e-12 relative against the rounding of their own evaluation."""
    eps = 1e-12
    return max(floor, lo - eps * max(1.0, abs(lo))), min(ceil, hi + eps * max(1.0, abs(hi)))


def roc_envelope(counts: ThresholdCounts) -> tuple[Polyline, Polyline]:
    """``(lower, upper)``: two ROC polylines, each ``(fpr, tpr)`` from (0, 0), between which the
    exact ROC curve lies. Exact counts: both are the curve itself. Binned counts: inside every
    mixed bin the upper one climbs first (the bin's positives ranked above its negatives) and the
    lower one runs right first; elsewhere both are the curve. Their areas are the ends of the
    AUROC certificate (SPEC section 3). O(T)."""
    P, N = counts.total_pos, counts.total_neg
    tp0, fp0 = counts.previous()
    mixed = counts.mixed()
    tps, fps = counts.tps, counts.fps

    def poly(mid_tp: np.ndarray, mid_fp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # per threshold: an inserted corner (only where mixed), then the exact point
        x = np.stack([mid_fp, fps], 1).ravel()
        y = np.stack([mid_tp, tps], 1).ravel()
        keep = np.stack([mixed, np.ones_like(mixed)], 1).ravel()
        x, y = np.concatenate([[0.0], x[keep]]), np.concatenate([[0.0], y[keep]])
        fpr = np.full(x.shape, np.nan) if N <= 0 else x / N
        tpr = np.full(y.shape, np.nan) if P <= 0 else y / P
        return fpr, tpr

    return poly(tp0, fps), poly(tps, fp0)


def _partial_area(x: np.ndarray, y: np.ndarray, stop: float) -> float:
    """Area under the polyline (x non-decreasing) over x <= ``stop``. O(len(x))."""
    x0, x1, y0, y1 = x[:-1], x[1:], y[:-1], y[1:]
    dx = x1 - x0
    c1 = np.minimum(x1, stop)
    w = c1 - x0
    inside = (w > 0) & (dx > 0)
    frac = np.divide(w, dx, out=np.zeros_like(w), where=inside)
    y_end = y0 + (y1 - y0) * frac
    return float(np.sum(np.where(inside, w * (y0 + y_end) / 2.0, 0.0)))


def _mcclish(partial: float, max_fpr: float) -> float:
    """McClish's standardisation of a partial area over [0, max_fpr] (0.5 for the diagonal, 1
    for a perfect ranking), as scikit-learn's ``roc_auc_score(max_fpr=...)``. O(1)."""
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1 + (partial - min_area) / (max_fpr - min_area))


def roc_auc_bounds(counts: ThresholdCounts, max_fpr: float | None = None) -> tuple[float, float]:
    """Certified (low, high) of the AUROC (McClish-standardised partial AUROC with ``max_fpr``)
    of the exact data behind ``counts``: the areas under :func:`roc_envelope`'s polylines (up
    to ``max_fpr``; the standardisation is increasing in the area). Exact counts: (v, v). nan
    if P or N is 0. O(T)."""
    v = roc_auc_from_counts(counts, max_fpr)
    if math.isnan(v) or not counts.mixed().any():
        return v, v
    stop = 1.0 if max_fpr is None else max_fpr
    (lx, ly), (ux, uy) = roc_envelope(counts)
    lo, hi = _partial_area(lx, ly, stop), _partial_area(ux, uy, stop)
    if stop != 1.0:
        lo, hi = _mcclish(lo, stop), _mcclish(hi, stop)
    lo, hi = _guard(lo, hi)
    return min(lo, v), max(hi, v)


def corner_counts(counts: ThresholdCounts) -> ThresholdCounts:
    """``counts`` with, before every mixed threshold i, the box corner (tp_i, fp_{i-1}) (the
    bin's positives ranked first): every point of the exact curve is dominated (tp >=, fp <=,
    at a threshold no lower) by one of these points. Exact counts: unchanged. O(T)."""
    mixed = counts.mixed()
    if not mixed.any():
        return counts
    _, fp0 = counts.previous()
    tps = np.stack([counts.tps, counts.tps], 1).ravel()
    fps = np.stack([fp0, counts.fps], 1).ravel()
    thr = np.stack([counts.thresholds, counts.thresholds], 1).ravel()
    keep = np.stack([mixed, np.ones_like(mixed)], 1).ravel()
    return ThresholdCounts(thr[keep], tps[keep], fps[keep], counts.total_pos, counts.total_neg)


def average_precision_bounds(
    counts: ThresholdCounts, interpolated: bool = False, eleven_point: bool = False
) -> tuple[float, float]:
    """Certified (low, high) of the average precision of the exact data behind ``counts``.

    Step AP: :func:`streammetrics._bins.ap_bounds` over the bins. Interpolated and 11-point AP
    are integrals of P_interp(r) = max{precision of a point with recall >= r}, which only grows
    with the point set: the exact points include the exact edge points (low end = the value
    over the edges) and are each dominated by an edge point or a box corner
    (:func:`corner_counts`; high end = the value over edges and corners); both ends are
    attained by some order inside the bins. Exact counts: (v, v). nan if P = 0. O(T).
    """
    v = average_precision(counts, interpolated, eleven_point)
    if math.isnan(v) or not counts.binned:
        return v, v
    if interpolated or eleven_point:
        if not counts.mixed().any():
            return v, v
        hi = average_precision(corner_counts(counts), interpolated, eleven_point)
        lo, hi = _guard(v, hi)
        return min(lo, v), max(hi, v)
    from ._bins import ap_bounds  # _bins imports this module

    dp, dn = counts.steps()
    lo, hi = _guard(*ap_bounds(dp[::-1], dn[::-1]))
    return min(lo, v), max(hi, v)


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
_METRICS = ("tpr", "recall", "sensitivity", "fpr", "tnr", "specificity", "fnr", "precision", "npv",
            "accuracy", "youden", "f1", "fbeta")


@dataclass(frozen=True)
class OperatingPoint:
    """Confusion counts and metrics at one threshold (predicted positive iff score >= threshold).

    ``float(point)`` is the threshold. Undefined ratios are nan.

    Certificates (binned accumulators; for exact ones they are trivial):

    * ``tp_range`` / ``fp_range``: ``None`` when ``tp`` / ``fp`` are the exact counts at the
      threshold; otherwise the certified (low, high) range of the exact count (a threshold
      strictly inside a bin of a binned state; ``tp``/``fp`` are then the counts at the bin edge
      above it, the ``low`` ends). ``bounds(metric)`` gives the certified range of any metric
      (every metric is monotone in tp and in fp, so its extremes are at the box's corners).
    * from ``best_threshold``: ``score`` is the criterion's value at ``threshold`` (exact; for
      ``"closest"`` the negated distance), ``score_bound`` a certified upper bound on the value
      any threshold could reach on the data (equal to ``score`` when this threshold is certainly
      optimal, always for exact accumulators), and ``search_range`` the open score interval
      (low, high) outside of which no strictly better threshold exists (``None`` if none can).
    """

    threshold: float
    tp: float
    fp: float
    fn: float
    tn: float
    criterion: str | None = None
    value: float | None = field(default=None)
    score: float | None = None
    score_bound: float | None = None
    search_range: tuple[float, float] | None = None
    tp_range: tuple[float, float] | None = None
    fp_range: tuple[float, float] | None = None

    def __float__(self) -> float:
        return float(self.threshold)

    @staticmethod
    def _ratio(a: float, b: float) -> float:
        return a / b if b > 0 else math.nan

    @property
    def is_exact(self) -> bool:
        """True when ``tp`` and ``fp`` (so every metric here) are the exact values."""
        return self.tp_range is None and self.fp_range is None

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

    def bounds(self, metric: str, *, beta: float = 1.0) -> tuple[float, float]:
        """Certified (low, high) of ``metric`` (a property name: "tpr", "fpr", "tnr", "fnr",
        "precision", "npv", "accuracy", "youden", "f1", "fbeta", ...) at this threshold:
        (v, v) when exact, else the extremes over the corners of the count box (undefined
        corners left out; nan if all are). O(1)."""
        if metric not in _METRICS:
            raise ValueError(f"metric: must be one of {_METRICS}, got {metric!r}")

        def at(tp: float, fp: float) -> float:
            pt = OperatingPoint(self.threshold, tp, fp, self.tp + self.fn - tp, self.fp + self.tn - fp)
            return pt.fbeta(beta) if metric == "fbeta" else float(getattr(pt, metric))

        if self.is_exact:
            v = at(self.tp, self.fp)
            return v, v
        tps = self.tp_range or (self.tp, self.tp)
        fps = self.fp_range or (self.fp, self.fp)
        vals = np.array([at(t, f) for t in tps for f in fps])
        if np.isnan(vals).all():
            return math.nan, math.nan
        return float(np.nanmin(vals)), float(np.nanmax(vals))

    def __repr__(self) -> str:
        extra = "" if self.is_exact else ", inexact"
        if self.score_bound is not None and self.score is not None and self.score_bound > self.score:
            extra += f", score={self.score:.6g} <= {self.score_bound:.6g}"
        return (
            f"OperatingPoint(threshold={self.threshold!r}, tpr={self.tpr:.6g}, fpr={self.fpr:.6g}, "
            f"precision={self.precision:.6g}, accuracy={self.accuracy:.6g}{extra})"
        )


def _point(counts: ThresholdCounts, i: int, criterion: str | None = None) -> OperatingPoint:
    tp, fp = float(counts.tps[i]), float(counts.fps[i])
    return OperatingPoint(
        float(counts.thresholds[i]), tp, fp, counts.total_pos - tp, counts.total_neg - fp, criterion
    )


def operating_point_at(counts: ThresholdCounts, threshold: float) -> OperatingPoint:
    """Counts at an arbitrary threshold: those of the lowest distinct score that is >= it.
    Binned counts: exact at a bin edge or outside the data; strictly inside a bin the counts
    of the edge above it with ``tp_range`` / ``fp_range`` spanning the bin. O(log T)."""
    t = real_param(threshold, "threshold", "a number (+-inf allowed, not NaN)", allow_inf=True)
    thr = counts.thresholds
    n_t = thr.shape[0]
    # thresholds are decreasing; count of distinct scores >= t
    k = int(n_t - np.searchsorted(thr[::-1], t, "left"))
    tp = float(counts.tps[k - 1]) if k else 0.0
    fp = float(counts.fps[k - 1]) if k else 0.0
    tp_range = fp_range = None
    if counts.binned and k < n_t and (k == 0 or thr[k - 1] != t):
        # t is strictly above bin k's lower edge (and below the next edge): bin k is split
        hi_tp, hi_fp = float(counts.tps[k]), float(counts.fps[k])
        if hi_tp > tp:
            tp_range = (tp, hi_tp)
        if hi_fp > fp:
            fp_range = (fp, hi_fp)
    return OperatingPoint(
        t, tp, fp, counts.total_pos - tp, counts.total_neg - fp, tp_range=tp_range, fp_range=fp_range
    )


def _criterion_scores(
    tp: np.ndarray, fp: np.ndarray, P: float, N: float, criterion: str, v: float, beta: float
) -> np.ndarray:
    """The criterion at counts (tp, fp) (nan where infeasible or undefined); every criterion is
    non-decreasing in tp and non-increasing in fp, feasibility too. O(len(tp))."""
    fn, tn = P - tp, N - fp
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = tp / P
        fpr = fp / N
        tnr = tn / N
        precision = tp / (tp + fp)
        if criterion == "accuracy":
            return (tp + tn) / (P + N)
        if criterion == "youden":
            return tpr - fpr
        if criterion == "closest":
            return -np.sqrt(fpr * fpr + (1.0 - tpr) ** 2)
        if criterion == "tpr_at_tnr":
            return np.where(tnr >= v, tpr, np.nan)
        if criterion == "tnr_at_tpr":
            return np.where(tpr >= v, tnr, np.nan)
        if criterion == "precision_at_recall":
            return np.where(tpr >= v, precision, np.nan)
        if criterion == "recall_at_precision":
            return np.where(precision >= v, tpr, np.nan)
        b2 = 1.0 if criterion == "f1" else beta * beta
        return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


def best_threshold(
    counts: ThresholdCounts, criterion: str, value: float | None = None, beta: float = 1.0
) -> OperatingPoint:
    """The threshold that is best under ``criterion`` among the distinct scores (ties go to the
    higher threshold). See :data:`CRITERIA`; the constrained criteria need ``value`` in [0, 1].
    If no threshold satisfies the constraint (or the criterion is undefined on the data), the
    result has threshold nan and an :class:`UndefinedMetricWarning` is issued.

    Binned counts: the candidates are the bin edges, where the counts (so ``score``) are exact
    and attained; a threshold inside a bin holding both classes (or inside the top bin, whose
    upper neighbour -- nothing predicted positive -- is no candidate) reaches at most the
    criterion at the bin's corner (tp of its lower edge, fp of its upper edge, 0 above the top
    bin): ``score_bound`` is the
    largest of those and ``score`` (certified), ``search_range`` the hull of the bins whose
    corner beats ``score``. Exact counts: ``score_bound = score``, ``search_range = None``. O(T).
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion: must be one of {CRITERIA}, got {criterion!r}")
    constrained = criterion in ("tpr_at_tnr", "tnr_at_tpr", "precision_at_recall", "recall_at_precision")
    if constrained:
        if value is None or isinstance(value, bool):
            raise ValueError(f"value: criterion {criterion!r} needs value= in [0, 1]")
        value = real_param(value, "value", "a number in [0, 1]")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"value: must be in [0, 1], got {value!r}")
    elif value is not None:
        raise ValueError(f"value: criterion {criterion!r} takes no value")
    beta = real_param(beta, "beta", "a finite number > 0")
    if criterion == "fbeta" and not beta > 0:
        raise ValueError(f"beta: must be finite and > 0, got {beta!r}")
    P, N = counts.total_pos, counts.total_neg
    v = 0.0 if value is None else value
    score = _criterion_scores(counts.tps, counts.fps, P, N, criterion, v, beta)
    defined = counts.tps.shape[0] > 0 and not np.isnan(score).all()
    best = float(np.nanmax(score)) if defined else math.nan
    # certificate: the corners of the mixed bins
    bound, search = best, None
    mixed = counts.mixed()
    if counts.binned and mixed.shape[0] and counts.fps[0] > 0:
        # the top bin's points inside may also beat its edge when it holds only negatives: its
        # upper neighbour (nothing predicted positive) is no candidate; its corner is (tp_0, 0)
        mixed[0] = True
    if mixed.any():
        _, fp0 = counts.previous()
        corner = _criterion_scores(counts.tps, fp0, P, N, criterion, v, beta)
        better = mixed & ~np.isnan(corner)
        if defined:
            better &= corner > best
        if better.any():
            idx = np.flatnonzero(better)
            top = float(np.max(corner[idx]))
            bound = _guard(top, top, -math.inf, math.inf)[1]
            upper = np.concatenate([[np.inf], counts.thresholds[:-1]])
            search = (float(counts.thresholds[idx].min()), float(upper[idx].max()))
    if not defined:
        warn(
            f"best_threshold: no threshold satisfies {criterion!r}"
            + (f" with value={value}" if value is not None else "")
            + " on the data seen; returning threshold nan",
            UndefinedMetricWarning,
        )
        nan = math.nan
        return OperatingPoint(nan, nan, nan, nan, nan, criterion, value, nan, bound, search)
    i = int(np.nanargmax(score))  # first maximum = highest threshold
    pt = _point(counts, i, criterion)
    return OperatingPoint(pt.threshold, pt.tp, pt.fp, pt.fn, pt.tn, criterion, value, best, bound, search)


class _CurveResult:
    """Shared part of the curve results: the counts, ``at`` and ``best_threshold``."""

    counts: ThresholdCounts

    def at(self, threshold: float) -> OperatingPoint:
        """Confusion counts and metrics at ``threshold`` (score >= threshold is positive); from a
        binned state, a threshold strictly inside a bin gives count ranges (see
        :class:`OperatingPoint`). O(log T)."""
        return operating_point_at(self.counts, threshold)

    def best_threshold(
        self, criterion: str, value: float | None = None, *, beta: float = 1.0
    ) -> OperatingPoint:
        """Best threshold under ``criterion`` (see :data:`CRITERIA`); ties go to the higher
        threshold; candidates are the distinct scores (never the curve's +inf start), or the bin
        edges of a binned state, where the result is exact, with ``score_bound`` /
        ``search_range`` certifying how much better a threshold inside a bin could be. O(T)."""
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
    """

    def __init__(self, counts: ThresholdCounts, drop_intermediate: bool = False) -> None:
        self.counts = counts
        mixed = counts.mixed()
        if drop_intermediate:
            idx = _kept_points(counts)
            shown = drop_intermediate_points(counts)
            # a kept segment is exact iff every segment it replaces is
            seen = np.concatenate([[0], np.cumsum(mixed)])
            prev = np.concatenate([[-1], idx[:-1]])
            seg_mixed = seen[idx + 1] - seen[prev + 1] > 0
        else:
            shown, seg_mixed = counts, mixed
        self.fpr, self.tpr, self.thresholds = _roc_arrays(shown)
        self.exact = np.concatenate([[True], ~seg_mixed])

    def area(self, max_fpr: float | None = None) -> float:
        """AUROC (McClish-standardised partial area with ``max_fpr``); nan if undefined.
        Binned state: the trapezoid over the bin edges (ties inside a bin count 1/2)."""
        return roc_auc_from_counts(self.counts, max_fpr)

    def area_bounds(self, max_fpr: float | None = None) -> tuple[float, float]:
        """Certified (low, high) of the exact AUROC (partial, standardised, with ``max_fpr``):
        the areas under ``envelope()``; (v, v) for an exact curve. O(T)."""
        return roc_auc_bounds(self.counts, max_fpr)

    def envelope(self) -> tuple[Polyline, Polyline]:
        """``(lower, upper)``, each an ``(fpr, tpr)`` polyline from (0, 0) to (1, 1): the exact
        ROC curve lies between them. Exact curve: both are the curve. O(T)."""
        return roc_envelope(self.counts)

    def __iter__(self) -> Any:  # fpr, tpr, thresholds = curve
        return iter((self.fpr, self.tpr, self.thresholds))

    def __repr__(self) -> str:
        extra = "" if self.is_exact else ", binned"
        return (
            f"ROCCurveResult(points={self.fpr.shape[0]}, P={self.total_pos:g}, "
            f"N={self.total_neg:g}{extra})"
        )


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
    """

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
        if counts.binned:
            tp0, fp0 = counts.previous()
            self.precision_low = _corner_precision(tp0, fps, 1.0)
            self.precision_high = _corner_precision(tps, fp0, 0.0)
        else:
            self.precision_low = self.precision_high = self.precision
        self.exact = self.precision_low == self.precision_high

    def area(self, method: str = "step") -> float:
        """Area under the PR curve. ``"step"``: average precision (no interpolation);
        ``"interpolated"``: interpolated AP; ``"eleven_point"``: 11-point interpolated AP;
        ``"trapezoid"``: trapezoidal area over the curve with the (recall 0, precision 1) start
        point, i.e. scikit-learn's ``auc(recall, precision)`` -- optimistic, labelled as such.
        nan when there are no positives. Binned state: the value over the bin edges (a bin's
        scores count as tied)."""
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

    def area_bounds(self, method: str = "step") -> tuple[float, float]:
        """Certified (low, high) of ``area(method)`` on the exact data; (v, v) for an exact
        curve. Step / interpolated / 11-point: :func:`average_precision_bounds`; trapezoid: the
        exact polyline stays in the boxes, so Σ_i Δrecall_i · precision_low/high[i]. O(T)."""
        v = self.area(method)
        if math.isnan(v) or not self.counts.binned:
            return v, v
        if method == "trapezoid":
            dr = np.diff(self.recall, prepend=0.0)
            lo = float(np.sum(dr * self.precision_low))
            hi = float(np.sum(dr * self.precision_high))
            lo, hi = _guard(lo, hi)
            return min(lo, v), max(hi, v)
        return average_precision_bounds(self.counts, method == "interpolated", method == "eleven_point")

    def envelope(self) -> tuple[Polyline, Polyline]:
        """``(lower, upper)``, each a ``(recall, precision)`` step polyline over recall from 0:
        bin i spans recall [recall[i - 1], recall[i]] at ``precision_low[i]`` /
        ``precision_high[i]``; every point of the exact PR curve lies between them. O(T)."""
        r0 = np.concatenate([[0.0], self.recall])[:-1]
        x = np.stack([r0, self.recall], 1).ravel()
        return (
            (x, np.repeat(self.precision_low, 2)),
            (x, np.repeat(self.precision_high, 2)),
        )

    def __iter__(self) -> Any:  # precision, recall, thresholds = curve
        return iter((self.precision, self.recall, self.thresholds))

    def __repr__(self) -> str:
        extra = "" if self.is_exact else ", binned"
        return (
            f"PRCurveResult(points={self.precision.shape[0]}, P={self.total_pos:g}, "
            f"N={self.total_neg:g}{extra})"
        )


def _corner_precision(tp: np.ndarray, fp: np.ndarray, empty: float) -> np.ndarray:
    """tp / (tp + fp) at a box corner. A corner (0, 0) is no point of the curve: as the low
    corner (tp_{i-1}, fp_i) it means the bin holds only positives (every point has precision
    1), as the high corner (tp_i, fp_{i-1}) only negatives (precision 0): ``empty``."""
    den = tp + fp
    return np.divide(tp, den, out=np.full(tp.shape, empty), where=den != 0)
