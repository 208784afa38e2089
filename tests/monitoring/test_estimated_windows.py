"""Window and Decayed around Estimated (issue #31): a windowed estimate (values and intervals)
equals an Estimated fed just the window's predictions, a decayed one an Estimated fed the decay
weights, to 1e-12, through save / load and merge."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import quiet
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics.monitoring import Estimated

C = 3


def _binary_set() -> sm.MetricSet:
    return sm.MetricSet(acc=sm.Accuracy(zero_division=0.0), p=sm.Precision(zero_division=0.0),
                        r=sm.Recall(zero_division=0.0), auc=sm.AUROC(), ap=sm.AveragePrecision())


def _multiclass_set() -> sm.MetricSet:
    return sm.MetricSet(acc=sm.Accuracy(C, zero_division=0.0),
                        p=sm.Precision(C, average=None, zero_division=0.0), auc=sm.AUROC(C))


def _probs(rng: np.random.Generator, n: int, multiclass: bool) -> np.ndarray:
    """Probabilities with ties and the edges 0 and 1."""
    if not multiclass:
        return rng.integers(0, 9, n) / 8
    q = rng.integers(0, 5, (n, C)).astype(float) + np.eye(C)[rng.integers(0, C, n)]
    return q / q.sum(axis=1, keepdims=True)


def _readouts(est: Any, multiclass: bool) -> list[Any]:
    """The value and the intervals Estimated has (accuracy; binary precision and recall)."""
    out = [quiet(est.compute)]
    out.append(quiet(lambda: est.interval(0.9, member="acc")))
    if not multiclass:
        out += [quiet(lambda: est.interval(member="p")), quiet(lambda: est.interval(member="r"))]
    return out


def _close(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _close(x, y)
    else:
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12,
                                   atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 12), multiclass=st.booleans(),
       weighted=st.booleans())
def test_count_window_equals_an_estimate_of_the_last_predictions(seed: int, size: int, multiclass: bool,
                                                                 weighted: bool) -> None:
    rng = np.random.default_rng(seed)
    make = _multiclass_set if multiclass else _binary_set
    win = sm.Window(Estimated(make()), size=size)
    other = sm.Window(Estimated(make()), size=size)
    ps, ws = [], []
    for step in range(int(rng.integers(1, 7))):
        n = int(rng.integers(0, 6))
        p = _probs(rng, n, multiclass)
        w = np.round(rng.random(n) * 2 + 0.1, 2) if weighted else None
        win.update(p, sample_weight=w)
        ps.append(p)
        ws.append(np.ones(n) if w is None else w)
        if rng.random() < 0.3:
            win = sm.loads(sm.dumps(win))
        if len(np.concatenate(ps)) and step % 2 == 0:  # read along the way
            quiet(win.compute)
    p_all, w_all = np.concatenate(ps), np.concatenate(ws)
    if not len(p_all):
        return
    ref = Estimated(make()).update(p_all[-size:], sample_weight=w_all[-size:] if weighted else None)
    _close(_readouts(win, multiclass), _readouts(ref, multiclass))
    # merge (count windows: the other's predictions come after, the last `size` stay)
    q = _probs(rng, 4, multiclass)
    other.update(q)
    win.merge(other)
    both_p = np.concatenate([p_all[-size:], q])[-size:]
    both_w = np.concatenate([w_all[-size:], np.ones(4)])[-size:]
    ref = Estimated(make()).update(both_p, sample_weight=both_w if weighted else None)
    _close(_readouts(sm.loads(sm.dumps(win)), multiclass), _readouts(ref, multiclass))
    assert len(win) == len(both_p)


def test_time_window_keeps_the_predictions_of_the_last_seconds() -> None:
    rng = np.random.default_rng(5)
    now = [0.0]
    win = sm.Window(Estimated(_binary_set()), seconds=10.0, clock=lambda: now[0])
    ps, ts = [], []
    for t in range(0, 40, 3):
        now[0] = float(t)
        p = _probs(rng, 3, False)
        win.update(p)
        ps.append(p)
        ts += [t] * 3
    p_all, t_all = np.concatenate(ps), np.array(ts)
    keep = t_all > 39 - 10  # newest 39: strictly newer than 29
    _close(_readouts(win, False), _readouts(Estimated(_binary_set()).update(p_all[keep]), False))
    win.update([0.3, 0.9], timestamp=[45.0, 46.0])  # explicit timestamps
    keep = t_all > 36
    ref = Estimated(_binary_set()).update(np.concatenate([p_all[keep], [0.3, 0.9]]))
    _close(_readouts(sm.loads(sm.dumps(win)), False), _readouts(ref, False))
    win.advance(100.0)
    assert len(win) == 0


@pytest.mark.parametrize("make", [lambda: sm.Accuracy(), lambda: sm.MetricSet(acc=sm.Accuracy(), p=sm.Precision(),
                                                                                 r=sm.Recall(), auc=sm.AUROC())])
@pytest.mark.parametrize("h", [0.8, 4.0])
def test_decayed_equals_an_estimate_with_the_decay_weights(make: Any, h: float) -> None:
    """By rescaling the sums (confusion counts) or by rebuilding from aged rows (AUROC)."""
    rng = np.random.default_rng(int(h * 10))
    dec = sm.Decayed(Estimated(make()), half_life=h)
    ps, ws = [], []
    for _ in range(12):
        n = int(rng.integers(0, 5))
        p, w = _probs(rng, n, False), np.round(rng.random(n) * 2 + 0.1, 2)
        dec.update(p, sample_weight=w)
        ps.append(p)
        ws.append(w)
        p_all, w_all = np.concatenate(ps), np.concatenate(ws)
        if not len(p_all):
            continue
        k = len(p_all)
        decay = 0.5 ** ((k - 1 - np.arange(k)) / h) * w_all
        ref = Estimated(make()).update(p_all, sample_weight=decay)
        member = "acc" if isinstance(ref.metric, sm.MetricSet) else None
        for m in (dec, sm.loads(sm.dumps(dec))):
            _close(quiet(m.compute), quiet(ref.compute))
            _close(m.interval(member=member), ref.interval(member=member))


def test_decayed_shards_merge_into_the_estimate_of_their_union() -> None:
    """By samples each shard keeps its own ages; the merged estimate holds both shards' rows."""
    a, b = (sm.Decayed(Estimated(sm.MetricSet(acc=sm.Accuracy(), r=sm.Recall())), half_life=2.0) for _ in "ab")
    pa, pb = np.array([0.9, 0.2, 0.6]), np.array([0.4, 0.7])
    a.update(pa)
    b.update(pb)
    a.merge(b)
    da, db = 0.5 ** ((2 - np.arange(3)) / 2.0), 0.5 ** ((1 - np.arange(2)) / 2.0)
    ref = Estimated(sm.MetricSet(acc=sm.Accuracy(), r=sm.Recall())).update(
        np.concatenate([pa, pb]), sample_weight=np.concatenate([da, db]))
    _close(a.compute(), ref.compute())
    _close(a.interval(member="r"), ref.interval(member="r"))


