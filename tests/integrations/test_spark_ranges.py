"""streammetrics.spark.evaluate's score-range path over a Parquet scan (``_engines/spark_ranges``,
issue #32 item 1): exact binary AUROC / AP equal to scikit-learn (1e-12) and to one process bit for
bit on Spark (ties, uneven row groups, an empty file, one partition, 1-4 ranges, the set's
members in either order, only some members ranked), nulls and bad labels refused as one process
refuses them; and, without Spark, the range tasks themselves on random files with any edges
(more ranges than rows, edges at ties)."""

from __future__ import annotations

import re
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

import streammetrics as sm  # noqa: E402
from streammetrics._engines import range_counts, spark_files, spark_ranges  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402


def _set(order: str = "ranked first", ignore: int | None = None, readouts: bool = False) -> sm.MetricSet:
    ranked = {"auroc": sm.AUROC(ignore_index=ignore), "ap": sm.AveragePrecision(ignore_index=ignore)}
    if readouts:  # interpolated and 11-point AP: from the same counts at the root
        ranked.update(interp=sm.AveragePrecision(ignore_index=ignore, interpolated=True),
                      eleven=sm.AveragePrecision(ignore_index=ignore, eleven_point=True))
    rest = {"f1": sm.F1(ignore_index=ignore), "cm": sm.ConfusionMatrix(ignore_index=ignore)}
    if order == "only ranked":
        return sm.MetricSet(ranked)
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


def _data(n: int, seed: int, decimals: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame({"y": y, "p": np.round(0.3 * y + 0.7 * rng.random(n), decimals)})  # ties


def _write(folder: Path, df: pd.DataFrame, cuts: list[int], group_rows: list[int]) -> list[str]:
    """``df`` cut into files at ``cuts``, each with its own row group size, and an empty file."""
    bounds = [0, *cuts, len(df)]
    paths = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        paths.append(str(folder / f"part-{i}.parquet"))
        pq.write_table(pa.Table.from_pandas(df.iloc[a:b], preserve_index=False), paths[-1],
                       row_group_size=max(1, group_rows[i % len(group_rows)]))
    pq.write_table(pa.Table.from_pandas(df.iloc[:0], preserve_index=False), folder / "part-empty.parquet")
    return paths


def _single(metrics: sm.MetricSet, df: pd.DataFrame) -> tuple[dict[str, Any], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        acc = metrics.copy()
        if len(df):
            acc.update(df["y"].to_numpy(), df["p"].to_numpy())
        values = acc.compute()
    return values, sorted(str(w.message) for w in caught)


def _run(fn: Any) -> tuple[dict[str, Any], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = fn()
    return values, sorted(str(w.message) for w in caught)


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k]), equal_nan=True), (k, got[k], want[k])


