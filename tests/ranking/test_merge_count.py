"""The compiled ranking kernels (the ``fast`` extra: numba) agree bit for bit with numpy.

Kernel by kernel against ``np.searchsorted`` and the numpy average-precision read, then whole
exact states (batches with ties and infinities, weights, merges, save/load) streamed on both
paths and read after every batch: every read equal, and equal to scikit-learn. Also: importing
streammetrics never imports numba, and without it (or with ``STREAMMETRICS_NUMBA=0``) the
numpy path runs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranking_oracles import finite
from sklearn.metrics import average_precision_score, roc_auc_score

import streammetrics as sm
from streammetrics._scores.exact.merge_count import compiled_kernels
from streammetrics._scores.positive_counts import PositiveCounts

numba = pytest.importorskip("numba")
# The kernels module itself, whatever STREAMMETRICS_NUMBA says (it only switches the dispatch).
from streammetrics._scores.exact import numba_kernels as _numba_kernels  # noqa: E402


def _scores(rng: np.random.Generator, n: int, levels: int, dtype: type) -> np.ndarray:
    s = rng.normal(size=n)
    if levels:
        s = np.round(s * levels) / levels  # ties
    s[rng.random(n) < 0.02] = np.inf
    s[rng.random(n) < 0.02] = -np.inf
    return s.astype(dtype)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 1500), m=st.integers(0, 400),
       levels=st.sampled_from([0, 1, 4, 50]), dtype=st.sampled_from([np.float32, np.float64]),
       order=st.sampled_from(["sorted", "shuffled", "reversed"]))
def test_kernels_equal_searchsorted(seed, n, m, levels, dtype, order):
    rng = np.random.default_rng(seed)
    v = np.sort(_scores(rng, n, levels, dtype))
    x = np.sort(np.concatenate([_scores(rng, m, levels, dtype), rng.choice(v, min(n, m // 2))]))
    if order == "shuffled":
        rng.shuffle(x)
    elif order == "reversed":
        x = x[::-1].copy()
    k = _numba_kernels
    for co in (np.empty(0, v.dtype), v[63::64].copy()):  # without / with a coarse index
        left, right = k.ranks(v, co, x)
        np.testing.assert_array_equal(left, np.searchsorted(v, x, "left"))
        np.testing.assert_array_equal(right, np.searchsorted(v, x, "right"))
        np.testing.assert_array_equal(k.rank_left(v, co, x), np.searchsorted(v, x, "left"))
        assert k.count2_units(v, co, x) == int(left.sum()) + int(right.sum())



@pytest.mark.parametrize("n", [4_096, 70_000, 300_000])
@pytest.mark.parametrize("m", [1, 5, 60, 2_000])
@pytest.mark.parametrize("levels", [0, 3, 1000])
@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_coarse_walk_sparse_and_dense_needles_equal_searchsorted(n, m, levels, order):
    """The coarse walk's two ways to a needle's block (a gallop in the coarse index, or for
    needles more than 64 coarse entries apart a gallop in every 64th entry then a level-wise
    search in the index) and its prefetching level-wise search give numpy's ranks."""
    rng = np.random.default_rng(n + m + levels)
    v = np.sort(_scores(rng, n, levels, np.float64))
    x = np.sort(np.concatenate([_scores(rng, m, levels, np.float64), rng.choice(v, m // 3)]))
    if order == "shuffled":
        rng.shuffle(x)
    co = v[63::64].copy()
    k = _numba_kernels
    left, right = k.ranks(v, co, x)
    np.testing.assert_array_equal(left, np.searchsorted(v, x, "left"))
    np.testing.assert_array_equal(right, np.searchsorted(v, x, "right"))
    np.testing.assert_array_equal(k.rank_left(v, co, x), left)
    assert k.count2_units(v, co, x) == int(left.sum()) + int(right.sum())

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3000), levels=st.sampled_from([0, 2, 30]))
def test_average_precision_read_equal_bit_for_bit(seed, n, levels):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < rng.uniform(0.05, 0.9)
    s = _scores(rng, n, levels, np.float64)
    if not y.any():
        y[0] = True
    pc = PositiveCounts.from_sorted(np.sort(s[y]), np.sort(s[~y]))
    with compiled_kernels(False):
        slow = pc.average_precision()
    with compiled_kernels(True, min_size=0):
        fast = pc.average_precision()
    assert fast == slow  # the same bits
    assert fast == pytest.approx(average_precision_score(y, finite(s)), rel=1e-12, abs=1e-12)


def _stream(batches, weighted: bool, read_every: bool):
    """AUROC, AP and the PR counts read along a stream, then merged and reloaded."""
    auroc, ap = sm.AUROC(), sm.AveragePrecision()
    other = sm.AUROC()
    reads = []
    for i, (y, s, w) in enumerate(batches):
        kw = {"sample_weight": w} if weighted else {}
        (other if i % 3 == 2 else auroc).update(y, s, **kw)
        ap.update(y, s, **kw)
        if read_every:
            reads += [auroc.compute(), ap.compute()]
            if ap._state.is_weighted is False:
                c = ap._state.counts(0, positive_thresholds=True)
                reads += [c.thresholds.tobytes(), c.tps.tobytes(), c.fps.tobytes()]
    auroc.merge(other)
    reads += [auroc.compute(), ap.compute()]
    again = sm.loads(sm.dumps(auroc))
    reads.append(again.compute())
    return reads


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(0, 300), min_size=1, max_size=8),
       levels=st.sampled_from([0, 3, 40]), dtype=st.sampled_from([np.float32, np.float64]),
       weighted=st.booleans(), read_every=st.booleans())
