"""IntervalCoverage, IntervalWidth and IntervalScore against direct numpy formulas (weights,
ties, targets on the bounds, several outputs) after any split, merge and save/load; the Wilson
interval of the coverage; refused inputs and states."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from load_corpus import build, split

import streammetrics as sm


def _oracle(y, lo, hi, w, alpha):
    w = np.ones(y.shape[0]) if w is None else w
    inside = ((lo <= y) & (y <= hi)).astype(float)
    score = (hi - lo) + (2 / alpha) * (lo - y) * (y < lo) + (2 / alpha) * (y - hi) * (y > hi)
    avg = lambda v: (w[:, None] * v).sum(axis=0) / w.sum()  # noqa: E731
    return avg(inside), avg(hi - lo), avg(score)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), k=st.integers(1, 3), weighted=st.booleans())
def test_equal_the_formulas_after_split_merge_and_save(seed, n, k, weighted):
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(size=(n, k)) * 2) / 2
    c = y + np.round(rng.normal(size=(n, k)) * 2) / 2
    h = np.abs(np.round(rng.normal(size=(n, k)) * 2)) / 2
    lo, hi = c - h, c + h
    q = np.stack([lo, hi], axis=-1)
    w = rng.integers(0, 4, n) * 0.5 if weighted else None
    if w is not None and w.sum() == 0:
        w[0] = 1.0
    alpha = float(rng.uniform(0.05, 0.5))
    yy, qq = (y[:, 0], q[:, 0]) if k == 1 else (y, q)
    cov, width, score = _oracle(y, lo, hi, w, alpha)
    for cls, expected, kw in ((sm.IntervalCoverage, cov, {}), (sm.IntervalWidth, width, {}),
                              (sm.IntervalScore, score, {"alpha": alpha})):
        parts = [cls(num_outputs=k, multioutput="raw_values", **kw) for _ in range(2)]
        cut = int(rng.integers(0, n + 1))
        for a, b in ((0, cut), (cut, n)):
            if b > a:
                parts[int(rng.integers(0, 2))].update(yy[a:b], qq[a:b], sample_weight=None if w is None else w[a:b])
        m = sm.loads(sm.dumps(parts[0].merge(parts[1])))
        np.testing.assert_allclose(m.compute(), expected, rtol=1e-12, atol=1e-12)


def test_coverage_interval_is_the_wilson_interval():
    rng = np.random.default_rng(0)
    y = rng.normal(size=500)
    q = np.stack([y - rng.random(500) * 2 + 0.5, y + 1.0], axis=1)
    m = sm.IntervalCoverage().update(y, q)
    p, n, z = m.compute(), 500, 1.959963984540054
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = m.interval(0.95)
    assert low == pytest.approx(center - half, rel=1e-12) and high == pytest.approx(center + half, rel=1e-12)
    low2, high2 = sm.IntervalCoverage(num_outputs=2).update(np.c_[y, y], np.stack([q, q], axis=1)).interval()
    np.testing.assert_allclose(low2, [low, low], rtol=1e-12)
    np.testing.assert_allclose(high2, [high, high], rtol=1e-12)


def test_refused_inputs_leave_the_state_unchanged():
    m = sm.IntervalScore(0.1).update([1.0, 2.0], [[0.0, 1.5], [1.0, 3.0]])
    before = m.state_dict()["sums"].copy()
    with pytest.raises(ValueError, match=r"lower bound is above.*y_pred\[1, 0\] = 3.0"):
        m.update([1.0, 2.0], [[0.0, 2.0], [3.0, 2.5]])
    with pytest.raises(ValueError, match="y_pred: Input y_pred contains NaN"):
        m.update([1.0], [[np.nan, 2.0]])
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        m.update([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="alpha"):
        sm.IntervalScore(1.0)
    np.testing.assert_array_equal(m.state_dict()["sums"], before)
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.IntervalWidth().compute())


def test_hostile_states_are_refused():
    good = sm.IntervalCoverage().update([1.0, 2.0], [[0.0, 1.5], [3.0, 3.0]]).state_dict()
    for sums in (np.array([[2.0], [4.0], [3.0], [1.0], [0.0], [0.0]]),   # covered > weight
                 np.array([[2.0], [9.0], [1.0], [1.0], [0.0], [0.0]]),   # sum w^2 > (sum w)^2
                 np.array([[0.0], [0.0], [0.0], [1.0], [0.0], [0.0]]),   # sums of no weight
                 np.array([[2.0], [2.0], [1.0], [-1.0], [0.0], [0.0]]),
                 np.array([[2.0, 1.0]])):
        state = dict(good)
        state["sums"] = sums
        with pytest.raises(ValueError):
            sm.IntervalCoverage.from_state_dict(state)


def test_interval_score_alpha_is_a_normal_float() -> None:
    """A subnormal alpha made 2 / alpha infinite, so any miss read inf (a mutated file's alpha
    1e-320 loaded and computed inf): it is refused, by the constructor and by load; the smallest
    normal alpha still gives a finite score."""
    with pytest.raises(ValueError, match=r"alpha: .*smallest normal float.*got 1e-320"):
        sm.IntervalScore(alpha=1e-320)
    tiny = float(np.finfo(float).tiny)
    m = sm.IntervalScore(alpha=tiny).update([1.0, 4.0], [[0, 2], [2.5, 3]])
    assert np.isfinite(m.compute())
    header, payload = split(sm.dumps(m))
    raw = json.dumps(header).replace(repr(tiny), "1e-320").encode()
    assert b"1e-320" in raw
    with pytest.raises(ValueError, match="alpha"):
        sm.loads(build(None, payload, raw))
