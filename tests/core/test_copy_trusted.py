"""copy() and pickling: deep, independent copies through ``State.copy`` / trusted state dicts
(no O(n log n) re-validation), while ``load``/``loads``/``from_state_dict`` keep validating."""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import header_of
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._core.metric import Metric, states_trusted, trusted_states
from streammetrics._core.persistence import MAGIC
from streammetrics._scores.exact.buffer import SortedScores


def with_header(header: dict[str, Any], payload: bytes) -> bytes:
    h = json.dumps(header).encode()
    body = len(h).to_bytes(8, "little") + h + payload
    return MAGIC + hashlib.sha256(body).digest() + body


def _batch(seed: int, n: int, kind: str, weighted: bool) -> tuple[tuple[Any, ...], dict[str, Any]]:
    rng = np.random.default_rng(seed)
    w = {"sample_weight": rng.integers(1, 4, n).astype(float) * 0.5} if weighted else {}
    if kind == "multiclass":
        return (rng.integers(0, 3, n), rng.random((n, 3)).round(1)), w
    if kind == "multilabel":
        return (rng.integers(0, 2, (n, 3)), rng.random((n, 3)).round(1)), w
    if kind == "labels":
        return (rng.integers(0, 3, n), rng.integers(0, 3, n)), w
    return (rng.integers(0, 2, n), rng.random(n).round(1)), w


# (factory, kind of batch, weights allowed)
FACTORIES: dict[str, tuple[Callable[[], Metric], str, bool]] = {
    "auroc": (lambda: sm.AUROC(), "binary", True),
    "auroc_mc": (lambda: sm.AUROC(num_classes=3), "multiclass", True),
    "auroc_ovo": (lambda: sm.AUROC(num_classes=3, multi_class="ovo"), "multiclass", False),
    "auroc_ml": (lambda: sm.AUROC(num_classes=3, multilabel=True), "multilabel", False),
    "ap": (lambda: sm.AveragePrecision(), "binary", True),
    "auroc_bounded": (lambda: sm.AUROC(max_bytes=4096), "binary", True),
    "f1": (lambda: sm.F1(3, average="macro"), "labels", True),
    "cm": (lambda: sm.ConfusionMatrix(3), "labels", True),
    "topk": (lambda: sm.TopKAccuracy(3, k=2), "multiclass", True),
    "window": (lambda: sm.Window(sm.AUROC(), size=25), "binary", False),
    "window_f1": (lambda: sm.Window(sm.F1(), size=25), "binary", True),
    "decayed": (lambda: sm.Decayed(sm.AUROC(), half_life=20), "binary", False),
    "set": (lambda: sm.MetricSet(a=sm.AUROC(), p=sm.AveragePrecision(), f=sm.F1()), "binary", True),
}


def _feed(m: Metric, batches: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> Metric:
    for args, kw in batches:
        m.update(*args, **kw)
    return m


def _assert_same(a: Metric, b: Metric) -> None:
    da, db = a.state_dict(), b.state_dict()
    assert da.keys() == db.keys()
    for k in da:
        if k == "config":
            assert da[k] == db[k]
        elif isinstance(da[k], np.ndarray):
            np.testing.assert_allclose(da[k], db[k], rtol=1e-12, atol=0)
        else:
            assert da[k] == db[k], k
    va, vb = a.compute(), b.compute()
    if isinstance(va, dict):
        assert va.keys() == vb.keys()
        for k in va:
            np.testing.assert_allclose(np.asarray(va[k], float), np.asarray(vb[k], float), rtol=1e-12)
    else:
        np.testing.assert_allclose(np.asarray(va, float), np.asarray(vb, float), rtol=1e-12)


def _plan(draw: Any, kind: str, weighted: bool, count: int) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [
        _batch(draw(st.integers(0, 10**6)), draw(st.integers(0, 40)), kind, weighted and draw(st.booleans()))
        for _ in range(count)
    ]


@pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")
@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(sorted(FACTORIES)), data=st.data())
def test_copy_is_deep_and_both_sides_replay(name: str, data: Any) -> None:
    factory, kind, weighted = FACTORIES[name]
    common = _plan(data.draw, kind, weighted, data.draw(st.integers(0, 3)))
    left = _plan(data.draw, kind, weighted, data.draw(st.integers(0, 2)))
    right = _plan(data.draw, kind, weighted, data.draw(st.integers(0, 2)))
    original = _feed(factory(), common)
    if data.draw(st.booleans()):
        original.compute()  # a consolidated (read) state as well as one with queued batches
    clone = original.copy()
    assert type(clone) is type(original) and clone._lock is not original._lock
    _assert_same(clone, _feed(factory(), common))
    _feed(original, left)
    _feed(clone, right)
    _assert_same(original, _feed(factory(), common + left))
    _assert_same(clone, _feed(factory(), common + right))
    # and the pickle round trip of either side is the same state
    _assert_same(pickle.loads(pickle.dumps(clone)), clone)


