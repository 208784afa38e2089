"""Evaluate accumulators over Dask DataFrames: per-partition states, merged in a tree on the workers.

Install the extra: ``pip install 'streammetrics[dask]'`` (``dask[dataframe]``, ``distributed``;
``pyarrow`` to read Parquet).

How it runs
-----------
``evaluate(ddf, metrics, label=..., score=...)`` builds one task per partition that feeds the
partition's columns to an empty twin of ``metrics`` and returns its state -- a flat ``dict`` of
numpy arrays and scalars (``state_dict`` without the configuration, which is shipped once in the
graph, not once per state). Those states are merged in a tree of fan-in ``split_every`` by tasks
that also run on the workers, and the root task computes the values there: only the values
travel to the client (with ``compute=False``, the merged state, rebuilt there). Nothing is
pickled as a Python object graph: a state is a few contiguous numpy buffers (pickle protocol 5
sends them out of band), so a confusion state is O(C^2) bytes and an exact ranking state one
score (plus one weight, if weighted) per sample.

Because every accumulator's state is a function of the multiset of rows it has seen (and merge is
associative and commutative), empty partitions, repartitioning and any partition order give the
single-process result: bit for bit for counts with unit or integer weights and for exact ranking
buffers; within float rounding (1e-12 relative) for sums of float weights, retrieval means and
weighted exact binary AUROC / AP (these go by ``evaluate_ranked``'s score ranges: no gather).

The same code runs on the threaded scheduler, a ``LocalCluster`` or a remote
``Client("tcp://...")``: whatever scheduler is active when ``evaluate`` is called executes it.

Complexity: one pass over the data (the cost of ``update`` per partition), plus
O(states x state size) for the merge tree, spread over the workers; the client holds one state.
Memory per worker: one partition plus ``split_every`` states. An exact ranking state gathered
by the tree is one score per row (8 bytes, 16 weighted) on the root worker -- ~80 GB for 10^10
scores -- except for exact binary AUROC / AP (partial AUROC too) on the range path below (a
range task holds its range's scores; the root R counts for AUROC, 24 bytes per distinct
positive score for AP), and for ``by=`` slices, multiclass one-vs-rest and multilabel exact
AUROC (also partial: ``max_fpr``) / AP (also interpolated and 11-point) and one-vs-one AUROC,
and sets of several such exact state groups (one-vs-one beside one-vs-rest, another
``ignore_index``; the other members' groups before, between or after them; ``classes=`` /
``pos_label=`` each group with its own codec), ``scores="probability"`` members too (each task
checks the rows with the group's own probability state),
which go by (key, score) ranges (:mod:`streammetrics._engines.keyed_ranges`: the root
O(R x K) numbers for K slices x classes, within 1e-12); beyond that,
:func:`evaluate_ranked` or the bounded variants (``max_bytes``) -- see docs/scale-out.md.
Cost note: the states that ``evaluate``'s own tasks ship to each other are
trusted (made by those tasks, carried by Dask's pickle): they include the sorted
buffer's Mann-Whitney counts and are restored in O(n), without the O(n log n) re-validation
that the public :func:`merge_states` (which accepts any shipped state) performs. Each merge task
does one k-way merge of its states (``merge(*others)``: the exact score buffer sorts each group's
runs together once and counts its Mann-Whitney pairs once), so the default fan-in (32) merges up
to 32 partitions in one task.

Exact binary AUROC / AP without the gather: when the set's exact score state serves only
full-area binary ``AUROC`` and step ``AveragePrecision`` members (one numeric label and score
column, no weights, no ``by``, ``compute=True``), ``evaluate`` does not ship that state whole.
Members with ``classes=`` / ``pos_label=`` may read string, categorical or pyarrow string labels
here and on the weighted and keyed routes below: each task maps them with the members' own
codec (:mod:`streammetrics._engines.label_codes`). Object or string columns of ``Decimal`` s or
numbers (labels, scores, weights) take every route too, read as float64 as the state path reads
them (a value float64 cannot hold is a ValueError naming the column, the partition and the
value), and so do Parquet dictionary (categorical) label columns; string labels with ``by=``
are refused by the keyed tasks as ``Sliced`` refuses them.
A few partitions feed each task (at most 4; with :func:`evaluate_parquet`'s own reader, one
task per worker thread, reading a row group at a time), which validates its scores into one
buffer by class (unsorted); they are routed by sampled score quantiles into R ranges (1 per
worker thread of the active ``distributed`` client, 1 without one) in place -- the pieces are
views, no copies; one task per range sorts its pieces (the only sort a score sees) and counts
them; the root adds R integer pair counts for AUROC and offsets the ranges' counts at their
distinct positive scores for AP -- the single-process values bit for bit, with no serial sort
at the root (:mod:`streammetrics._engines.range_counts`). When the positives are at most
1/(4R) of the rows, the task that places the edges chooses the exchange instead: each
partition task sorts its own scores, only the sorted positives travel (to every range task),
and each range task counts its negatives below every distinct positive score -- the same
values, bit for bit, without the routing pass or the move of half the scores
(:mod:`streammetrics._engines.minority`). The set's other members travel as states, as above.
An AUROC-only set sends the root three integers per range (no counts at the positive scores).
``nulls="skip"`` stays on this path (the tasks drop the rows, as the state path's do). With a
numeric ``weight`` column the same members go by :func:`evaluate_ranked`'s graph
(:func:`streammetrics._engines.dask_ranked.ranked_graph`, in one ``compute`` with the other
members' state tree, whose states the tasks that read and sort the rows make: one read):
O(R) numbers at the root, within 1e-12 (float sums in another order).
So does a set with a partial ``AUROC(max_fpr=...)`` or a binary exact ``KSStatistic`` member
in that state group, weighted or not (each range task, told the weight above it, sends its part
of the partial area, its largest |TPR - FPR|); another state group beside the exact one (a
bounded ``AUROC(max_bytes=...)``) travels as its state.
The graph has P (3 + R) + R + 2 tasks for P partition tasks (14 for 2
workers reading Parquet): ``distributed`` costs about a millisecond of scheduler and worker
CPU per task. For AUROC, AP and curves at a size where even the
distinct positive scores must not meet in one process, :func:`evaluate_ranked` keeps only
O(R) numbers at the root (within 1e-12).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from streammetrics._core.metric import trusted_states
from streammetrics._core.params import Param, check_param
from streammetrics._engines import keyed_ranges, label_codes, minority, parquet_reads, range_counts
from streammetrics._engines.dask_expressions import series_columns
from streammetrics._engines.dask_keyed import keyed_graph
from streammetrics._engines.dask_ranked import evaluate_ranked, ranked_graph
from streammetrics._engines.plan import (
    Columns,
    Plan,
    arrow_dtypes,
    brief,
    empty_set,
    frame_state,
    merge_and_compute,
    merge_states,
    partition_state,
    rebuild,
    state_of,
)
from streammetrics._engines.request import Request, engine_evaluate, make_run, values_table

if TYPE_CHECKING:
    from dask.dataframe import Series

__all__ = ["evaluate", "evaluate_parquet", "evaluate_ranked", "partition_state", "merge_states"]

#: A column :func:`evaluate` reads: its name or a Dask Series derived from the frame.
DaskColumn: TypeAlias = "str | Series"
#: One or more of them (``label``, ``score``, ``target``, ``prediction``).
DaskColumns: TypeAlias = "str | Series | Sequence[str | Series]"

_SPLIT_EVERY = Param("int", "must be an integer >= 2", low=2)
#: Scores sampled per class and partition task to place the range edges.
_SAMPLE = 64

# The tasks ``evaluate`` builds: the functions above, run inside ``trusted_states()``. A state
# shipped between them was made by another of these tasks and travels through Dask's pickle (a
# trusted channel), so it carries its derived statistics (the sorted buffer's Mann-Whitney
# counts) and is restored without the O(n log n) re-validation. The public functions above keep
# validating whatever they are given.
def _partition_task(df: Any, plan: Plan, index: int = 0) -> dict[str, Any]:
    with trusted_states():
        return state_of(frame_state(df, plan, f"Dask partition {index}"))


def _null_rows(df: Any, columns: list[str]) -> int:
    """Rows of a partition holding a null in a used column (what ``nulls="skip"`` drops)."""
    return int(df[columns].isna().any(axis=1).sum())


def _merge_task(states: Sequence[Mapping[str, Any]], config: Mapping[str, Any],
                kind: str = "MetricSet") -> dict[str, Any]:
    with trusted_states():
        return merge_states(states, config, kind)


def _root_task(
    states: Sequence[Mapping[str, Any]], config: Mapping[str, Any], kind: str = "MetricSet"
) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    with trusted_states():
        return merge_and_compute(states, config, kind)


def _ranked_task(frames: Sequence[Any], plan: Plan, split: range_counts.Split,
                 sample_size: int, first: int = 0) -> tuple[Any, ...]:
    with trusted_states():
        batches = range_counts.frame_batches(frames, plan, first)  # partitions first, first + 1, ...
        rows = sum(len(df) for df in frames)
        return range_counts.partition_parts(batches, split, sample_size, rows)


def _parquet_task(files: Sequence[str], fs: Any, plan: Plan, split: range_counts.Split,
                  sample_size: int) -> tuple[Any, ...]:
    with trusted_states():
        footers = parquet_reads.parquet_footers(files, fs, parquet_reads.plan_columns(plan),
                                               label_codes.mapped_column(split))
        rows = sum(f.num_rows for f in footers)
        return range_counts.partition_parts(parquet_reads.parquet_batches(files, fs, plan, footers),
                                            split, sample_size, rows)


def _final_task(rest: Sequence[Mapping[str, Any]],
                ranges: Sequence[range_counts.RangeCounts | minority.ExchangeCounts],
                split: range_counts.Split, warned: Sequence[Any] = ()) -> tuple[dict[str, Any], list[Any]]:
    with trusted_states():
        return minority.final_values(rest, ranges, split, warned)


def _by_ranges(dsk: dict[Any, Any], name: str, n_parts: int, n_ranges: int, split: range_counts.Split,
               split_every: int, deps: Sequence[Any] = ()) -> Any:
    """The graph of the range path (:mod:`streammetrics._engines.range_counts`), completed from its
    partition tasks ``dsk[(name, "part", i)]`` (each: the other members' state, the unsorted
    scores and a sample): the scores routed to the ranges the sampled edges define; one task
    per range sorts and counts its pieces; one root task gives the values. With few positives
    the edges task chooses the exchange instead (:mod:`streammetrics._engines.minority`): each
    partition task sorts its own scores and only its positives travel. Returns the root
    as a ``Delayed`` (over ``deps``, the collections the parts read).

    The graph is written as one layer of plain tasks: built with ``dask.delayed`` calls, each
    call merges the graphs of its arguments, which cost the client O(tasks^2) (measured:
    0.1-0.4 s a run for the ~60 tasks of 20 files, on the cores the workers need).
    """
    import operator

    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    def key(*k: Any) -> tuple[Any, ...]:
        return (name, *k)

    parts = [key("part", i) for i in range(n_parts)]
    ranges = [key("range", r) for r in range(n_ranges)]
    # the small outputs (other members' state, sample) of each partition task; with one range
    # the partition tasks feed the range and the root directly (inline getitems)
    heads: list[Any] = [(minority.head, p) for p in parts]
    if n_ranges == 1:
        dsk[ranges[0]] = (range_counts.range_counts, [(operator.getitem, p, 1) for p in parts], False,
                          split.ap)
    else:
        heads = [key("head", i) for i in range(n_parts)]
        for i, p in enumerate(parts):
            dsk[heads[i]] = (minority.head, p)
            # in place: the partition task's runs reordered by range (the pieces views of them),
            # or sorted, the positives to every range (the exchange, when they are few)
            dsk[key("routed", i)] = (minority.routed, p, key("edges"), i)
            for r in range(n_ranges):
                dsk[key("piece", i, r)] = (operator.getitem, key("routed", i), r)
        dsk[key("edges")] = (minority.choose, heads, n_ranges)
        for r in range(n_ranges):
            dsk[ranges[r]] = (minority.counted, [key("piece", i, r) for i in range(n_parts)], key("edges"), r,
                              split.ap)  # AUROC only: O(1) numbers a range
    rest: list[Any] = []
    if split.rest is not None:
        rest = [(operator.getitem, h, 0) for h in heads]
        level = 0
        while len(rest) > split_every:
            dsk[key("rest-config")] = split.rest
            level += 1
            groups = [rest[i : i + split_every] for i in range(0, len(rest), split_every)]
            rest = [key("rest", level, j) for j in range(len(groups))]
            for k, g in zip(rest, groups, strict=True):
                dsk[k] = (_merge_task, g, key("rest-config"))
    warned = [(operator.getitem, h, 4) for h in heads]  # the partition tasks' warnings
    dsk[key("final")] = (_final_task, rest, ranges, split, warned)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=list(deps))
    return Delayed(key("final"), graph, layer=name)


def _new_name() -> str:
    import uuid

    return f"streammetrics-ranges-{uuid.uuid4().hex}"


def _tree(parts: list[Any], config: Any, kind: str, split_every: int, compute: bool) -> Any:
    """Merge delayed states in a tree of fan-in ``split_every`` (each node a worker task, one
    k-way merge of its states).

    With ``compute`` the root also computes the values (see :func:`merge_and_compute`).
    """
    import dask

    merge = dask.delayed(_merge_task, pure=True)
    level = parts
    while len(level) > split_every or (len(level) > 1 and not compute):
        level = [merge(level[i : i + split_every], config, kind)
                 for i in range(0, len(level), split_every)]
    if compute:
        return dask.delayed(_root_task, pure=True)(level, config, kind)
    return level[0]


def _weighted_graph(frame: Any, plan: Plan, split: range_counts.Split,
                    split_every: int) -> tuple[Any, Any, Any, Any]:
    """The weighted route of :func:`evaluate`: the ranked members by
    :func:`streammetrics._engines.dask_ranked.ranked_graph` (each range merged and summarised
    on a worker; the root gets O(R) numbers), the set's other members fed the same rows by its
    runs tasks (one read) and their states merged in a tree (None without any). Returns the
    summaries, the totals, the rest's root and the rows each runs task dropped for a null
    (``nulls="skip"``: counted while reading, no second read of the partitions), delayed."""
    import dask

    assert isinstance(plan.label, str) and isinstance(plan.score, str)
    members = empty_set({"members": split.ranked, "groups": [list(split.ranked)]})
    # the other members are fed by the tasks that read the rows for the ranked ones: one read
    others = None if split.rest is None else (dataclasses.replace(plan, config=split.rest),
                                              split.before)
    summaries, totals, parts, skipped = ranked_graph(frame, members, label=plan.label, score=plan.score,
                                                     weight=plan.weight, nulls=plan.nulls, rest=others,
                                                     positive_index=plan.positive_index)
    rest = None
    if split.rest is not None:
        rest = _tree(parts, dask.delayed(split.rest, pure=True), "MetricSet", split_every, True)
    return summaries, totals, rest, skipped


def _weighted_values(summaries: Sequence[Any], totals: tuple[float, float], rest: Any,
                     split: range_counts.Split) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """The values of the weighted route in the set's member order, with one process's warnings
    (:func:`streammetrics._engines.range_counts.undefined`). O(R + members)."""
    values, caught = ({}, []) if rest is None else rest
    caught = list(caught)
    values, more = range_counts.summarised(split, values, summaries, totals)
    return values, caught + more


def _parquet_by_ranges(path: Any, metrics: Any, split_every: int, request: Request) -> Any:
    """:func:`evaluate_parquet`'s range path with the files read by pyarrow in the tasks (row
    groups straight to numpy: no DataFrame, no ``read_parquet`` graph), or None where the
    general path applies (the range path's conditions, see :func:`evaluate`)."""
    import dask
    import pyarrow.parquet as pq

    found = parquet_reads.parquet_files(path)
    if found is None:
        return None
    fs, files = found
    with parquet_reads.named_read_errors(files[0]):
        schema = pq.read_schema(files[0], filesystem=fs)
    dtypes = arrow_dtypes(schema.names, schema.types)  # a type without a numpy twin: general path
    try:
        run = make_run(metrics, request, available=schema.names)
    except ValueError:  # the general path raises it, as for any frame
        return None
    plan = run.plan
    split = range_counts.split_of(run.template, plan, dtypes, labels=True)
    if split is None:
        return None
    n_ranges = range_counts.range_count()
    name = _new_name()
    # one task per worker thread (each reads a row group at a time: its memory is its scores);
    # the plan, split and filesystem inside the few tasks (update keywords: the rest's, once per task)
    dsk: dict[Any, Any] = {}
    slices = range_counts.task_slices(len(files), n_ranges, range_counts.per_thread(len(files), n_ranges))
    for i, s in enumerate(slices):
        dsk[(name, "part", i)] = (_parquet_task, files[s], fs, plan, split, _SAMPLE)
    (result,) = dask.compute(_by_ranges(dsk, name, len(slices), n_ranges, split, split_every))
    values, caught = result
    return (run.shape.deliver(values, caught, sliced=False),)


@engine_evaluate
def evaluate(
    ddf: Any,
    metrics: Any,
    *,
    label: DaskColumns | None = None,
    score: DaskColumns | None = None,
    target: DaskColumns | None = None,
    prediction: DaskColumns | None = None,
    weight: DaskColumn | None = None,
    query: str | None = None,
    doc_id: str | None = None,
    query_partitioned: bool = False,
    split_every: int = 32,
    compute: bool = True,
    by: Columns | None = None,
    positive_index: int = 1,
    nulls: str = "error",
    as_frame: bool = False,
    **update_kwargs: Any,
) -> Any:
    """Run accumulators over a Dask DataFrame on the workers and merge their states in a tree.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame or its groupby
        The rows. Only the named columns are read. A ``ddf.groupby("k")`` (or of a list of
        column names) means the frame with ``by=`` those columns (``by=`` then not given).
        ``label``, ``score`` (or their aliases) and ``weight`` may also be Dask Series derived
        from the frame (``ddf.p * 1.0``, ``ddf.y.astype(int)``, ``ddf["p"].where(ddf.w > 0, 0)``,
        or a list of them for class scores), evaluated in the same graph: added to the frame
        as columns of their own, nothing computed on the client. A Series not aligned with the
        frame (other partitions or divisions) is a ValueError naming the argument.
    {engine: metrics, label, score, target_prediction, weight, query_doc_id, query_partitioned}
    split_every : int
        Fan-in of the merge tree (>= 2; default 32). Each merge task does one k-way merge of its
        states, so a wide tree costs least; a narrower one bounds what one task receives.
    {engine: compute, by, positive_index, nulls, as_frame, update_kwargs}

    Returns
    -------
    {engine: returns}

    Raises
    ------
    ValueError
        A column that is not in the frame, ``query``/``doc_id`` with non-retrieval metrics (or
        no ``query`` with retrieval ones), ``split_every`` < 2, or any input the metrics reject.

    Notes
    -----
    Complexity: one ``update`` pass per partition on the workers, ``ceil(log_k(P))`` merge rounds
    (k = ``split_every``, P partitions); the client receives one state.

    Examples
    --------
    Any partitioning gives the single-process values (here on Dask's synchronous scheduler; a
    ``distributed.Client`` runs the same graph on its workers):

    >>> import dask, dask.dataframe as dd, pandas as pd
    >>> import streammetrics as sm
    >>> from streammetrics.dask import evaluate
    >>> df = pd.DataFrame({"y": [0, 1, 1, 0, 1, 0], "p": [0.2, 0.9, 0.4, 0.6, 0.7, 0.1]})
    >>> ddf = dd.from_pandas(df, npartitions=3)
    >>> metrics = sm.MetricSet(auroc=sm.AUROC(), recall=sm.Recall())
    >>> with dask.config.set(scheduler="synchronous"):
    ...     values = evaluate(ddf, metrics, label="y", score="p")
    >>> values == sm.MetricSet(auroc=sm.AUROC(), recall=sm.Recall()).update(df.y, df.p).compute()
    True
    >>> round(values["auroc"], 4)
    0.8889
    """
    split_every = check_param(split_every, "split_every", _SPLIT_EVERY)
    ddf, request = _grouped(ddf, Request.of(locals()))
    ddf, request = series_columns(ddf, request)
    return _as_frame(_evaluate(ddf, metrics, request, split_every), metrics, request)


def _grouped(ddf: Any, request: Request) -> tuple[Any, Request]:
    """``ddf.groupby(...)`` given as the frame: the frame and ``by=`` its grouping columns."""
    if not (hasattr(ddf, "obj") and hasattr(ddf, "by") and type(ddf).__name__.endswith("GroupBy")):
        return ddf, request
    keys = list(ddf.by) if isinstance(ddf.by, (list, tuple)) else [ddf.by]
    odd = [k for k in keys if not isinstance(k, str) or k not in ddf.obj.columns]
    if odd or not keys:
        raise ValueError(f"ddf: a grouped frame must be grouped by column names, got {brief(odd or keys)}")
    if request.by is not None:
        raise ValueError(f"by: the frame is already grouped by {brief(keys)}; got by={brief(request.by)} "
                         "as well")
    return ddf.obj, dataclasses.replace(request, by=keys[0] if len(keys) == 1 else keys)


def _as_frame(out: Any, metrics: Any, request: Request) -> Any:
    """``out`` as a one-partition Dask DataFrame (``as_frame=True``, see ``values_table``)."""
    if not request.as_frame:
        return out
    import dask.dataframe as dd

    return dd.from_pandas(values_table(out, metrics, request.by), npartitions=1)


def _route_dtypes(frame: Any, plan: Plan) -> dict[str, Any]:
    """The frame's dtypes as the range routes' ``split_of`` read them
    (:func:`~streammetrics._engines.label_codes.read_numbers`). O(columns)."""
    return label_codes.read_numbers(plan, dict(frame.dtypes.items()))


def _evaluate(ddf: Any, metrics: Any, request: Request, split_every: int) -> Any:
    """:func:`evaluate` with its arguments checked (``split_every``) or gathered (``request``)."""
    import dask

    run = make_run(metrics, request, available=list(ddf.columns))
    plan, shape, compute = run.plan, run.shape, request.compute
    frame = ddf[plan.columns()]
    if run.shuffle_on is not None:
        frame = frame.shuffle(on=run.shuffle_on)
    part = dask.delayed(_partition_task, pure=True)
    # The plan and the configuration are one node each in the graph: shipped once per worker,
    # not embedded in every task (``update_kwargs`` may hold large mappings).
    plan_node = dask.delayed(plan, pure=True)
    frames = frame.to_delayed()
    if not frames:
        return run.result(None)
    skip = plan.nulls == "skip"
    # rows with a null: counted by their own tasks over the same partitions (the range path's
    # partition tasks drop them as the state path's do, :func:`range_counts.frame_batches`); the
    # weighted route's runs tasks count what they drop themselves (they read other keys)
    nulls = [dask.delayed(_null_rows, pure=True)(p, plan.columns()) for p in frames] if skip else []
    dtypes = _route_dtypes(frame, plan)
    split = range_counts.split_of(run.template, plan, dtypes, labels=True) if compute else None
    if split is not None:  # exact binary AUROC / AP: by score ranges, no gather of every score
        n_ranges = range_counts.range_count()
        name = _new_name()
        dsk: dict[Any, Any] = {(name, "plan"): plan}
        slices = range_counts.task_slices(len(frames), n_ranges)
        for i, s in enumerate(slices):
            dsk[(name, "part", i)] = (_ranked_task, [f.key for f in frames[s]], (name, "plan"),
                                      split, _SAMPLE, s.start)
        result, skipped = dask.compute(_by_ranges(dsk, name, len(slices), n_ranges, split, split_every,
                                                  deps=frames), nulls)
        run.report_skipped(sum(skipped))
        values, caught = result
        return shape.deliver(values, caught, sliced=False)
    weighted = (range_counts.split_of(run.template, plan, dtypes, weighted=plan.weight is not None,
                                      offsets=True, labels=True)
                if compute else None)
    if weighted is not None:  # weighted or partial (max_fpr) exact binary AUROC / AP: the ranked engine
        summaries, totals, rest, skipped = dask.compute(*_weighted_graph(frame, plan, weighted, split_every))
        run.report_skipped(sum(skipped))
        values, caught = _weighted_values(summaries, totals, rest, weighted)
        return shape.deliver(values, caught, sliced=False)
    keyed = keyed_ranges.split_of(run.template, plan, dtypes, labels=True) if compute else None
    if keyed is not None:  # by= slices, multiclass one-vs-rest: by (key, score) ranges, no gather
        graph = keyed_graph(frames, plan, keyed, range_counts.range_count(), split_every)
        result, skipped = dask.compute(graph, nulls)
        run.report_skipped(sum(skipped))
        values, caught = result
        return shape.deliver(values, caught, sliced=plan.by is not None)
    parts = [part(p, plan_node, i) for i, p in enumerate(frames)]
    config = dask.delayed(plan.config, pure=True)
    result, skipped = dask.compute(_tree(parts, config, plan.kind, split_every, compute), nulls)
    run.report_skipped(sum(skipped))
    if not compute:
        with trusted_states():  # made by our own tasks (see _partition_task)
            return run.result(rebuild(plan.config, result, plan.kind))
    values, caught = result
    return shape.deliver(values, caught, sliced=plan.by is not None)


@engine_evaluate
def evaluate_parquet(
    path: Any,
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
    split_every: int = 32,
    compute: bool = True,
    by: Columns | None = None,
    positive_index: int = 1,
    nulls: str = "error",
    as_frame: bool = False,
    read_kwargs: Mapping[str, Any] | None = None,
    **update_kwargs: Any,
) -> Any:
    """:func:`evaluate` over Parquet files (a path, a directory, a glob or a list of them).

    Only the needed columns are read (the column selection is pushed down into
    ``dask.dataframe.read_parquet``; ``read_kwargs`` are passed through). When the exact binary
    AUROC / AP go by score ranges (see :func:`evaluate`) and ``read_kwargs`` is None, the tasks
    read the files themselves with pyarrow, one row group at a time straight into numpy (no
    DataFrame; directories, globs and lists of files, names starting with ``_`` or ``.``
    skipped); hive-partitioned directories and every other case use ``read_parquet``.

    Parameters
    ----------
    path : str, os.PathLike or list
        Parquet files: a path, a directory, a glob or a list of them.
    metrics, label, score, target, prediction, weight, query, doc_id
        As for :func:`evaluate`.
    query_partitioned, split_every, compute, by, positive_index, nulls, as_frame
        As for :func:`evaluate`.
    read_kwargs : mapping, optional
        Keyword arguments of ``dask.dataframe.read_parquet`` (given, even empty, the files are
        always read by it).
    **update_kwargs
        Passed to every ``update``, as for :func:`evaluate`.

    Returns
    -------
    dict, value, Metric or MetricSet
        As for :func:`evaluate`.

    Examples
    --------
    >>> import os, tempfile
    >>> import dask, pandas as pd
    >>> import streammetrics as sm
    >>> from streammetrics.dask import evaluate_parquet
    >>> folder = tempfile.mkdtemp()
    >>> pd.DataFrame({"y": [0, 1, 1, 0], "p": [0.2, 0.9, 0.4, 0.6]}).to_parquet(
    ...     os.path.join(folder, "part-0.parquet"))
    >>> pd.DataFrame({"y": [1, 0], "p": [0.7, 0.1]}).to_parquet(os.path.join(folder, "part-1.parquet"))
    >>> with dask.config.set(scheduler="synchronous"):
    ...     f1 = evaluate_parquet(os.path.join(folder, "*.parquet"), sm.F1(), label="y", score="p")
    >>> round(f1, 4)
    0.6667
    """
    import dask.dataframe as dd

    split_every = check_param(split_every, "split_every", _SPLIT_EVERY)
    request = Request.of(locals())
    if read_kwargs is None and compute and by is None and weight is None and nulls == "error":
        done = _parquet_by_ranges(path, metrics, split_every, request)
        if done is not None:
            return _as_frame(done[0], metrics, request)
    # Column projection is pushed down into the reader: only the needed columns are read.
    frame = dd.read_parquet(path, **dict(read_kwargs or {}))
    return _as_frame(_evaluate(frame, metrics, request, split_every), metrics, request)
