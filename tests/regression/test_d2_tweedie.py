"""D2TweedieScore against scikit-learn's d2_tweedie_score (streamed, merged, saved: 1e-12; long
streams 1e-9), TweedieDeviance over several outputs (each column scikit-learn's
mean_tweedie_deviance), and MaxError's weights (rows of weight 0 do not count)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import quiet
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import streammetrics as sm
import streammetrics.functional as F
from streammetrics import UndefinedMetricWarning
from streammetrics._core.persistence import dumps, loads
from streammetrics.regression._sums import tweedie_deviance

POWERS = [-2.0, -1.0, -0.5, 0.0, 1.0, 1.2, 1.5, 2.0, 3.0]


def tweedie_data(rng: np.random.Generator, n: int, power: float, k: int | None = None):
    shape = (n,) if k is None else (n, k)
    levels = int(rng.integers(1, 4))
    y = rng.integers(0 if 1 <= power < 2 else 1, 9, shape) / levels
    if power <= 0:
        y = y - 2.0  # any real target, negatives included
    p = rng.integers(1, 12, shape) / levels
    return y, p


def _term_sizes(y, mu, power):
    """Per row, the sum of the absolute values of the terms of scikit-learn's unit deviance (its
    rounding error is a few ulps of that, not of the deviance, which may be far smaller)."""
    y, mu = np.asarray(y, dtype=float), np.broadcast_to(np.asarray(mu, dtype=float), np.shape(y))
    with np.errstate(all="ignore"):
        if power == 0:
            return (y - mu) ** 2
        if power == 1:
            return 2 * (np.abs(np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0) / mu), 0.0)) + np.abs(y) + mu)
        if power == 2:
            return 2 * (np.abs(np.log(mu / y)) + np.abs(y / mu) + 1)
        return 2 * (np.maximum(y, 0) ** (2 - power) / abs((1 - power) * (2 - power))
                    + np.abs(y * mu ** (1 - power) / (1 - power)) + np.abs(mu ** (2 - power) / (2 - power)))


def assert_d2_close(got, y, p, w, power):
    """``got`` equals scikit-learn's D² to 1e-12, plus what rounding the deviances' terms may
    move a ratio of two deviance sums by (an ill-conditioned input, a denominator far below its
    terms, has a value known only to that, in scikit-learn as here)."""
    ybar = np.average(y, weights=w)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = skm.d2_tweedie_score(y, p, sample_weight=w, power=power)
    if np.isnan(want):
        # a negative mean raised to a fractional power (power < 0): scikit-learn's denominator
        # is nan (with a RuntimeWarning), and so is ours
        assert ybar <= 0 and np.isnan(got)
        return
    den = abs(np.average(tweedie_deviance(y, np.full_like(y, ybar), power), weights=w))
    num_terms = np.average(_term_sizes(y, p, power), weights=w)
    den_terms = np.average(_term_sizes(y, ybar, power), weights=w)
    slack = 64 * np.finfo(float).eps * (abs(1 - want) * den_terms + num_terms) / den
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 + slack)


def pieces(metric_factory, y, p, w, rng):
    """The rows cut in random batches, each in its own accumulator, saved and loaded, merged."""
    cuts = np.sort(rng.integers(0, len(y) + 1, int(rng.integers(0, 5))))
    total = metric_factory()
    for a, b in zip([0, *cuts], [*cuts, len(y)], strict=True):
        part = metric_factory()
        part.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
        total.merge(loads(dumps(part)))
    return total


@pytest.mark.parametrize("power", POWERS)
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 50), weighted=st.sampled_from([None, "int", "float"]))
def test_d2_tweedie_streamed_merged_saved_equals_sklearn(power, seed, n, weighted):
    rng = np.random.default_rng(seed)
    y, p = tweedie_data(rng, n, power)
    w = None
    if weighted == "int":
        w = rng.integers(0, 4, n).astype(float)
    elif weighted == "float":
        w = rng.random(n) * (rng.random(n) < 0.8)
    if w is not None:
        w[:2] = [1.0, 0.5]
    kept = y if w is None else y[w > 0]
    assume(np.ptp(kept) > 0)  # constant y_true: scikit-learn divides by (a rounding residue of) 0
    m = pieces(lambda: sm.D2TweedieScore(power=power), y, p, w, rng)
    assert_d2_close(m.compute(), y, p, w, power)
    # one update, a reload, and the functional form agree too
    one = sm.D2TweedieScore(power=power).update(y, p, sample_weight=w)
    assert_d2_close(loads(dumps(one)).compute(), y, p, w, power)
    assert_d2_close(F.d2_tweedie_score(y, p, sample_weight=w, power=power), y, p, w, power)


@pytest.mark.parametrize("power", [0.0, 1.0, 1.5, 2.0, 3.0])
def test_d2_tweedie_long_stream_equals_sklearn(power):
    rng = np.random.default_rng(int(power * 10) + 1)
    ys, ps, ws = [], [], []
    m = sm.D2TweedieScore(power=power)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        y = 1e3 + rng.gamma(2.0, 5.0, n)  # a large mean, a small spread: the merge must not cancel
        p = 1e3 + rng.gamma(2.0, 5.0, n)
        w = rng.random(n) + 0.1
        m.update(y, p, sample_weight=w)
        ys.append(y), ps.append(p), ws.append(w)
    y, p, w = np.concatenate(ys), np.concatenate(ps), np.concatenate(ws)
    np.testing.assert_allclose(m.compute(), skm.d2_tweedie_score(y, p, sample_weight=w, power=power), rtol=1e-9)


@pytest.mark.parametrize("power", [0.0, 1.5])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40))
def test_several_outputs_are_sklearn_per_column(power, seed, n):
    rng = np.random.default_rng(seed)
    y, p = tweedie_data(rng, n, power, k=3)
    w = rng.integers(1, 4, n).astype(float)
    assume(bool(np.all(np.ptp(y, axis=0) > 0)))
    dev = pieces(lambda: sm.TweedieDeviance(power, multioutput="raw_values"), y, p, w, rng).compute()
    d2 = pieces(lambda: sm.D2TweedieScore(power, multioutput="raw_values"), y, p, w, rng).compute()
    for j in range(3):
        np.testing.assert_allclose(dev[j], skm.mean_tweedie_deviance(y[:, j], p[:, j], sample_weight=w,
                                                                     power=power), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(d2[j], skm.d2_tweedie_score(y[:, j], p[:, j], sample_weight=w, power=power),
                                   rtol=1e-12, atol=1e-12)
    weights = [0.2, 0.3, 0.5]
    np.testing.assert_allclose(sm.TweedieDeviance(power, multioutput=weights).update(y, p, sample_weight=w).compute(),
                               np.average(dev, weights=weights), rtol=1e-12)
    np.testing.assert_allclose(sm.D2TweedieScore(power).update(y, p, sample_weight=w).compute(), np.mean(d2),
                               rtol=1e-12)


def test_functions_keep_sklearns_single_output():
    y = np.array([[1.0, 2.0], [2.0, 3.0], [4.0, 1.0]])
    for fn in ("mean_tweedie_deviance", "d2_tweedie_score"):
        with pytest.raises(ValueError, match=f"Multioutput not supported in {fn}") as ours:
            getattr(F, fn)(y, y + 1)
        with pytest.raises(ValueError, match=f"Multioutput not supported in {fn}"):
            getattr(skm, fn)(y, y + 1)
        assert type(ours.value) is ValueError


def test_constant_targets_and_too_few_rows():
    m = sm.D2TweedieScore(power=1).update([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.warns(UndefinedMetricWarning, match="constant"):
        assert np.isnan(m.compute())
    # split anyhow, the denominator of a constant target is exactly 0 (no rounding residue)
    m2 = sm.D2TweedieScore(power=0).update([0.1], [1.0]).update([0.1, 0.1], [0.3, 0.2])
    assert m2._state.totals()[3][0] == 0.0
    with pytest.raises(ValueError, match="y_true: D\\^2 score is undefined: y_true is constant"):
        F.d2_tweedie_score([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], power=1)
    with pytest.raises(ZeroDivisionError):  # scikit-learn's answer, by accident
        skm.d2_tweedie_score([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], power=1)
    one = sm.D2TweedieScore().update([1.0], [2.0])
    with pytest.warns(UndefinedMetricWarning, match="fewer than two"):
        assert np.isnan(one.compute())
    raw = sm.D2TweedieScore(multioutput="raw_values").update([[1.0, 2.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 3.0]])
    with pytest.warns(UndefinedMetricWarning):
        got = raw.compute()
    assert np.isnan(got[0]) and got[1] == 1.0


def test_mean_at_the_edge_of_the_domain_matches_sklearn():
    """A mean outside the deviance's domain (power < 0 with y_true <= 0 on average, all zeros for
    1 <= power < 2) gives scikit-learn's value or its nan."""
    cases = [([-3.0, -1.0, 0.0, 1.0], -1.0), ([-3.0, -1.0, 0.0, -5.0], -2.0), ([-3.0, -1.0, 0.0, 1.0], -0.5)]
    for y, power in cases:
        p = [1.0, 2.0, 1.0, 1.0]
        want = quiet(skm.d2_tweedie_score, y, p, power=power)
        m = sm.D2TweedieScore(power=power)
        for i in range(4):
            m.update([y[i]], [p[i]])
        np.testing.assert_allclose(quiet(m.compute), want, rtol=1e-12, equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(sm.D2TweedieScore(power=1.5).update([0.0, 0.0], [1.0, 2.0]).compute())


def test_decay_and_metricset():
    rng = np.random.default_rng(5)
    y, p = tweedie_data(rng, 40, 1.0)
    dec = sm.Decayed(sm.D2TweedieScore(power=1), half_life=7.0)
    for a in range(0, 40, 8):
        dec.update(y[a:a + 8], p[a:a + 8])
    w = 0.5 ** ((39 - np.arange(40)) / 7.0)
    np.testing.assert_allclose(dec.compute(), skm.d2_tweedie_score(y, p, sample_weight=w, power=1), rtol=1e-10)
    ms = sm.MetricSet(dev=sm.TweedieDeviance(power=1), d2=sm.D2TweedieScore(power=1)).update(y, p)
    np.testing.assert_allclose(ms.compute()["d2"], skm.d2_tweedie_score(y, p, power=1), rtol=1e-12)


# ---- MaxError: the largest error over the rows of positive weight ---------------------------

def test_max_error_counts_rows_of_positive_weight_only():
    y, p = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.5, 2.0, 13.0, 3.0])
    assert sm.MaxError().update(y, p).compute() == 10.0
    # the row of error 10 weighs 0: it is no sample; the other weights' values do not matter
    for w in ([1.0, 1.0, 0.0, 1.0], [0.25, 7.0, 0.0, 2.0]):
        assert sm.MaxError().update(y, p, sample_weight=w).compute() == 1.0
    m = sm.MaxError().update(y, p, sample_weight=[0.0, 0.0, 0.0, 0.0])  # nothing counted yet
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(m.compute())
    m.update(y, p, sample_weight=[2.0, 0.0, 0.0, 0.0])
    assert m.compute() == 0.5
    before = m.state_dict()
    with pytest.raises(ValueError, match=r"sample_weight: .*-1\.0 at index 1"):
        m.update(y, p, sample_weight=[1.0, -1.0, 1.0, 1.0])
    assert m.state_dict()["max"] == before["max"] and m.compute() == 0.5


