"""Tukey's honestly significant difference test across several runs, on numpy alone.

* :func:`studentized_range_sf` -- ``P(Q > q)`` of the studentized range of ``k`` normal means
  with ``df`` degrees of freedom, as ``scipy.stats.studentized_range.sf``: the double integral
  ``int f_df(s) (1 - W(q s)) ds`` with ``1 - W(w) = k int phi(z) (Phi(z)^(k-1) -
  (Phi(z) - Phi(z - w))^(k-1)) dz`` (``f_df`` the density of ``sqrt(chi2_df / df)``), by
  composite Gauss-Legendre quadrature over the ranges where the integrands exceed ``1e-19`` of
  their peak; for ``df >= 100000`` the inner integral alone (``df`` infinite), as scipy.
* :func:`tukey_hsd` -- the one-way test of ``scipy.stats.tukey_hsd`` (equal variances), which
  ranx's ``stat_test="tukey"`` calls: every pair of runs' mean difference over
  ``sqrt(MSE / 2 * (1/n_i + 1/n_j))``, ``MSE`` the pooled within-run variance with
  ``N - k`` degrees of freedom. Queries are *not* a blocking factor (as in ranx and scipy):
  the per-query variation counts as error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["studentized_range_sf", "tukey_hsd"]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(20)
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_SQRT2 = math.sqrt(2.0)
_Z_MAX = 9.5  # phi(9.5) < 1e-19
_ASYMPTOTIC_DF = 100_000  # scipy's switch to the single integral
_Z_PANEL = 1.0  # the inner integral's panel width (20 nodes each)
_S_PANELS = 16  # the outer integral's panels


def _phi_upper(x: np.ndarray) -> np.ndarray:
    """``1 - Phi(x)``, accurate in the upper tail."""
    return 0.5 * np.asarray(_ERFC(x / _SQRT2), dtype=np.float64)


def _gauss(lo: float, hi: float, panels: int, breaks: Sequence[float] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of composite 20-point Gauss-Legendre on ``[lo, hi]`` (``panels`` equal
    panels, also split at ``breaks``)."""
    edges = np.unique(np.concatenate([np.linspace(lo, hi, panels + 1), [b for b in breaks if lo < b < hi]]))
    half = np.diff(edges)[:, None] / 2.0
    mid = (edges[:-1] + edges[1:])[:, None] / 2.0
    return (mid + half * _NODES).ravel(), (half * _WEIGHTS).ravel()


def _range_sf(w: np.ndarray, k: int) -> np.ndarray:
    """``1 - W(w)`` for each ``w >= 0``: the probability that the range of ``k`` standard normals
    exceeds ``w``."""
    out = np.empty(len(w))
    m = k - 1
    for i, wi in enumerate(w.tolist()):
        lo = max(-_Z_MAX, wi - 2 * _Z_MAX) if wi > 0 else -_Z_MAX
        z, wt = _gauss(lo, _Z_MAX, max(6, int(math.ceil((_Z_MAX - lo) / _Z_PANEL))))
        up_z = _phi_upper(z)  # 1 - Phi(z)
        up_zw = _phi_upper(z - wi)  # 1 - Phi(z - w)
        a = 1.0 - up_z  # Phi(z)
        diff = up_zw - up_z  # Phi(z) - Phi(z - w), without cancellation near 1
        term = a**m - np.maximum(diff, 0.0) ** m
        dens = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        out[i] = k * float(np.dot(wt, dens * term))
    return out


def _s_range(df: float) -> tuple[float, float]:
    """Where the density of ``s = sqrt(chi2_df / df)`` is within ``e^-44`` of its peak."""

    def logf(s: float) -> float:
        return (df - 1.0) * math.log(s) - df * s * s / 2.0 if s > 0 else -math.inf

    mode = math.sqrt(max(df - 1.0, 0.0) / df)
    top = logf(mode) if mode > 0 else 0.0
    lo = 0.0
    if mode > 0:
        a, b = 0.0, mode
        for _ in range(200):
            mid = (a + b) / 2.0
            a, b = (mid, b) if logf(mid) < top - 44.0 else (a, mid)
        lo = a
    a, b = max(mode, 1e-300), max(mode, 1.0) * 2.0
    while logf(b) > top - 44.0:
        b *= 2.0
    for _ in range(200):
        mid = (a + b) / 2.0
        a, b = (mid, b) if logf(mid) > top - 44.0 else (a, mid)
    return lo, b