def test_states_equal_on_both_paths(seed, sizes, levels, dtype, weighted, read_every):
    rng = np.random.default_rng(seed)
    batches = []
    for n in sizes:
        y = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(int)
        s = _scores(rng, n, levels, dtype) + y.astype(dtype)
        w = rng.integers(1, 4, n).astype(float) if weighted else None
        batches.append((y, s, w))
    y_all = np.concatenate([b[0] for b in batches])
    if np.unique(y_all).shape[0] < 2:
        return  # one class only: nothing to rank
    with compiled_kernels(False):
        slow = _stream(batches, weighted, read_every)
    with compiled_kernels(True, min_size=0):  # from the first needle on
        fast = _stream(batches, weighted, read_every)
    assert fast == slow  # bit for bit (floats compared exactly, arrays by their bytes)
    s_all = finite(np.concatenate([b[1] for b in batches]).astype(np.float64))
    w_all = np.concatenate([b[2] for b in batches]) if weighted else None
    assert fast[-1] == pytest.approx(roc_auc_score(y_all, s_all, sample_weight=w_all), rel=1e-12)


def test_large_state_uses_the_kernels_by_default_and_agrees():
    """Past the size threshold the default path is the compiled one; its reads equal numpy's."""
    rng = np.random.default_rng(3)
    y = (rng.random(60_000) < 0.1).astype(int)
    s = np.round(rng.normal(size=60_000) + y, 3)
    out = {}
    for fast in (False, True):
        with compiled_kernels(fast):
            a, p = sm.AUROC(), sm.AveragePrecision()
            for i in range(0, 60_000, 20_000):
                a.update(y[i:i + 20_000], s[i:i + 20_000])
                p.update(y[i:i + 20_000], s[i:i + 20_000])
                out.setdefault(fast, []).extend([a.compute(), p.compute()])
    assert out[True] == out[False]
    assert out[True][-2] == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    assert out[True][-1] == pytest.approx(average_precision_score(y, s), rel=1e-12)


def _run(code: str, **env: str) -> str:
    full = {**os.environ, **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=full)
    return out.stdout.strip()


def test_import_never_loads_numba():
    code = ("import sys, streammetrics as sm\n[getattr(sm, n) for n in sm.__all__]\n"
            "m = sm.AUROC().update([0, 1, 1], [0.1, 0.7, 0.4]); m.compute()\n"
            "print('numba' in sys.modules)")
    assert _run(code) == "False"


def test_disabled_by_environment_runs_numpy():
    code = ("import sys, numpy as np, streammetrics as sm\n"
            "from streammetrics._scores.exact.merge_count import kernels\n"
            "rng = np.random.default_rng(0); y = rng.random(50_000) < 0.3; s = rng.normal(size=50_000)\n"
            "m = sm.AUROC().update(y, s); print(round(m.compute(), 12), kernels() is None,"
            " 'numba' in sys.modules)")
    value, none, loaded = _run(code, STREAMMETRICS_NUMBA="0").split()
    assert (none, loaded) == ("True", "False")
    rng = np.random.default_rng(0)
    y = rng.random(50_000) < 0.3
    s = rng.normal(size=50_000)
    assert float(value) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


