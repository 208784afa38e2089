"""torchmetrics 1.9's options closed one by one (issue #33): ``HammingLoss(top_k=)``,
``HingeLoss(ignore_index=)`` and ``absent_classes="skip"`` (torchmetrics' macro over the seen
classes): exact against a numpy oracle, against torchmetrics to float32's 1e-6. The streaming
laws run over their entries of tests/_support/laws.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_topk_confusion import _unambiguous_rows, oracle_counts, tied_data

import streammetrics as sm


def _torch():
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    return torch, tmc


# -- HammingLoss(top_k=) -------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), c=st.integers(2, 6), n=st.integers(1, 40), weighted=st.booleans())
def test_hamming_top_k_is_one_minus_the_oracle_top_k_accuracy(seed, c, n, weighted):
    rng = np.random.default_rng(seed)
    y, s = rng.integers(0, c, n), rng.integers(0, 3, (n, c)) / 3
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else None
    for k in range(1, c + 1):
        counts = oracle_counts(y, s, k, w)
        want = 1.0 - counts[0].sum() / counts[:, 0].sum()
        m = sm.HammingLoss(c, top_k=k)
        m.update(y[: n // 2], s[: n // 2], sample_weight=None if w is None else w[: n // 2])
        m.update(y[n // 2:], s[n // 2:], sample_weight=None if w is None else w[n // 2:])
        assert m.compute() == pytest.approx(want, rel=1e-12, abs=1e-15)
    top1 = sm.HammingLoss(c, top_k=1).update(y, s)
    assert top1._state.equals(sm.HammingLoss(c).update(y, s.argmax(axis=1))._state)


def test_hamming_top_k_equals_torchmetrics():
    torch, tmc = _torch()
    rng = np.random.default_rng(17)
    for c in (3, 5, 7):
        for k in range(1, c + 1):
            y, s = tied_data(rng, 250, c, levels=4)
            keep = _unambiguous_rows(y, s, k) if k > 1 else np.ones(len(y), bool)
            y, s = y[keep], s[keep]
            if k == 1:
                s = s + np.arange(c) * 1e-3 * (s == s.max(axis=1, keepdims=True))  # no tied argmax
            peer = tmc.MulticlassHammingDistance(num_classes=c, top_k=k, average="micro")
            want = float(peer(torch.from_numpy(s.astype(np.float32)), torch.from_numpy(y)))
            got = sm.HammingLoss(c, top_k=k).update(y, s).compute()
            assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_hamming_top_k_arguments():
    with pytest.raises(ValueError, match="top_k"):
        sm.HammingLoss(3, multilabel=True, top_k=2)
    with pytest.raises(ValueError, match="top_k"):
        sm.HammingLoss(3, top_k=4)
    m = sm.HammingLoss(4, top_k=3)
    assert type(m)(**m._config())._state.key() == m._state.key()
    assert "top_k" not in sm.HammingLoss(4)._config()
