"""streammetrics.functional's ranking functions and curves against scikit-learn (values to 1e-12,
types, dtypes, errors and warnings): ties, weights, string labels, pos_label, averages."""

from __future__ import annotations

import numpy as np
import pytest
from functional_parity import assert_same, check

import streammetrics as sm
import streammetrics.functional as F

rng = np.random.default_rng(7)
N = 400


def _binary(labels: tuple, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, 2, N)
    s = rng.normal(size=N) + y
    if ties:
        s = np.round(s, 1)
    return np.asarray(labels)[y], s


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


Y3 = rng.integers(0, 3, N)
S3 = _softmax(rng.normal(size=(N, 3)) + np.eye(3)[Y3])
S3_TIES = _softmax(np.round(rng.normal(size=(N, 3)) + np.eye(3)[Y3], 0))
Y_ML = (rng.random((N, 3)) < 0.4).astype(int)
S_ML = np.round(rng.normal(size=(N, 3)) + Y_ML, 1)
W = rng.random(N)
W[::17] = 0.0  # zero weights: scikit-learn drops them
BINARY = {
    "01": _binary((0, 1), ties=False),
    "01_ties": _binary((0, 1), ties=True),
    "strings": _binary(("neg", "pos"), ties=True),
    "pm1": _binary((-1, 1), ties=True),
    "noncontiguous": _binary((3, 8), ties=True),
}


@pytest.mark.parametrize("data", sorted(BINARY))
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_ranking(data: str, weighted: bool) -> None:
    y, s = BINARY[data]
    w = W if weighted else None
    pos = y.max() if y.dtype.kind != "U" else "pos"
    for max_fpr in (None, 0.3, 1.0):
        check("roc_auc_score", y, s, sample_weight=w, max_fpr=max_fpr)
    check("average_precision_score", y, s, sample_weight=w, pos_label=pos)
    for drop in (False, True):
        check("roc_curve", y, s, sample_weight=w, pos_label=pos, drop_intermediate=drop)
        check("precision_recall_curve", y, s, sample_weight=w, pos_label=pos, drop_intermediate=drop)
        check("det_curve", y, s, sample_weight=w, pos_label=pos, drop_intermediate=drop)
    for k in (1, 2):
        check("top_k_accuracy_score", y, s, k=k, sample_weight=w)
        check("top_k_accuracy_score", y, s, k=k, sample_weight=w, normalize=False)
    # default pos_label: an error unless the labels are {0, 1} / {-1, 1}
    check("roc_curve", y, s)
    check("average_precision_score", y, s)


def test_binary_probabilities_top_k() -> None:
    y = rng.integers(0, 2, N)
    s = np.round(rng.random(N), 1)  # ties with the 0.5 threshold
    check("top_k_accuracy_score", y, s, k=1)
    check("top_k_accuracy_score", y.astype(str), s, k=1)


