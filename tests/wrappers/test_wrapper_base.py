"""What the three service wrappers share (``streammetrics.wrappers._base``): the nested configuration,
the injected clock across ``copy``, the capability that lets a window slide rows out as stored,
and the abstract bases staying out of the class registry."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.metrics import recall_score, roc_auc_score

import streammetrics as sm
from streammetrics._core.metric import Metric
from streammetrics._core.state import State
from streammetrics._scores.exact.buffer import SortedScores

WRAPPERS = {
    "window": lambda: sm.Window(sm.Recall(), seconds=10.0),
    "decayed": lambda: sm.Decayed(sm.Recall(), half_life_seconds=5.0),
    "delayed": lambda: sm.DelayedLabels(sm.Window(sm.Recall(), size=4), capacity=7, ttl=3.0,
                                        batch_size=2, max_delay=0.5),
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_the_configuration_round_trips_through_one_nested_entry(name: str) -> None:
    w = WRAPPERS[name]()
    config = w._config()
    assert config["metric"]["class"] == type(w.metric).__name__
    twin = type(w)._from_config(config)
    assert type(twin) is type(w) and twin._config() == config
    with pytest.raises(ValueError, match=r"unexpected \['bogus'\]"):
        type(w)._from_config({**config, "bogus": 1})
    with pytest.raises(ValueError, match="unknown metric class 'Nope'"):
        type(w)._from_config({**config, "metric": {"class": "Nope", "config": {}}})


def test_abstract_bases_are_not_loadable_classes() -> None:
    assert "Wrapper" not in Metric._registry and "SampleWrapper" not in Metric._registry
    state = sm.Window(sm.Recall(), size=3).state_dict()
    with pytest.raises(ValueError, match="unknown metric class 'SampleWrapper'"):
        sm.Window.from_state_dict({**state, "class": "SampleWrapper"})


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_copy_keeps_the_injected_clock() -> None:
    rng = np.random.default_rng(3)
    y, p = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
    clock = _Clock()
    win = sm.Window(sm.Recall(), seconds=10.0, clock=clock).copy()
    dec = sm.Decayed(sm.Recall(), half_life_seconds=4.0, clock=clock).copy()
    times = []
    for i in range(30):
        clock.now = 100.0 + i
        times.append(clock.now)
        win.update(y[i:i + 1], p[i:i + 1])
        dec.update(y[i:i + 1], p[i:i + 1])
    t = np.array(times)
    keep = t > t[-1] - 10.0
    assert win.compute() == pytest.approx(recall_score(y[keep], p[keep]), abs=1e-12)
    w = 0.5 ** ((t[-1] - t) / 4.0)
    assert dec.compute() == pytest.approx(recall_score(y, p, sample_weight=w), abs=1e-12)
    d = sm.DelayedLabels(sm.Recall(), ttl=5.0, clock=clock).copy()
    clock.now = 0.0
    d.predict([1, 2], [0.9, 0.1])
    clock.now = 10.0  # past the ttl on the injected clock: both expired
    assert d.stats()["expired"] == 2 and d.label([1, 2], [1, 0]) == 0


def test_row_slide_is_a_declared_capability() -> None:
    assert State.supports_row_slide is False
    assert SortedScores("binary").supports_row_slide
    assert not SortedScores("multiclass", num_classes=3).supports_row_slide
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 400), np.round(rng.random(400), 2)
    win = sm.Window(sm.AUROC(), size=100)
    calls: list[int] = []
    inner: Any = win._state.inner
    slide = inner.slide_rows

    def spy(yy: np.ndarray, ss: np.ndarray) -> None:
        calls.append(yy.shape[0])
        slide(yy, ss)

    inner.slide_rows = spy
    for i in range(0, 400, 25):
        win.update(y[i:i + 25], s[i:i + 25])
        lo = max(0, i + 25 - 100)
        assert win.compute() == pytest.approx(roc_auc_score(y[lo:i + 25], s[lo:i + 25]), abs=1e-12)
    assert sum(calls) == 300  # every expired row left through slide_rows
