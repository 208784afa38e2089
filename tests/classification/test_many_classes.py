"""Confusion counts of many classes (issue #27): the sparse stores beyond DENSE_MAX_CLASSES.

Oracles: scikit-learn at C = 3000 (sparse by default), and the dense state itself (the sparse
path forced on a few classes by lowering ``DENSE_MAX_CLASSES``): same values, merges across
layouts, save / load (also of states saved dense), windows, decay, slices, hostile files.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
import streammetrics._counts.class_counts as cc
import streammetrics.functional as F

C = 3000  # > DENSE_MAX_CLASSES: sparse without forcing
RTOL = 1e-12


@contextlib.contextmanager
def dense_max(k: int) -> Iterator[None]:
    """States built inside keep at most ``k`` classes dense."""
    old = cc.DENSE_MAX_CLASSES
    cc.DENSE_MAX_CLASSES = k
    try:
        yield
    finally:
        cc.DENSE_MAX_CLASSES = old


def data(n: int, k: int, seed: int, weighted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.5, y, rng.integers(0, k, n))
    w = rng.integers(0, 4, n) * rng.random(n) if weighted else None
    return y, p, w


def close(a: object, b: object) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=RTOL, atol=1e-300)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# -- scikit-learn oracles at 3000 classes ---------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_functional_equal_sklearn_with_3000_classes(weighted: bool) -> None:
    y, p, w = data(8000, C, 1, weighted)
    for name, kw in [("accuracy_score", {}), ("accuracy_score", {"normalize": False}),
                     ("balanced_accuracy_score", {}), ("balanced_accuracy_score", {"adjusted": True}),
                     ("matthews_corrcoef", {}), ("cohen_kappa_score", {}),
                     ("cohen_kappa_score", {"weights": "linear"}), ("cohen_kappa_score", {"weights": "quadratic"}),
                     ("f1_score", {"average": "macro"}), ("f1_score", {"average": "weighted"}),
                     ("f1_score", {"average": "micro"}), ("jaccard_score", {"average": "macro"}),
                     ("hamming_loss", {}), ("zero_one_loss", {})]:
        close(getattr(F, name)(y, p, sample_weight=w, **kw), getattr(skm, name)(y, p, sample_weight=w, **kw))
    for mine, theirs in zip(F.precision_recall_fscore_support(y, p, sample_weight=w),
                            skm.precision_recall_fscore_support(y, p, sample_weight=w), strict=True):
        close(mine, theirs)
        assert np.asarray(mine).dtype == np.asarray(theirs).dtype
    cm, ref = F.confusion_matrix(y, p, sample_weight=w), skm.confusion_matrix(y, p, sample_weight=w)
    assert cm.dtype == ref.dtype and np.array_equal(cm, ref) if not weighted else np.allclose(cm, ref, rtol=RTOL)
    close(F.confusion_matrix(y, p, sample_weight=w, normalize="true"),
          skm.confusion_matrix(y, p, sample_weight=w, normalize="true"))
    mcm, ref = F.multilabel_confusion_matrix(y, p, sample_weight=w), skm.multilabel_confusion_matrix(y, p, sample_weight=w)
    assert mcm.dtype == ref.dtype
    close(mcm, ref)


@pytest.mark.parametrize("weighted", [False, True])
def test_accumulators_equal_sklearn_with_3000_classes(weighted: bool) -> None:
    y, p, w = data(12_000, C, 2, weighted)
    labels = np.arange(C)
    cases = [
        (sm.F1(C, average="macro"), skm.f1_score(y, p, average="macro", labels=labels, sample_weight=w)),
        (sm.Precision(C, average=None, zero_division=0.0),
         skm.precision_score(y, p, average=None, labels=labels, sample_weight=w, zero_division=0.0)),
        (sm.Recall(C, average="weighted"), skm.recall_score(y, p, average="weighted", labels=labels, sample_weight=w)),
        (sm.Jaccard(C, average="micro"), skm.jaccard_score(y, p, average="micro", labels=labels, sample_weight=w)),
        (sm.Accuracy(C), skm.accuracy_score(y, p, sample_weight=w)),
        (sm.BalancedAccuracy(C), skm.balanced_accuracy_score(y, p, sample_weight=w)),
        (sm.MatthewsCorrCoef(C), skm.matthews_corrcoef(y, p, sample_weight=w)),
        (sm.CohenKappa(C, weights="quadratic"),
         skm.cohen_kappa_score(y, p, weights="quadratic", labels=labels, sample_weight=w)),
        (sm.ConfusionMatrix(C), skm.confusion_matrix(y, p, labels=labels, sample_weight=w)),
        (sm.F1(C, average=None, labels=[5, 2, 7], zero_division=0.0),
         skm.f1_score(y, p, average=None, labels=[5, 2, 7], sample_weight=w, zero_division=0.0)),
        (sm.CohenKappa(C, labels=[5, 2, 7, 11]), skm.cohen_kappa_score(y, p, labels=[5, 2, 7, 11], sample_weight=w)),
        (sm.ConfusionMatrix(C, labels=[9, 3, 1]), skm.confusion_matrix(y, p, labels=[9, 3, 1], sample_weight=w)),
    ]
    for metric, want in cases:
        assert metric._state.layout in ("vectors", "cells")
        for lo in range(0, 12_000, 5000):  # several batches
            metric.update(y[lo:lo + 5000], p[lo:lo + 5000], sample_weight=None if w is None else w[lo:lo + 5000])
        got = metric.compute()
        close(got, want)
        if isinstance(metric, sm.ConfusionMatrix):
            assert got.dtype == (np.float64 if weighted else np.int64)
    assert sm.ConfusionMatrix(C)._state.layout == "cells" and sm.F1(C)._state.layout == "vectors"


def test_per_sample_updates_and_interval_on_the_sparse_state() -> None:
    y, p, w = data(300, C, 3, True)
    assert w is not None
    batch, single = sm.Recall(C, average="micro"), sm.Recall(C, average="micro")
    cm_batch, cm_single = sm.ConfusionMatrix(C), sm.ConfusionMatrix(C)
    batch.update(y, p, sample_weight=w)
    cm_batch.update(y, p, sample_weight=w)
    for a, b, c in zip(y.tolist(), p.tolist(), w.tolist(), strict=True):
        single.update(a, b, sample_weight=c)
        cm_single.update(a, b, sample_weight=c)
    close(single.compute(), batch.compute())
    close(single.interval(), batch.interval())
    close(cm_single.compute(), cm_batch.compute())
    dense = sm.Recall(50, average="micro").update(y % 50, np.where(y == p, y % 50, (y + 1) % 50), sample_weight=w)
    sparse = sm.Recall(C, average="micro").update(y % 50, np.where(y == p, y % 50, (y + 1) % 50), sample_weight=w)
    close(sparse.interval(), dense.interval())  # Wilson interval from the squared weights


def test_hundred_thousand_classes_hold_o_c_memory() -> None:
    k = 100_000
    y, p, _ = data(50_000, k, 4, False)
    f1 = sm.F1(num_classes=k, average="macro").update(y, p)
    assert f1.nbytes < 8 * 7 * k + 100  # six per-class vectors and two sums, not C^2
    tp = np.bincount(y[y == p], minlength=k)
    den = np.bincount(y, minlength=k) + np.bincount(p, minlength=k)
    present = den > 0
    want = np.where(present, 2 * tp / np.where(present, den, 1), 0.0).mean()
    close(f1.compute(), want)
    cm = sm.ConfusionMatrix(k).update(y, p)
    assert cm.nbytes < 24 * 50_000 + 100  # the occupied cells only


# -- sparse and dense give the same states and values ---------------------------------------------
def _metrics(k: int) -> list[sm.Metric]:
    return [sm.F1(k, average="macro"), sm.Precision(k, average=None, zero_division=0.0),
            sm.Recall(k, average="micro"), sm.Accuracy(k), sm.BalancedAccuracy(k, adjusted=False),
            sm.WeightedAccuracy(k), sm.MatthewsCorrCoef(k), sm.CohenKappa(k),
            sm.CohenKappa(k, weights="linear"), sm.CohenKappa(k, weights="quadratic"),
            sm.ConfusionMatrix(k), sm.ConfusionMatrix(k, normalize="true"), sm.HammingLoss(k),
            sm.Specificity(k, average="weighted"), sm.ClassificationReport(k),
            sm.F1(k, average=None, labels=[2, 0], zero_division=0.0), sm.CohenKappa(k, labels=[2, 0, 1]),
            sm.ConfusionMatrix(k, labels=[1, 2])]


def _values_equal(a: object, b: object, exact: bool) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for key in a:
            _values_equal(a[key], b[key], exact)
        return
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    assert a_arr.dtype == b_arr.dtype
    if exact:
        np.testing.assert_array_equal(a_arr, b_arr)
    else:
        np.testing.assert_allclose(a_arr, b_arr, rtol=RTOL, atol=1e-14)  # kappa near 0


batches = st.integers(3, 7).flatmap(lambda k: st.tuples(
    st.just(k),
    st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1), st.integers(0, 3)), min_size=1, max_size=40),
    st.booleans(), st.booleans()))


@settings(max_examples=30, deadline=None)
@given(batches)
def test_sparse_and_dense_states_give_the_same_values(case: tuple) -> None:
    k, rows, weighted, integer = case
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    # dyadic weights: every sum is exact in both layouts, so rounding cannot tell them apart (random
    # float weights are compared with scikit-learn above)
    w = np.array([r[2] for r in rows], dtype=float) * (1.0 if integer else 0.375) if weighted else None
    dense = _metrics(k)
    with dense_max(1):
        sparse = _metrics(k)
    for d, s in zip(dense, sparse, strict=True):
        assert d._state.layout == "dense" and s._state.layout != "dense"
        d.update(y, p, sample_weight=w)
        s.update(y[:len(y) // 2], p[:len(y) // 2], sample_weight=None if w is None else w[:len(y) // 2])
        s.update(y[len(y) // 2:], p[len(y) // 2:], sample_weight=None if w is None else w[len(y) // 2:])
        # equal bit for bit from integer counts, but kappa's expected disagreement is summed in
        # another order (O(C) running sums instead of the C x C outer product)
        exact = not isinstance(d, sm.CohenKappa)
        _values_equal(s.compute(), d.compute(), exact=exact)
        with dense_max(1):  # save / load (into the sparse layout again)
            _values_equal(sm.loads(sm.dumps(s)).compute(), s.compute(), exact=True)
        if getattr(s._state, "selection", None) is None:  # the states hold the same sums
            for got, ref in zip(s._state.class_sums(), d._state.class_sums(), strict=True):
                if exact:
                    np.testing.assert_array_equal(got, ref)
                np.testing.assert_allclose(got, ref, rtol=RTOL)


@settings(max_examples=20, deadline=None)
@given(batches)
def test_sparse_and_dense_states_merge_both_ways(case: tuple) -> None:
    k, rows, weighted, _ = case
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows], dtype=float) if weighted else None
    half = len(rows) // 2
    cut = [(slice(0, half)), slice(half, None)]
    whole = [m.update(y, p, sample_weight=w) for m in _metrics(k)]
    dense_first = _metrics(k)
    with dense_max(1):
        sparse_first = _metrics(k)
        sparse_second = _metrics(k)
    dense_second = _metrics(k)
    for i, ref in enumerate(whole):
        for a, b in ((dense_first[i], sparse_second[i]), (sparse_first[i], dense_second[i])):
            a.update(y[cut[0]], p[cut[0]], sample_weight=None if w is None else w[cut[0]])
            b.update(y[cut[1]], p[cut[1]], sample_weight=None if w is None else w[cut[1]])
            a.merge(b)
            assert a._state.layout != "dense"  # a dense side takes the sparse layout
            _values_equal(a.compute(), ref.compute(), exact=not isinstance(ref, sm.CohenKappa))


# -- persistence ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: sm.F1(C, average="macro"), lambda: sm.ConfusionMatrix(C),
                                  lambda: sm.CohenKappa(C, labels=[3, 1, 2])])
def test_sparse_states_save_and_load(make) -> None:  # type: ignore[no-untyped-def]
    y, p, w = data(5000, C, 5, True)
    m = make().update(y, p, sample_weight=w).update(7, 7)  # a pending per-sample cell too
    back = sm.loads(sm.dumps(m))
    assert back._state.layout == m._state.layout and back._state.equals(m._state)
    _values_equal(back.compute(), m.compute(), exact=True)
    back.update(y, p)
    m.update(y, p)
    _values_equal(back.compute(), m.compute(), exact=True)


@pytest.mark.parametrize("make", [lambda: sm.F1(2000, average="macro"), lambda: sm.ConfusionMatrix(2000),
                                  lambda: sm.MatthewsCorrCoef(2000), lambda: sm.CohenKappa(2000, weights="linear")])
def test_states_saved_dense_load_into_the_sparse_layout(make) -> None:  # type: ignore[no-untyped-def]
    y, p, w = data(3000, 2000, 6, True)
    with dense_max(10**6):  # as every version before the sparse layout saved them
        old = make().update(y, p, sample_weight=w)
        blob = sm.dumps(old)
    assert old._state.layout == "dense"
    new = sm.loads(blob)
    assert new._state.layout != "dense"
    _values_equal(new.compute(), old.compute(), exact=False)


@pytest.mark.parametrize("tamper, match", [
    (lambda a: a.update(cells=a["cells"][::-1].copy()), "strictly increasing"),
    (lambda a: a.update(cells=a["cells"] + C * C), r"flat cells in \[0, 9000000\)"),
    (lambda a: a.update(cell_counts=a["cell_counts"][:-1]), "must hold"),
    (lambda a: a.update(cell_counts_w2=a["cell_counts"] ** 2 * 10), "inconsistent"),
    (lambda a: a.update(cells=a["cells"].astype(float)), "integer"),
])
def test_hostile_cell_states_are_refused(tamper, match) -> None:  # type: ignore[no-untyped-def]
    y, p, w = data(500, C, 7, True)
    state = sm.ConfusionMatrix(C).update(y, p, sample_weight=w).state_dict()
    tamper(state)
    with pytest.raises(ValueError, match=match):
        sm.Metric.from_state_dict(state)


@pytest.mark.parametrize("tamper, match", [
    (lambda a: a.update(tp=a["support"] * 2, tp_w2=a["support_w2"] * 4), "true positives"),
    (lambda a: a.update(predicted=a["predicted"] * 3, predicted_w2=a["predicted_w2"] * 9), "total weight"),
    (lambda a: a.update(disagreement=a["disagreement"] + 1e12), "disagreement"),
    (lambda a: a.update(support=a["support"][:-1]), "shape"),
    (lambda a: a.pop("tp_w2"), "missing array 'tp_w2'"),
    (lambda a: a.update(counts=np.zeros((3, 3))), "unexpected arrays"),
])
def test_hostile_vector_states_are_refused(tamper, match) -> None:  # type: ignore[no-untyped-def]
    y, p, w = data(500, C, 8, True)
    state = sm.F1(C).update(y, p, sample_weight=w).state_dict()
    tamper(state)
    with pytest.raises(ValueError, match=match):
        sm.Metric.from_state_dict(state)


# -- wrappers over the sparse state --------------------------------------------------------------
def test_window_decay_slices_and_sets_over_sparse_states() -> None:
    y, p, w = data(4000, C, 9, False)
    for make in (lambda: sm.F1(C, average="macro"), lambda: sm.ConfusionMatrix(C), lambda: sm.CohenKappa(C)):
        win = sm.Window(make(), size=1000)
        for lo in range(0, 4000, 700):
            win.update(y[lo:lo + 700], p[lo:lo + 700])
        _values_equal(win.compute(), make().update(y[-1000:], p[-1000:]).compute(), exact=False)
    k = 40
    for make in (lambda: sm.F1(k, average="macro"), lambda: sm.ConfusionMatrix(k), lambda: sm.CohenKappa(k)):
        dense = sm.Decayed(make(), half_life=3)
        with dense_max(1):
            sparse = sm.Decayed(make(), half_life=3)
        for lo in range(0, 4000, 700):
            dense.update(y[lo:lo + 700] % k, p[lo:lo + 700] % k)
            sparse.update(y[lo:lo + 700] % k, p[lo:lo + 700] % k)
        _values_equal(sparse.compute(), dense.compute(), exact=False)
    keys = y % 3
    sliced = sm.Sliced(sm.F1(C, average="macro")).update(y, p, slices=keys)
    assert not sliced._state.stacked and sliced.nbytes < 3 * 8 * 7 * C + 10_000  # no C^2 per slice
    for key, value in sliced.compute().items():
        close(value, sm.F1(C, average="macro").update(y[keys == key], p[keys == key]).compute())
    ms = sm.MetricSet(cm=sm.ConfusionMatrix(C), f1=sm.F1(C), acc=sm.Accuracy(C)).update(y, p)
    out = ms.compute()
    np.testing.assert_array_equal(out["cm"], skm.confusion_matrix(y, p, labels=np.arange(C)))
    close(out["acc"], skm.accuracy_score(y, p))


def test_cohen_kappa_sums_without_the_matrix_have_no_cancellation() -> None:
    # one class holds nearly everything: the running sums add non-negative terms only
    k = 2000
    y = np.r_[np.full(10_000, 1500), np.arange(0, 2000, 7)]
    p = np.r_[np.full(10_000, 1500), (np.arange(0, 2000, 7) * 3) % k]
    w = np.r_[np.full(10_000, 1e6), np.full(len(y) - 10_000, 1e-3)]
    for weights in (None, "linear", "quadratic"):
        close(sm.CohenKappa(k, weights=weights).update(y, p, sample_weight=w).compute(),
              skm.cohen_kappa_score(y, p, weights=weights, labels=np.arange(k), sample_weight=w))
