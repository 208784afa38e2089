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


# -- HingeLoss(ignore_index=) --------------------------------------------------------------------
@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("mode", ["crammer-singer", "one-vs-all"])
@pytest.mark.parametrize("ignore", [-1, 1])
def test_hinge_ignore_index_equals_torchmetrics(squared, mode, ignore):
    torch, tmc = _torch()
    rng = np.random.default_rng(23)
    for c in (3, 4):
        n = 120
        y = rng.integers(0, c, n)
        y[rng.random(n) < 0.2] = ignore
        d = rng.random((n, c)).astype(np.float32)  # in [0, 1]: torchmetrics takes them as given
        peer = tmc.MulticlassHingeLoss(num_classes=c, squared=squared, multiclass_mode=mode, ignore_index=ignore)
        want = peer(torch.from_numpy(d), torch.from_numpy(y)).numpy()
        m = sm.HingeLoss(c, squared=squared, multiclass_mode=mode, ignore_index=ignore)
        m.update(y[:50], d[:50]).update(y[50:], d[50:])
        np.testing.assert_allclose(m.compute(), want, rtol=1e-6, atol=1e-6)
    yb = rng.integers(0, 2, 200)
    yb[rng.random(200) < 0.2] = ignore if ignore != 1 else -100
    db = rng.random(200).astype(np.float32)
    bi = ignore if ignore != 1 else -100
    want = float(tmc.BinaryHingeLoss(squared=squared, ignore_index=bi)(torch.from_numpy(db), torch.from_numpy(yb)))
    got = sm.HingeLoss(squared=squared, ignore_index=bi).update(yb, db).compute()
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 30), weighted=st.booleans())
def test_hinge_ignore_index_equals_the_rows_dropped(seed, n, weighted):
    rng = np.random.default_rng(seed)
    y, d = rng.integers(0, 3, n), np.round(rng.normal(size=(n, 3)) * 2, 1)
    w = rng.random(n) + 0.1 if weighted else None
    ignored = rng.random(n) < 0.3
    y_ign = np.where(ignored, -100, y)
    keep = ~ignored
    for mode in ("crammer-singer", "one-vs-all"):
        got = sm.HingeLoss(3, multiclass_mode=mode, ignore_index=-100).update(y_ign, d, sample_weight=w)
        want = sm.HingeLoss(3, multiclass_mode=mode).update(y[keep], d[keep],
                                                            sample_weight=None if w is None else w[keep])
        np.testing.assert_array_equal(got._state.arrays()["loss"], want._state.arrays()["loss"])
        np.testing.assert_array_equal(got._state.arrays()["weight"], want._state.arrays()["weight"])
        loaded = sm.loads(sm.dumps(got))
        assert loaded.ignore_index == -100 and loaded._state.equals(got._state)


def test_hinge_ignore_index_arguments_and_labels():
    with pytest.raises(ValueError, match="ignore_index"):
        sm.HingeLoss(3, ignore_index=1.5)
    with pytest.raises(ValueError, match="ignore_index"):
        sm.HingeLoss(classes=[5, 7], ignore_index=1)  # inside [0, 2): ambiguous with a class code
    m = sm.HingeLoss(classes=[5, 7], ignore_index=-100).update([5, -100, 7], [0.2, 0.4, 0.9])
    assert m.compute() == sm.HingeLoss().update([0, 1], [0.2, 0.9]).compute()
    with pytest.raises(ValueError, match="y_score"):  # an ignored row's decision is still checked
        m.update([5, -100], [0.2, np.nan])
    assert "ignore_index" not in sm.HingeLoss(3)._config()
    assert m._state.key() != sm.HingeLoss(classes=[5, 7])._state.key()
