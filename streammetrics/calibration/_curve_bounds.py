"""A quantile reliability curve from bounded bins: an estimate and certified per-bin bounds.

Quantile bins as scikit-learn's ``calibration_curve`` (a value on an inner edge in the lower
bin); the bounded state and the per-quantile-bin certificate are those of
:mod:`streammetrics.calibration._quantile_bounds` (:func:`quantile_reach`, ``side="left"``).
Quantile bin q holds the bins surely in it (weight m_q, outcome-1 weight p_q, sum of w c in
[c_lo, c_hi]) and any part of the uncertain bins that may reach it (at most M_q weight of which
P_q outcome-1, values in [u_lo, u_hi]). Then, for the exact curve's bin q when it is non-empty:

* count n_q in [m_q, m_q + M_q];
* prob_true in [p_q / (m_q + M_q - P_q), (p_q + P_q) / (m_q + P_q)] (add every outcome-0 /
  outcome-1 sample that may come);
* prob_pred in [min(c_lo / m_q, (c_lo + M_q u_lo) / (m_q + M_q)), max(c_hi / m_q,
  (c_hi + M_q u_hi) / (m_q + M_q))] (a mean moves monotonically toward the values added), and
  inside [e_q^lo, e_{q+1}^hi] (the bin's own edges).

Rows are the quantile bins that may hold samples (m_q + M_q > 0): while the state is exact,
exactly the non-empty bins, as scikit-learn. The estimate is the curve of the data with every
bin's samples at its lowest value (exact while every bin is one distinct value); a row the
estimate leaves empty shows the middle of its bounds with count 0.

Complexity: O(bins + n_bins log bins) per column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._scores.thresholds import ThresholdCounts

from ._quantile import quantile_bin_sums
from ._quantile_bounds import bin_summary, quantile_reach

_SLACK = 1e-12  # probabilities are in [0, 1]: an absolute widening covers a few roundings


def _safe(num: np.ndarray, den: np.ndarray, fallback: np.ndarray | float) -> np.ndarray:
    ok = den > 0
    out = np.where(ok, 0.0, fallback).astype(np.float64)
    out[ok] = num[ok] / den[ok]
    return out


def bounded_curve(
    values: tuple[np.ndarray, np.ndarray, np.ndarray], c: ThresholdCounts | None, n_bins: int
) -> dict[str, Any]:
    """Fields of a :class:`~streammetrics.calibration.CalibrationCurveResult` of one column:
    ``prob_true``, ``prob_pred``, ``counts`` (the estimate), their ``*_low`` / ``*_high`` bounds,
    ``exact`` and ``bin_index``. ``values``: the column's ascending (values, weights, outcome-1
    weights) (:meth:`~streammetrics._scores.protocol.ScoreState.sorted_values`); ``c``: its bounded
    counts, None for an exact column (then every bound is the value).
    O(len(values) + n_bins log len(values)), + O(bins + n_bins log bins) for the bounds."""
    v, m_, p_ = values
    if v.shape[0] == 0 or m_.sum() <= 0:
        empty = np.zeros(0)
        return {k: empty for k in ("prob_true", "prob_pred", "counts")} | {
            f"{k}_{e}": empty for k in ("prob_true", "prob_pred", "counts") for e in ("low", "high")
        } | {"exact": True, "bin_index": np.zeros(0, dtype=np.intp)}
    est = quantile_bin_sums(v, m_, p_, n_bins, "left")  # bins: every bin's samples at its lowest value
    if c is None or not c.binned:
        full = est[:, 0] > 0
        w = est[full, 0]
        vals = {"prob_true": est[full, 2] / w, "prob_pred": est[full, 1] / w, "counts": w.copy()}
        return vals | {f"{k}_{e}": v.copy() for k, v in vals.items() for e in ("low", "high")} | {
            "exact": True, "bin_index": np.flatnonzero(full)}
    lo, hi, p, m = bin_summary(c)
    r = quantile_reach(lo, hi, p, m, n_bins, "left")
    rows = (r.m + r.reach_m) > 0
    reach_n = r.reach_m - r.reach_p
    t_lo = _safe(r.p, r.m + reach_n, 1.0)
    t_hi = _safe(r.p + r.reach_p, r.m + r.reach_p, 0.0)
    some = r.reach_m > 0
    u_lo, u_hi = np.where(some, r.unc_lo, np.inf), np.where(some, r.unc_hi, -np.inf)
    sure_lo, sure_hi = _safe(r.c_lo, r.m, np.inf), _safe(r.c_hi, r.m, -np.inf)
    with np.errstate(invalid="ignore"):
        mix_lo = _safe(r.c_lo + r.reach_m * np.where(some, r.unc_lo, 0.0), r.m + r.reach_m, np.inf)
        mix_hi = _safe(r.c_hi + r.reach_m * np.where(some, r.unc_hi, 0.0), r.m + r.reach_m, -np.inf)
    p_lo = np.minimum(np.where(r.m > 0, sure_lo, u_lo), np.where(some, mix_lo, np.inf))
    p_hi = np.maximum(np.where(r.m > 0, sure_hi, u_hi), np.where(some, mix_hi, -np.inf))
    p_lo = np.maximum(p_lo, r.edge_lo[:-1])
    p_hi = np.minimum(p_hi, r.edge_hi[1:])
    w = est[:, 0]
    has = w > 0
    with np.errstate(invalid="ignore"):  # inf + -inf only in rows no sample can reach (dropped)
        true = np.where(has, _safe(est[:, 2], w, 0.0), (t_lo + t_hi) / 2)
        pred = np.where(has, _safe(est[:, 1], w, 0.0), (p_lo + p_hi) / 2)
    out = {
        "prob_true": np.clip(true, t_lo, t_hi), "prob_pred": np.clip(pred, p_lo, p_hi), "counts": w,
        "prob_true_low": t_lo, "prob_true_high": t_hi, "prob_pred_low": p_lo, "prob_pred_high": p_hi,
        "counts_low": r.m, "counts_high": r.m + r.reach_m,
    }
    for name in ("prob_true", "prob_pred"):  # against the rounding of the bounds' own evaluation
        out[f"{name}_low"] = np.maximum(out[f"{name}_low"] - _SLACK, 0.0)
        out[f"{name}_high"] = np.minimum(out[f"{name}_high"] + _SLACK, 1.0)
    return {k: v[rows].copy() for k, v in out.items()} | {"exact": False, "bin_index": np.flatnonzero(rows)}
