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
* per level 0 < l < 1, the best precision among its thresholds that surely reach it (float
  recall further above l than any summation order's rounding:
  :func:`~streammetrics._scores.levels.windows` with a margin of 2^-14 P, room for 2^34
  rows), and -- weighted -- the thresholds within that margin of a level (the candidates:
  level, best precision at or after it, its exact weight from the top of the range) with the
  range's exact positive weight (:func:`~streammetrics._scores.levels.exact_sums`, as float
  expansions). The root, adding the ranges' exact weights, decides each candidate exactly
  (10 TP >= l P in exact sums): the levels one process decides
  (:func:`~streammetrics._scores.levels.level_reach`), in any order of summation. Unit weights
  need no candidate: their float sums are exact. Level 0: its first threshold; level 1: the
  best precision among its thresholds above which lies all of its positive weight (those
  below weigh 0, read exactly: recall 1 is reached there when no positive weight lies in a
  lower range, which the root knows).

A range whose positives all weigh 0 still has thresholds (of precision P / (P + negatives
above)), which bound the envelope of the ranges above it: it sends its part too.

The root (:func:`combine`) walks the ranges from the lowest scores up, carrying M. Equal to the
single-process value up to float rounding: the same maxima over the same thresholds (the 11-point
levels decided exactly); the sum's terms added in another order (1e-12 relative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from streammetrics._scores import levels as exact_levels
from streammetrics._scores.levels import LEVELS
from streammetrics._scores.thresholds import ThresholdCounts

#: The 11-point margin of a range: float recall within 2^-14 of a level is decided exactly.
MARGIN = 2.0**-14


@dataclass(frozen=True)
class EnvelopePart:
    """A range's share of the interpolated and 11-point AP (:func:`range_part`)."""

    values: np.ndarray  #: the distinct suffix maxima of the range's precision, decreasing
    masses: np.ndarray  #: the recall gained where each holds (sums to the range's recall)
    #: per 11-point level, the range's best precision surely reaching it (-1: none); the last,
    #: recall 1: the best at or after its first threshold above which lies all its positive
    #: weight (those below weigh 0: exact)
    levels: np.ndarray
    #: weighted: the range's exact positive weight and its candidates (thresholds within the
    #: margin of a level), flat: ``[k, e_1..e_k, (level, precision, m, c_1..c_m)...]`` -- the
    #: expansions (:func:`~streammetrics._scores.levels.to_expansion`) of the weight and of
    #: each candidate's weight from the top of the range; empty: unit weights (none needed)
    exact: np.ndarray = field(default_factory=lambda: np.zeros(0))


#: The part of a range without a positive score.
NONE = EnvelopePart(np.zeros(0), np.zeros(0), np.full(LEVELS.shape[0], -1.0))


def range_part(local: ThresholdCounts, above: tuple[float, float], P: float) -> EnvelopePart:
    """The part of a range whose counts at its distinct positive scores (decreasing) are
    ``local`` (its own sums: ``local.total_pos`` its positive weight; ``local.pos_runs`` its
    weights where weighted), given the positive and negative weight ``above`` it and the total
    positive weight P. O(T) for T thresholds, plus O(n_r) for the exact sums (weighted, a
    threshold near a level)."""
    if P <= 0 or local.tps.shape[0] == 0:
        return NONE
    tps, fps = local.tps + above[0], local.fps + above[1]
    ps = tps + fps
    precision = np.divide(tps, ps, out=np.zeros_like(tps), where=ps != 0)
    suffix = np.maximum.accumulate(precision[::-1])[::-1]
    recall = tps / P
    gain = np.diff(recall, prepend=above[0] / P)
    starts = np.flatnonzero(np.concatenate([[True], suffix[1:] != suffix[:-1]]))
    runs = local.pos_runs
    a, b = exact_levels.windows(tps, P, 0.0 if runs is None else P * MARGIN)
    if runs is None:  # unit weights: exact float sums, the first reaching is sure
        whole = int(np.searchsorted(local.tps, local.total_pos, "left"))  # all its weight above
        reach = np.concatenate([[0], a, [whole]])
        exact = np.zeros(0)
    else:
        reach = np.concatenate([[0], b, [exact_levels.complete(local.thresholds, runs)]])
        exact = _candidates(runs, local.thresholds, (a, b), suffix)
    levels = np.where(reach < tps.shape[0], suffix[np.minimum(reach, tps.shape[0] - 1)], -1.0)
    return EnvelopePart(suffix[starts], np.add.reduceat(gain, starts), levels, exact)


