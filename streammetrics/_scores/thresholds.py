"""One kernel for every ranking curve: counts at distinct thresholds (docs/definitions/ranking.md).

Everything score-based is a view of :class:`ThresholdCounts` -- for thresholds t_1 > t_2 > ...,
the (weighted) number of positives ``tps`` and negatives ``fps`` with score >= t, plus the totals
P and N. ROC and PR curves, AUROC with ``max_fpr``, average precision (plain, interpolated,
11-point), the trapezoidal PR area and threshold selection are all computed from it, exactly as
scikit-learn factors its curves through ``_binary_clf_curve``. The exact sorted buffer produces
the counts by ranking sorted scores (:func:`counts_from_sorted`); any other producer (binned
counts: cumulative sums of per-bin counts, :func:`counts_from_bins`) feeds the same views.

The certificates live here too: every ``*_bounds`` function returns a certified (low, high)
interval holding the value on the exact data behind binned counts, and (v, v) for exact counts;
:func:`guard` widens computed ends against the rounding of their own evaluation.

Conventions: a sample is predicted positive at threshold t iff its score >= t; tied scores move
together; ROC curves start at (0, 0) with threshold +inf (scikit-learn's layout); PR curves have
one point per distinct score in decreasing-threshold order (without scikit-learn's appended
(recall 0, precision 1) point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from streammetrics._scores.exact.sort_kernels import suffix_sums, suffix_weight, threshold_counts
from streammetrics._scores.levels import level_reach

#: A curve as (x, y) arrays.
Polyline = tuple[np.ndarray, np.ndarray]


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
    #: (the positives' scores ascending, their weights) where the counts were summed from
    #: weights (None: unit weights or bins; references, not copies): what the 11-point AP's
    #: exact level decisions read (:func:`streammetrics._scores.levels.level_reach`).
    pos_runs: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False, repr=False)

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


def counts_from_sorted(
    pos: np.ndarray,
    pos_w: np.ndarray | None,
    neg: np.ndarray,
    neg_w: np.ndarray | None,
    thresholds: np.ndarray | None = None,
    *,
    positive_only: bool = False,
) -> ThresholdCounts:
    """Counts at ``thresholds`` (default: every distinct score; ``positive_only``: every
    distinct positive score) from ascending score arrays.

    ``pos_w`` / ``neg_w`` are the weights (``None``: unit weights). Cost O(n) for the default
    thresholds (one linear merge of the two sorted runs, see
    :func:`streammetrics._scores.exact.sort_kernels.threshold_counts`), O((n + T) log n) for T given ones
    (``positive_only``: T distinct positive scores, ranked among the negatives only).
    """
    if positive_only:
        return _positive_threshold_counts(pos, pos_w, neg, neg_w)
    runs = None if pos_w is None else (pos, pos_w)
    if thresholds is None:  # one linear merge of the two runs, no binary search
        return ThresholdCounts(*threshold_counts(pos, pos_w, neg, neg_w), pos_runs=runs)
    # totals read from the same suffix sums as the counts, so the lowest threshold gives
    # exactly P, N
    tps, total_pos = _suffix_weights(pos, pos_w, thresholds)
    fps, total_neg = _suffix_weights(neg, neg_w, thresholds)
    return ThresholdCounts(np.asarray(thresholds, dtype=np.float64), tps, fps, total_pos, total_neg,
                           pos_runs=runs)


def _positive_threshold_counts(
    pos: np.ndarray, pos_w: np.ndarray | None, neg: np.ndarray, neg_w: np.ndarray | None
) -> ThresholdCounts:
    """Counts at every distinct positive score: the positives above each come from the run
    starts of ``pos`` (no search), the negatives from one binary search of the ascending
    distinct scores in ``neg``; one suffix sum per weighted group gives counts and total.
    The values equal those of the given-thresholds path. O(P + T log N)."""
    n_pos, n_neg = pos.shape[0], neg.shape[0]
    new = np.empty(n_pos, dtype=bool)
    if n_pos:
        new[0] = True
        np.not_equal(pos[1:], pos[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    asc = pos[starts]  # distinct positive scores, ascending
    pos_above = (n_pos - starts)[::-1]
    neg_above = (n_neg - np.searchsorted(neg, asc, "left"))[::-1]
    return counts_from_ranks(asc[::-1].astype(np.float64), (pos_above, pos_w, n_pos),
                             (neg_above, neg_w, n_neg), pos_scores=pos)


def counts_from_ranks(
    thresholds: np.ndarray,
    pos: tuple[np.ndarray, np.ndarray | None, int],
    neg: tuple[np.ndarray, np.ndarray | None, int],
    pos_scores: np.ndarray | None = None,
) -> ThresholdCounts:
    """Counts at ``thresholds`` given, per group, how many of its scores are >= each.

    Parameters
    ----------
    thresholds : ndarray
        Decreasing thresholds (carried, not read).
    pos, neg : (above, weights, n)
        Per group of ``n`` ascending scores with ``weights`` (None: unit weights): ``above[i]``
        of them score >= ``thresholds[i]`` (int; e.g. ``n - searchsorted(v, t, "left")``).
    pos_scores : ndarray, optional
        The positives' ascending scores: with weights, kept as the counts' ``pos_runs`` (the
        11-point AP's exact levels read them).

    Returns
    -------
    ThresholdCounts
        tps / fps the weight of those top elements (summed from the top, as
        :func:`counts_from_sorted`), the totals the groups' weights. O(n + T).
    """
    tps, total_pos = _weigh(pos[1], pos[0], pos[2])
    fps, total_neg = _weigh(neg[1], neg[0], neg[2])
    runs = None if pos[1] is None or pos_scores is None else (pos_scores, pos[1])
    return ThresholdCounts(thresholds, tps, fps, total_pos, total_neg, pos_runs=runs)


def _weigh(w: np.ndarray | None, above: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    """(weight of the top ``above[i]`` elements of an ascending group of ``n`` with weights
    ``w``, the group's total), from one suffix sum (None: unit weights). O(n)."""
    if w is None:
        return suffix_weight(None, above), float(n)
    top = suffix_sums(w)
    return top[above], float(top[n])


def _suffix_weights(v: np.ndarray, w: np.ndarray | None, t: np.ndarray) -> tuple[np.ndarray, float]:
    """(weight of the elements of ascending ``v`` that are >= each t, total weight), summed from
    the top (the order scikit-learn's cumulative sums use), with one cumulative sum. O(n + T log n)."""
    n = v.shape[0]
    return _weigh(w, n - np.searchsorted(v, t, "left"), n)


def distinct_desc(v: np.ndarray) -> np.ndarray:
    """Distinct values of an ascending array, in decreasing order (float64). O(n)."""
    if v.shape[0] == 0:
        return v.astype(np.float64)
    last = np.empty(v.shape[0], dtype=bool)
    np.not_equal(v[1:], v[:-1], out=last[:-1])
    last[-1] = True
    return v[last][::-1].astype(np.float64)


def counts_from_bins(
    pos: np.ndarray, neg: np.ndarray, edges: np.ndarray, binned: bool
) -> ThresholdCounts:
    """Counts at the lower edges of bins given in *increasing* score order: per bin its
    positive and negative weight (``pos``, ``neg``) and the smallest score it can hold
    (``edges``). The counts of "score >= edge" are exact; ``binned`` says whether a bin may hold
    several distinct scores (then the order inside it is unknown and the views certify it).
    The one place bins become threshold counts. O(b)."""
    tps, fps = np.cumsum(pos[::-1]), np.cumsum(neg[::-1])
    P = float(tps[-1]) if tps.shape[0] else 0.0
    N = float(fps[-1]) if fps.shape[0] else 0.0
    return ThresholdCounts(np.asarray(edges, dtype=np.float64)[::-1], tps, fps, P, N, binned)


def drop_intermediate_points(counts: ThresholdCounts) -> ThresholdCounts:
    """Drop thresholds whose ROC point is collinear with its neighbours (scikit-learn's rule:
    keep the ends and every point where the second difference of fps or tps is non-zero)."""
    if counts.fps.shape[0] <= 2:
        return counts
    idx = kept_points(counts)
    return ThresholdCounts(
        counts.thresholds[idx],
        counts.tps[idx],
        counts.fps[idx],
        counts.total_pos,
        counts.total_neg,
        counts.binned,
    )


def kept_points(counts: ThresholdCounts) -> np.ndarray:
    """Indices of the points :func:`drop_intermediate_points` keeps. O(T)."""
    fps, tps = counts.fps, counts.tps
    if fps.shape[0] <= 2:
        return np.arange(fps.shape[0])
    keep = np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
    return np.flatnonzero(keep)


def roc_arrays(counts: ThresholdCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds) in scikit-learn's layout: (0, 0) at threshold +inf first, nan
    rates when N (fpr) or P (tpr) is 0. O(T)."""
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
    fpr, tpr, _ = roc_arrays(drop_intermediate_points(counts))
    if max_fpr is None or max_fpr == 1:
        return float(np.trapezoid(tpr, fpr))
    return mcclish(partial_roc_area(fpr, tpr, max_fpr), max_fpr)


def partial_roc_area(fpr: np.ndarray, tpr: np.ndarray, max_fpr: float) -> float:
    """Trapezoidal area under the ROC polyline ``(fpr, tpr)`` (``fpr`` non-decreasing) over
    ``fpr <= max_fpr``, the point at ``max_fpr`` interpolated as scikit-learn does
    (``np.interp`` between the two points around it): 0 for a polyline starting beyond
    ``max_fpr``, its whole area for one ending within. The whole curve gives the partial area
    that :func:`mcclish` standardises; a piece of it (a score range's points, offset by the
    ranges above) gives that piece's part of it. O(T)."""
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    if stop == 0:
        return 0.0
    if stop < fpr.shape[0]:
        y_at = np.interp(max_fpr, [fpr[stop - 1], fpr[stop]], [tpr[stop - 1], tpr[stop]])
        tpr = np.append(tpr[:stop], y_at)
        fpr = np.append(fpr[:stop], max_fpr)
    return float(np.trapezoid(tpr, fpr))


def guard(lo: float, hi: float, floor: float = 0.0, ceil: float = 1.0) -> tuple[float, float]:
    """Widen certified ends by 1e-12 relative against the rounding of their own evaluation."""
    eps = 1e-12
    return max(floor, lo - eps * max(1.0, abs(lo))), min(ceil, hi + eps * max(1.0, abs(hi)))


def roc_envelope(counts: ThresholdCounts) -> tuple[Polyline, Polyline]:
    """``(lower, upper)``: two ROC polylines, each ``(fpr, tpr)`` from (0, 0), between which the
    exact ROC curve lies. Exact counts: both are the curve itself. Binned counts: inside every
    mixed bin the upper one climbs first (the bin's positives ranked above its negatives) and the
    lower one runs right first; elsewhere both are the curve. Their areas are the ends of the
    AUROC certificate (docs/definitions/ranking.md#bounded-memory). O(T)."""
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


def mcclish(partial: float, max_fpr: float) -> float:
    """McClish's standardisation of a partial area over [0, max_fpr] (0.5 for the diagonal, 1
    for a perfect ranking), as scikit-learn's ``roc_auc_score(max_fpr=...)``. O(1)."""
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1 + (partial - min_area) / (max_fpr - min_area))


def roc_auc_certified(
    counts: ThresholdCounts, max_fpr: float | None = None
) -> tuple[float, float, float]:
    """(value, low, high) of the AUROC (McClish-standardised partial AUROC with ``max_fpr``):
    the value of :func:`roc_auc_from_counts` and a certified interval holding the AUROC of the
    exact data behind ``counts`` -- the areas under :func:`roc_envelope`'s polylines (up to
    ``max_fpr``; the standardisation is increasing in the area). Exact counts: (v, v, v). nan
    if P or N is 0. O(T)."""
    v = roc_auc_from_counts(counts, max_fpr)
    if math.isnan(v) or not counts.mixed().any():
        return v, v, v
    stop = 1.0 if max_fpr is None else max_fpr
    (lx, ly), (ux, uy) = roc_envelope(counts)
    lo, hi = partial_roc_area(lx, ly, stop), partial_roc_area(ux, uy, stop)
    if stop != 1.0:
        lo, hi = mcclish(lo, stop), mcclish(hi, stop)
    lo, hi = guard(lo, hi)
    return v, min(lo, v), max(hi, v)


def roc_auc_bounds(counts: ThresholdCounts, max_fpr: float | None = None) -> tuple[float, float]:
    """The (low, high) of :func:`roc_auc_certified`. O(T)."""
    return roc_auc_certified(counts, max_fpr)[1:]


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


def average_precision_certified(
    counts: ThresholdCounts, interpolated: bool = False, eleven_point: bool = False
) -> tuple[float, float, float]:
    """(value, low, high): :func:`average_precision` of ``counts`` and a certified interval
    holding the average precision of the exact data behind them.

    Step AP: :func:`ap_bounds` over the bins. Interpolated and 11-point AP
    are integrals of P_interp(r) = max{precision of a point with recall >= r}, which only grows
    with the point set: the exact points include the exact edge points (low end = the value
    over the edges) and are each dominated by an edge point or a box corner
    (:func:`corner_counts`; high end = the value over edges and corners); both ends are
    attained by some order inside the bins. Exact counts: (v, v, v). nan if P = 0. O(T).
    """
    v = average_precision(counts, interpolated, eleven_point)
    if math.isnan(v) or not counts.binned:
        return v, v, v
    if interpolated or eleven_point:
        if not counts.mixed().any():
            return v, v, v
        hi = average_precision(corner_counts(counts), interpolated, eleven_point)
        lo, hi = guard(v, hi)
        return v, min(lo, v), max(hi, v)
    dp, dn = counts.steps()
    lo, hi = guard(*ap_bounds(dp[::-1], dn[::-1]))
    return v, min(lo, v), max(hi, v)


def average_precision_bounds(
    counts: ThresholdCounts, interpolated: bool = False, eleven_point: bool = False
) -> tuple[float, float]:
    """The (low, high) of :func:`average_precision_certified`. O(T)."""
    return average_precision_certified(counts, interpolated, eleven_point)[1:]


def average_precision(
    counts: ThresholdCounts, interpolated: bool = False, eleven_point: bool = False
) -> float:
    """Average precision from counts at (at least) every threshold where positives occur.

    Step (default): AP = sum_k (R_k - R_{k-1}) P_k, R_0 = 0 (scikit-learn's
    ``average_precision_score``). ``interpolated``: P_k replaced by max_{j >= k} P_j (the best
    precision at recall >= R_k). ``eleven_point``: mean of the interpolated precision at recall
    0, 0.1, ..., 1, a point reaching level l when 10 TP >= l P in the weights' exact sums
    (:func:`streammetrics._scores.levels.level_reach`: O(n) more only when a point's float
    recall lies within its rounding of a level). nan if P = 0. O(T).
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
            # the first point (highest threshold) whose recall reaches each level, decided in
            # the weights' exact sums (``levels.level_reach``)
            reach = level_reach(tps, P, counts.pos_runs, counts.thresholds)
            vals = np.where(reach < tps.shape[0], interp[np.minimum(reach, tps.shape[0] - 1)], 0.0)
            return float(vals.mean())
        precision = interp
    recall = tps / P
    prev = np.concatenate([[0.0], recall[:-1]])
    return float(max(0.0, float(np.sum((recall - prev) * precision))))


# -- certificates from per-bin weights (increasing score) --------------------------------------
def auroc_bounds(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float, float]:
    """(estimate, low, high) of the AUROC from per-bin weights in *increasing* score order.

    Estimate A = (Σ_b p_b·(Σ_{b'<b} n_b') + ½ Σ_b p_b·n_b) / (P·N) (ties-as-half = the trapezoid
    over the bin edges); the exact AUROC lies in A ± ½ Σ_b p_b·n_b / (P·N)
    (docs/definitions/ranking.md#bounded-memory).
    nan if P or N is 0. O(b).
    """
    P, N = float(pos.sum()), float(neg.sum())
    if P <= 0 or N <= 0:
        return math.nan, math.nan, math.nan
    if P * N < 2.0**61 and (pos == np.floor(pos)).all() and (neg == np.floor(neg)).all():
        # integer weights: 2U and the tied mass as exact integers, one correctly rounded division
        pi, ni = pos.astype(np.int64), neg.astype(np.int64)
        bi = np.cumsum(ni) - ni
        tied = int(np.dot(pi, ni))
        u2 = 2 * int(np.dot(pi, bi)) + tied
        den = 2 * int(P) * int(N)
        return u2 / den, max(0.0, (u2 - tied) / den), min(1.0, (u2 + tied) / den)
    below = np.cumsum(neg) - neg
    within = float(np.dot(pos, neg))
    a = (float(np.dot(pos, below)) + 0.5 * within) / (P * N)
    half = 0.5 * within / (P * N)
    return a, max(0.0, a - half), min(1.0, a + half)


def auroc_certified(pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
    """(estimate, low, high) of the AUROC from per-bin weights in *increasing* score order: the
    certificate of :func:`auroc_bounds`, its ends widened by :func:`guard` against their own
    rounding.

    Parameters
    ----------
    pos, neg : numpy.ndarray
        Positive and negative weight of every bin, shape (b,), bins in increasing score order.
    exact : bool
        Every bin holds one distinct score: the estimate is the exact AUROC.

    Returns
    -------
    tuple of float
        ``(a, low, high)``; ``(a, a, a)`` when ``exact`` or undefined (nan: P or N is 0).
        O(b).

    Examples
    --------
    >>> import numpy as np
    >>> auroc_certified(np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0]), exact=True)
    (0.875, 0.875, 0.875)
    """
    a, lo, hi = auroc_bounds(pos, neg)
    if exact or math.isnan(a):
        return a, a, a
    lo, hi = guard(lo, hi)
    return a, lo, hi


def ap_bounds(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """Certified (low, high) of the average precision from per-bin weights in increasing order.

    With T_b, F_b the positive / negative weight above bin b: the high end ranks each bin's
    positives first, (1/P) Σ_b p_b (T_b + p_b) / (T_b + F_b + p_b); the low end ranks its
    negatives first and bounds the positives' precisions from below by an integral,
    (1/P) Σ_b [p_b − (F_b + n_b)·ln(1 + p_b / (T_b + F_b + n_b))] (valid for any weights; for
    unit weights within O(p_b / (T_b + F_b + n_b)²) of the exact minimum of the notes). nan if
    P = 0. O(b).
    """
    P = float(pos.sum())
    if P <= 0:
        return math.nan, math.nan
    p, n = pos[::-1], neg[::-1]  # decreasing score
    T = np.cumsum(p) - p
    F = np.cumsum(n) - n
    m = p > 0
    p, n, T, F = p[m], n[m], T[m], F[m]
    hi = float(np.sum(p * (T + p) / (T + F + p))) / P
    x = T + F + n
    fn = F + n
    with np.errstate(divide="ignore", invalid="ignore"):
        lo_terms = np.where(fn > 0, p - fn * np.log1p(p / np.where(x > 0, x, 1.0)), p)
    lo = float(np.sum(lo_terms)) / P
    return max(0.0, lo), min(1.0, hi)
