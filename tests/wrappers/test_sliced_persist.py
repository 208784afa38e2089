"""What ``Sliced`` saves it loads, at any number of slices: per-slot states are grouped by entry
(the file header does not grow with the slices), stacked confusion counts are checked and computed
for all slots at once, the overflow slice counts absorbed keys in bounded memory, files of the
earlier one-entry-per-slot layout still load, and tampered files of the new layout are refused."""

from __future__ import annotations

import json
import logging
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._core.persistence import MAX_HEADER
from streammetrics._counts.confusion_counts import ConfusionCounts
from streammetrics.wrappers.sliced import store as _slice_store
from streammetrics.wrappers.sliced.absorbed import EXACT


def _header_len(data: bytes) -> int:
    return int.from_bytes(data[40:48], "little")


def _feed(s: sm.Sliced, k: int, seed: int = 0, rows: int = 4) -> sm.Sliced:
    rng = np.random.default_rng(seed)
    n = rows * k
    y = np.tile([0, 1], n // 2)
    s.update(y, rng.random(n), slices=np.arange(n) % k, sample_weight=rng.random(n) + 0.5)
    return s


def test_a_state_past_the_former_header_limit_saves_and_loads() -> None:
    """The former layout described each slot's arrays in the JSON header (``slices.<slot>:<name>``),
    so the header grew with the slices and the member names, and ``load`` refused it beyond
    ``MAX_HEADER``: here 2 arrays per slot, each naming a 4000-character member."""
    name = "m" + "x" * 4000
    k = 9000
    assert 2 * k * len(name) > MAX_HEADER
    s = _feed(sm.Sliced(sm.MetricSet(**{name: sm.AUROC()}), max_slices=k), k)
    data = sm.dumps(s)
    assert _header_len(data) < 64 * 1024
    back = sm.loads(data)
    assert back.compute() == s.compute()
    assert back.overall() == s.overall()


@pytest.mark.parametrize("metric", [
    lambda: sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC(), ll=sm.LogLoss()),
    lambda: sm.Window(sm.Recall(), size=3),
    lambda: sm.Decayed(sm.AUROC(), half_life=5),
    lambda: sm.Recall(),
])
def test_the_header_does_not_grow_with_the_slices(metric: Any) -> None:
    small = sm.dumps(_feed(sm.Sliced(metric()), 5))
    large_state = _feed(sm.Sliced(metric()), 1500)
    large = sm.dumps(large_state)
    # only the digits of array sizes and offsets (the former layout: ~150-600 bytes per slice)
    assert _header_len(large) - _header_len(small) < 1000
    assert len(large) > 50 * len(small) // 10
    back = sm.loads(large)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert back.compute() == large_state.compute()


def _legacy(s: sm.Sliced) -> dict[str, Any]:
    """The state dict the former layout wrote: ``present`` (JSON slots) and one entry
    ``slices.<slot>:<name>`` per slot and state entry."""
    sd = s.state_dict()
    store = s._state.crossed
    assert store is not None
    out = {k: v for k, v in sd.items() if not (k.startswith("slices.") and k not in
                                                ("slices.keys", "slices.absorbed", "slices.rows"))}
    present = [i for i, m in enumerate(store.metrics[: len(store.keys) + 1]) if m is not None]
    out["slices.present"] = np.frombuffer(json.dumps(present).encode(), np.uint8).copy()
    for i in present:
        for name, value in store.metrics[i].state_dict().items():  # type: ignore[union-attr]
            if name not in ("class", "format_version", "config"):
                out[f"slices.{i}:{name}"] = value
    return out


def test_states_of_the_former_layout_still_load() -> None:
    s = _feed(sm.Sliced(sm.MetricSet(r=sm.Recall(), a=sm.AUROC()), max_slices=3, overflow="other"), 6)
    back = sm.Sliced.from_state_dict(_legacy(s))
    assert back.compute() == s.compute() and back.counts() == s.counts()
    assert sm.loads(sm.dumps(back)).compute() == s.compute()


