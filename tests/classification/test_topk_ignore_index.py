"""TopKAccuracy with ``ignore_index``: rows labelled ``ignore_index`` are dropped (through the
shared ``_validation.drop_ignored``) and the rest equals scikit-learn's top_k_accuracy_score,
with weights and tied scores."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import top_k_accuracy_score

import streammetrics as sm
from streammetrics._core.validation import drop_ignored


@pytest.mark.parametrize("seed", range(4))
def test_ignored_rows_are_dropped_as_sklearn_on_the_rest(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, c, k = 200, 5, 2
    y = rng.integers(0, c, n)
    y[rng.random(n) < 0.3] = -1
    scores = rng.integers(0, 4, (n, c)) / 4.0  # ties
    w = rng.random(n) + 0.1
    m = sm.TopKAccuracy(c, k=k, ignore_index=-1)
    for part in np.array_split(np.arange(n), 3):
        m.update(y[part], scores[part], sample_weight=w[part])
    keep = y != -1
    want = top_k_accuracy_score(y[keep], scores[keep], k=k, labels=np.arange(c), sample_weight=w[keep])
    assert abs(m.compute() - want) <= 1e-12


def test_drop_ignored_copies_only_when_rows_leave() -> None:
    y, s, w = np.array([0, 1, 2]), np.zeros((3, 2)), np.ones(3)
    assert all(a is b for a, b in zip(drop_ignored(y, s, w, None), (y, s, w), strict=True))
    assert all(a is b for a, b in zip(drop_ignored(y, s, None, 7), (y, s, None), strict=True))
    y2, s2, w2 = drop_ignored(y, s, w, 1)
    np.testing.assert_array_equal(y2, [0, 2])
    assert s2.shape == (2, 2) and w2 is not None and w2.shape == (2,)
    assert drop_ignored(y, s, None, 1)[2] is None
