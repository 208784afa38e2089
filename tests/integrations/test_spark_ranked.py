"""streammetrics.spark.evaluate_ranked: scikit-learn and the single process on random partitions
with ties, weights, empty partitions, one class, given edges; the errors of the Dask one; and
what travels (each shuffled row one chunk of one partition's piece of one range; the driver
O(partitions x R) numbers).

The random cases run the module's Spark tasks in this process on a stand-in for the few
DataFrame calls it makes (``select``, ``mapInArrow``, ``groupBy(...).applyInPandas``,
``collect``), the groups handed over in a random order; a real local Spark runs the rest.
"""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import ranked_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ranked_common, spark_ranked  # noqa: E402
from streammetrics.spark import evaluate_ranked  # noqa: E402


def _local(parts: list[pd.DataFrame], ranges: Any, weight: str | None, chunk_rows: int = 1 << 18) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_ranked(cases.Partitions(parts), cases.metrics(), label="y", score="p", weight=weight,
                               ranges=ranges, chunk_rows=chunk_rows)


@settings(max_examples=25, deadline=None)
@given(df=cases.frames(), cuts=st.lists(st.integers(0, 300), max_size=5), ranges=st.integers(1, 12),
       weighted=st.booleans(), chunk=st.sampled_from([5, 1 << 22]), chunk_rows=st.sampled_from([10, 1 << 18]))
def test_any_partitions_and_ranges_equal_sklearn_and_single_process(
        df: pd.DataFrame, cuts: list[int], ranges: int, weighted: bool, chunk: int, chunk_rows: int) -> None:
    weight = "w" if weighted else None
    # chunk 5: a piece travels in many rows; chunk_rows 10: a partition's runs are many chunks,
    # made of Spark's batches (7 rows here) cut and joined
    with mock.patch.object(spark_ranked, "_CHUNK", chunk):
        got = _local(cases.parts(df, cuts), ranges, weight, chunk_rows)
    cases.assert_same(got, df, weight)


