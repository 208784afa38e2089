"""The counts kept at the distinct positive scores (the average precision read after every batch)
equal a recount from the sorted scores, and the average precision equals scikit-learn's."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from ranking_oracles import finite
from sklearn.metrics import average_precision_score

import streammetrics as sm
from streammetrics._scores.thresholds import counts_from_sorted, distinct_desc


def _recount(state, column):
    pv, pw, nv, nw = state.column(column)
    return counts_from_sorted(pv, pw, nv, nw, distinct_desc(pv))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([2, 5, 40, 0]),
       sizes=st.lists(st.integers(0, 300), min_size=1, max_size=12))
def test_kept_counts_equal_a_recount_after_every_batch(seed, levels, sizes):
    rng = np.random.default_rng(seed)
    m = sm.AveragePrecision()
    ys, ss = [], []
    for n in sizes:
        y = (rng.random(n) < rng.random()).astype(int)
        s = rng.normal(size=n) + y
        if levels:
            s = np.round(s * levels) / levels  # ties, inside and across batches
        s[rng.random(n) < 0.02] = np.inf
        s[rng.random(n) < 0.02] = -np.inf
        m.update(y, s)
        ys.append(y)
        ss.append(s)
        y_all, s_all = np.concatenate(ys), np.concatenate(ss)
        if y_all.sum() == 0:
            continue
        got = m.compute()
        np.testing.assert_allclose(got, average_precision_score(y_all, finite(s_all)), rtol=1e-12, atol=1e-12)
        kept = m._state.counts(0, positive_thresholds=True)
        want = _recount(m._state, 0)
        np.testing.assert_array_equal(kept.thresholds, want.thresholds)
        np.testing.assert_array_equal(kept.tps, want.tps)
        np.testing.assert_array_equal(kept.fps, want.fps)
        assert (kept.total_pos, kept.total_neg) == (want.total_pos, want.total_neg)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), batches=st.integers(1, 8))
def test_multiclass_macro_ap_after_every_batch_equals_sklearn(seed, batches):
    rng = np.random.default_rng(seed)
    k = 4
    m = sm.AveragePrecision(num_classes=k, average=None)
    ys, ss = [], []
    for _ in range(batches):
        n = int(rng.integers(1, 200))
        y = rng.integers(0, k, n)
        s = np.round(rng.random((n, k)) * 20) / 20
        m.update(y, s)
        ys.append(y)
        ss.append(s)
        y_all, s_all = np.concatenate(ys), np.concatenate(ss)
        got = m.compute()
        for c in range(k):
            if (y_all == c).any():
                want = average_precision_score(y_all == c, s_all[:, c])
                np.testing.assert_allclose(got[c], want, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), block=st.sampled_from([1, 2, 7, 64, 1 << 14]))
def test_blocked_read_is_the_curves_average_precision_bit_for_bit(seed, n, block):
    # the numpy read runs in blocks carrying the running sums across them: any block size gives
    # the value of streammetrics._scores.thresholds.average_precision exactly, and leaves the counts as
    # they were
    import streammetrics._scores.positive_counts as pcm
    from streammetrics._scores.exact.merge_count import compiled_kernels
    from streammetrics._scores.thresholds import average_precision

    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=n) * 8) / 8
    y = rng.random(n) < 0.3
    y[0] = True
    kept = pcm.PositiveCounts.from_sorted(np.sort(s[y]), np.sort(s[~y]))
    pw, nb = kept.pw.copy(), kept.nb.copy()
    before = pcm._READ_BLOCK
    pcm._READ_BLOCK = block
    try:
        with compiled_kernels(False):
            got = kept.average_precision()
    finally:
        pcm._READ_BLOCK = before
    assert got == average_precision(kept.counts())
    np.testing.assert_allclose(got, average_precision_score(y, s), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(kept.pw, pw)
    np.testing.assert_array_equal(kept.nb, nb)


def test_signed_zero_thresholds_equal_on_both_paths():
    # a positive at -0.0 after one at 0.0 (equal scores): the kept threshold keeps its bits
    # on the compiled path as on the numpy path
    from streammetrics._scores.exact.merge_count import compiled_kernels, kernels

    if kernels() is None:
        return
    batches = [(np.array([1, 0, 1]), np.array([0.0, -0.5, 1.0])),
               (np.array([1, 0, 0]), np.array([-0.0, 0.0, 2.0]))]
    got = []
    for fast in (False, True):
        with compiled_kernels(fast, min_size=0):
            m = sm.AveragePrecision()
            for y, s in batches:
                m.update(y, s)
                m.compute()
            c = m._state.counts(0, positive_thresholds=True)
            got.append((m.compute(), c.thresholds.tobytes(), c.tps.tobytes(), c.fps.tobytes()))
    assert got[0] == got[1]
    want = average_precision_score([1, 0, 1, 1, 0, 0], [0.0, -0.5, 1.0, -0.0, 0.0, 2.0])
    np.testing.assert_allclose(got[1][0], want, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([0, 3, 50]),
       sizes=st.lists(st.integers(0, 400), min_size=1, max_size=10))
def test_compiled_fold_in_place_equals_numpy_bit_for_bit(seed, levels, sizes):
    # the compiled fold grows the kept arrays in place and merges into them (entries moved up
    # first): after every batch its counts and average precision have the numpy path's bits
    from streammetrics._scores.exact.merge_count import compiled_kernels, kernels

    if kernels() is None:
        return
    rng = np.random.default_rng(seed)
    batches = []
    for n in sizes:
        y = (rng.random(n) < rng.random()).astype(int)
        s = rng.normal(size=n) + y
        if levels:
            s = np.round(s * levels) / levels
        batches.append((y, s))
    reads = []
    for fast in (False, True):
        with compiled_kernels(fast, min_size=0), warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # no positive yet: nan
            m = sm.AveragePrecision()
            got = []
            for y, s in batches:
                m.update(y, s)
                c = m._state.counts(0, positive_thresholds=True) if m._state.totals().sum() else None
                got.append((np.float64(m.compute()).tobytes(),
                            None if c is None else (c.thresholds.tobytes(), c.tps.tobytes(), c.fps.tobytes())))
            reads.append(got)
    assert reads[0] == reads[1]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([0, 3, 50]),
       sizes=st.lists(st.integers(0, 300), min_size=1, max_size=12),
       dtype=st.sampled_from([np.float32, np.float64]), pending_min=st.sampled_from([1, 8, 1 << 12]))
def test_pending_thresholds_read_merged_and_saved_bit_for_bit(seed, levels, sizes, dtype, pending_min):
    # the compiled path keeps new distinct positive scores pending (read in one pass beside the
    # kept counts, merged in past 1/_PENDING_SHARE of them or _PENDING_MIN): every read after every batch,
    # without ever asking for the counts, has the numpy path's bits and scikit-learn's value;
    # then the counts, a merge with another state and a save/load agree too
    import streammetrics._scores.positive_counts as pcm
    from streammetrics._scores.exact.merge_count import compiled_kernels, kernels

    if kernels() is None:
        return
    rng = np.random.default_rng(seed)
    batches = []
    for n in sizes:
        y = (rng.random(n) < rng.uniform(0.1, 0.6)).astype(int)
        s = rng.normal(size=n) + y
        if levels:
            s = np.round(s * levels) / levels
        batches.append((y, s.astype(dtype)))
    reads = []
    before = pcm._PENDING_MIN
    pcm._PENDING_MIN = pending_min
    try:
        for fast in (False, True):
            with compiled_kernels(fast, min_size=0), warnings.catch_warnings():
                warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # no positive yet
                m, other = sm.AveragePrecision(), sm.AveragePrecision()
                got = []
                for i, (y, s) in enumerate(batches):
                    m.update(y, s)
                    got.append(np.float64(m.compute()).tobytes())
                    if i % 2:
                        other.update(y[::-1], s[::-1])
                if m._state.totals().sum():
                    c = m._state.counts(0, positive_thresholds=True)
                    got.append((c.thresholds.tobytes(), c.tps.tobytes(), c.fps.tobytes()))
                last = m.compute()
                m.merge(other)
                got += [np.float64(m.compute()).tobytes(), np.float64(sm.loads(sm.dumps(m)).compute()).tobytes()]
                reads.append((got, last, m.compute()))
    finally:
        pcm._PENDING_MIN = before
    assert reads[0][0] == reads[1][0]  # every read, the counts, merged, reloaded: by their bytes
    y_all = np.concatenate([b[0] for b in batches])
    s_all = np.concatenate([b[1] for b in batches]).astype(np.float64)
    if y_all.any():
        np.testing.assert_allclose(reads[1][1], average_precision_score(y_all, s_all), rtol=1e-12, atol=1e-12)
        odd = [b for i, b in enumerate(batches) if i % 2]
        y_m = np.concatenate([y_all] + [b[0][::-1] for b in odd])
        s_m = np.concatenate([s_all] + [b[1][::-1].astype(np.float64) for b in odd])
        np.testing.assert_allclose(reads[1][2], average_precision_score(y_m, s_m), rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), limit=st.integers(0, 400), levels=st.sampled_from([0, 4]),
       sizes=st.lists(st.integers(0, 200), min_size=1, max_size=8), fast=st.booleans())
def test_kept_counts_widen_from_int32_to_int64_exactly(seed, limit, levels, sizes, fast):
    # the kept counts are int32 up to _NARROW_MAX samples in the column, int64 past it (here a
    # small limit stands for 2**31 - 1): before, across and after the switch, every read equals
    # scikit-learn's and the counts equal a recount, on both kernel paths
    import streammetrics._scores.positive_counts as pcm
    from streammetrics._scores.exact.merge_count import compiled_kernels, kernels

    if fast and kernels() is None:
        return
    rng = np.random.default_rng(seed)
    before = pcm._NARROW_MAX
    pcm._NARROW_MAX = limit
    try:
        with compiled_kernels(fast, min_size=0), warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # no positive yet
            m = sm.AveragePrecision()
            ys, ss = [], []
            for n in sizes:
                y = (rng.random(n) < 0.3).astype(int)
                s = rng.normal(size=n) + y
                if levels:
                    s = np.round(s * levels) / levels
                m.update(y, s)
                ys.append(y)
                ss.append(s)
                y_all, s_all = np.concatenate(ys), np.concatenate(ss)
                if y_all.sum() == 0:
                    continue
                got = m.compute()
                np.testing.assert_allclose(got, average_precision_score(y_all, s_all), rtol=1e-12, atol=1e-12)
                kept = m._state._pcounts[0]
                want_dtype = np.int32 if y_all.shape[0] <= limit else np.int64
                assert kept.pw.dtype == want_dtype and kept.nb.dtype == want_dtype
                c = m._state.counts(0, positive_thresholds=True)
                want = _recount(m._state, 0)
                np.testing.assert_array_equal(c.tps, want.tps)
                np.testing.assert_array_equal(c.fps, want.fps)
    finally:
        pcm._NARROW_MAX = before
