"""Issue #32 on Ray: ``AUROC(max_fpr=...)`` and sets mixing an exact binary AUROC / AP group with a
bounded AUROC go by score ranges in ``evaluate`` (and ``evaluate_parquet``, through its dataset)
-- each range summarised with the weight above it (:mod:`streammetrics._engines.ranked`), the
bounded state beside it as a state -- and ``evaluate_ranked`` accepts ``max_fpr``. Against a
real local Ray: one process / scikit-learn within 1e-12, one process's warnings, and what the
driver fetches does not grow with the rows."""

from __future__ import annotations

import pickle
import unittest.mock
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pytest.importorskip("sklearn")

import engine_cases as cases  # noqa: E402
import partial_auc_cases as pac  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ray_blocks, ray_ranges  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet, evaluate_ranked  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 10**6), decimals=st.integers(0, 2), weighted=st.booleans(),
       m=st.sampled_from([0.1, 0.5, 1.0, 0.3333]), order=st.sampled_from(["only ranked", "ranked first", "rest first"]),
       cuts=st.lists(st.integers(0, 300), max_size=4), ranges=st.integers(1, 4))
def test_blocks_equal_one_process_and_sklearn(n, seed, decimals, weighted, m, order, cuts, ranges) -> None:
    df = pac.data(n, seed, decimals, weighted)
    metrics = pac.metric_set(order, m)
    want, warned = pac.one_process(metrics, df)
    with unittest.mock.patch.object(ray_ranges, "range_count", lambda: ranges):
        got, caught = pac.recorded(lambda: evaluate(pac.ray_dataset(df, cuts), metrics, label="y", score="p",
                                            weight="w" if weighted else None))
    pac.close(got, want)
    assert caught == warned
    if pac.defined(df):
        w = df.w.to_numpy() if weighted else None
        assert abs(got["part"] - roc_auc_score(df.y, df.p, max_fpr=m, sample_weight=w)) <= 1e-12


@pytest.mark.parametrize("case", ["no positives", "no negatives"])
def test_one_class_warns_as_one_process(case: str) -> None:
    df = pac.data(200, 3, 2, True).assign(y=0 if case == "no positives" else 1)
    metrics = sm.MetricSet(part=sm.AUROC(max_fpr=0.3), f1=sm.F1())
    want, warned = pac.one_process(metrics, df)
    got, caught = pac.recorded(lambda: evaluate(pac.ray_dataset(df, [80]), metrics, label="y", score="p", weight="w"))
    pac.close(got, want)
    assert caught == warned


def _fetched(monkeypatch: Any, run: Any) -> list[int]:
    """The pickled size of each object list the driver fetches from the block path's tasks."""
    sizes: list[int] = []
    real = ray_blocks.get
    monkeypatch.setattr(ray_blocks, "get", lambda refs: sizes.append(len(pickle.dumps(out := real(refs)))) or out)
    run()
    monkeypatch.setattr(ray_blocks, "get", real)
    return sizes


def test_the_driver_fetches_no_score(monkeypatch: Any) -> None:
    """A partial AUROC beside F1 and a bounded AUROC, 20,000 and 200,000 rows in 32 blocks: after
    the edge sample the driver fetches a few numbers per range and the small states (the
    bounded bins, F1's counts) -- under 64 KB both times, where the state path sends 8 bytes a
    row (1.6 MB)."""
    sample = 8 * ray_blocks.SAMPLE_BLOCKS * ray_ranges.SAMPLE_SCORES + 4096
    for n in (20_000, 200_000):
        df = pac.data(n, 13, 6, False)
        ds = pac.ray_dataset(df, list(range(0, n, n // 32)))
        metrics = pac.metric_set("rest first", 0.2)
        sizes = _fetched(monkeypatch, lambda ds=ds, metrics=metrics: evaluate(ds, metrics, label="y", score="p"))
        assert sizes[0] < sample and sum(sizes[1:]) < 64_000, (n, sizes)


def test_parquet_and_evaluate_ranked(tmp_path: Any, monkeypatch: Any) -> None:
    """``evaluate_parquet`` with a ``max_fpr`` member reads its dataset by the block path; Ray's
    ``evaluate_ranked`` takes ``max_fpr`` (curves beside it, a repeated edge)."""
    df = pac.parquet_parts(tmp_path, [700, 0, 900], 40)
    calls: list[int] = []
    real = ray_blocks.evaluate_blocks
    monkeypatch.setattr(ray_blocks, "evaluate_blocks", lambda *a: calls.append(1) or real(*a))
    metrics = sm.MetricSet(auroc=sm.AUROC(), part=sm.AUROC(max_fpr=0.15), f1=sm.F1())
    for weight in (None, "w"):
        want, _ = pac.one_process(metrics, df if weight else df.drop(columns="w"))
        pac.close(evaluate_parquet(str(tmp_path), metrics, label="y", score="p", weight=weight), want)
    assert calls == [1, 1]
    got = evaluate_ranked(str(tmp_path), {"a": sm.AUROC(max_fpr=0.15), "b": sm.AUROC(max_fpr=0.5),
                                          "roc": sm.ROCCurve()}, label="y", score="p", weight="w",
                          ranges=[0.2, 0.5, 0.5])
    for name, m in (("a", 0.15), ("b", 0.5)):
        assert abs(got[name] - roc_auc_score(df.y, df.p, max_fpr=m, sample_weight=df.w)) <= 1e-12
    ds = ray.data.from_pandas(df)
    part = evaluate_ranked(ds, sm.AUROC(max_fpr=0.15), label="y", score="p", ranges=3)
    assert abs(part - roc_auc_score(df.y, df.p, max_fpr=0.15)) <= 1e-12
    assert np.isfinite(part)
