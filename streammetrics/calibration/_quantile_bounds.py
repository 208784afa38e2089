"""Quantile-binned calibration error from bounded bins: an estimate and a certified interval.

The bounded state (``max_bytes=``) keeps, per one-vs-rest column, score bins j (increasing),
each holding values in [lo_j, hi_j] (a single value when the column is exact) with outcome-1
weight p_j and total weight m_j. The exact error on quantile bins (edges e_0..e_K at the
quantiles of the values, :func:`~streammetrics.calibration._quantile.weighted_quantiles`;
``numpy.histogram`` assignment, last bin closed) is, with d_i = w_i (o_i - c_i),
ECE = (1/W) sum_q |sum_{i in q} d_i|.

* Estimate: the same definition on the data with every bin's samples at lo_j -- exact when
  every bin is one distinct value.
* Certificate (``norm="l1"``): the value at rank k of the sorted values lies in the bin whose
  cumulative weight first exceeds k, so each edge e_i lies in [e_i^lo, e_i^hi] (the bins of
  ranks floor(h) and floor(h) + 1). A score bin lies surely in quantile bin q when
  #{i >= 1: e_i^hi <= lo_j} = #{i >= 1: e_i^lo <= hi_j} = q (with K - 1 as the cap);
  otherwise it is *uncertain*. Per q, the sure part's sum S_q = sum p_j - sum_i w_i c_i lies in
  [sum p_j - sum m_j hi_j, sum p_j - sum m_j lo_j]; an uncertain bin's samples add at most
  u_j = p_j (1 - lo_j) + (m_j - p_j) hi_j in absolute value wherever they go. Then
  W ECE <= sum_q max|S_q| + sum_j u_j and W ECE >= sum_q max(0, min|S_q| - sum_{j may reach q} u_j).
  Valid for any data the bins summarise (the estimate's data included).

Complexity: O(bins + K log bins) per column.
"""

from __future__ import annotations

import math

import numpy as np

from .._curves import ThresholdCounts, guard
from ._common import binned_error
from ._quantile import quantile_bin_sums

__all__ = ["bin_summary", "quantile_error_certified"]


def bin_summary(c: ThresholdCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, p, m) per non-empty bin in increasing score order: the value range, the
    outcome-1 weight and the total weight. O(bins)."""
    dp, dn = c.steps()
    lo = c.thresholds[::-1].astype(np.float64)
    p, m = dp[::-1], (dp + dn)[::-1]
    hi = np.r_[lo[1:], 1.0] if c.binned else lo.copy()
    keep = m > 0
    return lo[keep], hi[keep], p[keep], m[keep]


def _estimate(lo: np.ndarray, p: np.ndarray, m: np.ndarray, n_bins: int, norm: str) -> float:
    v = np.repeat(lo, 2)
    w = np.stack([m - p, p], 1).ravel()
    o = np.tile([0.0, 1.0], lo.shape[0])
    keep = w > 0
    b = quantile_bin_sums(v[keep], w[keep], o[keep], n_bins, "right")
    return binned_error(b[:, 0], b[:, 1], b[:, 2], norm)


def quantile_error_certified(c: ThresholdCounts, n_bins: int, norm: str) -> tuple[float, float, float]:
    """(estimate, low, high) of one column's quantile-binned calibration error from its
    bounded counts; low / high certify the exact ``norm="l1"`` error (other norms: the
    interval is (estimate, estimate) only when the column is exact, else (nan, nan)). nan
    when the column is empty. O(bins + n_bins log bins)."""
    lo, hi, p, m = bin_summary(c)
    if m.shape[0] == 0 or m.sum() <= 0:
        return math.nan, math.nan, math.nan
    v = _estimate(lo, p, m, n_bins, norm)
    if not c.binned:
        return v, v, v
    if norm != "l1":
        return v, math.nan, math.nan
    W = float(m.sum())
    cum = np.cumsum(m)
    h = np.maximum((W - 1.0) * np.linspace(0.0, 1.0, n_bins + 1), 0.0)
    k = np.floor(h)
    last = m.shape[0] - 1
    ja = np.minimum(np.searchsorted(cum, k, side="right"), last)
    jb = np.minimum(np.searchsorted(cum, k + 1.0, side="right"), last)
    e_lo, e_hi = lo[ja][1:-1], hi[jb][1:-1]  # the inner edges e_1 .. e_{K-1}
    qmin = np.searchsorted(np.sort(e_hi), lo, side="right")  # edges surely <= every value
    qmax = np.searchsorted(np.sort(e_lo), hi, side="right")  # edges possibly <= some value
    sure = qmin == qmax
    u = p * (1.0 - lo) + (m - p) * hi
    q = qmin[sure]
    s_hi = np.bincount(q, weights=p[sure] - m[sure] * lo[sure], minlength=n_bins)
    s_lo = np.bincount(q, weights=p[sure] - m[sure] * hi[sure], minlength=n_bins)
    big = np.maximum(np.abs(s_lo), np.abs(s_hi))
    small = np.where((s_lo <= 0) & (s_hi >= 0), 0.0, np.minimum(np.abs(s_lo), np.abs(s_hi)))
    # uncertain mass that may reach each quantile bin: a difference array over [qmin, qmax]
    reach = np.zeros(n_bins + 1)
    np.add.at(reach, qmin[~sure], u[~sure])
    np.add.at(reach, qmax[~sure] + 1, -u[~sure])
    reach = np.cumsum(reach)[:n_bins]
    high = (big.sum() + u[~sure].sum()) / W
    low = np.maximum(small - reach, 0.0).sum() / W
    low, high = guard(float(low), float(high))
    return v, min(low, v), max(high, v)