@pytest.mark.parametrize("fast", [False, True])
def test_in_place_merges_leave_copies_alone(fast):
    """Runs grow in place only when nothing else holds them: a copy taken mid-stream shares
    the runs, so both states, updated differently afterwards, still read their own data."""
    rng = np.random.default_rng(11)
    y = (rng.random(40_000) < 0.3).astype(int)
    s = np.round(rng.normal(size=40_000) + y, 2)
    with compiled_kernels(fast, min_size=0):
        a = sm.AUROC()
        p = sm.AveragePrecision()
        for i in range(0, 20_000, 2_000):
            a.update(y[i:i + 2_000], s[i:i + 2_000]).compute()
            p.update(y[i:i + 2_000], s[i:i + 2_000]).compute()
        b, q = a.copy(), p.copy()
        for i in range(20_000, 40_000, 2_000):
            a.update(y[i:i + 2_000], s[i:i + 2_000]).compute()
            p.update(y[i:i + 2_000], s[i:i + 2_000]).compute()
            b.update(y[i:i + 2_000][::-1], 1 - s[i:i + 2_000])
            q.update(y[i:i + 2_000][::-1], 1 - s[i:i + 2_000])
        a._state.check_invariants()
        b._state.check_invariants()
        assert a.compute() == pytest.approx(roc_auc_score(y, s), rel=1e-12)
        assert p.compute() == pytest.approx(average_precision_score(y, s), rel=1e-12)
        y2 = np.concatenate([y[:20_000]] + [y[i:i + 2_000][::-1] for i in range(20_000, 40_000, 2_000)])
        s2 = np.concatenate([s[:20_000], 1 - s[20_000:]])
        assert b.compute() == pytest.approx(roc_auc_score(y2, s2), rel=1e-12)
        assert q.compute() == pytest.approx(average_precision_score(y2, s2), rel=1e-12)


@pytest.mark.parametrize("fast", [False, True])
def test_a_shared_run_is_merged_into_a_new_array(fast):
    """``copy_groups`` shares the runs' arrays: pushing into one group then merges into a new
    array (the in-place growth is refused), and the other group keeps its values."""
    from streammetrics._scores.exact.runs import Group, copy_groups

    rng = np.random.default_rng(5)
    g = Group()
    first = np.sort(rng.normal(size=5_000))
    g.push(first.copy(), None, 5_000)
    twin = copy_groups([[g]])[0][0]
    extra = np.sort(rng.normal(size=4_000))
    with compiled_kernels(fast, min_size=0):
        g.push(extra.copy(), None, 4_000)
    np.testing.assert_array_equal(twin.runs[0], first)
    np.testing.assert_array_equal(g.consolidate()[0], np.sort(np.concatenate([first, extra])))


@pytest.mark.parametrize("per_search", [0, 10**9])
def test_new_thresholds_by_search_or_prefix_sum_equal_a_recount(monkeypatch, per_search):
    """The negatives above a new positive threshold's gap, found by searching the stored runs
    or by a prefix sum of the kept bins, give the counts of a recount from the sorted scores."""
    from streammetrics._scores import positive_counts as _positive_counts
    from streammetrics._scores.thresholds import counts_from_sorted, distinct_desc

    monkeypatch.setattr(_positive_counts, "_PREFIX_PER_SEARCH", per_search)
    rng = np.random.default_rng(per_search % 97)
    m = sm.AveragePrecision()
    for _ in range(12):
        y = (rng.random(700) < 0.3).astype(int)
        m.update(y, np.round(rng.normal(size=700) + y, 2))
        m.compute()
        kept = m._state.counts(0, positive_thresholds=True)
        pv, pw, nv, nw = m._state.column(0)
        want = counts_from_sorted(pv, pw, nv, nw, distinct_desc(pv))
        np.testing.assert_array_equal(kept.tps, want.tps)
        np.testing.assert_array_equal(kept.fps, want.fps)
        np.testing.assert_array_equal(kept.thresholds, want.thresholds)


