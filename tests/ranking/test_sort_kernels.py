"""The sorting kernels of the exact ranking state equal the numpy calls they replace, bit for bit:
``stable_argsort`` is ``np.argsort(kind="stable")`` (including values that collide in the
truncated key, -0.0 / +0.0, float32 and NaN inputs), ``threshold_counts`` is the two
``searchsorted`` passes it replaces, ``runs`` the run-length encoding, and ``count2`` gives the
same exact integers with and without tied needles."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics._scores.exact import sort_kernels
from streammetrics._scores.exact.runs import count2
from streammetrics._scores.exact.sort_kernels import (
    runs,
    sort_split,
    stable_argsort,
    stable_sort_with,
    suffix_weight,
    threshold_counts,
)
from streammetrics._scores.thresholds import counts_from_sorted

SIZES = st.integers(0, 12_000)


def _values(kind: int, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == 0:
        return rng.normal(size=n)
    if kind == 1:
        return np.round(rng.normal(size=n), 2)  # many ties
    if kind == 2:  # distinct values that share their truncated keys (differ in the last bits)
        return 1.0 + rng.integers(0, 50, n) * 2.0**-50
    if kind == 3:  # signed zeros and subnormals
        return np.where(rng.random(n) < 0.5, -0.0, 0.0) + rng.integers(-2, 3, n) * 5e-324
    if kind == 4:
        return rng.normal(size=n).astype(np.float32)
    v = rng.normal(size=n)  # NaN goes to numpy's own argsort
    v[rng.random(n) < 0.01] = np.nan
    return v


@settings(max_examples=60, deadline=None)
@given(kind=st.integers(0, 5), n=SIZES, seed=st.integers(0, 2**32 - 1))
def test_stable_argsort_is_numpys_stable_argsort(kind: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = _values(kind, n, rng)
    ref = np.argsort(v, kind="stable")
    assert np.array_equal(stable_argsort(v), ref)
    w = rng.random(n)
    sv, sw = stable_sort_with(v, w)
    assert np.array_equal(sv, v[ref], equal_nan=True) and np.array_equal(sw, w[ref])


@settings(max_examples=40, deadline=None)
@given(kind=st.integers(0, 4), n_pos=SIZES, n_neg=SIZES, weighted=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_threshold_counts_equal_the_searchsorted_counts(kind: int, n_pos: int, n_neg: int, weighted: bool,
                                                        seed: int) -> None:
    rng = np.random.default_rng(seed)
    pos = np.sort(_values(kind, n_pos, rng))
    neg = np.sort(_values(kind, n_neg, rng))
    pw = rng.random(n_pos) if weighted else None
    nw = rng.random(n_neg) if weighted else None
    thr, tps, fps, total_pos, total_neg = threshold_counts(pos, pw, neg, nw)
    both = np.sort(np.concatenate([pos, neg]).astype(np.float64))
    ref_thr = np.unique(both)[::-1]
    assert np.array_equal(thr, ref_thr)
    assert np.array_equal(tps, suffix_weight(pw, n_pos - np.searchsorted(pos, ref_thr, "left")))
    assert np.array_equal(fps, suffix_weight(nw, n_neg - np.searchsorted(neg, ref_thr, "left")))
    assert total_pos == (n_pos if pw is None else float(np.cumsum(pw[::-1])[-1]) if n_pos else 0.0)
    assert total_neg == (n_neg if nw is None else float(np.cumsum(nw[::-1])[-1]) if n_neg else 0.0)


@settings(max_examples=40, deadline=None)
@given(kind=st.integers(0, 4), n=SIZES, m=SIZES, weighted=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_count2_with_tied_needles_is_the_pairwise_count(kind: int, n: int, m: int, weighted: bool,
                                                        seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = np.sort(_values(kind, n, rng))
    x = np.sort(_values(kind, m, rng))
    left, right = np.searchsorted(v, x, "left"), np.searchsorted(v, x, "right")
    if weighted:
        w = rng.random(n)
        cw = np.concatenate([[0.0], np.cumsum(w)])
        ref = float((cw[left] + cw[right]).sum())
        assert np.isclose(count2(v, cw, x, None), ref, rtol=1e-12, atol=1e-9)
    else:
        got = count2(v, None, x, None)
        assert type(got) is int and got == int(left.sum()) + int(right.sum())


def test_runs_are_the_run_length_encoding() -> None:
    x = np.repeat(np.arange(3000.0), 3)
    values, lengths = runs(x)  # type: ignore[misc]
    assert np.array_equal(values, np.arange(3000.0)) and np.array_equal(lengths, np.full(3000, 3))
    assert runs(np.arange(10_000.0)) is None  # nothing repeats: not worth it
    assert runs(np.zeros(10)) is None  # small: not worth it


@settings(max_examples=50, deadline=None)
@given(kind=st.integers(0, 5), n=SIZES, share=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2**32 - 1))
def test_sort_split_is_each_groups_stable_sort(kind: int, n: int, share: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = _values(kind, n, rng)
    pos = rng.random(n) < share
    w = rng.random(n)
    w[rng.random(n) < 0.1] = 0.0
    got = sort_split(v, pos, w)
    if n < 4096 or np.isnan(v).any():
        assert got is None  # the caller splits and sorts the groups itself
        return
    assert got is not None
    for (gv, gw), rows in zip(got, (~pos, pos), strict=True):
        ref = np.argsort(v[rows], kind="stable")
        assert np.array_equal(gv, v[rows][ref]) and np.array_equal(gw, w[rows][ref])
        # the state's own sort finds the groups sorted and keeps them
        sv, sw = stable_sort_with(gv, gw)
        assert np.array_equal(sv, gv) and np.array_equal(sw, gw)


@settings(max_examples=40, deadline=None)
@given(kind=st.integers(0, 5), n=st.integers(4096, 12_000), chunk=st.sampled_from([1, 7, 1000, 4096]),
       weighted=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_chunked_keys_and_gathers_equal_the_stable_sorts(kind: int, n: int, chunk: int, weighted: bool,
                                                         seed: int) -> None:
    """The keys and gathers are built chunk by chunk (``_CHUNK`` rows, 65536 in use): at any
    chunk size, over chunk boundaries, the result is numpy's stable sort of each group."""
    rng = np.random.default_rng(seed)
    v = _values(kind, n, rng)
    pos = rng.random(n) < 0.3
    w = rng.random(n) if weighted else rng.integers(0, 3, n).astype(np.float64)
    before = sort_kernels._CHUNK
    sort_kernels._CHUNK = chunk
    try:
        got = sort_split(v, pos, w)
        order = stable_argsort(v)
        sv, sw = stable_sort_with(v, w)
    finally:
        sort_kernels._CHUNK = before
    ref = np.argsort(v, kind="stable")
    assert np.array_equal(order, ref)
    assert np.array_equal(sv, v[ref], equal_nan=True) and np.array_equal(sw, w[ref])
    if np.isnan(v).any():
        assert got is None
        return
    assert got is not None
    for (gv, gw), rows in zip(got, (~pos, pos), strict=True):
        ref = np.argsort(v[rows], kind="stable")
        assert np.array_equal(gv, v[rows][ref]) and np.array_equal(gw, w[rows][ref])