def _tampered(edit: Any) -> dict[str, Any]:
    s = _feed(sm.Sliced(sm.Decayed(sm.AUROC(), half_life=5)), 4)
    sd = s.state_dict()
    layout = json.loads(bytes(sd["slices.layout"]).decode())
    edit(sd, layout)
    sd["slices.layout"] = np.frombuffer(json.dumps(layout).encode(), np.uint8).copy()
    return sd


def _set(name: str, value: Any) -> Any:
    def edit(sd: dict[str, Any], layout: dict[str, Any]) -> None:
        sd[name] = value
    return edit


@pytest.mark.parametrize(("edit", "word"), [
    (_set("slices.stored", np.array([1, 1, 2], np.int64)), "increasing"),
    (_set("slices.stored", np.array([1, 2, 3, 9], np.int64)), "below 5"),
    (_set("slices.stored", np.array([1.0, 2.0])), "integer"),
    (_set("slices.g0.slots", np.array([4, 3, 2, 1], np.int64)), "increasing"),
    (_set("slices.g0.shapes", np.array([[2], [2], [2], [10**18]], np.int64)), "add up"),
    (_set("slices.g0.shapes", np.array([[-1], [2], [2], [13]], np.int64)), ">= 0"),
    (_set("slices.g0.data", np.zeros((2, 2))), "1-D"),
    (lambda sd, lay: sd.pop("slices.g1.data"), "g1.data"),
    (lambda sd, lay: lay["arrays"].append(["seg0.y_true", 1]), "g"),
    (lambda sd, lay: lay["arrays"].__setitem__(0, ["config", 1]), "layout array 0"),
    (lambda sd, lay: lay["arrays"].__setitem__(0, ["x", 99]), "layout array 0"),
    (lambda sd, lay: lay["scalars"].__setitem__("newest", [[9, 1.0]]), "slot 9"),
    (lambda sd, lay: lay["scalars"].__setitem__("newest", [[1, [1]]]), "scalar"),
    (lambda sd, lay: lay.__setitem__("extra", 1), "layout"),
    (lambda sd, lay: sd.__setitem__("slices.g0.shapes", np.array([[3], [3], [3], [3]], np.int64)),
     "add up"),
])
def test_tampered_grouped_layouts_are_refused(edit: Any, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        sm.Sliced.from_state_dict(_tampered(edit))


def test_a_duplicated_entry_of_a_slot_is_refused() -> None:
    def edit(sd: dict[str, Any], layout: dict[str, Any]) -> None:
        j = len(layout["arrays"])
        layout["arrays"].append(layout["arrays"][0])
        for part in ("slots", "shapes", "data"):
            sd[f"slices.g{j}.{part}"] = sd[f"slices.g0.{part}"]
    with pytest.raises(ValueError, match="twice"):
        sm.Sliced.from_state_dict(_tampered(edit))


@pytest.mark.parametrize(("counts", "word"), [
    (lambda c: c * np.nan, "non-finite"),
    (lambda c: -c, "negative"),
])
def test_tampered_stacked_counts_are_refused(counts: Any, word: str) -> None:
    sd = _feed(sm.Sliced(sm.Recall()), 5).state_dict()
    sd["slices.counts"] = counts(sd["slices.counts"])
    with pytest.raises(ValueError, match=word):
        sm.Sliced.from_state_dict(sd)


def test_stacked_squared_weights_are_checked_per_cell_on_load() -> None:
    data = bytearray(sm.dumps(_feed(sm.Sliced(sm.Recall()), 5)))
    sd = sm.loads(bytes(data)).state_dict()
    sd["slices.counts_w2"] = sd["slices.counts_w2"] * 1e6  # more than (sum w)**2
    from streammetrics._core.load_checks import load_budget
    with load_budget(10**6), pytest.raises(ValueError, match="counts_w2"):
        sm.Sliced.from_state_dict(sd)


# -- stacked counts: no per-slot work on load and compute -------------------------------------------
def test_stacked_load_and_compute_do_no_per_slot_work(monkeypatch: pytest.MonkeyPatch) -> None:
    s = _feed(sm.Sliced(sm.MetricSet(p=sm.Precision(), r=sm.Recall(), f=sm.F1()), min_count=3), 300)
    s.update([1, 0], [1, 1], slices=[10**6, 10**6 + 1])  # two slices below min_count
    data = sm.dumps(s)
    expected = {k: (v if isinstance(v["p"], sm.UndefinedSlice) else s.slice(k).compute())
                for k, v in s.compute().items()}
    loads: list[int] = []
    built: list[int] = []
    original = ConfusionCounts.load_arrays
    monkeypatch.setattr(ConfusionCounts, "load_arrays",
                        lambda self, a: (loads.append(1), original(self, a))[1])
    monkeypatch.setattr(_slice_store, "twin_of",
                        lambda m, f=_slice_store.twin_of: (built.append(1), f(m))[1])
    back = sm.loads(data)
    got = back.compute()
    assert len(loads) <= 2 and len(built) <= 2  # was one per slot (302)
    assert got == expected
    assert list(got) == list(expected)


@pytest.mark.parametrize("metric", [
    lambda: sm.Recall(), lambda: sm.Precision(zero_division=0.0), lambda: sm.F1(),
    lambda: sm.FBeta(beta=2.0, zero_division=1.0), lambda: sm.Jaccard(), lambda: sm.Specificity(),
    lambda: sm.NPV(zero_division=np.nan), lambda: sm.MetricSet(p=sm.Precision(), j=sm.Jaccard()),
])
def test_vectorised_compute_equals_each_slices_own(metric: Any) -> None:
    rng = np.random.default_rng(3)
    n = 400
    s = sm.Sliced(metric(), max_slices=30, overflow="other")
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    y[:40] = 0  # slices with no positives: zero_division
    keys = np.where(np.arange(n) < 40, 1000 + np.arange(n) % 4, rng.integers(0, 40, n))
    s.update(y, p, slices=keys, sample_weight=rng.random(n) + 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = s.compute()
        expected = {k: s.slice(k).compute() for k in got}
    assert list(got) == list(expected)
    for k, v in got.items():
        assert v == expected[k] or (v != v and expected[k] != expected[k]), k


@pytest.mark.parametrize("metric", [
    lambda: sm.Recall(), lambda: sm.Precision(), lambda: sm.NPV(),
    lambda: sm.MetricSet(p=sm.Precision(), r=sm.Recall(), f=sm.F1()),
])
def test_vectorised_intervals_equal_each_slices_own(metric: Any) -> None:
    rng = np.random.default_rng(5)
    n = 300
    s = sm.Sliced(metric(), max_slices=20, overflow="other", min_count=3)
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    s.update(y, p, slices=rng.integers(0, 30, n), sample_weight=rng.random(n) + 0.1)
    s.update([1], [1], slices=[99])  # one row: below min_count
    got = s.interval(0.9)
    expected = {}
    for k, v in got.items():
        one = s.slice(k)
        if isinstance(v, sm.UndefinedSlice) or (isinstance(v, dict) and not v):
            expected[k] = v
        elif isinstance(one, sm.MetricSet):
            expected[k] = {name: one[name].interval(0.9) for name in ("p", "r")}
        else:
            expected[k] = one.interval(0.9)
    assert list(got) == list(expected)
    for k, v in got.items():
        if isinstance(v, dict) and v and not isinstance(next(iter(v.values())), sm.UndefinedSlice):
            assert v == expected[k] or np.allclose(  # nan ends for empty denominators
                np.array(list(v.values()), float), np.array(list(expected[k].values()), float),
                rtol=0, atol=0, equal_nan=True)
        elif isinstance(v, tuple):
            assert np.array_equal(np.array(v), np.array(expected[k]), equal_nan=True)
    with pytest.raises(ValueError, match="confidence"):
        s.interval(1.5)


def test_vectorised_compute_warns_for_undefined_slices() -> None:
    s = sm.Sliced(sm.Recall()).update([0, 1], [0, 1], slices=["none", "one"])
    with pytest.warns(sm.UndefinedMetricWarning, match="no true samples"):
        assert s.compute() == {"none": 0.0, "one": 1.0}


# -- the overflow slice in bounded memory ----------------------------------------------------------
def test_absorbed_keys_are_counted_in_bounded_memory() -> None:
    s = sm.Sliced(sm.Recall(), max_slices=2, overflow="other")
    n = 200_000
    for part in np.array_split(np.arange(n), 4):
        s.update(np.ones(part.size, int), np.ones(part.size, int), slices=part)
    assert s.nbytes < 200_000  # the keys themselves: ~13 MB
    assert abs(s.n_absorbed - (n - 2)) < 0.03 * n
    back = sm.loads(sm.dumps(s))
    assert back.n_absorbed == s.n_absorbed
    assert len(sm.dumps(s)) < 100_000
    other = sm.Sliced(sm.Recall(), max_slices=2, overflow="other")
    other.update(np.ones(n, int), np.ones(n, int), slices=np.arange(n // 2, n + n // 2))
    s.merge(other)  # half of the keys are shared
    assert abs(s.n_absorbed - 1.5 * n) < 0.03 * 1.5 * n


def test_absorbed_keys_are_exact_up_to_the_limit_and_across_merges() -> None:
    a = sm.Sliced(sm.Recall(), max_slices=1, overflow="other")
    a.update(np.ones(EXACT + 1, int), np.ones(EXACT + 1, int), slices=np.arange(EXACT + 1))
    assert a.n_absorbed == EXACT
    b = sm.Sliced(sm.Recall(), max_slices=1, overflow="other")
    b.update([1, 1, 1], [1, 1, 1], slices=[0, 5, -1])
    assert b.n_absorbed == 2
    a.merge(b)  # one more distinct key: now a sketch
    assert abs(a.n_absorbed - (EXACT + 1)) < 0.03 * EXACT
    assert sm.loads(sm.dumps(a)).n_absorbed == a.n_absorbed


def test_a_tampered_sketch_is_refused() -> None:
    s = sm.Sliced(sm.Recall(), max_slices=1, overflow="other")
    s.update(np.ones(EXACT + 10, int), np.ones(EXACT + 10, int), slices=np.arange(EXACT + 10))
    sd = s.state_dict()
    sd["slices.absorbed_sketch"] = np.full(16384, 200, np.uint8)
    with pytest.raises(ValueError, match="registers"):
        sm.Sliced.from_state_dict(sd)


# -- every size the constructor accepts ----------------------------------------------------------------
@pytest.mark.parametrize("max_slices", [1, 2, 65_536, 2**31, 2**62])
@pytest.mark.parametrize("overflow", ["error", "other"])
def test_every_accepted_size_saves_loads_and_computes(max_slices: int, overflow: str) -> None:
    for metric in (sm.Recall(zero_division=0.0), sm.MetricSet(a=sm.AUROC(), r=sm.Recall(zero_division=0.0))):
        s = sm.Sliced(metric, max_slices=max_slices, overflow=overflow, min_count=2**40)
        empty = sm.loads(sm.dumps(s))
        assert empty.compute() == {}
        try:
            s.update([1, 0, 1], [0.9, 0.1, 0.4], slices=[5, 6, 5])
        except ValueError as exc:
            assert overflow == "error" and max_slices == 1 and "max_slices" in str(exc)
            continue
        back = sm.loads(sm.dumps(s))
        assert back.compute() == s.compute() and back.counts() == s.counts()
        assert back.max_slices == max_slices


# -- Checkpointer never stops silently ------------------------------------------------------------
def test_checkpointer_logs_every_failed_background_save(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    metric = sm.Recall().update([1], [1])
    folder = tmp_path / "gone"
    folder.mkdir()
    saver = sm.Checkpointer(metric, folder / "m.sm", every_seconds=0.02)
    folder.rmdir()  # every save now fails
    caplog.set_level(logging.ERROR, logger="streammetrics.checkpoint")
    deadline = time.monotonic() + 10
    while saver.failures < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    saver.close(final=False)
    assert saver.failures >= 2 and saver.last_error is not None
    records = [r for r in caplog.records if r.name == "streammetrics.checkpoint"]
    assert records and all(r.levelno == logging.ERROR for r in records)
    assert "m.sm" in records[0].getMessage() and records[0].exc_info is not None
    folder.mkdir()
    saver = sm.Checkpointer(metric, folder / "m.sm", every_seconds=0.02)
    deadline = time.monotonic() + 10
    while saver.saves < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    saver.close(final=False)
    assert saver.failures == 0 and sm.Checkpointer.restore(folder / "m.sm").compute() == 1.0


# -- keys arriving a few per batch -------------------------------------------------------------------
@pytest.mark.parametrize("order", ["increasing", "decreasing", "shuffled", "strings"])
def test_keys_arriving_one_per_batch_grow_the_tables_geometrically(
        order: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each batch with a new key used to copy every per-slot array (and the integer lookup
    table): quadratic in the number of slices for the usual stream of new ids."""
    n = 3000
    ids = np.arange(n)
    if order == "decreasing":
        ids = ids[::-1]
    elif order == "shuffled":
        ids = np.random.default_rng(0).permutation(n)
    keys: list[Any] = [f"k{i}" for i in ids] if order == "strings" else ids.tolist()
    grown: list[int] = []
    original = _slice_store._grown
    monkeypatch.setattr(_slice_store, "_grown", lambda a, r: (grown.append(r), original(a, r))[1])
    tables: list[int] = []
    s = sm.Sliced(sm.Recall(), max_slices=n)
    for i, key in enumerate(keys):
        s.update([1, 1], [1, i % 2], slices=[key, key])
        store = s._state.crossed
        assert store is not None
        if not tables or store._table.shape[0] != tables[-1]:
            tables.append(store._table.shape[0])
    assert len(grown) <= 3 * 22  # rows, counts (and counts_w2): ~log1.5(3000) growths each
    assert len(tables) <= 16
    expected = {k: 2 for k in keys}
    assert s.counts() == expected
    s.update([1] * n, [0] * n, slices=keys)  # every key known: the lookup table's paths
    assert s.counts() == {k: 3 for k in keys}
    back = sm.loads(sm.dumps(s))
    assert back.compute() == s.compute()


_CLUSTERS = st.sampled_from([0, 40, -300, 5000, 2**19, -(2**19), 2**20 + 7, 2**62])


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.tuples(_CLUSTERS, st.lists(st.integers(0, 70), min_size=1, max_size=12),
                                  st.booleans()), min_size=1, max_size=14))
def test_integer_keys_in_any_arrival_order_count_like_a_dict(
        batches: list[tuple[int, list[int], bool]]) -> None:
    """The lookup table growing up, down, rebasing and being dropped (a span beyond its
    limit): every batch's counts equal a dict of the rows, known keys take the table paths."""
    s = sm.Sliced(sm.Recall(), max_slices=10**6)
    expected: dict[int, int] = {}
    for centre, offsets, descending in batches:
        keys = sorted((centre + o for o in offsets), reverse=descending)
        s.update(np.ones(len(keys), int), np.ones(len(keys), int), slices=np.array(keys, np.int64))
        for k in keys:
            expected[k] = expected.get(k, 0) + 1
        assert s.counts() == expected
    assert sm.loads(sm.dumps(s)).counts() == expected
