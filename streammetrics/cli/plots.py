"""PNG plots for ``streammetrics evaluate --plot DIR``: ROC curve, PR curve (with the no-skill
baseline), confusion-matrix heatmap, a score histogram per class, and (in
:mod:`streammetrics.cli.calplots`) the reliability diagram and the gains and lift charts.
matplotlib (Agg backend) is imported only here, only when plots are asked for.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .errors import InputError

PLOTS = ("roc.png", "pr.png", "confusion_matrix.png", "score_histogram.png", "reliability.png", "gains.png",
         "lift.png")

__all__ = ["write_plots", "check_plot_dir", "Histogram", "add_batch"]


class Histogram:
    """Streaming per-class score histogram with a fixed number of bins whose range grows by
    doubling (pairs of bins merge), so memory is O(bins) whatever the data."""

    def __init__(self, n_series: int, bins: int = 64) -> None:
        self.bins = bins
        self.counts = np.zeros((n_series, bins))
        self.lo: float | None = None
        self.width = 0.0

    def add(self, series: int, values: np.ndarray, weights: np.ndarray | None) -> None:
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
        lo = 0.0 if self.lo is None else self.lo
        return lo + self.width * np.arange(self.bins + 1)


def add_batch(plan: Any, hist: Histogram, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> None:
    """Add a batch to the per-class histograms: binary, the scores of each actual class;
    multiclass, the score of the true class; multilabel, the scores of each label's positives."""
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


def _series(plan: Any, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, list):
        return list(zip(plan.classes or [str(i) for i in range(len(value))], value, strict=False))
    return [("", value)]


def check_plot_dir(directory: str) -> None:
    """Create ``directory`` if needed and check that files can be written in it (before the pass
    over the data, not after): a usage error naming the reason otherwise."""
    import tempfile

    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--plot: cannot create {directory}: {exc.strerror or exc}", 2) from None
    for name in PLOTS:
        if os.path.isdir(os.path.join(directory, name)):
            raise InputError(f"--plot: cannot write {os.path.join(directory, name)}: it is a directory", 2)
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise InputError(f"--plot: cannot write in {directory}: {exc.strerror or exc}", 2) from None


