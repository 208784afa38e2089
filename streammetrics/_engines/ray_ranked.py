"""Range-partitioned exact ranking on Ray: the tasks of :func:`streammetrics.ray.evaluate_ranked`.

The steps are those of :mod:`streammetrics._engines.ranked`; this module runs them as Ray tasks
over the blocks of the selected columns (``Dataset.to_arrow_refs``), passing object references:

``block -> runs`` (one task per block: an exact binary ``AUROC`` twin fed the block, its sorted
runs kept in the object store) ``-> sample`` (a few hundred ranks per block, fetched by the
driver, which places the edges; skipped when the edges are given) ``-> split`` (per block, one
task with R + 1 returns: the R pieces as separate objects and their weights) ``-> totals`` (round
one: the driver fetches R pairs of numbers per block and gets each range's offsets) ``-> range``
(round two: one task per range takes only that range's piece of every block, merges them -- the
only place a range is whole -- and returns its summary) ``-> combine`` on the driver.

Memory: a block task holds its block and its runs; a split task its block's runs and the pieces
it writes (a copy of the runs, 2x); a range task its pieces (read in place from the object store
when local) and their merge; the object store holds each block's runs until its pieces are
written, then the pieces until their range is summarised; the driver O(blocks x R) numbers (plus
the curves, which are the output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import trusted_states

from . import ranked as ranked_engine
from . import ranked_common as common
from .plan import Plan, frame_state


def _runs_task(block: Any, plan: Plan, index: int) -> ranked_engine.Runs:
    with trusted_states():
        return ranked_engine.runs_of(frame_state(block, plan, f"Ray block {index}"))  # type: ignore[arg-type]


def _split_task(runs: ranked_engine.Runs, edges: np.ndarray) -> list[Any]:
    """The R pieces (each its own return value: a copy of just that piece) and their weights."""
    pieces = ranked_engine.split_runs(runs, edges)
    return [*pieces, ranked_engine.piece_totals(pieces)]


def _range_task(offset: tuple[float, float, float], totals: tuple[float, float], curves: bool,
                *pieces: ranked_engine.Runs) -> ranked_engine.RangeSummary:
    return ranked_engine.range_summary(ranked_engine.merge_range(pieces), offset, totals, curves)


def _get(refs: Any) -> Any:
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
    runs = [runs_task.remote(b, req.plan, i) for i, b in enumerate(blocks)]
    del blocks
    if req.edges is not None:
        edges = req.edges
    else:
        sample_task = ray.remote(ranked_engine.run_sample)
        edges = ranked_engine.range_edges(_get([sample_task.remote(r, req.sample_size) for r in runs]),
                                          req.n_ranges)
    # R + 1 returns: a list of R + 1 object references per block
    split: list[Any] = [split_task.options(num_returns=req.n_ranges + 1).remote(r, edges) for r in runs]
    del runs  # each block's runs are freed once its pieces are written
    pieces = [s[:-1] for s in split]
    per_block = _get([s[-1] for s in split])
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
    summaries: Sequence[ranked_engine.RangeSummary] = _get(futures)
    return list(summaries), total
