"""Slice keys that cannot be saved or exported are refused at ``update`` (state unchanged); every
key that is accepted saves, loads and exports: tuple keys (``zip``, a pandas MultiIndex), NUL
characters, masked key arrays, long strings, one kind of key per column. Round trips of random
keys (tuples included) through save / load are property-tested against a dict of the rows."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm


def _snapshot(s: sm.Sliced) -> bytes:
    return sm.dumps(s)


def _fed() -> sm.Sliced:
    return sm.Sliced(sm.Recall()).update([1, 0, 1], [1, 0, 0], slices=["a", "b", "a"])


@pytest.mark.parametrize(("keys", "words"), [
    (["\ud800", "a"], ["slices", "'\\ud800'", "index 0", "Unicode"]),
    (np.array(["a", "b\udfff"]), ["slices", "index 1", "Unicode"]),
    (np.array([1, 10**5000], dtype=object), ["slices", "[-2**63, 2**64)", "index 1"]),
    ([2**64, 3], ["slices", "[-2**63, 2**64)", "index 0"]),
    ([("a", 1), ("b", ("c", 2))], ["slices", "nested", "index 1"]),
    ([("a", float("nan")), ("b", 1.0)], ["slices", "finite floats", "index 0"]),
    ([(), ("b", 1)], ["slices", "index 0"]),
    (np.array([1.5, np.nan]), ["slices", "float key is nan", "index 1"]),  # floats: see test_sliced_floats
    (np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[D]"), ["slices", "datetime64"]),
    (np.array([b"a", b"b"]), ["slices", "|S1", "b'a'"]),
    (np.array([b"a", "b"], dtype=object), ["slices", "b'a'", "bytes", "index 0"]),
    (np.array([float("nan"), 1], dtype=object), ["slices", "nan", "float", "index 0"]),
    (np.array([[1], [2]], dtype=object)[:, 0].tolist() + [[3]], None),  # a list inside: unhashable
    (["a", 1, "b"], ["slices", "one kind", "'a' (string)", "1 (integer)", "index 1"]),
    ([("a", 1), ("a", "1")], ["slices", "one kind", "tuple (string, number)", "index 1"]),
    ([("a", 1), ("a", 1, 2)], ["slices", "one kind", "tuple (string, number, number)"]),
    (np.ma.masked_array([1, 2, 3], mask=[False, True, False]), ["slices", "masked", "index 1"]),
])
def test_keys_that_cannot_be_saved_or_exported_are_refused(keys: Any, words: list[str] | None) -> None:
    s = _fed()
    before = _snapshot(s)
    n = len(keys)
    with pytest.raises(ValueError) as info:
        s.update(np.ones(n, int), np.ones(n, int), slices=keys)
    for word in words or ["slices"]:
        assert word in str(info.value), (word, str(info.value))
    assert _snapshot(s) == before  # nothing changed, and it still saves
    assert sm.loads(before).compute() == s.compute()


def test_a_key_of_another_kind_than_the_column_holds_is_refused() -> None:
    s = _fed()
    before = _snapshot(s)
    with pytest.raises(ValueError, match=r"slices: this accumulator holds string keys .* integer"):
        s.update([1], [1], slices=[1])
    assert _snapshot(s) == before
    other = sm.Sliced(sm.Recall()).update([1], [1], slices=[7])
    with pytest.raises(ValueError, match="merge: slices: this accumulator holds string keys"):
        s.merge(other)
    assert _snapshot(s) == before
    named = sm.Sliced(sm.Recall()).update([1], [1], slices={"c": ["fr"], "d": [1]})
    with pytest.raises(ValueError, match=r"slices\['d'\]: this accumulator holds integer keys"):
        named.update([1], [1], slices={"c": ["fr"], "d": ["x"]})


def test_hostile_keys_no_longer_break_saving() -> None:
    """The issue's case: the key is refused, so the state (and a checkpoint of it) still saves."""
    s = sm.Sliced(sm.Recall())
    with pytest.raises(ValueError, match="slices"):
        s.update([1, 0], [1, 0], slices=["\ud800", "a"])
    s.update([1, 0], [1, 0], slices=["ok", "a"])
    assert sm.loads(sm.dumps(s)).compute() == s.compute()


def test_nul_characters_keep_keys_distinct() -> None:
    s = sm.Sliced(sm.Recall())
    s.update([1, 1, 1], [1, 0, 0], slices=["a\x00", "a", "a\x00\x00"])
    assert s.compute() == {"a\x00": 1.0, "a": 0.0, "a\x00\x00": 0.0}
    back = sm.loads(sm.dumps(s))
    assert back.compute() == s.compute()
    back.update([1], [1], slices=np.array(["a\x00"], dtype=object))
    assert back.counts() == {"a\x00": 2, "a": 1, "a\x00\x00": 1}


