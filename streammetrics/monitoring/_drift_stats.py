"""The drift kernels: PSI and Jensen-Shannon distance over fixed bins, the two-sample KS
statistic and the Wasserstein-1 distance of two weighted samples, and their certified
intervals when either side is known only as bins (definitions: docs/definitions/monitoring.md).

A side is given as ``(low, high, mass)``: ascending arrays, each row a bin whose mass lies
somewhere in the closed interval ``[low, high]`` (an exact side has ``low == high``, one row
per distinct value). Every function is O((m + n) log(m + n)) for sides of m and n rows.
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
    means = (float(rl @ rm) / rt, float(rh @ rm) / rt, float(cl @ cm) / ct, float(ch @ cm) / ct)
    mean_gap = max(means[2] - means[1], means[0] - means[3], 0.0)
    return ks, (max(w_low, mean_gap), w_high)


def ks_wasserstein_blocks(rv: np.ndarray, rm: np.ndarray, cv: np.ndarray,
                          cm: np.ndarray | None) -> tuple[float, float]:
    """:func:`ks_wasserstein` of an exact reference (``rv`` ascending distinct, masses ``rm``)
    and exact current scores (``cv`` ascending, ties allowed, masses ``cm``; None: 1 each),
    without merging the two sides: O(n + m log n) instead of O((m + n) log).

    Between two reference scores r_j <= x < r_{j+1}, F_ref is the constant R_j, so the KS
    supremum over that block is at F_cur(r_j) or F_cur(r_{j+1}-) (both values at data points,
    as scipy evaluates them), and the Wasserstein integral over it splits at the first current
    score where F_cur reaches R_j, with G(x) = integral of F_cur up to x read from its values at
    the current scores (one cumulative sum). Same values as :func:`ks_wasserstein` up to the
    order of the sums."""
    rt = float(rm.sum())
    n = cv.shape[0]
    cum_c = np.arange(1.0, n + 1.0) if cm is None else np.cumsum(cm)
    ct = float(cum_c[-1]) if n else 0.0
    if rt <= 0 or ct <= 0:
        return math.nan, math.nan
    f_c = cum_c / ct
    g_c = np.empty(n)  # few n-sized temporaries: at 1e7 scores, allocating them is the cost
    g_c[0] = 0.0
    np.subtract(cv[1:], cv[:-1], out=g_c[1:])
    g_c[1:] *= f_c[:-1]
    np.cumsum(g_c[1:], out=g_c[1:])
    r_cum = np.cumsum(rm) / rt  # R_j: F_ref on [r_j, r_{j+1})

    def f_at(idx: np.ndarray) -> np.ndarray:  # F_cur at the current score idx (-1: before all)
        return np.where(idx >= 0, f_c[np.maximum(idx, 0)], 0.0)

    def g_at(x: np.ndarray) -> np.ndarray:  # integral of F_cur from -inf to x
        k = np.searchsorted(cv, x, "right") - 1
        kk = np.maximum(k, 0)
        return np.where(k >= 0, g_c[kk] + f_c[kk] * (x - cv[kk]), 0.0)

    at_r = f_at(np.searchsorted(cv, rv, "right") - 1)  # F_cur(r_j)
    before_r = f_at(np.searchsorted(cv, rv, "left") - 1)  # F_cur(r_j -)
    ks = max(float(before_r[0]), float(np.max(np.abs(r_cum - at_r))),
             float(np.max(np.abs(r_cum[:-1] - before_r[1:]))) if rv.shape[0] > 1 else 0.0)
    lo, hi, r = rv[:-1], rv[1:], r_cum[:-1]
    k = np.searchsorted(cum_c, r * ct, "left")  # first current score with F_cur >= R_j
    cross = np.clip(np.where(k < n, cv[np.minimum(k, n - 1)], hi), lo, hi)
    g_lo, g_x, g_hi = g_at(lo), g_at(cross), g_at(hi)
    blocks = r * (cross - lo) - (g_x - g_lo) + (g_hi - g_x) - r * (hi - cross)
    w = float(g_at(rv[:1])[0]) + float(np.sum(blocks))
    last = float(rv[-1])
    if float(cv[-1]) > last:
        w += (float(cv[-1]) - last) - float(g_c[-1] - g_at(rv[-1:])[0])
    return ks, w
