"""The protocol laws, once, over the registry of every public metric (``tests/_support/laws.py``).

For every registered configuration (where the law holds for it), comparing the value, its dtype,
the certified bounds and ``is_exact`` (where the metric has them) and the case's readouts:
- any split into batches gives the one-shot state and value (a window: the same rows);
- any partition, merged back, gives the one-shot state and value (where the state keeps per-query
  values in arrival order: those values as a multiset, and the state of an in-order merge);
- a save/load round trip gives the same state and value, and the loaded metric keeps working;
  each member of a set saves and loads alone;
- unit weights = no weights; integer weight k = k copies (0 = removal; from ``min_rows`` rows);
- the value after each batch equals the one-shot value on the prefix;
- a ``Window`` at least as large as the stream equals the plain metric;
- a rejected batch leaves the saved state exactly as it was;
- a copy and a pickle round trip give the same value, and the copy is independent;
- one sample at a time (scalars, weighted or not) gives the batch state and value.
A last test checks that every public metric class has a registry entry.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from laws import (
    NAMES,
    REGISTRY,
    assert_same,
    assert_same_state,
    assert_state_unchanged,
    bad_batches,
    feed,
    make_data,
    per_query_sorted,
    plain_feed,
    public_metric_classes,
    result,
)

import streammetrics as sm

common = settings(max_examples=8, deadline=None)
seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(0, 30)


def names_with(law: str) -> list[str]:
    return [n for n in NAMES if law in REGISTRY[n].laws]


def value(case, metric, parts=True):
    """The metric's value, certificates and the case's readouts (``laws.result``)."""
    return result(metric, parts, case.readouts)


@pytest.mark.parametrize("name", names_with("split"))
@common
@given(seed=seeds, n=sizes, data=st.data())
def test_any_batch_split_equals_one_shot(name, seed, n, data):
    case = REGISTRY[name]
    rng = np.random.default_rng(seed)
    d = make_data(case.kind, rng, n)
    w = rng.random(len(d.y)) * 3 if "unit_weights" in case.laws else None
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    one = feed(case, case.make(), d, w)
    split = feed(case, case.make(), d, w, cuts)
    if case.compare_state:
        assert_same_state(one, split, exact=w is None and case.exact, rtol=case.rtol)
    if isinstance(one, sm.Window):  # the rows a window holds, whatever batches brought them
        assert one._state.equals(split._state)
    assert_same(value(case, one), value(case, split), exact=w is None and case.exact, rtol=case.rtol)


@pytest.mark.parametrize("name", names_with("merge"))
@common
@given(seed=seeds, n=sizes, parts=st.integers(1, 4), weighted=st.booleans())
@example(seed=261, n=2, parts=2, weighted=True)  # weights (1, 0): one worker holds only a zero
def test_any_partition_merged_equals_one_shot(name, seed, n, parts, weighted):
    case = REGISTRY[name]
    rng = np.random.default_rng(seed)
    d = make_data(case.kind, rng, n)
    w = rng.integers(0, 4, len(d.y)) * 0.5 if weighted and "unit_weights" in case.laws else None
    owner = rng.integers(0, parts, n)
    workers = [feed(case, case.make(), d, w, keep_groups=owner == i) for i in range(parts)]
    merged = workers[0].merge(*workers[1:])
    one = feed(case, case.make(), d, w)
    exact = case.exact and w is None  # unit weights: integer statistics
    if case.compare_state and not case.arrival_order:
        assert_same_state(one, merged, exact=exact, rtol=case.rtol)
    assert_same(value(case, one), value(case, merged), exact=exact and case.kind != "queries", rtol=case.rtol)
    if case.arrival_order:  # per-query values kept in arrival order
        assert_same(per_query_sorted(merged), per_query_sorted(one), rtol=case.rtol)
        in_order = [feed(case, case.make(), d, w, keep_groups=np.sort(owner) == i) for i in range(parts)]
        assert_same_state(one, in_order[0].merge(*in_order[1:]), exact=exact, rtol=case.rtol)


@pytest.mark.parametrize("name", names_with("save_load"))
@common
@given(seed=seeds, n=sizes, weighted=st.booleans())
def test_save_load_round_trip(name, seed, n, weighted, tmp_path_factory):
    case = REGISTRY[name]
    rng = np.random.default_rng(seed)
    d = make_data(case.kind, rng, n)
    w = rng.random(len(d.y)) if weighted and "unit_weights" in case.laws else None
    m = feed(case, case.make(), d, w, cuts=[n // 3])
    path = tmp_path_factory.mktemp("state") / "m.sm"
    sm.save(m, path)
    loaded = sm.load(path)
    assert type(loaded) is type(m)
    assert_same_state(m, loaded, exact=True)
    # A weighted window (or decayed stream) keeps its counts by adding arriving and subtracting
    # expiring rows, while loading rebuilds them from the stored rows in one sum (so that a file
    # cannot make the counts disagree with its rows): the two sums may differ in the last bit.
    # So may an unweighted one whose statistics are float sums (regression moments: not exact).
    # (Estimated(Window(...)): a window fed weighted rows, the probabilities, whatever w is)
    windowed = isinstance(m, (sm.Window, sm.Decayed)) or isinstance(getattr(m, "_metric", None),
                                                                     (sm.Window, sm.Decayed))
    rebuilt = (w is not None or not case.exact) and windowed
    assert_same(value(case, m), value(case, loaded), exact=not rebuilt, rtol=1e-12)
    assert_same_state(m, sm.loads(sm.dumps(m)), exact=True)
    if isinstance(m, sm.MetricSet):  # a member (of a shared state) saves and loads alone, its own values only
        for name in m:
            single = sm.loads(sm.dumps(m[name]))
            assert type(single) is type(m[name])
            assert_same_state(single, m[name], exact=True)
            assert_same(result(single), result(m[name]), exact=True)
            if case.kind == "queries":  # not the arrays of the other members of its query state
                assert set(single.state_dict()) == set(type(single)(**single.state_dict()["config"]).state_dict())
    # keeps working after loading: the same rows again, as new rows
    again = make_data(case.kind, np.random.default_rng(seed), n)
    shifted = type(again)(again.y, again.p, again.groups + n)
    assert_same(value(case, feed(case, loaded.copy(), shifted)), value(case, feed(case, m, shifted)),
                exact=not rebuilt, rtol=1e-12)


@pytest.mark.parametrize("name", names_with("unit_weights"))
@common
@given(seed=seeds, n=sizes)
def test_unit_weights_equal_no_weights(name, seed, n):
    case = REGISTRY[name]
    d = make_data(case.kind, np.random.default_rng(seed), n)
    # the dtype may differ: unweighted counts are integers, weighted ones floats
    assert_same(value(case, feed(case, case.make(), d, np.ones(n))), value(case, feed(case, case.make(), d)),
                exact=case.exact, rtol=case.rtol, dtype=False)


@pytest.mark.parametrize("name", names_with("integer_weights"))
@common
@given(seed=seeds, n=sizes)
def test_integer_weight_equals_repetition(name, seed, n):
    case = REGISTRY[name]
    rng = np.random.default_rng(seed)
    d = make_data(case.kind, rng, n)
    reps = rng.integers(0, 4, n)  # 0 = removal
    keep = rng.random(n) < 0.6
    reps[: case.min_rows] = np.maximum(reps[: case.min_rows], 1)  # rows of positive weight it needs
    keep[: case.min_rows] = True
    if n < case.min_rows:  # one row of weight k is not k rows
        return
    # not the case's readouts: an interval's variance counts a row of weight k as one draw, not k
    repeated = type(d)(np.repeat(d.y, reps, axis=0), np.repeat(d.p, reps, axis=0), np.arange(reps.sum()))
    assert_same(result(feed(case, case.make(), d, reps.astype(float))), result(feed(case, case.make(), repeated)),
                rtol=case.rtol, dtype=False)
    removed = type(d)(d.y[keep], d.p[keep], np.arange(keep.sum()))
    assert_same(result(feed(case, case.make(), d, keep.astype(float))), result(feed(case, case.make(), removed)),
                exact=case.exact, rtol=case.rtol, dtype=False)


@pytest.mark.parametrize("name", names_with("prefix"))
@common
@given(seed=seeds, n=sizes, data=st.data())
def test_prefix_equality(name, seed, n, data):
    case = REGISTRY[name]
    d = make_data(case.kind, np.random.default_rng(seed), n)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    streaming = case.make()
    bounds = [0, *cuts, n]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        batch = np.zeros(n, bool)
        batch[a:b] = True
        feed(case, streaming, d, keep_groups=batch)
        prefix = np.arange(n) < b
        assert_same(value(case, streaming), value(case, feed(case, case.make(), d, keep_groups=prefix)),
                    exact=case.exact, rtol=case.rtol)


@pytest.mark.parametrize("name", names_with("window_equals_plain"))
@common
@given(seed=seeds, n=sizes, data=st.data())
def test_window_larger_than_the_stream_equals_the_plain_metric(name, seed, n, data):
    case = REGISTRY[name]
    d = make_data(case.kind, np.random.default_rng(seed), n)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    window = feed(case, sm.Window(case.make(), size=max(len(d.y), 1)), d, cuts=cuts)
    assert_same(result(window, parts=False), result(feed(case, case.make(), d), parts=False), rtol=case.rtol)


@pytest.mark.parametrize("name", names_with("rejected"))
@common
@given(seed=seeds, n=st.integers(2, 30))
def test_rejected_input_leaves_the_state_unchanged(name, seed, n):
    case = REGISTRY[name]
    d = make_data(case.kind, np.random.default_rng(seed), n)
    m = feed(case, case.make(), d, cuts=[n // 2])
    before, then = m.state_dict(), value(case, m)
    for y, p in bad_batches(d):
        rows = np.arange(len(y)) + len(d.y)
        with pytest.raises(ValueError):
            case.feed(m, y, p, None, rows, rows)
        assert_state_unchanged(before, m.state_dict())
    assert_same(value(case, m), then, exact=True)


def test_registry_covers_every_public_metric_class():
    covered = {type(REGISTRY[name].make()) for name in NAMES}
    missing = sorted(c.__name__ for c in public_metric_classes() - covered)
    assert not missing, f"public metrics without an entry in tests/_support/laws.py REGISTRY: {missing}"


@pytest.mark.parametrize("name", names_with("copy"))
@common
@given(seed=seeds, n=sizes)
def test_copy_and_pickle_equal_the_original_and_a_copy_is_independent(name, seed, n):
    case = REGISTRY[name]
    d = make_data(case.kind, np.random.default_rng(seed), n)
    m = feed(case, case.make(), d, cuts=[n // 2])
    then = value(case, m)
    for twin in (m.copy(), pickle.loads(pickle.dumps(m))):
        assert type(twin) is type(m)
        assert_same(value(case, twin), then, exact=True)
        if n:
            feed(case, twin, d, keep_groups=np.arange(n) < 1)  # the twin moves on ...
        assert_same(value(case, m), then, exact=True)  # ... the original does not


@pytest.mark.parametrize("name", [n for n in names_with("per_sample") if REGISTRY[n].feed is plain_feed])
@common
@given(seed=seeds, n=st.integers(1, 12))
def test_per_sample_updates_equal_the_batch(name, seed, n):
    """Unweighted, then (where weights apply) every other sample weighted; values read now and
    then along the way change nothing."""
    case = REGISTRY[name]
    rng = np.random.default_rng(seed)
    d = make_data(case.kind, rng, n)
    weighted = np.arange(n) % 2 == 1
    w = np.where(weighted, rng.random(n), 1.0)
    for weights in (None, w) if "unit_weights" in case.laws else (None,):
        one = case.make()
        for i in range(len(d.y)):
            y = d.y[i].item() if d.y.ndim == 1 else d.y[i]
            p = d.p[i].item() if d.p.ndim == 1 else d.p[i]
            if weights is not None and weighted[i]:
                one.update(y, p, sample_weight=float(weights[i]))
            else:
                one.update(y, p)
            if i % 7 == 3:
                value(case, one)
        batch = feed(case, case.make(), d, weights)
        if case.compare_state:
            assert_same_state(one, batch, exact=case.exact and weights is None, rtol=case.rtol)
        assert_same(value(case, one), value(case, batch), exact=case.exact and weights is None, rtol=case.rtol)
