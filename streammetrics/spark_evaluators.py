"""Spark MLlib's evaluator surface on streammetrics: ``BinaryClassificationEvaluator``,
``MulticlassClassificationEvaluator`` and ``RegressionEvaluator`` with MLlib's parameters and
metric names, so that they drop into ``pyspark.ml.tuning.CrossValidator`` /
``TrainValidationSplit`` where MLlib's own would go.

Install the extra: ``pip install '.[spark]'`` (importing this module imports pyspark).

Each ``evaluate(df)`` runs :func:`streammetrics.spark.evaluate` (per-partition states merged in a
tree, exact) on the evaluator's columns. MLlib ``Vector`` columns (``rawPrediction``,
``probability``) are read as arrays (``pyspark.ml.functions.vector_to_array``): binary scores are
element 1, the positive class's. Differences from MLlib, on purpose:

* ``areaUnderROC`` and ``areaUnderPR`` are exact (MLlib's evaluator down-samples the curve to
  ``numBins=1000`` bins by default; with ``numBins=0`` it is exact and equals these to rounding).
  MLlib also keys a score of -0.0 apart from 0.0 (Java's ``Double.equals``), splitting what is
  one tie here (and in scikit-learn). ``areaUnderPR`` is MLlib's definition: the trapezoidal
  area of the PR curve started at (0, precision at the highest threshold); ``averagePrecision``
  is the step AP (scikit-learn's).
* Multiclass labels and predictions are class indices 0..K-1 (MLlib's doubles); K is
  ``numClasses`` or one aggregation job finds it. ``f1`` and the ``weighted*`` measures weight
  each class by its (weighted) count in the labels, and a precision or recall of no sample is 0,
  as MLlib's ``MulticlassMetrics``.
* ``RegressionEvaluator`` computes ``rmse``, ``mse``, ``mae`` and ``r2`` on the regression
  family's moments state, as scikit-learn defines them -- MLlib's values, except the weighted
  ``r2``: MLlib divides the weighted squared error by its unbiased weighted variance times
  (total weight - 1), not by the weighted sum of squares around the weighted mean (equal without
  weights). MLlib's ``var`` (the variance of the predictions around the mean label) and
  ``throughOrigin=True`` have no streammetrics counterpart and are refused (``ValueError``).

Complexity: one pass over the rows per ``evaluate`` (two for multiclass without ``numClasses``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pyspark import keyword_only
from pyspark.ml.evaluation import Evaluator
from pyspark.ml.functions import vector_to_array
from pyspark.ml.linalg import VectorUDT
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasLabelCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasWeightCol,
)
from pyspark.sql import functions as F

import streammetrics as sm

from .spark import evaluate as _evaluate_frame

__all__ = ["BinaryClassificationEvaluator", "MulticlassClassificationEvaluator", "RegressionEvaluator"]

_BINARY = ("areaUnderROC", "areaUnderPR", "averagePrecision")
_MULTICLASS = ("f1", "accuracy", "weightedPrecision", "weightedRecall", "weightedTruePositiveRate",
               "weightedFalsePositiveRate", "weightedFMeasure", "truePositiveRateByLabel",
               "falsePositiveRateByLabel", "precisionByLabel", "recallByLabel", "fMeasureByLabel",
               "logLoss", "hammingLoss")
_REGRESSION = ("rmse", "mse", "r2", "mae")
_SMALLER_IS_BETTER = {"rmse", "mse", "mae", "weightedFalsePositiveRate", "falsePositiveRateByLabel",
                      "logLoss", "hammingLoss"}


def _numeric(df: Any, name: str, element: int | None = None) -> Any:
    """Column ``name`` as a number: a Vector's ``element`` (or the whole array), else cast."""
    field = df.schema[name]
    if isinstance(field.dataType, VectorUDT):
        arr = vector_to_array(F.col(name))
        return arr if element is None else arr[element]
    return F.col(name).cast("double")


def _checked(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}: must be one of {list(allowed)}, got {value!r}")
    return str(value)


