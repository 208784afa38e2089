"""Estimated(metric) equals scikit-learn on the duplicated, weighted rows (CBPE's definition),
for binary and multiclass, confusion and ranking metrics, after any batch split, a merge of any
partition and a save / load round trip."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import streammetrics as sm
from streammetrics.monitoring import Estimated

C = 3


def probabilities(rng: np.random.Generator, n: int, multiclass: bool) -> np.ndarray:
    """Probabilities with ties (a few levels), 0 and 1 included."""
    levels = int(rng.integers(1, 9))
    if not multiclass:
        return rng.integers(0, levels + 1, n) / levels
    q = rng.integers(0, levels, (n, C)).astype(float) + np.eye(C)[rng.integers(0, C, n)]
    return q / q.sum(axis=1, keepdims=True)


def duplicated(p: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The oracle's rows: each row once per class, weighted by w·P(class)."""
    probs = np.stack([1 - p, p], axis=1) if p.ndim == 1 else p
    k = probs.shape[1]
    rw = probs if w is None else probs * w[:, None]
    rw = np.where(rw < 2.0 ** -128, 0.0, rw)
    return np.tile(np.arange(k), len(p)), np.repeat(p, k, axis=0), rw.reshape(-1)


def oracle(p: np.ndarray, w: np.ndarray | None) -> dict[str, object]:
    y, s, rw = duplicated(p, w)
    if p.ndim == 1:
        pred = (s >= 0.5).astype(int)
        return {
            "acc": skm.accuracy_score(y, pred, sample_weight=rw),
            "prec": skm.precision_score(y, pred, sample_weight=rw, zero_division=0.0),
            "rec": skm.recall_score(y, pred, sample_weight=rw, zero_division=0.0),
            "f1": skm.f1_score(y, pred, sample_weight=rw, zero_division=0.0),
            "mcc": skm.matthews_corrcoef(y, pred, sample_weight=rw),
            "cm": skm.confusion_matrix(y, pred, labels=[0, 1], sample_weight=rw),
            "auroc": skm.roc_auc_score(y, s, sample_weight=rw),
            "ap": skm.average_precision_score(y, s, sample_weight=rw),
        }
    pred = np.argmax(s, axis=1)
    labels = list(range(C))
    onehot = np.eye(C)[y]
    return {
        "acc": skm.accuracy_score(y, pred, sample_weight=rw),
        "f1_macro": skm.f1_score(y, pred, labels=labels, average="macro", sample_weight=rw, zero_division=0.0),
        "rec_none": skm.recall_score(y, pred, labels=labels, average=None, sample_weight=rw, zero_division=0.0),
        "bal": skm.balanced_accuracy_score(y, pred, sample_weight=rw),
        "cm": skm.confusion_matrix(y, pred, labels=labels, sample_weight=rw),
        "auroc": skm.roc_auc_score(y, s, sample_weight=rw, multi_class="ovr", average="macro", labels=labels),
        "auroc_w": skm.roc_auc_score(y, s, sample_weight=rw, multi_class="ovr", average="weighted", labels=labels),
        "ap_micro": skm.average_precision_score(onehot, s, sample_weight=rw, average="micro"),
    }


def metric_set(multiclass: bool) -> sm.MetricSet:
    z = {"zero_division": 0.0}
    if not multiclass:
        return sm.MetricSet(acc=sm.Accuracy(**z), prec=sm.Precision(**z), rec=sm.Recall(**z), f1=sm.F1(**z),
                            mcc=sm.MatthewsCorrCoef(), cm=sm.ConfusionMatrix(), auroc=sm.AUROC(),
                            ap=sm.AveragePrecision())
    return sm.MetricSet(acc=sm.Accuracy(C, **z), f1_macro=sm.F1(C, average="macro", **z),
                        rec_none=sm.Recall(C, average=None, **z), bal=sm.BalancedAccuracy(C, **z),
                        cm=sm.ConfusionMatrix(C), auroc=sm.AUROC(C), auroc_w=sm.AUROC(C, average="weighted"),
                        ap_micro=sm.AveragePrecision(C, average="micro"))


