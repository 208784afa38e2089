"""Range-partitioned exact ranking on Dask: the task graph of :func:`evaluate_ranked`.

The steps are in :mod:`streammetrics._engines.ranked`; this module wires them into one Dask graph:

``partition -> runs`` (one task per partition or Parquet file: its rows read, validated and
sorted ``chunk_rows`` at a time, :func:`~streammetrics._engines.ranked.chunk_runs`)
``-> sample -> edges`` (one small task) ``-> split`` (per partition: its runs cut at the edges
and copied into one piece per range, each run released once copied) ``-> totals ->
offsets`` (round one: each piece's weights, R pairs of numbers per
partition) ``-> piece`` (per partition and range: only that piece travels) ``-> range`` (round
two, per range: the k-way merge -- the only place a range is whole -- and its summary, in one
task) ``-> combine`` (O(R) numbers, plus the curve when a curve metric asks for it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from streammetrics._core.params import Param, check_param

from . import label_codes
from . import ranked as ranked_engine
from .messages import brief
from .plan import Plan, empty_set, feed_frame, frame_state, normalise, state_of
from .request import check_nulls, warn_skipped
from .rest_order import checked_first, rest_fed

_RANGES = Param("int", "must be an integer >= 1 or a sequence of edges", low=1)
_SAMPLE_SIZE = Param("int", "must be an integer >= 1", low=1)
_CHUNK_ROWS = Param("int", "must be an integer >= 1", low=1)
_AT_ONCE = Param("int", "must be an integer >= 1", low=1)
#: Ranges per worker thread by default (a range is then ~1/8 of a worker's share).
RANGES_PER_THREAD = 8
#: Rows read, validated and sorted at a time (~10 MB in flight: the chunk, its twin, its runs).
CHUNK_ROWS = 1 << 18


class Held(list):  # type: ignore[type-arg]
    """A partition's runs (a list of :data:`~streammetrics._engines.ranked.Runs`), which its
    split task takes (:func:`_take_task`): ``taken`` once they have been cut and released;
    ``rest``: the state of a set's other members fed the same rows in the same task (or None);
    ``skipped``: the rows its task dropped for a null (``nulls="skip"``)."""

    taken = False
    rest: dict[str, Any] | None = None
    skipped = 0


def _runs_task(df: Any, plan: Plan, chunk_rows: int = CHUNK_ROWS, index: int = 0,
               rest: tuple[Plan, tuple[str, ...]] | None = None) -> Held:
    """One Dask partition's runs, ``chunk_rows`` rows at a time; with ``rest`` (the other
    members' plan, and those whose groups come before the ranked members: a partition the
    ranked members refuse is offered to them first, :func:`.rest_order.checked_first`), also
    the other members' state, fed after the ranked members' checks."""
    where = f"Dask partition {index}"
    skipped = [0]
    order = contextlib.nullcontext() if rest is None else checked_first(
        rest[0].config, rest[0].kind, rest[1], rest[0].update_kwargs,
        lambda acc, kw: feed_frame(acc, df, dataclasses.replace(rest[0], update_kwargs=kw), where))
    with order:
        held = Held(ranked_engine.chunk_runs(ranked_engine.row_chunks(df, chunk_rows), plan, where, skipped))
    held.skipped = skipped[0]
    if rest is not None:
        held.rest = state_of(frame_state(df, rest[0], where))
    return held


def _runs_frame(df: Any, plan: Plan, chunk_rows: int, call: str = "", partition_info: Any = None,
                rest: tuple[Plan, tuple[str, ...]] | None = None) -> Any:
    """:func:`_runs_task` of a partition, in a one-row frame (a ``map_partitions`` result;
    ``call`` only makes the task unique to one evaluation)."""
    import pandas as pd

    index = partition_info["number"] if partition_info else 0
    return pd.DataFrame({"runs": pd.Series([_runs_task(df, plan, chunk_rows, index, rest)], dtype=object)})


def _held_of(frame: Any) -> Held:
    """The runs in a :func:`_runs_frame` result (the same object)."""
    held = frame["runs"].iloc[0]
    assert isinstance(held, Held)
    return held


def _take_task(held: Held, edges: np.ndarray) -> list[list[ranked_engine.Runs]]:
    """Per range, copies of a partition's pieces; the runs are released as they are cut
    (:func:`~streammetrics._engines.ranked.take_pieces`): the split is their last user, so a
    worker then holds only the pieces not yet merged, and each range's are freed once it is."""
    if held.taken:
        raise RuntimeError("evaluate_ranked: a partition's runs were split twice (a retried task); "
                           "run evaluate_ranked again")
    out = ranked_engine.take_pieces(held, edges)
    held.taken = True
    return out


