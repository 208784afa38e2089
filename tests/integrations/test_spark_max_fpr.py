"""Issue #32 on Spark: ``AUROC(max_fpr=...)`` goes by ``evaluate_ranked``'s shuffled score ranges in
``evaluate`` (each range summarised with the weight above it: its part of the partial area),
``evaluate_ranked`` accepts it, and an exact AUROC / AP group beside a bounded AUROC goes by
ranges (the direct Parquet range path: bit for bit) with the bounded state merged as states.
Against a real local Spark: one process / scikit-learn within 1e-12, one process's warnings,
and what the driver reads of the ranges does not grow with the rows."""

from __future__ import annotations

import warnings
from typing import Any
from unittest import mock

import numpy as np
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
pytest.importorskip("sklearn")

import partial_auc_cases as pac  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.spark as sm_spark  # noqa: E402
from streammetrics._engines import ranked_common, spark_ranges, spark_ranked  # noqa: E402


def _frame(spark: Any, df: Any, partitions: int = 3) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return spark.createDataFrame(df).repartition(partitions)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize(("order", "weighted", "m"), [("rest first", True, 0.2), ("only ranked", False, 0.5),
                                                      ("ranked first", False, 1.0), ("ranked first", True, 0.05)])
def test_created_frame_equals_one_process_and_sklearn(spark_session: Any, order: str, weighted: bool,
                                                      m: float) -> None:
    df = pac.data(1_500, len(order), 2, weighted)
    metrics = pac.metric_set(order, m)
    want, warned = pac.one_process(metrics, df)
    with mock.patch.object(spark_ranked, "counted_summaries", wraps=spark_ranked.counted_summaries) as ranked:
        got, caught = pac.recorded(lambda: sm_spark.evaluate(_frame(spark_session, df), metrics, label="y", score="p",
                                                     weight="w" if weighted else None))
    pac.close(got, want)
    assert caught == warned
    w = df.w if weighted else None
    assert abs(got["part"] - roc_auc_score(df.y, df.p, max_fpr=m, sample_weight=w)) <= 1e-12
    assert ranked.call_count == 1  # the shuffled ranges, not the state path


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("case", ["no positives", "no negatives"])
def test_one_class_warns_as_one_process(spark_session: Any, case: str) -> None:
    df = pac.data(300, 2, 2, True).assign(y=0 if case == "no positives" else 1)
    metrics = sm.MetricSet(part=sm.AUROC(max_fpr=0.3), f1=sm.F1())
    want, warned = pac.one_process(metrics, df)
    got, caught = pac.recorded(lambda: sm_spark.evaluate(_frame(spark_session, df), metrics, label="y", score="p",
                                                 weight="w"))
    pac.close(got, want)
    assert caught == warned


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_the_driver_reads_no_score(spark_session: Any) -> None:
    """The range summaries the driver reads have the same size for 2,000 and 40,000 rows (8
    ranges per core, a few numbers each plus one per ``max_fpr``)."""
    sizes = []
    read = ranked_common.summary_from_bytes
    for n in (2_000, 40_000):
        got_bytes = [0]

        def summary_read(b: bytes, got_bytes: list[int] = got_bytes) -> Any:
            got_bytes[0] += len(b)
            return read(b)

        df = pac.data(n, n, 4, False)
        metrics = sm.MetricSet(part=sm.AUROC(max_fpr=0.1), auroc=sm.AUROC())
        with mock.patch.object(ranked_common, "summary_from_bytes", summary_read):
            got = sm_spark.evaluate(_frame(spark_session, df, 2), metrics, label="y", score="p")
        pac.close(got, pac.one_process(metrics, df)[0])
        sizes.append(got_bytes[0])
    assert sizes[0] == sizes[1] and 0 < sizes[1] < 8 * 1024, sizes


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_parquet_mixed_groups_and_evaluate_ranked(spark_session: Any, tmp_path: Any) -> None:
    """Parquet files read in the tasks: an exact AUROC / AP beside a bounded AUROC and F1 takes the
    direct range path (bit for bit), no longer the state path -- the exact group first, or
    between the bounded AUROC and F1 in the member order (the direct ranges keep one process's
    error order: ``rest_order.checked_first``); ``evaluate_ranked`` takes ``max_fpr`` (weights,
    given edges with a repeated one)."""
    df = pac.data(1_200, 7, 3, True)
    df.iloc[:500].to_parquet(tmp_path / "a.parquet", index=False)
    df.iloc[500:].to_parquet(tmp_path / "b.parquet", index=False)
    frame = spark_session.read.parquet(str(tmp_path))
    exact = {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()}
    bounded = {"bounded": sm.AUROC(max_bytes=2048)}
    for members in ({**exact, **bounded, "f1": sm.F1()}, {**bounded, **exact, "f1": sm.F1()}):
        metrics = sm.MetricSet(members)
        with mock.patch.object(spark_ranges, "run_ranges", wraps=spark_ranges.run_ranges) as direct:
            got = sm_spark.evaluate(frame, metrics, label="y", score="p")
        want, _ = pac.one_process(metrics, df.drop(columns="w"))
        assert got == want and direct.call_count == 1, list(members)
    ranked = sm_spark.evaluate_ranked(frame, {"a": sm.AUROC(max_fpr=0.25), "b": sm.AUROC(max_fpr=0.6),
                                              "roc": sm.ROCCurve()}, label="y", score="p", weight="w",
                                      ranges=[0.3, 0.6, 0.6])
    for name, m in (("a", 0.25), ("b", 0.6)):
        assert abs(ranked[name] - roc_auc_score(df.y, df.p, max_fpr=m, sample_weight=df.w)) <= 1e-12
    assert np.isfinite(ranked["a"])
