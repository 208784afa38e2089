"""Reliability diagrams (calibration curve over the diagonal, per-bin counts as bars on a twin
axis, the ECE in the legend) and cumulative gains / lift charts on matplotlib axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._display import Display, curve_items, fmt, get_axes

__all__ = ["plot_calibration", "plot_gains", "bin_counts", "reliability_ece"]


def bin_counts(prob_pred: np.ndarray, counts: np.ndarray, n_bins: int) -> np.ndarray:
    """The counts of all ``n_bins`` uniform bins from a calibration curve's non-empty bins: the
    mean forecast of a bin lies inside it, and ``searchsorted(inner edges, mean, "left")`` puts
    a mean on an inner edge (every value of the bin equal to that edge) in the lower bin, as
    scikit-learn's ``calibration_curve`` bins that value. O(n_bins)."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.searchsorted(edges[1:-1], np.asarray(prob_pred, dtype=float), side="left")
    full = np.zeros(n_bins)
    np.add.at(full, idx, np.asarray(counts, dtype=float))
    return full


def reliability_ece(result: Any) -> float:
    """The expected calibration error over a reliability curve's bins, sum_b n_b |o_b - f_b| /
    sum_b n_b (the L1 binned error on the same bins); nan with no samples. O(bins)."""
    n = np.asarray(result.counts, dtype=float)
    total = float(n.sum())
    if total <= 0:
        return float("nan")
    return float(np.sum(n * np.abs(np.asarray(result.prob_true) - np.asarray(result.prob_pred))) / total)


def plot_calibration(results: Any, ax: Any = None, *, labels: Any = None, n_bins: int | None = None,
                     counts: bool = True, digits: int = 3, **kwargs: Any) -> Display:
    """Reliability diagram of calibration curve results (one, a list per class, or a mapping).

    Parameters
    ----------
    results : CalibrationCurveResult, list or Mapping[label, result]
        The curves.
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes by default.
    labels : list of str, optional
        Names of a list's curves.
    n_bins : int, optional
        The uniform bin count the curves were computed with: the count bars are then one bin
        wide (otherwise narrow bars at each bin's mean forecast).
    counts : bool
        Draw each bin's (weighted) count as a bar on a twin axis (``display.counts_ax_``,
        ``display.bars_``: one BarContainer per curve, heights exactly ``result.counts``).
    digits : int
        Decimals of the ECE in the legend.
    **kwargs
        Passed to the ``Axes.plot`` call of each curve.

    Notes
    -----
    Line data: exactly ``(prob_pred, prob_true)``; the label holds the ECE over the curve's
    bins (:func:`reliability_ece`, which is ``CalibrationError(norm="l1")`` on the same bins).
    O(bins) per curve.
    """
    items = curve_items(results, labels)
    disp = Display(get_axes(ax))
    ax = disp.ax_
    chance = ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="Perfectly calibrated")
    disp.extra_["chance_level"] = chance[0]
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("markersize", 4)
    for name, r in items:
        text = f"ECE = {fmt(reliability_ece(r), digits)}"
        line = ax.plot(r.prob_pred, r.prob_true, label=f"{name} ({text})" if name else text, **kwargs)[0]
        disp.lines_.append(line)
        disp.labels_.append(line.get_label())
    if counts:
        cax = ax.twinx()
        width = 1.0 / n_bins if n_bins else 0.02
        bars = []
        top = 0.0
        for line, (_, r) in zip(disp.lines_, items, strict=True):
            bars.append(cax.bar(r.prob_pred, r.counts, width=width * 0.9, color=line.get_color(),
                                alpha=0.3 if len(items) > 1 else 0.45))
            top = max(top, float(np.max(r.counts, initial=0.0)))
        cax.set_ylim(0, top * 4 if top > 0 else 1)  # the bars fill the lower quarter
        cax.set_ylabel("Count")
        ax.set_zorder(cax.get_zorder() + 1)
        ax.patch.set_visible(False)
        disp.extra_["counts_ax"] = cax
        disp.extra_["bars"] = bars[0] if len(bars) == 1 else bars
    ax.set(xlabel="Mean predicted probability", ylabel="Fraction of positives",
           xlim=(-0.01, 1.01), ylim=(-0.01, 1.01))
    ax.legend(loc="upper left", fontsize=8)
    return disp


def plot_gains(results: Any, ax: Any = None, *, kind: str = "gains", labels: Any = None,
               top: float = 0.1, chance_level: bool = True, digits: int = 3, **kwargs: Any) -> Display:
    """Cumulative gains (``kind="gains"``) or lift (``kind="lift"``) chart of gains results.

    Parameters
    ----------
    results : GainsCurveResult, list or Mapping[label, result]
        The curves.
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes by default.
    kind : {"gains", "lift"}
        Gains: ``(0, fraction...)`` against ``(0, gain...)`` (the curve starts at the origin);
        lift: ``fraction`` against ``lift``.
    labels : list of str, optional
        Names of a list's curves.
    top : float
        The share selected whose gain or lift the legend reports (``at_fraction(top)``).
    chance_level : bool
        Draw a random ranking (the diagonal; lift 1).
    digits : int
        Decimals in the legend.
    **kwargs
        Passed to each curve's ``Axes.plot``.

    Notes
    -----
    O(points) per curve.
    """
    if kind not in ("gains", "lift"):
        raise ValueError(f"kind: must be 'gains' or 'lift', got {kind!r}")
    disp = Display(get_axes(ax))
    ax = disp.ax_
    for name, r in curve_items(results, labels):
        gain, lift = r.at_fraction(top)
        if kind == "gains":
            text = f"gain at top {top:.0%} = {fmt(gain, digits)}"
            x, y = np.concatenate([[0.0], r.fraction]), np.concatenate([[0.0], r.gain])
        else:
            text = f"lift at top {top:.0%} = {fmt(lift, digits)}"
            x, y = r.fraction, r.lift
        line = ax.plot(x, y, label=f"{name} ({text})" if name else text, **kwargs)[0]
        disp.lines_.append(line)
        disp.labels_.append(line.get_label())
    if chance_level:
        if kind == "gains":
            chance = ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="Random")[0]
        else:
            chance = ax.axhline(1.0, linestyle="--", color="grey", linewidth=1, label="Random (lift 1)")
        disp.extra_["chance_level"] = chance
    ax.set(xlabel="Share of samples selected (highest scores first)",
           ylabel="Share of positives captured" if kind == "gains" else "Lift", xlim=(0, 1))
    if kind == "gains":
        ax.set_ylim(0, 1.01)
    else:
        ax.set_ylim(bottom=0)
    ax.legend(loc="lower right" if kind == "gains" else "upper right", fontsize=8)
    return disp
