"""``HingeLoss`` (issue #33): against scikit-learn's ``hinge_loss`` (binary, Crammer & Singer,
weights, ``labels=`` as ``classes=``) to 1e-12, against torchmetrics' ``BinaryHingeLoss`` /
``MulticlassHingeLoss`` (``squared``, ``multiclass_mode``) to 1e-6 in float32, batch split /
merge / save-load equal to one shot, one kernel shared with ``functional.hinge_loss``, and bad
input refused with the state unchanged."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
import streammetrics.functional as F
from streammetrics._core.persistence import dumps, loads
from streammetrics.classification import hinge

skm = pytest.importorskip("sklearn.metrics")


def _decisions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Decisions with ties (a few levels) and some margins exactly at 1."""
    return np.round(rng.normal(size=shape) * 2, 1)


@pytest.mark.parametrize("seed", range(8))
def test_binary_equals_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    y = rng.choice([-1, 1], n)
    d = _decisions(rng, (n,))
    w = rng.integers(0, 4, n).astype(float) + rng.random(n) * (seed % 2)
    if w.sum() == 0:
        w[0] = 1.0
    got = sm.HingeLoss(classes=[-1, 1]).update(y, d, sample_weight=w).compute()
    assert got == pytest.approx(skm.hinge_loss(y, d, sample_weight=w), rel=1e-12, abs=1e-12)
    y01 = (y > 0).astype(int)
    assert sm.HingeLoss().update(y01, d).compute() == pytest.approx(skm.hinge_loss(y01, d), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_multiclass_crammer_singer_equals_sklearn(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    c = int(rng.integers(3, 6))
    n = int(rng.integers(1, 60))
    y = rng.integers(0, c, n)
    d = _decisions(rng, (n, c))
    w = rng.random(n) + 0.1
    got = sm.HingeLoss(c).update(y, d, sample_weight=w).compute()
    assert got == pytest.approx(skm.hinge_loss(y, d, labels=np.arange(c), sample_weight=w), rel=1e-12, abs=1e-12)
    # labels= (classes absent from y_true included): our classes=
    names = np.array(["a", "b", "c", "d", "e"][:c])
    got = sm.HingeLoss(classes=list(names)).update(names[y], d, sample_weight=w).compute()
    assert got == pytest.approx(skm.hinge_loss(names[y], d, labels=names, sample_weight=w), rel=1e-12, abs=1e-12)


def test_functional_uses_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = hinge.hinge_terms

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    import streammetrics.functional.losses as losses
    monkeypatch.setattr(losses, "hinge_terms", spy)
    F.hinge_loss([0, 1, 2], np.eye(3))
    F.hinge_loss([-1, 1], [0.5, -0.5])
    assert calls == [(3, 3), (2,)]


def _torch_value(make, y, d):  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    m = make()
    m.update(torch.from_numpy(d), torch.from_numpy(y))
    return m.compute().numpy()


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_binary_equals_torchmetrics(seed: int, squared: bool) -> None:
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(200 + seed)
    n = 50
    y = rng.integers(0, 2, n)
    d = rng.random(n).astype(np.float32)  # in [0, 1]: torchmetrics uses them as given
    want = _torch_value(lambda: tmc.BinaryHingeLoss(squared=squared), y, d)
    got = sm.HingeLoss(squared=squared).update(y, d).compute()
    assert got == pytest.approx(float(want), rel=1e-6, abs=1e-6)
    # outside [0, 1] torchmetrics takes the sigmoid first: ours on the sigmoid agrees
    raw = (rng.normal(size=n) * 3).astype(np.float32)
    want = _torch_value(lambda: tmc.BinaryHingeLoss(squared=squared), y, raw)
    sig = (1 / (1 + np.exp(-raw.astype(np.float64)))).astype(np.float32)
    assert sm.HingeLoss(squared=squared).update(y, sig).compute() == pytest.approx(float(want), rel=1e-6, abs=1e-6)
    assert sm.HingeLoss(squared=squared).update(y, raw).compute() != pytest.approx(float(want), rel=1e-3)


@pytest.mark.parametrize("mode", ["crammer-singer", "one-vs-all"])
@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_multiclass_equals_torchmetrics(seed: int, squared: bool, mode: str) -> None:
    tmc = pytest.importorskip("torchmetrics.classification")
    rng = np.random.default_rng(300 + seed)
    c, n = 4, 40
    y = rng.integers(0, c, n)
    raw = (rng.normal(size=(n, c)) * 2).astype(np.float32)

    def make():  # type: ignore[no-untyped-def]
        return tmc.MulticlassHingeLoss(c, squared=squared, multiclass_mode=mode)

    soft = np.exp(raw.astype(np.float64) - raw.max(axis=1, keepdims=True))
    soft = (soft / soft.sum(axis=1, keepdims=True)).astype(np.float32)
    for given_ in (raw, soft):  # raw: torchmetrics softmaxes it, so we compare on the softmax
        want = _torch_value(make, y, given_)
        got = sm.HingeLoss(c, squared=squared, multiclass_mode=mode).update(y, soft).compute()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if mode == "one-vs-all":
        assert np.shape(got) == (c,)


def test_one_vs_all_definition() -> None:
    y = np.array([0, 2, 1])
    d = np.array([[2.0, -1.0, 0.5], [0.0, 0.2, 3.0], [0.1, -0.4, -2.0]])
    sign = np.where(np.eye(3)[y] > 0, 1.0, -1.0)
    per = np.maximum(0, 1 - sign * d)
    w = np.array([1.0, 2.0, 0.5])
    got = sm.HingeLoss(3, multiclass_mode="one-vs-all").update(y, d, sample_weight=w).compute()
    np.testing.assert_allclose(got, (per * w[:, None]).sum(0) / w.sum(), rtol=1e-15)
    got = sm.HingeLoss(3, multiclass_mode="one-vs-all", squared=True).update(y, d).compute()
    np.testing.assert_allclose(got, (per**2).mean(0), rtol=1e-15)


CONFIGS = [
    (None, "crammer-singer", False),
    (None, "crammer-singer", True),
    (3, "crammer-singer", False),
    (3, "one-vs-all", True),
]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_split_merge_save_load_equal_one_shot(data: st.DataObject) -> None:
    c, mode, squared = data.draw(st.sampled_from(CONFIGS))
    n = data.draw(st.integers(0, 30))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    y = rng.integers(0, c or 2, n)
    d = _decisions(rng, (n,) if c is None else (n, c))
    w = rng.integers(0, 3, n).astype(float)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))

    def make() -> sm.HingeLoss:
        return sm.HingeLoss(c, squared=squared, multiclass_mode=mode)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = make().update(y, d, sample_weight=w)
        split, parts = make(), []
        for lo, hi in zip([0, *cuts], [*cuts, n], strict=True):
            split.update(y[lo:hi], d[lo:hi], sample_weight=w[lo:hi])
            parts.append(make().update(y[lo:hi], d[lo:hi], sample_weight=w[lo:hi]))
        merged = make().merge(*parts)
        back = loads(dumps(split))
        want = one.compute()
        for m in (split, merged, back):
            np.testing.assert_allclose(m.compute(), want, rtol=1e-12, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(sm.Metric.from_state_dict(one.state_dict()).compute(), want, rtol=0,
                                   atol=0, equal_nan=True)


def test_empty_is_nan_with_a_warning() -> None:
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.HingeLoss().compute())
    with pytest.warns(sm.UndefinedMetricWarning):
        got = sm.HingeLoss(3, multiclass_mode="one-vs-all").update([0], [[1.0, 2.0, 3.0]], sample_weight=[0]).compute()
    assert got.shape == (3,) and np.isnan(got).all()


