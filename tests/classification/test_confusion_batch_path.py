"""The unweighted binary batch path (integer/bool 0/1 labels): counts equal ``np.bincount``,
every update invalidates cached reads, anything but 0/1 is refused atomically."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm

DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=30),
       st.integers(1, 4), st.integers(0, 2**16))
def test_batches_count_as_bincount_and_reads_follow_updates(dy, dp, rows, parts, seed):
    y = np.array([r[0] for r in rows]).astype(dy)
    p = np.array([r[1] for r in rows]).astype(dp)
    m = sm.ConfusionMatrix()
    state = m._state
    for chunk in np.array_split(np.arange(len(rows)), parts):
        before = state.version
        m.update(y[chunk], p[chunk])
        assert state.version > before
        want = np.bincount(2 * y[: chunk[-1] + 1].astype(np.int64) + p[: chunk[-1] + 1].astype(np.int64)
                           if chunk.size else np.zeros(0, np.int64), minlength=4).reshape(2, 2)
        if chunk.size:
            np.testing.assert_array_equal(m.compute(), want)  # read right after the update
    i = seed % len(rows)
    saved = sm.dumps(m)
    for value in (2, -1):
        for arg in ("y_true", "y_pred"):
            bad = (y if arg == "y_true" else p).astype(np.int64)
            bad[i] = value
            try:
                m.update(bad, p) if arg == "y_true" else m.update(y, bad)
            except ValueError as exc:
                assert str(exc).startswith(f"{arg}: labels must be 0 or 1")
                assert f"first invalid value {value} at index {i}" in str(exc)
            else:  # pragma: no cover - the assertion message says what went wrong
                raise AssertionError(f"{arg}: {value} accepted")
            assert sm.dumps(m) == saved


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1,
                                   max_size=12),
                          st.sampled_from(("fast", ">i8", "weighted", "merge", "load", "copy"))),
                min_size=1, max_size=8))
def test_pending_binary_counts_match_bincount_through_every_operation(steps):
    """The summed (n, pos, pp, either) of fast-path batches, mixed with weighted batches (which
    start ``counts_w2``), non-native byte order (the general path), merges, save/load and copies,
    always reads as the ``bincount`` of every sample (and of every squared weight)."""
    ms = sm.MetricSet(precision=sm.Precision(), recall=sm.Recall(), f1=sm.F1(), accuracy=sm.Accuracy())
    cells: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for rows, how in steps:
        y = np.array([r[0] for r in rows], dtype=np.int64)
        p = np.array([r[1] for r in rows], dtype=np.int64)
        w = np.ones(len(rows))
        if how == "weighted":
            w = np.linspace(0.5, 2.0, len(rows))
            ms.update(y, p, sample_weight=w)
        elif how == ">i8":
            ms.update(y.astype(">i8"), p.astype(">i8"))
        elif how == "merge":
            other = sm.MetricSet(precision=sm.Precision(), recall=sm.Recall(), f1=sm.F1(),
                                 accuracy=sm.Accuracy())
            other.update(y, p)
            ms.merge(other)
        else:
            ms.update(y, p)
            if how == "load":
                ms = sm.loads(sm.dumps(ms))
            elif how == "copy":
                ms = ms.copy()
        cells.append(2 * y + p)
        weights.append(w)
        c, ww = np.concatenate(cells), np.concatenate(weights)
        arrays = ms["f1"]._state.arrays()
        np.testing.assert_allclose(arrays["counts"].ravel(), np.bincount(c, ww, minlength=4),
                                   rtol=1e-12)
        np.testing.assert_allclose(arrays["counts_w2"].ravel(), np.bincount(c, ww * ww, minlength=4),
                                   rtol=1e-12)
        want = sm.Accuracy().update(c // 2, c % 2, sample_weight=ww).compute()
        assert abs(ms.compute()["accuracy"] - want) <= 1e-12
