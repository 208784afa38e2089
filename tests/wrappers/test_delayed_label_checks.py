"""DelayedLabels with batched folding checks every labelled pair at ``label`` time: a pair the
metric would reject raises there (nothing applied) and is never counted as ``rejected`` when
the buffer folds -- also for rows of scores whose values lie inside ranges that passed before
(a label outside the classes). A row of probabilities that does not sum to 1 is used as given,
with scikit-learn's warning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm


def snapshot(d):
    return d.stats(), list(d._pending), list(d._buffer)


@pytest.mark.parametrize("make", [
    lambda: sm.LogLoss(num_classes=3),
    lambda: sm.CalibrationError(num_classes=3),
    lambda: sm.MetricSet({"acc": sm.Accuracy(num_classes=3), "ll": sm.LogLoss(num_classes=3)}),
])
def test_rejected_label_raises_at_label_time_and_rows_off_one_are_kept(make):
    d = sm.DelayedLabels(make(), batch_size=8)
    d.predict(["a", "b", "c"], np.array([[0.2, 0.3, 0.5], [0.3, 0.3, 0.3], [0.5, 0.3, 0.2]]))
    assert d.label("a", 0) == 1
    before = snapshot(d)
    with pytest.raises(ValueError, match="y_true"):
        d.label("c", 3)  # not a class of three: refused at label time, nothing applied
    assert snapshot(d) == before
    # a row summing to 0.9 is used as given, as scikit-learn uses it (with its warning)
    with pytest.warns(UserWarning, match="do not sum to one"):
        assert d.label("b", 0) == 1
        d.flush()
    assert d.label("c", 0) == 1
    d.flush()
    assert d.stats()["rejected"] == 0 and d.stats()["labelled"] == 3
    direct = make()
    with pytest.warns(UserWarning, match="do not sum to one"):
        direct.update([0, 0, 0], [[0.2, 0.3, 0.5], [0.3, 0.3, 0.3], [0.5, 0.3, 0.2]])
    assert d.compute() == direct.compute()


@pytest.mark.filterwarnings("ignore:The y_prob values do not sum to one")
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.2, 0.3, 0.5, 0.25, 0.45]),
                          st.sampled_from([0.2, 0.3, 0.5, 0.25, 0.45])), min_size=1, max_size=25))
def test_label_raises_exactly_when_the_metric_rejects(rows):
    d = sm.DelayedLabels(sm.LogLoss(num_classes=3), batch_size=5)
    scores = np.array([[a, b, 1.0 - a - b if i % 3 else 0.3] for i, (_, a, b) in enumerate(rows)])
    d.predict(list(range(len(rows))), scores)
    accepted = 0
    for i, (y, _, _) in enumerate(rows):
        try:
            sm.LogLoss(num_classes=3).update([y], scores[i:i + 1])
            ok = True
        except ValueError:
            ok = False
        if ok:
            assert d.label(i, y) == 1
            accepted += 1
        else:
            with pytest.raises(ValueError):
                d.label(i, y)
    d.flush()
    assert d.stats()["rejected"] == 0 and d.stats()["labelled"] == accepted
