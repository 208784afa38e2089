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


# -- absent_classes="skip": torchmetrics' macro over the seen classes ---------------------------
SKIP_PEERS = {  # ours -> torchmetrics' multiclass class (macro average)
    "Precision": "MulticlassPrecision", "Recall": "MulticlassRecall", "F1": "MulticlassF1Score",
    "FBeta": "MulticlassFBetaScore", "Specificity": "MulticlassSpecificity",
    "NPV": "MulticlassNegativePredictiveValue", "Jaccard": "MulticlassJaccardIndex",
}


def _absent_data(rng, n, c):
    """Labels and predictions of c classes where class c-1 never occurs, class c-2 is only
    predicted and class c-3 only true (so 'seen' differs from 'has support')."""
    y, p = rng.integers(0, c - 3, n), rng.integers(0, c - 3, n)
    y[:3], p[:3] = c - 3, 0
    p[3:5] = c - 2
    return y, p


@pytest.mark.parametrize("name", list(SKIP_PEERS))
@pytest.mark.parametrize("ignore", [None, -1])
def test_skip_equals_torchmetrics_macro(name, ignore):
    torch, tmc = _torch()
    rng = np.random.default_rng(29)
    for c in (4, 6, 9):
        y, p = _absent_data(rng, 200, c)
        if ignore is not None:
            y[rng.random(200) < 0.1] = ignore
        extra = {"beta": 2.0} if name == "FBeta" else {}
        peer = getattr(tmc, SKIP_PEERS[name])(num_classes=c, average="macro", ignore_index=ignore, **extra)
        want = float(peer(torch.from_numpy(p), torch.from_numpy(y)))
        m = getattr(sm, name)(c, absent_classes="skip", zero_division=0.0, ignore_index=ignore, **extra)
        got = m.update(y, p).compute()
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
        include = getattr(sm, name)(c, zero_division=0.0, ignore_index=ignore, **extra).update(y, p).compute()
        assert include != pytest.approx(got, rel=1e-6)  # the default still covers all C classes
    # MulticlassAccuracy's macro default is the macro recall over the seen classes
    y, p = _absent_data(rng, 200, 7)
    want = float(tmc.MulticlassAccuracy(num_classes=7)(torch.from_numpy(p), torch.from_numpy(y)))
    assert sm.Recall(7, absent_classes="skip", zero_division=0.0).update(y, p).compute() == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("name", [n for n in SKIP_PEERS if n != "Jaccard"])  # (no top_k in torchmetrics)
def test_skip_with_top_k_equals_torchmetrics_macro(name):
    """With top_k > 1 torchmetrics' precision, recall and NPV (and MulticlassAccuracy's macro)
    skip the classes without a true sample, the others those without a true or predicted one."""
    torch, tmc = _torch()
    rng = np.random.default_rng(31)
    extra = {"beta": 2.0} if name == "FBeta" else {}
    for c, k in ((5, 2), (7, 3), (9, 2)):
        y = rng.integers(0, c - 2, 300)  # classes c-2 and c-1 never true, but often in the top k
        scores = rng.random((300, c))
        peer = getattr(tmc, SKIP_PEERS[name])(num_classes=c, average="macro", top_k=k, **extra)
        want = float(peer(torch.from_numpy(scores), torch.from_numpy(y)))
        m = getattr(sm, name)(c, absent_classes="skip", zero_division=0.0, top_k=k, **extra)
        assert m.update(y, scores).compute() == pytest.approx(want, rel=1e-6, abs=1e-6)
        if name == "Recall":
            acc = tmc.MulticlassAccuracy(num_classes=c, top_k=k)(torch.from_numpy(scores), torch.from_numpy(y))
            assert m.compute() == pytest.approx(float(acc), rel=1e-6, abs=1e-6)
            back = sm.loads(sm.dumps(m))
            assert back.compute() == m.compute()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), c=st.integers(3, 7), n=st.integers(0, 30), weighted=st.booleans(),
       multilabel=st.booleans())
