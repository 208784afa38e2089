"""Exact ranking metrics against scikit-learn and brute-force oracles (docs/definitions/ranking.md).

Random data with heavy ties (scores rounded to a few levels), ±inf scores, sample weights
(including zeros), binary / multiclass / multilabel, every average; ROC and PR curves point by
point; the seeds' worked examples; undefined cases; bad input rejected atomically.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import quiet_compute as quiet
from ranking_oracles import (
    auroc_pairs,
    best_threshold_brute,
    confusion_at,
    delong_direct,
    finite,
    interpolated_ap,
    ovo_auroc,
    partial_auroc_per_class,
    unfinite,
)
from sklearn.metrics import (
    auc,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)

import streammetrics as sm
from streammetrics.ranking._operating_points import CRITERIA

TOL = dict(rtol=1e-12, atol=1e-12)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), **TOL)


def binary_data(rng, n, levels=8, inf=True):
    y = rng.integers(0, 2, n)
    s = np.round((rng.normal(size=n) + y) * levels / 4) / levels
    if inf:
        s[rng.random(n) < 0.03] = np.inf
        s[rng.random(n) < 0.03] = -np.inf
    return y, s


def weights(rng, n, kind):
    if kind is None:
        return None
    if kind == "int":
        return rng.integers(0, 4, n).astype(float)
    return rng.random(n) * 2


def stream(metric, y, s, w=None, batch=97):
    for i in range(0, len(y), batch):
        metric.update(
            y[i : i + batch], s[i : i + batch], sample_weight=None if w is None else w[i : i + batch]
        )
    return metric


# -- binary ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("wkind", [None, "int", "float"])
def test_binary_against_sklearn(seed, wkind):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 1500))
    y, s = binary_data(rng, n, levels=int(rng.integers(1, 40)))
    w = weights(rng, n, wkind)
    fs = finite(s)
    close(stream(sm.AUROC(), y, s, w).compute(), roc_auc_score(y, fs, sample_weight=w))
    close(stream(sm.AveragePrecision(), y, s, w).compute(), average_precision_score(y, fs, sample_weight=w))
    for mf in (0.05, 0.3, 0.77, 1.0):
        close(
            stream(sm.AUROC(max_fpr=mf), y, s, w).compute(),
            roc_auc_score(y, fs, sample_weight=w, max_fpr=mf),
        )
    # ROC curve, both layouts
    for drop in (False, True):
        fpr, tpr, thr = roc_curve(y, fs, sample_weight=w, drop_intermediate=drop)
        got = stream(sm.ROCCurve(drop_intermediate=drop), y, s, w).compute()
        close(got.fpr, fpr)
        close(got.tpr, tpr)
        np.testing.assert_array_equal(got.thresholds, unfinite(thr, s))
        close(got.area(), roc_auc_score(y, fs, sample_weight=w))
    # PR curve: scikit-learn's reversed, without the appended (recall 0, precision 1) point
    p, r, thr = precision_recall_curve(y, fs, sample_weight=w)
    got = stream(sm.PRCurve(), y, s, w).compute()
    close(got.precision, p[:-1][::-1])
    close(got.recall, r[:-1][::-1])
    np.testing.assert_array_equal(got.thresholds, unfinite(thr, s)[::-1])
    close(got.area("trapezoid"), auc(r, p))
    close(got.area(), average_precision_score(y, fs, sample_weight=w))
    # interpolated and 11-point AP
    close(stream(sm.AveragePrecision(interpolated=True), y, s, w).compute(), interpolated_ap(y, s, w))
    close(
        stream(sm.AveragePrecision(eleven_point=True), y, s, w).compute(),
        interpolated_ap(y, s, w, eleven_point=True),
    )
    close(got.area("interpolated"), interpolated_ap(y, s, w))


def test_binary_pair_oracle_and_exact_rational():
    rng = np.random.default_rng(11)
    y, s = binary_data(rng, 300, levels=3)
    m = stream(sm.AUROC(), y, s)
    assert m.compute() == pytest.approx(auroc_pairs(y, s), rel=1e-13)
    # unit weights: 2U is an integer and the value is the correctly rounded ratio
    st = m._state
    two_u = int(st.u2()[0].sum())
    P, N = int(y.sum()), int((1 - y).sum())
    assert m.compute() == two_u / (2 * P * N)


def test_float32_and_int_scores_kept():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    s32 = rng.random(400).astype(np.float32)
    m = sm.AUROC().update(y, s32)
    assert m.state_dict()["values"].dtype == np.float32
    assert m.nbytes < 400 * 8
    close(m.compute(), roc_auc_score(y, s32.astype(np.float64)))
    si = rng.integers(0, 5, 400)
    close(sm.AveragePrecision().update(y, si).compute(), average_precision_score(y, si))
    # mixing precisions promotes
    m.update(y, s32.astype(np.float64) + 1e-9)
    close(
        m.compute(),
        roc_auc_score(np.r_[y, y], np.r_[s32.astype(np.float64), s32.astype(np.float64) + 1e-9]),
    )


# -- seeds ---------------------------------------------------------------------------------------------
BINDER_S = [0.65, 0.62, 0.59, 0.56, 0.55, 0.52, 0.48, 0.45, 0.42, 0.41, 0.35]
BINDER_Y = [1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0]
BINDER_Y_PERFECT = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
AP_S = [0.95, 0.92, 0.89, 0.86, 0.85, 0.82, 0.78, 0.75, 0.72, 0.71]
AP_Y = [1, 0, 1, 1, 0, 1, 1, 0, 1, 0]
PATIENT_Y = [1, 0, 1, 1, 0, 1, 1, 0, 0, 0]
PATIENT_S = [0.95, 0.85, 0.72, 0.63, 0.59, 0.45, 0.37, 0.20, 0.12, 0.05]


def test_binder_lecture_examples():
    assert sm.AUROC().update(BINDER_Y, BINDER_S).compute() == pytest.approx(19 / 30, abs=1e-15)
    assert sm.AUROC().update(BINDER_Y_PERFECT, BINDER_S).compute() == 1.0
    # the lecture's TP/FP table
    roc = sm.ROCCurve().update(BINDER_Y, BINDER_S).compute()
    np.testing.assert_array_equal(roc.tpr * 6, [0, 1, 2, 2, 2, 3, 4, 4, 5, 5, 6, 6])
    np.testing.assert_array_equal(roc.fpr * 5, [0, 0, 0, 1, 2, 2, 2, 3, 3, 4, 4, 5])
    ap = sm.AveragePrecision().update(AP_Y, AP_S).compute()
    assert ap == pytest.approx((1 + 2 / 3 + 3 / 4 + 4 / 6 + 5 / 7 + 6 / 9) / 6, abs=1e-15)
    assert round(ap, 3) == 0.744
    pr = sm.PRCurve().update(AP_Y, AP_S).compute()
    np.testing.assert_allclose(
        pr.precision, [1, 1 / 2, 2 / 3, 3 / 4, 3 / 5, 4 / 6, 5 / 7, 5 / 8, 6 / 9, 6 / 10]
    )
    np.testing.assert_allclose(pr.recall * 6, [1, 1, 2, 3, 3, 4, 5, 5, 6, 6])


def test_ten_patient_table():
    roc = sm.ROCCurve().update(PATIENT_Y, PATIENT_S).compute()
    # thresholds 0.95 ... 0.05 step through the sorted table
    np.testing.assert_array_equal(roc.thresholds[1:], PATIENT_S)
    np.testing.assert_allclose(roc.tpr[1:], np.cumsum(PATIENT_Y) / 5)
    np.testing.assert_allclose(roc.fpr[1:], np.cumsum(1 - np.array(PATIENT_Y)) / 5)
    value = sm.AUROC().update(PATIENT_Y, PATIENT_S).compute()
    assert value == pytest.approx(auroc_pairs(np.array(PATIENT_Y), np.array(PATIENT_S)))
    assert value == pytest.approx(19 / 25, abs=1e-15)  # 19 of the 25 positive-negative pairs are ordered
    at = roc.at(0.5)
    assert (at.tp, at.fp, at.fn, at.tn) == (3.0, 2.0, 2.0, 3.0)
    assert at.tpr == 0.6 and at.precision == 0.6 and at.accuracy == 0.6


# -- multiclass and multilabel -----------------------------------------------------------------------
def multiclass_data(rng, n, c, levels=5):
    y = rng.integers(0, c, n)
    S = np.round((rng.random((n, c)) + 0.6 * np.eye(c)[y]) * levels) / levels
    S[rng.random((n, c)) < 0.01] = np.inf
    return y, S


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("wkind", [None, "float"])
@pytest.mark.parametrize("average", ["macro", "weighted", "micro", None])
def test_multiclass_ovr_against_sklearn(seed, wkind, average):
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(80, 600)), int(rng.integers(3, 6))
    y, S = multiclass_data(rng, n, c)
    w = weights(rng, n, wkind)
    Y = np.eye(c, dtype=int)[y]
    fS = np.column_stack([finite(S[:, j]) for j in range(c)])
    if average == "micro":
        fS = finite(S.ravel()).reshape(S.shape)
    close(
        stream(sm.AUROC(c, average=average), y, S, w).compute(),
        roc_auc_score(Y, fS, average=average, sample_weight=w),
    )
    close(
        stream(sm.AveragePrecision(c, average=average), y, S, w).compute(),
        average_precision_score(Y, fS, average=average, sample_weight=w),
    )
    if average != "micro":
        close(
            stream(sm.AUROC(c, average=average, max_fpr=0.3), y, S, w).compute(),
            partial_auroc_per_class(Y, S, w, 0.3, average),
        )


def test_multiclass_probabilities_match_sklearn_multiclass_api():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 4, 500)
    P = rng.dirichlet(np.ones(4), size=500)
    for avg in ("macro", "weighted", "micro"):
        close(
            sm.AUROC(4, average=avg).update(y, P).compute(),
            roc_auc_score(y, P, multi_class="ovr", average=avg),
        )
    for avg in ("macro", "weighted"):
        close(
            sm.AUROC(4, average=avg, multi_class="ovo").update(y, P).compute(),
            roc_auc_score(y, P, multi_class="ovo", average=avg),
        )
    close(sm.AveragePrecision(4).update(y, P).compute(), average_precision_score(y, P))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_weighted_ovo_against_pair_oracle(seed, average):
    rng = np.random.default_rng(seed)
    y, S = multiclass_data(rng, 300, 4, levels=3)
    S[np.isposinf(S)] = 9.0
    w = rng.random(300) * 2
    close(
        stream(sm.AUROC(4, average=average, multi_class="ovo"), y, S, w).compute(),
        ovo_auroc(y, S, w, average),
    )
    close(
        stream(sm.AUROC(4, average=average, multi_class="ovo"), y, S).compute(),
        ovo_auroc(y, S, None, average),
    )
    close(
        stream(sm.AUROC(4, average=average, multi_class="ovo", max_fpr=0.4), y, S, w).compute(),
        ovo_auroc(y, S, w, average, max_fpr=0.4),
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_ovo_max_fpr_one_is_the_full_area_bit_for_bit(seed, average):
    """``max_fpr=1`` is the full area: one-vs-one reads it from the state's pair counts, as
    one-vs-rest does and as the engines' keyed ranges do (the review of #32 found the trapezoid
    of each pair's curve here, 1 ulp away from them in some seeds)."""
    rng = np.random.default_rng(seed)
    y, S = multiclass_data(rng, 300, 4, levels=3)
    w = rng.random(300) * 2
    for weights in (None, w):
        full = stream(sm.AUROC(4, average=average, multi_class="ovo"), y, S, weights).compute()
        one = stream(sm.AUROC(4, average=average, multi_class="ovo", max_fpr=1.0), y, S, weights).compute()
        assert one == full
        close(one, ovo_auroc(y, S, weights, average))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("average", ["macro", "weighted", "micro", None])
