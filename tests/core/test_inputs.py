"""Input handling (docs/definitions/inputs.md): accepted containers, clear errors, atomic updates."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm


def snapshot(metric):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in metric.state_dict().items()}


def assert_unchanged(metric, before):
    after = metric.state_dict()
    assert after.keys() == before.keys()
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(after[k], v)
        else:
            assert after[k] == v


BAD_INPUTS = [
    # (factory, y_true, y_pred, kwargs, message fragments)
    (lambda: sm.F1(), [0, 1, 2, 1], [0.1, 0.2, 0.3, 0.4], {}, ["y_true", "0 or 1", "2", "index 2"]),
    (lambda: sm.F1(), [0, 1, -1], [0.1, 0.2, 0.3], {}, ["y_true", "-1", "index 2"]),
    (lambda: sm.F1(), [0, 1, 1], [0.1, np.nan, 0.3], {}, ["y_pred", "NaN", "index 1"]),
    (lambda: sm.F1(), [0, 1, 1], [0, 1, 3], {}, ["y_pred", "0 or 1", "3", "index 2"]),
    (lambda: sm.F1(), [0, 1, 1], [0.1, 0.2], {}, ["y_pred", "shape"]),
    (lambda: sm.F1(), [[0, 1]], [[0.1, 0.2]], {}, ["y_true", "1-D"]),
    (lambda: sm.F1(), [0, 1, 1], [0.1, 0.2, 0.3], {"sample_weight": [1, -2, 1]},
     ["sample_weight", ">= 0", "-2", "index 1"]),
    (lambda: sm.F1(), [0, 1, 1], [0.1, 0.2, 0.3], {"sample_weight": [1, np.inf, 1]},
     ["sample_weight", "finite", "index 1"]),
    (lambda: sm.F1(), [0, 1, 1], [0.1, 0.2, 0.3], {"sample_weight": [1, 1]}, ["sample_weight", "shape"]),
    (lambda: sm.F1(), [0, 0.5, 1], [0.1, 0.2, 0.3], {}, ["y_true", "integers", "0.5", "index 1"]),
    (lambda: sm.F1(), ["a", "b"], [0.1, 0.2], {}, ["y_true", "dtype"]),
    (lambda: sm.Recall(3), [0, 1, 3, 1], [0, 1, 2, 1], {}, ["y_true", "[0, 3)", "3", "index 2"]),
    (lambda: sm.Recall(3), [0, 1, 2], [0, 5, 2], {}, ["y_pred", "[0, 3)", "5", "index 1"]),
    (lambda: sm.Recall(3), [0, 1, 2], np.zeros((3, 4)), {}, ["y_pred", "(3, 3)"]),
    (lambda: sm.Recall(3), [0, 1, 2], np.array([[0, 1, np.nan]] * 3), {}, ["y_pred", "NaN", "(0, 2)"]),
    (lambda: sm.Recall(3, multilabel=True), [[0, 1, 2]], [[0, 1, 1]], {}, ["y_true", "0 or 1", "(0, 2)"]),
    (lambda: sm.Recall(3, multilabel=True), [[0, 1]], [[0, 1]], {}, ["y_true", "shape"]),
    (lambda: sm.TopKAccuracy(3, k=2), [0, 1], [0.2, 0.3], {}, ["y_score", "(2, 3)"]),
    (lambda: sm.Accuracy(), 2, 0.3, {}, ["y_true", "0 or 1", "2"]),
    (lambda: sm.Accuracy(), 1, float("nan"), {}, ["y_pred", "NaN"]),
    (lambda: sm.Accuracy(), 1, 0.3, {"sample_weight": -1.0}, ["sample_weight", ">= 0"]),
]


@pytest.mark.parametrize("case", range(len(BAD_INPUTS)))
def test_bad_input_is_rejected_with_a_clear_message_and_changes_nothing(case):
    factory, y, p, kwargs, fragments = BAD_INPUTS[case]
    metric = factory()
    good_y, good_p = ([[0, 1, 1]], [[0.9, 0.1, 0.7]]) if getattr(metric, "multilabel", False) else (None, None)
    if good_y is None:
        if isinstance(metric, sm.TopKAccuracy) or getattr(metric, "task", "") == "multiclass":
            good_y, good_p = [0, 1, 2], np.eye(3)
        else:
            good_y, good_p = [0, 1, 1], [0.2, 0.9, 0.4]
    metric.update(good_y, good_p)
    before = snapshot(metric)
    with pytest.raises(ValueError) as info:
        metric.update(y, p, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert_unchanged(metric, before)


def test_rejected_metricset_update_changes_no_member():
    ms = sm.MetricSet(f1=sm.F1(), topk=sm.TopKAccuracy(3, k=2), acc=sm.Accuracy(3))
    with pytest.raises(ValueError):
        sm.MetricSet(f1=sm.F1(), acc=sm.Accuracy(3)).update([0, 1], [0.1, 0.2])
    ms = sm.MetricSet(topk=sm.TopKAccuracy(3, k=2), acc=sm.Accuracy(3), rec=sm.Recall(3, ignore_index=9))
    ms.update([0, 1, 2], np.eye(3))
    before = snapshot(ms)
    # valid for Recall(ignore_index=9), invalid for the others: nothing may change
    with pytest.raises(ValueError, match="y_true"):
        ms.update([0, 9, 2], np.eye(3))
    assert_unchanged(ms, before)


def test_lists_numpy_and_array_likes_agree():
    class ArrayLike:  # any object with __array__, e.g. a jax/torch CPU tensor
        def __init__(self, a):
            self.a = np.asarray(a)

        def __array__(self, dtype=None, copy=None):
            return self.a if dtype is None else self.a.astype(dtype)

    y = [0, 1, 1, 0, 1]
    p = [0.2, 0.8, 0.4, 0.6, 0.9]
    ref = sm.F1().update(np.array(y), np.array(p)).compute()
    assert sm.F1().update(y, p).compute() == ref
    assert sm.F1().update(ArrayLike(y), ArrayLike(p)).compute() == ref
    assert sm.F1().update(np.array(y, dtype=bool), np.array(p, dtype=np.float32)).compute() == ref
    assert sm.F1().update(np.array(y, dtype=np.float32), p).compute() == ref  # float 0/1 labels


def test_dlpack_only_objects_are_accepted():
    class DLPackOnly:  # exposes only the DLPack protocol (like a CUDA tensor seen from numpy)
        def __init__(self, a):
            self.a = np.asarray(a)

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    y = [0, 1, 1, 0]
    p = [0.2, 0.8, 0.4, 0.6]
    assert sm.Recall().update(DLPackOnly(y), DLPackOnly(p)).compute() == sm.Recall().update(y, p).compute()


def test_torch_tensors_if_available():
    torch = pytest.importorskip("torch")
    y = torch.tensor([0, 1, 1, 0, 1])
    p = torch.tensor([0.2, 0.8, 0.4, 0.6, 0.9])
    ref = sm.F1().update([0, 1, 1, 0, 1], [0.2, 0.8, 0.4, 0.6, 0.9]).compute()
    assert sm.F1().update(y, p).compute() == pytest.approx(ref, abs=0)
    assert sm.F1().update(y.bool(), p.to(torch.bfloat16)).compute() == ref


def test_empty_batch_is_a_no_op():
    m = sm.Precision(zero_division=0.0).update([1, 0], [0.9, 0.2])
    before = snapshot(m)
    m.update([], [])
    m.update(np.zeros(0), np.zeros(0), sample_weight=np.zeros(0))
    assert_unchanged(m, before)
    m3 = sm.Recall(3, zero_division=0.0).update([0], [0])
    before = snapshot(m3)
    m3.update(np.zeros(0, dtype=int), np.zeros((0, 3)))
    assert_unchanged(m3, before)


def test_constructor_arguments_are_validated():
    with pytest.raises(ValueError, match="num_classes"):
        sm.Recall(1)
    with pytest.raises(ValueError, match="num_classes"):
        sm.Recall(multilabel=True)
    with pytest.raises(ValueError, match="average"):
        sm.Recall(3, average="samples")
    with pytest.raises(ValueError, match="zero_division"):
        sm.Recall(zero_division=0.5)
    with pytest.raises(ValueError, match="threshold"):
        sm.Recall(threshold=float("nan"))
    with pytest.raises(ValueError, match="beta"):
        sm.FBeta(beta=-1)
    with pytest.raises(ValueError, match="weights"):
        sm.WeightedAccuracy(weights=[0.5, 0.6])
    with pytest.raises(ValueError, match="weights"):
        sm.WeightedAccuracy(3, weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="k"):
        sm.TopKAccuracy(3, k=4)
    with pytest.raises(ValueError, match="normalize"):
        sm.ConfusionMatrix(normalize="rows")


def test_merge_configuration_mismatch_is_a_value_error():
    with pytest.raises(ValueError, match="threshold"):
        sm.F1(threshold=0.3).merge(sm.F1(threshold=0.5))
    with pytest.raises(ValueError, match="merge"):
        sm.F1().merge(sm.Precision())
    a = sm.MetricSet(f1=sm.F1())
    with pytest.raises(ValueError, match="members"):
        a.merge(sm.MetricSet(p=sm.Precision()))


def test_metricset_shares_one_state_and_rejects_mixed_families():
    ms = sm.MetricSet(p=sm.Precision(), r=sm.Recall(), f=sm.F1(), a=sm.Accuracy(), t=sm.F1(threshold=0.3))
    assert ms.groups == [["p", "r", "f", "a"], ["t"]]
    assert ms["p"]._state is ms["f"]._state

    class Retrievalish(sm.Precision):
        family = "retrieval"

    with pytest.raises(ValueError, match="family|update shapes"):
        sm.MetricSet(p=sm.Precision(), q=Retrievalish())


def test_compute_does_not_change_state():
    m = sm.F1(3, average=None).update([0, 1, 2], [0, 2, 2])
    m.update(1, 1)  # pending per-sample increment
    before = m.state_dict()
    m.compute()
    m.compute()
    after = m.state_dict()
    for k in before:
        np.testing.assert_array_equal(np.asarray(before[k], dtype=object), np.asarray(after[k], dtype=object))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_threshold_is_exact_for_every_score_precision(dtype):
    threshold = 0.2999
    scores = np.array([0.2999, 0.3, 0.29989, 0.5, 0.0], dtype=dtype)
    expected = (scores.astype(np.float64) >= threshold).astype(int)
    m = sm.ConfusionMatrix(threshold=threshold).update(np.ones(5, dtype=int), scores)
    np.testing.assert_array_equal(m.compute()[1], [5 - expected.sum(), expected.sum()])
    ml = sm.ConfusionMatrix(5, multilabel=True, threshold=threshold).update(np.ones((1, 5), dtype=int), scores[None, :])
    np.testing.assert_array_equal(ml.compute()[:, 1, 1], expected)


def test_threshold_is_exact_for_float32_scalars():
    m = sm.ConfusionMatrix(threshold=0.2999).update(1, np.float32(0.2999))
    assert m.compute()[1, 0] == 1  # float32(0.2999) < 0.2999


def test_metricset_passes_keywords_only_to_members_that_take_them():
    ms = sm.MetricSet(recent=sm.Window(sm.F1(), seconds=10), total=sm.F1(), auroc=sm.AUROC())
    ms.update([0, 1, 1], [0.2, 0.8, 0.4], timestamp=5.0)
    ms.update([1], [0.9], timestamp=20.0)  # the window keeps only t > 10
    values = ms.compute()
    assert values["recent"] == 1.0 and values["total"] == pytest.approx(0.8)
    with pytest.raises(TypeError, match="bogus"):
        ms.update([0], [0.1], bogus=1)


def test_metricset_names_the_score_argument_of_ranking_members():
    ms = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    with pytest.raises(ValueError, match="y_score"):
        ms.update([0, 1], object())
