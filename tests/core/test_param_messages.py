"""Constructor arguments declared with ``Param``: each wrong value is a ``ValueError`` whose
message names the argument, states the rule and shows the value (the words users match on)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import streammetrics as sm
from streammetrics import functional as F
from streammetrics._core.intervals import z_value
from streammetrics._engines.dask_ranked import range_summaries
from streammetrics._engines.plan import empty_set, normalise, rebuild
from streammetrics._scores.batches import check_layout
from streammetrics.calibration._quantile import QuantileProbabilities
from streammetrics.spark import evaluate as spark_evaluate
from streammetrics.trec import TrecMeasures, evaluate_files, per_query_values, trec_batch
from streammetrics.trec.runfile import SpilledRun

_Y = [0, 1, 0, 1]
_G = ["a", "a", "b", "b"]


def _roc() -> Any:
    return sm.ROCCurve().update(np.array(_Y), np.array([0.1, 0.4, 0.35, 0.8])).compute()


def _plot_gains(**kwargs: Any) -> Any:
    from streammetrics.plot import plot_gains

    return plot_gains(None, **kwargs)


def _padding_filter(*batch: Any) -> Any:
    pytest.importorskip("torch")  # the extra; streammetrics.torch imports it first
    from torch.utils.data import DistributedSampler

    from streammetrics.torch import PaddingFilter

    return PaddingFilter(DistributedSampler(range(10), num_replicas=4, rank=3, shuffle=False))(*batch)


def _sliced_collector(sliced: Any = None, **kwargs: Any) -> Any:
    pytest.importorskip("prometheus_client")  # the extra; its module imports it first
    from streammetrics.prometheus_sliced import SlicedCollector

    return SlicedCollector(sm.Sliced(sm.F1()) if sliced is None else sliced, **kwargs)


def _collector(metric: Any = None, **kwargs: Any) -> Any:
    pytest.importorskip("prometheus_client")  # the extra; its module imports it first
    from streammetrics.prometheus import MetricsCollector

    return MetricsCollector(sm.F1() if metric is None else metric, **kwargs)


def _lightning_callback(**kwargs: Any) -> Any:
    pytest.importorskip("lightning")  # the extra; its module imports it first
    from streammetrics.lightning import StreamMetricsCallback

    return StreamMetricsCallback(sm.AUROC(), **kwargs)


def _keras_callback(**kwargs: Any) -> Any:
    import os

    os.environ.setdefault("KERAS_BACKEND", "torch")
    pytest.importorskip("keras")  # the extra; its module imports it first
    from streammetrics.keras import StreamMetricsCallback

    return StreamMetricsCallback(sm.AUROC(), validation_data=(np.zeros((4, 2)), np.array(_Y)), **kwargs)


def _bins_scale(factor: Any) -> Any:
    return sm.AUROC(max_bytes=4096).update(np.array(_Y), np.array([0.1, 0.4, 0.35, 0.8]))._state.scale(factor)


def _range_summaries(**kwargs: Any) -> Any:
    pytest.importorskip("dask")  # the extra; the function imports it before its checks
    return range_summaries(None, sm.AUROC(), label="y", score="p", **kwargs)


CASES: list[tuple[Callable[[], Any], str]] = [
    (lambda: sm.F1(num_classes=2.5), "num_classes: must be an int >= 2, got 2.5"),
    (lambda: sm.F1(num_classes=1), "num_classes: must be >= 2, got 1"),
    (lambda: sm.F1(num_classes=0, multilabel=True), "num_classes: must be >= 1, got 0"),
    (lambda: sm.AUROC(3, average="x"), "average: must be one of ('macro', 'weighted', 'micro', None), got 'x'"),
    (lambda: sm.AUROC(scores="x"), "scores: must be 'raw', 'logit' or 'probability', got 'x'"),
    (lambda: sm.AUROC(scores="x", max_bytes=10**6),
     "scores: must be one of ('raw', 'logit', 'probability'), got 'x'"),
    (lambda: sm.AUROC(max_bytes=True), "max_bytes: must be an int, got True"),
    (lambda: sm.Window(sm.F1(), size=2.0), "size: must be an int >= 1, got 2.0"),
    (lambda: sm.Window(sm.F1(), seconds="1"), "seconds: must be a number > 0, got '1'"),
    (lambda: sm.Window(sm.F1(), seconds=-2), "seconds: must be finite and > 0, got -2"),
    (lambda: sm.Window(sm.F1(), seconds=math.inf), "seconds: must be finite and > 0, got inf"),
    (lambda: sm.Window(sm.F1(), seconds=10**400), "seconds: must be finite and > 0, got an int beyond"),
    (lambda: sm.Decayed(sm.F1(), half_life=True), "half_life: must be a finite number > 0, got True"),
    (lambda: sm.Decayed(sm.F1(), half_life_seconds=math.nan),
     "half_life_seconds: must be a finite number > 0, got nan"),
    (lambda: sm.DelayedLabels(sm.F1(), capacity=0), "capacity: must be an int >= 1, got 0"),
    (lambda: sm.DelayedLabels(sm.F1(), ttl=math.inf), "ttl: must be a finite number of seconds > 0 or None, got inf"),
    (lambda: sm.DelayedLabels(sm.F1(), batch_size=1.0), "batch_size: must be an int >= 1, got 1.0"),
    (lambda: sm.DelayedLabels(sm.F1(), max_delay=0), "max_delay: must be a finite number of seconds > 0, got 0"),
    (lambda: sm.CalibrationError(n_bins=2.0), "n_bins: must be an int >= 1, got 2.0"),
    (lambda: z_value(1.0), "confidence: must be in (0, 1), got 1.0"),
    (lambda: z_value("x"), "confidence: must be in (0, 1), got 'x'"),
    (lambda: sm.Sliced(sm.F1(), max_slices=0), "max_slices: must be an int >= 1, got 0"),
    (lambda: sm.Sliced(sm.F1(), max_slices=True), "max_slices: must be an int >= 1, got True"),
    (lambda: sm.Sliced(sm.F1(), min_count=-1), "min_count: must be an int >= 0, got -1"),
    (lambda: sm.Sliced(sm.F1(), overflow="x"), "overflow: must be one of ('error', 'other'), got 'x'"),
    (lambda: sm.Sliced(sm.F1()).difference(method="x"),
     "method: must be one of ('between_groups', 'to_overall'), got 'x'"),
    (lambda: sm.Sliced(sm.F1()).ratio(method=None), "method: must be one of ('between_groups', 'to_overall'), got None"),
    (lambda: sm.Sliced(sm.F1()).group_min(errors="x"), "errors: must be one of ('raise', 'coerce'), got 'x'"),
    (lambda: _sliced_collector(max_slices=-1), "max_slices: must be an int >= 0, got -1"),
    (lambda: _sliced_collector(max_slices=1.0), "max_slices: must be an int >= 0, got 1.0"),
    (lambda: _roc().best_threshold("youden").bounds("x"), "metric: must be one of ('tpr', 'recall', "),
    (lambda: _roc().best_threshold("x"), "criterion: must be one of ('accuracy', 'youden', 'closest', "),
    (lambda: _roc().best_threshold("fbeta", beta=0), "beta: must be finite and > 0, got 0.0"),
    (lambda: _roc().best_threshold("tpr_at_tnr", value=2), "value: must be in [0, 1], got 2.0"),
    (lambda: QuantileProbabilities("x", None, False), "mode: must be one of ('binary', 'top', 'ovr'), got 'x'"),
    (lambda: F.demographic_parity_difference(_Y, _Y, sensitive_features=_G, method="x"),
     "method: must be one of ('between_groups', 'to_overall'), got 'x'"),
    (lambda: F.equalized_odds_difference(_Y, _Y, sensitive_features=_G, agg="x"),
     "agg: must be one of ('worst_case', 'mean'), got 'x'"),
    (lambda: F.precision_recall_fscore_support(_Y, _Y, beta=-1), "beta: must be a number >= 0, got -1"),
    (lambda: F.precision_recall_fscore_support(_Y, _Y, beta=math.nan), "beta: must be a number >= 0, got nan"),
    (lambda: sm.loads(b"", max_bytes=0), "max_bytes: must be an int >= 1 or None, got 0"),
    (lambda: sm.loads(b"", max_bytes=1.5), "max_bytes: must be an int >= 1 or None, got 1.5"),
    (lambda: sm.AUROC(multi_class="x"), "multi_class: must be 'ovr' or 'ovo', got 'x'"),
    (lambda: sm.AUROC(max_fpr="0.5"), "max_fpr: must be a number in (0, 1], got '0.5'"),
    (lambda: sm.AUROC(max_fpr=2), "max_fpr: must be in (0, 1], got 2.0"),
    (lambda: sm.AUROC(max_fpr=0), "max_fpr: must be in (0, 1], got 0.0"),
    (lambda: sm.AUROC(max_fpr=math.nan), "max_fpr: must be in (0, 1], got nan"),
    (lambda: sm.AUROC(max_fpr=10**400), "max_fpr: must be in (0, 1], got inf"),
    (lambda: sm.AUROC(thresholds=1), "thresholds: an int must be >= 2, got 1"),
    (lambda: sm.AUROC(thresholds=True), "thresholds: must be an int >= 2 or an array of numbers, got True"),
    (lambda: spark_evaluate(None, sm.F1(), label="y", score="p", depth=0), "depth: must be an integer >= 1, got 0"),
    (lambda: _range_summaries(ranges=0),
     "ranges: must be an integer >= 1 or a sequence of edges, got 0"),
    (lambda: _range_summaries(ranges=True),
     "ranges: must be an integer >= 1 or a sequence of edges, got True"),
    (lambda: _range_summaries(sample_size=0),
     "sample_size: must be an integer >= 1, got 0"),
    (lambda: empty_set({}, "x"), "kind: must be one of ('MetricSet', 'Sliced'), got 'x'"),
    (lambda: rebuild({}, {}, "x"), "kind: must be one of ('MetricSet', 'Sliced'), got 'x'"),
    (lambda: sm.FBeta(beta=-1), "beta: must be >= 0, got -1.0"),
    (lambda: sm.FBeta(beta=-math.inf), "beta: expected a number >= 0 (or inf), got -inf"),
    (lambda: sm.DelayedLabels(sm.F1(), on_unknown="x"), "on_unknown: must be 'skip' or 'raise', got 'x'"),
    (lambda: sm.KSStatistic(scores="x"), "scores: must be 'raw', 'logit' or 'probability', got 'x'"),
    (lambda: _plot_gains(kind="x"), "kind: must be 'gains' or 'lift', got 'x'"),
    (lambda: _keras_callback(batch_size=0), "batch_size: must be a positive integer, got 0"),
    (lambda: _keras_callback(batch_size=2.0), "batch_size: must be a positive integer, got 2.0"),
    (lambda: _keras_callback(batch_size=True), "batch_size: must be a positive integer, got True"),
    (lambda: sm.F1(zero_division="x"), "zero_division: must be 'warn', 0.0, 1.0 or nan, got 'x'"),
    (lambda: sm.F1(zero_division=0.5), "zero_division: must be 'warn', 0.0, 1.0 or nan, got 0.5"),
    (lambda: sm.F1(zero_division="0"), "zero_division: must be 'warn', 0.0, 1.0 or nan, got '0'"),
    (lambda: sm.F1(zero_division=None), "zero_division: must be 'warn', 0.0, 1.0 or nan, got None"),
    (lambda: sm.F1(zero_division=10**400), "zero_division: must be 'warn', 0.0, 1.0 or nan, got 1000"),
    (lambda: _bins_scale(1.5), "factor: must be in [0, 1], got 1.5"),
    (lambda: _bins_scale(-0.1), "factor: must be in [0, 1], got -0.1"),
    (lambda: _bins_scale(math.nan), "factor: must be in [0, 1], got nan"),
    (lambda: _bins_scale(None), "factor: must be in [0, 1], got None"),
    (lambda: check_layout("x", None, None), "task: must be binary, multiclass or multilabel, got 'x'"),
    (lambda: check_layout(None, None, None), "task: must be binary, multiclass or multilabel, got None"),
    (lambda: sm.WeightedAccuracy(weights=[0.5]), "weights: expected 2 class weights, got shape (1,)"),
    (lambda: sm.WeightedAccuracy(weights=["a", "b"]), "weights: expected 2 class weights, got ['a', 'b']"),
    (lambda: sm.WeightedAccuracy(weights=[-0.5, 1.5]), "weights: must be finite and >= 0, got [-0.5, 1.5]"),
    (lambda: sm.WeightedAccuracy(weights=[math.nan, 1.0]), "weights: must be finite and >= 0, got [nan, 1.0]"),
    (lambda: sm.WeightedAccuracy(weights=[0.5, 0.6]), "weights: must sum to 1, got sum "),
    (lambda: TrecMeasures(rel_level="x"), "rel_level: expected a number, got 'x'"),
    (lambda: TrecMeasures(rel_level=math.inf), "rel_level: expected a finite number, got inf"),
    (lambda: TrecMeasures(trec_version=8), "trec_version: expected 9 or 10, got 8"),
    (lambda: TrecMeasures(trec_version=True), "trec_version: expected 9 or 10, got True"),
    (lambda: TrecMeasures(trec_version="9"), "trec_version: expected 9 or 10, got '9'"),
    (lambda: evaluate_files("q", "r", trec_version=11), "trec_version: expected 9 or 10, got 11"),
    (lambda: per_query_values("q", ["r"], trec_version=8.5), "trec_version: expected 9 or 10, got 8.5"),
    (lambda: trec_batch({}, {}, trec_version=0), "trec_version: expected 9 or 10, got 0"),
    (lambda: TrecMeasures(max_docs=-1), "max_docs: expected a non-negative integer, got -1"),
    (lambda: TrecMeasures(max_docs=2.0), "max_docs: expected a non-negative integer, got 2.0"),
    (lambda: TrecMeasures(num_docs=None), "num_docs: expected a non-negative integer, got None"),
    (lambda: TrecMeasures(num_docs=True), "num_docs: expected a non-negative integer, got True"),
    (lambda: SpilledRun("r", memory_lines=0), "memory_lines: expected a positive integer, got 0"),
    (lambda: SpilledRun("r", memory_lines=True), "memory_lines: expected a positive integer, got True"),
    (lambda: sm.InterpolatedPrecision([]), "recall: expected at least one recall level, got []"),
    (lambda: _padding_filter(), "batch: expected at least one batch argument, got ()"),
    (lambda: sm.Accuracy(classes=[]), "classes: expected a non-empty sequence of labels, got []"),
    (lambda: sm.Accuracy(classes="abc"), "classes: expected a non-empty sequence of labels, got 'abc'"),
    (lambda: sm.Accuracy(classes=3), "classes: expected a non-empty sequence of labels, got 3"),
    (lambda: sm.Precision(num_classes=3, labels=[]), "labels: expected a non-empty sequence of labels, got []"),
    (lambda: sm.Precision(num_classes=3, labels=np.array([], dtype=int)),
     "labels: expected a non-empty sequence of labels, got []"),
    (lambda: sm.Precision(num_classes=3, labels="a"), "labels: expected a non-empty sequence of labels, got 'a'"),
    (lambda: sm.Checkpointer({"f1": sm.F1()}, "x.sm"), "metric: expected a streammetrics accumulator, got dict"),
    (lambda: sm.Sliced(sm.Sliced(sm.F1())), "metric: expected a streammetrics accumulator (not a Sliced), got Sliced"),
    (lambda: sm.Sliced(42), "metric: expected a streammetrics accumulator (not a Sliced), got int"),
    (lambda: sm.Sliced(sm.F1()).update([0], [0], slices={}), "slices: expected at least one key column, got {}"),
    (lambda: sm.Sliced(sm.F1()).update([0], [0], slices=()), "slices: expected at least one key column, got ()"),
    (lambda: sm.MetricSet(), "metrics: expected at least one metric, got {}"),
    (lambda: sm.MetricSet(f1=42), "f1: expected a streammetrics accumulator (not a MetricSet), got int"),
    (lambda: sm.MetricSet(s=sm.MetricSet(f1=sm.F1())),
     "s: expected a streammetrics accumulator (not a MetricSet), got MetricSet"),
    (lambda: normalise({}), "metrics: expected at least one metric, got {}"),
    (lambda: normalise({"a": 1}), "metrics['a']: expected a streammetrics accumulator (not a MetricSet), got int"),
    (lambda: sm.Window(sm.MetricSet(f1=sm.F1()), size=3),
     "metric: expected one accumulator, not a MetricSet (wrap each member and put the wrappers in a "
     "MetricSet), got MetricSet"),
    (lambda: sm.Decayed([sm.F1()], half_life=2), "metric: expected one accumulator, not a MetricSet "),
    (lambda: sm.Window(sm.Decayed(sm.F1(), half_life=2), size=3),
     "metric: a Window cannot wrap a Window or Decayed, got Decayed"),
    (lambda: sm.DelayedLabels(sm.DelayedLabels(sm.F1())),
     "metric: expected a streammetrics accumulator (not a DelayedLabels), got DelayedLabels"),
    (lambda: sm.DelayedLabels("f1"), "metric: expected a streammetrics accumulator (not a DelayedLabels), got str"),
    (lambda: sm.save({"f1": sm.F1()}, "never-written.sm"), "metric: expected a streammetrics accumulator, got dict"),
    (lambda: _sliced_collector(sliced=sm.F1()), "sliced: expected a Sliced accumulator, got F1"),
    (lambda: _collector(metric=[sm.F1()]), "metric: expected a streammetrics accumulator, got list"),
    (lambda: _collector(prefix="bad-prefix"), "prefix: not a valid Prometheus metric name, got 'bad-prefix'"),
    (lambda: _collector(prefix="ok\n"), "prefix: not a valid Prometheus metric name, got 'ok\\n'"),
    (lambda: _collector(prefix=3), "prefix: not a valid Prometheus metric name, got 3"),
    (lambda: _collector(labels={"class": "x"}), "labels: invalid or reserved label name (reserved: class, "),
    (lambda: _collector(labels={"1x": "x"}), "labels: invalid or reserved label name "),
    (lambda: _collector(name="a b"), "name: does not make a valid Prometheus metric name, got 'streammetrics_a b'"),
    (lambda: _lightning_callback(stages=["train"]), "stages: expected some of ['validate', 'test'], got 'train'"),
    (lambda: _lightning_callback(stages=[]), "stages: expected some of ['validate', 'test'], got []"),
    (lambda: _lightning_callback(stages="test"), "stages: expected some of ['validate', 'test'], got 'test'"),
]


@pytest.mark.parametrize(("build", "message"), CASES, ids=[m.split(":")[0] + str(i) for i, (_, m) in
                                                            enumerate(CASES)])
def test_bad_argument_message(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        build()


def test_good_arguments_are_normalised() -> None:
    w = sm.Window(sm.F1(), seconds=np.float32(2.5))
    assert type(w.seconds) is float and w.seconds == 2.5
    d = sm.DelayedLabels(sm.F1(), capacity=np.int64(3), ttl=np.int64(4))
    assert type(d.capacity) is int and d.capacity == 3 and type(d.ttl) is float and d.ttl == 4.0
    assert z_value(0.95) == pytest.approx(1.959963984540054)
    s = sm.Sliced(sm.F1(), max_slices=np.int64(5), min_count=np.int32(2))
    assert type(s.max_slices) is int and s.max_slices == 5 and type(s.min_count) is int and s.min_count == 2
    assert sm.AUROC(max_fpr=np.float32(0.5)).max_fpr == 0.5 and sm.AUROC(max_fpr=1).max_fpr == 1.0
    assert sm.FBeta(beta=math.inf).beta == math.inf and sm.FBeta(beta=2).beta == 2.0
    assert sm.DelayedLabels(sm.F1(), on_unknown="count").on_unknown == "skip"
    for given, value in (("warn", "warn"), (0, 0.0), (np.float32(1), 1.0), (True, 1.0), (np.int64(0), 0.0)):
        assert sm.F1(zero_division=given).zero_division == value
    assert math.isnan(sm.F1(zero_division=np.float32("nan")).zero_division)
    assert sm.WeightedAccuracy(weights=(0.25, 0.75)).weights.tolist() == [0.25, 0.75]
    assert check_layout("binary", None, np.int64(-1)) == (None, -1, 1)
