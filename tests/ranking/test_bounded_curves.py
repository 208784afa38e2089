"""Certified curves, thresholds and the remaining readouts of the bounded-memory ranking metrics.

Every exact scikit-learn (or slow-oracle) point, area and optimum must lie inside what a binned
accumulator (``max_bytes=`` / ``thresholds=``) reports: the ROC envelope, the PR precision boxes,
``area_bounds``, ``best_threshold``'s ``score_bound`` / ``search_range``, ``at``'s count ranges,
partial AUROC (``max_fpr``) and interpolated / 11-point AP. Exact accumulators report trivial
certificates; one-vs-one is refused with a reason. That splits, merges and save/load preserve
all of it is a protocol law (``binned_set`` in ``tests/_support/laws.py``, raw and probability
keys and a threshold grid; the readouts compared: ``laws.curve_readouts``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranking_oracles import best_threshold_brute, confusion_at, interpolated_ap
from sklearn.metrics import (
    auc,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)
from test_bounded import _distributions as bounded_distributions

import streammetrics as sm
from streammetrics._scores.thresholds import ThresholdCounts
from streammetrics.ranking._operating_points import CRITERIA

TOL = 1e-12
VALUES = {"tpr_at_tnr": 0.8, "tnr_at_tpr": 0.7, "precision_at_recall": 0.5, "recall_at_precision": 0.6}


def _distributions(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, np.ndarray, str]]:
    """The issue's distributions (tests/ranking/test_bounded.py: calibrated probabilities, logits,
    probabilities crowded near 0.999, the peaked perfect classifier, heavy ties, every positive
    just below a negative inside a bin) plus the reverse adversarial order."""
    out = bounded_distributions(rng, n)
    adv_y, adversarial, scores = out["adversarial"]
    out["adversarial_up"] = (1 - adv_y, adversarial, scores)  # every positive just above
    return out


def _cases(n: int = 6000, seed: int = 0):
    rng = np.random.default_rng(seed)
    for name, (y, s, scores) in _distributions(rng, n).items():
        for budget in (416, 2048):  # 16 and ~80 bins: heavily binned
            yield name, y, s, {"max_bytes": budget, "scores": scores}
    y, s, _ = _distributions(rng, n)["calibrated"]
    yield "thresholds", y, s, {"thresholds": 25}


def _low_at(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Smallest y of a monotone polyline (x, y non-decreasing, vertical runs allowed) at ``at``."""
    j = np.searchsorted(x, at, "left")  # first vertex with x >= at
    j = np.minimum(j, x.shape[0] - 1)
    i = np.maximum(j - 1, 0)
    dx = x[j] - x[i]
    frac = np.divide(at - x[i], dx, out=np.ones_like(at), where=dx > 0)
    return np.where(x[j] == at, y[j], y[i] + (y[j] - y[i]) * frac)


