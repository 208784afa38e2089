"""Bounded-memory ranking metrics (``max_bytes=``, ``thresholds=``): certificates against
scikit-learn, exactness while the data fits, the budget at every step, fixed thresholds = the
trapezoid over them, persistence and validation. Determinism (any split or merge = the single
stream's bins, bit for bit, and its certificates) is a protocol law: ``binned_set`` in
``tests/_support/laws.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

import streammetrics as sm
from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.binned.keys import prob_decode as _prob_decode
from streammetrics._scores.binned.keys import prob_keys as _prob_keys
from streammetrics._scores.binned.keys import raw_decode as _raw_decode
from streammetrics._scores.binned.keys import raw_keys as _raw_keys


def _distributions(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, np.ndarray, str]]:
    y = (rng.random(n) < 0.3).astype(int)
    z = rng.normal(size=n) + 1.5 * y
    calibrated = 1.0 / (1.0 + np.exp(-z))
    crowded = 1.0 - 10.0 ** (-3.0 - rng.random(n) - 0.5 * y)  # all in [0.999, 1)
    peaked = np.where(y == 1, 0.999 + 0.001 * rng.random(n), 0.998 + 0.001 * rng.random(n))
    ties = np.round(calibrated, 2)
    # adversarial: every positive sits just below a negative, in the same tiny interval
    base = np.repeat(rng.random(n // 2), 2)
    adv_y = np.tile([1, 0], n // 2)
    adversarial = base + np.tile([0.0, 1e-9], n // 2)
    return {
        "calibrated": (y, calibrated, "probability"),
        "logits": (y, z, "raw"),
        "crowded": (y, crowded, "probability"),
        "peaked": (y, peaked, "probability"),
        "ties": (y, ties, "probability"),
        "adversarial": (adv_y, adversarial, "raw"),
    }


def _inside(lo: float, v: float, hi: float) -> bool:
    """lo <= v <= hi, allowing the oracle's own rounding (1e-13)."""
    return lo - 1e-13 <= v <= hi + 1e-13


