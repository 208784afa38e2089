"""DelayedLabels ``on_unknown``: unknown ids are counted and skipped by default, or rejected
atomically with ``on_unknown="raise"`` (issue 12)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quiet
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics import AUROC, F1, DelayedLabels, MetricSet, Precision
from streammetrics.wrappers.delayed.unknown import LabelReport, UnknownIdError


def same_state(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.dtype.kind == "O" or k == "config":
            if a[k] != b[k]:
                return False
        elif not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return False
    return True


def test_issue_example_skips_the_unknown_id_and_labels_the_known_one():
    d = DelayedLabels(Precision(), capacity=10)
    assert d.on_unknown == "skip"
    d.predict(["a", "b"], [0.9, 0.2])
    assert d.label(["a", "zz"], [1, 1]) == 1
    st_ = d.stats()
    assert st_["unknown"] == 1 and st_["labelled"] == 1 and st_["pending"] == 1
    assert d.compute() == Precision().update([1], [0.9]).compute()
    assert d.label_report(["zz", "b", "yy"], [0, 0, 1]) == LabelReport(1, ("zz", "yy"))
    assert d.stats()["unknown"] == 3
    assert d.label_report("b", 1) == LabelReport(0, ("b",))  # already labelled: one-id path
    assert d.stats()["unknown"] == 4


@pytest.mark.parametrize("batch_size", [1, 8])
def test_raise_is_a_value_error_naming_the_first_unknown_id_and_atomic(batch_size):
    d = DelayedLabels(MetricSet(f1=F1(), auc=AUROC()), capacity=10, on_unknown="raise",
                      batch_size=batch_size)
    d.predict(["a", "b", "c"], [0.9, 0.2, 0.6])
    d.label("c", 1)
    before, stats = d.state_dict(), d.stats()
    for ids, labels in ((["a", "zz", "b", "yy"], [1, 0, 0, 1]), ("zz", 1), (["zz"], [1])):
        with pytest.raises(ValueError, match="id 'zz' is not pending") as info:
            d.label(ids, labels)
        assert isinstance(info.value, KeyError) and isinstance(info.value, UnknownIdError)
        assert "nothing labelled" in str(info.value)
        with pytest.raises(ValueError, match="'zz'"):
            d.label_report(ids, labels)
    assert d.stats() == stats and same_state(d.state_dict(), before)
    assert d.label(["a", "b"], [1, 0]) == 2  # the known ids are still pending


@pytest.mark.parametrize("on_unknown", ["skip", "raise"])
def test_expired_and_evicted_ids_are_unknown(on_unknown):
    now = [0.0]
    d = DelayedLabels(F1(), capacity=2, ttl=10.0, on_unknown=on_unknown, clock=lambda: now[0])
    d.predict([1, 2, 3], [0.9, 0.8, 0.7])  # evicts 1
    now[0] = 5.0
    d.predict(4, 0.1)  # evicts 2
    now[0] = 10.0  # 3 (t=0) expires
    for ids, expected in (([4, 1], LabelReport(1, (1,))), ([3, 2], LabelReport(0, (3, 2)))):
        if on_unknown == "raise":
            with pytest.raises(ValueError, match=f"id {ids[1] if ids[0] == 4 else ids[0]} is not"):
                d.label(ids, [0, 1])
        else:
            assert d.label_report(ids, [0, 1]) == expected
    st_ = d.stats()
    assert st_["evicted"] == 2 and st_["expired"] == 1
    assert st_["unknown"] == (0 if on_unknown == "raise" else 3)
    assert st_["labelled"] == (0 if on_unknown == "raise" else 1)


def test_config_persisted_old_files_load_with_the_default():
    d = DelayedLabels(F1(), capacity=5, on_unknown="raise")
    d.predict(["a"], [0.3])
    back = sm.loads(sm.dumps(d))
    assert back.on_unknown == "raise" and len(back) == 1
    assert sm.loads(sm.dumps(DelayedLabels(F1()))).on_unknown == "skip"
    state = d.state_dict()
    old = {**state, "config": {k: v for k, v in state["config"].items() if k != "on_unknown"}}
    assert DelayedLabels.from_state_dict(old).on_unknown == "skip"  # written before the key
    counted = {**state, "config": {**state["config"], "on_unknown": "count"}}  # 0.1.0's name
    loaded = DelayedLabels.from_state_dict(counted)
    assert loaded.on_unknown == "skip"
    assert DelayedLabels(F1(), on_unknown="count").on_unknown == "skip"
    with pytest.raises(ValueError, match="on_unknown"):
        DelayedLabels.from_state_dict({**state, "config": {**state["config"], "on_unknown": "drop"}})
    for bad in ("drop", None, 1, ["skip"]):
        with pytest.raises(ValueError, match="on_unknown: must be 'skip' or 'raise'"):
            DelayedLabels(F1(), on_unknown=bad)
    with pytest.raises(ValueError, match="configuration mismatch"):
        DelayedLabels(F1(), on_unknown="raise").merge(DelayedLabels(F1()))


ops = st.lists(
    st.tuples(st.sampled_from(["predict", "label"]),
              st.lists(st.integers(0, 12), min_size=1, max_size=5, unique=True),
              st.lists(st.sampled_from([0.1, 0.4, 0.6, 0.9]), min_size=5, max_size=5),
              st.lists(st.integers(0, 1), min_size=5, max_size=5)),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops, st.sampled_from(["skip", "raise"]), st.sampled_from([1, 4]))
def test_random_streams_match_a_dictionary_oracle(steps, on_unknown, batch_size):
    d = DelayedLabels(F1(), capacity=100, on_unknown=on_unknown, batch_size=batch_size)
    pending: dict[int, float] = {}
    fed_y: list[int] = []
    fed_s: list[float] = []
    unknown = 0
    for op, ids, scores, labels in steps:
        if op == "predict":
            d.predict(ids, scores[:len(ids)])
            pending.update(zip(ids, scores, strict=False))
            continue
        missing = tuple(i for i in ids if i not in pending)
        ys = labels[:len(ids)]
        if missing and on_unknown == "raise":
            before = d.state_dict()
            with pytest.raises(ValueError, match=f"id {missing[0]} is not pending"):
                d.label(ids, ys)
            assert same_state(d.state_dict(), before)
            continue
        call = d.label_report(ids[0], ys[0]) if len(ids) == 1 else d.label_report(ids, ys)
        assert call == LabelReport(len(ids) - len(missing), missing)
        unknown += len(missing)
        for i, y in zip(ids, ys, strict=False):
            if i in pending:
                fed_y.append(y)
                fed_s.append(pending.pop(i))
    st_ = d.stats()
    assert st_["unknown"] == unknown and st_["labelled"] == len(fed_y)
    assert st_["pending"] == len(pending)
    assert quiet(d.compute) == quiet(F1().update(np.array(fed_y, dtype=int), np.array(fed_s)).compute)


def test_unknown_id_error_is_documented_and_carries_the_first_id():
    import inspect
    import pickle

    doc = inspect.getdoc(UnknownIdError) or ""
    for section in ("Parameters", "Attributes", "Examples"):
        assert f"\n{section}\n---" in doc, section
    for name in inspect.signature(UnknownIdError).parameters:
        assert f"\n{name} : " in doc, name
    d = DelayedLabels(Precision(), on_unknown="raise")
    d.predict(["a", "b"], [0.9, 0.2])
    with pytest.raises(UnknownIdError) as info:
        d.label(["b", "x", "y"], [1, 0, 1])
    err = info.value
    assert (err.first, err.missing, err.total) == ("x", 2, 3)
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and (again.first, again.missing, again.total) == ("x", 2, 3)
