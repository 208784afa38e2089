"""Issue #32 on Spark: ``update`` keywords only the set's other members take (``timestamp=`` of a
``Window``) no longer send exact AUROC / AP / KS to the state path: :func:`streammetrics.spark.evaluate`
takes the shuffled ranked ranges, the direct Parquet score ranges and the keyed ranges (a spied
``split_for`` proves one was taken), one process's values (the unweighted score ranges bit for
bit); a keyword no member accepts, or keywords with ``by=``, raise one process's TypeError;
retrieval keywords unchanged. A real local Spark."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import engine_cases as cases  # noqa: E402
import kwargs_cases as kc  # noqa: E402
import prob_cases as pc  # noqa: E402

import streammetrics.spark as sm_spark  # noqa: E402


def _frame(spark: Any, df: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return spark.createDataFrame(df).repartition(3)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_keywords_take_the_ranges(spark_session: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    df = pc.frame(600, 41)
    seen = cases.spark_routes(monkeypatch)
    kc.check_runs(sm_spark.evaluate, _frame(spark_session, df), df, seen, ("a",))  # AP: 1e-12 (ranked ranges)
    df.iloc[:350].to_parquet(tmp_path / "a.parquet")  # the direct Parquet score ranges
    df.iloc[350:].to_parquet(tmp_path / "b.parquet")
    kc.check_runs(sm_spark.evaluate, spark_session.read.parquet(str(tmp_path)), df, seen)
    monkeypatch.undo()
    small = df.iloc[:200]
    kc.check_refusals(sm_spark.evaluate, _frame(spark_session, small), small)
    rows = cases.retrieval_frame(400, 3)
    kc.retrieval_keywords(sm_spark.evaluate, _frame(spark_session, rows), rows)