@pytest.mark.parametrize("max_bytes", [2048, 16384, 131072])
@pytest.mark.parametrize("transform", ["declared", "raw"])
def test_certificate_holds_binary(max_bytes: int, transform: str) -> None:
    rng = np.random.default_rng(max_bytes)
    for name, (y, s, declared) in _distributions(rng, 30000).items():
        scores = declared if transform == "declared" else "raw"
        au = sm.AUROC(max_bytes=max_bytes, scores=scores)
        ap = sm.AveragePrecision(max_bytes=max_bytes, scores=scores)
        for i in range(0, y.shape[0], 7000):
            au.update(y[i : i + 7000], s[i : i + 7000])
            ap.update(y[i : i + 7000], s[i : i + 7000])
            assert au.nbytes <= max_bytes
        ex_au, ex_ap = roc_auc_score(y, s), average_precision_score(y, s)
        lo, hi = au.bounds()
        assert _inside(lo, ex_au, hi), (name, lo, ex_au, hi)
        assert _inside(lo, au.compute(), hi)
        lo, hi = ap.bounds()
        assert _inside(lo, ex_ap, hi), (name, lo, ex_ap, hi)
        assert _inside(lo, ap.compute(), hi)
        # curves: the area's bounds; every point is exact at its threshold
        roc = sm.ROCCurve(max_bytes=max_bytes, scores=scores).update(y, s)
        assert roc.bounds() == au.bounds()
        c = roc.compute()
        for k in range(1, c.thresholds.shape[0], max(1, c.thresholds.shape[0] // 7)):
            t = c.thresholds[k]
            assert c.tpr[k] == np.mean(s[y == 1] >= t) or abs(c.tpr[k] - np.mean(s[y == 1] >= t)) < 1e-12
            assert abs(c.fpr[k] - np.mean(s[y == 0] >= t)) < 1e-12
        pr = sm.PRCurve(max_bytes=max_bytes, scores=scores).update(y, s)
        assert pr.bounds() == ap.bounds()
        best = pr.compute().best_threshold("f1")
        tp = float(np.sum((s >= best.threshold) & (y == 1)))
        assert abs(best.tp - tp) < 1e-9


def test_certificate_with_weights_and_small_budget() -> None:
    rng = np.random.default_rng(5)
    for name, (y, s, declared) in _distributions(rng, 8000).items():
        w = rng.random(y.shape[0]) * 3
        au = sm.AUROC(max_bytes=1024, scores=declared).update(y, s, sample_weight=w)
        ap = sm.AveragePrecision(max_bytes=1024, scores=declared).update(y, s, sample_weight=w)
        assert not au.is_exact
        lo, hi = au.bounds()
        assert _inside(lo, roc_auc_score(y, s, sample_weight=w), hi), name
        lo, hi = ap.bounds()
        assert _inside(lo, average_precision_score(y, s, sample_weight=w), hi), name


def test_small_streams_are_exact() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    s = np.round(rng.normal(size=400), 1)  # ties
    w = rng.integers(1, 4, 400).astype(float)
    for kw in ({}, {"sample_weight": w}):
        au = sm.AUROC(max_bytes=65536).update(y, s, **kw)
        ap = sm.AveragePrecision(max_bytes=65536).update(y, s, **kw)
        assert au.is_exact and ap.is_exact
        ex = roc_auc_score(y, s, sample_weight=kw.get("sample_weight"))
        assert abs(au.compute() - ex) <= 1e-12 and au.bounds() == (au.compute(), au.compute())
        ex = average_precision_score(y, s, sample_weight=kw.get("sample_weight"))
        assert abs(ap.compute() - ex) <= 1e-12 and ap.bounds() == (ap.compute(), ap.compute())
        roc = sm.ROCCurve(max_bytes=65536).update(y, s, **kw).compute()
        fpr, tpr, thr = roc_curve(y, s, sample_weight=kw.get("sample_weight"), drop_intermediate=False)
        np.testing.assert_allclose(roc.fpr, fpr, rtol=1e-12)
        np.testing.assert_allclose(roc.tpr, tpr, rtol=1e-12)
        np.testing.assert_array_equal(roc.thresholds[1:], thr[1:])
        pr = sm.PRCurve(max_bytes=65536, scores="raw").update(y, s, **kw).compute()
        prec, rec, thr = precision_recall_curve(y, s, sample_weight=kw.get("sample_weight"))
        np.testing.assert_allclose(pr.precision, prec[:-1][::-1], rtol=1e-12)
        np.testing.assert_allclose(pr.recall, rec[:-1][::-1], rtol=1e-12)
        np.testing.assert_array_equal(pr.thresholds, thr[::-1])


def test_probability_transform_exact_and_decoding() -> None:
    rng = np.random.default_rng(2)
    p = np.concatenate([rng.random(1000), 1 - 10.0 ** -rng.uniform(1, 15, 1000), [0.0, 0.5, 1.0, 1e-300]])
    k = _prob_keys(p)
    order = np.argsort(p, kind="stable")
    assert (np.diff(k[order]) >= 0).all()
    assert np.array_equal(np.unique(k).shape, np.unique(p).shape)
    np.testing.assert_array_equal(_prob_decode(k), p)  # every key decodes to its own score
    # lower edges: the smallest probability with key >= edge
    for sh in (5, 20, 40):
        edge = (k >> sh) << sh
        t = _prob_decode(edge)
        assert (_prob_keys(t) >= edge).all()
        below = np.nextafter(t, -1.0)
        ok = (t == 0) | (_prob_keys(np.maximum(below, 0)) < edge)
        assert ok.all()
    x = np.array([-np.inf, -1e300, -1.0, -0.0, 0.0, 1e-320, 2.5, np.inf])
    kx = _raw_keys(x)
    assert (np.diff(kx) >= 0).all() and kx[3] == kx[4]
    np.testing.assert_array_equal(_raw_decode(kx), x + 0.0)


def test_exact_to_binned_switch_on_merge() -> None:
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 300), rng.random(300)
    a = sm.AUROC(max_bytes=16 * 24 + 32).update(y[:10], s[:10])
    b = sm.AUROC(max_bytes=16 * 24 + 32).update(y[10:20], s[10:20])
    assert a.is_exact and b.is_exact
    a.merge(b)
    assert not a.is_exact  # 20 distinct scores do not fit 16 bins
    one = sm.AUROC(max_bytes=16 * 24 + 32).update(y[:20], s[:20])
    assert one.compute() == a.compute() and one.bounds() == a.bounds()


def test_fixed_thresholds_equal_trapezoid() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 5000)
    p = 1 / (1 + np.exp(-(rng.normal(size=5000) + y)))
    for thr in (200, np.array([0.1, 0.5, 0.2, 0.9, 0.7])):
        m = sm.AUROC(thresholds=thr).update(y, p)
        t = np.linspace(0, 1, thr) if isinstance(thr, int) else np.sort(thr)
        tpr = np.array([np.mean(p[y == 1] >= x) for x in t] + [0.0])
        fpr = np.array([np.mean(p[y == 0] >= x) for x in t] + [0.0])
        tpr, fpr = np.concatenate([[1.0], tpr]), np.concatenate([[1.0], fpr])
        trap = -np.trapezoid(tpr, fpr)
        assert abs(m.compute() - trap) <= 1e-12
        lo, hi = m.bounds()
        assert lo <= roc_auc_score(y, p) <= hi and not m.is_exact
        ap = sm.AveragePrecision(thresholds=thr).update(y, p)
        lo, hi = ap.bounds()
        assert lo <= average_precision_score(y, p) <= hi


