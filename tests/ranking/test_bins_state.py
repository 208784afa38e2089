"""State operations of the bounded ranking state (``BinnedScores.subtract`` / ``.scale``) used by
sliding windows and exponential decay: the certificates hold on the remaining / decayed samples
(scikit-learn's exact value with the decay weights lies inside), containment is checked, the
state stays loadable and under budget; plus the ``scores="probability"`` range check, which skips
rows whose label is ``ignore_index``.
"""

from __future__ import annotations

import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

import streammetrics as sm
from streammetrics._scores.binned import bins as _bins
from streammetrics._scores.binned.bins import BinnedScores


def _inside(lo: float, v: float, hi: float, tol: float = 1e-12) -> bool:
    return lo - tol <= v <= hi + tol


def _data(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < 0.3).astype(int)
    z = rng.normal(size=n) + 1.5 * y
    if kind == "ties":
        return y, np.round(1.0 / (1.0 + np.exp(-z)), 2)
    if kind == "crowded":
        return y, 1.0 - 10.0 ** (-3.0 - rng.random(n) - 0.5 * y)
    return y, 1.0 / (1.0 + np.exp(-z))


def _pair(max_bytes: int) -> tuple[sm.AUROC, sm.AveragePrecision]:
    return (
        sm.AUROC(max_bytes=max_bytes, scores="probability"),
        sm.AveragePrecision(max_bytes=max_bytes, scores="probability"),
    )


def _fold(metric: sm.AUROC | sm.AveragePrecision, y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None,
          step: int = 3000) -> None:
    for i in range(0, y.shape[0], step):
        metric.update(y[i : i + step], s[i : i + step], sample_weight=None if w is None else w[i : i + step])


@pytest.mark.parametrize("kind", ["calibrated", "ties", "crowded"])
@pytest.mark.parametrize("max_bytes", [2048, 1 << 20])
def test_subtract_certificate_on_remaining_samples(kind: str, max_bytes: int) -> None:
    rng = np.random.default_rng(7)
    y, s = _data(rng, 12000, kind)
    w = rng.integers(1, 4, y.shape[0]).astype(float) if kind == "ties" else None
    keep = np.arange(y.shape[0]) >= 5000  # a window: the first 5000 expire
    for metric, oracle in zip(_pair(max_bytes), (roc_auc_score, average_precision_score), strict=True):
        _fold(metric, y, s, w)
        gone = metric.copy()
        gone.reset()
        _fold(gone, y[:5000], s[:5000], None if w is None else w[:5000], step=1700)
        shift_before = metric._state._shift.copy()
        metric._state.subtract(gone._state)
        assert (metric._state._shift == shift_before).all()  # the resolution is kept
        ex = oracle(y[keep], s[keep], sample_weight=None if w is None else w[keep])
        lo, hi = metric.bounds()
        assert _inside(lo, ex, hi), (kind, max_bytes, lo, ex, hi)
        assert _inside(lo, metric.compute(), hi)
        assert metric.nbytes <= max_bytes
        # integer weights subtract exactly: total weight equals the remaining samples' weight
        p, n = metric._state.bins(0)
        ww = np.ones(y.shape[0]) if w is None else w
        assert p.sum() == ww[keep][y[keep] == 1].sum() and n.sum() == ww[keep][y[keep] == 0].sum()
        if max_bytes == 1 << 20:  # nothing coarsened: bit-for-bit the state of the remaining rows
            fresh = metric.copy()
            fresh.reset()
            _fold(fresh, y[keep], s[keep], None if w is None else w[keep])
            assert metric.is_exact and fresh._state.equals(metric._state)
        # still a valid state: a save/load round trip and further updates work
        twin = type(metric).from_state_dict(metric.state_dict())
        assert twin._state.equals(metric._state)
        metric.update(y[:5000], s[:5000], sample_weight=None if w is None else w[:5000])
        ex = oracle(y, s, sample_weight=w)
        lo, hi = metric.bounds()
        assert _inside(lo, ex, hi)


