"""``streammetrics evaluate --by COLUMN [--by COLUMN2]``: every metric per slice, in one pass.

The rows are streamed once through a :class:`~streammetrics.Sliced` MetricSet keyed by the
``--by`` columns (several columns: their combinations, plus each column alone). Printed: one
table row per slice (rows seen, each metric with its 95% interval where it has one: Wilson,
DeLong for AUROC), then the disparity summary per metric (overall value, the worst and best
slice, ``max - min`` and ``min / max`` between slices, and the largest distance to the overall
value: Fairlearn's ``MetricFrame`` definitions). ``--json`` writes the same (plus each column's
marginal slices); ``--plot DIR`` overlays the slices' ROC and PR curves (the 10 largest slices).
Probabilistic metrics (log loss, Brier, ECE, KS) are not sliced: they are left out here.

Slice keys are read as integers (integer and boolean columns) or strings (anything else; a
missing value is the key ``"(null)"``). At most 10,000 slices; beyond that the keys are folded
into one ``OTHER`` slice, which the table reports with the number of keys it absorbed.

Cost: one pass; per batch one grouping of the keys and the metrics' sliced update (one
scatter-add over (slice, cell) for the confusion metrics, one grouping sort for the ranking
ones). Memory: slices x the metrics' state.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from . import columns
from .errors import InputError
from .plan import Plan
from .report import emit

__all__ = ["key_column", "print_slices", "run_sliced", "slice_results"]

_MAX_SLICES = 10_000
_PLOTTED = 10
_RANKED = ("auroc", "average_precision")


def key_column(batch: Any, name: str) -> np.ndarray:
    """A slice-key column as integers (integer / boolean columns without nulls) or strings.

    Parameters
    ----------
    batch : pyarrow.RecordBatch
        The batch.
    name : str
        The ``--by`` column.

    Returns
    -------
    ndarray
        int64 keys, or str keys (a missing value is ``"(null)"``). O(n).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    col = batch.column(name)
    if (pa.types.is_integer(col.type) or pa.types.is_boolean(col.type)) and col.null_count == 0:
        return np.asarray(col.to_numpy(zero_copy_only=False)).astype(np.int64)
    text = pc.fill_null(pc.cast(col, pa.string()), "(null)")
    return np.asarray(text.to_numpy(zero_copy_only=False), dtype=str)


def _metric_set(plan: Plan, names: list[str], args: argparse.Namespace, metrics: dict[str, Any]) -> Any:
    import streammetrics as sm

    members: dict[str, Any] = {}
    ml = plan.task == "multilabel"
    for name in names:
        if name not in metrics:
            continue
        make = metrics[name][0]
        extra = {"max_bytes": args.max_bytes} if args.max_bytes and name in _RANKED else {}
        members[name] = make(plan.num_classes, ml, args.threshold, "macro", **extra)
    if args.plot and plan.task == "binary":
        members["plot_roc"] = sm.ROCCurve()
        members["plot_pr"] = sm.PRCurve()
    if not members:
        raise InputError("--by: none of the chosen metrics can be sliced (log loss, Brier, ECE and "
                         "KS are not sliced); choose others with --metrics", 2)
    return sm.Sliced(sm.MetricSet(**members), max_slices=_MAX_SLICES, overflow="other")


def _stream(plan: Plan, sliced: Any, by: list[str], args: argparse.Namespace) -> int:
    rows = 0
    for src, batch, offset in plan.batches(args.batch_size, extra=by):
        path = src.path
        y = columns.labels(plan, batch, path, offset)
        s = columns.scores(plan, batch, path, offset)
        w = columns.weights(plan, batch, path, offset) if plan.weight else None
        keys = [key_column(batch, c) for c in by]
        slices: Any = keys[0] if len(by) == 1 else dict(zip(by, keys, strict=True))
        try:
            sliced.update(y, s, slices=slices, sample_weight=w)
        except ValueError as exc:
            raise InputError(f"{path}: rows {offset + 1}-{offset + batch.num_rows}: {exc}", 1) from None
        rows += batch.num_rows
    return rows


