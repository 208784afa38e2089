"""Integer overflow and dtypes of the count paths (issue #27): huge integer weights, scikit-learn's
dtype rules for ``confusion_matrix`` / ``multilabel_confusion_matrix``, and huge integers given
as labels."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
import sklearn.metrics as skm

import streammetrics as sm
import streammetrics.functional as F

Y = np.array([0, 1, 0, 1, 0, 1, 1, 0, 2])
P = np.array([0, 1, 1, 1, 0, 0, 1, 0, 2])
YI = np.array([[0, 1, 1], [1, 1, 0], [1, 0, 0], [0, 0, 1]])
PI = np.array([[0, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 1]])

WEIGHTS = {
    "none": lambda n: None,
    "int64": lambda n: np.arange(1, n + 1),
    "int8": lambda n: np.arange(1, n + 1, dtype=np.int8),
    "uint8": lambda n: np.arange(1, n + 1, dtype=np.uint8),
    "uint32": lambda n: np.arange(1, n + 1, dtype=np.uint32),
    "bool": lambda n: np.arange(n) % 3 != 0,
    "float ones": lambda n: np.ones(n),
    "float32": lambda n: np.arange(1, n + 1, dtype=np.float32),
    "float": lambda n: np.linspace(0.5, 2.0, n),
    "list int": lambda n: list(range(1, n + 1)),
    "list float": lambda n: [1.0] * n,
}


@pytest.fixture(autouse=True)
def _quiet():  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def same(mine: np.ndarray, theirs: np.ndarray) -> None:
    assert mine.dtype == theirs.dtype, (mine.dtype, theirs.dtype)
    assert mine.shape == theirs.shape
    np.testing.assert_allclose(mine.astype(float), theirs.astype(float), rtol=1e-12)


@pytest.mark.parametrize("kind", list(WEIGHTS))
@pytest.mark.parametrize("normalize", [None, "true", "all"])
def test_confusion_matrix_dtype_follows_sklearn(kind: str, normalize: str | None) -> None:
    w = WEIGHTS[kind](len(Y))
    same(F.confusion_matrix(Y, P, sample_weight=w, normalize=normalize),
         skm.confusion_matrix(Y, P, sample_weight=w, normalize=normalize))
    same(F.confusion_matrix(Y, P, sample_weight=w, labels=[2, 0]),
         skm.confusion_matrix(Y, P, sample_weight=w, labels=[2, 0]))


@pytest.mark.parametrize("kind", list(WEIGHTS))
def test_multilabel_confusion_matrix_dtype_follows_sklearn(kind: str) -> None:
    w = WEIGHTS[kind](len(Y))
    same(F.multilabel_confusion_matrix(Y, P, sample_weight=w), skm.multilabel_confusion_matrix(Y, P, sample_weight=w))
    same(F.multilabel_confusion_matrix(Y, P, sample_weight=w, labels=[2, 0]),
         skm.multilabel_confusion_matrix(Y, P, sample_weight=w, labels=[2, 0]))
    wi = WEIGHTS[kind](len(YI))
    same(F.multilabel_confusion_matrix(YI, PI, sample_weight=wi),
         skm.multilabel_confusion_matrix(YI, PI, sample_weight=wi))
    same(F.multilabel_confusion_matrix(YI, PI, sample_weight=wi, samplewise=True),
         skm.multilabel_confusion_matrix(YI, PI, sample_weight=wi, samplewise=True))


def test_confusion_matrix_integer_weights_overflowing_int64_are_refused() -> None:
    y, p = Y[:8], P[:8]
    with pytest.raises(ValueError, match=r"sample_weight: .* sum to 13835058055282163712, beyond int64"):
        F.confusion_matrix(y, p, sample_weight=np.full(8, 2**62))
    with pytest.raises(ValueError, match="sample_weight"):  # uint64 weights: each beyond int64
        F.confusion_matrix(y, p, sample_weight=np.full(8, 2**63, dtype=np.uint64))


@pytest.mark.parametrize("weight", [2**53 + 1, 2**60, 2**61 - 3])
def test_confusion_matrix_integer_weights_beyond_float_are_exact(weight: int) -> None:
    w = np.full(len(Y), weight)
    w[3] = 1
    mine, theirs = F.confusion_matrix(Y, P, sample_weight=w), skm.confusion_matrix(Y, P, sample_weight=w)
    assert mine.dtype == theirs.dtype == np.int64
    np.testing.assert_array_equal(mine, theirs)  # scikit-learn's int64 sums are exact here
    cells = {}
    for a, b, c in zip(Y.tolist(), P.tolist(), w.tolist(), strict=True):
        cells[a, b] = cells.get((a, b), 0) + c
    assert all(int(mine[a, b]) == v for (a, b), v in cells.items())


def test_multilabel_confusion_matrix_huge_integer_weights_are_not_negative() -> None:
    w = np.full(len(Y), 2**62)
    out = F.multilabel_confusion_matrix(Y, P, sample_weight=w)
    assert out.dtype == np.float64 and (out >= 0).all()
    for c in range(3):  # exact integer sums (Python ints), rounded once to float64
        tp = sum(2**62 for a, b in zip(Y, P, strict=True) if a == c and b == c)
        fp = sum(2**62 for a, b in zip(Y, P, strict=True) if a != c and b == c)
        fn = sum(2**62 for a, b in zip(Y, P, strict=True) if a == c and b != c)
        tn = len(Y) * 2**62 - tp - fp - fn
        np.testing.assert_allclose(out[c], [[float(tn), float(fp)], [float(fn), float(tp)]], rtol=1e-15)
    with pytest.raises(ValueError, match="sample_weight: an integer weight times the 3 labels"):
        F.multilabel_confusion_matrix(YI, PI, sample_weight=np.full(len(YI), 2**62), samplewise=True)


def test_accumulator_with_huge_integer_weights_counts_in_float() -> None:
    cm = sm.ConfusionMatrix(3).update(Y, P, sample_weight=np.full(len(Y), 2**62)).compute()
    assert cm.dtype == np.float64 and (cm >= 0).all()
    np.testing.assert_allclose(cm, skm.confusion_matrix(Y, P, sample_weight=np.full(len(Y), 2.0**62)), rtol=1e-15)


# -- huge integers given as labels ----------------------------------------------------------------
@pytest.mark.parametrize("make, y, p, match", [
    (lambda: sm.Recall(), 1, 10**30, r"y_pred: labels must be 0 or 1; first invalid value 10{30} at index 0"),
    (lambda: sm.Recall(), 1, -(10**30), r"y_pred: labels must be 0 or 1; first invalid value -10{30}"),
    (lambda: sm.Recall(), 1, 5, r"y_pred: labels must be 0 or 1; first invalid value 5 at index 0"),
    (lambda: sm.Recall(), 1, 2**63, r"y_pred: labels must be 0 or 1; first invalid value 9223372036854775808"),
    (lambda: sm.Recall(), 1, np.uint64(2**64 - 1), r"y_pred: labels must be 0 or 1; first invalid value 18446"),
    (lambda: sm.Recall(), 10**30, 1, r"y_true: labels must be 0 or 1; first invalid value 10{30}"),
    (lambda: sm.Recall(), [1, 0], [1, 10**30], r"y_pred: labels must be 0 or 1; first invalid value 10{30} at index 1"),
    (lambda: sm.Recall(), np.array([1]), np.array([10**30], dtype=object), r"y_pred: labels must be 0 or 1"),
    (lambda: sm.Recall(), [10**30], [1], r"y_true: labels must be 0 or 1; first invalid value 10{30}"),
    (lambda: sm.Recall(ignore_index=-1), [10**30], [1], r"y_true: labels must be 0 or 1 \(or ignore_index=-1\)"),
    (lambda: sm.Recall(3, average="macro"), 1, 10**30,
     r"y_pred: class labels must be integers in \[0, 3\); first invalid value 10{30}"),
    (lambda: sm.Recall(3, average="macro"), [1], [2**64], r"y_pred: class labels must be integers in \[0, 3\)"),
    (lambda: sm.Recall(3, average="macro"), [1], [1e30], r"y_pred: labels must be integers in the int64 range"),
    (lambda: sm.Recall(2, multilabel=True, average="macro"), [[0, 1]], [[1, 10**30]],
     r"y_pred: labels must be 0 or 1; first invalid value 10{30} at index \(0, 1\)"),
    (lambda: sm.Recall(2, multilabel=True, average="samples"), [[0, 1]], [[1, 10**30]],
     r"y_pred: labels must be 0 or 1; first invalid value 10{30}"),
    (lambda: sm.MetricSet(r=sm.Recall(), p=sm.Precision()), [1], [10**30], r"y_pred: labels must be 0 or 1"),
    (lambda: sm.SelectionRate(), [1], [10**30], r"y_pred: labels must be 0 or 1"),
])
def test_huge_integer_labels_are_refused_and_the_state_kept(make, y, p, match) -> None:  # type: ignore[no-untyped-def]
    metric = make()
    for y0, p0 in (([1, 0], [1, 1]), ([[1, 0], [0, 1]], [[1, 1], [0, 1]])):  # some counts first
        with contextlib.suppress(ValueError):
            metric.update(y0, p0)
    before = metric.state_dict()
    with pytest.raises(ValueError, match=match):
        metric.update(y, p)
    after = metric.state_dict()
    assert before.keys() == after.keys()
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, after[key])


def test_floats_stay_scores_and_big_ints_within_int64_stay_labels() -> None:
    assert sm.Recall().update([1, 0], [0.7, 10**30]).compute() == 1.0  # a float batch: scores
    assert sm.Recall().update(1, 1e30).compute() == 1.0  # a float: a score
    with pytest.raises(ValueError, match="first invalid value 1099511627776 at index 0"):
        sm.Recall().update(1, 2**40)


def test_matthews_corrcoef_with_one_class_and_float_weights_is_zero_not_an_error() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):  # before: "math domain error" for about 4 % of these draws
        n = int(rng.integers(2, 6))
        w = rng.random(n) * 3
        p = rng.integers(0, 3, n)
        assert sm.MatthewsCorrCoef(3).update(np.ones(n, int), p, sample_weight=w).compute() == 0.0
        assert sm.MatthewsCorrCoef(3).update(p, np.ones(n, int), sample_weight=w).compute() == 0.0
