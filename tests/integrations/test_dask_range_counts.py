"""streammetrics.dask.evaluate's score-range path for exact binary AUROC / AP == one process,
bit for bit: on a real 2-process LocalCluster (uneven and empty partitions, Parquet with an empty
file) and, for many random cases, on the synchronous scheduler with any number of ranges."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics._engines import parquet_reads  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402
from streammetrics._scores.exact import merge_count  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402


def _set(order: str = "ranked first", ignore: int | None = None) -> sm.MetricSet:
    ranked = {"auroc": sm.AUROC(ignore_index=ignore), "ap": sm.AveragePrecision(ignore_index=ignore)}
    rest = {"f1": sm.F1(ignore_index=ignore), "cm": sm.ConfusionMatrix(ignore_index=ignore)}
    if order == "only ranked":
        return sm.MetricSet(ranked)
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


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


def _frames(df: pd.DataFrame, cuts: list[int]) -> Any:
    """``df`` as a Dask DataFrame of the given uneven (and empty) partitions."""
    bounds = [0, *sorted(cuts), len(df)]
    parts = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0])


def _data(n: int, seed: int, labels: str = "both", decimals: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = {"both": rng.integers(0, 2, n), "neg": np.zeros(n, dtype=np.int64),
         "pos": np.ones(n, dtype=np.int64)}[labels]
    return pd.DataFrame({"y": y, "p": np.round(rng.random(n), decimals)})


def test_split_taken_only_where_exact() -> None:
    def split(metrics: Any, weight: str | None = None, dtypes: Any = None) -> Any:
        t, _, plan = make_plan(metrics, label="y", score="p", weight=weight, query=None, doc_id=None,
                               update_kwargs={}, available=["y", "p", "w"])
        return RC.split_of(t, plan, dtypes or {"y": np.dtype("int64"), "p": np.dtype("float64")})

    assert split(_set()) is not None and split(_set("rest first")) is not None
    assert split(_set("only ranked")).rest is None
    assert split(sm.MetricSet(a=sm.AUROC(), roc=sm.ROCCurve())) is None  # a curve shares the state
    assert split(sm.MetricSet(a=sm.AUROC(max_fpr=0.5))) is None
    assert split(sm.MetricSet(a=sm.AUROC(max_bytes=4096))) is None
    assert split(_set(), weight="w") is None
    assert split(_set(), dtypes={"y": pd.StringDtype(), "p": np.dtype("float64")}) is None


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 400), seed=st.integers(0, 10**6), ranges=st.integers(1, 7),
       order=st.sampled_from(["ranked first", "rest first", "only ranked"]),
       labels=st.sampled_from(["both", "both", "neg", "pos"]), decimals=st.integers(0, 3),
       ignore=st.sampled_from([None, -1]), f32=st.booleans(), compiled=st.booleans(), data=st.data())
def test_any_ranges_and_partitions_give_one_process(
    n: int, seed: int, ranges: int, order: str, labels: str, decimals: int, ignore: int | None,
    f32: bool, compiled: bool, data: Any,
) -> None:
    df = _data(n, seed, labels, decimals)
    if ignore is not None and n:
        df.loc[df.index[::7], "y"] = ignore
    if f32:
        df["p"] = df["p"].astype(np.float32)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=6))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), _kernels(compiled):
        mp.setattr(RC, "range_count", lambda: ranges)
        got = _run(lambda: evaluate(_frames(df, cuts), _set(order, ignore), label="y", score="p"))
    want = _single(_set(order, ignore), df)
    _same(got[0], want[0])
    assert got[1] == want[1]  # the same undefined-value warnings


@pytest.mark.parametrize("order", ["ranked first", "rest first", "only ranked"])
def test_local_cluster_uneven_and_empty_parquet(client: Any, tmp_path: Path, order: str) -> None:
    assert RC.range_count() == 2 * RC.RANGES_PER_THREAD  # per worker thread
    sizes = [30_000, 0, 1, 7_000, 52_000]
    frames = [_data(n, 10 + i, decimals=4) for i, n in enumerate(sizes)]
    for i, f in enumerate(frames):
        f.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    whole = pd.concat(frames, ignore_index=True)
    got = _run(lambda: evaluate_parquet(str(tmp_path), _set(order), label="y", score="p"))
    want = _single(_set(order), whole)
    _same(got[0], want[0])
    assert got[1] == want[1]


def test_local_cluster_one_class_and_bad_labels(client: Any) -> None:
    df = _data(5_000, 3, labels="neg")
    got = _run(lambda: evaluate(_frames(df, [0, 10, 10, 2_000]), _set(), label="y", score="p"))
    want = _single(_set(), df)
    _same(got[0], want[0])
    assert got[1] == want[1] and any("AUROC" in w for w in want[1])
    bad = _data(3_000, 4)
    bad.loc[1234, "y"] = 2
    for order in ("ranked first", "rest first"):
        with pytest.raises(ValueError) as one:
            _set(order).update(bad["y"].to_numpy(), bad["p"].to_numpy())
        with pytest.raises(ValueError) as engine:
            evaluate(_frames(bad, [1_000]), _set(order), label="y", score="p")
        # one process's words led by the column and the partition, the index counted in it
        assert str(engine.value) == f"label: column 'y' of Dask partition 1: {one.value}".replace("1234", "234")


@pytest.mark.parametrize("ranges", [1, 4])
@pytest.mark.parametrize("column", ["y", "p"])
def test_a_null_names_its_partition_as_the_other_paths_do(ranges: int, column: str) -> None:
    """Issue #32: the range path's null error names the partition (its number in the frame, the
    row within it, the index label), as evaluate's state path and evaluate_ranked do -- a task
    feeds several partitions at once, so the number is the frame's, not the task's."""
    df = _data(400, 5)
    df["y"] = df["y"].astype(float)
    df.loc[263, column] = np.nan
    frames = _frames(df, [50, 100, 150, 200, 250, 300, 350])  # partition 5 is rows 250-299
    assert frames.npartitions == 8
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        assert len(RC.task_slices(8, ranges)) < 8 or ranges == 1  # partitions share a task
        with pytest.raises(ValueError, match=rf"column '{column}' is null at row 13 of Dask partition 5 "
                                             r"\(index 263;"):
            evaluate(frames, _set("ranked first"), label="y", score="p")


def _counted(pieces_per_partition: list[list[Any]], split: RC.Split) -> dict[str, Any]:
    n_ranges = len(pieces_per_partition[0])
    ranges = [RC.range_counts([p[r] for p in pieces_per_partition]) for r in range(n_ranges)]
    return RC.final_values([], ranges, split)[0]


@pytest.mark.parametrize("edges", [[0.25, 0.5, 0.75], [0.5, 0.5, 0.5], [-1.0, 2.0], [0.0], [1.0],
                                   list(np.linspace(0.05, 0.95, 12))])
def test_routing_ties_at_edges_one_range_and_empty_partitions(edges: list[float]) -> None:
    """Scores equal to an edge go above it (half-open ranges, ties share a range); a range may
    hold everything or nothing; an empty partition routes to empty pieces; 13 ranges take the
    counting sort instead of the masks. The counts give the single-process values bit for bit."""
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 3_000)
    p = np.round(rng.random(3_000), 1)  # ties everywhere, many exactly at the edges
    p[:40] = 0.5
    t, _, plan = make_plan(_set("only ranked"), label="y", score="p", weight=None, query=None,
                           doc_id=None, update_kwargs={}, available=["y", "p"])
    split = RC.split_of(t, plan, {"y": y.dtype, "p": p.dtype})
    assert split is not None
    e = np.asarray(edges)
    bounds = [0, 0, 1_000, 1_000, 3_000]  # two empty partitions
    pieces = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        parts = RC.partition_parts([(y[a:b], p[a:b])] if b > a else [], split, 16)
        routed = RC.route_runs(parts, e)
        assert len(routed) == e.shape[0] + 1
        for r, (neg, _, pos, _) in enumerate(routed):
            for v in (neg, pos):  # every score in its half-open range
                assert np.all(v >= (e[r - 1] if r else -np.inf)) and np.all(v < (e[r] if r < e.shape[0] else np.inf))
        assert sum(x[0].shape[0] + x[2].shape[0] for x in routed) == b - a
        pieces.append(routed)
    want = _set("only ranked").update(y, p).compute()
    _same(_counted(pieces, split), want)


def test_task_slices_balance_and_cap() -> None:
    for n in range(0, 60):
        for n_ranges in (1, 2, 4, 8):
            slices = RC.task_slices(n, n_ranges)
            sizes = [s.stop - s.start for s in slices]
            assert [i for s in slices for i in range(s.start, s.stop)] == list(range(n))
            assert all(0 < k <= RC.MAX_FRAMES_PER_TASK for k in sizes)
            assert not sizes or max(sizes) - min(sizes) <= 1
            threads = max(1, n_ranges // RC.RANGES_PER_THREAD)
            assert len(slices) % threads == 0 or len(slices) == n  # a multiple of the threads
    two_threads = 2 * RC.RANGES_PER_THREAD
    assert sorted(s.stop - s.start for s in RC.task_slices(20, two_threads)) == [3, 3, 3, 3, 4, 4]


def test_parquet_read_by_pyarrow_globs_lists_and_fallbacks(tmp_path_factory: Any) -> None:
    """evaluate_parquet reads the files itself on the range path (a directory, a glob, a list;
    ``_``/``.`` files skipped, float32 scores in one file, an empty file) and gives the
    single-process values bit for bit; with ``read_kwargs`` ``dask.dataframe.read_parquet``
    reads them, with the same values; hive directories are left to it."""
    import streammetrics.dask as smd

    tmp_path = tmp_path_factory.mktemp("files")

    frames = [_data(n, 30 + i, decimals=3) for i, n in enumerate([2_000, 0, 3_500, 1])]
    frames[2]["p"] = frames[2]["p"].astype(np.float32)
    for i, f in enumerate(frames):
        f.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    (tmp_path / "_SUCCESS").write_text("")
    whole = pd.concat(frames, ignore_index=True)
    want = _single(_set(), whole)
    files = [str(tmp_path / f"part-{i}.parquet") for i in range(4)]
    fs, found = parquet_reads.parquet_files(str(tmp_path))
    assert found == files
    assert parquet_reads.parquet_files(str(tmp_path / "*.parquet"))[1] == files
    assert parquet_reads.parquet_files(files[::-1])[1] == files[::-1]
    hive = tmp_path_factory.mktemp("hive")
    (hive / "region=eu").mkdir()
    frames[0].to_parquet(hive / "region=eu" / "a.parquet", index=False)
    assert parquet_reads.parquet_files(str(hive)) is None
    read = []
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: 3)
        mp.setattr(smd, "_parquet_task", lambda *a: read.append(a[0]) or _parquet_task(*a))
        for path in (str(tmp_path), str(tmp_path / "*.parquet"), files):
            got = _run(lambda: evaluate_parquet(path, _set(), label="y", score="p"))  # noqa: B023
            _same(got[0], want[0])
        assert sorted(f for r in read for f in r) == sorted(files * 3)  # pyarrow read every file
        read.clear()
        got = _run(lambda: evaluate_parquet(files, _set(), label="y", score="p", read_kwargs={}))
        _same(got[0], want[0])
        assert not read  # read_kwargs: dask.dataframe.read_parquet


_parquet_task = __import__("streammetrics.dask", fromlist=["_parquet_task"])._parquet_task


def _kernels(compiled: bool) -> Any:
    """The range path's compiled routing and class split at every size (numba installed), or
    numpy's blocks and ``ndarray.partition``."""
    if compiled and merge_count.kernels() is None:
        pytest.skip("numba is not installed")
    return merge_count.compiled_kernels(compiled, sizes={"partition": 0, "split": 0} if compiled else None)


