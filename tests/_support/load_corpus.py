"""Valid saved states of every public accumulator and wrapper, and helpers to tamper with them
(rebuild a file from an edited header and payload, with a recomputed checksum)."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import streammetrics as sm
from streammetrics._core.persistence import MAGIC
from streammetrics.monitoring import Drift, Estimated


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def _binary(m: sm.Metric, n: int = 30, weighted: bool = True) -> sm.Metric:
    rng = _rng()
    w = rng.random(n) + 0.1 if weighted else None
    return m.update(rng.integers(0, 2, n), rng.random(n), sample_weight=w)


def _multiclass(m: sm.Metric, n: int = 30, c: int = 3) -> sm.Metric:
    rng = _rng()
    return m.update(rng.integers(0, c, n), rng.random((n, c)), sample_weight=rng.random(n) + 0.1)


def _samplewise(m: sm.Metric, n: int = 6, c: int = 3, positions: int = 4) -> sm.Metric:
    """Multiclass (N, C, positions) scores, unweighted (``multidim_average="samplewise"``)."""
    rng = _rng()
    return m.update(rng.integers(0, c, (n, positions)), rng.random((n, c, positions)))


def _multilabel(m: sm.Metric, n: int = 20, c: int = 3) -> sm.Metric:
    rng = _rng()
    return m.update(rng.integers(0, 2, (n, c)), rng.random((n, c)))


def _queries(m: sm.Metric, q: int = 4) -> sm.Metric:
    rng = _rng()
    for _ in range(q):
        m.update(rng.integers(0, 3, 6), rng.random(6))
    return m


def _delayed() -> sm.Metric:
    dl = sm.DelayedLabels(sm.Recall(), ttl=100.0, clock=lambda: 5.0)
    dl.predict(["a", "b", 3], [0.2, 0.7, 0.9])
    dl.label(["a"], [1])
    return dl


def _window_by_time() -> sm.Metric:
    w = sm.Window(sm.Precision(), seconds=10.0, clock=lambda: 100.0)
    rng = _rng()
    return w.update(rng.integers(0, 2, 8), rng.random(8))


def _sliced(m: sm.Metric, n: int = 30) -> sm.Metric:
    rng = _rng()
    keys = {"c": rng.choice(["x", "y", "z"], n), "d": rng.integers(0, 3, n)}
    return m.update(rng.integers(0, 2, n), rng.random(n), slices=keys, sample_weight=rng.random(n) + 0.1)


def _sliced_scores(m: sm.Metric, n: int = 30) -> sm.Metric:
    """A Sliced Drift or Estimated: scores (probabilities) alone, with two key columns."""
    rng = _rng()
    keys = {"c": rng.choice(["x", "y", "z"], n), "d": rng.integers(0, 3, n)}
    return m.update(rng.random(n), slices=keys, sample_weight=rng.random(n) + 0.1)


#: name -> a function building a small valid accumulator holding some data.
def _intervals(m: sm.Metric, n: int = 30) -> sm.Metric:
    rng = _rng()
    lower = rng.random(n)
    return m.update(rng.random(n), np.stack([lower, lower + rng.random(n)], axis=1), sample_weight=rng.random(n) + 0.1)


CORPUS: dict[str, Callable[[], sm.Metric]] = {
    # regression, whole-set metrics (binary batches are regression targets too)
    "MedianAbsoluteError": lambda: _binary(sm.MedianAbsoluteError()),
    "MedianAbsoluteError-bounded": lambda: _binary(sm.MedianAbsoluteError(max_bytes=600)),
    "D2PinballScore": lambda: _binary(sm.D2PinballScore(0.3)),
    "D2AbsoluteErrorScore-bounded": lambda: _binary(sm.D2AbsoluteErrorScore(max_bytes=600)),
    "PearsonCorrCoef": lambda: _binary(sm.PearsonCorrCoef()),
    "ConcordanceCorrCoef": lambda: _binary(sm.ConcordanceCorrCoef()),
    "SpearmanCorrCoef": lambda: _binary(sm.SpearmanCorrCoef()),
    "KendallTau": lambda: _binary(sm.KendallTau()),
    "IntervalCoverage": lambda: _intervals(sm.IntervalCoverage()),
    "IntervalWidth": lambda: _intervals(sm.IntervalWidth()),
    "IntervalScore": lambda: _intervals(sm.IntervalScore(0.1)),
    "ConfusionMatrix": lambda: _multiclass(sm.ConfusionMatrix(3)),
    "F1-binary": lambda: _binary(sm.F1()),
    "Accuracy-unweighted": lambda: _binary(sm.Accuracy(), weighted=False),
    "Precision-multilabel": lambda: _multilabel(sm.Precision(3, multilabel=True)),
    "MatthewsCorrCoef": lambda: _multiclass(sm.MatthewsCorrCoef(3)),
    "WeightedAccuracy": lambda: _binary(sm.WeightedAccuracy(weights=[0.3, 0.7])),
    "TopKAccuracy": lambda: _multiclass(sm.TopKAccuracy(3, k=2)),
    "F1-top_k": lambda: _multiclass(sm.F1(3, top_k=2, average=None)),
    "Accuracy-top_k": lambda: _multiclass(sm.Accuracy(3, top_k=2)),
    "AUROC": lambda: _binary(sm.AUROC()),
    "AUROC-multiclass": lambda: _multiclass(sm.AUROC(3)),
    "AUROC-ovo": lambda: _multiclass(sm.AUROC(3, multi_class="ovo")),
    "AveragePrecision-max_bytes": lambda: _binary(sm.AveragePrecision(max_bytes=2048), 300),
    "ROCCurve-thresholds": lambda: _binary(sm.ROCCurve(thresholds=11)),
    "PRCurve": lambda: _binary(sm.PRCurve()),
    "DETCurve-multiclass": lambda: _multiclass(sm.DETCurve(3, drop_intermediate=True)),
    "PRCurve-multilabel-thresholds": lambda: _multilabel(sm.PRCurve(3, multilabel=True,
                                                                     thresholds=[0.2, 0.5, 0.8])),
    "NDCG": lambda: _queries(sm.NDCG(k=5)),
    "MAP-per_query": lambda: _queries(sm.MAP(per_query=True)),
    "RPrecision": lambda: _queries(sm.RPrecision()),
    "Window-Recall": lambda: _binary(sm.Window(sm.Recall(), size=10)),
    "Window-AUROC": lambda: _binary(sm.Window(sm.AUROC(), size=10)),
    "Window-seconds": _window_by_time,
    "Window-NDCG": lambda: _queries(sm.Window(sm.NDCG(k=3), size=3)),
    "Decayed-Precision": lambda: _binary(sm.Decayed(sm.Precision(), half_life=10)),
    "Decayed-AUROC": lambda: _binary(sm.Decayed(sm.AUROC(), half_life=10)),
    "Decayed-AUROC-thresholds": lambda: _binary(sm.Decayed(sm.AUROC(thresholds=5), half_life=10)),
    "Decayed-MRR": lambda: _queries(sm.Decayed(sm.MRR(), half_life=3)),
    "DelayedLabels": _delayed,
    "MetricSet": lambda: _multiclass(sm.MetricSet(a=sm.Precision(3), b=sm.Recall(3), c=sm.AUROC(3),
                                                  k=sm.TopKAccuracy(3, k=2))),
    "ClassificationReport": lambda: _multiclass(sm.ClassificationReport(3)),
    "Report-multilabel": lambda: _multilabel(sm.ClassificationReport(3, multilabel=True)),
    "HammingLoss": lambda: _multilabel(sm.HammingLoss(3, multilabel=True)),
    "StatScores-top_k": lambda: _multiclass(sm.StatScores(3, top_k=2)),
    "F1-samplewise": lambda: _samplewise(sm.F1(3, multidim_average="samplewise")),
    "CohenKappa-linear": lambda: _multiclass(sm.CohenKappa(3, weights="linear")),
    "FBeta": lambda: _multiclass(sm.FBeta(3, beta=2.0, average=None)),
    "AUROC-max_bytes-multiclass": lambda: _multiclass(sm.AUROC(3, max_bytes=4096), 200),
    "AUROC-max_fpr": lambda: _binary(sm.AUROC(max_fpr=0.5)),
    "ROCCurve-max_bytes": lambda: _binary(sm.ROCCurve(max_bytes=2048), 300),
    "AveragePrecision-interpolated": lambda: _binary(sm.AveragePrecision(interpolated=True)),
    "PrecisionAtK": lambda: _queries(sm.PrecisionAtK(3)),
    "RecallAtK-per_query": lambda: _queries(sm.RecallAtK(3, per_query=True)),
    "PrecisionAtRecall": lambda: _queries(sm.PrecisionAtRecall(0.5)),
    "MRR": lambda: _queries(sm.MRR(k=4)),
    "CG": lambda: _queries(sm.CG(3, normalize=True, rel_max=2)),
    "DCG-exponential": lambda: _queries(sm.DCG(gain="exponential")),
    "InterpolatedPrecision": lambda: _queries(sm.InterpolatedPrecision(recall=[0.2, 0.5])),
    "ElevenPointAP": lambda: _queries(sm.ElevenPointAP()),
    "SystemEfficiency": lambda: _queries(sm.SystemEfficiency()),
    "SetPrecision-micro": lambda: _queries(sm.SetPrecision(average="micro")),
    "SetRecall": lambda: _queries(sm.SetRecall()),
    "HitRateAtK-pos": lambda: _queries(sm.HitRateAtK(2, empty_target_action="pos")),
    "F1AtK-per_query": lambda: _queries(sm.F1AtK(3, per_query=True)),
    "FallOutAtK-skip-median": lambda: _queries(sm.FallOutAtK(2, empty_target_action="skip", aggregation="median")),
    "AUROCAtK-max": lambda: _queries(sm.AUROCAtK(aggregation="max")),
    "PrecisionRecallAtK": lambda: _queries(sm.PrecisionRecallAtK(4, adaptive_k=True)),
    "RecallAtFixedPrecision-min": lambda: _queries(sm.RecallAtFixedPrecision(0.3, 3, aggregation="min")),
    "MetricSet-retrieval": lambda: _queries(sm.MetricSet(n=sm.NDCG(k=3), m=sm.MAP(), p=sm.PrecisionAtK(2))),
    "DelayedLabels-multiclass": lambda: _delayed_multiclass(),
    "LogLoss": lambda: _binary(sm.LogLoss()),
    "BrierScore": lambda: _binary(sm.BrierScore()),
    "CalibrationError": lambda: _binary(sm.CalibrationError(n_bins=5)),
    "CalibrationError-quantile": lambda: _binary(sm.CalibrationError(strategy="quantile")),
    "CalibrationCurve": lambda: _binary(sm.CalibrationCurve()),
    "KSStatistic": lambda: _binary(sm.KSStatistic()),
    "GainsCurve": lambda: _binary(sm.GainsCurve()),
    "LiftCurve": lambda: _binary(sm.LiftCurve()),
    "Window-CalibrationError": lambda: _binary(sm.Window(sm.CalibrationError(), size=10)),
    "SelectionRate": lambda: _binary(sm.SelectionRate()),
    "HingeLoss": lambda: _binary(sm.HingeLoss(squared=True)),
    "HingeLoss-one-vs-all": lambda: _multiclass(sm.HingeLoss(3, multiclass_mode="one-vs-all")),
    "Sliced-F1": lambda: _sliced(sm.Sliced(sm.F1(), max_slices=3, overflow="other")),
    "Sliced-MetricSet": lambda: _sliced(sm.Sliced(sm.MetricSet(r=sm.Recall(), a=sm.AUROC()), min_count=2)),
    "Decayed-BrierScore": lambda: _binary(sm.Decayed(sm.BrierScore(), half_life=10)),
    "CoverageError": lambda: _multilabel(sm.CoverageError(3)),
    "LabelRankingAveragePrecision": lambda: _multilabel(sm.LabelRankingAveragePrecision()),
    "LabelRankingLoss": lambda: _multilabel(sm.LabelRankingLoss(3)),
    # regression (binary batches are regression targets too)
    "MeanSquaredError": lambda: _binary(sm.MeanSquaredError()),
    "RootMeanSquaredError": lambda: _binary(sm.RootMeanSquaredError()),
    "MeanAbsoluteError": lambda: _binary(sm.MeanAbsoluteError()),
    "R2Score": lambda: _binary(sm.R2Score()),
    "ExplainedVariance": lambda: _binary(sm.ExplainedVariance()),
    "MeanAbsolutePercentageError": lambda: _binary(sm.MeanAbsolutePercentageError()),
    "MeanSquaredLogError": lambda: _binary(sm.MeanSquaredLogError()),
    "RootMeanSquaredLogError": lambda: _binary(sm.RootMeanSquaredLogError()),
    "PinballLoss": lambda: _binary(sm.PinballLoss(0.2)),
    "TweedieDeviance": lambda: _binary(sm.TweedieDeviance(power=1.5)),
    "MaxError": lambda: _binary(sm.MaxError()),
    "D2TweedieScore": lambda: _binary(sm.D2TweedieScore(power=1.5)),
    "Decayed-D2TweedieScore": lambda: _binary(sm.Decayed(sm.D2TweedieScore(power=1), half_life=10)),
    "Window-R2Score": lambda: _binary(sm.Window(sm.R2Score(), size=10)),
    "Decayed-MeanSquaredError": lambda: _binary(sm.Decayed(sm.MeanSquaredError(), half_life=10)),
    "Sliced-regression": lambda: _sliced(sm.Sliced(sm.MetricSet(mse=sm.MeanSquaredError(),
                                                                medae=sm.MedianAbsoluteError(max_bytes=600)))),
    "Sliced-Drift": lambda: _sliced_scores(sm.Sliced(Drift(np.linspace(0, 1, 20), bins=4), max_slices=4,
                                                     overflow="other")),
    "Sliced-Estimated": lambda: _sliced_scores(sm.Sliced(Estimated(sm.MetricSet(a=sm.Accuracy(), r=sm.AUROC())))),
}


def _trec(m: sm.Metric, q: int = 5) -> sm.Metric:
    """Queries with trec_eval's judgments (a query without a non-relevant document among them:
    Accuracy undefined there)."""
    from streammetrics.trec import trec_batch

    rng = _rng()
    qrels = {f"q{i}": {f"d{j}": int(g) for j, g in enumerate(rng.integers(-1, 3, 6))} for i in range(q)}
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(np.round(rng.random(5), 1))} for i in range(q)}
    qrels["q0"] = {"d0": 1}
    return trec_batch(qrels, run).feed(m)


CORPUS["TrecMeasures-Accuracy"] = lambda: _trec(sm.trec.TrecMeasures(["Accuracy@3", "map"], per_query=True))
CORPUS["Decayed-TrecMeasures-Accuracy"] = lambda: _trec(sm.Decayed(sm.trec.TrecMeasures(["Accuracy", "P@2"]),
                                                                   half_life=3))
CORPUS["Window-TrecMeasures-Accuracy"] = lambda: _trec(sm.Window(sm.trec.TrecMeasures("Accuracy(rel=2)@4"), size=3))



def _diversity(m: sm.Metric, q: int = 5) -> sm.Metric:
    """Queries with subtopic judgment rows (a query without a relevant document: nNRBP NaN)."""
    rng = _rng()
    for i in range(q):
        docs = [f"d{j}" for j in range(5)]
        rows = [(f"s{rng.integers(0, 3)}", d, int(rng.integers(0, 3)) if i else 0) for d in docs]
        m.update(None, np.round(rng.random(5), 1), doc_ids=docs, judged={f"q{i}": rows}, query_ids=[f"q{i}"] * 5)
    return m


CORPUS["DiversityMeasures"] = lambda: _diversity(sm.trec.DiversityMeasures(
    ["alpha_nDCG@3", "alpha_DCG@1", "ERR_IA@2", "P_IA@2", "StRecall@3", "AP_IA", "NRBP", "nNRBP"], per_query=True))
CORPUS["Window-DiversityMeasures"] = lambda: _diversity(sm.Window(sm.trec.DiversityMeasures("nERR_IA@4"), size=3))


def _sliced_controls(m: sm.Metric, n: int = 30) -> sm.Metric:
    """A Sliced with a control column and float keys (issue #33)."""
    rng = _rng()
    keys = {"c": rng.choice(["x", "y"], n), "f": rng.choice([-0.0, 0.0, 0.5, 1e300, np.inf], n)}
    return m.update(rng.integers(0, 2, n), rng.random(n), slices=keys, sample_weight=rng.random(n) + 0.1)


CORPUS["Sliced-controls-floats"] = lambda: _sliced_controls(sm.Sliced(
    sm.MetricSet(r=sm.Recall(), a=sm.AUROC()), controls="c", min_count=2))


for _cls in (sm.ErrorRate, sm.Specificity, sm.FallOut, sm.MissRate, sm.NPV, sm.FDR, sm.FOR,
             sm.Prevalence, sm.Jaccard, sm.BalancedAccuracy, sm.Recall):
    CORPUS[_cls.__name__] = (lambda c: lambda: _multiclass(c(3)))(_cls)


# -- monitoring (issue #31): Drift (scores, no labels) and Estimated (probabilities, no labels) --
def _scores(m: sm.Metric, n: int = 30) -> sm.Metric:
    """Scores of shape (n,) in [0, 1] (Drift's scores, Estimated's binary probabilities)."""
    rng = _rng()
    return m.update(np.round(rng.random(n), 2), sample_weight=rng.random(n) + 0.1)


def _probabilities(m: sm.Metric, n: int = 30, c: int = 3) -> sm.Metric:
    """Rows of c probabilities summing to 1 (multiclass Drift's scores, Estimated's y_prob)."""
    rng = _rng()
    return m.update(rng.dirichlet(np.ones(c), n), sample_weight=rng.random(n) + 0.1)


_REF = np.round(np.random.default_rng(31).random((40, 3)), 2)
CORPUS.update({
    "Drift": lambda: _scores(sm.Drift(_REF[:, 0], bins=4)),
    "Drift-bounded": lambda: _scores(sm.Drift(_REF[:, 1], max_bytes=2048), 300),
    "Drift-multiclass": lambda: _probabilities(sm.Drift(_REF, bins=3)),
    "Drift-multiclass-bounded": lambda: _probabilities(sm.Drift(_REF, bins=3, max_bytes=4096), 200),
    "Estimated-AUROC": lambda: _scores(sm.Estimated(sm.AUROC())),
    "Estimated-MetricSet": lambda: _scores(sm.Estimated(sm.MetricSet(a=sm.Accuracy(), p=sm.Precision(),
                                                                    ap=sm.AveragePrecision(max_bytes=2048)))),
    "Estimated-multiclass": lambda: _probabilities(sm.Estimated(sm.MetricSet(a=sm.Accuracy(3),
                                                                             r=sm.Recall(3, average=None)))),
})


def _delayed_multiclass() -> sm.Metric:
    dl = sm.DelayedLabels(sm.MetricSet(a=sm.Accuracy(3), k=sm.TopKAccuracy(3, k=2)), capacity=10)
    rng = _rng()
    dl.predict(list(range(6)), rng.random((6, 3)))
    dl.label([0, 1, 2], [0, 2, 1])
    return dl


# -- reg-delayed: DelayedLabels around regression metrics (issue #30)
def _delayed_regression() -> sm.Metric:
    dl = sm.DelayedLabels(sm.MetricSet(mse=sm.MeanSquaredError(), msle=sm.MeanSquaredLogError()),
                          ttl=100.0, clock=lambda: 5.0)
    rng = _rng()
    dl.predict(list(range(6)), rng.random(6) * 3, sample_weight=rng.random(6) + 0.1)
    dl.label([4, 0, 2], rng.random(3) * 3)
    return dl


def _delayed_intervals() -> sm.Metric:
    dl = sm.DelayedLabels(sm.IntervalScore(0.2), capacity=10)
    rng = _rng()
    lower = rng.random(5)
    dl.predict(["a", "b", "c", "d", "e"], np.stack([lower, lower + rng.random(5)], axis=1))
    dl.label(["c", "a"], rng.random(2))
    return dl


def _estimated(m: sm.Metric) -> sm.Metric:
    rng = _rng()
    return m.update(rng.random(8), sample_weight=rng.random(8) + 0.1)


CORPUS["Window-Estimated"] = lambda: _estimated(sm.Window(Estimated(sm.MetricSet(
    a=sm.Accuracy(), r=sm.AUROC())), size=5))
CORPUS["Decayed-Estimated"] = lambda: _estimated(sm.Decayed(Estimated(sm.Precision()), half_life=3.0))
CORPUS["Decayed-Estimated-rows"] = lambda: _estimated(sm.Decayed(Estimated(sm.AUROC()), half_life=3.0))
CORPUS["DelayedLabels-regression"] = _delayed_regression
CORPUS["DelayedLabels-intervals"] = _delayed_intervals
# -- end reg-delayed


def saved(name: str) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sm.dumps(CORPUS[name]())


def split(data: bytes) -> tuple[dict[str, Any], bytes]:
    """(header, payload) of a state file."""
    body = data[len(MAGIC) + 32:]
    n = int.from_bytes(body[:8], "little")
    return json.loads(body[8:8 + n]), body[8 + n:]


def build(header: Any, payload: bytes, raw: bytes | None = None) -> bytes:
    """A state file from a header (or raw header bytes) and payload, with a valid checksum."""
    text = raw if raw is not None else json.dumps(header).encode()
    body = len(text).to_bytes(8, "little") + text + payload
    return MAGIC + hashlib.sha256(body).digest() + body


#: Result keys that may hold +inf by definition: curves' ``thresholds`` (the first one, by
#: scikit-learn's layout) and Drift's ``class_chi2`` (a class the reference never predicts, seen
#: now: docs/definitions/monitoring.md).
INFINITE_BY_DEFINITION = ("thresholds", "class_chi2")


def values_of(result: Any, skip: tuple[str, ...] = ("thresholds",)) -> list[float]:
    """Every number in a compute() result (floats, arrays, dicts, curve results), except those
    under the keys ``skip`` (default: curves' ``thresholds``, whose first one is +inf by
    scikit-learn's layout; :data:`INFINITE_BY_DEFINITION` for the finiteness checks)."""
    out: list[float] = []
    if hasattr(result, "_asdict"):
        result = result._asdict()
    elif hasattr(result, "__dict__") and not isinstance(result, np.ndarray):
        result = dict(vars(result))
    if isinstance(result, dict):
        for k, v in result.items():
            if k not in skip:
                out += values_of(v, skip)
    elif isinstance(result, (list, tuple)):
        for v in result:
            out += values_of(v, skip)
    elif isinstance(result, (int, float, np.number, np.ndarray)):
        arr = np.asarray(result)
        if arr.dtype.kind in "biuf":
            out += [float(x) for x in arr.reshape(-1)]
    return out
