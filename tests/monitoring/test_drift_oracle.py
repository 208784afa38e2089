"""Drift against scipy and its written definition (docs/definitions/monitoring.md, "Drift"):
every statistic to 1e-12 after any batch split, merge and save/load, with ties and weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as ss
from helpers import ks_stat
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon

import streammetrics as sm
from streammetrics.monitoring import Drift


def oracle(ref: np.ndarray, cur: np.ndarray, bins: int, w: np.ndarray | None = None) -> dict[str, float]:
    """The definitions, written out with numpy and scipy (integer weights by repetition)."""
    if w is not None:
        reps = w.astype(int)
        assert np.array_equal(reps, w)
        cur = np.repeat(cur, reps)
    edges = np.quantile(ref, np.linspace(0, 1, bins + 1))
    edges[0], edges[-1] = -np.inf, np.inf
    r = np.histogram(ref, edges)[0] / len(ref)
    c = np.histogram(cur, edges)[0] / len(cur)
    rf, cf = np.maximum(r, 1e-4), np.maximum(c, 1e-4)
    return {"psi": float(np.sum((cf - rf) * np.log(cf / rf))), "js": float(jensenshannon(r, c, base=2)),
            "ks": float(ks_stat(ref, cur)), "wasserstein": float(ss.wasserstein_distance(ref, cur))}


def close(a: dict, b: dict, keys=("psi", "js", "ks", "wasserstein")) -> None:
    for k in keys:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-12, atol=1e-12, err_msg=k)


def tied(rng: np.random.Generator, n: int, shift: float = 0.0) -> np.ndarray:
    levels = int(rng.integers(1, 8))
    return np.round((rng.random(n) + shift) * levels) / levels


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_ref=st.integers(1, 60), n=st.integers(1, 60),
       bins=st.integers(1, 12), data=st.data())
def test_equals_scipy_after_any_split_merge_and_save(seed, n_ref, n, bins, data):
    rng = np.random.default_rng(seed)
    ref, cur = tied(rng, n_ref), tied(rng, n, float(rng.random()))
    want = oracle(ref, cur, bins)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    one = Drift(ref, bins=bins)
    for a, b in zip([0, *cuts], [*cuts, n], strict=True):
        one.update(cur[a:b])
    close(one.compute(), want)
    owner = rng.integers(0, 3, n)
    parts = [Drift(ref, bins=bins).update(cur[owner == i]) for i in range(3)]
    merged = sm.loads(sm.dumps(parts[0].merge(*parts[1:])))
    close(merged.compute(), want)
    low_high = merged.bounds()
    for k in want:
        assert low_high[k][0] == low_high[k][1] == merged.compute()[k]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 50))
def test_integer_weights_equal_repetition_and_match_scipy_weighted(seed, n):
    rng = np.random.default_rng(seed)
    ref, cur = tied(rng, 40), tied(rng, n, 0.3)
    w = rng.integers(0, 4, n).astype(float)
    w[0] = 1.0
    d = Drift(ref, bins=5).update(cur, sample_weight=w)
    close(d.compute(), oracle(ref, cur, 5, w))
    real_w = rng.random(n) + 0.01
    got = Drift(ref, bins=5).update(cur, sample_weight=real_w).compute()
    np.testing.assert_allclose(got["wasserstein"], ss.wasserstein_distance(ref, cur, None, real_w), rtol=1e-12,
                               atol=1e-12)


def test_reference_kept_as_a_mapping_or_a_drift_or_a_state_dict_gives_the_same_values():
    rng = np.random.default_rng(3)
    ref, cur = tied(rng, 200), tied(rng, 150, 0.2)
    base = Drift(ref, bins=7).update(cur).compute()
    for kept in (Drift.fit_reference(ref, bins=7), Drift(ref, bins=7), Drift(ref, bins=7).state_dict()):
        close(Drift(kept, bins=7).update(cur).compute(), base)
    with pytest.raises(ValueError, match="bins"):
        Drift(Drift.fit_reference(ref, bins=7), bins=5)


def test_multiclass_per_class_drift_and_class_shares():
    rng = np.random.default_rng(5)
    ref = np.round(rng.random((300, 3)), 1)
    cur = np.round(rng.random((200, 3)) ** 2, 1)
    out = Drift(ref, bins=4).update(cur[:50]).update(cur[50:]).compute()
    for k in range(3):
        close({s: out[s][k] for s in ("psi", "js", "ks", "wasserstein")}, oracle(ref[:, k], cur[:, k], 4))
    r = np.bincount(np.argmax(ref, axis=1), minlength=3) / 300
    o = np.bincount(np.argmax(cur, axis=1), minlength=3).astype(float)
    e = r * o.sum()
    np.testing.assert_allclose(out["class_chi2"], ss.chisquare(o, e).statistic, rtol=1e-12)
    rf, cf = np.maximum(r, 1e-4), np.maximum(o / o.sum(), 1e-4)
    np.testing.assert_allclose(out["class_psi"], np.sum((cf - rf) * np.log(cf / rf)), rtol=1e-12)


def test_a_score_on_an_interior_edge_goes_to_the_bin_above():
    ref = np.array([0.0, 1.0, 2.0, 3.0, 4.0])  # quantile edges 0, 1, 2, 3, 4 with bins=4
    d = Drift(ref, bins=4).update([1.0, 1.0, 3.0])
    hist = d._state.hist()[0]  # noqa: SLF001 -- the documented binning, observed directly
    np.testing.assert_array_equal(hist, [0, 2, 0, 1])
    # as numpy.histogram's half-open bins [e_i, e_{i+1})
    np.testing.assert_array_equal(hist, np.histogram([1.0, 1.0, 3.0], [-np.inf, 1, 2, 3, np.inf])[0])


def test_empty_current_is_nan_with_a_warning():
    d = Drift([0.1, 0.2])
    with pytest.warns(sm.UndefinedMetricWarning):
        out = d.compute()
    assert all(np.isnan(v) for v in out.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(d.update([0.3]).compute()["ks"])


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 30), n=st.integers(1, 40), shift=st.floats(-2, 2),
       weighted=st.booleans())
def test_the_block_kernel_equals_the_merge_kernel(seed, m, n, shift, weighted):
    """The exact path (no merge of the two sides) against the merged CDFs, current scores
    below, inside and above the reference, with ties and weights."""
    from streammetrics.monitoring._drift_stats import ks_wasserstein, ks_wasserstein_blocks

    rng = np.random.default_rng(seed)
    rv, rc = np.unique(tied(rng, m), return_counts=True)
    cur = np.sort(tied(rng, n) + shift)
    w = rng.random(n) + 0.01 if weighted else None
    want = ks_wasserstein((rv, rv, rc.astype(float)), (cur, cur, np.ones(n) if w is None else w))
    got = ks_wasserstein_blocks(rv, rc.astype(float), cur, w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