@pytest.mark.parametrize("scores", ["plain", "ties"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_ranking(scores: str, weighted: bool) -> None:
    s = S3 if scores == "plain" else S3_TIES
    w = W if weighted else None
    names = np.array(["a", "b", "c"])
    for y in (Y3, names[Y3], np.array([2, 5, 9])[Y3]):
        for average in ("micro", "macro", "weighted", None):
            check("roc_auc_score", y, s, multi_class="ovr", average=average, sample_weight=w)
            check("average_precision_score", y, s, average=average, sample_weight=w)
        for average in ("macro", "weighted"):
            check("roc_auc_score", y, s, multi_class="ovo", average=average)
        for k in (1, 2, 3):
            check("top_k_accuracy_score", y, s, k=k, sample_weight=w)
        check("top_k_accuracy_score", y, s, k=2, normalize=False, sample_weight=w)


def test_multiclass_labels() -> None:
    y = np.array([0, 2, 3])[Y3]  # class 1 of the labels never occurs
    s4 = _softmax(np.column_stack([S3[:, :1], rng.normal(size=(N, 1)), S3[:, 1:]]))
    labels = [0, 1, 2, 3]
    for average in ("macro", "weighted", None, "micro"):
        check("roc_auc_score", y, s4, multi_class="ovr", labels=labels, average=average)
    check("roc_auc_score", y, s4, multi_class="ovo", labels=labels)
    check("top_k_accuracy_score", y, s4, labels=labels, k=2)
    check(
        "top_k_accuracy_score",
        y[y != 3],
        s4[y != 3][:, :3] / s4[y != 3][:, :3].sum(1, keepdims=True),
        labels=[0, 1, 2],
        k=2,
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_ranking(weighted: bool) -> None:
    w = W if weighted else None
    for average in ("micro", "macro", "weighted", "samples", None):
        for max_fpr in (None, 0.5):
            check(
                "roc_auc_score",
                Y_ML[20:],
                S_ML[20:],
                average=average,
                sample_weight=None if w is None else w[20:],
                max_fpr=max_fpr,
            )
        check("average_precision_score", Y_ML, S_ML, average=average, sample_weight=w)
    y = Y_ML.copy()
    y[:, 1] = 0  # a label without positives: AP 0 (scikit-learn), AUROC nan
    for average in ("macro", "weighted", None):
        check("average_precision_score", y, S_ML, average=average)
        check("roc_auc_score", y, S_ML, average=average)


def test_ranking_edge_cases_and_errors() -> None:
    y, s = BINARY["01"]
    ones = np.ones(N, dtype=int)
    check("roc_auc_score", ones, s)  # one class: warns, nan
    check("average_precision_score", np.zeros(N, dtype=int), s)  # no positives: 0
    check("roc_curve", ones, s)  # tpr fine, fpr nan
    check("roc_curve", np.zeros(N, dtype=int), s)
    check("precision_recall_curve", np.zeros(N, dtype=int), s)
    errors = [
        ("roc_auc_score", (Y3, S3), {}),  # multi_class="raise"
        ("roc_auc_score", (Y3, S3), {"multi_class": "ovr", "max_fpr": 0.5}),
        ("roc_auc_score", (Y3, S3 * 2), {"multi_class": "ovr"}),  # not probabilities
        ("roc_auc_score", (Y3, S3), {"multi_class": "ovo", "sample_weight": W}),
        ("roc_auc_score", (Y3, S3), {"multi_class": "ovo", "average": None}),  # NotImplementedError
        ("roc_auc_score", (Y3, S3), {"multi_class": "ovr", "labels": [0, 2, 1]}),
        ("roc_auc_score", (Y3, S3), {"multi_class": "ovr", "labels": [0, 1]}),
        ("roc_auc_score", (Y3, S3[:, :2]), {"multi_class": "ovr"}),
        ("roc_auc_score", (rng.random(N), s), {}),  # continuous
        ("average_precision_score", (Y3, S3), {"pos_label": 2}),
        ("average_precision_score", (Y_ML, S_ML), {"pos_label": 0}),
        ("average_precision_score", (y, s), {"pos_label": 5}),
        ("roc_curve", (Y3, S3[:, 0]), {}),
        ("roc_curve", (np.array(["a", "b"])[y], s), {}),  # strings need pos_label
        ("det_curve", (ones, s), {}),
        ("top_k_accuracy_score", (Y3, S3[:, :2]), {}),
        ("top_k_accuracy_score", (Y3, S3), {"labels": [0, 1, 1]}),
        ("top_k_accuracy_score", (Y3, S3), {"labels": [2, 1, 0]}),
        ("top_k_accuracy_score", (Y3, S3), {"labels": [0, 1, 5]}),
        ("top_k_accuracy_score", (y, S3), {}),
        ("auc", ([0.0], [1.0]), {}),
        ("auc", ([0.0, 1.0, 0.5], [1.0, 1.0, 1.0]), {}),
    ]
    for name, args, kw in errors:
        assert check(name, *args, **kw) in (ValueError, NotImplementedError), (name, kw)


def test_auc() -> None:
    x = np.sort(rng.random(50))
    yv = rng.random(50)
    check("auc", x, yv)
    check("auc", x[::-1], yv)
    fpr, tpr, _ = F.roc_curve(*BINARY["01_ties"])
    assert_same(F.auc(fpr, tpr), F.roc_auc_score(*BINARY["01_ties"]))


@pytest.mark.parametrize("ties", [False, True])
def test_dcg_ndcg(ties: bool) -> None:
    y = rng.integers(0, 4, (60, 8)).astype(float)
    s = rng.normal(size=(60, 8))
    if ties:
        s = np.round(s, 0)
    w = rng.random(60)
    for k in (None, 1, 3, 8):
        for weights in (None, w):
            check("dcg_score", y, s, k=k, sample_weight=weights)
            check("ndcg_score", y, s, k=k, sample_weight=weights)
            if not ties:
                check("dcg_score", y, s, k=k, sample_weight=weights, ignore_ties=True)
                check("ndcg_score", y, s, k=k, sample_weight=weights, ignore_ties=True)
    check("dcg_score", y, s, log_base=10)
    check("dcg_score", y - 1.5, s)  # negative gains
    y[3] = 0  # a query without relevant documents: nDCG 0
    check("ndcg_score", y, s)
    check("ndcg_score", y.astype(int), s)
    for args in ((y - 1, s), (y[:, :1], s[:, :1]), (y[:, 0], s[:, 0])):
        assert check("ndcg_score", *args) is ValueError
    assert check("dcg_score", y[:, 0], s[:, 0]) is ValueError


def test_functions_equal_their_accumulators() -> None:
    y, s = BINARY["01_ties"]
    acc = sm.AUROC()
    for i in range(0, N, 64):
        acc.update(y[i : i + 64], s[i : i + 64])
    assert_same(F.roc_auc_score(y, s), acc.compute())
    ap = sm.AveragePrecision(3, average="macro")
    for i in range(0, N, 100):
        ap.update(Y3[i : i + 100], S3[i : i + 100])
    assert_same(F.average_precision_score(Y3, S3), ap.compute())


def test_framework_tensors_and_object_labels() -> None:
    torch = __import__("pytest").importorskip("torch")
    y, s = BINARY["01_ties"]
    assert_same(F.roc_auc_score(torch.from_numpy(y), torch.from_numpy(s)), F.roc_auc_score(y, s))
    assert_same(
        F.f1_score(torch.from_numpy(y), torch.from_numpy((s > 0.5).astype(int))), F.f1_score(y, s > 0.5)
    )
    names = np.array(["neg", "pos"], dtype=object)[y]
    check("average_precision_score", names, s, pos_label="pos")
