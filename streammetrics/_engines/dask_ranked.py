"""Range-partitioned exact ranking on Dask: the task graph of :func:`evaluate_ranked`.

The steps are in :mod:`streammetrics._engines.ranked`; this module wires them into one Dask graph:

``partition -> runs`` (one task per partition) ``-> sample`` ``-> edges`` (one small task)
``-> split`` (per partition: views of its runs cut at the edges) ``-> totals -> offsets`` (round
one: each piece's weights, R pairs of numbers per partition) ``-> piece`` (per partition and
range: only that piece travels) ``-> range`` (round two, per range: the k-way merge -- the only
place a range is whole -- and its summary, in one task) ``-> combine`` (O(R) numbers, plus the
curve when a curve metric asks for it).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._core.params import Param, check_param
from streammetrics.ranking._results import PRCurveResult, ROCCurveResult
from streammetrics.ranking.metrics import AUROC, AveragePrecision, PRCurve, ROCCurve
from streammetrics.wrappers.metricset import MetricSet

from . import ranked as ranked_engine
from .plan import Plan, frame_state, normalise

_RANGES = Param("int", "must be an integer >= 1 or a sequence of edges", low=1)
_SAMPLE_SIZE = Param("int", "must be an integer >= 1", low=1)


def _runs_task(df: Any, plan: Plan) -> ranked_engine.Runs:
    acc = frame_state(df, plan)
    assert isinstance(acc, MetricSet)
    return ranked_engine.runs_of(acc)


def _edges(ranges: int | Sequence[float]) -> tuple[int, np.ndarray | None]:
    if isinstance(ranges, (int, np.integer)):  # a bool too: refused by the check
        return check_param(ranges, "ranges", _RANGES), None
    edges = np.asarray(ranges, dtype=np.float64).ravel()
    if np.isnan(edges).any():
        raise ValueError(f"ranges: edges must not be NaN, got nan at index {int(np.argmax(np.isnan(edges)))}")
    if edges.shape[0] > 1 and (np.diff(edges) < 0).any():
        i = int(np.argmax(np.diff(edges) < 0)) + 1
        raise ValueError(
            f"ranges: edges must be non-decreasing, got {float(edges[i])!r} after {float(edges[i - 1])!r}")
    return edges.shape[0] + 1, edges


def range_summaries(
    ddf: Any,
    metrics: Any,
    *,
    label: str,
    score: str,
    weight: str | None = None,
    ranges: int | Sequence[float] = 8,
    sample_size: int = 256,
    curves: bool = False,
) -> tuple[list[ranked_engine.RangeSummary], tuple[float, float]]:
    """The per-range summaries (increasing score ranges) and the totals (P, N), on the workers.

    Parameters and errors as :func:`evaluate_ranked`; ``curves``: carry the curve pieces.
    """
    import dask

    template, _ = normalise(metrics)
    ignore = ranked_engine.check_metrics(dict(template.items()))
    n_ranges, fixed = _edges(ranges)
    sample_size = check_param(sample_size, "sample_size", _SAMPLE_SIZE)
    plan = Plan(config=ranked_engine.runs_config(ignore), family="classification", label=label, score=score,
                weight=weight)
    missing = [c for c in plan.columns() if c not in ddf.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in the DataFrame (has {list(ddf.columns)})")
    delayed = dask.delayed
    plan_node = delayed(plan, pure=True)
    runs = [delayed(_runs_task, pure=True)(p, plan_node) for p in ddf[plan.columns()].to_delayed()]
    if fixed is not None:
        edges: Any = fixed
    else:
        samples = [delayed(ranked_engine.run_sample, pure=True)(r, sample_size) for r in runs]
        edges = delayed(ranked_engine.range_edges, pure=True)(samples, n_ranges)
    splits = [delayed(ranked_engine.split_runs, pure=True)(r, edges) for r in runs]
    # Round one from the pieces (no range is merged, so none is held while waiting for the
    # others); round two merges each range and summarises it in one task, which returns O(1)
    # numbers (plus its curve piece): a worker never keeps a merged range.
    pieces = [delayed(ranked_engine.piece_totals, pure=True)(s) for s in splits]
    totals = delayed(ranked_engine.add_totals, pure=True)(pieces)
    offs = delayed(ranked_engine.offsets, pure=True)(totals)
    grand = delayed(_grand, pure=True)(totals)
    summaries = [
        delayed(_range_task, pure=True)([delayed(operator.getitem, pure=True)(s, i) for s in splits],
                                        delayed(operator.getitem)(offs, i), grand, curves)
        for i in range(n_ranges)
    ]
    out, total = dask.compute(summaries, grand)
    return list(out), total


def _range_task(pieces: Sequence[ranked_engine.Runs], offset: tuple[float, float, float],
                totals: tuple[float, float], curves: bool) -> ranked_engine.RangeSummary:
    return ranked_engine.range_summary(ranked_engine.merge_range(pieces), offset, totals, curves)


def _grand(totals: Sequence[tuple[float, float]]) -> tuple[float, float]:
    return float(sum(t[0] for t in totals)), float(sum(t[1] for t in totals))


def evaluate_ranked(
    ddf: Any,
    metrics: Any,
    *,
    label: str,
    score: str,
    weight: str | None = None,
    ranges: int | Sequence[float] = 8,
    sample_size: int = 256,
) -> Any:
    """Exact binary AUROC, AP, ROC and PR curves over a Dask DataFrame, range by range.

    No process holds every score: each partition's scores are sorted where it is read, cut at
    R - 1 score edges (weighted quantiles of a sample of every partition, or given), and each
    range's pieces are merged on one worker, which then holds about 1/R of the scores. The
    ranges are combined in order: AUROC = (sum_r U_r + sum_r P_r x N_below_r) / (P N) (the
    Mann-Whitney pairs inside each range plus every positive above every negative of the lower
    ranges); AP and the curves from each range's counts at its distinct scores, offset by the
    totals of the ranges above (a first round sends R totals, a second the per-range results).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows (only ``label``, ``score`` and ``weight`` are read).
    metrics : MetricSet, Metric or mapping of name -> Metric
        Exact binary ``AUROC`` (full area), ``AveragePrecision`` (step), ``ROCCurve``, ``PRCurve``
        templates (their configuration is used; they are not modified).
    label, score : str
        The 0/1 label and the score columns.
    weight : str, optional
        The ``sample_weight`` column.
    ranges : int or sequence of float
        The number R of score ranges (default 8; more ranges = less memory per range task), or
        the R - 1 non-decreasing edges themselves (range r holds scores in [e_r-1, e_r)).
    sample_size : int
        Ranks sampled from each partition's sorted runs to place the edges.

    Returns
    -------
    dict or value
        In the shape of ``metrics``, as :func:`streammetrics.dask.evaluate`: floats for AUROC and
        AP, ``ROCCurveResult`` / ``PRCurveResult`` for the curves (these, the output, are
        assembled on the client: one point per distinct score).

    Raises
    ------
    ValueError
        Another metric or configuration, a missing column, bad ``ranges`` / ``sample_size``, or
        any input the metrics reject.

    Notes
    -----
    Equal to the single-process exact values up to float rounding (1e-12 relative). Memory: a
    partition task holds its partition; a range task its range (tied scores share a range, so a
    score held by more than 1/R of the rows makes its range larger); the client O(R) numbers.
    Time: one sort per partition, one k-way merge per range, O(n) counting, spread over the
    workers.

    Examples
    --------
    >>> import dask, dask.dataframe as dd, pandas as pd
    >>> import streammetrics as sm
    >>> from streammetrics.dask import evaluate_ranked
    >>> df = pd.DataFrame({"y": [0, 1, 1, 0, 1, 0], "p": [0.2, 0.9, 0.4, 0.6, 0.7, 0.1]})
    >>> with dask.config.set(scheduler="synchronous"):
    ...     v = evaluate_ranked(dd.from_pandas(df, npartitions=2), {"auc": sm.AUROC()},
    ...                         label="y", score="p", ranges=3)
    >>> round(v["auc"], 4)
    0.8889
    """
    template, shape = normalise(metrics)
    members = dict(template.items())
    curves = any(isinstance(m, (ROCCurve, PRCurve)) for m in members.values())
    summaries, totals = range_summaries(ddf, metrics, label=label, score=score, weight=weight,
                                        ranges=ranges, sample_size=sample_size, curves=curves)
    res = ranked_engine.combine(summaries, totals)
    values: dict[str, Any] = {}
    for name, m in members.items():
        if isinstance(m, AUROC):
            values[name] = res["auroc"]
            if res["auroc"] != res["auroc"]:
                warn_undefined_nan("AUROC", "no positives or no negatives")
        elif isinstance(m, AveragePrecision):
            values[name] = res["ap"]
            if res["ap"] != res["ap"]:
                warn_undefined_nan("AveragePrecision", "no positives")
        elif isinstance(m, ROCCurve):
            values[name] = ROCCurveResult(res["curve"], m.drop_intermediate)
        else:
            values[name] = PRCurveResult(res["curve"])
    return shape.values(values)


#: The checks of ``ranges`` and ``sample_size``, shared with Spark's and Ray's ``evaluate_ranked``
#: (:mod:`streammetrics._engines.ranked_common`) so the three engines refuse alike.
check_ranges = _edges
SAMPLE_SIZE = _SAMPLE_SIZE
