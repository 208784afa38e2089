"""Range-partitioned exact ranking on Ray: the tasks of :func:`streammetrics.ray.evaluate_ranked`.

The steps are those of :mod:`streammetrics._engines.ranked`; this module runs them as Ray tasks
over the blocks of the selected columns (``Dataset.to_arrow_refs``), passing object references:

``block -> runs`` (one task per block: exact binary ``AUROC`` twins fed the block
``chunk_rows`` rows at a time, the sorted runs of each chunk kept in the object store)
``-> sample`` (a few hundred ranks per chunk, fetched by the driver, which places the edges;
skipped when the edges are given) ``-> split`` (per block, one task with R + 1 returns: each
range's pieces as a separate object, and their weights) ``-> totals`` (round one: the driver
fetches R pairs of numbers per block and gets each range's offsets) ``-> range`` (round two:
one task per range takes only that range's object of every block, merges the pieces -- the
only place a range is whole -- and returns its summary) ``-> combine`` on the driver.

Memory: a block task holds its block, its runs and one chunk being validated and sorted; a
split task its block's runs and the pieces it writes (a copy of the runs, 2x); a range task its
pieces (read in place from the object store when local) and their merge; the object store holds
each block's runs until its pieces are written, then the pieces until their range is
summarised; the driver O(blocks x R) numbers (plus the curves, which are the output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import ranked as ranked_engine
from . import ranked_common as common
from .plan import Plan


def _runs_task(block: Any, plan: Plan, chunk_rows: int, index: int) -> list[ranked_engine.Runs]:
    """A block's sorted runs, ``chunk_rows`` rows at a time."""
    with trusted_states():
        chunks = ranked_engine.row_chunks(block, chunk_rows)
        return ranked_engine.chunk_runs(chunks, plan, f"Ray block {index}")


def _split_task(runs: list[ranked_engine.Runs], edges: np.ndarray) -> list[Any]:
    """The R lists of pieces (each its own return value: a copy of just that range's pieces)
    and their weights."""
    split = ranked_engine.split_chunks(runs, edges)
    return [*split, ranked_engine.chunk_totals(split)]


def _range_task(offset: tuple[float, float, float], totals: tuple[float, float], curves: bool,
                *pieces: list[ranked_engine.Runs]) -> ranked_engine.RangeSummary:
    merged = ranked_engine.merge_range([p for block in pieces for p in block])
    return ranked_engine.range_summary(merged, offset, totals, curves)


def get(refs: Any) -> Any:
    """``ray.get``, a ValueError raised in a task (a refused row) raised as itself."""
    import ray

    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, ValueError):
            raise ValueError(str(cause)) from exc
        raise


def split_refs(ds: Any, req: common.RankedRequest) -> tuple[list[list[Any]], list[tuple[float, float]]]:
    """Per block, the object references of its R pieces; and each range's (P_r, N_r)."""
    import ray

    frame = ds.select_columns(req.plan.columns())
    blocks = frame.to_arrow_refs()
    runs_task, split_task = ray.remote(_runs_task), ray.remote(_split_task)
    runs = [runs_task.remote(b, req.plan, req.chunk_rows, i) for i, b in enumerate(blocks)]
    del blocks
    if req.edges is not None:
        edges = req.edges
    else:
        sample_task = ray.remote(ranked_engine.sample_chunks)
        edges = ranked_engine.range_edges(get([sample_task.remote(r, req.sample_size) for r in runs]),
                                          req.n_ranges)
    # R + 1 returns: a list of R + 1 object references per block
    split: list[Any] = [split_task.options(num_returns=req.n_ranges + 1).remote(r, edges) for r in runs]
    del runs  # each block's runs are freed once its pieces are written
    pieces = [s[:-1] for s in split]
    per_block = get([s[-1] for s in split])
    if not per_block:
        return pieces, [(0.0, 0.0)] * req.n_ranges
    return pieces, ranked_engine.add_totals(per_block)


def range_summaries(ds: Any, req: common.RankedRequest) -> common.Summaries:
    """The per-range summaries (increasing ranges) and the totals (P, N)."""
    import ray

    pieces, totals = split_refs(ds, req)
    offsets, total = ranked_engine.offsets(totals), common.grand(totals)
    range_task = ray.remote(_range_task)
    futures = [range_task.remote(offsets[r], total, req.curves, *[p[r] for p in pieces])
               for r in range(req.n_ranges)]
    del pieces
    summaries: Sequence[ranked_engine.RangeSummary] = get(futures)
    return list(summaries), total
