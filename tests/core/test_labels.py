"""Labels as users have them in the accumulators: classes=, pos_label=, labels=, average
binary/samples, target-type rules and sparse indicators -- against scikit-learn."""

from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
import streammetrics.functional as smf

CLASSES = ["bird", "cat", "dog", "eel"]
RATIOS = [
    (sm.Precision, skm.precision_score, {}),
    (sm.Recall, skm.recall_score, {}),
    (sm.F1, skm.f1_score, {}),
    (sm.FBeta, skm.fbeta_score, {"beta": 2.0}),
    (sm.Jaccard, skm.jaccard_score, {}),
]


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12)


def _labels(seed, n, classes):
    rng = np.random.default_rng(seed)
    return rng.choice(np.array(classes), n), rng.choice(np.array(classes), n), rng.random(n)


@pytest.mark.parametrize("classes", [CLASSES, [3, 7, 42, 1000], [-5, 0, 2, 9]])
def test_ratio_metrics_with_classes_match_sklearn(classes):
    y, p, w = _labels(0, 300, classes)
    for average in ("micro", "macro", "weighted", None):
        for cls, fn, kw in RATIOS:
            m = cls(classes=classes, average=average, zero_division=0.0, **kw).update(y, p, sample_weight=w)
            _close(m.compute(), fn(y, p, average=average, labels=classes, sample_weight=w, zero_division=0.0, **kw))


@pytest.mark.parametrize("labels", [["dog", "bird"], ["eel"], ["cat", "dog", "eel"]])
def test_labels_subset_matches_sklearn(labels):
    y, p, w = _labels(1, 200, CLASSES)
    for average in ("micro", "macro", "weighted", None):
        for cls, fn, kw in RATIOS:
            m = cls(classes=CLASSES, labels=labels, average=average, zero_division=0.0, **kw)
            m.update(y, p, sample_weight=w)
            _close(m.compute(), fn(y, p, labels=labels, average=average, sample_weight=w, zero_division=0.0, **kw))
    cm = sm.ConfusionMatrix(classes=CLASSES, labels=labels).update(y, p)
    _close(cm.compute(), skm.confusion_matrix(y, p, labels=labels))
    kappa = sm.CohenKappa(classes=CLASSES, labels=labels, weights="linear").update(y, p)
    if len(labels) > 1:
        _close(kappa.compute(), skm.cohen_kappa_score(y, p, labels=labels, weights="linear"))


def test_whole_matrix_metrics_with_classes():
    y, p, w = _labels(2, 250, CLASSES)
    _close(sm.ConfusionMatrix(classes=CLASSES).update(y, p, sample_weight=w).compute(),
           skm.confusion_matrix(y, p, labels=CLASSES, sample_weight=w))
    _close(sm.Accuracy(classes=CLASSES).update(y, p).compute(), skm.accuracy_score(y, p))
    _close(sm.MatthewsCorrCoef(classes=CLASSES).update(y, p).compute(), skm.matthews_corrcoef(y, p))
    _close(sm.BalancedAccuracy(classes=CLASSES).update(y, p).compute(), skm.balanced_accuracy_score(y, p))
    _close(sm.CohenKappa(classes=CLASSES).update(y, p).compute(), skm.cohen_kappa_score(y, p))


def test_pandas_categorical_labels():
    y, p, _ = _labels(3, 150, CLASSES)
    cats = ["eel", "dog", "cat", "bird", "unused"]
    yc = pd.Series(pd.Categorical(y, categories=cats))
    pc = pd.Categorical(p, categories=cats)
    m = sm.F1(classes=CLASSES, average=None).update(yc, pc)
    _close(m.compute(), skm.f1_score(y, p, average=None, labels=CLASSES))
    # classes straight from a categorical: its categories, in order
    assert sm.F1(classes=pd.Categorical([], categories=CLASSES)).num_classes == 4
    bad = pd.Series(pd.Categorical(["cat", None], categories=CLASSES))
    with pytest.raises(ValueError, match="y_true: unknown label"):
        sm.F1(classes=CLASSES).update(bad, ["cat", "cat"])


