"""KS, gains and lift with ``max_bytes=`` (certified bounds hold the exact values) and
multiclass (one-vs-rest per class) against scipy and brute force."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from calibration_oracles import streamed_merged_persisted as feed
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

import streammetrics as sm


def brute_ks(y, s, w):
    """max over every score t of |TPR(t) - FPR(t)| (weighted), by definition."""
    pos, neg = y == 1, y == 0
    best = 0.0
    for t in set(s.tolist()):
        tpr = w[pos & (s >= t)].sum() / w[pos].sum()
        fpr = w[neg & (s >= t)].sum() / w[neg].sum()
        best = max(best, abs(tpr - fpr))
    return best


def sample(seed, n, levels):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + y, levels)  # ties
    return rng, y, s


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(5, 800), levels=st.integers(0, 4),
       budget=st.sampled_from([512, 1024, 1 << 16]), weighted=st.booleans(),
       cuts=st.lists(st.integers(0, 800), max_size=3))
def test_bounded_ks_and_gains_certify_the_exact_values(seed, n, levels, budget, weighted, cuts):
    rng, y, s = sample(seed, n, levels)
    w = rng.integers(0, 4, n).astype(float) if weighted else None
    cuts = [min(c, n) for c in cuts]
    ww = np.ones(n) if w is None else w
    defined = ww[y == 1].sum() > 0 and ww[y == 0].sum() > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        exact_ks = sm.KSStatistic().update(y, s, sample_weight=w).compute()
        exact_gains = sm.GainsCurve().update(y, s, sample_weight=w).compute()
        if defined:
            want = brute_ks(y, s, ww)
            assert abs(exact_ks - want) <= 1e-12
            if w is None:
                assert abs(exact_ks - ks_2samp(s[y == 1], s[y == 0], method="asymp").statistic) <= 1e-12
        for m in feed(lambda: sm.KSStatistic(max_bytes=budget), y, s, w, cuts):
            v, (lo, hi) = m.compute(), m.bounds()
            if not defined:
                assert np.isnan(v) and np.isnan(lo)
                continue
            assert lo <= exact_ks <= hi and lo <= v <= hi
            if m.is_exact:
                assert lo == hi == v and abs(v - exact_ks) <= 1e-12
        for m in feed(lambda: sm.LiftCurve(max_bytes=budget), y, s, w, cuts):
            r = m.compute()
            for q in np.r_[0.0, rng.random(8), 1.0]:
                (glo, ghi), (llo, lhi) = r.at_fraction_bounds(q)
                g, lift = exact_gains.at_fraction(q)
                if np.isnan(g):
                    assert np.isnan(glo)
                    continue
                tol = 1e-9
                assert glo - tol <= g <= ghi + tol
                assert llo - tol * max(1, lift) <= lift <= lhi + tol * max(1, lift)
                if r.is_exact:
                    assert abs(glo - g) <= tol and abs(ghi - g) <= tol
            # every bounded point is an exact point of the exact curve
            for f, gain in zip(r.fraction, r.gain, strict=True):
                if not np.isnan(gain):
                    assert abs(exact_gains.at_fraction(min(f, 1.0))[0] - gain) <= 1e-9


def test_bounded_state_is_small_and_shared_with_bounded_auroc():
    rng, y, s = sample(1, 20000, 6)
    ks = sm.KSStatistic(max_bytes=4096).update(y, s)
    assert ks._state.nbytes <= 4096 and not ks.is_exact
    lo, hi = ks.bounds()
    assert lo <= ks_2samp(s[y == 1], s[y == 0], method="asymp").statistic <= hi
    ms = sm.MetricSet(auroc=sm.AUROC(max_bytes=4096), ks=sm.KSStatistic(max_bytes=4096),
                      gains=sm.GainsCurve(max_bytes=4096))
    assert len(ms.groups) == 1
    ms.update(y, s)
    assert ms["ks"].compute() == ks.compute() and ms["ks"].bounds() == ks.bounds()


def test_metricset_one_buffer_values_equal_separate_metrics():
    rng, y, s = sample(2, 3000, 2)
    members = dict(auroc=sm.AUROC(), ap=sm.AveragePrecision(), ks=sm.KSStatistic(),
                   gains=sm.GainsCurve(), lift=sm.LiftCurve())
    ms = sm.MetricSet(**members)
    assert len(ms.groups) == 1 and len({id(m._state) for _, m in ms.items()}) == 1
    for lo in range(0, 3000, 700):
        ms.update(y[lo:lo + 700], s[lo:lo + 700])
    got = ms.compute()
    assert got["auroc"] == sm.AUROC().update(y, s).compute()
    assert got["ap"] == sm.AveragePrecision().update(y, s).compute()
    assert got["ks"] == sm.KSStatistic().update(y, s).compute()
    g = sm.GainsCurve().update(y, s).compute()
    np.testing.assert_array_equal(got["gains"].gain, g.gain)
    np.testing.assert_array_equal(got["lift"].lift, g.lift)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("budget", [None, 3000])
def test_multiclass_one_vs_rest_against_scipy(seed, budget):
    rng = np.random.default_rng(seed)
    n, c = 900, 4
    y = rng.integers(0, c, n)
    p = np.round(rng.dirichlet(np.ones(c), n), 2)
    m = sm.KSStatistic(c, max_bytes=budget)
    gm = sm.GainsCurve(c, max_bytes=budget)
    for lo in range(0, n, 250):
        m.update(y[lo:lo + 250], p[lo:lo + 250])
        gm.update(y[lo:lo + 250], p[lo:lo + 250])
    v, (low, high), thr = m.compute(), m.bounds(), m.threshold()
    curves = gm.compute()
    assert v.shape == low.shape == thr.shape == (c,) and len(curves) == c
    for k in range(c):
        want = ks_2samp(p[y == k, k], p[y != k, k], method="asymp").statistic
        assert low[k] <= want + 1e-12 and want <= high[k] + 1e-12
        binary = sm.GainsCurve().update((y == k).astype(int), p[:, k]).compute()
        if budget is None:
            assert abs(v[k] - want) <= 1e-12 and low[k] == high[k] == v[k]
            assert thr[k] == sm.KSStatistic().update((y == k).astype(int), p[:, k]).threshold()
            np.testing.assert_array_equal(curves[k].gain, binary.gain)
            np.testing.assert_array_equal(curves[k].thresholds, binary.thresholds)
        for q in (0.05, 0.3, 0.7):
            (glo, ghi), _ = curves[k].at_fraction_bounds(q)
            assert glo - 1e-9 <= binary.at_fraction(q)[0] <= ghi + 1e-9
    back = sm.loads(sm.dumps(m))
    np.testing.assert_array_equal(back.compute(), v)


def test_multiclass_undefined_class_warns_and_is_nan():
    with pytest.warns(sm.UndefinedMetricWarning, match=r"classes \[2\]"):
        v = sm.KSStatistic(3).update([0, 1, 0], [[0.5, 0.3, 0.2], [0.2, 0.7, 0.1], [0.6, 0.2, 0.2]]).compute()
    assert np.isnan(v[2]) and not np.isnan(v[0])
    with pytest.raises(ValueError, match="max_bytes"):
        sm.KSStatistic(max_bytes=8)


def test_window_bounded_ks_holds_the_window_statistic():
    rng, y, s = sample(5, 600, 1)
    win = sm.Window(sm.KSStatistic(max_bytes=2048), size=200)
    for lo in range(0, 600, 70):
        win.update(y[lo:lo + 70], s[lo:lo + 70])
    want = ks_2samp(s[-200:][y[-200:] == 1], s[-200:][y[-200:] == 0], method="asymp").statistic
    lo, hi = win.bounds() if hasattr(win, "bounds") else win.metric.bounds()
    assert lo <= want + 1e-12 and want <= hi + 1e-12


def brute_quantile_ece(c, a, w, n_bins):
    """l1 error on quantile bins by definition: edges = numpy.percentile of the repeated
    confidences (integer weights), numpy.histogram assignment (last bin closed)."""
    rep_c, rep_a = np.repeat(c, w), np.repeat(a, w)
    edges = np.percentile(rep_c, np.linspace(0, 1, n_bins + 1) * 100)  # as calibration_curve
    ids = np.clip(np.searchsorted(edges, rep_c, side="right") - 1, 0, n_bins - 1)
    total = sum(abs(rep_a[ids == b].sum() - rep_c[ids == b].sum()) for b in range(n_bins))
    return total / rep_c.shape[0]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 700), digits=st.integers(1, 6),
       budget=st.sampled_from([512, 2048, 1 << 16]), weighted=st.booleans(),
       n_bins=st.integers(1, 12), cuts=st.lists(st.integers(0, 700), max_size=3))
def test_bounded_quantile_ece_certifies_the_exact_error(seed, n, digits, budget, weighted, n_bins, cuts):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.round(np.clip(rng.random(n) ** 2 + 0.2 * y, 0, 1), digits)  # ties
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    cuts = [min(c, n) for c in cuts]
    want = brute_quantile_ece(p, y, np.ones(n, int) if w is None else w.astype(int), n_bins)
    exact = sm.CalibrationError(n_bins=n_bins, strategy="quantile").update(y, p, sample_weight=w)
    assert abs(exact.compute() - want) <= 1e-12
    for m in feed(lambda: sm.CalibrationError(n_bins=n_bins, strategy="quantile", max_bytes=budget),
                  y, p, w, cuts):
        v, (lo, hi) = m.compute(), m.bounds()
        assert lo - 1e-12 <= want <= hi + 1e-12 and lo <= v <= hi
        if m.is_exact:
            assert abs(v - want) <= 1e-12
        assert m._state.nbytes <= budget


@pytest.mark.parametrize("classwise", [False, True])
def test_bounded_quantile_ece_multiclass(classwise):
    rng = np.random.default_rng(7)
    n, c = 3000, 3
    y = rng.integers(0, c, n)
    p = rng.dirichlet(np.ones(c), n)
    make = lambda: sm.CalibrationError(c, n_bins=8, strategy="quantile", classwise=classwise,  # noqa: E731
                                       max_bytes=6000)
    exact = sm.CalibrationError(c, n_bins=8, strategy="quantile", classwise=classwise).update(y, p).compute()
    if classwise:
        want = np.mean([brute_quantile_ece(p[:, k], (y == k).astype(float), np.ones(n, int), 8) for k in range(c)])
    else:
        want = brute_quantile_ece(p.max(1), (p.argmax(1) == y).astype(float), np.ones(n, int), 8)
    assert abs(exact - want) <= 1e-12
    for m in feed(make, y, p, None, [1000, 2000]):
        lo, hi = m.bounds()
        assert lo <= want <= hi and not m.is_exact


def test_bounded_quantile_arguments():
    with pytest.raises(ValueError, match="max_bytes"):
        sm.CalibrationError(max_bytes=4096)
    with pytest.raises(ValueError, match="y_pred"):
        sm.CalibrationError(strategy="quantile", max_bytes=4096).update([0, 1], [0.5, 1.5])
    m = sm.CalibrationError(strategy="quantile", max_bytes=4096)
    assert sm.loads(sm.dumps(m)).max_bytes == 4096
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(m.compute())
    assert all(np.isnan(m.bounds()))
