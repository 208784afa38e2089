"""Reads interleaved with updates, merges and save / load keep the exact values (hypothesis).

The exact buffer keeps AUROC's pair count ``u2`` current from its first read on (each folded
batch ranked against the stored runs) and AP's counts at the distinct positive scores, and
recomputes both after a load. Whatever the order of updates, reads, merges of other states and
save / load round trips -- with tied scores, float weights and zero weights, on the numpy and
the compiled kernels -- every read equals scikit-learn on the rows seen so far (1e-12), and an
unweighted AUROC read equals, bit for bit, the read of one state fed every row at once.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score
from test_ranking_properties import small_capacities

import streammetrics as sm
from streammetrics._scores.exact.merge_count import compiled_kernels, kernels

_PATHS = [False, True] if kernels() is not None else [False]
_OPS = st.lists(st.sampled_from(["batch", "batch", "tied", "weighted", "zero", "read", "read", "merge", "load"]),
                min_size=1, max_size=20)


def _batch(rng: np.random.Generator, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    n = int(rng.integers(0, 60))
    y = (rng.random(n) < 0.4).astype(np.int64)
    s = rng.normal(size=n) + y
    if op in ("tied", "zero"):
        s = np.round(s, 0) / 2  # few distinct scores: ties within the batch and with the stored ones
    w = None
    if op == "weighted":
        w = rng.random(n) * 2
    elif op == "zero":
        w = rng.integers(0, 3, n).astype(np.float64)  # zero weights are dropped, as scikit-learn does
    return y, s, w


def _check(auroc: sm.AUROC, ap: sm.AveragePrecision, ys: list, ss: list, ws: list) -> None:
    y, s, w = np.concatenate(ys), np.concatenate(ss), np.concatenate(ws)
    live = w > 0
    y, s, w = y[live], s[live], w[live]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # nan before both classes came
        got_auroc, got_ap = float(auroc.compute()), float(ap.compute())
    if 0 < y.sum() < y.shape[0]:
        np.testing.assert_allclose(got_auroc, roc_auc_score(y, s, sample_weight=w), rtol=1e-12, atol=1e-12)
    if y.sum() > 0:
        np.testing.assert_allclose(got_ap, average_precision_score(y, s, sample_weight=w), rtol=1e-12,
                                   atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ops=_OPS, small=st.booleans(), compiled=st.sampled_from(_PATHS))
def test_reads_interleaved_with_updates_merges_and_loads_stay_exact(seed, ops, small, compiled):
    rng = np.random.default_rng(seed)
    auroc, ap = sm.AUROC(), sm.AveragePrecision()
    ys: list[np.ndarray] = [np.zeros(0, np.int64)]
    ss: list[np.ndarray] = [np.zeros(0)]
    ws: list[np.ndarray] = [np.zeros(0)]
    with small_capacities(small), compiled_kernels(compiled, min_size=0):
        for op in ops:
            if op == "read":
                _check(auroc, ap, ys, ss, ws)
            elif op == "load":
                auroc = sm.AUROC.from_state_dict(auroc.state_dict())
                ap = sm.AveragePrecision.from_state_dict(ap.state_dict())
            else:
                y, s, w = _batch(rng, op)
                if op == "merge":  # the batch arrives as another state, read or not
                    other_auroc, other_ap = sm.AUROC().update(y, s), sm.AveragePrecision().update(y, s)
                    if rng.random() < 0.5:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
                            other_auroc.compute()
                            other_ap.compute()
                    auroc.merge(other_auroc)
                    ap.merge(other_ap)
                else:
                    auroc.update(y, s, sample_weight=w)
                    ap.update(y, s, sample_weight=w)
                ys.append(y)
                ss.append(s)
                ws.append(np.ones(y.shape[0]) if w is None else w)
            auroc._state.check_invariants()
        _check(auroc, ap, ys, ss, ws)
        w_all = np.concatenate(ws)
        if (w_all == 1).all() and 0 < np.concatenate(ys).sum() < w_all.shape[0]:
            # unit weights: u2 is an exact integer, the read one correctly rounded division
            once = sm.AUROC().update(np.concatenate(ys), np.concatenate(ss))
            assert float(auroc.compute()) == float(once.compute())


@pytest.mark.parametrize("compiled", _PATHS)
def test_reads_after_every_batch_of_a_long_stream_equal_sklearn(compiled):
    """Enough batches for the runs to take several sizes (merges, coarse indexes, busy groups):
    AUROC and AP read after each equal scikit-learn on the prefix."""
    rng = np.random.default_rng(7)
    n, b = 6000, 150
    y = (rng.random(n) < 0.1).astype(np.int64)
    s = np.round(rng.normal(size=n) + 0.5 * y, 2)
    auroc, ap = sm.AUROC(), sm.AveragePrecision()
    with small_capacities(True), compiled_kernels(compiled, min_size=0):
        for i in range(0, n, b):
            auroc.update(y[i:i + b], s[i:i + b])
            ap.update(y[i:i + b], s[i:i + b])
            yp, sp = y[:i + b], s[:i + b]
            if 0 < yp.sum() < yp.shape[0]:
                assert abs(float(auroc.compute()) - roc_auc_score(yp, sp)) <= 1e-12
                assert abs(float(ap.compute()) - average_precision_score(yp, sp)) <= 1e-12
        auroc._state.check_invariants()