@pytest.mark.parametrize("pos_label,pair", [("spam", ["ham", "spam"]), (-1, [1, -1]), (2, [1, 2])])
def test_pos_label_binary_matches_sklearn(pos_label, pair):
    rng = np.random.default_rng(4)
    y = rng.choice(np.array(pair, dtype=object), 200)
    p = rng.choice(np.array(pair, dtype=object), 200)
    if not isinstance(pair[0], str):
        y, p = y.astype(int), p.astype(int)
    for cls, fn, kw in RATIOS:
        for m in (cls(pos_label=pos_label, **kw), cls(classes=pair, pos_label=pos_label, average="binary", **kw)):
            _close(m.update(y, p).compute(), fn(y, p, pos_label=pos_label, **kw))
    neg = pair[0] if pair[1] == pos_label else pair[1]
    cm = sm.ConfusionMatrix(classes=[neg, pos_label]).update(y, p)  # [negative, positive]
    _close(cm.compute(), skm.confusion_matrix(y, p, labels=[neg, pos_label]))
    scores = rng.random(200)
    _close(sm.AUROC(pos_label=pos_label).update(y, scores).compute(),
           skm.roc_auc_score(np.asarray(y) == pos_label, scores))
    _close(sm.AveragePrecision(classes=[neg, pos_label]).update(y, scores).compute(),
           skm.average_precision_score(y, scores, pos_label=pos_label))


def test_pos_label_scores_are_thresholded():
    y = np.array(["a", "b", "b", "a"])
    m = sm.Recall(pos_label="b", threshold=0.3).update(y, np.array([0.1, 0.4, 0.2, 0.9]))
    _close(m.compute(), 0.5)


@pytest.mark.parametrize("average,zero_division", [("samples", 0.0), ("samples", 1.0), ("micro", 0.0),
                                                   ("macro", 1.0), (None, 0.0)])
def test_multilabel_samples_and_sparse_match_sklearn(average, zero_division):
    rng = np.random.default_rng(5)
    y = (rng.random((120, 6)) < 0.25).astype(int)
    p = (rng.random((120, 6)) < 0.25).astype(int)
    w = rng.random(120)
    for cls, fn, kw in RATIOS:
        ref = fn(y, p, average=average, sample_weight=w, zero_division=zero_division, **kw)
        for yy, pp in ((y, p), (sp.csr_matrix(y), sp.csr_matrix(p)), (sp.csc_matrix(y), p)):
            m = cls(6, multilabel=True, average=average, zero_division=zero_division, **kw)
            _close(m.update(yy, pp, sample_weight=w).compute(), ref)
        sub = cls(6, multilabel=True, average=average, labels=[4, 1], zero_division=zero_division, **kw)
        _close(sub.update(sp.csr_matrix(y), p, sample_weight=w).compute(),
               fn(y, p, average=average, labels=[4, 1], sample_weight=w, zero_division=zero_division, **kw))


def test_sparse_multilabel_whole_matrix_metrics():
    rng = np.random.default_rng(6)
    y = (rng.random((80, 5)) < 0.3).astype(int)
    p = (rng.random((80, 5)) < 0.3).astype(int)
    ys, ps = sp.csr_matrix(y), sp.coo_matrix(p)
    _close(sm.Accuracy(5, multilabel=True).update(ys, ps).compute(), skm.accuracy_score(y, p))
    _close(sm.HammingLoss(5, multilabel=True).update(ys, ps).compute(), skm.hamming_loss(y, p))
    _close(sm.ConfusionMatrix(5, multilabel=True).update(ys, ps).compute(), skm.multilabel_confusion_matrix(y, p))
    names = ["a", "b", "c", "d", "e"]
    m = sm.ConfusionMatrix(multilabel=True, classes=names, labels=["e", "a"]).update(ys, ps)
    _close(m.compute(), skm.multilabel_confusion_matrix(y, p, labels=[4, 0]))
    with pytest.raises(ValueError, match=r"y_true: labels must be 0 or 1; first invalid value 2"):
        sm.F1(5, multilabel=True).update(sp.csr_matrix(np.where(y == 1, 2, 0)), ps)


