"""``streammetrics.ray.evaluate``'s ``by=`` slices and multiclass one-vs-rest / multilabel exact AUROC
(full or partial) / AP by
(key, score) ranges over a Ray Dataset's blocks: the steps of
:mod:`streammetrics._engines.keyed_ranges` as plain Ray tasks (the transport of
:mod:`streammetrics._engines.ray_blocks`).

One task per group of at most 4 blocks (``keyed_part``: validated, keyed tuples, the other
members fed; its small head returned apart), ``edges_of`` on the driver, one task per block
group routing its tuples (``num_returns=R + 1``: the totals, then each range's piece as its
own object), ``offsets_of`` on the driver, one task per range (``range_task``: only that
range's pieces), ``final_values`` on the driver. The driver receives the heads (one state of the
other members per task, a sample, the slice keys), O(R + K) totals per task and O(R x K)
summaries: never the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streammetrics._core.metric import trusted_states

from . import keyed_ranges as kr
from . import label_codes
from .plan import Plan, arrow_dtypes
from .range_counts import task_slices
from .ray_ranked import get

#: Tuples sampled per block task to place the edges.
SAMPLE = 256


def _part_task(plan: Plan, split: kr.KeyedSplit, first: int,
               *blocks: Any) -> tuple[tuple[Any, ...], kr.KeyedPart, int]:
    """A group of blocks (Arrow tables; ``first``: the dataset's number of the first, so a
    refused null names its block as the other routes do) as one
    :class:`~keyed_ranges.KeyedPart`; its head, the part, the rows skipped for a null."""
    cols = plan.columns()
    frames = [b.select(cols).to_pandas() for b in blocks]  # empty ones kept: the numbering counts them
    skipped = sum(int(df[cols].isna().any(axis=1).sum()) for df in frames if len(df)) \
        if plan.nulls == "skip" else 0
    with trusted_states():
        part = kr.keyed_part(kr.frame_batches(frames, plan, first, "Ray block"), split, SAMPLE)
    return part.head(), part, skipped


def _route_task(part: kr.KeyedPart, edges: kr.KeyedEdges, index: int) -> list[Any]:
    pieces, totals = kr.route(part, edges, index)
    return [totals, *pieces]


def _range_task(offsets: kr.KeyedOffsets, edges: kr.KeyedEdges, r: int, ap: Sequence[bool],
                max_fprs: Sequence[Sequence[float]], envelopes: Sequence[Sequence[tuple[bool, bool]]],
                *pieces: kr.Tuples) -> kr.KeyedSummaries:
    return kr.range_task(pieces, offsets, edges, r, ap, max_fprs, envelopes)


def evaluate_keyed(frame: Any, plan: Plan, split: kr.KeyedSplit,
                   n_ranges: int) -> tuple[Any, list[tuple[str, type[Warning]]], int] | None:
    """The values (``Sliced``'s ``{key: values}`` with ``by=``), the warnings one process raises
    and the rows skipped for a null, over ``frame``'s blocks in ``n_ranges`` ranges; None for a
    dataset of no block. O(rows) in the tasks; the driver O(tasks x (R + K) + R x K)."""
    import ray

    blocks = frame.to_arrow_refs()
    if not blocks:
        return None
    plan_ref, split_ref = ray.put(plan), ray.put(split)
    part_task = ray.remote(_part_task).options(num_returns=3)
    parts = [part_task.remote(plan_ref, split_ref, s.start, *blocks[s])
             for s in task_slices(len(blocks), n_ranges)]
    del blocks
    heads = get([p[0] for p in parts])  # a refused row raises here, as the ValueError it is
    skipped = sum(get([p[2] for p in parts]))
    edges = kr.edges_of(heads, n_ranges, split)
    edges_ref = ray.put(edges)
    route = ray.remote(_route_task).options(num_returns=n_ranges + 1)
    routed: list[Any] = [route.remote(p[1], edges_ref, i) for i, p in enumerate(parts)]
    offsets = kr.offsets_of(ray.get([x[0] for x in routed]), edges)
    offsets_ref = ray.put(offsets)
    task = ray.remote(_range_task)
    summaries = ray.get([task.remote(offsets_ref, edges_ref, r, split.ap_columns, split.partial_columns,
                                     split.envelope_columns, *[x[r + 1] for x in routed])
                         for r in range(n_ranges)])
    with trusted_states():  # the rest's states were made by the block tasks
        values, caught = kr.final_values([h[0] for h in heads if h[0] is not None], summaries, offsets,
                                         edges, split, [h[4] for h in heads])  # the tasks' warnings
    return values, caught, skipped


def schema_types(schema: Any) -> dict[str, Any]:
    """A Ray Dataset schema's column types: ``Schema.types`` (Arrow), and where it has none (None:
    a pandas block's categorical) the block schema's pandas dtype; {} for no schema. O(columns)."""
    if schema is None:
        return {}
    base = getattr(schema, "base_schema", schema)
    return {n: b if t is None else t for n, t, b in zip(schema.names, schema.types, base.types, strict=True)}


def _vectors(kind: Any) -> bool:
    """Whether an Arrow type is a list of numbers (a score vector per row; Ray's tensor columns
    are not: its state path cannot read them either). O(1)."""
    import pyarrow as pa

    lists = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
    return (isinstance(kind, pa.DataType) and any(f(kind) for f in lists)
            and (pa.types.is_floating(kind.value_type) or pa.types.is_integer(kind.value_type)))


def evaluate_dataset(frame: Any, run: Any) -> Any:
    """What ``ray.evaluate`` returns for a run whose exact ranking group is keyed (``by=``
    slices, multiclass one-vs-rest: :func:`keyed_ranges.split_of` on the dataset's column
    types), or None when it is not (the state path). O(members) to decide."""
    from .ray_ranges import range_count

    if run.plan.family != "classification":
        return None
    types = schema_types(frame.schema())
    dtypes = label_codes.read_numbers(run.plan, arrow_dtypes(types.keys(), types.values()))  # Decimals too
    score = run.plan.score
    if isinstance(score, str) and _vectors(types.get(score)):  # the state path's plan.vector_scores
        dtypes[score] = kr.VECTOR
    dtypes = label_codes.sliced_labels(run.plan, dtypes, types)  # pandas blocks' dtypes too
    split = kr.split_of(run.template, run.plan, dtypes, labels=True)
    if split is None:
        return None
    done = evaluate_keyed(frame, run.plan, split, range_count())
    if done is None:  # no block: the empty accumulator's values
        return run.result(None)
    values, caught, skipped = done
    run.report_skipped(skipped)
    return run.shape.deliver(values, caught, sliced=run.plan.by is not None)
