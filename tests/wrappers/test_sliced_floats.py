"""Float-valued slice keys grouped as Fairlearn's ``MetricFrame`` groups a float sensitive
feature (issue #33): by distinct value, ``-0.0`` and ``0.0`` one group keyed by the first
occurrence, an integer and an equal float one group, NaN refused; the fairness functions alike."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
import streammetrics.functional as smf

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
MetricFrame = fairlearn_metrics.MetricFrame

pytestmark = pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def float_keys(rng: np.random.Generator, n: int) -> np.ndarray:
    """Floats with ties, both zeros, an integer-valued float, infinities and near-equal values."""
    pool = np.array([-0.0, 0.0, 0.1 + 0.2, 0.3, 1.0, 2.5, -1e-300, np.inf, -np.inf, 1e15 + 0.5])
    return pool[rng.integers(0, len(pool), n)]


def sel(y: Any, p: Any, sample_weight: Any = None) -> float:
    return float(fairlearn_metrics.selection_rate(y, p, sample_weight=sample_weight))


def assert_same_groups(got: dict[Any, Any], by_group: Any) -> None:
    """Our keys are MetricFrame's (equal, of the same Python type and sign) with its values."""
    theirs = {k.item() if hasattr(k, "item") else k: v for k, v in by_group.items()}
    assert len(got) == len(theirs)
    for key, value in theirs.items():
        mine = next(k for k in got if k == key)
        assert type(mine) is type(key) and math.copysign(1, mine) == math.copysign(1, key), (mine, key)
        assert close(got[mine], value)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 200), cuts=st.lists(st.integers(0, 200), max_size=4),
       weighted=st.booleans(), dtype=st.sampled_from(["float64", "float32", "list"]))
def test_float_keys_equal_metricframe_streamed_merged_and_saved(seed: int, n: int, cuts: list[int],
                                                                weighted: bool, dtype: str) -> None:
    rng = np.random.default_rng(seed)
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    keys = float_keys(rng, n)
    if dtype == "float32":
        keys = keys.astype(np.float32)
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    sf = keys.tolist() if dtype == "list" else keys
    mf = MetricFrame(metrics=sel, y_true=y, y_pred=p, sensitive_features=sf,
                     sample_params=None if w is None else {"sample_weight": w})
    s = sm.Sliced(sm.SelectionRate())
    edges = [0, *sorted(c for c in cuts if c < n), n]
    parts = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        batch = sf[lo:hi]
        ww = None if w is None else w[lo:hi]
        s.update(y[lo:hi], p[lo:hi], slices=batch, sample_weight=ww)
        parts.append(sm.Sliced(sm.SelectionRate()).update(y[lo:hi], p[lo:hi], slices=batch, sample_weight=ww))
    merged = parts[0].copy().merge(*parts[1:])
    back = sm.loads(sm.dumps(s))
    for acc in (s, merged, back):
        assert_same_groups(acc.compute(), mf.by_group)
        assert close(acc.overall(), mf.overall)
        for method in ("between_groups", "to_overall"):
            assert close(acc.difference(method=method), mf.difference(method=method))
            assert close(acc.ratio(method=method), mf.ratio(method=method))
        assert close(acc.group_min(), mf.group_min()) and close(acc.group_max(), mf.group_max())


@pytest.mark.parametrize(("keys", "expected"), [
    ([-0.0, 0.0, 0.5, 0.5], [-0.0, 0.5]),  # one zero group, keyed as it first occurred
    ([0.0, -0.0, 0.5, 0.5], [0.0, 0.5]),
    ([1, 1.0, 2.5, 2], [1.0, 2.0, 2.5]),  # a list holding a float: float64, as pandas reads it
    ([0.1 + 0.2, 0.3, 0.3, 1], [0.3, 0.30000000000000004, 1.0]),  # distinct values stay distinct
])
def test_float_groups_and_keys_are_metricframes(keys: list[Any], expected: list[float]) -> None:
    y, p = np.array([1, 0, 1, 1]), np.array([1, 1, 0, 1])
    mf = MetricFrame(metrics=sel, y_true=y, y_pred=p, sensitive_features=keys)
    got = sm.Sliced(sm.SelectionRate()).update(y, p, slices=keys).compute()
    assert sorted(got) == sorted(mf.by_group.index.tolist()) == expected
    assert_same_groups(got, mf.by_group)


