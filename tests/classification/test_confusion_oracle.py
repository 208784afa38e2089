"""Every confusion metric against scikit-learn (or a brute-force oracle where it has none).

Random data with weights, ties at the threshold, missing classes, every task and every average,
streamed in several batches; agreement to 1e-12 relative.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import quiet_compute
from sklearn import metrics as skm

import streammetrics as sm

RTOL = 1e-12


def close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=RTOL, atol=RTOL)


def stream(metric, y, p, w=None, parts=4):
    """Feed (y, p, w) to ``metric`` in ``parts`` uneven batches."""
    n = len(y)
    cuts = sorted({0, n, *np.random.default_rng(n).integers(0, n + 1, parts - 1).tolist()})
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        metric.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
    return metric


# ---------------------------------------------------------------------- data generators
def binary_data(rng, n=500, weighted=False):
    y = rng.integers(0, 2, n)
    # Scores on a coarse grid so many land exactly on the threshold 0.5.
    s = np.round(rng.random(n) * 10) / 10
    w = rng.random(n) * 3 if weighted else None
    return y, s, w


def multiclass_data(rng, n=600, c=5, weighted=False, missing=True):
    classes = np.arange(c - 1) if missing else np.arange(c)  # class c-1 never occurs in y_true
    y = rng.choice(classes, n)
    scores = np.round(rng.random((n, c)) * 4) / 4  # many argmax ties (first index wins)
    w = rng.random(n) * 2 if weighted else None
    return y, scores, w


def multilabel_data(rng, n=400, labels=4, weighted=False):
    y = rng.integers(0, 2, (n, labels))
    y[:, -1] = 0  # a label with no positives
    s = np.round(rng.random((n, labels)) * 10) / 10
    w = rng.random(n) * 2 if weighted else None
    return y, s, w


def sk_multiclass_pred(scores):
    return np.argmax(scores, axis=1)


# ---------------------------------------------------------------------- P/R/F/Jaccard family
PRF = {
    "precision": (sm.Precision, lambda yt, yp, **kw: skm.precision_score(yt, yp, **kw)),
    "recall": (sm.Recall, lambda yt, yp, **kw: skm.recall_score(yt, yp, **kw)),
    "f1": (sm.F1, lambda yt, yp, **kw: skm.f1_score(yt, yp, **kw)),
    "f2": (lambda *a, **k: sm.FBeta(*a, beta=2.0, **k), lambda yt, yp, **kw: skm.fbeta_score(yt, yp, beta=2.0, **kw)),
    "f0.5": (lambda *a, **k: sm.FBeta(*a, beta=0.5, **k), lambda yt, yp, **kw: skm.fbeta_score(yt, yp, beta=0.5, **kw)),
    "f0": (lambda *a, **k: sm.FBeta(*a, beta=0.0, **k), lambda yt, yp, **kw: skm.fbeta_score(yt, yp, beta=0.0, **kw)),
    "jaccard": (sm.Jaccard, lambda yt, yp, **kw: skm.jaccard_score(yt, yp, **kw)),
}
ZERO_DIVISIONS = [0.0, 1.0, np.nan]


def jaccard_nan_oracle(yt, yp, labels=(0, 1), average="binary", sample_weight=None, zero_division=np.nan):
    """Jaccard with zero_division=nan, written out: per class TP/(TP+FP+FN) by explicit sums;
    averages as scikit-learn's jaccard_score (macro/weighted do not skip nan classes)."""
    w = np.ones(len(yt)) if sample_weight is None else np.asarray(sample_weight)
    labels = [1] if average == "binary" else list(labels)
    tp = np.array([w[(yt == c) & (yp == c)].sum() for c in labels])
    fp = np.array([w[(yt != c) & (yp == c)].sum() for c in labels])
    fn = np.array([w[(yt == c) & (yp != c)].sum() for c in labels])
    if average == "micro":
        tp, fp, fn = tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True)
    den = tp + fp + fn
    values = np.where(den > 0, tp / np.where(den > 0, den, 1), np.nan)
    if average in ("binary", "micro"):
        return values[0]
    if average is None:
        return values
    support = tp + fn
    if average == "weighted" and support.sum() > 0:
        return np.average(values, weights=support)
    return np.mean(values)


