"""Evaluate accumulators over Ray Datasets: an aggregation over blocks.

Install the extra: ``pip install 'streammetrics[ray]'`` (``ray[data]``).

How it runs
-----------
``evaluate(ds, metrics, label=..., score=...)`` runs ``Dataset.aggregate`` with one aggregation
(a ``ray.data.aggregate.AggregateFnV2``): each block feeds an empty twin of ``metrics`` on the
worker that holds it (``aggregate_block``), partial states are combined pairwise
(``combine``), and the driver receives one merged state and computes the values. A state crosses
Ray in the library's versioned, checksummed format (bytes), never as a pickled accumulator.

Retrieval metrics need each query's rows in one block: the dataset is repartitioned by the query
column (``Dataset.repartition(n, keys=[query])``, a hash shuffle into twice as many blocks as
the cluster has CPUs) unless ``query_partitioned=True``.

Any blocking, empty blocks and any block order give the single-process result (bit for bit for
counts with unit or integer weights and for the exact ranking buffers; within float rounding for
sums of float weights and retrieval means).

Complexity: one ``update`` pass per block on the workers plus one merge per block; the driver
holds one merged state (for exact ranking metrics one score per row: use the bounded variants,
``max_bytes=``, beyond what the driver can hold -- see docs/scale-out.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streammetrics._core.metric import trusted_states
from streammetrics._engines.dask_ranked import CHUNK_ROWS
from streammetrics._engines.plan import (
    Columns,
    Plan,
    frame_state,
    merge_bytes,
    state_to_bytes,
)
from streammetrics._engines.request import Request, Run, engine_evaluate, make_run, values_table

__all__ = ["evaluate", "evaluate_ranked"]


def _aggregation(plan: Plan) -> Any:
    """The ``AggregateFnV2`` of one run (built lazily: Ray is imported only when used)."""
    from ray.data.aggregate import AggregateFnV2

    class StreammetricsState(AggregateFnV2):  # type: ignore[misc]
        """Per block: the block's state; combine: merge; finalize: the merged state (bytes)."""

        def __init__(self) -> None:
            super().__init__("streammetrics", zero_factory=lambda: b"", on=None, ignore_nulls=False)

        def aggregate_block(self, block: Any) -> bytes:
            with trusted_states():
                return state_to_bytes(frame_state(block, plan, "a Ray block"))

        def combine(self, current: bytes, new: bytes) -> bytes:
            return merge_bytes([current, new])

    return StreammetricsState()


@engine_evaluate
def evaluate(
    ds: Any,
    metrics: Any,
    *,
    label: Columns | None = None,
    score: Columns | None = None,
    target: Columns | None = None,
    prediction: Columns | None = None,
    weight: str | None = None,
    query: str | None = None,
    doc_id: str | None = None,
    query_partitioned: bool = False,
    compute: bool = True,
    by: Columns | None = None,
    positive_index: int = 1,
    nulls: str = "error",
    as_frame: bool = False,
    **update_kwargs: Any,
) -> Any:
    """Run accumulators over a Ray Dataset as one aggregation over its blocks.

    Parameters
    ----------
    ds : ray.data.Dataset
        The rows. Only the named columns are read.
    {engine: metrics, label, score, target_prediction, weight, query_doc_id, query_partitioned}
    {engine: compute, by, positive_index, nulls, as_frame, update_kwargs}

    Returns
    -------
    {engine: returns}

    Notes
    -----
    Complexity: one ``update`` pass per block and one merge per block; the driver receives one
    state.

    Examples
    --------
    >>> import ray, streammetrics as sm                                     # doctest: +SKIP
    >>> from streammetrics.ray import evaluate                              # doctest: +SKIP
    >>> ds = ray.data.read_parquet("preds/")                                # doctest: +SKIP
    >>> evaluate(ds, sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p")  # doctest: +SKIP
    {'auroc': 0.91, 'f1': 0.77}
    """
    run = make_run(metrics, Request.of(locals()), available=list(ds.columns() or []))
    out = _evaluate(ds, run)
    if not as_frame:
        return out
    import ray

    return ray.data.from_pandas(values_table(out, metrics, by))


def _evaluate(ds: Any, run: Run) -> Any:
    """:func:`evaluate` of a checked run."""
    frame = ds.select_columns(run.plan.columns())
    if run.shuffle_on is not None:
        import ray

        blocks = max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
        frame = frame.repartition(blocks, keys=[run.shuffle_on])
    result = frame.aggregate(_aggregation(run.plan))
    if run.plan.nulls == "skip":  # a second pass counts the rows dropped
        cols = run.plan.columns()
        counts = frame.map_batches(lambda b: {"n": [int(b[cols].isna().any(axis=1).sum())]},
                                   batch_format="pandas")
        run.report_skipped(int(counts.sum("n") or 0))
    return run.result_of_bytes(result.get("streammetrics") if result else None)  # None: no rows


def evaluate_ranked(
    ds: Any,
    metrics: Any,
    *,
    label: str,
    score: str,
    weight: str | None = None,
    ranges: int | Sequence[float] = 8,
    sample_size: int = 256,
    chunk_rows: int = CHUNK_ROWS,
) -> Any:
    """Exact binary AUROC, AP, ROC and PR curves over a Ray Dataset, range by range.

    :func:`streammetrics.dask.evaluate_ranked` on Ray (the same parameters, values and errors):
    one task per block sorts its scores, one per block cuts them at R - 1 score edges (weighted
    quantiles of a sample of every block, or given) into R objects, and one task per range
    merges only that range's pieces and returns a few numbers. No process holds every score
    (:mod:`streammetrics._engines.ray_ranked`).

    Parameters
    ----------
    ds : ray.data.Dataset
        The rows (only ``label``, ``score`` and ``weight`` are read).
    metrics : MetricSet, Metric or mapping of name -> Metric
        Exact binary ``AUROC`` (full area), ``AveragePrecision`` (step), ``ROCCurve``, ``PRCurve``.
    label, score : str
        The 0/1 label and the score columns.
    weight : str, optional
        The ``sample_weight`` column.
    ranges : int or sequence of float
        The number R of score ranges (default 8), or the R - 1 non-decreasing edges.
    sample_size : int
        Ranks sampled from each block's sorted runs (per chunk) to place the edges.
    chunk_rows : int
        Rows validated and sorted at a time (default 262,144); the values do not depend on it.

    Returns
    -------
    dict or value
        In the shape of ``metrics``: floats for AUROC and AP, ``ROCCurveResult`` /
        ``PRCurveResult`` for the curves (assembled on the driver: one point per distinct score).

    Raises
    ------
    ValueError
        Another metric or configuration, a missing column, bad ``ranges`` / ``sample_size``, or
        any input the metrics reject (the block and row named).

    Notes
    -----
    Equal to the single-process exact values up to float rounding (1e-12 relative). Memory: a
    block task its block's sorted scores and their pieces; a range task its range and their
    merge; the driver O(blocks x R) numbers.
    """
    from streammetrics._engines import ranked_common, ray_ranked

    req = ranked_common.request(metrics, label=label, score=score, weight=weight, ranges=ranges,
                                sample_size=sample_size, chunk_rows=chunk_rows,
                                available=list(ds.columns() or []))
    summaries, totals = ray_ranked.range_summaries(ds, req)
    return ranked_common.values(req, summaries, totals)
