"""Warnings raised inside engine tasks reach the caller: multiclass ``scores="probability"``
members (the keyed ranges) whose rows do not sum to 1 warn in the partition tasks, on workers
the caller never sees. The tasks keep the warnings their updates raise
(:func:`streammetrics._core.warn.recorded`) and send them with their small head; the caller raises
each distinct one once (:func:`streammetrics._core.warn.reissued`, ``Shape.deliver``). Oracle: one
process (``MetricSet.update`` on the whole frame): the same warnings, category and message,
once -- on a real 2-process LocalCluster and on the synchronous scheduler (the task runs in the
caller: kept, not raised twice); rows summing to 1: none; values unchanged."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import prob_cases as pc  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.dask as sm_dask  # noqa: E402

PREFIX = "The y_prob values do not sum to one"
CUTS = [120, 120, 260]  # an empty partition in the middle


def _spoiled(rows: list[int], seed: int = 3) -> Any:
    """:func:`prob_cases.frame` with the class-0 probability of ``rows`` raised by 0.25."""
    df = pc.frame(400, seed)
    df.loc[rows, "s0"] = df.loc[rows, "s0"] + 0.25
    return df


def _recorded(fn: Any) -> tuple[Any, list[tuple[type[Warning], str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fn()
    other = (FutureWarning, DeprecationWarning, ResourceWarning)  # the frameworks' own
    return got, [(w.category, str(w.message)) for w in caught if not issubclass(w.category, other)]


def _one_process(df: Any) -> tuple[Any, list[tuple[type[Warning], str]]]:
    make, label, score = pc.CASES["multiclass"]
    return _recorded(lambda: make().update(df[label].to_numpy(), df[score].to_numpy()).compute())


def _engine(df: Any, **kwargs: Any) -> tuple[Any, list[tuple[type[Warning], str]]]:
    make, label, score = pc.CASES["multiclass"]

    def gather(*args: Any, **kw: Any) -> Any:
        raise AssertionError("the state path gathered every score")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sm_dask, "_partition_task", gather)  # the keyed ranges, never the gather
        return _recorded(lambda: sm_dask.evaluate(cases.delayed_partitions(df, CUTS), make(), label=label,
                                                  score=score, **kwargs))


def _bad_rows(found: list[tuple[type[Warning], str]]) -> int:
    """The rows the warnings name (their ``N row(s)``), summed."""
    return sum(int(re.search(r"(\d+) row\(s\)", m).group(1)) for _, m in found)  # type: ignore[union-attr]


def _probability(found: list[tuple[type[Warning], str]]) -> list[tuple[type[Warning], str]]:
    return [(c, m) for c, m in found if m.startswith(PREFIX)]


def _scheduled(fn: Any, client: Any, scheduler: str) -> Any:
    if scheduler == "synchronous":
        with dask.config.set(scheduler="synchronous"):
            return fn()
    assert client is not None
    return fn()


@pytest.mark.parametrize("scheduler", ["distributed", "synchronous"])
def test_one_process_warnings_once(scheduler: str, request: pytest.FixtureRequest) -> None:
    """Rows not summing to 1 in one partition: exactly one process's warnings (category and
    message, each once); the values one process's within 1e-12."""
    client = request.getfixturevalue("client") if scheduler == "distributed" else None
    df = _spoiled([3, 40, 77])  # the first partition: its indices are the frame's
    want, warned = _one_process(df)
    assert len(_probability(warned)) == 1 and warned[0][0] is UserWarning
    got, found = _scheduled(lambda: _engine(df), client, scheduler)
    assert found == warned
    pc.assert_close(got, want)
    make, label, score = pc.CASES["multiclass"]
    with warnings.catch_warnings(record=True) as caught:  # at the caller's line (stacklevel)
        warnings.simplefilter("always")
        _scheduled(lambda: sm_dask.evaluate(cases.delayed_partitions(df, CUTS), make(), label=label,
                                            score=score), client, scheduler)
    assert [w.filename for w in caught if str(w.message).startswith(PREFIX)] == [__file__]