@pytest.mark.parametrize("cls", [sm.TweedieDeviance, sm.D2TweedieScore])
def test_perfect_predictions_save_and_load(cls):
    """d(y, y) rounds to -3.6e-15 at power 1.5 and y = 128/7: the deviances are taken >= 0, so
    the state stays a loadable one (a negative sum used to be refused on load)."""
    y = np.array([128 / 7, 2.0])
    m = cls(power=1.5).update(y, y)
    again = loads(dumps(m))
    assert quiet(again.compute) == quiet(m.compute)
    if cls is sm.TweedieDeviance:
        assert m.compute() == 0.0


@pytest.mark.parametrize("power", [0.0, 1.0, 1.5, 2.0, 3.0, -1.5])
def test_a_loaded_mean_lies_between_the_smallest_and_largest_target(power):
    """A file whose 'mean' lies outside [y_min, y_max] (or outside y_true's domain) is refused:
    a fresh Hypothesis seed set it to -1.0 at power >= 1, which loaded and then left a state
    whose deviance sum was nan after a merge (a state that could not be saved and loaded)."""
    y, p = np.array([0.5, 2.0, 3.0, 1.0]), np.array([1.0, 1.5, 2.5, 1.2])
    m = sm.D2TweedieScore(power=power).update(y, p)
    state = m.state_dict()
    assert loads(dumps(m)).compute() == m.compute()
    for mean in (-1.0, 0.4, 3.5):
        with pytest.raises(ValueError, match="array 'mean' holds"):
            sm.Metric.from_state_dict(dict(state, mean=np.array([mean])))
    back = sm.Metric.from_state_dict(dict(state, mean=np.array([2.9])))  # inside: loads, merges, saves
    back.merge(m).update(y, p)
    assert np.isfinite(back.state_dict()["dev"]).all()
    loads(dumps(back))

