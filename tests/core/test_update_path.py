"""The update path of the score states: a batch is converted and checked once, in one step
(``_core.validation.score_batch``), then split; ``streammetrics.functional`` hands over the
arrays it has checked already (``checked_batch`` / ``Metric._update_checked``) so that no array
is converted or checked twice (issue #29, "The update path bounces")."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import streammetrics as sm
from streammetrics import functional as F
from streammetrics._core import validation
from streammetrics._core.validation import ScoreBatch, checked_batch
from streammetrics._scores.batches import ScoreBatches
from streammetrics._scores.exact.buffer import SortedScores

#: The conversion and the checks a score batch goes through.
CHECKS = ("as_numpy", "check_weights", "weight_bounds", "check_binary_labels", "check_class_labels",
          "check_scores")


@contextmanager
def counted() -> Iterator[Counter[tuple[str, int]]]:
    """Count calls of :data:`CHECKS` by (name, id of the array checked), wherever the package
    imported them (module globals patched in every loaded streammetrics module)."""
    calls: Counter[tuple[str, int]] = Counter()
    patched: list[tuple[Any, str, Any]] = []
    for name in CHECKS:
        original = getattr(validation, name)

        def counting(x: Any, *args: Any, _f: Any = original, _n: str = name, **kwargs: Any) -> Any:
            calls[(_n, id(x))] += 1
            return _f(x, *args, **kwargs)

        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("streammetrics") and \
                    getattr(mod, name, None) is original:
                patched.append((mod, name, original))
                setattr(mod, name, counting)
    try:
        yield calls
    finally:
        for mod, name, original in patched:
            setattr(mod, name, original)


def _data(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.random(n) < 0.3).astype(np.int64), rng.random(n).round(2), rng.random(n) + 0.5


def test_the_exact_state_defines_no_alias_of_prepare() -> None:
    """``SortedScores.prepare`` is the batch step every score state shares, not an alias."""
    assert "prepare" not in SortedScores.__dict__
    assert SortedScores.prepare is ScoreBatches.prepare


def test_update_converts_and_checks_each_array_once() -> None:
    y, s, w = _data()
    with counted() as calls:
        sm.AUROC().update(y, s, sample_weight=w)
    assert calls == Counter({("as_numpy", id(y)): 1, ("as_numpy", id(s)): 1, ("as_numpy", id(w)): 1,
                             ("check_weights", id(w)): 1, ("weight_bounds", id(w)): 1,
                             ("check_binary_labels", id(y)): 1, ("check_scores", id(s)): 1})


@pytest.mark.parametrize("call", ["roc_auc_score", "average_precision_score", "roc_curve",
                                  "precision_recall_curve", "det_curve"])
def test_functional_hands_over_checked_arrays(call: str) -> None:
    """The function converts each argument once; the accumulator converts none again and checks
    only the weights' bounds."""
    y, s, w = _data()
    with counted() as calls:
        getattr(F, call)(y, s, sample_weight=w)
    assert calls[("as_numpy", id(s))] == 1  # the function's own conversion
    assert not [k for k in calls if k[0] in ("check_weights", "check_binary_labels", "check_scores")]
    assert sum(v for k, v in calls.items() if k[0] == "weight_bounds") == 1
    assert sum(calls.values()) == 2


@pytest.mark.parametrize("bad", [-1.0, 2.0**200])
def test_functional_weights_keep_the_bounds_of_update(bad: float) -> None:
    y, s, w = _data()
    w[7] = bad
    with pytest.raises(ValueError) as direct:
        sm.AUROC().update(y, s, sample_weight=w)
    with pytest.raises(ValueError) as functional:
        F.roc_auc_score(y, s, sample_weight=w)
    assert str(functional.value) == str(direct.value)
    assert "first invalid value" in str(direct.value) and "at index 7" in str(direct.value)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("max_bytes", [None, 4096])
def test_a_checked_batch_gives_the_state_update_gives(dtype: Any, max_bytes: int | None) -> None:
    rng = np.random.default_rng(3)
    n, c = 300, 4
    s1 = rng.random(n).astype(dtype)
    sc = rng.random((n, c)).astype(dtype)
    y1 = rng.random(n) < 0.4
    yc = rng.integers(0, c, n)
    ym = (rng.random((n, c)) < 0.5).astype(np.int8)
    w = rng.random(n)
    w[::5] = 0.0
    cases = [(sm.AUROC, {}, y1, s1), (sm.AUROC, {"num_classes": c}, yc, sc),
             (sm.AUROC, {"num_classes": c, "multilabel": True}, ym, sc),
             (sm.AveragePrecision, {}, y1, s1)]
    for cls, kw, y, s in cases:
        for weights in (None, w):
            direct = cls(max_bytes=max_bytes, **kw).update(y, s, sample_weight=weights)
            handed = cls(max_bytes=max_bytes, **kw)._update_checked(checked_batch(y, s, weights))
            assert handed._state.equals(direct._state)
            assert np.array_equal(np.asarray(handed.compute()), np.asarray(direct.compute()), equal_nan=True)


def test_a_rejected_batch_is_found_before_the_split() -> None:
    """The checks come before anything is split or stored: a bad score leaves the state as it
    was, and the batch object carries the checked arrays only."""
    y, s, _ = _data()
    m = sm.AUROC().update(y, s)
    before = m.state_dict()
    bad = s.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match=r"y_score: scores must not be NaN; first NaN at index 5"):
        m.update(y, bad)
    after = m.state_dict()
    assert before.keys() == after.keys()
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before if k != "config")
    batch = validation.score_batch(y, s, None, "binary", 1, None)
    assert type(batch) is ScoreBatch and batch.w is None and batch.y is y and batch.s is s


