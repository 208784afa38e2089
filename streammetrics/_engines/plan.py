"""What every engine integration shares: the plan of a run, the per-partition state, the merge.

Dask (:mod:`streammetrics.dask`), Spark (:mod:`streammetrics.spark`) and Ray
(:mod:`streammetrics.ray`) all evaluate the same way: each partition (a pandas DataFrame or an
Arrow table) feeds an empty twin of the user's metrics and returns its state; states are merged
in a tree; the root computes. This module holds those engine-neutral steps, so each integration
is only the glue to its engine's task model.

A state travels between tasks as its arrays (``state_dict`` without the configuration, which is
shipped once) or, where an engine needs bytes, in the library's checksummed file format
(:func:`state_to_bytes`); never as a pickled object graph of the accumulator.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streammetrics._core.metric import FORMAT_VERSION, RESERVED_KEYS, Metric, trusted_states
from streammetrics._core.params import Param, check_accumulator, check_param, nonempty_param
from streammetrics._core.persistence import dumps, loads
from streammetrics._core.warn import warn
from streammetrics.wrappers.metricset import MetricSet

from .messages import ITEMS, brief, located, named

Columns = str | Sequence[str]


@dataclass(frozen=True)
class Plan:
    """What each partition task needs: the set's configuration and the column mapping."""

    config: dict[str, Any]
    family: str
    label: Columns
    score: Columns
    weight: str | None = None
    query: str | None = None
    doc_id: str | None = None
    update_kwargs: dict[str, Any] = field(default_factory=dict)
    #: The accumulator's class: ``"MetricSet"``, or ``"Sliced"`` (around the metrics) with ``by``.
    kind: str = "MetricSet"
    #: Slice key column(s): one name (keys are its values) or several (keys are tuples).
    by: Columns | None = None
    #: A vector score column (one array per row): the element binary metrics take.
    positive_index: int = 1
    #: The metrics' task (``"binary"``, ``"multiclass"``, ...; None when they have none or differ).
    task: str | None = None
    #: Rows with a null in a used column: ``"error"`` (refused, the row named) or ``"skip"``.
    nulls: str = "error"

    def fed(self) -> dict[str, Any]:
        """The engine arguments' columns (named in a refused batch's message, :func:`located`)."""
        return dict(label=self.label, score=self.score, weight=self.weight, by=self.by, query=self.query,
                    doc_id=self.doc_id)

    def columns(self) -> list[str]:
        cols: list[str] = []
        for spec in (self.label, self.score, self.weight, self.query, self.doc_id, self.by):
            if spec is None:
                continue
            for c in [spec] if isinstance(spec, str) else list(spec):
                if c not in cols:
                    cols.append(c)
        return cols


#: The accumulators an engine runs: the user's metrics in a MetricSet, or sliced (``by=``).
KINDS = ("MetricSet", "Sliced")
_KIND = Param("choice", f"must be one of {KINDS}", choices=KINDS)


def empty_set(config: Mapping[str, Any], kind: str = "MetricSet") -> Metric:
    """An empty accumulator of class ``kind`` (one of :data:`KINDS`) and configuration ``config``."""
    kind = check_param(kind, "kind", _KIND)
    return Metric._registry[kind]._from_config(config)


def state_of(acc: Metric) -> dict[str, Any]:
    """The shipped form of a state: the state arrays only (no class, version or configuration)."""
    return {k: v for k, v in acc.state_dict().items() if k not in RESERVED_KEYS}


def rebuild(config: Mapping[str, Any], arrays: Mapping[str, Any], kind: str = "MetricSet") -> Metric:
    """Rebuild (and validate) an accumulator of class ``kind`` from shipped arrays."""
    kind = check_param(kind, "kind", _KIND)
    return Metric.from_state_dict(
        {"class": kind, "format_version": FORMAT_VERSION, "config": config, **arrays}
    )


def merged(accs: Sequence[Metric]) -> Metric:
    """The first accumulator with the others merged in: one k-way merge (``merge(*others)``)."""
    acc = accs[0]
    if len(accs) > 1:
        acc.merge(*accs[1:])
    return acc


