"""The cumulative weights of a weighted run are built only when pair counting reads them: an
AP / curve read leaves them unbuilt, and copies, merges and save/load of such a state still give
scikit-learn's weighted AUROC and average precision."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

from streammetrics._scores.exact.buffer import SortedScores


def _state(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> SortedScores:
    st_ = SortedScores("binary")
    st_.apply(st_.prepare(y, s, w))
    return st_


def _unbuilt(state: SortedScores) -> bool:
    return all(cw is None for row in state._groups for g in row for cw in g.cws)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 3000), m=st.integers(2, 3000))
def test_curve_reads_leave_cumulative_weights_unbuilt_and_pairs_still_count(seed: int, n: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    y = np.r_[0, 1, rng.integers(0, 2, n + m - 2)]
    s = np.round(rng.normal(size=n + m) + y, 1)
    w = rng.random(n + m) + 0.01
    a = _state(y[:n], s[:n], w[:n])
    b = _state(y[n:], s[n:], w[n:])
    for st_ in (a, b):
        st_.counts(0, positive_thresholds=True)
        st_.counts(0)
        assert _unbuilt(st_)
    c = a.copy()
    assert isinstance(c, SortedScores)
    c.merge(b)
    loaded = SortedScores("binary")
    loaded.load_arrays(c.arrays())
    ref_auc = roc_auc_score(y, s, sample_weight=w) if len(set(y.tolist())) == 2 else np.nan
    ref_ap = average_precision_score(y, s, sample_weight=w)
    for st_ in (c, loaded):
        c_ap = st_.counts(0, positive_thresholds=True)
        tps, fps = c_ap.tps, c_ap.fps
        ap = float(np.sum(np.diff(np.r_[0.0, tps]) / c_ap.total_pos * tps / (tps + fps)))
        np.testing.assert_allclose(ap, ref_ap, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(st_.auroc(0)[0], ref_auc, rtol=1e-12, atol=1e-12)
        st_.check_invariants()
    # the first state, untouched by the copy's reads, still counts its own pairs
    np.testing.assert_allclose(a.auroc(0)[0], roc_auc_score(y[:n], s[:n], sample_weight=w[:n])
                               if len(set(y[:n].tolist())) == 2 else np.nan, rtol=1e-12, atol=1e-12)