def _high_at(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Largest y of a monotone polyline at ``at``."""
    i = np.searchsorted(x, at, "right") - 1  # last vertex with x <= at
    i = np.clip(i, 0, x.shape[0] - 1)
    j = np.minimum(i + 1, x.shape[0] - 1)
    dx = x[j] - x[i]
    frac = np.divide(at - x[i], dx, out=np.zeros_like(at), where=dx > 0)
    return np.where(x[i] == at, y[i], y[i] + (y[j] - y[i]) * frac)


def _check_roc(curve, y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None) -> None:
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    # the exact polyline: its vertices and the midpoints of its segments
    xs = np.concatenate([fpr, (fpr[1:] + fpr[:-1]) / 2])
    ys = np.concatenate([tpr, (tpr[1:] + tpr[:-1]) / 2])
    (lx, ly), (ux, uy) = curve.envelope()
    assert (np.diff(lx) >= 0).all() and (np.diff(ux) >= 0).all()
    # (evaluated 1e-12 to the left / right: the fpr of a vertical jump is a float sum)
    assert (_low_at(lx, ly, xs - TOL) <= ys + TOL).all()
    assert (ys <= _high_at(ux, uy, xs + TOL) + TOL).all()
    # every binned point is a point of the exact curve (the counts at its threshold are exact)
    ww = np.ones(y.shape[0]) if w is None else w
    P, N = ww[y == 1].sum(), ww[y == 0].sum()
    for k in range(1, curve.thresholds.shape[0]):
        t = curve.thresholds[k]
        assert abs(curve.tpr[k] - ww[(y == 1) & (s >= t)].sum() / P) <= TOL
        assert abs(curve.fpr[k] - ww[(y == 0) & (s >= t)].sum() / N) <= TOL
    # where a segment is flagged exact, every exact point over it is on the straight segment
    for k in np.flatnonzero(curve.exact[1:]) + 1:
        x0, x1, y0, y1 = curve.fpr[k - 1], curve.fpr[k], curve.tpr[k - 1], curve.tpr[k]
        inside = (fpr >= x0) & (fpr <= x1) & (tpr >= y0) & (tpr <= y1)
        cross = (fpr[inside] - x0) * (y1 - y0) - (tpr[inside] - y0) * (x1 - x0)
        assert np.all(np.abs(cross) <= 1e-9)
    ex = roc_auc_score(y, s, sample_weight=w)
    lo, hi = curve.area_bounds()
    assert lo - TOL <= ex <= hi + TOL and lo <= curve.area() <= hi
    # the envelope's areas are the AUROC certificate
    assert abs(np.trapezoid(ly, lx) - lo) <= 1e-9 and abs(np.trapezoid(uy, ux) - hi) <= 1e-9
    for max_fpr in (0.01, 0.1, 0.5):
        ex = roc_auc_score(y, s, sample_weight=w, max_fpr=max_fpr)
        lo, hi = curve.area_bounds(max_fpr)
        assert lo - TOL <= ex <= hi + TOL, (max_fpr, lo, ex, hi)
        assert lo <= curve.area(max_fpr) <= hi


def _check_pr(curve, y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None) -> None:
    prec, rec, thr = precision_recall_curve(y, s, sample_weight=w)
    prec, rec = prec[:-1], rec[:-1]  # without the appended (recall 0, precision 1)
    t = curve.thresholds  # decreasing
    # bin of each exact threshold: the lowest binned threshold <= it
    b = t.shape[0] - np.searchsorted(t[::-1], thr, "right")
    assert (b >= 0).all() and (b < t.shape[0]).all()
    r_before = np.concatenate([[0.0], curve.recall])[b]
    assert (r_before - TOL <= rec).all() and (rec <= curve.recall[b] + TOL).all()
    assert (curve.precision_low[b] - TOL <= prec).all() and (prec <= curve.precision_high[b] + TOL).all()
    assert (curve.precision_low <= curve.precision + TOL).all()
    assert (curve.precision <= curve.precision_high + TOL).all()
    (lx, ly), (ux, uy) = curve.envelope()
    assert (np.diff(lx) >= 0).all() and lx.shape == ly.shape == ux.shape == uy.shape
    exact = {
        "step": average_precision_score(y, s, sample_weight=w),
        "interpolated": interpolated_ap(y, s, w),
        "eleven_point": interpolated_ap(y, s, w, eleven_point=True),
        "trapezoid": auc(np.concatenate([[0.0], rec[::-1]]), np.concatenate([[1.0], prec[::-1]])),
    }
    for method, ex in exact.items():
        lo, hi = curve.area_bounds(method)
        assert lo - TOL <= ex <= hi + TOL, (method, lo, ex, hi)
        assert lo <= curve.area(method) <= hi


def _exact_best(y, s, w, criterion) -> tuple[float, float]:
    """(threshold, criterion value) of the exact optimum (exact accumulator; it equals the
    brute-force oracle in test_ranking)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        pt = sm.ROCCurve().update(y, s, sample_weight=w).compute().best_threshold(
            criterion, VALUES.get(criterion), beta=2.0
        )
    return pt.threshold, (math.nan if pt.score is None else pt.score)


def _check_best(curve, y, s, w=None) -> None:
    for criterion in CRITERIA:
        value = VALUES.get(criterion)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
            got = curve.best_threshold(criterion, value, beta=2.0)
        t_ex, v_ex = _exact_best(y, s, w, criterion)
        if math.isnan(v_ex):  # no exact threshold qualifies, so no edge (an exact point) does
            assert math.isnan(got.threshold) and math.isnan(got.score)
            continue
        assert got.score_bound is not None and v_ex <= got.score_bound + TOL, (criterion, v_ex, got)
        if math.isnan(got.threshold):  # no edge satisfies the constraint, a point inside a bin does
            lo, hi = got.search_range
            assert lo < t_ex < hi
            continue
        # the edge threshold's counts and score are exact and attained
        tp, fp, fn, tn = confusion_at(y, s, w, got.threshold)
        np.testing.assert_allclose([got.tp, got.fp, got.fn, got.tn], [tp, fp, fn, tn], rtol=TOL, atol=TOL)
        assert got.score <= v_ex + TOL
        if v_ex > got.score + TOL:  # a better threshold exists: it is where we said
            lo, hi = got.search_range
            assert lo < t_ex < hi, (criterion, got.search_range, t_ex)
        if got.search_range is None:
            assert got.score_bound == got.score and abs(got.score - v_ex) <= 1e-12


def _check_at(curve, y, s, w=None) -> None:
    rng = np.random.default_rng(0)
    ts = np.concatenate([rng.choice(s, 20), curve.thresholds[1:6], [-np.inf, np.inf, s.max() + 1]])
    for t in ts:
        pt = curve.at(float(t))
        tp, fp, _, _ = confusion_at(y, s, w, t)
        tlo, thi = pt.tp_range or (pt.tp, pt.tp)
        flo, fhi = pt.fp_range or (pt.fp, pt.fp)
        assert tlo - 1e-9 <= tp <= thi + 1e-9 and flo - 1e-9 <= fp <= fhi + 1e-9
        pre = tp / (tp + fp) if tp + fp else math.nan
        if not math.isnan(pre):
            lo, hi = pt.bounds("precision")
            assert lo - TOL <= pre <= hi + TOL
        lo, hi = pt.bounds("youden")
        ww = np.ones(y.shape[0]) if w is None else w
        yj = tp / ww[y == 1].sum() - fp / ww[y == 0].sum()
        assert lo - TOL <= yj <= hi + TOL


def test_roc_and_pr_certificates_on_every_distribution() -> None:
    for name, y, s, kw in _cases():
        roc = sm.ROCCurve(**kw).update(y, s).compute()
        pr = sm.PRCurve(**kw).update(y, s).compute()
        assert not roc.is_exact or name == "ties", name
        _check_roc(roc, y, s)
        _check_pr(pr, y, s)
        _check_at(roc, y, s)
        # both curve metrics, and drop_intermediate, describe the same data
        thin = sm.ROCCurve(drop_intermediate=True, **kw).update(y, s).compute()
        assert thin.exact.shape == thin.fpr.shape
        for k in np.flatnonzero(~thin.exact):  # a dropped-point segment is inexact iff a part is
            span = (roc.fpr >= thin.fpr[k - 1]) & (roc.fpr <= thin.fpr[k])
            assert not roc.exact[span].all() or not roc.exact[np.flatnonzero(span)[-1]]


def test_best_threshold_certificate_on_every_distribution() -> None:
    for _, y, s, kw in _cases(3000, seed=1):
        roc = sm.ROCCurve(**kw).update(y, s).compute()
        _check_best(roc, y, s)
        pr = sm.PRCurve(**kw).update(y, s).compute()
        got = pr.best_threshold("f1")
        assert got == roc.best_threshold("f1")


@pytest.mark.parametrize("seed", range(4))
def test_certificates_with_weights_and_brute_force_optimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 400
    y = (rng.random(n) < 0.4).astype(int)
    s = np.round(rng.normal(size=n) + y, 1 + seed % 2)
    w = rng.random(n) * 2 if seed % 2 else rng.integers(1, 4, n).astype(float)
    kw = {"max_bytes": 416}
    roc = sm.ROCCurve(**kw).update(y, s, sample_weight=w).compute()
    pr = sm.PRCurve(**kw).update(y, s, sample_weight=w).compute()
    assert not roc.is_exact
    _check_roc(roc, y, s, w)
    _check_pr(pr, y, s, w)
    _check_at(roc, y, s, w)
    for criterion in CRITERIA:
        value = VALUES.get(criterion)
        t_ref, v_ref = best_threshold_brute(y, s, w, criterion, value, 2.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
            got = roc.best_threshold(criterion, value, beta=2.0)
        if math.isnan(t_ref):
            continue
        assert v_ref <= got.score_bound + 1e-12
        if not math.isnan(got.threshold):
            assert got.score <= v_ref + 1e-12
        if math.isnan(got.threshold) or v_ref > got.score + 1e-12:
            assert got.search_range[0] < t_ref < got.search_range[1]


def test_best_threshold_inside_a_top_bin_of_negatives() -> None:
    # the top bin holds only negatives: a threshold inside it (fewer false positives) beats its
    # edge for accuracy, and nothing-predicted-positive is no candidate to dominate it
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(20, int), (rng.random(400) < 0.1).astype(int)]
    s = np.r_[1000.0 + np.arange(20), rng.random(400) * 0.9]
    roc = sm.ROCCurve(max_bytes=416).update(y, s).compute()
    assert roc.tpr[1] == 0 and roc.fpr[1] > 0 and roc.exact[1]  # a pure-negative top bin
    for criterion in ("accuracy", "youden", "f1", "closest", "tnr_at_tpr"):
        got = roc.best_threshold(criterion, VALUES.get(criterion))
        t_ref, v_ref = best_threshold_brute(y, s, None, criterion, VALUES.get(criterion))
        assert got.score <= v_ref + TOL and v_ref <= got.score_bound + TOL
        if v_ref > got.score + TOL:
            assert got.search_range[0] < t_ref < got.search_range[1]
    assert roc.best_threshold("accuracy").search_range[1] == np.inf


def test_partial_auroc_and_interpolated_ap_metrics() -> None:
    rng = np.random.default_rng(3)
    for name, (y, s, scores) in _distributions(rng, 20000).items():
        for budget in (1024, 16384):
            for max_fpr in (0.001, 0.05, 0.3, 1.0):
                m = sm.AUROC(max_bytes=budget, scores=scores, max_fpr=max_fpr).update(y, s)
                ex = roc_auc_score(y, s, max_fpr=max_fpr)
                lo, hi = m.bounds()
                assert lo - TOL <= ex <= hi + TOL, (name, budget, max_fpr, lo, ex, hi)
                assert lo <= m.compute() <= hi
                if max_fpr == 1.0:
                    assert (lo, hi) == sm.AUROC(max_bytes=budget, scores=scores).update(y, s).bounds()
            for kw in ({"interpolated": True}, {"eleven_point": True}):
                ap = sm.AveragePrecision(max_bytes=budget, scores=scores, **kw).update(y, s)
                ex = interpolated_ap(y, s, eleven_point="eleven_point" in kw)
                lo, hi = ap.bounds()
                assert lo - TOL <= ex <= hi + TOL, (name, budget, kw, lo, ex, hi)
                assert lo <= ap.compute() <= hi
    # the certificate tightens with the budget (crowded probabilities, 1M-sample scale not needed)
    y, s, _ = _distributions(rng, 20000)["crowded"]
    widths = [
        np.subtract(*sm.AUROC(max_bytes=b, scores="probability", max_fpr=0.1).update(y, s).bounds()[::-1])
        for b in (1024, 16384)
    ]
    assert widths[1] < widths[0] / 4


def test_small_streams_exact_for_new_readouts() -> None:
    rng = np.random.default_rng(4)
    y, s = rng.integers(0, 2, 300), np.round(rng.normal(size=300), 1)
    w = rng.integers(1, 4, 300).astype(float)
    m = sm.AUROC(max_bytes=1 << 16, max_fpr=0.2).update(y, s, sample_weight=w)
    v = m.compute()
    assert m.is_exact and m.bounds() == (v, v)
    assert abs(v - roc_auc_score(y, s, sample_weight=w, max_fpr=0.2)) <= 1e-12
    for kw in ({"interpolated": True}, {"eleven_point": True}):
        ap = sm.AveragePrecision(max_bytes=1 << 16, **kw).update(y, s, sample_weight=w)
        v = ap.compute()
        assert ap.bounds() == (v, v)
        assert abs(v - interpolated_ap(y, s, w, eleven_point="eleven_point" in kw)) <= 1e-12
    roc = sm.ROCCurve(max_bytes=1 << 16).update(y, s, sample_weight=w).compute()
    assert roc.is_exact and roc.exact.all()
    (lx, ly), (ux, uy) = roc.envelope()
    np.testing.assert_array_equal(lx, roc.fpr)
    np.testing.assert_array_equal(uy, roc.tpr)
    best = roc.best_threshold("youden")
    assert best.score_bound == best.score and best.search_range is None and best.is_exact


def test_exact_mode_results_unchanged() -> None:
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 500)
    s = rng.normal(size=500) + y
    roc = sm.ROCCurve().update(y, s).compute()
    pr = sm.PRCurve().update(y, s).compute()
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(roc.fpr, fpr, rtol=TOL)
    assert roc.is_exact and pr.is_exact and roc.exact.shape == roc.fpr.shape
    (lx, ly), (ux, uy) = roc.envelope()
    for a in (lx, ux):
        np.testing.assert_array_equal(a, roc.fpr)
    for a in (ly, uy):
        np.testing.assert_array_equal(a, roc.tpr)
    v = roc.area()
    assert roc.area_bounds() == (v, v) and roc.area_bounds(0.3) == (roc.area(0.3),) * 2
    for method in ("step", "interpolated", "eleven_point", "trapezoid"):
        assert pr.area_bounds(method) == (pr.area(method),) * 2
    np.testing.assert_array_equal(pr.precision_low, pr.precision)
    np.testing.assert_array_equal(pr.precision_high, pr.precision)
    for c in CRITERIA:
        t_ref, v_ref = best_threshold_brute(y, s, None, c, VALUES.get(c), 2.0)
        if math.isnan(t_ref):
            with pytest.warns(sm.UndefinedMetricWarning):
                b = roc.best_threshold(c, VALUES.get(c), beta=2.0)
            assert math.isnan(b.score) and math.isnan(b.score_bound) and b.search_range is None
            continue
        b = roc.best_threshold(c, VALUES.get(c), beta=2.0)
        assert b.score_bound == b.score and b.search_range is None
        assert b.threshold == t_ref and abs(b.score - v_ref) <= 1e-12
    pt = roc.at(0.1234)
    assert pt.is_exact and pt.bounds("accuracy") == (pt.accuracy, pt.accuracy)
    with pytest.raises(ValueError, match="metric"):
        pt.bounds("nope")