def _file_runs_task(names: Sequence[str], fs: Any, plan: Plan, chunk_rows: int,
                    rest: tuple[Plan, tuple[str, ...]] | None = None) -> Held:
    """The runs of Parquet files, each read ``chunk_rows`` rows at a time (pyarrow record
    batches of the used columns: no file is ever whole in memory); with ``rest`` (as for
    :func:`_runs_task`), the other members fed each batch too: one read of the files."""
    import pyarrow.parquet as pq

    out = Held()
    skipped = [0]
    acc = None if rest is None else empty_set(rest[0].config, rest[0].kind)
    for name in names:
        with fs.open(name, "rb") as source:
            reader = pq.ParquetFile(source, pre_buffer=False)
            batches = reader.iter_batches(chunk_rows, columns=plan.columns(), use_threads=False)
            where = f"the Parquet file {name!r}"  # a refused row: "... from row N" (its file's)
            with rest_fed(batches, acc, None if rest is None else rest[0], () if rest is None else rest[1],
                          where) as batches:
                out += ranked_engine.chunk_runs(batches, plan, where, skipped)
    out.skipped = skipped[0]
    if acc is not None:
        out.rest = state_of(acc)
    return out


def _rest_of(held: Held) -> dict[str, Any] | None:
    """The other members' state a runs task made (see :class:`Held`)."""
    return held.rest


def _skipped_of(held: Held) -> int:
    """The rows a runs task dropped for a null (see :class:`Held`)."""
    return held.skipped


def file_groups(files: Sequence[str], sizes: Sequence[int], n_groups: int) -> list[list[str]]:
    """``files`` in at most ``n_groups`` consecutive groups of about equal total size (each
    group ends where its share of the bytes is reached). O(len(files))."""
    total = float(sum(sizes)) or 1.0
    groups: list[list[str]] = [[]]
    done = 0.0
    for name, size in zip(files, sizes, strict=True):
        if groups[-1] and len(groups) < n_groups and done >= total * len(groups) / n_groups:
            groups.append([])
        groups[-1].append(name)
        done += size
    return groups


def parquet_files(path: Any) -> tuple[Any, list[str]] | None:
    """The fsspec filesystem and Parquet files of ``path`` (a path, directory or glob, or a list
    of them; in a directory, names starting with ``_`` or ``.`` are skipped), or None when
    ``path`` is not a path."""
    import os

    paths = [path] if isinstance(path, (str, os.PathLike)) else path
    if not isinstance(paths, (list, tuple)) or not paths:
        return None
    if not all(isinstance(p, (str, os.PathLike)) for p in paths):
        return None
    from fsspec.core import has_magic, url_to_fs

    fs: Any = None
    files: list[str] = []
    for p in paths:
        fs, root = url_to_fs(os.fspath(p))
        if has_magic(root):
            found = sorted(fs.glob(root))
        elif fs.isdir(root):
            found = [f for f in sorted(fs.find(root)) if not f.rsplit("/", 1)[-1].startswith(("_", "."))]
        elif fs.exists(root):
            found = [root]
        else:
            raise ValueError(f"data: no such file or directory {os.fspath(p)!r}")
        files += found
    if not files:
        raise ValueError(f"data: no Parquet file in {path!r}")
    return fs, files