def test_masked_key_arrays_without_masked_entries_are_read_as_arrays() -> None:
    keys = np.ma.masked_array([3, 4, 3], mask=[False, False, False])
    s = sm.Sliced(sm.Recall()).update([1, 1, 0], [1, 0, 0], slices=keys)
    assert s.counts() == {3: 2, 4: 1}


@pytest.mark.parametrize("form", ["list", "zip", "object", "multiindex"])
def test_tuple_keys_in_one_column(form: str) -> None:
    a, b = ["fr", "fr", "de", "de", "fr"], [1, 1, 2, 2, 2]
    y, p = [1, 1, 1, 0, 1], [1, 0, 1, 0, 1]
    if form == "list":
        keys: Any = list(zip(a, b, strict=True))
    elif form == "zip":
        keys = zip(a, b, strict=True)
    elif form == "object":
        keys = np.empty(5, dtype=object)
        keys[:] = list(zip(a, b, strict=True))
    else:
        pd = pytest.importorskip("pandas")
        keys = pd.MultiIndex.from_arrays([a, b])
    s = sm.Sliced(sm.Recall()).update(y, p, slices=keys)
    crossed = sm.Sliced(sm.Recall()).update(y, p, slices=(np.array(a), np.array(b)))
    assert s.compute() == dict(crossed.compute())
    assert s.compute() == {("fr", 1): 0.5, ("de", 2): 1.0, ("fr", 2): 1.0}
    back = sm.loads(sm.dumps(s))
    assert back.compute() == s.compute() and back.counts() == s.counts()
    assert all(type(k) is tuple for k in back.compute())
    back.update([0], [1], slices=[("fr", 1)])  # a known key after the load
    assert back.counts()[("fr", 1)] == 3
    pd = pytest.importorskip("pandas")
    frame = s.compute().to_pandas()
    assert list(frame.index) == [("fr", 1), ("de", 2), ("fr", 2)]
    assert frame.loc[[("fr", 1)], "value"].iloc[0] == 0.5
    assert s.compute().to_dict() == {"fr, 1": 0.5, "de, 2": 1.0, "fr, 2": 1.0}


def test_tuple_keys_normalise_booleans_and_keep_floats() -> None:
    s = sm.Sliced(sm.Recall())
    s.update([1, 1, 1], [1, 1, 0], slices=[("a", True), ("a", 1), ("b", 2.5)])
    assert s.counts() == {("a", 1): 2, ("b", 2.5): 1}
    assert [type(v) for v in next(iter(s.counts()))] == [str, int]
    assert sm.loads(sm.dumps(s)).counts() == s.counts()


def test_tuple_keys_beside_other_key_columns_round_trip() -> None:
    s = sm.Sliced(sm.MetricSet(r=sm.Recall(), a=sm.AUROC()))
    s.update([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6],
             slices={"pair": [("x", 1), ("x", 1), ("y", 2), ("y", 2)], "day": [1, 1, 2, 2]})
    back = sm.loads(sm.dumps(s))
    assert back.compute() == s.compute()
    assert back.marginal("pair") == s.marginal("pair")
    assert list(back.compute()) == [(("x", 1), 1), (("y", 2), 2)]


def test_booleans_are_the_integers_0_and_1() -> None:
    s = sm.Sliced(sm.Recall()).update([1, 1, 1], [1, 0, 1], slices=np.array([True, 1, 0], dtype=object))
    assert s.counts() == {1: 2, 0: 1} and all(type(k) is int for k in s.counts())


