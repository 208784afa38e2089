"""streammetrics.spark.evaluate over a plain Parquet scan, the files read by pyarrow in the Spark
tasks (``streammetrics._engines.spark_files``, issue #32 item 1): scikit-learn and the
``mapInArrow`` path on uneven row groups, empty files, nulls, weights and slices; the plans that
keep the ``mapInArrow`` path; the pieces the driver cuts (property tests, no Spark) and a task's
state on random files (in this process)."""

from __future__ import annotations

import gc
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._core.metric import trusted_states  # noqa: E402
from streammetrics._engines import spark_files, spark_ranges, spark_worker  # noqa: E402
from streammetrics._engines.plan import make_plan, state_from_bytes  # noqa: E402


def _write(folder: Path, df: pd.DataFrame, cuts: list[int], group_rows: list[int]) -> None:
    """``df`` written as files cut at ``cuts`` (an empty file among them), each with its own
    row group size."""
    bounds = [0, *cuts, len(df)]
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        part = df.iloc[a:b]
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), folder / f"part-{i}.parquet",
                       row_group_size=max(1, group_rows[i % len(group_rows)]))
    pq.write_table(pa.Table.from_pandas(df.iloc[:0], preserve_index=False), folder / "part-empty.parquet")


def _sklearn(df: pd.DataFrame, weight: str | None = "w") -> dict[str, Any]:
    from sklearn.metrics import average_precision_score, confusion_matrix, f1_score, roc_auc_score

    w = None if weight is None else df[weight].to_numpy()
    y, p = df.y.to_numpy(), df.p.to_numpy()
    return {"auroc": roc_auc_score(y, p, sample_weight=w), "ap": average_precision_score(y, p, sample_weight=w),
            "f1": f1_score(y, p >= 0.5, sample_weight=w), "cm": confusion_matrix(y, p >= 0.5, sample_weight=w)}


def _set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame({"y": y, "p": np.round(0.3 * y + 0.7 * rng.random(n), 2),  # ties
                         "w": rng.random(n), "region": rng.choice(["eu", "us", "apac"], n)})


def _plan(columns: list[str]) -> Any:
    return make_plan(_set(), label="y", score="p", weight="w", query=None, doc_id=None, update_kwargs={},
                     available=columns)[2]


def _assert_close(got: dict[str, Any], ref: dict[str, Any]) -> None:
    assert got.keys() == ref.keys()
    for k in ref:
        np.testing.assert_allclose(np.asarray(got[k], float), np.asarray(ref[k], float), rtol=1e-12, atol=1e-12)


