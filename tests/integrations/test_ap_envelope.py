"""The interpolated / 11-point AP of score ranges (``_engines/ap_envelope``) against the single
process's :func:`average_precision` over the whole curve: any score edges (ranges without a
positive, ranges whose positives all weigh 0), weights (zero too), ties -- within 1e-12."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._engines import ap_envelope
from streammetrics._scores.thresholds import ThresholdCounts, average_precision


def _counts(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> ThresholdCounts:
    """The counts at the distinct positive scores, decreasing, summed from the top as the exact
    state sums them (a zero-weight tail leaves the count equal to the total, exactly)."""
    order = np.argsort(-p, kind="stable")
    ps, pos = p[order], np.cumsum(np.where(y[order] == 1, w[order], 0.0))
    neg = np.cumsum(np.where(y[order] == 0, w[order], 0.0))
    thr = np.unique(p[y == 1])[::-1]
    last = np.searchsorted(-ps, -thr, "right") - 1  # the last row scoring >= each threshold
    total_pos, total_neg = (float(pos[-1]), float(neg[-1])) if p.shape[0] else (0.0, 0.0)
    up = np.argsort(p[y == 1], kind="stable")  # the positives in ascending score order
    runs = (p[y == 1][up], w[y == 1][up])
    return ThresholdCounts(thr, pos[last], neg[last], total_pos, total_neg, pos_runs=runs)


def _one_process(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    got = sm.MetricSet(i=sm.AveragePrecision(interpolated=True), e=sm.AveragePrecision(eleven_point=True))
    values = got.update(y, p, sample_weight=w).compute()
    return values["i"], values["e"]


def _by_ranges(y: np.ndarray, p: np.ndarray, w: np.ndarray, edges: list[float]) -> tuple[float, float]:
    """The rows cut at score ``edges`` into ranges [e_r-1, e_r), each summarised alone from its
    own counts and the weight above it, combined from the lowest range up."""
    cuts = [-np.inf, *sorted(edges), np.inf]
    P = float(w[y == 1].sum())
    parts, positives = [], []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        inside = (p >= lo) & (p < hi)
        above = p >= hi
        local = _counts(y[inside], p[inside], w[inside])
        parts.append(ap_envelope.range_part(local, (float(w[above & (y == 1)].sum()),
                                                    float(w[above & (y == 0)].sum())), P))
        positives.append(local.total_pos)
    return ap_envelope.combine(parts, positives)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 10**6), decimals=st.integers(1, 4),
       weights=st.sampled_from(["unit", "real", "zeros", "integer"]), share=st.sampled_from([0.05, 0.5, 0.95]),
       data=st.data())
def test_ranges_give_the_one_process_readouts(n: int, seed: int, decimals: int, weights: str, share: float,
                                              data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < share).astype(np.int64)
    p = np.round(rng.random(n), decimals)
    w = {"unit": np.ones(n), "real": rng.random(n) + 0.01, "integer": rng.integers(1, 5, n).astype(float),
         "zeros": np.where(rng.random(n) < 0.3, 0.0, rng.random(n))}[weights]
    counts = _counts(y, p, w)
    if counts.total_pos <= 0:
        return
    edges = data.draw(st.lists(st.sampled_from(sorted(set(p.tolist())) + [-1.0, 2.0]), max_size=6))
    interp, eleven = _by_ranges(y, p, w, edges)
    want = _one_process(y, p, w)
    assert interp == pytest.approx(want[0], rel=1e-12, abs=1e-15)
    assert eleven == pytest.approx(want[1], rel=1e-12, abs=1e-15)


def test_empty_ranges_and_a_zero_weight_top_threshold() -> None:
    y = np.array([1, 1, 0, 1, 0, 0, 1])
    p = np.array([0.9, 0.8, 0.8, 0.5, 0.4, 0.3, 0.1])
    w = np.array([0.0, 1.0, 2.0, 1.0, 1.0, 0.5, 3.0])
    for edges in ([], [0.2, 0.85], [0.5], [0.35, 0.45, 0.9], [0.05, 0.95]):
        assert _by_ranges(y, p, w, edges) == pytest.approx(_one_process(y, p, w), rel=1e-12)
    empty = ThresholdCounts(np.zeros(0), np.zeros(0), np.zeros(0), 0.0, 3.0)
    part = ap_envelope.range_part(empty, (0.0, 0.0), 2.0)
    assert part is ap_envelope.NONE and (part.levels == -1).all()
    assert ap_envelope.combine([part], [0.0]) == (0.0, 0.0)
    assert math.isnan(average_precision(empty, interpolated=True))  # the caller's nan for P = 0
