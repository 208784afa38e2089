"""streammetrics.functional's confusion-family functions against scikit-learn (values to 1e-12,
types, dtypes, errors and warnings), on labels as users have them."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics
from functional_parity import assert_same, check, quiet
from scipy import sparse

import streammetrics as sm
import streammetrics.functional as F

rng = np.random.default_rng(20261125)
N = 300


def _labels(values: list, n: int = N, p_true: list | None = None) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(values)
    yt = a[rng.choice(len(a), n, p=p_true)]
    agree = rng.random(n) < 0.5
    yp = np.where(agree, yt, a[rng.integers(0, len(a), n)])
    return yt, yp


DATASETS = {
    "int3": _labels([0, 1, 2]),
    "strings": _labels(["cat", "dog", "pig", "ant"]),
    "noncontiguous": _labels([-3, 5, 100]),
    "binary": _labels([0, 1]),
    "binary_strings": _labels(["neg", "pos"]),
    "bool": _labels([False, True]),
    "float_labels": tuple(x.astype(float) for x in _labels([1, 2, 7])),
    "one_class": (np.full(20, 3), np.full(20, 3)),
    "pred_extra": (np.array([0, 0, 1, 1, 0, 1]), np.array([0, 2, 1, 2, 0, 1])),
    "rare": _labels([0, 1, 2, 3, 4, 5], p_true=[0.5, 0.3, 0.2, 0.0, 0.0, 0.0]),
}
WEIGHTS = {
    "none": None,
    "float": rng.random(N),
    "int": rng.integers(0, 4, N),
}
Y_ML = (rng.random((N, 4)) < 0.4).astype(int)
P_ML = np.where(rng.random((N, 4)) < 0.7, Y_ML, 1 - Y_ML)
Y_ML[:, 3] = 0  # one label never true
P_ML[:5, 2] = 1
P_ML[:, 2] = 0  # one label never predicted
P_ML[0] = 0  # a row with nothing predicted
Y_ML[1] = 0  # a row with nothing true
DATASETS["multilabel"] = (Y_ML, P_ML)


def _weights(name: str, n: int) -> np.ndarray | None:
    w = WEIGHTS[name]
    return None if w is None else w[:n]


@pytest.mark.parametrize("data", sorted(DATASETS))
@pytest.mark.parametrize("weights", sorted(WEIGHTS))
def test_whole_matrix_scores(data: str, weights: str) -> None:
    yt, yp = DATASETS[data]
    w = _weights(weights, len(yt))
    for name in ("accuracy_score", "zero_one_loss", "hamming_loss", "matthews_corrcoef"):
        check(name, yt, yp, sample_weight=w)
    for normalize in (False,):
        check("accuracy_score", yt, yp, normalize=normalize, sample_weight=w)
        check("zero_one_loss", yt, yp, normalize=normalize, sample_weight=w)
    for adjusted in (False, True):  # one_class adjusted: scikit-learn's 0 / 0, nan (numpy's warning)
        check("balanced_accuracy_score", yt, yp, sample_weight=w, adjusted=adjusted)
    for kappa_weights in (None, "linear", "quadratic"):
        check("cohen_kappa_score", yt, yp, weights=kappa_weights, sample_weight=w)
    for normalize in (None, "true", "pred", "all"):
        check("confusion_matrix", yt, yp, sample_weight=w, normalize=normalize)
    check("multilabel_confusion_matrix", yt, yp, sample_weight=w)


@pytest.mark.parametrize("data", sorted(DATASETS))
@pytest.mark.parametrize("average", [None, "binary", "micro", "macro", "weighted", "samples"])
def test_setwise_scores(data: str, average: str | None) -> None:
    yt, yp = DATASETS[data]
    # weighted on every other average (each dataset sees both)
    w = _weights("float" if average in (None, "micro", "weighted") else "none", len(yt))
    labels = np.unique(np.concatenate([np.ravel(yt), np.ravel(yp)]))
    pos_labels = [1, labels[-1]] if data != "multilabel" else [1]
    for pos_label in pos_labels:
        kw = {"average": average, "sample_weight": w, "pos_label": pos_label}
        check("precision_score", yt, yp, **kw)
        check("recall_score", yt, yp, **kw)
        check("f1_score", yt, yp, **kw)
        check("fbeta_score", yt, yp, beta=0.5, **kw)
        check("jaccard_score", yt, yp, **kw)
    kw = {"average": average, "sample_weight": w, "pos_label": pos_labels[-1]}
    for zero_division in ("warn", 0.0, 1.0, np.nan):
        check("precision_recall_fscore_support", yt, yp, beta=2.0, zero_division=zero_division, **kw)
        if zero_division is not np.nan:
            check("jaccard_score", yt, yp, zero_division=zero_division, **kw)


@pytest.mark.parametrize("data", ["int3", "strings", "noncontiguous", "rare", "multilabel", "binary"])
@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
def test_labels_subset(data: str, average: str | None) -> None:
    yt, yp = DATASETS[data]
    present = (
        np.unique(np.concatenate([np.ravel(yt), np.ravel(yp)])) if data != "multilabel" else np.arange(4)
    )
    subsets = [present[:1], present[::-1][:2], present[::-1], present[:0]]
    if data in ("int3", "noncontiguous", "rare"):
        subsets.append(np.array([present[0], 999]))  # a label that never occurs
    for labels in subsets:
        kw = {"labels": labels, "average": average}
        check("precision_score", yt, yp, **kw)
        check("recall_score", yt, yp, **kw)
        check("f1_score", yt, yp, sample_weight=WEIGHTS["float"][: len(yt)], **kw)
        check("jaccard_score", yt, yp, **kw)
        check("precision_recall_fscore_support", yt, yp, **kw)
        check("multilabel_confusion_matrix", yt, yp, labels=labels)
        if data != "multilabel":
            check("confusion_matrix", yt, yp, labels=labels)
            check("cohen_kappa_score", yt, yp, labels=labels, weights="linear")


@pytest.mark.parametrize("data", ["int3", "strings", "binary", "multilabel", "rare", "one_class"])
@pytest.mark.parametrize("output_dict", [False, True])
def test_classification_report(data: str, output_dict: bool) -> None:
    yt, yp = DATASETS[data]
    for digits in (2, 4):
        check("classification_report", yt, yp, digits=digits, output_dict=output_dict)
    # (text: whole-number weights, so that the printed supports' last digits agree)
    w = WEIGHTS["float" if output_dict else "int"][: len(yt)].astype(float)
    check("classification_report", yt, yp, output_dict=output_dict, sample_weight=w, zero_division=1.0)
    if data in ("int3", "strings"):
        labels = np.unique(yt)
        check("classification_report", yt, yp, labels=labels[:2], output_dict=output_dict)
        names = [f"class {i}" for i in range(len(labels))]
        check("classification_report", yt, yp, target_names=names, output_dict=output_dict)
        check("classification_report", yt, yp, target_names=names[:1], output_dict=output_dict)  # ValueError
        check("classification_report", yt, yp, labels=labels[:2], target_names=names, output_dict=output_dict)


def test_sparse_multilabel() -> None:
    yt, yp = sparse.csr_matrix(Y_ML), sparse.csr_matrix(P_ML)
    for average in ("micro", "macro", "samples"):
        check("f1_score", yt, yp, average=average)
    check("accuracy_score", yt, yp)
    check("hamming_loss", yt, yp)
    check("multilabel_confusion_matrix", yt, yp, samplewise=True)
    check("multilabel_confusion_matrix", Y_ML, P_ML, samplewise=True, sample_weight=WEIGHTS["float"])


def test_errors_match() -> None:
    y3, p3 = DATASETS["int3"]
    ys, ps = DATASETS["strings"]
    cases = [
        ("accuracy_score", (y3, ys), {}),  # strings mixed with numbers
        ("accuracy_score", (y3, Y_ML), {}),  # multiclass vs multilabel
        ("accuracy_score", (y3, rng.random(N)), {}),  # continuous
        ("accuracy_score", (y3[:10], p3[:9]), {}),  # lengths
        ("accuracy_score", ([], []), {}),  # empty
        ("f1_score", (y3, p3), {"average": "binary"}),  # multiclass with binary average
        ("f1_score", (ys[:0], ps[:0]), {}),
        ("f1_score", DATASETS["binary_strings"], {}),  # pos_label=1 not a label
        ("f1_score", (y3, p3), {"average": "samples"}),
        ("f1_score", (y3, p3), {"average": "bogus"}),
        ("precision_score", (Y_ML, P_ML), {"average": "macro", "labels": [0, 7]}),
        ("confusion_matrix", (y3, p3), {"labels": []}),
        ("confusion_matrix", (y3, p3), {"labels": [7, 8]}),  # no label in y_true
        ("confusion_matrix", (Y_ML, P_ML), {}),
        ("cohen_kappa_score", (y3, p3), {"labels": [7, 8]}),
        ("matthews_corrcoef", (Y_ML, P_ML), {}),
        ("multilabel_confusion_matrix", (y3, p3), {"samplewise": True}),
        ("balanced_accuracy_score", (Y_ML, P_ML), {}),
    ]
    for name, args, kw in cases:
        assert check(name, *args, **kw) in (ValueError, NotImplementedError), (name, kw)


def test_pos_label_ignored_warns_user_warning() -> None:
    yt, yp = DATASETS["int3"]
    with pytest.warns(UserWarning, match="pos_label"):
        F.f1_score(yt, yp, average="macro", pos_label=2)


def test_undefined_warns_streammetrics_warning() -> None:
    with pytest.warns(sm.UndefinedMetricWarning):
        assert F.precision_score([0, 1, 1], [0, 0, 0]) == 0.0
    with pytest.warns(sm.UndefinedMetricWarning):
        value = F.cohen_kappa_score([1, 1, 1], [1, 1, 1])
    assert np.isnan(value)
    with pytest.warns(sm.UndefinedMetricWarning):
        assert F.cohen_kappa_score([1, 1, 1], [1, 1, 1], replace_undefined_by=0.5) == 0.5


def test_functions_equal_their_accumulators() -> None:
    """The one-shot value is the accumulator's, fed in batches."""
    yt, yp = DATASETS["int3"]
    acc = sm.F1(3, average="weighted")
    for i in range(0, N, 37):
        acc.update(yt[i : i + 37], yp[i : i + 37])
    assert_same(F.f1_score(yt, yp, average="weighted"), acc.compute())
    cm = sm.ConfusionMatrix(3)
    for i in range(0, N, 50):
        cm.update(yt[i : i + 50], yp[i : i + 50])
    np.testing.assert_array_equal(F.confusion_matrix(yt, yp), cm.compute())