@pytest.fixture
def range_runs() -> Any:
    """Counts the jobs of the range path (``run_ranges`` calls)."""
    with mock.patch.object(spark_ranges, "run_ranges", wraps=spark_ranges.run_ranges) as spy:
        yield spy


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize(("order", "ranges"), [("ranked first", 2), ("rest first", 4), ("only ranked", 3)])
def test_equal_sklearn_and_one_process_bit_for_bit(spark_session, tmp_path, range_runs, order: str,
                                                   ranges: int) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    from streammetrics.spark import evaluate

    df = _data(6000, seed=ranges)
    _write(tmp_path, df, cuts=[700, 3100, 3100], group_rows=[100, 977, 6000])  # uneven, an empty file
    frame = spark_session.read.parquet(str(tmp_path))
    with mock.patch.object(spark_ranges, "range_total", return_value=ranges):
        got = _run(lambda: evaluate(frame, _set(order), label="y", score="p"))
    assert range_runs.call_count == 1
    want = _single(_set(order), df)
    _same(got[0], want[0])
    if order == "only ranked":  # interpolated and 11-point AP: the same job, bit for bit
        with mock.patch.object(spark_ranges, "range_total", return_value=ranges):
            _same(evaluate(frame, _set(order, readouts=True), label="y", score="p"),
                  _single(_set(order, readouts=True), df)[0])
        assert range_runs.call_count == 2
    assert got[1] == want[1]
    assert got[0]["auroc"] == pytest.approx(roc_auc_score(df.y, df.p), rel=1e-12, abs=1e-12)
    assert got[0]["ap"] == pytest.approx(average_precision_score(df.y, df.p), rel=1e-12, abs=1e-12)
    # mapInArrow: the ranked members by shuffled ranges (spark_ranked, within 1e-12), the rest equal
    arrow = evaluate(frame, _set(order), label="y", score="p", direct_parquet=False)
    assert list(arrow) == list(got[0])
    for k, v in got[0].items():
        if k in ("auroc", "ap"):
            assert arrow[k] == pytest.approx(v, rel=1e-12, abs=1e-12)
        else:
            assert np.array_equal(np.asarray(arrow[k]), np.asarray(v)), k
    assert range_runs.call_count == (2 if order == "only ranked" else 1)  # mapInArrow: not this path


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_one_partition_one_class_and_ignored_rows(spark_session, tmp_path, range_runs) -> None:
    """One row group (one task, one range); one class only (the same warnings and NaN); rows of
    label ``ignore_index`` dropped."""
    from streammetrics.spark import evaluate

    df = _data(500, seed=3)
    (tmp_path / "one").mkdir()
    _write(tmp_path / "one", df, cuts=[], group_rows=[500])
    frame = spark_session.read.parquet(str(tmp_path / "one"))
    assert spark_files.plan_pieces(frame, make_plan(_set(), label="y", score="p", weight=None, query=None,
                                                    doc_id=None, update_kwargs={}, available=["y", "p"])[2]) \
        is not None
    _same(_run(lambda: evaluate(frame, _set(), label="y", score="p"))[0], _single(_set(), df)[0])
    positives = df[df.y == 1].reset_index(drop=True)
    (tmp_path / "pos").mkdir()
    _write(tmp_path / "pos", positives, cuts=[100], group_rows=[30])
    frame = spark_session.read.parquet(str(tmp_path / "pos"))
    got, messages = _run(lambda: evaluate(frame, _set(), label="y", score="p"))
    want, want_messages = _single(_set(), positives)
    _same(got, want)
    assert messages == want_messages and messages
    ignored = df.assign(y=np.where(np.arange(len(df)) % 7 == 0, -1, df.y))
    (tmp_path / "ign").mkdir()
    _write(tmp_path / "ign", ignored, cuts=[250], group_rows=[60])
    frame = spark_session.read.parquet(str(tmp_path / "ign"))
    got, _ = _run(lambda: evaluate(frame, _set(ignore=-1), label="y", score="p"))
    _same(got, _single(_set(ignore=-1), ignored)[0])
    assert range_runs.call_count == 3


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_nulls_and_bad_labels_refused_as_one_process(spark_session, tmp_path, range_runs) -> None:
    """A null score is refused naming its file and row (every range task reads it); a bad label
    in any range names its index in the batch, as one process's update does."""
    from streammetrics.spark import evaluate

    df = _data(1000, seed=4)
    nulls = df.assign(p=df.p.where(df.index != 734))
    paths = _write(tmp_path, nulls, cuts=[500], group_rows=[200])
    frame = spark_session.read.parquet(str(tmp_path))
    with pytest.raises(ValueError, match=rf"nulls: column 'p' is null at row 234 of {re.escape(paths[1])} "):
        evaluate(frame, _set(), label="y", score="p")
    bad = df.assign(y=np.where(df.index == 610, 2, df.y))
    (tmp_path / "bad").mkdir()
    _write(tmp_path / "bad", bad, cuts=[500], group_rows=[200])
    with pytest.raises(ValueError) as one:  # the batch holding row 610: the second file's rows
        _set().update(bad.y.to_numpy()[500:], bad.p.to_numpy()[500:])
    with pytest.raises(ValueError, match=re.escape(str(one.value))):
        evaluate(spark_session.read.parquet(str(tmp_path / "bad")), _set(), label="y", score="p")
    # a bad row in each file (each range task's share): always the error of the first piece in
    # the scan's order (Spark orders the files), one process's for that batch, whichever task
    # fails first
    both = bad.assign(p=bad.p.where(bad.index != 734), y=np.where(bad.index == 100, 3, bad.y))
    (tmp_path / "both").mkdir()
    paths = _write(tmp_path / "both", both, cuts=[500], group_rows=[200])
    frame = spark_session.read.parquet(str(tmp_path / "both"))
    first = spark_files.plan_pieces(frame, make_plan(_set(), label="y", score="p", weight=None, query=None,
                                                     doc_id=None, update_kwargs={}, available=["y", "p"])[2])
    assert first is not None
    rows = both.iloc[:500] if first[0][0].source.endswith(paths[0].rsplit("/", 1)[-1]) else None
    seen = set()
    for _ in range(3):
        with pytest.raises(ValueError) as got:
            evaluate(frame, _set(), label="y", score="p")
        seen.add(str(got.value))
    assert len(seen) == 1
    if rows is not None:  # the first file first: its label error, at the row one process names
        with pytest.raises(ValueError) as one:
            _set().update(rows.y.to_numpy(), rows.p.to_numpy())
        (text,) = seen  # one process's words led by the column, the file and the batch's first row
        assert text.startswith("label: column 'y' of the Parquet file ") and text.endswith(f": {one.value}")
        assert "part-0.parquet' from row 0: " in text, text
    else:
        assert seen.pop().startswith("nulls: column 'p' is null at row 234 of ")
    assert range_runs.call_count == 5


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_other_sets_keep_the_state_path(spark_session, tmp_path, range_runs) -> None:
    """Weights, ``nulls="skip"``, ``compute=False``, a partial AUROC (``max_fpr``: the shuffled
    ranges) beside the exact ones: not the direct range path; the same values as one process."""
    from streammetrics.spark import evaluate

    df = _data(800, seed=5).assign(w=np.linspace(0.5, 2.0, 800))
    _write(tmp_path, df, cuts=[300], group_rows=[90])
    frame = spark_session.read.parquet(str(tmp_path))
    mixed = sm.MetricSet(auroc=sm.AUROC(), low=sm.AUROC(max_fpr=0.3), f1=sm.F1())
    got, want = evaluate(frame, mixed, label="y", score="p"), _single(mixed, df)[0]  # max_fpr: shuffled
    assert list(got) == list(want) and all(abs(got[k] - want[k]) <= 1e-12 for k in want)  # ranges, 1e-12
    evaluate(frame, _set(), label="y", score="p", weight="w")
    evaluate(frame, _set(), label="y", score="p", nulls="skip")
    acc = evaluate(frame, _set(), label="y", score="p", compute=False)
    _same(acc.compute(), _single(_set(), df)[0])
    texts = frame.selectExpr("cast(y as string) as y", "p")  # not a plain scan: mapInArrow
    strings = tmp_path / "strings"
    texts.write.parquet(str(strings))
    read_back = spark_session.read.parquet(str(strings))  # string labels: the direct state path
    _same(evaluate(read_back, _set("only ranked"), label="y", score="p"),
          evaluate(texts, _set("only ranked"), label="y", score="p"))
    run = mock.Mock(plan=make_plan(_set(), label="y", score="p", weight=None, query=None, doc_id=None,
                                   update_kwargs={}, available=["y", "p"])[2], template=_set())
    assert spark_ranges.split_for(spark_session.read.parquet(str(strings)), run) is None
    assert spark_ranges.split_for(frame, run) is not None
    assert range_runs.call_count == 0


