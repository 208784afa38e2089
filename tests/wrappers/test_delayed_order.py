"""DelayedLabels keeps its pending predictions in time order whatever order the timestamps
come in: ttl expiry and capacity eviction follow prediction time on a live instance (as they do
after ``load``), checked against a plain-Python oracle."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm


def test_older_timestamp_expires_on_a_live_instance():
    d = sm.DelayedLabels(sm.Recall(), ttl=10.0, clock=lambda: 0.0)
    d.predict("x", 0.5, timestamp=100.0)
    d.predict("y", 0.5, timestamp=50.0)  # older than the pending one
    d.predict(["z"], [0.5], timestamp=70.0)  # the batch path
    d.expire(timestamp=65.0)  # 50 is older than the ttl; 70 and 100 are not
    assert d.stats()["expired"] == 1
    assert d.label_report(["y"], [1]).unknown == ("y",)
    d.expire(timestamp=85.0)
    assert d.stats() == {**d.stats(), "expired": 2, "pending": 1}
    assert d.label("x", 1) == 1


def test_capacity_evicts_the_oldest_by_time():
    d = sm.DelayedLabels(sm.Recall(), capacity=2, clock=lambda: 0.0)
    d.predict("a", 0.5, timestamp=10.0)
    d.predict("b", 0.5, timestamp=30.0)
    d.predict("c", 0.5, timestamp=20.0)  # evicts a (10), not b
    assert d.label_report(["a", "c"], [1, 1]).unknown == ("a",)
    d.predict("e", 0.5, timestamp=40.0)
    d.predict(["d"], [0.5], timestamp=5.0)  # the oldest of all: evicted at once
    assert d.stats()["evicted"] == 2 and sorted(d._pending) == ["b", "e"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40), st.booleans()), max_size=30),
       st.integers(1, 6))
def test_expiry_and_eviction_match_an_oracle(calls, capacity):
    ttl = 8.0
    d = sm.DelayedLabels(sm.Recall(), ttl=ttl, capacity=capacity, clock=lambda: 0.0)
    oracle: dict[int, float] = {}  # id -> time; a model of what must be pending
    expired = evicted = 0
    for ident, t, batch in calls:
        now = float(t)
        # the call expires (against its own time) first, then stores, then evicts the oldest
        for k in [k for k, v in oracle.items() if v <= now - ttl]:
            del oracle[k]
            expired += 1
        oracle.pop(ident, None)
        oracle[ident] = now
        if batch:
            d.predict([ident], [0.5], timestamp=now)
        else:
            d.predict(ident, 0.5, timestamp=now)
        while len(oracle) > capacity:
            oldest = min(oracle, key=oracle.__getitem__)  # ties: the earliest arrival
            del oracle[oldest]
            evicted += 1
        assert sorted(d._pending) == sorted(oracle)
        times = [e[2] for e in d._pending.values()]
        assert times == sorted(times)
    assert d.stats()["expired"] == expired and d.stats()["evicted"] == evicted
    # and a round trip keeps the same pending predictions in the same order
    assert list(sm.loads(sm.dumps(d))._pending) == list(d._pending)