@pytest.mark.parametrize("name", list(PRF))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("zero_division", ZERO_DIVISIONS)
def test_prf_binary(name, weighted, zero_division):
    ours_cls, theirs = PRF[name]
    if name == "jaccard" and np.isnan(zero_division):
        theirs = jaccard_nan_oracle  # scikit-learn's jaccard_score refuses zero_division=nan
    rng = np.random.default_rng(1)
    y, s, w = binary_data(rng, weighted=weighted)
    m = stream(ours_cls(zero_division=zero_division), y, s, w)
    expected = theirs(y, (s >= 0.5).astype(int), sample_weight=w, zero_division=zero_division)
    close(m.compute(), expected)


@pytest.mark.parametrize("name", list(PRF))
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", None])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("zero_division", ZERO_DIVISIONS)
def test_prf_multiclass(name, average, weighted, zero_division):
    ours_cls, theirs = PRF[name]
    if name == "jaccard" and np.isnan(zero_division):
        theirs = jaccard_nan_oracle  # scikit-learn's jaccard_score refuses zero_division=nan
    rng = np.random.default_rng(2)
    y, scores, w = multiclass_data(rng, weighted=weighted)
    m = stream(ours_cls(5, average=average, zero_division=zero_division), y, scores, w)
    expected = theirs(y, sk_multiclass_pred(scores), labels=range(5), average=average,
                      sample_weight=w, zero_division=zero_division)
    close(quiet_compute(m), expected)


@pytest.mark.parametrize("name", list(PRF))
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", None])
@pytest.mark.parametrize("weighted", [False, True])
def test_prf_multilabel(name, average, weighted):
    ours_cls, theirs = PRF[name]
    rng = np.random.default_rng(3)
    y, s, w = multilabel_data(rng, weighted=weighted)
    m = stream(ours_cls(4, multilabel=True, average=average, zero_division=0.0), y, s, w)
    expected = theirs(y, (s >= 0.5).astype(int), average=average, sample_weight=w, zero_division=0.0)
    close(m.compute(), expected)


def test_multiclass_label_predictions_equal_argmax_of_scores():
    rng = np.random.default_rng(4)
    y, scores, _ = multiclass_data(rng)
    a = sm.F1(5, average="macro", zero_division=0.0).update(y, scores)
    b = sm.F1(5, average="macro", zero_division=0.0).update(y, np.argmax(scores, axis=1))
    assert a.compute() == b.compute()


# ---------------------------------------------------------------------- one-vs-rest rates
def brute_ovr(y, pred, w, classes, num, den):
    """Per-class num/den by explicit loops over samples (the obvious definition)."""
    out = []
    for c in classes:
        t = f = 0.0
        for yi, pi, wi in zip(y, pred, w, strict=True):
            cell = {"tp": yi == c and pi == c, "fp": yi != c and pi == c,
                    "fn": yi == c and pi != c, "tn": yi != c and pi != c}
            t += wi * sum(cell[k] for k in num)
            f += wi * sum(cell[k] for k in den)
        out.append((t, f))
    return out


RATES = {
    sm.Specificity: (("tn",), ("tn", "fp")),
    sm.FallOut: (("fp",), ("fp", "tn")),
    sm.MissRate: (("fn",), ("fn", "tp")),
    sm.NPV: (("tn",), ("tn", "fn")),
    sm.FDR: (("fp",), ("fp", "tp")),
    sm.FOR: (("fn",), ("fn", "tn")),
    sm.Prevalence: (("tp", "fn"), ("tp", "fp", "fn", "tn")),
    sm.Precision: (("tp",), ("tp", "fp")),
    sm.Recall: (("tp",), ("tp", "fn")),
}


