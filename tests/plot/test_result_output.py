"""Notebook and data-frame output: ``MetricSet.compute()`` is a ``MetricResults`` dict
(indexing, ``==`` with a dict and ``json.dumps`` work as for a dict), and results convert with
``to_dict()`` / ``to_pandas()`` and show as HTML tables holding their values (checked against
scikit-learn)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
metrics = pytest.importorskip("sklearn.metrics")

import streammetrics as sm  # noqa: E402
from streammetrics.calibration import CalibrationCurve, GainsCurve  # noqa: E402
from streammetrics.ranking.det import DETCurve  # noqa: E402


def data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return y, np.round(1.0 / (1.0 + np.exp(-(rng.normal(size=n) + y))), 3)


def test_metricset_results_are_a_plain_mapping():
    y, s = data()
    ms = sm.MetricSet(auroc=sm.AUROC(), acc=sm.Accuracy(), f1=sm.F1())
    res = ms.update(y, s).compute()
    expected = {"auroc": metrics.roc_auc_score(y, s), "acc": metrics.accuracy_score(y, s >= 0.5),
                "f1": metrics.f1_score(y, s >= 0.5)}
    assert isinstance(res, dict) and type(res).__name__ == "MetricResults"
    assert res["auroc"] == pytest.approx(expected["auroc"], abs=1e-12)
    plain = {k: res[k] for k in res}
    assert res == plain and plain == res and res == dict(res)
    assert json.loads(json.dumps(res)) == plain
    assert res.to_dict() == plain and type(res.to_dict()) is dict
    frame = res.to_pandas()
    assert list(frame.index) == ["auroc", "acc", "f1"]
    np.testing.assert_allclose(frame["value"].to_numpy(float), [expected[k] for k in frame.index], atol=1e-12)
    html = res._repr_html_()
    for k, v in expected.items():
        assert f"<td>{k}</td><td>{v:.6g}</td>" in html


def test_metricset_results_with_curves_and_per_class_values():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    p = rng.dirichlet([1, 1, 1], 300)
    ms = sm.MetricSet(recall=sm.Recall(3, average=None), roc=sm.ROCCurve(3), cm=sm.ConfusionMatrix(3))
    res = ms.update(y, p).compute()
    out = json.loads(json.dumps(res.to_dict()))
    np.testing.assert_allclose(out["recall"], metrics.recall_score(y, p.argmax(1), average=None), atol=1e-12)
    assert out["cm"] == metrics.confusion_matrix(y, p.argmax(1)).tolist()
    fpr, tpr, _ = metrics.roc_curve(y == 2, p[:, 2], drop_intermediate=False)
    np.testing.assert_allclose(out["roc"][2]["fpr"], fpr, atol=1e-15)
    np.testing.assert_allclose(out["roc"][2]["tpr"], tpr, atol=1e-15)
    rows = dict(res.rows())
    assert rows["recall[1]"] == pytest.approx(metrics.recall_score(y == 1, p.argmax(1) == 1))
    assert f"AUC = {metrics.roc_auc_score(y == 0, p[:, 0]):.6g}" in rows["roc[0]"]
    assert "roc[2]" in res.to_pandas().index and "ROCCurveResult" in res._repr_html_()


@pytest.mark.parametrize("kind", ["roc", "pr", "det", "calibration", "gains"])
def test_curve_to_dict_to_pandas_and_html(kind):
    y, s = data(seed=2)
    if kind == "roc":
        r = sm.ROCCurve().update(y, s).compute()
        ref = dict(zip(("fpr", "tpr", "thresholds"), metrics.roc_curve(y, s, drop_intermediate=False),
                       strict=True))
        headline = f"AUC = {metrics.roc_auc_score(y, s):.6g}"
    elif kind == "pr":
        r = sm.PRCurve().update(y, s).compute()
        pr, rc, _ = metrics.precision_recall_curve(y, s)
        ref = {"precision": pr[:-1][::-1], "recall": rc[:-1][::-1]}
        headline = f"AP = {metrics.average_precision_score(y, s):.6g}"
    elif kind == "det":
        r = DETCurve().update(y, s).compute()
        ref = dict(zip(("fpr", "fnr", "thresholds"), metrics.det_curve(y, s), strict=True))
        headline = "DETCurveResult"
    elif kind == "calibration":
        from sklearn.calibration import calibration_curve

        r = CalibrationCurve(n_bins=6).update(y, s).compute()
        ref = dict(zip(("prob_true", "prob_pred"), calibration_curve(y, s, n_bins=6), strict=True))
        headline = "ECE = "
    else:
        r = GainsCurve().update(y, s).compute()
        ref = {"thresholds": np.unique(s)[::-1]}
        headline = "gain at top 10% = "
    d = r.to_dict()
    frame = r.to_pandas()
    assert list(frame.columns) == list(d)
    for col, values in ref.items():  # to_dict(): a non-finite value (the ROC's inf threshold) is None
        values = np.asarray(values, dtype=float)
        np.testing.assert_allclose(np.array(d[col], dtype=float), np.where(np.isfinite(values), values, np.nan),
                                   atol=1e-12)
        np.testing.assert_allclose(frame[col].to_numpy(float), values, atol=1e-12)
    html = r._repr_html_()
    rows = len(frame) + 1 if len(frame) <= 10 else 10 + 2  # header (+ a "..." row when cut)
    assert headline in html and html.count("<tr>") == rows
    json.dumps(d, allow_nan=False)


def test_bounded_curve_output_carries_the_bounds():
    y, s = data(3000, seed=4)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = sm.ROCCurve(thresholds=10).update(y, s).compute()
    assert not all(r.to_dict()["exact"])
    lo, hi = r.area_bounds()
    assert f"AUC bounds = ({lo}, {hi})" in r.summary_text()


def test_report_output_matches_scikit_learn():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 500)
    pred = np.where(rng.random(500) < 0.6, y, rng.integers(0, 3, 500))
    report = sm.ClassificationReport(3).update(y, pred).compute()
    ref = metrics.classification_report(y, pred, output_dict=True)
    frame = report.to_pandas()
    for row in ("0", "1", "2", "macro avg", "weighted avg"):
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score"),
                             ("support", "support")):
            assert frame.loc[row, ours] == pytest.approx(ref[row][theirs], abs=1e-12)
    assert frame.loc["accuracy", "f1"] == pytest.approx(ref["accuracy"], abs=1e-12)
    assert list(frame.index) == ["0", "1", "2", "accuracy", "micro avg", "macro avg", "weighted avg"]
    assert json.loads(json.dumps(report.to_dict())) == report.to_dict() == dict(report)
    html = report._repr_html_()
    assert f"<td>{ref['macro avg']['f1-score']:.6g}</td>" in html and html.count("<tr>") == 8