def test_multiclass_curves_partial_auroc_and_micro() -> None:
    rng = np.random.default_rng(6)
    n, c = 6000, 4
    y = rng.integers(0, c, n)
    logits = rng.normal(size=(n, c)) + 2 * np.eye(c)[y]
    prob = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    onehot = np.eye(c)[y]
    kw = {"max_bytes": 4 * 416, "scores": "probability"}
    curves = sm.ROCCurve(c, **kw).update(y, prob).compute()
    prs = sm.PRCurve(c, **kw).update(y, prob).compute()
    for k in range(c):
        _check_roc(curves[k], onehot[:, k], prob[:, k])
        _check_pr(prs[k], onehot[:, k], prob[:, k])
    micro = sm.ROCCurve(c, average="micro", **kw).update(y, prob).compute()
    _check_roc(micro, onehot.ravel(), prob.ravel())
    for avg in (None, "macro", "weighted"):
        m = sm.AUROC(c, average=avg, max_fpr=0.2, **kw).update(y, prob)
        per = np.array([roc_auc_score(onehot[:, k], prob[:, k], max_fpr=0.2) for k in range(c)])
        ex = per if avg is None else np.average(per, weights=onehot.sum(0) if avg == "weighted" else None)
        lo, hi = m.bounds()
        assert np.all(np.asarray(lo) - TOL <= ex) and np.all(ex <= np.asarray(hi) + TOL)
    m = sm.AUROC(c, average="micro", max_fpr=0.2, **kw).update(y, prob)
    lo, hi = m.bounds()
    assert lo <= roc_auc_score(onehot.ravel(), prob.ravel(), max_fpr=0.2) <= hi
    ap = sm.AveragePrecision(c, average=None, interpolated=True, **kw).update(y, prob)
    lo, hi = ap.bounds()
    ex = np.array([interpolated_ap(onehot[:, k], prob[:, k]) for k in range(c)])
    assert np.all(lo - TOL <= ex) and np.all(ex <= hi + TOL)


