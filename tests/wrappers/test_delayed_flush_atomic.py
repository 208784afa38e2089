"""DelayedLabels with batched folding: a flush is atomic. If the wrapped metric raises something
other than a ValueError, the buffered pairs (already counted as labelled) stay buffered and the
next flush folds them -- none lost, none folded twice. A merge is atomic too: a wrapped merge that fails changes
nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from streammetrics import AUROC, DelayedLabels, dumps


class FlakyAUROC(AUROC):
    """AUROC whose next updates raise the scripted exceptions (None: a real update)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script: list[type[BaseException] | None] = []
        self.calls = 0

    def update(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.calls += 1
        if self.script:
            exc = self.script.pop(0)
            if exc is not None:
                raise exc("injected failure")
        return super().update(*args, **kwargs)


SCORES = [0.9, 0.2, 0.7, 0.4, 0.6, 0.3]
LABELS = [1, 0, 0, 1, 1, 0]


def delayed(batch_size: int = 10) -> tuple[DelayedLabels, FlakyAUROC]:
    inner = FlakyAUROC()
    d = DelayedLabels(inner, batch_size=batch_size, max_delay=1e9, clock=lambda: 0.0)
    for i, s in enumerate(SCORES):
        d.predict(i, s)
    return d, inner


def state_of(m: Any) -> str:
    return repr({k: v for k, v in m.state_dict().items() if k != "class"})


def reference(n: int) -> float:
    return float(AUROC().update(np.array(LABELS[:n]), np.array(SCORES[:n])).compute())


def test_a_raising_flush_keeps_the_buffer() -> None:
    d, inner = delayed()
    for i in range(4):
        d.label(i, LABELS[i])
    inner.script = [RuntimeError]
    with pytest.raises(RuntimeError, match="injected"):
        d.flush()
    assert d.stats()["buffered"] == 4 and d.stats()["labelled"] == 4
    assert state_of(inner) == state_of(AUROC())  # nothing folded
    assert d.flush() == 4
    assert d.stats()["buffered"] == 0
    assert d.compute() == reference(4)


def test_a_raising_flush_on_a_full_batch_keeps_the_label() -> None:
    d, inner = delayed(batch_size=3)
    d.label(0, LABELS[0])
    d.label(1, LABELS[1])
    inner.script = [MemoryError]
    with pytest.raises(MemoryError):
        d.label(2, LABELS[2])  # the batch is full: the flush fails, the label stays buffered
    assert d.stats()["buffered"] == 3 and d.stats()["labelled"] == 3
    d.label(3, LABELS[3])  # the next full batch folds all four
    assert d.stats()["buffered"] == 0
    assert d.compute() == reference(4)


def test_a_raise_during_the_pair_by_pair_fallback_keeps_the_unfolded_pairs() -> None:
    d, inner = delayed()
    for i in range(5):
        d.label(i, LABELS[i])
    # the batch is refused (ValueError -> pair by pair), pair 0 folds, pair 1's update raises
    inner.script = [ValueError, None, RuntimeError]
    with pytest.raises(RuntimeError):
        d.flush()
    assert d.stats()["buffered"] == 4 and d.stats()["rejected"] == 0
    calls = inner.calls
    assert d.flush() == 4  # one batch update of pairs 1..4
    assert inner.calls == calls + 1
    assert d.compute() == reference(5)  # pair 0 folded exactly once


class FailingMergeAUROC(AUROC):
    """AUROC whose merge takes at most ``budget`` other states in all and raises, before merging
    anything, on a call that would exceed it (an all-or-nothing wrapped merge failing after the
    wrapper's checks)."""

    budget = 1

    def merge(self, *others: Any) -> Any:  # type: ignore[override]
        if len(others) > FailingMergeAUROC.budget:
            raise MemoryError("injected failure")
        FailingMergeAUROC.budget -= len(others)
        return super().merge(*others)


def test_failed_wrapped_merge_changes_nothing() -> None:
    """A wrapped merge that fails at the second worker leaves the wrapper as it was: metric,
    pending predictions and counters (no half-applied merge)."""
    target = DelayedLabels(FailingMergeAUROC())
    target.predict([1, 2], [0.2, 0.7])
    target.label([1], [0])
    workers = []
    for offset in (10, 20):
        worker = DelayedLabels(FailingMergeAUROC())
        worker.predict([offset, offset + 1, offset + 2], [0.1, 0.8, 0.4])
        worker.label([offset, offset + 1], [0, 1])
        workers.append(worker)
    FailingMergeAUROC.budget = 1  # the first worker's metric merges, the second's fails
    before = (dumps(target), target.stats)
    with pytest.raises(MemoryError):
        target.merge(*workers)
    assert (dumps(target), target.stats) == before
