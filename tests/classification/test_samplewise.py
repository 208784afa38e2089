"""``multidim_average="samplewise"`` (torchmetrics' option) on the per-class ratios and
``StatScores``: each sample's value equals the global metric of that sample's positions (exact,
hypothesis), equals torchmetrics 1.9 (float32, 1e-6), streams, merges by concatenation in merge
order, saves and loads, and refuses what it does not take with the state unchanged. The protocol
laws run over the ``samplewise_*`` entries of tests/_support/laws.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import assert_state_unchanged

import streammetrics as sm

RATIOS = ("Precision", "Recall", "F1", "Specificity", "NPV", "Jaccard", "FallOut")
AVERAGES = ("micro", "macro", "weighted", None)


def _data(rng, task, n, d, c=3):
    if task == "binary":
        return rng.integers(0, 2, (n, d)), (rng.integers(0, 20, (n, d)) + 0.5) / 20
    if task == "multiclass":
        return rng.integers(0, c, (n, d)), rng.random((n, c, d))
    return rng.integers(0, 2, (n, c, d)), (rng.integers(0, 20, (n, c, d)) + 0.5) / 20


def _global_twin(m, y, p):
    """The same metric, global, over one sample's positions as rows."""
    cfg = {**m._config(), "multidim_average": "global"}
    twin = type(m)(**cfg)
    if m.task == "multiclass":
        return twin.update(y.reshape(-1), np.moveaxis(p.reshape(p.shape[0], -1), 0, 1))
    if m.task == "multilabel":
        return twin.update(y.reshape(y.shape[0], -1).T, p.reshape(p.shape[0], -1).T)
    return twin.update(y.reshape(-1), p.reshape(-1))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), task=st.sampled_from(["binary", "multiclass", "multilabel"]),
       n=st.integers(0, 8), d=st.integers(1, 6), ignore=st.booleans())