@pytest.mark.parametrize("block", [1, 7, 64])
def test_blockwise_average_precision_read_equal_bit_for_bit(monkeypatch, block):
    """The numpy read in blocks (carrying the running sums and the last recall across them)
    gives the bits of the one-pass compiled read and scikit-learn's value."""
    from streammetrics._scores import positive_counts as _positive_counts
    rng = np.random.default_rng(block)
    y = rng.random(5_000) < 0.4
    s = np.round(rng.normal(size=5_000) + y, 3)
    pc = PositiveCounts.from_sorted(np.sort(s[y]), np.sort(s[~y]))
    monkeypatch.setattr(_positive_counts, "_READ_BLOCK", block)
    with compiled_kernels(False):
        slow = pc.average_precision()
    with compiled_kernels(True, min_size=0):
        fast = pc.average_precision()
    assert slow == fast
    assert fast == pytest.approx(average_precision_score(y, s), rel=1e-12)


def test_kernels_load_from_the_load_size_then_take_calls_from_their_threshold() -> None:
    """Before numba is loaded a call needs ``_LOAD_SIZE`` elements (and its kernel's
    threshold); once loaded, each kernel takes calls from its own ``MIN_SIZES`` entry."""
    from streammetrics._scores.exact import merge_count as mc
    t = mc.MIN_SIZES["ranks"]
    assert t is not None and t < mc._LOAD_SIZE
    small = np.zeros(t // 2)
    warm = np.zeros(t - small.shape[0])
    loaded = list(mc._LOADED)
    try:
        with compiled_kernels(True):
            mc._LOADED[:] = []  # not looked up yet: the load size only
            assert mc.kernels_for(small, warm) is None
            assert mc._LOADED == []  # (and nothing was loaded)
            assert mc.kernels_for(np.zeros(mc._LOAD_SIZE), small) is _numba_kernels
            assert mc.kernels_for(small, warm) is _numba_kernels  # loaded by the call above
            assert mc.kernels_for(small, warm[1:]) is None  # one element short
            assert mc.kernels_for(small.astype(np.float32), warm) is None  # dtypes differ
        with compiled_kernels(False):
            assert mc.kernels_for(small, warm) is None
        with compiled_kernels(True, sizes={"ranks": None}):
            assert mc.kernels_for(np.zeros(mc._LOAD_SIZE), small) is None  # never
        with pytest.raises(ValueError, match="sizes: unknown kernel 'nope'"), \
                compiled_kernels(True, sizes={"nope": 0}):
            pass
    finally:
        mc._LOADED[:] = loaded


def _sides(kernel: str, size: int, seed: int):
    """One call of ``kernel``'s dispatch point on about ``size`` elements (with ties and
    infinities): a thunk returning its result as bytes / numbers."""
    import copy

    from streammetrics._scores.exact import runs
    from streammetrics.regression import _ranks

    rng = np.random.default_rng(seed)
    if kernel == "inversions":
        r = rng.integers(0, max(1, size // 3), size)
        w = rng.random(size) + 0.5
        return lambda: (_ranks.inversions(r, None), _ranks.inversions(r, w))
    if kernel == "sort":  # a batch sorted for its run (radix sort or numpy's)
        s = _scores(rng, size, 8, np.float64)
        return lambda: (runs.sorted_batch([s.copy()], [None])[0].tobytes(),)
    if kernel in ("add", "ap"):
        m = size // 10 if kernel == "add" else 0
        y = rng.random(size) < 0.3
        y[0] = True
        s = _scores(rng, size, 16, np.float64)
        n = size - m
        pos, neg = np.sort(s[:n][y[:n]]), np.sort(s[:n][~y[:n]])
        base = PositiveCounts.from_sorted(pos, neg)
        if kernel == "ap":
            return lambda: (copy.deepcopy(base).average_precision(),)
        npos, nneg = np.sort(s[n:][y[n:]]), np.sort(s[n:][~y[n:]])
        group = runs.Group()
        group.push(np.sort(np.concatenate([neg, nneg])), None, neg.shape[0] + nneg.shape[0])

        def add():
            pc = copy.deepcopy(base)
            pc.add(npos, nneg, group)
            return pc.average_precision(), pc.counts().fps.tobytes(), pc.counts().tps.tobytes()
        return add
    m = 256 if kernel == "rank_left" else max(1, size // 10)  # (rank_left: the needle floor)
    v = np.sort(_scores(rng, size - m, 8, np.float64))
    x = np.sort(np.concatenate([_scores(rng, m - m // 2, 8, np.float64), rng.choice(v, m // 2)]))
    if kernel == "rank_left":
        return lambda: (runs.rank_left(v, None, x).tobytes(),)
    if kernel == "ranks":
        return lambda: tuple(a.tobytes() for a in runs._left_right(v, None, x))
    if kernel == "count2":
        return lambda: (runs.count2(v, None, x, None),)
    return lambda: (runs.merge_into_last([v.copy()], x).tobytes(),)  # merge_back


@pytest.mark.parametrize("kernel", ["rank_left", "ranks", "count2", "merge_back", "add", "ap",
                                    "inversions", "sort"])
def test_every_dispatch_choice_gives_the_same_values_on_both_sides_of_its_threshold(kernel):
    # at each kernel's threshold and one element below it, the default dispatch (numba loaded)
    # switches path, and gives the values of the numpy path: the same bits (the weighted
    # inversion count: the same to 1e-12, its compiled sums run in merge order)
    from streammetrics._scores.exact import merge_count as mc
    t = mc.MIN_SIZES[kernel]
    if t is None:
        pytest.skip(f"{kernel}: numpy at every size")
    with compiled_kernels(True):
        assert mc.kernels_at(t - 1, kernel) is None
        assert mc.kernels_at(t, kernel) is _numba_kernels
    for seed, size in enumerate((t - 1, t, 2 * t)):
        call = _sides(kernel, size, seed)
        with compiled_kernels(True):
            got = call()
        with compiled_kernels(False):
            ref = call()
        if kernel == "inversions":
            assert got[0] == ref[0]
            assert got[1] == pytest.approx(ref[1], rel=1e-12)
        else:
            assert got == ref


def test_rank_left_dispatch_by_needles():
    # rank_left of fewer than _FEW_NEEDLES needles in a run without a coarse index stays in
    # numpy (one searchsorted call is faster); from _FEW_NEEDLES, or with a coarse index, it
    # runs compiled; the same ranks either way
    from unittest import mock

    from streammetrics._scores.exact import runs
    rng = np.random.default_rng(5)
    v = np.sort(_scores(rng, 5000, 8, np.float64))
    co = v[63::64].copy()
    for m, coarse, compiled in ((runs._FEW_NEEDLES - 1, None, False), (runs._FEW_NEEDLES, None, True),
                                (8, co, True)):
        x = np.sort(rng.choice(v, m))
        with compiled_kernels(True), mock.patch.object(
                _numba_kernels, "rank_left", wraps=_numba_kernels.rank_left) as spy:
            got = runs.rank_left(v, coarse, x)
        assert spy.called == compiled
        np.testing.assert_array_equal(got, np.searchsorted(v, x, "left"))


def _pairwise_replica(a: np.ndarray) -> float:
    """The compiled read's summation applied to ``a``: numpy's pairwise blocks and tree."""
    k = _numba_kernels
    n = a.shape[0]
    sizes = np.zeros(n // 32 + 3, np.int64)
    at = np.zeros(1, np.int64)
    k._pw_sizes(n, sizes, at)
    sums = np.empty(at[0])
    lo = 0
    for b in range(at[0]):
        sums[b] = k._pw_block(a[lo:lo + sizes[b]].copy(), sizes[b])
        lo += sizes[b]
    assert lo == n
    at[0] = 0
    return float(k._pw_tree(sums, n, at))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3000), levels=st.sampled_from([0, 1, 4, 50]),
       scale=st.sampled_from([1e-300, 1.0, 1e300]), zeros=st.sampled_from(["none", "plus", "minus"]))
def test_radix_sort_is_np_sort_bit_for_bit(seed, n, levels, scale, zeros):
    # a batch sorted by its bits is np.sort's array (infinities, ties, subnormals included);
    # with a -0.0 or a NaN the kernel refuses (False) and leaves the batch as it was
    rng = np.random.default_rng(seed)
    s = _scores(rng, n, levels, np.float64) * scale
    if n and zeros != "none":
        s[rng.integers(0, n, 1 + n // 10)] = 0.0 if zeros == "plus" else -0.0
    before = s.copy()
    minus = bool((np.signbit(s) & (s == 0)).any())
    got = s.copy()
    assert _numba_kernels.radix_sort(got) is not minus
    assert got.tobytes() == (before if minus else np.sort(before)).tobytes()
    with_nan = np.append(before, np.nan)
    got = with_nan.copy()
    assert not _numba_kernels.radix_sort(got)
    assert got.tobytes() == with_nan.tobytes()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       n=st.one_of(st.integers(1, 300), st.sampled_from([1023, 1024, 1025, 4097, 100_003])))
def test_compiled_ap_sum_is_np_sum_bit_for_bit(seed, n):
    # the compiled AP read sums its terms without writing them, by numpy's pairwise summation
    # (blocks of <= 128 values with eight accumulators, added along numpy's tree): equal to
    # np.sum bit for bit on values of any magnitude, and the read equals the numpy read's bits
    rng = np.random.default_rng(seed)
    a = rng.random(n) * rng.choice([1e-9, 1.0, 1e9], n)
    assert _pairwise_replica(a) == float(np.sum(a))
    s = np.round(rng.normal(size=n) * 16) / 16
    y = rng.random(n) < 0.4
    y[0] = True
    pc = PositiveCounts.from_sorted(np.sort(s[y]), np.sort(s[~y]))
    with compiled_kernels(True, min_size=0):
        fast = pc.average_precision()
    with compiled_kernels(False):
        slow = pc.average_precision()
    assert np.float64(fast).tobytes() == np.float64(slow).tobytes()
    np.testing.assert_allclose(fast, average_precision_score(y, s), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([0, 3, 40]),
       sizes=st.lists(st.integers(0, 400), min_size=2, max_size=10), map_min=st.sampled_from([64, 1 << 30]),
       held=st.booleans(), wide=st.booleans())
def test_pending_merged_in_place_equals_the_numpy_merge(seed, levels, sizes, map_min, held, wide):
    # the compiled path merges its pending thresholds into the kept arrays in place (grown by
    # remapping or realloc, merged into from the back): the same keys and int32 / int64 counts
    # as the numpy scatter, bit for bit, whether the arrays live in maps or on the heap, and a
    # view of the old kept keys held elsewhere keeps its values (the arrays are then copied)
    import copy

    import streammetrics._scores.positive_counts as pcm
    from streammetrics._scores.exact import spill as spill_mod

    rng = np.random.default_rng(seed)
    saved = pcm._PENDING_MIN, pcm._PENDING_SHARE, spill_mod.MAP_MIN, pcm._NARROW_MAX
    pcm._PENDING_MIN, pcm._PENDING_SHARE, spill_mod.MAP_MIN = 1 << 30, 1, map_min
    pcm._NARROW_MAX = 0 if wide else saved[3]
    try:
        with compiled_kernels(True, min_size=0):
            m = sm.AveragePrecision()
            merged = positives = later = 0
            for n in sizes:
                y = (rng.random(n) < 0.3).astype(int)
                s = _scores(rng, n, levels, np.float64)
                if m._state._pcounts.get(0) is not None:
                    later += n  # samples folded into a built cache: new thresholds go pending
                m.update(y, s)
                positives += int(y.sum())
                if positives:
                    m.compute()
                kept = m._state._pcounts.get(0)
                if kept is None or not kept.sk.shape[0]:
                    continue
                merged += 1
                ref, got = copy.deepcopy(kept), kept
                view = got.key[: got.key.shape[0] // 2]
                before = view.copy()
                if not held:
                    del view
                with compiled_kernels(False):
                    ref._merge_pending()
                got._merge_pending()  # (the compiled kernels loaded: the in-place merge)
                for name in ("key", "pw", "nb"):
                    a, b = getattr(ref, name), getattr(got, name)
                    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
                assert got.sk.shape[0] == 0 and got.pw.dtype == (np.int64 if wide else np.int32)
                if held:
                    assert np.array_equal(view, before)
                    del view
            assert merged or levels or later < 100  # continuous scores: merges happened
    finally:
        pcm._PENDING_MIN, pcm._PENDING_SHARE, spill_mod.MAP_MIN, pcm._NARROW_MAX = saved