def compute_recorded(acc: Metric) -> tuple[Any, list[tuple[str, type[Warning]]]]:
    """``acc.compute()`` with the warnings it raises recorded (to re-raise them elsewhere)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = acc.compute()
    return values, [(str(w.message), w.category) for w in caught]


def merge_bytes(payloads: Sequence[bytes]) -> bytes:
    """Shipped states in the byte format (empty bytes: no state yet) merged into one, by this
    library's own tasks (trusted: derived counts carried, no re-validation)."""
    kept = [p for p in payloads if p]
    if len(kept) <= 1:
        return kept[0] if kept else b""
    with trusted_states():
        return state_to_bytes(merged([state_from_bytes(p) for p in kept]))


def finish(acc: Metric, shape: Shape, plan: Plan, compute: bool) -> Any:
    """What ``evaluate`` returns from the merged accumulator, on the client."""
    if not compute:
        if plan.by is not None:
            return acc
        assert isinstance(acc, MetricSet)
        return shape.accumulators(acc)
    values, caught = compute_recorded(acc)
    return shape.deliver(values, caught, sliced=plan.by is not None)


def numeric_dtype(dtype: Any) -> bool:
    """Whether a column of ``dtype`` holds numbers the range paths read as the state path does:
    a numpy bool / integer / float dtype, or a pandas extension dtype of those kinds (``Int64``,
    ``Float64``, ``boolean``, ``int64[pyarrow]``, ``double[pyarrow]``..., whose NA
    :func:`drop_nulls` skips or refuses and :func:`column` reads as numpy). None (a column
    not in the frame: its type had no numpy twin), strings, objects and categoricals: False.
    O(1)."""
    if dtype is None:  # np.dtype(None) would be float64
        return False
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:  # pandas extension dtypes carry their numpy kind
        kind = getattr(dtype, "kind", None)
        return isinstance(kind, str) and len(kind) == 1 and kind in "biuf"


def arrow_dtypes(names: Iterable[str], types: Iterable[Any]) -> dict[str, Any]:
    """The numpy dtypes of columns of Arrow (or numpy) ``types``, as the range routes'
    ``split_of`` read them: a dictionary-encoded column (a pandas categorical written to
    Parquet or put in a Ray block) as its values' type, which the tasks decode; Arrow strings
    as numpy ``U`` (strings, not objects of unknown kind); a pandas categorical (a Ray pandas
    block's) as its categories' dtype; a type with no numpy twin left out (the state path).
    O(columns)."""
    import pyarrow as pa

    out: dict[str, Any] = {}
    for name, kind in zip(names, types, strict=True):
        if kind is None:  # np.dtype(None) would be float64
            continue
        if isinstance(kind, pa.DataType) and pa.types.is_dictionary(kind):
            kind = kind.value_type
        elif getattr(kind, "categories", None) is not None:  # categories of strings: "str" / object
            kind = pa.string() if kind.categories.dtype.kind in "OU" else kind.categories.dtype
        if isinstance(kind, pa.DataType) and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            out[name] = np.dtype(str)
            continue
        with contextlib.suppress(NotImplementedError, TypeError, AttributeError):
            out[name] = np.dtype(kind.to_pandas_dtype() if hasattr(kind, "to_pandas_dtype") else kind)
    return out


def column(df: Any, spec: Columns, what: str) -> np.ndarray:
    """One column as a 1-D array, or several as an (n, k) array; pandas NA becomes NaN (rejected)."""
    cols = [spec] if isinstance(spec, str) else list(spec)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: column(s) {brief(missing)} not in the DataFrame "
                         f"(has {brief(list(df.columns))})")
    frame = df[cols]
    arr = frame.to_numpy()
    if arr.dtype == object:  # pandas nullable dtypes: NA -> NaN, which validation rejects
        with contextlib.suppress(TypeError, ValueError):
            arr = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    if arr.ndim == 1:  # an extension column pandas gives flat (Ray's ``python_object()``)
        arr = arr.reshape(len(frame), -1)
    return arr[:, 0] if isinstance(spec, str) else arr


