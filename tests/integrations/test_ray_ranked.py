"""streammetrics.ray.evaluate_ranked against a real local Ray: scikit-learn and the single
process on random blocks with ties, weights, empty blocks, one class, given edges; the errors of
the Dask one; and what travels: each range task is given only its range's piece of each block."""

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

import ranked_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ranked_common, ray_ranked  # noqa: E402
from streammetrics.ray import evaluate_ranked  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


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
