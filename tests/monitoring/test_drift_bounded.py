"""Drift(max_bytes=...): PSI and JS stay exact, KS and Wasserstein are read from bins on both
sides, and bounds() holds the exact values (docs/definitions/monitoring.md, "Bounded memory")."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss
from helpers import ks_stat
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics.monitoring import Drift
from streammetrics.monitoring._drift_stats import ks_wasserstein_bounds


def draws(rng: np.random.Generator, kind: int, n: int) -> np.ndarray:
    if kind == 0:
        return rng.normal(rng.random(), 1 + rng.random(), n)
    if kind == 1:
        return rng.random(n) ** 4  # crowded near 0
    return np.round(rng.normal(0, 3, n), 2)  # ties


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       max_bytes=st.sampled_from([1024, 2048, 8192]), parts=st.integers(1, 3))
def test_bounds_hold_the_exact_values_after_merge_and_save(seed, kinds, max_bytes, parts):
    rng = np.random.default_rng(seed)
    ref, cur = draws(rng, kinds[0], 3000), draws(rng, kinds[1], int(rng.integers(1, 4000)))
    exact = Drift(ref).update(cur).compute()
    owner = rng.integers(0, parts, cur.shape[0])
    pieces = [Drift(ref, max_bytes=max_bytes).update(cur[owner == i]) for i in range(parts)]
    d = sm.loads(sm.dumps(pieces[0].merge(*pieces[1:])))
    got, b = d.compute(), d.bounds()
    for k in ("psi", "js"):  # fixed quantile bins: exact
        np.testing.assert_allclose(got[k], exact[k], rtol=1e-12, atol=1e-12)
        assert b[k] == (got[k], got[k])
    for k in ("ks", "wasserstein"):
        lo, hi = b[k]
        assert lo <= got[k] <= hi
        assert lo - 1e-12 <= exact[k] <= hi + 1e-12, (k, lo, exact[k], hi)
    assert d.nbytes <= max_bytes


def test_bounded_state_memory_does_not_grow_and_intervals_are_useful():
    rng = np.random.default_rng(1)
    ref = rng.normal(0, 1, 100_000)
    d = Drift(ref, max_bytes=16384)
    for _ in range(5):
        d.update(rng.normal(0.2, 1, 100_000))
    assert d.nbytes <= 16384
    b = d.bounds()
    assert not d.is_exact
    assert b["ks"][1] - b["ks"][0] < 0.05
    assert b["wasserstein"][1] - b["wasserstein"][0] < 0.1
    assert len(Drift.fit_reference(ref, max_bytes=16384)["lows"][0]) <= 16384 // 24


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_envelopes_hold_every_placement_inside_the_bins(seed):
    """The certificate of any two binned sides holds the KS and Wasserstein of random samples
    drawn inside those bins (closed intervals, ends included)."""
    rng = np.random.default_rng(seed)

    def side(n_bins):
        edges = np.sort(np.round(rng.normal(0, 1, 2 * n_bins), 1))
        lo, hi = edges[0::2], edges[1::2]
        keep = np.concatenate([[True], lo[1:] > hi[:-1]])
        lo, hi = lo[keep], hi[keep]
        return lo, hi, rng.integers(1, 4, lo.shape[0]).astype(float)

    r, c = side(int(rng.integers(1, 6))), side(int(rng.integers(1, 6)))
    (klo, khi), (wlo, whi) = ks_wasserstein_bounds(r, c)

    def place(s, mode):
        lo, hi, m = s
        pts = {0: lo, 1: hi, 2: lo + (hi - lo) * rng.random(lo.shape[0])}[mode]
        return np.repeat(pts, m.astype(int))

    for mr in range(3):
        for mc in range(3):
            a, b = place(r, mr), place(c, mc)
            ks, w = ks_stat(a, b), ss.wasserstein_distance(a, b)
            assert klo - 1e-12 <= ks <= khi + 1e-12
            assert wlo - 1e-12 <= w <= whi + 1e-12


def test_max_bytes_too_small_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match="max_bytes"):
        Drift([0.0, 1.0], max_bytes=10)
