"""Drift's KS / Wasserstein kernels (issue #31): the block kernel of two exact sides (no merge,
one pass over the current scores) equals the merged CDFs and scipy to 1e-12 with ties, weights
and scores far from 0; scores spanning more than the largest float give finite certified
intervals holding the exact value, without NaN or RuntimeWarning."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics import Drift
from streammetrics.monitoring._drift_stats import ks_wasserstein, ks_wasserstein_blocks


def _sides(rng: np.random.Generator, m: int, n: int, offset: float, scale: float, levels: int):
    ref = np.round(rng.beta(2, 5, m) * levels) / levels * scale + offset
    cur = np.round(rng.beta(2.4, 5, n) * levels) / levels * scale + offset + rng.integers(-1, 2) * scale / 3
    return ref, cur


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 40), n=st.integers(1, 60),
       offset=st.sampled_from([0.0, 0.5, -3.0, 1e3, -1e6, 1e12]), scale=st.sampled_from([1.0, 1e-3, 100.0]),
       levels=st.sampled_from([2, 5, 1000]), weighted=st.booleans())
def test_the_block_kernel_equals_the_merged_cdfs(seed, m, n, offset, scale, levels, weighted):
    rng = np.random.default_rng(seed)
    ref, cur = _sides(rng, m, n, offset, scale, levels)
    rv, rc = np.unique(ref, return_counts=True)
    cv = np.sort(cur)
    w = rng.random(n) + 0.01 if weighted else None
    want = ks_wasserstein((rv, rv, rc.astype(float)), (cv, cv, np.ones(n) if w is None else w))
    got = ks_wasserstein_blocks(rv, rc.astype(float), cv, w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(got[1], ss.wasserstein_distance(ref, cur, None, None if w is None else w[np.argsort(
        np.argsort(cur, kind="stable"), kind="stable")]), rtol=1e-12, atol=1e-12 * scale)


def test_large_samples_equal_scipy():
    """10^5 reference and 10^6 current scores with ties, near 0 and far from it."""
    rng = np.random.default_rng(31)
    for offset in (0.0, 1e4):
        ref, cur = _sides(rng, 100_000, 1_000_000, offset, 1.0, 10**6)
        d = Drift(ref).update(cur).compute()
        assert abs(d["ks"] - ss.ks_2samp(ref, cur).statistic) <= 1e-12
        want = ss.wasserstein_distance(ref, cur)
        assert abs(d["wasserstein"] - want) <= 1e-12 * want
        w = rng.random(cur.shape[0]) + 0.5
        got = Drift(ref).update(cur, sample_weight=w).compute()["wasserstein"]
        want = ss.wasserstein_distance(ref, cur, None, w)
        assert abs(got - want) <= 1e-12 * want


def test_scores_spanning_more_than_the_largest_float():
    """Their differences overflow: the exact value is scipy's on the halved scores, doubled, and the
    bounded intervals are finite and hold it (they were NaN, with a RuntimeWarning)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(5000) * 10.0 ** rng.integers(-300, 300, 5000)
    x[:3] = [1.7e308, -1.7e308, 1e308]
    ref, cur = x[:1000], x[1000:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = Drift(ref).update(cur).compute()
        bounded = Drift(ref, max_bytes=2048).update(cur)
        values, bounds = bounded.compute(), bounded.bounds()
    assert np.isclose(exact["wasserstein"], 2 * ss.wasserstein_distance(ref / 2, cur / 2), rtol=1e-12)
    assert abs(exact["ks"] - ss.ks_2samp(ref, cur).statistic) <= 1e-12
    for key in ("ks", "wasserstein"):
        low, high = bounds[key]
        assert np.isfinite([low, high, values[key]]).all()
        assert low <= exact[key] * (1 + 1e-12) and exact[key] <= high * (1 + 1e-12)
