"""Certified kernels of the business curves (KS statistic, cumulative gains and lift).

Both read :class:`~streammetrics._scores.thresholds.ThresholdCounts`: exact counts give the exact values
(and (v, v) certificates); binned counts (``binned=True``) are exact at every bin edge, and only
the order inside a bin holding both classes (a *mixed* bin) is unknown. Inside such a bin the
exact curve runs monotonically from the previous edge point (tp0, fp0) to the bin's edge point
(tp1, fp1), so every exact point lies in that box:

* KS = max_t |TPR(t) - FPR(t)|: the edge points are exact points (low end = the maximum over
  them, which is the binned value); |x/P - y/N| over a box is largest at a corner, so the high
  end adds the corners (tp1, fp0) and (tp0, fp1) of every mixed bin.
* Gains at a share q of the samples selected: each sample moves the share by w / W
  (W = P + N) and the gain by w / P (positive) or 0 (negative), so inside a mixed bin the exact
  gain at q lies in [max(g0, g1 - (f1 - q) W / P), min(g1, g0 + (q - f0) W / P)] (pure bins are
  straight segments, exact). The lift bounds are the gain bounds over q.

Complexity: O(T) for T thresholds (bins).
"""

from __future__ import annotations

import math

import numpy as np

from streammetrics._scores.thresholds import ThresholdCounts, guard


def ks_certified(c: ThresholdCounts) -> tuple[float, float, float, float]:
    """(value, low, high, threshold) of the KS statistic max_t |TPR(t) - FPR(t)| of ``c``.

    ``value`` is the maximum over the given thresholds (the exact statistic for exact counts);
    the exact statistic of the data behind binned counts lies in [low, high]; ``threshold`` is
    the highest threshold where ``value`` is attained. All nan when P or N is 0. O(T).
    """
    P, N = c.total_pos, c.total_neg
    if P <= 0 or N <= 0:
        return math.nan, math.nan, math.nan, math.nan
    gap = np.abs(c.tps / P - c.fps / N)
    i = int(np.argmax(gap))
    v, thr = float(gap[i]), float(c.thresholds[i])
    mixed = c.mixed()
    if not mixed.any():
        return v, v, v, thr
    tp0, fp0 = c.previous()
    corners = np.maximum(np.abs(c.tps / P - fp0 / N), np.abs(tp0 / P - c.fps / N))[mixed]
    lo, hi = guard(v, max(v, float(corners.max())))
    return v, min(lo, v), max(hi, v), thr


def gain_bounds(
    fraction: np.ndarray, gain: np.ndarray, mixed: np.ndarray, slope: float, q: float
) -> tuple[float, float]:
    """Certified (low, high) of the exact gain at share ``q`` in [0, 1].

    ``fraction`` / ``gain``: the exact points (increasing share, without the origin);
    ``mixed[i]``: the segment ending at point i may hold both classes in an unknown order;
    ``slope`` = W / P, the steepest a gains curve can rise. Outside mixed segments the curve is
    the straight segment (both ends the interpolated value). O(log T).
    """
    x = np.r_[0.0, fraction]
    g = np.r_[0.0, gain]
    j = int(np.searchsorted(x, q, side="left"))  # x[j - 1] < q <= x[j]
    if j == 0 or j >= x.shape[0] or not mixed[j - 1] or q == x[j]:
        v = float(np.interp(q, x, g))
        return v, v
    f0, f1, g0, g1 = float(x[j - 1]), float(x[j]), float(g[j - 1]), float(g[j])
    lo = max(g0, g1 - (f1 - q) * slope)
    hi = min(g1, g0 + (q - f0) * slope)
    return guard(lo, hi)
