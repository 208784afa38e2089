"""Exact binary AUROC / AP of :func:`streammetrics.ray.evaluate` by score ranges over a Dataset's blocks.

:func:`evaluate_blocks` takes the blocks of the selected columns once
(``Dataset.to_arrow_refs``: already in the object store for ``from_pandas`` / ``from_items`` or
a materialized dataset; read once for a lazy ``read_parquet``) and runs, as plain Ray tasks:

``edges`` (the driver: R - 1 score quantiles of up to :data:`SAMPLE_BLOCKS` blocks' scores, a
few thousand each; more blocks where those are mostly empty, :func:`edge_sample`; one range per
CPU, :func:`streammetrics._engines.ray_ranges.range_count`)
``-> block task`` (one per group of at most 4 blocks, read in place: nulls dropped or refused
and the rows validated as the state path does, the set's other members fed, and the ranked
scores cut into R pieces, each stored as its own object, ``num_returns=R + 1``) ``-> range
task`` (one per range: only that range's piece of every block task) ``-> driver``.

Unweighted, the kernels of the Parquet range path (:mod:`streammetrics._engines.range_counts`:
the scores validated into one buffer by class, routed unsorted, each range sorted once and
counted in integers; the single-process values bit for bit). Weighted, the steps of
:mod:`streammetrics._engines.ranked` as :func:`streammetrics.ray.evaluate_ranked` runs them
(each block's chunks sorted by an exact ``AUROC`` twin and cut at the edges; each range merged
and summarised with the weights above and below it; within 1e-12).

Memory: a block task its blocks (read in place) and their scores' runs or buffer (8 bytes a
score, 16 weighted); a range task its range; the object store the blocks and the pieces (every
score once); the driver the sample, O(R) numbers per range (plus 16 bytes per distinct positive
score for unweighted AP: the step AP adds the counts in one process's order) and one state of
the other members per block task -- never the scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import label_codes, range_counts, ray_ranges
from . import ranked as ranked_engine
from . import ranked_common as common
from .messages import located
from .plan import (
    Plan,
    arrow_arrays,
    arrow_dtypes,
    compute_recorded,
    drop_nulls,
    empty_set,
    labels_first,
    merged,
    rebuild,
    state_of,
    task_columns,
)
from .ray_ranked import get
from .rest_order import checked_rows

#: Blocks the driver samples (a few thousand scores each) to place the range edges.
SAMPLE_BLOCKS = 4


def may_split(template: Any, plan: Plan) -> bool:
    """Whether :func:`dataset_split` may apply, before the dataset's schema is asked for (which
    can start reading a lazy dataset): a MetricSet with an ``AUROC``, ``AveragePrecision`` or
    ``KSStatistic`` member, one label and score column, no ``by`` (``update`` keywords:
    :func:`dataset_split` decides, :func:`.keyed_split.rest_keywords`). O(members)."""
    from streammetrics.calibration.ks_gains import KSStatistic
    from streammetrics.ranking.metrics import AUROC, AveragePrecision
    from streammetrics.wrappers.metricset import MetricSet

    return (isinstance(template, MetricSet) and plan.by is None
            and isinstance(plan.label, str) and isinstance(plan.score, str)
            and any(type(m) in (AUROC, AveragePrecision, KSStatistic) for _, m in template.items()))


def dataset_split(template: Any, plan: Plan, types: Mapping[str, Any]) -> range_counts.Split | None:
    """The split of ``template`` for :func:`evaluate_blocks` (``types``: the dataset's column
    types, Arrow or numpy), or None where the state path applies: the set's exact score state
    serves only binary ``AUROC`` (full or partial area) / ``AveragePrecision`` / ``KSStatistic``
    members, fed one numeric label, score and (optionally) weight column, without ``by``,
    ``update`` keywords only for the other members (:func:`range_counts.split_of`, weights
    allowed here). O(members)."""
    dtypes = label_codes.read_numbers(plan, arrow_dtypes(types.keys(), types.values()))  # Decimals too
    if plan.weight is not None and not (isinstance(plan.weight, str) and plan.weight in dtypes
                                        and dtypes[plan.weight].kind in "biuf"):
        return None
    return range_counts.split_of(template, dataclasses.replace(plan, weight=None), dtypes, offsets=True,
                                 labels=True)


def _block_columns(table: Any, plan: Plan, where: str) -> tuple[list[np.ndarray], int, ValueError | None]:
    """A block's label, score (and weight) columns as numpy, rows holding a null dropped or
    refused as the state path does (:func:`~streammetrics._engines.plan.drop_nulls`: the column
    and row named, of ``where``: "Ray block 3"), the rows dropped, and the refusal of a score or
    weight float64 cannot hold (``Decimal`` s and numeric strings read as numbers, as on Dask:
    :func:`~streammetrics._engines.plan.task_columns`), raised once the labels are checked."""
    names = [c for c in (plan.label, plan.score, plan.weight) if isinstance(c, str)]
    table = table.select(plan.columns())  # a dataset's other columns (zero-copy)
    arrays = arrow_arrays(table, plan) if table.num_rows else None
    if arrays is not None:
        return [arrays[c] for c in names], 0, None
    df, skipped = drop_nulls(table.to_pandas(), plan, where)
    cols, bad = task_columns(df, plan, where)
    return cols, skipped, bad


def _blocks_task(plan: Plan, split: range_counts.Split, edges: np.ndarray, first: int,
                 *blocks: Any) -> list[Any]:
    """A few blocks (Arrow tables, read in place; ``first``: the first one's number, which a
    refused row's message names): ``(the other members' state or None, rows skipped for a
    null, per range (P_r, N_r) or None[, the updates' warnings])``, then each range's piece as its own
    object. Unweighted: the scores validated into one buffer by class and routed unsorted
    (:func:`range_counts.partition_parts`, :func:`range_counts.partition_runs`: the kernels of
    the Parquet range path); weighted: each chunk's sorted runs from an exact ``AUROC`` twin
    (:func:`ranked.iter_chunk_runs`), cut at the edges (per range a list of pieces)."""
    from .dask_ranked import CHUNK_ROWS

    with trusted_states():
        skipped, fed = 0, []
        for k, table in enumerate(blocks):
            cols, dropped, bad = _block_columns(table, plan, f"Ray block {first + k}")
            skipped += dropped
            if cols[0].shape[0]:
                fed.append((cols, bad, f"Ray block {first + k}"))
        if not by_summaries(plan, split):
            rows = sum(c[0].shape[0] for c, *_ in fed)
            parts = range_counts.partition_parts(labels_first(fed), split, 1, rows)
            return [(parts[0], skipped, None, parts[3]), *range_counts.partition_runs(parts, edges)]
        import pyarrow as pa

        labels = ranked_engine.twin_options(cfg["config"] for cfg in split.ranked.values())
        # the twin's columns named as the user's (a refused value's message names them)
        names = [c for c in (plan.label, plan.score, plan.weight) if isinstance(c, str)]
        names = names if len(set(names)) == len(names) else ["y", "s", "w"][: len(names)]
        twin = Plan(config=ranked_engine.runs_config(split.ignore_index, labels), family="classification",
                    label=names[0], score=names[1], weight=names[2] if len(names) > 2 else None)
        rest = None if split.rest is None else empty_set(split.rest)
        runs: list[ranked_engine.Runs] = []
        for cols, bad, at in fed:  # each group's errors in the set's order, as one update would raise them
            y, s, w = cols[0], cols[1], cols[2] if len(cols) > 2 else None
            with located(plan.fed(), at):
                frame = pa.table(dict(zip(names, cols, strict=True)))
                with checked_rows(split, y, s, w):  # the exact group's checks first
                    chunks = ranked_engine.row_chunks(frame, CHUNK_ROWS)
                    runs += ranked_engine.iter_chunk_runs(chunks, twin, at)
                if rest is not None:
                    rest.update(y, s, sample_weight=w, **split.kwargs)
            if bad is not None:  # a score or weight float64 cannot hold, after the block's labels
                raise bad
        pieces = ranked_engine.split_chunks(runs, edges)
        head = (None if rest is None else state_of(rest), skipped, ranked_engine.chunk_totals(pieces))
        return [head, *pieces]


def _sample_task(score: str, per_block: int, *tables: Any) -> list[np.ndarray]:
    """Up to ``per_block`` evenly spaced scores of each block (taken before any conversion:
    only they are copied; :func:`ray_ranges.sample_scores`; an empty block gives none)."""
    return [ray_ranges.sample_scores(table.column(score), per_block) for table in tables]


def edge_sample(blocks: Sequence[Any], score: str) -> np.ndarray:
    """The scores the edges are placed from: :data:`SAMPLE_BLOCKS` blocks spread over the list,
    then, while fewer than ``SAMPLE_BLOCKS / 2`` blocks in all gave a score (empty blocks,
    blocks of nulls), 4 times as
    many of the blocks not yet sampled (in a fixed shuffled order) in :data:`SAMPLE_BLOCKS`
    tasks, each returning at most :data:`~streammetrics._engines.ray_ranges.SAMPLE_SCORES`
    scores: a round fetches at most ``SAMPLE_BLOCKS * SAMPLE_SCORES`` scores, and only a
    dataset of mostly empty blocks takes more than one (O(log blocks) rounds)."""
    import ray

    n = len(blocks)
    first = np.unique(np.linspace(0, n - 1, min(SAMPLE_BLOCKS, n)).astype(np.int64))
    order = np.concatenate([first, np.random.default_rng(0).permutation(np.setdiff1d(np.arange(n), first))])
    task = ray.remote(_sample_task)
    found: list[np.ndarray] = []
    at, width = 0, SAMPLE_BLOCKS
    while at < n and 2 * len(found) < SAMPLE_BLOCKS:
        groups = np.array_split(order[at:at + width], min(SAMPLE_BLOCKS, n - at))
        per_block = max(1, ray_ranges.SAMPLE_SCORES // max(g.shape[0] for g in groups))
        got = get([task.remote(score, per_block, *[blocks[int(i)] for i in g]) for g in groups])
        found += [v for per_task in got for v in per_task if v.shape[0]]
        at, width = at + width, 4 * width
    return np.concatenate(found) if found else np.zeros(0)


def _count_task(thresholds: bool, *pieces: ranked_engine.Runs) -> range_counts.RangeCounts:
    """One range's counts (:func:`range_counts.range_counts`); with AUROC alone (no
    ``thresholds``) only its four numbers: the counts at its distinct positive scores dropped."""
    counts = range_counts.range_counts(pieces, False)
    if thresholds:
        return counts
    return dataclasses.replace(counts, tps=counts.tps[:0], fps=counts.fps[:0])


def by_summaries(plan: Plan, split: range_counts.Split) -> bool:
    """Whether the ranges go by :mod:`ranked`'s summaries (each range task told the weight
    above it): weighted, or a partial AUROC (``max_fpr``) or a KS asked; else by the integer counts of
    :mod:`range_counts`. O(members)."""
    return plan.weight is not None or bool(split.max_fprs)


def _summary_task(offset: tuple[float, float, float], total: tuple[float, float], max_fprs: tuple[float, ...],
                  envelope: bool, *pieces: list[ranked_engine.Runs]) -> ranked_engine.RangeSummary:
    """One range by summaries: its pieces of every block task merged and summarised
    (:func:`ranked.merge_range`, :func:`ranked.range_summary`; no curve; the partial areas
    of ``max_fprs``; the AP envelope with ``envelope``)."""
    runs = ranked_engine.merge_range([p for per_task in pieces for p in per_task])
    return ranked_engine.range_summary(runs, offset, total, False, max_fprs, envelope=envelope)


def evaluate_blocks(frame: Any, plan: Plan, split: range_counts.Split
                    ) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]], int] | None:
    """:func:`streammetrics.ray.evaluate` of a set with exact binary AUROC / AP members by score
    ranges over ``frame``'s blocks (its selected columns, ``Dataset.to_arrow_refs``: read once,
    held in the object store): the values in the set's order, the warnings one process raises
    and the rows skipped for a null; None for a dataset of no block.

    The driver samples the scores of :data:`SAMPLE_BLOCKS` blocks (more where those are mostly
    empty: :func:`edge_sample`) to place one range edge per CPU; one task per group of at most
    4 blocks validates the rows (feeding the set's other members), and stores each range's
    piece of its scores as its own object; one task per range takes only that range's pieces.
    Unweighted, the ranges are sorted and counted as on the
    Parquet range path (:func:`range_counts.range_counts`, :func:`range_counts.final_values`:
    the single-process values bit for bit); weighted, merged and summarised as by
    :func:`streammetrics.ray.evaluate_ranked` (within 1e-12). The driver receives O(R)
    numbers per range (plus, for AP without weights, 24 bytes per distinct positive score) and
    one state of the other members per task: never the scores.
    """
    import ray

    blocks = frame.to_arrow_refs()
    if not blocks:
        return None
    n_ranges = ray_ranges.range_count()
    edges = np.zeros(0)
    if n_ranges > 1:
        assert isinstance(plan.score, str)  # dataset_split: one score column
        v = edge_sample(blocks, plan.score)
        edges = ranked_engine.range_edges([(v, np.ones(v.shape[0]))], n_ranges)
    task = ray.remote(_blocks_task).options(num_returns=n_ranges + 1)
    plan_ref, split_ref = ray.put(plan), ray.put(split)
    parts: list[Any] = [task.remote(plan_ref, split_ref, edges, s.start, *blocks[s])
                        for s in range_counts.task_slices(len(blocks), n_ranges)]
    del blocks  # each block is freed once its task is done (unless the dataset holds it)
    if not by_summaries(plan, split):
        wants_ap = any(cfg["class"] != "AUROC" for cfg in split.ranked.values())
        count_task = ray.remote(_count_task)
        ranges = [count_task.remote(wants_ap, *[p[r + 1] for p in parts]) for r in range(n_ranges)]
        heads = get([p[0] for p in parts])  # a refused row raises here
        counts = get(ranges)
        with trusted_states():  # the states were made by the block tasks
            values, caught = range_counts.final_values([h[0] for h in heads if h[0] is not None],
                                                       counts, split, [h[3] for h in heads])
        return values, caught, sum(h[1] for h in heads)
    heads = get([p[0] for p in parts])
    totals = ranked_engine.add_totals([h[2] for h in heads])
    offsets, total = ranked_engine.offsets(totals), common.grand(totals)
    range_task = ray.remote(_summary_task)
    summaries = get([range_task.remote(offsets[r], total, split.max_fprs, split.envelope,
                                     *[p[r + 1] for p in parts])
                     for r in range(n_ranges)])
    with trusted_states():
        values, caught = _weighted_values([h[0] for h in heads if h[0] is not None], summaries,
                                          total, split)
    return values, caught, sum(h[1] for h in heads)


def _weighted_values(rest_states: Sequence[Mapping[str, Any]],
                     summaries: Sequence[ranked_engine.RangeSummary], total: tuple[float, float],
                     split: range_counts.Split
                     ) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """:func:`range_counts.final_values` for weighted ranges: the other members merged and
    computed, AUROC and AP from the range summaries (:func:`ranked.combine`); an undefined
    value (a class of no weight) with the warning one process raises. O(states + R)."""
    values: dict[str, Any] = {}
    caught: list[tuple[str, type[Warning]]] = []
    if split.rest is not None:
        values, caught = compute_recorded(merged([rebuild(split.rest, s) for s in rest_states]))
    values, more = range_counts.summarised(split, values, summaries, total)
    return values, caught + more
