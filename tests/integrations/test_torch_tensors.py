"""Tensors in: torch tensors (and cupy/jax-style duck types) give exactly the numpy result.

Dtype rules: bool labels are labels; float labels must be whole numbers; float16 scores are upcast
to float64 (so thresholds are compared on the true value) and bfloat16 to float32 (exact); a tensor
that requires grad is detached; non-contiguous tensors are fine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import streammetrics as sm  # noqa: E402


def _same(a: sm.Metric, b: sm.Metric) -> None:
    da, db = a.state_dict(), b.state_dict()
    assert da.keys() == db.keys()
    for k in da:
        if k != "config":
            np.testing.assert_array_equal(np.asarray(da[k]), np.asarray(db[k]), err_msg=k)
    va, vb = a.compute(), b.compute()
    if not isinstance(va, dict):
        va, vb = {"value": va}, {"value": vb}
    for k in va:
        if hasattr(va[k], "thresholds"):  # a curve result: compare its arrays
            for f in ("fpr", "tpr", "precision", "recall", "thresholds"):
                if hasattr(va[k], f):
                    np.testing.assert_array_equal(getattr(va[k], f), getattr(vb[k], f), err_msg=f"{k}.{f}")
        else:
            np.testing.assert_equal(va[k], vb[k], err_msg=k)


def _binary() -> sm.MetricSet:
    return sm.MetricSet(f1=sm.F1(), acc=sm.Accuracy(threshold=0.3), cm=sm.ConfusionMatrix(),
                        auroc=sm.AUROC(), ap=sm.AveragePrecision(), roc=sm.ROCCurve())


@pytest.fixture
def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    n = 2_000
    return {"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), 2), "w": rng.integers(0, 3, n) * 0.5,
            "yc": rng.integers(0, 4, n), "s": rng.random((n, 4)).astype(np.float32)}


def test_torch_tensors_give_the_numpy_result(data: dict[str, np.ndarray]) -> None:
    y, p, w = data["y"], data["p"], data["w"]
    ref = _binary().update(y, p, sample_weight=w)
    for labels in (torch.from_numpy(y), torch.from_numpy(y).bool(), torch.from_numpy(y).float()):
        got = _binary().update(labels, torch.from_numpy(p), sample_weight=torch.from_numpy(w))
        _same(got, ref)
    # float32 scores: the same as the numpy float32 array
    p32 = p.astype(np.float32)
    _same(_binary().update(torch.from_numpy(y), torch.from_numpy(p32)), _binary().update(y, p32))
    # a tensor that requires grad (a model output) is detached
    logits = torch.from_numpy(p).requires_grad_(True) * 1.0
    _same(_binary().update(torch.from_numpy(y), logits), _binary().update(y, p))
    # multiclass scores, non-contiguous (a transposed view)
    s_t = torch.from_numpy(np.ascontiguousarray(data["s"].T)).T
    assert not s_t.is_contiguous()
    for m in (sm.F1(num_classes=4), sm.AUROC(num_classes=4), sm.TopKAccuracy(num_classes=4, k=2)):
        _same(m.copy().update(torch.from_numpy(data["yc"]), s_t), m.copy().update(data["yc"], data["s"]))
    # one sample at a time: 0-d tensors
    one = sm.Accuracy()
    for yi, pi in zip(y[:20], p[:20], strict=True):
        one.update(torch.tensor(int(yi)), torch.tensor(float(pi)))
    assert one.compute() == sm.Accuracy().update(y[:20], p[:20]).compute()


def test_half_precision_scores_are_upcast(data: dict[str, np.ndarray]) -> None:
    y = data["y"]
    p16 = data["p"].astype(np.float16)
    exact = p16.astype(np.float64)
    # 0.2999 rounds down in float16: a score equal to that rounded value is below the threshold
    thr = 0.2999
    assert float(np.float16(thr)) < thr
    scores = np.concatenate([p16, np.full(5, np.float16(thr))])
    labels = np.concatenate([y, np.zeros(5, dtype=y.dtype)])
    for s in (scores, torch.from_numpy(scores)):
        got = sm.MetricSet(acc=sm.Accuracy(threshold=thr), auroc=sm.AUROC()).update(labels, s)
        ref = sm.MetricSet(acc=sm.Accuracy(threshold=thr), auroc=sm.AUROC()).update(
            labels, scores.astype(np.float64))
        _same(got, ref)
    # bfloat16 goes through the tensor's own .float() (exact), then float32 rules
    bf = torch.from_numpy(exact.astype(np.float32)).to(torch.bfloat16)
    as32 = bf.float().numpy()
    _same(_binary().update(torch.from_numpy(y), bf), _binary().update(y, as32))


class _CupyLike:
    """cupy-style: implicit conversion refused, ``.get()`` gives a host copy."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Use .get()")

    def get(self) -> np.ndarray:
        return self._a.copy()


class _JaxLike:
    """jax-style: only ``__array__``."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._a.astype(dtype) if dtype is not None else self._a


def test_duck_typed_arrays(data: dict[str, np.ndarray]) -> None:
    y, p = data["y"], data["p"]
    ref = _binary().update(y, p)
    _same(_binary().update(_CupyLike(y), _CupyLike(p)), ref)
    _same(_binary().update(_JaxLike(y), _JaxLike(p)), ref)


def test_retrieval_with_tensors() -> None:
    rng = np.random.default_rng(5)
    q = np.repeat(np.arange(50), 8)
    rel, s = rng.integers(0, 3, q.size), np.round(rng.random(q.size), 2)
    ms = sm.MetricSet(ndcg=sm.NDCG(k=5), map=sm.MAP())
    got = ms.copy().update(torch.from_numpy(rel), torch.from_numpy(s), query_ids=torch.from_numpy(q))
    _same(got, ms.copy().update(rel, s, query_ids=q))


def test_bad_tensors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="y_pred: scores must not be NaN; first NaN at index 1"):
        sm.F1().update(torch.tensor([0, 1]), torch.tensor([0.1, float("nan")], dtype=torch.float16))
    with pytest.raises(ValueError, match="y_true"):
        sm.F1().update(torch.tensor([0.5, 1.0]), torch.tensor([0.1, 0.2]))