def test_plain_metrics_copy_their_state_object() -> None:
    m = sm.AUROC().update([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.4])
    clone = m.copy()
    assert clone._state is not m._state and isinstance(clone._state, SortedScores)
    assert not states_trusted()  # the trusted block never leaks out of copy / pickle


def test_delayed_labels_copy_is_independent() -> None:
    d = sm.DelayedLabels(sm.AUROC(), ttl=100.0, clock=lambda: 0.0)
    d.predict([1, 2, 3, 4], [0.2, 0.7, 0.5, 0.1])
    d.label([1, 2], [0, 1])
    c = d.copy()
    d.label([3], [1])
    c.label([3, 4], [0, 1])
    assert d.compute() == sm.AUROC().update([0, 1, 1], [0.2, 0.7, 0.5]).compute()
    assert c.compute() == sm.AUROC().update([0, 1, 0, 1], [0.2, 0.7, 0.5, 0.1]).compute()


@pytest.mark.parametrize("weighted", [False, True])
def test_pickle_restores_the_exact_state_without_recounting(weighted: bool, monkeypatch: Any) -> None:
    rng = np.random.default_rng(3)
    m = sm.AUROC(num_classes=3)
    for _ in range(5):
        n = 300
        m.update(rng.integers(0, 3, n), rng.random((n, 3)).round(2).astype(np.float32),
                 sample_weight=rng.random(n) + 0.5 if weighted else None)
    blob = pickle.dumps(m)
    # the trusted path never ranks scores: forbid it while unpickling
    monkeypatch.setattr(SortedScores, "_fold", lambda self, new: pytest.fail("re-ranked on unpickle"))
    clone = pickle.loads(blob)
    monkeypatch.undo()
    st_a, st_b = m._state, clone._state
    assert st_b._u2.dtype == st_a._u2.dtype and np.array_equal(st_b._u2, st_a._u2)
    assert st_b._dtype == st_a._dtype == np.float32 and st_b._weighted == weighted
    st_b.check_invariants()  # u2 equals a recount from scratch, runs sorted, totals consistent
    _assert_same(clone, m)
    assert clone.compute() == m.compute()
    # the same set of samples through the validated path gives the same state
    _assert_same(sm.loads(sm.dumps(m)), clone)


def test_empty_state_round_trips_keep_the_unset_score_dtype() -> None:
    m = sm.AUROC()
    for clone in (m.copy(), pickle.loads(pickle.dumps(m))):
        assert clone._state._dtype is None
        clone.update([0, 1], np.array([0.25, 0.5], dtype=np.float32))
        assert clone._state.arrays()["values"].dtype == np.float32


def test_untrusted_loads_reject_the_trusted_entries_and_tampering(tmp_path: Any) -> None:
    m = sm.AUROC().update([0, 1, 1, 0, 1], [0.1, 0.8, 0.4, 0.4, 0.9])
    with trusted_states():
        trusted = m.state_dict()
    assert "trusted.u2" in trusted
    # a dict carrying (possibly forged) derived counts is not accepted outside the trusted block
    forged = dict(trusted, **{"trusted.u2": np.array([[10**6]])})
    with pytest.raises(ValueError, match="unexpected arrays"):
        sm.AUROC.from_state_dict(forged)
    # unsorted scores in a file are still rejected (the full validation still runs on load)
    plain = m.state_dict()
    assert "trusted.u2" not in plain
    bad = dict(plain, values=plain["values"][::-1].copy())
    with pytest.raises(ValueError, match="not sorted"):
        sm.AUROC.from_state_dict(bad)
    path = tmp_path / "bad.sm"
    sm.save(sm.AUROC.from_state_dict(plain), path)
    data = bytearray(path.read_bytes())
    good = sm.load(path)
    assert good.compute() == m.compute()
    # tamper with the first stored score (a NaN, checksum recomputed): rejected
    header, payload = header_of(bytes(data))
    entry = next(a for a in header["arrays"] if a["name"] == "values")
    raw = bytearray(payload)
    raw[entry["offset"]:entry["offset"] + 8] = np.float64(np.nan).tobytes()
    path.write_bytes(with_header(header, bytes(raw)))
    with pytest.raises(ValueError, match="NaN"):
        sm.load(path)