def test_each_sample_is_the_global_metric_of_its_positions(seed, task, n, d, ignore):
    rng = np.random.default_rng(seed)
    y, p = _data(rng, task, n, d)
    ii = -1 if ignore else None
    if ignore:
        y[rng.random(y.shape) < 0.2] = -1
    for name in RATIOS:
        for average in AVERAGES if task != "binary" else ("macro",):
            for absent in ("include", "skip"):
                kw = {} if task == "binary" else {"num_classes": 3, "multilabel": task == "multilabel",
                                                  "average": average, "absent_classes": absent}
                m = getattr(sm, name)(multidim_average="samplewise", zero_division=0.0, ignore_index=ii, **kw)
                m.update(y[: n // 2], p[: n // 2]).update(y[n // 2:], p[n // 2:])
                got = m.compute()
                assert got.shape[0] == n
                for i in range(n):
                    want = _global_twin(m, y[i], p[i]).compute()
                    np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-15)
    s = sm.StatScores(None if task == "binary" else 3, multilabel=task == "multilabel", average=None,
                      multidim_average="samplewise", ignore_index=ii).update(y, p).compute()
    for i in range(n):
        np.testing.assert_array_equal(s[i], _global_twin(sm.StatScores(None if task == "binary" else 3,
                                                                        multilabel=task == "multilabel",
                                                                        average=None, ignore_index=ii,
                                                                        multidim_average="samplewise"),
                                                         y[i], p[i]).compute())


def _torch():
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    return torch, tmc


PEERS = {"Precision": "Precision", "Recall": "Recall", "F1": "F1Score", "Specificity": "Specificity",
         "NPV": "NegativePredictiveValue", "StatScores": "StatScores"}


@pytest.mark.parametrize("name", list(PEERS))
@pytest.mark.parametrize("ignore", [None, -1])
def test_equals_torchmetrics(name, ignore):
    torch, tmc = _torch()
    rng = np.random.default_rng(41)
    for task in ("binary", "multiclass", "multilabel"):
        y, p = _data(rng, task, 12, 9, c=4)
        if ignore is not None:
            y[rng.random(y.shape) < 0.15] = ignore
        if task == "multiclass":  # one sample's scores as class labels, the others as scores
            p[0] = np.eye(4)[:, rng.integers(0, 4, 9)]
        yt, pt = torch.from_numpy(y), torch.from_numpy(p.astype(np.float32))
        for average in ("macro",) if task == "binary" else AVERAGES:
            prefix = {"binary": "Binary", "multiclass": "Multiclass", "multilabel": "Multilabel"}[task]
            peer_cls = getattr(tmc, prefix + PEERS[name])
            kw: dict = {"multidim_average": "samplewise", "ignore_index": ignore}
            if task == "multiclass":
                kw |= {"num_classes": 4, "average": average or "none"}
            elif task == "multilabel":
                kw |= {"num_labels": 4, "average": average or "none"}
            want = peer_cls(**kw)(pt, yt).numpy()
            ours_kw: dict = {"multidim_average": "samplewise", "ignore_index": ignore}
            if task != "binary":
                ours_kw |= {"average": average, "multilabel": task == "multilabel"}
                if name != "StatScores" and task == "multiclass":
                    ours_kw["absent_classes"] = "skip"  # torchmetrics' multiclass macro
            if name != "StatScores":
                ours_kw["zero_division"] = 0.0
            m = getattr(sm, name)(None if task == "binary" else 4, **ours_kw)
            got = m.update(y[:5], p[:5]).update(y[5:], p[5:]).compute()
            if name == "StatScores" and task == "multilabel" and average == "weighted":
                # torchmetrics 1.9 divides each sample's support weights by the supports of ALL
                # samples (_multilabel_stat_scores_compute: w / w.sum()); ours by the sample's own,
                # as its multiclass samplewise does: the two differ by that factor per sample
                sup = sm.StatScores(4, multilabel=True, average=None, multidim_average="samplewise",
                                    ignore_index=ignore).update(y, p).compute()[:, :, 4].sum(axis=1)
                got = got * (sup / sup.sum())[:, None]
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{task} {average}")


def test_merge_concatenates_in_merge_order_and_save_load_round_trips():
    rng = np.random.default_rng(3)
    y, p = _data(rng, "multiclass", 10, 4)
    a = sm.F1(3, average=None, multidim_average="samplewise", zero_division=0.0).update(y[:6], p[:6])
    b = sm.F1(3, average=None, multidim_average="samplewise", zero_division=0.0).update(y[6:], p[6:])
    va, vb = a.compute(), b.compute()
    merged = b.copy().merge(a)
    np.testing.assert_array_equal(merged.compute(), np.concatenate([vb, va]))
    loaded = sm.loads(sm.dumps(merged))
    assert loaded.multidim_average == "samplewise"
    np.testing.assert_array_equal(loaded.compute(), merged.compute())
    loaded.update(y[:1], p[:1])
    assert loaded.compute().shape == (11, 3)
    assert merged._state.sample_count() == 10


def test_refusals_leave_the_state_unchanged():
    rng = np.random.default_rng(5)
    y, p = _data(rng, "multiclass", 4, 3)
    m = sm.Recall(3, multidim_average="samplewise", zero_division=0.0).update(y, p)
    before, value = m.state_dict(), m.compute()
    bad = [
        (y[0], p[0].argmax(axis=0)),             # 1-D: no extra dimension
        (y, p[:, :2]),                           # scores of 2 classes
        (y, p.argmax(axis=1)[:, :2]),            # shapes differ
        (np.where(y == 0, 3, y), p),             # a label out of range
        (y, np.where(p > 0.9, np.nan, p)),       # a NaN score
    ]
    for yb, pb in bad:
        with pytest.raises(ValueError):
            m.update(yb, pb)
    with pytest.raises(ValueError, match="sample_weight"):
        m.update(y, p, sample_weight=np.ones(4))
    assert_state_unchanged(before, m.state_dict())
    np.testing.assert_array_equal(m.compute(), value)
    with pytest.raises(ValueError, match="multidim_average"):
        sm.F1(3, multidim_average="sample")
    with pytest.raises(ValueError, match="top_k"):
        sm.F1(3, multidim_average="samplewise", top_k=2)
    with pytest.raises(ValueError, match="classes"):
        sm.F1(classes=["a", "b"], multidim_average="samplewise")
    with pytest.raises(ValueError, match="average"):
        sm.F1(3, multilabel=True, average="samples", multidim_average="samplewise")
    with pytest.raises(ValueError, match="interval"):
        sm.Recall(multidim_average="samplewise", average="micro").interval()
    empty = sm.Precision(3, average=None, multidim_average="samplewise")
    assert empty.compute().shape == (0, 3)
    assert "multidim_average" not in sm.F1(3)._config()


def test_hostile_saved_counts_are_refused():
    m = sm.Precision(3, multidim_average="samplewise", zero_division=0.0).update([[0, 1]], [[0, 2]])
    good = m.state_dict()
    for bad in (np.zeros((2, 4)), np.full((1, 4, 3), -1.0), np.full((1, 4, 3), 0.5),
                np.array([[[1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 1, 0]]], float),  # class totals differ
                np.array([[[0, 0, 0], [1, 0, 0], [1, 0, 0], [0, 2, 2]]], float)):  # supports != predicted
        sd = {**good}
        key = next(k for k in sd if k.endswith("counts"))
        sd[key] = bad
        with pytest.raises(ValueError, match="state"):
            sm.Metric.from_state_dict(sd)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), task=st.sampled_from(["binary", "multiclass", "multilabel"]),
       n=st.integers(0, 8), d=st.integers(1, 6), ignore=st.booleans())
