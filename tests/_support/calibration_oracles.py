"""Slow, obviously correct references for the calibration tests (loops over samples)."""

from __future__ import annotations

import math

import numpy as np


def histogram_bin(c: float, n_bins: int) -> int:
    """The issue's bin: the last edge <= c, with a confidence of exactly 1.0 in the last bin."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    for j in range(n_bins - 1, -1, -1):
        if c >= edges[j]:
            return j
    raise AssertionError(c)


def curve_bin(c: float, n_bins: int) -> int:
    """scikit-learn's calibration_curve bin: the number of inner edges strictly below c."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    return sum(1 for e in edges if e < c)


def _groups(conf, outcome, w, n_bins, binner):
    groups: dict[int, list[tuple[float, float, float]]] = {}
    for c, a, wi in zip(conf, outcome, w, strict=True):
        groups.setdefault(binner(float(c), n_bins), []).append((float(c), float(a), float(wi)))
    return groups


def calibration_error(conf, outcome, w, n_bins: int, norm: str) -> float:
    """The binned definition, one sample at a time."""
    groups = _groups(conf, outcome, w, n_bins, histogram_bin)
    n = sum(float(x) for x in w)
    terms = []
    for rows in groups.values():
        nb = sum(r[2] for r in rows)
        if nb == 0:
            continue
        acc = sum(r[1] * r[2] for r in rows) / nb
        cf = sum(r[0] * r[2] for r in rows) / nb
        terms.append((nb, abs(acc - cf)))
    if norm == "l1":
        return sum(nb / n * g for nb, g in terms)
    if norm == "l2":
        return math.sqrt(sum(nb / n * g * g for nb, g in terms))
    return max(g for _, g in terms)


def top_label(p: np.ndarray, y: np.ndarray) -> tuple[list[float], list[float]]:
    conf, correct = [], []
    for row, label in zip(p, y, strict=True):
        best = 0
        for k in range(len(row)):
            if row[k] > row[best]:
                best = k
        conf.append(float(row[best]))
        correct.append(1.0 if best == label else 0.0)
    return conf, correct


def brier_decomposition(p, o, w, n_bins: int) -> tuple[float, float, float, float, float]:
    """(reliability, resolution, uncertainty, within-bin variance, within-bin covariance)."""
    groups = _groups(p, o, w, n_bins, histogram_bin)
    n = sum(float(x) for x in w)
    obar = sum(float(a) * float(wi) for a, wi in zip(o, w, strict=True)) / n
    rel = res = wbv = wbc = 0.0
    for rows in groups.values():
        nb = sum(r[2] for r in rows)
        if nb == 0:
            continue
        pb = sum(r[0] * r[2] for r in rows) / nb
        ob = sum(r[1] * r[2] for r in rows) / nb
        rel += nb * (pb - ob) ** 2 / n
        res += nb * (ob - obar) ** 2 / n
        wbv += sum(r[2] * (r[0] - pb) ** 2 for r in rows) / n
        wbc += sum(r[2] * (r[0] - pb) * (r[1] - ob) for r in rows) / n
    return rel, res, obar * (1 - obar), wbv, wbc


def weighted_curve(p, o, w, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    groups = _groups(p, o, w, n_bins, curve_bin)
    true, pred, counts = [], [], []
    for b in sorted(groups):
        rows = groups[b]
        nb = sum(r[2] for r in rows)
        if nb == 0:
            continue
        true.append(sum(r[1] * r[2] for r in rows) / nb)
        pred.append(sum(r[0] * r[2] for r in rows) / nb)
        counts.append(nb)
    return np.array(true), np.array(pred), np.array(counts)


def calibration_error_on_edges(conf, outcome, w, edges, norm: str) -> float:
    """The binned definition on arbitrary edges: bin j holds edges[j] <= c < edges[j + 1], the
    last bin closed (numpy.histogram's rule)."""
    n_bins = len(edges) - 1
    sums: dict[int, list[float]] = {}
    for c, a, wi in zip(conf, outcome, w, strict=True):
        j = 0
        for k in range(n_bins):
            if c >= edges[k]:
                j = k
        s = sums.setdefault(j, [0.0, 0.0, 0.0])
        s[0] += float(wi)
        s[1] += float(wi) * float(c)
        s[2] += float(wi) * float(a)
    n = sum(float(x) for x in w)
    gaps = [(s[0], abs(s[2] / s[0] - s[1] / s[0])) for s in sums.values() if s[0] > 0]
    if norm == "l1":
        return sum(nb / n * g for nb, g in gaps)
    if norm == "l2":
        return math.sqrt(sum(nb / n * g * g for nb, g in gaps))
    return max(g for _, g in gaps)


def quantile_error(c, a, w, n_bins: int, norm: str) -> float:
    """The quantile-binned error by definition on the samples repeated by integer weights ``w``:
    edges numpy.percentile (as calibration_curve places them), numpy.histogram's bins."""
    rc, ra = np.repeat(c, w), np.repeat(a, w)
    edges = np.percentile(rc, np.linspace(0, 1, n_bins + 1) * 100)
    return calibration_error_on_edges(rc, ra, np.ones(rc.shape[0]), edges, norm)


def quantile_curve(p, y, w, n_bins: int) -> np.ndarray:
    """calibration_curve's quantile bins by definition on the samples repeated by integer weights
    (a value on an inner edge in the lower bin), every bin: rows (count, prob_true, prob_pred),
    nan for an empty bin."""
    rp, ry = np.repeat(p, w), np.repeat(y, w)
    edges = np.percentile(rp, np.linspace(0, 1, n_bins + 1) * 100)
    ids = np.searchsorted(edges[1:-1], rp, side="left")
    out = np.full((n_bins, 3), np.nan)
    for b in range(n_bins):
        sel = ids == b
        if sel.any():
            out[b] = sel.sum(), ry[sel].mean(), rp[sel].mean()
    return out


def streamed_merged_persisted(make, y, p, w, cuts) -> list:
    """One metric fed in pieces (split at ``cuts``) and merged, and that merged metric saved and
    loaded: both must hold the one-shot values."""
    import streammetrics as sm

    edges = [0, *sorted(cuts), len(y)]
    parts = [make().update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
             for a, b in zip(edges, edges[1:], strict=False)]
    merged = parts[0].copy().merge(*parts[1:])
    return [merged, sm.loads(sm.dumps(merged))]
