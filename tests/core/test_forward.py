"""torchmetrics' habit: ``metric(batch)`` / ``metric.forward(batch)`` folds the batch in and
returns that batch's own value, for every family."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm


def _same(a: Any, b: Any) -> None:
    """Equal values (floats / arrays to 1e-12; nan equals nan) of any result type."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b)
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif hasattr(a, "fpr"):  # curve results: their arrays
        for field in ("fpr", "tpr", "thresholds"):
            _same(getattr(a, field), getattr(b, field))
    elif a is None or isinstance(a, str):
        assert a == b
    else:
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                                   rtol=1e-12, atol=1e-15)


def _binary(rng: np.random.Generator, n: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    y = rng.integers(0, 2, n)
    return (y, np.round(rng.random(n), 2)), {"sample_weight": rng.random(n) + 0.1}


def _labels(rng: np.random.Generator, n: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (rng.integers(0, 3, n), rng.integers(0, 3, n)), {}


def _probs(rng: np.random.Generator, n: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (rng.integers(0, 3, n), rng.dirichlet(np.ones(3), n)), {}


def _queries(rng: np.random.Generator, n: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    q = np.sort(rng.integers(0, 4, n))
    return (rng.integers(0, 3, n), rng.random(n)), {"query_ids": q}


CASES: dict[str, tuple[Callable[[], sm.Metric], Callable[..., Any]]] = {
    "F1": (lambda: sm.F1(), _binary),
    "ConfusionMatrix": (lambda: sm.ConfusionMatrix(num_classes=3), _labels),
    "CohenKappa": (lambda: sm.CohenKappa(num_classes=3), _labels),
    "AUROC": (lambda: sm.AUROC(), _binary),
    "AveragePrecision": (lambda: sm.AveragePrecision(), _binary),
    "ROCCurve": (lambda: sm.ROCCurve(), _binary),
    "AUROC-multiclass": (lambda: sm.AUROC(3), _probs),
    "TopKAccuracy": (lambda: sm.TopKAccuracy(3, k=2), _probs),
    "LogLoss": (lambda: sm.LogLoss(), _binary),
    "BrierScore-multiclass": (lambda: sm.BrierScore(3), _probs),
    "CalibrationCurve": (lambda: sm.CalibrationCurve(), _binary),
    "KSStatistic": (lambda: sm.KSStatistic(), _binary),
    "NDCG": (lambda: sm.NDCG(k=3), _queries),
    "MAP": (lambda: sm.MAP(), _queries),
    "MetricSet": (lambda: sm.MetricSet(f=sm.F1(), a=sm.AUROC(), b=sm.BrierScore()), _binary),
    "MetricSet-retrieval": (lambda: sm.MetricSet(n=sm.NDCG(k=3), m=sm.MAP()), _queries),
    "Window": (lambda: sm.Window(sm.F1(), size=7), _binary),
    "Decayed": (lambda: sm.Decayed(sm.AUROC(), half_life=5), _binary),
}


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), sizes=st.lists(st.integers(6, 40), min_size=1, max_size=4))
def test_call_returns_the_batch_value_and_accumulates(name, seed, sizes):
    make, data = CASES[name]
    rng = np.random.default_rng(seed)
    batches = [data(rng, n) for n in sizes]
    metric, whole = make(), make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        for i, (args, kwargs) in enumerate(batches):
            step = metric(*args, **kwargs) if i % 2 == 0 else metric.forward(*args, **kwargs)
            _same(step, make().update(*args, **kwargs).compute())
            whole.update(*args, **kwargs)
        _same(metric.compute(), whole.compute())


def test_call_on_a_rejected_batch_changes_nothing():
    m = sm.AUROC()
    m(np.array([0, 1, 1]), np.array([0.1, 0.7, 0.4]))
    before = m.state_dict()
    with pytest.raises(ValueError, match="y_true"):
        m(np.array([0, 2]), np.array([0.1, 0.2]))
    after = m.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        if isinstance(before[k], np.ndarray):
            np.testing.assert_array_equal(before[k], after[k])


def test_time_window_twin_uses_the_metric_clock():
    now = [100.0]
    w = sm.Window(sm.Accuracy(), seconds=10, clock=lambda: now[0])
    assert w([1, 1], [1, 0]) == 0.5
    now[0] = 200.0  # the first batch leaves the window
    assert w([1], [1]) == 1.0
    assert w.compute() == 1.0


def test_delayed_labels_have_no_batch_value():
    d = sm.DelayedLabels(sm.Accuracy())
    with pytest.raises(TypeError, match="no per-batch value"):
        d([1], [1])
    with pytest.raises(TypeError, match="no per-batch value"):
        d.forward([1], [1])