def numbers(arr: np.ndarray, spec: Columns, what: str, where: str) -> np.ndarray:
    """``arr`` (a range route's task's :func:`column`: ``Decimal`` s float64 as on the state path)
    unchanged, unless it still holds objects: then the first value float64 cannot hold (a string,
    another object) is a ``ValueError`` naming the column, ``where`` and the value with its row.
    O(1) (a scan only for an object array)."""
    if arr.dtype != object:
        return arr
    for i, v in enumerate(arr.reshape(-1)):
        try:
            float(v)
        except (TypeError, ValueError, OverflowError):
            row = i if arr.ndim == 1 else i // arr.shape[1]
            raise ValueError(f"{what}: {named(spec)} of {where}: expected numbers, booleans or "
                             f"Decimals that float64 can hold; first invalid value {brief(v)} at row "
                             f"{row}") from None
    return arr  # numbers float64 holds (the state's validation reads them as the state path's)


def task_scores(df: Any, plan: Plan, where: str) -> np.ndarray:
    """A range task's scores as the state path reads them (:func:`vector_scores`), :func:`numbers`. O(n)."""
    return numbers(vector_scores(column(df, plan.score, "score"), plan), plan.score, "score", where)


def task_columns(df: Any, plan: Plan, where: str) -> tuple[list[np.ndarray], ValueError | None]:
    """A range task's label, score (and weight) columns of ``df`` as the state path reads them
    (:func:`column`; scores :func:`task_scores`, weights :func:`numbers`), and the refusal of a
    score or weight float64 cannot hold, or None. Not raised: that column is replaced by
    stand-ins (zeros, ones; the task fails either way), so that the caller checks the batch's
    labels (and scores) first and raises it after them, as one ``update`` checks ``y_true``,
    ``y_score``, ``sample_weight`` in that order. O(n)."""
    y = column(df, plan.label, "label")
    bad: ValueError | None = None
    try:
        s = task_scores(df, plan, where)
    except ValueError as exc:
        s, bad = np.zeros((y.shape[0], len(plan.score)) if isinstance(plan.score, list) else y.shape[0]), exc
    cols = [y, s]
    if plan.weight is not None:
        try:
            cols.append(numbers(column(df, plan.weight, "weight"), plan.weight, "weight", where))
        except ValueError as exc:
            cols.append(np.ones(y.shape[0]))
            bad = exc if bad is None else bad
    return cols, bad


def labels_first(batches: Iterable[tuple[list[np.ndarray], ValueError | None, str]]
                 ) -> Iterator[tuple[np.ndarray, np.ndarray, str]]:
    """The ``(labels, scores, where)`` of each ``(columns, refusal, where)`` batch
    (:func:`task_columns`); a batch's refusal (a score or weight float64 cannot hold) raised
    when the consumer asks for the next batch, once it has checked that batch's labels. O(1)."""
    for cols, bad, where in batches:
        yield cols[0], cols[1], where
        if bad is not None:
            raise bad


def vector_scores(arr: np.ndarray, plan: Plan) -> np.ndarray:
    """A score column holding one vector per row (an MLlib vector column read as arrays, or a
    pandas column of arrays / lists) as an (n, C) array, or, for binary metrics, its element
    ``plan.positive_index``; any other column unchanged."""
    if arr.ndim != 1 or arr.dtype != object or not len(arr) or np.ndim(arr[0]) != 1:
        return arr
    try:
        rows = np.stack([np.asarray(v, dtype=np.float64) for v in arr])
    except ValueError as exc:  # vectors of different lengths
        raise ValueError(f"score: the vectors have different lengths ({exc})") from None
    if plan.task != "binary":
        return rows
    if plan.positive_index >= rows.shape[1]:
        raise ValueError(f"positive_index: {plan.positive_index} is out of range of the score "
                         f"vectors of length {rows.shape[1]}")
    return rows[:, plan.positive_index]