def test_a_long_key_costs_its_length_not_rows_times_its_length() -> None:
    n, long = 4000, "x" * 20_000
    keys = ["k"] * (n - 1) + [long]
    tracemalloc.start()
    try:
        s = sm.Sliced(sm.Recall()).update(np.ones(n, int), np.ones(n, int), slices=keys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20  # a fixed-width array would take n x 20_000 x 4 bytes = 320 MB
    assert s.counts() == {"k": n - 1, long: 1}
    assert sm.loads(sm.dumps(s)).counts() == s.counts()


def test_wide_string_arrays_take_the_dict_path() -> None:
    keys = np.array(["a" * 300, "b" * 300, "a" * 300])
    s = sm.Sliced(sm.Recall()).update([1, 1, 0], [1, 0, 0], slices=keys)
    assert s.counts() == {"a" * 300: 2, "b" * 300: 1}


# -- hostile files: keys the update would refuse are refused on load ------------------------------
@pytest.mark.parametrize(("raw", "word"), [
    ('["\\ud800"]', "Unicode"),
    ('[18446744073709551616]', r"2\*\*64"),
    ('[["a", ["b"]]]', "tuple key"),
    ('[true]', "not a key"),
    ('[NaN]', "nan"),
    ('[1, 1.0]', "twice"),
    ('[[]]', "non-empty"),
    ('[["a", 1], ["a", 1.0]]', "twice"),
])
def test_hostile_keys_in_a_file_are_refused(raw: str, word: str) -> None:
    sd = sm.Sliced(sm.Recall()).update([1], [1], slices=["a"]).state_dict()
    keys = np.frombuffer(raw.encode(), np.uint8).copy()
    sd["slices.keys"] = keys
    n = len(__import__("json").loads(raw)) + 1
    sd["slices.rows"] = np.zeros(n, np.int64)
    sd["slices.counts"] = np.zeros((n, 4))
    sd["slices.counts_w2"] = np.zeros((n, 4))
    with pytest.raises(ValueError, match=word):
        sm.Sliced.from_state_dict(sd)


# -- property: random keys round-trip --------------------------------------------------------------
_ATOMS = st.one_of(st.text(max_size=6), st.integers(-(2**63), 2**64 - 1))
_TUPLES = st.tuples(st.text(max_size=4), st.one_of(st.integers(-5, 5), st.booleans(),
                                                    st.floats(allow_nan=False, allow_infinity=False,
                                                              width=32)))
_KINDS = {"str": st.text(max_size=6), "int": st.integers(-(2**63), 2**64 - 1), "tuple": _TUPLES,
          "float": st.floats(allow_nan=False, width=32) | st.sampled_from([0.0, -0.0, 1.0])}


@settings(max_examples=40, deadline=None)
@given(data=st.data(), kind=st.sampled_from(sorted(_KINDS)), cap=st.integers(1, 6),
       overflow=st.sampled_from(["error", "other"]), stacked=st.booleans())
def test_random_keys_round_trip_through_save_and_load(data: st.DataObject, kind: str, cap: int,
                                                      overflow: str, stacked: bool) -> None:
    keys = data.draw(st.lists(_KINDS[kind], min_size=1, max_size=12))
    n = len(keys)
    y = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    s = sm.Sliced(sm.Recall(zero_division=0.0) if stacked else sm.MetricSet(r=sm.Recall(zero_division=0.0)),
                  max_slices=cap, overflow=overflow)
    try:
        s.update(y, y, slices=keys)
    except ValueError as exc:
        assert overflow == "error" and "max_slices" in str(exc)
        return
    expected: dict[Any, int] = {}
    for k in keys:  # Python's dict: equal keys (True == 1, 0.0 == -0.0) are one slice
        k = tuple(int(v) if isinstance(v, bool) else v for v in k) if isinstance(k, tuple) else k
        expected[k] = expected.get(k, 0) + 1
    counts = s.counts()
    kept = {k: c for k, c in expected.items() if k in counts}
    assert len(kept) == min(cap, len(expected))
    assert {k: counts[k] for k in kept} == kept
    assert sum(counts.values()) == n
    back = sm.loads(sm.dumps(s))
    assert back.counts() == counts
    assert back.compute() == s.compute()
    assert back.n_absorbed == s.n_absorbed == len(expected) - len(kept)
    assert list(back.compute()) == list(s.compute())


def test_delayed_labels_keep_tuple_and_nul_keys_through_save_and_load() -> None:
    d = sm.DelayedLabels(sm.Sliced(sm.Recall()))
    d.predict([1, 2, 3, 4], [0.9, 0.2, 0.8, 0.7],
              slices=[("fr", 1), ("fr", 1), ("de", 2), ("de", 2)])
    d.label([1, 3], [1, 1])
    back = sm.loads(sm.dumps(d))  # two rows still pending, with their tuple keys
    back.label([2, 4], [1, 1])
    d.label([2, 4], [1, 1])
    assert back.metric.compute() == d.metric.compute() == {("fr", 1): 0.5, ("de", 2): 1.0}
    nul = sm.DelayedLabels(sm.Sliced(sm.Recall()))
    nul.predict([1, 2], [0.9, 0.9], slices=["a\x00", "a"])
    nul = sm.loads(sm.dumps(nul))
    nul.label([1, 2], [1, 1])
    assert nul.metric.counts() == {"a\x00": 1, "a": 1}
    with pytest.raises(ValueError, match="slices"):
        nul.predict([5], [0.5], slices=["\ud800"])


def test_a_state_saved_with_keys_of_several_kinds_in_a_column_still_loads() -> None:
    """Earlier versions accepted an object column of ints and strings; such files load, and
    new keys must be of the kind of the column's first key."""
    sd = sm.Sliced(sm.Recall()).update([1, 1], [1, 0], slices=["a", "b"]).state_dict()
    sd["slices.keys"] = np.frombuffer(b'["a", 1]', np.uint8).copy()
    back = sm.Sliced.from_state_dict(sd)
    assert back.counts() == {"a": 1, 1: 1}
    back.update([1], [1], slices=["c"])
    with pytest.raises(ValueError, match="string keys"):
        back.update([1], [1], slices=[2])
    assert sm.loads(sm.dumps(back)).counts() == {"a": 1, 1: 1, "c": 1}


def test_a_long_key_beyond_the_cap_is_named_briefly() -> None:
    s = sm.Sliced(sm.Recall(), max_slices=1).update([1], [1], slices=["a"])
    with pytest.raises(ValueError, match=r"max_slices=1 .*'bbbb.*\.\.\.") as info:
        s.update([1], [1], slices=["b" * 100_000])
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("keys", [
    np.array([-5, -3, 7, 127], np.int8), np.array([-300, 5, 32767, -300], np.int16),
    np.array([2**63, 2**63 + 1, 2**64 - 1, 2**63], np.uint64), [2**63, 5, 5, 2**63],
    [-(2**63), 2**64 - 1, 0, 0], np.array([True, False, True, True]),
])
def test_integer_keys_of_every_dtype_and_range(keys: Any) -> None:
    """Narrow dtypes (offsets used to wrap), uint64 keys beyond 2**63 (an OverflowError) and
    lists no integer dtype holds (read as floats and refused)."""
    expected: dict[int, int] = {}
    for k in np.asarray(keys, dtype=object).tolist():
        expected[int(k)] = expected.get(int(k), 0) + 1
    s = sm.Sliced(sm.Recall()).update(np.ones(4, int), np.ones(4, int), slices=keys)
    assert s.counts() == expected and all(type(k) is int for k in s.counts())
    s.update(np.ones(4, int), np.ones(4, int), slices=keys)  # known keys: the lookup paths
    back = sm.loads(sm.dumps(s))
    assert back.counts() == {k: 2 * c for k, c in expected.items()}
    d = sm.DelayedLabels(sm.Sliced(sm.Recall()))
    d.predict([1, 2, 3, 4], [0.9] * 4, slices=keys)
    d = sm.loads(sm.dumps(d))
    d.label([1, 2, 3, 4], [1] * 4)
    assert d.metric.counts() == expected


@settings(max_examples=25, deadline=None)
@given(data=st.data(), kinds=st.lists(st.sampled_from(sorted(_KINDS)), min_size=2, max_size=3),
       batches=st.integers(1, 3))
def test_random_crossed_keys_round_trip(data: st.DataObject, kinds: list[str], batches: int) -> None:
    """Several key columns (tuple columns among them), fed in batches: the crossed and the
    marginal counts equal a dict of the rows, before and after save / load, and a loaded state
    goes on counting."""
    s = sm.Sliced(sm.MetricSet(r=sm.Recall(zero_division=0.0), a=sm.AUROC()))
    crossed: dict[Any, int] = {}
    margins: list[dict[Any, int]] = [{} for _ in kinds]

    def norm(k: Any) -> Any:
        return tuple(int(v) if isinstance(v, bool) else v for v in k) if isinstance(k, tuple) else k

    for b in range(batches):
        n = data.draw(st.integers(1, 8))
        cols = [data.draw(st.lists(_KINDS[kind], min_size=n, max_size=n)) for kind in kinds]
        y = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
        target = s if b < batches - 1 or batches == 1 else sm.loads(sm.dumps(s))
        target.update(y, [0.5] * n, slices={f"c{j}": col for j, col in enumerate(cols)})
        s = target
        for i in range(n):
            key = tuple(norm(col[i]) for col in cols)
            crossed[key] = crossed.get(key, 0) + 1
            for j, col in enumerate(cols):
                margins[j][norm(col[i])] = margins[j].get(norm(col[i]), 0) + 1
    back = sm.loads(sm.dumps(s))
    assert back.counts() == s.counts() == crossed
    for j in range(len(kinds)):
        assert back.marginal(f"c{j}").counts == margins[j]
