"""The results of ``streammetrics evaluate``: the JSON document (a stable snake_case schema) and
the terminal tables (rich when installed, else plain text)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["results", "print_table", "emit", "RANKING", "broken_pipe", "json_value"]

RANKING = ("auroc", "average_precision", "ks")  # on the score state: bins with --max-bytes
#: the terminal's per-class table shows this many classes (all of them are in --json)
_MAX_TABLE_CLASSES = 40


def _binned_delong(m: Any, confidence: float) -> tuple[float, float] | None:
    """DeLong's interval of a binary ``--max-bytes`` AUROC while its bins are exact (each one
    distinct score) and the run has no ``--weight`` column (the counts then are the samples):
    the interval the exact state gives, from the bins' counts; None once bins hold several
    scores (the certified bounds are reported then). O(bins)."""
    from streammetrics._core.intervals import z_value
    from streammetrics.ranking._delong import delong_counts

    with m._lock:
        if not m._state.is_exact:
            return None
        pos, neg = m._state.counts(0).steps()
    auc, var = delong_counts(pos, neg)
    if math.isnan(var):
        return None
    half = z_value(confidence) * math.sqrt(max(var, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def json_value(v: Any) -> Any:
    """A computed value as JSON: numpy arrays and tuples as lists, numpy scalars as Python
    numbers, NaN as None (``null``), recursively.

    Parameters
    ----------
    v : object
        A value, an array or a list of them.

    Returns
    -------
    object
        The JSON-able value. O(size of ``v``).
    """
    if isinstance(v, np.ndarray):
        return [json_value(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return None if math.isnan(f) else f
    if isinstance(v, np.integer):
        return int(v)
    return v


def results(plan: Plan, ms: Any, names: list[str], rows: int, args: argparse.Namespace,
             confidence: float = 0.95) -> dict[str, Any]:
    """The result document of ``evaluate``: values, per-class values, intervals, certified bounds
    and the run's settings, with the library's warnings collected (each once).

    Parameters
    ----------
    plan : Plan
        The run's plan (task, classes, label mapping, weight column, files).
    ms : Members
        The updated metrics (``plot_*`` members are not reported).
    names : list of str
        The reported rows, in order.
    rows : int
        Rows read.
    args : argparse.Namespace
        The parsed options (``no_intervals``, ``threshold``, ``max_bytes``).
    confidence : float, default 0.95
        Level of the intervals.

    Returns
    -------
    dict
        The JSON-able document (``metrics``, ``per_class``, ``intervals``, ``bounds``, ``rows``,
        ``task``, ``classes``, ``label_mapping``, ``warnings``, ...).
    """
    caught: list[str] = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        values = {n: ms[n].compute() for n in ms if not n.startswith("plot_")}
        metrics: dict[str, Any] = {}
        per_class: dict[str, Any] = {}
        intervals: dict[str, Any] = {}
        bounds: dict[str, Any] = {}
        pc_intervals: dict[str, Any] = {}
        pc_bounds: dict[str, Any] = {}
        classes = plan.classes or []
        exact = True
        for name in names:
            metrics[name] = json_value(values[name])
            if f"{name}_per_class" in values:
                per_class[name] = dict(zip(classes, json_value(values[f"{name}_per_class"]), strict=False))
                pcm = ms[f"{name}_per_class"]
                if name in RANKING and not getattr(pcm, "is_exact", True) and hasattr(pcm, "bounds"):
                    pc_bounds[name] = _per_class_pairs(classes, *pcm.bounds())
                if not args.no_intervals and hasattr(pcm, "interval"):
                    # Wilson for proportions, DeLong for AUROC (exact state only)
                    with contextlib.suppress(ValueError, TypeError, NotImplementedError):
                        pc_intervals[name] = _per_class_pairs(classes, *pcm.interval(confidence))
            m = ms[name]
            if name in RANKING:
                is_exact = bool(getattr(m, "is_exact", True))
                exact = exact and is_exact
                if not is_exact and hasattr(m, "bounds"):
                    lo, hi = m.bounds()
                    bounds[name] = [json_value(lo), json_value(hi)]
            if not args.no_intervals and hasattr(m, "interval") and (
                plan.task == "binary" or name == "accuracy"
            ):
                try:
                    lo, hi = m.interval(confidence)
                    intervals[name] = [json_value(lo), json_value(hi)]
                except (ValueError, TypeError, NotImplementedError):
                    if name == "auroc" and plan.weight is None and plan.task == "binary":
                        exact_bins = _binned_delong(m, confidence)
                        if exact_bins is not None:
                            intervals[name] = [json_value(exact_bins[0]), json_value(exact_bins[1])]
        caught = list(dict.fromkeys(str(x.message) for x in w))
    return {
        "metrics": metrics,
        "per_class": per_class,
        "intervals": intervals,
        "per_class_intervals": pc_intervals,
        "confidence": confidence,
        "bounds": bounds,
        "per_class_bounds": pc_bounds,
        "rows": rows,
        "exact": exact,
        "task": plan.task,
        "threshold": args.threshold if plan.task != "multiclass" else None,
        "classes": classes,
        "label_mapping": _mapping(plan),
        "positive_label": plan.positive if plan.task == "binary" else None,
        "label_mapping_from": plan.mapping_from,
        "weighted": plan.weight is not None,
        "max_bytes": args.max_bytes,
        "state_bytes": int(ms.nbytes),
        "files": plan.files,
        "warnings": caught,
    }


def _mapping(plan: Plan) -> dict[str, int] | None:
    """label -> class index: text labels as mapped; numeric labels with --pos-label as streamed."""
    if plan.mapping is not None:
        return dict(sorted(plan.mapping.items(), key=lambda kv: kv[1]))
    if plan.pos_value is not None:
        neg = {} if plan.neg_value is None else {str(plan.neg_value): 0}
        return {**neg, str(plan.positive): 1}
    return None


def _per_class_pairs(classes: list[str], lo: Any, hi: Any) -> dict[str, list[Any]]:
    """{class: [low, high]} from two per-class arrays (nan -> null)."""
    return {c: [json_value(a), json_value(b)] for c, a, b in zip(classes, np.asarray(lo).tolist(),
                                                          np.asarray(hi).tolist(), strict=False)}


def print_table(res: dict[str, Any], title: str) -> None:
    """Print the result document as tables (rich when installed, else plain text): the metrics
    with intervals and bounds, the per-class table, the label mapping, notes and warnings.

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
    def fmt(v: Any) -> str:
        return "undefined" if v is None else f"{v:.4f}"

    intervals = bool(res["intervals"])  # none (--no-intervals, or none defined): no column
    headers = ["metric", "value"] + ([f"{res['confidence']:.0%} interval"] if intervals else [])
    if res["bounds"]:
        headers.append("certified bounds")
    rows = []
    for name, v in res["metrics"].items():
        iv = res["intervals"].get(name)
        row = [name, fmt(v)] + ([f"[{fmt(iv[0])}, {fmt(iv[1])}]" if iv else ""] if intervals else [])
        if res["bounds"]:
            b = res["bounds"].get(name)
            row.append(f"[{fmt(b[0])}, {fmt(b[1])}]" if b else "")
        rows.append(row)
    per_class = res["per_class"]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich missing: plain text
        print(title)
        for row in [headers, *rows]:
            print("  ".join(f"{c:<20}" for c in row))
        if res["label_mapping"]:
            print(_mapping_line(res))
        for note in res.get("notes", []):
            print(f"note: {note}")
        return
    console = Console()
    console.on_broken_pipe = broken_pipe  # type: ignore[method-assign]  # rich would exit 1 itself
    console.print(title, highlight=False, soft_wrap=True)
    table = Table()
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    if per_class:
        table, note = _per_class_table(res, fmt)
        console.print(table)
        if note:
            console.print(note, soft_wrap=True, highlight=False, markup=False)
    if res["label_mapping"]:
        console.print(_mapping_line(res), soft_wrap=True, highlight=False, markup=False)
    for note in res.get("notes", []):
        console.print(f"note: {note}", soft_wrap=True, highlight=False, markup=False)
    for msg in res["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {msg}")


