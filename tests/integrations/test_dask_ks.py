"""Issue #32 on Dask: a set holding ``KSStatistic`` beside exact AUROC / AP no longer gathers every
score -- ``evaluate`` / ``evaluate_parquet`` send the group by the ranked route (each range told
the weight above it sends its largest |TPR - FPR|: one number) -- and ``evaluate_ranked`` takes
``KSStatistic``, ``GainsCurve`` / ``LiftCurve`` and ``DETCurve``. Against one process: KS bit for
bit unweighted, every value within 1e-12; one process's warnings (a class absent: ``test_dask_max_fpr``'s
undefined cases); the root's inputs hold no score."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import engine_cases as cases  # noqa: E402
import numpy as np  # noqa: E402
import partial_auc_cases as pac  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet, evaluate_ranked  # noqa: E402

_frames = cases.delayed_partitions


def _summaries(mp: pytest.MonkeyPatch) -> list[int]:
    """The numbers of every range summary the root combines (the ranked route's only input)."""
    sizes: list[int] = []
    real = RC.summarised

    def spy(split: Any, rest: Any, got: Any, totals: Any) -> Any:
        sizes.extend(pac.numbers(s) for s in got)
        return real(split, rest, got, totals)

    mp.setattr(RC, "summarised", spy)
    return sizes


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), decimals=st.integers(0, 2), weighted=st.booleans(),
       order=st.sampled_from(["ranked first", "rest first"]), cuts=st.lists(st.integers(0, 300), max_size=4))
def test_ks_sets_equal_one_process(n: int, seed: int, decimals: int, weighted: bool, order: str,
                                   cuts: list[int]) -> None:
    """Any partitions (empty ones too), ties, zero weights, one class: one process's values and
    warnings; KS bit for bit unweighted; the root gets O(1) numbers a range, no score."""
    df = pac.data(n, seed, decimals, weighted)
    metrics = pac.ks_set(order)
    want, warned = pac.one_process(metrics, df)
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sizes = _summaries(mp)
        mp.setattr(RC, "range_count", lambda: 3)
        got = evaluate(_frames(df, cuts), metrics, label="y", score="p", weight="w" if weighted else None)
    pac.close(got, want)
    if not weighted:
        assert got["ks"] == want["ks"] or (np.isnan(got["ks"]) and np.isnan(want["ks"]))
    assert sorted(str(w.message) for w in caught) == warned
    assert sizes and max(sizes) <= 12, sizes


@pytest.mark.parametrize("weighted", [False, True])
def test_evaluate_ranked_takes_ks_gains_lift_det(weighted: bool) -> None:
    df = pac.data(2_000, 9, 2, True)
    with dask.config.set(scheduler="synchronous"):
        got = evaluate_ranked(dd.from_pandas(df, npartitions=3), pac.CURVES, label="y", score="p",
                              weight="w" if weighted else None, ranges=[0.1, 0.5, 0.5, 0.9])
    pac.check_ranked(got, df, weighted)


def test_evaluate_ranked_one_class_warns() -> None:
    df = pac.data(300, 2, 2, False).assign(y=0)
    want, warned = pac.one_process(sm.MetricSet(ks=sm.KSStatistic(), gains=sm.GainsCurve()), df)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = evaluate_ranked(dd.from_pandas(df, npartitions=2), {"ks": sm.KSStatistic(), "gains": sm.GainsCurve()},
                              label="y", score="p", ranges=3)
    assert np.isnan(got["ks"]) and np.isnan(want["ks"]) and np.isnan(got["gains"].gain).all()
    assert sorted(str(w.message) for w in caught) == warned


def test_local_cluster_and_parquet(client: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real 2-process LocalCluster: a frame and Parquet files (an empty one), weighted or not,
    each by the ranked route (the root combines range summaries, never a state of the scores)."""
    df = pac.parquet_parts(tmp_path, [900, 0, 1_400], 50)
    metrics = pac.ks_set("rest first")
    sizes = _summaries(monkeypatch)
    for weight in ("w", None):
        want, _ = pac.one_process(metrics, df if weight else df.drop(columns="w"))
        pac.close(evaluate_parquet(str(tmp_path), metrics, label="y", score="p", weight=weight), want)
        pac.close(evaluate(dd.from_pandas(df, npartitions=4), metrics, label="y", score="p", weight=weight), want)
    assert len(sizes) >= 4 and max(sizes) <= 12, sizes  # each run combined range summaries
    got = evaluate_ranked(str(tmp_path), pac.CURVES, label="y", score="p", weight="w")
    pac.check_ranked(got, df, True)
