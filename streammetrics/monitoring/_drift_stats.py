"""The drift kernels: PSI and Jensen-Shannon distance over fixed bins, the two-sample KS
statistic and the Wasserstein-1 distance of two weighted samples, and their certified
intervals when either side is known only as bins (definitions: docs/definitions/monitoring.md).

A side is given as ``(low, high, mass)``: ascending arrays, each row a bin whose mass lies
somewhere in the closed interval ``[low, high]`` (an exact side has ``low == high``, one row
per distinct value). Every function on two sides is O((m + n) log(m + n)) for sides of m and
n rows, except :func:`ks_wasserstein_blocks` (two exact sides: O(n + m log n)).
"""

from __future__ import annotations

import math

import numpy as np

#: The floor of both proportions in the PSI (a bin empty on one side gives a finite term).
FLOOR = 1e-4

Side = tuple[np.ndarray, np.ndarray, np.ndarray]


def _proportions(counts: np.ndarray) -> np.ndarray:
    total = float(counts.sum())
    return counts / total if total > 0 else np.full(counts.shape, np.nan)


def psi(ref_counts: np.ndarray, cur_counts: np.ndarray) -> float:
    """Population stability index ``sum (c - r) ln(c / r)`` over bins, both proportions floored
    at :data:`FLOOR`. nan when either side is empty. O(bins)."""
    r, c = _proportions(ref_counts), _proportions(cur_counts)
    if np.isnan(r).any() or np.isnan(c).any():
        return math.nan
    r, c = np.maximum(r, FLOOR), np.maximum(c, FLOOR)
    return float(np.sum((c - r) * np.log(c / r)))


