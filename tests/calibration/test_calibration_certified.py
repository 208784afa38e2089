"""Bounded quantile calibration (``max_bytes=``): the certified intervals of CalibrationError
(l1, l2, max) and the per-bin bounds of CalibrationCurve hold the exact values (brute force of
the definitions on the repeated samples; scikit-learn's ``calibration_curve``), streamed in
pieces, merged, saved and loaded."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from calibration_oracles import quantile_curve as brute_curve
from calibration_oracles import quantile_error as brute_error
from calibration_oracles import streamed_merged_persisted as pieces
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve

import streammetrics as sm


def data(seed, n, digits):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.round(np.clip(rng.random(n) ** 2 + 0.2 * y, 0, 1), digits)  # ties
    return rng, y, p


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 600), digits=st.integers(1, 6),
       budget=st.sampled_from([512, 2048, 1 << 16]), weighted=st.booleans(),
       n_bins=st.integers(1, 12), norm=st.sampled_from(["l1", "l2", "max"]),
       cuts=st.lists(st.integers(0, 600), max_size=3))
def test_bounded_quantile_error_certifies_every_norm(seed, n, digits, budget, weighted, n_bins, norm, cuts):
    rng, y, p = data(seed, n, digits)
    w = rng.integers(1, 4, n) if weighted else np.ones(n, int)
    want = brute_error(p, y, w, n_bins, norm)
    sw = w.astype(float) if weighted else None
    exact = sm.CalibrationError(n_bins=n_bins, strategy="quantile", norm=norm).update(y, p, sample_weight=sw)
    assert abs(exact.compute() - want) <= 1e-12
    make = lambda: sm.CalibrationError(n_bins=n_bins, strategy="quantile", norm=norm,  # noqa: E731
                                       max_bytes=budget)
    for m in pieces(make, y, p, sw, [min(c, n) for c in cuts]):
        v, (lo, hi) = m.compute(), m.bounds()
        assert lo - 1e-12 <= want <= hi + 1e-12 and lo <= v <= hi
        if m.is_exact:
            assert abs(v - want) <= 1e-12
        assert m._state.nbytes <= budget


@pytest.mark.parametrize("norm", ["l2", "max"])
@pytest.mark.parametrize("classwise", [False, True])
def test_bounded_quantile_error_multiclass_every_norm(norm, classwise):
    rng = np.random.default_rng(11)
    n, c = 3000, 3
    y = rng.integers(0, c, n)
    p = rng.dirichlet(np.ones(c), n)
    ones = np.ones(n, int)
    if classwise:
        want = np.mean([brute_error(p[:, k], (y == k).astype(float), ones, 8, norm) for k in range(c)])
    else:
        want = brute_error(p.max(1), (p.argmax(1) == y).astype(float), ones, 8, norm)
    make = lambda: sm.CalibrationError(c, n_bins=8, strategy="quantile", norm=norm,  # noqa: E731
                                       classwise=classwise, max_bytes=6000)
    for m in pieces(make, y, p, None, [1000, 2000]):
        lo, hi = m.bounds()
        assert lo <= want <= hi and not m.is_exact and hi - lo < 1.0


def test_bounded_error_interval_narrows_with_the_budget():
    rng, y, p = data(5, 20000, 4)
    widths = []
    for budget in (1024, 4096, 1 << 19):
        lo, hi = sm.CalibrationError(n_bins=10, strategy="quantile", norm="l2",
                                     max_bytes=budget).update(y, p).bounds()
        widths.append(hi - lo)
    assert widths[0] >= widths[1] >= widths[2] and widths[2] == 0.0


def check_curve(r, want, tol=1e-12):
    """Every exact non-empty bin has a row whose bounds hold its count, prob_true, prob_pred."""
    rows = dict(zip(r.bin_index.tolist(), range(len(r.bin_index)), strict=True))
    full = np.flatnonzero(~np.isnan(want[:, 0]))
    assert set(full.tolist()) <= set(rows)
    for b in full:
        i = rows[b]
        assert r.counts_low[i] - tol <= want[b, 0] <= r.counts_high[i] + tol
        assert r.prob_true_low[i] - tol <= want[b, 1] <= r.prob_true_high[i] + tol
        assert r.prob_pred_low[i] - tol <= want[b, 2] <= r.prob_pred_high[i] + tol
    assert (r.prob_true_low <= r.prob_true).all() and (r.prob_true <= r.prob_true_high).all()
    assert (r.prob_pred_low <= r.prob_pred).all() and (r.prob_pred <= r.prob_pred_high).all()
    assert (r.counts_low <= r.counts + tol).all() and (r.counts <= r.counts_high + tol).all()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 600), digits=st.integers(1, 6),
       budget=st.sampled_from([512, 2048, 1 << 16]), weighted=st.booleans(),
       n_bins=st.integers(1, 12), cuts=st.lists(st.integers(0, 600), max_size=3))
@example(seed=613, n=237, digits=2, budget=512, weighted=True, n_bins=12, cuts=[])  # empty reach
def test_bounded_curve_bounds_hold_the_exact_curve(seed, n, digits, budget, weighted, n_bins, cuts):
    rng, y, p = data(seed, n, digits)
    w = rng.integers(1, 4, n) if weighted else np.ones(n, int)
    sw = w.astype(float) if weighted else None
    want = brute_curve(p, y, w, n_bins)
    exact = sm.CalibrationCurve(n_bins, "quantile").update(y, p, sample_weight=sw).compute()
    full = ~np.isnan(want[:, 0])
    np.testing.assert_allclose(exact.prob_true, want[full, 1], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(exact.bin_index, np.flatnonzero(full))
    for m in pieces(lambda: sm.CalibrationCurve(n_bins, "quantile", max_bytes=budget), y, p, sw,
                    [min(c, n) for c in cuts]):
        r = m.compute()
        assert r.exact == m.is_exact
        check_curve(r, want)
        if r.exact:
            np.testing.assert_allclose(r.prob_true, exact.prob_true, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(r.prob_pred, exact.prob_pred, rtol=1e-12)
            np.testing.assert_allclose(r.counts, exact.counts, rtol=1e-12)
        assert m._state.nbytes <= budget


def test_bounded_curve_large_stream_against_scikit_learn():
    rng = np.random.default_rng(3)
    n = 50000
    y = rng.integers(0, 2, n)
    p = np.clip(rng.beta(2, 3, n) + 0.1 * y, 0, 1)
    true, pred = calibration_curve(y, p, n_bins=10, strategy="quantile")
    for budget in (4096, 1 << 16):
        m = sm.CalibrationCurve(10, "quantile", max_bytes=budget)
        for lo in range(0, n, 7000):
            m.update(y[lo:lo + 7000], p[lo:lo + 7000])
        r = m.compute()
        assert not r.exact and m._state.nbytes <= budget
        assert r.bin_index.tolist() == list(range(10))  # every quantile bin of distinct values is full
        assert (r.prob_true_low <= true + 1e-12).all() and (true <= r.prob_true_high + 1e-12).all()
        assert (r.prob_pred_low <= pred + 1e-12).all() and (pred <= r.prob_pred_high + 1e-12).all()
        assert r.summary_text().startswith("CalibrationCurveResult: 10 points")
    # informative with 64 KiB for 50k samples, not just [0, 1]
    assert (r.prob_pred_high - r.prob_pred_low).max() < 0.01
    assert (r.prob_true_high - r.prob_true_low).max() < 0.05


def test_bounded_curve_multiclass_one_vs_rest_and_logits():
    rng = np.random.default_rng(4)
    n, c = 4000, 3
    y = rng.integers(0, c, n)
    z = rng.normal(size=(n, c)) + 2.0 * np.eye(c)[y]
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    ms = sm.MetricSet(
        a=sm.CalibrationCurve(6, "quantile", num_classes=c, max_bytes=6000, from_logits=True),
        b=sm.CalibrationCurve(6, "quantile", num_classes=c, max_bytes=6000, from_logits=True))
    assert len(ms.groups) == 1
    got = sm.loads(sm.dumps(ms.update(y, z))).compute()["a"]
    assert len(got) == c
    for k in range(c):
        check_curve(got[k], brute_curve(p[:, k], (y == k).astype(float), np.ones(n, int), 6), tol=1e-9)


def test_bounded_curve_arguments_and_empty_state():
    with pytest.raises(ValueError, match="max_bytes: only for strategy='quantile'"):
        sm.CalibrationCurve(5, max_bytes=4096)
    for bad in ("abc", 1.5, True, 10):
        for make in (lambda v: sm.CalibrationCurve(5, "quantile", max_bytes=v),
                     lambda v: sm.CalibrationError(strategy="quantile", max_bytes=v),
                     lambda v: sm.CalibrationCurve(5, "quantile", num_classes=3, max_bytes=v)):
            with pytest.raises(ValueError, match="max_bytes"):
                make(bad)
    m = sm.CalibrationCurve(5, "quantile", max_bytes=4096)
    assert sm.loads(sm.dumps(m)).max_bytes == 4096 and repr(m).endswith("max_bytes=4096)")
    r = m.compute()
    assert r.prob_true.shape == r.prob_true_low.shape == r.bin_index.shape == (0,) and r.exact
    with pytest.raises(ValueError, match=r"y_pred.*\[0, 1\]"):
        m.update([0, 1], [0.5, 1.5])
    assert m.compute().counts.shape == (0,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sm.CalibrationCurve(5, "quantile", max_bytes=4096).update([0, 1, 1], [0.2, 0.2, 0.9]).compute()


@pytest.mark.parametrize("from_logits", [False, True])
def test_integer_weights_equal_repetition_where_numpy_rounds_the_position(from_logits):
    """Regression (found by the protocol laws): 2/3 of 10 samples is position 5.999... in
    numpy.percentile, so the edge falls just below the 7th value; integer weights must round
    the same way as the repeated samples scikit-learn sees."""
    y, z, reps = np.array([1, 0, 1, 0]), np.array([0.0, 1.0, np.inf, 0.0]), np.array([3, 3, 1, 3])
    p = 1.0 / (1.0 + np.exp(-z))
    x = z if from_logits else p
    true, pred = calibration_curve(np.repeat(y, reps), np.repeat(p, reps), n_bins=3, strategy="quantile")
    for budget in (None, 4096):
        r = sm.CalibrationCurve(3, "quantile", from_logits=from_logits, max_bytes=budget).update(
            y, x, sample_weight=reps.astype(float)).compute()
        np.testing.assert_allclose(r.prob_true, true, rtol=1e-15)
        np.testing.assert_allclose(r.prob_pred, pred, rtol=1e-15)
    for norm in ("l1", "l2", "max"):
        got = sm.CalibrationError(n_bins=3, strategy="quantile", norm=norm, from_logits=from_logits).update(
            y, x, sample_weight=reps.astype(float)).compute()
        assert abs(got - brute_error(p, y, reps, 3, norm)) <= 1e-15


def _exact_and_bounded_agree(y, p, w, n_bins, budget):
    exact = sm.CalibrationCurve(n_bins, "quantile").update(y, p, sample_weight=w).compute()
    bounded = sm.CalibrationCurve(n_bins, "quantile", max_bytes=budget)
    r = bounded.update(y, p, sample_weight=w).compute()
    assert r.exact == bounded.is_exact
    if r.exact:  # every bin one distinct value: the exact curve, not an estimate
        np.testing.assert_array_equal(r.bin_index, exact.bin_index)
        np.testing.assert_allclose(r.counts, exact.counts, rtol=1e-12)
        np.testing.assert_allclose(r.prob_true, exact.prob_true, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(r.prob_pred, exact.prob_pred, rtol=1e-12)
    for norm in ("l1", "l2", "max"):
        want = sm.CalibrationError(n_bins=n_bins, strategy="quantile", norm=norm).update(
            y, p, sample_weight=w).compute()
        m = sm.CalibrationError(n_bins=n_bins, strategy="quantile", norm=norm, max_bytes=budget)
        got = m.update(y, p, sample_weight=w).compute()
        lo, hi = m.bounds()
        assert lo - 1e-12 <= want <= hi + 1e-12
        if m.is_exact:
            assert abs(got - want) <= 1e-12


def test_bounded_curve_exact_bins_read_their_own_sums():
    """Regression (issue 27): two samples of weight 1 at 0.25 were read back from the bins'
    cumulative counts as 2.0000000000000004, so the quantile edge at cumulative weight 2 moved
    from 0.375 to 0.3067 and the curve said exact=True with counts [2, 4.96, 1.40] instead of
    [3.16, 3.80, 1.40]."""
    y = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1])
    p = np.array([0.875, 0.5, 0.375, 1.0, 0.25, 0.375, 0.5, 0.5, 0.25, 0.5, 0.5, 0.5])
    w = np.array([1.0, 0.47670801399846274, 1.0, 0.4006731491393912, 1.0, 0.16281114315663126,
                  1.0, 0.3076106793918316, 1.0, 0.8461317600489575, 1.0, 0.16663413345635703])
    _exact_and_bounded_agree(y, p, w, 3, 2048)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 60), levels=st.integers(1, 9),
       n_bins=st.integers(1, 6), budget=st.sampled_from([2048, 1 << 16]))
@example(seed=18761, n=15, levels=7, n_bins=5, budget=2048)  # failed before the fix
def test_bounded_curve_with_real_weights_equals_the_exact_curve_when_exact(seed, n, levels, n_bins, budget):
    """Weights of one mixed with real weights, few distinct probabilities (so the bins are
    exact): the bounded curve and errors are the exact ones."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = rng.integers(0, levels + 1, n) / levels
    w = np.where(rng.random(n) < 0.5, 1.0, rng.random(n) + 0.01)
    _exact_and_bounded_agree(y, p, w, n_bins, budget)