@pytest.mark.parametrize("edges", [[0.25, 0.5, 0.75], [0.5, 0.5, 0.5], [-1.0, 2.0], [0.0], [1.0],
                                   [0.3, 0.3, 0.6, 0.6, 0.6], list(np.linspace(0.05, 0.95, 12))])
def test_compiled_routing_and_split_equal_numpy(edges: list[float]) -> None:
    """The compiled class split and routing (one branch-free pass each) give each class, and
    each range, exactly the scores of numpy's blocks and ``ndarray.partition`` (ties at and
    repeated edges, empty ranges, ignored labels, bool labels, -0.0 and 0.0), the same cuts,
    and the pieces stay views of the runs."""
    rng = np.random.default_rng(len(edges))
    batches = []
    for n, kind in ((20_000, "int"), (0, "int"), (7_001, "bool"), (3, "int")):
        y = rng.integers(0, 2, n)
        p = np.round(rng.random(n), 1)
        p[::13] = -0.0
        if kind == "bool":
            batches.append((y.astype(bool), p))
        else:
            y[::9] = -1
            batches.append((y, p))
    t, _, plan = make_plan(_set("only ranked", ignore=-1), label="y", score="p", weight=None, query=None,
                           doc_id=None, update_kwargs={}, available=["y", "p"])
    split = RC.split_of(t, plan, {"y": np.dtype("int64"), "p": np.dtype("float64")})
    assert split is not None
    e = np.asarray(edges)
    out = {}
    for compiled in (False, True):
        with _kernels(compiled):
            parts = RC.partition_parts([b for b in batches if len(b[0])], split, 16, 10)  # grows
            out[compiled] = (parts[1], RC.partition_runs(parts, e))
    (runs_n, pieces_n), (runs_c, pieces_c) = out[False], out[True]
    for a, b in ((runs_n[0], runs_c[0]), (runs_n[2], runs_c[2])):
        assert np.array_equal(np.sort(a), np.sort(b))
    for pn, pc in zip(pieces_n, pieces_c, strict=True):
        for a, b, run in ((pn[0], pc[0], runs_c[0]), (pn[2], pc[2], runs_c[2])):
            assert a.shape == b.shape and np.array_equal(np.sort(a), np.sort(b))
            assert np.shares_memory(b, run) or b.shape[0] == 0


