"""Per-query values of the retrieval measures, as the query wrappers keep them.

``Window`` and ``Decayed`` over a retrieval measure (``NDCG``, ``MAP``, ``MRR``, ...) do not keep
documents: they keep every query's per-query values -- a ``(queries, width)`` float64 matrix,
the columns of each wrapped measure's spec side by side (:func:`spec_layout`) -- computed once
when the batch arrives (:func:`query_values`), and before a read they write a count and column
sums into the wrapped :class:`~streammetrics.retrieval.metrics.QueryState` (:func:`write_query_sums`),
whose own ``compute`` then gives the mean.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from streammetrics._core.state import State

from .batch import check_batch, drop_ignored, flatten_rows, ignore_index_of, reads_rows
from .kernels import QUERY_OPTIONS, QueryOptions

if TYPE_CHECKING:
    from typing import Unpack


class TimedQueryOptions(QueryOptions, total=False):
    """The keyword arguments of a query wrapper's ``update``: the :class:`QueryOptions` of the
    wrapped retrieval measure and ``timestamp`` (one per query, for time-based wrappers).

    Attributes
    ----------
    timestamp : float or array-like, optional
        The queries' timestamps (default: the wrapper's clock).
    """

    timestamp: Any


#: The names of :class:`TimedQueryOptions`.
TIMED_QUERY_OPTIONS: frozenset[str] = QUERY_OPTIONS | {"timestamp"}


def split_timestamp(options: TimedQueryOptions) -> tuple[Any, QueryOptions]:
    """``(timestamp or None, the other options)`` of a query wrapper's ``update``. O(1)."""
    rest = dict(options)
    return rest.pop("timestamp", None), cast(QueryOptions, rest)


def query_values(specs: list[Any], relevance: Any, scores: Any,
                 **options: Unpack[QueryOptions]) -> np.ndarray:
    """Every query's values of every spec, (queries, total width): the batch validated and
    ranked once, in blocks of whole queries (:func:`~streammetrics._queries.batch.check_batch`)."""
    skipping = [spec.name for spec in specs if getattr(spec, "empty", None) == "skip"]
    if skipping:  # the values matrix keeps one row per query for every spec
        raise ValueError(f"empty_target_action: 'skip' ({skipping[0]}) is not supported by a query "
                         "wrapper (one row per query); use 'neg' or 'pos'")
    raw = any(reads_rows(spec) for spec in specs)
    relevance, scores, options = flatten_rows(relevance, scores, options)
    relevance, scores, options = drop_ignored(relevance, scores, options, ignore_index_of(specs))
    batch = check_batch(relevance, scores, raw_judged=raw, **options)
    out = []
    for rq in batch.blocks():
        cols = [np.asarray(getattr(spec, "evaluate_kept", spec.evaluate)(rq),  # (trec's: evaluate)
                           dtype=np.float64).reshape(rq.n_queries, spec.width) for spec in specs]
        out.append(np.hstack(cols) if cols else np.zeros((rq.n_queries, 0)))
    return np.ascontiguousarray(np.vstack(out))


def spec_layout(specs: list[Any]) -> list[tuple[Any, int, int]]:
    """(spec, first column, end column) of every spec in a values matrix."""
    out, at = [], 0
    for spec in specs:
        out.append((spec, at, at + spec.width))
        at += spec.width
    return out


def allows_nan(specs: list[Any]) -> bool:
    """Whether a query value of any of ``specs`` may be NaN (a spec's ``allows_nan``, default
    False: trec_eval's 0/0 of ``iprec_at_recall`` for a query ``-J`` leaves without documents)."""
    return any(getattr(spec, "allows_nan", False) for spec in specs)


def nan_columns(specs: list[Any]) -> np.ndarray:
    """Which columns of a values matrix of ``specs`` (:func:`spec_layout`) may hold NaN: those
    of a spec with ``allows_nan`` and those averaged over the queries that define them (an
    undefined value, ``Accuracy@k`` of ``streammetrics.trec``). Bool, (total width,)."""
    out = [np.full(spec.width, bool(getattr(spec, "allows_nan", False))) for spec in specs]
    for cols, spec in zip(out, specs, strict=True):
        mask = getattr(spec, "defined_columns", None)
        if mask is not None:
            cols |= np.asarray(mask, dtype=bool)
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def defined_columns(specs: list[Any]) -> np.ndarray | None:
    """Which columns of a values matrix of ``specs`` are averaged over the queries that define
    them (a spec's ``defined_columns``); None when none is. Bool, (total width,)."""
    parts = [np.zeros(spec.width, dtype=bool) if getattr(spec, "defined_columns", None) is None
             else np.asarray(spec.defined_columns, dtype=bool) for spec in specs]
    mask = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
    return mask if mask.any() else None


def finite(x: np.ndarray, nan_ok: bool | np.ndarray = False) -> bool:
    """Every entry finite (or NaN, with ``nan_ok``; an array: in the columns it marks):
    untrusted stored numbers. O(x.size)."""
    ok = np.isfinite(x)
    if isinstance(nan_ok, np.ndarray):
        return bool((ok | (np.isnan(x) & nan_ok)).all())
    return bool((ok | np.isnan(x)).all() if nan_ok else ok.all())


def check_values(values: Any, width: int, what: str, nan_ok: bool | np.ndarray = False) -> np.ndarray:
    """Untrusted per-query values: a finite float matrix with ``width`` columns (NaN allowed
    with ``nan_ok``; an array: in the columns it marks)."""
    if not isinstance(values, np.ndarray) or values.ndim != 2 or values.shape[1] != width \
            or values.dtype.kind != "f":
        raise ValueError(f"state: {what} 'values' must be a float array of shape (n, {width})")
    values = values.astype(np.float64)
    if values.size and not finite(values, nan_ok):
        raise ValueError(f"state: {what} 'values' holds non-finite numbers")
    return values


def write_query_sums(inner: State, specs: list[Any], count: int, sums: np.ndarray,
                     values: np.ndarray | None = None, defined: np.ndarray | None = None) -> None:
    """Load ``count`` queries whose value columns sum to ``sums`` (and, for ``per_query``
    specs, whose values are the rows of ``values``) into the wrapped query state. Columns
    averaged over the queries that define them take their counts from ``defined`` (total
    width), else from ``values`` (NaN: undefined, left out of their sums). O(size of the
    arrays)."""
    arrays: dict[str, Any] = {}
    for spec, a, b in spec_layout(specs):
        arrays[f"{spec.name}.count"] = np.array([count], dtype=np.int64)
        arrays[f"{spec.name}.sums"] = sums[a:b].copy()
        mask = getattr(spec, "defined_columns", None)
        if mask is not None and np.any(mask):  # columns averaged over the queries defining them
            if defined is not None:
                arrays[f"{spec.name}.defined"] = defined[a:b].copy()
            else:
                assert values is not None
                undefined = np.isnan(values[:, a:b]) & np.asarray(mask, dtype=bool)
                arrays[f"{spec.name}.defined"] = count - undefined.sum(axis=0).astype(np.int64)
                arrays[f"{spec.name}.sums"] = np.where(undefined, 0.0, values[:, a:b]).sum(axis=0)
        if spec.per_query and values is not None:
            arrays[f"{spec.name}.values"] = values[:, a:b].copy()
    inner.load_arrays(arrays)