def ids(df: Any, name: str) -> np.ndarray:
    arr = df[name].to_numpy()
    if arr.dtype == object or arr.dtype.kind in "US":
        return arr.astype(str)
    return arr


#: What ``nulls=`` accepts.
NULLS = ("error", "skip")


def drop_nulls(df: Any, plan: Plan, where: str = "", offset: int = 0) -> tuple[Any, int]:
    """``df`` without its rows holding a null (None, NaN, NA) in a used column, and how many
    were dropped (``plan.nulls == "skip"``); with ``"error"`` such a row is a ValueError naming
    the column, the row (its position ``offset + i`` in ``where``, its index label) and its values.

    Complexity: O(rows x used columns).
    """
    cols = plan.columns()
    missing = [c for c in cols if c not in df.columns]
    if missing:  # a partition of another schema (a file without the column)
        raise ValueError(f"columns {brief(missing)} are not in {where or 'the partition'} "
                         f"(has {brief(list(df.columns))})")
    isna = df[cols].isna()
    mask = isna.any(axis=1).to_numpy()
    if not mask.any():
        return df, 0
    if plan.nulls == "skip":
        return df[~mask], int(mask.sum())
    i = int(np.argmax(mask))
    col = cols[int(np.argmax(isna.iloc[i].to_numpy()))]
    shown = cols[:ITEMS] if col in cols[:ITEMS] else [*cols[: ITEMS - 1], col]  # what brief() shows
    row_text = brief({c: v.item() if isinstance(v, np.generic) else v
                      for c, v in ((c, df[c].iloc[i]) for c in shown)})
    if len(cols) > len(shown):
        row_text = f"{row_text[:-1]}, ... ({len(cols)} columns)}}"
    raise ValueError(f"nulls: column {brief(col)} is null at row {offset + i} of {where or 'the partition'} "
                     f"(index {brief(df.index[i])}; row {row_text}); pass nulls='skip' to drop the rows "
                     f"holding a null in {brief(cols)}")


def feed(acc: Metric, df: Any, plan: Plan, where: str = "", offset: int = 0) -> int:
    """Feed one partition's rows (a pandas DataFrame) to ``acc``; return how many rows with a
    null were skipped (see :func:`drop_nulls`: ``where`` and ``offset`` name the rows; a value
    ``update`` refuses is named by column and ``where``, :func:`located`)."""
    df, skipped = drop_nulls(df, plan, where, offset)
    if not len(df):
        return skipped
    with located(plan.fed(), where, offset):
        _update(acc, df, plan)
    return skipped


def _update(acc: Metric, df: Any, plan: Plan) -> None:
    """:func:`feed`'s ``update`` of rows without a null."""
    if plan.family == "retrieval":
        assert plan.query is not None
        df = df.sort_values(plan.query, kind="stable")  # each query's rows contiguous
        kwargs: dict[str, Any] = dict(plan.update_kwargs)
        kwargs["query_ids"] = ids(df, plan.query)
        if plan.doc_id is not None:
            kwargs["doc_ids"] = ids(df, plan.doc_id)
        acc.update(column(df, plan.label, "label"), column(df, plan.score, "score"), **kwargs)
        return
    weight = None if plan.weight is None else column(df, plan.weight, "weight")
    kwargs = dict(plan.update_kwargs)
    if isinstance(plan.by, str):
        kwargs["slices"] = ids(df, plan.by)
    elif plan.by is not None:
        kwargs["slices"] = {name: ids(df, name) for name in plan.by}
    acc.update(
        column(df, plan.label, "label"),
        vector_scores(column(df, plan.score, "score"), plan),
        sample_weight=weight,
        **kwargs,
    )


#: Rows an Arrow-fed task hands to one ``update`` (Spark sends record batches of 10,000 rows:
#: fed one by one, the per-batch costs of conversion, validation and buffering were ~8x the
#: cost of the rows themselves).
ARROW_CHUNK_ROWS = 1 << 20


