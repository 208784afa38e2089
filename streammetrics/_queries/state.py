"""Running sums of retrieval measures over one stream of queries: :class:`QueryState`.

Every retrieval measure stores its (count, sums) here under its :class:`~streammetrics._queries.spec.Spec`;
measures with the same state key share one ``QueryState`` in a MetricSet, so a batch is validated
and ranked once (:func:`~streammetrics._queries.batch.check_batch`, in blocks of whole queries so
that a huge batch costs what small ones do) for all of them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.load_checks import MAX_SAMPLES
from streammetrics._core.state import State
from streammetrics._core.validation import first_bad

from . import kernels as query_kernels
from .batch import check_batch, drop_ignored, flatten_rows, ignore_index_of, reads_rows
from .spec import STORED_RTOL, Spec
from .values import finite

if TYPE_CHECKING:
    from typing import Unpack


def defined_mask(spec: Any) -> np.ndarray | None:
    """Which value columns of ``spec`` are undefined (NaN) for some queries and averaged over the
    queries where they are defined (a spec's ``defined_columns``, default None: none), as a
    bool array of the spec's width; None when no column is."""
    mask = getattr(spec, "defined_columns", None)
    return None if mask is None or not np.any(mask) else np.asarray(mask, dtype=bool)


def defined_sums(vals: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The column sums of per-query values ``vals`` (queries, width) and, with a ``mask`` of
    columns averaged over defined queries, how many queries define each column (the other
    columns: every query); NaN in a masked column is an undefined value, left out of its sum.
    O(vals.size)."""
    if mask is None:
        return vals.sum(axis=0), None
    undefined = np.isnan(vals) & mask
    defined = vals.shape[0] - undefined.sum(axis=0).astype(np.int64)
    return np.where(undefined, 0.0, vals).sum(axis=0), defined


class _Acc:
    """Running (count, sums) of one spec, plus the per-query values if asked for; for a spec
    with columns averaged over the queries where they are defined (:func:`defined_mask`), the
    number of queries that define each column (``defined``)."""

    __slots__ = ("count", "sums", "chunks", "defined")

    def __init__(self, spec: Spec) -> None:
        self.count = 0
        self.sums = np.zeros(spec.width)
        self.chunks: list[np.ndarray] | None = [] if spec.per_query else None
        mask = defined_mask(spec)
        self.defined: np.ndarray | None = None if mask is None else np.zeros(spec.width, np.int64)

    def means(self) -> np.ndarray:
        """Each column's mean over the queries that define it (NaN where none does)."""
        n = np.full(self.sums.shape, float(self.count)) if self.defined is None else 1.0 * self.defined
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, self.sums / np.maximum(n, 1.0), np.nan)

    def values(self) -> np.ndarray | None:
        if self.chunks is None:
            return None
        if len(self.chunks) != 1:
            width = self.sums.shape[0]
            merged = np.concatenate(self.chunks) if self.chunks else np.zeros((0, width))
            self.chunks = [merged]
        return self.chunks[0]


def _stack(parts: list[np.ndarray], width: int) -> np.ndarray:
    """Per-query values of the blocks, one (queries, width) matrix."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros((0, width))


class QueryState(State):
    """Running sums of any number of retrieval measure specs over one stream of queries.

    ``prepare`` validates and ranks the batch once and evaluates every spec; ``apply`` adds the
    per-spec (count, sums) -- and appends per-query values for specs with ``per_query``.
    Arrays: ``{spec}.count`` (int64, shape (1,)), ``{spec}.sums`` (float64, width), ``{spec}.values``
    (float64, (count, width), only with ``per_query``), ``{spec}.defined`` (int64, width, only
    for a spec with columns averaged over the queries that define them, :func:`defined_mask`:
    per column the queries whose value is not NaN, NaN values left out of the sums; the other
    columns hold ``count``). Merge rule: add counts, sums and defined counts, concatenate values.
    ``load_arrays`` refuses what no stream could store: values outside the measure's
    :meth:`Spec.value_range`, sums outside count (defined) times it, sums that are not the sum
    of the stored values (relative slack 1e-9 for rounding), defined counts above ``count`` or
    not those of the stored values.

    Parameters
    ----------
    specs : sequence of Spec
        The measure specs to hold from the start (a metric's own; a ``MetricSet`` adds the
        others of a shared state with ``add_spec``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> ms = sm.MetricSet(ap=sm.MAP(), rr=sm.MRR())
    >>> state = ms["ap"]._state  # one state for both members: each batch is ranked once
    >>> state is ms["rr"]._state, len(state.specs)
    (True, 2)
    """

    def __init__(self, specs: Sequence[Spec] = ()) -> None:
        self._acc: dict[Spec, _Acc] = {}
        for s in specs:
            self.add_spec(s)

    @property
    def specs(self) -> list[Spec]:
        return list(self._acc)

    def add_spec(self, spec: Spec, source: QueryState | None = None) -> None:
        """Register ``spec`` (copying its data from ``source`` if that holds it)."""
        if spec in self._acc:
            return
        if self._acc and reads_rows(spec) != self.raw_judged:  # their keys differ: never shared
            raise ValueError(f"{spec.name}: cannot share a query state with measures that take "
                             "another form of judged=")  # fmt: skip
        if self._acc and getattr(spec, "ignore_index", None) != ignore_index_of(self._acc):
            raise ValueError(f"{spec.name}: cannot share a query state with measures of another "
                             "ignore_index")
        acc = _Acc(spec)
        if source is not None and spec in source._acc:
            theirs = source._acc[spec]
            acc.count, acc.sums = theirs.count, theirs.sums.copy()
            acc.defined = None if theirs.defined is None else theirs.defined.copy()
            vals = theirs.values()
            if vals is not None:
                acc.chunks = [vals.copy()]
        self._acc[spec] = acc

    def acc(self, spec: Spec) -> _Acc:
        return self._acc[spec]

    @property
    def raw_judged(self) -> bool:
        """Whether the specs read judgment rows from ``judged`` (:func:`reads_rows`)."""
        return any(reads_rows(s) for s in self._acc)

    def key(self) -> Hashable:
        key = ("retrieval", "judgment-rows") if self.raw_judged else ("retrieval",)
        ignore = ignore_index_of(self._acc)
        return key if ignore is None else (*key, ("ignore_index", ignore))

    def is_empty(self) -> bool:
        return all(a.count == 0 for a in self._acc.values())

    def equals(self, other: State) -> bool:
        """Shareable: the same key and either both empty or holding identical data."""
        if not isinstance(other, QueryState):
            return False
        if self.is_empty() and other.is_empty():
            return True
        return super().equals(other)

    #: The keyword arguments ``prepare`` takes (a MetricSet passes only these to it).
    update_keywords = query_kernels.QUERY_OPTIONS

    def prepare(self, relevance: Any, scores: Any, **options: Unpack[query_kernels.QueryOptions]) -> Any:
        relevance, scores, options = flatten_rows(relevance, scores, options)
        relevance, scores, options = drop_ignored(relevance, scores, options, ignore_index_of(self._acc))
        batch = check_batch(relevance, scores, raw_judged=self.raw_judged, **options)
        specs = list(self._acc)
        masks = [defined_mask(spec) for spec in specs]
        sums = [np.zeros(spec.width) for spec in specs]
        counts = [0 for _ in specs]
        defined = [None if m is None else np.zeros(len(m), np.int64) for m in masks]
        kept: list[list[np.ndarray]] = [[] for _ in specs]
        for rq in batch.blocks():  # bounded temporaries; nothing is applied before the last
            for j, (spec, total, parts) in enumerate(zip(specs, sums, kept, strict=True)):
                # fewer rows than queries when empty ones are skipped (trec's specs: evaluate)
                vals = getattr(spec, "evaluate_kept", spec.evaluate)(rq)
                counts[j] += vals.shape[0]
                block, block_defined = defined_sums(vals, masks[j])
                total += block
                if block_defined is not None:
                    defined[j] += block_defined  # type: ignore[operator]
                if spec.per_query:
                    parts.append(vals)
        return [
            (spec, n, total, _stack(parts, spec.width) if spec.per_query else None, d)
            for spec, n, total, parts, d in zip(specs, counts, sums, kept, defined, strict=True)
        ]

    def apply(self, delta: Any) -> None:
        for spec, n, sums, vals, defined in delta:
            acc = self._acc.get(spec)
            if acc is None:
                continue
            acc.count += n
            acc.sums += sums
            if acc.defined is not None and defined is not None:
                acc.defined += defined
            if acc.chunks is not None and vals is not None and n:
                acc.chunks.append(vals)

    def arrays(self, specs: Sequence[Spec] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for spec in self._acc if specs is None else specs:
            acc = self._acc[spec]
            out[f"{spec.name}.count"] = np.array([acc.count], dtype=np.int64)
            out[f"{spec.name}.sums"] = acc.sums.copy()
            if acc.defined is not None:
                out[f"{spec.name}.defined"] = acc.defined.copy()
            vals = acc.values()
            if vals is not None:
                out[f"{spec.name}.values"] = vals.copy()
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        new: dict[Spec, _Acc] = {}
        expected: set[str] = set()
        for spec in self._acc:
            acc = _Acc(spec)
            name = spec.name
            mask = defined_mask(spec)
            suffixes = ("count", "sums") + (("defined",) if mask is not None else ()) + (
                ("values",) if spec.per_query else ())
            for suffix in suffixes:
                expected.add(f"{name}.{suffix}")
                if f"{name}.{suffix}" not in arrays:
                    raise ValueError(f"state: missing array {name}.{suffix!s}")
            count = np.asarray(arrays[f"{name}.count"])
            if (
                count.shape != (1,)
                or count.dtype.kind not in "iuf"
                or not np.isfinite(count)
                or count < 0
                or count != np.floor(count)
                or count > MAX_SAMPLES
            ):
                raise ValueError(f"state: {name}.count must hold one non-negative integer (at most 2**53)")
            sums = np.asarray(arrays[f"{name}.sums"])
            if sums.shape != (spec.width,) or sums.dtype.kind not in "fiu":
                raise ValueError(f"state: {name}.sums must be {spec.width} numbers, got shape {sums.shape}")
            sums = sums.astype(np.float64)
            nan_ok = bool(getattr(spec, "allows_nan", False))  # (trec_eval's 0/0 values)
            if not finite(sums, nan_ok) or (mask is not None and not np.isfinite(sums[mask]).all()):
                raise ValueError(f"state: {name}.sums holds non-finite values")
            if count[0] == 0 and sums.any():  # (before check_block: inf * 0 for unbounded gains)
                nz = int(np.flatnonzero(sums)[0])
                raise ValueError(f"state: {name}.sums[{nz}] = {float(sums[nz])!r} is outside the range "
                                 f"of 0 queries ({name}.count is 0)")
            spec.check_block(sums, float(count[0]), f"{name}.sums")
            acc.count, acc.sums = int(count[0]), sums
            if mask is not None:
                acc.defined = _load_defined(spec, mask, arrays[f"{name}.defined"], acc.count, sums)
            if spec.per_query:
                vals = np.asarray(arrays[f"{name}.values"])
                if vals.shape != (int(count[0]), spec.width) or vals.dtype.kind != "f":
                    raise ValueError(
                        f"state: {name}.values must have shape ({int(count[0])}, {spec.width}), "
                        f"got {vals.shape}"
                    )
                vals = vals.astype(np.float64)
                nan_cols = nan_ok if mask is None else mask | nan_ok  # where NaN may be stored
                if not (np.isfinite(vals) | (np.isnan(vals) & nan_cols)).all():
                    raise ValueError(f"state: {name}.values holds non-finite values")
                spec.check_block(vals, None, f"{name}.values", STORED_RTOL / 2)
                total, defined = defined_sums(vals, mask)
                if defined is not None and acc.defined is not None and (defined != acc.defined).any():
                    j = first_bad(defined != acc.defined)
                    raise ValueError(f"state: {name}.defined[{j}] = {int(acc.defined[j])} is not the number "
                                     f"of defined values in {name}.values ({int(defined[j])})")  # fmt: skip
                magnitude = np.where(np.isnan(vals), 0.0, np.abs(vals)).sum(axis=0)
                off = np.abs(sums - total) > STORED_RTOL * (magnitude + 1.0)
                if off.any():
                    j = first_bad(off)
                    raise ValueError(
                        f"state: {name}.sums[{j}] = {float(sums[j])!r} is not the sum of "
                        f"{name}.values ({float(total[j])!r})"
                    )
                acc.chunks = [vals]
            new[spec] = acc
        extra = set(arrays) - expected
        if extra:
            raise ValueError(f"state: unexpected arrays {sorted(extra)}")
        self._acc = new

    def merge(self, other: State) -> None:
        assert isinstance(other, QueryState)
        for spec, acc in self._acc.items():
            theirs = other._acc.get(spec)
            if theirs is None:
                continue
            acc.count += theirs.count
            acc.sums += theirs.sums
            if acc.defined is not None and theirs.defined is not None:
                acc.defined += theirs.defined
            vals = theirs.values()
            if acc.chunks is not None and vals is not None and vals.shape[0]:
                acc.chunks.append(vals.copy())

    def reset(self) -> None:
        self._acc = {spec: _Acc(spec) for spec in self._acc}

    @property
    def nbytes(self) -> int:
        total = 0
        for acc in self._acc.values():
            total += 8 + acc.sums.nbytes + (0 if acc.defined is None else acc.defined.nbytes)
            if acc.chunks is not None:
                total += sum(c.nbytes for c in acc.chunks)
        return total

    def load_spec(self, spec: Spec, arrays: Mapping[str, Any]) -> None:
        """Replace the data of ``spec`` (registering it if new) by ``arrays``, which hold that
        spec's arrays only, checked as :meth:`load_arrays` checks them; refused arrays change
        nothing. O(size of the arrays)."""
        fresh = QueryState([spec])
        fresh.load_arrays(arrays)
        self._acc[spec] = fresh._acc[spec]


def _load_defined(spec: Spec, mask: np.ndarray, stored: Any, count: int, sums: np.ndarray) -> np.ndarray:
    """Untrusted per-column counts of defined queries: whole numbers in ``[0, count]``, ``count``
    in the columns every query defines, and each masked column's sum within its defined queries
    times the column's range. ValueError naming the first offending entry. O(width)."""
    name = spec.name
    d = np.asarray(stored)
    if d.shape != (spec.width,) or d.dtype.kind not in "iuf":
        raise ValueError(f"state: {name}.defined must be {spec.width} counts, got shape {d.shape}")
    bad = ~np.isfinite(d) | (d < 0) | (d > count) | (d != np.floor(d)) | (~mask & (d != count))
    if bad.any():
        j = first_bad(bad)
        raise ValueError(f"state: {name}.defined[{j}] = {d[j].item()!r} is not a count of queries defining "
                         f"{'a value' if mask[j] else 'every value'} of {count} queries")  # fmt: skip
    d = d.astype(np.int64)
    lo, hi = spec.value_range()
    with np.errstate(invalid="ignore"):
        tol = STORED_RTOL * np.maximum(np.where(np.isfinite(hi), hi, 0.0), 1.0) * np.maximum(d, 1)
        out = mask & ((sums < np.where(np.isfinite(lo), lo * d, -np.inf) - tol)
                      | (sums > np.where(np.isfinite(hi), hi * d, np.inf) + tol))
    if out.any():
        j = first_bad(out)
        raise ValueError(f"state: {name}.sums[{j}] = {float(sums[j])!r} is outside the range of "
                         f"{int(d[j])} defined queries")  # fmt: skip
    return d
