"""Calibration family: bad inputs and configurations, hostile loaded states, and the service
wrappers (Window, Decayed, DelayedLabels, MetricSet)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import value_array as value

import streammetrics as sm

C = 3
FACTORIES = [
    lambda c: sm.LogLoss(c),
    lambda c: sm.BrierScore(c, n_bins=4),
    lambda c: sm.CalibrationError(c, n_bins=4),
    lambda c: sm.CalibrationCurve(4, num_classes=c),
]


def fed(factory, c):
    m = factory(c)
    if c is None:
        return m.update([0, 1, 1], [0.2, 0.6, 1.0])
    return m.update([0, 2], [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])


BAD_BINARY = [
    (([0, 1], [0.2, 1.5]), "y_pred: probabilities must lie in [0, 1]; first invalid value 1.5 at index 1"),
    (([0, 1], [-0.0001, 0.5]), "first invalid value -0.0001 at index 0"),
    (([0, 1], [0.2, np.nan]), "y_pred: probabilities must not be NaN; first NaN at index 1"),
    (([0, 2], [0.2, 0.3]), "y_true: labels must be 0 or 1; first invalid value 2 at index 1"),
    (([0, 1], [0.2, 0.3, 0.4]), "y_pred: expected probabilities of shape (2,)"),
    (([[0, 1]], [[0.2, 0.3]]), "y_true: expected a 1-D array"),
    (([0, 1], ["a", "b"]), "y_pred: expected numbers"),
]
BAD_MULTICLASS = [
    (([0, 1], [[0.5, 0.5, 0.0], [1.2, -0.2, 0.0]]), "first invalid value 1.2 at index (1, 0)"),
    (([0, 3], [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]), "y_true: class labels must be integers in [0, 3)"),
    (([0, 1], [0.5, 0.5]), "y_pred: expected probabilities of shape (2, 3)"),
    (([0, 1], [[0.5, 0.5, 0.0], [0.5, np.nan, 0.5]]), "must not be NaN; first NaN at index (1, 1)"),
]


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(("args", "message"), BAD_BINARY)
def test_bad_binary_input_is_rejected_and_changes_nothing(factory, args, message):
    m = fed(factory, None)
    before = m.state_dict()
    with pytest.raises(ValueError) as info:
        m.update(*args)
    assert message in str(info.value)
    after = m.state_dict()
    for k in before:
        if k not in ("class", "format_version", "config"):
            np.testing.assert_array_equal(after[k], before[k])


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(("args", "message"), BAD_MULTICLASS)
def test_bad_multiclass_input_is_rejected_and_changes_nothing(factory, args, message):
    m = fed(factory, C)
    before = sm.dumps(m)
    with pytest.raises(ValueError) as info:
        m.update(*args)
    assert message in str(info.value)
    assert sm.dumps(m) == before


def test_zero_dimensional_arrays_are_one_sample() -> None:
    a = sm.BrierScore().update(np.array(1), np.array(0.25), sample_weight=2.0)
    b = sm.BrierScore().update([1], [0.25], sample_weight=[2.0])
    assert a.compute() == b.compute() == 0.5625
    c = sm.LogLoss(3).update(np.array(2), np.array([0.2, 0.3, 0.5]))
    assert c.compute() == sm.LogLoss(3).update([2], [[0.2, 0.3, 0.5]]).compute()


def test_row_sum_tolerance_is_sklearns() -> None:
    eps64, eps32 = np.finfo(np.float64).eps, np.finfo(np.float32).eps
    ok = 1e-8 + np.sqrt(eps64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sm.LogLoss(2).update([0], [[0.5, 0.5 + 0.9 * ok]])
        loose = np.array([[0.5, 0.5 + 1e-4]], dtype=np.float32)  # within sqrt(eps32) = 3.4e-4
        assert np.sqrt(eps32) > 1e-4
        sm.LogLoss(2).update([0], loose)
    with pytest.warns(UserWarning, match="the first at index 0 summing to"):
        sm.LogLoss(2).update([0], [[0.5, 0.5 + 1.1 * ok]])


@pytest.mark.parametrize("factory", FACTORIES)
def test_rows_not_summing_to_one_are_used_as_sklearn_uses_them(factory) -> None:
    """Rounded probabilities (rows summing to 1 +- 1e-6) and rows off by more are accepted with
    scikit-learn's warning (its text first, so its users' filters apply) and the first such row
    named; the values are those scikit-learn computes on the same rows."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    p = np.round(rng.dirichlet([1, 1, 1], 200), 6)
    p[3] = [0.5, 0.4, 0.0]  # a row far from 1
    y = rng.integers(0, 3, 200)
    m = factory(C)
    with pytest.warns(UserWarning, match=r"^The y_prob values do not sum to one\. .*the first at index \d+ summing to"):
        m.update(y, p)
    if isinstance(m, sm.LogLoss):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert m.compute() == pytest.approx(metrics.log_loss(y, p, labels=[0, 1, 2]), abs=1e-12)
    with warnings.catch_warnings():  # a filter written for scikit-learn's warning catches ours
        warnings.filterwarnings("error", message="The y_prob values do not sum to one")
        with pytest.raises(UserWarning):
            factory(C).update(y, p)


