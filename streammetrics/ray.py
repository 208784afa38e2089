"""Evaluate accumulators over Ray Datasets: one state per block, merged once on the driver.

Install the extra: ``pip install 'streammetrics[ray]'`` (``ray[data]``).

How it runs
-----------
``evaluate(ds, metrics, label=..., score=...)`` runs one ``map_batches`` task per block (whole
blocks, as Arrow tables, zero-copy; fused with the read, so the rows never enter the object
store): the block feeds an empty twin of ``metrics`` (numeric columns straight to numpy) and
returns one row, its state in the library's versioned, checksummed format (bytes) and the rows
skipped for a null. The driver reads each state once, merges them in one k-way merge and
computes the values; a state is never pickled as an accumulator object.

Exact binary AUROC / AP without the gather: when the set's exact score state serves only
binary ``AUROC`` (full or partial area: ``max_fpr``, by the weighted route's summaries) and step
``AveragePrecision`` members (one numeric label, score and
optional weight column; no ``by``, ``update`` keywords only the set's other members take,
``compute=True``; ``nulls`` either
way), the scores never reach the driver: the blocks of the selected columns are taken once
(``Dataset.to_arrow_refs``), the driver samples a few blocks' scores to place one score edge per
CPU, one task per group of at most 4 blocks validates the rows (and feeds the set's other
members, whose states travel as above) and stores each range's piece of its scores as its own
object, and one task per range sorts (or merges) and counts only its pieces
(:func:`streammetrics._engines.ray_blocks.evaluate_blocks`). Unweighted: the kernels of the
Parquet range path, the single-process values bit for bit; the driver receives O(R) numbers for
AUROC alone, plus 24 bytes per distinct positive score for AP. Weighted: the range summaries of
:func:`evaluate_ranked` (within 1e-12), O(R) numbers. ``by=`` slices, multiclass
one-vs-rest and multilabel exact ``AUROC`` (also partial: ``max_fpr``) / ``AveragePrecision``
(step, interpolated or 11-point; weighted or not), and one-vs-one AUROC, go by (key, score)
ranges over the blocks (:mod:`streammetrics._engines.ray_keyed`): the driver receives
O(R x K) numbers for K slices x classes, labels or class pairs, within 1e-12 of one process;
so do sets with several exact AUROC / AP state groups (one-vs-one beside one-vs-rest, another
``ignore_index``: each group its own columns; the other members' groups before, between or
after them; ``classes=`` / ``pos_label=`` each group with its own codec); ``scores="probability"``
members take the routes of raw scores (each task checks the rows with the group's own
probability state); so do Arrow dictionary (categorical) labels and ``by=`` keys (decoded in
the tasks) and a score column of number lists with ``by=`` or several classes; string labels
with ``by=`` are refused by those tasks as ``Sliced`` refuses them (naming the column, the block
and the value). An exact ``KSStatistic`` in the AUROC / AP state group sends the set by the
weighted route's summaries (one number a range: its largest |TPR - FPR|; KS bit for bit
unweighted), with ``by=`` or multiclass by the keyed ranges (one number per key and range).
Every other case -- curves, ``compute=False`` -- takes
the state path, whose driver holds every block's state (for exact ranking metrics 8 bytes a
score, 16 weighted, and their merge).

Retrieval metrics need each query's rows in one block: the dataset is repartitioned by the query
column (``Dataset.repartition(n, keys=[query])``, a hash shuffle into twice as many blocks as
the cluster has CPUs) unless ``query_partitioned=True``.

A plain ``ray.data.read_parquet`` of local files (optionally under ``select_columns`` or with
``columns=``; no filter, transform, limit, union, partition columns, shuffle or other options,
Ray's file list equal to the one ``evaluate_parquet`` lists: :mod:`streammetrics._engines.ray_source`)
takes ``evaluate_parquet``'s range path below where the set allows it: the files are read by
Ray tasks with pyarrow, never by Ray Data, and the values are the same bit for bit. Any plan
that is not recognised keeps the dataset path.

``evaluate_parquet(path, metrics, ...)`` reads Parquet files without Ray Data where the set's exact
score state serves only binary ``AUROC`` / ``AveragePrecision`` (no weights or slices; ``update``
keywords only the other members take): plain Ray tasks read the row groups with pyarrow straight
into numpy, route the scores to one score range per CPU, sort each range once in its own task and
send only counts to the driver (:mod:`streammetrics._engines.ray_ranges`), the single-process values
bit for bit at about a quarter of the CPU of ``evaluate(ray.data.read_parquet(path))`` (measured:
docs/scale-out.md). Every other case reads the files with ``ray.data.read_parquet``.

Any blocking, empty blocks and any block order give the single-process result (bit for bit for
counts with unit or integer weights and for the exact ranking buffers; within float rounding for
sums of float weights, retrieval means and weighted exact binary AUROC / AP, which go by score
ranges without a gather).

Complexity: one ``update`` pass per block on the workers; one k-way merge of the block states
on the driver, which holds them and their merge (for exact ranking metrics one score per row:
use the bounded variants, ``max_bytes=``, beyond what the driver can hold -- see
docs/scale-out.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streammetrics._core.metric import trusted_states
from streammetrics._engines.dask_ranked import CHUNK_ROWS
from streammetrics._engines.plan import (
    Columns,
    Plan,
    arrow_dtypes,
    brief,
    empty_set,
    feed_arrow,
    merged,
    state_from_bytes,
    state_to_bytes,
)
from streammetrics._engines.request import Request, Run, engine_evaluate, make_run, values_table, warn_skipped

__all__ = ["evaluate", "evaluate_parquet", "evaluate_ranked"]


def _selected(ds: Any, columns: list[str], in_tasks: bool) -> Any:
    """``ds`` with only ``columns``, or ``ds`` itself where ``Dataset.select_columns`` would
    only add a pass over every block: its columns are already those, or (``in_tasks``: the
    tasks select the columns of each block themselves, ``pyarrow.Table.select``) its blocks
    already exist (a ``MaterializedDataset``). Selecting a lazy dataset's columns is kept: Ray
    Data pushes it into the read. (Measured on 10M rows in 180 materialized blocks: the
    selection's pass cost 3.3 s of CPU, docs/scale-out.md.) O(columns)."""
    import ray.data.dataset

    materialized = getattr(ray.data.dataset, "MaterializedDataset", ())  # () if Ray renames it
    if sorted(ds.columns() or []) == sorted(columns) or (in_tasks and isinstance(ds, materialized)):
        return ds
    return ds.select_columns(columns)


def _block_state(block: Any, plan: Plan) -> dict[str, list[Any]]:
    """One block's task: its state (bytes) and the rows skipped for a null, as a one-row batch.
    The block arrives as an Arrow table (``batch_format="pyarrow"``, zero-copy; only the used
    columns kept, zero-copy): numeric columns go straight to numpy
    (:func:`~streammetrics._engines.plan.feed_arrow`)."""
    with trusted_states():
        acc = empty_set(plan.config, plan.kind)
        skipped = feed_arrow(acc, block.select(plan.columns()), plan, "a Ray block")
        return {"state": [state_to_bytes(acc)], "skipped": [skipped]}


def _value_error(exc: BaseException) -> ValueError | TypeError | None:
    """The ValueError a block's task raised (a bad value in the rows) -- or its TypeError (an
    ``update`` keyword the members refuse, as one process raises it) --, from Ray Data's
    wrapped task error (``UserCodeException`` around the task's ``RayTaskError``)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, (ValueError, TypeError)) and type(cause).__module__ == "builtins":
            return cause
        cause = cause.__cause__ or cause.__context__ or getattr(cause, "cause", None)
    lines = [ln for ln in str(exc).splitlines() if ln.startswith(("ValueError: ", "TypeError: "))]
    if not lines:
        return None
    kind, _, message = lines[-1].partition(": ")
    return ValueError(message) if kind == "ValueError" else TypeError(message)


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
    """Run accumulators over a Ray Dataset: one state per block, merged on the driver.

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
    Complexity: one ``update`` pass per block; the driver receives one state per block and
    merges them in one k-way merge. Exact binary ``AUROC`` / ``AveragePrecision`` members (full
    or partial area, step AP; weighted or not; no ``by``; ``compute=True``) go by score ranges
    instead (see the module docstring): the blocks are held once in the object store, the driver
    receives O(R) numbers per range (plus 24 bytes per distinct positive score for unweighted
    AP) and one state of the other members per task -- never the scores; with ``by=`` or
    multiclass (one-vs-rest or one-vs-one) or multilabel members, partial areas too, by (key,
    score) ranges (O(R x K) numbers). With curves or another exact ranking metric, the
    driver holds every block's exact state (8 bytes a score, 16 weighted) and its merge: use
    :func:`evaluate_ranked` for curves, or the bounded variants (``max_bytes=``). For Parquet
    files, :func:`evaluate_parquet` skips Ray Data's read (whose own cost is 2x one process's
    whole evaluation and more: Ray 2.60's reader starts footer-reading actors at every read,
    docs/scale-out.md) and sends only counts of the exact binary AUROC / AP to the driver; a
    ``ds`` that is a plain ``ray.data.read_parquet`` of local files (column selections allowed,
    nothing else; ``compute=True``, no ``by`` or weight, ``update`` keywords only the set's
    other members take,
    ``nulls="error"``) is evaluated by that path over the same files
    (:mod:`streammetrics._engines.ray_source`). A materialized dataset's blocks are read where
    they are, without a ``select_columns`` pass.

    Examples
    --------
    >>> import ray, streammetrics as sm                                     # doctest: +SKIP
    >>> from streammetrics.ray import evaluate                              # doctest: +SKIP
    >>> ds = ray.data.read_parquet("preds/")                                # doctest: +SKIP
    >>> evaluate(ds, sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p")  # doctest: +SKIP
    {'auroc': 0.91, 'f1': 0.77}
    """
    request = Request.of(locals())
    if _plain_ranges(request):  # a plain read_parquet of local files: evaluate_parquet's range path
        from streammetrics._engines import ray_source

        source = ray_source.parquet_source(ds)
        done = None if source is None else _parquet_by_ranges(source.files, metrics, request, source.columns)
        if done is not None:
            return _as_frame(done[0], metrics, request)
    run = make_run(metrics, request, available=list(ds.columns() or []))
    return _as_frame(_evaluate(ds, run), metrics, request)


def _plain_ranges(request: Request) -> bool:
    """Whether the request allows :func:`evaluate_parquet`'s range path (then decided by the
    set's members, :func:`_parquet_by_ranges`: ``update`` keywords only its other members
    take): ``compute=True``, no ``by`` or weight, ``nulls="error"``. O(1)."""
    return (request.compute and request.by is None and request.weight is None
            and request.nulls == "error")


def _evaluate(ds: Any, run: Run) -> Any:
    """:func:`evaluate` of a checked run."""
    frame = _selected(ds, run.plan.columns(), run.shuffle_on is None)
    if run.shuffle_on is not None:
        import ray

        blocks = max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
        frame = frame.repartition(blocks, keys=[run.shuffle_on])
    plan = run.plan
    from streammetrics._engines import ray_blocks

    if run.request.compute and run.shuffle_on is None and ray_blocks.may_split(run.template, plan):
        from streammetrics._engines.ray_keyed import schema_types

        split = ray_blocks.dataset_split(run.template, plan, schema_types(frame.schema()))
        if split is not None:  # exact binary AUROC / AP: by score ranges, no gather of the scores
            done = ray_blocks.evaluate_blocks(frame, plan, split)
            if done is None:  # no block: the empty set's values
                return run.result(None)
            values, caught, skipped = done
            run.report_skipped(skipped)
            return run.shape.deliver(values, caught, sliced=False)
    if run.request.compute and run.shuffle_on is None:  # by= / multiclass AUROC, AP: keyed ranges
        from streammetrics._engines import ray_keyed

        done = ray_keyed.evaluate_dataset(frame, run)
        if done is not None:
            return done
    # One task per block (fused with the read: the rows never enter the object store), one
    # small row out of each; the driver reads every state once and merges them in one k-way
    # merge. (``Dataset.aggregate`` folded the states pairwise, each fold reading and writing
    # the growing state: quadratic in the blocks for exact ranking states.)
    states = frame.map_batches(lambda block: _block_state(block, plan), batch_size=None,
                               batch_format="pyarrow", zero_copy_batch=True)
    payloads, skipped = [], 0
    try:
        for batch in states.iter_batches(batch_size=None, batch_format="pyarrow"):
            payloads += [p for p in batch.column("state").to_pylist() if p]
            skipped += sum(batch.column("skipped").to_pylist())
    except Exception as exc:  # a row refused in a block's task: the ValueError it raised
        error = _value_error(exc)
        if error is None:
            raise
        raise error from exc
    run.report_skipped(skipped)
    with trusted_states():  # made by this module's tasks
        return run.result(merged([state_from_bytes(p) for p in payloads]) if payloads else None)


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
    compute: bool = True,
    by: Columns | None = None,
    positive_index: int = 1,
    nulls: str = "error",
    as_frame: bool = False,
    read_kwargs: Mapping[str, Any] | None = None,
    **update_kwargs: Any,
) -> Any:
    """:func:`evaluate` over Parquet files (a path, a directory, a glob or a list of them).

    When the set's exact score state serves only full-area binary ``AUROC`` and step
    ``AveragePrecision`` members (one numeric label and score column, no weights, no ``by``,
    ``update`` keywords only the other members take, ``compute=True``, ``nulls="error"``) and
    ``read_kwargs`` is None, plain Ray tasks read the files themselves with pyarrow, one row group
    at a time straight into numpy (no Ray Data; directories, globs and lists of files as
    :func:`streammetrics.dask.evaluate_parquet` finds them, names starting with ``_`` or ``.``
    skipped): the scores are routed to R score ranges (one per CPU of the cluster), each range
    sorted once by its own task and counted, and only the counts reach the driver
    (:mod:`streammetrics._engines.ray_ranges`) -- the single-process values bit for bit; with
    few positives among the labels of the files the driver samples, only the sorted positives
    travel (:mod:`streammetrics._engines.minority`). The set's other members travel as states,
    one per task. Every other case (and hive-partitioned
    directories) reads ``ray.data.read_parquet(path, **read_kwargs)`` with :func:`evaluate`.

    Parameters
    ----------
    path : str, os.PathLike or list
        Parquet files: a path, a directory, a glob or a list of them.
    metrics, label, score, target, prediction, weight, query, doc_id
        As for :func:`evaluate`.
    query_partitioned, compute, by, positive_index, nulls, as_frame
        As for :func:`evaluate`.
    read_kwargs : mapping, optional
        Keyword arguments of ``ray.data.read_parquet`` (given, even empty, the files are always
        read by it).
    **update_kwargs
        Passed to every ``update``, as for :func:`evaluate`.

    Returns
    -------
    dict, value, Metric or MetricSet
        As for :func:`evaluate`.

    Raises
    ------
    ValueError
        As :func:`evaluate`; on the range path a null (or NaN) label or score names its file,
        column and row.

    Notes
    -----
    Complexity (range path): one read of the needed columns, O(rows x R) to route the scores,
    one sort per range on its task; the driver reads a few row groups' scores to place the
    range edges and receives the ranges' counts (24 bytes per distinct positive score) and one
    state of the other members per task. Memory: a task its files' scores and their pieces; the
    object store every score once.

    Examples
    --------
    >>> import ray, streammetrics as sm                                     # doctest: +SKIP
    >>> from streammetrics.ray import evaluate_parquet                      # doctest: +SKIP
    >>> metrics = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1())                # doctest: +SKIP
    >>> evaluate_parquet("preds/", metrics, label="y", score="p")            # doctest: +SKIP
    {'auroc': 0.91, 'f1': 0.77}
    """
    request = Request.of(locals())
    if read_kwargs is None and _plain_ranges(request):
        done = _parquet_by_ranges(path, metrics, request)
        if done is not None:
            return _as_frame(done[0], metrics, request)
    import ray

    ds = ray.data.read_parquet(_listed(path) if read_kwargs is None else path, **dict(read_kwargs or {}))
    run = make_run(metrics, request, available=list(ds.columns() or []))
    return _as_frame(_evaluate(ds, run), metrics, request)


def _listed(path: Any) -> Any:
    """The files of ``path`` as the range path lists them (:func:`parquet_reads.parquet_files`:
    globs expanded, names under ``_`` / ``.`` skipped at any depth), so that every metric set
    reads the same files; ``path`` itself where only a dataset reader knows (hive partitions)."""
    from streammetrics._engines import parquet_reads

    found = parquet_reads.parquet_files(path)
    if found is None:
        return path
    fs, files = found
    if parquet_reads.is_local(fs):
        return files
    return [fs.unstrip_protocol(name) for name in files]


def _as_frame(out: Any, metrics: Any, request: Request) -> Any:
    """``out`` as a Ray Dataset of the values (``as_frame=True``, see ``values_table``)."""
    if not request.as_frame:
        return out
    import ray

    return ray.data.from_pandas(values_table(out, metrics, request.by))


def _parquet_by_ranges(path: Any, metrics: Any, request: Request,
                       columns: Sequence[str] | None = None) -> tuple[Any] | None:
    """:func:`evaluate_parquet`'s range path, or None where the general path applies
    (``columns``: the only columns available, as a dataset's selection keeps them)."""
    import pyarrow.parquet as pq

    from streammetrics._engines import parquet_reads, range_counts, ray_ranges

    found = parquet_reads.parquet_files(path)
    if found is None:
        return None
    fs, files = found
    with parquet_reads.named_read_errors(files[0]), fs.open(files[0], "rb") as f:
        schema = pq.read_schema(f)
    dtypes = arrow_dtypes(schema.names, schema.types)  # a type without a numpy twin: general path
    try:
        available = [n for n in schema.names if columns is None or n in columns]
        run = make_run(metrics, request, available=available)
    except ValueError:  # the general path raises it, as for any dataset
        return None
    split = range_counts.split_of(run.template, run.plan, dtypes, labels=True)
    if split is None:
        return None
    values, caught = ray_ranges.evaluate_files(files, fs, run.plan, split)
    return (run.shape.deliver(values, caught, sliced=False),)


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
    nulls: str = "error",
) -> Any:
    """Exact binary AUROC, AP, ROC and PR curves over a Ray Dataset or Parquet files, range by range.

    :func:`streammetrics.dask.evaluate_ranked` on Ray (the same parameters, values and errors):
    one task per block -- or per Parquet file, read by pyarrow in the task -- sorts its scores
    ``chunk_rows`` rows at a time and stores each chunk's sorted runs in the object store before
    it reads the next (a Ray generator task); one task per block or file cuts its chunks at
    R - 1 score edges (weighted quantiles of a sample of every chunk, or given) and stores them
    range by range as R objects, and one task per range merges only that range's pieces and
    returns a few numbers. No process holds every score, and no block or file task more than
    one chunk of them (:mod:`streammetrics._engines.ray_ranked`).

    Parameters
    ----------
    ds : ray.data.Dataset, str, os.PathLike or list
        The rows (only ``label``, ``score`` and ``weight`` are read), or Parquet files -- a
        path, a directory, a glob or a list of them (names starting with ``_`` or ``.``
        skipped; not hive-partitioned directories) -- read by the tasks themselves.
    metrics : MetricSet, Metric or mapping of name -> Metric
        Exact binary ``AUROC`` (full area), ``AveragePrecision`` (step), ``KSStatistic``,
        ``ROCCurve``, ``PRCurve``, ``GainsCurve`` / ``LiftCurve``, ``DETCurve``.
    label, score : str
        The 0/1 label and the score columns.
    weight : str, optional
        The ``sample_weight`` column.
    ranges : int or sequence of float
        The number R of score ranges (default 8), or the R - 1 non-decreasing edges.
    sample_size : int
        Ranks sampled from each chunk's sorted runs to place the edges.
    chunk_rows : int
        Rows read, validated and sorted at a time (default 262,144): a block or file task holds
        one chunk; the values do not depend on it.

    nulls : {"error", "skip"}
        Rows holding a null (or NaN) in ``label``, ``score`` or ``weight``: refused (a
        ValueError naming the column and the row) or dropped by the tasks (their number reported
        by a ``NullRowsSkipped`` warning), as ``evaluate`` does.
    Returns
    -------
    dict or value
        In the shape of ``metrics``: floats for AUROC, AP and KS, ``ROCCurveResult`` /
        ``PRCurveResult`` / ``GainsCurveResult`` / ``DETCurveResult`` for the curves (assembled
        on the driver: one point per distinct score).

    Raises
    ------
    ValueError
        Another metric or configuration, a missing column, bad ``ranges`` / ``sample_size``, a
        path with no Parquet file (or a hive-partitioned one), or any input the metrics reject
        (the block or file and the row named).

    Notes
    -----
    Equal to the single-process exact values up to float rounding (1e-12 relative). Memory: a
    block or file task one chunk (~50 bytes a row) and its runs; a split task one range's
    pieces of its block or file; a range task its range and their merge; the object store every
    score once; the driver the samples and O(blocks x R) numbers (docs/scale-out.md).
    """
    import os

    from streammetrics._engines import parquet_reads, ranked_common, ray_ranked

    data: Any = ds
    if isinstance(ds, str | os.PathLike | list | tuple):
        data = parquet_reads.parquet_files(ds)
        if data is None:
            raise ValueError(f"ds: no Parquet file found at {brief(ds)} (or hive-partitioned: pass "
                             "ray.data.read_parquet(...) instead)")
        import pyarrow.parquet as pq

        fs, files = data
        with parquet_reads.named_read_errors(files[0]), fs.open(files[0], "rb") as f:
            available = list(pq.read_schema(f).names)
    else:
        available = list(ds.columns() or [])
    req = ranked_common.request(metrics, label=label, score=score, weight=weight, ranges=ranges,
                                sample_size=sample_size, chunk_rows=chunk_rows, available=available,
                                nulls=nulls)
    skipped = [0]
    summaries, totals = ray_ranked.range_summaries(data, req, skipped)
    warn_skipped(skipped[0], req.plan.columns())
    return ranked_common.values(req, summaries, totals)