def test_accuracy_and_hamming_each_sample_is_the_global_metric_of_its_positions(seed, task, n, d, ignore):
    rng = np.random.default_rng(seed)
    y, p = _data(rng, task, n, d)
    ii = -1 if ignore else None
    if ignore:
        y[rng.random(y.shape) < 0.2] = -1
    kw = {} if task == "binary" else {"num_classes": 3, "multilabel": task == "multilabel"}
    for cls in (sm.Accuracy, sm.HammingLoss) if task != "multilabel" else (sm.HammingLoss,):
        m = cls(multidim_average="samplewise", zero_division=0.0, ignore_index=ii, **kw)
        got = m.update(y[: n // 2], p[: n // 2]).update(y[n // 2:], p[n // 2:]).compute()
        assert got.shape == (n,)
        for i in range(n):
            assert got[i] == _global_twin(m, y[i], p[i]).compute()


@pytest.mark.parametrize("ignore", [None, -1])
def test_accuracy_and_hamming_equal_torchmetrics(ignore):
    torch, tmc = _torch()
    rng = np.random.default_rng(43)
    for task in ("binary", "multiclass", "multilabel"):
        y, p = _data(rng, task, 12, 9, c=4)
        if ignore is not None:
            y[rng.random(y.shape) < 0.15] = ignore
        yt, pt = torch.from_numpy(y), torch.from_numpy(p.astype(np.float32))
        tkw: dict = {"multidim_average": "samplewise", "ignore_index": ignore}
        kw: dict = {"multidim_average": "samplewise", "ignore_index": ignore, "zero_division": 0.0}
        if task == "binary":
            pairs = [(tmc.BinaryAccuracy(**tkw), sm.Accuracy(**kw)),
                     (tmc.BinaryHammingDistance(**tkw), sm.HammingLoss(**kw))]
        elif task == "multiclass":
            tkw |= {"num_classes": 4}
            pairs = [(tmc.MulticlassAccuracy(average="micro", **tkw), sm.Accuracy(4, **kw)),
                     (tmc.MulticlassHammingDistance(average="micro", **tkw), sm.HammingLoss(4, **kw)),
                     # torchmetrics' default macro accuracy: the mean recall over the classes seen
                     (tmc.MulticlassAccuracy(**tkw), sm.Recall(4, absent_classes="skip", **kw))]
        else:
            tkw |= {"num_labels": 4}
            pairs = [(tmc.MultilabelHammingDistance(average="micro", **tkw),
                      sm.HammingLoss(4, multilabel=True, **kw))]
        for peer, ours in pairs:
            got = ours.update(y[:5], p[:5]).update(y[5:], p[5:]).compute()
            np.testing.assert_allclose(got, peer(pt, yt).numpy(), rtol=1e-6, atol=1e-6,
                                       err_msg=f"{task} {type(peer).__name__}")
        if task == "multilabel":  # MultilabelAccuracy(average="micro"): 1 - Hamming loss
            got = 1.0 - sm.HammingLoss(4, multilabel=True, **kw).update(y, p).compute()
            want = tmc.MultilabelAccuracy(average="micro", **tkw)(pt, yt).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_accuracy_and_hamming_merge_save_load_and_refuse():
    rng = np.random.default_rng(7)
    y, p = _data(rng, "multiclass", 10, 4)
    for cls in (sm.Accuracy, sm.HammingLoss):
        a = cls(3, multidim_average="samplewise").update(y[:6], p[:6])
        b = cls(3, multidim_average="samplewise").update(y[6:], p[6:])
        merged = b.copy().merge(a)
        np.testing.assert_array_equal(merged.compute(), np.concatenate([b.compute(), a.compute()]))
        loaded = sm.loads(sm.dumps(merged))
        assert loaded.multidim_average == "samplewise"
        np.testing.assert_array_equal(loaded.compute(), merged.compute())
        before = merged.state_dict()
        with pytest.raises(ValueError, match="y_pred"):
            merged.update(y, p[:, :2])
        with pytest.raises(ValueError, match="sample_weight"):
            merged.update(y, p, sample_weight=np.ones(10))
        assert_state_unchanged(before, merged.state_dict())
        with pytest.raises(ValueError, match="top_k"):
            cls(3, multidim_average="samplewise", top_k=2)
        assert "multidim_average" not in cls(3)._config()
    with pytest.raises(ValueError, match="multidim_average"):
        sm.Accuracy(3, multilabel=True, multidim_average="samplewise")
    with pytest.raises(ValueError, match="interval"):
        sm.Accuracy(multidim_average="samplewise").interval()
    with pytest.warns(sm.UndefinedMetricWarning):  # a sample whose positions are all ignored
        got = sm.HammingLoss(ignore_index=-1, multidim_average="samplewise").update(
            [[-1, -1], [1, 0]], [[1, 1], [1, 1]]).compute()
    np.testing.assert_array_equal(got, [0.0, 0.5])