def _plain(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None  # curves, arrays, undefined slices


def _key_dict(key: Any, by: list[str]) -> dict[str, Any]:
    import streammetrics as sm

    if key is sm.OTHER:
        return dict.fromkeys(by, "OTHER")
    values = key if len(by) > 1 else (key,)
    return dict(zip(by, values, strict=True))


def slice_results(sliced: Any, by: list[str], names: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """The JSON-able per-slice table, marginals and disparity summary.

    Parameters
    ----------
    sliced : Sliced
        The updated ``Sliced(MetricSet)``.
    by : list of str
        The ``--by`` columns.
    names : list of str
        The rows to report (members of the MetricSet).
    args : argparse.Namespace
        The parsed options (``no_intervals``).

    Returns
    -------
    dict
        ``by``, ``slices`` (key, rows, metrics, intervals), ``disparity``, ``marginals``,
        ``absorbed_keys``, ``confidence``. O(slices x metrics) after the metrics' ``compute``.
    """
    import streammetrics as sm

    shown = [n for n in names if n in sliced.metric]
    values = sliced.compute()
    counts = sliced.counts()
    intervals = {} if args.no_intervals else sliced.interval()
    table = []
    for key, row in values.items():
        entry: dict[str, Any] = {"key": _key_dict(key, by), "rows": counts.get(key, 0),
                                 "metrics": {n: _plain(row[n]) for n in shown}, "intervals": {}}
        for n in shown:
            iv = intervals.get(key, {}).get(n) if isinstance(intervals.get(key), dict) else None
            if iv is not None and all(np.ndim(x) == 0 for x in iv):
                entry["intervals"][n] = [_plain(iv[0]), _plain(iv[1])]
        table.append(entry)
    overall = sliced.overall()
    summary = {}
    diff_b, diff_o = sliced.difference(), sliced.difference(method="to_overall")
    ratio_b, ratio_o = sliced.ratio(), sliced.ratio(method="to_overall")
    gmin, gmax = sliced.group_min(errors="coerce"), sliced.group_max(errors="coerce")
    for n in shown:
        summary[n] = {"overall": _plain(overall[n]), "min": _plain(gmin[n]), "max": _plain(gmax[n]),
                      "difference": _plain(diff_b[n]), "ratio": _plain(ratio_b[n]),
                      "difference_to_overall": _plain(diff_o[n]), "ratio_to_overall": _plain(ratio_o[n])}
    marginals = {}
    if len(by) > 1:
        for j, col in enumerate(by):
            marginals[col] = [{"key": (k if k is not sm.OTHER else "OTHER"),
                               "metrics": {n: _plain(v[n]) for n in shown}}
                              for k, v in sliced.marginal(j).items()]
    return {"by": by, "slices": table, "disparity": summary, "marginals": marginals,
            "absorbed_keys": sliced.n_absorbed, "confidence": 0.95}


def print_slices(res: dict[str, Any], title: str) -> None:
    """The per-slice values as metric rows by slice columns (each value with its interval on the
    line below), as many slices side by side as the terminal's width holds (more tables below
    for more slices); then the disparity table. A file or pipe gets 100 columns.

    Parameters
    ----------
    res : dict
        The document of :func:`slice_results` (with ``notes``, optionally).
    title : str
        The line printed first.

    Returns
    -------
    None
    """
    def fmt(v: Any) -> str:
        return "undefined" if v is None else f"{v:.4f}"

    names = list(res["disparity"])
    slices = [(" / ".join(str(entry["key"][c]) for c in res["by"]), entry) for entry in res["slices"]]
    dhead = ["metric", "overall", "min", "max", "max - min", "min / max", "max |slice - overall|"]
    drows = [[n, *(fmt(d[k]) for k in ("overall", "min", "max", "difference", "ratio",
                                         "difference_to_overall"))]
             for n, d in res["disparity"].items()]

    def cell(entry: dict[str, Any], n: str) -> str:
        iv = entry["intervals"].get(n)
        bd = entry.get("bounds", {}).get(n)  # certified bounds of a binned value (regression)
        return fmt(entry["metrics"][n]) + (f"\n{fmt(iv[0])}–{fmt(iv[1])}" if iv else "") + \
            (f"\n[{fmt(bd[0])}–{fmt(bd[1])}]" if bd else "")

    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(title)
        for label, entry in slices:
            print(f"{label}: {entry['rows']:,} rows")
            for n in names:
                print(f"  {n:<20}{cell(entry, n).replace(chr(10), '  ')}")
        for r in [dhead, *drows]:
            print("  ".join(f"{c:<12}" for c in r))
        for note in res.get("notes", []):
            print(f"note: {note}")
        return
    console = Console(width=None if sys.stdout.isatty() else 100)
    console.print(title, highlight=False, soft_wrap=True)
    label_width = max(len(n) for n in [*names, "rows"]) + 3
    per_table = max(1, (console.width - label_width) // (max([13, *(len(s) for s, _ in slices)]) + 3))
    caption = "per slice" + (f" ({res['confidence']:.0%} intervals below the values)"
                             if any(e["intervals"] for _, e in slices) else "")
    for start in range(0, len(slices), per_table):
        part = slices[start:start + per_table]
        t = Table(title=caption if start == 0 else None)
        t.add_column(" / ".join(res["by"]), justify="left")
        for label, _ in part:
            t.add_column(label, justify="right")
        t.add_row("rows", *(f"{e['rows']:,}" for _, e in part))
        for n in names:
            t.add_row(n, *(cell(e, n) for _, e in part))
        console.print(t)
    t = Table(title="disparity between slices")
    for c in dhead:
        t.add_column(c, justify="left" if c == "metric" else "right")
    for r in drows:
        t.add_row(*r)
    console.print(t)
    if res["absorbed_keys"]:
        console.print(f"note: {res['absorbed_keys']} keys beyond {_MAX_SLICES} slices are folded into OTHER")
    for note in res.get("notes", []):
        console.print(f"note: {note}", soft_wrap=True, highlight=False, markup=False)


def _plots(directory: str, sliced: Any, by: list[str]) -> list[str]:
    """The ROC and PR curves of the ``_PLOTTED`` largest slices overlaid, one figure each,
    drawn by :meth:`SlicedResults.plot` (as in a notebook)."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from streammetrics.wrappers.sliced.results import SlicedResults

    counts = sliced.counts()
    chosen = sorted(counts, key=lambda k: -counts[k])[:_PLOTTED]
    written = []
    for member, fname in (("plot_roc", "roc_by_slice.png"), ("plot_pr", "pr_by_slice.png")):
        curves = SlicedResults({k: sliced.slice(k)[member].compute() for k in chosen},
                               counts=counts, key_names=tuple(by))
        fig, ax = plt.subplots(figsize=(6, 5))
        curves.plot(ax)
        ax.set_title(f"{member[5:].upper()} curves by {' x '.join(by)}")
        path = os.path.join(directory, fname)
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written


def run_sliced(plan: Plan, names: list[str], args: argparse.Namespace, title: str,
               metrics: dict[str, Any]) -> int:
    """``evaluate --by``: stream, then print / write the per-slice results.

    Parameters
    ----------
    plan : Plan
        The run's plan.
    names : list of str
        The rows to slice (probabilistic ones already left out).
    args : argparse.Namespace
        The parsed options (``by``, ``plot``, ``json``, ``max_bytes``, ``threshold``, ...).
    title : str
        The title line, completed with the rows and slices.
    metrics : dict
        ``evaluate.METRICS``: name -> (factory, tasks, per-class values).

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    InputError
        A usage error (``--by`` column twice, ``--plot`` for a non-binary task, no sliceable
        metric) or a data error naming the file and rows.
    """
    import warnings

    by: list[str] = args.by
    if len(set(by)) != len(by):
        raise InputError(f"--by: a column given twice ({by})", 2)
    if args.plot:
        if plan.task != "binary":
            raise InputError("--by with --plot: slice curves are drawn for the binary task", 2)
        from .plots import check_plot_dir

        check_plot_dir(args.plot)
    sliced = _metric_set(plan, names, args, metrics)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = _stream(plan, sliced, by, args)
        res = slice_results(sliced, by, names, args)
    res["rows"] = rows
    title += f" -- {rows} rows by {', '.join(by)}, {len(res['slices'])} slices"
    emit(res, args.json, lambda: print_slices(res, title))
    if args.plot:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            written = _plots(args.plot, sliced, by)
        if args.json != "-":
            print(f"plots: {', '.join(written)}")
    return 0
