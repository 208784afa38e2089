"""KSStatistic, GainsCurve and LiftCurve against scipy and brute-force references (splits, merges
and persistence: the ``ks``, ``gains`` and ``lift`` entries of ``tests/_support/laws.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

import streammetrics as sm


def brute_ks(y, s, w):
    """max over every score x of |F_pos(x) - F_neg(x)| (weighted ECDFs), and the threshold:
    the smallest score above the x where the maximum is first reached from above."""
    pos, neg = y == 1, y == 0
    best, where = -1.0, None
    for t in sorted(set(s.tolist()), reverse=True):
        tpr = w[pos & (s >= t)].sum() / w[pos].sum()
        fpr = w[neg & (s >= t)].sum() / w[neg].sum()
        if abs(tpr - fpr) > best + 1e-15:
            best, where = abs(tpr - fpr), t
    return best, where


def brute_gains(y, s, w):
    ts = sorted(set(s[w > 0].tolist()), reverse=True)
    frac = np.array([w[s >= t].sum() / w.sum() for t in ts])
    gain = np.array([w[(s >= t) & (y == 1)].sum() / w[y == 1].sum() for t in ts])
    return np.array(ts), frac, gain


def data(seed, n=200):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.integers(0, 25, n) / 8 + 0.3 * y  # many ties
    return rng, y, s


@pytest.mark.parametrize("seed", range(8))
def test_ks_matches_scipy(seed):
    rng, y, s = data(seed)
    m = sm.KSStatistic()
    for lo in range(0, 200, 37):
        m.update(y[lo:lo + 37], s[lo:lo + 37])
    want = ks_2samp(s[y == 1], s[y == 0]).statistic
    assert abs(m.compute() - want) <= 1e-12
    stat, t = brute_ks(y, s, np.ones(200))
    assert abs(stat - want) <= 1e-12
    assert m.threshold() == t


@pytest.mark.parametrize("seed", range(5))
def test_weighted_ks_and_gains_match_brute_force(seed):
    rng, y, s = data(seed)
    w = rng.integers(0, 4, 200) * 0.5
    m = sm.KSStatistic().update(y, s, sample_weight=w)
    stat, t = brute_ks(y, s, w)
    assert abs(m.compute() - stat) <= 1e-12
    assert m.threshold() == t
    r = sm.GainsCurve().update(y, s, sample_weight=w).compute()
    ts, frac, gain = brute_gains(y, s, w)
    np.testing.assert_array_equal(r.thresholds, ts)
    np.testing.assert_allclose(r.fraction, frac, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.gain, gain, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.lift, gain / frac, rtol=1e-12)


def test_at_fraction_interpolates_inside_ties():
    # scores: 0.9 (pos), two tied 0.5 (pos, neg), 0.1 (neg)
    r = sm.LiftCurve().update([1, 1, 0, 0], [0.9, 0.5, 0.5, 0.1]).compute()
    assert r.at_fraction(0.25) == (0.5, 2.0)
    gain, lift = r.at_fraction(0.5)  # one of the two tied samples: half a positive expected
    assert gain == pytest.approx(0.75) and lift == pytest.approx(1.5)
    assert r.at_fraction(1.0) == (1.0, 1.0)
    assert r.at_fraction(0.0) == (0.0, 2.0)
    with pytest.raises(ValueError, match="q: must lie in"):
        r.at_fraction(1.5)


def test_undefined_is_nan_and_shares_with_auroc():
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.KSStatistic().update([1, 1], [0.2, 0.3]).compute())
    with pytest.warns(sm.UndefinedMetricWarning):
        r = sm.GainsCurve().update([0, 0], [0.2, 0.3]).compute()
    assert np.isnan(r.at_fraction(0.5)[0])
    s = sm.MetricSet(auroc=sm.AUROC(), ks=sm.KSStatistic(), gains=sm.GainsCurve(), lift=sm.LiftCurve())
    states = {id(m._state) for m in s._members.values()}
    assert len(states) == 1
    with pytest.raises(ValueError, match="y_score"):
        sm.KSStatistic().update([0, 1], [0.1, np.nan])


def test_window_ks():
    rng, y, s = data(4, 120)
    win = sm.Window(sm.KSStatistic(), size=50)
    for lo in range(0, 120, 17):
        win.update(y[lo:lo + 17], s[lo:lo + 17])
    want = ks_2samp(s[-50:][y[-50:] == 1], s[-50:][y[-50:] == 0]).statistic
    assert abs(win.compute() - want) <= 1e-12
