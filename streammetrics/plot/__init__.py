"""Plots of streammetrics results (extra ``plot``: matplotlib, imported only when drawing).

Every function takes an optional ``ax`` and returns a :class:`Display` holding ``ax_``,
``figure_`` and the artists drawn (``line_`` / ``lines_``, ``envelopes_``, ``im_``, ``text_``),
in the manner of scikit-learn's ``RocCurveDisplay`` and ``ConfusionMatrixDisplay``. The result
classes' ``.plot(ax=None, **kwargs)`` methods call these functions.
"""

from __future__ import annotations

from ._calibration import bin_counts, plot_calibration, plot_gains, reliability_ece
from ._curves import plot_curves
from ._display import Display
from ._matrix import plot_confusion_matrix, plot_multilabel_confusion, plot_report

__all__ = [
    "Display",
    "plot_curves",
    "plot_calibration",
    "plot_gains",
    "plot_confusion_matrix",
    "plot_multilabel_confusion",
    "plot_report",
    "bin_counts",
    "reliability_ece",
]
