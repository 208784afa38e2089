"""streammetrics.ray.evaluate_ranked against a real local Ray: scikit-learn and the single
process on random blocks with ties, weights, empty blocks, one class, given edges, and on Parquet
files with uneven row groups read by the tasks; the errors of the Dask one; and what travels:
each range task is given only its range's piece of each chunk, each chunk its own object."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases  # noqa: E402
import ranked_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import parquet_reads, ranked_common, ray_ranked  # noqa: E402
from streammetrics.ray import evaluate_ranked  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(engine_cases.local_ray)


def _run(blocks: list[pd.DataFrame], ranges: Any, weight: str | None, chunk_rows: int = 1 << 18) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_ranked(ray.data.from_pandas(blocks), cases.metrics(), label="y", score="p", weight=weight,
                               ranges=ranges, chunk_rows=chunk_rows)


@settings(max_examples=12, deadline=None)
@given(df=cases.frames(), cuts=st.lists(st.integers(0, 300), max_size=4), ranges=st.integers(1, 9),
       weighted=st.booleans(), chunk_rows=st.sampled_from([9, 1 << 18]))
def test_any_blocks_and_ranges_equal_sklearn_and_single_process(df: pd.DataFrame, cuts: list[int], ranges: int,
                                                               weighted: bool, chunk_rows: int) -> None:
    weight = "w" if weighted else None
    cases.assert_same(_run(cases.parts(df, cuts), ranges, weight, chunk_rows), df, weight)


@settings(max_examples=6, deadline=None)
@given(df=cases.frames(), edges=st.lists(st.floats(-0.5, 1.5), max_size=6))
def test_given_edges_with_empty_ranges(df: pd.DataFrame, edges: list[float]) -> None:
    cases.assert_same(_run(cases.parts(df, [len(df) // 3]), sorted(edges), "w"), df, "w")


def test_nulls_skipped_or_refused_by_option(tmp_path: Any) -> None:
    df, dropped = cases.with_nulls(500, 6)
    blocks = ray.data.from_pandas(cases.parts(df, [150, 300]))
    cases.assert_skipped(lambda **kw: evaluate_ranked(blocks, cases.metrics(), label="y", score="p", weight="w",
                                                      ranges=4, chunk_rows=60, **kw), df, dropped)
    for i, part in enumerate(cases.parts(df, [250])):  # Parquet files read by the tasks
        part.to_parquet(tmp_path / f"part{i}.parquet")
    cases.assert_skipped(lambda **kw: evaluate_ranked(str(tmp_path), cases.metrics(), label="y", score="p",
                                                      weight="w", ranges=4, **kw), df, dropped)


def test_one_class_and_no_rows() -> None:
    df = cases.frame(400, 2, 5).assign(y=0)
    with pytest.warns(sm.UndefinedMetricWarning) as caught:
        v = evaluate_ranked(ray.data.from_pandas([df.iloc[:150], df.iloc[150:]]), sm.AUROC(), label="y", score="p")
    assert v != v
    with pytest.warns(sm.UndefinedMetricWarning) as local:
        sm.AUROC().update(df.y.to_numpy(), df.p.to_numpy()).compute()
    assert [str(w.message) for w in caught] == [str(w.message) for w in local]
    cases.assert_same(_run([df.iloc[:0]], 3, "w"), df.iloc[:0], "w")


def test_errors_as_the_dask_one() -> None:
    ds = ray.data.from_pandas(pd.DataFrame({"y": [0, 1], "p": [0.1, 0.2]}))
    with pytest.raises(ValueError, match="metrics: range-partitioned evaluation supports"):
        evaluate_ranked(ds, sm.F1(), label="y", score="p")
    with pytest.raises(ValueError, match="ranges: must be an integer >= 1"):
        evaluate_ranked(ds, sm.AUROC(), label="y", score="p", ranges=0)
    with pytest.raises(ValueError, match="ranges: edges must be non-decreasing, got 0.1 after 0.5"):
        evaluate_ranked(ds, sm.AUROC(), label="y", score="p", ranges=[0.5, 0.1])
    with pytest.raises(ValueError, match="sample_size: must be an integer >= 1"):
        evaluate_ranked(ds, sm.AUROC(), label="y", score="p", sample_size=0)
    with pytest.raises(ValueError, match="chunk_rows: must be an integer >= 1"):
        evaluate_ranked(ds, sm.AUROC(), label="y", score="p", chunk_rows=0)
    with pytest.raises(ValueError, match=r"columns \['q'\]"):
        evaluate_ranked(ds, sm.AUROC(), label="q", score="p")
    bad = ray.data.from_pandas(pd.DataFrame({"y": [0, 2], "p": [0.1, 0.2]}))
    with pytest.raises(ValueError, match="y_true: labels must be 0 or 1; first invalid value 2"):
        evaluate_ranked(bad, sm.AUROC(), label="y", score="p")
    nulls = ray.data.from_pandas(pd.DataFrame({"y": [0, 1], "p": [0.1, None]}))
    with pytest.raises(ValueError, match="nulls: column 'p' is null at row 1 of Ray block 0"):
        evaluate_ranked(nulls, sm.AUROC(), label="y", score="p")


def test_a_range_task_gets_only_its_pieces() -> None:
    """What travels: block b's piece of range r holds exactly b's scores in [e_r-1, e_r); a
    range's pieces hold about 1/R of the scores; the driver fetches R pairs per block."""
    rng = np.random.default_rng(11)
    n, ranges = 20_000, 8
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.normal(size=n)})
    blocks = cases.parts(df, [0, 3000, 9000, 9000, 15000])
    req = ranked_common.request({"a": sm.AUROC()}, label="y", score="p", weight=None, ranges=ranges,
                                sample_size=256, chunk_rows=1000, available=["y", "p"])
    pieces, totals = ray_ranked.split_refs(ray.data.from_pandas(blocks), req)
    assert len(totals) == ranges and sum(t[0] + t[1] for t in totals) == n
    # each range's object of a block: its pieces of the block's chunks (1000 rows each)
    objects = [ray.get(refs) for refs in pieces]
    assert all(p[0].shape[0] + p[2].shape[0] <= 1000 for block in objects for obj in block for p in obj)
    sizes = np.array([[sum(p[0].shape[0] + p[2].shape[0] for p in obj) for obj in block] for block in objects])
    assert sizes.shape[1] == ranges  # one piece per range of each block Ray made
    assert sizes.sum() == n
    per_range = sizes.sum(axis=0)
    assert per_range.max() <= 1.25 * n / ranges, per_range
    summaries, _ = ray_ranked.range_summaries(ray.data.from_pandas(blocks), req)
    assert [s.n_scores for s in summaries] == per_range.tolist()


