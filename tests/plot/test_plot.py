"""``streammetrics.plot`` and the results' ``.plot``: each line holds exactly the curve's arrays
(checked against scikit-learn's curves), its label the metric value (scikit-learn's area or the
library's ECE), bounded results draw their certified envelope (which holds scikit-learn's exact
curve), ``ax=`` is drawn on, multiclass draws one line per class; the CLI's ``--plot`` draws the
same artists (checked without reading an image); ``import streammetrics`` loads no matplotlib."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.path import Path  # noqa: E402

metrics = pytest.importorskip("sklearn.metrics")
calibration = pytest.importorskip("sklearn.calibration")

import streammetrics as sm  # noqa: E402
from streammetrics.calibration import CalibrationCurve, CalibrationError, GainsCurve, LiftCurve  # noqa: E402
from streammetrics.plot import plot_confusion_matrix, plot_curves  # noqa: E402
from streammetrics.ranking.det import DETCurve  # noqa: E402


def data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(1.0 / (1.0 + np.exp(-(rng.normal(size=n) + 1.1 * y))), 3)
    return y, s


def multiclass(n: int = 500, k: int = 3, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k))
    z[np.arange(n), y] += 1.0
    p = np.exp(z)
    return y, p / p.sum(axis=1, keepdims=True)


def xy(line) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


def test_roc_line_is_the_curve_and_label_holds_the_auc():
    y, s = data()
    fig, ax = plt.subplots()
    disp = sm.ROCCurve().update(y, s).compute().plot(ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig and disp.line_ in ax.lines
    fpr, tpr, _ = metrics.roc_curve(y, s, drop_intermediate=False)
    x, yy = xy(disp.line_)
    np.testing.assert_allclose(x, fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(yy, tpr, rtol=0, atol=1e-15)
    assert f"AUC = {metrics.roc_auc_score(y, s):.3f}" in disp.line_.get_label()
    assert disp.envelopes_ == []


def test_pr_line_is_the_curve_and_label_holds_the_ap():
    y, s = data(seed=2)
    disp = sm.PRCurve().update(y, s).compute().plot()
    precision, recall, _ = metrics.precision_recall_curve(y, s)
    x, yy = xy(disp.line_)
    np.testing.assert_allclose(x, recall[:-1][::-1], atol=1e-15)
    np.testing.assert_allclose(yy, precision[:-1][::-1], atol=1e-15)
    assert disp.line_.get_drawstyle() == "steps-pre"
    assert f"AP = {metrics.average_precision_score(y, s):.3f}" in disp.labels_[0]
    prevalence = y.mean()
    assert np.allclose(disp.chance_level_.get_ydata(), prevalence)


def test_det_line_is_the_curve():
    y, s = data(seed=3)
    disp = DETCurve().update(y, s).compute().plot(digits=4)
    fpr, fnr, _ = metrics.det_curve(y, s)
    x, yy = xy(disp.line_)
    np.testing.assert_allclose(x, fpr, atol=1e-15)
    np.testing.assert_allclose(yy, fnr, atol=1e-15)
    assert f"AUC = {metrics.roc_auc_score(y, s):.4f}" in disp.labels_[0]


def _inside(poly, x: np.ndarray, y: np.ndarray, eps: float = 1e-9) -> np.ndarray:
    path = Path(poly.get_xy())
    pts = np.column_stack([x, y])
    return path.contains_points(pts, radius=eps) | path.contains_points(pts, radius=-eps)


@pytest.mark.parametrize("kind", ["roc", "pr", "det"])
def test_bounded_curves_draw_their_certified_envelope(kind):
    y, s = data(5000, seed=11)
    cls = {"roc": sm.ROCCurve, "pr": sm.PRCurve, "det": DETCurve}[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = cls(thresholds=12).update(y, s).compute()
    disp = result.plot()
    assert len(disp.envelopes_) == 1
    roc = sm.ROCCurveResult(result.counts) if kind == "det" else result
    (lx, ly), (ux, uy) = roc.envelope()
    if kind == "det":
        ly, uy = 1.0 - ly, 1.0 - uy
    verts = disp.envelopes_[0].get_xy()
    np.testing.assert_array_equal(verts[: len(lx), 0], lx)
    np.testing.assert_array_equal(verts[: len(lx), 1], ly)
    np.testing.assert_array_equal(verts[len(lx): len(lx) + len(ux), 0], ux[::-1])
    lo, hi = result.area_bounds() if kind != "det" else roc.area_bounds()
    assert f"in [{lo:.3f}, {hi:.3f}]" in disp.labels_[0] and lo < hi
    if kind == "roc":  # scikit-learn's exact curve lies in the drawn region
        ex, ey, _ = metrics.roc_curve(y, s, drop_intermediate=False)
    elif kind == "pr":
        p, r, _ = metrics.precision_recall_curve(y, s)
        ex, ey = r[:-1], p[:-1]
    else:
        ex, ey, _ = metrics.det_curve(y, s)
    assert _inside(disp.envelopes_[0], ex, ey).all()


def test_multiclass_draws_one_line_per_class_named_by_classes():
    y, p = multiclass()
    names = ["cat", "dog", "eel"]
    labels = np.array(names)[y]
    disp = sm.ROCCurve(classes=names).update(labels, p).plot()
    assert len(disp.lines_) == 3 and isinstance(disp.line_, list)
    for k, line in enumerate(disp.lines_):
        fpr, tpr, _ = metrics.roc_curve(y == k, p[:, k], drop_intermediate=False)
        np.testing.assert_allclose(xy(line)[0], fpr, atol=1e-15)
        np.testing.assert_allclose(xy(line)[1], tpr, atol=1e-15)
        assert line.get_label().startswith(names[k])
        assert f"{metrics.roc_auc_score(y == k, p[:, k]):.3f}" in line.get_label()


def test_plot_curves_overlays_a_mapping_on_the_given_axes():
    (y1, s1), (y2, s2) = data(seed=4), data(seed=5)
    r1, r2 = sm.ROCCurve().update(y1, s1).compute(), sm.ROCCurve().update(y2, s2).compute()
    fig, ax = plt.subplots()
    disp = plot_curves({"slice a": r1, "slice b": r2}, ax=ax, chance_level=False)
    assert disp.ax_ is ax and [line.get_label() for line in ax.lines] == disp.labels_
    assert disp.labels_[0].startswith("slice a") and f"{metrics.roc_auc_score(y2, s2):.3f}" in disp.labels_[1]
    with pytest.raises(ValueError, match="results: curves of one kind"):
        plot_curves({"a": r1, "b": sm.PRCurve().update(y1, s1).compute()})
    with pytest.raises(ValueError, match="results: no curve"):
        plot_curves({})


def test_reliability_diagram_counts_and_ece():
    y, s = data(seed=6)
    m = CalibrationCurve(n_bins=8).update(y, s)
    fig, ax = plt.subplots()
    disp = m.plot(ax=ax)
    prob_true, prob_pred = calibration.calibration_curve(y, s, n_bins=8)
    x, yy = xy(disp.line_)
    np.testing.assert_allclose(x, prob_pred, atol=1e-12)
    np.testing.assert_allclose(yy, prob_true, atol=1e-12)
    heights = [b.get_height() for b in disp.bars_]
    np.testing.assert_array_equal(heights, m.compute().counts)
    assert sum(heights) == len(y) and disp.counts_ax_.figure is fig
    ece = CalibrationError(n_bins=8, norm="l1").update(y, s).compute()
    assert f"ECE = {ece:.3f}" in disp.labels_[0]


def test_multiclass_reliability_draws_one_line_per_class():
    y, p = multiclass()
    disp = CalibrationCurve(n_bins=5, num_classes=3).update(y, p).plot()
    assert len(disp.lines_) == 3 and len(disp.bars_) == 3
    for k, line in enumerate(disp.lines_):
        prob_true, prob_pred = calibration.calibration_curve(y == k, p[:, k], n_bins=5)
        np.testing.assert_allclose(xy(line)[0], prob_pred, atol=1e-12)
        np.testing.assert_allclose(xy(line)[1], prob_true, atol=1e-12)


@pytest.mark.parametrize("cls", [GainsCurve, LiftCurve])
def test_gains_and_lift(cls):
    y, s = data(seed=7)
    r = cls().update(y, s).compute()
    disp = cls().update(y, s).plot()
    order = np.argsort(-s, kind="stable")
    frac = np.arange(1, len(y) + 1) / len(y)
    captured = np.cumsum(y[order]) / y.sum()
    last = np.r_[s[order][1:] != s[order][:-1], True]  # one point per distinct score
    x, yy = xy(disp.line_)
    if cls is GainsCurve:
        np.testing.assert_allclose(x, np.r_[0.0, frac[last]])
        np.testing.assert_allclose(yy, np.r_[0.0, captured[last]])
        assert f"gain at top 10% = {r.at_fraction(0.1)[0]:.3f}" in disp.labels_[0]
    else:
        np.testing.assert_allclose(x, frac[last])
        np.testing.assert_allclose(yy, captured[last] / frac[last])
        assert f"lift at top 10% = {r.at_fraction(0.1)[1]:.3f}" in disp.labels_[0]
    with pytest.raises(ValueError, match="kind"):
        r.plot(kind="roc")


def test_confusion_matrix_heatmap():
    y, p = multiclass(seed=8)
    pred = p.argmax(axis=1)
    names = ["a", "b", "c"]
    m = sm.ConfusionMatrix(classes=names).update(np.array(names)[y], np.array(names)[pred])
    fig, ax = plt.subplots()
    disp = m.plot(ax=ax)
    expected = metrics.confusion_matrix(y, pred)
    np.testing.assert_array_equal(disp.im_.get_array(), expected)
    assert disp.ax_ is ax and disp.text_.shape == (3, 3)
    assert [t.get_text() for t in disp.text_.ravel()] == [f"{v:.4g}" for v in expected.ravel()]
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert isinstance(m.compute(), np.ndarray)  # compute() stays an array
    with pytest.raises(ValueError, match="matrix: must be a square"):
        plot_confusion_matrix(np.zeros((3, 2, 2)))  # multilabel: plot_multilabel_confusion


def test_report_heatmap():
    y, p = multiclass(seed=9)
    pred = p.argmax(axis=1)
    m = sm.ClassificationReport(3).update(y, pred)
    disp = m.plot()
    ref = metrics.classification_report(y, pred, output_dict=True)
    rows = ["0", "1", "2", "micro avg", "macro avg", "weighted avg"]
    got = disp.im_.get_array()
    for i, row in enumerate(rows):
        sk_row = ref.get(row, ref["accuracy"])  # micro avg = accuracy for multiclass
        for j, (ours, theirs) in enumerate([("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")]):
            expected = sk_row if isinstance(sk_row, float) else sk_row[theirs]
            assert got[i, j] == pytest.approx(expected, abs=1e-12), (row, ours)
    assert f"accuracy = {metrics.accuracy_score(y, pred):.3f}" in disp.ax_.get_title()


def test_import_streammetrics_loads_no_matplotlib_nor_pandas():
    code = ("import sys, streammetrics, streammetrics.plot, streammetrics.classification.report; "
            "print('matplotlib' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
