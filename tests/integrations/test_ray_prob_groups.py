"""Issue #32 on Ray: ``scores="probability"`` AUROC / AP groups, an exact group between two
other state groups in the member order, and ``classes=`` / ``pos_label=`` string labels beside a
second exact group take the range routes of :func:`streammetrics.ray.evaluate` /
``evaluate_parquet`` (block ranges, keyed ranges, the file tasks), never the state path: one
process's values within 1e-12 over uneven and empty blocks, and a probability outside [0, 1]
(or a label outside the classes) in a late block refused with one process's message for that
block."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402
import prob_cases as pc  # noqa: E402

import streammetrics.ray as sm_ray  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


def test_ray_takes_the_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    df = pc.frame(1_200, 31)
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:300], df.iloc[300:1_000], df.iloc[1_000:]])
    ran = cases.ray_routes(monkeypatch)
    pc.check_runs(sm_ray.evaluate, ds, df, ran)
    df.iloc[:600].to_parquet(tmp_path / "a.parquet")
    df.iloc[600:].to_parquet(tmp_path / "b.parquet")
    for case in ("binary", "spam", "multiclass"):
        make, label, score = pc.CASES[case]
        ran.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = sm_ray.evaluate_parquet(str(tmp_path), make(), label=label, score=score)
        assert ran, case
        pc.assert_close(got, pc.one_process(case, df))
    for case, how in (("binary", "above"), ("multiclass", "below"), ("between", "label"), ("animals", "unknown")):
        bad = pc.spoiled(df, case, 1_100, how)
        want = pc.refused(case, bad.iloc[1_000:])
        bad_ds = ray.data.from_pandas([bad.iloc[:500], bad.iloc[500:1_000], bad.iloc[1_000:]])
        make, label, score = pc.CASES[case]
        with pytest.raises(ValueError) as eng:
            sm_ray.evaluate(bad_ds, make(), label=label, score=score)
        assert want.split(" at index")[0] in str(eng.value), (want, str(eng.value))