def emit(res: dict[str, Any], target: str | None, show: Callable[[], None]) -> None:
    """Write a command's result document (``evaluate``, ``slices``): as JSON on stdout when
    ``target`` is ``"-"``; else ``show()`` (the terminal table) and, with a path, the JSON into that
    file (``InputError``, exit status 2, when it cannot be written). O(size of the document).

    Parameters
    ----------
    res : dict
        The JSON-able document.
    target : str or None
        ``--json``: ``"-"`` (stdout), a path, or None.
    show : callable
        Prints the terminal table.

    Returns
    -------
    None
    """
    if target == "-":
        json.dump(res, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    show()
    if target:
        try:
            with open(target, "w", encoding="utf-8") as fh:
                json.dump(res, fh, indent=2)
                fh.write("\n")
        except OSError as exc:
            raise InputError(f"--json: cannot write {target}: {exc.strerror or exc}", 2) from None


def _per_class_table(res: dict[str, Any], fmt: Callable[[Any], str]) -> tuple[Any, str]:
    """The per-class rich table -- one row per class (the first ``_MAX_TABLE_CLASSES``), one column
    per metric; below a value its interval (``low–high``) or, for a binned value, its certified
    bounds (``[low–high]``) -- and the note explaining it."""
    from rich.table import Table

    def short(v: Any) -> str:
        return "?" if v is None else f"{v:.3f}"

    per_class, ivs, bds = res["per_class"], res["per_class_intervals"], res["per_class_bounds"]
    notes = []
    if ivs:
        kind = "Poisson-binomial, of the estimate" if res.get("estimated") else "Wilson; DeLong for AUROC"
        notes.append(f"below a value: its {res['confidence']:.0%} interval ({kind})")
    if bds:
        notes.append("[low–high]: certified bounds of a binned value")
    pc = Table(title="per class", title_justify="left")
    pc.add_column("class", no_wrap=True)
    for name in per_class:
        pc.add_column(name, justify="right")
    shown = res["classes"][:_MAX_TABLE_CLASSES]
    for c in shown:
        cells = []
        for n in per_class:
            cell = fmt(per_class[n].get(c))
            if n in ivs and ivs[n].get(c) and ivs[n][c][0] is not None:
                lo, hi = ivs[n][c]
                cell += f"\n[dim]{short(lo)}–{short(hi)}[/dim]"
            elif n in bds and bds[n].get(c):
                lo, hi = bds[n][c]
                cell += f"\n[dim]\\[{short(lo)}–{short(hi)}][/dim]"
            cells.append(cell)
        pc.add_row(str(c), *cells)
    if len(res["classes"]) > len(shown):
        pc.add_row(f"… {len(res['classes']) - len(shown)} more", *([""] * len(per_class)))
        notes.append("every class is in --json")
    return pc, "; ".join(notes)




def _mapping_line(res: dict[str, Any]) -> str:
    """``labels: 'healthy' -> 0, 'cancer' -> 1 (positive: 'cancer', from the score column name ...)``"""
    line = "labels: " + ", ".join(f"{k!r} -> {v}" for k, v in res["label_mapping"].items())
    notes = []
    if res["positive_label"] is not None:
        notes.append(f"positive: {res['positive_label']!r}")
    if res["label_mapping_from"]:
        notes.append(f"from {res['label_mapping_from']}")
    return line + (f" ({', '.join(notes)})" if notes else "")


def broken_pipe() -> None:
    """rich's hook for a closed stdout (``| head``): raise, for the command's handler (exit 0).

    Returns
    -------
    None
        Never returns.

    Raises
    ------
    BrokenPipeError
        Always.
    """
    raise BrokenPipeError
