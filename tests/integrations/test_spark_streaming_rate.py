"""streammetrics.spark_streaming on Spark's built-in, unbounded ``rate`` source and on its
``MemoryStream`` (issue #32), with both state APIs: per-key, per-window values equal to scikit-learn, late rows dropped by the
watermark, and a restart from the checkpoint that re-runs a micro-batch without counting it twice.

The rate source emits ``value`` 0, 1, 2, ... (``rowsPerSecond`` a second of wall time; its offsets
are whole seconds since the query first started, so a micro-batch holds the values
``[start * R, end * R)`` of its offsets). Every other column (event time, key, label, score,
weight) is computed from ``value`` by a formula with a numpy twin (:func:`_derive`,
:func:`_rows_of`), so the rows a micro-batch saw are known exactly from its progress record,
whatever the speed of the machine: the test never assumes how many rows a second brings, it
reads which ones came. The first run is stopped after three micro-batches with data; the second
run (``trigger(availableNow=True)``, which ends by itself) resumes from the checkpoint.
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime", allow_module_level=True)

from sklearn.metrics import average_precision_score, f1_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.spark_streaming import ROCKSDB_PROVIDER, STATE_APIS, evaluate_stream  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),  # pyspark on pandas 3
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
RATE = 50  # rows a second of wall time
BASE_S = 1_767_225_600  # 2026-01-01 00:00:00 UTC: row v happens at BASE_S + v seconds ...
BACK_S = 90  # ... or BACK_S seconds earlier when v % 7 == 0 (out of order: late or not, by timing)
DAY_S = 86_400  # ... or a day earlier when v % 11 == 0 (and not v % 7): late once a watermark is set
WINDOW_S = 60
DELAY_MS = 30_500  # never a whole second: no event time or window end sits on a watermark
WAIT_S = 240  # a bound on waiting for a run (a hang), not a timing: the machine may be slow


@pytest.fixture(scope="module")
def spark(spark_session: Any) -> Any:
    spark_session.conf.set("spark.sql.shuffle.partitions", "2")
    return spark_session


@pytest.fixture(params=STATE_APIS)
def state_api(request: Any, spark: Any) -> Any:
    """Each state API; transformWithStateInPandas with the RocksDB state store it needs."""
    if request.param == "applyInPandasWithState":
        yield request.param
        return
    old = spark.conf.get(PROVIDER, None)
    spark.conf.set(PROVIDER, ROCKSDB_PROVIDER)
    try:
        yield request.param
    finally:
        spark.conf.unset(PROVIDER) if old is None else spark.conf.set(PROVIDER, old)


def _derive(rate: Any) -> Any:
    """The rate source's rows as predictions, every column a function of ``value``."""
    from pyspark.sql import functions as F

    v = F.col("value")
    y = ((v * 7919) % 13) % 2
    return rate.select(
        F.timestamp_seconds(F.lit(BASE_S) + v - F.when(v % 7 == 0, BACK_S).when(v % 11 == 0, DAY_S)
                            .otherwise(0)).alias("ts"),
        F.when(v % 2 == 0, "a").otherwise("b").alias("k"),
        y.alias("y"),
        (((v * 104729) % 11 + 3 * y) / 13.0).alias("p"),
        (1 + v % 3).cast("double").alias("w"),
        v.alias("v"))


def _rows_of(values: np.ndarray) -> pd.DataFrame:
    """The numpy twin of :func:`_derive` (event time as epoch seconds)."""
    v = values.astype(np.int64)
    y = ((v * 7919) % 13) % 2
    back = np.where(v % 7 == 0, BACK_S, np.where(v % 11 == 0, DAY_S, 0))
    return pd.DataFrame({"ts_s": BASE_S + v - back, "k": np.where(v % 2 == 0, "a", "b"),
                         "y": y, "p": ((v * 104729) % 11 + 3 * y) / 13.0, "w": (1 + v % 3).astype(float), "v": v})


def _metrics() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(zero_division=0.0),
                        bounded=sm.AUROC(max_bytes=4096))