def write_plots(directory: str, plan: Any, ms: Any, hist: Any, res: dict[str, Any]) -> list[str]:
    """Write roc.png, pr.png, confusion_matrix.png (binary/multiclass) and score_histogram.png to
    ``directory`` (created if needed); returns the paths written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'streammetrics[cli]'", 2) from None
    check_plot_dir(directory)
    import warnings

    written: list[str] = []
    approx = "" if res["exact"] else "\n(binned: the true curve lies in the shaded boxes)"
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

    # ROC
    fig, ax = plt.subplots(figsize=(5.2, 5))
    for name, curve in _series(plan, roc):
        area = curve.area()
        label = f"{name + ': ' if name else ''}AUROC {area:.4f}"
        line = ax.plot(curve.fpr, curve.tpr, label=label)[0]
        _shade(ax, curve, "roc", line.get_color(), res["exact"])
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="chance")
    ax.set(xlabel="false positive rate", ylabel="true positive rate", xlim=(0, 1), ylim=(0, 1.01),
           title=f"ROC curve ({res['rows']:,} rows){approx}")
    ax.legend(loc="lower right", fontsize=8)
    save(fig, "roc.png")

    # PR with the no-skill baseline (the prevalence of each class)
    fig, ax = plt.subplots(figsize=(5.2, 5))
    for name, curve in _series(plan, pr):
        c = curve.counts
        prevalence = c.total_pos / (c.total_pos + c.total_neg) if (c.total_pos + c.total_neg) > 0 else np.nan
        line = ax.step(curve.recall, curve.precision, where="post",
                       label=f"{name + ': ' if name else ''}AP {curve.area():.4f}")[0]
        _shade(ax, curve, "pr", line.get_color(), res["exact"])
        ax.axhline(prevalence, linestyle="--", linewidth=1, color=line.get_color(), alpha=0.6,
                   label=f"{name + ': ' if name else ''}no skill ({prevalence:.3f})")
    ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1), ylim=(0, 1.01),
           title=f"Precision-recall curve ({res['rows']:,} rows){approx}")
    ax.legend(loc="lower left", fontsize=8)
    save(fig, "pr.png")

    # confusion matrix
    if "plot_cm" in ms:
        cm = np.asarray(ms["plot_cm"].compute(), dtype=float)
        classes = plan.classes or [str(i) for i in range(cm.shape[0])]
        fig, ax = plt.subplots(figsize=(max(4.5, 0.6 * len(classes) + 3), max(4, 0.6 * len(classes) + 2.5)))
        im = ax.imshow(cm, cmap="Blues", vmin=0.0)  # text colour below assumes the scale starts at 0
        fig.colorbar(im, ax=ax, fraction=0.046)
        ax.set_xticks(range(len(classes)), classes, rotation=45 if len(classes) > 4 else 0)
        ax.set_yticks(range(len(classes)), classes)
        top = cm.max() if cm.size else 0
        for (i, j), v in np.ndenumerate(cm):
            ax.text(j, i, f"{v:.6g}", ha="center", va="center",
                    color="white" if v > top / 2 else "black", fontsize=9)
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


def _boxes(counts: Any, kind: str) -> np.ndarray:
    """Uncertainty boxes of a binned curve, shape (m, 4, 2): between consecutive thresholds the
    points are exact (the counts at each bin edge); inside a bin the order of its positives and
    negatives is unknown, so the true curve runs inside the box spanned by the two points --
    for ROC [fpr_k, fpr_k+1] x [tpr_k, tpr_k+1]; for PR recall [R_k, R_k+1] x the precision
    range over every order of the bin, [tp_k / (tp_k + fp_k+1), tp_k+1 / (tp_k+1 + fp_k)]
    widened to hold both end points. O(bins)."""
    tps = np.concatenate([[0.0], np.asarray(counts.tps, dtype=float)])
    fps = np.concatenate([[0.0], np.asarray(counts.fps, dtype=float)])
    P, N = float(counts.total_pos), float(counts.total_neg)
    if P <= 0 or (kind == "roc" and N <= 0) or tps.shape[0] < 2:
        return np.zeros((0, 4, 2))
    t0, t1, f0, f1 = tps[:-1], tps[1:], fps[:-1], fps[1:]
    if kind == "roc":
        x0, x1, y0, y1 = f0 / N, f1 / N, t0 / P, t1 / P
    else:
        def prec(t: np.ndarray, f: np.ndarray) -> np.ndarray:
            d = t + f
            return np.divide(t, d, out=np.ones_like(t), where=d > 0)

        x0, x1 = t0 / P, t1 / P
        ends = np.stack([prec(t0, f0), prec(t1, f1), prec(t0, f1), prec(t1, f0)])
        y0, y1 = ends.min(axis=0), ends.max(axis=0)
    keep = (x1 > x0) | (y1 > y0)  # boxes of nonzero size only: bins holding one class are exact
    x0, x1, y0, y1 = x0[keep], x1[keep], y0[keep], y1[keep]
    return np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1),
                     np.stack([x1, y1], 1), np.stack([x0, y1], 1)], axis=1)


def _shade(ax: Any, curve: Any, kind: str, color: Any, exact: bool) -> None:
    """Draw the uncertainty of a binned curve as boxes between its exact points (none for an
    exact curve: every distinct score is its own point)."""
    if exact:
        return
    from matplotlib.collections import PolyCollection

    boxes = _boxes(curve.counts, kind)
    if boxes.shape[0]:
        ax.add_collection(PolyCollection(list(boxes), facecolors=color, edgecolors="none", alpha=0.25))
