"""The KS readout of the ranked kernel (issue #32): each score range, told the weight above it and
the totals, sends its largest |TPR - FPR| over its own curve points (:func:`ranked.partial_areas`
at :data:`ranked.KS`) and the root takes the largest. Against one process (``KSStatistic``, bit for
bit unweighted, 1e-12 weighted) and scipy's ``ks_2samp`` on random data with ties, zero weights,
empty ranges and one class absent (nan)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._engines import ranked as RK

stats = pytest.importorskip("scipy.stats")
from test_ranked_max_fpr import _by_ranges as by_ranges  # noqa: E402  (its steps: runs to combine)


def _by_ranges(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, edges: np.ndarray) -> dict[str, Any]:
    """The ranked steps in one process (summaries through their bytes, as Spark ships them), with
    a partial area and the KS readout."""
    return by_ranges(y, s, w, edges, RK.readouts([("AUROC", {"max_fpr": 0.3}), ("KSStatistic", {})]))


@settings(max_examples=120, deadline=None)
@given(n=st.integers(0, 150), seed=st.integers(0, 10**6), decimals=st.integers(0, 2), weighted=st.booleans(),
       k=st.integers(0, 5), one_class=st.booleans())
def test_ks_by_ranges_equals_one_process_and_scipy(n: int, seed: int, decimals: int, weighted: bool, k: int,
                                                   one_class: bool) -> None:
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64) if one_class else rng.integers(0, 2, n)
    s = np.round(rng.random(n), decimals)
    w = np.where(rng.random(n) < 0.3, 0.0, rng.random(n)) if weighted else None
    edges = np.sort(rng.choice(s, k)) if k and n else np.zeros(0)  # at scores: repeated edges, empty ranges
    got = _by_ranges(y, s, w, edges)["partial"][RK.KS]
    with pytest.warns(sm.UndefinedMetricWarning) if _undefined(y, w) else _nothing():
        want = sm.KSStatistic().update(y, s, sample_weight=w).compute() if n else math.nan
    if math.isnan(want):
        assert math.isnan(got)
        return
    if w is None:
        assert got == want  # the same floating-point steps as one process
        assert abs(got - stats.ks_2samp(s[y == 1], s[y == 0]).statistic) <= 1e-12
    else:
        assert abs(got - want) <= 1e-12, (got, want)


def _undefined(y: np.ndarray, w: np.ndarray | None) -> bool:
    ww = np.ones(y.shape[0]) if w is None else w
    return bool(y.shape[0]) and not (ww[y == 1].sum() > 0 and ww[y == 0].sum() > 0)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def test_readouts_and_members() -> None:
    """The KS slot follows the partial areas; a KS member reads it, warning when undefined."""
    assert RK.readouts([("AUROC", {"max_fpr": 0.5}), ("KSStatistic", {}), ("AUROC", {"max_fpr": None})]) == (0.5, RK.KS)
    assert RK.readouts([("AveragePrecision", {})]) == ()
    res = {"partial": {RK.KS: math.nan}}
    with pytest.warns(sm.UndefinedMetricWarning, match="KSStatistic"):
        out = RK.member_values([("ks", sm.KSStatistic())], res)
    assert math.isnan(out["ks"])
    with pytest.raises(ValueError, match="must be exact and binary"):
        RK.check_metrics({"ks": sm.KSStatistic(max_bytes=4096)})
    with pytest.raises(ValueError, match="must be exact and binary"):
        RK.check_metrics({"ks": sm.KSStatistic(num_classes=3)})
