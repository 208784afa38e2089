"""Reliability diagrams (calibration curve over the diagonal, per-bin counts as bars on a twin
axis, the ECE in the legend) and cumulative gains / lift charts on matplotlib axes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param

from ._display import Display, curve_items, envelope_polygon, fmt, get_axes

_KIND = Param("choice", "must be 'gains' or 'lift'", choices=("gains", "lift"))


def bin_counts(prob_pred: np.ndarray, counts: np.ndarray, n_bins: int) -> np.ndarray:
    """The counts of all ``n_bins`` uniform bins from a calibration curve's non-empty bins: the
    mean forecast of a bin lies inside it, and ``searchsorted(inner edges, mean, "left")`` puts
    a mean on an inner edge (every value of the bin equal to that edge) in the lower bin, as
    scikit-learn's ``calibration_curve`` bins that value. O(n_bins).

    Parameters
    ----------
    prob_pred : ndarray
        The mean forecast of each non-empty bin (``CalibrationCurveResult.prob_pred``).
    counts : ndarray
        The (weighted) count of each non-empty bin, in the same order.
    n_bins : int
        The number of uniform bins on [0, 1] the curve was computed with.

    Returns
    -------
    ndarray of shape (n_bins,)
        The count of every bin, 0 for the empty ones.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.plot import bin_counts
    >>> bin_counts(np.array([0.1, 0.9]), np.array([3.0, 2.0]), 4)
    array([3., 0., 0., 2.])"""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.searchsorted(edges[1:-1], np.asarray(prob_pred, dtype=float), side="left")
    full = np.zeros(n_bins)
    np.add.at(full, idx, np.asarray(counts, dtype=float))
    return full


def reliability_ece(result: Any) -> float:
    """The expected calibration error over a reliability curve's bins, sum_b n_b |o_b - f_b| /
    sum_b n_b (the L1 binned error on the same bins); nan with no samples. O(bins).

    Parameters
    ----------
    result : CalibrationCurveResult
        A reliability curve: ``prob_true`` o_b, ``prob_pred`` f_b and ``counts`` n_b per bin.

    Returns
    -------
    float
        The count-weighted mean of |o_b - f_b|.

    Examples
    --------
    >>> import streammetrics as sm
    >>> from streammetrics.plot import reliability_ece
    >>> curve = sm.CalibrationCurve(n_bins=2).update([0, 1, 1, 1], [0.2, 0.4, 0.8, 0.6]).compute()
    >>> round(reliability_ece(curve), 4)
    0.25
    """
    n = np.asarray(result.counts, dtype=float)
    total = float(n.sum())
    if total <= 0:
        return float("nan")
    return float(np.sum(n * np.abs(np.asarray(result.prob_true) - np.asarray(result.prob_pred))) / total)


@filled
def plot_calibration(results: Any, ax: Any = None, *, labels: Any = None, n_bins: int | None = None,
                     counts: bool = True, digits: int = 3, **kwargs: Any) -> Display:
    """Reliability diagram of calibration curve results (one, a list per class, or a mapping).

    Parameters
    ----------
    results : CalibrationCurveResult, list or Mapping[label, result]
        The curves.
    {plot: ax, labels}
    n_bins : int, optional
        The uniform bin count the curves were computed with: the count bars are then one bin
        wide (otherwise narrow bars at each bin's mean forecast).
    counts : bool
        Draw each bin's (weighted) count as a bar on a twin axis (``display.counts_ax_``,
        ``display.bars_``: one BarContainer per curve, heights exactly ``result.counts``); with
        several curves the bars of a bin stand side by side, centred on the bin (with ``n_bins``) or
        on its mean forecast.
    {plot: digits, kwargs}

    Returns
    -------
    Display
        The axes and what was drawn: ``lines_`` (one per curve), ``counts_ax_`` and ``bars_``
        (the count bars).

    Notes
    -----
    Line data: exactly ``(prob_pred, prob_true)``; the label holds the ECE over the curve's
    bins (:func:`reliability_ece`, which is ``CalibrationError(norm="l1")`` on the same bins).
    O(bins) per curve.
    """
    items = curve_items(results, labels)
    own_figure = ax is None
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
        # several curves: side by side inside each bin's width (dodged), never over each other
        slot = (1.0 / n_bins if n_bins else 0.02) * 0.9 / len(items)
        bars = []
        top = 0.0
        for i, (line, (_, r)) in enumerate(zip(disp.lines_, items, strict=True)):
            shift = (i - (len(items) - 1) / 2.0) * slot
            at = np.asarray(r.prob_pred, float)
            if n_bins and getattr(r, "bin_index", None) is not None and len(r.bin_index) == len(at):
                at = (np.asarray(r.bin_index, float) + 0.5) / n_bins  # uniform bins: their centres
            bars.append(cax.bar(at + shift, r.counts, width=slot, color=line.get_color(), alpha=0.45))
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
    if own_figure and counts:
        disp.figure_.tight_layout()  # room for the twin axis' "Count" label on the right
    return disp


def gains_envelope(r: Any) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(lower, upper)`` ``(fraction, gain)`` polylines from (0, 0) between which the exact gains
    curve of a bounded (binned) result lies: inside a bin holding both classes the upper one
    rises first at the steepest slope (``max_lift``: its positives ranked first) and the lower
    one last; elsewhere both are the curve. Their value at each share is
    ``at_fraction_bounds``. O(points)."""
    x, g = np.r_[0.0, r.fraction], np.r_[0.0, r.gain]
    lx, ly, ux, uy = [0.0], [0.0], [0.0], [0.0]
    slope = float(r.max_lift)
    for i in range(1, x.shape[0]):
        if r.mixed[i - 1]:
            run = (g[i] - g[i - 1]) / slope  # the share the rise needs at the steepest slope
            ux.append(min(x[i], x[i - 1] + run))
            uy.append(g[i])
            lx.append(max(x[i - 1], x[i] - run))
            ly.append(g[i - 1])
        for xs, ys in ((lx, ly), (ux, uy)):
            xs.append(x[i])
            ys.append(g[i])
    return (np.array(lx), np.array(ly)), (np.array(ux), np.array(uy))


