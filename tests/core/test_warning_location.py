"""Warnings point at the user's line (this file), not at library lines, however deep inside
the library they are raised: direct calls, MetricSet, wrappers, reports, Dask (issue 12)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import streammetrics as sm
from streammetrics import UndefinedMetricWarning

PACKAGE = str(Path(sm.__file__).resolve().parent)


def caught(fn: Callable[[], Any]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    assert w, "expected a warning"
    return w


def assert_here(fn: Callable[[], Any]) -> None:
    for w in caught(fn):
        assert issubclass(w.category, UndefinedMetricWarning)
        assert w.filename == __file__, f"{w.message} attributed to {w.filename}:{w.lineno}"


UNPREDICTED = ([0, 1, 2, 2], [0, 0, 2, 2])  # class 1 is never predicted
ONE_CLASS = ([1, 1], [0.2, 0.9])

# name -> (an empty metric, a batch on which its value is undefined)
CASES: dict[str, tuple[Callable[[], sm.Metric], tuple[list, list]]] = {
    "precision zero division": (lambda: sm.Precision(num_classes=3, average=None), UNPREDICTED),
    "f1 macro": (lambda: sm.F1(num_classes=3), ([0, 2], [0, 2])),  # class 1 absent
    "binary precision": (lambda: sm.Precision(), ([1, 0], [0, 0])),
    "auroc one class": (lambda: sm.AUROC(), ONE_CLASS),
    "average precision no positive": (lambda: sm.AveragePrecision(), ([0, 0], [0.2, 0.9])),
    "binned auroc": (lambda: sm.AUROC(thresholds=11), ONE_CLASS),
    "report": (lambda: sm.ClassificationReport(3), UNPREDICTED),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_compute(name):
    make, batch = CASES[name]
    metric = make().update(*batch)
    assert_here(lambda: metric.compute())


@pytest.mark.parametrize("name", sorted(CASES))
def test_through_metricset_and_wrappers(name):
    make, batch = CASES[name]
    ms = sm.MetricSet(m=make()).update(*batch)
    window = sm.Window(make(), size=10).update(*batch)
    decayed = sm.Decayed(make(), half_life=5).update(*batch)
    both = sm.MetricSet(w=sm.Window(make(), size=10), d=sm.Decayed(make(), half_life=5)).update(*batch)
    for metric in (ms, window, decayed, both):
        assert_here(lambda: metric.compute())  # noqa: B023 - called at once


def test_multiclass_auroc():
    auc = sm.AUROC(num_classes=3, average=None).update([0, 0, 2], np.eye(3)[[0, 1, 2]] * 0.5 + 0.1)
    assert_here(lambda: auc.compute())
    assert_here(lambda: sm.MetricSet(a=auc.copy()).compute())


def test_delayed_labels_and_a_set_of_several_members():
    d = sm.DelayedLabels(sm.MetricSet(p=sm.Precision(), auc=sm.AUROC()), capacity=10, batch_size=4)
    d.predict(["a", "b"], [0.1, 0.2])
    d.label("a", 1)
    d.label("b", 1)
    assert_here(lambda: d.compute())
    assert len(caught(lambda: d.compute())) == 2  # Precision and AUROC, both here


def test_best_threshold_retrieval_and_dask():
    roc = sm.ROCCurve().update([0, 1, 1], [0.9, 0.1, 0.3]).compute()  # precision never 1
    w = caught(lambda: roc.best_threshold("recall_at_precision", value=1.0))
    assert all(x.filename == __file__ for x in w)
    assert_here(lambda: sm.MAP().compute())
    assert_here(lambda: sm.SetPrecision(average="micro").compute())
    assert_here(lambda: sm.MetricSet(m=sm.MAP(), n=sm.NDCG()).compute())
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    from streammetrics.dask import evaluate

    ddf = dd.from_pandas(pd.DataFrame({"y": [1, 1, 1], "p": [0.9, 0.8, 0.1]}), npartitions=2)
    assert_here(lambda: evaluate(ddf, sm.AUROC(), label="y", score="p"))


def test_library_frames_only_are_skipped():
    """A warning raised from a user's own subclass points at the user's code too."""
    from streammetrics._core.warn import warn

    def user_code():
        warn("from the user's own frame", UndefinedMetricWarning)

    w = caught(user_code)
    assert w[0].filename == __file__ and w[0].lineno == user_code.__code__.co_firstlineno + 1
    assert PACKAGE not in w[0].filename
