"""The vectorised multi-column AUROC read (``streammetrics._scores.column_auroc``): bit-identical to
the state's column-by-column read and within 1e-12 of scikit-learn, through batches, ties,
weights, merges, save/load, absent classes and multilabel columns."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

import streammetrics as sm
from streammetrics._scores.column_auroc import auroc_columns


def _per_class_oracle(Y: np.ndarray, S: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """scikit-learn's AUROC of each column (nan where a column has one label only)."""
    out = np.full(Y.shape[1], np.nan)
    for c in range(Y.shape[1]):
        if 0 < Y[:, c].sum() < Y.shape[0]:
            out[c] = roc_auc_score(Y[:, c], S[:, c], sample_weight=w)
    return out


@st.composite
def _streams(draw: st.DrawFn) -> tuple:
    k = draw(st.integers(2, 6))
    n = draw(st.integers(1, 60))
    multilabel = draw(st.booleans())
    present = draw(st.integers(1, k))  # classes k-present.. never occur (absent classes)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    levels = draw(st.sampled_from((3, 20, 10**6)))  # few levels: many ties
    S = rng.integers(0, levels, (n, k)) / levels
    if multilabel:
        Y = (rng.random((n, k)) < 0.4).astype(np.int64)
        Y[:, present:] = 0
        y = Y
    else:
        y = rng.integers(0, present, n)
        Y = np.eye(k, dtype=np.int64)[y]
    w = None
    if draw(st.booleans()):
        w = rng.integers(1, 5, n) * draw(st.sampled_from((1.0, 0.5, 0.1)))
    parts = draw(st.integers(1, 4))
    ops = draw(st.lists(st.sampled_from(("read", "merge", "load", "copy")), min_size=parts,
                        max_size=parts))
    return k, multilabel, y, Y, S, w, parts, ops


@settings(max_examples=60, deadline=None)
@given(_streams())
def test_columns_read_at_once_equal_column_reads_and_sklearn(stream):
    k, multilabel, y, Y, S, w, parts, ops = stream
    make = (lambda: sm.AUROC(k, multilabel=True, average=None)) if multilabel else (
        lambda: sm.AUROC(k, average=None))
    m = make()
    chunks = np.array_split(np.arange(S.shape[0]), parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        for i, (chunk, op) in enumerate(zip(chunks, ops, strict=True)):
            kw = {} if w is None else {"sample_weight": w[chunk]}
            if op == "merge":  # this part comes in through another accumulator
                m.merge(make().update(y[chunk], S[chunk], **kw))
            else:
                m.update(y[chunk], S[chunk], **kw)
            if op == "load":
                m = sm.loads(sm.dumps(m))
            elif op == "copy":
                m = m.copy()
            seen = np.concatenate(chunks[: i + 1])
            got = m.compute()
            state = m._state
            by_column = np.array([state.auroc(c)[0] for c in range(k)])
            np.testing.assert_array_equal(auroc_columns(state), by_column)  # bit-identical
            np.testing.assert_array_equal(got, by_column)
            oracle = _per_class_oracle(Y[seen], S[seen], None if w is None else w[seen])
            np.testing.assert_allclose(got, oracle, rtol=0, atol=1e-12)  # nan where sklearn has none
        lo, hi = m.bounds()
        np.testing.assert_array_equal(lo, got)
        np.testing.assert_array_equal(hi, got)


def test_macro_and_weighted_averages_skip_absent_classes():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 200)  # class 3 of 4 never occurs
    S = rng.random((200, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        macro = sm.AUROC(4).update(y, S).compute()
        weighted = sm.AUROC(4, average="weighted").update(y, S).compute()
    per = _per_class_oracle(np.eye(4)[y], S, None)
    assert np.isnan(per[3])
    assert abs(macro - per[:3].mean()) <= 1e-12
    assert abs(weighted - np.average(per[:3], weights=np.bincount(y, minlength=4)[:3])) <= 1e-12
    assert any("classes [3]" in str(w.message) for w in caught)


def test_per_class_values_are_the_callers_own():
    """The memoised per-column array is never handed out: changing a result changes no read."""
    rng = np.random.default_rng(4)
    m = sm.AUROC(3, average=None).update(rng.integers(0, 3, 50), rng.random((50, 3)))
    first = m.compute()
    first[:] = -1.0
    again = m.compute()
    assert (again >= 0).all()
    lo, _ = m.bounds()
    lo[:] = -1.0
    assert (m.bounds()[0] >= 0).all()


def test_other_states_read_column_by_column():
    """Binned and binary states, and partial AUROC, keep their own per-column reads."""
    rng = np.random.default_rng(5)
    y, S = rng.integers(0, 3, 300), rng.random((300, 3))
    assert auroc_columns(sm.AUROC(3, max_bytes=4096).update(y, S)._state) is None
    assert auroc_columns(sm.AUROC().update(y % 2, S[:, 0])._state) is None
    part = sm.AUROC(3, max_fpr=0.5, average=None).update(y, S).compute()
    for c in range(3):
        want = roc_auc_score(y == c, S[:, c], max_fpr=0.5)
        assert abs(part[c] - want) <= 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from((None, 3)), st.sampled_from(("macro", None, "micro")),
       st.booleans(), st.booleans())
def test_value_reads_skip_the_bounds_but_equal_their_value(seed, k, average, interpolated, weighted):
    """``compute()`` reads values without certified bounds (binned AP: half of a read): the
    same value, to the bit, as the one ``bounds()`` brackets, whichever is read first."""
    rng = np.random.default_rng(seed)
    n = 400
    y = rng.integers(0, 2 if k is None else k, n)
    s = rng.random(n) if k is None else rng.random((n, k))
    w = rng.random(n) + 0.5 if weighted else None
    if k is None and average == "micro":
        average = "macro"

    def make(cls):
        kw = {"interpolated": interpolated} if cls is sm.AveragePrecision else {}
        return cls(k, average=average, max_bytes=2048, **kw).update(y, s, sample_weight=w)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        for cls in (sm.AveragePrecision, sm.AUROC):
            first, second = make(cls), make(cls)
            assert not first.is_exact  # binned: the bounds are an interval
            value = first.compute()
            lo, hi = second.bounds()
            again = second.compute()
            np.testing.assert_array_equal(value, again)
            full = np.asarray(second._values()[0])  # the certified readout's own value
            np.testing.assert_array_equal(np.asarray(value), full)
            assert np.all((np.asarray(lo) <= full) | np.isnan(full))
            assert np.all((full <= np.asarray(hi)) | np.isnan(full))
