"""Issue #32 on Ray: ``update`` keywords only the set's other members take (``timestamp=`` of a
``Window``) no longer send exact AUROC / AP / KS to the state path: :func:`streammetrics.ray.evaluate`
(block ranges, keyed ranges) and ``evaluate_parquet`` (the file tasks) give one process's values
over uneven and empty blocks (the unweighted score ranges bit for bit); a keyword no member
accepts, or keywords with ``by=``, raise one process's TypeError; retrieval keywords unchanged."""

from __future__ import annotations

from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402
import kwargs_cases as kc  # noqa: E402
import prob_cases as pc  # noqa: E402

import streammetrics.ray as sm_ray  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


def test_ray_keywords_take_the_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    df = pc.frame(800, 43)
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:300], df.iloc[300:650], df.iloc[650:]])
    ran: list[Any] = cases.ray_routes(monkeypatch)
    kc.check_runs(sm_ray.evaluate, ds, df, ran)
    df.iloc[:500].to_parquet(tmp_path / "a.parquet")
    df.iloc[500:].to_parquet(tmp_path / "b.parquet")
    kc.check_runs(sm_ray.evaluate_parquet, str(tmp_path), df, ran)
    monkeypatch.undo()
    small = df.iloc[:200]
    kc.check_refusals(sm_ray.evaluate, ray.data.from_pandas([small.iloc[:100], small.iloc[100:]]), small)
    rows = cases.retrieval_frame(400, 3)
    kc.retrieval_keywords(sm_ray.evaluate, ray.data.from_pandas([rows.iloc[:200], rows.iloc[200:]]), rows)
