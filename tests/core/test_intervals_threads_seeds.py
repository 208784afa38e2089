"""Wilson intervals, thread safety, and the source documents' worked examples."""

from __future__ import annotations

import math
import threading
from statistics import NormalDist

import numpy as np
import pytest

import streammetrics as sm


def wilson_reference(x: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson (1927) written out directly from the textbook formula."""
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = x / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return center - half, center + half


# ---------------------------------------------------------------------------- intervals
def test_wilson_known_values():
    # 0 successes out of 10 at 95%: the classic upper limit 0.2775
    low, high = sm.Recall().update([1] * 10, [0] * 10).interval()
    assert low == pytest.approx(0.0, abs=1e-15)
    assert high == pytest.approx(0.27753, abs=5e-5)


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_wilson_for_each_rate(confidence):
    y = np.array([1] * 30 + [0] * 50)
    p = np.array([1] * 21 + [0] * 9 + [1] * 5 + [0] * 45)  # TP 21, FN 9, FP 5, TN 45
    cases = {sm.Recall: (21, 30), sm.Specificity: (45, 50), sm.Precision: (21, 26), sm.NPV: (45, 54),
             sm.FallOut: (5, 50), sm.MissRate: (9, 30), sm.FDR: (5, 26), sm.FOR: (9, 54),
             sm.Prevalence: (30, 80), sm.Accuracy: (66, 80), sm.ErrorRate: (14, 80)}
    for cls, (x, n) in cases.items():
        got = cls().update(y, p).interval(confidence)
        np.testing.assert_allclose(got, wilson_reference(x, n, confidence), rtol=1e-12)


def test_weighted_wilson_uses_effective_sample_size():
    y = np.array([1, 1, 1, 0])
    p = np.array([1, 0, 1, 0])
    w = np.array([1.0, 2.0, 3.0, 5.0])
    x, total, total2 = 4.0, 6.0, 14.0  # recall = (1 + 3) / 6, n_eff = 36 / 14
    n_eff = total**2 / total2
    got = sm.Recall().update(y, p, sample_weight=w).interval()
    np.testing.assert_allclose(got, wilson_reference(x / total * n_eff, n_eff), rtol=1e-12)
    # unit weights: n_eff = n
    np.testing.assert_allclose(sm.Recall().update(y, p, sample_weight=np.ones(4)).interval(),
                               sm.Recall().update(y, p).interval(), rtol=1e-15)


def test_interval_per_class_micro_and_errors():
    y = np.array([0, 0, 1, 1, 2, 2, 2])
    p = np.array([0, 1, 1, 1, 2, 0, 2])
    low, high = sm.Recall(3, average=None).update(y, p).interval()
    for c, (x, n) in enumerate([(1, 2), (2, 2), (2, 3)]):
        np.testing.assert_allclose((low[c], high[c]), wilson_reference(x, n), rtol=1e-12)
    micro = sm.Precision(3, average="micro").update(y, p).interval()
    np.testing.assert_allclose(micro, wilson_reference(5, 7), rtol=1e-12)
    with pytest.raises(ValueError, match="average='macro'"):
        sm.Recall(3).update(y, p).interval()
    assert not hasattr(sm.F1(), "interval")
    assert all(math.isnan(v) for v in sm.Recall().interval())
    with pytest.raises(ValueError, match="confidence"):
        sm.Recall().interval(1.5)


def test_interval_contains_the_true_rate_most_of_the_time():
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(400):
        y = np.ones(60, dtype=int)
        p = (rng.random(60) < 0.3).astype(int)  # true recall 0.3
        low, high = sm.Recall().update(y, p).interval(0.9)
        covered += low <= 0.3 <= high
    assert 0.85 <= covered / 400 <= 0.96


def test_topk_interval():
    m = sm.TopKAccuracy(3, k=1).update([0, 1, 2, 0], np.eye(3)[[0, 1, 0, 1]])
    np.testing.assert_allclose(m.interval(), wilson_reference(2, 4), rtol=1e-12)


# ---------------------------------------------------------------------------- threads
def test_eight_threads_hammering_a_metricset_equal_the_sequential_result():
    rng = np.random.default_rng(1)
    batches = [(rng.integers(0, 3, 200), rng.random((200, 3))) for _ in range(80)]
    singles = [(int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(4000)]

    def build():
        return sm.MetricSet(p=sm.Precision(3, zero_division=0.0), r=sm.Recall(3, zero_division=0.0),
                            k=sm.TopKAccuracy(3, k=2), cm=sm.ConfusionMatrix(3))

    shared = build()
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for j, (y, s) in enumerate(batches[i::8]):
                shared.update(y, s)
                if j % 3 == 0:
                    shared.compute()
            for y, p in singles[i::8]:
                shared["cm"].update(y, p)  # members share the set's lock
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    sequential = build()
    for y, s in batches:
        sequential.update(y, s)
    for y, p in singles:
        sequential["cm"].update(y, p)
    np.testing.assert_array_equal(shared["cm"].compute(), sequential["cm"].compute())
    assert shared["k"].compute() == sequential["k"].compute()


def test_concurrent_merges_and_updates_on_one_metric():
    target = sm.ConfusionMatrix()
    source = sm.ConfusionMatrix().update([1, 0, 1], [1, 1, 0])

    def merger():
        for _ in range(200):
            target.merge(source)

    def updater():
        for _ in range(600):
            target.update(1, 1)

    threads = [threading.Thread(target=f) for f in (merger, merger, updater, updater)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = 400 * np.array([[0, 1], [1, 1]]) + np.array([[0, 0], [0, 1200]])
    np.testing.assert_array_equal(target.compute(), expected)


# ---------------------------------------------------------------------------- the seeds
def from_table(tp, fn, fp, tn):
    """Labels and predictions realising a binary confusion table."""
    y = np.array([1] * (tp + fn) + [0] * (fp + tn))
    p = np.array([1] * tp + [0] * fn + [1] * fp + [0] * tn)
    return y, p


def test_access_control_example():
    # performance-metrics-confusion-roc-pr: TP 90, FN 10, FP 1, TN 899
    y, p = from_table(90, 10, 1, 899)
    ms = sm.MetricSet(precision=sm.Precision(), recall=sm.Recall(), f1=sm.F1()).update(y, p)
    values = ms.compute()
    assert round(values["precision"], 3) == 0.989
    assert values["recall"] == 0.9
    assert round(values["f1"], 3) == 0.942


def test_fraud_example():
    # TP 80, FN 20, FP 220, TN 9680: TPR 0.8, FPR ~ 0.022, precision ~ 0.267
    y, p = from_table(80, 20, 220, 9680)
    assert sm.TPR().update(y, p).compute() == 0.8
    assert round(sm.FPR().update(y, p).compute(), 3) == 0.022
    assert round(sm.PPV().update(y, p).compute(), 3) == 0.267


def test_constant_predictor_on_rare_class():
    # Binder lecture: 1% positives, f(x) = 0 -> accuracy 0.99 but A_{2,1/2} = 0.5
    y = np.array([1] * 10 + [0] * 990)
    p = np.zeros(1000, dtype=int)
    assert sm.Accuracy().update(y, p).compute() == 0.99
    assert sm.BalancedAccuracy().update(y, p).compute() == 0.5
    assert sm.WeightedAccuracy(weights=[0.5, 0.5]).update(y, p).compute() == 0.5
    # TPR + FNR = 1 and TNR + FPR = 1
    assert sm.TPR().update(y, p).compute() + sm.FNR().update(y, p).compute() == 1.0
    assert sm.TNR().update(y, p).compute() + sm.FPR().update(y, p).compute() == 1.0


def test_f1_is_the_harmonic_mean_table():
    # the seeds' table: (precision, recall) = (0.5, 0.5), (0.7, 0.3), (0.9, 0.1) -> F1 0.50, 0.42, 0.18
    for (tp, fn, fp), f1 in [((5, 5, 5), 0.50), ((21, 49, 9), 0.42), ((90, 810, 10), 0.18)]:
        y, p = from_table(tp, fn, fp, 0)
        assert round(sm.F1().update(y, p).compute(), 2) == f1