def check_names(**specs: Any) -> None:
    """Refuse, by name, a column given as anything but its name (a Series, a Spark ``Column``
    expression): ``specs`` maps the argument's name to it (None: not given)."""
    for what, spec in specs.items():
        if spec is not None and not isinstance(spec, str):
            desc = brief(spec)
            desc = desc if desc.startswith(("a ", "an ")) else f"{type(spec).__name__} {desc}"
            raise ValueError(f"{what}: must be a column name (str), got {desc}")


def read_parquet_files(ddf: Any) -> tuple[Any, list[str]] | None:
    """The fsspec filesystem and files of a Dask DataFrame that is a plain ``dd.read_parquet``
    (column selections allowed; no filters, hive partitions, categories or partition subset),
    which :func:`evaluate_ranked` then reads itself in record batches; None for any other
    DataFrame (its partitions are computed by Dask, each whole). O(files)."""
    expr: Any = getattr(ddf, "expr", None)
    while type(expr).__name__ == "Projection":  # ddf[["y", "p"]]: the same rows
        expr = expr.frame
    if type(expr).__name__ != "ReadParquetFSSpec":
        return None
    ops = dict(zip(expr._parameters, expr.operands, strict=False))
    if ops.get("filters") or ops.get("categories") or ops.get("_partitions") is not None:
        return None
    info = expr._dataset_info
    if info.get("partitions") or info.get("partition_names") or info.get("filters"):
        return None
    files: list[str] = []
    seen: set[str] = set()
    for part in info["plan"]["parts"]:
        name = part["piece"][0] if isinstance(part, dict) and "piece" in part else None
        if not isinstance(name, str):
            return None
        if name not in seen:  # a file split into row-group pieces: read once, whole
            seen.add(name)
            files.append(name)
    return (info["fs"], files) if files else None


def default_ranges(threads: int | None) -> int:
    """The default number of ranges: 8 per worker thread of the current client (8 without
    one), so that a range is about an eighth of a worker's share."""
    return RANGES_PER_THREAD * max(1, threads or 1)


def _edges(ranges: int | Sequence[float] | None) -> tuple[int, np.ndarray | None]:
    if ranges is None:
        return default_ranges(_threads()), None
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
    ranges: int | Sequence[float] | None = None,
    sample_size: int = 256,
    curves: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    ranges_at_once: int | None = None,
    nulls: str = "error",
    skipped: list[int] | None = None,
) -> tuple[list[ranked_engine.RangeSummary], tuple[float, float]]:
    """The per-range summaries (increasing score ranges) and the totals (P, N), on the workers.

    Parameters and errors as :func:`evaluate_ranked`; ``curves``: carry the curve pieces;
    ``skipped``: the rows dropped for a null are added to ``skipped[0]``.
    """
    import dask

    summaries, grand, _, dropped = ranked_graph(ddf, metrics, label=label, score=score, weight=weight,
                                                ranges=ranges, sample_size=sample_size, curves=curves,
                                                chunk_rows=chunk_rows, ranges_at_once=ranges_at_once,
                                                nulls=nulls)
    out, total, counts = dask.compute(summaries, grand, dropped)
    if skipped is not None:
        skipped[0] += sum(counts)
    return list(out), total


