"""streammetrics.spark against a real local Spark (local[2]): the single-process result on the
same rows, for any partitioning, empty partitions included."""

from __future__ import annotations

import os
import shutil
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime", allow_module_level=True)

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.spark import evaluate  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        session = (
            SparkSession.builder.master("local[2]")
            .appName("streammetrics-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _frame(spark, df: pd.DataFrame, partitions: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return spark.createDataFrame(df).repartition(partitions)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("partitions", [1, 7])
def test_binary_set_equals_single_process(spark, partitions: int) -> None:
    df = cases.classification_frame()
    got = evaluate(_frame(spark, df, partitions), cases.binary_set(), label="y", score="p", weight="w")
    cases.assert_same(got, cases.single_process(cases.binary_set(), df, label="y", score="p", weight="w"))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_multiclass_columns_and_shapes(spark) -> None:
    df = cases.classification_frame(500, seed=3)
    frame = _frame(spark, df, 3)
    scores = ["s0", "s1", "s2"]
    ref = cases.single_process(cases.multiclass_set(), df, label="c", score=scores)
    cases.assert_same(evaluate(frame, cases.multiclass_set(), label="c", score=scores), ref)
    one = evaluate(frame, sm.AUROC(num_classes=3), label="c", score=scores, depth=1)
    cases.assert_same(one, ref["auroc"])
    accs = evaluate(frame, {"acc": sm.Accuracy(num_classes=3)}, label="c", score=scores, compute=False)
    assert isinstance(accs["acc"], sm.Accuracy)
    cases.assert_same(accs["acc"].compute(), ref["acc"])


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_more_partitions_than_rows_and_no_rows(spark) -> None:
    df = cases.classification_frame(5, seed=4)
    got = evaluate(_frame(spark, df, 9), sm.MetricSet(cm=sm.ConfusionMatrix()), label="y", score="p")
    np.testing.assert_array_equal(got["cm"], cases.single_process(
        sm.MetricSet(cm=sm.ConfusionMatrix()), df, label="y", score="p")["cm"])
    empty = _frame(spark, df, 2).limit(0)
    np.testing.assert_array_equal(
        evaluate(empty, sm.ConfusionMatrix(), label="y", score="p"), np.zeros((2, 2))
    )


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_retrieval_rows_shuffled_by_query(spark) -> None:
    df = cases.retrieval_frame()
    cols = dict(label="rel", score="s", query="q", doc_id="d")
    got = evaluate(_frame(spark, df.sample(frac=1.0, random_state=0), 5), cases.retrieval_set(), **cols)
    cases.assert_same(got, cases.single_process(cases.retrieval_set(), df, **cols))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_bad_arguments_are_value_errors(spark) -> None:
    frame = _frame(spark, cases.classification_frame(10), 1)
    with pytest.raises(ValueError, match=r"columns \['nope'\]"):
        evaluate(frame, sm.F1(), label="nope", score="p")
    with pytest.raises(ValueError, match="depth"):
        evaluate(frame, sm.F1(), label="y", score="p", depth=0)
    with pytest.raises(ValueError, match="query"):
        evaluate(frame, sm.MAP(), label="y", score="p")


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("by", ["region", ["region", "tier"]])
def test_slices_equal_sliced_in_one_process(spark, by) -> None:
    df = cases.sliced_frame()
    cols = dict(label="y", score="p", weight="w")
    # in order (partitions see different slices), more partitions than some slices have rows
    frame = spark.createDataFrame(df).coalesce(1).repartitionByRange(6, "region")
    got = evaluate(frame, cases.binary_set(), by=by, **cols)
    cases.assert_same(got, cases.single_process_sliced(cases.binary_set(), df, by, **cols))
    one = evaluate(_frame(spark, df, 3), sm.AUROC(), by=by, **cols)
    cases.assert_same(one, cases.single_process_sliced(sm.AUROC(), df, by, **cols))
    acc = evaluate(frame.limit(0), sm.F1(), by=by, label="y", score="p", compute=False)
    assert isinstance(acc, sm.Sliced) and acc.compute() == {}


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_regression_equals_sklearn(spark) -> None:
    """Issue #30: regression metrics on Spark (7 partitions, and more partitions than rows)
    equal scikit-learn / scipy."""
    df = cases.regression_frame()
    cases.check_regression(evaluate, _frame(spark, df, 7), df)
    few = cases.regression_frame(6, seed=12)
    got = evaluate(_frame(spark, few, 9), cases.regression_set(), target="y", prediction="p", depth=1)
    cases.assert_same(got, cases.regression_oracle(few))


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.skipif(not cases.sliced_takes_regression(),
                    reason="needs Sliced of regression metrics (main's wrappers/sliced)")
def test_regression_slices_equal_sliced_in_one_process(spark) -> None:
    cases.check_regression_sliced(
        evaluate, lambda df: spark.createDataFrame(df).coalesce(1).repartitionByRange(4, "region"),
        cases.regression_frame())


def _vector_frame(spark, df: pd.DataFrame, sparse_every: int = 0):
    """``df``'s class scores s0..s2 and the binary (1 - p, p) as MLlib vectors (some sparse)."""
    from pyspark.ml.linalg import Vectors

    def vec(i: int, values: list[float]):
        if sparse_every and i % sparse_every == 0:
            nz = [j for j, v in enumerate(values) if v != 0.0]
            return Vectors.sparse(len(values), nz, [values[j] for j in nz])
        return Vectors.dense(values)

    rows = [(int(r.y), int(r.c), float(r.w), vec(i, [1.0 - r.p, r.p]), vec(i, [r.s0, r.s1, r.s2]))
            for i, r in enumerate(df.itertuples())]
    return spark.createDataFrame(rows, ["y", "c", "w", "prob", "cls"]).repartition(3)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_mllib_vector_scores_equal_sklearn(spark) -> None:
    """Issue #32: an MLlib vector score column -- binary metrics take element positive_index
    (default 1), multiclass metrics the whole vector; dense and sparse vectors alike."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    df = cases.classification_frame(800, seed=21)
    cls = df[["s0", "s1", "s2"]] + 0.01  # probabilities (sklearn's ovr AUROC insists), tied
    df[["s0", "s1", "s2"]] = cls.div(cls.sum(axis=1), axis=0)
    frame = _vector_frame(spark, df, sparse_every=5)
    got = evaluate(frame, sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision()),
                   label="y", score="prob", weight="w")
    assert got["auroc"] == pytest.approx(roc_auc_score(df.y, df.p, sample_weight=df.w), abs=1e-12)
    assert got["ap"] == pytest.approx(average_precision_score(df.y, df.p, sample_weight=df.w), abs=1e-12)
    neg = evaluate(frame, sm.AUROC(), label="y", score="prob", positive_index=0)
    assert neg == pytest.approx(roc_auc_score(df.y, 1.0 - df.p), abs=1e-12)
    multi = evaluate(frame, sm.AUROC(num_classes=3), label="c", score="cls", weight="w")
    probs = df[["s0", "s1", "s2"]].to_numpy()
    assert multi == pytest.approx(roc_auc_score(df.c, probs, multi_class="ovr", sample_weight=df.w),
                                  abs=1e-12)
    cases.assert_same(multi, evaluate(_frame(spark, df, 3), sm.AUROC(num_classes=3), label="c",
                                      score=["s0", "s1", "s2"], weight="w"))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_logistic_regression_probability_column(spark) -> None:
    """The column as MLlib writes it: LogisticRegression's ``probability``."""
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.feature import VectorAssembler
    from sklearn.metrics import roc_auc_score

    df = cases.classification_frame(300, seed=22)
    df["x"] = df.p + 0.3 * df.y
    frame = VectorAssembler(inputCols=["x", "w"], outputCol="features").transform(
        _frame(spark, df[["y", "x", "w"]].astype({"y": float}), 2))
    scored = LogisticRegression(labelCol="y", maxIter=5).fit(frame).transform(frame)
    got = evaluate(scored, sm.AUROC(), label="y", score="probability")
    rows = scored.select("y", "probability").toPandas()
    ref = roc_auc_score(rows.y, np.stack(rows.probability.map(lambda v: v.toArray()))[:, 1])
    assert got == pytest.approx(ref, abs=1e-12)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_positive_index_is_checked(spark) -> None:
    frame = _vector_frame(spark, cases.classification_frame(20, seed=23))
    for bad in (-1, 1.5, "1"):
        with pytest.raises(ValueError, match=f"positive_index.*{bad!r}"):
            evaluate(frame, sm.AUROC(), label="y", score="prob", positive_index=bad)
    with pytest.raises(Exception, match="positive_index: 2 is out of range"):
        evaluate(frame, sm.AUROC(), label="y", score="prob", positive_index=2)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_nulls_refused_naming_the_row_or_skipped(spark) -> None:
    """Issue #32: a null is a ValueError naming the column, the partition's row and its values
    (nulls="error", the default); nulls="skip" drops every row with a null in a used column and
    warns how many, the values those of the other rows."""
    from streammetrics._engines.request import NullRowsSkipped

    df = cases.sliced_frame(400, seed=24)
    holes = df.astype({"p": object, "region": object})
    holes.loc[[3, 50], "p"] = None
    holes.loc[[7], "region"] = None
    holes.loc[[50, 90], "w"] = np.nan
    frame = spark.createDataFrame(holes.astype({"p": float})).coalesce(1)
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row 3 of Spark partition 0 "
                                         r"\(index 3; row \{'y': \d, 'p': nan, 'w': [\d.]+\}\)"):
        evaluate(frame, sm.AUROC(), label="y", score="p", weight="w")
    kept = df.drop(index=[3, 50, 90])
    with pytest.warns(NullRowsSkipped, match=r"skipped 3 row\(s\)"):
        got = evaluate(frame, cases.binary_set(), label="y", score="p", weight="w", nulls="skip")
    cases.assert_same(got, cases.single_process(cases.binary_set(), kept, label="y", score="p", weight="w"))
    with pytest.warns(NullRowsSkipped, match=r"skipped 4 row\(s\)"):
        sliced = evaluate(frame, sm.F1(), label="y", score="p", weight="w", by="region", nulls="skip")
    cases.assert_same(sliced, cases.single_process_sliced(sm.F1(), kept.drop(index=[7]), "region",
                                                          label="y", score="p", weight="w"))
    with pytest.raises(ValueError, match="nulls: must be one of.*'drop'"):
        evaluate(frame, sm.F1(), label="y", score="p", nulls="drop")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_as_frame_is_a_spark_dataframe_of_the_values(spark) -> None:
    """Issue #32: as_frame=True gives a Spark DataFrame, one row per metric (an array value one
    row per element), per slice and metric with by=; the same numbers as the dict."""
    df = cases.sliced_frame(600, seed=25)
    frame = _frame(spark, df, 3)
    cols = dict(label="y", score="p", weight="w")
    values = evaluate(frame, cases.binary_set(), **cols)
    table = evaluate(frame, cases.binary_set(), as_frame=True, **cols).toPandas()
    assert list(table.columns) == ["metric", "value"]
    got = dict(zip(table.metric, table.value, strict=True))
    assert got.pop("auroc") == values["auroc"] and got.pop("ap") == values["ap"]
    assert got == {**{k: float(values[k]) for k in ("f1", "bounded")},
                   **{f"cm[{i}, {j}]": float(values["cm"][i, j]) for i in range(2) for j in range(2)}}
    sliced = evaluate(frame, sm.AUROC(), by=["region", "tier"], as_frame=True, **cols).toPandas()
    ref = evaluate(frame, sm.AUROC(), by=["region", "tier"], **cols)
    assert list(sliced.columns) == ["region", "tier", "metric", "value"]
    assert set(sliced.metric) == {"AUROC"}
    assert {(r.region, r.tier): r.value for r in sliced.itertuples()} == ref
    empty = evaluate(frame.limit(0), sm.F1(), by="region", as_frame=True, label="y", score="p")
    assert empty.columns == ["region", "metric", "value"] and empty.count() == 0
    with pytest.raises(ValueError, match="as_frame: .*compute=False"):
        evaluate(frame, sm.F1(), label="y", score="p", as_frame=True, compute=False)
    with pytest.raises(ValueError, match="as_frame: must be True or False.*'yes'"):
        evaluate(frame, sm.F1(), label="y", score="p", as_frame="yes")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_column_expressions_and_grouped_frames(spark) -> None:
    """Issue #32: Column expressions for label=/score=, and df.groupBy(...) meaning by=."""
    from pyspark.ml.functions import vector_to_array
    from pyspark.sql import functions as F

    df = cases.classification_frame(500, seed=26)
    frame = _vector_frame(spark, df)
    plain = evaluate(frame, cases.binary_set(), label="y", score="prob", weight="w")
    got = evaluate(frame, cases.binary_set(), label=(F.col("c") * 0 + F.col("y")).cast("int"),
                   score=vector_to_array(F.col("prob"))[1], weight=F.col("w"))
    cases.assert_same(got, plain)
    cases.assert_same(evaluate(frame, sm.AUROC(), label="y", score=F.col("prob"), weight="w"),
                      plain["auroc"])
    multi = evaluate(frame, sm.AUROC(num_classes=3), label="c",
                     score=[vector_to_array(F.col("cls"))[i] for i in range(3)])
    cases.assert_same(multi, evaluate(frame, sm.AUROC(num_classes=3), label="c", score="cls"))
    sliced = cases.sliced_frame(600, seed=27)
    sframe = _frame(spark, sliced, 3)
    cols = dict(label="y", score="p", weight="w")
    cases.assert_same(evaluate(sframe.groupBy("region"), cases.binary_set(), **cols),
                      evaluate(sframe, cases.binary_set(), by="region", **cols))
    two = evaluate(sframe.groupBy("region", "tier"), sm.F1(), as_frame=True, **cols).toPandas()
    assert list(two.columns) == ["region", "tier", "metric", "value"]
    assert {(r.region, r.tier): r.value for r in two.itertuples()} == evaluate(
        sframe, sm.F1(), by=["region", "tier"], **cols)
    with pytest.raises(ValueError, match=r"by: the frame is already grouped by \['region'\]"):
        evaluate(sframe.groupBy("region"), sm.F1(), by="tier", **cols)
    with pytest.raises(ValueError, match="df: a grouped frame must be grouped by column names"):
        evaluate(sframe.groupBy(F.col("w") > 0.5), sm.F1(), **cols)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_merge_levels_on_the_executors_give_the_single_process_values(spark, depth: int) -> None:
    """Issue #32: the tree's levels run as DataFrame steps (9 partitions: one level at depth 2
    and 3, none at depth 1) and the driver merges what is left once; same values at every depth."""
    df = cases.classification_frame(900, seed=41)
    got = evaluate(_frame(spark, df, 9), cases.binary_set(), label="y", score="p", weight="w", depth=depth)
    cases.assert_same(got, cases.single_process(cases.binary_set(), df, label="y", score="p", weight="w"))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_arrow_batch_setting_is_restored(spark) -> None:
    """Issue #32: evaluate asks for larger Arrow batches for its own job only: the session's
    setting is the same afterwards, and a value the user set is kept (and used)."""
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    df = cases.classification_frame(300, seed=43)
    before = spark.conf.get(key)
    ref = cases.single_process(sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), df, label="y", score="p")
    cases.assert_same(evaluate(_frame(spark, df, 2), sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()),
                               label="y", score="p"), ref)
    assert spark.conf.get(key) == before
    spark.conf.set(key, "7")
    try:
        cases.assert_same(evaluate(_frame(spark, df, 2), sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()),
                                   label="y", score="p"), ref)
        assert spark.conf.get(key) == "7"
    finally:
        spark.conf.set(key, before)
