"""``SortedScores.subtract``: removing samples (what a sliding window does) leaves exactly the
state of a fresh buffer fed the remaining samples -- same ``u2`` (exact integers), same sorted
groups, every internal invariant -- however additions, removals and reads interleave."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._scores.exact import buffer as sb
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.exact.runs import delete_sorted

CONFIGS = [
    ("binary", None, False),
    ("multiclass", 3, False),
    ("multiclass", 3, True),  # one-vs-one groups
    ("multilabel", 2, False),
]


def _batch(rng: np.random.Generator, task: str, c: int | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    if task == "binary":
        return rng.integers(0, 2, n), np.round(rng.random(n), 1)
    if task == "multiclass":
        s = np.round(rng.random((n, c)), 1)
        return rng.integers(0, c, n), s
    return rng.integers(0, 2, (n, c)), np.round(rng.random((n, c)), 1)


def _state(task: str, c: int | None, by_class: bool) -> SortedScores:
    return SortedScores(task, c, None, by_class)


def _assert_same(got: SortedScores, rows_y: list, rows_s: list, cfg: tuple) -> None:
    fresh = _state(*cfg)
    if rows_y:
        fresh.apply(fresh.prepare(np.array(rows_y), np.array(rows_s)))
    got.check_invariants()
    np.testing.assert_array_equal(got.u2(), fresh.u2())
    assert got.u2().dtype == np.int64
    a, b = got.arrays(), fresh.arrays()
    np.testing.assert_array_equal(a["offsets"], b["offsets"])
    np.testing.assert_array_equal(a["values"], b["values"])


@settings(max_examples=30, deadline=None)
@given(cfg=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32 - 1),
       ops=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.booleans()), min_size=1,
                    max_size=25))
def test_subtract_equals_fresh_state(cfg, seed, ops):
    """Each op: add a batch (queued, not folded), remove some of the held rows (a random
    sub-multiset, including rows of the queued batch), optionally read."""
    rng = np.random.default_rng(seed)
    task, c, by_class = cfg
    state = _state(*cfg)
    rows_y: list = []
    rows_s: list = []
    for n_add, n_rem, read in ops:
        y, s = _batch(rng, task, c, n_add)
        if n_add == 1 and task == "binary" and read:
            state.apply(state.prepare(int(y[0]), float(s[0])))  # the per-sample path
        else:
            state.apply(state.prepare(y, s))
        rows_y += list(y)
        rows_s += list(s)
        k = min(n_rem, len(rows_y))
        drop = set(rng.choice(len(rows_y), size=k, replace=False).tolist()) if k else set()
        gone = _state(*cfg)
        if drop:
            gone.apply(gone.prepare(np.array([rows_y[i] for i in sorted(drop)]),
                                    np.array([rows_s[i] for i in sorted(drop)])))
        state.subtract(gone)
        rows_y = [r for i, r in enumerate(rows_y) if i not in drop]
        rows_s = [r for i, r in enumerate(rows_s) if i not in drop]
        if read:
            _assert_same(state, rows_y, rows_s, cfg)
    _assert_same(state, rows_y, rows_s, cfg)


def test_subtract_a_whole_window_stream_matches_auroc():
    """A long sliding stream (tombstones purged many times) keeps AUROC exact."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    size, m = 400, 7
    y = rng.integers(0, 2, 6000)
    s = np.round(rng.normal(size=6000) + y, 2).astype(np.float32)
    state = SortedScores("binary")
    state.apply(state.prepare(y[:size], s[:size]))
    for i in range(size, 6000 - m, m):
        state.apply(state.prepare(y[i:i + m], s[i:i + m]))
        gone = SortedScores("binary")
        gone.apply(gone.prepare(y[i - size:i - size + m], s[i - size:i - size + m]))
        state.subtract(gone)
        if (i // m) % 5:
            continue  # scikit-learn on every fifth window (the state is checked at the end too)
        u2, p, n = state.binary_stat()
        lo = i + m - size
        want = roc_auc_score(y[lo:i + m], s[lo:i + m])
        assert abs(u2 / (2 * p * n) - want) <= 1e-12
    state.check_invariants()


def test_subtract_refuses_what_it_cannot_do():
    a = SortedScores("binary")
    a.apply(a.prepare([0, 1, 1], [0.1, 0.5, 0.7]))
    with pytest.raises(ValueError, match="different configuration"):
        a.subtract(SortedScores("multiclass", 3))
    too_many = SortedScores("binary")
    too_many.apply(too_many.prepare([1, 1, 1], [0.5, 0.5, 0.7]))
    with pytest.raises(ValueError, match="does not"):
        a.subtract(too_many)
    weighted = SortedScores("binary")
    weighted.apply(weighted.prepare([1], [0.5], [2.0]))
    with pytest.raises(NotImplementedError):
        a.subtract(weighted)
    b = SortedScores("binary")
    b.apply(b.prepare([0, 1], [0.1, 0.5], [1.0, 3.0]))
    one = SortedScores("binary")
    one.apply(one.prepare([0], [0.1]))
    with pytest.raises(NotImplementedError):
        b.subtract(one)
    b.check_invariants()  # the refused subtraction folded the queue and changed nothing else
    assert b.binary_stat() == (6.0, 3.0, 1.0)
    empty = SortedScores("binary")
    empty.subtract(SortedScores("binary"))  # nothing from nothing
    assert empty.arrays()["values"].shape == (0,)


def test_delete_sorted():
    v = np.array([0.1, 0.2, 0.2, 0.2, 0.5, 0.9])
    np.testing.assert_array_equal(delete_sorted(v, np.array([0.2, 0.2, 0.9])), [0.1, 0.2, 0.5])
    np.testing.assert_array_equal(delete_sorted(v, np.zeros(0)), v)
    with pytest.raises(AssertionError):
        delete_sorted(v, np.array([0.3]))
    with pytest.raises(AssertionError):
        delete_sorted(v, np.array([0.9, 0.9]))


def test_window_uses_the_subtraction_not_a_rebuild(monkeypatch):
    """Unweighted binary ranking windows remove expired rows with ``SortedScores.slide_rows``
    (no second validation, no scratch state); no rebuild happens."""
    calls = {"subtract": 0, "rebuilds": 0}
    real = sb.SortedScores.slide_rows

    def spy(self, y, s):
        calls["subtract"] += 1
        return real(self, y, s)

    monkeypatch.setattr(sb.SortedScores, "slide_rows", spy)
    win = sm.Window(sm.AUROC(), size=50)
    real_reset = sb.SortedScores.reset

    def count_reset(self):
        if self is win._state.inner:
            calls["rebuilds"] += 1
        return real_reset(self)

    monkeypatch.setattr(sb.SortedScores, "reset", count_reset)
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    s = np.round(rng.random(400), 2)
    from sklearn.metrics import roc_auc_score

    for i in range(0, 400, 9):
        win.update(y[i:i + 9], s[i:i + 9])
        end = min(i + 9, 400)
        assert abs(win.compute() - roc_auc_score(y[max(0, end - 50):end], s[max(0, end - 50):end])) <= 1e-12
    assert calls["subtract"] > 30 and calls["rebuilds"] == 0


def test_weights_after_a_subtraction():
    """A weighted batch (or a merge of a weighted state) after a subtraction purges the
    tombstones first; the state equals a fresh one fed the remaining rows with their weights."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300), 2)
    w = rng.integers(1, 4, 300).astype(float)
    for via_merge in (False, True):
        state = SortedScores("binary")
        state.apply(state.prepare(y[:200], s[:200]))
        gone = SortedScores("binary")
        gone.apply(gone.prepare(y[:30], s[:30]))
        state.subtract(gone)
        if via_merge:
            other = SortedScores("binary")
            other.apply(other.prepare(y[200:], s[200:], w[200:]))
            state.merge(other)
        else:
            state.apply(state.prepare(y[200:], s[200:], w[200:]))
        state.check_invariants()
        fresh = SortedScores("binary")
        fresh.apply(fresh.prepare(y[30:], s[30:], np.concatenate([np.ones(170), w[200:]])))
        np.testing.assert_allclose(state.u2(), fresh.u2(), rtol=1e-12)
        a, b = state.arrays(), fresh.arrays()
        np.testing.assert_array_equal(a["values"], b["values"])
        np.testing.assert_array_equal(a["weights"], b["weights"])


@pytest.mark.parametrize("sizes", [(3000, 9000), (9000, 9000), (9001, 9000), (40, 5000)])
def test_group_count2_either_way_round(sizes: tuple[int, int]) -> None:
    """A run smaller than the needles is searched the other way round: the same exact int as
    counting every pair, with ties between the run and the needles."""
    from streammetrics._scores.exact.runs import Group

    rng = np.random.default_rng(sizes[0])
    big = np.sort(np.round(rng.normal(size=50_000), 2))
    run = np.sort(np.round(rng.normal(size=sizes[0]), 2))
    x = np.sort(np.round(rng.normal(size=sizes[1]), 2))
    g = Group()
    g.push(big, None, big.shape[0])
    g.push(run, None, run.shape[0])
    assert [r.shape[0] for r in g.runs] == [50_000, sizes[0]]
    both = np.sort(np.concatenate([big, run]))
    expect = int(np.searchsorted(both, x, "left").sum() + np.searchsorted(both, x, "right").sum())
    got = g.count2(x, None)
    assert type(got) is int and got == expect
