"""DelayedLabels around Sliced: slice keys given at predict time, labels routed to their slice.

Oracle: a plain ``Sliced`` fed the labelled rows (with the keys they were predicted with) in
label order -- the value a service would get if it knew labels at predict time -- and, through
it, scikit-learn per slice.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import assert_same_state, assert_state_unchanged
from sklearn.metrics import f1_score, roc_auc_score

import streammetrics as sm

pytestmark = pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")


def values(metric: sm.Metric) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return repr(metric.compute())


def scenario(seed: int, n: int, two_columns: bool):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)
    country = rng.choice(["fr", "de", "us"], n)
    device = rng.integers(0, 3, n)
    slices = {"country": country, "device": device} if two_columns else country
    return rng, y, s, country, device, slices


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 60), two=st.booleans(),
       cuts=st.integers(1, 5))
def test_delayed_sliced_equals_sequential_sliced(seed: int, n: int, two: bool, cuts: int) -> None:
    rng, y, s, country, device, slices = scenario(seed, n, two)
    make = lambda: sm.Sliced(sm.MetricSet(f1=sm.F1(), auc=sm.AUROC()))  # noqa: E731
    d = sm.DelayedLabels(make(), capacity=1000)
    ids = rng.permutation(10 * n)[:n]
    bounds = np.sort(rng.integers(0, n + 1, cuts))
    for part in np.split(np.arange(n), bounds):  # predictions in random batches
        if part.shape[0]:
            by = {k: v[part] for k, v in slices.items()} if two else slices[part]
            d.predict(ids[part], s[part], slices=by)
    order = rng.permutation(n)[: rng.integers(0, n + 1)]  # some labels, in random order
    expect = make()
    for part in np.split(order, np.sort(rng.integers(0, order.shape[0] + 1, cuts))):
        if part.shape[0]:
            assert d.label(ids[part], y[part]) == part.shape[0]
            by = {k: v[part] for k, v in slices.items()} if two else slices[part]
            expect.update(y[part], s[part], slices=by)
        if rng.random() < 0.5:  # a restart in between: the pending keys survive
            d = sm.DelayedLabels.from_state_dict(d.state_dict())
    assert values(d) == values(expect)
    assert d.metric.counts() == expect.counts()
    if two and order.shape[0]:  # (never fed: no key columns yet)
        assert values_of(d.metric.marginal("country")) == values_of(expect.marginal("country"))
    assert d.stats()["pending"] == n - order.shape[0]


def values_of(x: object) -> str:
    return repr(x)


def test_labels_land_in_the_slice_they_were_predicted_in() -> None:
    rng, y, s, country, _, _ = scenario(3, 400, False)
    d = sm.DelayedLabels(sm.Sliced(sm.AUROC()), capacity=1000)
    d.predict(np.arange(400), s, slices=country)
    rev = np.arange(400)[::-1]
    d.label(rev, y[rev])  # labels in another order than the predictions
    got = d.compute()
    for key in ("fr", "de", "us"):
        m = country == key
        assert got[key] == pytest.approx(roc_auc_score(y[m], s[m]), abs=1e-12)


def test_merge_of_partitions_seeing_different_slices() -> None:
    rng, y, s, country, device, slices = scenario(5, 300, True)
    parts = [np.flatnonzero(country == c) for c in ("fr", "de", "us")]
    workers = []
    for part in parts:  # each worker sees one country only and labels half of its rows
        w = sm.DelayedLabels(sm.Sliced(sm.F1()), capacity=1000)
        w.predict(part, s[part], slices={"country": country[part], "device": device[part]})
        w.label(part[::2], y[part[::2]])
        workers.append(w)
    merged = sm.DelayedLabels(sm.Sliced(sm.F1()), capacity=1000).merge(*workers)
    assert merged.stats()["pending"] == sum(len(p) - len(p[::2]) for p in parts)
    rest = np.concatenate([p[1::2] for p in parts])
    merged.label(rest, y[rest])
    got = merged.compute()
    for (c, dv), value in got.items():
        m = (country == c) & (device == dv)
        assert value == pytest.approx(f1_score(y[m], s[m] >= 0.5, zero_division=0.0), abs=1e-12)
    bad = sm.DelayedLabels(sm.Sliced(sm.F1()), capacity=1000)
    bad.predict([10_000], [0.5], slices=["fr"])  # one unnamed key column
    with pytest.raises(ValueError, match="key columns"):
        workers[0].copy().merge(bad)


def test_capacity_evicts_rows_with_their_keys_and_load_checks_it() -> None:
    d = sm.DelayedLabels(sm.Sliced(sm.Recall()), capacity=2)
    d.predict([1, 2, 3], [0.9, 0.8, 0.7], slices=["a", "b", "c"])  # id 1 (key "a") evicted
    assert d.stats()["evicted"] == 1 and len(d) == 2
    assert d.label([1, 2, 3], [1, 1, 1]) == 2
    assert d.compute() == {"b": 1.0, "c": 1.0}
    d.predict([4, 5], [0.1, 0.9], slices=["a", "a"])
    sd = d.state_dict()
    small = {**sd, "config": {**sd["config"], "capacity": 1}}
    with pytest.raises(ValueError, match="capacity"):
        sm.DelayedLabels.from_state_dict(small)
    sd["pending.slice_keys"] = np.frombuffer(b'["a"]', np.uint8).copy()  # one key, two rows
    with pytest.raises(ValueError, match="slice_keys"):
        sm.DelayedLabels.from_state_dict(sd)
    sd["pending.slice_keys"] = np.frombuffer(b'["a", NaN]', np.uint8).copy()
    with pytest.raises(ValueError, match=r"slice_keys\[1\]"):
        sm.DelayedLabels.from_state_dict(sd)
    del sd["pending.slice_keys"]
    with pytest.raises(ValueError, match="slice_keys"):
        sm.DelayedLabels.from_state_dict(sd)


def test_rejections_are_atomic() -> None:
    d = sm.DelayedLabels(sm.Sliced(sm.F1(), max_slices=2), capacity=100)
    d.predict([1, 2], [0.9, 0.1], slices={"c": ["a", "b"], "v": [0, 0]})
    before = d.state_dict()
    bad_calls = [
        (lambda: d.predict([3], [0.5], slices={"c": [np.nan], "v": [0]}), "slices"),  # a missing key
        (lambda: d.predict([3, 4], [0.5, 0.5], slices={"c": ["a"], "v": [0]}), "slices"),
        (lambda: d.predict([3], [0.5]), "slices: required"),
        (lambda: d.predict([3], [0.5], slices=["a"]), "key columns"),  # other layout
        (lambda: d.predict([3], [np.nan], slices={"c": ["a"], "v": [0]}), "y_score"),
    ]
    for call, match in bad_calls:
        with pytest.raises(ValueError, match=match):
            call()
        assert_state_unchanged(before, d.state_dict())
    d.predict([3], [0.5], slices={"c": ["z"], "v": [1]})  # a third slice: beyond the cap
    d.label([1, 2], [1, 0])
    before = d.state_dict()
    with pytest.raises(ValueError, match="max_slices=2"):
        d.label([3], [1])
    assert_state_unchanged(before, d.state_dict())
    assert len(d) == 1  # still pending, its key with it


def test_wrong_way_round_and_unsliced_misuse() -> None:
    with pytest.raises(ValueError, match=r"DelayedLabels\(Sliced\(metric\)"):
        sm.Sliced(sm.DelayedLabels(sm.F1()))
    with pytest.raises(ValueError, match="only a DelayedLabels around Sliced"):
        sm.DelayedLabels(sm.F1()).predict([1], [0.5], slices=["a"])
    with pytest.raises(ValueError, match="batch_size"):
        sm.DelayedLabels(sm.Sliced(sm.F1()), batch_size=8)


def test_single_id_calls_and_copy() -> None:
    d = sm.DelayedLabels(sm.Sliced(sm.Accuracy()), capacity=10)
    d.predict("r1", 0.9, slices="tenant-a")
    d.predict("r2", 0.2, slices="tenant-b")
    assert d.label("r2", 1) == 1 and d.label("r1", 1) == 1
    assert d.compute() == {"tenant-b": 0.0, "tenant-a": 1.0}
    assert_same_state(d, d.copy())


def test_nbytes_counts_the_pending_rows_keys() -> None:
    short = sm.DelayedLabels(sm.Sliced(sm.F1()))
    long = sm.DelayedLabels(sm.Sliced(sm.F1()))
    ids = list(range(100))
    short.predict(ids, np.full(100, 0.5), slices=["a"] * 100)
    long.predict(ids, np.full(100, 0.5), slices=["a" * 1000 + str(i) for i in ids])
    assert long.nbytes - short.nbytes >= 100 * 1000  # every pending key's text is counted
    tupled = sm.DelayedLabels(sm.Sliced(sm.F1()))
    tupled.predict(ids, np.full(100, 0.5), slices={"a": ["x" * 1000] * 100, "b": list(range(100))})
    assert tupled.nbytes - short.nbytes >= 100 * 1000  # the parts of tuple keys too
    for d in (short, long, tupled):
        d.label(ids, np.ones(100, dtype=int))
    assert long.nbytes < short.nbytes + 100 * 1000  # labelled rows leave the pending queue
