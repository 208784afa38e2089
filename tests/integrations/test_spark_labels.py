"""streammetrics.spark.evaluate with exact AUROC / AP sets whose columns are not plain numbers
(issue #32 item 2) on a real local Spark: string labels with ``pos_label=`` / ``classes=``,
``DecimalType`` scores and labels, an MLlib vector score column with ``by=`` or several
classes -- by the range routes (direct Parquet ranges, shuffled ranges, keyed ranges), never the
state path's gather: one process's values on the rows Spark hands over (decimals read as float64,
as the state path reads them) within 1e-12; a label outside ``classes=`` refused naming it.
Few, small jobs (Spark is slow)."""

from __future__ import annotations

import warnings
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.spark as sm_spark  # noqa: E402
from streammetrics._engines import spark_keyed, spark_ranges  # noqa: E402

SCORES = ["s0", "s1", "s2"]


def _frame(spark: Any, df: pd.DataFrame) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return spark.createDataFrame(df).repartition(3)


def _floats(frame: Any) -> pd.DataFrame:
    """The frame's rows as one process reads them (a Decimal column as float64, :func:`column`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        pdf = frame.toPandas()
    return pdf.apply(lambda c: c.to_numpy(dtype=np.float64) if c.dtype == object and len(c) and
                     not isinstance(c.iloc[0], str | np.ndarray) and not hasattr(c.iloc[0], "toArray") else c)


@pytest.fixture
def no_gather() -> Any:
    with mock.patch.object(sm_spark, "_states", side_effect=AssertionError("the state path ran")), \
            mock.patch.object(spark_keyed, "keyed_values", wraps=spark_keyed.keyed_values) as keyed, \
            mock.patch.object(spark_ranges, "run_ranges", wraps=spark_ranges.run_ranges) as ranges:
        yield keyed, ranges


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_labels_decimals_and_vectors_take_the_ranges(spark_session, no_gather, tmp_path) -> None:
    from pyspark.ml.functions import array_to_vector
    from pyspark.sql import functions as F

    keyed, ranges = no_gather
    df = cases.labelled_frame(n=900, seed=6)
    frame = _frame(spark_session, df)
    # string labels, pos_label: shuffled ranges (any frame), weighted too
    got = sm_spark.evaluate(frame, cases.spam_set(), label="yb", score="p")
    cases.assert_same(got, cases.spam_set().update(df.yb, df.p).compute())
    got = sm_spark.evaluate(frame, cases.spam_set(), label="yb", score="p", weight="w")
    cases.assert_same(got, cases.spam_set().update(df.yb, df.p, sample_weight=df.w).compute())
    # direct Parquet ranges: bit for bit
    df.to_parquet(tmp_path / "part-0.parquet", row_group_size=300)
    got = sm_spark.evaluate(spark_session.read.parquet(str(tmp_path)), cases.spam_set(), label="yb", score="p")
    assert got == cases.spam_set().update(df.yb, df.p).compute() and ranges.call_count == 1
    # classes= strings, multiclass (keyed), and as a vector score column
    got = sm_spark.evaluate(frame, cases.animal_set(), label="yc", score=SCORES, weight="w")
    want = cases.animal_set().update(df.yc, df[SCORES].to_numpy(), sample_weight=df.w).compute()
    cases.assert_same(got, want)
    vectors = frame.withColumn("probability", array_to_vector(F.array(*SCORES)))
    got = sm_spark.evaluate(vectors, cases.animal_set(), label="yc", score="probability", weight="w")
    cases.assert_same(got, want)
    # binary by= over the vector's positive_index element, numeric labels 3 / 7 (pos_label=7)
    binary = sm.MetricSet(a=sm.AUROC(pos_label=7), ap=sm.AveragePrecision(pos_label=7))
    got = sm_spark.evaluate(vectors, binary, label="yn", score="probability", by="g", positive_index=2)
    cases.assert_same(got, sm.Sliced(binary.copy()).update(df.yn.to_numpy(), df.s2.to_numpy(),
                                                           slices=df.g.to_numpy()).compute())
    # Decimal scores and labels, by= (keyed) and multiclass: read as float64, as the state path does
    dec = frame.select(F.col("yn").cast("decimal(5,0)").alias("yn"), F.col("g"), F.col("yc"),
                       *[F.col(c).cast("decimal(12,3)").alias(c) for c in SCORES],
                       (F.col("p") / 3).cast("decimal(20,10)").alias("p"))
    rows = _floats(dec)
    assert rows.p.dtype == np.float64 and rows.yn.dtype == np.float64
    got = sm_spark.evaluate(dec, binary, label="yn", score="p", by="g")
    cases.assert_same(got, sm.Sliced(binary.copy()).update(rows.yn.to_numpy(), rows.p.to_numpy(),
                                                           slices=rows.g.to_numpy()).compute())
    got = sm_spark.evaluate(dec, cases.animal_set(), label="yc", score=SCORES)
    cases.assert_same(got, cases.animal_set().update(rows.yc, rows[SCORES].to_numpy()).compute())
    assert keyed.call_count == 5
    # a label outside classes=: refused, naming the column and the label
    bad = df.copy()
    bad.loc[500, "yc"] = "yak"
    with pytest.raises(ValueError, match=r"label: column 'yc' of Spark partition \d+: y_true: unknown label 'yak'"):
        sm_spark.evaluate(_frame(spark_session, bad), cases.animal_set(), label="yc", score=SCORES)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_string_labels_with_by_are_refused_by_the_keyed_tasks(spark_session, no_gather) -> None:
    """``Sliced`` reads its labels as numbers whatever ``pos_label=`` says: string labels with
    ``by=`` are a ValueError naming the column, the partition and the value, raised by the keyed
    tasks (no gather of the scores to refuse them)."""
    keyed, _ = no_gather
    df = cases.labelled_frame(n=300, seed=3)
    with pytest.raises(ValueError, match="y_true: expected numbers"):  # one process refuses them
        sm.Sliced(cases.spam_set()).update(df.yb, df.p.to_numpy(), slices=df.g.to_numpy())
    with pytest.raises(ValueError, match=r"label: column 'yb' of Spark partition \d+: expected numbers, "
                                         r"booleans or Decimals that float64 can hold; first invalid "
                                         r"value '(ham|spam)' at row 0"):
        sm_spark.evaluate(_frame(spark_session, df), cases.spam_set(), label="yb", score="p", by="g")
    assert keyed.called
