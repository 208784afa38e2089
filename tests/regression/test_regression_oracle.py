"""Every regression accumulator against scikit-learn (1e-12) on random data with ties, outliers,
zero and fractional weights and multioutput, streamed in random batches; and in a MetricSet,
a Window and Decayed."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quiet
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import streammetrics as sm
import streammetrics.functional as F

MULTI = [("raw_values", True), ("uniform_average", True), ([0.2, 0.3, 0.5], True),
         ("uniform_average", False)]

# (class, scikit-learn function, keyword arguments of both, domain of the data, multioutput strings)
CASES = [
    (sm.MeanSquaredError, skm.mean_squared_error, {}, "real"),
    (sm.RootMeanSquaredError, skm.root_mean_squared_error, {}, "real"),
    (sm.MeanAbsoluteError, skm.mean_absolute_error, {}, "real"),
    (sm.R2Score, skm.r2_score, {}, "real"),
    (sm.R2Score, skm.r2_score, {"force_finite": False}, "real"),
    (sm.ExplainedVariance, skm.explained_variance_score, {}, "real"),
    (sm.ExplainedVariance, skm.explained_variance_score, {"force_finite": False}, "real"),
    (sm.MeanAbsolutePercentageError, skm.mean_absolute_percentage_error, {}, "real"),
    (sm.MeanSquaredLogError, skm.mean_squared_log_error, {}, "positive"),
    (sm.RootMeanSquaredLogError, skm.root_mean_squared_log_error, {}, "positive"),
    (sm.PinballLoss, skm.mean_pinball_loss, {"alpha": 0.1}, "real"),
    (sm.PinballLoss, skm.mean_pinball_loss, {"alpha": 0.9}, "real"),
]


def data(rng: np.random.Generator, n: int, k: int | None, domain: str) -> tuple[np.ndarray, np.ndarray]:
    shape = (n,) if k is None else (n, k)
    levels = int(rng.integers(1, 5))
    if domain == "positive":  # >= 0 with ties and zeros
        return rng.integers(0, 6, shape) / levels, rng.integers(0, 6, shape) / levels
    y = np.round(rng.normal(size=shape) * levels) / levels
    y[rng.random(shape) < 0.1] *= 100.0
    p = y + np.round(rng.normal(size=shape) * levels) / levels
    exact = rng.random(shape) < 0.2  # some perfect predictions
    p[exact] = y[exact]
    return y, p


def streamed(metric, y, p, w, rng):
    cuts = np.sort(rng.integers(0, len(y) + 1, int(rng.integers(0, 5))))
    for a, b in zip([0, *cuts], [*cuts, len(y)], strict=True):
        metric.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
    return metric


@pytest.mark.parametrize("cls, fn, kw, domain", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
@pytest.mark.parametrize("multioutput, multi", MULTI)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), weighted=st.sampled_from([None, "int", "float"]))
def test_streamed_equals_sklearn(cls, fn, kw, domain, multioutput, multi, seed, n, weighted):
    rng = np.random.default_rng(seed)
    y, p = data(rng, n, 3 if multi else None, domain)
    w = None
    if weighted == "int":
        w = rng.integers(0, 4, n).astype(float)
        w[0] = 1.0  # at least one sample
    elif weighted == "float":
        w = rng.random(n) * (rng.random(n) < 0.8)
        w[0] = 0.5
    if cls in (sm.R2Score, sm.ExplainedVariance):
        # constant targets on the rows of positive weight: scikit-learn's denominator is a rounding
        # residue of its mean (its R² can be -1e31), ours exactly 0 (force_finite decides): the
        # conventions are tested on exact cases in test_force_finite_conventions_equal_sklearn
        kept = y if w is None else y[w > 0]
        assume(bool(np.all(np.ptp(kept.reshape(len(kept), -1), axis=0) > 0)))
    m = streamed(cls(multioutput=multioutput, **kw), y, p, w, rng)
    want = quiet(fn, y, p, sample_weight=w, multioutput=multioutput, **kw)
    got = quiet(m.compute)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray)
    # the functional form is the same accumulator
    np.testing.assert_allclose(quiet(getattr(F, fn.__name__), y, p, sample_weight=w, multioutput=multioutput, **kw),
                               want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("power", [-2.0, -0.5, 0.0, 1.0, 1.2, 1.5, 2.0, 2.5, 3.0])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), weighted=st.booleans())
def test_tweedie_and_d2_equal_sklearn(power, seed, n, weighted):
    rng = np.random.default_rng(seed)
    y = rng.integers(0 if 1 <= power < 2 else 1, 6, n) / 2.0
    if power <= 0:
        y -= 1.0  # any real target
    p = rng.integers(1, 8, n) / 2.0
    w = rng.integers(0, 3, n).astype(float) if weighted else None
    if w is not None:
        w[0] = 1.0
    m = streamed(sm.TweedieDeviance(power=power), y, p, w, rng)
    want = skm.mean_tweedie_deviance(y, p, sample_weight=w, power=power)
    np.testing.assert_allclose(m.compute(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F.mean_tweedie_deviance(y, p, sample_weight=w, power=power), want,
                               rtol=1e-12, atol=1e-12)
    if len(set(y[w != 0] if w is not None else y)) > 1:  # else scikit-learn divides by 0 (raises)
        np.testing.assert_allclose(quiet(F.d2_tweedie_score, y, p, sample_weight=w, power=power),
                                   quiet(skm.d2_tweedie_score, y, p, sample_weight=w, power=power),
                                   rtol=1e-12, atol=1e-12)
    if power == 1.0:
        np.testing.assert_allclose(F.mean_poisson_deviance(y, p, sample_weight=w), want, rtol=1e-12)
    if power == 2.0:
        np.testing.assert_allclose(F.mean_gamma_deviance(y, p, sample_weight=w), want, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), weighted=st.booleans())
def test_max_error_equals_sklearn_on_the_rows_of_positive_weight(seed, n, weighted):
    rng = np.random.default_rng(seed)
    y, p = data(rng, n, None, "real")
    w = (rng.random(n) < 0.7).astype(float) * rng.integers(1, 3, n) if weighted else None
    if w is not None:
        w[0] = 1.0
    m = streamed(sm.MaxError(), y, p, w, rng)
    keep = slice(None) if w is None else w > 0
    assert m.compute() == skm.max_error(y[keep], p[keep]) == F.max_error(y[keep], p[keep])


def test_force_finite_conventions_equal_sklearn():
    """scikit-learn's limits: constant targets (denominator 0), perfect predictions (numerator 0)."""
    for y, p in (([0, 0], [1, -1]), ([1, 1], [1, 1]), ([[1, 2], [1, 3]], [[1, 2], [2, 3]]),
                 ([[1, 2], [1, 3]], [[1, 2], [1, 3]]), ([3, 3, 3], [3, 3, 4])):
        for ff in (True, False):
            for mo in ("raw_values", "uniform_average", "variance_weighted"):
                for cls, fn in ((sm.R2Score, skm.r2_score), (sm.ExplainedVariance, skm.explained_variance_score)):
                    got = quiet(cls(multioutput=mo, force_finite=ff).update(y, p).compute)
                    np.testing.assert_array_equal(got, quiet(fn, y, p, multioutput=mo, force_finite=ff))


