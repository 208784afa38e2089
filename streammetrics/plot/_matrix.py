"""Heatmaps: the confusion matrix (in the manner of scikit-learn's ``ConfusionMatrixDisplay``)
and the classification report (classes by measures)."""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled

from ._display import Display, get_axes, needs_matplotlib


def heatmap(disp: Display, values: np.ndarray, rows: list[str], cols: list[str], *, cmap: Any,
            values_format: str | None, colorbar: bool, vmin: float | None = None,
            vmax: float | None = None) -> None:
    """Draw ``values`` (2-D) with one text per cell (``display.im_``, ``display.text_``: an object
    array of Text, same shape), row / column tick labels and an optional colour bar."""
    ax = disp.ax_
    im = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax)
    disp.extra_["im"] = im
    text = np.empty(values.shape, dtype=object)
    default = "d" if values.dtype.kind in "iu" else ".4g"  # integer counts in full
    for (i, j), v in np.ndenumerate(values):
        cell = format(v, values_format or default)
        color = im.cmap(0.0) if im.norm(v) > 0.5 else im.cmap(1.0)  # contrast with the cell's colour
        text[i, j] = ax.text(j, i, cell, ha="center", va="center", color=color, fontsize=9)
    disp.extra_["text"] = text
    ax.set_xticks(range(len(cols)), cols, rotation=45 if len(cols) > 4 else 0)
    ax.set_yticks(range(len(rows)), rows)
    if colorbar:
        disp.extra_["colorbar"] = disp.figure_.colorbar(im, ax=ax, fraction=0.046)


@filled
def plot_confusion_matrix(matrix: Any, ax: Any = None, *, display_labels: Any = None, cmap: Any = "Blues",
                          values_format: str | None = None, colorbar: bool = True) -> Display:
    """Heatmap of a (C, C) confusion matrix, rows = actual, columns = predicted.

    Parameters
    ----------
    matrix : array-like, shape (C, C)
        Counts or normalized values (``ConfusionMatrix.compute()``).
    {plot: ax}
    display_labels : list of str, optional
        Class names (default ``0 .. C-1``).
    cmap : str or Colormap
        The colour map.
    values_format : str, optional
        Format of the cell texts (default: ``d`` for integer counts, else ``.4g``).
    colorbar : bool
        Add a colour bar.

    Returns
    -------
    Display
        ``im_`` (the AxesImage, array exactly ``matrix``), ``text_`` ((C, C) Text), ``ax_``,
        ``figure_``, ``confusion_matrix_``. O(C^2).
    """
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix: must be a square (C, C) matrix (a multilabel (L, 2, 2) one: "
                         f"plot_multilabel_confusion), got shape {m.shape}")
    labels = [str(v) for v in (range(m.shape[0]) if display_labels is None else display_labels)]
    if len(labels) != m.shape[0]:
        raise ValueError(f"display_labels: needs {m.shape[0]} names, got {len(labels)}: {labels[:3]!r}")
    disp = Display(get_axes(ax))
    heatmap(disp, m, labels, labels, cmap=cmap, values_format=values_format, colorbar=colorbar)
    disp.ax_.set(xlabel="Predicted label", ylabel="True label")
    disp.extra_["confusion_matrix"] = m
    return disp


@filled
def plot_report(report: Any, ax: Any = None, *, measures: Any = ("precision", "recall", "f1"),
                cmap: Any = "viridis", values_format: str = ".3f", colorbar: bool = True) -> Display:
    """Heatmap of a classification report: one row per class and average, one column per
    measure (values in [0, 1]), the support in the row labels and the accuracy in the title.

    Parameters
    ----------
    report : Mapping
        ``ClassificationReport.compute()``.
    {plot: ax}
    measures : sequence of str
        The columns (keys of the report's rows).
    cmap, values_format, colorbar
        As :func:`plot_confusion_matrix`.

    Returns
    -------
    Display
        ``im_`` (array exactly ``report[row][measure]``), ``text_``, ``ax_``, ``figure_``.
        O(rows x measures).
    """
    rows = [k for k, v in report.items() if isinstance(v, dict)]
    measures = list(measures)
    for m in measures:
        if rows and m not in report[rows[0]]:
            raise ValueError(f"measures: unknown measure {m!r} (the report has {sorted(report[rows[0]])})")
    values = np.array([[float(report[r][m]) for m in measures] for r in rows], dtype=float).reshape(
        len(rows), len(measures))
    names = [f"{r} (n={report[r].get('support', float('nan')):g})" for r in rows]
    disp = Display(get_axes(ax))
    heatmap(disp, values, names, measures, cmap=cmap, values_format=values_format, colorbar=colorbar,
            vmin=0.0, vmax=1.0)
    if "accuracy" in report:
        disp.ax_.set_title(f"Classification report (accuracy = {float(report['accuracy']):.3f})")
    return disp


