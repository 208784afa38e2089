"""The blocked confusion-cell counting equals one ``np.bincount`` of the cells (weights and
squared weights to a few ulps; unit weights exactly), across block boundaries and for every
label dtype the confusion state hands it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics._counts.cells import cell_counts


@settings(max_examples=30, deadline=None)
@given(n=st.sampled_from([0, 1, 7, 32_767, 32_768, 32_769, 70_001]), k=st.integers(2, 12),
       dtype=st.sampled_from(["int64", "uint64", "int32", "uint8"]), weighted=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_cell_counts_equal_one_bincount(n: int, k: int, dtype: str, weighted: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n).astype(dtype)
    p = rng.integers(0, k, n).astype(dtype)
    w = None
    if weighted:
        w = rng.random(n) * rng.choice([1e-3, 1.0, 1e4], n)
        w[rng.random(n) < 0.1] = 0.0
    counts, w2 = cell_counts(y, p, k, w)
    cell = y.astype(np.int64) * k + p.astype(np.int64)
    ref = np.bincount(cell, weights=w, minlength=k * k).reshape(k, k)
    if w is None:
        assert w2 is None and np.array_equal(counts, ref)
    else:
        ref2 = np.bincount(cell, weights=w * w, minlength=k * k).reshape(k, k)
        assert w2 is not None
        np.testing.assert_allclose(counts, ref, rtol=1e-12, atol=0)
        np.testing.assert_allclose(w2, ref2, rtol=1e-12, atol=0)


def test_cell_counts_of_boolean_labels() -> None:
    rng = np.random.default_rng(0)
    y, p = rng.random(40_000) < 0.3, rng.random(40_000) < 0.5
    counts, _ = cell_counts(y.view(np.uint8), p.view(np.uint8), 2, None)
    assert np.array_equal(counts, [[np.sum(~y & ~p), np.sum(~y & p)], [np.sum(y & ~p), np.sum(y & p)]])
