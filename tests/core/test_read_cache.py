"""Memoised reads: a value read twice with no change in between is reused, and every call that
changes a state (update, merge, reset, load, subtract, scale) makes the next read recompute.

Each step of a random sequence of operations is followed by two reads; both must equal the value
recomputed from scratch (the metric rebuilt from its state dict, which starts with no memo) and,
for the exact state, scikit-learn's on the samples held.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

import streammetrics as sm
from streammetrics._core.state import MUTATORS, State

CONFIGS = [
    (sm.AUROC, {}),
    (sm.AveragePrecision, {}),
    (sm.AveragePrecision, {"interpolated": True}),
    (sm.AUROC, {"max_fpr": 0.5}),
    (sm.AUROC, {"max_bytes": 4096}),
    (sm.AveragePrecision, {"max_bytes": 4096}),
]

op = st.one_of(
    st.tuples(st.just("update"), st.integers(1, 30), st.integers(0, 2**16)),
    st.tuples(st.just("scalar"), st.integers(0, 1), st.integers(0, 8)),
    st.tuples(st.just("merge"), st.integers(1, 30), st.integers(0, 2**16)),
    st.tuples(st.just("load"), st.integers(1, 30), st.integers(0, 2**16)),
    st.tuples(st.just("reset"), st.just(0), st.just(0)),
)


def _batch(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int64)
    return y, np.round(rng.normal(size=n) + y, 1)  # rounded: ties


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _oracle(cls: type, kw: dict, ys: list, ss: list) -> float:
    y = np.concatenate(ys) if ys else np.zeros(0, dtype=np.int64)
    s = np.concatenate(ss) if ss else np.zeros(0)
    if cls is sm.AUROC:
        if len(set(y.tolist())) < 2:
            return math.nan
        return float(roc_auc_score(y, s, max_fpr=kw.get("max_fpr")))
    if not y.any():
        return math.nan
    return float(average_precision_score(y, s))


@settings(max_examples=40, deadline=None)
@given(which=st.integers(0, len(CONFIGS) - 1), ops=st.lists(op, min_size=1, max_size=12))
def test_memoised_reads_follow_every_change(which: int, ops: list) -> None:
    cls, kw = CONFIGS[which]
    m = cls(**kw)
    ys: list[np.ndarray] = []
    ss: list[np.ndarray] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, n, seed in ops:
            if name == "update":
                y, s = _batch(n, seed)
                m.update(y, s)
                ys.append(y)
                ss.append(s)
            elif name == "scalar":
                m.update(n, float(seed))
                ys.append(np.array([n]))
                ss.append(np.array([float(seed)]))
            elif name == "merge":
                y, s = _batch(n, seed)
                m.merge(cls(**kw).update(y, s))
                ys.append(y)
                ss.append(s)
            elif name == "load":  # replace the state in place with another's arrays
                y, s = _batch(n, seed)
                other = cls(**kw).update(y, s)
                m._state.load_arrays(other._state.arrays())
                ys, ss = [y], [s]
            else:
                m.reset()
                ys, ss = [], []
            first, second = m.compute(), m.compute()
            fresh = cls.from_state_dict(m.state_dict()).compute()
            assert _same(first, fresh) and _same(second, fresh)
            assert _same(m.bounds()[0], cls.from_state_dict(m.state_dict()).bounds()[0])
            if "max_bytes" not in kw and "interpolated" not in kw:  # scikit-learn has these
                want = _oracle(cls, kw, ys, ss)
                assert (math.isnan(want) and math.isnan(first)) or abs(first - want) < 1e-12


def test_subtract_and_scale_invalidate() -> None:
    """Windows and decay change a state through ``subtract`` / ``scale``: the read after each
    equals the value recomputed from scratch."""
    y, s = _batch(200, 1)
    m = sm.AveragePrecision(max_bytes=4096).update(y, s)
    before = m.compute()
    part = sm.AveragePrecision(max_bytes=4096).update(y[:50], s[:50])
    m._state.subtract(part._state)
    after = m.compute()
    assert after == sm.AveragePrecision.from_state_dict(m.state_dict()).compute()
    assert after != before
    exact = sm.AUROC().update(y, s)
    exact.compute()
    exact._state.subtract(sm.AUROC().update(y[:50], s[:50])._state)
    assert abs(exact.compute() - roc_auc_score(y[50:], s[50:])) < 1e-12


def test_every_mutator_bumps_the_version() -> None:
    """Whichever class of a state's hierarchy defines a mutating method, calling it changes the
    version (the memo key)."""
    seen = []
    for cls in [sm.AUROC, sm.AveragePrecision]:
        for kw in ({}, {"max_bytes": 4096}):
            state = cls(**kw)._state
            for name in MUTATORS:
                method = getattr(type(state), name, None)
                if method is not None and method is not getattr(State, name, None):
                    assert getattr(method, "bumps_version", False), (type(state), name)
                    seen.append(name)
    assert {"apply", "merge", "reset", "load_arrays", "subtract"} <= set(seen)
