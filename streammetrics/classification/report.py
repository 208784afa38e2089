"""``ClassificationReport``: every per-class confusion measure and its averages from one state."""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.warn import warn
from streammetrics._counts.confusion_counts import ConfusionCounts
from streammetrics.plot._output import html_table, needs_pandas, plain

from ._base import AveragedMetric, ConfusionMetric
from .confusion import (
    F1,
    FDR,
    FOR,
    NPV,
    Accuracy,
    FallOut,
    Jaccard,
    MissRate,
    Precision,
    Prevalence,
    Recall,
    Specificity,
)

__all__ = ["ClassificationReport", "Report"]

#: measure name -> the class that defines it (the report is a view of the same kernel)
MEASURES: dict[str, type[AveragedMetric]] = {
    "precision": Precision,
    "recall": Recall,
    "f1": F1,
    "specificity": Specificity,
    "npv": NPV,
    "fpr": FallOut,
    "fnr": MissRate,
    "fdr": FDR,
    "for": FOR,
    "jaccard": Jaccard,
    "prevalence": Prevalence,
}
AVERAGE_ROWS = {"micro avg": "micro", "macro avg": "macro", "weighted avg": "weighted"}


class Report(dict[str, Any]):
    """A classification report: a dict (per class, ``accuracy``, averages) that prints as a table.

    What :meth:`ClassificationReport.compute` returns; built by it, not by users: its constructor
    takes the entries (a mapping, positional only) as a ``dict`` does.

    Parameters
    ----------
    entries : mapping, optional
        The rows below, as :meth:`ClassificationReport.compute` builds them (default: none).

    Attributes
    ----------
    <class> : dict of str to float
        One entry per class (keyed by the class as a string): every per-class measure and the
        ``support``.
    accuracy : float
        The share of correct predictions.
    micro avg, macro avg, weighted avg : dict of str to float
        The averages of the per-class measures.

    Examples
    --------
    >>> import streammetrics as sm
    >>> report = sm.ClassificationReport(classes=["cat", "dog"]).update(
    ...     ["cat", "dog", "dog"], ["cat", "cat", "dog"]).compute()
    >>> list(report)
    ['cat', 'dog', 'accuracy', 'micro avg', 'macro avg', 'weighted avg']
    >>> report["dog"]["recall"], report["dog"]["support"]
    (0.5, 2.0)
    """

    def __init__(self, entries: Mapping[str, dict[str, float] | float] | None = None, /) -> None:
        super().__init__(entries or {})

    def table(self, digits: int = 4) -> str:
        """The report as a fixed-width text table."""
        columns = [*MEASURES, "support"]
        rows = [k for k in self if isinstance(self[k], dict)]
        width = max(12, *(len(r) for r in rows))
        col = max(digits + 4, 12)
        lines = [" " * width + "".join(f"{c:>{col}}" for c in columns)]
        for name in rows:
            if name in AVERAGE_ROWS and name == next(iter(AVERAGE_ROWS)):
                lines.append("")
                if "accuracy" in self:
                    lines.append(f"{'accuracy':>{width}}" + f"{self['accuracy']:>{col}.{digits}f}")
            cells = []
            for c in columns:
                v = self[name].get(c)
                if v is None:
                    cells.append(" " * col)
                elif c == "support":
                    cells.append(f"{v:>{col}.6g}")
                else:
                    cells.append(f"{v:>{col}.{digits}f}")
            lines.append(f"{name:>{width}}" + "".join(cells))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict[str, Any]:
        """A plain dict copy (rows as plain dicts of floats), strict JSON: an undefined (nan)
        value is ``None``, as the command line's ``--json``. O(C)."""
        out: dict[str, Any] = plain(dict(self))
        return out

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per class and average, one column per measure and
        ``support``; the ``accuracy`` row holds its value under ``f1`` and the total support
        (scikit-learn's report layout). pandas is imported here. O(C)."""
        pd = needs_pandas()
        rows = {k: v for k, v in self.items() if isinstance(v, dict)}
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=[*MEASURES, "support"])
        if "accuracy" in self:
            support = next((v["support"] for k, v in rows.items() if k in AVERAGE_ROWS), float("nan"))
            acc = pd.DataFrame({"f1": [self["accuracy"]], "support": [support]}, index=["accuracy"])
            frame = pd.concat([frame.iloc[: len(rows) - len(AVERAGE_ROWS)], acc,
                               frame.iloc[len(rows) - len(AVERAGE_ROWS):]])
        return frame

    def _repr_html_(self) -> str:
        columns = [*MEASURES, "support"]
        rows: list[list[Any]] = []
        for name, v in self.items():
            if isinstance(v, dict):
                rows.append([name, *(v.get(c, "") for c in columns)])
            else:
                rows.append([name, *(v if c == "f1" else "" for c in columns)])
        return html_table(["", *columns], rows, caption="Classification report")

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Heatmap of the report (classes and averages by measures; see
        :func:`streammetrics.plot.plot_report`); returns the display."""
        from streammetrics.plot import plot_report

        return plot_report(self, ax, **kwargs)


@filled
class ClassificationReport(ConfusionMetric[Report]):
    """Every per-class measure (precision, recall, F1, specificity, NPV, FPR, FNR, FDR, FOR,
    Jaccard, prevalence, support) plus accuracy and the micro, macro and weighted averages.

    ``compute()`` returns a :class:`Report` -- a dict keyed by class (``"0"``, ``"1"``, ...; with
    ``classes=`` the labels themselves as strings, e.g. ``"cat"``),
    ``"accuracy"``, ``"micro avg"``, ``"macro avg"``, ``"weighted avg"`` -- whose ``str()`` is a
    table. Binary reports both classes, as scikit-learn's ``classification_report`` does.
    Undefined values follow ``zero_division``, with one warning per ``compute`` listing them.
    O(C^2) per ``compute``; the state is the shared confusion counts.

    Parameters
    ----------
    {confusion: num_classes, multilabel, threshold, ignore_index, zero_division}
    {confusion: classes, pos_label, labels}

    Examples
    --------
    >>> import streammetrics as sm
    >>> report = sm.ClassificationReport(3).update([0, 1, 2, 2], [0, 2, 2, 1]).compute()
    >>> report["2"]["precision"], report["accuracy"]
    (0.5, 0.5)
    """

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False, threshold: float = 0.5,
                 ignore_index: int | None = None, zero_division: str | float = "warn",
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None) -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=zero_division, classes=classes, pos_label=pos_label, labels=labels)

    def _view_state(self) -> ConfusionCounts:
        if self.task != "binary":
            return self._state
        view = ConfusionCounts("multiclass", 2)  # both classes of the binary matrix
        view.load_arrays(self._state.arrays())
        return view

    def _compute(self) -> Report:
        state = self._view_state()
        num_classes = state.num_classes
        task_kw: dict[str, Any] = {"multilabel": self.multilabel}
        undefined: set[str] = set()
        report = Report()
        per_class: dict[str, np.ndarray] = {}
        averages: dict[str, dict[str, float]] = {row: {} for row in AVERAGE_ROWS}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            for name, cls in MEASURES.items():
                for average in (None, *AVERAGE_ROWS.values()):
                    view = cls(num_classes, average=average, zero_division=self.zero_division, **task_kw)
                    view._state = state
                    value = view._compute()
                    if average is None:
                        per_class[name] = np.asarray(value)
                    else:
                        row = next(r for r, a in AVERAGE_ROWS.items() if a == average)
                        averages[row][name] = float(value)
                if any(issubclass(w.category, UndefinedMetricWarning) for w in caught):
                    undefined.add(name)
                    caught.clear()
            acc = Accuracy(num_classes, zero_division=self.zero_division, **task_kw)
            acc._state = state
            accuracy = acc._compute()
        if undefined and self.zero_division == "warn":
            warn(
                f"ClassificationReport: {', '.join(sorted(undefined))} ill-defined for some "
                "classes and set to 0.0. Use `zero_division` to choose the value.",
                UndefinedMetricWarning,
            )
        support = state.one_vs_rest().support
        names = self._class_names(num_classes)
        for c in range(num_classes):
            entry = {name: float(values[c]) for name, values in per_class.items()}
            entry["support"] = float(support[c])
            report[names[c]] = entry
        report["accuracy"] = float(accuracy)
        for row, values in averages.items():
            report[row] = {**values, "support": float(support.sum())}
        return report

    def _class_names(self, num_classes: int) -> list[str]:
        """Row names: the ``classes=`` labels (as ``str``), else the class indices."""
        mapping = self._labels.mapping
        if mapping is not None and len(mapping) == num_classes:
            return [str(label) for label in mapping.classes]
        return [str(c) for c in range(num_classes)]

    def table(self, digits: int = 4) -> str:
        """The current report as a text table."""
        return self.compute().table(digits)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Heatmap of the current report; see :func:`streammetrics.plot.plot_report`."""
        return self.compute().plot(ax, **kwargs)
