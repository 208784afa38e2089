"""Slow, obviously correct reference implementations for the ranking tests.

Used where scikit-learn has no oracle (weighted one-vs-one AUROC, multiclass ``max_fpr``,
threshold selection, interpolated / 11-point AP, DeLong's variance) and to map ±inf scores to
finite ones for scikit-learn (which rejects infinities; every ranking metric only depends on the
order of the scores, so an order-preserving replacement changes nothing but the thresholds).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
from sklearn.metrics import precision_recall_curve, roc_auc_score


def finite(s: np.ndarray) -> np.ndarray:
    """Replace +inf / -inf by values just beyond the finite range (order preserved), per column."""
    s = np.asarray(s, dtype=np.float64).copy()
    fin = s[np.isfinite(s)]
    hi = (fin.max() if fin.size else 0.0) + 1.0
    lo = (fin.min() if fin.size else 0.0) - 1.0
    s[s == np.inf] = hi
    s[s == -np.inf] = lo
    return s


def unfinite(thresholds: np.ndarray, original: np.ndarray) -> np.ndarray:
    """Map thresholds of ``finite(original)`` back to the original scores."""
    mapped = finite(original)
    out = np.asarray(thresholds, dtype=np.float64).copy()
    for v in (np.inf, -np.inf):
        if (original == v).any():
            out[out == mapped[original == v][0]] = v
    return out


def auroc_pairs(y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None) -> float:
    """AUROC by enumerating every (positive, negative) pair: a tie counts 1/2. O(P·N)."""
    y = np.asarray(y).astype(bool)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    sp, wp, sn, wn = s[y], w[y], s[~y], w[~y]
    if wp.sum() == 0 or wn.sum() == 0:
        return math.nan
    psi = (sp[:, None] > sn[None, :]) + 0.5 * (sp[:, None] == sn[None, :])
    return float(wp @ psi @ wn / (wp.sum() * wn.sum()))


def ovo_auroc(y: np.ndarray, S: np.ndarray, w: np.ndarray | None, average: str, max_fpr=None) -> float:
    """Hand & Till one-vs-one AUROC from pair enumeration; ``weighted`` by the pair's (weighted)
    prevalence. With ``max_fpr`` each directed AUC is scikit-learn's binary partial AUROC."""
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    scores, prev = [], []
    for a, b in combinations(range(S.shape[1]), 2):
        m = (y == a) | (y == b)
        if max_fpr is None:
            ab = auroc_pairs(y[m] == a, S[m, a], w[m])
            ba = auroc_pairs(y[m] == b, S[m, b], w[m])
        else:
            ab = roc_auc_score(y[m] == a, finite(S[m, a]), sample_weight=w[m], max_fpr=max_fpr)
            ba = roc_auc_score(y[m] == b, finite(S[m, b]), sample_weight=w[m], max_fpr=max_fpr)
        scores.append((ab + ba) / 2)
        prev.append(w[m].sum())
    if average == "weighted":
        return float(np.average(scores, weights=prev))
    return float(np.mean(scores))


def partial_auroc_per_class(Y: np.ndarray, S: np.ndarray, w, max_fpr: float, average):
    """One-vs-rest partial AUROC per column (scikit-learn binary), then averaged."""
    vals = np.array(
        [roc_auc_score(Y[:, c], finite(S[:, c]), sample_weight=w, max_fpr=max_fpr) for c in range(Y.shape[1])]
    )
    if average is None:
        return vals
    if average == "weighted":
        sup = (Y * (np.ones(len(Y)) if w is None else w)[:, None]).sum(0)
        return float(np.average(vals, weights=sup))
    return float(vals.mean())


