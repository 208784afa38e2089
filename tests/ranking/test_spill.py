"""The exact buffer's spilled queue (``_scores/exact/spill.py``): large queued batches of one
group go to memory-mapped chunks instead of staying as the batches' own arrays, and nothing
the state computes, saves, copies or removes changes because of it."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._scores.exact import buffer as buffer_mod
from streammetrics._scores.exact import spill as spill_mod
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.exact.spill import Spill, can_spill

CONFIGS = [
    ("binary", None, False),
    ("multiclass", 3, False),
    ("multiclass", 3, True),
    ("multilabel", 2, False),
]


@pytest.fixture
def tiny_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spill from 64 bytes per group, in chunks of one page (many chunk boundaries)."""
    monkeypatch.setattr(buffer_mod, "SPILL_MIN", 64)
    monkeypatch.setattr(spill_mod, "CHUNK", 4096)


def _batches(cfg: tuple, seed: int, sizes: list[int], weighted: list[bool], f32: list[bool]) -> list:
    task, c, _ = cfg
    rng = np.random.default_rng(seed)
    out = []
    for n, wt, half in zip(sizes, weighted, f32, strict=False):
        if task == "binary":
            y, s = rng.integers(0, 2, n), rng.random(n)
        elif task == "multiclass":
            y, s = rng.integers(0, c, n), rng.random((n, c))
        else:
            y, s = rng.integers(0, 2, (n, c)), rng.random((n, c))
        s = np.round(s, 2).astype(np.float32 if half else np.float64)  # ties
        w = rng.integers(1, 4, n).astype(np.float64) if wt else None
        out.append((y, s, w))
    return out


def _fed(cfg: tuple, batches: list, read_every: int = 0) -> SortedScores:
    state = SortedScores(cfg[0], cfg[1], None, cfg[2])
    for i, (y, s, w) in enumerate(batches):
        state.apply(state.prepare(y, s, w))
        if read_every and i % read_every == 0:
            state.u2()
    return state


def _same(a: SortedScores, b: SortedScores) -> None:
    assert a.u2().tolist() == b.u2().tolist()
    assert a.totals().tolist() == b.totals().tolist()
    for col in range(a.n_columns):
        for x, y in zip(a.column(col), b.column(col), strict=True):
            assert (x is None) == (y is None)
            if x is not None:
                assert x.dtype == y.dtype and np.array_equal(x, y)
        if not a.is_weighted and not a.by_class:
            ap_a, ap_b = a.step_average_precision(col), b.step_average_precision(col)
            assert ap_a == ap_b or (np.isnan(ap_a) and np.isnan(ap_b))
    a.check_invariants()


@settings(max_examples=40, deadline=None)
@given(cfg=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32 - 1),
       sizes=st.lists(st.integers(0, 300), min_size=1, max_size=8),
       weighted=st.lists(st.booleans(), min_size=8, max_size=8),
       f32=st.lists(st.booleans(), min_size=8, max_size=8), read_every=st.integers(0, 3))
def test_spilled_queue_changes_nothing(cfg: tuple, seed: int, sizes: list[int], weighted: list[bool],
                                       f32: list[bool], read_every: int) -> None:
    batches = _batches(cfg, seed, sizes, weighted, f32)
    plain = _fed(cfg, batches, read_every)  # SPILL_MIN as shipped: these queues never spill
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(buffer_mod, "SPILL_MIN", 64)
        mp.setattr(spill_mod, "CHUNK", 4096)
        spilled = _fed(cfg, batches, read_every)
        assert plain._spills == {}
        _same(spilled, plain)


def test_large_queue_is_spilled_and_released(tiny_spill: None) -> None:
    rng = np.random.default_rng(3)
    state = SortedScores("binary")
    for _ in range(20):
        y = rng.integers(0, 2, 500)
        state.apply(state.prepare(y, rng.random(500)))
    assert state._spills, "the queue should have spilled"
    assert all(sp.n > 0 and sp.chunks for sp in state._spills.values())
    held = sum(v.shape[0] for parts in state._pending for _, _, v, _ in parts)
    assert held + sum(sp.n for sp in state._spills.values()) == 10_000
    assert state.nbytes >= sum(sp.nbytes for sp in state._spills.values())
    state.u2()
    assert state._spills == {} and state._pending == []
    assert state.totals().sum() == 10_000


