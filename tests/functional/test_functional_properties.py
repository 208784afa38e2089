"""Property tests: each one-shot function of streammetrics.functional equals its accumulator fed
the same rows in random batches spread over 2-3 workers, merged and saved/loaded (hypothesis).

This module: the confusion family (labels in, labels out), ``classification_report`` and the
fairness summaries. ``test_functional_properties_scores.py``: the functions of scores and
probabilities. The accumulators take the labels as users have them (``classes=``,
``pos_label=``, ``labels=``); only the one-hot columns fed to the multilabel confusion matrix are
built here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from functional_parity import TOL, assert_same, fed, quiet, rows, weights
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from laws import make_data, streamed

import streammetrics as sm
import streammetrics.functional as F

SETTINGS = settings(max_examples=25, deadline=None)
ALPHABET = ["ant", "bee", "cat", "dog"]
AVERAGES = ["micro", "macro", "weighted", None]


@st.composite
def labelled(draw: Any, alphabet: list[str] = ALPHABET) -> tuple[np.ndarray, np.ndarray, Any, int]:
    """(y_true, y_pred, weights, seed of the batching) with at least two labels in all."""
    n = draw(st.integers(1, 60))
    yt = np.array(draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n)))
    yp = np.array(draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n)))
    w = weights(draw, n)
    assume(np.unique(np.concatenate([yt, yp])).shape[0] >= 2 and (w is None or w.sum() > 0))
    return yt, yp, w, draw(st.integers(0, 2**32 - 1))


@SETTINGS
@given(labelled(), st.sampled_from(AVERAGES), st.sampled_from([None, "true", "pred", "all"]),
       st.sampled_from([None, "linear", "quadratic"]))
def test_f1_confusion_matrix_and_kappa_equal_streamed_accumulators(case: Any, average: Any, normalize: Any,
                                                                   kappa_weights: Any) -> None:
    yt, yp, w, seed = case
    classes = np.unique(np.concatenate([yt, yp]))
    k = classes.shape[0]
    f1 = fed(lambda: sm.F1(k, classes=classes, average=average, zero_division=0.0), yt, yp, w, seed)
    assert_same(F.f1_score(yt, yp, average=average, sample_weight=w, zero_division=0.0), f1.compute())
    cm = fed(lambda: sm.ConfusionMatrix(k, classes=classes, normalize=normalize), yt, yp, w, seed)
    ours = quiet(F.confusion_matrix, yt, yp, sample_weight=w, normalize=normalize)
    np.testing.assert_allclose(ours, quiet(cm.compute), **TOL)
    kappa = fed(lambda: sm.CohenKappa(k, classes=classes, weights=kappa_weights, zero_division=np.nan),
                yt, yp, w, seed)
    value = kappa.compute()
    if not np.isnan(value):
        assert_same(F.cohen_kappa_score(yt, yp, weights=kappa_weights, sample_weight=w), value)


SETWISE = {
    "precision_score": lambda **kw: sm.Precision(**kw),
    "recall_score": lambda **kw: sm.Recall(**kw),
    "fbeta_score": lambda **kw: sm.FBeta(beta=0.5, **kw),
    "jaccard_score": lambda **kw: sm.Jaccard(**kw),
}


def setwise_set(**kw: Any) -> sm.MetricSet:
    """Every set-wise accumulator with the same options (one shared count state), plus the
    confusion matrix of all classes that gives the support."""
    members = {name: make(zero_division=0.0, **kw) for name, make in SETWISE.items()}
    cm_kw = {k: v for k, v in kw.items() if k not in ("average", "pos_label", "labels")}
    return sm.MetricSet(**members, cm=sm.ConfusionMatrix(**cm_kw))


def check_setwise(ms: sm.MetricSet, yt: Any, yp: Any, w: Any, **kw: Any) -> None:
    """Each set-wise function and ``precision_recall_fscore_support`` equal the set's members
    (``kw``: ``average`` and ``labels`` for the functions; ``classes``, to find the support of
    ``labels``)."""
    args = {k: v for k, v in kw.items() if k != "classes"}
    for name in SETWISE:
        extra = {"beta": 0.5} if name == "fbeta_score" else {}
        ours = getattr(F, name)(yt, yp, sample_weight=w, zero_division=0.0, **extra, **args)
        assert_same(ours, ms[name].compute(), name)
    p, r, f, support = F.precision_recall_fscore_support(yt, yp, beta=0.5, sample_weight=w, zero_division=0.0,
                                                         **args)
    for ours, name in ((p, "precision_score"), (r, "recall_score"), (f, "fbeta_score")):
        assert_same(ours, ms[name].compute(), name)
    if kw.get("average") is not None:
        assert support is None
        return
    matrix = ms["cm"].compute()
    expected = matrix[:, 1, :].sum(axis=1) if matrix.ndim == 3 else matrix.sum(axis=1)
    if "labels" in kw:
        expected = expected[np.searchsorted(kw["classes"], kw["labels"])]
    np.testing.assert_allclose(support, expected, **TOL)
    assert support.dtype == (np.int64 if w is None else np.float64)


@SETTINGS
@given(labelled(), st.sampled_from(AVERAGES), st.data())
def test_setwise_scores_equal_streamed_accumulators(case: Any, average: Any, data: Any) -> None:
    """precision, recall, F-beta, Jaccard and precision_recall_fscore_support over the label
    union, and over a ``labels=`` subset (scikit-learn's meaning: the classes averaged)."""
    yt, yp, w, seed = case
    classes = np.unique(np.concatenate([yt, yp]))
    k = classes.shape[0]
    ms = fed(lambda: setwise_set(num_classes=k, classes=classes, average=average), yt, yp, w, seed)
    check_setwise(ms, yt, yp, w, average=average)
    subset = data.draw(st.lists(st.sampled_from(classes.tolist()), min_size=1, max_size=k, unique=True))
    ms = fed(lambda: setwise_set(num_classes=k, classes=classes, labels=subset, average=average), yt, yp, w, seed)
    check_setwise(ms, yt, yp, w, average=average, labels=subset, classes=classes)


@SETTINGS
@given(labelled(["neg", "pos"]), st.sampled_from(["neg", "pos"]))
def test_binary_average_equals_streamed_binary_accumulators(case: Any, pos_label: str) -> None:
    yt, yp, w, seed = case
    ms = fed(lambda: setwise_set(classes=["neg", "pos"], pos_label=pos_label), yt, yp, w, seed)
    for name in SETWISE:
        extra = {"beta": 0.5} if name == "fbeta_score" else {}
        ours = getattr(F, name)(yt, yp, pos_label=pos_label, sample_weight=w, zero_division=0.0, **extra)
        assert_same(ours, ms[name].compute(), name)
    assert_same(F.f1_score(yt, yp, pos_label=pos_label, sample_weight=w, zero_division=0.0),
                fed(lambda: sm.F1(classes=["neg", "pos"], pos_label=pos_label, zero_division=0.0),
                    yt, yp, w, seed).compute())


@SETTINGS
@given(labelled(), st.booleans())
def test_matrix_scores_equal_streamed_accumulators(case: Any, normalize: bool) -> None:
    """accuracy, zero-one loss, Hamming loss, balanced accuracy (plain and adjusted), MCC and the
    one-vs-rest matrices (fed to the multilabel accumulator as one-hot columns)."""
    yt, yp, w, seed = case
    classes = np.unique(np.concatenate([yt, yp]))
    k = classes.shape[0]
    total = len(yt) if w is None else w.sum()
    ms = fed(lambda: sm.MetricSet(
        acc=sm.Accuracy(k, classes=classes), err=sm.ErrorRate(k, classes=classes),
        ham=sm.HammingLoss(k, classes=classes), ba=sm.BalancedAccuracy(k, classes=classes),
        adj=sm.BalancedAccuracy(k, classes=classes, adjusted=True), mcc=sm.MatthewsCorrCoef(k, classes=classes),
    ), yt, yp, w, seed)
    value = quiet(ms.compute)
    scale = 1.0 if normalize else total
    assert_same(F.accuracy_score(yt, yp, normalize=normalize, sample_weight=w), float(value["acc"] * scale))
    np.testing.assert_allclose(F.zero_one_loss(yt, yp, normalize=normalize, sample_weight=w),
                               value["err"] * scale, **TOL)
    assert_same(F.hamming_loss(yt, yp, sample_weight=w), value["ham"])
    assert_same(F.matthews_corrcoef(yt, yp, sample_weight=w), value["mcc"])
    if not np.isnan(value["ba"]):
        assert_same(quiet(F.balanced_accuracy_score, yt, yp, sample_weight=w), value["ba"])
    present = np.unique(yt if w is None else yt[w > 0]).shape[0]
    if present >= 2:  # one class in y_true: chance is 1, scikit-learn divides by 0, the accumulator is nan
        np.testing.assert_allclose(quiet(F.balanced_accuracy_score, yt, yp, sample_weight=w, adjusted=True),
                                   value["adj"], **TOL)
    onehot = np.arange(k)
    ovr = streamed(lambda: sm.ConfusionMatrix(k, multilabel=True),
                   rows(np.searchsorted(classes, yt)[:, None] == onehot, np.searchsorted(classes, yp)[:, None] == onehot),
                   w, np.random.default_rng(seed))
    np.testing.assert_allclose(F.multilabel_confusion_matrix(yt, yp, sample_weight=w), ovr.compute(), **TOL)


@SETTINGS
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from(AVERAGES + ["samples"]))
def test_indicator_targets_equal_streamed_multilabel_accumulators(n: int, seed: int, weighted: bool,
                                                                  average: Any) -> None:
    rng = np.random.default_rng(seed)
    d = make_data("multilabel_labels", rng, n)
    yt, yp, L = d.y, d.p, d.y.shape[1]
    w = rng.integers(0, 4, n) * 0.75 if weighted else None
    assume(w is None or w.sum() > 0)
    ms = streamed(lambda: sm.MetricSet(
        subset=sm.Accuracy(L, multilabel=True), err=sm.ErrorRate(L, multilabel=True),
        ham=sm.HammingLoss(L, multilabel=True), cm=sm.ConfusionMatrix(L, multilabel=True),
        **{name: make(num_classes=L, multilabel=True, average=average, zero_division=0.0)
           for name, make in SETWISE.items()},
    ), d, w, rng)
    value = quiet(ms.compute)
    assert_same(F.accuracy_score(yt, yp, sample_weight=w), value["subset"])
    assert_same(F.zero_one_loss(yt, yp, sample_weight=w), value["err"])
    np.testing.assert_allclose(F.hamming_loss(yt, yp, sample_weight=w), value["ham"], **TOL)
    np.testing.assert_allclose(F.multilabel_confusion_matrix(yt, yp, sample_weight=w), value["cm"], **TOL)
    for name in SETWISE:
        extra = {"beta": 0.5} if name == "fbeta_score" else {}
        ours = getattr(F, name)(yt, yp, average=average, sample_weight=w, zero_division=0.0, **extra)
        assert_same(ours, value[name], name)