@pytest.mark.parametrize(("yt", "yp", "value"), [
    ([0, 0, 0], [0, 0, 0], "nan"),  # a perfect score over one class: 0 / 0
    ([0, 0, 0], [0, 1, 0], "-inf"),  # below perfect: negative / 0
    (["b", "b"], ["a", "a"], "-inf"),
    ([2, 2, 2, 2], [2, 0, 2, 2], "-inf"),
])
@pytest.mark.parametrize("weighted", [False, True])
def test_adjusted_balanced_accuracy_with_one_class_is_sklearns(yt: Any, yp: Any, value: str, weighted: bool) -> None:
    """One class in y_true: chance is 1. The function gives scikit-learn's value (nan or -inf) and
    the same warnings, numpy's RuntimeWarning of the division by 0 included; the accumulator
    gives nan with an UndefinedMetricWarning (its documented branch), the same plain score."""
    w = np.arange(1.0, len(yt) + 1) if weighted else None
    with warnings.catch_warnings(record=True) as ref_rec:
        warnings.simplefilter("always")
        ref = sklearn.metrics.balanced_accuracy_score(yt, yp, sample_weight=w, adjusted=True)
    with warnings.catch_warnings(record=True) as our_rec:
        warnings.simplefilter("always")
        ours = F.balanced_accuracy_score(yt, yp, sample_weight=w, adjusted=True)
    assert str(ours) == str(ref) == value and type(ours) is type(ref)
    assert sorted((x.category.__name__, str(x.message)) for x in our_rec) == sorted(
        (x.category.__name__, str(x.message)) for x in ref_rec)
    assert any(x.category is RuntimeWarning for x in our_rec)
    classes = sorted(set(yt) | set(yp) | {yt[0] + 1 if isinstance(yt[0], int) else "z"})
    acc = sm.BalancedAccuracy(classes=classes, adjusted=True).update(yt, yp, sample_weight=w)
    with pytest.warns(sm.UndefinedMetricWarning, match="only one class in y_true; returning nan"):
        assert np.isnan(acc.compute())
    plain = sm.BalancedAccuracy(classes=classes).update(yt, yp, sample_weight=w).compute()
    assert plain == quiet(sklearn.metrics.balanced_accuracy_score, yt, yp, sample_weight=w)
