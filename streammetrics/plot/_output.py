"""Notebook and data-frame output of results: HTML tables (``_repr_html_``), ``to_dict()``
(plain JSON-able Python) and ``to_pandas()`` (pandas imported only when called), shared by the
curve results (:class:`CurveOutput`), the classification report and :class:`MetricResults`,
the dict that ``MetricSet.compute()`` returns.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

#: rows of a curve shown in its HTML table (first and last half of it when longer)
HTML_ROWS = 10


def needs_pandas() -> Any:
    """The pandas module, or an ImportError naming the package to install."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install pandas") from None
    return pd


def _cell(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return "nan" if math.isnan(v) else f"{float(v):.6g}"
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return str(v)
    return str(v)


def html_table(header: list[str], rows: list[list[Any]], caption: str | None = None) -> str:
    """An HTML table (escaped cells; numbers to 6 significant digits). O(cells)."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        cells = "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def plain(value: Any) -> Any:
    """``value`` as strict JSON data (dict, list, float, int, str, bool, None): NumPy scalars and
    arrays converted, tuples as lists, results through their ``to_dict()``, and a non-finite
    float (nan, +-inf) as ``None`` -- JSON's ``null``, as pandas' ``to_json`` and the command
    line's ``--json`` write it -- so ``json.dumps(plain(v), allow_nan=False)`` works. O(size)."""
    if isinstance(value, Mapping):
        return {str(k) if not isinstance(k, (str, int)) else k: plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and np.isfinite(value).all():
            return value.tolist()
        return plain(value.tolist()) if value.dtype.kind in "fO" else value.tolist()
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.number, np.bool_))


def flat_rows(name: str, value: Any) -> list[tuple[str, Any]]:
    """``(key, scalar or text)`` rows of one result: numbers as themselves, mappings and
    sequences of numbers expanded (``name.key``, ``name[i]``), curves as their summary text,
    anything else as its ``repr``. O(size)."""
    if _is_number(value):
        return [(name, plain(value))]
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return [(name, value.item())]
    if isinstance(value, Mapping):
        return [row for k, v in value.items() for row in flat_rows(f"{name}.{k}", v)]
    if isinstance(value, (list, tuple, np.ndarray)) and (
            np.ndim(value) == 1 or all(isinstance(v, CurveOutput) for v in value)):
        return [row for i, v in enumerate(value) for row in flat_rows(f"{name}[{i}]", v)]
    if isinstance(value, CurveOutput):
        return [(name, value.summary_text())]
    if isinstance(value, np.ndarray):
        return [(name, np.array2string(value, threshold=20))]
    return [(name, repr(value))]


class CurveOutput:
    """``to_dict`` / ``to_pandas`` / ``_repr_html_`` / ``plot`` of a curve result: a subclass
    names its per-point arrays in ``_output_columns`` and its headline values in ``_summary``."""

    _output_columns: tuple[str, ...] = ()

    def _summary(self) -> list[tuple[str, Any]]:
        return []

    def _points(self) -> int:
        return int(np.shape(getattr(self, self._output_columns[0]))[0])

    def to_dict(self) -> dict[str, list[Any]]:
        """The per-point arrays as lists, strict JSON (``json.dumps(d, allow_nan=False)`` works):
        a non-finite value is ``None`` -- the ROC curve's first threshold, ``inf`` in the result
        and in :meth:`to_pandas` (as scikit-learn's ``roc_curve``), and the nan rates of a
        curve without positives or negatives. O(points)."""
        return {c: plain(np.asarray(getattr(self, c))) for c in self._output_columns}

    def to_pandas(self) -> Any:
        """A pandas DataFrame with one row per point and one column per array. O(points)."""
        pd = needs_pandas()
        return pd.DataFrame({c: np.asarray(getattr(self, c)) for c in self._output_columns})

    def summary_text(self) -> str:
        """One line: the kind, the number of points and the headline values."""
        parts = [f"{type(self).__name__}: {self._points()} points"]
        parts += [f"{k} = {_cell(v)}" for k, v in self._summary()]
        return ", ".join(parts)

    def _repr_html_(self) -> str:
        n = self._points()
        half = HTML_ROWS // 2
        idx = list(range(n)) if n <= HTML_ROWS else [*range(half), -1, *range(n - half, n)]
        arrays = [np.asarray(getattr(self, c)) for c in self._output_columns]
        rows = [["..."] * (len(arrays) + 1) if i < 0 else [i, *(a[i] for a in arrays)] for i in idx]
        return html_table(["", *self._output_columns], rows, caption=self.summary_text())

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the curve on ``ax`` (a new figure's by default) and return the display: see
        :func:`streammetrics.plot.plot_curves` (matplotlib needed: the ``plot`` extra)."""
        from . import plot_curves

        return plot_curves(self, ax, **kwargs)


class MetricResults(dict[str, Any]):
    """``{name: value}`` of a MetricSet: a plain dict (indexing, ``==`` with a dict and
    ``json.dumps`` of JSON-able values work as for a dict) that also shows as an HTML table in
    a notebook and converts with :meth:`to_dict` / :meth:`to_pandas`.

    What :meth:`MetricSet.compute` returns; built by it, not by users: its constructor takes the
    values by name (a mapping, positional only) as a ``dict`` does.

    Parameters
    ----------
    values : mapping, optional
        ``{name: value}``, as :meth:`MetricSet.compute` builds it (default: empty).

    Attributes
    ----------
    <name> : Any
        The value of the member metric ``name``, as its ``compute()`` returns it.

    Examples
    --------
    >>> import streammetrics as sm
    >>> results = sm.MetricSet(acc=sm.Accuracy(), f1=sm.F1()).update([0, 1, 1], [0, 1, 0]).compute()
    >>> results == {"acc": 2 / 3, "f1": 2 / 3}, results.rows()[0]
    (True, ('acc', 0.6666666666666666))
    """

    def __init__(self, values: Mapping[str, Any] | None = None, /) -> None:
        super().__init__(values or {})

    def rows(self) -> list[tuple[str, Any]]:
        """``(key, value)`` rows: numbers, per-class values expanded (``name[i]``), report
        entries as ``name.row.measure``, curves as their summary text (see :func:`flat_rows`)."""
        return [row for k, v in self.items() for row in flat_rows(str(k), v)]

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of strict JSON data (arrays as lists, curves as their ``to_dict()``,
        undefined (nan) and infinite values as ``None``; see :func:`plain`). O(size)."""
        out: dict[str, Any] = plain(dict(self))
        return out

    def to_pandas(self) -> Any:
        """A pandas DataFrame with one row per :meth:`rows` entry (index: the key; column
        ``value``). O(rows)."""
        pd = needs_pandas()
        rows = self.rows()
        index = pd.Index([k for k, _ in rows], name="metric")
        return pd.DataFrame({"value": [v for _, v in rows]}, index=index)

    def _repr_html_(self) -> str:
        return html_table(["metric", "value"], [list(r) for r in self.rows()])