@pytest.mark.parametrize("edges", [[0.25, 0.5, 0.75], [0.5, 0.5, 0.5], [-1.0, 2.0], [0.0], [1.0],
                                   list(np.linspace(0.05, 0.95, 12))])
def test_partition_runs_in_place_ties_at_edges(edges: list[float]) -> None:
    """partition_runs (the graph's router) reorders each run in place: the pieces are views of
    it holding the same scores as route_runs' copies (ties above the edge, empty ranges, 13
    ranges by searchsorted), and a read-only run is copied first, never written."""
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 20_000)
    p = np.round(rng.random(20_000), 1)  # ties everywhere, many exactly at the edges
    t, _, plan = make_plan(_set("only ranked"), label="y", score="p", weight=None, query=None,
                           doc_id=None, update_kwargs={}, available=["y", "p"])
    split = RC.split_of(t, plan, {"y": y.dtype, "p": p.dtype})
    assert split is not None
    e = np.asarray(edges)
    for writeable in (True, False):
        parts = RC.partition_parts([(y, p)], split, 16)
        want = RC.route_runs(parts, e)
        runs = parts[1]
        if not writeable:
            for v in (runs[0], runs[2]):
                v.flags.writeable = False
        before = (runs[0].copy(), runs[2].copy())
        got = RC.partition_runs(parts, e)
        assert len(got) == len(want) == e.shape[0] + 1
        for g, w in zip(got, want, strict=True):
            for a, b, run in ((g[0], w[0], runs[0]), (g[2], w[2], runs[2])):
                assert np.array_equal(np.sort(a), np.sort(b))
                assert np.shares_memory(a, run) == (writeable and a.shape[0] > 0)
        if not writeable:  # left as it was
            assert np.array_equal(runs[0], before[0]) and np.array_equal(runs[2], before[1])