# -- the label step: the metric's, in front of a plain state (no class swapped at run time) ------
def test_label_step_is_the_metrics_and_the_state_stays_plain() -> None:
    from streammetrics._counts.confusion_counts import ConfusionCounts

    auroc = sm.AUROC(classes=["neg", "pos"])
    f1 = sm.F1(classes=["a", "b", "c"], average="macro")
    assert type(auroc._state) is SortedScores and type(f1._state) is ConfusionCounts
    assert auroc._codec is not None and sm.AUROC()._codec is None
    auroc.update(["pos", "neg", "pos", "neg"], [0.9, 0.2, 0.4, 0.6])
    assert auroc.compute() == 0.75
    before = auroc.state_dict()
    with pytest.raises(ValueError, match=r"y_true: unknown label 'maybe' at index 1"):
        auroc.update(["pos", "maybe"], [0.1, 0.2])
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(v)) for k, v in auroc.state_dict().items())
    assert not any(type(m._state).__name__.startswith("Labelled") for m in (auroc, f1))


def test_metricset_shares_a_state_only_between_equal_label_steps() -> None:
    ms = sm.MetricSet(a=sm.AUROC(classes=[0, 1]), b=sm.AveragePrecision(classes=[0, 1]), c=sm.AUROC())
    assert ms.groups == [["a", "b"], ["c"]]
    y, s = [1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6]
    ms.update(y, s)
    assert ms.compute()["a"] == ms.compute()["c"] == sm.AUROC().update(y, s).compute()
    text = sm.MetricSet(a=sm.AUROC(classes=["n", "p"]), b=sm.AveragePrecision(classes=["n", "p"]))
    text.update(["p", "n", "p", "n"], s)
    assert text.compute()["a"] == 0.75


def test_windows_store_class_codes_through_the_wrapped_metrics_label_step() -> None:
    w = sm.Window(sm.AUROC(classes=["n", "p"]), size=3)
    assert not type(w._state).__name__.startswith("Labelled")
    w.update(["p", "n", "p", "n"], [0.9, 0.2, 0.4, 0.6])  # keeps the last three rows
    assert w.compute() == sm.AUROC().update([0, 1, 0], [0.2, 0.4, 0.6]).compute()
    with pytest.raises(ValueError, match="unknown label"):
        w.update(["x"], [0.5])


def _labels(kind: str, n: int = 300, seed: int = 1) -> tuple[Any, Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.random(n) + 0.5
    if kind == "binary":
        return rng.integers(0, 2, n), rng.integers(0, 2, n), w
    if kind == "multiclass":
        return rng.choice(["a", "b", "c", "d"], n), rng.choice(["a", "b", "c", "d"], n), w
    return rng.integers(0, 2, (n, 4)), rng.integers(0, 2, (n, 4)), w


@pytest.mark.parametrize("kind", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("call, average", [("f1_score", "macro"), ("precision_score", "weighted"),
                                           ("recall_score", None), ("fbeta_score", "micro"),
                                           ("jaccard_score", "macro")])
def test_functional_confusion_functions_hand_over_checked_labels(kind: str, call: str, average: Any) -> None:
    """The confusion functions map and check the labels once (scikit-learn's target rules); the
    accumulators take the checked batch (``checked_labels``): no label or weight is checked
    again, only the weights' bounds. The values are the ones ``update`` gives."""
    y, p, w = _labels(kind)
    kw: dict[str, Any] = {"beta": 2.0} if call == "fbeta_score" else {}
    avg = "binary" if kind == "binary" else average
    with counted() as calls:
        got = getattr(F, call)(y, p, average=avg, sample_weight=w, **kw)
    assert not [k for k in calls if k[0] in ("check_weights", "check_binary_labels", "check_class_labels")]
    assert sum(v for k, v in calls.items() if k[0] == "weight_bounds") == 1
    skm = pytest.importorskip("sklearn.metrics")
    np.testing.assert_allclose(got, getattr(skm, call)(y, p, average=avg, sample_weight=w, **kw),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [-1.0, 2.0**200])
def test_functional_confusion_weights_keep_the_bounds_of_update(bad: float) -> None:
    y, p, w = _labels("multiclass")
    w[5] = bad
    codes = {c: i for i, c in enumerate("abcd")}
    with pytest.raises(ValueError) as direct:
        sm.F1(4).update(np.array([codes[c] for c in y]), np.array([codes[c] for c in p]), sample_weight=w)
    with pytest.raises(ValueError) as functional:
        F.f1_score(y, p, average="macro", sample_weight=w)
    assert str(functional.value) == str(direct.value)


def test_a_checked_label_batch_gives_the_state_update_gives() -> None:
    from streammetrics._core.validation import checked_labels

    rng = np.random.default_rng(3)
    for k, multilabel in ((2, False), (5, False), (3, True)):
        shape = (60, k) if multilabel else (60,)
        y, p = rng.integers(0, 2 if multilabel else k, shape), rng.integers(0, 2 if multilabel else k, shape)
        w = rng.random(60)
        for weights in (None, w):
            a = sm.ConfusionMatrix(None if k == 2 and not multilabel else k, multilabel=multilabel)
            b = a.copy()
            a.update(y, p, sample_weight=weights)
            b._update_checked(checked_labels(y if k > 2 or multilabel else y.astype(bool),
                                             p if k > 2 or multilabel else p.astype(bool), weights))
            assert sm.dumps(a) == sm.dumps(b)
