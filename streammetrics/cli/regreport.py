"""The results of ``streammetrics evaluate --target/--prediction``: the regression JSON document
(the keys of the classification one, with ``per_output`` in place of ``per_class``) and its
terminal table (rich when installed, else plain text).

One output: one row per metric (value, its interval where the library gives one, its certified
bounds when binned). Several outputs: per metric one row per output, then the average (the mean
over outputs, scikit-learn's ``"uniform_average"``); intervals are per output (an average of
proportions has no Wilson interval).
"""

from __future__ import annotations

import argparse
import contextlib
import warnings
from typing import Any

import numpy as np

from .report import broken_pipe, emit, json_value

__all__ = ["emit_regression", "output_names", "print_regression", "results", "table_rows"]


def output_names(targets: list[str], predictions: list[str]) -> list[str]:
    """The name of each output: its target column, or ``target/prediction`` when a target column
    is repeated (two predictions of one target).

    Parameters
    ----------
    targets, predictions : list of str
        The ``--target`` and ``--prediction`` columns, in order.

    Returns
    -------
    list of str
        One name per output, all distinct.
    """
    if len(set(targets)) == len(targets):
        return list(targets)
    return [f"{t}/{p}" for t, p in zip(targets, predictions, strict=True)]


def _per_output(value: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(value, dtype=np.float64))


def results(point: Any, interval: Any, names: list[str], rows: int, args: argparse.Namespace,
            targets: list[str], predictions: list[str], lowers: list[str], uppers: list[str],
            notes: list[str], confidence: float = 0.95) -> dict[str, Any]:
    """The result document of a regression run.

    Parameters
    ----------
    point, interval : MetricSet or None
        The updated point and interval metrics (each per output).
    names : list of str
        The reported rows, in order.
    rows : int
        Rows read.
    args : argparse.Namespace
        The parsed options (``no_intervals``, ``max_bytes``, ``alpha``, ``quantile``, ``power``,
        ``weight``).
    targets, predictions, lowers, uppers : list of str
        The columns.
    notes : list of str
        One-line notes (rows left out, and why).
    confidence : float, default 0.95
        Level of the intervals.

    Returns
    -------
    dict
        ``metrics`` (one value per metric: the output's, or the mean over outputs), ``per_output``
        (several outputs: ``{metric: {output: value}}``), ``intervals`` / ``per_output_intervals``,
        ``bounds`` / ``per_output_bounds`` (binned values only), ``rows``, ``exact``, ``task``,
        ``outputs``, the columns and settings, ``state_bytes``, ``warnings``, ``notes``.
        O(metrics x outputs) after the metrics' ``compute``.
    """
    outs = output_names(targets, predictions)
    k = len(outs)
    members = {n: (point if point is not None and n in point else interval)[n] for n in names}
    metrics: dict[str, Any] = {}
    per_output: dict[str, Any] = {}
    intervals: dict[str, Any] = {}
    pc_intervals: dict[str, Any] = {}
    bounds: dict[str, Any] = {}
    pc_bounds: dict[str, Any] = {}
    exact = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, m in members.items():
            values = _per_output(m.compute())
            metrics[name] = json_value(float(np.mean(values)) if k > 1 else values[0])
            if k > 1:
                per_output[name] = dict(zip(outs, json_value(values), strict=True))
            if hasattr(m, "bounds") and not getattr(m, "is_exact", True):
                exact = False
                lo, hi = (_per_output(b) for b in m.bounds())
                bounds[name] = [json_value(float(np.mean(lo))), json_value(float(np.mean(hi)))]
                if k > 1:
                    pc_bounds[name] = {o: [json_value(a), json_value(b)]
                                       for o, a, b in zip(outs, lo, hi, strict=True)}
            if not args.no_intervals and hasattr(m, "interval"):
                with contextlib.suppress(ValueError, TypeError, NotImplementedError):
                    lo, hi = (_per_output(b) for b in m.interval(confidence))
                    if k == 1:
                        intervals[name] = [json_value(lo[0]), json_value(hi[0])]
                    else:
                        pc_intervals[name] = {o: [json_value(a), json_value(b)]
                                              for o, a, b in zip(outs, lo, hi, strict=True)}
    state_bytes = sum(int(ms.nbytes) for ms in (point, interval) if ms is not None)
    return {
        "metrics": metrics,
        "per_output": per_output,
        "intervals": intervals,
        "per_output_intervals": pc_intervals,
        "confidence": confidence,
        "bounds": bounds,
        "per_output_bounds": pc_bounds,
        "rows": rows,
        "exact": exact,
        "task": "regression",
        "outputs": outs,
        "targets": targets,
        "predictions": predictions,
        "lower": lowers or None,
        "upper": uppers or None,
        "alpha": args.alpha,
        "quantile": args.quantile if args.quantile is not None else 0.5,
        "power": args.power if args.power is not None else 0.0,
        "weighted": args.weight is not None,
        "max_bytes": args.max_bytes,
        "state_bytes": state_bytes,
        "files": [],  # set by the caller
        "warnings": list(dict.fromkeys(str(x.message) for x in caught)),
        "notes": notes,
    }


