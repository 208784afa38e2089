"""Errors that point to the fix, seen by a new user in the first hour: a misspelt keyword names
the class called (not a private base) and, on Python >= 3.13, the closest parameter; text labels without
``classes=`` say so; arguments in torchmetrics' order (scores first) are recognised; an (n, 1)
column of labels or scores is taken as scikit-learn takes it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import streammetrics as sm

sk = pytest.importorskip("sklearn.metrics")

KW_CLASSES = [sm.F1, sm.Precision, sm.Recall, sm.Accuracy, sm.AUROC, sm.ROCCurve, sm.PRCurve,
              sm.AveragePrecision, sm.LogLoss, sm.CalibrationError]


@pytest.mark.parametrize("cls", KW_CLASSES, ids=lambda c: c.__name__)
def test_misspelt_keyword_names_the_public_class_and_suggests(cls: type) -> None:
    # Every public class spells its constructor out (tests/core/test_signatures.py), so Python's
    # own binding error names the class called, not a private base; Python >= 3.13 adds the
    # closest parameter (mypy and IDEs see the signature on every version).
    with pytest.raises(TypeError) as info:
        cls(num_clases=3)
    text = str(info.value)
    assert text.startswith(f"{cls.__name__}.__init__() got an unexpected keyword argument 'num_clases'")
    if sys.version_info >= (3, 13):
        assert "Did you mean 'num_classes'?" in text


def test_too_many_positional_arguments_name_the_class() -> None:
    with pytest.raises(TypeError, match=r"^AUROC\.__init__\(\) takes from 1 to 2 positional arguments"):
        sm.AUROC(3, 4)  # type: ignore[misc]


def test_errors_raised_inside_a_constructor_are_unchanged() -> None:
    with pytest.raises(ValueError, match="^average: "):
        sm.F1(3, average="macr")


@pytest.mark.parametrize("make", [sm.Recall, sm.AUROC, lambda: sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC())])
def test_text_labels_without_classes_say_how(make) -> None:
    m = make()
    before = sm.dumps(m)
    with pytest.raises(ValueError, match=r"first value 'cat' at index 0 \(text labels need their classes: "
                                         r"pass classes=\[\.\.\.\]"):
        m.update(["cat", "dog", "cat"], [0.2, 0.8, 0.3])
    assert sm.dumps(m) == before


def test_text_labels_with_classes_are_taken() -> None:
    m = sm.Recall(classes=["cat", "dog"], pos_label="dog").update(["cat", "dog", "dog"], ["cat", "dog", "cat"])
    assert m.compute() == sk.recall_score(["cat", "dog", "dog"], ["cat", "dog", "cat"], pos_label="dog")


@pytest.mark.parametrize(("make", "args"), [
    (sm.AUROC, ([0.2, 0.8, 0.3], [0, 1, 0])),
    (sm.F1, ([0.2, 0.8, 0.3, 0.6], [0, 1, 0, 1])),
    (sm.LogLoss, ([0.2, 0.8, 0.3], [0, 1, 0])),
    (lambda: sm.F1(3), ([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]], [2, 0])),
    (lambda: sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision()), ([0.2, 0.8, 0.3], [0, 1, 0])),
])
def test_torchmetrics_order_is_recognised(make, args) -> None:
    m = make()
    before = sm.dumps(m)
    with pytest.raises(ValueError, match="the arguments look swapped; streammetrics takes update"):
        m.update(*args)
    assert sm.dumps(m) == before


def test_no_swap_hint_when_both_hold_scores() -> None:
    with pytest.raises(ValueError) as info:
        sm.AUROC().update([0.2, 0.8], [0.3, 0.9])
    assert "swapped" not in str(info.value)


ONE_COLUMN = [
    (sm.AUROC, sk.roc_auc_score, True),
    (sm.AveragePrecision, sk.average_precision_score, True),
    (sm.LogLoss, sk.log_loss, True),
    (sm.BrierScore, sk.brier_score_loss, True),
    (sm.F1, sk.f1_score, False),
    (sm.Accuracy, sk.accuracy_score, False),
]


@pytest.mark.parametrize(("cls", "oracle", "scores"), ONE_COLUMN, ids=lambda x: getattr(x, "__name__", ""))
def test_one_column_labels_and_scores_are_taken_as_sklearn_takes_them(cls, oracle, scores) -> None:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 50)
    p = np.round(rng.random(50), 2) if scores else rng.integers(0, 2, 50)
    ours = cls().update(y[:, None], p[:, None]).compute()
    assert ours == pytest.approx(oracle(y[:, None], p[:, None]), abs=1e-12)
    assert ours == cls().update(y, p).compute()


def test_two_columns_stay_refused_for_binary() -> None:
    m = sm.AUROC().update([0, 1], [0.1, 0.9])
    before = sm.dumps(m)
    with pytest.raises(ValueError, match=r"y_score: expected shape \(2,\) like y_true, got \(2, 2\)"):
        m.update([0, 1], [[0.1, 0.2], [0.9, 0.3]])
    assert sm.dumps(m) == before