def test_multilabel_against_sklearn(seed, average):
    rng = np.random.default_rng(seed)
    n, L = 400, 3
    Y = rng.integers(0, 2, (n, L))
    S = np.round(rng.random((n, L)) + 0.3 * Y, 1)
    w = rng.random(n)
    close(
        stream(sm.AUROC(L, multilabel=True, average=average), Y, S, w).compute(),
        roc_auc_score(Y, S, average=average, sample_weight=w),
    )
    close(
        stream(sm.AveragePrecision(L, multilabel=True, average=average), Y, S, w).compute(),
        average_precision_score(Y, S, average=average, sample_weight=w),
    )
    close(
        stream(sm.AUROC(L, multilabel=True, average=average, max_fpr=0.2), Y, S, w).compute(),
        roc_auc_score(Y, S, average=average, sample_weight=w, max_fpr=0.2),
    )


def test_multiclass_curves_per_class_and_micro():
    rng = np.random.default_rng(8)
    y, S = multiclass_data(rng, 300, 3)
    S[np.isposinf(S)] = 5.0
    Y = np.eye(3, dtype=int)[y]
    curves = sm.ROCCurve(3).update(y, S).compute()
    assert isinstance(curves, list) and len(curves) == 3
    for c, cur in enumerate(curves):
        fpr, tpr, thr = roc_curve(Y[:, c], S[:, c], drop_intermediate=False)
        close(cur.fpr, fpr)
        close(cur.tpr, tpr)
        np.testing.assert_array_equal(cur.thresholds, thr)
    micro = sm.PRCurve(3, average="micro").update(y, S).compute()
    p, r, thr = precision_recall_curve(Y.ravel(), S.ravel())
    close(micro.precision, p[:-1][::-1])
    close(micro.recall, r[:-1][::-1])
    ml = sm.PRCurve(3, multilabel=True).update(Y, S).compute()
    p, r, _ = precision_recall_curve(Y[:, 1], S[:, 1])
    close(ml[1].precision, p[:-1][::-1])