def arrow_chunks(batches: Iterable[Any], rows: int = ARROW_CHUNK_ROWS) -> Iterator[Any]:
    """Arrow record batches coalesced into tables of at least ``rows`` rows (the last one fewer;
    empty batches dropped). A table holds its batches as chunks: nothing is copied here.

    Complexity: O(batches); memory: one table of about ``rows`` rows at a time.
    """
    import pyarrow as pa

    held: list[Any] = []
    count = 0
    for batch in batches:
        if batch.num_rows:
            held.append(batch)
            count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(held)
            held, count = [], 0
    if held:
        yield pa.Table.from_batches(held)


def arrow_arrays(table: Any, plan: Plan) -> dict[str, np.ndarray] | None:
    """The used columns of an Arrow table or record batch as numpy arrays, when Arrow holds them
    as plain numbers (integer, float or boolean columns without a null or a NaN); else None --
    the pandas path (:func:`feed`), which also names the first null row.

    Complexity: O(rows x used columns): one copy of a column made of several chunks (zero-copy
    for one chunk of a numeric type), one NaN scan of a float column.
    """
    import pyarrow.types as pat

    out: dict[str, np.ndarray] = {}
    for name in plan.columns():
        col = table.column(name)
        kind = col.type
        if col.null_count or not (pat.is_integer(kind) or pat.is_floating(kind) or pat.is_boolean(kind)):
            return None
        arr = col.to_numpy()
        if arr.dtype.kind == "f" and np.isnan(arr).any():  # pandas reads NaN as a null row
            return None
        out[name] = arr
    return out


def feed_arrow(acc: Metric, table: Any, plan: Plan, where: str = "", offset: int = 0) -> int:
    """:func:`feed` of an Arrow table or record batch: its columns straight to numpy where
    :func:`arrow_arrays` takes them (no pandas DataFrame), else through pandas. The same rows
    reach ``update`` in the same order and dtypes either way (a numeric Arrow column reads as
    the numpy array pandas gives). Returns the rows skipped for a null.

    Complexity: one ``update`` of the rows, plus :func:`arrow_arrays`.
    """
    arrays = None
    if plan.family != "retrieval" and plan.by is None and table.num_rows:
        arrays = arrow_arrays(table, plan)
    if arrays is None:
        return feed(acc, table.to_pandas(), plan, where, offset) if table.num_rows else 0

    def get(spec: Columns) -> np.ndarray:
        return arrays[spec] if isinstance(spec, str) else np.column_stack([arrays[c] for c in spec])

    weight = None if plan.weight is None else arrays[plan.weight]
    with located(plan.fed(), where, offset):
        acc.update(get(plan.label), get(plan.score), sample_weight=weight, **plan.update_kwargs)
    return 0


def partition_state(df: Any, plan: Plan) -> dict[str, Any]:
    """State of one partition (a pandas DataFrame): an empty twin fed with its rows.

    The task :func:`evaluate` runs per partition. Complexity: one ``update`` of the partition.
    An empty partition gives the empty state.

    Parameters
    ----------
    df : pandas.DataFrame
        The partition's rows.
    plan : Plan
        What :func:`evaluate` built from its arguments: the metrics' configuration and the
        column names.

    Returns
    -------
    dict
        The shipped state: ``state_dict()`` without the configuration.
    """
    return state_of(frame_state(df, plan))


def merge_states(
    states: Sequence[Mapping[str, Any]], config: Mapping[str, Any], kind: str = "MetricSet"
) -> dict[str, Any]:
    """Merge shipped states (validated on load) into one shipped state.

    Complexity: the total size of ``states`` (plus the merge rule's cost, e.g. a k-way merge of
    sorted score runs).

    Parameters
    ----------
    states : sequence of dict
        Shipped states (:func:`partition_state` output, or earlier merges), at least one. Each
        is validated as untrusted input.
    config : mapping
        The configuration of the ``MetricSet`` they belong to (its ``state_dict()["config"]``).
    kind : str
        Their accumulator's class: ``"MetricSet"`` or (for ``by=`` runs) ``"Sliced"``.

    Returns
    -------
    dict
        The merged shipped state.

    Raises
    ------
    ValueError
        A malformed state, or one of another configuration.
    """
    return state_of(merged([rebuild(config, s, kind) for s in states]))


