"""``merge_many``: one k-way merge of several states equals merging them one after another."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._scores.exact.buffer import SortedScores

CONFIGS = [
    ("binary", None, False),
    ("multiclass", 3, False),
    ("multiclass", 3, True),  # one-vs-one groups
    ("multilabel", 2, False),
]


def _fed(cfg: tuple, rng: np.random.Generator, n: int, weighted: bool, dtype: str) -> SortedScores:
    task, c, by_class = cfg
    st_ = SortedScores(task, c, None, by_class)
    if n == 0:
        return st_
    if task == "binary":
        y, s = rng.integers(0, 2, n), rng.random(n)
    elif task == "multiclass":
        y, s = rng.integers(0, c, n), rng.random((n, c))
    else:
        y, s = rng.integers(0, 2, (n, c)), rng.random((n, c))
    s = np.round(s, 1).astype(dtype)  # ties across states
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else None
    st_.apply(st_.prepare(y, s, w))
    return st_


@settings(max_examples=40, deadline=None)
@given(cfg=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32 - 1),
       sizes=st.lists(st.integers(0, 40), min_size=1, max_size=6),
       weighted=st.lists(st.booleans(), min_size=6, max_size=6),
       dtypes=st.lists(st.sampled_from(["float32", "float64"]), min_size=6, max_size=6))
def test_merge_many_equals_sequential_merges(cfg, seed, sizes, weighted, dtypes):
    rng = np.random.default_rng(seed)
    states = [_fed(cfg, rng, n, weighted[i], dtypes[i]) for i, n in enumerate(sizes)]
    one_by_one = states[0].copy()
    for other in states[1:]:
        one_by_one.merge(other)
    before = [s.arrays() for s in states[1:]]
    at_once = states[0].copy()
    at_once.merge_many(states[1:])
    at_once.check_invariants()
    # integer weights: the pair counts are exact, so both paths agree bit for bit
    np.testing.assert_array_equal(at_once.u2(), one_by_one.u2())
    a, b = at_once.arrays(), one_by_one.arrays()
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
        assert np.asarray(a[key]).dtype == np.asarray(b[key]).dtype
    for s, arrays in zip(states[1:], before, strict=True):  # the others are left as they were
        after = s.arrays()
        assert all(np.array_equal(after[k], arrays[k]) for k in arrays)


def test_merge_many_after_a_subtraction():
    """A state that a sliding window subtracted from merges as the state of its live rows."""
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 300), np.round(rng.random(300), 2)

    def fed(lo: int, hi: int) -> SortedScores:
        st_ = SortedScores("binary")
        st_.apply(st_.prepare(y[lo:hi], s[lo:hi]))
        return st_

    window = fed(0, 200)
    window.u2()
    window.subtract(fed(0, 100))  # rows 100..199 remain
    window.merge_many([fed(200, 250), fed(250, 300)])
    window.check_invariants()
    ref = fed(100, 300)
    np.testing.assert_array_equal(window.u2(), ref.u2())
    np.testing.assert_array_equal(window.arrays()["values"], ref.arrays()["values"])


def test_metricset_merge_of_many_equals_one_process():
    rng = np.random.default_rng(7)
    y, s = rng.integers(0, 2, 5000), np.round(rng.random(5000), 3)

    def make() -> sm.MetricSet:
        return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())

    parts = [make().update(y[i : i + 700], s[i : i + 700]) for i in range(0, 5000, 700)]
    merged = parts[0].merge(*parts[1:], make())  # an empty state among them
    assert merged.compute() == make().update(y, s).compute()