def _oracle(rows: pd.DataFrame) -> dict[str, float]:
    y, p, w = rows["y"].to_numpy(), rows["p"].to_numpy(), rows["w"].to_numpy()
    out = {"f1": float(f1_score(y, p >= 0.5, sample_weight=w, zero_division=0.0))}
    if len(np.unique(y)) == 2:
        out["auroc"] = out["bounded"] = float(roc_auc_score(y, p, sample_weight=w))
    if y.any():  # (all positive: 1.0)
        out["ap"] = float(average_precision_score(y, p, sample_weight=w))
    return out


def _check_values(part: pd.DataFrame, inside: pd.DataFrame, where: Any) -> None:
    """A window's output rows: its row count, and every metric equal to scikit-learn on
    ``inside``, its kept rows (NaN where undefined: AUROC of one class, AP of no positive)."""
    assert (part["rows"] == len(inside)).all() and (part["skipped"] == 0).all(), where
    values = dict(zip(part["metric"], part["value"], strict=True))
    want = _oracle(inside)
    assert set(want) <= set(values) == {"auroc", "ap", "f1", "bounded"}, where
    for name, value in values.items():
        if name in want:
            assert abs(value - want[name]) <= 1e-12, (where, name, value, want[name])
        else:
            assert np.isnan(value), (where, name, value)


def _offset(value: Any) -> int:
    """A rate source offset (whole seconds) as the progress reports it; none yet is 0."""
    return 0 if value in (None, "null") else int(value)


def _batches(runs: list[list[dict[str, Any]]]) -> dict[int, dict[str, Any]]:
    """batchId -> progress of the micro-batches that ran (a later run's record of a batch wins)."""
    return {p["batchId"]: p for run in runs for p in run if p["numInputRows"] or p["stateOperators"]}


def _seen(batches: dict[int, dict[str, Any]]) -> tuple[pd.DataFrame, int, list[int]]:
    """The rows the micro-batches read, from their offsets, and the rows kept. Spark drops a row
    as late when its event time is not after the watermark of the previous micro-batch (its
    late-row watermark; a window's timeout or timer goes by the current one); a batch's
    watermark is the largest event time of the batches before it minus the delay. Returns the
    kept rows, the late count and every batch's watermark (ms)."""
    assert sorted(batches) == list(range(len(batches)))  # every micro-batch from the first
    kept, late, marks, top_ms = [], 0, [], None
    for b in sorted(batches):
        p = batches[b]
        marks.append(0 if top_ms is None else top_ms - DELAY_MS)
        source = p["sources"][0]
        values = np.arange(_offset(source["startOffset"]) * RATE, _offset(source["endOffset"]) * RATE)
        assert len(values) == p["numInputRows"], p  # the offsets say exactly which rows came
        if not len(values):
            continue
        rows = _rows_of(values)
        keep = rows["ts_s"].to_numpy() * 1000 > (marks[-2] if b else 0)
        kept.append(rows[keep])
        late += int((~keep).sum())
        top = int(rows["ts_s"].max()) * 1000
        top_ms = top if top_ms is None else max(top_ms, top)
    return pd.concat(kept, ignore_index=True), late, marks


def _watermark_ms(p: dict[str, Any]) -> int:
    return pd.Timestamp(p["eventTime"].get("watermark", "1970-01-01T00:00:00Z")).value // 1_000_000


def _drop_logs(chk: Path, out: Path, replayed: int) -> None:
    """A crash after micro-batch ``replayed`` saved its states, before the sink and the query
    committed it: its commits are gone, and whatever ran (or started) after it."""
    for log, first in ((chk / "commits", replayed), (out / "_spark_metadata", replayed), (chk / "offsets", replayed + 1)):
        for entry in log.iterdir():
            name = entry.name.removeprefix(".").removesuffix(".crc")
            if name.isdigit() and int(name) >= first:
                entry.unlink()