@pytest.mark.parametrize("rows", [0, 1, 5_000, 100_000, 2**62])
def test_class_buffer_any_row_hint_and_blocks(rows: int) -> None:
    """partition_parts writes both classes into one buffer, in blocks, whatever the row count
    it is told (none, too few: it grows; too many; more than memory holds -- a corrupt footer:
    it starts empty): the same scores by class as the exact state's own split, with ignored
    labels dropped and float32 / int scores made float64."""
    rng = np.random.default_rng(rows)
    batches = []
    for n, dtype in ((20_000, np.float64), (0, np.float64), (9_000, np.float32), (30_000, np.int64)):
        y = rng.integers(0, 2, n)
        y[::9] = -1
        p = rng.integers(0, 50, n).astype(dtype) if dtype == np.int64 else rng.random(n).astype(dtype)
        batches.append((y, p))
    t, _, plan = make_plan(_set("only ranked", ignore=-1), label="y", score="p", weight=None, query=None,
                           doc_id=None, update_kwargs={}, available=["y", "p"])
    split = RC.split_of(t, plan, {"y": np.dtype("int64"), "p": np.dtype("float64")})
    assert split is not None
    _, (neg, _, pos, _), _, _ = RC.partition_parts([b for b in batches if len(b[0])], split, 16, rows)
    y = np.concatenate([b[0] for b in batches])
    p = np.concatenate([b[1].astype(np.float64) for b in batches])
    assert neg.dtype == pos.dtype == np.float64
    assert np.array_equal(np.sort(neg), np.sort(p[y == 0]))
    assert np.array_equal(np.sort(pos), np.sort(p[y == 1]))