def _fmt(v: Any) -> str:
    return "undefined" if v is None else f"{v:.6g}"


def _pair(p: Any) -> str:
    def short(v: Any) -> str:
        return "undefined" if v is None else f"{v:.4g}"

    return f"[{short(p[0])}, {short(p[1])}]" if p else ""


def table_rows(res: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows (one output: one row per metric; several: per metric one row
    per output, then ``average``).

    Parameters
    ----------
    res : dict
        The document of :func:`results`.

    Returns
    -------
    (list of str, list of list of str)
        Headers and rows, as text. O(metrics x outputs).
    """
    several = len(res["outputs"]) > 1
    has_iv = bool(res["intervals"] or res["per_output_intervals"])
    has_b = bool(res["bounds"])
    headers = ["metric"] + (["output"] if several else []) + ["value"]
    headers += [f"{res['confidence']:.0%} interval"] if has_iv else []
    headers += ["certified bounds"] if has_b else []
    rows = []
    for name, v in res["metrics"].items():
        if several:
            for o in res["outputs"]:
                row = [name, o, _fmt(res["per_output"][name][o])]
                row += [_pair(res["per_output_intervals"].get(name, {}).get(o))] if has_iv else []
                row += [_pair(res["per_output_bounds"].get(name, {}).get(o))] if has_b else []
                rows.append(row)
            row = [name, "average", _fmt(v)] + ([""] if has_iv else [])
        else:
            row = [name, _fmt(v)] + ([_pair(res["intervals"].get(name))] if has_iv else [])
        row += [_pair(res["bounds"].get(name))] if has_b else []
        rows.append(row)
    return headers, rows


def print_regression(res: dict[str, Any], title: str) -> None:
    """Print the regression table, then the notes and warnings.

    Parameters
    ----------
    res : dict
        The document of :func:`results`.
    title : str
        The line printed first.

    Returns
    -------
    None
    """
    headers, rows = table_rows(res)
    lines = [f"note: {n}" for n in res["notes"]] + [f"warning: {w}" for w in res["warnings"]]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich missing: plain text
        print(title)
        for row in [headers, *rows]:
            print("  ".join(f"{c:<20}" for c in row).rstrip())
        for line in lines:
            print(line)
        return
    console = Console()
    console.on_broken_pipe = broken_pipe  # type: ignore[method-assign]  # rich would exit 1 itself
    console.print(title, highlight=False, soft_wrap=True)
    table = Table()
    for i, h in enumerate(headers):
        left = i == 0 or (i == 1 and h == "output")
        table.add_column(h, justify="left" if left else "right", no_wrap=left)
    several = len(res["outputs"]) > 1
    for row in rows:
        table.add_row(*row, end_section=several and row[1] == "average")
    console.print(table)
    for line in lines:
        console.print(line, soft_wrap=True, highlight=False, markup=False)


def emit_regression(res: dict[str, Any], target: str | None, title: str) -> None:
    """Write the document: JSON on stdout (``--json -``), else the table and, with a path, the
    JSON file (as :func:`streammetrics.cli.report.emit`).

    Parameters
    ----------
    res : dict
        The document of :func:`results`.
    target : str or None
        ``--json``.
    title : str
        The table's first line.

    Returns
    -------
    None
    """
    emit(res, target, lambda: print_regression(res, title))
