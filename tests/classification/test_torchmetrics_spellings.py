"""torchmetrics' spelling ``"none"`` of ``average=None`` (confusion family, ranking family) and of
``ConfusionMatrix(normalize=None)`` (issue #33): the same metric as ``None`` (configuration, saved
file, value) and equal to torchmetrics' ``average="none"`` / ``normalize="none"``."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm

torch = pytest.importorskip("torch")
tmc = pytest.importorskip("torchmetrics.classification")

C = 4
PAIRS = [
    (sm.Precision, tmc.MulticlassPrecision),
    (sm.Recall, tmc.MulticlassRecall),
    (sm.F1, tmc.MulticlassF1Score),
    (sm.Specificity, tmc.MulticlassSpecificity),
    (sm.Jaccard, tmc.MulticlassJaccardIndex),
    (sm.NPV, tmc.MulticlassNegativePredictiveValue),
]


def _labels(seed: int, n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, C, n))
    y[:C] = np.arange(C)  # every class occurs (torchmetrics' macro skips unseen classes; None does not)
    return y, p


@pytest.mark.parametrize("ours, peer", PAIRS)
def test_average_none_is_none_and_equals_torchmetrics(ours, peer):
    y, p = _labels(0)
    m = ours(C, average="none", zero_division=0)
    assert m.average is None and m._config() == ours(C, average=None, zero_division=0)._config()
    got = m.update(y, p).compute()
    want = peer(num_classes=C, average="none")(torch.tensor(p), torch.tensor(y)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)  # torchmetrics: float32
    assert np.array_equal(sm.loads(sm.dumps(m)).compute(), got)


def test_ranking_average_none_equals_torchmetrics():
    rng = np.random.default_rng(1)
    y = rng.integers(0, C, 400)
    s = np.round(rng.random((400, C)), 1)  # ties
    s /= s.sum(axis=1, keepdims=True)
    for ours, peer in ((sm.AUROC, tmc.MulticlassAUROC), (sm.AveragePrecision, tmc.MulticlassAveragePrecision)):
        m = ours(C, average="none")
        assert m.average is None
        want = peer(num_classes=C, average="none")(torch.tensor(s), torch.tensor(y)).numpy()
        np.testing.assert_allclose(m.update(y, s).compute(), want, rtol=0, atol=1e-6)


def test_confusion_matrix_normalize_none_equals_torchmetrics():
    y, p = _labels(2)
    m = sm.ConfusionMatrix(C, normalize="none")
    assert m.normalize is None and m._config() == sm.ConfusionMatrix(C)._config()
    want = tmc.MulticlassConfusionMatrix(num_classes=C, normalize="none")(torch.tensor(p), torch.tensor(y))
    assert np.array_equal(m.update(y, p).compute(), want.numpy())
    for norm in ("true", "pred", "all"):
        want = tmc.MulticlassConfusionMatrix(num_classes=C, normalize=norm)(torch.tensor(p), torch.tensor(y))
        got = sm.ConfusionMatrix(C, normalize=norm).update(y, p).compute()
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-6)


def test_other_spellings_are_still_refused():
    with pytest.raises(ValueError, match="average: must be one of"):
        sm.Precision(C, average="None")
    with pytest.raises(ValueError, match="normalize: must be None, 'true', 'pred' or 'all'"):
        sm.ConfusionMatrix(C, normalize="NONE")