def ranked_graph(
    ddf: Any,
    metrics: Any,
    *,
    label: str,
    score: str,
    weight: str | None = None,
    ranges: int | Sequence[float] | None = None,
    sample_size: int = 256,
    curves: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    ranges_at_once: int | None = None,
    nulls: str = "error",
    rest: tuple[Plan, tuple[str, ...]] | None = None,
    positive_index: int = 1,
) -> tuple[list[Any], Any, list[Any], list[Any]]:
    """:func:`range_summaries` not yet computed: the per-range summaries, the totals, the
    other members' states and each runs task's rows dropped for a null as ``Delayed`` objects
    (``streammetrics.dask.evaluate`` computes them in one graph); ``nulls``: the rows with a
    null dropped (``"skip"``) or refused; ``rest``: the other members' plan and those whose
    groups come before the ranked members' -- each runs task feeds them the rows it reads
    after the ranked members' checks (one read), one state per task (none without ``rest``);
    ``positive_index``: the element of a vector score column the binary members take.
    """
    import dask

    template, _ = normalise(metrics)
    ignore = ranked_engine.check_metrics(dict(template.items()), label_codes.LABEL_KEYS)
    labels = ranked_engine.twin_options(m._config() for _, m in template.items())
    fprs = ranked_engine.readouts((type(m).__name__, m._config()) for _, m in template.items())
    envelope = ranked_engine.needs_envelope(m._config() for _, m in template.items())
    n_ranges, fixed = _edges(ranges)
    sample_size = check_param(sample_size, "sample_size", _SAMPLE_SIZE)
    chunk_rows = check_param(chunk_rows, "chunk_rows", _CHUNK_ROWS)
    if ranges_at_once is not None:
        check_param(ranges_at_once, "ranges_at_once", _AT_ONCE)
    check_names(label=label, score=score, weight=weight)
    plan = Plan(config=ranked_engine.runs_config(ignore, labels), family="classification", label=label,
                score=score, weight=weight, nulls=check_nulls(nulls), task="binary",
                positive_index=positive_index)
    delayed = dask.delayed
    plan_node = delayed(plan, pure=True)
    found = parquet_files(ddf)
    if found is None:
        missing = [c for c in plan.columns() if c not in ddf.columns]
        if missing:
            raise ValueError(f"columns {brief(missing)} are not in the DataFrame "
                             f"(has {brief(list(ddf.columns))})")
        found = read_parquet_files(ddf)
    if found is not None:
        import pyarrow.parquet as pq

        fs, files = found
        names = pq.read_schema(files[0], filesystem=fs).names
        missing = [c for c in plan.columns() if c not in names]
        if missing:
            raise ValueError(f"columns {brief(missing)} are not in {files[0]!r} (has {brief(names)})")
        # One task per worker thread, each reading an equal part of the bytes: a worker keeps the
        # runs of what it read, so a scheduler free to give the faster workers more files would
        # give them more than their share of the memory too. Without a client, one per file.
        threads = _threads()
        groups = [[f] for f in files] if threads is None else file_groups(
            files, [int(fs.size(f)) for f in files], threads)
        runs = [delayed(_file_runs_task)(g, fs, plan_node, chunk_rows, rest) for g in groups]
    else:
        # The runs computed in the partition's own task (Dask fuses the read into it), so that
        # no partition waits whole, already read, for its runs task (measured: two in flight per
        # worker thread); a one-row frame holds them, unique to this call (the split empties it).
        import uuid

        import pandas as pd

        meta = pd.DataFrame({"runs": pd.Series([], dtype=object)})
        held = ddf[plan.columns()].map_partitions(_runs_frame, plan, chunk_rows, call=uuid.uuid4().hex,
                                                  rest=rest, meta=meta, enforce_metadata=False)
        runs = [delayed(_held_of, pure=True)(p) for p in held.to_delayed()]
    if fixed is not None:
        edges: Any = fixed
    else:
        samples = [delayed(ranked_engine.sample_chunks, pure=True)(r, sample_size) for r in runs]
        edges = delayed(ranked_engine.range_edges, pure=True)(samples, n_ranges)
    # The split is the runs' last user (it waits for the edges, hence for every sample): it
    # copies the pieces out and releases each run as it is cut, so that a worker's memory
    # shrinks as the ranges are merged (views would keep every run until the last range).
    splits = [delayed(_take_task, pure=True)(r, edges) for r in runs]
    # Round one from the pieces (no range is merged, so none is held while waiting for the
    # others); round two merges each range and summarises it in one task, which returns O(1)
    # numbers (plus its curve piece): a worker never keeps a merged range.
    pieces = [delayed(ranked_engine.chunk_totals, pure=True)(s) for s in splits]
    totals = delayed(ranked_engine.add_totals, pure=True)(pieces)
    offs = delayed(ranked_engine.offsets, pure=True)(totals)
    grand = delayed(_grand, pure=True)(totals)
    # At most ``at_once`` range tasks are ready at a time: range i waits for range i - at_once.
    # A worker fetches the pieces of every task it is given before running it, so R ready
    # range tasks would each bring their range to their worker at once (measured, 80M scores, 4
    # workers, 64 ranges: from 310-330 MB after reading to past 465 MB); chained, a worker
    # receives about one range at a time.
    at_once = _at_once(ranges_at_once, n_ranges)
    summaries: list[Any] = []
    for i in range(n_ranges):
        after = delayed(_token, pure=True)(summaries[i - at_once]) if i >= at_once else None
        summaries.append(delayed(_range_task, pure=True)(
            [delayed(operator.getitem, pure=True)(s, i) for s in splits], delayed(operator.getitem)(offs, i),
            grand, curves, after, fprs, envelope))
    states = [] if rest is None else [delayed(_rest_of, pure=True)(r) for r in runs]
    return summaries, grand, states, [delayed(_skipped_of, pure=True)(r) for r in runs]


