"""streammetrics.spark_streaming against a real local Spark (local[2]), with both state APIs
(applyInPandasWithState, transformWithStateInPandas on the RocksDB state store): per-key,
per-window values equal to scikit-learn on exactly the rows Spark kept in each window (late rows
dropped by the watermark as Spark reports), a replayed micro-batch counted once after a restart
from the checkpoint, retrieval measures per window equal to one process and to the batch
``streammetrics.spark.evaluate`` on the same rows (a query's documents spread over micro-batches),
and clear errors for what it cannot take."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime", allow_module_level=True)

from sklearn.metrics import average_precision_score, confusion_matrix, f1_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.spark_streaming import ROCKSDB_PROVIDER, STATE_APIS, evaluate_stream  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),  # pyspark on pandas 3
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]
SCHEMA = "ts timestamp, k string, y long, p double, w double"
MINUTE_US = 60_000_000
START_US = pd.Timestamp("2026-01-01", tz="UTC").value // 1000
WINDOW_US, DELAY_US = 10 * MINUTE_US, 5 * MINUTE_US
PROVIDER = "spark.sql.streaming.stateStore.providerClass"


@pytest.fixture(scope="module")
def spark(spark_session: Any) -> Any:
    """The shared local Spark, its stateful operators on 2 partitions (a task per partition and
    micro-batch: fewer make the tests quicker)."""
    spark_session.conf.set("spark.sql.shuffle.partitions", "2")
    return spark_session


@pytest.fixture(params=STATE_APIS)
def state_api(request: Any, spark: Any) -> Any:
    """Each state API; transformWithStateInPandas with the RocksDB state store it needs (set for
    the test only; a query restarted from its checkpoint keeps the store it started with)."""
    if request.param == "applyInPandasWithState":
        yield request.param
        return
    old = spark.conf.get(PROVIDER, None)
    spark.conf.set(PROVIDER, ROCKSDB_PROVIDER)
    try:
        yield request.param
    finally:
        spark.conf.unset(PROVIDER) if old is None else spark.conf.set(PROVIDER, old)


def _rows(rng: np.random.Generator, n: int, lo: float, hi: float, *, null_scores: int = 0) -> pd.DataFrame:
    """``n`` rows with event times in [lo, hi) minutes after START (microseconds apart, so no
    row sits exactly on a watermark), two keys, tied scores and integer weights."""
    us = START_US + rng.integers(int(lo * MINUTE_US), int(hi * MINUTE_US), n)
    p = rng.integers(0, 6, n) / 5.0
    p[:null_scores] = np.nan
    return pd.DataFrame({"ts": pd.to_datetime(us, unit="us", utc=True), "k": rng.choice(["a", "b"], n),
                         "y": rng.integers(0, 2, n), "p": p, "w": rng.integers(1, 4, n).astype(float)})


def _write(folder: Path, i: int, df: pd.DataFrame) -> None:
    """One new file of the source folder, appearing whole (written aside, then renamed)."""
    tmp = folder.parent / f".part{i}.parquet"
    df.to_parquet(tmp)
    os.replace(tmp, folder / f"part{i:03d}.parquet")


def _us(df: pd.DataFrame) -> np.ndarray:
    return df["ts"].astype("datetime64[us, UTC]").astype("int64").to_numpy()


def _kept(files: list[pd.DataFrame]) -> tuple[pd.DataFrame, int, list[int]]:
    """The rows a watermark of DELAY keeps when each file is one micro-batch: a row is late when
    its event time is not after the watermark of its batch, which is the largest event time
    (in ms) of the earlier batches minus the delay. Returns the kept rows, the late count and
    each file's watermark (ms)."""
    kept, late, marks, top = [], 0, [], None
    for df in files:
        mark_ms = 0 if top is None else top // 1000 - DELAY_US // 1000
        marks.append(mark_ms)
        us = _us(df)
        keep = us > mark_ms * 1000
        kept.append(df[keep])
        late += int((~keep).sum())
        top = int(us.max()) if top is None else max(top, int(us.max()))
    return pd.concat(kept, ignore_index=True), late, marks


