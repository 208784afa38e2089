"""Interpolated and 11-point average precision from score ranges, without a range seeing another.

The interpolated AP replaces each precision P_k (thresholds in decreasing score order, recall
R_k increasing) by the envelope E_k = max_{j >= k} P_j, the best precision at recall >= R_k:
AP_interp = sum_k (R_k - R_{k-1}) E_k; the 11-point AP is the mean, over the levels
l = 0, 0.1, ..., 1, of the best precision among the thresholds whose recall reaches l (0 if
none does) -- :func:`streammetrics._scores.thresholds.average_precision`'s definitions.

Cut the thresholds into score ranges (every threshold of a range above every threshold of the
ranges below it). Within range r, with ``s_k`` the best precision of the range's own thresholds
at or after k, E_k = max(s_k, M_r), where M_r is the best precision over all ranges below r (at
higher recall). So a range that knows the weight above it (its counts offset to the global
ones) can send, without knowing M_r:

* its envelope as a step function of M: the distinct values v_1 > v_2 > ... of ``s`` and the
  recall mass m_i carried by each, so that its part of AP_interp is
  ``sum_i m_i max(v_i, M_r)`` (:func:`range_part`: at most one pair per distinct positive
  threshold of the range, typically far fewer);
* per level l, the best precision among its thresholds whose recall reaches l.

The root (:func:`combine`) walks the ranges from the lowest scores up, carrying M. Equal to the
single-process value up to float rounding: the same maxima; the sum's terms added in another
order (1e-12 relative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from streammetrics._scores.thresholds import ThresholdCounts

#: The recall levels of the 11-point AP: 0, 0.1, ..., 1 (as tenths, compared exactly).
LEVELS = np.arange(11)


@dataclass(frozen=True)
class EnvelopePart:
    """A range's share of the interpolated and 11-point AP (:func:`range_part`)."""

    values: np.ndarray  #: the distinct suffix maxima of the range's precision, decreasing
    masses: np.ndarray  #: the recall gained where each holds (sums to the range's recall)
    levels: np.ndarray  #: per 11-point level, the range's best precision reaching it (-1: none)


def range_part(counts: ThresholdCounts, recall_above: float) -> EnvelopePart:
    """The part of range ``counts`` -- its counts at its distinct positive scores, decreasing,
    offset by the weight of the ranges above so that they are the global counts (``total_pos``
    P) -- given ``recall_above``, the recall of the last threshold above the range (0 for the
    top range). O(T) for T thresholds."""
    P = counts.total_pos
    tps, fps = counts.tps, counts.fps
    if P <= 0 or tps.shape[0] == 0:
        return EnvelopePart(np.zeros(0), np.zeros(0), np.full(LEVELS.shape[0], -1.0))
    ps = tps + fps
    precision = np.divide(tps, ps, out=np.zeros_like(tps), where=ps != 0)
    suffix = np.maximum.accumulate(precision[::-1])[::-1]
    recall = tps / P
    gain = np.diff(recall, prepend=recall_above)
    starts = np.flatnonzero(np.concatenate([[True], suffix[1:] != suffix[:-1]]))
    reach = np.searchsorted(tps * 10.0, LEVELS * P, "left")  # the first threshold reaching each level
    levels = np.where(reach < tps.shape[0], suffix[np.minimum(reach, tps.shape[0] - 1)], -1.0)
    return EnvelopePart(suffix[starts], np.add.reduceat(gain, starts), levels)


def combine(parts: Sequence[EnvelopePart]) -> tuple[float, float]:
    """(interpolated AP, 11-point AP) from the ranges' parts in *increasing* score order (the
    root). nan-free: callers give nan for P = 0 themselves. O(sum of the parts' sizes)."""
    best = 0.0  # M: the best precision at the recall below the current range (none yet: 0)
    total = 0.0
    levels = np.zeros(LEVELS.shape[0])
    for part in parts:
        if part.values.shape[0]:
            total += float(np.dot(part.masses, np.maximum(part.values, best)))
            best = max(best, float(part.values[0]))
        np.maximum(levels, part.levels, out=levels)
    return max(0.0, total), float(levels.mean())