def test_bad_logits_and_weights() -> None:
    with pytest.raises(ValueError, match="y_pred: logits must not be NaN; first invalid value nan at index 1"):
        sm.LogLoss(from_logits=True).update([0, 1], [0.0, np.nan])
    sm.LogLoss(from_logits=True).update([0, 1], [-np.inf, np.inf])  # binary: sigmoid of +-inf
    with pytest.raises(ValueError, match="y_pred: logits must be finite; first invalid value inf at index"):
        sm.LogLoss(2, from_logits=True).update([0], [[0.0, np.inf]])
    with pytest.raises(ValueError, match=r"sample_weight: weights must be finite, >= 0.*first invalid value -1.0"):
        sm.BrierScore().update([0, 1], [0.1, 0.2], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"sample_weight: expected shape \(2,\)"):
        sm.BrierScore().update([0, 1], [0.1, 0.2], sample_weight=[1.0])
    m = sm.LogLoss(from_logits=True).update([1], [5.0])  # logits outside [0, 1] are fine
    assert m.compute() > 0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: sm.CalibrationError(n_bins=0), "n_bins: must be an int >= 1, got 0"),
        (lambda: sm.CalibrationError(n_bins=2.5), "n_bins: must be an int >= 1, got 2.5"),
        (lambda: sm.BrierScore(n_bins=True), "n_bins: must be an int >= 1, got True"),
        (lambda: sm.CalibrationCurve(10**9), "exceeds the limit"),
        (lambda: sm.CalibrationError(10**4, n_bins=10**4), "exceeds the limit"),
        (lambda: sm.CalibrationError(norm="l3"), "norm: must be one of"),
        (lambda: sm.CalibrationError(classwise=True), "classwise: only for multiclass"),
        (lambda: sm.CalibrationError(strategy="Quantile"), "strategy: must be one of"),
        (lambda: sm.CalibrationCurve(strategy="kmeans"), "strategy: must be one of"),
        (lambda: sm.LogLoss(1), "num_classes: must be >= 2"),
        (lambda: sm.CalibrationCurve(1, "quantile", num_classes=10**6), "num_classes: at most 65536"),
        (lambda: sm.LogLoss(from_logits="yes"), "from_logits: must be True or False"),
    ],
)
def test_bad_configuration(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


# -- hostile loaded states --------------------------------------------------------------------
def _tampered(metric, name, fn):
    d = metric.state_dict()
    d[name] = fn(np.array(d[name], copy=True))
    return d


@pytest.mark.parametrize("c", [None, C])
@pytest.mark.parametrize(
    ("name", "fn", "message"),
    [
        ("bins", lambda a: a * -1 - 1, "negative or non-finite"),
        ("bins", lambda a: np.where(a == a.max(), np.inf, a), "negative or non-finite"),
        ("bins", lambda a: np.where(a == a.max(), np.nan, a), "negative or non-finite"),
        ("totals", lambda a: a[:2], "has shape"),
        ("bins", lambda a: a[:, :2], "has shape"),
        ("bins", lambda a: a.astype(str), "non-numeric"),
        ("bins", lambda a: a + np.array([0, 5, 0, 0, 0]), "inconsistent sums"),
        ("bins", lambda a: a + np.array([0, 0, 5, 0, 0]), "inconsistent sums"),
        ("bins", lambda a: a + np.array([0, 0, 0, 0, 9]), "inconsistent sums"),
        ("totals", lambda a: a + np.array([0, 1e6, 0]), "inconsistent sums"),
        ("totals", lambda a: a + np.array([0, 0, 100]), "inconsistent sums"),
    ],
)
def test_hostile_state_is_rejected(c, name, fn, message):
    m = sm.BrierScore(c, n_bins=4).update(*(([0, 1], [0.25, 0.75]) if c is None else
                                            ([0, 1], [[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])))
    with pytest.raises(ValueError, match=message):
        sm.BrierScore.from_state_dict(_tampered(m, name, fn))


def test_hostile_top_and_config_are_rejected():
    m = sm.CalibrationError(C, n_bins=4).update([0], [[0.5, 0.25, 0.25]])
    with pytest.raises(ValueError, match="inconsistent sums"):
        sm.CalibrationError.from_state_dict(_tampered(m, "top", lambda a: a + np.array([0, 3, 0])))
    for n_bins in (10**12, -1, "15", None):
        d = m.state_dict()
        d["config"] = {**d["config"], "n_bins": n_bins}
        with pytest.raises(ValueError, match="n_bins"):
            sm.CalibrationError.from_state_dict(d)
    d = m.state_dict()
    d["extra"] = np.zeros(2)
    with pytest.raises(ValueError, match="unexpected arrays"):
        sm.CalibrationError.from_state_dict(d)
    d = m.state_dict()
    del d["top"]
    with pytest.raises(ValueError, match="missing array 'top'"):
        sm.CalibrationError.from_state_dict(d)


def test_rejected_load_leaves_the_state_unchanged():
    m = sm.BrierScore(n_bins=4).update([0, 1], [0.25, 0.75])
    before = m.state_dict()
    bad = _tampered(m, "bins", lambda a: a + np.array([0, 5, 0, 0, 0]))
    with pytest.raises(ValueError):
        m._load_arrays({k: v for k, v in bad.items() if k not in ("class", "format_version", "config")})
    np.testing.assert_array_equal(m.state_dict()["bins"], before["bins"])


# -- wrappers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_window_equals_the_metric_on_its_last_rows(factory, weighted):
    rng = np.random.default_rng(1)
    win = sm.Window(factory(None), size=25)
    ys, ps, ws = [], [], []
    for _ in range(12):
        n = int(rng.integers(0, 9))
        y, p = rng.integers(0, 2, n), rng.integers(0, 9, n) / 8
        w = rng.random(n) * 2 if weighted else None
        win.update(y, p, sample_weight=w)
        ys.append(y)
        ps.append(p)
        ws.append(np.ones(n) if w is None else w)
        y_all, p_all, w_all = (np.concatenate(a)[-25:] for a in (ys, ps, ws))
        want = factory(None).update(y_all, p_all, sample_weight=w_all if weighted else None)
        np.testing.assert_allclose(value(win), value(want), rtol=1e-12, atol=1e-12)
    again = sm.loads(sm.dumps(win))
    np.testing.assert_allclose(value(again), value(win), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("factory", FACTORIES)
def test_decayed_equals_explicit_weights(factory):
    rng = np.random.default_rng(2)
    dec = sm.Decayed(factory(None), half_life=7)
    y, p = rng.integers(0, 2, 60), rng.integers(0, 9, 60) / 8
    for lo in range(0, 60, 13):
        dec.update(y[lo:lo + 13], p[lo:lo + 13])
    w = 2.0 ** ((np.arange(60) - 59) / 7)
    want = factory(None).update(y, p, sample_weight=w)
    np.testing.assert_allclose(value(dec), value(want), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(value(sm.loads(sm.dumps(dec))), value(dec), rtol=1e-12)


def test_delayed_labels_feed_the_metric():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(C), 20)
    y = rng.integers(0, C, 20)
    delayed = sm.DelayedLabels(sm.CalibrationError(C, n_bins=5))
    delayed.predict(list(range(20)), p)
    delayed.label(list(range(10, 20)), y[10:])
    for i in range(10):
        delayed.label(i, int(y[i]))
    want = sm.CalibrationError(C, n_bins=5).update(np.r_[y[10:], y[:10]], np.r_[p[10:], p[:10]])
    np.testing.assert_allclose(value(delayed), value(want), rtol=1e-12)
    delayed.predict([99], p[:1])
    with pytest.raises(ValueError, match="y_true: class labels must be integers in"):
        delayed.label([99], [7])
    np.testing.assert_allclose(value(delayed), value(want), rtol=1e-12)


def test_metricset_shares_and_is_atomic():
    s = sm.MetricSet(brier=sm.BrierScore(n_bins=15), ece=sm.CalibrationError(), ll=sm.LogLoss(),
                     acc=sm.Accuracy(zero_division=0.0))
    assert s._members["brier"]._state is s._members["ece"]._state
    s.update([0, 1, 1], [0.2, 0.7, 0.9])
    before = sm.dumps(s)
    with pytest.raises(ValueError, match="probabilities must lie in"):
        s.update([0, 1], [0.2, 1.7])  # Accuracy alone would accept 1.7
    assert sm.dumps(s) == before
    out = s.compute()
    assert out["ll"] == sm.LogLoss().update([0, 1, 1], [0.2, 0.7, 0.9]).compute()
    assert out["ece"] == sm.CalibrationError().update([0, 1, 1], [0.2, 0.7, 0.9]).compute()
