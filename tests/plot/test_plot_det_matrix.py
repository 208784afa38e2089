"""DET curves on probit axes and multilabel confusion matrices (Agg backend).

The DET display is checked against scikit-learn's ``DetCurveDisplay`` drawn on an axes of the
same size: every point of our line (whose data stay the rates) lands on the same display pixel
as scikit-learn's (drawn as ``norm.ppf`` of the rates), and the ticks are scikit-learn's percent
ticks at the same places. A bounded DET draws the image of its certified region (which holds
scikit-learn's exact curve, checked in display coordinates). The multilabel panels are checked
against ``multilabel_confusion_matrix``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.path import Path  # noqa: E402

metrics = pytest.importorskip("sklearn.metrics")
stats = pytest.importorskip("scipy.stats")

import streammetrics as sm  # noqa: E402
from streammetrics.plot import plot_curves, plot_multilabel_confusion  # noqa: E402
from streammetrics.ranking.det import DETCurve  # noqa: E402


def data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return y, np.round(1.0 / (1.0 + np.exp(-(rng.normal(size=n) + 1.1 * y))), 3)


def pixels(ax, x, y) -> np.ndarray:
    return ax.transData.transform(np.column_stack([np.asarray(x, float), np.asarray(y, float)]))


def sklearn_det_axes(fpr, fnr):
    fig, ax = plt.subplots()
    metrics.DetCurveDisplay(fpr=fpr, fnr=fnr).plot(ax=ax)
    fig.canvas.draw()
    return ax


def test_det_is_drawn_on_scikit_learns_probit_axes():
    y, s = data(seed=3)
    fig, ax = plt.subplots()
    disp = DETCurve().update(y, s).compute().plot(ax=ax, digits=4)
    fig.canvas.draw()
    fpr, fnr, _ = metrics.det_curve(y, s)
    x, yy = disp.line_.get_data()
    np.testing.assert_allclose(x, fpr, atol=1e-15)  # the line's data stay the rates
    np.testing.assert_allclose(yy, fnr, atol=1e-15)
    assert f"AUC = {metrics.roc_auc_score(y, s):.4f}" in disp.labels_[0]
    theirs = sklearn_det_axes(fpr, fnr)
    np.testing.assert_allclose(pixels(ax, x, yy), pixels(theirs, *theirs.lines[0].get_data()), atol=1e-6)
    # the axis transform is Phi^-1 (probit): rate p sits where scikit-learn puts norm.ppf(p)
    p = np.array([1e-4, 0.001, 0.02, 0.3, 0.5, 0.77, 0.999, 1 - 1e-6])
    np.testing.assert_allclose(pixels(ax, p, p[::-1]), pixels(theirs, stats.norm.ppf(p), stats.norm.ppf(p[::-1])),
                               atol=1e-6)
    for ours, skl in ((ax.xaxis, theirs.xaxis), (ax.yaxis, theirs.yaxis)):
        ticks = ours.get_ticklocs()
        np.testing.assert_allclose(ticks, [0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99, 0.999])
        np.testing.assert_allclose(stats.norm.ppf(ticks), skl.get_ticklocs(), atol=1e-12)
        assert [t.get_text() for t in ours.get_ticklabels()] == [t.get_text() for t in skl.get_ticklabels()]
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["0.1%", "1%", "5%"]
    np.testing.assert_allclose(stats.norm.ppf(ax.get_xlim()), theirs.get_xlim(), atol=1e-9)
    np.testing.assert_allclose(stats.norm.ppf(ax.get_ylim()), theirs.get_ylim(), atol=1e-9)
    # rates 0 and 1 are clipped to finite deviates (the curve reaches the figure's edge)
    assert np.isfinite(pixels(ax, [0.0, 1.0], [1.0, 0.0])).all()


def test_bounded_det_draws_the_image_of_its_certified_region():
    y, s = data(5000, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = DETCurve(thresholds=12).update(y, s).compute()
    fig, ax = plt.subplots()
    disp = result.plot(ax=ax)
    fig.canvas.draw()
    assert len(disp.envelopes_) == 1 and ax.get_xscale() == "function"
    lo, hi = sm.ROCCurveResult(result.counts).area_bounds()
    assert f"in [{lo:.3f}, {hi:.3f}]" in disp.labels_[0] and lo < hi
    # the polygon as drawn (display coordinates) holds scikit-learn's exact DET curve
    poly = Path(pixels(ax, *disp.envelopes_[0].get_xy().T))
    ex, ey, _ = metrics.det_curve(y, s)
    pts = pixels(ax, ex, ey)
    inside = poly.contains_points(pts, radius=1e-6) | poly.contains_points(pts, radius=-1e-6)
    assert inside.all()
    # and it is not the whole figure: the exact curve of other data falls outside somewhere
    y2, s2 = data(5000, seed=12)
    ox, oy, _ = metrics.det_curve(y2, 1 - s2)
    other = pixels(ax, ox, oy)
    assert not (poly.contains_points(other) | poly.contains_points(other, radius=-1e-6)).all()


def test_det_overlay_keeps_the_probit_axes():
    (y1, s1), (y2, s2) = data(seed=4), data(seed=5)
    fig, ax = plt.subplots()
    disp = plot_curves({"a": DETCurve().update(y1, s1).compute(), "b": DETCurve().update(y2, s2).compute()},
                       ax=ax)
    assert len(disp.lines_) == 2 and ax.get_yscale() == "function"
    chance = disp.chance_level_
    fig.canvas.draw()
    cx, cy = pixels(ax, *chance.get_data()).T  # the anti-diagonal: symmetric about the centre
    centre = pixels(ax, [0.5], [0.5])[0]
    np.testing.assert_allclose(cx - centre[0], -(cy - centre[1]) * (ax.bbox.width / ax.bbox.height), atol=1e-3)


def multilabel(n: int = 300, k: int = 4, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (n, k))
    pred = np.where(rng.random((n, k)) < 0.7, y, 1 - y)
    return y, pred


def test_multilabel_confusion_matrix_draws_one_panel_per_label():
    y, pred = multilabel()
    names = ["cat", "dog", "eel", "fox"]
    m = sm.ConfusionMatrix(4, multilabel=True, classes=names).update(y, pred)
    disp = m.plot()
    expected = metrics.multilabel_confusion_matrix(y, pred)
    assert len(disp.axes_) == 4 and disp.ax_ is disp.axes_[0]
    for i, (panel, ax) in enumerate(zip(disp.displays_, disp.axes_, strict=True)):
        np.testing.assert_array_equal(panel.im_.get_array(), expected[i])
        assert ax.get_title() == names[i]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1"]
        assert ax.get_xlabel() == "Predicted label" and ax.get_ylabel() == "True label"
    assert disp.text_.shape == (4, 2, 2)
    assert [t.get_text() for t in disp.text_.ravel()] == [f"{v:.4g}" for v in expected.ravel()]
    assert m.compute().shape == (4, 2, 2)  # compute() stays an array


def test_multilabel_confusion_matrix_on_given_axes_and_one_label():
    y, pred = multilabel(k=3, seed=3)
    m = sm.ConfusionMatrix(3, multilabel=True).update(y, pred)
    expected = metrics.multilabel_confusion_matrix(y, pred)
    fig, axes = plt.subplots(1, 3)
    disp = m.plot(axes)
    assert list(disp.axes_) == list(axes) and disp.figure_ is fig
    fig, ax = plt.subplots()
    one = m.plot(ax, label=2)
    assert one.ax_ is ax and ax.get_title() == "2"
    np.testing.assert_array_equal(one.im_.get_array(), expected[2])
    named = sm.ConfusionMatrix(3, multilabel=True, classes=["a", "b", "c"]).update(y, pred)
    np.testing.assert_array_equal(named.plot(label="b").im_.get_array(), expected[1])
    with pytest.raises(ValueError, match="label: not one of the labels"):
        named.plot(label="z")
    with pytest.raises(ValueError, match="label: index out of range"):
        m.plot(label=3)
    with pytest.raises(ValueError, match="axes: needs one Axes per label"):
        m.plot(plt.subplots(1, 2)[1])
    with pytest.raises(ValueError, match="matrices: must be a multilabel"):
        plot_multilabel_confusion(np.eye(3))
    with pytest.raises(ValueError, match="label: only for a multilabel matrix"):
        sm.ConfusionMatrix(3).update([0, 1, 2], [0, 1, 1]).plot(label=1)


def test_multiclass_class_names_label_both_axes():
    rng = np.random.default_rng(8)
    y, pred = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    names = np.array(["ant", "bee", "cow"])
    cases = ((sm.ConfusionMatrix(classes=list(names)).update(names[y], names[pred]), list(names),
              metrics.confusion_matrix(names[y], names[pred], labels=list(names))),
             (sm.ConfusionMatrix(3, labels=[2, 0, 1]).update(y, pred), ["2", "0", "1"],
              metrics.confusion_matrix(y, pred, labels=[2, 0, 1])))
    for m, ticks, ref in cases:
        disp = m.plot()
        assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ticks
        assert [t.get_text() for t in disp.ax_.get_yticklabels()] == ticks
        np.testing.assert_array_equal(disp.im_.get_array(), ref)


@pytest.mark.parametrize("seed", [0, 1])
def test_bounded_gains_chart_draws_its_certified_envelope(seed):
    from streammetrics.calibration import GainsCurve

    y, s = data(4000, seed=20 + seed)
    s = np.round(s, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = GainsCurve(max_bytes=1024).update(y, s).compute()
    assert not r.is_exact
    disp = r.plot()
    assert len(disp.envelopes_) == 1
    (glo, ghi), _ = r.at_fraction_bounds(0.1)
    assert f"in [{glo:.3f}, {ghi:.3f}]" in disp.labels_[0]
    path = Path(disp.envelopes_[0].get_xy())
    # the exact gains curve (from the samples, highest scores first) lies in the drawn region
    order = np.argsort(-s, kind="stable")
    last = np.r_[s[order][1:] != s[order][:-1], True]
    ex = np.r_[0.0, (np.arange(1, len(y) + 1) / len(y))[last]]
    ey = np.r_[0.0, (np.cumsum(y[order]) / y.sum())[last]]
    pts = np.column_stack([ex, ey])
    assert (path.contains_points(pts, radius=1e-9) | path.contains_points(pts, radius=-1e-9)).all()
    # its edges are the certified bounds: at each share, the region spans [low, high] of at_fraction_bounds
    for q in np.linspace(0.01, 0.99, 37):
        lo, hi = r.at_fraction_bounds(q)[0]
        inner = np.array([[q, lo + 1e-9], [q, hi - 1e-9]]) if hi - lo > 2e-9 else np.array([[q, lo]])
        outer = np.array([[q, lo - 1e-4], [q, hi + 1e-4]])
        assert (path.contains_points(inner, radius=1e-9) | path.contains_points(inner, radius=-1e-9)).all()
        assert not path.contains_points(outer).any()
    exact = GainsCurve().update(y, s).plot()
    assert exact.envelopes_ == [] and "in [" not in exact.labels_[0]


@pytest.mark.parametrize("kind", ["pr", "det", "gains"])
def test_multiclass_pr_det_gains_draw_one_curve_per_class(kind):
    from streammetrics.calibration import GainsCurve

    rng = np.random.default_rng(30)
    y = rng.integers(0, 3, 400)
    p = np.round(rng.dirichlet([1, 1, 1], 400), 3)
    names = ["ant", "bee", "cow"]
    if kind == "gains":
        disp = GainsCurve(num_classes=3).update(y, p).plot(labels=names)
    else:
        cls = sm.PRCurve if kind == "pr" else DETCurve
        disp = cls(classes=names).update(np.array(names)[y], p).plot()
    assert len(disp.lines_) == 3
    for k, line in enumerate(disp.lines_):
        x, yy = (np.asarray(v, float) for v in line.get_data())
        if kind == "pr":
            precision, recall, _ = metrics.precision_recall_curve(y == k, p[:, k])
            np.testing.assert_allclose(x, recall[:-1][::-1], atol=1e-15)
            np.testing.assert_allclose(yy, precision[:-1][::-1], atol=1e-15)
        elif kind == "det":
            fpr, fnr, _ = metrics.det_curve(y == k, p[:, k])
            np.testing.assert_allclose(x, fpr, atol=1e-15)
            np.testing.assert_allclose(yy, fnr, atol=1e-15)
        else:
            order = np.argsort(-p[:, k], kind="stable")
            last = np.r_[p[order, k][1:] != p[order, k][:-1], True]
            np.testing.assert_allclose(yy, np.r_[0.0, (np.cumsum(y[order] == k) / (y == k).sum())[last]])
        assert line.get_label().startswith(names[k])
