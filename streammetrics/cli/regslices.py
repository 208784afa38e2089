"""``streammetrics evaluate --target COL --prediction COL --by COL``: the regression table per slice.

The rows are streamed once through :class:`~streammetrics.Sliced` wrappers of the regression
MetricSets (the point metrics; with ``--lower``/``--upper`` the interval metrics), keyed by the
``--by`` columns as for classification (:mod:`streammetrics.cli.slices`: the same keys, slice
limit, table, disparity summary and JSON). Several outputs are reported per slice by their
average (scikit-learn's ``"uniform_average"``).

Cost: one pass; per batch one grouping of the keys and the metrics' sliced update. Memory:
slices x the metrics' state.
"""

from __future__ import annotations

import argparse
import dataclasses
import warnings
from typing import Any

import numpy as np

from .errors import InputError
from .regression import build, located, prepare
from .report import emit, json_value
from .slices import key_column, print_slices, slice_results

__all__ = ["run_regression_sliced"]

_MAX_SLICES = 10_000


def _merge(first: dict[str, Any] | None, second: dict[str, Any] | None) -> dict[str, Any]:
    """The per-slice documents of the point and interval metrics as one (slices matched by key)."""
    if first is None or second is None:
        doc = first or second
        assert doc is not None
        return doc
    by_key = {repr(e["key"]): e for e in first["slices"]}
    for entry in second["slices"]:
        mine = by_key.get(repr(entry["key"]))
        if mine is None:
            first["slices"].append(entry)
        else:
            mine["metrics"].update(entry["metrics"])
            mine["intervals"].update(entry["intervals"])
    first["disparity"].update(second["disparity"])
    for col, rows in second["marginals"].items():
        mine_rows = {repr(r["key"]): r for r in first["marginals"].get(col, [])}
        for r in rows:
            if repr(r["key"]) in mine_rows:
                mine_rows[repr(r["key"])]["metrics"].update(r["metrics"])
    return first


def _add_bounds(doc: dict[str, Any], sliced: Any, names: list[str]) -> bool:
    """Each slice's certified bounds of its binned values (``bounds``: ``{metric: [low, high]}``,
    only where a value is not exact); returns whether every value is exact. O(slices x metrics)."""
    exact = True
    keys = list(sliced.compute())  # the order of slice_results' table
    for entry, key in zip(doc["slices"], keys, strict=True):
        entry["bounds"] = {}
        if key not in sliced.counts():
            continue
        metric = sliced.slice(key)
        for name in names:
            m = metric[name]
            if hasattr(m, "bounds") and not getattr(m, "is_exact", True):
                exact = False
                lo, hi = m.bounds()
                entry["bounds"][name] = [json_value(float(np.mean(lo))), json_value(float(np.mean(hi)))]
    return exact


def run_regression_sliced(args: argparse.Namespace, files: list[str], title: str) -> int:
    """``evaluate --target ... --by COL``: stream, then print / write the per-slice tables.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (``by``, ``json``, ``batch_size``, ``no_intervals``).
    files : list of str
        The input files, in order.
    title : str
        The title line, completed with the rows and slices.

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    InputError
        A ``--by`` column given twice (a usage error), or a data error naming the file, row and
        column.
    """
    import streammetrics as sm

    cols, names, settings, notes = prepare(args)
    by: list[str] = args.by
    if len(set(by)) != len(by):
        raise InputError(f"--by: a column given twice ({by})", 2)
    k = len(cols.targets)
    point, interval = build(names, dataclasses.replace(settings, multioutput="uniform_average"))
    sets = [None if ms is None else sm.Sliced(ms, max_slices=_MAX_SLICES, overflow="other")
            for ms in (point, interval)]
    rows = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path, offset, batch, y, pred, bounds, w in cols.batches(files, args.batch_size, by):
            keys = [key_column(batch, c) for c in by]
            slices: Any = keys[0] if len(by) == 1 else dict(zip(by, keys, strict=True))
            for sliced, p, interval_set in ((sets[0], pred, False), (sets[1], bounds, True)):
                if sliced is None or p is None:  # no interval metrics without --lower/--upper
                    continue
                try:
                    sliced.update(y, p, slices=slices, sample_weight=w)
                except ValueError as exc:
                    raise located(exc, path, offset, batch.num_rows, cols.where(interval_set)) from None
            rows += batch.num_rows
        if rows == 0:
            raise InputError(f"{files[0] if len(files) == 1 else 'the inputs'}: no rows", 1)
        members = [set(ms) if ms is not None else set() for ms in (point, interval)]
        docs = [None if s is None else slice_results(s, by, [n for n in names if n in m], args)
                for s, m in zip(sets, members, strict=True)]
        exact = True
        if docs[0] is not None and sets[0] is not None:
            exact = _add_bounds(docs[0], sets[0], [n for n in names if n in members[0]])
    res = _merge(docs[0], docs[1])
    res["exact"] = exact
    if not exact:
        notes.append("binned values (--max-bytes) are the mid-points of their certified bounds, shown "
                     "below them as [low–high] (JSON: each slice's bounds); the disparity reads the "
                     "mid-points")
    if k > 1:
        notes.append(f"{k} outputs: each slice's value is the average over the outputs")
    res.update(rows=rows, task="regression", outputs=list(cols.targets), files=files, notes=notes)
    title += f" -- {rows} rows by {', '.join(by)}, {len(res['slices'])} slices, regression"
    emit(res, args.json, lambda: print_slices(res, title))
    return 0
