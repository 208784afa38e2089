"""The partial-area kernel of the ranked engines (issue #32): each score range, told the weight
above it, sends its part of the ROC area over FPR <= max_fpr (:func:`ranked.partial_areas`) and
the root standardises the sum as one process does -- scikit-learn's
``roc_auc_score(max_fpr=..., sample_weight=...)`` within 1e-12, on random data with ties and
weights, max_fpr at and between curve points and at range edges, empty ranges, one class."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sklearn")

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from streammetrics._engines import ranked as RK  # noqa: E402
from streammetrics._engines import ranked_common  # noqa: E402


def _by_ranges(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, edges: np.ndarray,
               max_fprs: tuple[float, ...]) -> dict[str, Any]:
    """The ranked steps in one process: runs, split at ``edges``, offsets, summaries (through
    their bytes, as Spark ships them), combine."""
    neg, pos = np.argsort(s[y == 0], kind="stable"), np.argsort(s[y == 1], kind="stable")
    runs = (s[y == 0][neg], None if w is None else w[y == 0][neg],
            s[y == 1][pos], None if w is None else w[y == 1][pos])
    pieces = RK.split_runs(runs, edges)
    totals = [RK.range_totals(p) for p in pieces]
    grand = (sum(t[0] for t in totals), sum(t[1] for t in totals))
    summaries = [ranked_common.summary_from_bytes(ranked_common.summary_to_bytes(
        RK.range_summary(p, o, grand, False, max_fprs))) for p, o in zip(pieces, RK.offsets(totals), strict=True)]
    return RK.combine(summaries, grand, max_fprs)


def _curve_points(y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """The FPR of every point of the ROC curve (max_fpr exactly at a point)."""
    from sklearn.metrics import roc_curve

    return roc_curve(y, s, sample_weight=w, drop_intermediate=False)[0]


@settings(max_examples=150, deadline=None)
@given(n=st.integers(2, 120), seed=st.integers(0, 10**6), decimals=st.integers(0, 2),
       weighted=st.booleans(), where=st.sampled_from(["between", "at a point", "at an edge", "one"]),
       data=st.data())
@example(n=2, seed=0, decimals=0, weighted=False, where="one", data=None)  # type: ignore[arg-type]
def test_partial_auroc_by_ranges_equals_sklearn(n: int, seed: int, decimals: int, weighted: bool,
                                                where: str, data: Any) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[: 2] = [0, 1]  # both classes (one class: below)
    s = np.round(rng.random(n), decimals)
    w = np.where(rng.random(n) < 0.3, rng.integers(0, 3, n) * 0.5, rng.random(n)) if weighted else None
    if w is not None and (w[y == 0].sum() <= 0 or w[y == 1].sum() <= 0):
        w[:2] = 1.0
    k = 0 if data is None else data.draw(st.integers(0, 5))
    edges = np.sort(rng.choice(s, k)) if k else np.zeros(0)  # at scores: tied edges give empty ranges
    if where == "one":
        m = 1.0
    elif where == "at a point":
        points = _curve_points(y, s, w)
        inside = points[(points > 0) & (points < 1)]
        m = float(rng.choice(inside)) if inside.shape[0] else 0.5
    elif where == "at an edge" and k:  # the crossing where a range starts: its negatives above / N
        N = float(np.sum(w[y == 0]) if w is not None else np.sum(y == 0))
        above = float(np.sum((w if w is not None else np.ones(n))[(y == 0) & (s >= edges[-1])]))
        m = above / N if 0 < above < N else 0.5
    else:
        m = float(rng.uniform(0.001, 0.999))
    fprs = RK.partial_fprs([{"max_fpr": m}, {"max_fpr": 0.5}, {"max_fpr": None}])
    res = _by_ranges(y, s, w, edges, fprs)
    for mf in (m, 0.5):
        want = roc_auc_score(y, s, max_fpr=mf, sample_weight=w)
        assert abs(RK.auroc_value(res, mf) - want) <= 1e-12, (mf, RK.auroc_value(res, mf), want)
    assert abs(RK.auroc_value(res, None) - roc_auc_score(y, s, sample_weight=w)) <= 1e-12


def test_ranges_wholly_within_or_beyond() -> None:
    """A range ending before FPR = max_fpr sends its whole area, one starting after it 0; the
    crossing exactly at a range's start: that range sends 0, the one above its whole area."""
    y = np.array([1, 0, 1, 0, 0, 1, 0, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    edges = np.array([0.45, 0.75])  # ranges [.., 0.45), [0.45, 0.75), [0.75, ..)
    neg = np.sort(s[y == 0])
    pos = np.sort(s[y == 1])
    pieces = RK.split_runs((neg, None, pos, None), edges)
    totals = [RK.range_totals(p) for p in pieces]
    offs = RK.offsets(totals)
    m = 3 / 5  # the negatives at 0.8, 0.6, 0.5 lie above the bottom range: it starts at FPR 3/5
    parts = [RK.range_summary(p, o, (3.0, 5.0), False, (m,)).partial[0] for p, o in zip(pieces, offs, strict=True)]
    assert parts[0] == 0.0 and parts[1] > 0 and parts[2] > 0
    assert math.isclose(RK.combine([RK.RangeSummary(0, 0, 0, 0, 0, None, (a,)) for a in parts], (3.0, 5.0),
                                   (m,))["partial"][m], roc_auc_score(y, s, max_fpr=m), abs_tol=1e-12)


@pytest.mark.parametrize("labels", [[0, 0, 0], [1, 1], []])
def test_one_class_or_no_rows_is_nan(labels: list[int]) -> None:
    y = np.array(labels, dtype=np.int64)
    s = np.linspace(0, 1, y.shape[0])
    res = _by_ranges(y, s, None, np.array([0.5]), (0.3,))
    assert math.isnan(RK.auroc_value(res, 0.3)) and math.isnan(RK.auroc_value(res, None))