def test_pickles_of_the_previous_format_still_load() -> None:
    from streammetrics._core.metric import _rebuild

    m = sm.AUROC().update([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.4])
    clone = _rebuild(m.state_dict())  # what older pickles call
    assert clone.compute() == m.compute()


def _wrappers() -> dict[str, Metric]:
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 200), rng.random(200).round(2)
    d = sm.DelayedLabels(sm.AUROC(), ttl=100.0, clock=lambda: 0.0)
    d.predict([1, 2, 3], [0.1, 0.5, 0.7])
    d.label([1, 2], [0, 1])
    return {
        "set": sm.MetricSet(a=sm.AUROC(), p=sm.AveragePrecision(), f=sm.F1()).update(y, s),
        "window": sm.Window(sm.AUROC(), size=50).update(y, s),
        "decayed": sm.Decayed(sm.AUROC(), half_life=50).update(y, s),
        "delayed": d,
    }


@pytest.mark.parametrize("name", sorted(_wrappers()))
def test_wrapper_pickles_and_copies_skip_the_recount(name: str, monkeypatch: Any) -> None:
    m = _wrappers()[name]
    blob = pickle.dumps(m)
    monkeypatch.setattr(SortedScores, "_fold", lambda self, new: pytest.fail("re-ranked"))
    clones = [pickle.loads(blob), m.copy()]
    monkeypatch.undo()
    for clone in clones:
        _assert_same(clone, m)


class _LockedClock:
    """A clock object that cannot be deep-copied (it holds a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 100.0

    def __call__(self) -> float:
        with self.lock:
            return self.now


@pytest.mark.parametrize("kind", ["window", "decayed"])
def test_copies_share_an_injected_clock(kind: str) -> None:
    clock = _LockedClock()
    make = {
        "window": lambda: sm.Window(sm.AUROC(), seconds=10.0, clock=clock),
        "decayed": lambda: sm.Decayed(sm.AUROC(), half_life_seconds=10.0, clock=clock),
    }[kind]
    m = make().update([0, 1, 1], [0.2, 0.4, 0.3])
    clone = m.copy()
    assert clone._state.clock is clock
    clock.now = 105.0
    m.update([0], [0.5])
    clone.update([1], [0.1])
    _assert_same(m, make().update([0, 1, 1], [0.2, 0.4, 0.3], timestamp=100.0).update([0], [0.5]))
    assert clone.compute() == make().update([0, 1, 1, 1], [0.2, 0.4, 0.3, 0.1],
                                             timestamp=[100.0, 100.0, 100.0, 105.0]).compute()


def test_dask_tasks_trust_each_other_but_public_merge_states_validates() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("dask")
    from streammetrics._engines.plan import Plan as _Plan
    from streammetrics.dask import _merge_task, _root_task, merge_states, partition_state

    ms = sm.MetricSet(a=sm.AUROC(), p=sm.AveragePrecision(), f=sm.F1())
    plan = _Plan(config=ms._config(), family="classification", label="y", score="p")
    rng = np.random.default_rng(9)
    frames = [pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.random(n).round(2)}) for n in (50, 0, 70)]
    with trusted_states():
        trusted = [partition_state(df, plan) for df in frames]
    assert not states_trusted()
    plain = [partition_state(df, plan) for df in frames]
    assert any(k.endswith("trusted.u2") for k in trusted[0]) and not any("trusted" in k for k in plain[0])
    merged = _merge_task(trusted, plan.config)
    ref = merge_states(plain, plan.config)
    assert {k for k in merged if "trusted" not in k} == set(ref)
    for k in ref:
        np.testing.assert_array_equal(merged[k], ref[k])
    values, _ = _root_task([merged], plan.config)
    whole = pd.concat(frames)
    expected = ms.copy().update(whole["y"].to_numpy(), whole["p"].to_numpy()).compute()
    assert values == expected
    # the public function treats shipped states as untrusted: derived counts are refused
    with pytest.raises(ValueError, match="unexpected arra"):
        merge_states(trusted, plan.config)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("make", [lambda: sm.AUROC(), lambda: sm.AUROC(num_classes=3, multi_class="ovo")])
def test_merge_reuses_the_other_states_counts(make: Callable[[], Metric], weighted: bool) -> None:
    kind = "binary" if make()._config().get("num_classes") is None else "multiclass"
    parts = [_feed(make(), [_batch(seed, 60, kind, weighted and seed % 2 == 0)]) for seed in range(4)]
    merged = parts[0].copy().merge(*parts[1:])
    merged._state.check_invariants()  # u2 equal to a recount from scratch
    whole = _feed(make(), [_batch(seed, 60, kind, weighted and seed % 2 == 0) for seed in range(4)])
    _assert_same(merged, whole)