def _rel_entr(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``p ln(p / q)`` with ``0 ln(0 / q) = 0`` (scipy.special.rel_entr for q > 0)."""
    out = np.zeros(p.shape)
    pos = p > 0
    out[pos] = p[pos] * np.log(p[pos] / q[pos])
    return out


def js_distance(ref_counts: np.ndarray, cur_counts: np.ndarray) -> float:
    """Jensen-Shannon distance, base 2 (``scipy.spatial.distance.jensenshannon(r, c, base=2)``)
    of the unfloored proportions: ``sqrt((KL(r || m) + KL(c || m)) / 2 / ln 2)``, m = (r + c) / 2.
    In [0, 1]; nan when either side is empty. O(bins)."""
    r, c = _proportions(ref_counts), _proportions(cur_counts)
    if np.isnan(r).any() or np.isnan(c).any():
        return math.nan
    m = (r + c) / 2.0
    js = (np.sum(_rel_entr(r, m)) + np.sum(_rel_entr(c, m))) / math.log(2.0)
    return float(np.sqrt(max(js, 0.0) / 2.0))


def class_chi2(ref_counts: np.ndarray, cur_counts: np.ndarray) -> float:
    """Pearson's chi-square statistic of the current class counts O_k against the counts the
    reference shares r_k expect, E_k = W r_k (W: the current total weight):
    ``sum_k (O_k - E_k)^2 / E_k``, a class with E_k = 0 adding inf when O_k > 0 and nothing
    when O_k = 0. nan when either side is empty. O(classes)."""
    r = _proportions(ref_counts)
    total = float(cur_counts.sum())
    if np.isnan(r).any() or total <= 0:
        return math.nan
    expected = total * r
    seen = expected > 0
    if bool((cur_counts[~seen] > 0).any()):
        return math.inf
    o, e = cur_counts[seen], expected[seen]
    return float(np.sum((o - e) ** 2 / e))


def _cdf_at(values: np.ndarray, mass: np.ndarray, at: np.ndarray, side: str) -> np.ndarray:
    """Mass of the rows with ``values <= at`` (side 'right') or ``< at`` (side 'left')."""
    cum = np.concatenate([[0.0], np.cumsum(mass)])
    return np.asarray(cum[np.searchsorted(values, at, side)])  # type: ignore[call-overload]


def _too_wide(*arrays: np.ndarray) -> bool:
    """True when the scores span more than the largest float (their differences overflow): the
    distances are then those of the halved scores, doubled. O(rows)."""
    return not math.isfinite(max(float(np.max(a)) for a in arrays) - min(float(np.min(a)) for a in arrays))


def ks_wasserstein(ref: Side, cur: Side) -> tuple[float, float]:
    """(KS, Wasserstein-1) of the two samples placed at their rows' ``low`` (exact sides: the
    samples themselves): ``max_x |F_r(x) - F_c(x)|`` and ``integral |F_r(x) - F_c(x)| dx`` of
    the weighted empirical CDFs, as ``scipy.stats.ks_2samp(...).statistic`` and
    ``scipy.stats.wasserstein_distance`` compute them. nan when either side is empty."""
    rv, _, rm = ref
    cv, _, cm = cur
    rt, ct = float(rm.sum()), float(cm.sum())
    if rt <= 0 or ct <= 0:
        return math.nan, math.nan
    if _too_wide(rv, cv):
        ks, w = ks_wasserstein((rv * 0.5, rv * 0.5, rm), (cv * 0.5, cv * 0.5, cm))
        return ks, 2.0 * w
    # one linear merge of the two ascending sides; each side's cumulative mass (integers for
    # unit weights, so the CDFs are count / total as scipy divides them), read at the last of
    # each run of ties
    at_cur = np.searchsorted(rv, cv, "right") + np.arange(cv.shape[0])
    on_ref = np.ones(rv.shape[0] + cv.shape[0], dtype=bool)
    on_ref[at_cur] = False
    v = np.empty(on_ref.shape[0])
    v[on_ref], v[at_cur] = rv, cv
    f_ref = np.zeros(on_ref.shape[0])
    f_cur = np.zeros(on_ref.shape[0])
    f_ref[on_ref], f_cur[at_cur] = rm, cm
    np.cumsum(f_ref, out=f_ref)
    np.cumsum(f_cur, out=f_cur)
    last = np.flatnonzero(np.append(v[1:] != v[:-1], True))
    d = f_ref[last] / rt - f_cur[last] / ct
    ks = float(np.max(np.abs(d)))
    w = float(np.sum(np.abs(d[:-1]) * np.diff(v[last])))
    return ks, w


def ks_wasserstein_bounds(ref: Side, cur: Side) -> tuple[tuple[float, float], tuple[float, float]]:
    """Certified ((KS low, KS high), (W low, W high)) for any placement of each row's mass in
    its ``[low, high]`` interval.

    With ``F_lo(x)`` the mass of rows with ``high <= x`` and ``F_hi(x)`` that of rows with
    ``low <= x`` (so ``F_lo <= F <= F_hi`` for every placement, and likewise for the left
    limits with strict inequalities), ``|F_r - F_c|`` lies between
    ``max(0, F_r,lo - F_c,hi, F_c,lo - F_r,hi)`` and ``max(F_r,hi - F_c,lo, F_c,hi - F_r,lo)``
    at every x. The KS interval is the supremum of both envelopes over every edge and its left
    limit; the Wasserstein interval their integrals, the low end raised to the distance
    between the two sides' possible means (``W >= |mean_r - mean_c|``). Both are (v, v) when
    both sides are exact. nan when either side is empty.
    """
    rl, rh, rm = ref
    cl, ch, cm = cur
    rt, ct = float(rm.sum()), float(cm.sum())
    if rt <= 0 or ct <= 0:
        nan = (math.nan, math.nan)
        return nan, nan
    if _too_wide(rl, rh, cl, ch):
        ks_, (wl, wh) = ks_wasserstein_bounds((rl * 0.5, rh * 0.5, rm), (cl * 0.5, ch * 0.5, cm))
        return ks_, (2.0 * wl, 2.0 * wh)
    rh_order, ch_order = np.argsort(rh, kind="stable"), np.argsort(ch, kind="stable")
    rhs, rhm = rh[rh_order], rm[rh_order]
    chs, chm = ch[ch_order], cm[ch_order]
    at = np.unique(np.concatenate([rl, rh, cl, ch]))

    def envelopes(side: str) -> tuple[np.ndarray, np.ndarray]:
        r_lo, r_hi = _cdf_at(rhs, rhm, at, side) / rt, _cdf_at(rl, rm, at, side) / rt
        c_lo, c_hi = _cdf_at(chs, chm, at, side) / ct, _cdf_at(cl, cm, at, side) / ct
        low = np.maximum(np.maximum(r_lo - c_hi, c_lo - r_hi), 0.0)
        high = np.maximum(r_hi - c_lo, c_hi - r_lo)
        return low, high

    low_r, high_r = envelopes("right")
    low_l, high_l = envelopes("left")
    ks = (float(max(low_r.max(), low_l.max())), float(min(1.0, max(high_r.max(), high_l.max()))))
    gaps = np.diff(at)
    w_low = float(np.sum(low_r[:-1] * gaps)) if gaps.size else 0.0
    w_high = float(np.sum(high_r[:-1] * gaps)) if gaps.size else 0.0
    rs, cs = rm / rt, cm / ct  # shares: the means stay within the scores' range
    means = (float(rl @ rs), float(rh @ rs), float(cl @ cs), float(ch @ cs))
    mean_gap = max(means[2] - means[1], means[0] - means[3], 0.0)
    return ks, (max(w_low, mean_gap), w_high)


def segment_sums(v: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """``v[bounds[i]:bounds[i + 1]].sum()`` for every i (``bounds`` non-decreasing in [0, n]):
    one ``np.add.reduceat`` over the non-empty segments, each summed on its own (no running sum
    over the whole array, whose rounding would grow with n). O(n + len(bounds))."""
    out = np.zeros(bounds.shape[0] - 1)
    full = bounds[1:] > bounds[:-1]
    if full.any():
        out[full] = np.add.reduceat(v, bounds[:-1][full])  # an empty segment ends where the next starts
        last = int(np.flatnonzero(full)[-1])
        if int(bounds[last + 1]) < v.shape[0]:  # reduceat's last segment runs to the end of v
            out[last] -= float(np.sum(v[bounds[last + 1]:]))
    return out


def ks_wasserstein_blocks(rv: np.ndarray, rm: np.ndarray, cv: np.ndarray, cm: np.ndarray | None,
                          r_cdf: np.ndarray | None = None) -> tuple[float, float]:
    """:func:`ks_wasserstein` of an exact reference (``rv`` ascending distinct, masses ``rm``;
    ``r_cdf``: its cumulative shares, if kept) and exact current scores (``cv`` ascending, ties
    allowed, masses ``cm``; None: 1 each), without merging the two sides and, unweighted,
    without an array of the current side's size: O(n + m log n) for m reference and n current
    scores -- 2 binary searches per reference score (3 weighted) and one pass over ``cv``.

    Between two reference scores a = r_j <= x < b = r_{j+1}, F_ref is the constant R_j, so the
    KS supremum over that block is at F_cur(r_j) or F_cur(r_{j+1}-) (both values at data
    points, as scipy evaluates them). The Wasserstein integral over it splits at x*, the first
    current score where F_cur reaches R_j (clipped to the block): ``R_j (x* - a) - I(a, x*) +
    I(x*, b) - R_j (b - x*)`` with ``I(u, v)`` = the integral of F_cur over [u, v) = F_cur(u)
    (v - u) plus, for each current score c in (u, v), its share times (v - c) -- a count and a
    sum over the scores of that stretch. Every stretch is summed on its own (one
    ``np.add.reduceat`` over all of them), so the rounding stays that of the scores' own
    magnitude. The same values as :func:`ks_wasserstein` up to the order of the sums."""
    n, m = cv.shape[0], rv.shape[0]
    rt = float(rm.sum())
    if n == 0 or rt <= 0:
        return math.nan, math.nan
    ends = (float(rv[0]), float(rv[-1]), float(cv[0]), float(cv[-1]))
    if not all(math.isfinite(e) for e in ends):  # updates and loads refuse them: never halve forever
        raise ValueError(f"scores must be finite; got the extremes {ends!r}")
    span = max(ends[1], ends[3]) - min(ends[0], ends[2])
    if not math.isfinite(span):  # scores near the largest floats: the distance of the halves, doubled
        ks, w = ks_wasserstein_blocks(rv * 0.5, rm, cv * 0.5, cm, r_cdf)
        return ks, 2.0 * w
    mid = float(cv[n // 2])
    if mid != 0.0 and max(abs(float(rv[0])), abs(float(rv[-1])), abs(float(cv[0])), abs(float(cv[-1]))) \
            > 4.0 * span:  # far from 0 for their spread: the sums of the scores less the middle one
        return ks_wasserstein_blocks(rv - mid, rm, cv - mid, cm, r_cdf)
    r = np.cumsum(rm) / rt if r_cdf is None else r_cdf  # R_j: F_ref on [r_j, r_{j+1})
    # current scores < r_j (those <= the float below r_j) and <= r_j: one search of both, in order
    needles = np.empty(2 * m)
    needles[0::2], needles[1::2] = np.nextafter(rv, -np.inf), rv
    found = np.searchsorted(cv, needles, "right")
    left, right = found[0::2], found[1::2]
    if cm is None:
        total = float(n)
        # first index k with (k + 1) / n >= R_j (an exact tie either way: F_cur = R_j between)
        cross = np.ceil(r[:-1] * total).astype(np.int64) - 1
        cum = None
    else:
        cum = np.cumsum(cm)
        total = float(cum[-1])
        if total <= 0:
            return math.nan, math.nan
        cross = np.searchsorted(cum, r[:-1] * total, "left")

    def mass(k: np.ndarray) -> np.ndarray:  # weight of the first k current scores / total
        if cum is None:
            return k / total
        return np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0) / total

    at_r, before_r = mass(right), mass(left)
    ks = max(float(before_r[0]), float(np.max(np.abs(r - at_r))),
             float(np.max(np.abs(r[:-1] - before_r[1:]))) if m > 1 else 0.0)
    # the stretches of current scores, in order: below r_0; per block [r_j, r_{j+1}), those
    # before x* and those from x* on (the ties at r_{j+1} between them add nothing); above r_last
    k_x = np.clip(cross, right[:-1], left[1:])
    bounds = np.empty(3 * m, dtype=np.int64)
    bounds[0], bounds[-1] = 0, n
    bounds[1:-1:3], bounds[2:-2:3], bounds[3:-2:3] = right, k_x, left[1:]
    if cm is None:
        weight = np.diff(bounds).astype(np.float64) / total
        sums = segment_sums(cv, bounds) / total
    else:
        weight = segment_sums(cm, bounds) / total  # each stretch's own sum (not differences of cum)
        sums = segment_sums(cv * cm, bounds) / total
    a, b = rv[:-1], rv[1:]
    # x*: a when F_cur reaches R_j at or below a, b when not inside the block, else the crossing
    xs = np.where(cross < right[:-1], a, np.where(cross >= left[1:], b, cv[np.clip(cross, 0, n - 1)]))
    below, before, after = slice(0, 1), slice(1, -2, 3), slice(2, -2, 3)
    i_before = at_r[:-1] * (xs - a) + (weight[before] * xs - sums[before])
    i_after = mass(k_x) * (b - xs) + (weight[after] * b - sums[after])
    blocks = r[:-1] * (xs - a) - i_before + i_after - r[:-1] * (b - xs)
    w = float(weight[below][0] * rv[0] - sums[below][0])  # F_ref = 0 below r_0
    w += float(np.sum(blocks))
    w += float(sums[-1] - weight[-1] * rv[-1])  # F_ref = 1 above r_last: each score's distance to it
    return ks, w