def merge_and_compute(
    states: Sequence[Mapping[str, Any]], config: Mapping[str, Any], kind: str = "MetricSet"
) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """The root of the tree when values are wanted: merge, then compute on the worker.

    The (small) values travel to the client instead of the merged state, which for exact
    ranking metrics is one score per row. Warnings raised by ``compute`` (e.g.
    ``UndefinedMetricWarning``) are recorded and re-raised on the client.

    Parameters
    ----------
    states : sequence of dict
        Shipped states, at least one (see :func:`merge_states`).
    config : mapping
        The configuration of the ``MetricSet`` they belong to.
    kind : str
        As for :func:`merge_states`.

    Returns
    -------
    tuple of (dict, list)
        ``({name: value}, [(message, warning category), ...])``.
    """
    return compute_recorded(merged([rebuild(config, s, kind) for s in states]))



@dataclass(frozen=True)
class Shape:
    """How to give results back in the shape of the ``metrics`` argument."""

    kind: str  # "set", "one" or "mapping"
    names: tuple[str, ...] = ()

    def values(self, values: dict[str, Any]) -> Any:
        if self.kind == "one":
            return values["m"]
        if self.kind == "mapping":
            return {name: values[f"m{i}"] for i, name in enumerate(self.names)}
        return values

    def deliver(self, values: Any, caught: Sequence[tuple[str, type[Warning]]], sliced: bool) -> Any:
        """Re-raise the recorded warnings and shape the values (sliced: ``{key: values}``, a
        single metric's slices holding the metric itself)."""
        for message, category in caught:
            warn(message, category)
        if not sliced:
            return self.values(values)
        return values if self.kind == "one" else {k: self.values(v) for k, v in values.items()}

    def accumulators(self, acc: MetricSet) -> Any:
        if self.kind == "one":
            return acc["m"].copy()
        if self.kind == "mapping":
            return {name: acc[f"m{i}"].copy() for i, name in enumerate(self.names)}
        return acc


def normalise(metrics: Any) -> tuple[MetricSet, Shape]:
    """Wrap ``metrics`` in an empty MetricSet twin; return it and how to unwrap the results."""
    if isinstance(metrics, MetricSet):
        return MetricSet._from_config(metrics._config()), Shape("set")
    if isinstance(metrics, Metric):
        return MetricSet(m=type(metrics)._from_config(metrics._config())), Shape("one")
    if isinstance(metrics, Mapping):
        nonempty_param(metrics, "metrics", "expected at least one metric")
        members: dict[str, Metric] = {}
        for i, (name, m) in enumerate(metrics.items()):
            check_accumulator(m, f"metrics[{brief(name)}]", refused=(MetricSet,))
            members[f"m{i}"] = type(m)._from_config(m._config())
        return MetricSet(members), Shape("mapping", tuple(metrics))
    raise ValueError(
        f"metrics: expected a MetricSet, a metric or a mapping of metrics, got {type(metrics).__name__}"
    )


