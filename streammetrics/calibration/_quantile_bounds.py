"""Quantile-binned calibration error from bounded bins: an estimate and a certified interval.

The bounded state (``max_bytes=``) keeps, per one-vs-rest column, score bins j (increasing),
each holding values in [lo_j, hi_j] (a single value when the column is exact) with outcome-1
weight p_j and total weight m_j. The exact error on quantile bins (edges e_0..e_K at the
quantiles of the values, :func:`~streammetrics.calibration._quantile.weighted_quantiles`;
``numpy.histogram`` assignment, last bin closed) is, with d_i = w_i (o_i - c_i),
S_q = sum_{i in q} d_i, n_q = sum_{i in q} w_i and W = sum_q n_q:
l1 = (1/W) sum_q |S_q|, l2 = sqrt((1/W) sum_q S_q^2 / n_q), max = max_{n_q > 0} |S_q| / n_q.

* Estimate: the same definition on the data with every bin's samples at lo_j -- exact when
  every bin is one distinct value.
* Certificate (:func:`quantile_reach`): the value at rank k of the sorted values lies in the
  bin whose cumulative weight first exceeds k, so each edge e_i lies in [e_i^lo, e_i^hi] (the
  bins of ranks floor(h) and floor(h) + 1). A score bin lies surely in quantile bin q when
  every edge placement puts all of [lo_j, hi_j] in q; otherwise it is *uncertain* and may reach
  the quantile bins [qmin_j, qmax_j] (contiguous). Per q, the sure part has weight m_q and its
  sum of d lies in [s_lo, s_hi] = [sum p_j - sum m_j hi_j, sum p_j - sum m_j lo_j]; an
  uncertain bin's samples add at most u_j = p_j (1 - lo_j) + (m_j - p_j) hi_j to |S_q| and
  at least as much weight as that. With a_q = max(|s_lo|, |s_hi|), b_q = min |S| over
  [s_lo, s_hi], R_q the u of the uncertain bins that may reach q and M_q their weight:

  - l1: sum_q max(0, b_q - R_q) <= W l1 <= sum_q a_q + sum_j u_j;
  - l2: W l2^2 >= sum_{m_q > 0} max(0, b_q - R_q)^2 / (m_q + M_q) and l2 >= l1 (Jensen);
    W l2^2 <= sum_q (a_q + R_q)^2 / (m_q + R_q) ((a + x)^2 / (b + y) with x <= y and a <= b is
    largest at y = x = R_q) and l2^2 <= l1 (every |S_q| <= n_q);
  - max: max_{m_q > 0} max(0, b_q - R_q) / (m_q + M_q) <= max <= max_q (a_q + R_q) / (m_q + R_q)
    (and <= 1), and max >= l2; also |S_q| / n_q <= max(a_q / m_q, g_q) (a mediant), g_q the
    largest max(1 - lo_j, hi_j) over the uncertain bins that may reach q (each of their
    samples has |o - c| <= g_q); l2's upper end uses the same per-bin gap.

  Valid for any data the bins summarise (the estimate's data included).

Complexity: O(bins + n_bins log bins) per column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from streammetrics._scores.protocol import ascending_steps
from streammetrics._scores.thresholds import ThresholdCounts, guard

from ._common import binned_error
from ._quantile import quantile_bin_sums, quantile_positions


def bin_summary(c: ThresholdCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, p, m) per non-empty bin in increasing score order: the value range, the
    outcome-1 weight and the total weight. O(bins)."""
    lo, m, p = ascending_steps(c, drop_empty=False)
    hi = np.r_[lo[1:], 1.0] if c.binned else lo
    keep = m > 0
    if keep.all():
        return lo, hi, p, m
    return lo[keep], hi[keep], p[keep], m[keep]


@dataclass(frozen=True)
class QuantileReach:
    """Per quantile bin q (arrays of n_bins) what the bounded bins certify (module docstring).

    ``m``, ``p``: weight and outcome-1 weight of the bins surely in q; ``c_lo``, ``c_hi``:
    bounds on their sum of w c; ``reach_m``, ``reach_p``, ``reach_u``: weight, outcome-1
    weight and u of the uncertain bins that may reach q; ``unc_lo``, ``unc_hi``: the value range
    of those (nan when none); ``edge_lo``, ``edge_hi`` (n_bins + 1): bounds on the edges;
    ``u_total``: u of every uncertain bin; ``total``: W.
    """

    m: np.ndarray
    p: np.ndarray
    c_lo: np.ndarray
    c_hi: np.ndarray
    reach_m: np.ndarray
    reach_p: np.ndarray
    reach_u: np.ndarray
    unc_lo: np.ndarray
    unc_hi: np.ndarray
    edge_lo: np.ndarray
    edge_hi: np.ndarray
    u_total: float
    total: float


def _spread(qmin: np.ndarray, qmax: np.ndarray, x: np.ndarray, n_bins: int) -> np.ndarray:
    """Per q, the sum of x_j over the j with qmin_j <= q <= qmax_j (a difference array)."""
    acc = np.zeros(n_bins + 1)
    np.add.at(acc, qmin, x)
    np.add.at(acc, qmax + 1, -x)
    return np.cumsum(acc)[:n_bins]