def interpolated_ap(y, s, w=None, eleven_point=False) -> float:
    """Textbook interpolated AP from scikit-learn's PR curve: P_interp(r) = max_{r' >= r} P(r')."""
    p, r, _ = precision_recall_curve(y, finite(s), sample_weight=w)
    p, r = p[:-1], r[:-1]  # drop the appended (recall 0, precision 1) point

    def interp(level: float) -> float:
        ok = r >= level - 1e-12
        return float(p[ok].max()) if ok.any() else 0.0

    if eleven_point:
        return float(np.mean([interp(i / 10) for i in range(11)]))
    order = np.argsort(r, kind="stable")
    rs = r[order]
    total, prev = 0.0, 0.0
    for level in np.unique(rs):
        total += (level - prev) * interp(level)
        prev = level
    return total


def eleven_point_exact(y, s, w=None) -> float:
    """The 11-point AP by its definition in exact arithmetic (``Fraction`` sums of the float64
    weights): thresholds at the distinct positive scores, threshold t reaching level l when
    10 TP(t) >= l P, each level's value the best precision among those reaching it (0 if none);
    nan without positive weight. O(n log n) Fraction additions."""
    y, s = np.asarray(y), np.asarray(s, dtype=np.float64)
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    order = np.argsort(-s, kind="stable")
    tp = fp = Fraction(0)
    points, at = [], {}
    for i in order.tolist():  # counts after each row, read at each distinct score's last row
        if y[i] == 1:
            tp += Fraction(float(w[i]))
        else:
            fp += Fraction(float(w[i]))
        at[float(s[i])] = (tp, fp)
    P = tp
    if P == 0:
        return math.nan
    for t in sorted(set(s[y == 1].tolist()), reverse=True):
        a, b = at[t]
        points.append((a, a / (a + b) if a + b else Fraction(0)))
    best = [max((pr for a, pr in points if 10 * a >= lv * P), default=Fraction(0)) for lv in range(11)]
    return float(sum(best, Fraction(0)) / 11)


def confusion_at(y, s, w, t):
    """(tp, fp, fn, tn) predicting positive iff s >= t."""
    y = np.asarray(y).astype(bool)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    pred = s >= t
    return (w[pred & y].sum(), w[pred & ~y].sum(), w[~pred & y].sum(), w[~pred & ~y].sum())


def best_threshold_brute(y, s, w, criterion, value=None, beta=1.0):
    """Try every distinct score (highest first) and keep the first strict improvement."""
    best_t, best = math.nan, -math.inf
    for t in np.unique(s)[::-1]:
        tp, fp, fn, tn = confusion_at(y, s, w, t)
        P, N = tp + fn, fp + tn
        tpr = tp / P if P else math.nan
        fpr = fp / N if N else math.nan
        tnr = tn / N if N else math.nan
        prec = tp / (tp + fp) if tp + fp else math.nan
        if criterion == "accuracy":
            score = (tp + tn) / (P + N)
        elif criterion == "youden":
            score = tpr - fpr
        elif criterion == "closest":
            score = -math.sqrt(fpr**2 + (1 - tpr) ** 2)
        elif criterion == "tpr_at_tnr":
            score = tpr if tnr >= value else math.nan
        elif criterion == "tnr_at_tpr":
            score = tnr if tpr >= value else math.nan
        elif criterion == "precision_at_recall":
            score = prec if tpr >= value else math.nan
        elif criterion == "recall_at_precision":
            score = tpr if prec >= value else math.nan
        else:
            b2 = 1.0 if criterion == "f1" else beta * beta
            den = (1 + b2) * tp + b2 * fn + fp
            score = (1 + b2) * tp / den if den else math.nan
        if not math.isnan(score) and score > best:
            best_t, best = float(t), score
    return best_t, best


def delong_direct(y, s):
    """DeLong's AUROC variance from the full psi matrix (O(P·N))."""
    y = np.asarray(y).astype(bool)
    sp, sn = s[y], s[~y]
    psi = (sp[:, None] > sn[None, :]) + 0.5 * (sp[:, None] == sn[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return float(psi.mean()), float(v10.var(ddof=1) / len(sp) + v01.var(ddof=1) / len(sn))