def test_functional_keeps_sparse_and_equals_accumulator():
    rng = np.random.default_rng(7)
    y = sp.random(500, 40, density=0.05, random_state=1, format="csr")
    y.data[:] = 1
    p = sp.random(500, 40, density=0.05, random_state=2, format="csr")
    p.data[:] = 1
    dense = y.toarray(), p.toarray()
    for avg in ("samples", "micro", "macro"):
        got = smf.f1_score(y, p, average=avg, zero_division=0.0)
        _close(got, skm.f1_score(*dense, average=avg, zero_division=0.0))
        _close(got, sm.F1(40, multilabel=True, average=avg, zero_division=0.0).update(y, p).compute())
    t = smf._targets.check_targets(y, p)
    assert sp.issparse(t.y_true) and sp.issparse(t.y_pred)
    _close(smf.accuracy_score(y, p), skm.accuracy_score(*dense))
    w = rng.random(500)
    _close(smf.hamming_loss(y, p, sample_weight=w), skm.hamming_loss(*dense, sample_weight=w))


def test_functional_equals_accumulator_with_the_same_labels():
    y, p, w = _labels(8, 300, CLASSES)
    for cls, _fn, kw in RATIOS:
        name = {"Precision": "precision_score", "Recall": "recall_score", "F1": "f1_score",
                "FBeta": "fbeta_score", "Jaccard": "jaccard_score"}[cls.__name__]
        for avg in ("macro", "weighted", None):
            f = getattr(smf, name)(y, p, average=avg, labels=["eel", "cat"], sample_weight=w, **kw)
            a = cls(classes=CLASSES, labels=["eel", "cat"], average=avg, **kw).update(y, p, sample_weight=w)
            _close(f, a.compute())
    yb = np.where(np.asarray(y) == "dog", "dog", "cat")
    pb = np.where(np.asarray(p) == "dog", "dog", "cat")
    _close(smf.precision_score(yb, pb, pos_label="dog"), sm.Precision(pos_label="dog").update(yb, pb).compute())


def test_ranking_topk_with_classes_match_sklearn():
    rng = np.random.default_rng(9)
    classes = np.array([3, 7, 42, 99])
    y = rng.choice(classes, 300)
    s = rng.random((300, 4))
    s /= s.sum(axis=1, keepdims=True)
    _close(sm.AUROC(classes=classes).update(y, s).compute(),
           skm.roc_auc_score(y, s, multi_class="ovr", labels=classes))
    _close(sm.AUROC(classes=classes, multi_class="ovo").update(y, s).compute(),
           skm.roc_auc_score(y, s, multi_class="ovo", labels=classes))
    onehot = (y[:, None] == classes).astype(int)
    _close(sm.AveragePrecision(classes=classes, average=None).update(y, s).compute(),
           skm.average_precision_score(onehot, s, average=None))
    _close(sm.TopKAccuracy(classes=classes, k=2).update(y, s).compute(),
           skm.top_k_accuracy_score(y, s, k=2, labels=classes))
    names = ["a", "b", "c", "d"]
    _close(sm.TopKAccuracy(classes=names, k=3).update(np.array(names)[np.searchsorted(classes, y)], s).compute(),
           skm.top_k_accuracy_score(y, s, k=3, labels=classes))


