"""PNG plots for ``streammetrics evaluate --plot DIR``: ROC curve, PR curve (with the no-skill
baseline), confusion-matrix heatmap, a score histogram per class, and (in
:mod:`streammetrics.cli.calplots`) the reliability diagram and the gains and lift charts, drawn by
:mod:`streammetrics.plot` (bounded curves with their certified envelopes). matplotlib (Agg
backend) is imported only when plots are asked for.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .errors import InputError
from .plan import Plan

_PLOTS = ("roc.png", "pr.png", "confusion_matrix.png", "score_histogram.png", "reliability.png", "gains.png",
         "lift.png")

__all__ = ["write_plots", "check_plot_dir", "Histogram", "add_batch"]


class Histogram:
    """Streaming per-class score histogram with a fixed number of bins whose range grows by
    doubling (pairs of bins merge), so memory is O(bins) whatever the data.

    Parameters
    ----------
    n_series : int
        Number of histograms (one per class or label).
    bins : int, default 64
        Number of bins (even: pairs merge when the range doubles).

    Attributes
    ----------
    counts : ndarray of shape (n_series, bins)
        Weight (or count) per series and bin.
    lo : float or None
        Lower edge of the first bin (None before any value).
    width : float
        Width of a bin.
    """

    def __init__(self, n_series: int, bins: int = 64) -> None:
        self.bins = bins
        self.counts = np.zeros((n_series, bins))
        self.lo: float | None = None
        self.width = 0.0

    def add(self, series: int, values: np.ndarray, weights: np.ndarray | None) -> None:
        """Add values to one series, widening the range (merging bin pairs) until they fit.

        Parameters
        ----------
        series : int
            The series (class) to add to.
        values : ndarray
            Scores (non-finite ones are skipped when unweighted).
        weights : ndarray or None
            Weight of each value (None: 1 each).

        Returns
        -------
        None
        """
        values = values[np.isfinite(values)] if weights is None else values
        if values.size == 0:
            return
        vmin, vmax = float(values.min()), float(values.max())
        if self.lo is None:
            if vmin >= 0.0 and vmax <= 1.0:
                self.lo, self.width = 0.0, 1.0 / self.bins
            else:
                self.lo, self.width = vmin, max(vmax - vmin, 1e-12) / self.bins * (1 + 1e-9)
        while vmin < self.lo or vmax > self.lo + self.width * self.bins:
            merged = self.counts.reshape(self.counts.shape[0], self.bins // 2, 2).sum(axis=2)
            self.counts[:] = 0.0
            if vmin < self.lo:  # grow downwards: the old range becomes the upper half
                self.counts[:, self.bins // 2:] = merged
                self.lo -= self.width * self.bins
            else:
                self.counts[:, : self.bins // 2] = merged
            self.width *= 2.0
        idx = np.minimum(((values - self.lo) / self.width).astype(np.int64), self.bins - 1)
        self.counts[series] += np.bincount(idx, weights=weights, minlength=self.bins)

    @property
    def edges(self) -> np.ndarray:
        """The ``bins + 1`` bin edges."""
        lo = 0.0 if self.lo is None else self.lo
        return lo + self.width * np.arange(self.bins + 1)


def add_batch(plan: Plan, hist: Histogram, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> None:
    """Add a batch to the per-class histograms: binary, the scores of each actual class;
    multiclass, the score of the true class; multilabel, the scores of each label's positives.

    Parameters
    ----------
    plan : Plan
        The run's plan (task, number of classes).
    hist : Histogram
        The histograms, updated in place.
    y : ndarray
        Labels of the batch.
    s : ndarray
        Scores of the batch.
    w : ndarray or None
        Weights of the batch.

    Returns
    -------
    None
    """
    if plan.task == "binary":
        for c in (0, 1):
            m = y == c
            hist.add(c, s[m], None if w is None else w[m])
    elif plan.task == "multiclass":  # score of the true class, per class
        for c in range(plan.num_classes or 0):
            m = y == c
            hist.add(c, s[m, c], None if w is None else w[m])
    else:  # multilabel: scores of the positives of each label
        for c in range(plan.num_classes or 0):
            m = y[:, c] == 1
            hist.add(c, s[m, c], None if w is None else w[m])


def _series(plan: Plan, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, list):
        return list(zip(plan.classes or [str(i) for i in range(len(value))], value, strict=False))
    return [("", value)]


def check_plot_dir(directory: str) -> None:
    """Create ``directory`` if needed and check that files can be written in it (before the pass
    over the data, not after): a usage error naming the reason otherwise.

    Parameters
    ----------
    directory : str
        The ``--plot`` directory.

    Returns
    -------
    None

    Raises
    ------
    InputError
        Exit status 2: the directory cannot be created or written, or a plot's file name is a
        directory.
    """
    import tempfile

    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--plot: cannot create {directory}: {exc.strerror or exc}", 2) from None
    for name in _PLOTS:
        if os.path.isdir(os.path.join(directory, name)):
            raise InputError(f"--plot: cannot write {os.path.join(directory, name)}: it is a directory", 2)
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise InputError(f"--plot: cannot write in {directory}: {exc.strerror or exc}", 2) from None


def write_plots(directory: str, plan: Plan, ms: Any, hist: Any, res: dict[str, Any]) -> list[str]:
    """Write roc.png, pr.png, confusion_matrix.png (binary/multiclass) and score_histogram.png to
    ``directory`` (created if needed), then the calibration plots
    (:func:`streammetrics.cli.calplots.write_calibration_plots`).

    Parameters
    ----------
    directory : str
        The ``--plot`` directory.
    plan : Plan
        The run's plan (task, classes, weight column).
    ms : Members
        The updated metrics, with the ``plot_*`` members.
    hist : Histogram or None
        The score histograms.
    res : dict
        The result document (``rows``, ``exact``, ``threshold``, ``metrics``).

    Returns
    -------
    list of str
        The paths written.

    Raises
    ------
    InputError
        Exit status 2: matplotlib is missing or a file cannot be written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'streammetrics[cli]'", 2) from None
    check_plot_dir(directory)
    import warnings

    written: list[str] = []
    approx = "" if res["exact"] else "\n(binned: the true curve lies in the shaded envelope)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        roc = ms["plot_roc"].compute()
        pr = ms["plot_pr"].compute()

    def save(fig: Any, name: str) -> None:
        path = os.path.join(directory, name)
        fig.tight_layout()
        try:
            fig.savefig(path, dpi=110)
        except OSError as exc:
            raise InputError(f"--plot: cannot write {path}: {exc.strerror or exc}", 2) from None
        finally:
            plt.close(fig)
        written.append(path)

    from streammetrics.plot import plot_confusion_matrix, plot_curves

    # ROC and PR (with the no-skill baseline, each class's prevalence): the library's plots,
    # bounded curves with their certified envelopes
    for curves, name, title in ((roc, "roc.png", "ROC curve"), (pr, "pr.png", "Precision-recall curve")):
        fig, ax = plt.subplots(figsize=(5.2, 5))
        plot_curves(dict(_series(plan, curves)), ax, digits=4)
        ax.set_title(f"{title} ({res['rows']:,} rows){approx}")
        save(fig, name)

    # confusion matrix
    if "plot_cm" in ms:
        cm = np.asarray(ms["plot_cm"].compute(), dtype=float)
        classes = plan.classes or [str(i) for i in range(cm.shape[0])]
        fig, ax = plt.subplots(figsize=(max(4.5, 0.6 * len(classes) + 3), max(4, 0.6 * len(classes) + 2.5)))
        plot_confusion_matrix(cm, ax, display_labels=classes, values_format=".6g")
        thr = f", threshold {res['threshold']}" if res.get("threshold") is not None else ""
        ax.set(xlabel="predicted", ylabel="actual", title=f"Confusion matrix{thr}")
        save(fig, "confusion_matrix.png")

    # score histograms
    if hist is not None and hist.lo is not None:
        edges = hist.edges
        fig, ax = plt.subplots(figsize=(6, 4))
        names = (plan.classes or ["0", "1"]) if plan.task == "binary" else (plan.classes or [])
        for i, counts in enumerate(hist.counts):
            kind = "label" if plan.task == "multilabel" else "class"
            label = f"{kind} {names[i] if i < len(names) else i}"
            ax.stairs(counts, edges, fill=True, alpha=0.45, label=label)
        what = {"binary": "score by actual class", "multiclass": "score of the true class",
                "multilabel": "score of the positives, per label"}[plan.task]
        ax.set(xlabel="score", ylabel="weight" if plan.weight else "count", title=f"Histogram: {what}")
        ax.legend(fontsize=8)
        save(fig, "score_histogram.png")

    from .calplots import write_calibration_plots

    write_calibration_plots(plt, save, plan, ms, res)  # reliability diagram, gains, lift
    return written