@settings(max_examples=20, deadline=None)
@given(kind=st.integers(0, 4), n=SIZES, seed=st.integers(0, 2**32 - 1))
def test_stable_sort_with_of_sorted_or_nearly_sorted_values(kind: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = np.sort(_values(kind, n, rng))
    if n > 100:  # sorted except for one late pair: the prefix check passes, the full one does not
        i = int(rng.integers(70, n - 1))
        v[i], v[i + 1] = v[i + 1], v[i]
    w = rng.random(n)
    ref = np.argsort(v, kind="stable")
    sv, sw = stable_sort_with(v, w)
    assert np.array_equal(sv, v[ref]) and np.array_equal(sw, w[ref])


@settings(max_examples=40, deadline=None)
@given(kind=st.integers(0, 4), n_pos=SIZES, n_neg=SIZES, weighted=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_positive_threshold_counts_equal_the_searchsorted_counts(kind: int, n_pos: int, n_neg: int,
                                                                 weighted: bool, seed: int) -> None:
    # the counts at the distinct positive scores (what average precision reads), bit for bit the
    # two binary searches at those thresholds
    rng = np.random.default_rng(seed)
    pos = np.sort(_values(kind, n_pos, rng))
    neg = np.sort(_values(kind, n_neg, rng))
    pw = rng.random(n_pos) if weighted else None
    nw = rng.random(n_neg) if weighted else None
    got = counts_from_sorted(pos, pw, neg, nw, positive_only=True)
    ref_thr = np.unique(pos.astype(np.float64))[::-1]
    assert np.array_equal(got.thresholds, ref_thr)
    assert np.array_equal(got.tps, suffix_weight(pw, n_pos - np.searchsorted(pos, ref_thr, "left")))
    assert np.array_equal(got.fps, suffix_weight(nw, n_neg - np.searchsorted(neg, ref_thr, "left")))
    assert got.total_pos == (n_pos if pw is None else float(np.cumsum(pw[::-1])[-1]) if n_pos else 0.0)
    assert got.total_neg == (n_neg if nw is None else float(np.cumsum(nw[::-1])[-1]) if n_neg else 0.0)
    given_thr = counts_from_sorted(pos, pw, neg, nw, ref_thr)
    for a, b in ((got.tps, given_thr.tps), (got.fps, given_thr.fps)):
        assert np.array_equal(a, b)
    assert (got.total_pos, got.total_neg) == (given_thr.total_pos, given_thr.total_neg)
