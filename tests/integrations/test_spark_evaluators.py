"""streammetrics.spark_evaluators: MLlib's evaluator surface, equal to MLlib's own evaluators
(binary with numBins=0, i.e. exact) on the same DataFrame, and usable in CrossValidator."""

from __future__ import annotations

import os
import shutil
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime", allow_module_level=True)

from pyspark.ml import evaluation as mlev  # noqa: E402
from pyspark.ml.linalg import Vectors  # noqa: E402

from streammetrics.spark_evaluators import (  # noqa: E402
    BinaryClassificationEvaluator,
    MulticlassClassificationEvaluator,
    RegressionEvaluator,
)


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        session = (SparkSession.builder.master("local[2]").appName("streammetrics-evaluators")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _binary_frame(spark, n: int = 400):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, n).astype(float)
    s = np.round(rng.normal(size=n) + y, 1) + 0.0  # ties; no -0.0 (MLlib keys -0.0 apart from 0.0)
    w = rng.integers(1, 4, n).astype(float)
    rows = [(float(a), Vectors.dense([-b, b]), float(b), float(c)) for a, b, c in zip(y, s, w, strict=True)]
    return spark.createDataFrame(rows, ["label", "rawPrediction", "score", "weight"]).repartition(3)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_binary_equals_mllib_exact(spark):
    df = _binary_frame(spark)
    for metric in ("areaUnderROC", "areaUnderPR"):
        for weight in (None, "weight"):
            ours = BinaryClassificationEvaluator(metricName=metric, weightCol=weight).evaluate(df)
            kw = {"weightCol": weight} if weight else {}
            theirs = mlev.BinaryClassificationEvaluator(metricName=metric, numBins=0, **kw).evaluate(df)
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12), (metric, weight)
    plain = BinaryClassificationEvaluator(rawPredictionCol="score").evaluate(df)  # a numeric column
    assert plain == BinaryClassificationEvaluator().evaluate(df)
    with pytest.raises(ValueError, match="metricName: must be one of"):
        BinaryClassificationEvaluator(metricName="auc").evaluate(df)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_multiclass_equals_mllib(spark):
    rng = np.random.default_rng(5)
    n, k = 300, 4
    y = rng.integers(0, k, n).astype(float)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n)).astype(float)
    prob = rng.dirichlet(np.ones(k), n)
    w = rng.integers(1, 4, n).astype(float)
    rows = [(float(a), float(b), Vectors.dense(c), float(d)) for a, b, c, d in zip(y, p, prob, w, strict=True)]
    df = spark.createDataFrame(rows, ["label", "prediction", "probability", "weight"]).repartition(3)
    names = ["f1", "accuracy", "weightedPrecision", "weightedRecall", "weightedTruePositiveRate",
             "weightedFalsePositiveRate", "weightedFMeasure", "truePositiveRateByLabel",
             "falsePositiveRateByLabel", "precisionByLabel", "recallByLabel", "fMeasureByLabel", "hammingLoss",
             "logLoss"]
    for name in names:
        for weight in (None, "weight"):
            kw = {"weightCol": weight} if weight else {}
            ours = MulticlassClassificationEvaluator(metricName=name, metricLabel=2.0, beta=0.5, **kw)
            theirs = mlev.MulticlassClassificationEvaluator(metricName=name, metricLabel=2.0, beta=0.5, **kw)
            assert ours.evaluate(df) == pytest.approx(theirs.evaluate(df), rel=1e-9, abs=1e-12), (name, weight)
            assert ours.isLargerBetter() == theirs.isLargerBetter()


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_drops_into_cross_validator(spark):
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder

    rng = np.random.default_rng(8)
    n = 300
    x = rng.normal(size=(n, 3))
    y = (x[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(float)
    df = spark.createDataFrame([(float(a), Vectors.dense(b)) for a, b in zip(y, x, strict=True)], ["label", "features"])
    lr = LogisticRegression(maxIter=20)
    grid = ParamGridBuilder().addGrid(lr.regParam, [0.0, 1.0]).build()
    runs = {}
    for name, ev in (("ours", BinaryClassificationEvaluator()),
                     ("mllib", mlev.BinaryClassificationEvaluator(numBins=0))):
        cv = CrossValidator(estimator=lr, estimatorParamMaps=grid, evaluator=ev, numFolds=2, seed=1)
        runs[name] = cv.fit(df).avgMetrics
    np.testing.assert_allclose(runs["ours"], runs["mllib"], rtol=1e-9)


@pytest.mark.parametrize(("cls", "name", "default"), [
    (BinaryClassificationEvaluator, "averagePrecision", "areaUnderROC"),
    (MulticlassClassificationEvaluator, "accuracy", "f1"),
    (RegressionEvaluator, "r2", "rmse"),
])
def test_metric_name_accessors_and_weight(cls, name: str, default: str) -> None:
    ev = cls()
    assert ev.getMetricName() == default and ev._weight() is None
    assert ev.setMetricName(name) is ev and ev.getMetricName() == name
    assert ev.copy().getMetricName() == name  # a Params copy (what CrossValidator makes) keeps it
    assert cls(weightCol="w")._weight() == "w"


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_regression_equals_mllib_and_sklearn_and_drops_into_cross_validator(spark):
    """Issue #30: RegressionEvaluator equals scikit-learn's (weights, ties) and MLlib's (but the
    weighted R², see the module docstring), and a CrossValidator of a LinearRegression picks
    with it as with MLlib's."""
    from pyspark.ml.regression import LinearRegression
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder
    from sklearn import metrics as skm

    rng = np.random.default_rng(9)
    n = 300
    x = rng.normal(size=(n, 3))
    y = np.round(x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=n), 1)
    p = np.round(y + rng.normal(size=n), 1)
    w = rng.integers(1, 4, n).astype(float)
    rows = [(float(a), float(b), float(c), Vectors.dense(d)) for a, b, c, d in zip(y, p, w, x, strict=True)]
    df = spark.createDataFrame(rows, ["label", "prediction", "weight", "features"]).repartition(3)
    sk = {"rmse": skm.root_mean_squared_error, "mse": skm.mean_squared_error, "r2": skm.r2_score,
          "mae": skm.mean_absolute_error}
    for name, ref in sk.items():
        for weight in (None, "weight"):
            kw = {"weightCol": weight} if weight else {}
            ours = RegressionEvaluator(metricName=name, **kw)
            theirs = mlev.RegressionEvaluator(metricName=name, **kw)
            got = ours.evaluate(df)
            assert got == pytest.approx(ref(y, p, sample_weight=None if weight is None else w), rel=1e-12)
            if (name, weight) != ("r2", "weight"):  # MLlib's weighted R² differs (module docstring)
                assert got == pytest.approx(theirs.evaluate(df), rel=1e-9), (name, weight)
            assert ours.isLargerBetter() == theirs.isLargerBetter()
    with pytest.raises(ValueError, match="metricName: must be one of"):
        RegressionEvaluator(metricName="var").evaluate(df)
    with pytest.raises(ValueError, match="throughOrigin"):
        RegressionEvaluator(throughOrigin=True).evaluate(df)
    lr = LinearRegression(maxIter=10)
    grid = ParamGridBuilder().addGrid(lr.regParam, [0.0, 10.0]).build()
    runs = {}
    for name, ev in (("ours", RegressionEvaluator()), ("mllib", mlev.RegressionEvaluator())):
        cv = CrossValidator(estimator=lr, estimatorParamMaps=grid, evaluator=ev, numFolds=2, seed=1)
        runs[name] = cv.fit(df.select("label", "features")).avgMetrics
    np.testing.assert_allclose(runs["ours"], runs["mllib"], rtol=1e-9)
