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

from typing import Any

from ._base import trusted_states
from ._engine import Columns, Plan, frame_state, make_plan, state_from_bytes, state_to_bytes
from .metricset import MetricSet

__all__ = ["evaluate"]


def _merged(left: bytes, right: bytes) -> bytes:
    """Two shipped states (empty bytes: no state yet) merged into one."""
    if not left:
        return right
    if not right:
        return left
    with trusted_states():
        acc = state_from_bytes(left)
        acc.merge(state_from_bytes(right))
        return state_to_bytes(acc)


def _aggregation(plan: Plan) -> Any:
    """The ``AggregateFnV2`` of one run (built lazily: Ray is imported only when used)."""
    from ray.data.aggregate import AggregateFnV2

    class StreammetricsState(AggregateFnV2):  # type: ignore[misc]
        """Per block: the block's state; combine: merge; finalize: the merged state (bytes)."""

        def __init__(self) -> None:
            super().__init__("streammetrics", zero_factory=lambda: b"", on=None, ignore_nulls=False)

        def aggregate_block(self, block: Any) -> bytes:
            with trusted_states():
                return state_to_bytes(frame_state(block, plan))

        def combine(self, current: bytes, new: bytes) -> bytes:
            return _merged(current, new)

    return StreammetricsState()


def evaluate(
    ds: Any,
    metrics: Any,
    *,
    label: Columns,
    score: Columns,
    weight: str | None = None,
    query: str | None = None,
    doc_id: str | None = None,
    query_partitioned: bool = False,
    compute: bool = True,
    **update_kwargs: Any,
) -> Any:
    """Run accumulators over a Ray Dataset as one aggregation over its blocks.

    Parameters
    ----------
    ds : ray.data.Dataset
        The rows. Only the named columns are read.
    metrics : MetricSet, Metric or mapping of name -> Metric
        Templates: their configuration is used, their current state is not (they are not modified).
    label : str or list of str
        ``y_true`` column (several columns: an (n, L) multilabel array). For retrieval metrics:
        the relevance grades.
    score : str or list of str
        ``y_pred`` / ``y_score`` column, or one column per class for multiclass scores (n, C).
    weight : str, optional
        ``sample_weight`` column (classification family).
    query, doc_id : str, optional
        Retrieval family only: the query id column (required) and the document id column (breaks
        score ties as trec_eval does).
    query_partitioned : bool
        Retrieval only: every query's rows are already in one block (skips the shuffle).
    compute : bool
        True: return the computed values (a dict by name for a MetricSet or a mapping, the value
        for a single metric). False: return the merged accumulator(s) instead.
    **update_kwargs
        Passed to every ``update`` (e.g. ``n_relevant=`` / ``judged=`` mappings for retrieval).

    Returns
    -------
    The values (``compute=True``) or accumulators of the same shape as ``metrics``.

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
    template, shape, plan = make_plan(
        metrics, label=label, score=score, weight=weight, query=query, doc_id=doc_id,
        update_kwargs=update_kwargs, available=list(ds.columns() or []),
    )
    frame = ds.select_columns(plan.columns())
    if plan.family == "retrieval" and not query_partitioned:
        import ray

        blocks = max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
        frame = frame.repartition(blocks, keys=[query])
    result = frame.aggregate(_aggregation(plan))
    payload = result.get("streammetrics") if result else None
    if not payload:  # no rows at all
        acc: MetricSet = template
    else:
        with trusted_states():
            acc = state_from_bytes(payload)
    if not compute:
        return shape.accumulators(acc)
    return shape.values(acc.compute())