@SETTINGS
@given(labelled(), st.integers(1, 5))
def test_classification_report_equals_streamed_report(case: Any, digits: int) -> None:
    """The dict and every number of the text table equal a streamed ClassificationReport."""
    yt, yp, w, seed = case
    classes = np.unique(np.concatenate([yt, yp]))
    acc = fed(lambda: sm.ClassificationReport(classes.shape[0], classes=classes, zero_division=0.0),
              yt, yp, w, seed).compute()
    ours = F.classification_report(yt, yp, sample_weight=w, output_dict=True, zero_division=0.0)
    rename = {"precision": "precision", "recall": "recall", "f1-score": "f1", "support": "support"}
    expected: dict[str, Any] = {
        row: {ours_name: acc[row][name] for ours_name, name in rename.items()}
        for row in [*(str(c) for c in classes), "macro avg", "weighted avg"]
    }
    expected["accuracy"] = acc["accuracy"]
    assert sorted(ours) == sorted(expected)
    for row, entry in expected.items():
        if isinstance(entry, dict):
            assert list(ours[row]) == list(entry), row
            for name in entry:
                np.testing.assert_allclose(ours[row][name], entry[name], **TOL, err_msg=f"{row} {name}")
        else:
            np.testing.assert_allclose(ours[row], entry, **TOL)
    text = F.classification_report(yt, yp, sample_weight=w, digits=digits, zero_division=0.0)
    shown_rows = [line.strip() for line in text.splitlines()[1:] if line.strip()]
    assert len(shown_rows) == len(expected)
    for line in shown_rows:
        row = next(r for r in expected if line.startswith(r + " "))
        cells = line[len(row):].split()
        numbers = [expected[row], float(len(yt) if w is None else w.sum())] if row == "accuracy" \
            else [expected[row][c] for c in rename]
        assert len(cells) == len(numbers), line
        for cell, number in zip(cells[:-1], numbers[:-1], strict=True):
            assert cell == f"{number:.{digits}f}", (line, number)
        np.testing.assert_allclose(float(cells[-1]), numbers[-1], **TOL)  # the support, as repr