def test_one_vs_one_is_refused_with_a_reason() -> None:
    for kw in ({"max_bytes": 1 << 16}, {"thresholds": 10}):
        with pytest.raises(ValueError, match=r"one-vs-one.*(?s:.*)negative histogram"):
            sm.AUROC(3, multi_class="ovo", **kw)
    assert sm.AUROC(3, multi_class="ovo").update([0, 1, 2], np.eye(3)).compute() == 1.0


def test_probability_check_skips_ignored_rows() -> None:
    # binary, multiclass (whole rows) and multilabel (elements); also through a MetricSet
    m = sm.AUROC(max_bytes=2048, scores="probability", ignore_index=-1)
    m.update([0, -1, 1], [0.2, 7.0, 0.9])  # the ignored row's score is out of range: fine
    assert m.compute() == 1.0
    before = m.state_dict()
    with pytest.raises(ValueError, match=r"y_score: .*\[0, 1\].*-0\.5.*index 2"):
        m.update([-1, 0, 1], [3.0, 0.1, -0.5])
    after = m.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before if k != "config")
    mc = sm.AveragePrecision(3, max_bytes=4096, scores="probability", ignore_index=9)
    mc.update([0, 9, 2], [[0.7, 0.2, 0.1], [2.0, -1.0, 0.5], [0.1, 0.1, 0.8]])
    with pytest.raises(ValueError, match=r"index \(1, 0\)"):
        mc.update([0, 1], [[0.7, 0.2, 0.1], [2.0, -1.0, 0.5]])
    ml = sm.AUROC(2, multilabel=True, max_bytes=4096, scores="probability", ignore_index=-1)
    ml.update([[1, -1], [0, 1], [1, 0]], [[0.9, 5.0], [0.2, 0.8], [0.6, 0.3]])
    with pytest.raises(ValueError, match=r"index \(0, 0\)"):
        ml.update([[1, -1]], [[1.5, 0.5]])
    ms = sm.MetricSet(
        a=sm.AUROC(max_bytes=2048, scores="probability", ignore_index=-1),
        p=sm.PRCurve(max_bytes=2048, scores="probability", ignore_index=-1),
    )
    ms.update([0, -1, 1], [0.2, -3.0, 0.9])
    assert ms.compute()["a"] == 1.0
    with pytest.raises(ValueError, match="index 0"):
        ms.update([0], [1.5])


