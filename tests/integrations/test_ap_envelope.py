"""The interpolated / 11-point AP of score ranges (``_engines/ap_envelope``) against the single
process's :func:`average_precision` over the whole curve: any cut of the thresholds into ranges,
weights (zero too), ties, one class, a range without a positive threshold -- within 1e-12."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics._engines import ap_envelope
from streammetrics._scores.thresholds import ThresholdCounts, average_precision


def _counts(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> ThresholdCounts:
    """The global counts at the distinct positive scores, decreasing (the one-process view)."""
    thr = np.unique(p[y == 1])[::-1]
    tps = np.array([w[(p >= t) & (y == 1)].sum() for t in thr])
    fps = np.array([w[(p >= t) & (y == 0)].sum() for t in thr])
    return ThresholdCounts(thr, tps, fps, float(w[y == 1].sum()), float(w[y == 0].sum()))


def _by_ranges(counts: ThresholdCounts, cuts: list[int]) -> tuple[float, float]:
    """The thresholds cut at ``cuts`` (positions, top first), each range summarised alone with
    the recall above it, combined from the lowest range up."""
    bounds = [0, *sorted(set(cuts)), counts.tps.shape[0]]
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        above = counts.tps[a - 1] / counts.total_pos if a else 0.0
        piece = ThresholdCounts(counts.thresholds[a:b], counts.tps[a:b], counts.fps[a:b],
                                counts.total_pos, counts.total_neg)
        parts.append(ap_envelope.range_part(piece, above))
    return ap_envelope.combine(parts[::-1])


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
    t = counts.tps.shape[0]
    cuts = data.draw(st.lists(st.integers(0, t), max_size=6))
    interp, eleven = _by_ranges(counts, cuts)
    assert interp == pytest.approx(average_precision(counts, interpolated=True), rel=1e-12, abs=1e-15)
    assert eleven == pytest.approx(average_precision(counts, eleven_point=True), rel=1e-12, abs=1e-15)


def test_empty_ranges_and_a_zero_weight_top_threshold() -> None:
    y = np.array([1, 1, 0, 1, 0, 0, 1])
    p = np.array([0.9, 0.8, 0.8, 0.5, 0.4, 0.3, 0.1])
    w = np.array([0.0, 1.0, 2.0, 1.0, 1.0, 0.5, 3.0])
    counts = _counts(y, p, w)
    for cuts in ([], [0, 0, 4], [1], [2, 3], [4, 4]):
        interp, eleven = _by_ranges(counts, cuts)
        assert interp == pytest.approx(average_precision(counts, interpolated=True), rel=1e-12)
        assert eleven == pytest.approx(average_precision(counts, eleven_point=True), rel=1e-12)
    empty = ThresholdCounts(np.zeros(0), np.zeros(0), np.zeros(0), 0.0, 3.0)
    part = ap_envelope.range_part(empty, 0.0)
    assert part.values.shape == (0,) and (part.levels == -1).all()
    assert ap_envelope.combine([part]) == (0.0, 0.0)
    assert math.isnan(average_precision(empty, interpolated=True))  # the caller's nan for P = 0
