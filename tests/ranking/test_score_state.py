"""The score-state protocol: both implementations answer the same questions the same way.

The exact sorted buffer and the bins (exact while every bin is one distinct score) must give the
counts of scikit-learn's ROC curve and its AUROC; coarse bins must give certified intervals that
hold the exact values.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

import streammetrics as sm
from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.protocol import ScoreState
from streammetrics._scores.thresholds import average_precision_certified


def _states(max_bytes: int) -> list[ScoreState]:
    return [SortedScores("binary"), BinnedScores("binary", max_bytes=max_bytes)]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 200),
    st.integers(0, 2**32 - 1),
    st.sampled_from([3, 20, 1000]),
    st.booleans(),
)
def test_exact_states_match_sklearn(n: int, seed: int, distinct: int, weighted: bool) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = rng.integers(0, distinct, n) / distinct
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    ref_auc = roc_auc_score(y, s, sample_weight=w)
    ref_ap = average_precision_score(y, s, sample_weight=w)
    for state in _states(1 << 20):
        state.apply(state.prepare(y, s, w))
        assert state.is_exact and state.column_exact(0)
        c = state.counts(0)
        assert not c.binned
        np.testing.assert_array_equal(c.thresholds, thr[1:])
        np.testing.assert_allclose(c.tps / c.total_pos, tpr[1:], rtol=1e-12)
        np.testing.assert_allclose(c.fps / c.total_neg, fpr[1:], rtol=1e-12)
        v, lo, hi = state.auroc(0)
        assert lo == v == hi and abs(v - ref_auc) <= 1e-12
        assert state.pooled_auroc() == (v, v, v)
        ap, ap_lo, ap_hi = average_precision_certified(state.counts(0, positive_thresholds=True))
        assert ap_lo == ap == ap_hi and abs(ap - ref_ap) <= 1e-12
        np.testing.assert_allclose(state.support(), [float(np.sum(y if w is None else w * y))])


@settings(max_examples=30, deadline=None)
@given(st.integers(50, 3000), st.integers(0, 2**32 - 1))
def test_coarse_bins_certify_the_exact_values(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = rng.normal(size=n) + y
    exact, binned = _states(1024)
    for state in (exact, binned):
        state.apply(state.prepare(y, s))
    ref_auc = roc_auc_score(y, s)
    v, lo, hi = binned.auroc(0)
    assert lo <= ref_auc + 1e-12 and ref_auc <= hi + 1e-12 and lo <= v <= hi
    assert exact.auroc(0)[0] == ref_auc or abs(exact.auroc(0)[0] - ref_auc) <= 1e-12
    ref_ap = average_precision_score(y, s)
    _, ap_lo, ap_hi = average_precision_certified(binned.counts(0, positive_thresholds=True))
    assert ap_lo - 1e-12 <= ref_ap <= ap_hi + 1e-12
    # the binned counts are exact at their thresholds (score >= edge)
    c = binned.counts(0)
    for t, tp, fp in zip(c.thresholds, c.tps, c.fps, strict=True):
        assert tp == np.sum((s >= t) & (y == 1)) and fp == np.sum((s >= t) & (y == 0))


def test_pair_level_view_is_a_declared_capability() -> None:
    """The exact buffer offers its pair-level view (its pair counts give its AUROC); the bins
    offer none, and the readouts that need individual scores are refused with a ValueError."""
    rng = np.random.default_rng(7)
    y, s = rng.integers(0, 3, 60), rng.random((60, 3))
    exact = SortedScores("multiclass", 3)
    exact.apply(exact.prepare(y, s))
    pairs = exact.pair_scores()
    assert pairs is exact
    u2, tot = pairs.u2(), pairs.totals()
    for c in range(3):
        P = tot[c, pairs.pos_group(c)]
        assert int(u2[c].sum()) / (2 * int(P) * int(tot[c].sum() - P)) == exact.auroc(c)[0]
    pv, pw, nv, nw = pairs.column(0)
    assert pw is None and nw is None and pv.shape[0] == (y == 0).sum() and nv.shape[0] == (y != 0).sum()
    binned = BinnedScores("multiclass", 3, max_bytes=4096)
    binned.apply(binned.prepare(y, s))
    assert binned.pair_scores() is None
    with pytest.raises(ValueError, match="interval: DeLong's interval needs the exact state"):
        sm.AUROC(max_bytes=4096).update(y % 2, s[:, 0]).interval()
