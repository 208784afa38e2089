"""ROC, precision-recall and DET curves on matplotlib axes, one line per curve, with the certified
envelope of a bounded (binned) curve; :func:`plot_curves` overlays several labelled curves (one
per class, slice or model) on one axes.
"""

from __future__ import annotations

from typing import Any

from streammetrics._core.docstrings import filled
from streammetrics._scores.thresholds import roc_auc_bounds, roc_auc_from_counts, roc_envelope

from ._calibration import plot_calibration, plot_gains
from ._display import Display, curve_items, envelope_polygon, fmt, get_axes
from ._probit import set_probit_axes

#: The kind of each curve result class, by class name: the plot functions read results by their
#: attributes and never import the result classes (which import this package for ``.plot()``).
_KINDS = {"ROCCurveResult": "roc", "PRCurveResult": "pr", "DETCurveResult": "det",
          "CalibrationCurveResult": "calibration", "GainsCurveResult": "gains"}


def _kind(result: Any) -> str:
    for cls in type(result).__mro__:
        kind = _KINDS.get(cls.__name__)
        if kind is not None and cls.__module__.startswith("streammetrics."):
            return kind
    raise ValueError("results: not a curve result (ROC, PR, DET, calibration, gains), got "
                     f"{type(result).__name__}")


def _label(name: str, text: str) -> str:
    return f"{name} ({text})" if name else text


def _value_text(metric: str, value: float, bounds: tuple[float, float] | None, digits: int) -> str:
    text = f"{metric} = {fmt(value, digits)}"
    if bounds is not None:
        text += f" in [{fmt(bounds[0], digits)}, {fmt(bounds[1], digits)}]"
    return text


def draw_curve(disp: Display, kind: str, name: str, result: Any, *, envelope: bool = True,
               digits: int = 3, **kwargs: Any) -> None:
    """Draw one ROC / PR / DET curve on ``disp.ax_`` (line data: exactly the result's arrays),
    labelled with its area, and its certified envelope when it is bounded."""
    ax = disp.ax_
    bounded = False
    if kind == "roc":
        bounded = not result.is_exact
        text = _value_text("AUC", result.area(), result.area_bounds() if bounded else None, digits)
        line = ax.plot(result.fpr, result.tpr, label=_label(name, text), **kwargs)[0]
        lower, upper = result.envelope() if bounded else (None, None)
    elif kind == "pr":
        bounded = not result.is_exact
        text = _value_text("AP", result.area(), result.area_bounds() if bounded else None, digits)
        kwargs.setdefault("drawstyle", "steps-pre")  # precision[i] holds on (recall[i-1], recall[i]]
        line = ax.plot(result.recall, result.precision, label=_label(name, text), **kwargs)[0]
        lower, upper = result.envelope() if bounded else (None, None)
    else:  # det: the ROC area of the same counts; the ROC envelope mapped to (fpr, 1 - tpr)
        counts = result.counts
        bounded = bool(counts.mixed().any())
        text = _value_text("AUC", roc_auc_from_counts(counts, None),
                           roc_auc_bounds(counts, None) if bounded else None, digits)
        line = ax.plot(result.fpr, result.fnr, label=_label(name, text), **kwargs)[0]
        if bounded:
            (lx, ly), (ux, uy) = roc_envelope(counts)
            lower, upper = (lx, 1.0 - ly), (ux, 1.0 - uy)
    disp.lines_.append(line)
    disp.labels_.append(line.get_label())
    if bounded and envelope:
        disp.envelopes_.append(envelope_polygon(ax, lower, upper, line.get_color()))


AXES = {
    "roc": ("False positive rate", "True positive rate"),
    "pr": ("Recall", "Precision"),
    "det": ("False positive rate", "False negative rate"),
}


def finish_curves(disp: Display, kind: str, items: list[tuple[str, Any]], chance_level: bool,
                  legend: bool = True) -> None:
    """Axis labels, limits, the chance level (ROC: the diagonal; PR: each curve's prevalence;
    DET: the anti-diagonal, a straight line on its probit axes) and the legend."""
    ax = disp.ax_
    xlabel, ylabel = AXES[kind]
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if kind == "det":  # normal deviate axes, percent ticks (scikit-learn's DetCurveDisplay)
        set_probit_axes(ax)
    else:
        ax.set(xlim=(-0.01, 1.01), ylim=(-0.01, 1.01))
    if chance_level:
        if kind == "roc":
            chance = ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="Chance level")
        elif kind == "det":
            chance = ax.plot([0, 1], [1, 0], linestyle="--", color="grey", linewidth=1, label="Chance level")
        else:
            chance = []
            for line, (_, r) in zip(disp.lines_, items, strict=True):
                p, n = r.counts.total_pos, r.counts.total_neg
                if p + n > 0:
                    chance.append(ax.axhline(p / (p + n), linestyle="--", linewidth=1, color=line.get_color(),
                                             alpha=0.6, label=f"Chance level ({fmt(p / (p + n))})"))
        disp.extra_["chance_level"] = chance[0] if len(chance) == 1 else chance
    if legend:
        ax.legend(loc={"pr": "lower left", "det": "upper right"}.get(kind, "lower right"), fontsize=8)


@filled
def plot_curves(results: Any, ax: Any = None, *, labels: Any = None, chance_level: bool = True,
                envelope: bool = True, digits: int = 3, **kwargs: Any) -> Display:
    """Overlay curve results on one axes and return the :class:`Display`.

    Parameters
    ----------
    results : result, list of results or Mapping[label, result or list of results]
        ROC, PR or DET curve results (all of one kind), or calibration / gains results (drawn
        by :func:`streammetrics.plot.plot_calibration` / :func:`~streammetrics.plot.plot_gains`).
        A list is one curve per class; a mapping names each curve (e.g. one per slice).
    {plot: ax, labels}
    chance_level : bool
        Draw the chance level.
    envelope : bool
        Fill the certified envelope of bounded (binned) curves.
    {plot: digits, kwargs}

    Returns
    -------
    Display
        The axes and what was drawn: ``lines_`` (one per curve), ``envelopes_`` (bounded curves).

    Notes
    -----
    Each line's data are exactly the result's arrays (ROC: ``fpr``, ``tpr``; PR: ``recall``,
    ``precision`` drawn as steps; DET: ``fpr``, ``fnr``); its label holds the area (AUC, AP;
    DET: the AUC of the same counts), with its certified interval for a bounded curve. DET axes
    are normal deviate (probit) scales with percent ticks, as scikit-learn's ``DetCurveDisplay``
    (rates clipped to [eps, 1 - eps], so 0 and 1 stay on the figure's edge); a bounded DET
    curve's envelope (the ROC envelope's polylines at ``(fpr, 1 - tpr)``, made of horizontal and
    vertical segments) is drawn on the same scale, so the drawn region is exactly the image of
    the certified one. O(total points).
    """
    items = curve_items(results, labels)
    if not items:
        raise ValueError("results: no curve to draw, got an empty collection")
    kinds = {_kind(r) for _, r in items}
    if len(kinds) != 1:
        raise ValueError(f"results: curves of one kind only, got {sorted(kinds)}")
    kind = kinds.pop()
    if kind == "calibration":
        return plot_calibration(dict(items), ax, digits=digits, **kwargs)
    if kind == "gains":
        return plot_gains(dict(items), ax, digits=digits, envelope=envelope, **kwargs)
    disp = Display(get_axes(ax))
    for name, result in items:
        draw_curve(disp, kind, name, result, envelope=envelope, digits=digits, **kwargs)
    finish_curves(disp, kind, items, chance_level)
    return disp