def test_ignore_index():
    rng = np.random.default_rng(4)
    y, s = binary_data(rng, 300, inf=False)
    y_pad = y.copy()
    y_pad[::7] = -1
    keep = y_pad != -1
    close(sm.AUROC(ignore_index=-1).update(y_pad, s).compute(), roc_auc_score(y[keep], s[keep]))
    yc, S = multiclass_data(rng, 300, 3)
    S[np.isposinf(S)] = 5.0
    yc_pad = yc.copy()
    yc_pad[::5] = 255
    keep = yc_pad != 255
    close(
        sm.AveragePrecision(3, ignore_index=255).update(yc_pad, S).compute(),
        average_precision_score(np.eye(3)[yc[keep]], S[keep]),
    )
    Y = rng.integers(0, 2, (200, 2))
    Sm = rng.random((200, 2))
    Yp = Y.copy()
    Yp[::3, 0] = -1
    got = sm.AUROC(2, multilabel=True, average=None, ignore_index=-1).update(Yp, Sm).compute()
    close(got[0], roc_auc_score(Y[Yp[:, 0] != -1, 0], Sm[Yp[:, 0] != -1, 0]))
    close(got[1], roc_auc_score(Y[:, 1], Sm[:, 1]))
    # an ignore_index of 0 or 1 drops those entries too (as torchmetrics' and the engines' keyed
    # ranges do): label 0 ignored leaves no negative, label 1 no positive -- undefined
    for ignored in (0, 1):
        with pytest.warns(sm.UndefinedMetricWarning):
            got = sm.AUROC(2, multilabel=True, average=None, ignore_index=ignored).update(Y, Sm).compute()
        assert np.isnan(got).all()
        with pytest.warns(sm.UndefinedMetricWarning):
            assert np.isnan(sm.AUROC(ignore_index=ignored).update(Y[:, 0], Sm[:, 0]).compute())


