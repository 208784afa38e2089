"""Statistical confidence intervals computed from streamed counts.

Wilson score interval for a proportion (Wilson, 1927): with p = x/n and z the two-sided normal
quantile for the requested confidence,

    center = (p + z^2/(2n)) / (1 + z^2/n)
    half   = z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/(4n^2))

With sample weights, x and n are weighted sums and n is replaced by the effective sample size
n_eff = (sum w)^2 / sum w^2 (Kish), which equals n for unit weights. Unlike the normal (Wald)
interval it stays inside [0, 1] and behaves at p = 0 or 1. An empty denominator gives (nan, nan).
n_eff >= 1 whenever sum w > 0; where the squared sums have underflowed (weights decayed below
about 1e-154, e.g. hundreds of half-lives after the only sample of a class) n_eff is not
recoverable and the most conservative value, 1, is used, so the interval stays finite and wide.
Cost: O(1) per value, from counts the accumulators already keep.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from .params import Param, check_param

_CONFIDENCE = Param("number", "must be in (0, 1)", low=0.0, low_open=True, high=1.0, high_open=True)


def z_value(confidence: float) -> float:
    """Two-sided standard-normal quantile for ``confidence`` in (0, 1)."""
    confidence = check_param(confidence, "confidence", _CONFIDENCE)
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson(
    successes: np.ndarray, total: np.ndarray, total_w2: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson interval for weighted proportions ``successes / total`` (element-wise)."""
    z = z_value(confidence)
    x = np.asarray(successes, dtype=np.float64)
    w = np.asarray(total, dtype=np.float64)
    w2 = np.asarray(total_w2, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.clip(x / w, 0.0, 1.0)
        n = w * w / w2
        n = np.where(np.isfinite(n) & (n >= 1.0), n, 1.0)  # n_eff >= 1; underflowed sums: 1
        z2n = z * z / n
        center = (p + z2n / 2.0) / (1.0 + z2n)
        half = z / (1.0 + z2n) * np.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
        low = np.where(w > 0, np.clip(center - half, 0.0, 1.0), np.nan)
        high = np.where(w > 0, np.clip(center + half, 0.0, 1.0), np.nan)
    return low, high