def _oracle(rows: pd.DataFrame) -> dict[str, Any]:
    y, p, w = rows["y"].to_numpy(), rows["p"].to_numpy(), rows["w"].to_numpy()
    cm = confusion_matrix(y, p >= 0.5, sample_weight=w, labels=[0, 1])
    out: dict[str, Any] = {"f1": f1_score(y, p >= 0.5, sample_weight=w, zero_division=0.0),
                           **{f"cm[{i}, {j}]": cm[i, j] for i in range(2) for j in range(2)}}
    if len(np.unique(y)) == 2:
        out["auroc"] = out["bounded"] = roc_auc_score(y, p, sample_weight=w)
        out["ap"] = average_precision_score(y, p, sample_weight=w)
    return out


def _metrics() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(zero_division=0.0),
                        cm=sm.ConfusionMatrix(), bounded=sm.AUROC(max_bytes=4096))


def _check_windows(got: pd.DataFrame, rows: pd.DataFrame, windows: list[int], slide_us: int | None = None) -> None:
    """Every (key, window start) of ``windows`` holds the oracle's values on exactly its rows."""
    us = _us(rows)
    assert sorted(set(zip(got["k"], got["start_us"], strict=True))) == sorted(
        (k, s) for k in ("a", "b") for s in windows if ((rows["k"] == k) & (us >= s) & (us < s + WINDOW_US)).any())
    for (k, start), part in got.groupby(["k", "start_us"]):
        inside = rows[(rows["k"] == k) & (us >= start) & (us < start + WINDOW_US)]
        assert (part["end_us"] == start + WINDOW_US).all()
        assert (part["rows"] == len(inside)).all(), (k, start)
        values = dict(zip(part["metric"], part["value"], strict=True))
        expect = _oracle(inside)
        for name, value in values.items():
            if name in expect:
                assert abs(value - expect[name]) <= 1e-12, (k, start, name, value, expect[name])
            else:  # AUROC and AP of a window holding one class are undefined
                assert name in ("auroc", "ap", "bounded") and np.isnan(value), (k, start, name, value)
        assert set(expect) <= set(values)


def _read(spark: Any, frame: Any) -> pd.DataFrame:
    from pyspark.sql import functions as F

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return frame.select(
            "*", (F.unix_micros("window_start")).alias("start_us"), F.unix_micros("window_end").alias("end_us"),
        ).toPandas()


def _progress(queries: list[Any]) -> dict[int, dict[str, Any]]:
    """batchId -> progress of the queries' micro-batches, a later run's record of a batch winning
    (an idle trigger's record, no rows and no operators, names the next batch: left out)."""
    return {p["batchId"]: p for q in queries for p in q.recentProgress if p["numInputRows"] or p["stateOperators"]}


def test_append_windows_equal_sklearn_and_a_replayed_batch_counts_once(spark, state_api: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    source, chk, out = tmp_path / "in", tmp_path / "chk", tmp_path / "out"
    source.mkdir()
    files = [
        _rows(rng, 120, 0, 15),
        pd.concat([_rows(rng, 120, 10, 25), _rows(rng, 40, 3, 12)]),  # late rows for [0, 10) and [10, 20)
        pd.concat([_rows(rng, 120, 20, 38), _rows(rng, 40, 8, 22)]),
        _rows(rng, 1, 200, 201),  # moves the watermark past every window above
    ]

    def start() -> Any:
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source))
        frame = evaluate_stream(stream, _metrics(), label="y", score="p", weight="w", by="k",
                                window=("ts", "10 minutes"), watermark="5 minutes", state_api=state_api,
                                max_parts=2)  # transformWithStateInPandas: [10, 20) compacts its 3 parts
        return (frame.writeStream.outputMode("append").format("parquet")
                .option("checkpointLocation", str(chk)).trigger(processingTime="100 milliseconds").start(str(out)))

    first = start()
    for i in (0, 1):
        _write(source, i, files[i])
        first.processAllAvailable()
    first.stop()
    # A crash after micro-batch `replayed` (file 1) saved its states but before the sink and the
    # query committed it: its commits are gone, and whatever ran after it, so the restarted query
    # runs it again on the states as they were before it (the ones it saved are overwritten).
    runs = _progress([first])
    replayed = max(b for b, p in runs.items() if p["numInputRows"] == len(files[1]))
    for b in runs:
        logs = [chk / "commits", out / "_spark_metadata"] * (b >= replayed) + [chk / "offsets"] * (b > replayed)
        for log in logs:
            for name in (str(b), f".{b}.crc"):  # the log entry and its checksum file
                (log / name).unlink(missing_ok=True)
    second = start()
    second.processAllAvailable()
    for i in (2, 3):
        _write(source, i, files[i])
        second.processAllAvailable()
    second.stop()

    again = _progress([second])
    assert again[replayed]["numInputRows"] == len(files[1])  # the batch did run twice
    kept, late, marks = _kept(files)
    data = {b: p for b, p in _progress([first, second]).items() if p["numInputRows"]}
    assert [p["numInputRows"] for _, p in sorted(data.items())] == [len(f) for f in files]
    reported = [pd.Timestamp(p["eventTime"].get("watermark", "1970-01-01T00:00:00Z")).value // 1_000_000
                for _, p in sorted(data.items())]
    assert reported == marks  # the watermark each file met, as Spark reports it
    assert late > 0
    if state_api == "applyInPandasWithState":  # (transformWithState drops late rows without counting them)
        dropped = sum(op.get("numRowsDroppedByWatermark", 0) for p in data.values() for op in p["stateOperators"])
        assert dropped == late  # Spark dropped exactly the rows the rule calls late
    got = _read(spark, spark.read.parquet(str(out)))
    assert (got["skipped"] == 0).all()
    data_windows = [START_US + m * MINUTE_US for m in range(0, 40, 10)]
    _check_windows(got, kept, data_windows)  # the sentinel's window is still open: not emitted


