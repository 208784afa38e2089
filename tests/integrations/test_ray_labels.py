"""streammetrics.ray with exact AUROC / AP sets whose labels are strings (``pos_label=``,
``classes=``; issue #32 item 2) over a real local Ray: ``evaluate``'s block ranges and keyed
ranges and ``evaluate_parquet``'s file tasks map the labels with the ranked members' codec
(:mod:`streammetrics._engines.label_codes`) instead of gathering every score: one process's
values (bit for bit unweighted, within 1e-12 weighted), a label outside ``classes=`` refused
naming it. Few cases: Ray is slow to start."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402

import streammetrics._engines.ray_keyed as RK  # noqa: E402
from streammetrics._engines import ray_blocks, ray_ranges  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


def test_string_labels_take_the_range_routes(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    df = cases.labelled_frame(n=1500, seed=4)
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:400], df.iloc[400:1100], df.iloc[1100:]])
    blocks = cases.spy(monkeypatch, ray_blocks, "evaluate_blocks")
    keyed = cases.spy(monkeypatch, RK, "evaluate_keyed")
    files = cases.spy(monkeypatch, ray_ranges, "evaluate_files")

    got = evaluate(ds, cases.spam_set(), label="yb", score="p")
    want = cases.spam_set().update(df.yb, df.p).compute()
    assert got == want  # bit for bit
    got = evaluate(ds, cases.spam_set(), label="yb", score="p", weight="w")
    cases.assert_same(got, cases.spam_set().update(df.yb, df.p, sample_weight=df.w).compute())
    assert blocks == ["evaluate_blocks"] * 2

    scores = ["s0", "s1", "s2"]
    got = evaluate(ds, cases.animal_set(), label="yc", score=scores, weight="w")
    cases.assert_same(got, cases.animal_set().update(df.yc, df[scores].to_numpy(), sample_weight=df.w).compute())
    assert keyed == ["evaluate_keyed"]

    for i, (a, b) in enumerate([(0, 700), (700, 1500)]):
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet")
    got = evaluate_parquet(str(tmp_path), cases.spam_set(), label="yb", score="p")
    assert got == want and files == ["evaluate_files"]

    bad = df.copy()
    bad.loc[1200, "yc"] = "yak"
    with pytest.raises(ValueError, match=r"label: column 'yc' of Ray block \d+: y_true: unknown label 'yak'"):
        evaluate(ray.data.from_pandas([bad.iloc[:600], bad.iloc[600:]]), cases.animal_set(), label="yc",
                 score=scores)
    assert np.isfinite(got["auroc"])
