"""Issue #32 item 2 on Ray: ``streammetrics.ray.evaluate`` / ``evaluate_parquet`` of a set with
several exact AUROC / AP state groups (one-vs-one beside one-vs-rest, another ``ignore_index``,
binary without ``by=``) by the keyed (key, score) ranges of
:mod:`streammetrics._engines.ray_keyed` over a real local Ray, not the gather: one process's
values within 1e-12, uneven and empty blocks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402
from test_ray_keyed import SCORES, C, local_ray  # noqa: E402, F401  (the module's local Ray)

import streammetrics as sm  # noqa: E402
import streammetrics._engines.ray_keyed as RK  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet  # noqa: E402


def test_groups_by_keyed_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    rng = np.random.default_rng(8)
    n = 2_000
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], 1)
    w = np.round(rng.random(n) * 2, 1)
    df = pd.DataFrame({"y": y, **{f"s{c}": s[:, c] for c in range(C)}, "w": w,
                       "g": rng.choice(["a", "b", "c"], n), "yb": (y == 1).astype(np.int64)})
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:300], df.iloc[300:1_700], df.iloc[1_700:]])
    calls: list[Any] = []
    real = RK.evaluate_keyed
    monkeypatch.setattr(RK, "evaluate_keyed", lambda *a: calls.append(a[2]) or real(*a))
    groups = sm.MetricSet(a=sm.AUROC(C, average="weighted"), p=sm.AveragePrecision(C, average="micro"),
                          acc=sm.Accuracy(C), ovo=sm.AUROC(C, multi_class="ovo", max_fpr=0.5),
                          ia=sm.AUROC(C, ignore_index=1, average=None))
    want = sm.Sliced(groups.copy()).update(y, s, slices=df.g.to_numpy(), sample_weight=w).compute()
    with pytest.warns(sm.UndefinedMetricWarning):
        cases.assert_same(evaluate(ds, groups, label="y", score=SCORES, weight="w", by="g"), want)
    binary = sm.MetricSet(a=sm.AUROC(), ap=sm.AveragePrecision(), ia=sm.AUROC(ignore_index=0), f1=sm.F1())
    with pytest.warns(sm.UndefinedMetricWarning):
        want = binary.copy().update(df.yb.to_numpy(), df.s1.to_numpy()).compute()
        cases.assert_same(evaluate(ds, binary, label="yb", score="s1"), want)
    df.iloc[:1_000].to_parquet(tmp_path / "a.parquet")
    df.iloc[1_000:].to_parquet(tmp_path / "b.parquet")
    with pytest.warns(sm.UndefinedMetricWarning):
        cases.assert_same(evaluate_parquet(str(tmp_path), binary, label="yb", score="s1"), want)
    assert len(calls) == 3 and all(c.more for c in calls)