def _threads() -> int | None:
    """The worker threads of the current distributed client, or None without one."""
    try:
        from distributed import default_client

        return max(1, sum(default_client().nthreads().values()))
    except (ImportError, ValueError):  # no distributed, or no client
        return None


def _at_once(ranges_at_once: int | None, n_ranges: int) -> int:
    """The range tasks ready at a time: given, else the threads of the current distributed
    client's workers (every range when there is none: a local scheduler runs what it holds)."""
    if ranges_at_once is not None:
        return int(check_param(ranges_at_once, "ranges_at_once", _AT_ONCE))
    return _threads() or n_ranges


def _token(summary: ranked_engine.RangeSummary) -> int:
    """A range task's completion, as one small number (what the next range task waits for)."""
    return summary.n_scores


def _range_task(pieces: Sequence[Sequence[ranked_engine.Runs]], offset: tuple[float, float, float],
                totals: tuple[float, float], curves: bool, after: Any = None,
                max_fprs: Sequence[float] = (), envelope: bool = False) -> ranked_engine.RangeSummary:
    """Round two for one range: its pieces of every partition's runs, merged and summarised
    (``after``: the range task it waited for, unused; ``max_fprs``: the partial areas asked;
    ``envelope``: an interpolated or 11-point AP asked)."""
    merged = ranked_engine.merge_unsorted([p for part in pieces for p in part])
    return ranked_engine.range_summary(merged, offset, totals, curves, max_fprs, envelope=envelope)


def _grand(totals: Sequence[tuple[float, float]]) -> tuple[float, float]:
    return float(sum(t[0] for t in totals)), float(sum(t[1] for t in totals))


