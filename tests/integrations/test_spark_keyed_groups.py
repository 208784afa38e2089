"""Issue #32 item 2 on Spark: a set with several exact AUROC / AP state groups (one-vs-one
beside one-vs-rest, another ``ignore_index``, binary without ``by=``) by the keyed (key, score)
ranges of :mod:`streammetrics._engines.spark_keyed`, not the gather: one process's values within
1e-12 and its warnings. The stand-in frame of ``ranked_cases`` runs the module's tasks in this
process (the other members' state fed between the groups' checks, in the set's order); a real
local Spark runs one job."""

from __future__ import annotations

import warnings
from typing import Any
from unittest import mock

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import engine_cases as cases  # noqa: E402
from test_spark_keyed import SCORES, C, _data, _frame, _local, _one, _recorded  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.spark as sm_spark  # noqa: E402
from streammetrics._engines import spark_keyed  # noqa: E402


def _groups() -> sm.MetricSet:
    """One-vs-rest AUROC / AP, accuracy, one-vs-one AUROC (partial too), ``ignore_index=1``:
    three keyed groups with the rest between the first and the others."""
    return sm.MetricSet(a=sm.AUROC(C, average="weighted"), p=sm.AveragePrecision(C, average=None),
                        m=sm.AUROC(C, average="micro", max_fpr=0.4), acc=sm.Accuracy(C),
                        ovo=sm.AUROC(C, multi_class="ovo"), op=sm.AUROC(C, multi_class="ovo", max_fpr=0.3),
                        ia=sm.AUROC(C, ignore_index=1, average=None), ip=sm.AveragePrecision(C, ignore_index=1))


def _binary() -> sm.MetricSet:
    return sm.MetricSet(a=sm.AUROC(), f1=sm.F1(), ia=sm.AUROC(ignore_index=0), ip=sm.AveragePrecision(ignore_index=0))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("by", [None, "g"])
def test_stand_in_groups_equal_one_process(weighted: bool, by: Any) -> None:
    df = _data(260, 9, slices=3, decimals=1)
    df = df[~((df.g == 1) & (df.y == 2))]  # a class absent from a slice
    parts = [df.iloc[:0], df.iloc[:100], df.iloc[100:]]
    want, w1 = _recorded(lambda: _one(_groups(), df, by, SCORES, weighted))
    with mock.patch.object(spark_keyed, "TUPLES_PER_CHUNK", 60), mock.patch.object(spark_keyed, "_MIN_ROWS", 1), \
            mock.patch.object(spark_keyed, "_CHUNK", 40):
        (got, _), w2 = _recorded(lambda: _local(parts, _groups(), by, SCORES, weighted, 3, 7))
    cases.assert_same(got, want)
    assert w1 == w2
    want, w1 = _recorded(lambda: _one(_binary(), df, by, "s1", weighted))
    (got, _), w2 = _recorded(lambda: _local(parts, _binary(), by, "s1", weighted, 2, 7))
    cases.assert_same(got, want)
    assert w1 == w2


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_groups_by_keyed_ranges(spark_session: Any) -> None:
    """A real local Spark: the multiclass groups with ``by=`` and weights, the binary groups
    without ``by=``: the keyed jobs, one process's values."""
    df = _data(900, 4, slices=3)
    frame = _frame(spark_session, df)
    with mock.patch.object(spark_keyed, "keyed_values", wraps=spark_keyed.keyed_values) as spy, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = sm_spark.evaluate(frame, _groups(), label="y", score=SCORES, weight="w", by="g")
        binary = sm_spark.evaluate(frame, _binary(), label="yb", score="s1")
    assert spy.call_count == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases.assert_same(got, _one(_groups(), df, "g", SCORES, True))
        cases.assert_same(binary, _one(_binary(), df, None, "s1", False))
