"""MedianAbsoluteError and the D² scores against scikit-learn (exact), and the certified bounds of
their bounded variants (``max_bytes``), on random data with ties and weights, after any batch
split, merge and save/load."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import streamed_rows as _streamed
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import d2_absolute_error_score, d2_pinball_score, median_absolute_error

import streammetrics as sm
from streammetrics.regression._ranks import weighted_percentile
from streammetrics.regression._value_bins import percentile_bounds, pinball_min_bounds


def _data(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    levels = int(rng.integers(1, 5))
    y = np.round(rng.normal(size=(n, k)) * levels) / levels  # ties
    p = np.round(rng.normal(size=(n, k)) * levels) / levels
    return (y[:, 0], p[:, 0]) if k == 1 and rng.random() < 0.5 else (y, p)


def _weights(rng: np.random.Generator, n: int) -> np.ndarray | None:
    r = rng.random()
    if r < 0.3:
        return None
    if r < 0.6:
        return rng.integers(0, 4, n) * 0.5  # zeros, and sums exact in any order
    return rng.random(n) + 0.01


CASES = [
    (sm.MedianAbsoluteError, median_absolute_error, {}),
    (sm.D2AbsoluteErrorScore, d2_absolute_error_score, {}),
    (sm.D2PinballScore, d2_pinball_score, {"alpha": 0.1}),
    (sm.D2PinballScore, d2_pinball_score, {"alpha": 0.9}),
    (sm.D2PinballScore, d2_pinball_score, {"alpha": 0.25}),
]


@pytest.mark.parametrize("cls,ref,kw", CASES)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), k=st.integers(1, 3))
def test_exact_equals_scikit_learn_after_split_merge_and_save(cls, ref, kw, seed, n, k):
    rng = np.random.default_rng(seed)
    y, p = _data(rng, n, k)
    w = _weights(rng, n)
    if w is not None and (w > 0).sum() < 2:
        w[:2] = 1.0  # scikit-learn counts rows of weight 0 for its two-sample rule: keep two
    outputs = ["raw_values", "uniform_average"]
    if y.ndim == 2 and y.shape[1] > 1:  # scikit-learn takes output weights for several outputs only
        outputs.append(list(rng.random(y.shape[1]) + 0.1))
    for mo in outputs:
        m = _streamed(lambda cls=cls, mo=mo: cls(multioutput=mo, **kw), y, p, w, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = ref(y, p, sample_weight=w, multioutput=mo, **kw)
        np.testing.assert_allclose(m.compute(), expected, rtol=1e-12, atol=1e-12)
        low, high = m.bounds()
        np.testing.assert_array_equal(low, high)
        assert m.is_exact


@pytest.mark.parametrize("cls,ref,kw", CASES)
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 400), max_bytes=st.sampled_from([600, 1000, 2000]))
def test_bounded_bounds_hold_the_exact_value(cls, ref, kw, seed, n, max_bytes):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 3))
    y = rng.standard_t(2, size=(n, k)) * 10.0 ** rng.integers(-3, 4)
    p = y + rng.normal(size=(n, k)) * rng.random()
    if rng.random() < 0.3:
        y, p = np.round(y), np.round(p)
    w = _weights(rng, n)
    if w is not None and (w > 0).sum() < 2:
        w[:2] = 1.0
    bm = _streamed(lambda: cls(multioutput="raw_values", max_bytes=max_bytes, **kw), y, p, w, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = ref(y, p, sample_weight=w, multioutput="raw_values", **kw)
    low, high = bm.bounds()
    tol = 1e-12 * np.maximum(1.0, np.abs(exact))  # sums in another order: rounding
    assert np.all(low - tol <= exact) and np.all(exact <= high + tol), (low, exact, high)
    v = bm.compute()
    assert np.all(low <= v) and np.all(v <= high)
    assert bm.nbytes <= max_bytes
    if bm.is_exact:
        np.testing.assert_allclose(v, exact, rtol=1e-12, atol=1e-12)


def test_bounded_median_narrows_with_memory():
    rng = np.random.default_rng(0)
    y = rng.normal(size=50_000)
    p = y + rng.standard_t(3, size=50_000)
    exact = median_absolute_error(y, p)
    widths = []
    for mb in (512, 4096, 65536):
        low, high = sm.MedianAbsoluteError(max_bytes=mb).update(y, p).bounds()
        assert low <= exact <= high
        widths.append(high - low)
    assert widths[0] >= widths[1] >= widths[2]
    assert widths[2] < 1e-2 * exact  # 4096 bins over ~20 binades: about 2**-8 relative


def test_weighted_percentile_kernel_equals_scikit_learn():
    from sklearn.utils.stats import _weighted_percentile

    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 30))
        v = np.sort(rng.integers(0, 6, n).astype(float))
        w = rng.integers(1, 4, n) * 0.5 if rng.random() < 0.5 else rng.random(n) + 0.01
        rank = float(rng.choice([0, 10, 25, 50, 75, 90, 100, rng.random() * 100]))
        for average in (False, True):
            assert weighted_percentile(v, w, rank, average) == _weighted_percentile(
                v, w, rank, average=average)


def test_percentile_and_pinball_bounds_on_bins_of_known_contents():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        v = np.sort(rng.normal(size=n))
        w = rng.random(n) + 0.05
        cut = np.sort(rng.choice(np.arange(1, n), size=min(n - 1, int(rng.integers(0, 6))), replace=False)) \
            if n > 1 else np.zeros(0, int)
        starts = np.concatenate([[0], cut])
        lo, hi = v[starts], v[np.append(cut, n) - 1]
        bw = np.add.reduceat(w, starts)
        for rank, average in ((50, True), (10, True), (90, False)):
            exact = weighted_percentile(v, w, rank, average)
            a, b = percentile_bounds(lo, hi, bw, rank, average)
            assert a <= exact <= b
        for alpha in (0.1, 0.5, 0.8):
            q = weighted_percentile(v, w, alpha * 100, True)
            d = v - q
            exact = float(np.sum(w * np.where(d >= 0, alpha * d, (alpha - 1) * d)))
            a, b = pinball_min_bounds(lo, hi, bw, alpha)
            assert a <= exact * (1 + 1e-12) + 1e-12 and exact <= b * (1 + 1e-12) + 1e-12


def test_undefined_and_refused():
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.MedianAbsoluteError().compute())
    with pytest.warns(sm.UndefinedMetricWarning, match="less than two samples"):
        assert np.isnan(sm.D2PinballScore().update([1.0], [2.0]).compute())
    with pytest.raises(ValueError, match="alpha"):
        sm.D2PinballScore(alpha=1.5)
    with pytest.raises(ValueError, match="max_bytes"):
        sm.MedianAbsoluteError(max_bytes=100).update([1.0, 2.0], [1.0, 3.0])
    m = sm.MedianAbsoluteError().update([1.0, 2.0], [1.5, 2.0])
    before = m.state_dict()
    with pytest.raises(ValueError, match="y_pred"):
        m.update([1.0, 2.0], [np.nan, 1.0])
    with pytest.raises(ValueError, match="output"):
        m.update([[1.0, 2.0]], [[1.0, 2.0]])
    after = m.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before if k not in ("class", "config"))


@pytest.mark.parametrize("make", [lambda: sm.MedianAbsoluteError(), lambda: sm.D2PinballScore(0.3),
                                  lambda: sm.MedianAbsoluteError(max_bytes=600),
                                  lambda: sm.D2PinballScore(0.3, max_bytes=600)])
def test_hostile_states_are_refused(make):
    rng = np.random.default_rng(1)
    y = rng.normal(size=(50, 2))
    m = make().update(y, y + rng.normal(size=(50, 2)), sample_weight=rng.random(50))
    good = m.state_dict()
    arrays = [k for k in good if k not in ("class", "format_version", "config")]
    for key in arrays:
        for bad in (np.array([np.nan]), np.array(["x"]), np.negative(good[key]) - 1, np.flip(good[key]), np.zeros((2, 2))):
            state = dict(good)
            state[key] = bad
            try:
                loaded = type(m).from_state_dict(state)
            except ValueError:
                continue
            with warnings.catch_warnings():  # accepted: it must still compute and save
                warnings.simplefilter("ignore")
                loaded.compute()
            sm.loads(sm.dumps(loaded))
    state = dict(good)
    state["extra"] = np.zeros(1)
    with pytest.raises(ValueError, match="unexpected"):
        type(m).from_state_dict(state)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), k=st.integers(1, 2))
def test_functions_equal_scikit_learn_with_zero_weights_and_few_rows(seed, n, k):
    import streammetrics.functional as F

    rng = np.random.default_rng(seed)
    y, p = _data(rng, n, k)
    w = rng.integers(0, 3, n).astype(float) if rng.random() < 0.7 else None
    alpha = float(rng.choice([0.0, 0.2, 0.5, 1.0]))
    calls = [(F.median_absolute_error, median_absolute_error, {}),
             (F.d2_pinball_score, d2_pinball_score, {"alpha": alpha}),
             (F.d2_absolute_error_score, d2_absolute_error_score, {})]
    for ours, theirs, kw in calls:
        for mo in ("raw_values", "uniform_average"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    expected = theirs(y, p, sample_weight=w, multioutput=mo, **kw)
                except ValueError:
                    with pytest.raises(ValueError):
                        ours(y, p, sample_weight=w, multioutput=mo, **kw)
                    continue
                got = ours(y, p, sample_weight=w, multioutput=mo, **kw)
            np.testing.assert_allclose(np.asarray(got, float).reshape(-1) if np.ndim(expected) else got,
                                       np.asarray(expected, float).reshape(-1) if np.ndim(expected) else expected,
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [sm.MedianAbsoluteError, lambda: sm.D2PinballScore(0.3), sm.SpearmanCorrCoef,
                                  sm.KendallTau, lambda: sm.D2AbsoluteErrorScore(max_bytes=800)])
def test_the_state_keeps_its_own_copies_of_the_inputs(make):
    y = np.arange(6.0)  # sorted: a sort may hand back the very array it was given
    p = y + np.array([0.5, -0.5, 1.0, 0.0, 2.0, -1.0])
    w = np.ones(6) * 2.0
    m = make().update(y, p, sample_weight=w)
    value = m.compute()
    y[:] = 0.0
    p[:] = 100.0
    w[:] = 1e-3
    assert make().update(np.arange(6.0), np.arange(6.0) + [0.5, -0.5, 1.0, 0.0, 2.0, -1.0],
                         sample_weight=np.ones(6) * 2.0).compute() == value == m.copy().compute()