# -- errors and atomicity -------------------------------------------------------------------------
def test_unknown_label_names_it_and_leaves_the_state_unchanged():
    y, p, _ = _labels(10, 50, CLASSES)
    for m in (sm.F1(classes=CLASSES), sm.ConfusionMatrix(classes=CLASSES), sm.Window(sm.Recall(classes=CLASSES), size=20),
              sm.MetricSet(f1=sm.F1(classes=CLASSES), acc=sm.Accuracy(classes=CLASSES))):
        m.update(y, p)
        before = m.state_dict()
        with pytest.raises(ValueError, match=r"y_true: unknown label 'fox' at index 2"):
            m.update(["cat", "dog", "fox", "ant"], ["cat"] * 4)
        with pytest.raises(ValueError, match=r"y_pred: unknown label 'ant' at index 1"):
            m.update(["cat", "dog"], ["cat", "ant"])
        with pytest.raises(ValueError, match=r"y_true: unknown label 'fox'"):
            m.update("fox", "cat")
        after = m.state_dict()
        assert before.keys() == after.keys()
        for k in before:
            if k != "config":
                np.testing.assert_array_equal(np.asarray(before[k]), np.asarray(after[k]))
    with pytest.raises(ValueError, match=r"y_true: unknown label 5 at index 0"):
        sm.TopKAccuracy(classes=[3, 7], k=1).update([5], [[0.2, 0.8]])


@pytest.mark.parametrize("make,message", [
    (lambda: sm.F1(classes=["a", "a", "b"]), "classes: labels must be distinct"),
    (lambda: sm.F1(3, classes=["a", "b"]), "classes: 2 labels for num_classes=3"),
    (lambda: sm.F1(classes=["a", (1, 2)]), "classes: labels must be strings"),
    (lambda: sm.F1(classes=["a", "b", "c"], pos_label="a"), "pos_label: only for binary"),
    (lambda: sm.F1(classes=["a", "b"], pos_label="z"), "pos_label: unknown label 'z'"),
    (lambda: sm.F1(classes=["a", "b", "c"], labels=["a", "q"]), "labels: unknown label 'q'"),
    (lambda: sm.F1(3, labels=[0, 3]), r"labels: without classes=, labels are class indices in \[0, 3\)"),
    (lambda: sm.F1(classes=["a", "b"], labels=["a"]), "labels: only for multiclass and multilabel"),
    (lambda: sm.Accuracy(3, labels=[0]), "labels: Accuracy takes no labels="),
    (lambda: sm.F1(3, average="binary"), "average: 'binary' is for binary metrics"),
    (lambda: sm.F1(3, average="samples"), "average: 'samples' is for multilabel metrics"),
    (lambda: sm.F1(classes=["a", "b", "c"], ignore_index=1), "ignore_index: with classes="),
])
def test_bad_label_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_merges_need_the_same_classes():
    a = sm.F1(classes=["a", "b", "c"]).update(["a"], ["b"])
    for other in (sm.F1(classes=["a", "c", "b"]), sm.F1(3), sm.F1(classes=["a", "b", "d"])):
        with pytest.raises(ValueError, match="merge: configuration mismatch"):
            a.merge(other)
    with pytest.raises(ValueError, match="merge: configuration mismatch"):
        sm.F1(classes=[1, 2, 3]).merge(sm.F1(classes=["1", "2", "3"]))


