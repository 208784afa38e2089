"""The Wilcoxon signed-rank test, the sign test and the one-sided alternatives of trec-compare's
tests, against scipy (``scipy.stats.wilcoxon``, ``binomtest``, ``ttest_rel``) and brute force."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.trec.rank_tests import sign_test, wilcoxon
from streammetrics.trec.significance import bootstrap_ci, permutation_test, ttest_rel

scipy_stats = pytest.importorskip("scipy.stats")
TOL = 1e-12
ALTS = ("two-sided", "greater", "less")


def _differences(seed: int) -> np.ndarray:
    """Differences with ties and zeros (few grades) or without (normal), of 1 to 70 queries."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 70))
    levels = int(rng.integers(2, 12))
    d = rng.integers(-levels, levels + 1, n) / levels if rng.random() < 0.6 else rng.normal(size=n)
    return np.abs(d) if rng.random() < 0.2 else d + (rng.random() < 0.3) * 0.5 / levels


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_wilcoxon_equals_scipy(seed: int) -> None:
    d = _differences(seed)
    if not np.any(d != 0):
        return
    for zero_method, method, alternative, correction in itertools.product(
        ("wilcox", "pratt", "zsplit"), ("auto", "exact", "approx", "asymptotic"), ALTS, (False, True)
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = scipy_stats.wilcoxon(d, zero_method=zero_method, correction=correction,
                                       alternative=alternative, method=method)  # fmt: skip
        stat, p = wilcoxon(d, zero_method=zero_method, correction=correction, alternative=alternative,
                           method=method)  # fmt: skip
        where = (zero_method, method, alternative, correction, d.tolist())
        assert abs(stat - ref.statistic) <= TOL, where
        assert (np.isnan(p) and np.isnan(ref.pvalue)) or abs(p - ref.pvalue) <= TOL, (p, ref.pvalue, where)


def test_wilcoxon_zero_differences_and_bad_arguments() -> None:
    assert wilcoxon(np.zeros(5)) == (0.0, 1.0)  # scipy: nan; ours as ttest_rel
    with pytest.raises(ValueError, match="zero_method"):
        wilcoxon([1.0, 2.0], zero_method="nope")
    with pytest.raises(ValueError, match="alternative"):
        wilcoxon([1.0, 2.0], alternative="bigger")
    with pytest.raises(ValueError, match="method"):
        wilcoxon([1.0, 2.0], method="fast")
    assert np.isnan(wilcoxon([1.0, np.nan])[1]) and np.isnan(sign_test([1.0, np.nan])[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400))
def test_sign_test_equals_binomtest(seed: int, n: int) -> None:
    d = np.random.default_rng(seed).integers(-2, 3, n).astype(float)
    k, nonzero = int(np.sum(d > 0)), int(np.sum(d != 0))
    for alternative in ALTS:
        got_k, p = sign_test(d, alternative)
        assert got_k == k
        if nonzero == 0:
            assert p == 1.0
            continue
        ref = scipy_stats.binomtest(k, nonzero, 0.5, alternative=alternative).pvalue
        assert abs(p - ref) <= TOL * max(1.0, ref), (alternative, k, nonzero)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1), st.floats(-0.3, 0.3))
def test_one_sided_ttest_equals_scipy(n: int, seed: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + shift + rng.normal(0, 0.2, n), 0, 1)
    for alternative in ALTS:
        t, p = ttest_rel(b, a, alternative)
        ref = scipy_stats.ttest_rel(b, a, alternative=alternative)
        if not np.isfinite(ref.statistic):
            continue
        assert abs(p - ref.pvalue) <= 1e-10 * max(1.0, ref.pvalue) + 1e-15, alternative


def test_one_sided_ttest_of_constant_differences() -> None:
    a, b = np.array([0.5, 0.7]), np.array([0.4, 0.6])
    assert ttest_rel(a, b, "greater")[1] == 0.0 and ttest_rel(a, b, "less")[1] == 1.0
    assert ttest_rel(a, a, "greater") == (0.0, 1.0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75]), min_size=1, max_size=10))
def test_one_sided_permutation_exact_equals_brute_force(values: list[float]) -> None:
    d = np.array(values)
    sums = np.array([np.dot(s, d) for s in itertools.product((1.0, -1.0), repeat=len(d))])
    obs, tol = d.sum(), 1e-12 * np.abs(d).sum()
    assert permutation_test(d, 2 ** len(d), alternative="greater") == np.mean(sums >= obs - tol)
    assert permutation_test(d, 2 ** len(d), alternative="less") == np.mean(sums <= obs + tol)
    assert permutation_test(d, 2 ** len(d)) == np.mean(np.abs(sums) >= abs(obs) - tol)


def test_one_sided_permutation_sampled_and_bootstrap_bounds() -> None:
    d = np.random.default_rng(5).normal(0.05, 0.2, 20)
    for alternative in ALTS:  # 20000 random sign vectors against all 2**20
        exact = permutation_test(d, 2**20, alternative=alternative)
        sampled = permutation_test(d, 20000, seed=1, alternative=alternative)
        assert abs(sampled - exact) < 0.015, alternative
    low, high = bootstrap_ci(d, 4000, 0.05, seed=3, alternative="greater")
    low2, high2 = bootstrap_ci(d, 4000, 0.05, seed=3)
    low3, high3 = bootstrap_ci(d, 4000, 0.05, seed=3, alternative="less")
    assert high == np.inf and low3 == -np.inf
    assert low2 < low < d.mean() < high3 < high2  # one-sided at 95%: the two-sided ends at 90%
    with pytest.raises(ValueError, match="alternative"):
        permutation_test(d, 10, alternative="up")


@pytest.mark.parametrize("n,k", [(5000, 2400), (5000, 2500), (3000, 1650), (2049, 1000)])
def test_sign_test_beyond_the_integer_sums_equals_binomtest(n: int, k: int) -> None:
    d = np.array([1.0] * k + [-1.0] * (n - k))
    for alternative in ALTS:
        ref = scipy_stats.binomtest(k, n, 0.5, alternative=alternative).pvalue
        assert abs(sign_test(d, alternative)[1] - ref) <= TOL, alternative