def test_multiclass_and_multilabel_certificates() -> None:
    rng = np.random.default_rng(6)
    n, c = 6000, 5
    y = rng.integers(0, c, n)
    logits = rng.normal(size=(n, c)) + 2 * np.eye(c)[y]
    prob = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    onehot = np.eye(c)[y]
    for avg in (None, "macro", "weighted", "micro"):
        au = sm.AUROC(c, average=avg, max_bytes=8192, scores="probability").update(y, prob)
        ap = sm.AveragePrecision(c, average=avg, max_bytes=8192, scores="probability").update(y, prob)
        if avg == "micro":
            ex_au = roc_auc_score(onehot.ravel(), prob.ravel())
            ex_ap = average_precision_score(onehot.ravel(), prob.ravel())
        else:
            ex_au = roc_auc_score(y, prob, multi_class="ovr", average=avg)
            ex_ap = average_precision_score(onehot, prob, average=avg)
        for m, ex in ((au, ex_au), (ap, ex_ap)):
            lo, hi = m.bounds()
            assert np.all(np.asarray(lo) <= ex) and np.all(ex <= np.asarray(hi)), (avg, lo, ex, hi)
            v = np.asarray(m.compute())
            assert np.all(np.asarray(lo) <= v) and np.all(v <= np.asarray(hi))
        assert au.nbytes <= 8192
    yl = (rng.random((n, 3)) < 0.2).astype(int)
    sl = rng.normal(size=(n, 3)) + yl
    m = sm.AUROC(3, multilabel=True, max_bytes=4096, average=None).update(yl, sl)
    lo, hi = m.bounds()
    ex = roc_auc_score(yl, sl, average=None)
    assert np.all(lo <= ex) and np.all(ex <= hi)
    small = sm.AUROC(3, multilabel=True, max_bytes=1 << 20).update(yl[:50], sl[:50])
    assert small.is_exact and abs(small.compute() - roc_auc_score(yl[:50], sl[:50])) <= 1e-12


def test_save_load_and_config_mismatch(tmp_path) -> None:
    rng = np.random.default_rng(7)
    y, s = rng.integers(0, 2, 3000), rng.random(3000)
    for m in (
        sm.AUROC(max_bytes=2048, scores="probability"),
        sm.AveragePrecision(thresholds=[0.2, 0.4]),
        sm.PRCurve(3, max_bytes=4096),
    ):
        if m.task == "binary":
            m.update(y, s)
        else:
            m.update(y + (s > 0.5), np.stack([s, 1 - s, s * s], 1))
        path = tmp_path / "m.sm"
        sm.save(m, path)
        back = sm.load(path)
        assert type(back) is type(m) and back._config() == m._config()
        assert back._state.equals(m._state)
        assert back.bounds() == m.bounds() or np.array_equal(back.bounds(), m.bounds())
    with pytest.raises(ValueError, match="configuration mismatch"):
        sm.AUROC(max_bytes=2048).merge(sm.AUROC(max_bytes=4096))
    with pytest.raises(ValueError, match="configuration mismatch"):
        sm.AUROC(max_bytes=2048).merge(sm.AUROC())
    with pytest.raises(ValueError, match="configuration mismatch"):
        sm.AUROC(max_bytes=2048).merge(sm.AUROC(max_bytes=2048, scores="probability"))


def test_load_rejects_bad_arrays() -> None:
    m = sm.AUROC(max_bytes=2048).update([0, 1, 1], [0.1, 0.2, 0.3])
    good = m.state_dict()
    bad_cases = {
        "bin_keys": good["bin_keys"][::-1].copy(),
        "bin_pos": -good["bin_pos"],
        "bin_neg": np.full(good["bin_neg"].shape, np.nan),
        "bin_offsets": np.array([0, 5]),
        "bin_shift": np.array([99]),
    }
    for name, arr in bad_cases.items():
        d = dict(good)
        d[name] = arr
        with pytest.raises(ValueError, match="state"):
            sm.AUROC.from_state_dict(d)
    d = dict(good)
    del d["bin_pos"]
    with pytest.raises(ValueError, match="missing"):
        sm.AUROC.from_state_dict(d)
    d = dict(good)
    d["bin_pos"], d["bin_neg"] = np.zeros(3), np.zeros(3)
    with pytest.raises(ValueError, match="empty bin"):
        sm.AUROC.from_state_dict(d)
    big = sm.AUROC(max_bytes=1 << 20).update(np.arange(2000) % 2, np.arange(2000.0)).state_dict()
    with pytest.raises(ValueError, match="capacity"):
        sm.AUROC.from_state_dict({**big, "config": {**big["config"], "max_bytes": 1024}})


