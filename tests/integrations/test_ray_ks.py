"""Issue #32 on Ray: a set holding ``KSStatistic`` beside exact AUROC / AP goes by the block ranges
(each range summarised with the weight above it sends its largest |TPR - FPR|) in ``evaluate``
and ``evaluate_parquet`` (through its dataset), no longer by the state path; ``evaluate_ranked``
takes ``KSStatistic``, ``GainsCurve`` / ``LiftCurve`` and ``DETCurve``. Against a real local Ray:
one process (KS bit for bit unweighted, else 1e-12) and its warnings."""

from __future__ import annotations

import unittest.mock
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402
import partial_auc_cases as pac  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ray_blocks, ray_ranges  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet, evaluate_ranked  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


@pytest.mark.parametrize(("weighted", "order", "cuts"), [(False, "ranked first", [0, 90, 90, 200]),
                                                         (True, "rest first", [150]),
                                                         (False, "rest first", [])])
def test_blocks_equal_one_process(weighted: bool, order: str, cuts: list[int], monkeypatch: Any) -> None:
    df = pac.data(300, len(cuts), 2, weighted)
    metrics = pac.ks_set(order)
    want, warned = pac.one_process(metrics, df)
    calls: list[int] = []
    real = ray_blocks.evaluate_blocks
    monkeypatch.setattr(ray_blocks, "evaluate_blocks", lambda *a: calls.append(1) or real(*a))
    with unittest.mock.patch.object(ray_ranges, "range_count", lambda: 3):
        got, caught = pac.recorded(lambda: evaluate(pac.ray_dataset(df, cuts), metrics, label="y", score="p",
                                                    weight="w" if weighted else None))
    pac.close(got, want)
    assert caught == warned and calls == [1]
    if not weighted:
        assert got["ks"] == want["ks"]


@pytest.mark.parametrize("case", ["no positives", "no negatives"])
def test_one_class_warns_as_one_process(case: str) -> None:
    df = pac.one_class(pac.data(200, 3, 2, True), case)
    metrics = sm.MetricSet(ks=sm.KSStatistic(), auc=sm.AUROC(), f1=sm.F1())
    want, warned = pac.one_process(metrics, df)
    got, caught = pac.recorded(lambda: evaluate(pac.ray_dataset(df, [80]), metrics, label="y", score="p", weight="w"))
    pac.close(got, want)
    assert caught == warned


def test_parquet_and_evaluate_ranked(tmp_path: Any, monkeypatch: Any) -> None:
    """``evaluate_parquet`` with a KS member reads its dataset by the block path; Ray's
    ``evaluate_ranked`` takes KS and the gains / lift / DET curves (files and a dataset)."""
    df = pac.parquet_parts(tmp_path, [700, 0, 900], 60)
    calls: list[int] = []
    real = ray_blocks.evaluate_blocks
    monkeypatch.setattr(ray_blocks, "evaluate_blocks", lambda *a: calls.append(1) or real(*a))
    metrics = pac.ks_set()
    for weight in (None, "w"):
        want, _ = pac.one_process(metrics, df if weight else df.drop(columns="w"))
        pac.close(evaluate_parquet(str(tmp_path), metrics, label="y", score="p", weight=weight), want)
    assert calls == [1, 1]
    pac.check_ranked(evaluate_ranked(str(tmp_path), pac.CURVES, label="y", score="p", weight="w",
                                     ranges=[0.2, 0.5, 0.5]), df, True)
    pac.check_ranked(evaluate_ranked(ray.data.from_pandas(df), pac.CURVES, label="y", score="p", ranges=3),
                     df, False)


def test_multiclass_and_sliced_ks_by_keyed_ranges(monkeypatch: Any) -> None:
    """Multiclass one-vs-rest ``KSStatistic(C)`` beside ``AUROC(C)`` and a binary KS with ``by=``
    take the keyed ranges (not the state path): one process's values (KS bit for bit unweighted)."""
    from test_dask_keyed import SCORES, _data

    from streammetrics._engines import ray_keyed

    calls: list[int] = []
    real = ray_keyed.kr.final_values
    monkeypatch.setattr(ray_keyed.kr, "final_values", lambda *a: calls.append(1) or real(*a))
    df = _data(500, 11)
    c = len(SCORES)
    metrics = sm.MetricSet(auroc=sm.AUROC(c), ks=sm.KSStatistic(c), acc=sm.Accuracy(c))
    want = metrics.copy().update(df.y.to_numpy(), df[SCORES].to_numpy()).compute()
    got = evaluate(pac.ray_dataset(df, [120, 300]), metrics, label="y", score=SCORES)
    np.testing.assert_array_equal(got["ks"], want["ks"])
    assert abs(got["auroc"] - want["auroc"]) <= 1e-12 and got["acc"] == want["acc"]
    sliced = sm.MetricSet(ks=sm.KSStatistic(), auroc=sm.AUROC())
    one = sm.Sliced(sliced.copy()).update(df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy(),
                                          sample_weight=df.w.to_numpy()).compute()
    by = evaluate(pac.ray_dataset(df, [200]), sliced, label="yb", score="s1", by="g", weight="w")
    for key in one:
        assert abs(by[key]["ks"] - one[key]["ks"]) <= 1e-12 and abs(by[key]["auroc"] - one[key]["auroc"]) <= 1e-12
    assert calls == [1, 1]
