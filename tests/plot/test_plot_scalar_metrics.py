"""``.plot()`` on the scalar metrics users expect to draw (torchmetrics' habit): AUROC draws the
ROC curve it is the area under, AveragePrecision its precision-recall curve, CalibrationError the
reliability diagram of the bins it is computed from."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import streammetrics as sm  # noqa: E402
from streammetrics.plot import reliability_ece  # noqa: E402

RNG = np.random.default_rng(7)
Y = RNG.integers(0, 2, 400)
S = np.round(RNG.random(400) * 0.6 + 0.4 * Y, 2)  # ties


def _xy(line: object) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)  # type: ignore[attr-defined]


def test_auroc_plot_draws_its_roc_curve() -> None:
    m = sm.AUROC().update(Y, S)
    disp = m.plot()
    curve = sm.ROCCurve().update(Y, S).compute()
    x, y = _xy(disp.lines_[0])
    np.testing.assert_array_equal(x, curve.fpr)
    np.testing.assert_array_equal(y, curve.tpr)
    assert f"AUC = {m.compute():.3f}" in disp.labels_[0]
    assert m.compute() == sm.AUROC().update(Y, S).compute()  # drawing changed nothing


def test_average_precision_plot_draws_its_pr_curve() -> None:
    m = sm.AveragePrecision().update(Y, S)
    disp = m.plot()
    twin = sm.PRCurve().update(Y, S).plot()
    for mine, theirs in zip(disp.lines_, twin.lines_, strict=True):
        np.testing.assert_array_equal(_xy(mine)[0], _xy(theirs)[0])
        np.testing.assert_array_equal(_xy(mine)[1], _xy(theirs)[1])
    assert disp.labels_ == twin.labels_


def test_multiclass_and_bounded_auroc_plots() -> None:
    p = RNG.dirichlet([1, 1, 1], 300)
    t = RNG.integers(0, 3, 300)
    names = np.array(["cat", "dog", "emu"])
    disp = sm.AUROC(3, classes=list(names)).update(names[t], p).plot()
    assert [label.split(" ")[0] for label in disp.labels_] == list(names)
    micro = sm.AUROC(3, average="micro").update(t, p).plot()
    assert len(micro.lines_) == 1
    bounded = sm.AUROC(max_bytes=1024).update(RNG.integers(0, 2, 5000), RNG.random(5000))
    assert not bounded.is_exact
    assert len(bounded.plot().envelopes_) == 1
    with pytest.raises(ValueError, match="plot: a one-vs-one AUROC"):
        sm.AUROC(3, multi_class="ovo").update(t, p).plot()


@pytest.mark.parametrize("kw", [{}, {"strategy": "quantile"}])
def test_calibration_error_plot_is_the_curve_of_its_bins(kw: dict[str, str]) -> None:
    p = RNG.random(500)
    y = (RNG.random(500) < p**1.5).astype(int)
    m = sm.CalibrationError(n_bins=10, **kw).update(y, p)
    curve = sm.CalibrationCurve(10, **kw).update(y, p).compute()
    mine = m.curves()
    np.testing.assert_allclose(mine.prob_pred, curve.prob_pred, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mine.prob_true, curve.prob_true, rtol=0, atol=1e-12)
    assert reliability_ece(mine) == pytest.approx(m.compute(), abs=1e-12)
    disp = m.plot()
    x, yy = _xy(disp.lines_[0])
    np.testing.assert_array_equal(x, mine.prob_pred)
    np.testing.assert_array_equal(yy, mine.prob_true)


def test_calibration_error_top_label_and_classwise_curves() -> None:
    p = RNG.dirichlet([1, 1, 1], 600)
    t = RNG.integers(0, 3, 600)
    top = sm.CalibrationError(3, n_bins=10).update(t, p)
    conf, correct = p.max(axis=1), (p.argmax(axis=1) == t).astype(int)
    binary = sm.CalibrationCurve(10).update(correct, conf).compute()
    np.testing.assert_allclose(top.curves().prob_pred, binary.prob_pred, atol=1e-12)
    np.testing.assert_allclose(top.curves().prob_true, binary.prob_true, atol=1e-12)
    assert reliability_ece(top.curves()) == pytest.approx(top.compute(), abs=1e-12)
    classwise = sm.CalibrationError(3, n_bins=10, classwise=True).update(t, p)
    curves = classwise.curves()
    assert len(curves) == 3
    assert np.mean([reliability_ece(c) for c in curves]) == pytest.approx(classwise.compute(), abs=1e-12)
    assert len(classwise.plot().lines_) == 3


def test_reliability_bars_of_several_curves_stand_side_by_side() -> None:
    p = RNG.dirichlet([1, 1, 1], 900)
    t = RNG.integers(0, 3, 900)
    curves = sm.CalibrationCurve(10, num_classes=3).update(t, p).compute()
    disp = sm.plot.plot_calibration(curves, n_bins=10)
    spans = []
    for bars, curve in zip(disp.extra_["bars"], curves, strict=True):
        np.testing.assert_array_equal([b.get_height() for b in bars], curve.counts)
        spans.append([(b.get_x(), b.get_x() + b.get_width()) for b in bars])
    pieces = sorted(span for s in spans for span in s)  # every bar of every curve: disjoint
    assert all(a[1] <= b[0] + 1e-12 for a, b in zip(pieces, pieces[1:], strict=False))
    # the twin axis' label lies inside the figure the function made
    fig = disp.figure_
    fig.canvas.draw()
    label = disp.extra_["counts_ax"].yaxis.label.get_window_extent()
    assert label.x1 <= fig.bbox.x1 and label.x0 >= fig.bbox.x0