def studentized_range_sf(q: float, k: int, df: float) -> float:
    """``P(Q > q)`` for the studentized range ``Q`` of ``k >= 2`` means with ``df > 0`` degrees
    of freedom, as ``scipy.stats.studentized_range.sf(q, k, df)`` (to about 1e-13).
    O(panels^2) evaluations of ``erfc``: a few milliseconds.

    Parameters
    ----------
    q : float
        The statistic, ``>= 0`` (an infinity gives 0, nan gives nan).
    k : int
        The number of means (runs), at least 2.
    df : float
        The degrees of freedom of the variance estimate, positive.

    Returns
    -------
    float
        The upper tail probability, in [0, 1].

    Raises
    ------
    ValueError
        If ``k < 2`` or ``df <= 0``.

    Examples
    --------
    >>> from streammetrics.trec.tukey import studentized_range_sf
    >>> round(studentized_range_sf(3.0, 2, 1e6), 10)  # k = 2: 2 P(Z > 3 / sqrt(2))
    0.0338948535
    """
    if k < 2:
        raise ValueError(f"studentized_range_sf: k must be at least 2, got {k!r}")
    if not df > 0:
        raise ValueError(f"studentized_range_sf: df must be positive, got {df!r}")
    if math.isnan(q):
        return math.nan
    if q <= 0:
        return 1.0
    if math.isinf(q):
        return 0.0
    if df >= _ASYMPTOTIC_DF:
        return float(min(1.0, max(0.0, _range_sf(np.array([q]), k)[0])))
    lo, hi = _s_range(df)
    # 1 - W(q s) falls from 1 to 0 as q s goes from 0 to about 10: panels there too
    s, wt = _gauss(lo, hi, _S_PANELS, [c / q for c in (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)])
    # the density up to its constant, normalized by its own quadrature (lgamma(df / 2)'s rounding
    # at a large df would otherwise cost digits)
    log_f = (df - 1.0) * np.log(s) - df * s * s / 2.0
    dens = wt * np.exp(log_f - log_f.max())
    return float(min(1.0, max(0.0, float(np.dot(dens, _range_sf(q * s, k))) / float(dens.sum()))))


def tukey_hsd(groups: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Tukey's HSD test of ``k >= 2`` groups (one-way, equal variances; Tukey-Kramer for unequal
    sizes): ``(statistic, p)``, both ``(k, k)``, as ``scipy.stats.tukey_hsd(*groups)``'s
    ``statistic`` and ``pvalue`` -- and ranx's ``compare(..., stat_test="tukey")``.

    ``statistic[i, j] = mean_i - mean_j``; ``p[i, j]`` the studentized range tail of
    ``|statistic[i, j]| / sqrt(MSE / 2 * (1/n_i + 1/n_j))`` with ``k`` means and ``N - k``
    degrees of freedom, ``MSE = sum_i (n_i - 1) var_i / (N - k)``. A zero ``MSE`` gives ``p = 0``
    where the means differ and 1 where they do not (scipy: nan for 0/0). O(N + k^2) and ``k^2/2``
    p-values.

    Parameters
    ----------
    groups : sequence of array-like
        Each group's values (for trec-compare: each run's per-query values of one measure).

    Returns
    -------
    statistic, p : ndarray of shape (k, k)
        The mean differences and their family-wise p-values (symmetric, 1 on the diagonal).

    Raises
    ------
    ValueError
        With fewer than 2 groups, a group of fewer than 1 value, or no degrees of freedom
        (``N == k``).

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.tukey import tukey_hsd
    >>> stat, p = tukey_hsd([np.array([0.2, 0.4, 0.3]), np.array([0.5, 0.7, 0.6])])
    >>> round(float(stat[1, 0]), 12), bool(p[0, 1] < 0.05)
    (0.3, True)
    """
    xs = [np.asarray(g, dtype=np.float64).ravel() for g in groups]
    k = len(xs)
    if k < 2:
        raise ValueError(f"tukey_hsd needs at least 2 groups, got {k}")
    sizes = np.array([len(x) for x in xs], dtype=np.float64)
    if (sizes < 1).any():
        raise ValueError(f"tukey_hsd: every group needs a value, group {int(np.argmin(sizes))} is empty")
    df = float(sizes.sum()) - k
    if df <= 0:
        raise ValueError("tukey_hsd needs more values than groups (no degrees of freedom)")
    means = np.array([x.mean() for x in xs])
    mse = float(sum(float(((x - x.mean()) ** 2).sum()) for x in xs)) / df
    stat = means[:, None] - means[None, :]
    p = np.ones((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            se = math.sqrt(mse / 2.0 * (1.0 / sizes[i] + 1.0 / sizes[j]))
            diff = abs(float(stat[i, j]))
            if se == 0.0:
                p[i, j] = 1.0 if diff == 0.0 else 0.0
            else:
                p[i, j] = studentized_range_sf(diff / se, k, df)
            p[j, i] = p[i, j]
    return stat, p