def evaluate_ranked(
    ddf: Any,
    metrics: Any,
    *,
    label: Any,
    score: Any,
    weight: Any = None,
    ranges: int | Sequence[float] | None = None,
    sample_size: int = 256,
    chunk_rows: int = CHUNK_ROWS,
    ranges_at_once: int | None = None,
    nulls: str = "error",
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
    ddf : dask.dataframe.DataFrame, or str / path / list of them
        The rows (only ``label``, ``score`` and ``weight`` are read): Parquet files (a path,
        directory, glob or list of them, local or fsspec), which each task reads itself
        ``chunk_rows`` rows at a time, so no file is ever whole in a worker's memory; a plain
        ``dd.read_parquet(...)`` (column selections allowed; no ``filters``, hive partitions,
        ``categories`` or ``.partitions[...]``), whose files are read the same way; or any
        other Dask DataFrame, whose partitions Dask computes, each whole.
    metrics : MetricSet, Metric or mapping of name -> Metric
        Exact binary ``AUROC`` (full area, or partial: ``max_fpr``, McClish-standardised as
        scikit-learn's), ``AveragePrecision`` (step), ``KSStatistic`` (each range sends its
        largest |TPR - FPR|), ``ROCCurve``, ``PRCurve``, ``GainsCurve`` / ``LiftCurve``,
        ``DETCurve`` templates (their configuration is used; they are not modified).
    label, score : str or dask Series
        The 0/1 label and the score columns, or Dask Series derived from ``ddf`` (as
        :func:`streammetrics.dask.evaluate` takes them: ``score=ddf.p * 1.0``, added to the
        frame lazily; a null row named by the argument, ``'score (a Series)'``).
    weight : str or dask Series, optional
        The ``sample_weight`` column, or a Dask Series derived from ``ddf``.
    ranges : int or sequence of float, optional
        The number R of score ranges (more ranges = less memory per range task; default 8 per
        worker thread of the current distributed client, 8 without one), or the R - 1
        non-decreasing edges themselves (range r holds scores in [e_r-1, e_r)). The values do
        not depend on R beyond float rounding.
    sample_size : int
        Ranks sampled from each partition's sorted runs (per chunk) to place the edges.
    chunk_rows : int
        Rows validated and sorted at a time (default 262,144: ~10 MB in flight). A partition is
        kept as the sorted runs of its chunks (never sorted or merged whole); the values do not
        depend on it.
    ranges_at_once : int, optional
        Range tasks given to the workers at a time (range r starts after range r - this one
        finishes), so that a worker fetches about one range at a time; default: the worker
        threads of the current distributed client (every range without one).
    nulls : {"error", "skip"}
        Rows holding a null (or NaN) in ``label``, ``score`` or ``weight``: refused (a
        ValueError naming the column, the partition or file and the row) or dropped by the tasks
        (their number reported by a ``NullRowsSkipped`` warning), as
        :func:`streammetrics.dask.evaluate` does.

    Returns
    -------
    dict or value
        In the shape of ``metrics``, as :func:`streammetrics.dask.evaluate`: floats for AUROC, AP
        and KS, ``ROCCurveResult`` / ``PRCurveResult`` / ``GainsCurveResult`` /
        ``DETCurveResult`` for the curves (these, the output, are assembled on the client: one
        point per distinct score).

    Raises
    ------
    ValueError
        Another metric or configuration, a missing column, bad ``ranges`` / ``sample_size``, or
        any input the metrics reject.

    Notes
    -----
    Equal to the single-process exact values up to float rounding (1e-12 relative; with
    fractional weights the ranges sum them in another order, so ``ROCCurve(drop_intermediate=True)``
    may keep or drop a point collinear with its neighbours within that rounding). Memory per
    worker: a baseline (Python, numpy, pandas, pyarrow, dask: ~150-250 MB), the sorted runs of
    the partitions it read (8 bytes a score, 16 weighted: its share of the exact state; once
    cut at the edges, each range's pieces are freed when that range is merged), one chunk in
    flight (plus, for a Dask DataFrame other than a plain ``read_parquet``, the partitions
    Dask computes for it) and the range it merges (~3x 1/R of the state; tied scores
    share a range, so a score held by more than 1/R of the rows makes its range larger); the
    client O(R) numbers. Time: one sort per chunk, one k-way merge per range, O(n) counting,
    spread over the workers.

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
    if hasattr(ddf, "npartitions"):  # Dask Series as columns: assigned to the frame as evaluate does
        from .dask_expressions import series_columns
        from .request import Request

        ddf, req = series_columns(ddf, Request(label=label, score=score, weight=weight, update_kwargs={}))
        label, score, weight = req.label, req.score, req.weight
    template, shape = normalise(metrics)
    members = dict(template.items())
    curves = ranked_engine.wants_curve(members.values())
    skipped = [0]
    summaries, totals = range_summaries(ddf, metrics, label=label, score=score, weight=weight,
                                        ranges=ranges, sample_size=sample_size, curves=curves,
                                        chunk_rows=chunk_rows, ranges_at_once=ranges_at_once,
                                        nulls=nulls, skipped=skipped)
    warn_skipped(skipped[0], [c for c in (label, score, weight) if c is not None])
    fprs = ranked_engine.readouts((type(m).__name__, m._config()) for m in members.values())
    res = ranked_engine.combine(summaries, totals, fprs)
    return shape.values(ranked_engine.member_values(members.items(), res))


#: The checks of ``ranges``, ``sample_size`` and ``chunk_rows``, shared with Spark's and Ray's
#: ``evaluate_ranked`` (:mod:`streammetrics._engines.ranked_common`): the engines refuse alike.
check_ranges = _edges
SAMPLE_SIZE = _SAMPLE_SIZE
CHUNK_ROWS_PARAM = _CHUNK_ROWS