def sliced_by(groups: np.ndarray) -> Any:
    """A feed that gives each row its sensitive group (kept with the row in any split)."""

    def feed_rows(metric: Any, y: Any, p: Any, w: Any, rows: np.ndarray, _: Any) -> None:
        metric.update(y, p, slices=groups[rows], sample_weight=w)

    return feed_rows


@SETTINGS
@given(st.integers(1, 60), st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from(["between_groups", "to_overall"]))
def test_fairness_summaries_equal_streamed_sliced_accumulators(n: int, seed: int, weighted: bool, method: str) -> None:
    rng = np.random.default_rng(seed)
    d = make_data("binary_labels", rng, n)
    groups = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    w = rng.integers(0, 4, n) * 0.5 if weighted else None
    assume(w is None or w.sum() > 0)
    kw = {"sensitive_features": groups, "method": method, "sample_weight": w}
    sel = streamed(lambda: sm.Sliced(sm.SelectionRate(zero_division=0.0)), d, w, rng, sliced_by(groups))
    assert_same(F.demographic_parity_difference(d.y, d.p, **kw), float(sel.difference(method=method)))
    assert_same(F.demographic_parity_ratio(d.y, d.p, **kw), float(sel.ratio(method=method)))
    rates = streamed(lambda: sm.Sliced(sm.MetricSet(tpr=sm.Recall(zero_division=0.0),
                                                    fpr=sm.FallOut(zero_division=0.0))),
                     d, w, rng, sliced_by(groups))
    diff, ratio = rates.difference(method=method), rates.ratio(method=method)
    pair_d, pair_r = [float(diff["tpr"]), float(diff["fpr"])], [float(ratio["tpr"]), float(ratio["fpr"])]
    assert_same(F.equalized_odds_difference(d.y, d.p, **kw), max(pair_d))
    assert_same(F.equalized_odds_ratio(d.y, d.p, **kw), min(pair_r))
    assert_same(F.equalized_odds_difference(d.y, d.p, agg="mean", **kw), float(np.mean(pair_d)))
    assert_same(F.equalized_odds_ratio(d.y, d.p, agg="mean", **kw), float(np.mean(pair_r)))