def _bad_files(folder: Path, case: str) -> None:
    """Three Parquet files of bool labels (row groups of 2 rows) whose second, ``part-1``, is
    bad: a null label at its row 2 (row 0 of its second row group), a file truncated to 3 bytes,
    a string score column (the first file's is float) or no score column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i in range(3):
        y: list[bool | None] = [True, False, True, False, True, False]
        p: list[Any] = [0.1 * (i + k) for k in range(6)]
        if i == 1 and case == "null":
            y[2] = None
        if i == 1 and case == "string score":
            p = [str(v) for v in p]
        columns = {"y": pa.array(y, pa.bool_()), "p": p}
        if i == 1 and case == "missing score":
            columns["q"] = columns.pop("p")
        pq.write_table(pa.table(columns), folder / f"part-{i}.parquet", row_group_size=2)
    if case == "truncated":
        (folder / "part-1.parquet").write_bytes(b"PAR")


@pytest.mark.parametrize("ranges", [1, 3])
@pytest.mark.parametrize(("case", "error"), [
    ("null", r"nulls: column 'y' is null \(or NaN\) at row 2 of \S*part-1\.parquet; pass nulls='skip'"),
    ("truncated", r"cannot read the Parquet file '\S*part-1\.parquet': Parquet file size is 3 bytes"),
    ("string score", r"column 'p' of \S*part-1\.parquet has type string"),
    ("missing score", r"column 'p' is missing from \S*part-1\.parquet"),
])
def test_parquet_bad_later_file_is_named(tmp_path: Path, ranges: int, case: str, error: str) -> None:
    """A null in a bool label column (read as None, not NaN), a truncated file, a file whose
    score column is not numeric as the first file's or missing: a ValueError naming the file (and the
    column, and the row counted in the file), not pyarrow's or the validation's bare message."""
    _bad_files(tmp_path, case)
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        with pytest.raises(ValueError, match=error):
            evaluate_parquet(str(tmp_path), _set(), label="y", score="p")


def test_parquet_bad_first_file_is_named(tmp_path: Path) -> None:
    """The driver reads the first file's schema: a truncated first file is named there too."""
    _bad_files(tmp_path, "none")
    (tmp_path / "part-0.parquet").write_bytes(b"PAR")
    with dask.config.set(scheduler="synchronous"), pytest.raises(
            ValueError, match=r"cannot read the Parquet file '\S*part-0\.parquet': Parquet file size is 3 "
                                                     r"bytes"):
        evaluate_parquet(str(tmp_path), _set(), label="y", score="p")


def _lying_footer(path: Path, rows: int, claim: int) -> None:
    """Rewrite ``path``'s Parquet footer so that every count of ``rows`` it holds (the file's
    and the row group's row counts, the column chunks' value counts) says ``claim``."""
    import struct

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            if not n:
                out.append(b)
                return bytes(out)
            out.append(b | 0x80)

    raw = path.read_bytes()
    size = struct.unpack("<i", raw[-8:-4])[0]
    footer = raw[-8 - size : -8]
    old, new = varint(rows << 1), varint(claim << 1)  # thrift compact: zigzag i64
    assert footer.count(old) >= 2
    footer = footer.replace(old, new)
    path.write_bytes(raw[: -8 - size] + footer + struct.pack("<i", len(footer)) + b"PAR1")


def test_a_footer_claiming_huge_row_counts_reads_the_rows_the_file_holds(tmp_path: Path) -> None:
    """A hostile footer (2**44 rows claimed for 12,345) made the row-group read allocate for the
    claim (pyarrow: ``malloc of size 35184372088832 failed``); the reads are bounded batches,
    so the file's real rows are read, in memory proportional to them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 12_345), rng.random(12_345)
    pq.write_table(pa.table({"y": y, "p": p}), tmp_path / "a.parquet")
    _lying_footer(tmp_path / "a.parquet", 12_345, 2**44)
    assert pq.read_metadata(tmp_path / "a.parquet").num_rows == 2**44
    want, _ = _single(_set(), pd.DataFrame({"y": y, "p": p}))
    with dask.config.set(scheduler="synchronous"):
        got = evaluate_parquet(str(tmp_path), _set(), label="y", score="p")
    assert got["auroc"] == want["auroc"] and got["ap"] == want["ap"]


def test_a_file_pyarrow_cannot_read_is_named(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"y": [0, 1, 1], "p": [0.1, 0.9, 0.4]}), tmp_path / "a.parquet")
    import struct

    raw = (tmp_path / "a.parquet").read_bytes()
    pages = len(raw) - 8 - struct.unpack("<i", raw[-8:-4])[0]  # the footer kept, the pages garbled
    (tmp_path / "b.parquet").write_bytes(raw[:4] + b"\xff" * (pages - 4) + raw[pages:])
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="b.parquet"):
        evaluate_parquet(str(tmp_path), _set(), label="y", score="p")