# --- Parquet files read by the tasks (pyarrow, no Ray Data), chunk by chunk ---

def _write(folder: Any, frames: list[pd.DataFrame], groups: list[list[int]]) -> None:
    """Each frame as one file whose row groups have the given (uneven, possibly 0) sizes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i, (df, sizes) in enumerate(zip(frames, groups, strict=True)):
        table = pa.Table.from_pandas(df, preserve_index=False)
        with pq.ParquetWriter(folder / f"part-{i}.parquet", table.schema) as writer:
            at = 0
            for n in sizes:
                if n:
                    writer.write_table(table.slice(at, n))
                at += n


@pytest.mark.parametrize(("weight", "ranges", "chunk_rows"), [(None, 4, 50), ("w", 3, 1 << 18), (None, [0.3, 0.3, 0.7], 64)])
def test_parquet_files_uneven_row_groups_equal_sklearn_and_single_process(tmp_path: Any, weight: str | None,
                                                                          ranges: Any, chunk_rows: int) -> None:
    sizes = [[120, 1, 300], [0], [7, 0, 260], [90]]
    frames = [cases.frame(sum(s), 50 + i, 20, "int" if weight is None else "float") for i, s in enumerate(sizes)]
    _write(tmp_path, frames, sizes)
    whole = pd.concat(frames, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = evaluate_ranked(str(tmp_path), cases.metrics(), label="y", score="p", weight=weight,
                              ranges=ranges, chunk_rows=chunk_rows)
    cases.assert_same(got, whole, weight)


def test_file_and_block_tasks_hold_one_chunk(tmp_path: Any) -> None:
    """Issue #32 item 2: a file's (or a block's) task yields each chunk's sorted runs as its own
    object (a Ray generator task: stored before the next chunk is read), then their samples:
    every object is one chunk of at most chunk_rows scores, however large the row groups,
    files or blocks; the split task then yields one range's pieces at a time."""
    import pyarrow as pa

    frames = [cases.frame(n, 60 + i, 1000) for i, n in enumerate((2_500, 1_100))]
    _write(tmp_path, frames, [[2_000, 500], [1_100]])
    fs_files = parquet_reads.parquet_files(str(tmp_path))
    assert fs_files is not None
    fs, files = fs_files
    task = ray.remote(ray_ranked._source_task).options(num_returns="streaming")
    split = ray.remote(ray_ranked._split_task).options(num_returns="streaming")
    block = ray.put(pa.Table.from_pandas(frames[0][["y", "p"]], preserve_index=False))
    req = ranked_common.request({"a": sm.AUROC()}, label="y", score="p", weight=None, ranges=4,
                                sample_size=16, chunk_rows=300, available=["y", "p", "w"])
    for source, where, df in [(files[0], files[0], frames[0]), (files[1], files[1], frames[1]),
                              (block, "Ray block 0", frames[0])]:
        refs = list(task.remote(source, None if source is block else fs, req.plan, 300, where, 16))
        chunks, (samples, skipped) = ray.get(refs[:-1]), ray.get(refs[-1])
        assert [c[0].shape[0] + c[2].shape[0] for c in chunks] == [min(300, len(df) - a) for a in range(0, len(df), 300)]
        assert len(samples) == len(chunks) and skipped == 0
        cut = list(split.remote(np.array([0.25, 0.5, 0.75]), *refs[:-1]))
        assert len(cut) == 4 + 1
        pieces, totals = ray.get(cut[:-1]), ray.get(cut[-1])
        assert all(len(p) <= len(chunks) for p in pieces) and sum(p + n for p, n in totals) == len(df)
    pieces, totals = ray_ranked.split_refs(fs_files, req)
    assert len(pieces) == 2 and sum(t[0] + t[1] for t in totals) == 3_600


def test_parquet_null_names_file_and_row(tmp_path: Any) -> None:
    frames = [cases.frame(n, 70 + i, 20) for i, n in enumerate((200, 400))]
    frames[1]["p"] = frames[1]["p"].astype(float)
    frames[1].loc[333, "p"] = np.nan
    _write(tmp_path, frames, [[200], [100, 300]])
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row 333 of .*part-1\.parquet"):
        evaluate_ranked(str(tmp_path), sm.AUROC(), label="y", score="p", chunk_rows=64)
    with pytest.raises(ValueError, match=r"ds: no Parquet file found"):
        evaluate_ranked(str(tmp_path / "none" / "*.parquet"), sm.AUROC(), label="y", score="p")
    with pytest.raises(ValueError, match=r"columns \['q'\]"):
        evaluate_ranked(str(tmp_path), sm.AUROC(), label="q", score="p")