def plot_multilabel_confusion(matrices: Any, axes: Any = None, *, label_names: Any = None,
                              label: Any = None, cmap: Any = "Blues", values_format: str | None = None,
                              colorbar: bool = False) -> Display:
    """One 2x2 heatmap per label of a multilabel (L, 2, 2) confusion matrix (scikit-learn's
    ``multilabel_confusion_matrix`` layout: ``[[tn, fp], [fn, tp]]``, rows actual, columns
    predicted, ticks ``0`` / ``1``), each titled with its label's name; or the one ``label``.

    Parameters
    ----------
    matrices : array-like, shape (L, 2, 2)
        ``ConfusionMatrix(L, multilabel=True).compute()``.
    axes : matplotlib Axes or sequence of Axes, optional
        One Axes with ``label``; else at least L Axes (any shape, used in row-major order). By
        default a new figure: one Axes with ``label``, else a grid of at most 4 columns (unused
        cells hidden).
    label_names : list of str, optional
        The L label names (default ``0 .. L-1``).
    label : str or int, optional
        Draw only this label: a name of ``label_names``, else an int index.
    cmap, values_format, colorbar
        As :func:`plot_confusion_matrix` (no colour bar by default).

    Returns
    -------
    Display
        With ``label``: as :func:`plot_confusion_matrix`. Else ``ax_`` (the first panel),
        ``axes_`` (the L panels), ``displays_`` (one Display per label), ``im_`` (their images)
        and ``text_`` ((L, 2, 2) Text). O(L).
    """
    m = np.asarray(matrices)
    if m.ndim != 3 or m.shape[1:] != (2, 2):
        raise ValueError(f"matrices: must be a multilabel (L, 2, 2) matrix, got shape {m.shape}")
    n = m.shape[0]
    names = [str(v) for v in (range(n) if label_names is None else label_names)]
    if len(names) != n:
        raise ValueError(f"label_names: needs {n} names, got {len(names)}: {names[:3]!r}")
    if label is not None:
        if isinstance(label, (int, np.integer)) and not isinstance(label, bool) and str(label) not in names:
            index = int(label)
        elif str(label) in names:
            index = names.index(str(label))
        else:
            raise ValueError(f"label: not one of the labels {names[:5]!r}, got {label!r}")
        if not 0 <= index < n:
            raise ValueError(f"label: index out of range [0, {n}), got {index}")
        disp = plot_confusion_matrix(m[index], axes, display_labels=["0", "1"], cmap=cmap,
                                     values_format=values_format, colorbar=colorbar)
        disp.ax_.set_title(names[index])
        return disp
    if axes is None:
        plt = needs_matplotlib()
        ncols = min(n, 4)
        nrows = -(-n // ncols)
        _, grid = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), squeeze=False)
        flat = list(grid.ravel())
        for extra in flat[n:]:
            extra.set_axis_off()
    else:
        flat = list(np.ravel(np.asarray(axes, dtype=object)))
        if len(flat) < n:
            raise ValueError(f"axes: needs one Axes per label ({n}), got {len(flat)}")
    panels = [plot_confusion_matrix(m[i], flat[i], display_labels=["0", "1"], cmap=cmap,
                                    values_format=values_format, colorbar=colorbar) for i in range(n)]
    for name, panel in zip(names, panels, strict=True):
        panel.ax_.set_title(name)
    disp = Display(flat[0])
    disp.extra_.update(axes=np.asarray(flat[:n], dtype=object), displays=panels,
                       im=[p.im_ for p in panels], text=np.stack([p.text_ for p in panels]))
    return disp
