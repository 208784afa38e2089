"""Bounded-memory ranking metrics (``max_bytes=``) inside windows and decay: ``bounds()`` holds
scikit-learn's exact value on exactly the window's samples (or with the decay weights) after
every batch, and the wrapped state stays under its budget. The window still keeps its rows (for
expiry and persistence): memory = rows + budget."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quiet
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

from streammetrics import AUROC, AveragePrecision, Decayed, Window
from streammetrics._scores.binned import bins as bins_mod

TOL = 1e-12
BUDGET = 2048  # small enough that the scores below force coarse bins


def _data(seed: int, n: int, crowded: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    # crowded: probabilities crowded near 1, with ties
    s = np.round(1 - rng.random(n) ** 4 * 1e-3 * (1.5 - y), 7) if crowded else rng.normal(size=n) + 0.8 * y
    return y, s


def _oracle(metric, y, s, w=None) -> float:
    fn = roc_auc_score if isinstance(metric, AUROC) else average_precision_score
    return float(fn(y, s, sample_weight=w))


def _holds(lo: float, hi: float, exact: float) -> bool:
    return lo - TOL * max(1.0, abs(exact)) <= exact <= hi + TOL * max(1.0, abs(exact))


def _bounded_subtract_spy(monkeypatch) -> dict[str, int]:
    calls = {"n": 0}
    real = bins_mod.BinnedScores.subtract

    def spy(self, other):
        calls["n"] += 1
        return real(self, other)

    monkeypatch.setattr(bins_mod.BinnedScores, "subtract", spy)
    return calls


@pytest.mark.parametrize("make", [lambda: AUROC(max_bytes=BUDGET), lambda: AveragePrecision(max_bytes=BUDGET),
                                  lambda: AUROC(max_bytes=BUDGET, scores="probability")])
@pytest.mark.parametrize("crowded", [False, True])
def test_count_window_bounds_hold_after_every_batch(make, crowded, monkeypatch):
    calls = _bounded_subtract_spy(monkeypatch)
    y, s = _data(1, 12_000, crowded)
    if not crowded:
        s = 1 / (1 + np.exp(-s))  # probabilities (for scores="probability"; the same ranking)
    size = 2500
    win = Window(make(), size=size)
    rng = np.random.default_rng(2)
    i = 0
    inexact = 0
    while i < y.shape[0]:
        m = int(rng.integers(1, 700))
        win.update(y[i:i + m], s[i:i + m])
        i = min(i + m, y.shape[0])
        lo, hi = win.bounds()
        lo_y, lo_s = y[max(0, i - size):i], s[max(0, i - size):i]
        if len(np.unique(lo_y)) == 2:
            exact = _oracle(win.metric, lo_y, lo_s)
            assert _holds(lo, hi, exact), (i, lo, exact, hi)
            inexact += hi > lo
        assert win.metric._state.nbytes <= BUDGET
        assert win.metric.nbytes <= BUDGET
    assert inexact > 10  # the budget really binned the scores
    assert calls["n"] > 10  # expired rows were subtracted, not rebuilt


@pytest.mark.parametrize("weighted", [False, True])
def test_time_window_bounds_hold_with_integer_weights(weighted):
    y, s = _data(3, 6000)
    rng = np.random.default_rng(4)
    ts = np.cumsum(rng.random(6000) * 0.01)
    w = rng.integers(0, 4, 6000).astype(float) if weighted else None
    win = Window(AUROC(max_bytes=BUDGET), seconds=5.0)
    for i in range(0, 6000, 300):
        sl = slice(i, i + 300)
        win.update(y[sl], s[sl], sample_weight=None if w is None else w[sl], timestamp=ts[sl])
        end = i + 300
        keep = np.flatnonzero(ts[:end] > ts[end - 1] - 5.0)
        lo, hi = win.bounds()
        exact = _oracle(win.metric, y[keep], s[keep], None if w is None else w[keep])
        assert _holds(lo, hi, exact)
        assert win.metric._state.nbytes <= BUDGET


@pytest.mark.parametrize("by_time", [False, True])
@pytest.mark.parametrize("make", [lambda: AUROC(max_bytes=BUDGET), lambda: AveragePrecision(max_bytes=BUDGET)])
def test_decayed_bounds_hold_with_the_decay_weights(by_time, make):
    y, s = _data(5, 8000)
    ts = np.cumsum(np.random.default_rng(6).random(8000) * 0.01)
    h = 1500.0 if not by_time else 10.0
    d = Decayed(make(), **({"half_life_seconds": h} if by_time else {"half_life": h}))
    inexact = 0
    for i in range(0, 8000, 400):
        sl = slice(i, i + 400)
        d.update(y[sl], s[sl], **({"timestamp": ts[sl]} if by_time else {}))
        end = i + 400
        age = (ts[end - 1] - ts[:end]) if by_time else (end - 1 - np.arange(end))
        wts = 0.5 ** (age / h)
        lo, hi = d.bounds()
        assert _holds(lo, hi, _oracle(d.metric, y[:end], s[:end], wts))
        inexact += hi > lo
        assert d.metric._state.nbytes <= BUDGET
    assert inexact > 5


def test_window_memory_is_rows_plus_budget():
    y, s = _data(7, 20_000)
    win = Window(AUROC(max_bytes=BUDGET), size=5000)
    win.update(y, s)
    rows = 5000 * (y.dtype.itemsize + s.dtype.itemsize)
    assert win.metric._state.nbytes <= BUDGET
    assert rows <= win.nbytes <= rows + BUDGET + 64 * 1024  # plus slack for the piece buffers


# -- properties -----------------------------------------------------------------------------------
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), cuts=st.lists(st.integers(1, 1999), max_size=8),
       size=st.integers(50, 1500))
def test_any_split_save_load_and_merge_keep_the_certificate(seed, cuts, size):
    """The bins of a bounded window depend on the stream's history (subtraction never refines
    them), so values may differ between splits; the certificate always holds. Loading and
    merging rebuild the state from the window's rows: equal to a fresh bounded metric fed them."""
    y, s = _data(seed, 2000, crowded=seed % 2 == 0)
    win = Window(AUROC(max_bytes=1024), size=size)
    for part in np.split(np.arange(2000), sorted(set(cuts))):
        win.update(y[part], s[part])
        if part.shape[0] == 0:
            continue
        end = part[-1] + 1
        ys, ss = y[max(0, end - size):end], s[max(0, end - size):end]
        if len(np.unique(ys)) == 2:
            assert _holds(*win.bounds(), _oracle(win.metric, ys, ss))
    fresh = AUROC(max_bytes=1024).update(y[-size:], s[-size:])
    back = Window.from_state_dict(win.state_dict())
    assert back._synced()._state.equals(fresh._state)
    assert back.bounds() == fresh.bounds()
    a = Window(AUROC(max_bytes=1024), size=size).update(y[:1000], s[:1000])
    b = Window(AUROC(max_bytes=1024), size=size).update(y[1000:], s[1000:])
    merged = a.merge(b)
    assert merged.bounds() == fresh.bounds()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), cuts=st.lists(st.integers(1, 1999), max_size=8),
       h=st.floats(20, 3000))
def test_decayed_bounded_splits_and_round_trip(seed, cuts, h):
    y, s = _data(seed, 2000)
    d = Decayed(AUROC(max_bytes=1024), half_life=h)
    for part in np.split(np.arange(2000), sorted(set(cuts))):
        d.update(y[part], s[part])
    wts = 0.5 ** ((1999 - np.arange(2000)) / h)
    lo, hi = d.bounds()
    assert _holds(lo, hi, _oracle(d.metric, y, s, wts))
    back = Decayed.from_state_dict(d.state_dict())
    assert back.bounds() == (lo, hi)
    assert quiet(back.compute) == quiet(d.compute)