def test_subtract_multiclass_and_coarse_self() -> None:
    rng = np.random.default_rng(3)
    n, c = 6000, 5
    y = rng.integers(0, c, n)
    z = rng.normal(size=(n, c))
    z[np.arange(n), y] += 1.0
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    m = sm.AUROC(c, max_bytes=c * 24 * 40 + 200, scores="probability", average=None)
    m.update(y, p)
    gone = m.copy()
    gone.reset()
    gone.update(y[:1000], p[:1000])
    assert (gone._state._shift < m._state._shift).any()  # other is finer: coarsened on the fly
    m._state.subtract(gone._state)
    lo, hi = m.bounds()
    ex = roc_auc_score(y[1000:], p[1000:], multi_class="ovr", average=None)
    assert all(_inside(a, b, c_) for a, b, c_ in zip(lo, ex, hi, strict=True))


def test_subtract_rejects_what_is_not_contained() -> None:
    rng = np.random.default_rng(5)
    y, s = _data(rng, 4000, "calibrated")
    m = sm.AUROC(max_bytes=1 << 16, scores="probability").update(y[:2000], s[:2000])
    before = m.state_dict()

    def same(a: dict, b: dict) -> bool:
        return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a if k != "config")

    other = m.copy()
    other.reset()
    other.update(y[2000:2100], s[2000:2100])  # scores this state never saw
    with pytest.raises(ValueError, match="bin this state does not have"):
        m._state.subtract(other._state)
    assert same(m.state_dict(), before)
    twice = m.copy()
    twice.merge(m)
    with pytest.raises(ValueError, match="more positive weight|more negative weight"):
        m._state.subtract(twice._state)
    assert same(m.state_dict(), before)
    with pytest.raises(ValueError, match="same configuration"):
        m._state.subtract(sm.AUROC(max_bytes=1 << 15, scores="probability")._state)
    small = sm.AUROC(max_bytes=2048, scores="probability").update(y, s)
    coarse = sm.AUROC(max_bytes=2048, scores="probability").update(y[:3000], s[:3000])
    fine = sm.AUROC(max_bytes=2048, scores="probability").update(y[:10], s[:10])
    fine._state.subtract(fine._state.copy())  # everything removed: an empty (valid) state
    assert fine._state.nbytes <= 2048 and all(k.shape[0] == 0 for k in fine._state._keys)
    coarse._state._settle()
    coarse._state._shift[0] += 5  # fake a coarser other
    coarse._state._keys[0] = np.unique(coarse._state._keys[0] >> 5)
    coarse._state._pos[0] = np.ones(coarse._state._keys[0].shape[0])
    coarse._state._neg[0] = np.ones(coarse._state._keys[0].shape[0])
    assert coarse._state._shift[0] > small._state._shift[0]
    with pytest.raises(ValueError, match="coarser"):
        small._state.subtract(coarse._state)
    # an empty other is a no-op
    st = m._state.copy()
    empty = m.copy()
    empty.reset()
    st.subtract(empty._state)
    assert st.equals(m._state)


@pytest.mark.parametrize("max_bytes", [1536, 1 << 20])
def test_scale_is_exponential_decay(max_bytes: int) -> None:
    rng = np.random.default_rng(11)
    y, s = _data(rng, 9000, "calibrated")
    w0 = rng.random(y.shape[0]) + 0.5
    f = 0.8
    au, ap = _pair(max_bytes)
    decay = np.zeros(y.shape[0])
    step = 500
    for i in range(0, y.shape[0], step):
        for m in (au, ap):
            m._state.scale(f)
            m.update(y[i : i + step], s[i : i + step], sample_weight=w0[i : i + step])
        decay[:i] *= f
        decay[i : i + step] = 1.0
        assert au.nbytes <= max_bytes
    wt = decay * w0
    lo, hi = au.bounds()
    assert _inside(lo, roc_auc_score(y, s, sample_weight=wt), hi)
    lo, hi = ap.bounds()
    assert _inside(lo, average_precision_score(y, s, sample_weight=wt), hi)
    if max_bytes == 1 << 20:
        assert au.is_exact
        assert abs(au.compute() - roc_auc_score(y, s, sample_weight=wt)) < 1e-12
    # the decayed state saves and loads
    twin = sm.AUROC.from_state_dict(au.state_dict())
    assert twin._state.equals(au._state)


