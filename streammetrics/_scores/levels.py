"""Exact recall levels of the 11-point AP: which thresholds reach recall l / 10.

Definition (docs/definitions/ranking.md): threshold i (thresholds in decreasing score order)
reaches level l in {0, 1, ..., 10} when 10 TP_i >= l P, with TP_i the weight of the positives
scoring >= t_i and P the total positive weight, both exact sums of the given float64 weights
(real arithmetic). Float sums of fractional weights (multiples of 0.1, of 1/3...) land a rounding
above or below a level they reach exactly, and which side depends on the order of the additions
(one process sums from the top, score ranges add their offsets): a whole level's precision
could flip. So the float comparison decides only where the float sums lie further from the
level than their rounding error can reach (a ``margin``); the few thresholds within it are
decided exactly, with the weights' exact sums as integers in units of 2^-``UNIT_BITS``
(:func:`exact_sums`: every finite float64 is such an integer, so the sums are exact in any
order and any grouping -- what lets score ranges and one process agree).

Unit weights need none of it: their float sums are exact integers (below 2^53), so the float
comparison is the exact one (trec_eval's unweighted 11-point AP, bit for bit).

Exact sums travel between processes as float expansions (:func:`to_expansion`: a few floats
whose real sum is the integer's value; :func:`from_expansion` reads them back).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The recall levels of the 11-point AP: 0, 0.1, ..., 1 as tenths (compared as 10 TP >= l P).
LEVELS = np.arange(11)
#: The levels decided by sums: 0 is reached by every threshold, 10 where no weight lies below.
INNER = LEVELS[1:-1]
#: Every finite float64 is an integer multiple of 2^-UNIT_BITS (53-bit significands, exponents
#: down to the subnormals' 2^-1074), and so is every sum of them.
UNIT_BITS = 1127
#: Elements per block of :func:`exact_sums`: a bin of 26-bit halves sums exactly in float64.
_BLOCK = 1 << 25


def exact_sums(w: np.ndarray, cuts: Sequence[int] | np.ndarray) -> list[int]:
    """The exact sums of ``w[cuts[k]:cuts[k + 1]]`` for each k, as integers in units of
    2^-:data:`UNIT_BITS` (their real values times 2^UNIT_BITS).

    Each finite weight is its 53-bit integer significand times a power of two; the significands
    are split in two 26-bit halves and summed per (segment, exponent) by ``np.bincount`` --
    exact in float64 for blocks of fewer than 2^26 elements --, then shifted and added as
    Python integers. ``cuts`` nondecreasing. O(n) numpy work for n = cuts[-1] - cuts[0], plus
    O(segments x distinct exponents) integer additions.
    """
    cuts = np.asarray(cuts, dtype=np.int64)
    n_seg = max(cuts.shape[0] - 1, 0)
    out = [0] * n_seg
    if n_seg == 0:
        return out
    seg_all = np.repeat(np.arange(n_seg), np.diff(cuts))
    part_all = np.asarray(w[int(cuts[0]) : int(cuts[-1])], dtype=np.float64)
    for at in range(0, part_all.shape[0], _BLOCK):
        part, seg = part_all[at : at + _BLOCK], seg_all[at : at + _BLOCK]
        m, e = np.frexp(part)
        mant = np.ldexp(m, 53).astype(np.int64)  # exact: |m| in [1/2, 1)
        e = e.astype(np.int64)
        emin = int(e.min())
        span = int(e.max()) - emin + 1
        key = seg * span + (e - emin)
        hi = np.bincount(key, weights=(mant >> 26).astype(np.float64), minlength=n_seg * span)
        lo = np.bincount(key, weights=(mant & ((1 << 26) - 1)).astype(np.float64), minlength=n_seg * span)
        for k in np.flatnonzero((hi != 0) | (lo != 0)).tolist():
            s, x = divmod(k, span)
            out[s] += ((int(hi[k]) << 26) + int(lo[k])) << (x + emin - 53 + UNIT_BITS)
    return out


def to_expansion(total: int) -> list[float]:
    """A nonnegative exact sum of :func:`exact_sums` as floats whose real sum is its value
    (the largest first; typically 1-3 of them; [] for 0). O(bits / 53)."""
    out: list[float] = []
    while total:
        f = total / (1 << UNIT_BITS)  # correctly rounded (Python's int / int)
        num, den = f.as_integer_ratio()
        total -= num * ((1 << UNIT_BITS) // den)
        out.append(f)
    return out


def from_expansion(floats: Sequence[float] | np.ndarray) -> int:
    """The exact sum of ``floats`` in units of 2^-:data:`UNIT_BITS`: :func:`to_expansion` read
    back. O(len)."""
    total = 0
    for f in np.asarray(floats, dtype=np.float64).tolist():
        num, den = f.as_integer_ratio()
        total += num * ((1 << UNIT_BITS) // den)
    return total


def windows(tps: np.ndarray, P: float, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Per inner level l = 1..9, the thresholds ``[a_l, b_l)`` whose float count ``tps``
    (nondecreasing, total P) lies within ``margin`` of the level: before a_l none reaches it,
    from b_l on all do, whatever the rounding of sums within ``margin``. (Level 0 is reached by
    every threshold, level 10 by those above which lies all the weight: :func:`complete`.)
    O(9 log T)."""
    t10 = tps * 10.0
    target = INNER * P
    return np.searchsorted(t10, target - margin, "left"), np.searchsorted(t10, target + margin, "right")


