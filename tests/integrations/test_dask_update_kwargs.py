"""Issue #32 on Dask: ``update`` keywords only the set's other members take (``timestamp=`` of a
``Window``) no longer send exact AUROC / AP / KS to the state path (the gather of every score):
:func:`streammetrics.dask.evaluate` and ``evaluate_parquet`` give one process's values on the
score ranges (bit for bit), the ranked and the keyed ranges (within 1e-12); a keyword no member
accepts, or keywords with ``by=``, raise one process's TypeError; retrieval keywords unchanged."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import engine_cases as cases  # noqa: E402
import kwargs_cases as kc  # noqa: E402
import prob_cases as pc  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.dask as sm_dask  # noqa: E402
from streammetrics._engines import range_counts as RC  # noqa: E402
from streammetrics._engines import rest_order  # noqa: E402


def _gather(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the state path gathered every score")


@pytest.fixture
def no_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    """The state path (the gather) refused; 3 score ranges; the synchronous scheduler."""
    monkeypatch.setattr(RC, "range_count", lambda: 3)
    monkeypatch.setattr(sm_dask, "_partition_task", _gather)


def test_evaluate_keywords_take_the_ranges(no_gather: None) -> None:
    df = pc.frame(600, 3)
    with dask.config.set(scheduler="synchronous"):
        kc.check_runs(sm_dask.evaluate, cases.delayed_partitions(df, [0, 150, 150, 420]), df)


def test_evaluate_parquet_keywords_take_the_ranges(no_gather: None, tmp_path: Any) -> None:
    df = pc.frame(600, 4)
    for i, (a, b) in enumerate(((0, 250), (250, 400), (400, 600))):
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet")
    with dask.config.set(scheduler="synchronous"):
        kc.check_runs(sm_dask.evaluate_parquet, str(tmp_path), df)


def test_refused_keywords_as_one_process(tmp_path: Any) -> None:
    df = pc.frame(300, 5)
    with dask.config.set(scheduler="synchronous"):
        kc.check_refusals(sm_dask.evaluate, dd.from_pandas(df, npartitions=3), df)
        df.to_parquet(tmp_path / "f.parquet")
        kc.check_refusals(sm_dask.evaluate_parquet, str(tmp_path), df)


def test_retrieval_keywords_unchanged() -> None:
    df = cases.retrieval_frame(600, 2)
    with dask.config.set(scheduler="synchronous"):
        kc.retrieval_keywords(sm_dask.evaluate, dd.from_pandas(df, npartitions=3), df)


def test_rest_keywords() -> None:
    """The rule: the keywords go to the rest when no exact group accepts one and each has a taker
    among the others; None (the state path) otherwise, and always for ``Sliced``."""
    s = kc.first_set()
    exact = [g for g in s.groups if "a" in g]
    assert rest_order.rest_keywords(s, exact, {}) == {}
    assert rest_order.rest_keywords(s, exact, {"timestamp": 1.0}) == {"timestamp": 1.0}
    assert rest_order.rest_keywords(s, exact, {"foo": 1}) is None  # no member accepts it
    assert rest_order.rest_keywords(s, exact, {"y_true": 1}) is None  # an exact member accepts it
    assert rest_order.rest_keywords(None, exact, {"timestamp": 1.0}) is None
    assert rest_order.rest_keywords(None, exact, {}) == {}
    before = sm.MetricSet(f=sm.F1(), win=sm.Window(sm.F1(), seconds=1))
    assert rest_order.keywords_for(before, {"timestamp": 1.0}) == {"timestamp": 1.0}
    assert rest_order.keywords_for(sm.MetricSet(f=sm.F1()), {"timestamp": 1.0}) == {}