@pytest.fixture
def direct_runs() -> Any:
    """Counts the jobs of the direct path (``run_pieces`` calls)."""
    with mock.patch.object(spark_files, "run_pieces", wraps=spark_files.run_pieces) as spy:
        yield spy


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_files_read_in_tasks_equal_sklearn_and_the_arrow_path(spark_session, tmp_path, direct_runs) -> None:
    from streammetrics.spark import evaluate

    df = _frame(5000, seed=1)
    _write(tmp_path, df, cuts=[700, 3100], group_rows=[100, 977, 5000])
    frame = spark_session.read.parquet(str(tmp_path))
    got = evaluate(frame, _set(), label="y", score="p", weight="w")
    assert direct_runs.call_count == 1
    _assert_close(got, _sklearn(df))
    _assert_close(got, evaluate(frame, _set(), label="y", score="p", weight="w", direct_parquet=False))
    assert direct_runs.call_count == 1  # turned off: the mapInArrow path
    with mock.patch.object(spark_ranges, "run_ranges", wraps=spark_ranges.run_ranges) as ranges:
        unweighted = evaluate(frame.select("y", "p"), _set(), label="y", score="p")  # a projection
    _assert_close(unweighted, _sklearn(df, weight=None))
    assert (direct_runs.call_count, ranges.call_count) == (1, 1)  # unweighted: by score ranges
    acc = evaluate(frame, _set(), label="y", score="p", compute=False)
    assert isinstance(acc, sm.MetricSet)
    _assert_close(acc.compute(), unweighted)
    # the workers that ran the tasks froze their imports out of the collector (spark_worker.settle)
    frozen = spark_session.sparkContext.parallelize(range(2), 2).map(lambda _: gc.get_freeze_count()).collect()
    assert max(frozen) > 0


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("depth", [1, 3])
def test_many_tasks_merge_in_levels(spark_session, tmp_path, direct_runs, depth: int) -> None:
    """A row group per task (``maxPartitionBytes`` tiny: 30 tasks): the tree's levels on the
    executors, the same values at every depth."""
    from streammetrics.spark import evaluate

    key = "spark.sql.files.maxPartitionBytes"
    df = _frame(3000, seed=2)
    _write(tmp_path, df, cuts=[1000, 2000], group_rows=[100])
    frame = spark_session.read.parquet(str(tmp_path))
    before = spark_session.conf.get(key)
    spark_session.conf.set(key, "1k")
    try:
        tasks = spark_files.plan_pieces(frame, _plan(frame.columns))
        assert tasks is not None and len(tasks) == 30
        got = evaluate(frame, _set(), label="y", score="p", weight="w", depth=depth)
    finally:
        spark_session.conf.set(key, before)
    assert direct_runs.call_count == 1
    _assert_close(got, _sklearn(df))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_nulls_named_by_file_and_row_or_skipped(spark_session, tmp_path, direct_runs) -> None:
    from streammetrics._engines.request import NullRowsSkipped
    from streammetrics.spark import evaluate

    df = _frame(2000, seed=3)
    holes = df.copy()
    holes.loc[1234, "p"] = np.nan
    holes.loc[[1500, 1600], "w"] = None
    folder = tmp_path / "a b%"  # Spark lists it as a URI: file:/.../a%20b%25/...
    folder.mkdir()
    _write(folder, holes, cuts=[1000], group_rows=[300])
    frame = spark_session.read.parquet(str(folder))
    path = re.escape(str(folder / "part-1.parquet"))
    with pytest.raises(ValueError, match=rf"nulls: column 'p' is null at row 234 of the Parquet file '{path}' "):
        evaluate(frame, _set(), label="y", score="p", weight="w")  # the other members' direct read
    bad = df.copy()
    bad.loc[1250, "y"] = 2  # row 250 of part-1: "of the Parquet file '...'" as on every other route
    _write(folder, bad, cuts=[1000], group_rows=[300])
    with pytest.raises(ValueError, match=rf"^label: column 'y' of the Parquet file '{path}'( from row \d+)?: y_true: "
                                         r"labels must be 0 or 1; first invalid value 2 at index \d+$"):
        evaluate(spark_session.read.parquet(str(folder)), sm.MetricSet(f1=sm.F1(), acc=sm.Accuracy()), label="y",
                 score="p")
    _write(folder, holes, cuts=[1000], group_rows=[300])
    # weighted AUROC alone goes by spark_ranked's shuffled ranges (Spark's reader): its partition
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row \d+ of Spark partition \d+ "):
        evaluate(frame, sm.AUROC(), label="y", score="p", weight="w")
    with pytest.warns(NullRowsSkipped, match=r"skipped 3 row\(s\)"):
        got = evaluate(frame, _set(), label="y", score="p", weight="w", nulls="skip")
    _assert_close(got, _sklearn(df.drop(index=[1234, 1500, 1600])))
    assert direct_runs.call_count == 3


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_slices_equal_sliced_in_one_process(spark_session, tmp_path, direct_runs) -> None:
    from streammetrics.spark import evaluate

    df = _frame(2400, seed=4)
    _write(tmp_path, df, cuts=[500], group_rows=[333, 1000])
    frame = spark_session.read.parquet(str(tmp_path))
    got = evaluate(frame, _set(), label="y", score="p", weight="w", by="region")
    assert direct_runs.call_count == 0  # exact AUROC / AP with by=: the keyed ranges (_engines/spark_keyed)
    ref = cases.single_process_sliced(_set(), df, "region", label="y", score="p", weight="w")
    assert got.keys() == ref.keys()
    for key in ref:
        _assert_close(got[key], _sklearn(df[df.region == key]))
        cases.assert_same(got[key], ref[key])
    counts = sm.MetricSet(f1=sm.F1(), cm=sm.ConfusionMatrix())
    got = evaluate(frame, counts, label="y", score="p", weight="w", by="region")
    assert direct_runs.call_count == 1  # no ranked member: the states of the direct Parquet pieces
    cases.assert_same(got, cases.single_process_sliced(counts, df, "region", label="y", score="p", weight="w"))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_other_plans_keep_the_arrow_path(spark_session, tmp_path, direct_runs) -> None:
    """A filter, a computed or renamed column, a cache, partition columns, a frame not read
    from files, a column whose file type differs from Spark's, a file without a used column
    (merged schemas): the mapInArrow path, the same values."""
    from pyspark.sql import functions as F

    from streammetrics.spark import evaluate

    df = _frame(1200, seed=5)
    _write(tmp_path, df, cuts=[600], group_rows=[200])
    frame = spark_session.read.parquet(str(tmp_path))
    ref = _sklearn(df)
    cols = dict(label="y", score="p", weight="w")
    assert spark_files.scan_files(frame.select("p", "y", "w"), ["y", "p", "w"]) is not None
    _assert_close(evaluate(frame.filter(F.col("p") >= 0), _set(), **cols), ref)
    _assert_close(evaluate(frame.withColumn("q", F.col("p")), _set(), label="y", score="q", weight="w"), ref)
    _assert_close(evaluate(frame.select("y", F.col("p").alias("q"), "w"), _set(), label="y", score="q",
                           weight="w"), ref)
    cached = frame.select("y", "p", "w").cache()
    try:
        _assert_close(evaluate(cached, _set(), **cols), ref)
    finally:
        cached.unpersist()
    assert direct_runs.call_count == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        made = spark_session.createDataFrame(df)
    assert spark_files.scan_files(made, ["y", "p"]) is None
    hive = tmp_path / "hive"
    for region, part in df.groupby("region"):
        (hive / f"region={region}").mkdir(parents=True)
        part.drop(columns="region").to_parquet(hive / f"region={region}" / "a.parquet", index=False)
    by_dir = spark_session.read.parquet(str(hive))
    assert spark_files.scan_files(by_dir, ["y", "p"]) is None
    _assert_close(evaluate(by_dir, _set(), **cols), ref)
    # a file without a used column (Spark reads nulls there), a type other than Spark's
    odd = tmp_path / "odd"
    odd.mkdir()
    pq.write_table(pa.Table.from_pandas(df.iloc[:600], preserve_index=False), odd / "a.parquet")
    pq.write_table(pa.Table.from_pandas(df.iloc[600:].drop(columns="w"), preserve_index=False), odd / "b.parquet")
    merged = spark_session.read.option("mergeSchema", "true").parquet(str(odd))
    plan = _plan(merged.columns)
    assert spark_files.plan_pieces(merged, plan) is None  # b.parquet has no "w": Spark reads nulls
    with pytest.raises(ValueError, match="nulls: column 'w' is null"):
        evaluate(merged, _set(), **cols)
    assert spark_files._groups(str(odd / "a.parquet"), {"p": ("float",)}) is None
    assert direct_runs.call_count == 0
    with pytest.raises(ValueError, match="direct_parquet: must be True or False.*'yes'"):
        evaluate(frame, _set(), direct_parquet="yes", **cols)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.lists(st.integers(0, 40), max_size=6), min_size=1, max_size=6),
       n_tasks=st.integers(1, 9))