def complete(thresholds: np.ndarray, runs: tuple[np.ndarray, np.ndarray]) -> int:
    """The first of the decreasing ``thresholds`` at or above which lies all the positive
    weight of ``runs`` (the positives' scores ascending, their weights): those scoring below it
    weigh 0, exactly -- recall 1 without a sum. O(log T), O(n) only when the lowest 64
    positives all weigh 0."""
    v, w = runs
    nz = np.flatnonzero(w[:64])
    if not nz.shape[0]:
        nz = np.flatnonzero(w)
    if not nz.shape[0]:
        return 0
    low = v[int(nz[0])]  # the lowest score of a positive of nonzero weight
    return int(thresholds.shape[0] - np.searchsorted(thresholds[::-1], low, "right"))


def tops(runs: tuple[np.ndarray, np.ndarray], thresholds: np.ndarray,
         near: Sequence[int]) -> tuple[int, dict[int, int]]:
    """(the exact total of the weights of ``runs``, per index i of ``near`` the exact weight of
    the positives scoring >= ``thresholds[i]``), in units of 2^-:data:`UNIT_BITS`: one
    :func:`exact_sums` pass cut at those thresholds. O(n) numpy work, O(len(near) log n)."""
    v, w = runs
    n = w.shape[0]
    starts = np.searchsorted(v, thresholds[list(near)], "left").tolist() if near else []
    cuts = sorted({0, n, *starts})
    seg = exact_sums(w, cuts)
    top = [0] * len(cuts)  # the exact weight from each cut to the top
    for k in range(len(seg) - 1, -1, -1):
        top[k] = top[k + 1] + seg[k]
    at = dict(zip(cuts, top, strict=True))
    return at[0], dict(zip(near, (at[s] for s in starts), strict=True))


def reaches(tp: int, total: int, level: int) -> bool:
    """Whether exact sums ``tp`` of ``total`` reach recall ``level`` / 10: 10 tp >= level total."""
    return 10 * tp >= level * total


def level_reach(tps: np.ndarray, P: float, runs: tuple[np.ndarray, np.ndarray] | None,
                thresholds: np.ndarray) -> np.ndarray:
    """Per level, the first threshold reaching it exactly (``len(tps)``: none), one process.

    ``tps`` the float positive counts at the decreasing ``thresholds``, P their total; ``runs``
    = (the positives' scores ascending, their weights): None for unit weights (the floats are
    exact). Level 0: the first threshold; level 10: :func:`complete`; levels 1-9: the float
    sums are sums of n weights, within (n + 2) 2^-46 P of the exact ones with room to spare
    (the comparison's error is below 20 (n + 2) 2^-53 P), so only thresholds within that of a
    level are summed exactly -- one pass over the weights for them all (:func:`tops`).
    O(9 log T), plus O(n) when a threshold lies that close to a level.
    """
    if runs is None:
        return np.searchsorted(tps * 10.0, LEVELS * P, "left")
    a, b = windows(tps, P, P * (runs[1].shape[0] + 2) * 2.0**-46)
    reach = np.concatenate([[0], b, [complete(thresholds, runs)]])
    spans = [(lv, x, y) for lv, x, y in zip(INNER.tolist(), a.tolist(), b.tolist(), strict=True) if x < y]
    if spans:
        total, tp = tops(runs, thresholds, sorted({i for _, x, y in spans for i in range(x, y)}))
        for lv, x, y in spans:
            reach[lv] = next((i for i in range(x, y) if reaches(tp[i], total, lv)), y)
    return reach
