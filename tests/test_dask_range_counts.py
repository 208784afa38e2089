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
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._range_counts as RC  # noqa: E402
from streammetrics._engine import make_plan  # noqa: E402
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
       ignore=st.sampled_from([None, -1]), f32=st.booleans(), data=st.data())
def test_any_ranges_and_partitions_give_one_process(
    n: int, seed: int, ranges: int, order: str, labels: str, decimals: int, ignore: int | None,
    f32: bool, data: Any,
) -> None:
    df = _data(n, seed, labels, decimals)
    if ignore is not None and n:
        df.loc[df.index[::7], "y"] = ignore
    if f32:
        df["p"] = df["p"].astype(np.float32)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=6))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        got = _run(lambda: evaluate(_frames(df, cuts), _set(order, ignore), label="y", score="p"))
    want = _single(_set(order, ignore), df)
    _same(got[0], want[0])
    assert got[1] == want[1]  # the same undefined-value warnings


@pytest.fixture(scope="module")
def client() -> Any:
    with cases.local_cluster() as c:
        yield c


@pytest.mark.parametrize("order", ["ranked first", "rest first", "only ranked"])
def test_local_cluster_uneven_and_empty_parquet(client: Any, tmp_path: Path, order: str) -> None:
    assert RC.range_count() == 4  # two per worker thread
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
        assert str(engine.value).split(";")[0] == str(one.value).split(";")[0]
