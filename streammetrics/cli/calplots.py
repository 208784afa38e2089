"""The calibration plots of ``streammetrics evaluate --plot DIR``: the reliability diagram (the
calibration curve over the diagonal, the per-bin counts as a histogram beneath, the ECE in the
title) and, for the binary task, the cumulative gains and lift charts. Called by
:func:`streammetrics.cli.plots.write_plots` with matplotlib already imported.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .calibration import ECE_BINS

__all__ = ["CALIBRATION_PLOTS", "write_calibration_plots", "bin_counts"]

CALIBRATION_PLOTS = ("reliability.png", "gains.png", "lift.png")


def bin_counts(prob_pred: np.ndarray, counts: np.ndarray, n_bins: int) -> np.ndarray:
    """The counts of all ``n_bins`` uniform bins from a calibration curve's non-empty bins: the
    mean forecast of a bin lies inside it, and ``searchsorted(inner edges, mean, "left")`` puts
    a mean on an inner edge (every value of the bin equal to that edge) in the lower bin, as
    scikit-learn's ``calibration_curve`` bins that value."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.searchsorted(edges[1:-1], np.asarray(prob_pred, dtype=float), side="left")
    full = np.zeros(n_bins)
    np.add.at(full, idx, np.asarray(counts, dtype=float))
    return full


def write_calibration_plots(plt: Any, save: Callable[[Any, str], None], plan: Any, ms: Any,
                            res: dict[str, Any]) -> None:
    """reliability.png (binary and multiclass, when the calibration rows were computed),
    gains.png and lift.png (binary, exact score buffer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "plot_calibration" in ms:
            _reliability(plt, save, plan, ms, res)
        if "plot_gains" in ms:
            _gains_lift(plt, save, ms, res)


def _reliability(plt: Any, save: Callable[[Any, str], None], plan: Any, ms: Any,
                 res: dict[str, Any]) -> None:
    curves = ms["plot_calibration"].compute()
    ece = res["metrics"]["ece"] if "ece" in res["metrics"] else ms["plot_ece"].compute()
    series = list(zip(plan.classes or [str(i) for i in range(len(curves))], curves, strict=False)) \
        if isinstance(curves, list) else [("", curves)]
    edges = np.linspace(0.0, 1.0, ECE_BINS + 1)
    fig, (ax, hx) = plt.subplots(2, 1, figsize=(5.2, 6.2), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1]})
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="perfectly calibrated")
    for name, curve in series:
        label = f"class {name}" if name else "model"
        line = ax.plot(curve.prob_pred, curve.prob_true, marker="o", markersize=4, label=label)[0]
        full = bin_counts(curve.prob_pred, curve.counts, ECE_BINS)
        hx.stairs(full, edges, fill=len(series) == 1, alpha=0.45 if len(series) == 1 else 0.9,
                  color=line.get_color())
    kind = "top-label " if plan.task == "multiclass" else ""
    value = "undefined" if ece is None or not np.isfinite(ece) else f"{ece:.4f}"
    ax.set(ylabel="observed frequency" if plan.task == "binary" else "observed frequency (one-vs-rest)",
           xlim=(0, 1), ylim=(0, 1.01),
           title=f"Reliability diagram ({res['rows']:,} rows)\n{kind}ECE {value}, {ECE_BINS} uniform bins")
    ax.legend(loc="upper left", fontsize=8)
    hx.set(xlabel="mean predicted probability" if plan.task == "binary" else
           "mean predicted probability of the class", ylabel="weight" if plan.weight else "count")
    save(fig, "reliability.png")


def _gains_lift(plt: Any, save: Callable[[Any, str], None], ms: Any, res: dict[str, Any]) -> None:
    g = ms["plot_gains"].compute()
    if len(g.fraction) == 0:
        return
    frac = np.concatenate([[0.0], g.fraction])
    gain = np.concatenate([[0.0], g.gain])
    c = ms["plot_roc"].compute().counts
    total = float(c.total_pos + c.total_neg)
    prevalence = float(c.total_pos) / total if total > 0 else np.nan
    top = 0.1
    at = g.at_fraction(top)
    at_gain, at_lift = (float(at[0]), float(at[1])) if isinstance(at, tuple) else \
        (float(at.gain), float(at.lift))

    fig, ax = plt.subplots(figsize=(5.2, 5))
    ax.plot(frac, gain, label=f"model (top {top:.0%}: {at_gain:.1%} of positives)")
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="random")
    if np.isfinite(prevalence) and prevalence > 0:
        ax.plot([0, prevalence, 1], [0, 1, 1], linestyle=":", color="black", linewidth=1,
                label=f"perfect (prevalence {prevalence:.3f})")
    ks = res["metrics"].get("ks")
    ks_text = f", KS {ks:.4f}" if isinstance(ks, float) else ""
    ax.set(xlabel="share of samples selected (highest scores first)", ylabel="share of positives captured",
           xlim=(0, 1), ylim=(0, 1.01), title=f"Cumulative gains ({res['rows']:,} rows){ks_text}")
    ax.legend(loc="lower right", fontsize=8)
    save(fig, "gains.png")

    fig, ax = plt.subplots(figsize=(5.2, 5))
    ax.plot(g.fraction, g.lift, label=f"model (top {top:.0%}: lift {at_lift:.2f})")
    ax.axhline(1.0, linestyle="--", color="grey", linewidth=1, label="random (lift 1)")
    if np.isfinite(prevalence) and prevalence > 0:
        x = np.linspace(max(float(g.fraction[0]), 1e-3), 1.0, 200)
        ax.plot(x, np.minimum(1.0 / prevalence, 1.0 / x),
                linestyle=":", color="black", linewidth=1, label="perfect")
    ax.set(xlabel="share of samples selected (highest scores first)", ylabel="lift", xlim=(0, 1),
           ylim=(0, None), title=f"Lift ({res['rows']:,} rows)")
    ax.legend(loc="upper right", fontsize=8)
    save(fig, "lift.png")
