"""Integer slice keys through every counting path: their own codes (non-negative, small), offset
codes (negative or shifted), sorted codes (wide ranges), consecutive known slots added as one
block, and keys beyond the lookup table. Oracle: scikit-learn's confusion matrix of each key's
rows, over everything fed so far."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import confusion_matrix

import streammetrics as sm

KEY_SETS = {
    "small": np.arange(0, 7),
    "shifted": np.arange(1000, 1012),
    "negative": np.arange(-5, 5),
    "wide": np.array([0, 3, 2**40, -(2**40)]),
    "huge": np.array([1, 2**62, 2**62 + 1, 2**63 - 1, -(2**63)]),
}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), sets=st.lists(st.sampled_from(sorted(KEY_SETS)), min_size=1,
                                                      max_size=4),
       weighted=st.booleans())
def test_integer_keys_count_like_sklearn(seed: int, sets: list[str], weighted: bool) -> None:
    rng = np.random.default_rng(seed)
    sliced = sm.Sliced(sm.ConfusionMatrix())
    ys, ps, ks, ws = [], [], [], []
    for name in sets:  # one batch per key set: known keys, new keys, keys far off the table
        n = int(rng.integers(1, 300))
        pool = KEY_SETS[name]
        keys = pool[rng.integers(0, pool.shape[0], n)]
        if rng.random() < 0.5:
            keys = keys[np.argsort(keys, kind="stable")]
        y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
        w = rng.random(n) if weighted else None
        sliced.update(y, p, slices=keys, sample_weight=w)
        ys.append(y)
        ps.append(p)
        ks.append(keys)
        ws.append(np.ones(n) if w is None else w)
    y, p, k, w = map(np.concatenate, (ys, ps, ks, ws))
    got = sliced.compute()
    assert set(got) == set(k.tolist())
    for key, value in got.items():
        m = k == key
        expect = confusion_matrix(y[m], p[m], labels=[0, 1], sample_weight=w[m])
        np.testing.assert_allclose(value, expect, rtol=1e-12, atol=1e-9)
        assert sliced.counts()[key] == int(m.sum())


def test_known_consecutive_keys_after_reload_and_out_of_order_admission() -> None:
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 2000), rng.integers(0, 2, 2000)
    keys = rng.integers(0, 50, 2000)
    a = sm.Sliced(sm.Recall())
    a.update(y[:10], p[:10], slices=np.array([49, 3, 7, 0, 1, 2, 5, 4, 6, 8]))  # not in order
    a.update(y[10:], p[10:], slices=keys[10:])
    b = sm.Sliced.from_state_dict(a.state_dict())
    b.update(y, p, slices=keys)
    c = sm.Sliced(sm.Recall()).update(y, p, slices=keys)  # admitted in order: one block
    c.update(y[:10], p[:10], slices=np.array([49, 3, 7, 0, 1, 2, 5, 4, 6, 8]))
    c.update(y[10:], p[10:], slices=keys[10:])
    assert b.compute() == c.compute()
    assert b.counts() == c.counts()