# -- the range tasks without Spark ------------------------------------------------------------
def _pieces(paths: list[str]) -> list[spark_files.Piece]:
    tasks = spark_files.split_groups(
        [(p, [(pq.ParquetFile(p).metadata.row_group(g).num_rows, 1)
              for g in range(pq.ParquetFile(p).num_row_groups)]) for p in paths], 10**6)
    return [p for t in tasks for p in t]


def _ranges_in_process(metrics: sm.MetricSet, paths: list[str], edges: np.ndarray,
                       shares: list[tuple[int, int]]) -> dict[str, Any]:
    plan = make_plan(metrics, label="y", score="p", weight=None, query=None, doc_id=None, update_kwargs={},
                     available=["y", "p"])[2]
    split = range_counts.split_of(metrics, plan, {"y": np.dtype("int64"), "p": np.dtype("float64")})
    assert split is not None
    pieces = _pieces(paths)
    results = [spark_ranges.range_task(plan, split, pieces, shares[r], edges, r)
               for r in range(edges.shape[0] + 1)]
    return range_counts.final_values([r[0] for r in results if r[0] is not None],
                                     [spark_ranges.unpacked(r) for r in results], split)[0]


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), edges=st.lists(st.sampled_from(
    [-1.0, 0.0, 0.1, 0.3, 0.3, 0.5, 0.7, 0.95, 1.0, 2.0]), max_size=12),
    order=st.sampled_from(["ranked first", "rest first", "only ranked"]), decimals=st.integers(1, 6),
    group=st.integers(1, 80), ignore=st.sampled_from([None, -1, 1]), labels=st.sampled_from(["int", "float", "bool"]),
    scores=st.sampled_from(["float64", "float32", "int64"]), readouts=st.booleans())