def assert_matches(got: dict[str, object], want: dict[str, object]) -> None:
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k], float), np.asarray(want[k], float), rtol=1e-12,
                                   atol=1e-12, err_msg=k)


@pytest.mark.parametrize("multiclass", [False, True])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), weighted=st.booleans(), data=st.data())
def test_estimated_equals_sklearn_on_the_duplicated_rows(multiclass, seed, n, weighted, data):
    rng = np.random.default_rng(seed)
    p = probabilities(rng, n, multiclass)
    w = rng.integers(0, 4, n) * rng.random(n) if weighted else None
    if p.ndim == 1 and not (0 < p.mean() < 1):
        p[0] = 0.5  # both classes carry weight: every oracle value is defined
    y, _, rw = duplicated(p, w)
    if len(np.unique(y[rw > 0])) < (C if multiclass else 2):
        return  # an oracle value is undefined (a class without weight): nothing to compare
    want = oracle(p, w)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    parts = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # any batch split
        est = Estimated(metric_set(multiclass))
        for a, b in zip([0, *cuts], [*cuts, n], strict=True):
            est.update(p[a:b], sample_weight=None if w is None else w[a:b])
        assert_matches(est.compute(), want)
        # any partition merged, then saved and loaded
        shards = []
        for k in range(3):
            rows = np.flatnonzero(np.asarray(parts) == k)
            shards.append(Estimated(metric_set(multiclass)).update(
                p[rows], sample_weight=None if w is None else w[rows]))
        merged = shards[0].merge(*shards[1:])
        assert_matches(merged.compute(), want)
        loaded = sm.loads(sm.dumps(merged))
        assert isinstance(loaded, Estimated)
        assert_matches(loaded.compute(), want)


def test_single_metrics_and_the_per_sample_path_equal_sklearn():
    rng = np.random.default_rng(7)
    p = rng.random(50)
    y, s, rw = duplicated(p, None)
    auroc = Estimated(sm.AUROC())
    for x in p.tolist():
        auroc.update(x)  # a Python float is one row
    assert auroc.compute() == pytest.approx(skm.roc_auc_score(y, s, sample_weight=rw), rel=1e-12)
    ap = Estimated(sm.AveragePrecision()).update(p)
    assert ap.compute() == pytest.approx(skm.average_precision_score(y, s, sample_weight=rw), rel=1e-12)
    f1 = Estimated(sm.F1(threshold=0.3)).update(p)
    assert f1.compute() == pytest.approx(skm.f1_score(y, (s >= 0.3).astype(int), sample_weight=rw), rel=1e-12)


def test_binary_accuracy_is_the_mean_probability_of_the_predicted_class():
    """CBPE's expected accuracy: Σ w·max(p, 1 − p) / Σ w at threshold 0.5 (a closed form)."""
    rng = np.random.default_rng(3)
    p, w = rng.random(200), rng.random(200) + 0.5
    q = np.where(p >= 0.5, p, 1 - p)
    est = Estimated(sm.Accuracy()).update(p, sample_weight=w)
    assert est.compute() == pytest.approx(float(np.sum(w * q) / np.sum(w)), rel=1e-12)


def test_top_k_accuracy_and_the_score_buffer_metrics():
    rng = np.random.default_rng(11)
    q = rng.dirichlet([1, 2, 3], 80)
    y, s, rw = duplicated(q, None)
    est = Estimated(sm.TopKAccuracy(C, k=2)).update(q)
    want = skm.top_k_accuracy_score(y, s, k=2, labels=list(range(C)), sample_weight=rw)
    assert est.compute() == pytest.approx(want, rel=1e-12)
    p = rng.random(80)
    y, s, rw = duplicated(p, None)
    ks = Estimated(sm.KSStatistic()).update(p).compute()
    fpr, tpr, _ = skm.roc_curve(y, s, sample_weight=rw)
    assert ks == pytest.approx(float(np.max(tpr - fpr)), rel=1e-12)


def test_calibration_metrics_are_refused():
    for metric in (sm.CalibrationError(), sm.LogLoss(), sm.BrierScore(), sm.CalibrationCurve(4)):
        with pytest.raises(ValueError, match="measure it on labelled data"):
            Estimated(metric)
