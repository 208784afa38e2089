"""Tukey's HSD (one-way, as ranx's ``stat_test="tukey"``, which calls ``scipy.stats.tukey_hsd``)
and the studentized range distribution, against scipy and the exact k = 2 identity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.trec.significance import t_sf2
from streammetrics.trec.tukey import studentized_range_sf, tukey_hsd

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("df", [1, 2, 3, 10, 100, 5000, 99999])
def test_two_means_is_the_t_distribution(df: float) -> None:
    # k = 2: Q = sqrt(2) |T| with T ~ t(df), so P(Q > q) = P(|T| > q / sqrt(2)) -- exact
    for q in (0.001, 0.5, 1.0, 2.0, 3.0, 6.0, 10.0, 40.0, 1000.0):
        assert abs(studentized_range_sf(q, 2, df) - t_sf2(q / math.sqrt(2.0), df)) <= 1e-13, q


@pytest.mark.parametrize("k", [3, 4, 7])
@pytest.mark.parametrize("df", [1, 2, 5, 30, 400, 1e5])
def test_studentized_range_equals_scipy(k: int, df: float) -> None:
    # scipy integrates with nquad(epsabs=1e-11): at df in the thousands its own error reaches 5e-12
    # (the k = 2 test above shows ours there); below, the two agree to 1e-12
    for q in (0.3, 1.0, 2.5, 4.0, 7.0, 12.0):
        assert abs(studentized_range_sf(q, k, df) - float(scipy_stats.studentized_range.sf(q, k, df))) <= 1e-12


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(2, 60))
def test_tukey_hsd_equals_scipy(seed: int, k: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 5, n) / 4  # per-query values with ties, shared structure, shifted per run
    groups = [np.clip(base + rng.integers(-1, 2, n) / 4 + 0.1 * i, 0, 1) for i in range(k)]
    if sum(float(np.var(g)) for g in groups) == 0:
        return
    stat, p = tukey_hsd(groups)
    ref = scipy_stats.tukey_hsd(*groups)
    assert np.max(np.abs(stat - ref.statistic)) <= 1e-12
    assert np.max(np.abs(p - ref.pvalue)) <= 1e-12


def test_tukey_degenerate_and_bad_input() -> None:
    stat, p = tukey_hsd([np.ones(3), np.ones(3), np.zeros(3)])  # zero variance: 0 or 1
    assert p[0, 1] == 1.0 and p[0, 2] == 0.0 and stat[0, 2] == 1.0
    with pytest.raises(ValueError, match="at least 2 groups"):
        tukey_hsd([np.ones(3)])
    with pytest.raises(ValueError, match="degrees of freedom"):
        tukey_hsd([np.ones(1), np.ones(1)])
    with pytest.raises(ValueError, match="k must be at least 2"):
        studentized_range_sf(1.0, 1, 10)
