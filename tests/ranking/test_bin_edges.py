"""The closed score range of every bin of the bounded ranking state (``BinnedScores.lower_edges``
/ ``upper_edges``): every score lies in its bin's range, the ranges are tight (the range's ends
are scores of that bin) and ordered, at any shift, for raw and probability keys and fixed
thresholds (issue #31: Drift's certified KS / Wasserstein read them)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.binned.keys import prob_keys, raw_keys


def _data(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "wide":  # every magnitude, both signs: shifts near the top of the key range
        return rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
    if kind == "extreme":  # the largest finite floats and the infinities
        return np.r_[rng.random(n), np.finfo(np.float64).max, -np.finfo(np.float64).max, np.inf, -np.inf]
    if kind == "probability":
        return np.r_[rng.random(n) ** 5, 1.0 - rng.random(n) ** 5, 0.0, 1.0, 0.5]
    return np.round(rng.random(n), int(rng.integers(1, 7)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["wide", "extreme", "probability", "plain"]),
       n=st.integers(1, 3000), max_bytes=st.sampled_from([512, 1024, 4096]))
def test_every_score_lies_in_its_bins_closed_range(seed, kind, n, max_bytes):
    rng = np.random.default_rng(seed)
    data = _data(rng, kind, n)
    transform = "probability" if kind == "probability" else "raw"
    b = BinnedScores("binary", None, max_bytes=max_bytes, scores=transform)
    b.apply(b.prepare(rng.integers(0, 2, data.shape[0]), data, None))
    lo, hi = b.lower_edges(0), b.upper_edges(0)
    assert not np.isnan(hi).any()
    assert (lo <= hi).all() and (hi[:-1] <= lo[1:]).all()
    i = np.searchsorted(lo, data, "right") - 1
    assert (i >= 0).all() and (data <= hi[i]).all()
    if b.column_exact(0):
        np.testing.assert_array_equal(hi, lo)
    keys = (prob_keys if transform == "probability" else raw_keys)
    inner = np.isfinite(hi) & (hi != 0.0)  # (0.0: -0.0 ends the bin below 0, whose key folds to 0's)
    shift = int(b._shift[0])  # noqa: SLF001 -- the layout under test
    np.testing.assert_array_equal(keys(hi[inner]) >> shift, b._keys[0][inner])  # noqa: SLF001
    above = np.nextafter(hi[inner & (hi < np.finfo(np.float64).max)], np.inf)  # the next float: next bin
    if transform == "raw":
        assert (keys(above) >> shift > b._keys[0][inner & (hi < np.finfo(np.float64).max)]).all()  # noqa: SLF001


def test_fixed_thresholds_bins_end_below_the_next_edge():
    b = BinnedScores("binary", None, thresholds=[0.2, 0.5, 0.8])
    b.apply(b.prepare([0, 1, 0, 1, 1], [0.1, 0.2, 0.6, 0.9, 0.5], None))
    np.testing.assert_array_equal(b.lower_edges(0), [-np.inf, 0.2, 0.5, 0.8])
    np.testing.assert_array_equal(b.upper_edges(0), [np.nextafter(0.2, 0), np.nextafter(0.5, 0),
                                                     np.nextafter(0.8, 0), np.inf])
