"""Stored retrieval states are range-checked on load
(docs/definitions/index.md#the-accumulator-contract: a loaded state is one some
stream of queries could have produced): per-query ``values`` within each measure's range, ``sums``
within count (or decayed mass) times that range, for plain, windowed and decayed metrics; honest
states -- edge values 0 and 1, merged states -- still load. Also the two input checks that keep
every stored value producible: nDCG above 1 and float64 overflow are ValueErrors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import quiet_compute

import streammetrics as sm
from streammetrics import Decayed, Window

Factory = Callable[[bool], sm.Metric]

#: measure factory (per_query) -> its per-query value range (lo, hi) of the first column
BOUNDED: dict[str, Factory] = {
    "p3": lambda pq: sm.PrecisionAtK(3, per_query=pq),
    "r3": lambda pq: sm.RecallAtK(3, per_query=pq),
    "rprec": lambda pq: sm.RPrecision(per_query=pq),
    "p_at_r": lambda pq: sm.PrecisionAtRecall(0.5, per_query=pq),
    "map": lambda pq: sm.MAP(per_query=pq),
    "map3": lambda pq: sm.MAP(3, per_query=pq),
    "mrr": lambda pq: sm.MRR(per_query=pq),
    "ndcg": lambda pq: sm.NDCG(5, per_query=pq),
    "ndcg_exp": lambda pq: sm.NDCG(gain="exponential", per_query=pq),
    "iprec": lambda pq: sm.InterpolatedPrecision([0.0, 0.5, 1.0], per_query=pq),
    "11pt": lambda pq: sm.ElevenPointAP(per_query=pq),
    "eff": lambda pq: sm.SystemEfficiency(per_query=pq),
    "set_p": lambda pq: sm.SetPrecision(per_query=pq),
    "set_r": lambda pq: sm.SetRecall(average="micro", per_query=pq),
    "cg_norm": lambda pq: sm.CG(3, normalize=True, rel_max=3, per_query=pq),
}
UNBOUNDED: dict[str, Factory] = {
    "cg": lambda pq: sm.CG(3, per_query=pq),
    "dcg": lambda pq: sm.DCG(per_query=pq),
    "dcg_exp": lambda pq: sm.DCG(gain="exponential", per_query=pq),
}
ALL = {**BOUNDED, **UNBOUNDED}


def feed(m: Any, seed: int, n_queries: int = 6, **kw: Any) -> Any:
    """Random graded queries plus the edge cases: a perfect ranking (1) and no relevant (0)."""
    rng = np.random.default_rng(seed)
    m.update([3, 2, 1, 0], [0.9, 0.8, 0.7, 0.1], **kw)  # perfect: fractions 1
    m.update([0, 0, 0], [0.9, 0.5, 0.1], **kw)  # nothing relevant: 0
    for _ in range(n_queries):
        n = int(rng.integers(1, 7))
        m.update(rng.integers(0, 4, n), rng.integers(0, 3, n) / 2, **kw)  # ties in scores
    return m


def save_load(m: Any, tmp_path: Path, state: dict[str, Any] | None = None) -> Any:
    """Write ``m`` -- or the state dict ``state`` in its place: a tampered file with a valid
    checksum -- through streammetrics.save and read it back with streammetrics.load."""
    if state is not None:
        m = m.copy()
        m.state_dict = lambda: state  # the file's content, as an attacker would write it
    path = tmp_path / "m.sm"
    sm.save(m, path)
    return sm.load(path)


def key_of(d: dict[str, Any], suffix: str) -> str:
    (k,) = [k for k in d if k.endswith(suffix)]
    return k


def assert_same(back: Any, m: Any) -> None:
    a, b = quiet_compute(back), quiet_compute(m)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# -- plain metrics ---------------------------------------------------------------------------


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("name", sorted(ALL))
def test_honest_states_round_trip(name: str, per_query: bool, tmp_path: Path) -> None:
    m = feed(ALL[name](per_query), seed=1)
    assert_same(save_load(m, tmp_path), m)
    merged = m.copy().merge(feed(ALL[name](per_query), seed=2), feed(ALL[name](per_query), seed=3))
    assert_same(type(m).from_state_dict(merged.state_dict()), merged)
    assert_same(save_load(merged, tmp_path), merged)


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("name", sorted(BOUNDED))
def test_scaled_sums_are_refused(name: str, per_query: bool, tmp_path: Path) -> None:
    m = feed(ALL[name](per_query), seed=4)
    d = m.state_dict()
    k = key_of(d, ".sums")
    bad = {**d, k: d[k] * 10 + 1}
    with pytest.raises(ValueError, match=r"\.sums\[0\] = .* outside the range"):
        type(m).from_state_dict(bad)
    with pytest.raises(ValueError, match="outside the range"):
        save_load(m, tmp_path, bad)
    assert_same(type(m).from_state_dict(d), m)  # the honest state still loads


@pytest.mark.parametrize("name", sorted(ALL))
def test_tampered_per_query_values_are_refused(name: str, tmp_path: Path) -> None:
    m = feed(ALL[name](True), seed=5)
    d = m.state_dict()
    kv, ks = key_of(d, ".values"), key_of(d, ".sums")
    vals = d[kv].copy()
    vals[1, 0] = -0.25  # below every measure's range; sums kept consistent
    with pytest.raises(ValueError, match=r"\.values\[\(1, 0\)\] = -0\.25"):
        save_load(m, tmp_path, {**d, kv: vals, ks: vals.sum(axis=0)})
    if name in BOUNDED:
        vals = np.zeros_like(d[kv])
        vals[0, 0] = 9.5 if name == "cg_norm" else 1.5  # above the top (raw CG@3 <= 3 * 3)
        # the sums stay within 8 queries' range: the single value is what is refused
        with pytest.raises(ValueError, match=r"\.values\[\(0, 0\)\] = (9|1)\.5 is outside"):
            type(m).from_state_dict({**d, kv: vals, ks: vals.sum(axis=0)})
    # sums that are not the sum of the stored values
    sums = d[ks].copy()
    sums[0] = sums[0] / 2 + 0.125
    with pytest.raises(ValueError, match="is not the sum of"):
        type(m).from_state_dict({**d, ks: sums})


@pytest.mark.parametrize("name", ["map", "ndcg", "eff", "p3"])
def test_edge_values_zero_and_one_load(name: str) -> None:
    m = ALL[name](True)
    d = m.state_dict()
    kc, ks, kv = key_of(d, ".count"), key_of(d, ".sums"), key_of(d, ".values")
    for vals in (np.zeros((3, 1)), np.ones((3, 1)), np.array([[0.0], [1.0], [0.5]])):
        state = {**d, kc: np.array([3]), ks: vals.sum(axis=0), kv: vals}
        back = type(m).from_state_dict(state)
        assert back.compute() == pytest.approx(vals.mean())
    plain = ALL[name](False)
    d = plain.state_dict()
    kc, ks = key_of(d, ".count"), key_of(d, ".sums")
    ok = type(plain).from_state_dict({**d, kc: np.array([7]), ks: np.array([7.0 * (1 + 1e-12)])})
    assert ok.compute() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="outside the range"):
        type(plain).from_state_dict({**d, kc: np.array([7]), ks: np.array([7.001])})
    with pytest.raises(ValueError, match="outside the range"):
        type(plain).from_state_dict({**d, kc: np.array([0]), ks: np.array([0.5])})


def test_unbounded_gains_refuse_only_negatives() -> None:
    m = sm.DCG(gain="exponential")
    d = m.state_dict()
    kc, ks = key_of(d, ".count"), key_of(d, ".sums")
    assert sm.DCG.from_state_dict({**d, kc: np.array([2]), ks: np.array([1e300])}).compute() == 5e299
    with pytest.raises(ValueError, match=r"\.sums\[0\] = -1\.0"):
        sm.DCG.from_state_dict({**d, kc: np.array([2]), ks: np.array([-1.0])})
    cg = sm.CG(2, normalize=True, rel_max=3)  # stored raw CG@2 is at most 2 * 3 per query
    d = cg.state_dict()
    kc, ks = key_of(d, ".count"), key_of(d, ".sums")
    assert sm.CG.from_state_dict({**d, kc: np.array([1]), ks: np.array([6.0])}).compute() == 1.0
    with pytest.raises(ValueError, match="outside the range"):
        sm.CG.from_state_dict({**d, kc: np.array([1]), ks: np.array([6.5])})


def test_set_counts_must_be_consistent() -> None:
    m = feed(sm.SetPrecision(per_query=True), seed=6)
    d = m.state_dict()
    kv, ks = key_of(d, ".values"), key_of(d, ".sums")
    vals = d[kv].copy()
    vals[2, 2] = vals[2, 3] + 1  # more relevant retrieved than retrieved
    vals[2, 4] = vals[2, 2]
    with pytest.raises(ValueError, match=r"\.values\[2\] = .*relevant retrieved <= retrieved"):
        sm.SetPrecision.from_state_dict({**d, kv: vals, ks: vals.sum(axis=0)})
    vals = d[kv].copy()
    vals[0, 3] += 0.5  # half a document
    with pytest.raises(ValueError, match="whole numbers"):
        sm.SetPrecision.from_state_dict({**d, kv: vals, ks: vals.sum(axis=0)})
    plain = feed(sm.SetRecall(average="micro"), seed=6)
    d = plain.state_dict()
    ks = key_of(d, ".sums")
    sums = d[ks].copy()
    sums[2] = sums[4] + 3
    with pytest.raises(ValueError, match=r"\.sums = .*relevant retrieved <= retrieved"):
        sm.SetRecall.from_state_dict({**d, ks: sums})


def test_inputs_no_stream_may_store_are_refused_and_change_nothing() -> None:
    m = feed(sm.NDCG(per_query=True), seed=7)
    before = m.state_dict()
    with pytest.raises(ValueError, match="relevance: query 0 has DCG 3.0 above the ideal DCG 1.0"):
        m.update([3, 0], [0.9, 0.1], judged=[1, 0])  # retrieved grade 3 is not among the judged
    with pytest.raises(ValueError, match=r"of query 1 is beyond 2\*\*256"):
        sm.MetricSet(a=m, b=sm.DCG(gain="exponential")).update(
            [1, 0, 2000], [0.9, 0.1, 0.5], query_ids=[0, 0, 1]
        )
    np.testing.assert_equal(m.state_dict(), before)
    c = sm.CG(2)
    with pytest.raises(ValueError, match=r"relevance: grades must be finite numbers in \[-2\*\*128"):
        c.update([1e308, 1e308], [0.9, 0.1])
    assert c.n_queries == 0
    ok = sm.NDCG().update([1, 0], [0.9, 0.1], judged=[1, 0, 0])  # consistent grades: 1
    assert ok.compute() == 1.0


# -- windows and decay -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ndcg", "map", "set_p", "dcg_exp", "cg_norm"])
def test_windowed_values_are_range_checked(name: str, tmp_path: Path) -> None:
    for per_query in (False, True):
        m = feed(Window(ALL[name](per_query), size=5), seed=8)
        assert_same(save_load(m, tmp_path), m)
        merged = m.copy().merge(feed(Window(ALL[name](per_query), size=5), seed=9))
        assert_same(save_load(merged, tmp_path), merged)
        d = m.state_dict()
        vals = d["values"].copy()
        vals[3, 0] = -1.0
        with pytest.raises(ValueError, match=r"query window values of .*\[\(3, 0\)\] = -1\.0"):
            save_load(m, tmp_path, {**d, "values": vals})
        if name in BOUNDED:
            vals = d["values"] * 10
            with pytest.raises(ValueError, match="outside the range"):
                Window.from_state_dict({**d, "values": vals})
        np.testing.assert_equal(Window.from_state_dict(d).state_dict(), d)
    timed = Window(ALL[name](False), seconds=10.0)
    for t in range(4):
        timed.update([1, 0, 2], [0.3, 0.2, 0.1], timestamp=float(t))
    d = timed.state_dict()
    with pytest.raises(ValueError, match="outside the range|query window values"):
        Window.from_state_dict({**d, "values": -d["values"] - 1.0})
    assert_same(Window.from_state_dict(d), timed)


@pytest.mark.parametrize("name", ["ndcg", "mrr", "set_r", "eff", "dcg"])
def test_decayed_sums_are_range_checked(name: str, tmp_path: Path) -> None:
    for kw in ({"half_life": 3.0}, {"half_life_seconds": 2.0}):
        m = Decayed(ALL[name](False), **kw)
        timed = "half_life_seconds" in kw
        for t in range(5):
            feed(m, seed=10 + t, n_queries=2, **({"timestamp": float(t)} if timed else {}))
        assert_same(save_load(m, tmp_path), m)
        merged = m.copy().merge(Decayed.from_state_dict(m.state_dict()))
        assert_same(save_load(merged, tmp_path), merged)
        d = m.state_dict()
        sums = d["sums"].copy()
        sums[0] = -0.5
        with pytest.raises(ValueError, match=r"decayed query 'sums' of .*\[0\] = -0\.5"):
            save_load(m, tmp_path, {**d, "sums": sums})
        if name in BOUNDED:  # the tampering of the report: a stored fraction times 10
            with pytest.raises(ValueError, match="outside the range"):
                Decayed.from_state_dict({**d, "sums": d["sums"] * 10 + d["mass"]})
            edge = Decayed.from_state_dict({**d, "sums": np.full_like(d["sums"], d["mass"])})
            assert np.all(np.asarray(edge.compute()) == pytest.approx(1.0))
            zero = Decayed.from_state_dict({**d, "sums": np.zeros_like(d["sums"])})
            got = quiet_compute(zero)
            assert np.isnan(got) if name == "set_r" else got == 0.0  # micro: 0 / 0 relevant
