"""DeLong's AUROC variance (streammetrics/ranking/_delong.py): the linear merge + run-length placement
values against a brute-force O(m·n) pair matrix with ties, infinities and weights, and against the
binary-search (``searchsorted``) implementation it replaced, to 1e-12 (in fact bit-identical)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics.ranking._delong import delong, placements


def brute_placements(pos, pw, neg, nw):
    """O(m·n): psi(x, y) = [x > y] + 1/2 [x = y] weighted by the other class's weights."""
    pw = np.ones(len(pos)) if pw is None else pw
    nw = np.ones(len(neg)) if nw is None else nw
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return psi @ nw, (1.0 - psi).T @ pw  # below each positive; below each negative (1 - psi: y > x)


def brute_delong(pos, pw, neg, nw):
    """DeLong's variance from the weighted pair matrix, Kish effective sizes (unit weights:
    the textbook formula)."""
    wp = np.ones(len(pos)) if pw is None else pw
    wn = np.ones(len(neg)) if nw is None else nw
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10 = psi @ wn / wn.sum()
    v01 = wp @ psi / wp.sum()
    auc = float(wp @ v10 / wp.sum())

    def var(v, w):
        n_eff = w.sum() ** 2 / (w * w).sum()
        mean = w @ v / w.sum()
        return float(w @ (v - mean) ** 2 / w.sum() * n_eff / (n_eff - 1)), n_eff

    s10, m_eff = var(v10, wp)
    s01, n_eff = var(v01, wn)
    return auc, s10 / m_eff + s01 / n_eff


def searchsorted_delong(pos, pw, neg, nw):
    """The previous implementation: four binary searches per sample."""

    def below(values, w, x):
        left, right = np.searchsorted(values, x, "left"), np.searchsorted(values, x, "right")
        if w is None:
            return (left + right) / 2.0
        cw = np.concatenate([[0.0], np.cumsum(w)])
        return (cw[left] + cw[right]) / 2.0

    m_w = float(len(pos) if pw is None else pw.sum())
    n_w = float(len(neg) if nw is None else nw.sum())
    v10 = below(neg, nw, pos) / n_w
    v01 = 1.0 - below(pos, pw, neg) / m_w
    return v10, v01


def sample(rng, m, n, levels, weighted, inf=False):
    draw = (lambda k: rng.integers(0, levels, k) / levels) if levels else rng.random
    pos, neg = np.sort(draw(m) + 0.2), np.sort(draw(n))
    if inf and m and n:
        pos[-1], neg[0] = np.inf, -np.inf
        pos[0] = neg[0]  # a tie at -inf
    pw = rng.random(m) * 3 if weighted else None
    nw = rng.integers(0, 4, n).astype(float) if weighted else None  # zero weights too
    if weighted and n:
        nw[0] = max(nw[0], 1.0)
    return pos, pw, neg, nw


def close(a, b, rel=1e-12):
    np.testing.assert_allclose(a, b, rtol=rel, atol=1e-15)


@pytest.mark.parametrize("seed", range(12))
def test_placements_and_variance_against_the_pair_matrix(seed):
    rng = np.random.default_rng(seed)
    for levels in (0, 1, 2, 5, 40):
        for weighted in (False, True):
            m, n = int(rng.integers(2, 60)), int(rng.integers(2, 60))
            pos, pw, neg, nw = sample(rng, m, n, levels, weighted, inf=seed % 3 == 0)
            bp, bn = placements(pos, pw, neg, nw)
            ep, en = brute_placements(pos, pw, neg, nw)
            close(bp, ep)
            close(bn, en)
            auc, var = delong(pos, pw, neg, nw)
            auc_ref, var_ref = brute_delong(pos, pw, neg, nw)
            close(auc, auc_ref)
            close(var, var_ref)
            # the binary-search version gives the same numbers, bit for bit
            v10, v01 = searchsorted_delong(pos, pw, neg, nw)
            n_w = float(n if nw is None else nw.sum())
            m_w = float(m if pw is None else pw.sum())
            assert np.array_equal(bp / n_w, v10) and np.array_equal(1.0 - bn / m_w, v01)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=0, max_size=25),
    st.lists(st.integers(-3, 3), min_size=0, max_size=25),
    st.booleans(),
)
def test_placements_property(pos_ints, neg_ints, weighted):
    pos = np.sort(np.array(pos_ints, dtype=np.float64) / 2)
    neg = np.sort(np.array(neg_ints, dtype=np.float64) / 2)
    pw = np.linspace(0.5, 2.0, len(pos)) if weighted else None
    nw = np.linspace(2.0, 0.25, len(neg)) if weighted else None
    bp, bn = placements(pos, pw, neg, nw)
    ep, en = brute_placements(pos, pw, neg, nw)
    assert bp.shape == (len(pos),) and bn.shape == (len(neg),)
    close(bp, ep)
    close(bn, en)


def test_degenerate_sizes():
    one, two = np.array([0.5]), np.array([0.1, 0.9])
    assert math.isnan(delong(one, None, two, None)[1])  # one positive: no sample variance
    assert all(math.isnan(x) for x in delong(np.array([]), None, two, None))
    bp, bn = placements(np.array([]), None, two, None)
    assert bp.shape == (0,) and bn.tolist() == [0.0, 0.0]
    # every score tied: psi = 1/2 everywhere, zero variance
    auc, var = delong(np.zeros(3), None, np.zeros(4), None)
    assert auc == 0.5 and var == 0.0


def test_auroc_interval_uses_it_with_weights():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300) + 0.3 * y, 1)  # heavy ties
    w = rng.random(300) + 0.1
    lo, hi = sm.AUROC().update(y, s, sample_weight=w).interval(0.9)
    auc, var = brute_delong(np.sort(s[y == 1]), w[y == 1][np.argsort(s[y == 1], kind="stable")],
                            np.sort(s[y == 0]), w[y == 0][np.argsort(s[y == 0], kind="stable")])
    half = 1.6448536269514722 * math.sqrt(var)
    close([lo, hi], [max(0.0, auc - half), min(1.0, auc + half)])