def test_integer_and_float_batches_share_a_column() -> None:
    """A column fed integers then floats (or merged with one that was): equal numbers are one
    slice, as in one ``MetricFrame`` over the rows; other kinds are still refused."""
    s = sm.Sliced(sm.Recall()).update([1, 1], [1, 0], slices=[1, 2])
    s.update([1, 1], [1, 1], slices=np.array([1.0, 2.5]))
    assert s.counts() == {1: 2, 2: 1, 2.5: 1}
    other = sm.Sliced(sm.Recall()).update([1], [0], slices=[2.0])
    s.merge(other)
    assert s.counts() == {1: 2, 2: 2, 2.5: 1}
    before = sm.dumps(s)
    with pytest.raises(ValueError, match="holds integer keys .* string"):
        s.update([1], [1], slices=["a"])
    assert sm.dumps(s) == before


@pytest.mark.parametrize("keys", [np.array([0.5, np.nan]), [0.5, float("nan")],
                                  np.array([0.5, np.nan], dtype=object)])
def test_nan_keys_are_refused_as_metricframe_refuses_them(keys: Any) -> None:
    s = sm.Sliced(sm.Recall()).update([1], [1], slices=[0.25])
    before = sm.dumps(s)
    with pytest.raises(ValueError, match=r"slices: .*nan.* index 1"):
        s.update([1, 0], [1, 0], slices=keys)
    assert sm.dumps(s) == before
    with pytest.raises(ValueError, match="missing values"):
        MetricFrame(metrics=sel, y_true=[1, 0], y_pred=[1, 0], sensitive_features=keys)
    with pytest.raises(ValueError, match="nan"):
        smf.demographic_parity_difference([1, 0], [1, 0], sensitive_features=keys)


@pytest.mark.parametrize("fn", ["demographic_parity_difference", "demographic_parity_ratio",
                                "equalized_odds_difference", "equalized_odds_ratio"])
def test_fairness_functions_group_floats_as_fairlearn(fn: str) -> None:
    rng = np.random.default_rng(5)
    n = 400
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    f, g = float_keys(rng, n), rng.choice([0.5, 1.0, 1.5], n)
    w = rng.random(n)
    for sf in (f, f.tolist(), np.c_[f, g], {"f": f, "g": g}):
        for method in ("between_groups", "to_overall"):
            kw = {"sensitive_features": sf, "method": method, "sample_weight": w}
            assert close(getattr(smf, fn)(y, p, **kw), getattr(fairlearn_metrics, fn)(y, p, **kw))


def test_equal_float_and_integer_keys_are_one_absorbed_key() -> None:
    """The overflow slice counts distinct keys by a stable hash (a HyperLogLog beyond 4096
    keys): keys that are one slice (``0``, ``0.0``, ``-0.0``; ``3`` and ``3.0``) hash alike."""
    from streammetrics.wrappers.sliced.absorbed import key_hash

    assert key_hash(-0.0) == key_hash(0.0) == key_hash(0)
    assert key_hash(3.0) == key_hash(3) and key_hash(0.5) != key_hash(0)
    s = sm.Sliced(sm.Recall(), max_slices=1, overflow="other")
    n = 5000
    keys = np.concatenate([[-1.0], np.arange(n, dtype=float)])  # 5000 absorbed keys: the sketch
    s.update(np.ones(n + 1, int), np.ones(n + 1, int), slices=keys)
    sketch = s.n_absorbed
    s.update(np.ones(n, int), np.ones(n, int), slices=np.arange(n))  # the same keys, as integers
    s.update([1, 1], [1, 1], slices=[-0.0, 0.0])
    assert s.n_absorbed == sketch and abs(sketch - n) < 0.05 * n
