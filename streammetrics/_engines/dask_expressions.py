"""Dask Series given as columns of :func:`streammetrics.dask.evaluate` / ``evaluate_ranked``.

``score=ddf.p * 1.0`` (or a list of such Series for class scores) is added to the frame lazily,
as a column of its own named after the argument (``"score (a Series)"``), after checking that
it is aligned with the frame partition by partition; nothing is computed on the client. Shared
by ``streammetrics.dask`` and :mod:`streammetrics._engines.dask_ranked` (one copy).
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from .messages import brief
from .request import Request


def is_series(value: Any) -> bool:
    """A Dask Series (of dask-expr, or of the legacy ``dask.dataframe``): one lazy column."""
    import dask

    return bool(dask.is_dask_collection(value)) and getattr(value, "ndim", None) == 1 \
        and hasattr(value, "divisions")


def _co_aligned(frame: Any, series: Any) -> bool | None:
    """Whether dask-expr assigns ``series`` to ``frame`` partition by partition (both derived,
    blockwise, from the same inputs); None where that cannot be asked (no dask-expr)."""
    import importlib

    for where in ("dask.dataframe.dask_expr._expr", "dask_expr._expr"):  # dask >= 2025.1, before
        with contextlib.suppress(ImportError):
            co_aligned = importlib.import_module(where).are_co_aligned
            if hasattr(frame, "expr") and hasattr(series, "expr"):
                return bool(co_aligned(frame.expr, series.expr))
    return None


def _check_aligned(ddf: Any, series: Any, what: str) -> None:
    """``series`` goes into ``ddf`` partition by partition, the rows by their index -- derived
    from the frame, or of its known divisions -- else a ValueError naming ``what``: never a
    repartition or an alignment of unknown divisions (which computes or misplaces rows)."""
    if series.npartitions == ddf.npartitions:
        co = _co_aligned(ddf, series)
        if co or tuple(series.divisions) == tuple(ddf.divisions) and (ddf.known_divisions or co is None):
            return
    parts = [f"{x.npartitions} partition(s), {'known' if x.known_divisions else 'unknown'} divisions"
             for x in (series, ddf)]
    raise ValueError(f"{what}: {brief(series)} is not aligned with the frame ({parts[0]}; the frame: "
                     f"{parts[1]}); give a Series derived from the frame (ddf.p * 1.0), or one with "
                     "the frame's divisions")


def series_columns(ddf: Any, request: Request) -> tuple[Any, Request]:
    """Dask Series given as columns (``score=ddf.p * 1.0``): assigned to the frame, lazily, under
    names that say the argument (``"score (a Series)"``, ``"score[1] (a Series)"`` for an element
    of a list: a null row's message names it) and none of its columns has; the request naming
    those. Nothing is computed: the range path and the state path see ordinary columns."""
    taken = set(ddf.columns)
    new: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    for what in ("label", "score", "target", "prediction", "weight"):
        spec = getattr(request, what)
        specs = list(spec) if isinstance(spec, (list, tuple)) else [spec]
        if not any(is_series(c) for c in specs):
            continue
        for i, c in enumerate(specs):
            if is_series(c):
                _check_aligned(ddf, c, what)
                name = f"{what}[{i}] (a Series)" if isinstance(spec, (list, tuple)) else f"{what} (a Series)"
                while name in taken:
                    name = f"_{name}_"
                taken.add(name)
                new[name], specs[i] = c, name
        changes[what] = specs if isinstance(spec, (list, tuple)) else specs[0]
    if not new:
        return ddf, request
    return ddf.assign(**new), dataclasses.replace(request, **changes)
