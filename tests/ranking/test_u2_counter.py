"""The exact AUROC pair counter ``u2`` stays exact past int64: before an update could take it
beyond int64's safe range it becomes a counter of Python ints."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np

import streammetrics as sm
from streammetrics._scores.exact.u2_counter import counter_copy, exact_u2


def groups(*totals):
    return [[SimpleNamespace(total=t) for t in row] for row in totals]


def test_switch_happens_exactly_past_the_safe_bound():
    u2 = np.array([[7]], dtype=np.int64)
    t = 3_037_000_499  # floor(sqrt(2**63)): T**2 <= 2**63
    assert exact_u2(u2, groups((t - 10, 0)), 10, 0) == (u2, 0)
    big, room = exact_u2(u2, groups((t - 10, 0)), 11, 0)
    assert big.dtype == object and big.tolist() == [[7]] and type(big[0, 0]) is int
    assert exact_u2(big, groups((0, 0)), 0, room)[0] is big  # never narrowed back
    f = np.array([[0.5]])
    assert exact_u2(f, groups((2**40, 2**40)), 1, 0)[0] is f  # weighted: float64 as documented
    # the largest column counts; a trusted copy keeps the kind
    assert exact_u2(u2, groups((1, 1), (t, 0)), 1, 0)[0].dtype == object
    assert counter_copy(big, False).dtype == object and counter_copy(u2, False).dtype == np.int64
    # while there is room nothing is counted (the groups are not even looked at)
    assert exact_u2(u2, None, 5, 7) == (u2, 2)  # type: ignore[arg-type]
    # once the room is used up the totals are counted again: the switch still happens
    small, room = exact_u2(u2, groups((100, 100)), 1, 0)
    assert small is u2 and room == t - 201
    assert exact_u2(u2, groups((t - 5, 0)), room + 1, room)[0].dtype == object


def test_auroc_is_exact_beyond_int64_pair_counts():
    # A crafted state (a trusted test-only path): F positives scored above everything, counted in
    # the group total only. Each negative then adds 2F to u2, so 8192 negatives take it to 2**64.
    big = 2**50
    m = sm.AUROC()
    st = m._state
    st._groups[0][1].total = big
    st._u2_live = True  # count pairs at every fold (a lazy first count would miss the crafted ones)
    rng = np.random.default_rng(5)
    neg = rng.random(8192)
    pos = rng.random(100)
    m.update(np.r_[np.zeros(8192, dtype=int), np.ones(100, dtype=int)], np.r_[neg, pos])
    u2_real = 2 * int((pos[:, None] > neg[None, :]).sum()) + int((pos[:, None] == neg[None, :]).sum())
    want = Fraction(2 * big * 8192 + u2_real, 2 * (big + 100) * 8192)
    got = m.compute()
    assert st._u2.dtype == object and st._u2[0, 0] == 2 * big * 8192 + u2_real
    assert got == float(want) and 0.999 < got <= 1.0
    # further single samples and batches stay exact
    m.update(0, 0.25)
    m.update([1, 0], [0.75, 0.5])
    n_neg = 8192 + 2
    allneg = np.r_[neg, 0.25, 0.5]
    allpos = np.r_[pos, 0.75]
    u2_real = 2 * int((allpos[:, None] > allneg[None, :]).sum()) + int(
        (allpos[:, None] == allneg[None, :]).sum())
    want = Fraction(2 * big * n_neg + u2_real, 2 * (big + 101) * n_neg)
    assert m.compute() == float(want)
    assert m.copy().compute() == float(want)  # the trusted copy keeps the exact counter