def test_bad_inputs_leave_state_unchanged() -> None:
    m = sm.AUROC(max_bytes=2048, scores="probability").update([0, 1], [0.2, 0.7])
    before = m.state_dict()
    with pytest.raises(ValueError, match=r"y_score: .*\[0, 1\].*1\.5.*index 1"):
        m.update([0, 1], [0.3, 1.5])
    with pytest.raises(ValueError, match="y_true"):
        m.update([0, 2], [0.3, 0.5])
    with pytest.raises(ValueError, match="NaN"):
        m.update([0, 1], [0.3, np.nan])
    after = m.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before if k != "config")
    for kw in (
        {"max_bytes": 10},
        {"max_bytes": 1.5},
        {"thresholds": 1},
        {"thresholds": [np.nan]},
        {"max_bytes": 2048, "scores": "prob"},
        {"thresholds": 10, "scores": "probability"},
    ):
        with pytest.raises(ValueError):
            sm.AUROC(**kw)
    with pytest.raises(ValueError, match="max_fpr"):
        sm.AUROC(max_bytes=4096, max_fpr=1.5)
    with pytest.raises(ValueError, match="one-vs-one"):
        sm.AUROC(3, multi_class="ovo", max_bytes=4096)
    with pytest.raises(ValueError, match="interval"):
        sm.AUROC(max_bytes=4096).update([0, 1], [0.1, 0.2]).interval()


def test_metricset_shares_binned_state_and_scalar_path() -> None:
    rng = np.random.default_rng(8)
    y, s = rng.integers(0, 2, 2000), rng.random(2000)
    ms = sm.MetricSet(
        auroc=sm.AUROC(max_bytes=4096),
        ap=sm.AveragePrecision(max_bytes=4096),
        roc=sm.ROCCurve(max_bytes=4096),
    )
    ms.update(y, s)
    assert ms["auroc"]._state is ms["ap"]._state is ms["roc"]._state
    solo = sm.AUROC(max_bytes=4096)
    for yi, si in zip(y[:300].tolist(), s[:300].tolist(), strict=True):
        solo.update(yi, si)
    solo.update(y[300:], s[300:])
    assert solo._state.equals(ms["auroc"]._state)
    assert solo.compute() == ms.compute()["auroc"]


def test_undefined_is_nan_with_warning() -> None:
    m = sm.AUROC(max_bytes=4096).update([1, 1], [0.2, 0.3])
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(m.compute())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = m.bounds()
    assert np.isnan(lo) and np.isnan(hi)
    assert isinstance(m._state, BinnedScores)


def test_benchmark_smoke() -> None:
    from benchmarks import bench_bounded

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # 300 rows: classes without positives
        text = bench_bounded.main(
            ["--samples", "20000", "--rows", "300", "--no-peers", "--dists", "crowded,peaked", "--inline"]
        )
    assert "### crowded" in text and "max_bytes=128 KiB" in text and "1000 classes" in text


def _binned_ap() -> tuple[sm.AveragePrecision, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    y, s = rng.integers(0, 2, 5000), rng.random(5000)
    return sm.AveragePrecision(max_bytes=2048, scores="probability").update(y, s), y, s


def test_torch_sync_without_group() -> None:
    pytest.importorskip("torch")
    from streammetrics.torch import sync

    m, _, _ = _binned_ap()
    other = sync(m)
    assert other is not m and other._state.equals(m._state)
    assert other.bounds() == m.bounds() and other.is_exact == m.is_exact


def test_pickle_and_copy() -> None:
    import pickle

    m, y, s = _binned_ap()
    for other in (pickle.loads(pickle.dumps(m)), m.copy()):
        assert other is not m and other._state.equals(m._state)
        assert other.bounds() == m.bounds() and other.is_exact == m.is_exact
    c = m.copy().update(y[:10], s[:10])
    assert not c._state.equals(m._state)  # copies are independent
    merged = m.copy().merge(m.copy(), m.copy())
    assert merged.nbytes <= 2048
    np.testing.assert_array_equal(merged.state_dict()["bin_pos"], 3 * m.state_dict()["bin_pos"])