@pytest.mark.parametrize("scheduler", ["distributed", "synchronous"])
def test_rows_in_several_partitions(scheduler: str, request: pytest.FixtureRequest) -> None:
    """Bad rows in several partitions: each partition's warning once (one process's category and
    words, the partition's count and first row), the counts adding up to one process's."""
    client = request.getfixturevalue("client") if scheduler == "distributed" else None
    df = _spoiled([3, 200, 201, 350])
    want, warned = _one_process(df)
    got, found = _scheduled(lambda: _engine(df), client, scheduler)
    mine = _probability(found)
    assert len(mine) == 3 and len(set(mine)) == 3 and all(c is UserWarning for c, _ in mine)
    assert _bad_rows(mine) == _bad_rows(_probability(warned)) == 4
    assert [w for w in found if w not in mine] == [w for w in warned if w not in _probability(warned)]
    pc.assert_close(got, want)


@pytest.mark.parametrize("scheduler", ["distributed", "synchronous"])
def test_rows_summing_to_one_warn_nothing(scheduler: str, request: pytest.FixtureRequest) -> None:
    """Rows summing to 1 (sliced too): no warning, as one process; values unchanged."""
    client = request.getfixturevalue("client") if scheduler == "distributed" else None
    df = pc.frame(400, 5)
    want, warned = _one_process(df)
    got, found = _scheduled(lambda: _engine(df), client, scheduler)
    assert found == warned == []
    pc.assert_close(got, want)
    got, found = _scheduled(lambda: _engine(df, by="g"), client, scheduler)
    assert found == []
    pc.assert_close(got, pc.one_process("multiclass", df, by="g"))
    assert np.isfinite(got[0]["a"])


def _check_spread(run: Any, df: Any) -> None:
    """``run(df)``'s warnings: each of one process's category and words once, their counts adding
    up to one process's; the other warnings one process's; values one process's."""
    want, warned = _one_process(df)
    got, found = _recorded(lambda: run(df))
    mine = _probability(found)
    assert mine and len(set(mine)) == len(mine) and all(c is UserWarning for c, _ in mine)
    assert _bad_rows(mine) == _bad_rows(_probability(warned))
    assert [w for w in found if w not in mine] == [w for w in warned if w not in _probability(warned)]
    pc.assert_close(got, want)


def test_ray_keyed_tasks(request: pytest.FixtureRequest) -> None:
    """Ray's keyed ranges (block tasks in worker processes): one process's warning once when the
    bad rows are in the first block; spread over blocks, each block's once; none for rows
    summing to 1. Values unchanged."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    import streammetrics.ray as sm_ray

    gen = cases.local_ray()
    next(gen)
    try:
        make, label, score = pc.CASES["multiclass"]

        def run(df: Any) -> Any:
            ds = ray.data.from_pandas([df.iloc[:150], df.iloc[150:150], df.iloc[150:300], df.iloc[300:]])
            return sm_ray.evaluate(ds, make(), label=label, score=score)

        df = _spoiled([3, 40, 77])
        want, warned = _one_process(df)
        got, found = _recorded(lambda: run(df))
        assert found == warned and len(warned) == 1
        pc.assert_close(got, want)
        _check_spread(run, _spoiled([3, 200, 201, 350]))
        df = pc.frame(400, 5)
        got, found = _recorded(lambda: run(df))
        assert found == []
        pc.assert_close(got, pc.one_process("multiclass", df))
    finally:
        next(gen, None)  # ray.shutdown()


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_keyed_tasks(request: pytest.FixtureRequest) -> None:
    """Spark's keyed ranges (the partitions' chunk heads carry the warnings as bytes): bad rows
    spread over partitions warn each partition's once, with one process's category and words;
    none for rows summing to 1. Values unchanged."""
    pytest.importorskip("pyspark")
    import streammetrics.spark as sm_spark

    spark = request.getfixturevalue("spark_session")
    make, label, score = pc.CASES["multiclass"]

    def run(df: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            frame = spark.createDataFrame(df).repartition(3)
        return sm_spark.evaluate(frame, make(), label=label, score=score)

    _check_spread(run, _spoiled([3, 200, 201, 350]))
    df = pc.frame(400, 5)
    got, found = _recorded(lambda: run(df))
    assert [w for w in found if w[0] is not FutureWarning] == []
    pc.assert_close(got, pc.one_process("multiclass", df))


@pytest.mark.parametrize("ranges", [1, 3])
def test_score_range_tasks(ranges: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dask's score ranges (binary exact group, F1 beside it), synchronous scheduler: a warning
    the partition tasks' checks raise (a stand-in: no binary check warns today) reaches the
    caller once, however many partitions raise it; values unchanged."""
    from streammetrics._engines import range_counts as RC

    _stand_in(monkeypatch)
    monkeypatch.setattr(RC, "range_count", lambda: ranges)
    monkeypatch.setattr(sm_dask, "_partition_task", lambda *a, **k: pytest.fail("gathered"))
    def make() -> Any:
        return sm.MetricSet(a=sm.AUROC(scores="probability"), p=sm.AveragePrecision(scores="probability"),
                            f1=sm.F1())

    df = pc.frame(400, 7)
    with dask.config.set(scheduler="synchronous"):
        got, found = _recorded(lambda: sm_dask.evaluate(cases.delayed_partitions(df, CUTS), make(),
                                                        label="yb", score="pb"))
    assert found == [(RuntimeWarning, "a stand-in warning of a task's check")]
    pc.assert_close(got, make().update(df.yb.to_numpy(), df.pb.to_numpy()).compute())


