"""What :meth:`Sliced.compute() <streammetrics.Sliced.compute>` returns: ``{slice key: value}``
as a plain dict that also shows itself in a notebook and draws its curves.

:class:`SlicedResults` is a ``dict`` (indexing, ``==`` with a dict, ``json.dumps`` of JSON-able
keys and values work as for any dict) carrying each slice's row count, the key column names and
``min_count``, for:

* ``_repr_html_``: one row per slice (key columns, rows, the value or one column per member of
  a MetricSet: a slice x metric table), undefined slices (fewer than ``min_count`` rows) shown as
  ``undefined (n < min_count)``;
* :meth:`SlicedResults.to_pandas` (one row per slice; pandas imported only then) and
  :meth:`SlicedResults.to_dict` (JSON-able);
* :meth:`SlicedResults.plot`: the slices' curves (ROC, PR, DET, calibration, gains) overlaid on
  one axes, one line per slice labelled with its key and row count
  (:func:`streammetrics.plot.plot_curves`; matplotlib only then).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streammetrics.plot._output import CurveOutput, flat_rows, html_table, needs_pandas, plain

__all__ = ["SlicedResults", "UndefinedSlice", "is_undefined", "key_text"]


@dataclass(frozen=True)
class UndefinedSlice:
    """The value of a slice with fewer than ``min_count`` rows: undefined, with its row count.
    ``float()`` of it is nan.

    Attributes
    ----------
    count : int
        The rows the slice has seen.

    Examples
    --------
    >>> import streammetrics as sm
    >>> s = sm.Sliced(sm.Accuracy(), min_count=3)
    >>> s.update([0, 1, 1, 0], [0, 1, 0, 0], slices=["x", "x", "x", "y"]).compute()["y"]
    UndefinedSlice(count=1)
    """

    count: int

    def __float__(self) -> float:
        return math.nan


def is_undefined(value: Any) -> bool:
    """True for the value of a slice below ``min_count``."""
    return isinstance(value, UndefinedSlice)


def key_text(key: Any, names: tuple[str, ...] | None) -> str:
    """A slice key as text: ``"fr"``, or ``"country=fr, device=1"`` with named columns."""
    if names is not None and isinstance(key, tuple) and len(key) == len(names):
        return ", ".join(f"{n}={v}" for n, v in zip(names, key, strict=True))
    if names is not None and len(names) == 1:
        return f"{names[0]}={key}"
    return str(key)


class SlicedResults(dict):  # type: ignore[type-arg]
    """``{slice key: value}`` with notebook output (see the module docstring).

    Parameters
    ----------
    values : Mapping
        The value of each slice (a MetricSet's: ``{member: value}``).
    counts : Mapping
        Each slice's row count.
    key_names : tuple of str, optional
        The key columns' names (tuple keys), None for one unnamed column.
    min_count : int
        The row count below which a slice's value is undefined.
    """

    def __init__(self, values: Mapping[Any, Any], *, counts: Mapping[Any, int],
                 key_names: tuple[str, ...] | None = None, min_count: int = 0) -> None:
        super().__init__(values)
        self.counts = dict(counts)
        self.key_names = key_names
        self.min_count = min_count

    def __reduce__(self) -> Any:  # pickles as itself, with its attributes
        return (_rebuild, (dict(self), self.counts, self.key_names, self.min_count))

    # -- rows ------------------------------------------------------------------------------
    def _key_columns(self) -> list[str]:
        return list(self.key_names) if self.key_names else ["slice"]

    def _key_cells(self, key: Any) -> list[Any]:
        if self.key_names and isinstance(key, tuple) and len(key) == len(self.key_names):
            return [str(k) if not isinstance(k, int) else k for k in key]
        # a tuple key of one column stays a tuple (a pandas index of tuples); OTHER as text
        cell = key if isinstance(key, (str, int, tuple)) else str(key)
        return [cell] * len(self._key_columns())

    def _value_cells(self, value: Any) -> list[tuple[str, Any]]:
        """``(column, cell)`` of one slice's value: one column for a scalar, one per member of
        a MetricSet (per-class values expanded, curves as their summary)."""
        if isinstance(value, Mapping):
            return [row for name, v in value.items() for row in self._value_cells_named(str(name), v)]
        return self._value_cells_named("value", value)

    def _value_cells_named(self, name: str, value: Any) -> list[tuple[str, Any]]:
        if is_undefined(value):
            return [(name, None)]
        return flat_rows(name, value)

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """The header and one row per slice: key column(s), ``rows``, the value column(s)
        (``None`` where a slice is undefined), ``undefined``. O(slices x members)."""
        columns: list[str] = []
        per_slice = []
        for key, value in self.items():
            cells = dict(self._value_cells(value))
            for c in cells:
                if c not in columns:
                    columns.append(c)
            undefined = is_undefined(value) or (isinstance(value, Mapping)
                                                and any(is_undefined(v) for v in value.values()))
            per_slice.append((key, cells, undefined))
        header = [*self._key_columns(), "rows", *columns, "undefined"]
        rows = [[*self._key_cells(key), self.counts.get(key, 0), *(cells.get(c) for c in columns),
                 undefined] for key, cells, undefined in per_slice]
        return header, rows

    # -- conversions -----------------------------------------------------------------------
    def to_dict(self) -> dict[Any, Any]:
        """A plain, JSON-able dict: ``{key: value}`` (tuple keys as ``"a, b"`` text, arrays as
        lists, curves as their ``to_dict()``, undefined slices as None). O(size)."""
        out: dict[Any, Any] = {}
        for key, value in self.items():
            k = key if isinstance(key, (str, int)) else (
                ", ".join(map(str, key)) if isinstance(key, tuple) else str(key))
            if isinstance(value, Mapping):
                out[k] = {str(n): None if is_undefined(v) else plain(v) for n, v in value.items()}
            else:
                out[k] = None if is_undefined(value) else plain(value)
        return out

    def to_pandas(self) -> Any:
        """A pandas DataFrame with one row per slice, indexed by the key (a MultiIndex for
        several key columns), with columns ``rows``, the value(s) and ``undefined``. O(size)."""
        pd = needs_pandas()
        header, rows = self.table()
        nkeys = len(self._key_columns())
        frame = pd.DataFrame(rows, columns=header)
        return frame.set_index(header[:nkeys])

    def _repr_html_(self) -> str:
        header, rows = self.table()
        shown = []
        for row in rows:
            cells = list(row[:-1])
            if row[-1]:  # undefined: say why instead of an empty cell
                cells = [f"undefined (n < {self.min_count})" if c is None else c for c in cells]
            shown.append(cells)
        caption = f"{len(self)} slices" + (f", min_count={self.min_count}" if self.min_count else "")
        return html_table(header[:-1], shown, caption=caption)

    # -- plots -----------------------------------------------------------------------------
    def curves(self, member: str | None = None) -> dict[str, Any]:
        """``{label: curve}`` of the slices whose value (or MetricSet member ``member``) is a
        curve result, labelled ``"<key>, n=<rows>"``; undefined slices left out. O(slices)."""
        out: dict[str, Any] = {}
        for key, value in self.items():
            if isinstance(value, Mapping):
                curve_names = [n for n, v in value.items() if _is_curve(v)]
                if member is None:
                    if len(set(curve_names)) > 1:
                        raise ValueError(f"member: the MetricSet has several curves {curve_names}; "
                                         "name the one to draw")
                    member = curve_names[0] if curve_names else None
                if member is not None and member not in value:
                    raise ValueError(f"member: unknown MetricSet member {member!r} "
                                     f"(have {list(value)})")
                value = value.get(member) if member is not None else None
            if is_undefined(value) or not _is_curve(value):
                continue
            out[f"{key_text(key, self.key_names)}, n={self.counts.get(key, 0):,}"] = value
        if not out:
            raise ValueError("plot: no slice holds a curve result (ROC, PR, DET, calibration or "
                             "gains curve) to draw")
        return out

    def plot(self, ax: Any = None, *, member: str | None = None, **kwargs: Any) -> Any:
        """Overlay the slices' curves on one axes (one line per slice, labelled with its key,
        row count and area) and return the :class:`~streammetrics.plot.Display`; ``member``:
        which curve of a MetricSet. See :func:`streammetrics.plot.plot_curves` (matplotlib
        needed: the ``plot`` extra). O(total points)."""
        from streammetrics.plot import plot_curves

        return plot_curves(self.curves(member), ax, **kwargs)


def _is_curve(value: Any) -> bool:
    if isinstance(value, (list, tuple)):  # one curve per class
        return bool(value) and all(isinstance(v, CurveOutput) for v in value)
    return isinstance(value, CurveOutput)


def _rebuild(values: dict[Any, Any], counts: dict[Any, int], key_names: Any,
             min_count: int) -> SlicedResults:
    return SlicedResults(values, counts=counts, key_names=key_names, min_count=min_count)
