"""Paired significance tests of per-query differences, on numpy alone (no scipy at runtime).

* :func:`t_cdf` -- Student's t distribution function, through the regularized incomplete beta
  function :func:`betainc` (a continued fraction evaluated with the modified Lentz method);
* :func:`ttest_rel` -- the paired t-test, as ``scipy.stats.ttest_rel`` (``alternative``
  ``"two-sided"``, ``"greater"`` or ``"less"``, as scipy's);
* :func:`permutation_test` -- the paired randomization test (sign flips of the differences):
  exact, by enumerating all ``2**n`` sign vectors, when ``permutations >= 2**n``; otherwise Monte
  Carlo with ``p = (hits + 1) / (permutations + 1)``; two- or one-sided;
* :func:`bootstrap_ci` -- the percentile bootstrap interval of the mean difference (one-sided:
  a bound, the other end infinite);
* :func:`holm` -- Holm's step-down adjustment of a family of p-values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["betainc", "t_cdf", "t_sf2", "t_pvalue", "ttest_rel", "permutation_test", "bootstrap_ci", "holm",
           "ALTERNATIVES", "check_alternative"]

#: The alternatives of every test, as scipy names them: ``d = a - b`` differs from 0, is above,
#: is below.
ALTERNATIVES = ("two-sided", "greater", "less")


def check_alternative(alternative: str) -> str:
    """``alternative`` if it is one of :data:`ALTERNATIVES`, else a ValueError naming it.

    Parameters
    ----------
    alternative : str
        ``"two-sided"``, ``"greater"`` (run above the baseline) or ``"less"``.

    Returns
    -------
    str
        ``alternative``, checked. O(1).
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    return alternative

