"""The Wilcoxon signed-rank test and the sign test of paired differences, on numpy alone.

* :func:`wilcoxon` -- ``scipy.stats.wilcoxon(d, zero_method=..., correction=..., alternative=...,
  method=...)``: the same statistic, the same exact distribution, normal approximation (with
  scipy's tie and zero corrections) and, for ``method="auto"``, the same choice between them
  (scipy 1.13+: exact below 51 differences without ties or zeros; an exact sign-flip
  enumeration of the statistic up to 13 differences with ties or zeros; otherwise the normal
  approximation);
* :func:`sign_test` -- the sign test: the number of positive differences among the nonzero ones
  under ``Binomial(n, 1/2)``, as ``scipy.stats.binomtest(k, n, 0.5, alternative)``.

One deliberate difference from scipy: when every difference is zero both tests give ``p = 1``
(no evidence of a difference, as :func:`.significance.ttest_rel`); scipy's wilcoxon gives nan
and its binomtest refuses ``n = 0``.
"""

from __future__ import annotations

import math

import numpy as np

from .significance import betainc, check_alternative

__all__ = ["wilcoxon", "sign_test", "wilcoxon_pmf", "ZERO_METHODS", "WILCOXON_METHODS"]

#: How zero differences count (scipy's ``zero_method``).
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
#: How the p-value is computed (scipy's ``method``; ``"approx"`` is ``"asymptotic"``).
WILCOXON_METHODS = ("auto", "exact", "asymptotic", "approx")
_EXACT_MAX = 50  # "auto": exact below this many differences (scipy's)
_PERM_MAX = 13  # "auto" with ties or zeros: sign flips enumerated up to this many (scipy's)


