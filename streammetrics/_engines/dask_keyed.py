"""The Dask graph of the keyed ranges (:mod:`streammetrics._engines.keyed_ranges`): ``by=`` slices
and multiclass one-vs-rest / multilabel exact AUROC (full or partial) / AP in
:func:`streammetrics.dask.evaluate` without a gather.

``part`` (up to 4 partitions per task: validated, keyed tuples unsorted, the rest fed, a
sample) ``-> head`` (the small outputs) ``-> edges`` (one task: global slice keys, R - 1
(key, score) edges) ``-> routed`` (per task: its tuples cut into R pieces, per-range totals per
key) ``-> offsets`` (one task: O(R + K) numbers) ``-> range`` (per range: sorted once, each key
segment summarised: O(keys in range) numbers) ``-> final`` (the root: per key AUROC / AP, each
member's own averaging, the rest merged and computed). The rest's states merge in a tree of
fan-in ``split_every``, as the state path's do. Written as one layer of plain tasks (as
``streammetrics.dask``'s range path: ``dask.delayed`` calls would merge their graphs, O(tasks^2)).
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from streammetrics._core.metric import trusted_states
from streammetrics._core.warn import Recorded

from . import keyed_ranges as kr
from .plan import Plan, merge_states
from .range_counts import task_slices

#: Tuples sampled per partition task to place the edges.
SAMPLE = 256


def _part_task(frames: Sequence[Any], plan: Plan, split: kr.KeyedSplit, first: int = 0) -> kr.KeyedPart:
    with trusted_states():
        return kr.keyed_part(kr.frame_batches(frames, plan, first), split, SAMPLE)


def _head(part: kr.KeyedPart) -> tuple[Any, ...]:
    return part.head()


def _merge_task(states: Sequence[Mapping[str, Any]], config: Mapping[str, Any], kind: str) -> dict[str, Any]:
    with trusted_states():
        return merge_states(states, config, kind)


def _final_task(rest: Sequence[Mapping[str, Any]], summaries: Sequence[kr.KeyedSummaries],
                offsets: kr.KeyedOffsets, edges: kr.KeyedEdges, split: kr.KeyedSplit,
                warned: Sequence[Recorded] = ()) -> Any:
    with trusted_states():
        return kr.final_values(rest, summaries, offsets, edges, split, warned)


def keyed_graph(frames: Sequence[Any], plan: Plan, split: kr.KeyedSplit, n_ranges: int,
                split_every: int) -> Any:
    """The root (values, warnings) of the keyed ranges over the partitions ``frames`` (Dask
    ``Delayed`` objects), as a ``Delayed``. P (3 + R) + R + 3 tasks for P partition tasks."""
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    name = f"streammetrics-keyed-{uuid.uuid4().hex}"

    def key(*k: Any) -> tuple[Any, ...]:
        return (name, *k)

    dsk: dict[Any, Any] = {key("plan"): plan, key("split"): split}
    slices = task_slices(len(frames), n_ranges)
    n_parts = len(slices)
    for i, s in enumerate(slices):
        dsk[key("part", i)] = (_part_task, [f.key for f in frames[s]], key("plan"), key("split"), s.start)
        dsk[key("head", i)] = (_head, key("part", i))
    dsk[key("edges")] = (kr.edges_of, [key("head", i) for i in range(n_parts)], n_ranges, key("split"))
    for i in range(n_parts):
        dsk[key("routed", i)] = (kr.route, key("part", i), key("edges"), i)
        dsk[key("totals", i)] = (operator.getitem, key("routed", i), 1)
        for r in range(n_ranges):
            dsk[key("piece", i, r)] = (operator.getitem, (operator.getitem, key("routed", i), 0), r)
    dsk[key("offsets")] = (kr.offsets_of, [key("totals", i) for i in range(n_parts)], key("edges"))
    for r in range(n_ranges):
        dsk[key("range", r)] = (kr.range_task, [key("piece", i, r) for i in range(n_parts)], key("offsets"),
                                key("edges"), r, split.ap_columns, split.partial_columns,
                                split.envelope_columns)
    rest: list[Any] = []
    if split.rest is not None:
        rest = [(operator.getitem, key("head", i), 0) for i in range(n_parts)]
        dsk[key("rest-config")] = split.rest
        level = 0
        while len(rest) > split_every:
            level += 1
            groups = [rest[i : i + split_every] for i in range(0, len(rest), split_every)]
            rest = [key("rest", level, j) for j in range(len(groups))]
            for k, g in zip(rest, groups, strict=True):
                dsk[k] = (_merge_task, g, key("rest-config"), split.rest_kind)
    warned = [(operator.getitem, key("head", i), 4) for i in range(n_parts)]  # the tasks' warnings
    dsk[key("final")] = (_final_task, rest, [key("range", r) for r in range(n_ranges)], key("offsets"),
                         key("edges"), key("split"), warned)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=list(frames))
    return Delayed(key("final"), graph, layer=name)
