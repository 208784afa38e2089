"""Sliced evaluation against Fairlearn's MetricFrame and scikit-learn per slice."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score, recall_score, roc_auc_score

import streammetrics as sm
import streammetrics.functional as smf

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
MetricFrame = fairlearn_metrics.MetricFrame

pytestmark = pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def data(seed: int, n: int = 600, groups: int = 4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.7, y, 1 - y)
    a = rng.choice([f"g{i}" for i in range(groups)], n)
    b = rng.integers(0, 3, n)
    w = rng.integers(1, 4, n).astype(float)
    return y, p, a, b, w


def frame(fn, y, p, sf, w=None):
    params = None if w is None else {"sample_weight": w}
    if isinstance(fn, dict) and params is not None:
        params = {name: params for name in fn}
    return MetricFrame(metrics=fn, y_true=y, y_pred=p, sensitive_features=sf, sample_params=params)


def recall0(y, p, sample_weight=None):
    return recall_score(y, p, sample_weight=sample_weight, zero_division=0)


@pytest.mark.parametrize("two_keys", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_metricframe(two_keys: bool, weighted: bool) -> None:
    y, p, a, b, w = data(1)
    w = w if weighted else None
    slices = {"a": a, "b": b} if two_keys else a
    sf = {"a": a, "b": b} if two_keys else a
    s = sm.Sliced(sm.Recall(zero_division=0.0))
    for lo in range(0, len(y), 97):  # streamed in batches
        hi = lo + 97
        cut = slices if not two_keys else {k: v[lo:hi] for k, v in slices.items()}
        s.update(y[lo:hi], p[lo:hi], slices=cut if two_keys else a[lo:hi],
                 sample_weight=None if w is None else w[lo:hi])
    mf = frame(recall0, y, p, sf, w)
    got = s.compute()
    assert len(got) == len(mf.by_group)
    for key, value in mf.by_group.items():
        assert close(got[key], value)
    assert close(s.overall(), mf.overall)
    assert close(s.group_min(), mf.group_min())
    assert close(s.group_max(), mf.group_max())
    for method in ("between_groups", "to_overall"):
        assert close(s.difference(method=method), mf.difference(method=method))
        assert close(s.ratio(method=method), mf.ratio(method=method))


def test_metricset_matches_metricframe_dict() -> None:
    y, p, a, b, w = data(2)
    s = sm.Sliced(sm.MetricSet(recall=sm.Recall(zero_division=0.0), sel=sm.SelectionRate()))
    s.update(y, p, slices=(a, b), sample_weight=w)
    mf = frame({"recall": recall0, "sel": fairlearn_metrics.selection_rate}, y, p, {"a": a, "b": b}, w)
    got = s.compute()
    for key, row in mf.by_group.iterrows():
        for name in ("recall", "sel"):
            assert close(got[key][name], row[name])
    for method in ("between_groups", "to_overall"):
        d, r = s.difference(method=method), s.ratio(method=method)
        for name in ("recall", "sel"):
            assert close(d[name], mf.difference(method=method)[name])
            assert close(r[name], mf.ratio(method=method)[name])


@pytest.mark.parametrize("fn", ["demographic_parity_difference", "demographic_parity_ratio",
                                "equalized_odds_difference", "equalized_odds_ratio"])
@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_fairness_functions(fn: str, method: str) -> None:
    y, p, a, b, w = data(3)
    ours = getattr(smf, fn)
    theirs = getattr(fairlearn_metrics, fn)
    for sf in (a, np.c_[a, b]):
        for weights in (None, w):
            kw = {"sensitive_features": sf, "method": method, "sample_weight": weights}
            assert close(ours(y, p, **kw), theirs(y, p, **kw))
    if fn.startswith("equalized"):
        kw = {"sensitive_features": a, "method": method, "agg": "mean"}
        assert close(ours(y, p, **kw), theirs(y, p, **kw))


def test_selection_rate() -> None:
    y, p, _, _, w = data(4)
    m = sm.SelectionRate().update(y, p, sample_weight=w)
    assert close(m.compute(), fairlearn_metrics.selection_rate(y, p, sample_weight=w))
    low, high = m.interval()
    assert low < m.compute() < high
    ms = sm.MetricSet(sel=sm.SelectionRate(), f1=sm.F1())
    assert len(ms.groups) == 1  # one shared confusion state


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), cuts=st.lists(st.integers(0, 300), max_size=5))
def test_stream_and_merge_equal_sklearn_per_slice(seed: int, cuts: list[int]) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    y = rng.integers(0, 2, n)
    score = rng.random(n)
    keys = rng.integers(0, rng.integers(1, 8), n)
    w = rng.integers(1, 3, n).astype(float)
    part = rng.integers(0, 3, n)  # partitions see different subsets of slices
    part[keys % 3 == 0] = 0
    f1 = sm.Sliced(sm.F1(zero_division=0.0))
    auc = sm.Sliced(sm.AUROC())
    edges = [0, *sorted(cuts), n]
    for lo, hi in zip(edges, edges[1:], strict=False):
        f1.update(y[lo:hi], score[lo:hi], slices=keys[lo:hi], sample_weight=w[lo:hi])
        auc.update(y[lo:hi], score[lo:hi], slices=keys[lo:hi])
    parts_f1 = [sm.Sliced(sm.F1(zero_division=0.0)) for _ in range(3)]
    parts_auc = [sm.Sliced(sm.AUROC()) for _ in range(3)]
    for j in range(3):
        m = part == j
        parts_f1[j].update(y[m], score[m], slices=keys[m], sample_weight=w[m])
        parts_auc[j].update(y[m], score[m], slices=keys[m])
    merged_f1 = parts_f1[0].copy().merge(*parts_f1[1:])
    merged_auc = parts_auc[0].copy().merge(*parts_auc[1:])
    loaded = sm.loads(sm.dumps(merged_auc))
    for key in np.unique(keys).tolist():
        m = keys == key
        expect = f1_score(y[m], score[m] >= 0.5, sample_weight=w[m], zero_division=0)
        assert close(f1.compute()[key], expect)
        assert close(merged_f1.compute()[key], expect)
        exp_auc = roc_auc_score(y[m], score[m]) if len(set(y[m])) == 2 else math.nan
        for s in (auc, merged_auc, loaded):
            assert close(s.compute()[key], exp_auc)
    assert set(merged_f1.compute()) == set(np.unique(keys).tolist())
    assert close(merged_f1.overall(), f1_score(y, score >= 0.5, sample_weight=w, zero_division=0))


def test_marginals_equal_single_key() -> None:
    y, p, a, b, _ = data(5)
    s = sm.Sliced(sm.Accuracy())
    s.update(y, p, slices={"a": a, "b": b})
    assert s.key_names == ("a", "b")
    only_b = sm.Sliced(sm.Accuracy()).update(y, p, slices=b)
    assert s.marginal("b") == only_b.compute()
    assert s.marginal(0) == sm.Sliced(sm.Accuracy()).update(y, p, slices=a).compute()
    with pytest.raises(ValueError, match="key columns"):
        s.update(y, p, slices=a)


def test_cap_error_leaves_state_unchanged() -> None:
    s = sm.Sliced(sm.F1(), max_slices=2)
    s.update([0, 1], [0, 1], slices=["a", "b"])
    before = s.state_dict()
    with pytest.raises(ValueError, match="max_slices=2"):
        s.update([1, 1], [1, 0], slices=["a", "c"])
    after = s.state_dict()
    assert before.keys() == after.keys()
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before
               if k != "config")
    other = sm.Sliced(sm.F1(), max_slices=2).update([1], [1], slices=["z"])
    s.merge(sm.Sliced(sm.F1(), max_slices=2).update([1], [1], slices=["a"]))
    with pytest.raises(ValueError, match="max_slices=2"):
        s.merge(other)


def test_cap_other_counts_absorbed_keys() -> None:
    y, p, a, _, _ = data(6, groups=6)
    s = sm.Sliced(sm.Accuracy(), max_slices=3, overflow="other")
    s.update(y, p, slices=a)
    got = s.compute()
    assert len(got) == 4 and sm.OTHER in got
    assert s.n_absorbed == 3
    kept = [k for k in got if k is not sm.OTHER]
    m = ~np.isin(a, kept)
    assert close(got[sm.OTHER], float(np.mean(y[m] == p[m])))
    assert s.counts()[sm.OTHER] == int(m.sum())
    loaded = sm.loads(sm.dumps(s))
    assert loaded.n_absorbed == 3 and loaded.compute() == got
    merged = s.copy().merge(sm.Sliced(sm.Accuracy(), max_slices=3, overflow="other")
                            .update([1], [1], slices=["new"]))
    assert merged.n_absorbed == 4


def test_min_count_reports_undefined() -> None:
    s = sm.Sliced(sm.Accuracy(), min_count=3)
    s.update([1, 1, 1, 0], [1, 1, 0, 0], slices=["a", "a", "a", "b"])
    got = s.compute()
    assert got["b"] == sm.UndefinedSlice(1) and math.isnan(float(got["b"]))
    assert close(got["a"], 2 / 3)
    assert close(s.group_min(), 2 / 3) and close(s.difference(), 0.0)


def test_rejected_batch_changes_nothing() -> None:
    for metric in (sm.F1(), sm.AUROC()):
        s = sm.Sliced(metric)
        s.update([0, 1], [0.2, 0.9], slices=[1, 2])
        before = sm.dumps(s)
        with pytest.raises(ValueError, match="y_true"):
            s.update([0, 7], [0.1, 0.2], slices=[3, 1])
        with pytest.raises(ValueError, match="slices"):
            s.update([0, 1], [0.1, 0.2], slices=[1.5, float("nan")])  # a missing key
        with pytest.raises(ValueError, match="slices"):
            s.update([0, 1], [0.1, 0.2], slices=[1])
        assert sm.dumps(s) == before


def test_short_per_row_arguments_are_refused_even_when_each_slice_has_one_row() -> None:
    # One row per slice: cut by row, a one-element y_pred would otherwise fit every slice.
    for metric in (sm.AUROC(), sm.MetricSet({"auroc": sm.AUROC(), "ap": sm.AveragePrecision()})):
        s = sm.Sliced(metric)
        before = sm.dumps(s)
        with pytest.raises(ValueError, match=r"y_pred: expected 2 rows like y_true"):
            s.update(np.array([1, 1]), np.array([0.27]), slices=np.arange(2))
        with pytest.raises(ValueError, match=r"sample_weight: expected 2 rows like y_true"):
            s.update(np.array([1, 0]), np.array([0.2, 0.7]), slices=np.arange(2),
                     sample_weight=np.array([1.0]))
        assert sm.dumps(s) == before


def test_keys_validated_on_load() -> None:
    s = sm.Sliced(sm.F1()).update([0, 1, 1], [0, 1, 0], slices=[("x"), ("y"), ("x")])
    sd = s.state_dict()
    # (a list is a tuple key now: ["x"] is the key ("x",); a list inside one is not)
    for bad in ('["x", NaN]', '["x", "x"]', '[["x", ["y"]], "y"]', '["x", true]', '{"a": 1}'):
        tampered = dict(sd)
        tampered["slices.keys"] = np.frombuffer(bad.encode(), np.uint8).copy()
        with pytest.raises(ValueError, match="slices.keys"):
            sm.Sliced.from_state_dict(tampered)


def test_wrappers_and_intervals_per_slice() -> None:
    y, p, a, _, _ = data(7)
    score = np.clip(p * 0.6 + np.random.default_rng(0).random(len(p)) * 0.4, 0, 1)
    s = sm.Sliced(sm.Window(sm.AUROC(), size=50))
    s.update(y, score, slices=a)
    for key, value in s.compute().items():
        m = a == key
        assert close(value, roc_auc_score(y[m][-50:], score[m][-50:]))
    assert close(s.overall(), roc_auc_score(y[-50:], score[-50:]))
    r = sm.Sliced(sm.Recall()).update(y, p, slices=a)
    for key, (low, high) in r.interval().items():
        assert low <= r.compute()[key] <= high
    assert sm.loads(sm.dumps(s)).compute() == s.compute()


def test_checkpointer_round_trip(tmp_path) -> None:
    y, p, a, b, _ = data(8)
    s = sm.Sliced(sm.MetricSet(f1=sm.F1(), auc=sm.AUROC()), overflow="other", max_slices=5)
    s.update(y, p.astype(float), slices={"a": a, "b": b})
    path = tmp_path / "ck.sm"
    with sm.Checkpointer(s, path) as ck:
        ck.checkpoint()
    back = sm.Checkpointer.restore(path)
    assert str(back.compute()) == str(s.compute())
    assert back.marginal("b") == s.marginal("b")


def test_multiclass_per_slice_equals_sklearn() -> None:
    rng = np.random.default_rng(9)
    y = rng.integers(0, 3, 500)
    scores = rng.random((500, 3))
    k = rng.integers(0, 4, 500)
    s = sm.Sliced(sm.Recall(3, average="macro", zero_division=0.0, ignore_index=2))
    s.update(y, scores, slices=k)
    for key, value in s.compute().items():
        m = (k == key) & (y != 2)
        expect = recall_score(y[m], scores[m].argmax(1), labels=[0, 1, 2], average="macro",
                              zero_division=0)
        assert close(value, expect)


def test_decayed_and_time_window_per_slice() -> None:
    rng = np.random.default_rng(10)
    y = rng.integers(0, 2, 400)
    p = rng.integers(0, 2, 400)
    k = rng.integers(0, 3, 400)
    ts = np.sort(rng.random(400) * 100)
    d = sm.Sliced(sm.Decayed(sm.Accuracy(), half_life=20))
    w = sm.Sliced(sm.Window(sm.Accuracy(), seconds=30.0))
    for lo in range(0, 400, 64):
        hi = lo + 64
        d.update(y[lo:hi], p[lo:hi], slices=k[lo:hi])
        w.update(y[lo:hi], p[lo:hi], slices=k[lo:hi], timestamp=ts[lo:hi])
    for key in range(3):
        m = k == key
        alone = sm.Decayed(sm.Accuracy(), half_life=20).update(y[m], p[m])
        assert close(d.compute()[key], alone.compute())
        # each slice's window ends at that slice's newest timestamp
        recent = m & (ts > ts[m].max() - 30.0)
        assert close(w.compute()[key], float(np.mean(y[recent] == p[recent])))
    assert close(w.overall(), float(np.mean((y == p)[ts > ts.max() - 30.0])))
    assert sm.loads(sm.dumps(d)).compute() == d.compute()


@settings(max_examples=20, deadline=None)
@given(batches=st.lists(st.lists(st.sampled_from([-7, -1, 0, 3, 40, 2**21, 2**40]), min_size=1,
                                 max_size=12), min_size=1, max_size=6))
def test_integer_key_lookup_matches_plain_grouping(batches: list[list[int]]) -> None:
    s = sm.Sliced(sm.Accuracy())
    seen_y: dict[int, list[int]] = {}
    rng = np.random.default_rng(len(batches))
    for keys in batches:
        y = rng.integers(0, 2, len(keys))
        s.update(y, np.ones(len(keys), int), slices=np.array(keys))
        for key, label in zip(keys, y.tolist(), strict=True):
            seen_y.setdefault(key, []).append(label)
    got = s.compute()
    assert set(got) == set(seen_y)
    for key, labels in seen_y.items():
        assert close(got[key], float(np.mean(labels)))
    assert s.counts() == {k: len(v) for k, v in seen_y.items()}


def test_bounded_slices_stay_certified() -> None:
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 3000)
    score = np.clip(0.3 * y + 0.7 * rng.random(3000), 0, 1)  # ~3000 distinct scores: binned
    k = rng.integers(0, 3, 3000)
    s = sm.Sliced(sm.AUROC(max_bytes=2048))
    for lo in range(0, 3000, 500):
        s.update(y[lo:lo + 500], score[lo:lo + 500], slices=k[lo:lo + 500])
    for key, (low, high) in s.bounds().items():
        m = k == key
        assert not s.slice(key).is_exact
        assert low <= roc_auc_score(y[m], score[m]) <= high and high - low < 0.05
    assert sm.loads(sm.dumps(s)).bounds() == s.bounds()
