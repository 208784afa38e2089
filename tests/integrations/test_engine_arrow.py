"""The Arrow feed of the Spark and Ray tasks (issue #32): record batches coalesced into chunks,
numeric columns straight to numpy, give the state the pandas path gives, bit for bit; a null or
NaN takes the pandas path and is named as before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

import streammetrics as sm  # noqa: E402
from streammetrics._core.persistence import dumps  # noqa: E402
from streammetrics._engines.plan import (  # noqa: E402
    arrow_arrays,
    arrow_chunks,
    empty_set,
    feed,
    feed_arrow,
    make_plan,
)


def _plan(metrics, **columns):
    acc, _, plan = make_plan(metrics, weight=columns.pop("weight", None), query=None, doc_id=None,
                             update_kwargs={}, available=["y", "p", "w", "s0", "s1", "s2", "c"],
                             **columns)
    return acc, plan


def _binary_set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), chunk=st.integers(1, 120), seed=st.integers(0, 2**31 - 1),
       label=st.sampled_from(["int64", "int8", "bool"]), score=st.sampled_from(["float64", "float32"]),
       weighted=st.booleans())
def test_arrow_chunks_fed_as_numpy_equal_pandas_batches(n, chunk, seed, label, score, weighted) -> None:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": rng.integers(0, 2, n).astype(label),
                       "p": np.round(rng.random(n), 1).astype(score),  # ties
                       "w": rng.integers(1, 4, n).astype(np.float64)})
    acc, plan = _plan(_binary_set(), label="y", score="p", weight="w" if weighted else None)
    table = pa.Table.from_pandas(df, preserve_index=False)
    batches = table.to_batches(max_chunksize=max(1, chunk // 3))
    fast = empty_set(plan.config, plan.kind)
    offset = 0
    for part in arrow_chunks(batches, rows=chunk):
        assert arrow_arrays(part, plan) is not None  # the numpy path is the one taken
        assert feed_arrow(fast, part, plan, "here", offset) == 0
        offset += part.num_rows
    assert offset == n
    slow = empty_set(plan.config, plan.kind)
    feed(slow, df, plan)
    assert dumps(fast) == dumps(slow)


def test_score_columns_of_several_names_and_chunks_without_copying() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"c": rng.integers(0, 3, 200), "s0": rng.random(200), "s1": rng.random(200),
                       "s2": rng.integers(0, 5, 200)})
    metrics = sm.MetricSet(auroc=sm.AUROC(num_classes=3), acc=sm.Accuracy(num_classes=3))
    acc, plan = _plan(metrics, label="c", score=["s0", "s1", "s2"])
    fast = empty_set(plan.config, plan.kind)
    feed_arrow(fast, pa.Table.from_pandas(df, preserve_index=False), plan)
    slow = empty_set(plan.config, plan.kind)
    feed(slow, df, plan)
    assert dumps(fast) == dumps(slow)
    chunks = list(arrow_chunks(pa.Table.from_pandas(df).to_batches(max_chunksize=30), rows=100))
    assert [c.num_rows for c in chunks] == [120, 80]
    assert list(arrow_chunks([])) == []


@pytest.mark.parametrize("hole", [None, np.nan])
def test_a_null_or_nan_takes_the_pandas_path_and_is_named(hole) -> None:
    df = pd.DataFrame({"y": [0, 1, 1, 0], "p": [0.1, 0.4, 0.3, 0.8]})
    table = pa.Table.from_pandas(df, preserve_index=False)
    p = table.column("p").to_pylist()
    p[2] = hole
    table = table.set_column(1, "p", pa.array(p, type=pa.float64(), from_pandas=True))
    acc, plan = _plan(sm.MetricSet(f1=sm.F1()), label="y", score="p")
    assert arrow_arrays(table, plan) is None
    target = empty_set(plan.config, plan.kind)
    before = dumps(target)
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row 12 of a block"):
        feed_arrow(target, table, plan, "a block", offset=10)
    assert dumps(target) == before
    _, skipping = make_plan(sm.F1(), label="y", score="p", weight=None, query=None, doc_id=None,
                            update_kwargs={}, available=["y", "p"], nulls="skip")[1:]
    kept = empty_set(skipping.config, skipping.kind)
    assert feed_arrow(kept, table, skipping) == 1
    assert kept["m"].compute() == sm.F1().update([0, 1, 0], [0.1, 0.4, 0.8]).compute()


def test_string_columns_take_the_pandas_path() -> None:
    table = pa.table({"y": ["a", "b", "a"], "p": [0.1, 0.2, 0.3]})
    _, plan = _plan(sm.MetricSet(f1=sm.F1()), label="y", score="p")
    assert arrow_arrays(table, plan) is None