def test_split_covers_every_row_group_once_in_order(sizes: list[list[int]], n_tasks: int) -> None:
    files = [(f"/f{i}", [(r, 8 * r) for r in groups]) for i, groups in enumerate(sizes)]
    tasks = spark_files.split_groups(files, n_tasks)
    nonempty = [(f"/f{i}", g) for i, groups in enumerate(sizes) for g, r in enumerate(groups) if r]
    assert len(tasks) <= max(1, n_tasks) and all(tasks)
    got = [(p.source, g) for t in tasks for p in t for g in range(p.first_group, p.stop_group)]
    # consecutive row groups of a file may be joined across an empty one: only the non-empty count
    rows = dict(((f"/f{i}", g), r) for i, groups in enumerate(sizes) for g, r in enumerate(groups))
    assert [x for x in got if rows[x]] == nonempty
    for t in tasks:
        for p in t:
            assert p.first_row == sum(r for _, r in [(g, rows[(p.source, g)]) for g in range(p.first_group)])
    if nonempty and n_tasks <= len(nonempty):
        total = sum(rows[x] for x in nonempty)
        biggest = max(rows[x] for x in nonempty)
        loads = [sum(rows[(p.source, g)] for p in t for g in range(p.first_group, p.stop_group)) for t in tasks]
        assert max(loads) <= total / len(tasks) + biggest


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_task_state_equals_one_process(data: Any) -> None:
    """A task's state from random files (uneven row groups, ties, weights, empty files), read
    in this process, equals one process fed the same rows (AUROC, AP, F1, CM to 1e-12)."""
    n_files = data.draw(st.integers(1, 4))
    frames = []
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for i in range(n_files):
            n = data.draw(st.integers(0, 60))
            y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int64)
            p = np.array(data.draw(st.lists(st.sampled_from([0.1, 0.5, 0.7, 0.9]), min_size=n, max_size=n)))
            w = np.array(data.draw(st.lists(st.floats(0.01, 5), min_size=n, max_size=n)))
            part = pd.DataFrame({"y": y, "p": p, "w": w})
            frames.append(part)
            path = str(Path(folder) / f"{i}.parquet")
            pq.write_table(pa.Table.from_pandas(part, preserve_index=False), path,
                           row_group_size=data.draw(st.integers(1, 25)))
            meta = pq.read_metadata(path)
            files.append((path, [(meta.row_group(g).num_rows, 1) for g in range(meta.num_row_groups)]))
        plan = _plan(["y", "p", "w"])
        tasks = spark_files.split_groups(files, data.draw(st.integers(1, 3)))
        states = [spark_files.pieces_state(plan, t) for t in tasks]
    df = pd.concat(frames, ignore_index=True)
    if len(df) == 0 or df.y.nunique() < 2:
        assert all(n == 0 for _, n in states)
        return
    with trusted_states():  # as the driver reads its tasks' states
        accs = [state_from_bytes(s) for s, _ in states]
    acc = accs[0]
    acc.merge(*accs[1:])
    _assert_close(acc.compute(), _sklearn(df))


