"""The calibration plots of ``streammetrics evaluate --plot DIR``: the reliability diagram (the
calibration curve over the diagonal, the per-bin counts as bars on a twin axis, the ECE in the
title) and, for the binary task, the cumulative gains and lift charts, drawn by
:mod:`streammetrics.plot`. Called by :func:`streammetrics.cli.plots.write_plots` with matplotlib
already imported.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from streammetrics.plot import plot_calibration, plot_gains

from .calibration import ECE_BINS
from .plan import Plan

__all__ = ["write_calibration_plots"]


def write_calibration_plots(plt: Any, save: Callable[[Any, str], None], plan: Plan, ms: Any,
                            res: dict[str, Any]) -> None:
    """reliability.png (binary and multiclass, when the calibration rows were computed),
    gains.png and lift.png (binary, exact score buffer).

    Parameters
    ----------
    plt : module
        ``matplotlib.pyplot`` (Agg backend), already imported.
    save : callable
        ``save(figure, file_name)`` writes and closes a figure in the plot directory.
    plan : Plan
        The run's plan (task, class names).
    ms : Members
        The updated metrics; reads ``plot_calibration``, ``plot_ece``, ``plot_gains`` and
        ``plot_roc`` when present.
    res : dict
        The result document (``rows``, ``metrics``).

    Returns
    -------
    None
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "plot_calibration" in ms:
            _reliability(plt, save, plan, ms, res)
        if "plot_gains" in ms:
            _gains_lift(plt, save, ms, res)


def _reliability(plt: Any, save: Callable[[Any, str], None], plan: Plan, ms: Any,
                 res: dict[str, Any]) -> None:
    curves = ms["plot_calibration"].compute()
    ece = res["metrics"]["ece"] if "ece" in res["metrics"] else ms["plot_ece"].compute()
    series = list(zip(plan.classes or [str(i) for i in range(len(curves))], curves, strict=False)) \
        if isinstance(curves, list) else [("", curves)]
    fig, ax = plt.subplots(figsize=(5.2, 5.6))
    plot_calibration({f"class {n}": c for n, c in series} if len(series) > 1 else series[0][1], ax,
                     n_bins=ECE_BINS, digits=4)
    kind = "top-label " if plan.task == "multiclass" else ""
    value = "undefined" if ece is None or not np.isfinite(ece) else f"{ece:.4f}"
    ax.set(ylabel="observed frequency" if plan.task == "binary" else "observed frequency (one-vs-rest)",
           xlabel="mean predicted probability" if plan.task == "binary" else
           "mean predicted probability of the class",
           title=f"Reliability diagram ({res['rows']:,} rows)\n{kind}ECE {value}, {ECE_BINS} uniform bins")
    save(fig, "reliability.png")


def _gains_lift(plt: Any, save: Callable[[Any, str], None], ms: Any, res: dict[str, Any]) -> None:
    g = ms["plot_gains"].compute()
    if len(g.fraction) == 0:
        return
    c = ms["plot_roc"].compute().counts
    total = float(c.total_pos + c.total_neg)
    prevalence = float(c.total_pos) / total if total > 0 else np.nan
    perfect = np.isfinite(prevalence) and prevalence > 0

    fig, ax = plt.subplots(figsize=(5.2, 5))
    plot_gains(g, ax, kind="gains", digits=4)
    if perfect:
        ax.plot([0, prevalence, 1], [0, 1, 1], linestyle=":", color="black", linewidth=1,
                label=f"perfect (prevalence {prevalence:.3f})")
    ks = res["metrics"].get("ks")
    ks_text = f", KS {ks:.4f}" if isinstance(ks, float) else ""
    ax.set_title(f"Cumulative gains ({res['rows']:,} rows){ks_text}")
    ax.legend(loc="lower right", fontsize=8)
    save(fig, "gains.png")

    fig, ax = plt.subplots(figsize=(5.2, 5))
    plot_gains(g, ax, kind="lift", digits=4)
    if perfect:
        x = np.linspace(max(float(g.fraction[0]), 1e-3), 1.0, 200)
        ax.plot(x, np.minimum(1.0 / prevalence, 1.0 / x), linestyle=":", color="black", linewidth=1,
                label="perfect")
    ax.set_title(f"Lift ({res['rows']:,} rows)")
    ax.legend(loc="upper right", fontsize=8)
    save(fig, "lift.png")