@pytest.mark.parametrize("cls", list(RATES), ids=lambda c: c.__name__)
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", None])
@pytest.mark.parametrize("zero_division", [0.0, np.nan])
def test_rates_multiclass_brute_force(cls, average, zero_division):
    rng = np.random.default_rng(5)
    y, scores, w = multiclass_data(rng, n=200, c=4, weighted=True)
    pred = np.argmax(scores, axis=1)
    num, den = RATES[cls]
    per = brute_ovr(y, pred, w, range(4), num, den)
    values = np.array([t / f if f else zero_division for t, f in per])
    support = np.array([sum(wi for yi, wi in zip(y, w, strict=True) if yi == c) for c in range(4)])
    if average is None:
        expected = values
    elif average == "micro":
        t, f = sum(t for t, _ in per), sum(f for _, f in per)
        expected = t / f if f else zero_division
    else:
        keep = ~np.isnan(values)
        weights = support[keep] if average == "weighted" and support[keep].any() else None
        expected = np.average(values[keep], weights=weights) if keep.any() else np.nan
    m = stream(cls(4, average=average, zero_division=zero_division), y, scores, w)
    close(m.compute(), expected)


@pytest.mark.parametrize("cls", list(RATES), ids=lambda c: c.__name__)
def test_rates_binary_brute_force(cls):
    rng = np.random.default_rng(6)
    y, s, w = binary_data(rng, n=300, weighted=True)
    num, den = RATES[cls]
    ((t, f),) = brute_ovr(y, (s >= 0.5).astype(int), w, [1], num, den)
    close(stream(cls(), y, s, w).compute(), t / f)