def test_update_mode_sliding_windows_nulls_skipped(spark, state_api: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    source = tmp_path / "in"
    source.mkdir()
    files = [_rows(rng, 150, 0, 12, null_scores=4), _rows(rng, 150, 8, 20)]
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source))
    frame = evaluate_stream(stream, _metrics(), label="y", score="p", weight="w", by=["k"], nulls="skip",
                            window=("ts", "10 minutes", "5 minutes"), watermark="30 minutes",
                            output_mode="update", state_api=state_api)
    name = f"sss_update_{state_api}"
    query = (frame.writeStream.outputMode("update").format("memory").queryName(name)
             .trigger(processingTime="100 milliseconds").start())
    try:
        for i, df in enumerate(files):
            _write(source, i, df)
            query.processAllAvailable()
        batches = {b for b, p in _progress([query]).items() if p["numInputRows"]}
        table = _read(spark, spark.table(name))
    finally:
        query.stop()
    assert len(batches) == 2
    # each window's last update holds its values on every row so far (no row is late here)
    last = table.groupby(["k", "start_us", "metric"]).tail(1)  # the memory sink keeps arrival order
    rows = pd.concat(files, ignore_index=True)
    nulls = rows["p"].isna()
    starts = [START_US + m * MINUTE_US for m in range(-5, 20, 5)]
    _check_windows(last, rows[~nulls].reset_index(drop=True), starts)
    skipped = last.groupby(["k", "start_us"])["skipped"].first()
    us = _us(rows)
    for (k, start), n in skipped.items():
        assert n == int((nulls & (rows["k"] == k) & (us >= start) & (us < start + WINDOW_US)).sum())
    assert skipped.sum() == 2 * nulls.sum()  # two sliding windows hold each row


def _documents(rng: np.random.Generator, n: int, lo: float, hi: float, first_doc: int) -> pd.DataFrame:
    """``n`` retrieved documents with event times in [lo, hi) minutes after START: two keys, 5
    queries each (a query's documents spread over files and windows), graded relevance, tied
    scores, document ids unique (they break ties as trec_eval does)."""
    us = START_US + rng.integers(int(lo * MINUTE_US), int(hi * MINUTE_US), n)
    return pd.DataFrame({"ts": pd.to_datetime(us, unit="us", utc=True), "k": rng.choice(["a", "b"], n),
                         "q": rng.choice([f"q{i}" for i in range(5)], n),
                         "d": [f"doc{first_doc + i}" for i in range(n)],
                         "y": rng.integers(0, 3, n), "p": rng.integers(0, 5, n) / 4.0})


def _retrieval_metrics() -> sm.MetricSet:
    return sm.MetricSet(ndcg=sm.NDCG(3), mrr=sm.MRR(), recall=sm.RecallAtK(2), map=sm.MAP())


def _retrieval_oracle(rows: pd.DataFrame) -> dict[str, float]:
    """One process: the window's documents fed at once, each query whole."""
    rows = rows.sort_values("q", kind="stable")
    ms = _retrieval_metrics().update(rows["y"].to_numpy(), rows["p"].to_numpy(), query_ids=rows["q"].to_numpy(),
                                     doc_ids=rows["d"].to_numpy())
    return {name: float(v) for name, v in ms.compute().items()}


