"""``Sliced`` around the metrics without labels (issue #31): ``Sliced(Drift(reference))`` gives the
drift of each segment, ``Sliced(Estimated(metric))`` each segment's estimated performance and its
interval. Both take ``update(y_score, *, slices, sample_weight=None)``; each slice equals the
metric fed that slice's rows alone (to 1e-12), for any batch split, merge and save/load."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics.monitoring import Drift, Estimated

REF = np.round(np.random.default_rng(31).random((60, 3)) * 8) / 8  # ties on the data's levels
MC = np.random.default_rng(5).dirichlet(np.ones(3), 40)

#: (make, kind of scores)
CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "drift": (lambda: Drift(REF[:, 0], bins=4), "scores"),
    "drift_multiclass": (lambda: Drift(REF, bins=3), "rows"),
    "drift_bounded": (lambda: Drift(REF[:, 1], max_bytes=2048), "scores"),
    "estimated_set": (lambda: Estimated(sm.MetricSet(acc=sm.Accuracy(zero_division=0.0), auroc=sm.AUROC(),
                                                      p=sm.Precision(zero_division=0.0))), "probabilities"),
    "estimated_multiclass": (lambda: Estimated(sm.Accuracy(3, zero_division=0.0)), "rows_prob"),
    "estimated_recall": (lambda: Estimated(sm.Recall(zero_division=0.0)), "probabilities"),
}


def _scores(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "scores":
        return np.round(rng.random(n) * 8) / 8
    if kind == "rows":
        return np.round(rng.random((n, 3)) * 8) / 8
    if kind == "probabilities":
        return rng.integers(0, 9, n) / 8  # 0 and 1 included
    q = rng.integers(0, 5, (n, 3)).astype(float) + np.eye(3)[rng.integers(0, 3, n)]
    return q / q.sum(axis=1, keepdims=True)


def _close(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b)
        for name in a:
            _close(a[name], b[name])
        return
    if isinstance(a, tuple):
        for x, z in zip(a, b, strict=True):
            _close(x, z)
        return
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=1e-12,
                               equal_nan=True)


def _alone(make: Callable[[], Any], s: np.ndarray, w: np.ndarray, keys: np.ndarray) -> dict[Any, Any]:
    return {key: make().update(s[keys == key], sample_weight=w[keys == key])
            for key in dict.fromkeys(keys.tolist())}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(CASES)), seed=st.integers(0, 10**6), n=st.integers(1, 50),
       m=st.integers(1, 4), cuts=st.lists(st.integers(0, 50), max_size=3))
def test_each_slice_equals_the_metric_on_its_rows_for_any_split_merge_and_save(
        name: str, seed: int, n: int, m: int, cuts: list[int]) -> None:
    make, kind = CASES[name]
    rng = np.random.default_rng(seed)
    s, keys = _scores(kind, rng, n), rng.integers(0, m, n)
    w = rng.integers(0, 4, n).astype(float)
    w[0] = 1.0
    edges = [0, *sorted(c for c in cuts if c < n), n]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _alone(make, s, w, keys)
        split = sm.Sliced(make())
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            split.update(s[a:b], slices=keys[a:b], sample_weight=w[a:b])
        parts = [sm.Sliced(make()), sm.Sliced(make())]
        for i, part in enumerate(parts):
            rows = np.arange(n) % 2 == i
            part.update(s[rows], slices=keys[rows], sample_weight=w[rows])
        merged = parts[0].merge(parts[1])
        back = sm.loads(sm.dumps(split))
        for got in (split, merged, back):
            _close(dict(got.compute()), {k: v.compute() for k, v in want.items()})
        _close(back.overall(), make().update(s, sample_weight=w).compute())
        if name.startswith("drift"):
            _close(dict(back.bounds()), {k: v.bounds() for k, v in want.items()})
        if name == "estimated_recall":
            _close(dict(back.interval(0.9)), {k: v.interval(0.9) for k, v in want.items()})


def test_drift_per_segment_against_scipy() -> None:
    from scipy.stats import ks_2samp, wasserstein_distance

    rng = np.random.default_rng(0)
    ref = rng.normal(0, 1, 500)
    now = np.concatenate([rng.normal(0, 1, 300), rng.normal(0.8, 1, 300)])
    segment = np.repeat(["web", "app"], 300)
    d = sm.Sliced(Drift(ref)).update(now, slices=segment)
    for key in ("web", "app"):
        out = d.compute()[key]
        rows = now[segment == key]
        assert abs(out["ks"] - ks_2samp(ref, rows).statistic) < 1e-12
        assert abs(out["wasserstein"] - wasserstein_distance(ref, rows)) < 1e-12
    worst = d.group_max()
    assert worst == {stat: max(v[stat] for v in d.compute().values()) for stat in ("psi", "js", "ks",
                                                                                    "wasserstein")}
    assert d.compute()["app"]["ks"] > d.compute()["web"]["ks"]
    assert set(d.compute().to_pandas().columns) == {"rows", "psi", "js", "ks", "wasserstein", "undefined"}


def test_drift_has_no_difference_or_ratio() -> None:
    d = sm.Sliced(Drift(REF[:, 0])).update(REF[:10, 1], slices=np.arange(10) % 2)
    for read in (d.difference, d.ratio):
        with pytest.raises(ValueError, match=r"a drift statistic is already a distance.*group_max\(\)"):
            read()
    mc = sm.Sliced(Drift(REF)).update(REF[:10], slices=np.arange(10) % 2)
    assert set(mc.group_min(errors="coerce")) == {"psi", "js", "ks", "wasserstein", "class_psi", "class_chi2"}
    with pytest.raises(ValueError, match="errors='raise': a slice value is not a scalar"):
        mc.group_min()  # the per-class arrays of (n, C) scores
    assert mc.group_max(errors="coerce")["class_psi"] == max(v["class_psi"] for v in mc.compute().values())


def test_estimated_slices_equal_the_other_nesting_order() -> None:
    rng = np.random.default_rng(2)
    p = rng.random(200)
    keys = rng.choice(["a", "b", "c"], 200)
    inner = Estimated(sm.Sliced(sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC()))).update(p, slices=keys)
    outer = sm.Sliced(Estimated(sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC()))).update(p, slices=keys)
    _close(dict(outer.compute()), dict(inner.compute()))
    intervals = sm.Sliced(Estimated(sm.MetricSet(acc=sm.Accuracy(), p=sm.Precision(), f1=sm.F1())))
    intervals.update(p, slices=keys)
    for key, got in intervals.interval().items():
        alone = Estimated(sm.MetricSet(acc=sm.Accuracy(), p=sm.Precision(), f1=sm.F1())).update(p[keys == key])
        assert set(got) == {"acc", "p"}  # F1 has no interval
        for member in ("acc", "p"):
            _close(got[member], alone.interval(member=member))
    assert intervals.group_min()["acc"] == min(v["acc"] for v in intervals.compute().values())


def test_a_window_inside_an_estimate_inside_sliced_keeps_the_overall_value() -> None:
    rng = np.random.default_rng(4)
    p = rng.random(30)
    keys = rng.integers(0, 2, 30)
    s = sm.Sliced(Estimated(sm.Window(sm.AUROC(), size=10)))
    for a in range(0, 30, 7):
        s.update(p[a:a + 7], slices=keys[a:a + 7])
    for key in (0, 1):
        _close(s.compute()[key], Estimated(sm.Window(sm.AUROC(), size=10)).update(p[keys == key]).compute())
    _close(s.overall(), Estimated(sm.Window(sm.AUROC(), size=10)).update(p).compute())
    _close(sm.loads(sm.dumps(s)).overall(), s.overall())


def test_labels_given_or_bad_scores_are_refused_and_change_nothing() -> None:
    d = sm.Sliced(Drift(REF)).update(REF[:6], slices=["a", "b"] * 3)
    e = sm.Sliced(Estimated(sm.Precision())).update([0.2, 0.9], slices=["a", "b"])
    before = [sm.dumps(d), sm.dumps(e)]
    with pytest.raises(TypeError, match=r"Sliced\(Drift\) takes no labels.*y_pred"):
        d.update([0, 1], REF[:2], slices=["a", "b"])
    with pytest.raises(TypeError, match=r"Sliced\(Estimated\) takes no labels.*y_pred"):
        e.update([0, 1], [0.3, 0.4], slices=["a", "b"])
    with pytest.raises(ValueError, match=r"^y_score: the reference holds 3 scores per row: expected shape"):
        d.update(REF[:6, 0], slices=["a", "b"] * 3)  # 1-D: never cut into rows of 3
    with pytest.raises(ValueError, match=r"^y_score: scores must be finite"):
        d.update(np.array([[0.1, 0.2, np.nan]]), slices=["a"])
    with pytest.raises(ValueError, match=r"^y_prob: probabilities must lie in \[0, 1\]; .*1.5 at index 3"):
        e.update([0.5, 0.2, 0.1, 1.5], slices=["a", "c", "a", "c"])  # the batch's index, not the slice's
    with pytest.raises(ValueError, match=r"^sample_weight: expected 2 rows like y_prob"):
        e.update([0.5, 0.5], slices=["a", "c"], sample_weight=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"^slices: "):
        e.update([0.5, 0.5], slices=["a"])
    assert [sm.dumps(d), sm.dumps(e)] == before
    d.update(REF[0], slices=["a"])  # one row of 3 scores, as Drift reads it
    assert d.counts() == {"a": 4, "b": 3}


def test_an_estimate_of_a_sliced_metric_is_not_sliced_again() -> None:
    with pytest.raises(ValueError, match=r"wraps a Sliced already"):
        sm.Sliced(Estimated(sm.Sliced(sm.Precision())))
    with pytest.raises(ValueError, match="wrap an empty accumulator"):
        sm.Sliced(Estimated(sm.Precision()).update([0.4]))


def test_many_drift_slices_save_with_a_header_that_does_not_grow() -> None:
    rng = np.random.default_rng(9)
    s = rng.random(4000)
    small = sm.dumps(sm.Sliced(Drift(REF[:, 0])).update(s[:20], slices=np.arange(20) % 5))
    big = sm.Sliced(Drift(REF[:, 0])).update(s, slices=np.arange(4000) % 800)
    data = sm.dumps(big)
    assert int.from_bytes(data[40:48], "little") - int.from_bytes(small[40:48], "little") < 1000
    back = sm.loads(data)
    _close(dict(back.compute()), dict(big.compute()))


def test_prometheus_exports_each_segments_drift_and_estimate() -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry, generate_latest

    from streammetrics.prometheus_sliced import register_sliced

    rng = np.random.default_rng(6)
    s, keys = rng.random(200), rng.choice(["ios", "web"], 200)
    drift = sm.Sliced(Drift(REF[:, 0])).update(s, slices=keys)
    est = sm.Sliced(Estimated(sm.Precision())).update(s, slices=keys)
    reg = CollectorRegistry()
    register_sliced(drift, reg, name="drift")
    register_sliced(est, reg, name="est")
    text = generate_latest(reg).decode()
    for key in ("ios", "web"):
        psi = float(text.split(f'streammetrics_drift_psi{{slice="{key}"}} ')[1].split()[0])
        assert abs(psi - Drift(REF[:, 0]).update(s[keys == key]).compute()["psi"]) < 1e-12
        value = float(text.split(f'streammetrics_est{{slice="{key}"}} ')[1].split()[0])
        assert abs(value - Estimated(sm.Precision()).update(s[keys == key]).compute()) < 1e-12
    assert "streammetrics_drift_collect_errors_total 0.0" in text
    assert "streammetrics_est_collect_errors_total 0.0" in text


@pytest.mark.parametrize("inner", [lambda: Drift(np.linspace(0, 1, 20)), lambda: Estimated(sm.AUROC())])
def test_delayed_labels_refuse_a_sliced_metric_that_takes_no_labels(inner: Callable[[], Any]) -> None:
    """DelayedLabels(Sliced(Drift)) was accepted, then every label() call failed and the
    predictions stayed pending: it is refused at construction, naming the family."""
    with pytest.raises(ValueError, match="got family '(drift|estimated)'"):
        sm.DelayedLabels(sm.Sliced(inner()))
    sm.DelayedLabels(sm.Sliced(sm.MeanSquaredError()))  # labelled families stay accepted