def _pr_area_mllib(result: Any) -> float:
    """MLlib's ``areaUnderPR`` from a PR curve's counts: the trapezoids of (recall, precision)
    over the distinct thresholds in decreasing order, from (0, precision at the first)."""
    c = result.counts
    tps, fps = c.tps, c.fps
    if tps.shape[0] == 0 or c.total_pos <= 0:
        return float("nan")
    recall = tps / c.total_pos
    precision = tps / (tps + fps)
    xs = [0.0, *recall.tolist()]
    ys = [float(precision[0]), *precision.tolist()]
    return float(sum((xs[i + 1] - xs[i]) * (ys[i + 1] + ys[i]) / 2.0 for i in range(len(xs) - 1)))


_E = TypeVar("_E", bound="_Evaluator")


class _Evaluator(Evaluator, HasLabelCol, HasWeightCol):
    """What both evaluators share: ``metricName``'s accessors and the optional weight column."""

    metricName: Param[str]  # each evaluator's own, with its names

    def setMetricName(self: _E, value: str) -> _E:
        """Set ``metricName``; returns ``self``."""
        return self._set(metricName=value)

    def getMetricName(self) -> str:
        """``metricName`` (or its default)."""
        return str(self.getOrDefault(self.metricName))

    def _weight(self) -> str | None:
        """The ``weightCol`` when it is set, else None (unweighted)."""
        return self.getWeightCol() if self.isSet(self.weightCol) else None


class BinaryClassificationEvaluator(_Evaluator, HasRawPredictionCol):
    """MLlib's ``BinaryClassificationEvaluator`` on streammetrics' exact AUROC / PR curve.

    Parameters
    ----------
    rawPredictionCol : str, default "rawPrediction"
        Scores: a number per row, or an MLlib Vector whose element 1 is the positive class's.
    labelCol : str, default "label"
        Labels 0 / 1.
    metricName : {"areaUnderROC", "areaUnderPR", "averagePrecision"}, default "areaUnderROC"
        See the module docstring for the definitions.
    weightCol : str, optional
        Sample weights.
    maxBytes : int, optional
        Bound the state's memory (binned ranking state; the value is then the binned estimate).

    Notes
    -----
    One distributed pass per ``evaluate``; exact unless ``maxBytes`` bins several scores.
    """

    metricName: Param[str] = Param(Params._dummy(), "metricName", f"metric name in evaluation {_BINARY}",
                                   typeConverter=TypeConverters.toString)
    maxBytes: Param[int] = Param(Params._dummy(), "maxBytes", "bound the ranking state's memory (bytes)",
                                 typeConverter=TypeConverters.toInt)

    @keyword_only
    def __init__(self, *, rawPredictionCol: str = "rawPrediction", labelCol: str = "label",
                 metricName: str = "areaUnderROC", weightCol: str | None = None,
                 maxBytes: int | None = None) -> None:
        super().__init__()
        self._setDefault(metricName="areaUnderROC", rawPredictionCol="rawPrediction", labelCol="label")
        self._set(**self._input_kwargs)  # type: ignore[attr-defined]  # set by @keyword_only

    def isLargerBetter(self) -> bool:
        """True: every binary measure here is maximised."""
        return True

    def _evaluate(self, dataset: Any) -> float:
        metric = _checked("metricName", self.getMetricName(), _BINARY)
        weight = self._weight()
        cols = [F.col(self.getLabelCol()).cast("double").alias("y"),
                _numeric(dataset, self.getRawPredictionCol(), 1).alias("s")]
        if weight:
            cols.append(F.col(weight).cast("double").alias("w"))
        frame = dataset.select(*cols)
        w = "w" if weight else None
        kw: dict[str, Any] = {}
        if self.isSet(self.maxBytes):
            kw["max_bytes"] = self.getOrDefault(self.maxBytes)
        if metric == "areaUnderROC":
            return float(_evaluate_frame(frame, sm.AUROC(**kw), label="y", score="s", weight=w))
        if metric == "averagePrecision":
            return float(_evaluate_frame(frame, sm.AveragePrecision(**kw), label="y", score="s", weight=w))
        return _pr_area_mllib(_evaluate_frame(frame, sm.PRCurve(**kw), label="y", score="s", weight=w))