def make_plan(
    metrics: Any,
    *,
    label: Columns,
    score: Columns,
    weight: str | None,
    query: str | None,
    doc_id: str | None,
    update_kwargs: Mapping[str, Any],
    available: Sequence[str],
    by: Columns | None = None,
    positive_index: int = 1,
    nulls: str = "error",
) -> tuple[Metric, Shape, Plan]:
    """Check the arguments every engine's ``evaluate`` takes and build the run's plan.

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        The templates (their configuration only).
    label, score, weight, query, doc_id : column names
        As in :func:`streammetrics.dask.evaluate`.
    update_kwargs : mapping
        Passed to every ``update``.
    available : sequence of str
        The columns the engine's frame has (a missing one is a ``ValueError`` naming it).
    by : str or list of str, optional
        Slice key column(s): the run is a ``Sliced`` accumulator around the metrics.
    positive_index : int
        A vector score column: the element binary metrics take.
    nulls : {"error", "skip"}
        Rows with a null in a used column: refused (the row named) or skipped.

    Returns
    -------
    (template, shape, plan) : the empty accumulator (a MetricSet twin, or a ``Sliced`` one), how
    to unwrap results, the plan.
    """
    template, shape = normalise(metrics)
    if template.family == "retrieval":
        if query is None:
            raise ValueError("query: retrieval metrics need the query id column (query=...)")
        if weight is not None:
            raise ValueError("weight: retrieval metrics take no sample weights")
    elif query is not None or doc_id is not None:
        raise ValueError("query/doc_id: only retrieval metrics take query or document ids")
    acc: Metric = template
    if by is not None:
        acc = sliced_template(template, shape, by)
    plan = Plan(
        config=acc._config(),
        kind=type(acc).__name__,
        by=by if by is None or isinstance(by, str) else tuple(by),
        family=template.family,
        label=label,
        score=score,
        weight=weight,
        query=query,
        doc_id=doc_id,
        update_kwargs=dict(update_kwargs),
        positive_index=positive_index,
        task=_task(template),
        nulls=nulls,
    )
    missing = [c for c in plan.columns() if c not in available]
    if missing:
        raise ValueError(f"columns {brief(missing)} are not in the DataFrame (has {brief(list(available))})")
    return acc, shape, plan


def _task(template: MetricSet) -> str | None:
    """The members' common task (``"binary"``, ``"multiclass"``, ...), or None."""
    tasks = {getattr(m, "task", None) for m in template.values()}
    return tasks.pop() if len(tasks) == 1 else None


def sliced_template(template: MetricSet, shape: Shape, by: Columns) -> Metric:
    """The ``Sliced`` accumulator of a ``by=`` run (around the single metric itself, or the set)."""
    from streammetrics.wrappers.sliced.core import Sliced

    names = [by] if isinstance(by, str) else list(by)
    if not names or not all(isinstance(c, str) for c in names):
        raise ValueError(f"by: expected a column name or a non-empty list of them, got {brief(by)}")
    if template.family not in ("classification", "regression"):  # label and score per row
        raise ValueError(f"by: slices take classification or regression metrics, got the "
                         f"{template.family} family")
    return Sliced(template["m"] if shape.kind == "one" else template)


def frame_state(frame: Any, plan: Plan, where: str = "") -> Metric:
    """The accumulator of one partition given as a pandas DataFrame or an Arrow table/batch
    (``where`` names it in a null row's message, see :func:`drop_nulls`).

    Complexity: one ``update`` of the partition's rows (an Arrow table's numeric columns go
    straight to numpy, see :func:`feed_arrow`).
    """
    acc = empty_set(plan.config, plan.kind)
    feed_frame(acc, frame, plan, where)
    return acc


def feed_frame(acc: Metric, frame: Any, plan: Plan, where: str = "") -> None:
    """Feed ``acc`` one partition given as a pandas DataFrame or an Arrow table/batch
    (:func:`feed`, :func:`feed_arrow`). O(rows)."""
    if not hasattr(frame, "columns") or not hasattr(frame, "iloc"):  # Arrow: numpy or pandas
        feed_arrow(acc, frame, plan, where)
    elif len(frame):
        feed(acc, frame, plan, where)


def state_to_bytes(acc: Metric) -> bytes:
    """The state in the library's versioned, checksummed format (what Spark and Ray ship)."""
    return dumps(acc)


def state_from_bytes(data: bytes) -> Metric:
    """Read back :func:`state_to_bytes` (validated as any file is)."""
    acc = loads(bytes(data), "shipped state")
    if type(acc).__name__ not in KINDS:
        raise ValueError(f"shipped state: expected a MetricSet or Sliced, got {type(acc).__name__}")
    return acc