def test_spilled_state_copies_pickles_saves_and_loads(tiny_spill: None, tmp_path) -> None:
    rng = np.random.default_rng(4)
    y, s = rng.integers(0, 2, 5000), np.round(rng.random(5000), 3)
    m = sm.AUROC()
    for i in range(0, 5000, 250):
        m.update(y[i : i + 250], s[i : i + 250])
    ref = sm.AUROC().update(y, s).compute()
    state = m._state
    assert state._spills
    copied = copy.deepcopy(state)
    assert copied._spills and copied._spills.keys() == state._spills.keys()
    raw = pickle.loads(pickle.dumps(state))  # the state object itself, not the metric
    assert raw.u2().tolist() == state.copy().u2().tolist()
    assert pickle.loads(pickle.dumps(m)).compute() == ref
    assert m.copy().compute() == ref
    path = tmp_path / "auroc.sm"
    sm.save(m, path)
    assert sm.load(path).compute() == ref
    assert m.compute() == ref


def test_window_slides_over_a_spilled_queue(tiny_spill: None) -> None:
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 6000), np.round(rng.random(6000), 2)
    win = sm.Window(sm.AUROC(), size=2000)
    for i in range(0, 6000, 300):
        win.update(y[i : i + 300], s[i : i + 300])
        if i % 1200 == 0:
            win.compute()
    assert win.compute() == sm.AUROC().update(y[-2000:], s[-2000:]).compute()


def test_subtract_reads_the_other_states_spill(tiny_spill: None) -> None:
    rng = np.random.default_rng(6)
    y, s = rng.integers(0, 2, 4000), np.round(rng.random(4000), 2)
    whole, part = SortedScores("binary"), SortedScores("binary")
    for i in range(0, 4000, 200):
        whole.apply(whole.prepare(y[i : i + 200], s[i : i + 200]))
        if i < 2000:
            part.apply(part.prepare(y[i : i + 200], s[i : i + 200]))
    assert whole._spills and part._spills
    whole.subtract(part)
    assert part._spills  # read, not changed
    rest = SortedScores("binary")
    rest.apply(rest.prepare(y[2000:], s[2000:]))
    _same(whole, rest)


def test_spill_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill_mod, "CHUNK", 4096)
    sp = Spill(np.dtype(np.float64))
    parts = [np.arange(k, dtype=np.float64) + 1000 * k for k in (0, 3, 511, 512, 1, 1500)]
    for p in parts:
        sp.append(p)
    want = np.concatenate(parts)
    assert sp.n == want.shape[0] and np.array_equal(sp.values(), want)
    assert np.array_equal(copy.deepcopy(sp).values(), want)
    assert np.array_equal(pickle.loads(pickle.dumps(sp)).values(), want)
    extra = [np.array([7.0, 8.0])]
    out = sp.take(extra)
    assert np.array_equal(out, np.concatenate([want, [7.0, 8.0]])) and out.flags.owndata
    assert extra == [] and sp.n == 0 and sp.chunks == [] and sp.values().shape == (0,)
    assert can_spill(np.zeros(3, dtype=np.float32)) and not can_spill(np.zeros(3, dtype=np.int64))


@pytest.mark.parametrize("numba_path", [False, True])
def test_mapped_runs_grow_in_place_and_keep_values(monkeypatch: pytest.MonkeyPatch, numba_path: bool) -> None:
    """Runs from MAP_MIN bytes move to maps of their own and grow there; a run another state
    (or a caller) still holds is never remapped under it."""
    from streammetrics._scores.exact import runs as runs_mod
    from streammetrics._scores.exact.merge_count import compiled_kernels, kernels

    if numba_path and kernels() is None:
        pytest.skip("numba not installed")
    monkeypatch.setattr(runs_mod, "MAP_MIN", 4096)
    rng = np.random.default_rng(7)
    y, s = rng.integers(0, 2, 20_000), np.round(rng.random(20_000), 3)
    with compiled_kernels(numba_path, min_size=0):
        state, ref = SortedScores("binary"), SortedScores("binary")
        ref.apply(ref.prepare(y, s))
        held = []
        for i in range(0, 20_000, 500):
            state.apply(state.prepare(y[i : i + 500], s[i : i + 500]))
            state.u2()
            if i == 10_000:
                held = [r for g in state._groups[0] for r in g.runs]  # a caller keeps views
                snapshot = [r.copy() for r in held]
                twin = state.copy()
        assert any(spill_mod.map_of(r) is not None for g in state._groups[0] for r in g.runs)
        assert all(np.array_equal(r, c) for r, c in zip(held, snapshot, strict=True))
        _same(state, ref)
        twin.apply(twin.prepare(y[10_500:], s[10_500:]))
        _same(twin, ref)