class MulticlassClassificationEvaluator(_Evaluator, HasPredictionCol, HasProbabilityCol):
    """MLlib's ``MulticlassClassificationEvaluator`` on streammetrics' confusion counts (and log
    loss): its metric names, ``metricLabel`` for the by-label measures, ``beta`` for the F-measures.

    Parameters
    ----------
    predictionCol : str, default "prediction"
        Predicted class indices.
    labelCol : str, default "label"
        True class indices (0..K-1).
    metricName : str, default "f1"
        One of MLlib's: f1, accuracy, weightedPrecision, weightedRecall, weightedTruePositiveRate,
        weightedFalsePositiveRate, weightedFMeasure, truePositiveRateByLabel,
        falsePositiveRateByLabel, precisionByLabel, recallByLabel, fMeasureByLabel, logLoss,
        hammingLoss.
    weightCol : str, optional
        Sample weights.
    metricLabel : float, default 0.0
        The class of the by-label measures.
    beta : float, default 1.0
        The F-measures' beta.
    probabilityCol : str, default "probability"
        logLoss: the probabilities (an MLlib Vector of K entries).
    numClasses : int, optional
        K (default: one aggregation finds the largest index).

    Notes
    -----
    One distributed pass per ``evaluate`` (plus one aggregation without ``numClasses``).
    """

    metricName: Param[str] = Param(Params._dummy(), "metricName",
                                   f"metric name in evaluation {_MULTICLASS}",
                                   typeConverter=TypeConverters.toString)
    metricLabel: Param[float] = Param(Params._dummy(), "metricLabel", "the class of the by-label measures",
                                      typeConverter=TypeConverters.toFloat)
    beta: Param[float] = Param(Params._dummy(), "beta", "the F-measures' beta",
                               typeConverter=TypeConverters.toFloat)
    numClasses: Param[int] = Param(Params._dummy(), "numClasses", "the number of classes K",
                                   typeConverter=TypeConverters.toInt)

    @keyword_only
    def __init__(self, *, predictionCol: str = "prediction", labelCol: str = "label",
                 metricName: str = "f1", weightCol: str | None = None, metricLabel: float = 0.0,
                 beta: float = 1.0,
                 probabilityCol: str = "probability", numClasses: int | None = None) -> None:
        super().__init__()
        self._setDefault(metricName="f1", predictionCol="prediction", labelCol="label", metricLabel=0.0,
                         beta=1.0, probabilityCol="probability")
        self._set(**self._input_kwargs)  # type: ignore[attr-defined]  # set by @keyword_only

    def isLargerBetter(self) -> bool:
        """False for the error and false-positive-rate measures and the log loss."""
        return self.getMetricName() not in _SMALLER_IS_BETTER

    def _classes(self, frame: Any) -> int:
        if self.isSet(self.numClasses):
            return int(self.getOrDefault(self.numClasses))
        top = frame.agg(F.max(F.greatest(F.col("y"), F.col("p")))).collect()[0][0]
        return max(2, int(top) + 1) if top is not None else 2

    def _evaluate(self, dataset: Any) -> float:
        metric = _checked("metricName", self.getMetricName(), _MULTICLASS)
        weight = self._weight()
        wcol = [F.col(weight).cast("double").alias("w")] if weight else []
        w = "w" if weight else None
        if metric == "logLoss":
            frame = dataset.select(F.col(self.getLabelCol()).cast("double").alias("y"),
                                   _numeric(dataset, self.getProbabilityCol()).alias("prob"), *wcol)
            k = self.getOrDefault(self.numClasses) if self.isSet(self.numClasses) else \
                len(frame.select("prob").first()[0])
            frame = frame.select("y", *[F.col("prob")[i].alias(f"p{i}") for i in range(k)],
                                 *(["w"] if w else []))
            return float(_evaluate_frame(frame, sm.LogLoss(k), label="y", score=[f"p{i}" for i in range(k)],
                                         weight=w))
        frame = dataset.select(F.col(self.getLabelCol()).cast("double").alias("y"),
                               F.col(self.getPredictionCol()).cast("double").alias("p"), *wcol)
        k = self._classes(frame)
        beta = float(self.getOrDefault(self.beta))
        label = int(self.getOrDefault(self.metricLabel))
        members = {
            "f1": sm.FBeta(k, beta=1.0, average="weighted", zero_division=0.0),
            "accuracy": sm.Accuracy(k),
            "weightedPrecision": sm.Precision(k, average="weighted", zero_division=0.0),
            "weightedRecall": sm.Recall(k, average="weighted", zero_division=0.0),
            "weightedTruePositiveRate": sm.Recall(k, average="weighted", zero_division=0.0),
            "weightedFalsePositiveRate": sm.FallOut(k, average="weighted", zero_division=0.0),
            "weightedFMeasure": sm.FBeta(k, beta=beta, average="weighted", zero_division=0.0),
            "truePositiveRateByLabel": sm.Recall(k, average=None, zero_division=0.0),
            "falsePositiveRateByLabel": sm.FallOut(k, average=None, zero_division=0.0),
            "precisionByLabel": sm.Precision(k, average=None, zero_division=0.0),
            "recallByLabel": sm.Recall(k, average=None, zero_division=0.0),
            "fMeasureByLabel": sm.FBeta(k, beta=beta, average=None, zero_division=0.0),
            "hammingLoss": sm.Accuracy(k),
        }
        value = _evaluate_frame(frame, members[metric], label="y", score="p", weight=w)
        if metric == "hammingLoss":
            return float(1.0 - value)
        if metric.endswith("ByLabel"):
            return float(value[label])
        return float(value)