# -- undefined cases ------------------------------------------------------------------------------------
def test_undefined_is_nan_with_one_warning():
    for metric in (sm.AUROC(), sm.AveragePrecision()):
        with pytest.warns(sm.UndefinedMetricWarning) as rec:
            assert math.isnan(metric.compute())
        assert len(rec) == 1
    m = sm.AUROC().update([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.warns(sm.UndefinedMetricWarning):
        assert math.isnan(m.compute())
    m = sm.AveragePrecision().update([0, 0], [0.1, 0.2])
    with pytest.warns(sm.UndefinedMetricWarning):
        assert math.isnan(m.compute())
    # AP is defined without negatives
    assert sm.AveragePrecision().update([1, 1], [0.1, 0.2]).compute() == 1.0
    # a class without positives is left out of the macro average, with one warning naming it
    y = np.array([0, 1, 0, 1, 0, 1])
    S = np.random.default_rng(0).random((6, 3))
    with pytest.warns(sm.UndefinedMetricWarning, match=r"\[2\]") as rec:
        v = sm.AUROC(3).update(y, S).compute()
    assert len(rec) == 1
    per = quiet(sm.AUROC(3, average=None).update(y, S))
    assert math.isnan(per[2]) and v == pytest.approx(np.mean(per[:2]))
    with pytest.warns(sm.UndefinedMetricWarning):
        roc = sm.ROCCurve().update([1, 1], [0.3, 0.4]).compute()
    assert np.isnan(roc.fpr).all()
    with pytest.warns(sm.UndefinedMetricWarning):
        iv = sm.AUROC().interval()
    assert all(math.isnan(x) for x in iv)


# -- thresholds ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("criterion", CRITERIA)
def test_best_threshold_against_brute_force(seed, criterion):
    rng = np.random.default_rng(seed)
    y, s = binary_data(rng, int(rng.integers(20, 200)), levels=int(rng.integers(1, 10)), inf=seed % 2 == 0)
    w = None if seed < 2 else rng.random(len(y))
    values = [None]
    if criterion in ("tpr_at_tnr", "tnr_at_tpr", "precision_at_recall", "recall_at_precision"):
        values = [0.0, 0.3, 0.8, 0.95, 1.0]
    beta = 2.0 if criterion == "fbeta" else 1.0
    for curve in (stream(sm.ROCCurve(), y, s, w).compute(), stream(sm.PRCurve(), y, s, w).compute()):
        for value in values:
            t_ref, score_ref = best_threshold_brute(y, s, w, criterion, value, beta)
            if math.isnan(t_ref):
                with pytest.warns(sm.UndefinedMetricWarning):
                    got = curve.best_threshold(criterion, value, beta=beta)
                assert math.isnan(got.threshold)
                continue
            got = curve.best_threshold(criterion, value, beta=beta)
            assert float(got) == t_ref
            tp, fp, fn, tn = confusion_at(y, s, w, t_ref)
            close([got.tp, got.fp, got.fn, got.tn], [tp, fp, fn, tn])
            assert got.threshold != np.inf or (s == np.inf).any()


def test_best_threshold_ties_go_to_higher_threshold_and_metrics():
    # accuracy is 3/4 at thresholds 0.8 and 0.4: the higher wins
    curve = sm.ROCCurve().update([1, 0, 1, 0], [0.8, 0.6, 0.4, 0.2]).compute()
    best = curve.best_threshold("accuracy")
    assert best.threshold == 0.8 and best.accuracy == 0.75
    assert float(best) == 0.8 and best.tpr == 0.5 and best.fpr == 0.0 and best.precision == 1.0
    assert curve.best_threshold("youden").threshold == 0.8
    assert curve.best_threshold("f1").threshold == 0.4
    assert curve.best_threshold("fbeta", beta=0.5).threshold == 0.8
    with pytest.raises(ValueError, match="criterion"):
        curve.best_threshold("nope")
    with pytest.raises(ValueError, match="value"):
        curve.best_threshold("tpr_at_tnr")
    with pytest.raises(ValueError, match="value"):
        curve.best_threshold("tpr_at_tnr", 1.5)
    with pytest.raises(ValueError, match="value"):
        curve.best_threshold("youden", 0.5)


def test_at_threshold():
    rng = np.random.default_rng(9)
    y, s = binary_data(rng, 200)
    w = rng.random(200)
    curve = sm.PRCurve().update(y, s, sample_weight=w).compute()
    for t in (-np.inf, -1.0, 0.0, 0.25, 0.3333, 1.0, 5.0, np.inf):
        pt = curve.at(t)
        close([pt.tp, pt.fp, pt.fn, pt.tn], confusion_at(y, s, w, t))
        assert pt.threshold == t
    with pytest.raises(ValueError, match="threshold"):
        curve.at(float("nan"))


# -- DeLong ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_delong_against_direct_computation(seed):
    rng = np.random.default_rng(seed)
    y, s = binary_data(rng, int(rng.integers(10, 120)), levels=int(rng.integers(1, 6)), inf=seed == 0)
    m = stream(sm.AUROC(), y, s, batch=13)
    auc_ref, var_ref = delong_direct(y, s)
    z = 1.959963984540054
    lo, hi = m.interval(0.95)
    close(lo, max(0.0, auc_ref - z * math.sqrt(var_ref)))
    close(hi, min(1.0, auc_ref + z * math.sqrt(var_ref)))
    # unit weights given explicitly = no weights
    lo_w, hi_w = stream(sm.AUROC(), y, s, np.ones(len(y))).interval(0.95)
    close([lo_w, hi_w], [lo, hi])


def test_delong_per_class_and_errors():
    rng = np.random.default_rng(2)
    y, S = multiclass_data(rng, 200, 3)
    m = sm.AUROC(3, average=None).update(y, S)
    lo, hi = m.interval(0.9)
    for c in range(3):
        a, v = delong_direct(y == c, S[:, c])
        half = 1.6448536269514722 * math.sqrt(v)
        close([lo[c], hi[c]], [max(0, a - half), min(1, a + half)])
    with pytest.raises(ValueError, match="interval"):
        sm.AUROC(3).interval()
    with pytest.raises(ValueError, match="confidence"):
        sm.AUROC().interval(1.5)


# -- protocol details ------------------------------------------------------------------------------------
def test_bounds_and_is_exact():
    y, s = [0, 1, 1, 0], [0.1, 0.4, 0.35, 0.8]
    for cls in (sm.AUROC, sm.AveragePrecision):
        m = cls().update(y, s)
        assert m.is_exact is True
        lo, hi = m.bounds()
        assert lo == hi == m.compute()
    assert sm.ROCCurve.is_exact and sm.PRCurve.is_exact
    # the bounded modes (tests/ranking/test_bounded.py) reject budgets too small for one column
    with pytest.raises(ValueError, match="max_bytes"):
        sm.AUROC(max_bytes=100)
    assert sm.AveragePrecision(thresholds=10).update(y, s).is_exact is False


def test_metricset_shares_one_buffer():
    ms = sm.MetricSet(
        auroc=sm.AUROC(),
        pauc=sm.AUROC(max_fpr=0.2),
        ap=sm.AveragePrecision(interpolated=True),
        roc=sm.ROCCurve(drop_intermediate=True),
        pr=sm.PRCurve(),
    )
    assert ms.groups == [["auroc", "pauc", "ap", "roc", "pr"]]
    rng = np.random.default_rng(0)
    y, s = binary_data(rng, 500)
    stream(ms, y, s)
    out = ms.compute()
    close(out["auroc"], roc_auc_score(y, finite(s)))
    close(out["pauc"], roc_auc_score(y, finite(s), max_fpr=0.2))
    close(out["roc"].fpr, roc_curve(y, finite(s))[0])
    assert ms.nbytes == ms["auroc"].nbytes
    # one-vs-one needs per-class groups: a separate state
    ms2 = sm.MetricSet(
        a=sm.AUROC(3), b=sm.AUROC(3, multi_class="ovo"), c=sm.AveragePrecision(3, average=None)
    )
    assert ms2.groups == [["a", "c"], ["b"]]


def test_constructor_validation():
    with pytest.raises(ValueError, match="average"):
        sm.AUROC(average="samples")
    with pytest.raises(ValueError, match="max_fpr"):
        sm.AUROC(max_fpr=0.0)
    with pytest.raises(ValueError, match="max_fpr"):
        sm.AUROC(max_fpr=1.5)
    with pytest.raises(ValueError, match="multi_class"):
        sm.AUROC(multi_class="ovo")
    with pytest.raises(ValueError, match="average"):
        sm.AUROC(3, multi_class="ovo", average="micro")
    with pytest.raises(ValueError, match="multi_class"):
        sm.AUROC(3, multi_class="raise")
    with pytest.raises(ValueError, match="num_classes"):
        sm.AveragePrecision(multilabel=True)
    with pytest.raises(ValueError, match="method"):
        sm.PRCurve().update([0, 1], [0.1, 0.2]).compute().area("simpson")


@pytest.mark.parametrize(
    ("metric", "y", "s", "w", "match"),
    [
        (sm.AUROC(), [0, 1, 1], [0.1, np.nan, 0.3], None, r"y_score: .*NaN.*index 1"),
        (sm.AUROC(), [0, 2, 1], [0.1, 0.2, 0.3], None, r"y_true: .*0 or 1.*2 at index 1"),
        (sm.AUROC(), [0, 1, 1], [0.1, 0.2], None, r"y_score: expected shape \(3,\)"),
        (sm.AUROC(), [0, 1, 1], [0.1, 0.2, 0.3], [1, -1, 1], r"sample_weight: .*-1.0 at index 1"),
        (sm.AUROC(), [0, 1, 1], [0.1, 0.2, 0.3], [1, 1], r"sample_weight: expected shape"),
        (sm.AUROC(3), [0, 1, 3], np.ones((3, 3)), None, r"y_true: .*\[0, 3\).*3 at index 2"),
        (sm.AUROC(3), [0, 1, 2], np.ones((3, 2)), None, r"y_score: expected scores of shape \(3, 3\)"),
        (
            sm.AveragePrecision(2, multilabel=True),
            [[0, 1], [1, 2]],
            np.ones((2, 2)),
            None,
            r"y_true: .*\(1, 1\)",
        ),
        (sm.AUROC(), 1, float("nan"), None, "y_score: .*NaN"),
        (sm.AUROC(), 2, 0.5, None, "y_true: labels must be 0 or 1; first invalid value 2 at index 0"),
        (sm.AUROC(), 1, 0.5, -1.0, "sample_weight"),
        (sm.AUROC(), ["a"], [0.5], None, "y_true"),
    ],
)
def test_bad_input_rejected_atomically(metric, y, s, w, match):
    rng = np.random.default_rng(0)
    good_y, good_s = (rng.integers(0, 2, 50), rng.random(50))
    if metric.task == "multiclass":
        good_y, good_s = rng.integers(0, 3, 50), rng.random((50, 3))
    if metric.task == "multilabel":
        good_y, good_s = rng.integers(0, 2, (50, 2)), rng.random((50, 2))
    metric.update(good_y, good_s)
    before = metric.state_dict()
    with pytest.raises(ValueError, match=match):
        metric.update(y, s, sample_weight=w)
    after = metric.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k]) if isinstance(before[k], np.ndarray) else None
        assert isinstance(before[k], np.ndarray) or before[k] == after[k]