def test_sources_and_sizes() -> None:
    """Spark's file URIs as pyarrow opens them; Spark's size settings in bytes."""
    assert spark_files._source("file:///data/a%20b%25/part-0.parquet") == "/data/a b%/part-0.parquet"
    assert spark_files._source("file:/data/x.parquet") == "/data/x.parquet"
    assert spark_files._source("s3://bucket/x.parquet") == "s3://bucket/x.parquet"
    assert [spark_files._bytes(t) for t in ("134217728", "128m", "64kb", "1g", "2048b", "odd")] == [
        128 << 20, 128 << 20, 64 << 10, 1 << 30, 2048, 128 << 20]


def test_settle_freezes_a_task_worker_once_per_import_growth(monkeypatch) -> None:
    """``spark_worker.settle``: nothing outside a Spark task; in one, a collection and a freeze,
    then nothing until a module is imported (no Spark: the task context stood in)."""
    monkeypatch.setattr(spark_worker, "_frozen_at", 0)
    before = gc.get_freeze_count()
    try:
        spark_worker.settle()  # the driver, a test: no task context
        assert gc.get_freeze_count() == before
        monkeypatch.setattr(spark_worker, "in_task", lambda: True)
        with mock.patch.object(gc, "collect", wraps=gc.collect) as collect:
            spark_worker.settle()
            frozen = gc.get_freeze_count()
            assert frozen > before and collect.call_count == 1
            spark_worker.settle()  # nothing imported since: O(1)
            assert collect.call_count == 1
            monkeypatch.setitem(__import__("sys").modules, "streammetrics_test_new_module", object())
            spark_worker.settle()  # a module more: frozen again
            assert collect.call_count == 2
    finally:
        gc.unfreeze()