def test_retrieval_per_window_equals_one_process_and_batch_evaluate(spark, state_api: str, tmp_path: Path) -> None:
    from streammetrics.spark import evaluate

    rng = np.random.default_rng(11)
    source = tmp_path / "in"
    source.mkdir()
    files = [_documents(rng, 90, 0, 14, 0),
             pd.concat([_documents(rng, 90, 6, 24, 100), _documents(rng, 20, 0, 4, 200)]),  # late: [0, 4) < 9
             _documents(rng, 1, 100, 101, 300)]  # moves the watermark past every window above
    stream = spark.readStream.schema("ts timestamp, k string, q string, d string, y long, p double") \
        .option("maxFilesPerTrigger", 1).parquet(str(source))
    frame = evaluate_stream(stream, _retrieval_metrics(), label="y", score="p", query="q", doc_id="d", by="k",
                            window=("ts", "10 minutes"), watermark="5 minutes", state_api=state_api)
    name = f"sss_retrieval_{state_api}"
    query = frame.writeStream.outputMode("append").format("memory").queryName(name).start()
    try:
        for i, df in enumerate(files):
            _write(source, i, df)
            query.processAllAvailable()
        got = _read(spark, spark.table(name))
    finally:
        query.stop()
    kept, late, _ = _kept(files)
    assert late >= 20  # (and some of the second file's own rows, before the watermark of 9 minutes)
    us = _us(kept)
    windows = sorted({(k, s) for k, s in zip(got["k"], got["start_us"], strict=True)})
    assert windows == [(k, START_US + m * MINUTE_US) for k in ("a", "b") for m in (0, 10, 20)]
    queries_split = 0
    for (k, start), part in got.groupby(["k", "start_us"]):
        inside = kept[(kept["k"] == k) & (us >= start) & (us < start + WINDOW_US)]
        queries_split += sum(inside.groupby("q")["ts"].apply(lambda t: t.isin(files[1]["ts"]).any()
                                                             and t.isin(files[0]["ts"]).any()))
        assert (part["rows"] == len(inside)).all() and (part["skipped"] == 0).all()
        values = dict(zip(part["metric"], part["value"], strict=True))
        expect = _retrieval_oracle(inside)
        assert values.keys() == expect.keys()
        for metric, value in expect.items():
            assert abs(values[metric] - value) <= 1e-12, (k, start, metric, values[metric], value)
        if (k, start) == windows[1]:  # the batch engine on the same rows gives the same values
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                batch = evaluate(spark.createDataFrame(inside.drop(columns="ts")), _retrieval_metrics(),
                                 label="y", score="p", query="q", doc_id="d")
            assert all(abs(batch[m] - values[m]) <= 1e-12 for m in expect)
    assert queries_split > 0  # some window's query had documents in two micro-batches


