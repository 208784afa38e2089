"""``top_k=`` of the multiclass confusion ratios (streammetrics._counts.topk_counts): exact against
a per-sample numpy oracle, against torchmetrics (float32, 1e-6), top_k=1 against the argmax
labels, and the argument checks. The streaming laws (split, merge, save, rejected batches) run
over the ``topk_*`` entries of tests/_support/laws.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import assert_state_unchanged

import streammetrics as sm
from streammetrics._counts.topk_counts import top_k_mask

RATIOS = {  # class -> (numerator, denominator) of per-class (tp, fp, fn, tn)
    "Precision": lambda tp, fp, fn, tn: (tp, tp + fp),
    "Recall": lambda tp, fp, fn, tn: (tp, tp + fn),
    "Specificity": lambda tp, fp, fn, tn: (tn, tn + fp),
    "F1": lambda tp, fp, fn, tn: (2 * tp, 2 * tp + fp + fn),
    "FBeta": lambda tp, fp, fn, tn: (5 * tp, 5 * tp + 4 * fn + fp),  # beta = 2
}
AVERAGES = ("micro", "macro", "weighted", None)


def make(name: str, c: int, k: int, average: str | None, **kw):
    extra = {"beta": 2.0} if name == "FBeta" else {}
    return getattr(sm, name)(c, top_k=k, average=average, zero_division=0.0, **extra, **kw)


def oracle_counts(y, s, k, w=None):
    """Per-class (tp, fp, fn, tn), one sample at a time, torchmetrics' meaning: the sample is
    predicted as its actual class when that is among the k first classes of a stable sort by
    descending score (ties: lower class index first), else as the first of them."""
    n, c = s.shape
    w = np.ones(n) if w is None else w
    out = np.zeros((4, c))
    for i in range(n):
        top = np.argsort(-s[i], kind="stable")[:k].tolist()
        pred = y[i] if y[i] in top else top[0]
        for cls in range(c):
            p, act = pred == cls, y[i] == cls
            out[0 if p and act else 1 if p else 2 if act else 3, cls] += w[i]
    return out


def oracle_value(name, counts, average):
    tp, fp, fn, tn = counts
    if average == "micro":
        num, den = RATIOS[name](tp.sum(), fp.sum(), fn.sum(), tn.sum())
        return num / den if den else 0.0
    num, den = RATIOS[name](tp, fp, fn, tn)
    per = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
    if average is None:
        return per
    support = tp + fn
    return float(np.average(per, weights=support)) if average == "weighted" else float(per.mean())


def tied_data(rng, n, c, levels=3):
    y = rng.integers(0, c, n)
    y[:c] = np.arange(c)  # every class occurs (macro averages then agree with torchmetrics')
    return y, rng.integers(0, levels, (n, c)).astype(np.float64) / levels


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), c=st.integers(2, 7), n=st.integers(7, 60), weighted=st.booleans())
def test_counts_and_values_equal_the_oracle(seed, c, n, weighted):
    rng = np.random.default_rng(seed)
    y, s = tied_data(rng, n, c)
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else None  # integer weights: exact sums
    for k in range(1, c + 1):
        expected = oracle_counts(y, s, k, w)
        for name in RATIOS:
            for average in AVERAGES:
                m = make(name, c, k, average).update(y, s, sample_weight=w)
                if k > 1:
                    got = m._state.one_vs_rest()
                    np.testing.assert_array_equal(np.stack([got.tp, got.fp, got.fn, got.tn]), expected)
                np.testing.assert_allclose(m.compute(), oracle_value(name, expected, average),
                                           rtol=1e-12, atol=0)
        acc = sm.Accuracy(c, top_k=k).update(y, s, sample_weight=w)
        assert acc.compute() == expected[0].sum() / expected[:, 0].sum()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), c=st.integers(2, 8), n=st.integers(1, 40))
def test_top_1_equals_the_argmax_labels(seed, c, n):
    """top_k=1 is today's behaviour: the metric of the argmax labels (lower index on ties),
    the same state and value."""
    rng = np.random.default_rng(seed)
    y, s = rng.integers(0, c, n), rng.integers(0, 2, (n, c)).astype(np.float64)
    for name in RATIOS:
        for average in AVERAGES:
            top1 = make(name, c, 1, average).update(y, s)
            labels = make(name, c, 1, average).update(y, s.argmax(axis=1))
            assert top1._state.equals(labels._state)
            np.testing.assert_array_equal(top1.compute(), labels.compute())
    top1, labels = sm.Accuracy(c, top_k=1).update(y, s), sm.Accuracy(c).update(y, s.argmax(axis=1))
    assert top1._state.equals(labels._state) and top1.compute() == labels.compute()


def test_mask_breaks_ties_towards_the_lower_index_and_keeps_k():
    rng = np.random.default_rng(7)
    for _ in range(200):
        c = int(rng.integers(2, 12))
        s = rng.integers(0, 3, (5, c)).astype(np.float64)
        for k in range(1, c + 1):
            mask = top_k_mask(s, k)
            ref = np.zeros_like(mask)
            np.put_along_axis(ref, np.argsort(-s, axis=1, kind="stable")[:, :k], True, axis=1)
            np.testing.assert_array_equal(mask, ref)
            assert (mask.sum(axis=1) == k).all()


def _unambiguous_rows(y, s, k):
    """Rows whose predicted class does not depend on how ties are broken (torch.topk leaves
    that order unspecified; ties elsewhere stay): the k-th and (k+1)-th highest scores differ,
    and the highest score is unique unless the actual class is among the top k."""
    d = -np.sort(-s, axis=1)
    boundary = d[:, k - 1] != d[:, k] if k < s.shape[1] else np.ones(len(s), dtype=bool)
    hit = top_k_mask(s, k)[np.arange(len(y)), y]
    return boundary & (hit | (d[:, 0] != d[:, 1]))


@pytest.mark.parametrize("name", list(RATIOS))
@pytest.mark.parametrize("average", AVERAGES)
def test_equals_torchmetrics(name, average):
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    peers = {"Precision": tmc.MulticlassPrecision, "Recall": tmc.MulticlassRecall,
             "Specificity": tmc.MulticlassSpecificity, "F1": tmc.MulticlassF1Score,
             "FBeta": tmc.MulticlassFBetaScore}
    rng = np.random.default_rng(abs(hash((name, str(average)))) % 2**32)
    compared = 0
    for c in (3, 5, 8):
        for k in range(2, c + 1):
            y, s = tied_data(rng, 300, c, levels=4)
            keep = _unambiguous_rows(y, s, k)
            y, s = y[keep], s[keep]
            if len(set(y.tolist())) < c:
                continue
            extra = {"beta": 2.0} if name == "FBeta" else {}
            peer = peers[name](num_classes=c, top_k=k, average=average or "none", **extra)
            want = peer(torch.from_numpy(s.astype(np.float32)), torch.from_numpy(y)).numpy()
            got = make(name, c, k, average).update(y[: len(y) // 2], s[: len(y) // 2])
            got.update(y[len(y) // 2:], s[len(y) // 2:])
            np.testing.assert_allclose(got.compute(), want, rtol=1e-6, atol=1e-6)
            compared += 1
    assert compared >= 10


@pytest.mark.parametrize("bad", [0, -1, 4, True, False, 2.0, 1.5, "2", None])
def test_bad_top_k_is_a_value_error_naming_it(bad):
    for cls in (sm.Precision, sm.Accuracy):
        with pytest.raises(ValueError, match="top_k"):
            cls(3, top_k=bad)


@pytest.mark.parametrize("kw", [{}, {"multilabel": True}])
def test_top_k_above_1_needs_a_multiclass_task(kw):
    with pytest.raises(ValueError, match="top_k"):
        sm.Recall(3 if kw else None, top_k=2, **kw)
    with pytest.raises(ValueError, match="top_k"):
        sm.F1(3, multilabel=True, average="samples", top_k=2)


def test_rejected_batches_leave_the_state_unchanged():
    m = sm.F1(3, top_k=2, zero_division=0.0).update([0, 1, 2], np.eye(3))
    before, value = m.state_dict(), m.compute()
    bad = [([0, 1], [0, 1]),                               # labels, not scores
           ([0, 1], np.zeros((2, 4))),                     # wrong number of columns
           ([0, 3], np.zeros((2, 3))),                     # label out of range
           ([0, 1], np.array([[0.1, np.nan, 0], [0, 0, 1]])),  # NaN score
           ([0, 1], np.zeros((3, 3)))]                     # rows differ
    for y, p in bad:
        with pytest.raises(ValueError):
            m.update(y, p)
    with pytest.raises(ValueError, match="sample_weight"):
        m.update([0, 1], np.zeros((2, 3)), sample_weight=[1.0, -1.0])
    assert_state_unchanged(before, m.state_dict())
    assert m.compute() == value


def test_ignore_index_skips_rows():
    rng = np.random.default_rng(3)
    y, s = tied_data(rng, 50, 4)
    y_ign = y.copy()
    y_ign[::3] = -100
    m = sm.Recall(4, top_k=2, ignore_index=-100, average=None).update(y_ign, s)
    keep = y_ign != -100
    np.testing.assert_array_equal(m.compute(), oracle_value("Recall", oracle_counts(y[keep], s[keep], 2), None))


def test_config_round_trip_and_key():
    m = sm.FBeta(4, beta=0.5, top_k=3, average="micro")
    assert m._config()["top_k"] == 3
    assert "top_k" not in sm.FBeta(4)._config()  # top_k=1 configs stay as before
    assert type(m)(**m._config())._state.key() == m._state.key()


def test_accuracy_rows_of_the_docs_table_against_torchmetrics():
    """docs/functional.md: torchmetrics' macro ``MulticlassAccuracy(top_k=k)`` is
    ``Recall(C, top_k=k)``, its micro one ``TopKAccuracy(C, k=k)``; ``NPV`` is its
    ``MulticlassNegativePredictiveValue``. (Rows where no tie decides the prediction.)"""
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(11)
    for c in (3, 6):
        for k in range(2, c + 1):
            y, s = tied_data(rng, 400, c, levels=5)
            keep = _unambiguous_rows(y, s, k)
            y, s = y[keep], s[keep]
            ts, ty = torch.from_numpy(s.astype(np.float32)), torch.from_numpy(y)
            for average, ours in (("macro", sm.Recall(c, top_k=k, zero_division=0.0)),
                                  ("micro", sm.TopKAccuracy(c, k=k)), ("micro", sm.Accuracy(c, top_k=k))):
                want = tmc.MulticlassAccuracy(num_classes=c, top_k=k, average=average)(ts, ty).item()
                assert ours.update(y, s).compute() == pytest.approx(want, rel=1e-6, abs=1e-6)
            for average in AVERAGES:
                want = tmc.MulticlassNegativePredictiveValue(num_classes=c, top_k=k,
                                                             average=average or "none")(ts, ty).numpy()
                got = sm.NPV(c, top_k=k, average=average, zero_division=0.0).update(y, s).compute()
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), c=st.integers(2, 5))
def test_weighted_states_of_few_rows_save_and_load(seed, n, c):
    """Every cell is a sum of its own rows' weights, never a difference of sums: a cell with no
    row is 0 in the weights and in the squared weights alike, so the pair loads (before: TN
    as total - TP - FP - FN left 5.6e-17 of squared weight beside 0.0 of weight and the saved
    state was refused -- a fresh-seed find of the law registry)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    s = rng.integers(0, 3, (n, c)).astype(float)  # ties
    w = rng.random(n)
    m = sm.Recall(c, top_k=min(2, c), average="micro", zero_division=0.0)
    m.update(y, s, sample_weight=w)
    loaded = sm.loads(sm.dumps(m))
    assert loaded.compute() == m.compute()
    ovr, ovr_w2 = (m._state._arrays[k] for k in ("ovr", "ovr_w2"))
    assert ((ovr == 0) == (ovr_w2 == 0)).all()
    assert np.allclose(ovr.sum(axis=0), w.sum(), rtol=1e-12)

