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
* per level l < 1, the best precision among its thresholds whose recall reaches l; for l = 1,
  the best precision among its thresholds above which lies all of its positive weight (compared
  in the range's own sums, exactly: recall 1 is reached there when no positive weight lies in a
  lower range, which the root knows -- the range's recall, offset by float sums, may miss 1 by
  a rounding).

A range whose positives all weigh 0 still has thresholds (of precision P / (P + negatives
above)), which bound the envelope of the ranges above it: it sends its part too.

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
    #: per 11-point level, the range's best precision reaching it (-1: none); the last, recall
    #: 1: the best at or after its first threshold above which lies all its positive weight
    levels: np.ndarray


#: The part of a range without a positive score.
NONE = EnvelopePart(np.zeros(0), np.zeros(0), np.full(LEVELS.shape[0], -1.0))


def range_part(local: ThresholdCounts, above: tuple[float, float], P: float) -> EnvelopePart:
    """The part of a range whose counts at its distinct positive scores (decreasing) are
    ``local`` (its own sums: ``local.total_pos`` its positive weight), given the positive and
    negative weight ``above`` it and the total positive weight P. O(T) for T thresholds."""
    if P <= 0 or local.tps.shape[0] == 0:
        return NONE
    tps, fps = local.tps + above[0], local.fps + above[1]
    ps = tps + fps
    precision = np.divide(tps, ps, out=np.zeros_like(tps), where=ps != 0)
    suffix = np.maximum.accumulate(precision[::-1])[::-1]
    recall = tps / P
    gain = np.diff(recall, prepend=above[0] / P)
    starts = np.flatnonzero(np.concatenate([[True], suffix[1:] != suffix[:-1]]))
    reach = np.searchsorted(tps * 10.0, LEVELS[:-1] * P, "left")  # the first threshold reaching l
    complete = int(np.searchsorted(local.tps, local.total_pos, "left"))  # all its weight above
    reach = np.append(reach, complete)
    levels = np.where(reach < tps.shape[0], suffix[np.minimum(reach, tps.shape[0] - 1)], -1.0)
    return EnvelopePart(suffix[starts], np.add.reduceat(gain, starts), levels)


def combine(parts: Sequence[EnvelopePart], positives: Sequence[float]) -> tuple[float, float]:
    """(interpolated AP, 11-point AP) from the ranges' parts and their positive weights, in
    *increasing* score order (the root): recall 1 from the lowest range holding positive
    weight and the ranges below it. Callers give nan for P = 0 themselves. O(sum of the parts'
    sizes)."""
    best = 0.0  # M: the best precision at the recall below the current range (none yet: 0)
    total = 0.0
    levels = np.zeros(LEVELS.shape[0])
    last = LEVELS.shape[0] - 1
    complete = True  # no positive weight below the current range
    for part, pos in zip(parts, positives, strict=True):
        if part.values.shape[0]:
            total += float(np.dot(part.masses, np.maximum(part.values, best)))
            best = max(best, float(part.values[0]))
        np.maximum(levels[:last], part.levels[:last], out=levels[:last])
        if complete:
            levels[last] = max(levels[last], float(part.levels[last]))
        complete = complete and not pos > 0
    return max(0.0, total), float(levels.mean())