def test_no_map_left_falls_back_to_the_heap(monkeypatch: pytest.MonkeyPatch, tiny_spill: None) -> None:
    """Where no memory map can be made (Linux's ``vm.max_map_count`` maps already in use, many
    slices holding large exact states: mmap fails with ENOMEM), the spilled queue and the large
    runs live on the heap instead: the update is not refused and the values are the same."""
    import errno

    from streammetrics._scores.exact import runs as runs_mod

    class NoMap:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(spill_mod, "_Map", NoMap)
    monkeypatch.setattr(spill_mod.mmap, "mmap", NoMap)
    monkeypatch.setattr(runs_mod, "MAP_MIN", 4096)
    assert spill_mod.mapped_empty(10, np.dtype(np.float64)) is None
    sp = Spill(np.dtype(np.float64))
    sp.append(np.arange(1500.0))
    assert np.array_equal(sp.values(), np.arange(1500.0)) and len(sp.chunks) == 3
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 20_000), np.round(rng.random(20_000), 3)
    m = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    for i in range(0, 20_000, 1000):
        m.update(y[i : i + 1000], s[i : i + 1000])
        m.compute()
    from sklearn.metrics import average_precision_score, roc_auc_score

    got = m.compute()
    assert abs(got["auroc"] - roc_auc_score(y, s)) < 1e-12
    assert abs(got["ap"] - average_precision_score(y, s)) < 1e-12
    assert sm.loads(sm.dumps(m)).compute() == got


def test_grown_keeps_values_in_place_or_copies_what_is_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """``grown`` (the compiled AP cache's kept arrays): a small heap array grows by realloc, one
    reaching MAP_MIN bytes moves to a map of its own, a map grows by remapping (the same map),
    and an array still held elsewhere (a view) is copied, the view left as it was."""
    monkeypatch.setattr(spill_mod, "MAP_MIN", 4096)
    rng = np.random.default_rng(2)
    for dtype in (np.float64, np.int32):
        want = (rng.normal(size=100) * 1000).astype(dtype)
        box = [want.copy()]
        small = spill_mod.grown(box, 300)
        assert box == [] and small.dtype == dtype and small.shape == (300,)
        assert np.array_equal(small[:100], want) and spill_mod.map_of(small) is None
        small[100:] = 7
        box = [small]
        del small
        big = spill_mod.grown(box, 2000)  # >= 4096 bytes: into a map
        mm = spill_mod.map_of(big)
        assert mm is not None and np.array_equal(big[:100], want) and np.all(big[100:300] == 7)
        big[300:] = 9
        box = [big]
        del big
        again = spill_mod.grown(box, 3000)  # the same map, grown
        assert spill_mod.map_of(again) is mm
        assert np.array_equal(again[:100], want) and np.all(again[100:300] == 7) and np.all(again[300:2000] == 9)
        view = again[:2000]
        before = view.copy()
        box = [again]
        del again
        moved = spill_mod.grown(box, 4000)  # a view remains: copied into a new map
        assert spill_mod.map_of(moved) is not mm and np.array_equal(moved[:2000], before)
        moved[:2000] = 0
        assert np.array_equal(view, before)
        held = want.copy()
        out = spill_mod.grown([held], 200)  # ``held`` still named here: copied, not resized
        assert out is not held and np.array_equal(out[:100], want) and np.array_equal(held, want)
