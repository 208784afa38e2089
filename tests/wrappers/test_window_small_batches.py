"""Windowed exact AUROC on small batches: the list mode and the trusted removal of expired rows
(``SortedScores.slide_rows``) against scikit-learn on exactly the window's rows after every
batch, including ties, zero scores, switching between list mode and runs, save/load, merge."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

import streammetrics as sm
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.exact.runs import FlatList


def ref_auc(y: np.ndarray, s: np.ndarray) -> float:
    if y.size == 0 or np.unique(y).size < 2:
        return float("nan")
    return float(roc_auc_score(y, s))


def listed(win: sm.Window) -> bool:
    """True when the window's ranking state is in list mode."""
    neg, pos = win._state.inner._groups[0]
    return type(neg.tail) is FlatList and type(pos.tail) is FlatList and not neg.runs \
        and not pos.runs


def value(win: sm.Window) -> float:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(win.compute())


def test_small_batches_enter_list_mode_and_stay_exact():
    rng = np.random.default_rng(0)
    size = 300
    y = rng.integers(0, 2, 3000)
    s = np.round(rng.normal(size=3000) + 0.5 * y, 1)  # many ties
    s[::7] = 0.0  # zero scores (torcheval's windowed AUROC mistakes them for empty slots)
    win = sm.Window(sm.AUROC(), size=size)
    seen_listed = False
    end = 0
    for m in [size] + [7] * 60 + [200, 3, 3, 3, 3, 3, 3, 90, 11, 11, 11, 11, 11, 11]:
        win.update(y[end:end + m], s[end:end + m])
        end += m
        lo = max(0, end - size)
        assert close(value(win), ref_auc(y[lo:end], s[lo:end]))
        seen_listed |= listed(win)
    assert seen_listed
    win._state.inner.check_invariants()  # u2 recounted from scratch (leaves list mode)
    assert close(value(win), ref_auc(y[end - size:end], s[end - size:end]))


