"""Pearson, Lin's concordance, Spearman and Kendall's tau-b against scipy (exact, ties) after any
split, merge and save/load; their weighted forms against slow oracles and repetition; the
compiled and numpy inversion counts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as ss
from helpers import streamed_rows as _streamed
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._scores.exact.merge_count import compiled_kernels
from streammetrics.regression._ranks import _inversions_numpy, inversions


def _ties(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    lv = int(rng.integers(1, 5))
    y = np.round(rng.normal(size=(n, k)) * lv) / lv
    p = np.round((y * rng.random() + rng.normal(size=(n, k))) * lv) / lv
    return y, p


def _ccc(y, p, w):
    if np.ptp(y) == 0 and np.ptp(p) == 0:
        # two constant columns: 0/0 when equal (undefined), else 0; computed below, the weighted
        # means' rounding would leave deviations of one ulp and a ratio of them (seed 208, n=2)
        return np.nan if y[0] == p[0] else 0.0
    w = np.ones(len(y)) if w is None else w
    tw = w.sum()
    my, mp = (w * y).sum() / tw, (w * p).sum() / tw
    sy, sp = (w * (y - my) ** 2).sum() / tw, (w * (p - mp) ** 2).sum() / tw
    return 2 * (w * (y - my) * (p - mp)).sum() / tw / (sy + sp + (my - mp) ** 2)


def _wpearson(a, b, w):
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return np.nan  # a constant column (its weighted ranks may differ from their mean by rounding)
    tw = w.sum()
    da, db = a - (w * a).sum() / tw, b - (w * b).sum() / tw
    return (w * da * db).sum() / np.sqrt((w * da * da).sum() * (w * db * db).sum())


def _wranks(v, w):
    return np.array([w[v < x].sum() + w[v == x].sum() / 2 for x in v])


def _wkendall(y, p, w):
    num = dy = dp = 0.0
    for i in range(len(y)):
        for j in range(i + 1, len(y)):
            ww = w[i] * w[j]
            num += ww * np.sign(y[i] - y[j]) * np.sign(p[i] - p[j])
            dy += ww * (y[i] != y[j])
            dp += ww * (p[i] != p[j])
    return num / np.sqrt(dy * dp)


SCIPY = {
    sm.PearsonCorrCoef: lambda y, p: ss.pearsonr(y, p).statistic,
    sm.SpearmanCorrCoef: lambda y, p: ss.spearmanr(y, p).statistic,
    sm.KendallTau: lambda y, p: ss.kendalltau(y, p).statistic,
    sm.ConcordanceCorrCoef: lambda y, p: _ccc(y, p, None),
}
WEIGHTED = {
    sm.PearsonCorrCoef: lambda y, p, w: _wpearson(y, p, w),
    sm.SpearmanCorrCoef: lambda y, p, w: _wpearson(_wranks(y, w), _wranks(p, w), w),
    sm.KendallTau: _wkendall,
    sm.ConcordanceCorrCoef: _ccc,
}


def _close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", list(SCIPY))
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 80), k=st.integers(1, 3))
def test_unweighted_equals_scipy_per_output(cls, seed, n, k):
    rng = np.random.default_rng(seed)
    y, p = _ties(rng, n, k)
    m = _streamed(lambda: cls(multioutput="raw_values"), y, p, None, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = m.compute()
        expected = [SCIPY[cls](y[:, j], p[:, j]) for j in range(k)]
    _close(got, expected)


@pytest.mark.parametrize("cls", list(WEIGHTED))
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40))
def test_weighted_equals_the_oracle_and_integer_weights_repetition(cls, seed, n):
    rng = np.random.default_rng(seed)
    y, p = _ties(rng, n, 1)
    y, p = y[:, 0], p[:, 0]
    w = rng.random(n) + 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(_streamed(cls, y, p, w, rng).compute(), WEIGHTED[cls](y, p, w))
        reps = rng.integers(0, 4, n)
        if (reps > 0).sum() >= 2:
            _close(cls().update(y, p, sample_weight=reps.astype(float)).compute(),
                   cls().update(np.repeat(y, reps), np.repeat(p, reps)).compute())
        _close(cls().update(y, p, sample_weight=w * 1000.0).compute(), cls().update(y, p, sample_weight=w).compute())


def test_kendall_large_compiled_and_numpy_agree_with_scipy():
    pytest.importorskip("numba")  # the compiled kernels: the `fast` extra
    rng = np.random.default_rng(7)
    n = 20_000
    y = rng.integers(0, 300, n).astype(float)
    p = y + rng.integers(0, 100, n)
    w = rng.random(n)
    expected = ss.kendalltau(y, p).statistic
    for enabled in (True, False):
        with compiled_kernels(enabled, min_size=1):
            assert sm.KendallTau().update(y, p).compute() == expected
            got = sm.KendallTau().update(y, p, sample_weight=w).compute()
            np.testing.assert_allclose(got, sm.KendallTau().update(y, p, sample_weight=w).compute(), rtol=1e-12)
    with compiled_kernels(True, min_size=1):
        a = sm.KendallTau().update(y, p, sample_weight=w).compute()
    with compiled_kernels(False):
        b = sm.KendallTau().update(y, p, sample_weight=w).compute()
    np.testing.assert_allclose(a, b, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), m=st.integers(1, 40))
def test_inversion_counts_equal_brute_force(seed, n, m):
    pytest.importorskip("numba")  # compares the compiled kernel too: the `fast` extra
    rng = np.random.default_rng(seed)
    r = rng.integers(0, m, n)
    w = rng.random(n)
    i, j = np.triu_indices(n, 1)
    bad = r[i] > r[j]
    assert _inversions_numpy(r, None) == int(bad.sum())
    np.testing.assert_allclose(_inversions_numpy(r, w), float((w[i] * w[j] * bad).sum()), rtol=1e-12, atol=1e-12)
    with compiled_kernels(True, min_size=1):
        assert inversions(r, None) == int(bad.sum())
        np.testing.assert_allclose(inversions(r, w), float((w[i] * w[j] * bad).sum()), rtol=1e-12, atol=1e-12)
    from streammetrics.regression import _rank_numba as kernels  # both compiled kernels, directly

    expected_w = float((w[i] * w[j] * bad).sum())
    assert kernels.inversions_unit(r) == int(bad.sum()) == kernels.inversions_fenwick(r, m)
    np.testing.assert_allclose(kernels.inversions_weighted(r, w), expected_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernels.inversions_fenwick_weighted(r, w, m), expected_w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", list(SCIPY))
def test_undefined_outputs_are_nan_with_a_warning(cls):
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(cls().compute())
    m = cls(multioutput="raw_values").update([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]], [[1.0, 1.0], [3.0, 1.0], [2.0, 1.0]])
    with pytest.warns(sm.UndefinedMetricWarning, match=r"output\(s\) \[1\]"):
        v = m.compute()
    assert not np.isnan(v[0]) and np.isnan(v[1])


@pytest.mark.parametrize("cls", list(SCIPY))
def test_hostile_states_are_refused_or_work(cls):
    rng = np.random.default_rng(1)
    y = rng.normal(size=(30, 2))
    m = cls(multioutput="raw_values").update(y, y + rng.normal(size=(30, 2)), sample_weight=rng.random(30))
    good = m.state_dict()
    for key in [k for k in good if k not in ("class", "format_version", "config")]:
        for bad in (np.array([np.nan]), np.array(["x"]), np.negative(good[key]) * 1e300, np.zeros((2, 2)),
                    np.zeros(0)):
            state = dict(good)
            state[key] = bad
            try:
                loaded = cls.from_state_dict(state)
            except ValueError:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = np.asarray(loaded.compute(), float)
            assert np.all(np.isnan(v) | ((v >= -1) & (v <= 1)))
            sm.loads(sm.dumps(loaded))


def test_moment_correlations_keep_the_digits_of_large_means():
    """Means kept relative to a pivot: y = 1e9 + noise streamed in 100 batches over two workers
    equals scipy on the exactly centred data (a plain Chan merge of 1e9-sized means lost ~1e-9)."""
    rng = np.random.default_rng(0)
    n = 100_000
    y = 1e9 + rng.normal(size=n)
    p = 1e9 + 0.5 * (y - 1e9) + rng.normal(size=n)
    for cls, ref in ((sm.PearsonCorrCoef, SCIPY[sm.PearsonCorrCoef]), (sm.ConcordanceCorrCoef, SCIPY[sm.ConcordanceCorrCoef])):
        parts = [cls(), cls()]
        for i in range(0, n, 1000):
            parts[(i // 1000) % 2].update(y[i:i + 1000], p[i:i + 1000])
        got = sm.loads(sm.dumps(parts[0].merge(parts[1]))).compute()
        np.testing.assert_allclose(got, ref(y - 1e9, p - 1e9), rtol=1e-13)
