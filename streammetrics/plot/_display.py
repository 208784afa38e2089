"""The display object every plot function returns, and the axes / colour helpers they share.

matplotlib is imported only inside the functions (``import streammetrics`` never loads it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Display:
    """What a plot function drew, in the manner of scikit-learn's ``RocCurveDisplay``.

    The plot functions build it and return it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes drawn on.

    Attributes
    ----------
    ax_ : matplotlib.axes.Axes
        The axes drawn on (the one given, or a new one).
    figure_ : matplotlib.figure.Figure
        Its figure.
    line_ : Line2D, list of Line2D or None
        The curve (one curve), or one line per curve (several curves, e.g. one per class).
    lines_ : list of Line2D
        Always the list of the curves' lines, in the order drawn.
    envelopes_ : list
        One filled polygon per bounded (binned) curve: the region its certified envelope says
        the exact curve lies in (empty for exact curves).
    labels_ : list of str
        The legend label of each line (each holds the curve's metric value).
    extra_ : dict
        Other artists by name (``"chance"``, ``"counts_ax"``, ``"bars"``, ``"im"``, ``"text"``,
        ``"colorbar"``), as drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import streammetrics as sm
    >>> from streammetrics.plot import plot_curves
    >>> display = plot_curves(sm.ROCCurve().update([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3]).compute())
    >>> len(display.lines_), display.labels_
    (1, ['AUC = 1.000'])
    """

    def __init__(self, ax: Any) -> None:
        self.ax_ = ax
        self.figure_ = ax.figure
        self.lines_: list[Any] = []
        self.envelopes_: list[Any] = []
        self.labels_: list[str] = []
        self.extra_: dict[str, Any] = {}

    @property
    def line_(self) -> Any:
        if not self.lines_:
            return None
        return self.lines_[0] if len(self.lines_) == 1 else list(self.lines_)

    def __getattr__(self, name: str) -> Any:
        # im_, text_, chance_level_, bars_, counts_ax_: scikit-learn's attribute names
        extra = self.__dict__.get("extra_", {})
        if name.endswith("_") and name[:-1] in extra:
            return extra[name[:-1]]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"Display(lines={len(self.lines_)}, envelopes={len(self.envelopes_)})"


def needs_matplotlib() -> Any:
    """``matplotlib.pyplot``, or an ImportError saying which extra installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'streammetrics[plot]'") from None
    return plt


def get_axes(ax: Any = None, **subplots: Any) -> Any:
    """``ax`` itself, or a new figure's axes (``plt.subplots(**subplots)``)."""
    plt = needs_matplotlib()
    if ax is not None:
        return ax
    _, ax = plt.subplots(**subplots)
    return ax


def series_names(n: int, labels: Any = None) -> list[str]:
    """The name of each of ``n`` curves: ``labels`` (one per curve) or ``"class i"``."""
    if labels is None:
        return ["" if n == 1 else f"class {i}" for i in range(n)]
    names = [str(v) for v in labels]
    if len(names) != n:
        raise ValueError(f"labels: needs one name per curve ({n}), got {len(names)}: {names[:3]!r}")
    return names


def fmt(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, ``"nan"`` when undefined."""
    value = float(value)
    return "nan" if value != value else f"{value:.{digits}f}"


def envelope_polygon(ax: Any, lower: Any, upper: Any, color: Any, alpha: float = 0.25) -> Any:
    """Fill the region between two polylines that share their end points (``lower`` forward,
    ``upper`` back): the certified region of a bounded curve. Returns the Polygon."""
    import numpy as np

    x = np.concatenate([np.asarray(lower[0], float), np.asarray(upper[0], float)[::-1]])
    y = np.concatenate([np.asarray(lower[1], float), np.asarray(upper[1], float)[::-1]])
    return ax.fill(x, y, color=color, alpha=alpha, linewidth=0)[0]


def curve_items(results: Any, labels: Any = None) -> list[tuple[str, Any]]:
    """``(name, result)`` pairs from one result, a list of results (one per class) or a mapping
    ``{label: result or list of results}`` (a list under a label gives ``"label: class i"``)."""
    if isinstance(results, Mapping):
        out: list[tuple[str, Any]] = []
        for key, value in results.items():
            if isinstance(value, (list, tuple)):
                names = series_names(len(value), None)
                out.extend((f"{key}: {n}" if str(key) else n, v) for n, v in zip(names, value, strict=True))
            else:
                out.append((str(key), value))
        return out
    items = list(results) if isinstance(results, (list, tuple)) else [results]
    return list(zip(series_names(len(items), labels), items, strict=True))