def test_large_batch_leaves_list_mode():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 2000)
    s = np.round(rng.random(2000), 2)
    win = sm.Window(sm.AUROC(), size=100)
    win.update(y[:100], s[:100])
    end = 100
    for _ in range(8):
        win.update(y[end:end + 5], s[end:end + 5])
        end += 5
        win.compute()
    assert listed(win)
    win.update(y[end:end + 150], s[end:end + 150])  # larger than the window
    end += 150
    assert close(value(win), ref_auc(y[end - 100:end], s[end - 100:end]))
    assert not listed(win)


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(1, 40),
    batches=st.lists(st.integers(0, 25), min_size=1, max_size=40),
    levels=st.integers(1, 6),
    seed=st.integers(0, 2**31 - 1),
    read_every=st.integers(1, 3),
)
def test_window_auroc_equals_sklearn_after_every_batch(size, batches, levels, seed, read_every):
    """Any batch sizes (list mode, runs and the switches between them), few distinct scores
    (ties), zero scores: the value equals scikit-learn on exactly the window's rows."""
    rng = np.random.default_rng(seed)
    n = sum(batches)
    y = rng.integers(0, 2, n)
    s = rng.integers(-levels // 2, levels, n).astype(np.float64) / 2  # ties, zeros
    win = sm.Window(sm.AUROC(), size=size)
    end = 0
    for i, m in enumerate(batches):
        win.update(y[end:end + m], s[end:end + m])
        end += m
        if i % read_every == 0 or i == len(batches) - 1:
            lo = max(0, end - size)
            assert close(value(win), ref_auc(y[lo:end], s[lo:end]))
    state = win._state.inner
    state.check_invariants()


@settings(max_examples=25, deadline=None)
@given(
    size=st.integers(2, 30),
    n=st.integers(0, 120),
    seed=st.integers(0, 2**31 - 1),
    cut=st.integers(0, 120),
)
def test_save_load_and_merge_in_list_mode(size, n, seed, cut, tmp_path_factory):
    """A window in list mode survives save/load and copy; merging two windows (the second's
    rows after the first's, last ``size`` kept) equals one window fed both streams."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 1)
    cut = min(cut, n)

    def feed(win: sm.Window, ys: np.ndarray, ss: np.ndarray) -> None:
        for i in range(0, ys.shape[0], 3):
            win.update(ys[i:i + 3], ss[i:i + 3])
            value(win)

    a = sm.Window(sm.AUROC(), size=size)
    feed(a, y[:cut], s[:cut])
    b = sm.Window(sm.AUROC(), size=size)
    feed(b, y[cut:], s[cut:])
    path = tmp_path_factory.mktemp("w") / "a.smx"
    sm.save(a, path)
    loaded = sm.load(path)
    assert close(value(loaded), value(a))
    twin = a.copy()
    assert close(value(twin), ref_auc(y[max(0, cut - size):cut], s[max(0, cut - size):cut]))
    a.merge(b)
    lo = max(0, n - size)
    assert close(value(a), ref_auc(y[lo:], s[lo:]))
    # the loaded and copied windows keep streaming exactly
    for w in (loaded, twin):
        feed(w, y[cut:], s[cut:])
        assert close(value(w), ref_auc(y[lo:], s[lo:]))


@pytest.mark.parametrize("ignore_index", [None, -1, 0, 1])
def test_ignore_index_and_label_dtypes(ignore_index):
    rng = np.random.default_rng(5)
    n = 600
    y = rng.integers(0, 2, n)
    if ignore_index == -1:
        y[rng.random(n) < 0.2] = -1
    s = np.round(rng.random(n), 2)
    win = sm.Window(sm.AUROC(ignore_index=ignore_index), size=50)
    end = 0
    for k, m in enumerate([50] + [4] * 100 + [30] * 5):
        yb = y[end:end + m]
        if ignore_index is None and k % 3 == 0:
            yb = yb.astype(bool)
        elif ignore_index is None and k % 3 == 1:
            yb = yb.astype(np.float32)
        win.update(yb, s[end:end + m])
        end += m
        yy, ss = y[max(0, end - 50):end], s[max(0, end - 50):end]
        if ignore_index is not None:
            keep = yy != ignore_index
            yy, ss = yy[keep], ss[keep]
        assert close(value(win), ref_auc(yy, ss))


def test_integer_float32_and_scalar_scores():
    """Integer scores (stored as ints, ranked as float64), float32 batches (no list mode: the
    state keeps float32) and one sample per update (the scalar path) stay exact."""
    rng = np.random.default_rng(7)
    n = 500
    y = rng.integers(0, 2, n)
    si = rng.integers(0, 5, n)
    for scores in (si, si.astype(np.float32) / 4):
        win = sm.Window(sm.AUROC(), size=40)
        end = 0
        for m in [40] + [3] * 100:
            win.update(y[end:end + m], scores[end:end + m])
            end += m
            assert close(value(win), ref_auc(y[max(0, end - 40):end], scores[max(0, end - 40):end]))
    win = sm.Window(sm.AUROC(), size=30)
    for i in range(200):
        win.update(int(y[i]), float(si[i]))
        assert close(value(win), ref_auc(y[max(0, i - 29):i + 1], si[max(0, i - 29):i + 1]))


def test_time_window_small_batches():
    rng = np.random.default_rng(9)
    n = 800
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)
    ts = np.cumsum(rng.integers(0, 3, n)).astype(float)
    win = sm.Window(sm.AUROC(), seconds=25.0)
    for i in range(0, n, 4):
        win.update(y[i:i + 4], s[i:i + 4], timestamp=ts[i:i + 4])
        end = min(i + 4, n)
        keep = ts[:end] > ts[end - 1] - 25.0
        assert close(value(win), ref_auc(y[:end][keep], s[:end][keep]))


def test_weighted_rows_take_the_rebuild():
    """Weighted rows leave the trusted path: the window is rebuilt, still exact."""
    rng = np.random.default_rng(11)
    n = 300
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)
    w = rng.integers(1, 4, n).astype(float)
    win = sm.Window(sm.AUROC(), size=40)
    for i in range(0, n, 5):
        win.update(y[i:i + 5], s[i:i + 5], sample_weight=w[i:i + 5] if i % 2 else None)
        end = min(i + 5, n)
        lo = max(0, end - 40)
        ww = np.array([w[j] if (j // 5 * 5) % 2 else 1.0 for j in range(lo, end)])
        ref = roc_auc_score(y[lo:end], s[lo:end], sample_weight=ww) if np.unique(y[lo:end]).size == 2 \
            else float("nan")
        assert close(value(win), ref)


def test_slide_rows_contract_violation_is_caught_by_the_window():
    """A removed score that is not held raises in the state; the window then rebuilds."""
    state = SortedScores("binary")
    state.apply(state.prepare(np.array([0, 1, 1]), np.array([0.1, 0.2, 0.3])))
    state._flush()
    for grp in state._groups[0]:
        v, _ = grp.consolidate()
        grp.tail = FlatList(v.tolist())
        grp.runs, grp.wts, grp.cws, grp.coarse = [], [], [], []
    with pytest.raises(ValueError, match="not held"):
        state.slide_rows(np.array([1]), np.array([0.9]))


def test_flat_list_interface():
    fl = FlatList([0.1, 0.2, 0.2, 0.5])
    assert len(fl) == 4 and fl.bisect_left(0.2) == 1 and fl.bisect_right(0.2) == 3
    fl.add(0.3)
    fl.remove(0.2)
    assert list(fl) == [0.1, 0.2, 0.3, 0.5]
    fl._check()
    with pytest.raises(ValueError):
        fl.remove(0.4)
    fl.clear()
    assert len(fl) == 0


def test_list_mode_then_reads_without_expiry_then_single_samples():
    """A time window in list mode gets batches that expire nothing (folded by a plain read,
    which turns the lists back into runs), then single samples, then expiring batches again."""
    rng = np.random.default_rng(13)
    n = 400
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)
    ts = np.concatenate([np.arange(150, dtype=float), np.full(50, 149.0),
                         149.0 + np.arange(1, 201, dtype=float) / 2])
    win = sm.Window(sm.AUROC(), seconds=40.0)
    seen_listed = False
    i = 0
    while i < n:
        if 150 <= i < 200 or 300 <= i < 330:
            win.update(int(y[i]), float(s[i]), timestamp=float(ts[i]))  # one sample
            i += 1
        else:
            win.update(y[i:i + 3], s[i:i + 3], timestamp=ts[i:i + 3])
            i += 3
        end = min(i, n)
        keep = ts[:end] > ts[end - 1] - 40.0
        assert close(value(win), ref_auc(y[:end][keep], s[:end][keep]))
        seen_listed |= listed(win)
    assert seen_listed
    win._state.inner.check_invariants()