class RegressionEvaluator(_Evaluator, HasPredictionCol):
    """MLlib's ``RegressionEvaluator`` on streammetrics' regression moments (issue #30).

    Parameters
    ----------
    predictionCol : str, default "prediction"
        Predictions.
    labelCol : str, default "label"
        Targets.
    metricName : {"rmse", "mse", "r2", "mae"}, default "rmse"
        Root mean squared error, mean squared error, the coefficient of determination, mean
        absolute error (weighted with ``weightCol``), as ``sklearn.metrics`` defines them.
    weightCol : str, optional
        Sample weights.
    throughOrigin : bool, default False
        MLlib's R² of a regression through the origin: only False is supported.

    Notes
    -----
    One distributed pass per ``evaluate`` (per-partition moments merged in a tree, O(1) state).
    """

    metricName: Param[str] = Param(Params._dummy(), "metricName", f"metric name in evaluation {_REGRESSION}",
                                   typeConverter=TypeConverters.toString)
    throughOrigin: Param[bool] = Param(Params._dummy(), "throughOrigin",
                                       "whether the regression is through the origin (unsupported)",
                                       typeConverter=TypeConverters.toBoolean)

    @keyword_only
    def __init__(self, *, predictionCol: str = "prediction", labelCol: str = "label",
                 metricName: str = "rmse", weightCol: str | None = None,
                 throughOrigin: bool = False) -> None:
        super().__init__()
        self._setDefault(metricName="rmse", predictionCol="prediction", labelCol="label",
                         throughOrigin=False)
        self._set(**self._input_kwargs)  # type: ignore[attr-defined]  # set by @keyword_only

    def isLargerBetter(self) -> bool:
        """True for ``r2``; the errors are minimised."""
        return self.getMetricName() not in _SMALLER_IS_BETTER

    def _evaluate(self, dataset: Any) -> float:
        metric = _checked("metricName", self.getMetricName(), _REGRESSION)
        if self.getOrDefault(self.throughOrigin):
            raise ValueError("throughOrigin: only False is supported (the R² of a regression "
                             "through the origin has no streammetrics counterpart)")
        weight = self._weight()
        cols = [F.col(self.getLabelCol()).cast("double").alias("y"),
                F.col(self.getPredictionCol()).cast("double").alias("p")]
        if weight:
            cols.append(F.col(weight).cast("double").alias("w"))
        members = {"rmse": sm.RootMeanSquaredError(), "mse": sm.MeanSquaredError(),
                   "r2": sm.R2Score(), "mae": sm.MeanAbsoluteError()}
        return float(_evaluate_frame(dataset.select(*cols), members[metric], target="y", prediction="p",
                                     weight="w" if weight else None))
