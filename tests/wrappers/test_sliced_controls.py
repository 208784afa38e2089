"""``Sliced(..., controls=...)`` against Fairlearn's ``MetricFrame(..., control_features=...)``
(issue #33): the overall value and the disparities per control group, streamed, merged and
saved equal to one pass, to 1e-12."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import recall_score

import streammetrics as sm
from streammetrics.monitoring import Drift
from streammetrics.wrappers.sliced.results import is_undefined

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
MetricFrame = fairlearn_metrics.MetricFrame

pytestmark = pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")

METHODS = ("between_groups", "to_overall")


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def recall0(y: Any, p: Any, sample_weight: Any = None) -> float:
    return float(recall_score(y, p, sample_weight=sample_weight, zero_division=0))


def sel(y: Any, p: Any, sample_weight: Any = None) -> float:
    return float(fairlearn_metrics.selection_rate(y, p, sample_weight=sample_weight))


def plain(x: Any) -> Any:
    return tuple(v.item() if hasattr(v, "item") else v for v in x) if isinstance(x, tuple) else (
        x.item() if hasattr(x, "item") else x)


def same(ours: dict[Any, Any], theirs: Any, member: str | None = None) -> None:
    """``{control key: value}`` equals a Series (or a DataFrame's column ``member``) indexed by
    control key. MetricFrame indexes several control columns by their product, a combination
    without rows reading nan; ours holds the groups seen."""
    series = theirs if member is None else theirs[member]
    expected = {plain(k): v for k, v in series.items() if plain(k) in ours or not math.isnan(v)}
    assert set(ours) == set(expected), (ours, expected)
    for key, value in expected.items():
        got = ours[key] if member is None else ours[key][member]
        assert close(got, value), (key, got, value)


def data(seed: int, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return {"y": y, "p": np.where(rng.random(n) < 0.7, y, 1 - y),
            "region": rng.choice(["n", "s", "e"], n), "plan": rng.integers(0, 2, n),
            "sex": rng.choice(["f", "m", "x"], n), "age": rng.choice([-0.0, 0.0, 18.5, 40.0, 65.0], n),
            "w": rng.integers(1, 4, n).astype(float)}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 250), cuts=st.lists(st.integers(0, 250), max_size=4),
       two_controls=st.booleans(), two_sensitive=st.booleans(), weighted=st.booleans())
def test_controls_equal_metricframe_streamed_merged_and_saved(seed: int, n: int, cuts: list[int],
                                                               two_controls: bool, two_sensitive: bool,
                                                               weighted: bool) -> None:
    d = data(seed, n)
    controls = ["region", "plan"] if two_controls else ["region"]
    sensitive = ["sex", "age"] if two_sensitive else ["age"]
    w = d["w"] if weighted else None
    mf = MetricFrame(metrics=recall0, y_true=d["y"], y_pred=d["p"],
                     sensitive_features={c: d[c] for c in sensitive},
                     control_features={c: d[c] for c in controls},
                     sample_params=None if w is None else {"sample_weight": w})

    def make() -> sm.Sliced:
        return sm.Sliced(sm.Recall(zero_division=0.0), controls=controls)

    s = make()
    edges = [0, *sorted(c for c in cuts if c < n), n]
    parts = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        keys = {c: d[c][lo:hi] for c in sensitive + controls}  # controls need not come first
        ww = None if w is None else w[lo:hi]
        s.update(d["y"][lo:hi], d["p"][lo:hi], slices=keys, sample_weight=ww)
        parts.append(make().update(d["y"][lo:hi], d["p"][lo:hi], slices=keys, sample_weight=ww))
    merged = parts[-1].copy().merge(*parts[:-1])
    for acc in (s, merged, sm.loads(sm.dumps(s))):
        same(acc.overall(), mf.overall)
        same(acc.group_min(), mf.group_min())
        same(acc.group_max(), mf.group_max())
        for method in METHODS:
            same(acc.difference(method=method), mf.difference(method=method))
            same(acc.ratio(method=method), mf.ratio(method=method))


def test_a_control_combination_without_rows_is_absent() -> None:
    """MetricFrame reads nan for ('x', 1) (its product index); no row has it: no group."""
    y, p = np.array([1, 0, 1, 0]), np.array([1, 1, 0, 0])
    sf, cf = {"s": ["a", "b", "a", "b"]}, {"r": ["x", "x", "y", "y"], "q": [0, 0, 0, 1]}
    mf = MetricFrame(metrics=sel, y_true=y, y_pred=p, sensitive_features=sf, control_features=cf)
    s = sm.Sliced(sm.SelectionRate(), controls=["r", "q"]).update(y, p, slices={**sf, **cf})
    assert math.isnan(mf.overall[("x", 1)]) and set(s.overall()) == {("x", 0), ("y", 0), ("y", 1)}
    same(s.overall(), mf.overall)
    for method in METHODS:
        same(s.difference(method=method), mf.difference(method=method))
        same(s.ratio(method=method), mf.ratio(method=method))


def test_metricset_with_controls_equals_metricframe_dict() -> None:
    d = data(3, 500)
    s = sm.Sliced(sm.MetricSet(recall=sm.Recall(zero_division=0.0), sel=sm.SelectionRate(), auc=sm.AUROC()),
                  controls="region")
    s.update(d["y"], d["p"], slices={"region": d["region"], "sex": d["sex"]}, sample_weight=d["w"])
    metrics = {"recall": recall0, "sel": sel}
    mf = MetricFrame(metrics=metrics, y_true=d["y"], y_pred=d["p"], sensitive_features={"sex": d["sex"]},
                     control_features={"region": d["region"]},
                     sample_params={name: {"sample_weight": d["w"]} for name in metrics})
    for name in metrics:
        same(s.overall(), mf.overall, name)
        same(s.group_min(), mf.group_min(), name)
        same(s.group_max(), mf.group_max(), name)
        for method in METHODS:
            same(s.difference(method=method), mf.difference(method=method), name)
            same(s.ratio(method=method), mf.ratio(method=method), name)
    # compute() still gives every crossed slice, in the columns' order
    assert set(s.compute()) == {(r, x) for r, x in zip(d["region"].tolist(), d["sex"].tolist(), strict=True)}


def test_controls_with_min_count_and_drift() -> None:
    d = data(4, 300)
    s = sm.Sliced(sm.SelectionRate(), controls=("region",), min_count=30)
    s.update(d["y"], d["p"], slices={"region": d["region"], "sex": d["sex"]})
    for region in ("n", "s", "e"):
        kept = [v for (r, _), v in s.compute().items() if r == region and not is_undefined(v)]
        expected = max(kept) - min(kept) if kept else math.nan
        assert close(s.difference()[region], expected)
    drift = sm.Sliced(Drift(np.linspace(0, 1, 50), bins=4), controls="region")
    drift.update(np.random.default_rng(0).random(300), slices={"region": d["region"], "sex": d["sex"]})
    worst = drift.group_max()
    for region, stats in worst.items():
        values = [v["psi"] for (r, _), v in drift.compute().items() if r == region]
        assert close(stats["psi"], max(values))
    with pytest.raises(ValueError, match="drift statistic"):
        drift.difference()


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"controls": ""}, "non-empty"),
    ({"controls": []}, "at least one"),
    ({"controls": ["a", "a"]}, "twice"),
    ({"controls": 3}, "controls"),
    ({"controls": "a", "overflow": "other"}, "overflow='other'"),
])
def test_bad_controls_are_refused(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        sm.Sliced(sm.Recall(), **kwargs)
    with pytest.raises(ValueError, match="Window"):
        sm.Sliced(sm.Window(sm.Recall(), size=5), controls="a")


@pytest.mark.parametrize(("slices", "words"), [
    (["a", "b"], "name key columns"),
    ({"c": ["a", "b"], "s": [1, 2]}, "'region' is not among"),
    ({"region": ["a", "b"]}, "every key column"),
])
def test_updates_without_the_control_columns_change_nothing(slices: Any, words: str) -> None:
    s = sm.Sliced(sm.Recall(), controls="region")
    before = sm.dumps(s)
    with pytest.raises(ValueError, match=words):
        s.update([1, 0], [1, 0], slices=slices)
    assert sm.dumps(s) == before
    s.update([1, 0], [1, 0], slices={"region": ["a", "b"], "sex": ["f", "m"]})
    before = sm.dumps(s)
    with pytest.raises(ValueError, match="key columns"):
        s.update([1, 0], [1, 0], slices=slices)
    assert sm.dumps(s) == before
    assert s.overall() == {"a": 1.0, "b": 0.0}


def test_controls_in_a_file_are_checked_and_merges_need_the_same_controls() -> None:
    s = sm.Sliced(sm.Recall(), controls="region").update([1, 1], [1, 0], slices={"region": ["a", "b"],
                                                                                   "sex": ["f", "m"]})
    sd = s.state_dict()
    plain_sliced = sm.Sliced(sm.Recall()).update([1, 1], [1, 0], slices={"region": ["a", "b"], "sex": ["f", "m"]})
    hostile = dict(plain_sliced.state_dict())
    hostile["config"] = {**sd["config"], "controls": ["nope"]}
    with pytest.raises(ValueError, match="state: the control column 'nope'"):
        sm.Sliced.from_state_dict(hostile)
    with pytest.raises(ValueError, match="controls"):
        s.copy().merge(plain_sliced)
    assert sm.Sliced.from_state_dict(sd).overall() == s.overall() == {"a": 1.0, "b": 0.0}


def test_delayed_labels_check_the_control_columns_when_predicting() -> None:
    """A prediction whose keys lack a control column is refused at ``predict`` (it would wait
    for a label only to be refused then); predictions with them are labelled into the groups."""
    d = sm.DelayedLabels(sm.Sliced(sm.Recall(), controls="c"))
    before = sm.dumps(d)
    with pytest.raises(ValueError, match="controls"):
        d.predict([1], [0.9], slices=["a"])
    with pytest.raises(ValueError, match="every key column"):
        d.predict([1], [0.9], slices={"c": ["a"]})
    assert sm.dumps(d) == before
    d.predict([1, 2, 3], [0.9, 0.1, 0.8], slices={"c": ["a", "a", "b"], "s": [1.5, 2.5, 1.5]})
    d.label([1, 2, 3], [1, 1, 1])
    assert d.metric.overall() == {"a": 0.5, "b": 1.0}
    assert d.metric.difference() == {"a": 1.0, "b": 0.0}
