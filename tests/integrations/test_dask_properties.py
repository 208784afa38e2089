"""Property tests of streammetrics.dask on the synchronous scheduler (no cluster needed).

Any split of the rows into partitions (empty ones included), any partition order and any merge
fan-in give the single-process state.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.dask import evaluate, merge_states, partition_state  # noqa: E402


def _set() -> sm.MetricSet:
    return sm.MetricSet(cm=sm.ConfusionMatrix(num_classes=3), f1=sm.F1(num_classes=3, average=None),
                        acc=sm.Accuracy(num_classes=3))


def _same(a: sm.Metric, b: sm.Metric) -> None:
    da, db = a.state_dict(), b.state_dict()
    assert da.keys() == db.keys()
    for k in da:
        if k != "config":
            np.testing.assert_array_equal(np.asarray(da[k]), np.asarray(db[k]), err_msg=k)


@st.composite
def _frames(draw: Any) -> tuple[pd.DataFrame, list[int], list[int], int]:
    n = draw(st.integers(0, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "y": rng.integers(0, 3, n),
        "s0": rng.integers(0, 3, n) / 2.0,
        "s1": rng.integers(0, 3, n) / 2.0,
        "s2": rng.integers(0, 3, n) / 2.0,
        "w": rng.integers(0, 3, n).astype(float),
    })
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
    order = draw(st.permutations(list(range(len(cuts) + 1))))
    split_every = draw(st.integers(2, 5))
    return df, cuts, list(order), split_every


@settings(max_examples=15, deadline=None)
@given(_frames())
def test_any_partitioning_gives_the_single_process_state(case: Any) -> None:
    df, cuts, order, split_every = case
    bounds = [0, *cuts, len(df)]
    pieces = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    pieces = [pieces[i] for i in order]
    ddf = dd.from_delayed([dask.delayed(p) for p in pieces], meta=df.iloc[:0])
    scores = ["s0", "s1", "s2"]
    with dask.config.set(scheduler="sync"):
        got = evaluate(ddf, _set(), label="y", score=scores, weight="w", split_every=split_every,
                       compute=False)
    ref = _set().update(df["y"].to_numpy(), df[scores].to_numpy(), sample_weight=df["w"].to_numpy())
    _same(got, ref)


def test_shipped_states_are_flat_numpy_arrays() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"y": rng.integers(0, 2, 100), "p": rng.random(100)})
    ms = sm.MetricSet(f1=sm.F1(), cm=sm.ConfusionMatrix())
    from streammetrics._engines.plan import Plan as _Plan  # the task payload

    plan = _Plan(config=ms._config(), family="classification", label="y", score="p")
    state = partition_state(df, plan)
    assert all(isinstance(v, np.ndarray) for v in state.values())
    assert "config" not in state and "class" not in state
    merged = merge_states([state, partition_state(df.iloc[:0], plan), state], ms._config())
    ref = ms.copy().update(df["y"], df["p"]).update(df["y"], df["p"])
    for k, v in ref.state_dict().items():
        if k not in ("class", "format_version", "config"):
            np.testing.assert_array_equal(merged[k], v)


def test_empty_frame_and_pandas_nullable_columns() -> None:
    df = pd.DataFrame({"y": pd.array([1, 0, 1], dtype="Int64"),
                       "p": pd.array([0.9, 0.2, 0.4], dtype="Float64")})
    ddf = dd.from_pandas(df, npartitions=2)
    with dask.config.set(scheduler="sync"):
        assert evaluate(ddf, sm.Accuracy(), label="y", score="p") == pytest.approx(2 / 3)
        empty = evaluate(ddf[ddf["y"] > 5], sm.ConfusionMatrix(), label="y", score="p")
        np.testing.assert_array_equal(empty, np.zeros((2, 2)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            acc = evaluate(ddf.head(0, npartitions=2, compute=False), sm.Accuracy(zero_division=0.0),
                           label="y", score="p")
        assert acc == 0.0
        with pytest.warns(sm.UndefinedMetricWarning):
            assert evaluate(ddf, sm.Precision(threshold=2.0), label="y", score="p") == 0.0
        bad = pd.DataFrame({"y": pd.array([1, None], dtype="Int64"), "p": [0.1, 0.2]})
        with pytest.raises(ValueError, match=r"nulls: column .y. is null at row 1 of Dask partition 0"):
            evaluate(dd.from_pandas(bad, npartitions=1), sm.Accuracy(), label="y", score="p")


def _retrieval() -> sm.MetricSet:
    return sm.MetricSet(ndcg=sm.NDCG(k=3), map=sm.MAP(), rr=sm.MRR())


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_retrieval_any_partitioning(seed: int, nparts: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    df = pd.DataFrame({"q": rng.integers(0, 9, n), "rel": rng.integers(0, 3, n),
                       "s": rng.integers(0, 4, n) / 4.0, "doc": [f"d{i}" for i in rng.permutation(n)]})
    srt = df.sort_values("q", kind="stable")
    ref = _retrieval().update(srt["rel"].to_numpy(), srt["s"].to_numpy(), query_ids=srt["q"].to_numpy(),
                              doc_ids=srt["doc"].to_numpy())
    want = ref.compute()
    with dask.config.set(scheduler="sync"):
        # rows of one query scattered over partitions: evaluate shuffles them together
        got = evaluate(dd.from_pandas(df, npartitions=nparts, sort=False), _retrieval(), label="rel",
                       score="s", query="q", doc_id="doc", split_every=2)
        # already partitioned by query: no shuffle
        parts = [dask.delayed(g) for _, g in df.groupby("q", sort=False)]
        by_query = dd.from_delayed(parts, meta=df.iloc[:0])
        got2 = evaluate(by_query, _retrieval(), label="rel", score="s", query="q", doc_id="doc",
                        query_partitioned=True, compute=False)
    assert got2["map"].n_queries == ref["map"].n_queries
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=0)
        np.testing.assert_allclose(got2.compute()[k], want[k], rtol=1e-12, atol=0)


@st.composite
def _regression_frames(draw: Any) -> tuple[pd.DataFrame, list[int], list[int], int]:
    n = draw(st.integers(0, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    levels = draw(st.integers(1, 4))  # few levels: many ties in targets, predictions and errors
    y = np.round(rng.normal(size=(n, 2)) * levels) / levels
    df = pd.DataFrame({"y0": y[:, 0], "y1": y[:, 1],
                       "p0": np.round((y[:, 0] + rng.normal(size=n)) * levels) / levels,
                       "p1": np.round((y[:, 1] + rng.normal(size=n)) * levels) / levels,
                       "w": rng.integers(0, 3, n).astype(float)})
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
    order = draw(st.permutations(list(range(len(cuts) + 1))))
    return df, cuts, list(order), draw(st.integers(2, 5))


def _regression_set() -> sm.MetricSet:
    return sm.MetricSet(mse=sm.MeanSquaredError(multioutput="raw_values"),
                        mae=sm.MeanAbsoluteError(multioutput="raw_values"), r2=sm.R2Score(),
                        medae=sm.MedianAbsoluteError(multioutput="raw_values"),
                        spearman=sm.SpearmanCorrCoef(multioutput="raw_values"),
                        kendall=sm.KendallTau(multioutput="raw_values"),
                        pearson=sm.PearsonCorrCoef(multioutput="raw_values"))


@settings(max_examples=15, deadline=None)
@given(_regression_frames())
def test_regression_any_partitioning_gives_the_single_process_values(case: Any) -> None:
    """Issue #30: regression states (moments, sorted value buffers, pair ranks) merged from any
    partitioning, order and fan-in, with integer weights (zeros too) and ties, give the values
    of one process (to 1e-12: the moments' sums run in another order; undefined values alike)."""
    df, cuts, order, split_every = case
    bounds = [0, *cuts, len(df)]
    pieces = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    ddf = dd.from_delayed([dask.delayed(pieces[i]) for i in order], meta=df.iloc[:0])
    cols = dict(target=["y0", "y1"], prediction=["p0", "p1"], weight="w", split_every=split_every)
    with warnings.catch_warnings(), dask.config.set(scheduler="sync"):
        warnings.simplefilter("ignore")  # undefined values (no rows, constant columns) warn
        got = evaluate(ddf, _regression_set(), **cols)
        ref = _regression_set().update(df[["y0", "y1"]].to_numpy(), df[["p0", "p1"]].to_numpy(),
                                       sample_weight=df["w"].to_numpy()).compute()
    assert got.keys() == ref.keys()
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-12, atol=1e-12, err_msg=k)