def wilcoxon_pmf(n: int) -> np.ndarray:
    """The distribution of the signed-rank statistic ``R+`` of ``n`` differences without ties:
    ``pmf[r] = P(R+ = r)`` for ``r = 0 .. n(n+1)/2`` (each rank positive with probability 1/2).
    O(n^3) time, O(n^2) memory.

    Parameters
    ----------
    n : int
        The number of (non-zero, untied) differences.

    Returns
    -------
    numpy.ndarray
        ``n(n+1)/2 + 1`` probabilities summing to 1.

    Examples
    --------
    >>> from streammetrics.trec.rank_tests import wilcoxon_pmf
    >>> wilcoxon_pmf(2).tolist()  # R+ of ranks 1 and 2: 0, 1, 2, 3 each with probability 1/4
    [0.25, 0.25, 0.25, 0.25]
    """
    c = np.ones(1)
    for k in range(1, n + 1):
        prev, c = c, np.zeros(k * (k + 1) // 2 + 1)
        c[: len(prev)] = prev * 0.5
        c[-len(prev) :] += prev * 0.5
    return c


def _ranks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks of ``x`` (1-based) and the sizes of its groups of equal values, in order."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]])) if len(x) else np.zeros(0, int)
    sizes = np.diff(np.append(starts, len(x)))
    avg = starts + (sizes + 1) / 2.0
    ranks = np.empty(len(x))
    ranks[order] = np.repeat(avg, sizes)
    return ranks, sizes


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _normal_p(z: float, alternative: str) -> float:
    if math.isnan(z):
        return math.nan
    if alternative == "greater":
        return _normal_sf(z)
    if alternative == "less":
        return _normal_sf(-z)
    return 2.0 * _normal_sf(abs(z))


def wilcoxon(
    d: np.ndarray,
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    alternative: str = "two-sided",
    method: str = "auto",
) -> tuple[float, float]:
    """Wilcoxon's signed-rank test of the paired differences ``d``: ``(statistic, p)``, as
    ``scipy.stats.wilcoxon(d, zero_method=..., correction=..., alternative=..., method=...)``.

    The differences are ranked by absolute value (ties get their average rank); ``R+`` is the
    sum of the ranks of the positive ones. Zero differences are dropped before ranking
    (``"wilcox"``), ranked and then dropped (``"pratt"``: the others keep their ranks), or ranked
    with half their ranks added to each of ``R+`` and ``R-`` (``"zsplit"``). The normal
    approximation standardizes ``R+`` by its null mean and variance, the variance reduced by
    ``sum(t^3 - t) / 48`` over groups of ``t`` tied absolute values (and by the zeros' share for
    ``"pratt"``), with ``correction`` moving it half a unit toward the mean. The exact
    distribution assumes no ties (``R+`` of non-integer value is floored or ceiled as scipy
    does). O(n log n) time; ``"exact"`` O(n^3), the sign-flip enumeration O(n * 2^n) for
    ``n <= 13``.

    Parameters
    ----------
    d : array-like of shape (n,)
        The paired differences (one per query); a NaN among them gives ``(nan, nan)``, as scipy.
    zero_method : {"wilcox", "pratt", "zsplit"}, default="wilcox"
        How zero differences count (above).
    correction : bool, default=False
        The continuity correction of the normal approximation.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        Where the differences lie under the alternative: symmetric about a value other than 0,
        above 0, below 0.
    method : {"auto", "exact", "asymptotic", "approx"}, default="auto"
        The exact distribution, the normal approximation (``"approx"`` is its old name), or
        scipy's choice between them and the sign-flip enumeration (above).

    Returns
    -------
    statistic : float
        ``min(R+, R-)`` for the two-sided test, ``R+`` for a one-sided one (scipy's).
    p : float
        The p-value; 1 when every difference is zero (scipy: nan).

    Raises
    ------
    ValueError
        Naming the argument: an unknown ``zero_method``, ``alternative`` or ``method``.

    Examples
    --------
    >>> from streammetrics.trec.rank_tests import wilcoxon
    >>> wilcoxon([0.1, 0.2, -0.05, 0.3], alternative="greater")  # R+ = 2 + 3 + 4, exact
    (9.0, 0.125)
    """
    check_alternative(alternative)
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {', '.join(ZERO_METHODS)}, got {zero_method!r}")
    if method not in WILCOXON_METHODS:
        raise ValueError(f"method must be one of {', '.join(WILCOXON_METHODS)}, got {method!r}")
    if correction not in (True, False):
        raise ValueError(f"correction must be True or False, got {correction!r}")
    d = np.asarray(d, dtype=np.float64).ravel()
    if np.isnan(d).any():
        return math.nan, math.nan  # scipy's nan_policy="propagate"
    n = len(d)
    zero = d == 0
    n_zero = int(zero.sum())
    if n == 0 or n_zero == n:
        return 0.0, 1.0
    method = "asymptotic" if method == "approx" else method
    if method == "auto" and n > _EXACT_MAX:
        method = "asymptotic"
    kept = d[~zero] if zero_method == "wilcox" else d
    ranks, sizes = _ranks(np.abs(kept))
    r_plus = float(ranks[kept > 0].sum())
    r_minus = float(ranks[kept < 0].sum())
    if zero_method == "zsplit":
        half = float(ranks[kept == 0].sum()) / 2.0
        r_plus, r_minus = r_plus + half, r_minus + half
    has_ties = bool((sizes > 1).any())
    count = float(len(kept))
    mean = count * (count + 1.0) * 0.25
    var = count * (count + 1.0) * (2.0 * count + 1.0)
    if zero_method == "pratt" and n_zero:
        mean -= n_zero * (n_zero + 1.0) * 0.25
        var -= n_zero * (n_zero + 1.0) * (2.0 * n_zero + 1.0)
        sizes = sizes[1:]  # the zeros' group (the smallest absolute values) is no tie
    ties = float(np.sum(sizes.astype(np.float64) ** 3 - sizes))
    se = math.sqrt(max(var - ties / 2.0, 0.0) / 24.0)
    if method == "auto":
        method = "exact" if not (has_ties or n_zero > 0) else "flips" if n <= _PERM_MAX else "asymptotic"
    if method == "asymptotic":
        z = (r_plus - mean) / se if se > 0 else math.nan
        if correction:
            sign = {"greater": 1.0, "less": -1.0}.get(alternative, float(np.sign(z)))
            z -= sign * 0.5 / se
        p = _normal_p(z, alternative)
    elif method == "exact":
        p = _exact_p(int(count), r_plus, alternative)
    else:
        p = _flips_p(kept, ranks, r_plus, alternative)
    statistic = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    return statistic, p


def _exact_p(n: int, r_plus: float, alternative: str) -> float:
    pmf = wilcoxon_pmf(n)
    mean = n * (n + 1) / 4.0

    def cdf(k: int) -> float:
        return float(pmf[: k + 1].sum()) if k <= mean else 1.0 - float(pmf[k + 1 :].sum())

    def sf(k: int) -> float:
        return float(pmf[k:].sum()) if k <= mean else 1.0 - float(pmf[:k].sum())

    low, high = math.ceil(r_plus), math.floor(r_plus)
    if alternative == "less":
        return cdf(low)
    if alternative == "greater":
        return sf(high)
    return min(1.0, 2.0 * min(sf(high), cdf(low)))


def _flips_p(kept: np.ndarray, ranks: np.ndarray, r_plus: float, alternative: str) -> float:
    """scipy's exact permutation distribution of ``R+``: every sign vector of the nonzero
    differences (zeros flip to themselves), ``R+`` within ``100 eps`` of the observed counting as
    equal."""
    nonzero = kept != 0
    r = ranks[nonzero]
    base = r_plus - float(ranks[kept > 0].sum())  # zsplit's half ranks of the zeros
    m = len(r)
    idx = np.arange(2**m, dtype=np.int64)
    positive = (idx[:, None] >> np.arange(m, dtype=np.int64)) & 1
    null = base + positive @ r
    gamma = abs(100 * np.finfo(np.float64).eps * r_plus)
    less = np.count_nonzero(null <= r_plus + gamma) / 2**m
    greater = np.count_nonzero(null >= r_plus - gamma) / 2**m
    if alternative == "less":
        return float(less)
    if alternative == "greater":
        return float(greater)
    return float(min(1.0, 2.0 * min(less, greater)))


_EXACT_BINOM = 2048  # up to this many nonzero differences the tail is summed in integers


def _binom_cdf(k: int, n: int) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, 1/2)``: exactly (integer binomial coefficients, one
    rounding) up to ``n = 2048``, else ``I_{1/2}(n - k, k + 1)``."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= _EXACT_BINOM:
        return sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return betainc(float(n - k), float(k + 1), 0.5)