STAND_IN = (RuntimeWarning, "a stand-in warning of a task's check")


def _stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the ranked members' checks (every score-range task's) warn :data:`STAND_IN`, through
    the library's ``warn``, in this process."""
    from streammetrics._core.warn import warn
    from streammetrics._engines import label_codes

    real = label_codes.ranked_checks

    class Warns:
        def __init__(self, checks: Any) -> None:
            self.checks = checks

        def check(self, *args: Any) -> Any:
            warn(STAND_IN[1], STAND_IN[0])
            return self.checks.check(*args)

    monkeypatch.setattr(label_codes, "ranked_checks", lambda ranked: Warns(real(ranked)))


def test_spark_range_tasks_in_process(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's direct Parquet ranges, their tasks run here (no session): each task keeps the
    warnings of its share's checks and returns them; the driver's root puts each once before
    compute's; nothing is raised by the tasks themselves."""
    pq = pytest.importorskip("pyarrow.parquet")
    from streammetrics._engines import range_counts, spark_files, spark_ranges
    from streammetrics._engines.plan import make_plan

    _stand_in(monkeypatch)
    df = pc.frame(600, 9)[["yb", "pb"]].rename(columns={"yb": "y", "pb": "p"})
    paths = []
    for i, (a, b) in enumerate([(0, 200), (200, 450), (450, 600)]):
        paths.append(str(tmp_path / f"part-{i}.parquet"))
        df.iloc[a:b].to_parquet(paths[-1], row_group_size=100)
    tasks = spark_files.split_groups([(p, [(pq.ParquetFile(p).metadata.row_group(g).num_rows, 1)
                                          for g in range(pq.ParquetFile(p).num_row_groups)]) for p in paths], 10**6)
    pieces = [p for t in tasks for p in t]
    metrics = sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC(), ap=sm.AveragePrecision())
    plan = make_plan(metrics, label="y", score="p", weight=None, query=None, doc_id=None, update_kwargs={},
                     available=["y", "p"])[2]
    split = range_counts.split_of(metrics, plan, {"y": np.dtype("int64"), "p": np.dtype("float64")})
    assert split is not None
    edges, shares = np.array([0.3, 0.6]), [(0, 2), (2, 4), (4, len(pieces))]
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        results: Any = [spark_ranges.range_task(plan, split, pieces, shares[r], edges, r) for r in range(3)]
    assert raised == [] and [r[6] for r in results] == [[STAND_IN[::-1]]] * 3
    got, caught = range_counts.final_values([r[0] for r in results if r[0] is not None],
                                            [spark_ranges.unpacked(r) for r in results], split,
                                            [r[6] for r in results])
    assert [(c, m) for m, c in caught] == [STAND_IN]
    pc.assert_close(got, metrics.copy().update(df.y.to_numpy(), df.p.to_numpy()).compute())
