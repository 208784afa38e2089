"""Operating points of a ranking curve and threshold selection.

An :class:`OperatingPoint` is the confusion counts at one threshold (predicted positive iff
score >= threshold) with every metric derived from them; :func:`operating_point_at` reads one at
any threshold and :func:`best_threshold` picks the best distinct score under one of
:data:`CRITERIA`. Both work on :class:`~streammetrics._scores.thresholds.ThresholdCounts` from any score
state; from binned counts they carry certified ranges (count ranges inside a bin, a
``score_bound`` on what a threshold inside a bin could reach).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import Param, check_param, real_param
from streammetrics._core.warn import warn
from streammetrics._scores.thresholds import ThresholdCounts, guard

#: The criteria :func:`best_threshold` takes.
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

_METRICS = ("tpr", "recall", "sensitivity", "fpr", "tnr", "specificity", "fnr", "precision", "npv",
            "accuracy", "youden", "f1", "fbeta")

# The arguments checked by ``check_param`` (messages as "<name>: <rule>, got <value>"); ``value``
# and ``beta`` are first made floats by ``real_param``, so the range messages show the float.
_METRIC = Param("choice", f"must be one of {_METRICS}", choices=_METRICS)
_CRITERION = Param("choice", f"must be one of {CRITERIA}", choices=CRITERIA)
_VALUE = Param("real", "must be in [0, 1]", low=0.0, high=1.0)
_BETA = Param("real", "must be finite and > 0", low=0.0, low_open=True)


@filled
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

    Attributes
    ----------
    threshold : float
        The threshold (``float(point)``).
    tp, fp, fn, tn : float
        The (weighted) confusion counts at it.
    criterion : str, optional
        The criterion that chose it (from ``best_threshold``).
    value : float, optional
        The constraint of a constrained criterion.
    score, score_bound : float, optional
        The criterion's value here, and a certified upper bound over every threshold (from
        ``best_threshold``).
    search_range : tuple of float, optional
        The open score interval outside of which no strictly better threshold exists (binned
        counts).
    tp_range, fp_range : tuple of float, optional
        Certified ranges of the exact counts (a threshold strictly inside a bin); ``None`` when
        exact.

    Examples
    --------
    {example: ranking}
    >>> point = sm.ROCCurve().update(y_true, y_score).compute().at(0.35)
    >>> point.tp, point.fp, point.fn, point.tn
    (2.0, 1.0, 0.0, 1.0)
    >>> point.tpr, point.precision, point.f1
    (1.0, 0.6666666666666666, 0.8)
    >>> point.bounds("accuracy")
    (0.75, 0.75)
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
        corners left out; nan if all are). O(1).

        Parameters
        ----------
        metric : str
            A metric property name of this class.
        beta : float, default 1.0
            The beta of ``"fbeta"``.

        Returns
        -------
        (low, high) : tuple of float
            The certified range of the metric.
        """
        metric = check_param(metric, "metric", _METRIC)

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
    of the edge above it with ``tp_range`` / ``fp_range`` spanning the bin. O(log T).

    Parameters
    ----------
    counts : ThresholdCounts
        The curve's counts at distinct thresholds.
    threshold : float
        Any threshold (``+-inf`` allowed, not NaN); score >= threshold is predicted positive.

    Returns
    -------
    OperatingPoint
        The counts and metrics there.
    """
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

    Parameters
    ----------
    counts : ThresholdCounts
        The curve's counts at distinct thresholds.
    criterion : str
        One of :data:`CRITERIA`.
    value : float, optional
        The constraint in [0, 1] of ``"tpr_at_tnr"``, ``"tnr_at_tpr"``,
        ``"precision_at_recall"`` and ``"recall_at_precision"``.
    beta : float, default 1.0
        The beta of ``"fbeta"``.

    Returns
    -------
    OperatingPoint
        The chosen threshold with its counts, ``score``, ``score_bound`` and ``search_range``.
    """
    criterion = check_param(criterion, "criterion", _CRITERION)
    constrained = criterion in ("tpr_at_tnr", "tnr_at_tpr", "precision_at_recall", "recall_at_precision")
    if constrained:
        if value is None or isinstance(value, bool):
            raise ValueError(f"value: criterion {criterion!r} needs value= in [0, 1]")
        value = check_param(real_param(value, "value", "a number in [0, 1]"), "value", _VALUE)
    elif value is not None:
        raise ValueError(f"value: criterion {criterion!r} takes no value")
    beta = real_param(beta, "beta", "a finite number > 0")
    if criterion == "fbeta":
        check_param(beta, "beta", _BETA)
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
            bound = guard(top, top, -math.inf, math.inf)[1]
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