@settings(max_examples=15, deadline=None)
@given(df=cases.frames(), edges=st.lists(st.floats(-0.5, 1.5), max_size=8), weighted=st.booleans())
def test_given_edges_with_empty_ranges(df: pd.DataFrame, edges: list[float], weighted: bool) -> None:
    weight = "w" if weighted else None
    cases.assert_same(_local(cases.parts(df, [len(df) // 2, len(df) // 2]), sorted(edges), weight), df, weight)


def test_what_travels_and_what_the_driver_holds() -> None:
    """Every shipped row holds one chunk (<= _CHUNK scores) of one partition's piece of one
    range; a range's rows hold about 1/R of the scores; the driver receives 2 x sample_size
    values per partition, R pairs per partition, and a fixed-size summary per range."""
    rng = np.random.default_rng(11)
    n, ranges = 20_000, 8
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.normal(size=n)})
    frame = cases.Partitions(cases.parts(df, [0, 2500, 10000, 10000, 15500]), batch=4096)
    req = ranked_common.request({"a": sm.AUROC()}, label="y", score="p", weight=None, ranges=ranges,
                                sample_size=256, chunk_rows=1 << 18, available=["y", "p"])
    routed = spark_ranked.routed_frame(frame, req)  # the one pass (the stand-in runs it now)
    small = routed.filter("kind != 0").collect()
    edges = spark_ranked._edges(req, [r for r in small if r[0] == spark_ranked._SAMPLE])
    with mock.patch.object(spark_ranked, "_CHUNK", 1500):
        rows = spark_ranked.pieces_frame(routed, edges).collect()
    got = np.zeros((len(frame.parts), ranges), dtype=np.int64)
    bounds = np.concatenate([[-np.inf], edges, [np.inf]])
    for r, part, _, piece in rows:
        nv, _, pv, _ = ranked_common.piece_from_bytes(piece)
        size = nv.shape[0] + pv.shape[0]
        assert 0 < size <= 1500 and len(piece) == 32 + 8 * size
        assert np.all((nv >= bounds[r]) & (nv < bounds[r + 1])) and np.all((pv >= bounds[r]) & (pv < bounds[r + 1]))
        got[part, r] += size
    want = [[int(((p.p >= bounds[r]) & (p.p < bounds[r + 1])).sum()) for r in range(ranges)] for p in frame.parts]
    np.testing.assert_array_equal(got, want)  # each partition's rows: exactly its scores of that range
    per_range = got.sum(axis=0)
    assert per_range.sum() == n and per_range.max() <= 1.25 * n / ranges, per_range
    assert max(len(r[3]) for r in small if r[0] == spark_ranked._SAMPLE) <= 2 * 256 * 8
    totals = spark_ranked._runs_rows(routed).mapInArrow(lambda it: spark_ranked._totals_task(edges, it),
                                                        "part long, t binary")
    assert {len(t) for _, t in totals.collect()} == {ranges * 2 * 8}
    summaries, total = spark_ranked.range_summaries(frame, req)
    assert [s.n_scores for s in summaries] == per_range.tolist() and sum(total) == n
    assert {len(ranked_common.summary_to_bytes(s)) for s in summaries} == {80}  # 4 counts (the 4th: the 11-point levels' exact part), 6 floats


def test_a_partition_task_holds_one_chunk_not_its_partition() -> None:
    """Issue #32 item 2: no task keeps a chunk's runs once the next is read -- the routing pass
    emits a chunk's runs before it reads further, the totals and pieces tasks read the persisted
    runs one at a time -- and no task's traced peak comes near the partition's 8 bytes a score
    (before: every task held the partition's runs, 8n, and the pieces task its rows too)."""
    import tracemalloc

    rng = np.random.default_rng(5)
    n, chunk_rows = 400_000, 10_000
    table = pa.table({"y": rng.integers(0, 2, n), "p": rng.random(n).round(4)})
    req = ranked_common.request({"a": sm.AUROC()}, label="y", score="p", weight=None, ranges=4,
                                sample_size=256, chunk_rows=chunk_rows, available=["y", "p"])
    edges = np.array([0.25, 0.5, 0.75])
    read = [0]

    def batches() -> Iterator[Any]:
        for b in table.to_batches(max_chunksize=5_000):
            read[0] += b.num_rows
            yield b

    first = next(spark_ranked._route_task(req.plan, 256, chunk_rows, None, batches()))
    assert read[0] <= 2 * chunk_rows, read  # one chunk's runs, then out
    assert first.column("kind").to_pylist() == [spark_ranked._RUNS]
    runs = [b for b in spark_ranked._route_task(req.plan, 0, chunk_rows, None, batches())
            if b.column("kind")[0].as_py() == spark_ranked._RUNS]  # what the persisted rows hold
    tasks = {"route": lambda: spark_ranked._route_task(req.plan, 256, chunk_rows, None, batches()),
             "totals": lambda: spark_ranked._totals_task(edges, iter(runs)),
             "pieces": lambda: spark_ranked._pieces_task(edges, iter(runs))}
    for name, task in tasks.items():
        tracemalloc.start()
        try:
            sent = 0
            for batch in task():
                sent += batch.nbytes
                del batch
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 8 * n / 4, (name, peak)  # the partition's runs would be 8n bytes alone
        assert name != "pieces" or sent >= 8 * n  # every score was shipped all the same


def test_errors_as_the_dask_one() -> None:
    frame = cases.Partitions([pd.DataFrame({"y": [0, 1], "p": [0.1, 0.2]})])
    with pytest.raises(ValueError, match="metrics: range-partitioned evaluation supports"):
        evaluate_ranked(frame, sm.F1(), label="y", score="p")
    with pytest.raises(ValueError, match="num_classes=3"):
        evaluate_ranked(frame, sm.AveragePrecision(3), label="y", score="p")
    with pytest.raises(ValueError, match="ranges: must be an integer >= 1"):
        evaluate_ranked(frame, sm.AUROC(), label="y", score="p", ranges=0)
    with pytest.raises(ValueError, match="ranges: edges must be non-decreasing, got 0.1 after 0.5"):
        evaluate_ranked(frame, sm.AUROC(), label="y", score="p", ranges=[0.5, 0.1])
    with pytest.raises(ValueError, match="sample_size: must be an integer >= 1"):
        evaluate_ranked(frame, sm.AUROC(), label="y", score="p", sample_size=0)
    with pytest.raises(ValueError, match="chunk_rows: must be an integer >= 1"):
        evaluate_ranked(frame, sm.AUROC(), label="y", score="p", chunk_rows=0)
    with pytest.raises(ValueError, match=r"columns \['q'\]"):
        evaluate_ranked(frame, sm.AUROC(), label="q", score="p")
    with pytest.raises(ValueError, match=r"score: must be a column name \(str\), got list \['p'\]"):
        evaluate_ranked(frame, sm.AUROC(), label="y", score=["p"])


def test_persisted_pass_released_when_a_later_job_fails() -> None:
    """The routed rows are persisted for the totals and the shuffle, and unpersisted when a job
    over them fails (here the totals')."""
    frame = cases.Partitions([pd.DataFrame({"y": [0, 1, 1], "p": [0.1, 0.2, 0.3]})])

    def failing(edges: Any, batches: Iterator[Any]) -> Iterator[Any]:
        raise RuntimeError("a task failed")
        yield  # a generator, as the task

    with mock.patch.object(cases.Rows, "unpersist", autospec=True) as unpersist, \
            mock.patch.object(spark_ranked, "_totals_task", failing), pytest.raises(RuntimeError, match="a task"):
        evaluate_ranked(frame, sm.AUROC(), label="y", score="p", ranges=2)
    assert unpersist.call_count == 1


def test_shipped_bytes_are_checked() -> None:
    piece = (np.array([0.1, 0.2]), None, np.array([0.3]), np.array([2.0]))
    data = ranked_common.piece_to_bytes(piece)
    for bad in (data[:-1], data[:10], data + b"\0" * 8):
        with pytest.raises(ValueError, match="ranked piece: "):
            ranked_common.piece_from_bytes(bad)
    with pytest.raises(ValueError, match="range summary: "):
        ranked_common.summary_from_bytes(b"\0" * 63)


# -- a real local Spark ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        session = (SparkSession.builder.master("local[2]").appName("streammetrics-ranked-tests")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "3").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_equals_sklearn_and_single_process(spark) -> None:
    df = cases.frame(3000, 7, 40, "int")
    # hashed by label into 4 partitions: 2 or more empty, each of the others one class
    frame = spark.createDataFrame(df).repartition(4, "y")
    cases.assert_same(_spark(frame, 5, "w"), df, "w")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_nulls_skipped_or_refused_by_option(spark) -> None:
    df, dropped = cases.with_nulls(600, 5)
    frame = spark.createDataFrame(df).repartition(3)
    cases.assert_skipped(lambda **kw: evaluate_ranked(frame, cases.metrics(), label="y", score="p", weight="w",
                                                      ranges=4, **kw), df, dropped)


def _spark(frame: Any, ranges: Any, weight: str | None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_ranked(frame, cases.metrics(), label="y", score="p", weight=weight, ranges=ranges)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_rows_refused_as_in_one_process(spark) -> None:
    bad = spark.createDataFrame(pd.DataFrame({"y": [0, 2], "p": [0.1, 0.2]})).repartition(1)
    with pytest.raises(ValueError, match="y_true: labels must be 0 or 1; first invalid value 2"):
        evaluate_ranked(bad, sm.AUROC(), label="y", score="p")
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()  # the persisted pass released
    nulls = spark.createDataFrame(pd.DataFrame({"y": [0, 1], "p": [0.1, None]})).repartition(1)
    with pytest.raises(ValueError, match="nulls: column 'p' is null at row 1 of Spark partition 0"):
        evaluate_ranked(nulls, sm.AUROC(), label="y", score="p")
    from pyspark.sql import functions as F

    with pytest.raises(ValueError, match="score: must be a column name \\(str\\), got Column"):
        evaluate_ranked(nulls, sm.AUROC(), label="y", score=F.col("p"))
