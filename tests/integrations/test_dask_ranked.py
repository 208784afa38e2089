"""streammetrics.dask.evaluate_ranked == the single-process exact values, range by range.

The oracle is the library's own exact accumulators fed the whole frame in one process (themselves
tested against scikit-learn). Random data with heavy ties and float weights, any number of
ranges, given edges that leave ranges empty, all-equal scores, empty partitions; and the memory
claim: no range holds much more than its share of the scores.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
import ranked_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines.dask_ranked import range_summaries  # noqa: E402
from streammetrics.dask import evaluate_ranked  # noqa: E402

TOL = 1e-12


def _metrics() -> dict[str, Any]:
    return {"auc": sm.AUROC(), "ap": sm.AveragePrecision(), "roc": sm.ROCCurve(),
            "roc_drop": sm.ROCCurve(drop_intermediate=True), "pr": sm.PRCurve()}


def _reference(df: pd.DataFrame, weight: str | None) -> dict[str, Any]:
    w = None if weight is None else df[weight].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sm.MetricSet(**_metrics()).update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=w).compute()


def _close(a: float, b: float) -> bool:
    return (a != a and b != b) or abs(a - b) <= TOL * max(1.0, abs(b))


def _same(got: dict[str, Any], ref: dict[str, Any]) -> None:
    assert _close(got["auc"], ref["auc"]), (got["auc"], ref["auc"])
    assert _close(got["ap"], ref["ap"]), (got["ap"], ref["ap"])
    cases.assert_curves(got, ref, exact=False)


def _run(df: pd.DataFrame, parts: int, ranges: Any, weight: str | None) -> dict[str, Any]:
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_ranked(dd.from_pandas(df, npartitions=parts, sort=False), _metrics(),
                               label="y", score="p", weight=weight, ranges=ranges)


@st.composite
def frames(draw: Any) -> pd.DataFrame:
    n = draw(st.integers(0, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    levels = draw(st.sampled_from([1, 3, 20, 1000]))  # 1: every score equal
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "y": rng.integers(0, 2, n).astype(np.int64),
        "p": rng.integers(0, levels, n) / max(levels - 1, 1),
        "w": np.round(rng.random(n) * 3 + 0.01, 3),
    })


@settings(max_examples=40, deadline=None)
@given(df=frames(), parts=st.integers(1, 6), ranges=st.integers(1, 12), weighted=st.booleans())
def test_any_ranges_equal_single_process(df: pd.DataFrame, parts: int, ranges: int, weighted: bool) -> None:
    if len(df) == 0:
        parts = 1
    weight = "w" if weighted else None
    _same(_run(df, parts, ranges, weight), _reference(df, weight))


@settings(max_examples=25, deadline=None)
@given(df=frames(), edges=st.lists(st.floats(-0.5, 1.5), min_size=0, max_size=10), weighted=st.booleans())
def test_given_edges_with_empty_ranges(df: pd.DataFrame, edges: list[float], weighted: bool) -> None:
    weight = "w" if weighted else None
    _same(_run(df, 3 if len(df) else 1, sorted(edges), weight), _reference(df, weight))


def test_all_equal_scores_and_single_class() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"y": rng.integers(0, 2, 500), "p": np.full(500, 0.25)})
    _same(_run(df, 4, 6, None), _reference(df, None))
    only_neg = df.assign(y=0)
    with pytest.warns(sm.UndefinedMetricWarning) as caught, dask.config.set(scheduler="synchronous"):
        v = evaluate_ranked(dd.from_pandas(only_neg, npartitions=2), sm.AUROC(), label="y", score="p")
    assert v != v
    with pytest.warns(sm.UndefinedMetricWarning) as local:  # the same words as in one process
        sm.AUROC().update(only_neg["y"].to_numpy(), only_neg["p"].to_numpy()).compute()
    assert [str(w.message) for w in caught] == [str(w.message) for w in local]


def test_no_range_holds_much_more_than_its_share() -> None:
    rng = np.random.default_rng(11)
    n, ranges = 40_000, 8
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.normal(size=n)})
    with dask.config.set(scheduler="synchronous"):
        summaries, totals = range_summaries(dd.from_pandas(df, npartitions=10), {"a": sm.AUROC()},
                                            label="y", score="p", ranges=ranges)
    sizes = [s.n_scores for s in summaries]
    assert sum(sizes) == n and totals == (float(df.y.sum()), float(n - df.y.sum()))
    assert max(sizes) <= 1.25 * n / ranges, sizes  # quantile edges from 256 ranks per run


def test_rejects_other_metrics_and_bad_ranges() -> None:
    df = dd.from_pandas(pd.DataFrame({"y": [0, 1], "p": [0.1, 0.2]}), npartitions=1)
    with pytest.raises(ValueError, match="metrics: range-partitioned evaluation supports"):
        evaluate_ranked(df, sm.F1(), label="y", score="p")
    with pytest.raises(ValueError, match="num_classes=3"):
        evaluate_ranked(df, sm.AveragePrecision(3), label="y", score="p")
    with pytest.raises(ValueError, match="ranges: must be an integer >= 1"):
        evaluate_ranked(df, sm.AUROC(), label="y", score="p", ranges=0)
    with pytest.raises(ValueError, match="ranges: edges must be non-decreasing, got 0.1 after 0.5"):
        evaluate_ranked(df, sm.AUROC(), label="y", score="p", ranges=[0.5, 0.1])
    with pytest.raises(ValueError, match=r"columns \['q'\]"):
        evaluate_ranked(df, sm.AUROC(), label="q", score="p")
    with pytest.raises(ValueError, match="y_true"), dask.config.set(scheduler="synchronous"):
        evaluate_ranked(dd.from_pandas(pd.DataFrame({"y": [0, 2], "p": [0.1, 0.2]}), npartitions=1),
                        sm.AUROC(), label="y", score="p")


def test_local_cluster_equals_single_process() -> None:
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(3)
    n = 20_000
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), 3),
                       "w": rng.integers(1, 4, n).astype(np.float64)})
    with dask.config.set({"distributed.worker.daemon": False}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = evaluate_ranked(dd.from_pandas(df, npartitions=6), _metrics(), label="y", score="p",
                              weight="w", ranges=5)
    _same(got, _reference(df, "w"))


# --- bounded pieces: a partition is read, validated and sorted ``chunk_rows`` rows at a time ---


def _chunked(df: pd.DataFrame, parts: int, ranges: Any, weight: str | None, chunk_rows: int) -> dict[str, Any]:
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_ranked(dd.from_pandas(df, npartitions=parts, sort=False), _metrics(), label="y",
                               score="p", weight=weight, ranges=ranges, chunk_rows=chunk_rows)


@settings(max_examples=30, deadline=None)
@given(df=frames(), parts=st.integers(1, 4), chunk_rows=st.integers(1, 80), weighted=st.booleans(),
       edges=st.lists(st.floats(-0.5, 1.5), min_size=0, max_size=6))
def test_any_chunking_gives_the_same_values(df: pd.DataFrame, parts: int, chunk_rows: int, weighted: bool,
                                            edges: list[float]) -> None:
    parts = parts if len(df) else 1
    weight = "w" if weighted else None
    got = _chunked(df, parts, sorted(edges), weight, chunk_rows)
    whole = _chunked(df, parts, sorted(edges), weight, 10**9)  # each partition in one piece
    _same(got, _reference(df, weight))
    if not weighted:  # given edges: the same scores in every range, so the same numbers bit for bit
        assert (got["auc"], got["ap"]) == (whole["auc"], whole["ap"]) or len(df) == 0
        np.testing.assert_array_equal(got["roc"].fpr, whole["roc"].fpr)


def test_a_partition_is_held_as_runs_of_at_most_chunk_rows() -> None:
    import tracemalloc

    from streammetrics._engines import ranked as ranked_engine
    from streammetrics._engines.dask_ranked import _runs_task
    from streammetrics._engines.plan import Plan

    rng = np.random.default_rng(2)
    n, chunk = 600_000, 50_000
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), 6)})
    plan = Plan(config=ranked_engine.runs_config(None), family="classification", label="y", score="p")
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        runs = _runs_task(df, plan, chunk)
        kept, peak = (m - start for m in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    sizes = [r[0].shape[0] + r[2].shape[0] for r in runs]
    assert sum(sizes) == n and max(sizes) <= chunk and len(runs) == n // chunk
    assert all((np.diff(r[0]) >= 0).all() and (np.diff(r[2]) >= 0).all() for r in runs)
    assert kept >= 8 * n
    # what is in flight beyond the runs kept is one chunk's work, not the partition's (which
    # was ~1x the runs when a partition was validated and sorted whole)
    assert peak - kept <= 64 * chunk, (kept, peak)


def test_a_null_in_a_later_chunk_names_its_row_in_the_partition() -> None:
    df = pd.DataFrame({"y": [0, 1, 0, 1, 1, 0, 1, 0, 1], "p": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, np.nan, 0.9]})
    with pytest.raises(ValueError, match="column 'p' is null at row 7 of Dask partition 0"), \
            dask.config.set(scheduler="synchronous"):
        evaluate_ranked(dd.from_pandas(df, npartitions=1), sm.AUROC(), label="y", score="p", chunk_rows=3)
    with pytest.raises(ValueError, match="chunk_rows: must be an integer >= 1"):
        evaluate_ranked(dd.from_pandas(df, npartitions=1), sm.AUROC(), label="y", score="p", chunk_rows=0)


def test_nulls_skipped_or_refused_by_option(tmp_path: Any) -> None:
    df, dropped = cases.with_nulls(500, 4)

    def run(source: Any, **kw: Any) -> Any:
        with dask.config.set(scheduler="synchronous"):
            return evaluate_ranked(source, cases.metrics(), label="y", score="p", weight="w", ranges=4,
                                   chunk_rows=50, **kw)

    cases.assert_skipped(lambda **kw: run(dd.from_pandas(df, npartitions=3), **kw), df, dropped)
    for i, part in enumerate(cases.parts(df, [200, 350])):  # Parquet files read by the tasks
        part.to_parquet(tmp_path / f"part{i}.parquet")
    cases.assert_skipped(lambda **kw: run(str(tmp_path), **kw), df, dropped)


def test_parquet_files_are_read_in_chunks_and_equal_single_process(tmp_path: Any) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from streammetrics._engines.dask_ranked import _file_runs_task, parquet_files
    from streammetrics._engines.plan import Plan

    rng = np.random.default_rng(8)
    frames_ = []
    for i in range(3):
        n = 5_000 + 1_000 * i
        df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), 3),
                           "w": rng.integers(1, 4, n).astype(np.float64), "other": np.zeros(n)})
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / f"part-{i}.parquet",
                       row_group_size=2_000)
        frames_.append(df)
    (tmp_path / "_SUCCESS").write_text("")
    whole = pd.concat(frames_, ignore_index=True)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = evaluate_ranked(str(tmp_path), _metrics(), label="y", score="p", weight="w", ranges=5,
                              chunk_rows=1_500)
        listed = evaluate_ranked([str(tmp_path / f"part-{i}.parquet") for i in range(3)], _metrics(),
                                 label="y", score="p", weight="w", ranges=5)
    _same(got, _reference(whole, "w"))
    _same(listed, _reference(whole, "w"))
    fs, files = parquet_files(str(tmp_path))
    assert [f.rsplit("/", 1)[-1] for f in files] == [f"part-{i}.parquet" for i in range(3)]
    plan = Plan(config=__import__("streammetrics._engines.ranked", fromlist=["x"]).runs_config(None),
                family="classification", label="y", score="p", weight="w")
    runs = _file_runs_task([files[2]], fs, plan, 1_500)
    sizes = [r[0].shape[0] + r[2].shape[0] for r in runs]
    assert sum(sizes) == 7_000 and max(sizes) <= 1_500
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client, \
            distributed.get_task_stream(client) as stream, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_cluster = evaluate_ranked(str(tmp_path), _metrics(), label="y", score="p", weight="w", ranges=4,
                                     chunk_rows=2_500)
    _same(on_cluster, _reference(whole, "w"))
    # the files in one task per worker thread, so each worker keeps the runs of half the bytes
    assert sum("_file_runs_task" in str(t["key"]) for t in stream.data) == 2
    with pytest.raises(ValueError, match=r"columns \['q'\] are not in"):
        evaluate_ranked(str(tmp_path), sm.AUROC(), label="y", score="q")
    with pytest.raises(ValueError, match="data: no such file or directory"):
        evaluate_ranked(str(tmp_path / "missing"), sm.AUROC(), label="y", score="p")


def test_range_tasks_are_given_to_the_workers_a_few_at_a_time() -> None:
    distributed = pytest.importorskip("distributed")
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Busy(SchedulerPlugin):  # the most range tasks the scheduler had handed out at once
        def __init__(self) -> None:
            self.now, self.most = set(), 0

        def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
            if str(key).startswith("_range_task"):
                (self.now.add if finish == "processing" else self.now.discard)(key)
                self.most = max(self.most, len(self.now))

    rng = np.random.default_rng(4)
    df = pd.DataFrame({"y": rng.integers(0, 2, 4_000), "p": np.round(rng.random(4_000), 3)})
    most = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        for at_once in (None, 8):
            busy = Busy()
            client.cluster.scheduler.add_plugin(busy, name=f"busy-{at_once}")
            got = evaluate_ranked(dd.from_pandas(df, npartitions=4), {"auc": sm.AUROC()}, label="y",
                                  score="p", ranges=8, ranges_at_once=at_once)
            assert _close(got["auc"], _reference(df, None)["auc"])
            most[at_once] = busy.most
    assert most[None] <= 2 < most[8], most  # default: the client's 2 worker threads
    with pytest.raises(ValueError, match="ranges_at_once: must be an integer >= 1"):
        evaluate_ranked(dd.from_pandas(df, npartitions=1), sm.AUROC(), label="y", score="p", ranges_at_once=0)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 1000), min_size=1, max_size=30), n_groups=st.integers(1, 8))
@example(sizes=[5, 0], n_groups=1)  # empty files after the last share is reached: no extra group
def test_file_groups_split_the_bytes_evenly_in_order(sizes: list[int], n_groups: int) -> None:
    from streammetrics._engines.dask_ranked import file_groups

    names = [f"f{i}" for i in range(len(sizes))]
    groups = file_groups(names, sizes, n_groups)
    assert [n for g in groups for n in g] == names and all(groups) and len(groups) <= n_groups
    size = dict(zip(names, sizes, strict=True))
    for g in groups:  # a group stops at the first file that reaches its share of the bytes
        assert sum(size[n] for n in g) <= sum(sizes) / n_groups + max(sizes)


def test_the_split_releases_the_runs_and_each_range_frees_its_pieces() -> None:
    import tracemalloc

    from streammetrics._engines import ranked as ranked_engine
    from streammetrics._engines.dask_ranked import _runs_task, _take_task
    from streammetrics._engines.plan import Plan

    rng = np.random.default_rng(5)
    n, chunk = 400_000, 50_000
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), 4)})
    plan = Plan(config=ranked_engine.runs_config(None), family="classification", label="y", score="p")
    edges = np.array([0.25, 0.5, 0.75])
    expected = ranked_engine.split_chunks(_runs_task(df, plan, chunk), edges)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        held = _runs_task(df, plan, chunk)
        kept = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.reset_peak()
        pieces = _take_task(held, edges)
        peak = tracemalloc.get_traced_memory()[1] - base
        after = tracemalloc.get_traced_memory()[0] - base
        del pieces[0][:], pieces[1][:]  # ranges 0 and 1 merged: their pieces dropped
        freed = after - (tracemalloc.get_traced_memory()[0] - base)
    finally:
        tracemalloc.stop()
    assert len(held) == 0 and held.taken and kept >= 8 * n
    # one array per range and class replaces the runs (tracemalloc counts those arrays in full
    # when they are reserved; the system commits their pages as they are filled, run by run,
    # while each run is freed once copied): never more than the runs and their copies
    assert peak - kept <= kept + 8 * chunk + 100_000, (kept, peak)
    assert after <= kept + 100_000, (kept, after)
    # the pieces own their memory (views kept every run whole until the last range was done)
    assert freed >= 0.4 * 8 * n, (freed, kept)
    assert all(a.base is None for part in pieces for p in part for a in p if a is not None)
    for r in (2, 3):  # one piece per range: the runs' pieces, one after the other
        assert len(pieces[r]) == 1
        for k in (0, 2):
            np.testing.assert_array_equal(pieces[r][0][k], np.concatenate([p[k] for p in expected[r]]))
            assert pieces[r][0][k + 1] is None
        merged = ranked_engine.merge_unsorted(pieces[r])
        np.testing.assert_array_equal(merged[0], ranked_engine.merge_range(expected[r])[0])
    with pytest.raises(RuntimeError, match="split twice"):
        _take_task(held, edges)


def test_a_read_parquet_frame_is_read_in_record_batches(tmp_path: Any, monkeypatch: Any) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from streammetrics._engines import dask_ranked

    rng = np.random.default_rng(9)
    parts = []
    for i in range(3):
        n = 3_000 + 500 * i
        part = pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), 3),
                             "w": rng.integers(1, 4, n).astype(np.float64), "other": np.ones(n)})
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), tmp_path / f"part-{i}.parquet",
                       row_group_size=1_000)
        parts.append(part)
    whole = pd.concat(parts, ignore_index=True)
    calls = {"files": 0, "partitions": 0}

    def counted(name: str, fn: Any) -> Any:
        def run(*args: Any) -> Any:
            calls[name] += 1
            return fn(*args)
        return run

    monkeypatch.setattr(dask_ranked, "_file_runs_task", counted("files", dask_ranked._file_runs_task))
    monkeypatch.setattr(dask_ranked, "_runs_task", counted("partitions", dask_ranked._runs_task))
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for frame in (dd.read_parquet(str(tmp_path)), dd.read_parquet(str(tmp_path), split_row_groups=True),
                      dd.read_parquet(str(tmp_path))[["y", "p", "w"]]):
            _same(evaluate_ranked(frame, _metrics(), label="y", score="p", weight="w", ranges=4,
                                  chunk_rows=700), _reference(whole, "w"))
        assert calls == {"files": 9, "partitions": 0}  # one task per file (no client), each read in batches
        # filtered rows: Dask computes the partitions (the filter is its own), with the same values
        kept = evaluate_ranked(dd.read_parquet(str(tmp_path), filters=[("p", ">", 0.5)]), _metrics(),
                               label="y", score="p", weight="w", ranges=4)
        _same(kept, _reference(whole[whole.p > 0.5], "w"))
        assert calls == {"files": 9, "partitions": 3}
        with pytest.raises(ValueError, match=r"columns \['q'\] are not in the DataFrame"):
            evaluate_ranked(dd.read_parquet(str(tmp_path), columns=["y", "p"]), sm.AUROC(), label="y",
                            score="q")


def test_the_default_ranges_are_eight_per_worker_thread() -> None:
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"y": rng.integers(0, 2, 3_000), "p": np.round(rng.random(3_000), 2),
                       "w": rng.random(3_000)})
    with dask.config.set(scheduler="synchronous"):  # no client: 8
        alone, _ = range_summaries(dd.from_pandas(df, npartitions=3), {"a": sm.AUROC()}, label="y", score="p")
    assert len(alone) == 8
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summaries, _ = range_summaries(dd.from_pandas(df, npartitions=3), {"a": sm.AUROC()}, label="y",
                                       score="p")
        got = evaluate_ranked(dd.from_pandas(df, npartitions=3), _metrics(), label="y", score="p", weight="w")
    assert len(summaries) == 24 and sum(s.n_scores for s in summaries) == len(df)
    _same(got, _reference(df, "w"))


def test_top_threshold_of_zero_weight_gives_the_ap() -> None:
    """The highest range's top threshold may weigh 0 (positives and negatives of weight 0):
    its precision is 0/0, which the AP part must not read when no range is above (it gave nan,
    and ``combine``'s ``max(0, nan)`` an AP of 0)."""
    from sklearn.metrics import average_precision_score

    from streammetrics._engines import ranked

    y, s, w = np.array([1, 0, 1, 0]), np.array([0.9, 0.9, 0.5, 0.2]), np.array([0.0, 0.0, 1.0, 1.0])
    runs = (np.array([0.2, 0.9]), np.array([1.0, 0.0]), np.array([0.5, 0.9]), np.array([1.0, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = ranked.range_summary(runs, (0.0, 0.0, 0.0), (1.0, 1.0), False)
    ap = ranked.combine([summary], (1.0, 1.0))["ap"]
    assert abs(ap - average_precision_score(y, s, sample_weight=w)) <= TOL