def sign_test(d: np.ndarray, alternative: str = "two-sided") -> tuple[int, float]:
    """The sign test of the paired differences ``d``: ``(k, p)`` with ``k`` the number of
    positive differences among the ``n`` nonzero ones (zeros are dropped) and ``p`` its p-value
    under ``Binomial(n, 1/2)``, as ``scipy.stats.binomtest(k, n, 0.5, alternative).pvalue``:
    ``P(X >= k)`` (``"greater"``), ``P(X <= k)`` (``"less"``), ``min(1, 2 P(X <= min(k, n - k)))``
    (two-sided). O(n) time.

    Parameters
    ----------
    d : array-like of shape (n,)
        The paired differences (one per query).
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        Where the differences lie under the alternative: more often positive or negative than
        not, more often positive, more often negative.

    Returns
    -------
    k : int
        The number of positive differences.
    p : float
        The p-value; 1 when every difference is zero (``n = 0``; scipy's binomtest refuses it);
        nan if a difference is NaN.

    Raises
    ------
    ValueError
        If ``alternative`` is not one of the three.

    Examples
    --------
    >>> from streammetrics.trec.rank_tests import sign_test
    >>> sign_test([0.1, 0.2, 0.0, 0.3], alternative="greater")  # 3 of 3 positive: 1/8
    (3, 0.125)
    """
    check_alternative(alternative)
    d = np.asarray(d, dtype=np.float64).ravel()
    k, n = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d != 0))
    if np.isnan(d).any():
        return k, math.nan
    if n == 0:
        return 0, 1.0
    if alternative == "less":
        return k, _binom_cdf(k, n)
    if alternative == "greater":
        return k, _binom_cdf(n - k, n)  # P(X >= k) = P(X <= n - k)
    if 2 * k == n:
        return k, 1.0
    return k, min(1.0, 2.0 * _binom_cdf(min(k, n - k), n))