def test_what_a_window_of_an_estimate_refuses() -> None:
    est = Estimated(sm.Accuracy())
    w = sm.Window(est, size=4)
    with pytest.raises(TypeError, match="scores only"):
        w.update([1, 0], [0.2, 0.9])  # no labels: update(y_prob)
    before = sm.dumps(w)
    for bad, match in (([0.2, 1.5], r"y_prob: .*\[0, 1\].*1.5"), ([[0.2, 0.3, 0.5]], "y_prob"),
                       ([0.2, np.nan], "y_prob")):
        with pytest.raises(ValueError, match=match):
            w.update(bad)
        assert sm.dumps(w) == before
    with pytest.raises(ValueError, match="wrap an empty"):
        sm.Window(Estimated(sm.Accuracy()).update([0.3]), size=3)
    for inner in (sm.Sliced(sm.Accuracy()), sm.Window(sm.Accuracy(), size=4)):
        with pytest.raises(ValueError, match=r"Estimated of a plain metric or a MetricSet"):
            sm.Decayed(Estimated(inner), half_life=3.0)
    with pytest.raises(ValueError, match="Estimated: feed it with its own update"):
        sm.MetricSet(a=Estimated(sm.F1())).update([0.2, 0.8])


def test_sliced_windows_of_an_estimate() -> None:
    """Sliced(Window(Estimated(m))): each slice's window holds its last predictions; the overall
    value is the window over the whole stream (not a merge of the slices' windows)."""
    s = sm.Sliced(sm.Window(Estimated(sm.Accuracy()), size=2))
    p, keys = [0.2, 0.9, 0.6, 0.7, 0.1], ["a", "b", "a", "a", "b"]
    s.update(p, slices=keys)
    want = {"a": Estimated(sm.Accuracy()).update([0.6, 0.7]).compute(),
            "b": Estimated(sm.Accuracy()).update([0.9, 0.1]).compute()}
    for m in (s, sm.loads(sm.dumps(s))):
        _close(m.compute(), want)
        _close(m.overall(), Estimated(sm.Accuracy()).update([0.7, 0.1]).compute())