_TINY = 1e-300
_EPS = 1e-16
_MAX_ITER = 100_000
_ENUM_CHUNK = 1 << 14
_CHUNK_CELLS = 1 << 21  # sign or resample matrices are built at most this many cells at a time (16 MB)
_MAX_ENUMERATED = 26  # 2**26 sign vectors at most are enumerated
Seed = int | Sequence[int] | None  # anything numpy.random.default_rng takes


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for aa in (even, odd):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b}, x={x})")


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``a, b > 0``, ``0 <= x <= 1``.

    Uses the continued fraction on the side of ``x`` where it converges fast
    (``x < (a + 1) / (a + b + 2)``), and the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` otherwise.

    Parameters
    ----------
    a, b : float
        The shape parameters, both positive.
    x : float
        The upper limit of integration, in [0, 1].

    Returns
    -------
    float
        ``I_x(a, b)``, in [0, 1].

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not positive, or ``x`` is outside [0, 1].

    Examples
    --------
    >>> from streammetrics.trec.significance import betainc
    >>> betainc(1.0, 1.0, 0.25)  # the uniform distribution function
    0.25
    >>> round(betainc(2.0, 3.0, 0.5), 12)
    0.6875
    """
    if not (a > 0 and b > 0):
        raise ValueError(f"betainc: a and b must be positive, got a={a!r}, b={b!r}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc: x must be in [0, 1], got {x!r}")
    if x in (0.0, 1.0):
        return x
    return _betainc(a, b, x, 1.0 - x, math.log(x), math.log1p(-x))


def _stirling(x: float) -> float:
    """``lgamma(x) - ((x - 0.5) log x - x + log(2 pi) / 2)`` for ``x >= 10`` (error below 1e-14)."""
    x2 = x * x
    return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - 1.0 / (1188 * x2)) / x2) / x2) / x2) / x


def _lbeta(a: float, b: float) -> float:
    """``log B(a, b)``; for a large argument without the cancellation of three lgamma values."""
    small, big = min(a, b), max(a, b)
    if big < 10.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    rise = (big - 0.5) * math.log1p(small / big) + small * math.log(big + small) - small
    return math.lgamma(small) - rise - (_stirling(big + small) - _stirling(big))


def _betainc(a: float, b: float, x: float, y: float, log_x: float, log_y: float) -> float:
    """``I_x(a, b)`` given ``x``, ``y = 1 - x`` and their logarithms (each computed accurately by
    the caller: near 0 or 1, ``log(1 - x)`` from a rounded ``x`` loses digits)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = a * log_x + b * log_y - _lbeta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def t_sf2(t: float, df: float) -> float:
    """The two-sided tail ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom.

    Parameters
    ----------
    t : float
        The statistic (nan gives nan, an infinity gives 0).
    df : float
        The degrees of freedom, positive.

    Returns
    -------
    float
        ``P(|T| >= |t|)``, in [0, 1].

    Examples
    --------
    >>> from streammetrics.trec.significance import t_sf2
    >>> t_sf2(0.0, 5.0)
    1.0
    >>> round(t_sf2(1.0, 1.0), 12)  # Cauchy: P(|T| >= 1) = 1/2
    0.5
    """
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    if t == 0.0:
        return 1.0
    t2 = t * t
    log_x = -math.log1p(t2 / df)  # x = df / (df + t^2), 1 - x = t^2 / (df + t^2)
    log_y = 2.0 * math.log(abs(t)) - math.log(df) + log_x
    return _betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2), log_x, log_y)


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function ``P(T <= t)`` with ``df > 0`` degrees of freedom.

    Parameters
    ----------
    t : float
        Where to evaluate the distribution function.
    df : float
        The degrees of freedom, positive.

    Returns
    -------
    float
        ``P(T <= t)``, in [0, 1].

    Examples
    --------
    >>> from streammetrics.trec.significance import t_cdf
    >>> t_cdf(0.0, 3.0)
    0.5
    >>> round(t_cdf(1.0, 1.0), 12)  # Cauchy: 1/2 + atan(1) / pi
    0.75
    """
    half = 0.5 * t_sf2(t, df)
    return half if t < 0 else 1.0 - half


def ttest_rel(a: np.ndarray, b: np.ndarray, alternative: str = "two-sided") -> tuple[float, float]:
    """Paired t-test of ``a - b``: ``(t, p)``, as ``scipy.stats.ttest_rel(a, b, alternative=...)``.

    All differences zero gives ``(0.0, 1.0)`` (no evidence of a difference; scipy gives nan);
    equal nonzero differences give ``(+-inf, p)`` with ``p`` 0, or 1 for the one-sided
    alternative on the other side. Needs two or more pairs. O(n).

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired values (one per query) of two systems.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        What the mean of ``a - b`` is, under the alternative hypothesis: not 0, above 0, below 0.

    Returns
    -------
    t : float
        The t statistic of the mean difference ``mean(a - b) / (sd(a - b) / sqrt(n))``.
    p : float
        Its p-value with ``n - 1`` degrees of freedom: ``P(|T| >= |t|)``, ``P(T >= t)`` or
        ``P(T <= t)``.

    Raises
    ------
    ValueError
        If there are fewer than 2 pairs, or ``alternative`` is not one of the three.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.significance import ttest_rel
    >>> t, p = ttest_rel(np.array([0.5, 0.6, 0.9, 0.4]), np.array([0.4, 0.6, 0.7, 0.3]))
    >>> round(t, 12), round(p, 6)  # t = sqrt(6); scipy.stats.ttest_rel gives the same
    (2.449489742783, 0.091721)
    """
    check_alternative(alternative)
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(d)
    if n < 2:
        raise ValueError(f"ttest_rel needs at least 2 paired values, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0 and mean == 0.0:
        return 0.0, 1.0
    t = math.copysign(math.inf, mean) if sd == 0.0 else mean / (sd / math.sqrt(n))
    return t, t_pvalue(t, n - 1.0, alternative)


def t_pvalue(t: float, df: float, alternative: str = "two-sided") -> float:
    """The p-value of Student's ``t`` with ``df`` degrees of freedom: ``P(|T| >= |t|)``
    (``"two-sided"``), ``P(T >= t)`` (``"greater"``) or ``P(T <= t)`` (``"less"``), each tail
    computed directly (no ``1 - x`` cancellation for the small one).

    Parameters
    ----------
    t : float
        The statistic.
    df : float
        Its degrees of freedom (> 0).
    alternative : {"two-sided", "greater", "less"}
        Which tail(s).

    Returns
    -------
    float
        The p-value. O(1) (a continued fraction).

    Examples
    --------
    >>> from streammetrics.trec.significance import t_pvalue
    >>> round(t_pvalue(1.0, 1.0, "greater"), 12), round(t_pvalue(1.0, 1.0, "less"), 12)  # Cauchy
    (0.25, 0.75)
    """
    two = t_sf2(t, df)
    if alternative == "two-sided":
        return two
    upper = t > 0 if alternative == "greater" else t < 0  # the tail of the alternative is the small one
    return 0.5 * two if upper else 1.0 - 0.5 * two


def _rows(n: int, cap: int) -> int:
    """Rows per chunk of an ``(rows, n)`` matrix: at most ``cap`` and ``_CHUNK_CELLS`` cells."""
    return max(1, min(cap, _CHUNK_CELLS // max(n, 1)))


def _hits(d: np.ndarray, signs: np.ndarray, observed: float, tol: float, alternative: str) -> int:
    sums = signs @ d
    if alternative == "greater":
        return int(np.count_nonzero(sums >= observed - tol))
    if alternative == "less":
        return int(np.count_nonzero(sums <= observed + tol))
    return int(np.count_nonzero(np.abs(sums) >= observed - tol))


def permutation_test(
    d: np.ndarray, permutations: int = 10000, seed: Seed = 0, alternative: str = "two-sided"
) -> float:
    """Paired randomization test of the differences ``d``: the p-value of ``sum(d)`` among the
    sums ``sum(s * d)`` over sign vectors ``s`` in {-1, +1}^n -- two-sided: the share of
    ``|sum(s * d)| >= |sum(d)|``; ``"greater"``: of ``sum(s * d) >= sum(d)``; ``"less"``: of
    ``sum(s * d) <= sum(d)``.

    With ``permutations >= 2**n`` every sign vector is enumerated and ``p`` is exact (the
    fraction of vectors at least as extreme, the identity included); otherwise ``permutations``
    random sign vectors give ``p = (hits + 1) / (permutations + 1)``. Sums within ``1e-12`` of the
    observed one (relative to ``sum(|d|)``) count as ties. O(n * min(2**n, permutations)) time,
    O(2**21) memory.

    Parameters
    ----------
    d : array-like of shape (n,)
        The paired differences (one per query).
    permutations : int, default=10000
        The number of random sign vectors; at least ``2**n`` enumerates them all (exact ``p``).
    seed : int, sequence of int or None, default=0
        The seed of ``numpy.random.default_rng`` for the random sign vectors.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        Where the differences lie under the alternative: away from 0, above, below.

    Returns
    -------
    float
        The p-value.

    Raises
    ------
    ValueError
        If ``permutations`` is not positive or ``alternative`` not one of the three.

    Examples
    --------
    >>> from streammetrics.trec.significance import permutation_test
    >>> permutation_test([0.1, 0.2, 0.3])  # exact: 2 of the 8 sign vectors reach |0.6|
    0.25
    """
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if permutations < 1:
        raise ValueError(f"permutations must be positive, got {permutations!r}")
    check_alternative(alternative)
    observed = float(d.sum())
    observed = abs(observed) if alternative == "two-sided" else observed
    tol = 1e-12 * float(np.abs(d).sum())
    if n <= _MAX_ENUMERATED and permutations >= 2**n:
        total, hits, step = 2**n, 0, _rows(n, _ENUM_CHUNK)
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, step):
            idx = np.arange(start, min(start + step, total), dtype=np.int64)
            signs = 1.0 - 2.0 * ((idx[:, None] >> bits) & 1)
            hits += _hits(d, signs, observed, tol, alternative)
        return hits / total
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    while done < permutations:
        k = min(_rows(n, _ENUM_CHUNK), permutations - done)
        flips = np.unpackbits(rng.integers(0, 256, size=(k, (n + 7) // 8), dtype=np.uint8), axis=1)
        signs = 1.0 - 2.0 * flips[:, :n]
        hits += _hits(d, signs, observed, tol, alternative)
        done += k
    return (hits + 1) / (permutations + 1)


def bootstrap_ci(
    d: np.ndarray, resamples: int = 10000, alpha: float = 0.05, seed: Seed = 0, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Percentile bootstrap interval ``(low, high)`` at level ``1 - alpha`` of the mean of ``d``
    (queries resampled with replacement); one-sided (``"greater"``: ``(low, inf)``, ``"less"``:
    ``(-inf, high)``) the bound at level ``1 - alpha``. O(n * resamples) time,
    O(resamples + 2**21) memory.

    Parameters
    ----------
    d : array-like of shape (n,)
        The paired differences (one per query).
    resamples : int, default=10000
        The number of bootstrap resamples.
    alpha : float, default=0.05
        One minus the confidence level, in (0, 1).
    seed : int, sequence of int or None, default=0
        The seed of ``numpy.random.default_rng`` for the resamples.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        Two-sided: both ends; ``"greater"``: the lower bound alone; ``"less"``: the upper alone.

    Returns
    -------
    low, high : float
        The ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the resampled means (two-sided);
        the ``alpha`` quantile and ``inf`` (``"greater"``); ``-inf`` and the ``1 - alpha``
        quantile (``"less"``).

    Raises
    ------
    ValueError
        If ``resamples`` is not positive or ``alpha`` is outside (0, 1).

    Examples
    --------
    >>> from streammetrics.trec.significance import bootstrap_ci
    >>> low, high = bootstrap_ci([0.1, 0.3, 0.2, 0.4], resamples=2000, seed=1)
    >>> 0.1 <= low <= 0.25 <= high <= 0.4
    True
    """
    d = np.asarray(d, dtype=np.float64)
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    check_alternative(alternative)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = _rows(len(d), 1024)
    for start in range(0, resamples, step):
        k = min(step, resamples - start)
        idx = rng.integers(0, len(d), size=(k, len(d)), dtype=np.int32 if len(d) < 2**31 else np.int64)
        means[start : start + k] = d[idx].mean(axis=1)
    if alternative == "greater":
        return float(np.quantile(means, alpha)), math.inf
    if alternative == "less":
        return -math.inf, float(np.quantile(means, 1.0 - alpha))
    low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values: the ``i``-th smallest of ``m`` becomes
    ``max_{j <= i} min(1, (m - j + 1) * p_(j))``, returned in the input order.

    Parameters
    ----------
    pvalues : sequence of float
        The p-values of a family of ``m`` tests.

    Returns
    -------
    list of float
        The adjusted p-values, in the order of ``pvalues``.

    Examples
    --------
    >>> from streammetrics.trec.significance import holm
    >>> [round(p, 12) for p in holm([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.maximum.accumulate(adjusted)
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()
