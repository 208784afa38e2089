"""Label-ranking accumulators against scikit-learn: random multilabel data with tied scores and
weights, streamed in random batches, merged and saved; bad input and hostile files."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics import functional as F
from streammetrics.ranking.label_ranking import label_ranking_values

skm = pytest.importorskip("sklearn.metrics")

PAIRS = [(sm.CoverageError, skm.coverage_error),
         (sm.LabelRankingAveragePrecision, skm.label_ranking_average_precision_score),
         (sm.LabelRankingLoss, skm.label_ranking_loss)]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), labels=st.integers(2, 7), levels=st.integers(1, 6), weighted=st.booleans(),
       seed=st.integers(0, 2**32 - 1), pieces=st.integers(1, 4))
def test_streamed_merged_saved_equal_sklearn(n, labels, levels, weighted, seed, pieces):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (n, labels))
    s = rng.integers(0, levels, (n, labels)) / levels  # ties within rows
    w = rng.random(n) + 0.01 if weighted else None
    cuts = np.sort(rng.integers(0, n + 1, pieces - 1))
    for cls, oracle in PAIRS:
        parts = []
        for a, b in zip(np.r_[0, cuts], np.r_[cuts, n], strict=True):
            m = cls(labels)
            if b > a:
                m.update(y[a:b], s[a:b], sample_weight=None if w is None else w[a:b])
            parts.append(sm.loads(sm.dumps(m)))
        merged = parts[0].merge(*parts[1:])
        want = oracle(y, s, sample_weight=w)
        assert merged.compute() == pytest.approx(want, rel=1e-12, abs=1e-12)
        fn = getattr(F, oracle.__name__)
        assert fn(y, s, sample_weight=w) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_one_sample_and_shared_state():
    ms = sm.MetricSet(c=sm.CoverageError(), a=sm.LabelRankingAveragePrecision(), loss=sm.LabelRankingLoss())
    assert len(ms.groups) == 1
    ms.update([1, 0, 1], [0.2, 0.9, 0.4]).update([[0, 1, 0]], [[0.1, 0.3, 0.2]])
    y, s = [[1, 0, 1], [0, 1, 0]], [[0.2, 0.9, 0.4], [0.1, 0.3, 0.2]]
    assert ms.compute() == {"c": skm.coverage_error(y, s), "a": skm.label_ranking_average_precision_score(y, s),
                            "loss": skm.label_ranking_loss(y, s)}


def test_per_sample_values_by_definition():
    """Against the written definition, pair by pair (module docstring), on every 0/1 row of 4
    labels with tied scores."""
    rng = np.random.default_rng(1)
    rows = np.array([[(i >> b) & 1 for b in range(4)] for i in range(16)])
    s = rng.integers(0, 3, rows.shape).astype(float)
    cover, lrap, loss = label_ranking_values(rows, s)
    for i, (y, sc) in enumerate(zip(rows, s, strict=True)):
        rel = np.flatnonzero(y)
        rank = {j: int((sc >= sc[j]).sum()) for j in range(4)}
        at_least = {j: int((sc[rel] >= sc[j]).sum()) for j in range(4)}
        assert cover[i] == (max(rank[j] for j in rel) if rel.size else 0)
        assert lrap[i] == (1.0 if rel.size in (0, 4) else np.mean([at_least[j] / rank[j] for j in rel]))
        pairs = sum(sc[k] >= sc[j] for j in rel for k in range(4) if k not in rel)
        assert loss[i] == (0.0 if rel.size in (0, 4) else pairs / (rel.size * (4 - rel.size)))


@pytest.mark.parametrize(("args", "message"), [
    (([[0, 2, 1]], [[0.1, 0.2, 0.3]]), "y_true: labels must be 0 or 1; first invalid value 2"),
    (([[0, 1, 1]], [[0.1, np.nan, 0.3]]), "y_score"),
    (([[0, 1, 1]], [[0.1, 0.2]]), "y_score: expected shape (1, 3) like y_true"),
    (([[0, 1]], [[0.1, 0.2]]), "y_true: expected 3 labels per row, got 2"),
    (([0, 1, 0], [[0.1, 0.2, 0.3]]), "y_true: expected (n, L) 0/1 label indicators, got shape (3,)"),
])
def test_bad_batches_refused_state_unchanged(args, message):
    m = sm.LabelRankingLoss(3).update([[1, 0, 1]], [[0.3, 0.2, 0.1]])
    before = sm.dumps(m)
    with pytest.raises(ValueError) as info:
        m.update(*args)
    assert message in str(info.value)
    assert sm.dumps(m) == before


def test_hostile_file_refused():
    m = sm.LabelRankingAveragePrecision().update([[1, 0, 1]], [[0.3, 0.2, 0.1]])
    state = m.state_dict()
    state["sums"] = np.array([1.0, 2.0, 5.0, 0.0])  # LRAP sum above the total weight
    with pytest.raises(ValueError, match="exceed their total weight"):
        sm.LabelRankingAveragePrecision.from_state_dict(state)
    with pytest.raises(ValueError, match="num_labels"):
        sm.CoverageError(0)


def test_empty_is_undefined():
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.CoverageError().compute())