def test_counts_helpers() -> None:
    c = ThresholdCounts(np.array([3.0, 2.0, 1.0]), np.array([1.0, 1.0, 3.0]), np.array([0.0, 2.0, 4.0]), 3, 4)
    assert not c.mixed().any()
    b = ThresholdCounts(c.thresholds, c.tps, c.fps, 3, 4, binned=True)
    np.testing.assert_array_equal(b.mixed(), [False, False, True])
    np.testing.assert_array_equal(b.previous()[1], [0.0, 0.0, 2.0])
    empty = ThresholdCounts(np.zeros(0), np.zeros(0), np.zeros(0), 0.0, 0.0, binned=True)
    assert empty.previous()[0].shape == (0,) and not empty.mixed().any()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(2, 300),
    levels=st.integers(2, 40),
    budget=st.sampled_from([416, 512, 800]),
    weighted=st.sampled_from(["none", "int", "float"]),
    far=st.tuples(st.integers(0, 6), st.integers(0, 6)),
    rate=st.sampled_from([0.05, 0.5, 0.95]),
)
def test_certificates_hold_on_random_small_data(seed, n, levels, budget, weighted, far, rate) -> None:
    """Random few-level scores (ties, bins holding both classes in any order), any weights, and
    optionally far-away negatives on top / positives at the bottom (one-class end bins)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(int)
    y[:2] = [0, 1]
    s = rng.integers(0, levels, n) / levels + 0.01 * y * rng.integers(0, 2, n)
    top, bottom = far
    y = np.r_[y, np.zeros(top, int), np.ones(bottom, int)]
    s = np.r_[s, 1000.0 + rng.integers(0, 3, top), -1000.0 - rng.integers(0, 3, bottom)]
    n = y.shape[0]
    w = {"none": None, "int": rng.integers(1, 4, n).astype(float), "float": rng.random(n) + 0.05}[weighted]
    roc = sm.ROCCurve(max_bytes=budget).update(y, s, sample_weight=w).compute()
    pr = sm.PRCurve(max_bytes=budget).update(y, s, sample_weight=w).compute()
    _check_roc(roc, y, s, w)
    _check_pr(pr, y, s, w)
    _check_at(roc, y, s, w)
    for criterion in ("accuracy", "youden", "f1", "precision_at_recall", "tpr_at_tnr"):
        value = VALUES.get(criterion)
        t_ref, v_ref = best_threshold_brute(y, s, w, criterion, value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
            got = roc.best_threshold(criterion, value)
        if math.isnan(t_ref):
            assert math.isnan(got.threshold)
            continue
        assert v_ref <= got.score_bound + 1e-12
        if math.isnan(got.threshold) or v_ref > got.score + 1e-12:
            assert got.search_range[0] < t_ref < got.search_range[1]
        else:
            assert got.score <= v_ref + 1e-12
