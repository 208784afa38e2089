"""Significance tests of ``streammetrics trec-compare`` against scipy and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.trec.significance import betainc, bootstrap_ci, holm, permutation_test, t_cdf, ttest_rel

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 9, 30, 99, 1000, 1e4, 1e5])
def test_t_cdf_matches_scipy(df: float) -> None:
    for t in np.concatenate([np.linspace(-40, 40, 161), [-1e-3, 0.0, 1e-3, 1e3, -1e3]]):
        ours, ref = t_cdf(float(t), df), scipy_stats.t.cdf(t, df)
        assert ours == pytest.approx(ref, rel=1e-10, abs=1e-10)
        # the tails relative, too: the small p-values of strong differences
        if t > 0:
            assert 1.0 - ours == pytest.approx(scipy_stats.t.sf(t, df), rel=1e-8, abs=1e-15)


@pytest.mark.parametrize("t", [-1e-8, -1e-12, 0.0, 3e-9, 0.5, -7.0, 1e6])
def test_t_cdf_closed_forms_near_zero(t: float) -> None:
    # df 1 (Cauchy) and 2 have closed forms; near t = 0 scipy 1.17 itself is off by ~1e-9 there
    assert t_cdf(t, 1) == pytest.approx(0.5 + np.arctan(t) / np.pi, rel=1e-13, abs=1e-16)
    assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * np.sqrt(2 + t * t)), rel=1e-13, abs=1e-16)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.05, 500), st.floats(0.05, 500), st.floats(0.0, 1.0, allow_nan=False)
)
def test_betainc_matches_scipy(a: float, b: float, x: float) -> None:
    assert betainc(a, b, x) == pytest.approx(scipy_special.betainc(a, b, x), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("bad", [(0.0, 1.0, 0.5), (1.0, -1.0, 0.5), (1.0, 1.0, 1.5)])
def test_betainc_rejects_bad_arguments(bad: tuple[float, float, float]) -> None:
    with pytest.raises(ValueError, match="betainc"):
        betainc(*bad)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1), st.floats(-0.3, 0.3))
def test_ttest_rel_matches_scipy(n: int, seed: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + shift + rng.normal(0, 0.2, n), 0, 1)
    t, p = ttest_rel(b, a)
    ref = scipy_stats.ttest_rel(b, a)
    if not np.isfinite(ref.statistic):
        return  # identical differences: scipy inf/nan, ours documented in ttest_rel
    assert t == pytest.approx(ref.statistic, rel=1e-10, abs=1e-10)
    assert p == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-10)


def test_ttest_rel_degenerate() -> None:
    a = np.array([0.25, 0.5, 0.75])
    assert ttest_rel(a, a) == (0.0, 1.0)
    t, p = ttest_rel(a + 0.5, a)
    assert t == np.inf and p == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        ttest_rel(a[:1], a[:1])


def _brute_force_p(d: np.ndarray) -> float:
    observed = abs(d.sum())
    tol = 1e-12 * np.abs(d).sum()
    sums = [abs(sum(s * x for s, x in zip(signs, d, strict=True))) for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(s >= observed - tol for s in sums) / 2 ** len(d)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-0.5, -0.25, -0.1, 0.0, 0.1, 0.2, 0.25, 0.5, 1.0]), min_size=1, max_size=10))
def test_permutation_exact_equals_brute_force(values: list[float]) -> None:
    d = np.array(values)
    assert permutation_test(d, permutations=2 ** len(d)) == pytest.approx(_brute_force_p(d), abs=1e-15)


def test_permutation_random_close_to_exact() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.05, 0.2, 16)
    exact = permutation_test(d, permutations=2**16)
    sampled = permutation_test(d, permutations=20000, seed=3)
    assert abs(sampled - exact) < 0.02  # ~4.5 standard errors of a 20000-draw estimate
    assert sampled == permutation_test(d, permutations=20000, seed=3)  # seeded: reproducible
    assert 0.0 < sampled <= 1.0


def test_bootstrap_interval_brackets_mean() -> None:
    rng = np.random.default_rng(1)
    d = rng.normal(0.1, 0.1, 50)
    low, high = bootstrap_ci(d, 5000, 0.05, seed=2)
    assert low < d.mean() < high
    half_width = 1.96 * d.std(ddof=1) / np.sqrt(50)  # normal approximation
    assert high - low == pytest.approx(2 * half_width, rel=0.15)
    assert bootstrap_ci(d, 5000, 0.05, seed=2) == (low, high)


def test_holm_by_hand() -> None:
    # sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> max 0.06)
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.2]) == [0.2]


def test_small_chunks_give_the_same_exact_p(monkeypatch) -> None:
    import streammetrics.trec.significance as S

    d = np.array([0.3, -0.1, 0.25, 0.0, 0.5, -0.2, 0.1, 0.05, -0.4, 0.2])
    whole = S.permutation_test(d, permutations=2**10)
    monkeypatch.setattr(S, "_CHUNK_CELLS", 8)  # one sign vector per chunk
    assert S.permutation_test(d, permutations=2**10) == whole == pytest.approx(_brute_force_p(d), abs=1e-15)
    low, high = S.bootstrap_ci(d, 200, 0.1, seed=1)
    assert low <= d.mean() <= high
