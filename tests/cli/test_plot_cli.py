"""``streammetrics evaluate --plot`` draws through :mod:`streammetrics.plot`: checked without
reading an image (``Figure.savefig`` records the figures): the ROC and PR lines are scikit-learn's
curves, the confusion heatmap its matrix, the reliability line its calibration curve, and a
bounded (``--max-bytes``) run draws the certified envelope."""

from __future__ import annotations

import os

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("rich")
metrics = pytest.importorskip("sklearn.metrics")
calibration = pytest.importorskip("sklearn.calibration")

from matplotlib.figure import Figure  # noqa: E402

from streammetrics.__main__ import main  # noqa: E402
from streammetrics.cli.calibration import ECE_BINS  # noqa: E402


@pytest.fixture
def figures(monkeypatch):
    saved: dict[str, Figure] = {}

    def record(self, path, *args, **kwargs):
        saved[os.path.basename(str(path))] = self

    monkeypatch.setattr(Figure, "savefig", record)
    return saved


def table(tmp_path, n: int = 2000) -> tuple[str, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, n)
    p = np.round(1.0 / (1.0 + np.exp(-(rng.normal(size=n) + 1.2 * y))), 4)
    path = str(tmp_path / "d.parquet")
    pq.write_table(pa.table({"y": y, "p": p}), path)
    return path, y, p


def test_cli_plots_hold_the_curves(tmp_path, figures, capsys):
    path, y, p = table(tmp_path)
    assert main(["evaluate", path, "--label", "y", "--score", "p", "--plot", str(tmp_path / "out"),
                 "--quiet"]) == 0
    assert {"roc.png", "pr.png", "confusion_matrix.png", "reliability.png", "gains.png"} <= set(figures)
    roc_line = figures["roc.png"].axes[0].lines[0]
    fpr, tpr, _ = metrics.roc_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(roc_line.get_xdata(), fpr, atol=1e-15)
    np.testing.assert_allclose(roc_line.get_ydata(), tpr, atol=1e-15)
    assert f"AUC = {metrics.roc_auc_score(y, p):.4f}" in roc_line.get_label()
    pr_line = figures["pr.png"].axes[0].lines[0]
    precision, recall, _ = metrics.precision_recall_curve(y, p)
    np.testing.assert_allclose(pr_line.get_xdata(), recall[:-1][::-1], atol=1e-15)
    assert f"AP = {metrics.average_precision_score(y, p):.4f}" in pr_line.get_label()
    im = figures["confusion_matrix.png"].axes[0].images[0]
    np.testing.assert_array_equal(im.get_array(), metrics.confusion_matrix(y, p >= 0.5))
    rel = figures["reliability.png"].axes[0]
    prob_true, prob_pred = calibration.calibration_curve(y, p, n_bins=ECE_BINS)
    curve = next(line for line in rel.lines if line.get_marker() == "o")
    np.testing.assert_allclose(curve.get_xdata(), prob_pred, atol=1e-12)
    np.testing.assert_allclose(curve.get_ydata(), prob_true, atol=1e-12)
    assert not figures["roc.png"].axes[0].patches  # exact: no envelope


def test_cli_bounded_plots_draw_the_envelope(tmp_path, figures, capsys):
    path, y, p = table(tmp_path)
    rc = main(["evaluate", path, "--label", "y", "--score", "p", "--max-bytes", "1k",
               "--plot", str(tmp_path / "out"), "--quiet"])
    if rc != 0:
        pytest.skip("bounded ranking metrics not available in the CLI")
    for name in ("roc.png", "pr.png", "gains.png", "lift.png"):
        assert len(figures[name].axes[0].patches) == 1, name
    # at every share the lift envelope is drawn at, it holds the exact lift: the exact gains
    # curve (ties selected together, linear inside a tied block) over the share
    bounded = figures["lift.png"].axes[0].patches[0].get_xy()[:-1]  # without the closing vertex
    ranking = np.argsort(-p, kind="stable")
    last_of_tie = np.r_[p[ranking][1:] != p[ranking][:-1], True]
    share = np.r_[0.0, (np.arange(1, len(p) + 1) / len(p))[last_of_tie]]
    gain = np.r_[0.0, (np.cumsum(y[ranking]) / y.sum())[last_of_tie]]
    half = len(bounded) // 2
    lower, upper = bounded[:half], bounded[half:][::-1]
    np.testing.assert_array_equal(lower[:, 0], upper[:, 0])
    exact_lift = np.interp(lower[:, 0], share, gain) / lower[:, 0]
    assert np.all(lower[:, 1] <= exact_lift + 1e-12) and np.all(exact_lift <= upper[:, 1] + 1e-12)
