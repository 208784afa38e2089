"""The 11-point AP's recall levels decided in exact sums (``_scores/levels.py``): weights whose
sums land exactly on a level (multiples of 0.1, 0.05, 1/3) give the value of the definition in
exact arithmetic (a ``fractions.Fraction`` oracle over the same float64 weights) in one process
-- one update, batches read after each, merged partitions -- and by score ranges
(``_engines/ap_envelope``); unit weights stay bit for bit the float comparison (trec_eval)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranking_oracles import eleven_point_exact

import streammetrics as sm
from streammetrics._engines import ap_envelope
from streammetrics._scores import levels
from streammetrics._scores.thresholds import counts_from_sorted

UNITS = {"tenth": 0.1, "twentieth": 0.05, "third": 1 / 3}


def _data(n: int, seed: int, unit: float, decimals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(np.int64)
    y[0] = 1
    p = np.round(rng.random(n), decimals)
    w = rng.integers(0, 7, n) * unit
    w[0] = unit
    return y, p, w


def _ap() -> sm.AveragePrecision:
    return sm.AveragePrecision(eleven_point=True)


@settings(max_examples=120, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 10**6), unit=st.sampled_from(sorted(UNITS)),
       decimals=st.integers(1, 2), data=st.data())
def test_one_process_is_the_exact_definition(n: int, seed: int, unit: str, decimals: int,
                                             data: st.DataObject) -> None:
    """One update, batches read after each, merged partitions and the PR curve's area: the exact
    value (1e-12)."""
    y, p, w = _data(n, seed, UNITS[unit], decimals)
    want = eleven_point_exact(y, p, w)
    assert _ap().update(y, p, sample_weight=w).compute() == pytest.approx(want, rel=1e-12, abs=1e-15)
    curve = sm.PRCurve().update(y, p, sample_weight=w).compute()  # counts at every distinct score
    assert curve.area("eleven_point") == pytest.approx(want, rel=1e-12, abs=1e-15)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    bounds = [0, *cuts, n]
    read = _ap()
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        read.update(y[a:b], p[a:b], sample_weight=w[a:b])
        if (w[:b][y[:b] == 1] > 0).any():
            assert read.compute() == pytest.approx(eleven_point_exact(y[:b], p[:b], w[:b]), rel=1e-12, abs=1e-15)
        parts.append(_ap().update(y[a:b], p[a:b], sample_weight=w[a:b]))
    assert read.compute() == pytest.approx(want, rel=1e-12, abs=1e-15)
    merged = parts[-1].merge(*parts[:-1])
    assert merged.compute() == pytest.approx(want, rel=1e-12, abs=1e-15)


def _by_ranges(y: np.ndarray, p: np.ndarray, w: np.ndarray, edges: list[float]) -> float:
    """Score ranges [e_r-1, e_r), each told the weight above it as a float sum in its own order
    (the ranges' totals added from the top), combined from the lowest range up."""
    cuts = [-np.inf, *sorted(edges), np.inf]
    inside = [(p >= lo) & (p < hi) for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    totals = [(float(w[m & (y == 1)].sum()), float(w[m & (y == 0)].sum())) for m in inside]
    P = float(sum(t[0] for t in totals))
    parts = []
    for r, m in enumerate(inside):
        pos, neg = m & (y == 1), m & (y == 0)
        po, ne = np.argsort(p[pos], kind="stable"), np.argsort(p[neg], kind="stable")
        local = counts_from_sorted(p[pos][po], w[pos][po], p[neg][ne], w[neg][ne], positive_only=True)
        above = (float(np.sum([t[0] for t in totals[r + 1:]])), float(np.sum([t[1] for t in totals[r + 1:]])))
        parts.append(ap_envelope.range_part(local, above, P))
    return ap_envelope.combine(parts, [t[0] for t in totals])[1]


@settings(max_examples=120, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 10**6), unit=st.sampled_from(sorted(UNITS)),
       decimals=st.integers(1, 2), data=st.data())
def test_ranges_are_the_exact_definition(n: int, seed: int, unit: str, decimals: int, data: st.DataObject) -> None:
    """Any score ranges (some empty, some of zero-weight positives): the exact value."""
    y, p, w = _data(n, seed, UNITS[unit], decimals)
    edges = data.draw(st.lists(st.sampled_from(sorted(set(p.tolist())) + [-1.0, 2.0]), max_size=5))
    assert _by_ranges(y, p, w, edges) == pytest.approx(eleven_point_exact(y, p, w), rel=1e-12, abs=1e-15)


def test_a_level_the_float_sums_miss() -> None:
    """Recall 0.3 exactly: 0.1 + 0.2 (from the top) is 0.30000000000000004 > 0.3 in floats, and
    3 x 0.1 of P = 1.0000000000000002... whichever way the floats fall, the threshold reaching
    0.3 exactly counts, one process and ranges alike."""
    y = np.array([1, 1, 0, 1, 1, 1, 0, 1])
    p = np.array([0.9, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3])
    w = np.array([0.1, 0.2, 0.3, 0.1, 0.3, 0.1, 0.1, 0.2])
    want = eleven_point_exact(y, p, w)
    assert _ap().update(y, p, sample_weight=w).compute() == pytest.approx(want, rel=1e-12)
    for edges in ([], [0.55], [0.65, 0.85], [0.35, 0.45, 0.72]):
        assert _by_ranges(y, p, w, edges) == pytest.approx(want, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 80), seed=st.integers(0, 10**6))
def test_unit_weights_keep_the_float_comparison_bit_for_bit(n: int, seed: int) -> None:
    """Unweighted (trec_eval's 11-point AP): the float comparison 10 tps >= l P, unchanged."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int64)
    y[0] = 1
    p = np.round(rng.random(n), 1)
    got = _ap().update(y, p).compute()
    c = counts_from_sorted(np.sort(p[y == 1]), None, np.sort(p[y == 0]), None, positive_only=True)
    interp = np.maximum.accumulate((c.tps / (c.tps + c.fps))[::-1])[::-1]
    reach = np.searchsorted(c.tps * 10.0, np.arange(11) * c.total_pos, "left")
    assert got == float(np.where(reach < c.tps.shape[0], interp[np.minimum(reach, c.tps.shape[0] - 1)], 0.0).mean())


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(0, 1e300, allow_subnormal=True) | st.sampled_from([0.0, 5e-324, 0.1, 1 / 3]),
                       max_size=30), data=st.data())
def test_exact_sums_and_expansions(values: list[float], data: st.DataObject) -> None:
    """:func:`levels.exact_sums` of any segments is the Fraction sum; expansions round-trip."""
    w = np.array(values, dtype=np.float64)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), min_size=1, max_size=5)))
    got = levels.exact_sums(w, cuts)
    scale = Fraction(1, 2**levels.UNIT_BITS)
    for k, s in enumerate(got):
        assert s * scale == sum((Fraction(x) for x in values[cuts[k]:cuts[k + 1]]), Fraction(0))
        exp = levels.to_expansion(s)
        assert levels.from_expansion(exp) == s
        assert sum((Fraction(f) for f in exp), Fraction(0)) == s * scale
