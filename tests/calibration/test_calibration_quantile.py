"""strategy="quantile": CalibrationCurve against scikit-learn, CalibrationError against a
brute-force reference on numpy.percentile edges; wrappers. (Streaming, merging and persistence:
the ``quantile_*`` entries of the protocol laws' registry, ``tests/_support/laws.py``.)"""

from __future__ import annotations

import calibration_oracles as oracle
import numpy as np
import pytest
from helpers import value_array as flat
from sklearn.calibration import calibration_curve

import streammetrics as sm


def feed(metric, y, p, w=None, step=41):
    for lo in range(0, len(y), step):
        metric.update(y[lo:lo + step], p[lo:lo + step],
                      sample_weight=None if w is None else w[lo:lo + step])
    return metric


def probs(rng, n, c=None):
    if c is None:
        return rng.integers(0, 2, n), rng.integers(0, 30, n) / 29  # ties, 0 and 1
    p = rng.integers(0, 6, (n, c)) + np.eye(c)[rng.integers(0, c, n)]
    return rng.integers(0, c, n), p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_bins", [1, 3, 5, 10])
def test_quantile_curve_matches_sklearn(seed, n_bins):
    rng = np.random.default_rng(seed)
    y, p = probs(rng, 300)
    r = feed(sm.CalibrationCurve(n_bins, "quantile"), y, p).compute()
    true, pred = calibration_curve(y, p, n_bins=n_bins, strategy="quantile")
    np.testing.assert_allclose(r.prob_true, true, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.prob_pred, pred, rtol=1e-12, atol=1e-12)


def test_integer_weights_are_repetition():
    rng = np.random.default_rng(7)
    y, p = probs(rng, 200)
    w = rng.integers(0, 4, 200)
    r = feed(sm.CalibrationCurve(6, "quantile"), y, p, w.astype(float)).compute()
    true, pred = calibration_curve(np.repeat(y, w), np.repeat(p, w), n_bins=6, strategy="quantile")
    np.testing.assert_allclose(r.prob_true, true, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.prob_pred, pred, rtol=1e-12, atol=1e-12)
    ece = feed(sm.CalibrationError(n_bins=6, strategy="quantile"), y, p, w.astype(float)).compute()
    rep = sm.CalibrationError(n_bins=6, strategy="quantile").update(np.repeat(y, w), np.repeat(p, w))
    assert abs(ece - rep.compute()) <= 1e-12


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_quantile_calibration_error_matches_brute_force(seed, norm):
    rng = np.random.default_rng(seed)
    n_bins = 6
    q = np.linspace(0, 1, n_bins + 1) * 100
    y, p = probs(rng, 250)
    ones = np.ones(250)
    got = feed(sm.CalibrationError(n_bins=n_bins, norm=norm, strategy="quantile"), y, p).compute()
    want = oracle.calibration_error_on_edges(p, y, ones, np.percentile(p, q), norm)
    assert abs(got - want) <= 1e-12
    c = 4
    ym, pm = probs(rng, 250, c)
    conf, correct = oracle.top_label(pm, ym)
    got = feed(sm.CalibrationError(c, n_bins=n_bins, norm=norm, strategy="quantile"), ym, pm).compute()
    want = oracle.calibration_error_on_edges(conf, correct, ones, np.percentile(conf, q), norm)
    assert abs(got - want) <= 1e-12
    got = feed(sm.CalibrationError(c, n_bins=n_bins, norm=norm, strategy="quantile", classwise=True),
               ym, pm).compute()
    per_class = [oracle.calibration_error_on_edges(pm[:, k], ym == k, ones,
                                                   np.percentile(pm[:, k], q), norm) for k in range(c)]
    assert abs(got - np.mean(per_class)) <= 1e-12
    curves = feed(sm.CalibrationCurve(4, "quantile", num_classes=c), ym, pm).compute()
    for k, curve in enumerate(curves):
        true, pred = calibration_curve(ym == k, pm[:, k], n_bins=4, strategy="quantile")
        np.testing.assert_allclose(curve.prob_true, true, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(curve.prob_pred, pred, rtol=1e-12, atol=1e-12)


def test_quantile_inputs_wrappers_and_hostile_state():
    m = sm.CalibrationError(n_bins=3, strategy="quantile").update([0, 1, 1], [0.2, 0.6, 0.9])
    before = sm.dumps(m)
    with pytest.raises(ValueError, match="probabilities must lie in"):
        m.update([0], [1.2])  # AUROC's buffer would accept it; the calibration state does not
    assert sm.dumps(m) == before
    d = m.state_dict()
    d["values"] = np.array(d["values"]) * 2
    with pytest.raises(ValueError, match="outside"):
        sm.CalibrationError.from_state_dict(d)
    d = m.state_dict()
    d["values"] = np.array(d["values"])[::-1].copy()
    with pytest.raises(ValueError, match="sorted"):
        sm.CalibrationError.from_state_dict(d)
    rng = np.random.default_rng(0)
    y, p = probs(rng, 90)
    win = feed(sm.Window(sm.CalibrationCurve(3, "quantile"), size=40), y, p, step=13)
    want = sm.CalibrationCurve(3, "quantile").update(y[-40:], p[-40:])
    np.testing.assert_allclose(flat(win), flat(want), rtol=1e-12)
    s = sm.MetricSet(a=sm.AUROC(), q=sm.CalibrationError(strategy="quantile"))
    s.update(y, p)
    assert abs(s.compute()["q"] - sm.CalibrationError(strategy="quantile").update(y, p).compute()) <= 1e-12