def test_skip_is_the_mean_over_the_seen_classes(seed, c, n, weighted, multilabel):
    rng = np.random.default_rng(seed)
    if multilabel:
        y, p = rng.integers(0, 2, (n, c)) * (rng.random(c) < 0.6), rng.integers(0, 2, (n, c)) * (rng.random(c) < 0.6)
    else:
        y, p = rng.integers(0, c - 1, n), rng.integers(0, c - 1, n)
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else None
    for name in ("Precision", "Recall", "F1", "Jaccard", "Specificity"):
        per = getattr(sm, name)(c, multilabel=multilabel, average=None, zero_division=0.0)
        per.update(y, p, sample_weight=w)
        s = per._state.one_vs_rest()
        seen = (s.tp + s.fp + s.fn) > 0
        want = float(per.compute()[seen].mean()) if seen.any() else 0.0
        m = getattr(sm, name)(c, multilabel=multilabel, absent_classes="skip", zero_division=0.0)
        m.update(y[: n // 2], p[: n // 2], sample_weight=None if w is None else w[: n // 2])
        m.update(y[n // 2:], p[n // 2:], sample_weight=None if w is None else w[n // 2:])
        assert m.compute() == pytest.approx(want, rel=1e-12, abs=1e-15)
        back = sm.loads(sm.dumps(m))
        assert back.absent_classes == "skip" and back.compute() == m.compute()
        for average in ("micro", "weighted"):  # only the macro average reads it
            a = getattr(sm, name)(c, multilabel=multilabel, average=average, absent_classes="skip",
                                  zero_division=0.0).update(y, p, sample_weight=w).compute()
            b = getattr(sm, name)(c, multilabel=multilabel, average=average,
                                  zero_division=0.0).update(y, p, sample_weight=w).compute()
            assert a == b


def test_skip_with_nan_zero_division_and_nothing_seen():
    m = sm.Precision(4, absent_classes="skip", zero_division=np.nan).update([0, 1, 1], [0, 0, 1])
    assert m.compute() == pytest.approx(np.mean([0.5, 1.0]))  # classes 2, 3 unseen
    with pytest.warns(sm.UndefinedMetricWarning):
        assert sm.Recall(3, absent_classes="skip").compute() == 0.0  # empty: zero_division ("warn": 0)
    with pytest.raises(ValueError, match="absent_classes"):
        sm.F1(3, absent_classes="seen")
    assert "absent_classes" not in sm.F1(3)._config()
    assert sm.F1(3, absent_classes="skip")._config()["absent_classes"] == "skip"


# -- Jaccard with ignore_index in [0, C): torchmetrics' macro gives that class weight 0 --------
def test_jaccard_ignore_index_inside_the_classes_equals_torchmetrics():
    torch, tmc = _torch()
    rng = np.random.default_rng(37)
    for c, ii in ((4, 1), (6, 0), (9, 8)):
        y, p = _absent_data(rng, 300, c)
        y[rng.random(300) < 0.1] = ii  # class ii: ignored where true, still predicted elsewhere
        p[rng.random(300) < 0.1] = ii
        yt, pt = torch.from_numpy(y), torch.from_numpy(p)

        def peer(average, yt=yt, pt=pt, c=c, ii=ii):
            return tmc.MulticlassJaccardIndex(num_classes=c, average=average, ignore_index=ii)(pt, yt).numpy()

        def ours(average, absent="include", c=c, ii=ii, y=y, p=p):
            return sm.Jaccard(c, average=average, absent_classes=absent, ignore_index=ii,
                              zero_division=0.0).update(y, p).compute()

        assert ours("macro", "skip") == pytest.approx(float(peer("macro")), rel=1e-6)
        assert ours("macro") != pytest.approx(float(peer("macro")), rel=1e-6)  # the default: class ii is 0
        np.testing.assert_allclose(ours(None), peer("none"), rtol=1e-6, atol=1e-7)
        assert ours("weighted") == pytest.approx(float(peer("weighted")), rel=1e-6)
        # micro (documented difference): torchmetrics also drops class ii's FP from the denominator
        s = sm.Jaccard(c, average=None, ignore_index=ii).update(y, p)._state.one_vs_rest()
        theirs = s.tp.sum() / ((s.tp + s.fp + s.fn).sum() - s.fp[ii])
        assert float(peer("micro")) == pytest.approx(theirs, rel=1e-6)
        assert ours("micro") == pytest.approx(s.tp.sum() / (s.tp + s.fp + s.fn).sum(), rel=1e-12)
        # labels=: the class ii is skipped where the selection puts it
        others = [k for k in (c - 1, 0, 2) if k != ii]
        sel = sm.Jaccard(c, labels=[ii, *others], absent_classes="skip", ignore_index=ii,
                         zero_division=0.0).update(y, p).compute()
        per = ours(None)
        keep = [k for k in others if s.tp[k] + s.fp[k] + s.fn[k] > 0]
        assert sel == pytest.approx(float(np.mean(per[keep])), rel=1e-12)
        # sample-wise: each sample's macro skips class ii as the global value does
        yy, pp = y[:240].reshape(20, 12), p[:240].reshape(20, 12)
        sw = sm.Jaccard(c, absent_classes="skip", ignore_index=ii, zero_division=0.0,
                        multidim_average="samplewise").update(yy, pp).compute()
        for i in range(20):
            one = sm.Jaccard(c, absent_classes="skip", ignore_index=ii, zero_division=0.0).update(yy[i], pp[i])
            assert sw[i] == pytest.approx(one.compute(), rel=1e-12, abs=1e-15)
    # multilabel: torchmetrics' macro covers every label whatever ignore_index (our default too)
    y, p = rng.integers(0, 2, (80, 4)), rng.integers(0, 2, (80, 4))
    want = tmc.MultilabelJaccardIndex(num_labels=4, ignore_index=0)(torch.from_numpy(p), torch.from_numpy(y))
    got = sm.Jaccard(4, multilabel=True, ignore_index=0, zero_division=0.0).update(y, p).compute()
    assert got == pytest.approx(float(want), rel=1e-6)