def quantile_reach(
    lo: np.ndarray, hi: np.ndarray, p: np.ndarray, m: np.ndarray, n_bins: int,
    side: Literal["left", "right"],
) -> QuantileReach:
    """The certificate's per-quantile-bin quantities of non-empty bins (lo, hi, p, m) for
    ``side="right"`` (``numpy.histogram``: bin = #inner edges <= value) or ``"left"``
    (``calibration_curve``: #inner edges < value). O(bins + n_bins log bins)."""
    W = float(m.sum())
    cum = np.cumsum(m)
    h = quantile_positions(W, np.linspace(0.0, 1.0, n_bins + 1))  # as the exact edges round them
    k = np.floor(h)
    last = m.shape[0] - 1
    ja = np.minimum(np.searchsorted(cum, k, side="right"), last)
    jb = np.minimum(np.searchsorted(cum, k + 1.0, side="right"), last)
    edge_lo, edge_hi = lo[ja], hi[jb]
    # inner edges e_1 .. e_{K-1}: surely below every value of bin j / possibly below some value
    qmin = np.searchsorted(np.sort(edge_hi[1:-1]), lo, side=side)
    qmax = np.searchsorted(np.sort(edge_lo[1:-1]), hi, side=side)
    sure = qmin == qmax
    u = p * (1.0 - lo) + (m - p) * hi
    q, un = qmin[sure], ~sure

    def per_q(x: np.ndarray) -> np.ndarray:
        return np.bincount(q, weights=x[sure], minlength=n_bins)

    qa, qb = qmin[un], qmax[un]
    unc_lo, unc_hi = np.full(n_bins, math.nan), np.full(n_bins, math.nan)
    hit = np.zeros(n_bins, dtype=bool)
    if qa.size:  # qmin, qmax rise with j: the uncertain bins reaching q are a contiguous run
        bins = np.arange(n_bins)
        first = np.searchsorted(qb, bins, side="left")
        final = np.searchsorted(qa, bins, side="right") - 1
        hit = first <= final
        unc_lo[hit] = lo[un][first[hit]]
        unc_hi[hit] = hi[un][final[hit]]

    def reach(x: np.ndarray) -> np.ndarray:  # exactly 0 where nothing reaches (no cumsum residue)
        return np.where(hit, np.maximum(_spread(qa, qb, x[un], n_bins), 0.0), 0.0)

    return QuantileReach(
        m=per_q(m), p=per_q(p), c_lo=per_q(m * lo), c_hi=per_q(m * hi),
        reach_m=reach(m), reach_p=reach(p), reach_u=reach(u), unc_lo=unc_lo, unc_hi=unc_hi,
        edge_lo=edge_lo, edge_hi=edge_hi, u_total=float(u[un].sum()), total=W,
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den where den > 0, else 0."""
    out = np.zeros(num.shape[0])
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def certified_interval(r: QuantileReach, norm: str) -> tuple[float, float]:
    """(low, high) holding the exact ``norm`` error (module docstring). O(n_bins)."""
    W = r.total
    s_lo, s_hi = r.p - r.c_hi, r.p - r.c_lo
    big = np.maximum(np.abs(s_lo), np.abs(s_hi))
    small = np.where((s_lo <= 0) & (s_hi >= 0), 0.0, np.minimum(np.abs(s_lo), np.abs(s_hi)))
    sure_gap = np.maximum(small - r.reach_u, 0.0)
    l1 = (float(sure_gap.sum() / W), float((big.sum() + r.u_total) / W))
    if norm == "l1":
        return l1
    full = r.m > 0
    lower_gap = _ratio(sure_gap * full, r.m + r.reach_m)  # |S_q| / n_q at least
    # |S_q| / n_q at most: (a + x) / (b + y) <= (a + R) / (b + R), and <= max(a / b, x / y)
    # where an uncertain sample's |o - c| is at most max(1 - lo_j, hi_j) (largest at the ends
    # of the run of bins reaching q)
    reached = np.isfinite(r.unc_lo)
    per_unc = np.where(reached, np.maximum(1.0 - np.nan_to_num(r.unc_lo), np.nan_to_num(r.unc_hi)), 0.0)
    upper_gap = np.minimum(_ratio(big + r.reach_u, r.m + r.reach_u),
                           np.maximum(_ratio(big, r.m), per_unc))
    upper_gap = np.minimum(upper_gap, 1.0)
    l2_low = max(math.sqrt(float((lower_gap * sure_gap).sum() / W)), l1[0])
    l2_high = math.sqrt(min(float((upper_gap * (big + r.reach_u)).sum() / W), l1[1]))
    if norm == "l2":
        return l2_low, l2_high
    return max(float(lower_gap.max()), l2_low), float(upper_gap.max())


def quantile_error_certified(
    values: tuple[np.ndarray, np.ndarray, np.ndarray], c: ThresholdCounts | None, n_bins: int, norm: str
) -> tuple[float, float, float]:
    """(estimate, low, high) of one column's quantile-binned calibration error; low / high
    certify the exact error for every norm (module docstring).

    ``values``: the column's ascending (values, weights, outcome-1 weights)
    (:meth:`~streammetrics._scores.protocol.ScoreState.sorted_values`: the samples of an exact
    column, every bin at its lower edge for bins); ``c``: the column's bounded counts, None for
    an exact column (then (v, v, v)). nan when the column is empty.
    O(len(values) + n_bins log len(values)), + O(bins) for the certificate.
    """
    v_, m_, p_ = values
    if v_.shape[0] == 0 or m_.sum() <= 0:
        return math.nan, math.nan, math.nan
    b = quantile_bin_sums(v_, m_, p_, n_bins, "right")
    v = binned_error(b[:, 0], b[:, 1], b[:, 2], norm)
    if c is None or not c.binned:
        return v, v, v
    lo, hi, p, m = bin_summary(c)
    low, high = guard(*certified_interval(quantile_reach(lo, hi, p, m, n_bins, "right"), norm))
    return v, min(low, v), max(high, v)
