"""DelayedLabels (docs/definitions/service.md#delayed-labels):
equals the metric over the labelled pairs; nothing silent."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quiet
from sklearn.metrics import f1_score, roc_auc_score

import streammetrics as sm
from streammetrics import AUROC, F1, DelayedLabels, MetricSet, Precision, Window


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_equals_metric_over_labelled_pairs():
    rng = np.random.default_rng(0)
    d = DelayedLabels(MetricSet(f1=F1(), auc=AUROC()), capacity=10_000)
    truth, score, weight = {}, {}, {}
    labelled: list = []
    next_id = 0
    for step in range(60):
        n = int(rng.integers(0, 20))
        ids = list(range(next_id, next_id + n))
        next_id += n
        s = np.round(rng.random(n), 2)
        w = rng.random(n) + 0.1
        d.predict(np.array(ids, dtype=np.int64), s, sample_weight=w)
        for i, sc, wi in zip(ids, s, w, strict=True):
            score[i], weight[i], truth[i] = sc, wi, int(rng.integers(0, 2))
        waiting = [i for i in score if i not in set(labelled)]
        pick = [i for i in waiting if rng.random() < 0.4]  # out of order, some never
        rng.shuffle(pick)
        if pick:
            fed = d.label(pick, [truth[i] for i in pick])
            assert fed == len(pick)
            labelled += pick
        if labelled and step % 5 == 0:
            y = np.array([truth[i] for i in labelled])
            s_ = np.array([score[i] for i in labelled])
            w_ = np.array([weight[i] for i in labelled])
            got = quiet(d.compute)
            assert abs(got["f1"] - f1_score(y, s_ >= 0.5, sample_weight=w_, zero_division=0.0)) < 1e-12
            if 0 < y.sum() < len(y):
                assert abs(got["auc"] - roc_auc_score(y, s_, sample_weight=w_)) < 1e-12
    st = d.stats()
    assert st["labelled"] == len(labelled) and st["predicted"] == next_id
    assert st["pending"] == next_id - len(labelled) == len(d)


def test_single_ids_strings_and_rows():
    d = DelayedLabels(sm.Accuracy(num_classes=3), capacity=10)
    d.predict("req-1", [0.1, 0.7, 0.2])
    d.predict(["req-2", "réq-3"], [[0.5, 0.2, 0.3], [0.1, 0.1, 0.8]])
    assert d.label("req-1", 1) == 1
    assert d.label(["réq-3", "req-2"], [2, 1]) == 2
    assert d.compute() == pytest.approx(2 / 3)
    assert d.stats()["pending"] == 0


def test_unknown_ids_raise_on_request_and_nothing_is_applied():
    d = DelayedLabels(Precision(), capacity=10, on_unknown="raise")
    d.predict([1, 2, 3], [0.9, 0.8, 0.1])
    with pytest.raises(ValueError, match="id 9 is not pending"):
        d.label([1, 9], [1, 0])
    assert d.stats() == {"predicted": 3, "labelled": 0, "replaced": 0, "evicted": 0, "expired": 0,
                         "unknown": 0, "rejected": 0, "pending": 3, "buffered": 0}
    assert quiet(d.compute) == 0.0
    d.label([1], [1])
    with pytest.raises(KeyError, match="already labelled"):  # still a KeyError, as in 0.1.0
        d.label(1, 1)
    c = DelayedLabels(Precision(), capacity=10, on_unknown="count")  # the old name of "skip"
    c.predict([1, 2], [0.9, 0.8])
    assert c.label([1, 5, 6], [1, 0, 0]) == 1
    assert c.stats()["unknown"] == 2 and c.stats()["labelled"] == 1
    assert c.compute() == 1.0


def test_capacity_ttl_and_replacement_are_counted():
    now = [0.0]
    d = DelayedLabels(F1(), capacity=3, ttl=10.0, on_unknown="count", clock=lambda: now[0])
    d.predict([1, 2, 3], [0.9, 0.8, 0.7])
    d.predict(4, 0.6)  # evicts 1
    assert d.stats()["evicted"] == 1 and 1 not in d._pending
    d.predict(2, 0.1)  # replaces 2 (and moves it to the back)
    assert d.stats()["replaced"] == 1
    now[0] = 5.0
    d.predict(5, 0.3)  # evicts 3 (the oldest now)
    assert list(d._pending) == [4, 2, 5]
    now[0] = 10.0  # 4 and 2 (t=0) are not strictly newer than 10 - 10: expired
    assert d.stats()["expired"] == 2 and d.stats()["pending"] == 1
    assert d.label([2, 5], [1, 1]) == 1  # 2 expired: unknown
    st = d.stats()
    assert st["unknown"] == 1 and st["labelled"] == 1 and st["pending"] == 0
    assert st == {"predicted": 6, "labelled": 1, "replaced": 1, "evicted": 2, "expired": 2,
                  "unknown": 1, "rejected": 0, "pending": 0, "buffered": 0}


def test_bad_inputs_rejected_and_state_unchanged():
    d = DelayedLabels(F1(), capacity=5)
    d.predict([1, 2], [0.9, 0.2])
    before = d.state_dict()
    with pytest.raises(ValueError, match="y_true"):
        d.label([1, 2], [1, 3])  # the metric rejects label 3: nothing applied
    with pytest.raises(ValueError, match="NaN"):
        d.predict([3], [float("nan")])
    with pytest.raises(ValueError, match="duplicate id 3"):
        d.predict([3, 3], [0.1, 0.2])
    with pytest.raises(ValueError, match="ids: must be ints or strings"):
        d.predict([3.5], [0.1])
    with pytest.raises(ValueError, match="ids: must be ints or strings"):
        d.predict([True], [0.1])
    with pytest.raises(ValueError, match="expected 2 rows"):
        d.predict([3, 4], [0.1])
    with pytest.raises(ValueError, match="keep one kind"):
        d.predict([3], np.array([1], dtype=np.int64))
    with pytest.raises(ValueError, match="sample_weight"):
        d.predict([3], [0.1], sample_weight=[-1.0])
    with pytest.raises(ValueError, match="expected 1 labels"):
        d.label([1], [1, 0])
    with pytest.raises(ValueError, match="predict"):
        d.update([1], [1])
    after = d.state_dict()
    assert before.keys() == after.keys()
    assert all(same(before[k], after[k]) for k in before)
    for bad in (dict(capacity=0), dict(ttl=0), dict(ttl=float("inf")), dict(on_unknown="drop")):
        with pytest.raises(ValueError):
            DelayedLabels(F1(), **bad)
    with pytest.raises(ValueError, match="classification"):
        DelayedLabels(sm.MAP())


def test_save_load_round_trip_and_tampering(tmp_path):
    d = DelayedLabels(MetricSet(f1=F1(), w=Window(AUROC(), size=5)), capacity=50, ttl=3600.0,
                      clock=lambda: 3.0)
    d.predict(["a", "ü-2", 7, -3], [0.9, 0.1, 0.6, 0.4], sample_weight=[1.0, 2.0, 0.5, 1.0], timestamp=1.0)
    d.predict(8, 0.3, timestamp=2.0)
    d.label(["a", 7], [1, 0], timestamp=3.0)
    path = tmp_path / "d.sm"
    sm.save(d, path)
    back = sm.load(path)
    assert isinstance(back, DelayedLabels)
    back.clock = d.clock  # clocks are not persisted
    assert back.stats() == d.stats()
    assert list(back._pending) == list(d._pending) == ["ü-2", -3, 8]
    assert quiet(back.compute) == quiet(d.compute)
    back.label(["ü-2", -3, 8], [0, 1, 1], timestamp=4.0)
    d.label(["ü-2", -3, 8], [0, 1, 1], timestamp=4.0)
    assert quiet(back.compute) == quiet(d.compute)
    empty = DelayedLabels(F1(), capacity=5)
    assert sm.loads(sm.dumps(empty)).stats()["pending"] == 0
    d2 = DelayedLabels(F1(), capacity=5)
    d2.predict(["x", "y"], [0.1, 0.2])
    sd = d2.state_dict()
    cases = [
        ({"pending.str_offsets": np.array([0, 1, 5])}, "offsets"),
        ({"pending.str_bytes": np.frombuffer(b"xx", np.uint8).copy()}, "not unique"),
        ({"pending.str_bytes": np.frombuffer(b"\xff\xfe", np.uint8).copy()}, "UTF-8"),
        ({"pending.scores": np.array([0.1, np.nan])}, "NaN"),
        ({"pending.weights": np.array([np.nan, -1.0])}, "weight"),
        ({"pending.times": np.array([1.0])}, "inconsistent"),
        ({"stats.labelled": -1}, "counter"),
        ({"junk": 1}, "unexpected"),
        ({"metric.counts": -np.ones((2, 2))}, "negative"),
    ]
    for patch, msg in cases:
        with pytest.raises(ValueError, match=msg):
            DelayedLabels.from_state_dict({**sd, **patch})
    small = {**sd, "config": {**sd["config"], "capacity": 1}}
    with pytest.raises(ValueError, match="exceed capacity"):
        DelayedLabels.from_state_dict(small)


def test_merge():
    a = DelayedLabels(F1(), capacity=4)
    b = DelayedLabels(F1(), capacity=4)
    a.predict([1, 2], [0.9, 0.2], timestamp=1.0)
    b.predict([2, 3, 4], [0.8, 0.7, 0.1], timestamp=2.0)
    a.label(1, 1, timestamp=2.0)
    b.label(4, 0, timestamp=3.0)
    a.merge(b)
    st = a.stats()
    assert st["replaced"] == 1 and st["labelled"] == 2 and st["pending"] == 2
    assert a._pending[2][0] == 0.8  # the newer prediction wins
    assert a.compute() == F1().update([1, 0], [0.9, 0.1]).compute()
    with pytest.raises(ValueError, match="configuration mismatch"):
        a.merge(DelayedLabels(F1(), capacity=5))