def test_rate_source_windows_equal_sklearn_late_rows_dropped_restart_counts_once(
        spark, state_api: str, tmp_path: Path) -> None:
    chk, out = tmp_path / "chk", tmp_path / "out"

    def start(available_now: bool) -> Any:
        rate = spark.readStream.format("rate").option("rowsPerSecond", RATE).load()
        frame = evaluate_stream(_derive(rate), _metrics(), label="y", score="p", weight="w", by="k",
                                window=("ts", f"{WINDOW_S} seconds"),
                                watermark=f"{DELAY_MS // 1000} seconds {DELAY_MS % 1000} milliseconds",
                                state_api=state_api, max_parts=2)
        writer = (frame.writeStream.outputMode("append").format("parquet")
                  .option("checkpointLocation", str(chk)))
        return (writer.trigger(availableNow=True) if available_now else writer).start(str(out))

    first = start(available_now=False)
    try:  # until three micro-batches with rows have run: the third meets a late-row watermark
        began = time.monotonic()
        while (sum(1 for p in first.recentProgress if p["numInputRows"]) < 3
               and time.monotonic() - began < WAIT_S and first.exception() is None):
            first.awaitTermination(0.5)
        assert first.exception() is None, first.exception()
    finally:
        first.stop()
    runs = first.recentProgress
    with_rows = [p["batchId"] for p in runs if p["numInputRows"]]
    assert len(with_rows) >= 3, f"only {len(with_rows)} micro-batch(es) with rows in {WAIT_S} s"
    replayed = max(with_rows)
    _drop_logs(chk, out, replayed)
    second = start(available_now=True)  # resumes from the checkpoint, stops by itself
    try:
        assert second.awaitTermination(WAIT_S), "the availableNow run did not end"
        assert second.exception() is None, second.exception()
    finally:
        second.stop()

    again = _batches([second.recentProgress])
    old = _batches([runs])[replayed]
    assert again[replayed]["numInputRows"] == old["numInputRows"]  # the batch did run twice ...
    assert again[replayed]["sources"][0]["endOffset"] == old["sources"][0]["endOffset"]  # on the same rows
    batches = _batches([[p for p in runs if p["batchId"] < replayed], second.recentProgress])
    kept, late, marks = _seen(batches)
    assert [_watermark_ms(p) for _, p in sorted(batches.items())] == marks  # as Spark reports them
    data = [p for p in batches.values() if p["numInputRows"]]
    assert late > 0
    if state_api == "applyInPandasWithState":  # (transformWithState drops late rows without counting them)
        dropped = sum(op.get("numRowsDroppedByWatermark", 0) for p in data for op in p["stateOperators"])
        assert dropped == late

    from pyspark.sql import functions as F

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        got = spark.read.parquet(str(out)).select(
            "*", F.unix_seconds("window_start").alias("start_s"), F.unix_seconds("window_end").alias("end_s"),
        ).toPandas()
    # the windows the watermark closed (end before it): each emitted once, on its kept rows
    final_ms = max(_watermark_ms(p) for p in batches.values())
    kept["start_s"] = kept["ts_s"] // WINDOW_S * WINDOW_S
    closed = kept[(kept["start_s"] + WINDOW_S) * 1000 < final_ms]
    assert (closed["ts_s"] < closed["v"] + BASE_S).any()  # out-of-order rows kept in closed windows
    expect = {key: rows for key, rows in closed.groupby(["k", "start_s"])}
    assert sorted(set(zip(got["k"], got["start_s"], strict=True))) == sorted(expect)
    assert len(got) == len(expect) * len(_metrics())  # no window twice
    for (k, start), part in got.groupby(["k", "start_s"]):
        assert (part["end_s"] == start + WINDOW_S).all()
        _check_values(part, expect[(k, start)], (k, start))


def _memory_stream(spark: Any) -> tuple[Any, Any]:
    """Spark's ``MemoryStream`` of JSON strings (its JVM class, reached through py4j: pyspark has
    no Python API for it), and its streaming DataFrame (one column, ``value``)."""
    from pyspark.sql import DataFrame

    jvm = spark._jvm
    try:
        cls = jvm.org.apache.spark.sql.execution.streaming.runtime.MemoryStream  # Spark 4.1+
        stream = cls.apply(jvm.org.apache.spark.sql.Encoders.STRING(), spark._jsparkSession)
    except Exception:  # noqa: BLE001 - another Spark: its package moved
        pytest.skip("MemoryStream is not reachable from Python in this Spark")
    return stream, DataFrame(stream.toDF(), spark)