def test_refuses_what_it_cannot_take(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in").mkdir()
    stream = spark.readStream.schema(SCHEMA + ", s string").parquet(str(tmp_path / "in"))
    ok: dict[str, Any] = dict(label="y", score="p", window=("ts", "10 minutes"), watermark="5 minutes")

    def refused(match: str, df: Any = stream, metrics: Any = None, **changes: Any) -> None:
        with pytest.raises(ValueError, match=match):
            evaluate_stream(df, metrics if metrics is not None else sm.AUROC(), **{**ok, **changes})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        batch = spark.createDataFrame(pd.DataFrame({"y": [0, 1], "p": [0.1, 0.9]}))
    refused("df: expected a streaming DataFrame .*got a batch one", df=batch)
    refused("df: expected a streaming pyspark DataFrame .*got DataFrame", df=pd.DataFrame({"y": [1]}))
    refused(r"columns \['nope'\] are not in the DataFrame", score="nope")
    refused(r"window: column 's' must be a timestamp, got string", window=("s", "10 minutes"))
    refused(r"window: column 'when' is not in the DataFrame", window=("when", "10 minutes"))
    refused(r"window: expected \(event-time column, duration\)", window="ts")
    refused(r"window: Spark refused \('ts', 'ten minutes'\)", window=("ts", "ten minutes"))
    refused(r"watermark: Spark refused 'soon'", watermark="soon")
    refused(r"watermark: give the delay .*column 'ts' has no watermark", watermark=None)
    refused(r"output_mode: must be one of \('append', 'update'\), got 'complete'", output_mode="complete")
    refused(r"by: columns \['region'\] are not in the DataFrame", by="region")
    refused(r"by: key column\(s\) \['metric'\] clash", df=stream.withColumnRenamed("k", "metric"), by="metric")
    refused("query: retrieval metrics need the query id column", metrics=sm.NDCG(k=3))
    refused(r"state_api: must be one of \('applyInPandasWithState', 'transformWithStateInPandas'\), got 'list'",
            state_api="list")
    refused(r"max_parts: must be an integer >= 1, got 0", max_parts=0)
    assert spark.conf.get(PROVIDER, None) != ROCKSDB_PROVIDER
    refused(r"state_api: 'transformWithStateInPandas' needs the RocksDB state store; set "
            r"spark.conf.set\('spark.sql.streaming.stateStore.providerClass', "
            r"'org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider'\)",
            state_api="transformWithStateInPandas")
    from pyspark.sql import GroupedData

    with monkeypatch.context() as patch:  # pyspark 3.5 has no transformWithStateInPandas
        owner = next(c for c in GroupedData.__mro__ if "transformWithStateInPandas" in vars(c))
        patch.delattr(owner, "transformWithStateInPandas")
        refused(r"state_api: 'transformWithStateInPandas' needs pyspark 4.0 or later, installed \d",
                state_api="transformWithStateInPandas")
    # a frame already watermarked needs no watermark=
    out = evaluate_stream(stream.withWatermark("ts", "1 minute"), sm.AUROC(), label="y", score="p",
                          window=("ts", "10 minutes"))
    assert out.isStreaming and out.columns == ["window_start", "window_end", "metric", "value", "rows", "skipped"]


def test_a_null_row_fails_the_query_naming_it(spark, tmp_path: Path) -> None:
    from pyspark.errors import StreamingQueryException

    source = tmp_path / "in"
    source.mkdir()
    _write(source, 0, _rows(np.random.default_rng(1), 20, 0, 5, null_scores=1))
    stream = spark.readStream.schema(SCHEMA).parquet(str(source))
    frame = evaluate_stream(stream, sm.ConfusionMatrix(), label="y", score="p",
                            window=("ts", "10 minutes"), watermark="5 minutes", output_mode="update")
    query = frame.writeStream.outputMode("update").format("memory").queryName("sss_nulls").start()
    try:
        with pytest.raises(StreamingQueryException, match=r"ValueError: nulls: column 'p' is null at row \d+ "
                                                          r"of the micro-batch rows of window \[2026-01-01"):
            query.processAllAvailable()
    finally:
        query.stop()


def test_a_duplicate_document_fails_the_micro_batch_that_brings_it(spark, state_api: str, tmp_path: Path) -> None:
    """A document already saved for its window by an earlier micro-batch: the micro-batch that
    brings it fails the query (before any window closes), naming the document, query and window."""
    from pyspark.errors import StreamingQueryException

    source = tmp_path / "in"
    source.mkdir()
    first = _documents(np.random.default_rng(3), 12, 0, 4, 0)
    again = first.iloc[[5]].assign(y=0, p=0.5)  # same key, window, query and document
    stream = spark.readStream.schema("ts timestamp, k string, q string, d string, y long, p double") \
        .option("maxFilesPerTrigger", 1).parquet(str(source))
    frame = evaluate_stream(stream, _retrieval_metrics(), label="y", score="p", query="q", doc_id="d", by="k",
                            window=("ts", "10 minutes"), watermark="5 minutes", state_api=state_api)
    query = frame.writeStream.outputMode("append").format("memory").queryName(f"sss_dup_{state_api}").start()
    try:
        _write(source, 0, first)
        query.processAllAvailable()
        _write(source, 1, again)
        with pytest.raises(StreamingQueryException,
                           match=fr"ValueError: doc_id: duplicate document 'doc5' in query '{first['q'].iloc[5]}' "
                                 r"\(column 'd'\): row 0 of the micro-batch rows of window \[2026-01-01 00:00:00"
                                 fr"\+00:00, 2026-01-01 00:10:00\+00:00\) of key \('{first['k'].iloc[5]}',\), "
                                 "already saved for the window by an earlier micro-batch"):
            query.processAllAvailable()
        # the micro-batches committed read the first file only; no window closed before
        assert sum(p["numInputRows"] for p in query.recentProgress) == len(first)
        assert spark.table(f"sss_dup_{state_api}").count() == 0
    finally:
        query.stop()
