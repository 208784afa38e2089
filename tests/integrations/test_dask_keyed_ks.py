"""Issue #32 on Dask's keyed ranges: ``KSStatistic`` with ``by=`` slices and multiclass one-vs-rest
(``num_classes=C``) beside exact AUROC / AP no longer gathers -- each (key, score) range, told
each key's weight above it, sends each class column's largest |TPR - FPR| (the ranked kernel's
KS readout) and the root takes each key's largest. Against one process (``Sliced`` for ``by=``,
the set's own compute): KS bit for bit unweighted, 1e-12 weighted, with its warnings."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_dask_keyed import SCORES, _close, _data, _frames, _messages, _one  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.keyed_ranges as KR  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics.dask import evaluate  # noqa: E402

C = len(SCORES)


def _run(df: Any, metrics: Any, cuts: list[int], **kw: Any) -> tuple[Any, list[str], int]:
    calls: list[int] = []
    real = KR.final_values
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(KR, "final_values", lambda *a: calls.append(1) or real(*a))
        mp.setattr(RC, "range_count", lambda: 3)
        got = evaluate(_frames(df, cuts), metrics, **kw)
    return got, _messages(caught), len(calls)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 200), seed=st.integers(0, 10**6), weighted=st.booleans(),
       cuts=st.lists(st.integers(0, 200), max_size=3))
def test_multiclass_ks_equals_one_process(n: int, seed: int, weighted: bool, cuts: list[int]) -> None:
    df = _data(n, seed)
    metrics = sm.MetricSet(acc=sm.Accuracy(C), auroc=sm.AUROC(C), ks=sm.KSStatistic(C),
                           ap=sm.AveragePrecision(C, average="micro"))
    w = df.w.to_numpy() if weighted else None
    want, warned = _one(lambda: metrics.copy().update(df.y.to_numpy(), df[SCORES].to_numpy(),
                                                      sample_weight=w).compute() if n else metrics.copy().compute())
    got, caught, calls = _run(df, metrics, [min(c, n) for c in cuts], label="y", score=SCORES,
                              weight="w" if weighted else None)
    assert calls == 1  # the keyed ranges, not the state tree
    _close(got, want)
    if not weighted:
        np.testing.assert_array_equal(got["ks"], want["ks"])
    assert caught == warned


@pytest.mark.parametrize("weighted", [False, True])
def test_sliced_binary_ks_equals_sliced(weighted: bool) -> None:
    df = _data(400, 7, slices=3)
    df.loc[df.g == 2, "yb"] = 0  # a slice without positives: nan and the warning
    metrics = sm.MetricSet(ks=sm.KSStatistic(), auroc=sm.AUROC(), f1=sm.F1())
    w = df.w.to_numpy() if weighted else None
    want, warned = _one(lambda: sm.Sliced(metrics.copy()).update(df.yb.to_numpy(), df.s1.to_numpy(),
                                                                  slices=df.g.to_numpy(), sample_weight=w).compute())
    got, caught, calls = _run(df, metrics, [100, 250], label="yb", score="s1", by="g",
                              weight="w" if weighted else None)
    assert calls == 1
    assert set(got) == set(want)
    for key in want:
        _close(dict(got[key]), dict(want[key]))
        if not weighted:
            assert got[key]["ks"] == want[key]["ks"] or np.isnan(want[key]["ks"])
    assert caught == warned
