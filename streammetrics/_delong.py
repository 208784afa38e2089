"""DeLong's variance of the AUROC (DeLong, DeLong & Clarke-Pearson 1988), in O(n log n).

With m positives X_i and n negatives Y_j and psi(x, y) = [x > y] + 1/2 [x = y], the structural
components are V10_i = (1/n) sum_j psi(X_i, Y_j) and V01_j = (1/m) sum_i psi(X_i, Y_j); the
AUROC is their common mean and

    Var(AUROC) = S10 / m + S01 / n,   S10, S01 = sample variances (ddof = 1) of V10, V01.

Sun & Xu (2014) compute the components from midranks in O(n log n) instead of the O(m·n) pair
matrix; on sorted score arrays the same numbers come from two ``searchsorted`` passes (the count
below plus half the count equal), which is what :func:`delong` does. With sample weights the
components are weighted means and the sizes become Kish effective sizes (sum w)^2 / sum w^2 -- an
approximation that reduces to DeLong's formula for unit weights.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["delong"]


def _below_half_equal(values: np.ndarray, w: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """For each x: weight of ``values`` (ascending) below x plus half the weight equal to x."""
    left = np.searchsorted(values, x, "left")
    right = np.searchsorted(values, x, "right")
    if w is None:
        return (left + right) / 2.0
    cw = np.concatenate([[0.0], np.cumsum(w)])
    return (cw[left] + cw[right]) / 2.0


def _weighted_var(v: np.ndarray, w: np.ndarray | None) -> tuple[float, float]:
    """(sample variance with the ddof=1 correction, effective size)."""
    if w is None:
        n = v.shape[0]
        return (float(np.var(v, ddof=1)) if n > 1 else math.nan), float(n)
    sw = float(w.sum())
    n_eff = sw * sw / float((w * w).sum())
    if n_eff <= 1:
        return math.nan, n_eff
    mean = float(w @ v) / sw
    var = float(w @ ((v - mean) ** 2)) / sw * n_eff / (n_eff - 1)
    return var, n_eff


def delong(
    pos: np.ndarray, pos_w: np.ndarray | None, neg: np.ndarray, neg_w: np.ndarray | None
) -> tuple[float, float]:
    """(AUROC, DeLong variance) from ascending score arrays and optional weights.

    nan variance when there are fewer than two positives or negatives. O((m + n) log(m + n)).
    """
    m_w = float(pos.shape[0] if pos_w is None else pos_w.sum())
    n_w = float(neg.shape[0] if neg_w is None else neg_w.sum())
    if m_w <= 0 or n_w <= 0:
        return math.nan, math.nan
    v10 = _below_half_equal(neg, neg_w, pos) / n_w
    v01 = 1.0 - _below_half_equal(pos, pos_w, neg) / m_w  # share of positives above (+ half tied)
    auc = float(v10.mean() if pos_w is None else (pos_w @ v10) / m_w)
    s10, m_eff = _weighted_var(v10, pos_w)
    s01, n_eff = _weighted_var(v01, neg_w)
    return auc, s10 / m_eff + s01 / n_eff