def test_one_metricset_state_for_the_moment_metrics_and_its_values():
    rng = np.random.default_rng(3)
    y, p = data(rng, 500, None, "real")
    ms = sm.MetricSet(mse=sm.MeanSquaredError(), rmse=sm.RootMeanSquaredError(), mae=sm.MeanAbsoluteError(),
                      r2=sm.R2Score(), ev=sm.ExplainedVariance(), msle=sm.MeanSquaredLogError(),
                      rmsle=sm.RootMeanSquaredLogError())
    assert ms.groups == [["mse", "rmse", "mae", "r2", "ev"], ["msle", "rmsle"]]
    ya, pa = np.abs(y), np.abs(p)
    for a in range(0, 500, 77):
        ms.update(ya[a:a + 77], pa[a:a + 77])
    got = ms.compute()
    for name, fn in (("mse", skm.mean_squared_error), ("rmse", skm.root_mean_squared_error),
                     ("mae", skm.mean_absolute_error), ("r2", skm.r2_score), ("ev", skm.explained_variance_score),
                     ("msle", skm.mean_squared_log_error), ("rmsle", skm.root_mean_squared_log_error)):
        np.testing.assert_allclose(got[name], fn(ya, pa), rtol=1e-12)
    with pytest.raises(ValueError, match="family"):
        sm.MetricSet(mse=sm.MeanSquaredError(), f1=sm.F1())


@pytest.mark.parametrize("h", [0.7, 5.0])
def test_window_and_decayed_equal_sklearn_on_the_window_and_the_decay_weights(h):
    rng = np.random.default_rng(int(h * 10))
    window = sm.MetricSet(r2=sm.Window(sm.R2Score(), size=25), mae=sm.Window(sm.MeanAbsoluteError(), size=25),
                          mx=sm.Window(sm.MaxError(), size=25))
    decayed = sm.MetricSet(mse=sm.Decayed(sm.MeanSquaredError(), half_life=h),
                           ev=sm.Decayed(sm.ExplainedVariance(), half_life=h),
                           pin=sm.Decayed(sm.PinballLoss(0.3), half_life=h))
    ys, ps, ws = [], [], []
    for _ in range(25):
        n = int(rng.integers(0, 12))
        y, p = data(rng, n, None, "real")
        w = rng.random(n) * 2
        window.update(y, p)
        decayed.update(y, p, sample_weight=w)
        ys += list(y)
        ps += list(p)
        ws += list(w)
        if len(ys) < 2:
            continue
        yy, pp = np.array(ys), np.array(ps)
        got = quiet(window.compute)
        np.testing.assert_allclose(got["r2"], skm.r2_score(yy[-25:], pp[-25:]), rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(got["mae"], skm.mean_absolute_error(yy[-25:], pp[-25:]), rtol=1e-12)
        assert got["mx"] == skm.max_error(yy[-25:], pp[-25:])
        dec = 0.5 ** ((len(ys) - 1 - np.arange(len(ys))) / h) * np.array(ws)
        got = quiet(decayed.compute)
        np.testing.assert_allclose(got["mse"], skm.mean_squared_error(yy, pp, sample_weight=dec), rtol=1e-10)
        np.testing.assert_allclose(got["ev"], skm.explained_variance_score(yy, pp, sample_weight=dec),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got["pin"], skm.mean_pinball_loss(yy, pp, sample_weight=dec, alpha=0.3),
                                   rtol=1e-10)