def test_target_type_rules():
    m = sm.F1(classes=["a", "b", "c"])
    with pytest.raises(ValueError, match="y_true: a multilabel-indicator target"):
        m.update(np.eye(3, dtype=int), ["a", "b", "c"])
    with pytest.raises(ValueError, match="y_pred: a 2-D array of int64 for a multiclass metric"):
        m.update(["a", "b", "c"], np.eye(3, dtype=np.int64))
    with pytest.raises(ValueError, match="y_true: a sparse"):
        m.update(sp.csr_matrix(np.eye(3)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="at most two distinct labels, got 3"):
        sm.Precision(pos_label="a").update(["a", "b", "c"], ["a", "a", "a"])
    with pytest.raises(ValueError, match="Classification metrics can't handle a mix"):
        smf.f1_score(sp.csr_matrix(np.eye(3)), np.array([0, 1, 2]), average="macro")


def test_ignore_index_with_classes():
    y = np.array(["a", -100, "b", "c", -100], dtype=object)
    p = np.array(["a", "b", "b", "a", "c"], dtype=object)
    m = sm.Recall(classes=["a", "b", "c"], ignore_index=-100, average=None).update(y, p)
    keep = np.array([0, 2, 3])
    _close(m.compute(), skm.recall_score(y[keep].astype(str), p[keep].astype(str), average=None, labels=["a", "b", "c"]))


def test_nested_configs_persist_classes():
    y, p, _ = _labels(11, 120, CLASSES)
    d = tempfile.mkdtemp()
    made = [sm.Window(sm.F1(classes=CLASSES, labels=["cat", "dog"]), size=50),
            sm.Decayed(sm.Precision(classes=CLASSES), half_life=30),
            sm.MetricSet(f1=sm.F1(classes=CLASSES), cm=sm.ConfusionMatrix(classes=CLASSES)),
            sm.DelayedLabels(sm.Recall(classes=CLASSES), capacity=1000)]
    for m in made:
        if isinstance(m, sm.DelayedLabels):
            continue  # fed through predict/label below
        m.update(y, p)
    for m in made:
        path = os.path.join(d, f"{type(m).__name__}.sm")
        sm.save(m, path)
        back = sm.load(path)
        assert "bird" in str(back.state_dict()["config"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v1, v2 = m.compute(), back.compute()
        if isinstance(v1, dict):
            for k in v1:
                _close(v1[k], v2[k])
        else:
            _close(v1, v2)


# -- properties ----------------------------------------------------------------------------------
label_lists = st.lists(st.sampled_from(CLASSES), min_size=1, max_size=60)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_batches_merges_and_save_load_equal_one_shot(data):
    n = data.draw(st.integers(1, 60))
    y = data.draw(st.lists(st.sampled_from(CLASSES), min_size=n, max_size=n))
    p = data.draw(st.lists(st.sampled_from(CLASSES), min_size=n, max_size=n))
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    labels = data.draw(st.sampled_from([None, ["dog", "bird"], ["eel"]]))
    average = data.draw(st.sampled_from(["micro", "macro", "weighted", None]))
    make = lambda: sm.F1(classes=CLASSES, labels=labels, average=average, zero_division=0.0)  # noqa: E731
    one = make().update(y, p)
    parts = []
    for lo, hi in zip([0, *cuts], [*cuts, n], strict=True):
        part = make()
        if hi > lo:
            part.update(y[lo:hi], p[lo:hi])
        parts.append(part)
    merged = make().merge(*parts)
    path = os.path.join(tempfile.mkdtemp(), "m.sm")
    sm.save(merged, path)
    loaded = sm.load(path)
    ref = skm.f1_score(y, p, labels=labels or CLASSES, average=average, zero_division=0.0)
    for m in (one, merged, loaded):
        _close(m.compute(), ref)
    single = make()
    for a, b in zip(y, p, strict=True):
        single.update(a, b)
    _close(single.compute(), ref)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_samples_average_batches_and_sparse_equal_one_shot(data):
    n = data.draw(st.integers(1, 40))
    flat = data.draw(st.lists(st.integers(0, 1), min_size=2 * n * 4, max_size=2 * n * 4))
    y = np.array(flat[: n * 4]).reshape(n, 4)
    p = np.array(flat[n * 4:]).reshape(n, 4)
    cut = data.draw(st.integers(0, n))
    a = sm.Jaccard(4, multilabel=True, average="samples", zero_division=1.0)
    b = a.copy()
    a.update(sp.csr_matrix(y[:cut]), p[:cut]) if cut else None
    b.update(y[cut:], sp.csr_matrix(p[cut:])) if cut < n else None
    a.merge(b)
    _close(a.compute(), skm.jaccard_score(y, p, average="samples", zero_division=1.0))


def test_calibration_with_classes_and_pos_label_match_sklearn():
    rng = np.random.default_rng(12)
    y = rng.choice(np.array(CLASSES[:3]), 200)
    s = rng.random((200, 3))
    s /= s.sum(axis=1, keepdims=True)
    _close(sm.LogLoss(classes=CLASSES[:3]).update(y, s).compute(), skm.log_loss(y, s, labels=CLASSES[:3]))
    _close(sm.BrierScore(classes=CLASSES[:3]).update(y, s).compute(),
           skm.brier_score_loss(y, s, labels=CLASSES[:3]))
    yb = rng.choice(np.array(["ham", "spam"]), 200)
    pb = rng.random(200)
    _close(sm.BrierScore(pos_label="ham").update(yb, pb).compute(), skm.brier_score_loss(yb, pb, pos_label="ham"))
    _close(sm.LogLoss(classes=["ham", "spam"]).update(yb, pb).compute(), skm.log_loss(yb, pb))
    for strategy in ("uniform", "quantile"):
        a = sm.CalibrationError(classes=CLASSES[:3], strategy=strategy, classwise=True).update(y, s)
        codes = np.searchsorted(np.array(CLASSES[:3]), y)
        b = sm.CalibrationError(3, strategy=strategy, classwise=True).update(codes, s)
        _close(a.compute(), b.compute())
        with pytest.raises(ValueError, match="y_true: unknown label 'eel'"):
            a.update(["eel"], s[:1])


def test_sparse_indicator_for_multilabel_ranking():
    rng = np.random.default_rng(13)
    y = (rng.random((150, 5)) < 0.4).astype(int)
    s = rng.random((150, 5))
    for average in ("macro", "micro", None):
        _close(sm.AUROC(5, multilabel=True, average=average).update(sp.csr_matrix(y), s).compute(),
               skm.roc_auc_score(y, s, average=average))
        _close(sm.AveragePrecision(5, multilabel=True, average=average).update(sp.coo_matrix(y), s).compute(),
               skm.average_precision_score(y, s, average=average))


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_ranking_with_classes_batches_merges_save_load(data):
    n = data.draw(st.integers(2, 50))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    classes = [10, 20, 30]
    y = rng.choice(classes, n)
    s = rng.random((n, 3)).round(1)
    cut = data.draw(st.integers(0, n))
    make = lambda: sm.AveragePrecision(classes=classes, average=None)  # noqa: E731
    a, b = make(), make()
    if cut:
        a.update(y[:cut], s[:cut])
    if cut < n:
        b.update(y[cut:], s[cut:])
    path = os.path.join(tempfile.mkdtemp(), "ap.sm")
    sm.save(a.merge(b), path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = sm.load(path).compute()
        ref = make().update(y, s).compute()
        onehot = (y[:, None] == np.array(classes)).astype(int)
        want = [skm.average_precision_score(onehot[:, j], s[:, j]) if onehot[:, j].any() else np.nan
                for j in range(3)]
    _close(np.nan_to_num(got, nan=-1), np.nan_to_num(want, nan=-1))
    _close(np.nan_to_num(ref, nan=-1), np.nan_to_num(want, nan=-1))


def test_delayed_labels_take_labels_as_users_have_them():
    rng = np.random.default_rng(14)
    y = rng.choice(np.array(CLASSES[:3]), 40)
    s = rng.random((40, 3))
    s /= s.sum(axis=1, keepdims=True)
    d = sm.DelayedLabels(sm.AUROC(classes=CLASSES[:3]), capacity=100)
    d.predict(list(range(40)), s)
    d.label(list(range(20)), y[:20])
    with pytest.raises(ValueError, match="y_true: unknown label 'eel'"):
        d.label([20, 21], [y[20], "eel"])
    assert d.stats()["pending"] == 20  # the rejected call changed nothing
    for i in range(20, 40):
        d.label(i, y[i])
    _close(d.compute(), skm.roc_auc_score(y, s, multi_class="ovr", labels=CLASSES[:3]))


def test_classification_report_rows_are_named_by_classes() -> None:
    """With ``classes=``, the report's rows carry the labels, as scikit-learn's report does."""
    from sklearn.metrics import classification_report

    y = ["cat", "dog", "bird", "cat", "dog", "dog"]
    p = ["cat", "bird", "bird", "cat", "dog", "cat"]
    got = sm.ClassificationReport(classes=["bird", "cat", "dog"]).update(y, p).compute()
    ref = classification_report(y, p, output_dict=True, zero_division=0)
    for label in ("bird", "cat", "dog"):
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score"),
                             ("support", "support")):
            assert got[label][ours] == pytest.approx(ref[label][theirs], abs=1e-12)
    assert got["accuracy"] == pytest.approx(ref["accuracy"], abs=1e-12)


def _entry_by_entry(arr, label):
    """The rule ``same_labels`` vectorises, one entry at a time (what ``_is_positive`` was)."""
    return np.array([(isinstance(v, str) == isinstance(label, str)) and v == label for v in arr.ravel().tolist()],
                    dtype=bool).reshape(arr.shape)


class _EqualsAll:  # a non-string equal to every string: still not the label "a"
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


_ENTRIES = ["a", "b", np.str_("a"), "1", 1, 1.0, True, False, 0, np.int64(1), np.float64(1.0), 2.5, None,
            float("nan"), np.nan, b"a", np.array("a"), _EqualsAll(), pd.NA, np.array([1, 2]), ("a",)]


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(st.sampled_from(range(len(_ENTRIES))), max_size=12),
       label=st.sampled_from(["a", "1", 1, 1.0, True, 0, 2.5]), two_d=st.booleans())
def test_same_labels_is_the_entry_by_entry_rule(entries, label, two_d) -> None:
    """pos_label-only binary labels in an object array (review of #32: a Python loop per row made
    vectorised): mixed kinds (``1`` is not ``"1"``, ``True`` is ``1``), None, NaN, ``np.str_``,
    0-d arrays and objects whose ``==`` misbehaves give what the entry-by-entry rule gives, or
    the same error (``pd.NA``, arrays: no truth value); the codec's distinct labels too."""
    from streammetrics._core.labels import _distinct_objects, _key, same_labels

    arr = np.empty(len(entries), dtype=object)
    arr[:] = [_ENTRIES[i] for i in entries]
    if two_d and len(entries) % 2 == 0:
        arr = arr.reshape(2, -1)
    try:
        want = _entry_by_entry(arr, label)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            same_labels(arr, label)
    else:
        got = same_labels(arr, label)
        assert got.dtype == bool and got.shape == arr.shape and np.array_equal(got, want)
    try:
        hashable = [v for v in arr.ravel().tolist() if hash(v) is not None]
    except TypeError:  # unhashable entries: each its own label
        hashable = None
    old = list({_key(v) for v in arr.ravel().tolist()})
    new = _distinct_objects(arr)
    assert len(new) == len(old)
    if hashable is not None and not any(isinstance(v, float) and v != v for v in hashable):
        assert set(new) == set(old)


def test_pos_label_codes_of_a_large_object_array() -> None:
    rng = np.random.default_rng(32)
    y = np.array(["ham", "spam"], dtype=object)[rng.integers(0, 2, 10_000)]
    codec = sm.AUROC(pos_label="spam")._codec
    assert np.array_equal(codec.true_codes(y), (y == "spam").astype(np.intp))
    y[5] = "eel"
    with pytest.raises(ValueError, match=r"^y_true: a binary task \(pos_label='spam'\) takes at most two distinct"):
        codec.true_codes(y)