def test_per_sample_path_and_empty_batches():
    rng = np.random.default_rng(1)
    y, s = binary_data(rng, 300)
    w = rng.random(300)
    one = sm.AUROC()
    ap = sm.AveragePrecision()
    for yi, si, wi in zip(y.tolist(), s.tolist(), w.tolist(), strict=True):
        one.update(yi, si, sample_weight=wi)
        ap.update(bool(yi), np.float64(si), sample_weight=wi)
    close(one.compute(), roc_auc_score(y, finite(s), sample_weight=w))
    close(ap.compute(), average_precision_score(y, finite(s), sample_weight=w))
    # (a 1-D row with a scalar label is one multiclass sample: the per-sample law of the
    # multiclass entries of tests/_support/laws.py)
    before = one.state_dict()
    one.update([], [])
    one.update(np.zeros(0), np.zeros(0), sample_weight=np.zeros(0))
    np.testing.assert_array_equal(before["values"], one.state_dict()["values"])


def test_load_rejects_corrupt_states():
    m = sm.AUROC().update([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4])
    good = m.state_dict()
    bad_cases = [
        ({"values": good["values"][::-1].copy()}, "sorted"),
        ({"values": np.array([0.1, np.nan, 0.3, 0.4])}, "NaN"),
        ({"offsets": np.array([0, 3, 5])}, "offsets"),
        ({"offsets": np.array([0, 2])}, "offsets"),
        ({"values": good["values"].astype(np.int64)}, "values"),
        ({"weights": np.array([1.0, -1.0, 1.0, 1.0])}, "weights"),
        ({"weights": np.ones(3)}, "weights"),
        ({"extra": np.ones(3)}, "unexpected"),
    ]
    for change, match in bad_cases:
        with pytest.raises(ValueError, match=match):
            sm.AUROC.from_state_dict({**good, **change})
    missing = {k: v for k, v in good.items() if k != "offsets"}
    with pytest.raises(ValueError, match="missing"):
        sm.AUROC.from_state_dict(missing)
