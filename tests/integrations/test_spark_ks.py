"""Issue #32 on Spark: a set holding ``KSStatistic`` beside exact AUROC / AP goes by the shuffled
score ranges of ``evaluate_ranked`` in ``evaluate`` (each range summarised with the weight above
it sends its largest |TPR - FPR|), no longer by the state path; ``evaluate_ranked`` takes
``KSStatistic``, ``GainsCurve`` / ``LiftCurve`` and ``DETCurve``. Against a real local Spark: one
process (KS bit for bit unweighted, else 1e-12) and its warnings."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

pytest.importorskip("pyspark")

import partial_auc_cases as pac  # noqa: E402
from test_spark_max_fpr import _frame  # noqa: E402  (createDataFrame, repartitioned)

import streammetrics as sm  # noqa: E402
import streammetrics.spark as sm_spark  # noqa: E402
from streammetrics._engines import spark_ranked  # noqa: E402


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize(("order", "weighted"), [("rest first", True), ("ranked first", False)])
def test_created_frame_equals_one_process(spark_session: Any, order: str, weighted: bool) -> None:
    df = pac.data(1_500, len(order), 2, weighted)
    metrics = pac.ks_set(order)
    want, warned = pac.one_process(metrics, df)
    with mock.patch.object(spark_ranked, "counted_summaries", wraps=spark_ranked.counted_summaries) as ranked:
        got, caught = pac.recorded(lambda: sm_spark.evaluate(_frame(spark_session, df), metrics, label="y",
                                                             score="p", weight="w" if weighted else None))
    pac.close(got, want)
    assert caught == warned and ranked.call_count == 1  # the shuffled ranges, not the state path
    if not weighted:
        assert got["ks"] == want["ks"]


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_one_class_and_evaluate_ranked(spark_session: Any, tmp_path: Any) -> None:
    df = pac.one_class(pac.data(300, 2, 2, True), "no negatives")
    metrics = sm.MetricSet(ks=sm.KSStatistic(), f1=sm.F1())
    want, warned = pac.one_process(metrics, df)
    got, caught = pac.recorded(lambda: sm_spark.evaluate(_frame(spark_session, df), metrics, label="y", score="p",
                                                         weight="w"))
    pac.close(got, want)
    assert caught == warned
    df = pac.data(1_200, 7, 2, True)
    df.to_parquet(tmp_path / "a.parquet", index=False)
    frame = spark_session.read.parquet(str(tmp_path))
    pac.check_ranked(sm_spark.evaluate_ranked(frame, pac.CURVES, label="y", score="p", weight="w",
                                              ranges=[0.3, 0.6, 0.6]), df, True)
    pac.check_ranked(sm_spark.evaluate_ranked(frame, pac.CURVES, label="y", score="p", ranges=4), df, False)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_multiclass_and_sliced_ks_by_keyed_ranges(spark_session: Any) -> None:
    """Multiclass one-vs-rest ``KSStatistic(C)`` beside ``AUROC(C)`` and a binary KS with ``by=``
    take the keyed jobs (not the state path): one process's values (KS bit for bit unweighted)."""
    import numpy as np
    from test_dask_keyed import SCORES, _data

    from streammetrics._engines import spark_keyed

    df = _data(600, 12)
    c = len(SCORES)
    metrics = sm.MetricSet(auroc=sm.AUROC(c), ks=sm.KSStatistic(c), acc=sm.Accuracy(c))
    want = metrics.copy().update(df.y.to_numpy(), df[SCORES].to_numpy()).compute()
    with mock.patch.object(spark_keyed.kr, "final_values", wraps=spark_keyed.kr.final_values) as keyed:
        got = sm_spark.evaluate(_frame(spark_session, df), metrics, label="y", score=SCORES)
        sliced = sm.MetricSet(ks=sm.KSStatistic(), auroc=sm.AUROC())
        by = sm_spark.evaluate(_frame(spark_session, df), sliced, label="yb", score="s1", by="g", weight="w")
    np.testing.assert_array_equal(got["ks"], want["ks"])
    assert abs(got["auroc"] - want["auroc"]) <= 1e-12 and got["acc"] == want["acc"]
    one = sm.Sliced(sliced.copy()).update(df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy(),
                                          sample_weight=df.w.to_numpy()).compute()
    for key in one:
        assert abs(by[key]["ks"] - one[key]["ks"]) <= 1e-12 and abs(by[key]["auroc"] - one[key]["auroc"]) <= 1e-12
    assert keyed.call_count == 2