def test_scale_edge_cases() -> None:
    rng = np.random.default_rng(2)
    y, s = _data(rng, 500, "calibrated")
    m = sm.AUROC(max_bytes=4096, scores="probability").update(y, s)
    ref = m._state.copy()
    m._state.scale(1.0)
    assert m._state.equals(ref)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="factor"):
            m._state.scale(bad)
    assert m._state.equals(ref)
    m._state.scale(1e-300)
    m._state.scale(1e-300)  # every weight underflows to 0: the bins are dropped
    assert all(k.shape[0] == 0 for k in m._state._keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(m.compute())
    m2 = sm.AUROC(max_bytes=4096, scores="probability").update(y, s)
    shifts = m2._state._shift.copy()
    m2._state.scale(0.0)
    assert all(k.shape[0] == 0 for k in m2._state._keys) and (m2._state._shift == shifts).all()
    sm.AUROC.from_state_dict(m2.state_dict())  # still loadable


def test_window_and_decayed_over_bounded_auroc() -> None:
    rng = np.random.default_rng(4)
    y, s = _data(rng, 8000, "ties")
    win = sm.Window(sm.AUROC(max_bytes=2048, scores="probability"), size=3000)
    for i in range(0, y.shape[0], 700):
        win.update(y[i : i + 700], s[i : i + 700])
        lo, hi = win.bounds()
        j = min(i + 700, y.shape[0])
        ex = roc_auc_score(y[max(0, j - 3000) : j], s[max(0, j - 3000) : j])
        assert _inside(lo, ex, hi), (i, lo, ex, hi)
    dec = sm.Decayed(sm.AUROC(max_bytes=2048, scores="probability"), half_life=1500)
    for i in range(0, y.shape[0], 700):
        dec.update(y[i : i + 700], s[i : i + 700])
    wt = 0.5 ** ((y.shape[0] - 1 - np.arange(y.shape[0])) / 1500)
    v = dec.compute()
    ex = roc_auc_score(y, s, sample_weight=wt)
    assert abs(v - ex) < 0.01  # an estimate from the decayed bins (certified in the tests above)


def test_probability_check_skips_ignored_rows() -> None:
    # binary: the ignored row's score is out of range and does not count
    m = sm.AUROC(max_bytes=4096, scores="probability", ignore_index=-1)
    m.update(np.array([0, 1, -1, 1]), np.array([0.2, 0.9, 7.0, 0.6]))
    assert m.compute() == 1.0
    with pytest.raises(ValueError, match=r"y_score: scores='probability' needs scores in \[0, 1\]; got 7.0 at index 3"):
        m.update(np.array([0, 1, -1, 1]), np.array([0.2, 0.9, 7.0, 7.0]))
    assert m.compute() == 1.0  # unchanged
    # multiclass: whole rows are ignored
    mc = sm.AUROC(3, max_bytes=8192, scores="probability", ignore_index=-100)
    p = np.array([[0.7, 0.2, 0.1], [-5.0, 9.0, 0.0], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    mc.update(np.array([0, -100, 1, 2]), p)
    with pytest.raises(ValueError, match=r"got -5.0 at index \(1, 0\)"):
        mc.update(np.array([0, 1, 1, 2]), p)
    # multilabel: element-wise
    ml = sm.AUROC(2, multilabel=True, max_bytes=8192, scores="probability", ignore_index=-1)
    ml.update(np.array([[1, -1], [0, 1], [1, 0]]), np.array([[0.9, 3.0], [0.1, 0.8], [0.7, 0.4]]))
    with pytest.raises(ValueError, match=r"got 3.0 at index \(0, 1\)"):
        ml.update(np.array([[1, 0], [0, 1], [1, 0]]), np.array([[0.9, 3.0], [0.1, 0.8], [0.7, 0.4]]))
    # without ignore_index nothing is skipped
    with pytest.raises(ValueError, match="got 7.0 at index 2"):
        sm.AUROC(max_bytes=4096, scores="probability").update(np.array([0, 1, 1]), np.array([0.2, 0.9, 7.0]))
    # a scalar sample
    with pytest.raises(ValueError, match="needs scores in"):
        sm.AUROC(max_bytes=4096, scores="probability").update(1, 1.5)
    s1 = sm.AUROC(max_bytes=4096, scores="probability", ignore_index=-1)
    s1.update(-1, 1.5)


def test_binned_state_type() -> None:
    assert isinstance(sm.AUROC(max_bytes=4096)._state, BinnedScores)


def _oracle_bins(keys: np.ndarray, y: np.ndarray, w: np.ndarray, capacity: int) -> tuple[np.ndarray, ...]:
    """The documented state of a column: the smallest shift L with at most ``capacity`` distinct
    ``key >> L`` over everything seen, and per such bin the positive / negative weight."""
    lo, hi = 0, 63  # the distinct count is non-increasing in the shift: bisect
    while lo < hi:
        mid = (lo + hi) // 2
        if np.unique(keys >> mid).shape[0] <= capacity:
            hi = mid
        else:
            lo = mid + 1
    shift = lo
    uniq, inv = np.unique(keys >> shift, return_inverse=True)
    p = np.bincount(inv, weights=w * (y == 1), minlength=uniq.shape[0])
    n = np.bincount(inv, weights=w * (y == 0), minlength=uniq.shape[0])
    return uniq, p, n, np.int64(shift)


@pytest.mark.parametrize("kind", ["probability", "logits", "ties", "two_clusters"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("budget", [4096, 1 << 16])
def test_streamed_state_is_the_documented_function_of_the_data(kind: str, weighted: bool, budget: int) -> None:
    """Every fold path (sorted while exact, dense bincount, dense with a gap, generic columns)
    gives bit for bit the state defined by the multiset of inputs (integer weights)."""
    rng = np.random.default_rng(len(kind) + weighted)
    n = 40000
    y = (rng.random(n) < 0.4).astype(np.int8)
    z = rng.normal(size=n) * 3 + y
    scores = "raw"
    if kind == "probability":
        s, scores = 1.0 / (1.0 + np.exp(-z)), "probability"
    elif kind == "logits":
        s = z
    elif kind == "ties":
        s = np.round(z, 1)
    else:  # two far-apart clusters: the dense fold needs its gap
        s = np.where(rng.random(n) < 0.5, 1e-12 * (1 + rng.random(n)), 1e6 * (1 + rng.random(n)))
    w = rng.integers(0, 4, n).astype(float) if weighted else np.ones(n)
    st = BinnedScores("binary", max_bytes=budget, scores=scores)
    mc = BinnedScores("multiclass", 2, max_bytes=2 * budget, scores=scores)  # generic column path
    sizes = [1, 7, 300, 5000, 20000]
    i = 0
    while i < n:
        j = min(n, i + sizes[i % len(sizes)])
        st.apply(st.prepare(y[i:j], s[i:j], w[i:j] if weighted else None))
        two = np.stack([1.0 - s[i:j], s[i:j]], 1) if kind == "probability" else np.stack([-s[i:j], s[i:j]], 1)
        mc.apply(mc.prepare(y[i:j].astype(int), two, w[i:j] if weighted else None))
        assert st.nbytes <= budget and mc.nbytes <= 2 * budget
        i = j
    keep = w > 0
    st._settle()  # pending bins (lazy sorted fold) into the stored arrays read below
    mc._settle()
    keys = st.to_keys(s[keep])
    uniq, p, n_, sh = _oracle_bins(keys, y[keep], w[keep], st.capacity)
    assert st._shift[0] == sh
    assert np.array_equal(st._keys[0], uniq) and np.array_equal(st._pos[0], p) and np.array_equal(st._neg[0], n_)
    # column 1 of the 2-class state scores the positive class with the same scores
    ukeys = mc.to_keys(s[keep])
    uniq, p, n_, sh = _oracle_bins(ukeys, y[keep], w[keep], mc.capacity)
    assert mc._shift[1] == sh and np.array_equal(mc._keys[1], uniq)
    assert np.array_equal(mc._pos[1], p) and np.array_equal(mc._neg[1], n_)


def test_binary_fast_path_validation() -> None:
    m = sm.AUROC(max_bytes=4096, scores="probability", ignore_index=-1)
    y = np.array([0, 1, -1, 1, 0])
    s = np.array([0.2, 0.9, 3.0, 0.6, 0.1], dtype=np.float32)
    m.update(y, s, sample_weight=np.array([1.0, 2.0, 5.0, 0.0, 1.0]))
    assert m.compute() == 1.0
    before = m.state_dict()
    with pytest.raises(ValueError, match=r"got 1.5 at index 3"):  # a weight-0 row is still checked
        m.update(y, np.array([0.2, 0.9, 3.0, 1.5, 0.1]), sample_weight=np.array([1.0, 2.0, 5.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match=r"y_score: expected shape \(5,\)"):
        m.update(y, s[:4])
    with pytest.raises(ValueError, match="sample_weight"):
        m.update(y, s, sample_weight=np.array([1.0, -2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="y_true"):
        m.update(np.array([0, 2, 1, 1, 0]), s)
    with pytest.raises(ValueError, match="NaN"):
        m.update(y, np.array([0.2, np.nan, 0.3, 0.6, 0.1]))
    after = m.state_dict()
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before if k != "config")
    m.update(np.array([-1, -1]), np.array([9.0, 9.0]))  # only ignored rows: nothing happens
    m.update(np.zeros(0, dtype=int), np.zeros(0))
    after = m.state_dict()
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before if k != "config")


@pytest.mark.parametrize("scores", ["probability", "raw"])
def test_multiclass_fast_path_equals_generic_path(scores: str) -> None:
    """The vectorised multiclass path (arrays, lists) and the generic split: the same state."""
    rng = np.random.default_rng(9)
    n, c = 3000, 4
    y = rng.integers(0, c, n)
    y[::17] = -1  # ignored rows
    z = rng.normal(size=(n, c)).astype(np.float32)
    p = 1.0 / (1.0 + np.exp(-z)) if scores == "probability" else z
    p = np.asfortranarray(p)  # non-contiguous rows
    w = rng.integers(0, 3, n).astype(float)
    fast = sm.AUROC(c, max_bytes=c * 24 * 64 + 200, scores=scores, ignore_index=-1, average=None)
    slow = sm.AUROC(c, max_bytes=c * 24 * 64 + 200, scores=scores, ignore_index=-1, average=None)
    lists = sm.AUROC(c, max_bytes=c * 24 * 64 + 200, scores=scores, ignore_index=-1, average=None)
    for i in range(0, n, 700):
        fast.update(y[i : i + 700], p[i : i + 700], sample_weight=w[i : i + 700])
        lists.update(y[i : i + 700].tolist(), p[i : i + 700].tolist(), sample_weight=w[i : i + 700].tolist())
        slow._state.apply(slow._state._prepare_generic(y[i : i + 700], p[i : i + 700], w[i : i + 700]))
    assert fast._state.equals(slow._state) and lists._state.equals(slow._state)
    keep = (y >= 0) & (w > 0)
    lo, hi = fast.bounds()
    ex = [roc_auc_score(y[keep] == k, p[keep, k], sample_weight=w[keep]) for k in range(c)]
    assert all(_inside(a, b, c_) for a, b, c_ in zip(lo, ex, hi, strict=True))


def test_multiclass_fast_path_validation() -> None:
    m = sm.AUROC(3, max_bytes=8192, scores="probability", ignore_index=-1)
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]])
    m.update(np.array([0, 1, 2, 2]), p)
    before = m.state_dict()
    bad = p.copy()
    bad[3, 1] = 1.5
    with pytest.raises(ValueError, match=r"got 1.5 at index \(3, 1\)"):  # weight 0 is still checked
        m.update(np.array([0, 1, 2, 2]), bad, sample_weight=np.array([1.0, 1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match=r"y_score: expected scores of shape \(4, 3\)"):
        m.update(np.array([0, 1, 2, 2]), p[:, :2])
    with pytest.raises(ValueError, match="y_true"):
        m.update(np.array([0, 1, 3, 2]), p)
    with pytest.raises(ValueError, match="NaN"):
        m.update(np.array([0, 1, 2, 2]), np.where(p > 0.65, np.nan, p))
    after = m.state_dict()
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before if k != "config")
    m.update(np.array([-1, 0]), np.array([[5.0, 0.0, 0.0], [0.5, 0.3, 0.2]]))  # ignored row skipped
    m.update(np.array([0, 1]), p[:2], sample_weight=np.zeros(2))  # all weight 0: nothing
    m.update(np.zeros(0, dtype=int), np.zeros((0, 3)))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 400),
    budget=st.sampled_from([1024, 4096, 1 << 16]),
    cut=st.floats(0.0, 1.0),
    factor=st.sampled_from([1.0, 0.5, 0.01]),
)
def test_property_window_then_decay_certified(seed: int, n: int, budget: int, cut: float, factor: float) -> None:
    """Remove a prefix (subtract), rescale (scale), add a suffix: the bounds hold the exact
    AUROC of what remains with the matching weights; arrays round-trip through load."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    s = np.round(rng.random(n), int(rng.integers(1, 6)))  # ties at random resolutions
    k = int(cut * n)
    m = sm.AUROC(max_bytes=budget, scores="probability")
    m.update(y, s)
    gone = sm.AUROC(max_bytes=budget, scores="probability")
    if k:
        gone.update(y[:k], s[:k])
    m._state.subtract(gone._state)
    m._state.scale(factor)
    m.update(y[:k], s[:k])  # the removed rows come back with weight 1
    w = np.concatenate([np.ones(k), np.full(n - k, factor)])
    assert m.nbytes <= budget
    twin = sm.AUROC.from_state_dict(m.state_dict())
    assert twin._state.equals(m._state)
    if 0 < y.sum() < n:
        ex = roc_auc_score(y, s, sample_weight=w)
        lo, hi = m.bounds()
        assert _inside(lo, ex, hi), (lo, ex, hi)


def test_lists_and_tensors_take_the_same_binary_path() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    y = (rng.random(5000) < 0.3).astype(np.int64)
    s = rng.random(5000).astype(np.float32)
    ref = BinnedScores("binary", max_bytes=2048, scores="probability")
    ref.apply(ref._prepare_generic(y, s))
    for yy, ss in ((y.tolist(), s.tolist()), (torch.from_numpy(y), torch.from_numpy(s)), (y, s)):
        st_ = BinnedScores("binary", max_bytes=2048, scores="probability")
        d = st_.prepare(yy, ss)
        assert d[0] == "binary"
        st_.apply(d)
        assert st_.equals(ref)


@pytest.mark.parametrize("ignore", [None, -1])
def test_multilabel_fast_path_equals_generic_path(ignore: int | None) -> None:
    rng = np.random.default_rng(21)
    n, L = 2000, 3
    y = (rng.random((n, L)) < 0.4).astype(int)
    if ignore is not None:
        y[1500:1600, 1] = ignore  # only some batches hold ignored entries
    p = rng.random((n, L))
    w = rng.integers(0, 3, n).astype(float)
    kw = {"max_bytes": L * 24 * 48 + 100, "scores": "probability", "ignore_index": ignore}
    fast = BinnedScores("multilabel", L, **kw)
    slow = BinnedScores("multilabel", L, **kw)
    for i in range(0, n, 300):
        d = fast.prepare(y[i : i + 300], p[i : i + 300], w[i : i + 300])
        assert (d[0] == "scores") == (ignore is None or not (y[i : i + 300] == ignore).any())
        fast.apply(d)
        slow.apply(slow._prepare_generic(y[i : i + 300], p[i : i + 300], w[i : i + 300]))
    fast.apply(fast.prepare(y[0], p[0]))  # one sample as two 1-D rows
    slow.apply(slow._prepare_generic(y[0], p[0]))
    assert fast.equals(slow)
    m = sm.AUROC(L, multilabel=True, max_bytes=4096, scores="probability", ignore_index=ignore)
    bad = p[:4].copy()
    bad[2, 1] = -0.5
    with pytest.raises(ValueError, match=r"got -0.5 at index \(2, 1\)"):
        m.update(y[:4], bad)
    with pytest.raises(ValueError, match="y_score"):
        m.update(y[:4], p[:4, :2])


def _bins_of(st_: BinnedScores) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    return [(st_._keys[c], st_._pos[c], st_._neg[c], int(st_._shift[c])) for c in range(st_.n_columns)]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 3000),
    digits=st.integers(0, 6),
    spread=st.sampled_from([1.0, 30.0, 1000.0]),
    budget=st.sampled_from([1024, 4096, 1 << 14, 1 << 16]),
    weighted=st.booleans(),
    cuts=st.lists(st.floats(0.0, 1.0), max_size=12),
    parts=st.integers(1, 4),
    sorted_only=st.booleans(),
)
def test_property_sorted_fold_splits_and_merges_are_the_single_stream_state(
    seed: int, n: int, digits: int, spread: float, budget: int, weighted: bool, cuts: list[float],
    parts: int, sorted_only: bool,
) -> None:
    """Scores on a decimal grid (raw keys stay sparse after coarsening, so batches take the
    sorted fold: run-length pairs, a linear merge with few or many insertions, coarsening on
    overflow): any batch split, and a merge of partitions, give bit for bit the state the
    multiset defines (integer weights), never over budget at any step. ``sorted_only`` turns
    the dense fold off, so every batch, binned or not, takes the sorted fold."""
    if sorted_only:
        with mock.patch.object(_bins, "_DENSE_FACTOR", 0), mock.patch.object(_bins, "_DENSE_MIN", 0):
            _check_sorted_fold(seed, n, digits, spread, budget, weighted, cuts, parts)
    else:
        _check_sorted_fold(seed, n, digits, spread, budget, weighted, cuts, parts)


def _check_sorted_fold(
    seed: int, n: int, digits: int, spread: float, budget: int, weighted: bool, cuts: list[float],
    parts: int,
) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int8)
    s = np.round(spread * rng.normal(size=n) + y, digits)
    w = rng.integers(0, 3, n).astype(float) if weighted else None
    bounds = sorted({0, n, *(int(c * n) for c in cuts)})
    one = BinnedScores("binary", max_bytes=budget)
    for i, j in zip(bounds[:-1], bounds[1:], strict=True):
        if j > i:
            one.apply(one.prepare(y[i:j], s[i:j], None if w is None else w[i:j]))
            assert one.nbytes <= budget
    ww = np.ones(n) if w is None else w
    keep = ww > 0
    one._settle()  # pending bins (lazy sorted fold) into the stored arrays read below
    uniq, p, n_, sh = _oracle_bins(one.to_keys(s[keep]), y[keep], ww[keep], one.capacity)
    assert one._shift[0] == sh
    assert np.array_equal(one._keys[0], uniq)
    assert np.array_equal(one._pos[0], p) and np.array_equal(one._neg[0], n_)
    pieces = np.array_split(rng.permutation(n), parts)
    merged = BinnedScores("binary", max_bytes=budget)
    for idx in pieces:
        part = BinnedScores("binary", max_bytes=budget)
        for k in range(0, idx.shape[0], 97):
            sel = idx[k : k + 97]
            part.apply(part.prepare(y[sel], s[sel], None if w is None else w[sel]))
        merged.merge(part)
        assert merged.nbytes <= budget
    for a, b in zip(_bins_of(one), _bins_of(merged), strict=True):
        assert a[3] == b[3] and all(np.array_equal(u, v) for u, v in zip(a[:3], b[:3], strict=True))


def test_insert_sorted_matches_np_insert() -> None:
    """The segment-copy insertion equals ``np.insert`` for few and many insertions, at both
    ends and repeated positions."""
    from streammetrics._scores.binned.arrays import FEW_INSERTS as _FEW_INSERTS
    from streammetrics._scores.binned.arrays import insert_sorted as _insert_sorted
    from streammetrics._scores.binned.arrays import insert_sorted_many as _insert_sorted_many
    from streammetrics._scores.binned.arrays import union_sorted as _union_sorted

    rng = np.random.default_rng(3)
    a = np.sort(rng.integers(-1000, 1000, 500))
    for u in (0, 1, 5, _FEW_INSERTS, _FEW_INSERTS + 1, 2000):
        at = np.sort(rng.integers(0, a.shape[0] + 1, u))
        at[: min(u, 2)] = 0
        v = rng.integers(-5, 5, u)
        assert np.array_equal(_insert_sorted(a, at, v), np.insert(a, at, v))
        f = a * 0.5
        got = _insert_sorted_many((a, f), at, (v, v * 0.5))
        assert np.array_equal(got[0], np.insert(a, at, v)) and np.array_equal(got[1], np.insert(f, at, v * 0.5))
    x, z = np.unique(rng.integers(0, 50, 30)), np.unique(rng.integers(0, 50, 30))
    assert np.array_equal(_union_sorted([x, z]), np.union1d(x, z))
    assert np.array_equal(_union_sorted([x[:0], z[:0]]), np.zeros(0, dtype=x.dtype))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sorted_only", [False, True])
def test_sorted_fold_while_binned(weighted: bool, sorted_only: bool) -> None:
    """Deterministic cover of the property above with a stream that coarsens early and keeps
    folding (binned) batches on the sorted path when the dense fold is off."""
    args = (5, 3000, 3, 30.0, 4096, weighted, [0.02, 0.3, 0.31, 0.7], 3)
    if sorted_only:
        with mock.patch.object(_bins, "_DENSE_FACTOR", 0), mock.patch.object(_bins, "_DENSE_MIN", 0):
            _check_sorted_fold(*args)
    else:
        _check_sorted_fold(*args)


def test_scratch_workspace_kept_per_thread_is_capped():
    """Huge batches must not leave more than the documented 16 MiB of scratch per thread."""
    import threading

    from streammetrics._scores.binned import arrays as _bin_arrays
    def run() -> None:
        rng = np.random.default_rng(5)
        m = sm.AUROC(max_bytes=1 << 20)
        for _ in range(3):
            m.update(rng.integers(0, 2, 2_000_000), rng.random(2_000_000))
        kept = getattr(_bin_arrays.WORK, "arrays", {})
        held.append(sum(a.nbytes for a in kept.values()))
        lo, hi = m.bounds()
        values.append((lo, m.compute(), hi))

    held: list[int] = []
    values: list[tuple[float, float, float]] = []
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert held and 0 < held[0] <= _bin_arrays.WORK_MAX_BYTES == 16 << 20
    lo, v, hi = values[0]
    assert lo <= v <= hi and hi - lo < 1e-3
