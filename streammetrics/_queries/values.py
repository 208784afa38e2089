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


def finite(x: np.ndarray, nan_ok: bool = False) -> bool:
    """Every entry finite (or NaN, with ``nan_ok``): untrusted stored numbers. O(x.size)."""
    ok = np.isfinite(x)
    return bool((ok | np.isnan(x)).all() if nan_ok else ok.all())


def check_values(values: Any, width: int, what: str, nan_ok: bool = False) -> np.ndarray:
    """Untrusted per-query values: a finite float matrix with ``width`` columns (NaN allowed
    with ``nan_ok``)."""
    if not isinstance(values, np.ndarray) or values.ndim != 2 or values.shape[1] != width \
            or values.dtype.kind != "f":
        raise ValueError(f"state: {what} 'values' must be a float array of shape (n, {width})")
    values = values.astype(np.float64)
    if values.size and not finite(values, nan_ok):
        raise ValueError(f"state: {what} 'values' holds non-finite numbers")
    return values


def write_query_sums(inner: State, specs: list[Any], count: int, sums: np.ndarray,
                     values: np.ndarray | None = None) -> None:
    """Load ``count`` queries whose value columns sum to ``sums`` (and, for ``per_query``
    specs, whose values are the rows of ``values``) into the wrapped query state. O(size of
    the arrays)."""
    arrays: dict[str, Any] = {}
    for spec, a, b in spec_layout(specs):
        arrays[f"{spec.name}.count"] = np.array([count], dtype=np.int64)
        arrays[f"{spec.name}.sums"] = sums[a:b].copy()
        if spec.per_query and values is not None:
            arrays[f"{spec.name}.values"] = values[:, a:b].copy()
    inner.load_arrays(arrays)