def test_rates_multilabel_against_multilabel_confusion_matrix():
    rng = np.random.default_rng(7)
    y, s, w = multilabel_data(rng, weighted=True)
    mcm = skm.multilabel_confusion_matrix(y, (s >= 0.5).astype(int), sample_weight=w)
    tn, fp, fn, tp = mcm[:, 0, 0], mcm[:, 0, 1], mcm[:, 1, 0], mcm[:, 1, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = {sm.Specificity: tn / (tn + fp), sm.NPV: tn / (tn + fn), sm.FOR: fn / (fn + tn),
                    sm.MissRate: fn / (fn + tp), sm.Prevalence: (tp + fn) / (tp + fp + fn + tn)}
    for cls, values in expected.items():
        m = stream(cls(4, multilabel=True, average=None, zero_division=np.nan), y, s, w)
        close(m.compute(), values)


# ---------------------------------------------------------------------- accuracy and friends
@pytest.mark.parametrize("weighted", [False, True])
def test_accuracy_error_rate_all_tasks(weighted):
    rng = np.random.default_rng(8)
    y, s, w = binary_data(rng, weighted=weighted)
    close(stream(sm.Accuracy(), y, s, w).compute(), skm.accuracy_score(y, s >= 0.5, sample_weight=w))
    close(stream(sm.ErrorRate(), y, s, w).compute(), 1 - skm.accuracy_score(y, s >= 0.5, sample_weight=w))
    y, scores, w = multiclass_data(rng, weighted=weighted)
    pred = sk_multiclass_pred(scores)
    close(stream(sm.Accuracy(5), y, scores, w).compute(), skm.accuracy_score(y, pred, sample_weight=w))
    close(stream(sm.HammingLoss(5), y, scores, w).compute(), skm.hamming_loss(y, pred, sample_weight=w))
    y, s, w = multilabel_data(rng, weighted=weighted)
    pred = (s >= 0.5).astype(int)
    close(stream(sm.Accuracy(4, multilabel=True), y, s, w).compute(),
          skm.accuracy_score(y, pred, sample_weight=w))
    close(stream(sm.HammingLoss(4, multilabel=True), y, s, w).compute(),
          skm.hamming_loss(y, pred, sample_weight=w))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("adjusted", [False, True])
def test_balanced_accuracy(weighted, adjusted):
    rng = np.random.default_rng(9)
    y, s, w = binary_data(rng, weighted=weighted)
    close(stream(sm.BalancedAccuracy(adjusted=adjusted), y, s, w).compute(),
          skm.balanced_accuracy_score(y, s >= 0.5, sample_weight=w, adjusted=adjusted))
    y, scores, w = multiclass_data(rng, weighted=weighted, missing=False)
    pred = sk_multiclass_pred(scores)
    close(stream(sm.BalancedAccuracy(5, adjusted=adjusted), y, scores, w).compute(),
          skm.balanced_accuracy_score(y, pred, sample_weight=w, adjusted=adjusted))


def test_balanced_accuracy_skips_classes_absent_from_y_true():
    y = np.array([0, 0, 1, 1])
    pred = np.array([0, 2, 1, 2])  # class 2 predicted, never true
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = skm.balanced_accuracy_score(y, pred)
    close(sm.BalancedAccuracy(3).update(y, pred).compute(), expected)


def test_weighted_accuracy_is_weighted_recall():
    rng = np.random.default_rng(10)
    y, scores, w = multiclass_data(rng, weighted=True, missing=False)
    weights = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    recalls = skm.recall_score(y, sk_multiclass_pred(scores), average=None, sample_weight=w)
    close(stream(sm.WeightedAccuracy(5, weights=weights), y, scores, w).compute(), weights @ recalls)
    # uniform weights = balanced accuracy when every class occurs
    close(stream(sm.WeightedAccuracy(5), y, scores, w).compute(),
          skm.balanced_accuracy_score(y, sk_multiclass_pred(scores), sample_weight=w))
    # binary A_{2,w} = w1 TPR + w0 TNR
    y, s, w = binary_data(rng, weighted=True)
    tpr = skm.recall_score(y, s >= 0.5, sample_weight=w)
    tnr = skm.recall_score(1 - y, s < 0.5, sample_weight=w)
    close(stream(sm.WeightedAccuracy(weights=[0.3, 0.7]), y, s, w).compute(), 0.7 * tpr + 0.3 * tnr)


@pytest.mark.parametrize("weighted", [False, True])
def test_mcc_and_kappa(weighted):
    rng = np.random.default_rng(11)
    y, s, w = binary_data(rng, weighted=weighted)
    close(stream(sm.MatthewsCorrCoef(), y, s, w).compute(),
          skm.matthews_corrcoef(y, s >= 0.5, sample_weight=w))
    close(stream(sm.CohenKappa(), y, s, w).compute(), skm.cohen_kappa_score(y, s >= 0.5, sample_weight=w))
    y, scores, w = multiclass_data(rng, weighted=weighted, missing=False)
    pred = sk_multiclass_pred(scores)
    close(stream(sm.MatthewsCorrCoef(5), y, scores, w).compute(),
          skm.matthews_corrcoef(y, pred, sample_weight=w))
    for kw in (None, "linear", "quadratic"):
        close(stream(sm.CohenKappa(5, weights=kw), y, scores, w).compute(),
              skm.cohen_kappa_score(y, pred, weights=kw, sample_weight=w))


def test_mcc_degenerate_is_zero_like_sklearn():
    y = np.array([1, 1, 1])
    assert sm.MatthewsCorrCoef().update(y, y).compute() == skm.matthews_corrcoef(y, y) == 0.0


def test_multilabel_only_metrics_reject_multilabel():
    for cls in (sm.MatthewsCorrCoef, sm.CohenKappa, sm.BalancedAccuracy, sm.WeightedAccuracy):
        with pytest.raises(ValueError, match="multilabel"):
            cls(3, multilabel=True)


@pytest.mark.parametrize("normalize", [None, "true", "pred", "all"])
def test_confusion_matrix(normalize):
    rng = np.random.default_rng(12)
    y, scores, w = multiclass_data(rng, weighted=True)
    expected = skm.confusion_matrix(y, sk_multiclass_pred(scores), labels=range(5), sample_weight=w,
                                    normalize=normalize)
    close(stream(sm.ConfusionMatrix(5, normalize=normalize), y, scores, w).compute(), expected)
    y, s, w = binary_data(rng, weighted=True)
    close(stream(sm.ConfusionMatrix(), y, s, w).compute(),
          skm.confusion_matrix(y, s >= 0.5, labels=[0, 1], sample_weight=w))
    y, s, w = multilabel_data(rng, weighted=True)
    close(stream(sm.ConfusionMatrix(4, multilabel=True), y, s, w).compute(),
          skm.multilabel_confusion_matrix(y, (s >= 0.5).astype(int), sample_weight=w))


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_top_k_accuracy_with_ties(k, weighted):
    rng = np.random.default_rng(13)
    y, scores, w = multiclass_data(rng, weighted=weighted, missing=False)
    expected = skm.top_k_accuracy_score(y, scores, k=k, labels=range(5), sample_weight=w)
    close(stream(sm.TopKAccuracy(5, k=k), y, scores, w).compute(), expected)


def test_threshold_ties_count_as_positive():
    y = np.array([1, 0, 1, 0])
    s = np.array([0.3, 0.3, 0.29, 0.31])
    m = sm.ConfusionMatrix(threshold=0.3).update(y, s)
    # predicted positive iff score >= threshold
    close(m.compute(), [[0, 2], [1, 1]])


def test_ignore_index_skips_rows():
    y = np.array([0, 1, -1, 1, 2, -1])
    p = np.array([0, 1, 2, 0, 2, 1])
    m = sm.Accuracy(3, ignore_index=-1).update(y, p)
    close(m.compute(), 3 / 4)
    yb = np.array([1, 255, 0, 1])
    pb = np.array([0.9, 0.1, 0.2, 0.4])
    close(sm.Recall(ignore_index=255).update(yb, pb).compute(), 0.5)


def test_ignore_index_multilabel_skips_entries():
    y = np.array([[1, -1], [0, 1], [-1, -1]])
    p = np.array([[1, 0], [0, 0], [1, 1]])
    m = sm.ConfusionMatrix(2, multilabel=True, ignore_index=-1).update(y, p)
    close(m.compute(), [[[1, 0], [0, 1]], [[0, 0], [1, 0]]])
    # subset accuracy over the non-ignored labels of rows that have any
    close(sm.Accuracy(2, multilabel=True, ignore_index=-1).update(y, p).compute(), 0.5)


def test_zero_division_warn_gives_zero_and_one_warning_naming_classes():
    y = np.array([0, 0, 1])
    p = np.array([0, 0, 0])
    m = sm.Precision(3, average="macro").update(y, p)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = m.compute()
    undefined = [w for w in caught if issubclass(w.category, sm.UndefinedMetricWarning)]
    assert len(undefined) == 1
    assert "[1, 2]" in str(undefined[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = skm.precision_score(y, p, labels=range(3), average="macro")
    close(value, expected)


def test_empty_accumulator_follows_zero_division():
    with pytest.warns(sm.UndefinedMetricWarning):
        assert sm.Accuracy().compute() == 0.0
    assert np.isnan(sm.Recall(zero_division=np.nan).compute())
    assert sm.Precision(zero_division=1.0).compute() == 1.0


def test_classification_report_matches_sklearn():
    rng = np.random.default_rng(14)
    y, scores, w = multiclass_data(rng, weighted=True)
    pred = sk_multiclass_pred(scores)
    rep = stream(sm.ClassificationReport(5, zero_division=0.0), y, scores, w).compute()
    expected = skm.classification_report(y, pred, labels=range(5), sample_weight=w, output_dict=True,
                                         zero_division=0.0)
    for c in range(5):
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score"),
                             ("support", "support")):
            close(rep[str(c)][ours], expected[str(c)][theirs])
    for row in ("macro avg", "weighted avg"):
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            close(rep[row][ours], expected[row][theirs])
    close(rep["accuracy"], skm.accuracy_score(y, pred, sample_weight=w))
    table = str(rep)
    assert "macro avg" in table and "specificity" in table and len(table.splitlines()) == 11


def test_binary_report_has_both_classes():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0, 1, 0, 0, 1])
    rep = sm.ClassificationReport().update(y, p).compute()
    expected = skm.classification_report(y, p, output_dict=True)
    for c in ("0", "1"):
        close(rep[c]["precision"], expected[c]["precision"])
        close(rep[c]["recall"], expected[c]["recall"])


def test_adjusted_balanced_accuracy_with_one_class_is_nan_like_sklearn() -> None:
    # scikit-learn divides 0 by 0 (nan); the accumulator used to raise ZeroDivisionError.
    with pytest.warns(sm.UndefinedMetricWarning, match="only one class"):
        assert np.isnan(sm.BalancedAccuracy(adjusted=True).update([1, 1], [1, 0]).compute())
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.BalancedAccuracy(3, adjusted=True).update([2, 2], [2, 1]).compute())