@pytest.mark.parametrize(("make", "y", "d", "w", "needle"), [
    (lambda: sm.HingeLoss(), [0, 1, 1], [0.2, np.inf, 0.1], None, "y_score.*inf at index 1"),
    (lambda: sm.HingeLoss(), [0, 1, 1], [0.2, 0.3, np.nan], None, "y_score.*NaN at index 2"),
    (lambda: sm.HingeLoss(), [0, 1, 1], [0.2, -1e30, 0.1], None, "y_score.*-1e\\+30 at index 1"),
    (lambda: sm.HingeLoss(), [0, 2, 1], [0.2, 0.3, 0.1], None, "y_true.*2 at index 1"),
    (lambda: sm.HingeLoss(), [0, 1, 1], [0.2, 0.3, 0.1], [1.0, -1.0, 1.0], "sample_weight.*-1"),
    (lambda: sm.HingeLoss(3), [0, 1, 5], np.zeros((3, 3)), None, "y_true.*5 at index 2"),
    (lambda: sm.HingeLoss(3), [0, 1, 2], np.zeros((3, 2)), None, "y_score.*shape"),
])
def test_bad_input_names_the_argument_and_changes_nothing(make, y, d, w, needle) -> None:  # type: ignore[no-untyped-def]
    m = make()
    good_y = [0, 1] if m.num_classes is None else [0, 2]
    good_d = [0.3, -0.4] if m.num_classes is None else [[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]]
    m.update(good_y, good_d, sample_weight=[1.0, 2.0])
    before = m.state_dict()
    with pytest.raises(ValueError, match=needle):
        m.update(y, d, sample_weight=w)
    after = m.state_dict()
    assert before.keys() == after.keys() and before["config"] == after["config"]
    for k in ("weight", "loss"):
        np.testing.assert_array_equal(after[k], before[k])


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"squared": "yes"}, "squared"),
    ({"multiclass_mode": "ovr"}, "multiclass_mode.*'ovr'"),
    ({"num_classes": 1}, "num_classes"),
    ({"num_classes": 0}, "num_classes"),
])
def test_bad_constructor_arguments(kwargs, needle) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=needle):
        sm.HingeLoss(**kwargs)


def test_big_decisions_stay_savable() -> None:
    m = sm.HingeLoss(3, squared=True).update([0, 1], [[-2.0**64, 2.0**64, 0.0]] * 2, sample_weight=[2.0**128] * 2)
    back = loads(dumps(m))
    assert np.isfinite(back.compute()) and back.compute() == m.compute()


@pytest.mark.parametrize("squared", [False, True])
def test_a_loaded_loss_beyond_its_weight_is_refused(squared: bool) -> None:
    state = sm.HingeLoss(squared=squared).update([0, 1], [0.5, 0.5]).state_dict()
    state["weight"] = np.array([1e-320])
    with pytest.raises(ValueError, match="'loss'"):
        loads(dumps(sm.Metric.from_state_dict(state)))
