"""ConfusionMatrix returns scikit-learn's dtype: int64 counts unweighted, float64 weighted."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix

import streammetrics as sm


def same(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, expected)


def data(seed: int, n: int = 300, C: int = 4):
    rng = np.random.default_rng(seed)
    return rng.integers(0, C, n), rng.random((n, C)), rng.random(n) * 3


def test_unweighted_is_int64_like_sklearn_for_every_task_and_input_kind():
    y, s, _ = data(0)
    pred = s.argmax(axis=1)
    expected = confusion_matrix(y, pred, labels=range(4))
    assert expected.dtype == np.int64
    same(sm.ConfusionMatrix(4).update(y, s).compute(), expected)  # scores
    same(sm.ConfusionMatrix(4).update(y, pred).compute(), expected)  # labels
    one = sm.ConfusionMatrix(4)
    for a, b in zip(y.tolist(), pred.tolist(), strict=True):  # the per-sample path
        one.update(a, b)
    same(one.compute(), expected)
    yb, sb = (y > 1).astype(int), s[:, 0]
    same(sm.ConfusionMatrix(threshold=0.3).update(yb, sb).compute(),
         confusion_matrix(yb, (sb >= 0.3).astype(int), labels=[0, 1]))
    ym, pm = (s > 0.5).astype(int), (s > 0.4).astype(int)
    same(sm.ConfusionMatrix(4, multilabel=True).update(ym, pm).compute(), multilabel_confusion_matrix(ym, pm))


def test_weighted_is_float64_like_sklearn_and_normalize_stays_float():
    y, s, w = data(1)
    pred = s.argmax(axis=1)
    expected = confusion_matrix(y, pred, labels=range(4), sample_weight=w)
    assert expected.dtype == np.float64
    same(sm.ConfusionMatrix(4).update(y, s, sample_weight=w).compute(), expected)
    ym, pm = (s > 0.5).astype(int), (s > 0.4).astype(int)
    same(sm.ConfusionMatrix(4, multilabel=True).update(ym, pm, sample_weight=w).compute(),
         multilabel_confusion_matrix(ym, pm, sample_weight=w))
    single = sm.ConfusionMatrix(4).update(int(y[0]), int(pred[0]), sample_weight=2.5)
    assert single.compute().dtype == np.float64 and single.compute().sum() == 2.5
    for normalize in ("true", "pred", "all"):
        for weights in (None, w):
            got = sm.ConfusionMatrix(4, normalize=normalize).update(y, pred, sample_weight=weights).compute()
            ref = confusion_matrix(y, pred, labels=range(4), sample_weight=weights, normalize=normalize)
            same(got, ref)


def test_dtype_follows_the_state_through_merge_copy_save_load_and_wrappers():
    y, s, w = data(2)
    plain = sm.ConfusionMatrix(4).update(y, s)
    weighted = sm.ConfusionMatrix(4).update(y, s, sample_weight=w)
    assert sm.ConfusionMatrix(4).compute().dtype == np.int64  # empty: zero counts
    for m, kind in ((plain, np.int64), (weighted, np.float64)):
        assert m.copy().compute().dtype == kind
        assert sm.loads(sm.dumps(m)).compute().dtype == kind
        assert sm.ConfusionMatrix.from_state_dict(m.state_dict()).compute().dtype == kind
    both = plain.copy().merge(sm.ConfusionMatrix(4).update(y, s))
    same(both.compute(), 2 * confusion_matrix(y, s.argmax(axis=1), labels=range(4)))
    mixed = plain.copy().merge(weighted)
    same(mixed.compute(), confusion_matrix(np.r_[y, y], np.r_[s, s].argmax(axis=1), labels=range(4),
                                           sample_weight=np.r_[np.ones(len(y)), w]))
    assert sm.loads(sm.dumps(mixed)).compute().dtype == np.float64
    ms = sm.MetricSet(cm=sm.ConfusionMatrix(4), f1=sm.F1(num_classes=4))
    assert ms.update(y, s).compute()["cm"].dtype == np.int64
    win = sm.Window(sm.ConfusionMatrix(4), size=50).update(y, s)
    same(win.compute(), confusion_matrix(y[-50:], s[-50:].argmax(axis=1), labels=range(4)))
    dec = sm.Decayed(sm.ConfusionMatrix(4), half_life=10).update(y, s)
    assert dec.compute().dtype == np.float64  # decay weights