def _add(spark: Any, stream: Any, rows: pd.DataFrame) -> None:
    """One micro-batch's worth of rows, each as the JSON of its columns (event time in us)."""
    messages = [f'{{"us": {int(r.us)}, "k": "{r.k}", "y": {int(r.y)}, "p": {float(r.p)!r}, "w": {float(r.w)!r}}}'
                for r in rows.itertuples()]
    jvm = spark._jvm
    items = jvm.java.util.ArrayList()
    for m in messages:
        items.add(m)
    stream.addData(jvm.scala.jdk.javaapi.CollectionConverters.asScala(items).toSeq())


def test_memory_source_windows_equal_sklearn_late_rows_dropped(spark, state_api: str) -> None:
    """MemoryStream: the rows of each micro-batch are exactly the ones added; JSON values parsed
    with from_json as from Kafka. Late rows (by the previous micro-batch's watermark) dropped,
    the windows the watermark closed emitted once, each equal to scikit-learn on its kept rows."""
    from pyspark.sql import functions as F

    rng = np.random.default_rng(5)
    minute = 60_000_000
    base_us = BASE_S * 1_000_000

    def chunk(n: int, lo: float, hi: float) -> pd.DataFrame:
        us = base_us + rng.integers(int(lo * minute), int(hi * minute), n)  # us apart: never on a watermark
        y = rng.integers(0, 2, n)
        return pd.DataFrame({"us": us, "k": rng.choice(["a", "b"], n), "y": y,
                             "p": rng.integers(0, 6, n) / 5.0, "w": rng.integers(1, 4, n).astype(float)})

    chunks = [chunk(120, 0, 15), pd.concat([chunk(120, 10, 25), chunk(40, 3, 12)]),
              pd.concat([chunk(120, 20, 38), chunk(40, 8, 22)]), chunk(1, 200, 201)]
    stream, raw = _memory_stream(spark)
    events = raw.select(F.from_json("value", "us long, k string, y long, p double, w double").alias("e")) \
        .select(F.timestamp_micros("e.us").alias("ts"), "e.k", "e.y", "e.p", "e.w")
    frame = evaluate_stream(events, _metrics(), label="y", score="p", weight="w", by="k",
                            window=("ts", "10 minutes"), watermark="5 minutes", state_api=state_api)
    name = f"sss_memory_{state_api}"
    query = frame.writeStream.outputMode("append").format("memory").queryName(name).start()
    try:
        for rows in chunks:
            _add(spark, stream, rows)
            query.processAllAvailable()
        got = spark.table(name).select("*", F.unix_micros("window_start").alias("start_us")).toPandas()
        runs = _batches([query.recentProgress])
    finally:
        query.stop()
    assert sorted(runs) == list(range(len(runs)))
    data = [b for b in sorted(runs) if runs[b]["numInputRows"]]
    assert [runs[b]["numInputRows"] for b in data] == [len(c) for c in chunks]  # a chunk a micro-batch
    kept, late, top = [], 0, None
    for b, rows in zip(data, chunks, strict=True):
        mark_us = _watermark_ms(runs[b - 1]) * 1000 if b else 0  # the previous micro-batch's watermark
        keep = rows["us"].to_numpy() > mark_us
        kept.append(rows[keep])
        late += int((~keep).sum())
        assert _watermark_ms(runs[b]) == (0 if top is None else top // 1000 - 300_000)  # as Spark reports it
        top = int(rows["us"].max()) if top is None else max(top, int(rows["us"].max()))
    assert late > 0
    if state_api == "applyInPandasWithState":
        assert sum(op.get("numRowsDroppedByWatermark", 0) for p in runs.values() for op in p["stateOperators"]) == late
    rows = pd.concat(kept, ignore_index=True)
    rows["start_us"] = rows["us"] // (10 * minute) * (10 * minute)
    final_us = max(_watermark_ms(p) for p in runs.values()) * 1000
    expect = {key: part for key, part in rows[rows["start_us"] + 10 * minute < final_us].groupby(["k", "start_us"])}
    assert len(expect) >= 6 and sorted(set(zip(got["k"], got["start_us"], strict=True))) == sorted(expect)
    assert len(got) == len(expect) * len(_metrics())
    for (k, start), part in got.groupby(["k", "start_us"]):
        _check_values(part, expect[(k, start)], (k, start))