def lift_envelope(r: Any, points: int = 512) -> tuple[tuple[np.ndarray, np.ndarray],
                                                      tuple[np.ndarray, np.ndarray]]:
    """``(lower, upper)`` ``(fraction, lift)`` polylines between which the exact lift curve of a
    bounded (binned) result lies: the gains envelope (:func:`gains_envelope`) divided by the
    share selected, on its corners and a grid of ``points`` shares in (0, 1] (the bounds are
    exact at every drawn point; between two of them the lift bound bends as gain / share).
    O(points + corners)."""
    (lx, ly), (ux, uy) = gains_envelope(r)
    grid = np.unique(np.concatenate([lx[lx > 0], ux[ux > 0], np.linspace(1.0 / points, 1.0, points)]))
    low = np.interp(grid, lx, ly) / grid
    high = np.interp(grid, ux, uy) / grid
    return (grid, low), (grid, high)


@filled
def plot_gains(results: Any, ax: Any = None, *, kind: str = "gains", labels: Any = None,
               top: float = 0.1, chance_level: bool = True, envelope: bool = True, digits: int = 3,
               **kwargs: Any) -> Display:
    """Cumulative gains (``kind="gains"``) or lift (``kind="lift"``) chart of gains results.

    Parameters
    ----------
    results : GainsCurveResult, list or Mapping[label, result]
        The curves.
    {plot: ax}
    kind : {"gains", "lift"}
        Gains: ``(0, fraction...)`` against ``(0, gain...)`` (the curve starts at the origin);
        lift: ``fraction`` against ``lift``.
    {plot: labels}
    top : float
        The share selected whose gain or lift the legend reports (``at_fraction(top)``).
    chance_level : bool
        Draw a random ranking (the diagonal; lift 1).
    envelope : bool
        Bounded (binned) result: fill the region its certificate says the exact curve lies in
        (:func:`gains_envelope`, :func:`lift_envelope`); the legend gives the certified
        interval at ``top`` (both charts).
    {plot: digits, kwargs}

    Returns
    -------
    Display
        The axes and what was drawn: ``lines_`` (one per curve), the chance line in ``extra_``.

    Notes
    -----
    O(points) per curve.
    """
    kind = check_param(kind, "kind", _KIND)
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
        if not r.is_exact and not math.isnan(gain):  # bounded: the certified interval at `top`
            (glo, ghi), (llo, lhi) = r.at_fraction_bounds(top)
            lo, hi = (glo, ghi) if kind == "gains" else (llo, lhi)
            text += f" in [{fmt(lo, digits)}, {fmt(hi, digits)}]"
        line = ax.plot(x, y, label=f"{name} ({text})" if name else text, **kwargs)[0]
        disp.lines_.append(line)
        disp.labels_.append(line.get_label())
        if envelope and not r.is_exact and not math.isnan(gain):
            lower, upper = gains_envelope(r) if kind == "gains" else lift_envelope(r)
            disp.envelopes_.append(envelope_polygon(ax, lower, upper, line.get_color()))
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