def test_any_edges_give_one_process(tmp_path_factory: Any, n: int, seed: int, edges: list[float], order: str,
                                    decimals: int, group: int, ignore: int | None, labels: str, scores: str,
                                    readouts: bool) -> None:
    """Random files (ties, uneven row groups, an empty file; integer, float or boolean labels,
    rows of label ``ignore_index``; float64, float32 or integer scores), any number of ranges
    (more ranges than rows; edges repeated at ties, below and above every score) and any shares
    of the other members; with or without interpolated and 11-point AP: the values of one
    process, bit for bit."""
    folder = tmp_path_factory.mktemp("ranges")
    df = _data(n, seed, decimals)
    if scores != "float64":  # integer scores 0/1 (F1 reads them as predictions)
        df["p"] = df.p.round().astype(scores) if scores == "int64" else df.p.astype(scores)
    if labels == "bool":
        df["y"] = df.y.astype(bool)
    elif ignore is not None:
        df["y"] = np.where(np.arange(n) % 5 == 2, ignore, df.y).astype(labels)
    paths = _write(folder, df, cuts=[n // 3], group_rows=[group, group + 7])
    metrics = _set(order, None if labels == "bool" else ignore, readouts)
    cut = np.sort(np.asarray(edges, dtype=np.float64))
    n_pieces = len(_pieces(paths))
    k = cut.shape[0] + 1
    bounds = [n_pieces * i // k for i in range(k + 1)]
    got = _ranges_in_process(metrics, paths, cut, list(zip(bounds[:-1], bounds[1:], strict=True)))
    _same(got, _single(metrics, df)[0])


def test_a_bad_row_is_refused_by_its_share_in_any_range(tmp_path: Path) -> None:
    """The task whose share holds a bad row refuses it whatever its range -- the error one
    process raises for that batch, in the set's group order (with the rest first: F1's) --
    and so fails the job; a task outside that share does not check it."""
    df = _data(400, seed=6)
    bad = df.assign(y=np.where(df.index == 123, 3, df.y))
    paths = _write(tmp_path, bad, cuts=[], group_rows=[400])
    for order in ("ranked first", "rest first", "only ranked"):
        with pytest.raises(ValueError) as one:
            _set(order).update(bad.y.to_numpy(), bad.p.to_numpy())
        plan = make_plan(_set(order), label="y", score="p", weight=None, query=None, doc_id=None,
                         update_kwargs={}, available=["y", "p"])[2]
        split = range_counts.split_of(_set(order), plan, {"y": np.dtype("int64"), "p": np.dtype("float64")})
        assert split is not None
        edges = np.array([0.5])
        for r in (0, 1):
            refused = spark_ranges.range_task(plan, split, _pieces(paths), (0, 1), edges, r)
            where = f"the Parquet file {paths[0]!r} from row 0"  # the column and the batch named first
            assert refused == spark_ranges.Refused(0, f"label: column 'y' of {where}: {one.value}")
            kept = spark_ranges.range_task(plan, split, _pieces(paths), (0, 0), edges, r)  # not its share
            assert not isinstance(kept, spark_ranges.Refused)


def test_sample_edges_balance_and_skip_unreadable_files(tmp_path: Path) -> None:
    df = _data(4000, seed=7, decimals=6)
    paths = _write(tmp_path, df, cuts=[1000, 2000, 3000], group_rows=[250])
    pieces = _pieces(paths)
    edges = spark_ranges.sample_edges(pieces, "p", 4)
    assert edges.shape == (3,) and np.all(np.diff(edges) >= 0)
    share = np.bincount(np.searchsorted(edges, df.p.to_numpy(), "right"), minlength=4) / len(df)
    assert share.min() > 0.15  # balanced within sampling error
    assert spark_ranges.sample_edges(pieces, "p", 1).shape == (0,)
    gone = [spark_files.Piece(str(tmp_path / "missing.parquet"), 0, 1, 0)]
    assert spark_ranges.sample_edges(gone, "p", 3).shape == (2,)  # the task names the problem


def test_auroc_alone_ships_only_each_ranges_counts(tmp_path: Path) -> None:
    """Without an ``AveragePrecision`` member a range task sends its u2, P and N and no count
    per distinct positive score (empty arrays); the values stay one process's, bit for bit.
    With AP it sends one count per distinct positive score of its range."""
    df = _data(900, seed=9, decimals=3)
    paths = _write(tmp_path, df, cuts=[400], group_rows=[90])
    pieces = _pieces(paths)
    edges = np.array([0.3, 0.6])
    shares = [(0, 3), (3, 6), (6, len(pieces))]
    for metrics in (sm.MetricSet(auroc=sm.AUROC()), sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC()), _set()):
        plan = make_plan(metrics, label="y", score="p", weight=None, query=None, doc_id=None, update_kwargs={},
                         available=["y", "p"])[2]
        split = range_counts.split_of(metrics, plan, {"y": np.dtype("int64"), "p": np.dtype("float64")})
        assert split is not None
        results = [spark_ranges.range_task(plan, split, pieces, shares[r], edges, r) for r in range(3)]
        assert not any(isinstance(r, spark_ranges.Refused) for r in results)
        sent = sum(r[4].shape[0] + r[5].shape[0] for r in results)  # type: ignore[union-attr]
        positives = df[df.y == 1].p
        want_sent = 0 if "ap" not in metrics else 2 * sum(
            positives[(positives >= lo) & (positives < hi)].nunique()
            for lo, hi in zip([-np.inf, *edges], [*edges, np.inf], strict=True))
        assert sent == want_sent
        got = range_counts.final_values([r[0] for r in results if r[0] is not None],  # type: ignore[index]
                                        [spark_ranges.unpacked(r) for r in results], split)[0]  # type: ignore[arg-type]
        _same(got, _single(metrics, df)[0])
