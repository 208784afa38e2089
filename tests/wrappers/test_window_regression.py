"""Windows and decay around regression metrics (issues #30, #31): a MetricSet of windowed
regression metrics equals scikit-learn over exactly the window's rows -- weighted, by count or
by time, through merges and save / load; prediction intervals too. (Unweighted count windows and
weighted decay: tests/regression/test_regression_oracle.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quiet
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import streammetrics as sm


def _set(**span: float) -> sm.MetricSet:
    """A Window around each member (a Window wraps one accumulator; the set shares nothing)."""
    return sm.MetricSet(mse=sm.Window(sm.MeanSquaredError(), **span), mae=sm.Window(sm.MeanAbsoluteError(), **span),
                        r2=sm.Window(sm.R2Score(), **span), med=sm.Window(sm.MedianAbsoluteError(), **span),
                        mx=sm.Window(sm.MaxError(), **span))


def _oracle(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> dict[str, float]:
    # constant targets: R² is 0/0, which scikit-learn decides on its rounded weighted sums (a
    # 1e-33 denominator gives -1e30); its rule in exact arithmetic is 1 for a perfect fit, else 0
    r2 = float(np.all(p == y)) if np.all(y == y[0]) else skm.r2_score(y, p, sample_weight=w)
    return {"mse": skm.mean_squared_error(y, p, sample_weight=w), "mae": skm.mean_absolute_error(y, p, sample_weight=w),
            "r2": r2, "med": skm.median_absolute_error(y, p, sample_weight=w),
            "mx": skm.max_error(y, p)}  # the largest error of a row of positive weight


def _close(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-12, err_msg=k)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 15), timed=st.booleans())
def test_weighted_windows_equal_sklearn_over_the_window_rows(seed: int, size: int, timed: bool) -> None:
    rng = np.random.default_rng(seed)
    span = {"seconds": float(size)} if timed else {"size": size}
    a, b = _set(**span), _set(**span)
    rows: list[tuple[float, float, float, float, int]] = []  # (t, y, p, w, shard)
    t = 0.0
    for _ in range(int(rng.integers(1, 8))):
        n = int(rng.integers(1, 6))
        y = np.round(rng.normal(size=n) * 4) / 4
        p = y + np.round(rng.normal(size=n) * 4) / 8
        w = np.round(rng.random(n) * 3 + 0.25, 2)
        shard = int(rng.integers(0, 2))
        t += float(rng.integers(0, 3))
        (a, b)[shard].update(y, p, sample_weight=w, **({"timestamp": t} if timed else {}))
        rows += [(t, yi, pi, wi, shard) for yi, pi, wi in zip(y, p, w, strict=True)]
        if rng.random() < 0.3:
            a = sm.loads(sm.dumps(a))
    merged = sm.loads(sm.dumps(a.merge(b)))
    arr = np.array(rows)
    if timed:  # interleaved by timestamp (stable: a's rows first), newer than newest - seconds
        order = np.lexsort((arr[:, 4], arr[:, 0]))
        arr = arr[order]
        keep = arr[arr[:, 0] > arr[:, 0].max() - size]
    else:  # b's rows after a's, the last `size`
        keep = np.concatenate([arr[arr[:, 4] == 0], arr[arr[:, 4] == 1]])[-size:]
    if len(keep) < 2:
        return
    _close(quiet(merged.compute), _oracle(keep[:, 1], keep[:, 2], keep[:, 3]))


def test_windowed_and_decayed_intervals() -> None:
    rng = np.random.default_rng(11)
    win = sm.MetricSet(c=sm.Window(sm.IntervalCoverage(), size=9), s=sm.Window(sm.IntervalScore(0.2), size=9))
    dec = sm.Decayed(sm.IntervalWidth(), half_life=3.0)
    ys, qs = [], []
    for _ in range(6):
        y = np.round(rng.normal(size=4), 1)
        mid, half = y + np.round(rng.normal(size=4), 1), np.abs(np.round(rng.normal(size=4), 1))
        q = np.stack([mid - half, mid + half], axis=1)
        win.update(y, q)
        dec.update(y, q)
        ys.append(y)
        qs.append(q)
    y, q = np.concatenate(ys), np.concatenate(qs)
    lo, hi = q[-9:, 0], q[-9:, 1]
    cover = np.mean((lo <= y[-9:]) & (y[-9:] <= hi))
    score = np.mean(hi - lo + 2 / 0.2 * (np.maximum(lo - y[-9:], 0) + np.maximum(y[-9:] - hi, 0)))
    got = sm.loads(sm.dumps(win)).compute()
    assert got["c"] == pytest.approx(cover, rel=1e-12) and got["s"] == pytest.approx(score, rel=1e-12)
    decay = 0.5 ** ((len(y) - 1 - np.arange(len(y))) / 3.0)
    assert sm.loads(sm.dumps(dec)).compute() == pytest.approx(np.average(q[:, 1] - q[:, 0], weights=decay),
                                                             rel=1e-12)


def test_a_window_wraps_one_accumulator_not_a_set() -> None:
    """Window(MetricSet(...)) is refused with the way round: a MetricSet of windows."""
    with pytest.raises(ValueError, match=r"not a MetricSet .*wrap each member"):
        sm.Window(sm.MetricSet(mse=sm.MeanSquaredError(), r2=sm.R2Score()), size=5)