def _candidates(runs: tuple[np.ndarray, np.ndarray], thresholds: np.ndarray,
                windows: tuple[np.ndarray, np.ndarray], suffix: np.ndarray) -> np.ndarray:
    """:attr:`EnvelopePart.exact` of a weighted range: its exact positive weight, then per inner
    level each threshold i in its window ``[a_l, b_l)`` as (l, ``suffix[i]``, its exact weight from the
    top; :func:`~streammetrics._scores.levels.tops`). O(n_r) numpy work for the sums (one pass),
    O(candidates) integers."""
    inner = exact_levels.INNER.tolist()
    a, b = windows
    spans = [(lv, x, y) for lv, x, y in zip(inner, a.tolist(), b.tolist(), strict=True) if x < y]
    near = sorted({i for _, x, y in spans for i in range(x, y)})
    if near:
        whole, weight = exact_levels.tops(runs, thresholds, near)
    else:
        whole, weight = exact_levels.exact_sums(runs[1], [0, runs[1].shape[0]])[0], {}
    total = exact_levels.to_expansion(whole)
    out: list[float] = [float(len(total)), *total]
    for lv, x, y in spans:
        for i in range(x, y):
            c = exact_levels.to_expansion(weight[i])
            out += [float(lv), float(suffix[i]), float(len(c)), *c]
    return np.array(out, dtype=np.float64)


def _read_exact(exact: np.ndarray) -> tuple[int, list[tuple[int, float, int]]]:
    """:attr:`EnvelopePart.exact` read back: (exact positive weight, [(level, precision, exact
    weight from the top)]). O(len)."""
    vals = exact.tolist()
    k = int(vals[0])
    total = exact_levels.from_expansion(vals[1 : 1 + k])
    at, cands = 1 + k, []
    while at < len(vals):
        lv, v, m = int(vals[at]), vals[at + 1], int(vals[at + 2])
        cands.append((lv, v, exact_levels.from_expansion(vals[at + 3 : at + 3 + m])))
        at += 3 + m
    return total, cands


def combine(parts: Sequence[EnvelopePart], positives: Sequence[float]) -> tuple[float, float]:
    """(interpolated AP, 11-point AP) from the ranges' parts and their positive weights, in
    *increasing* score order (the root): recall 1 from the lowest range holding positive
    weight and the ranges below it; weighted, each candidate threshold decides its inner level
    in the ranges' exact weights (P their sum, each range offset by those above it). Callers
    give nan for P = 0 themselves. O(sum of the parts' sizes)."""
    best = 0.0  # M: the best precision at the recall below the current range (none yet: 0)
    total = 0.0
    levels = np.zeros(LEVELS.shape[0])
    last = LEVELS.shape[0] - 1
    whole = True  # no positive weight below the current range (a sum of weights > 0: exact)
    for part, pos in zip(parts, positives, strict=True):
        if part.values.shape[0]:
            total += float(np.dot(part.masses, np.maximum(part.values, best)))
            best = max(best, float(part.values[0]))
        np.maximum(levels[:last], part.levels[:last], out=levels[:last])
        if whole:
            levels[last] = max(levels[last], float(part.levels[last]))
        whole = whole and not pos > 0
    if any(part.exact.shape[0] for part in parts):
        read = [_read_exact(part.exact) if part.exact.shape[0] else (0, []) for part in parts]
        P = sum(t for t, _ in read)
        top = P  # exact positive weight at or above the current range (walking up)
        for weight, cands in read:
            top -= weight
            for lv, v, tp in cands:
                if exact_levels.reaches(top + tp, P, lv):
                    levels[lv] = max(levels[lv], v)
    return max(0.0, total), float(levels.mean())
