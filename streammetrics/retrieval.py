"""Retrieval measures over a stream of queries (SPEC section 4), equal to trec_eval.

Each query is folded in as it arrives -- one query per ``update``, or many per call with
``query_ids=`` -- and only running sums are kept, so memory is constant in the number of queries
(unless ``per_query=True`` asks to keep every query's value).

``update(relevance, scores, *, doc_ids=None, judged=None, n_relevant=None, query_ids=None)``:
``relevance`` are the grades of the retrieved documents (unjudged = 0), ``scores`` the system's
scores (ranked descending), ``doc_ids`` break score ties as trec_eval does (document id descending,
as strings; without ids tied documents keep their input order), ``judged`` the grades of all
judged documents of the query (gives R and the ideal ranking of nDCG), ``n_relevant`` the number R
of relevant documents. With ``query_ids`` the arrays hold many queries (each query's rows
contiguous) and ``judged`` / ``n_relevant`` are mappings from query id (or sequences with one entry
per query in order of appearance). R comes from ``n_relevant``, else ``judged``, else the relevant
retrieved documents. An update with an empty retrieved list is a query scoring 0.

Design -- one ranking per batch for a whole MetricSet: every retrieval measure stores its running
sums in a :class:`QueryState` under a *measure spec* (kind and options). All retrieval metrics
have the same state key, so a :class:`~streammetrics.MetricSet` of NDCG@10, MAP and MRR makes them
share one ``QueryState`` holding the three specs: the batch is validated and ranked once
(:func:`~streammetrics._ranking_queries.prepare_queries`, the expensive part) and each spec adds
O(n) vectorised work. Each spec keeps its own (count, sums), so the state stays O(1) per measure
and every member reads only its own spec. (When a metric is put into a set, its spec is registered
in the shared state; states that already hold data are only shared if they hold identical data.)

Complexity: ``update`` O(n log L) for n rows of queries with L documents, plus O(n) per measure;
``compute`` O(1); memory O(1) per measure (O(queries) with ``per_query=True``). Everything is exact
(float64 sums; streaming, batching and merging agree with a one-shot evaluation to rounding).

Example -- streaming one query, then two more in one call, equals one call with all three::

    >>> import streammetrics as sm
    >>> ms = sm.MetricSet(ndcg=sm.NDCG(10), ap=sm.MAP(), rr=sm.MRR())
    >>> _ = ms.update([2, 0, 1], [0.9, 0.5, 0.1])
    >>> _ = ms.update([0, 1, 1, 0], [0.3, 0.2, 0.8, 0.1], query_ids=["a", "a", "b", "b"])
    >>> {k: round(v, 4) for k, v in ms.compute().items()}
    {'ndcg': 0.8604, 'ap': 0.7778, 'rr': 0.8333}
    >>> one = sm.MetricSet(ndcg=sm.NDCG(10), ap=sm.MAP(), rr=sm.MRR())
    >>> _ = one.update([2, 0, 1, 0, 1, 1, 0], [0.9, 0.5, 0.1, 0.3, 0.2, 0.8, 0.1],
    ...                query_ids=[0, 0, 0, 1, 1, 2, 2])
    >>> one.compute() == ms.compute()
    True
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from . import _ranking_queries as K
from ._base import Metric, UndefinedMetricWarning
from ._load_checks import MAX_SAMPLES
from ._state import State
from ._validation import first_bad
from ._warnings import warn

__all__ = [
    "QueryState",
    "RetrievalMetric",
    "PrecisionAtK",
    "RecallAtK",
    "RPrecision",
    "PrecisionAtRecall",
    "MAP",
    "MRR",
    "CG",
    "DCG",
    "NDCG",
    "InterpolatedPrecision",
    "ElevenPointAP",
    "SystemEfficiency",
    "SetPrecision",
    "SetRecall",
]

ELEVEN_POINTS = tuple(round(i / 10, 1) for i in range(11))
_RTOL = 1e-9  # relative slack of the stored-range checks (float rounding of sums)


@dataclass(frozen=True)
class Spec:
    """One measure's identity inside a :class:`QueryState` (what is summed per query)."""

    kind: str
    k: int | None = None
    rel_level: float = 1.0
    gain: str = "linear"
    ties: str = "first"
    denominator: str = "R"
    levels: tuple[float, ...] = ()
    rel_max: float | None = None
    interpolation: str | None = None
    per_query: bool = False

    @property
    def width(self) -> int:
        if self.kind == "set":
            return 5
        if self.kind == "iprec":
            return len(self.levels)
        return 1

    @property
    def name(self) -> str:
        d = {k: v for k, v in asdict(self).items() if v not in (None, (), False) and k != "kind"}
        body = ",".join(f"{k}={v}" for k, v in d.items())
        return f"{self.kind}({body})"

    def value_range(self) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) possible per-query value of every column, each shape (width,).

        Fractions (P@k, R@k, R-precision, precision at recall, AP, RR, nDCG, interpolated
        precision, system efficiency, set precision/recall) lie in [0, 1]; gains are >= 0 (CG is
        at most k * rel_max when normalised, whose grades above rel_max are refused; DCG with
        linear or exponential gains is unbounded); set counts are >= 0. No measure is undefined
        (nan) for a query: empty denominators give 0.
        """
        lo = np.zeros(self.width)
        if self.kind == "set":
            return lo, np.array([1.0, 1.0, np.inf, np.inf, np.inf])
        if self.kind == "dcg":
            return lo, np.full(self.width, np.inf)
        if self.kind == "cg":
            assert self.k is not None
            top = np.inf if self.rel_max is None else self.k * max(self.rel_max, 0.0)
            return lo, np.full(self.width, top)
        return lo, np.ones(self.width)

    def check_block(self, x: np.ndarray, total: float | None, what: str, rtol: float = _RTOL) -> None:
        """Refuse untrusted stored numbers no stream of queries could have produced.

        ``total=None``: ``x`` are per-query values, shape (n, width), each within
        :meth:`value_range`. Otherwise ``x`` are sums over queries of total weight ``total`` (the
        query count, or a decayed mass), within ``total`` times the range. ``rtol`` (relative to
        the bound, at least 1) absorbs float rounding. Set measures also need relevant retrieved
        <= retrieved and <= relevant, and per query whole counts. ValueError names ``what`` and
        the first offending index and value. O(x.size).
        """
        lo, hi = self.value_range()
        scale = 1.0 if total is None else float(total)
        finite_hi = np.where(np.isfinite(hi), hi, 0.0)
        tol = rtol * np.maximum(finite_hi, 1.0) * max(scale, 1.0)
        bad = (x < lo * scale - tol) | (x > hi * scale + tol)
        if bad.any():
            idx = first_bad(bad)
            col = idx if isinstance(idx, int) else idx[-1]
            raise ValueError(
                f"state: {what}[{idx}] = {float(x[idx])!r} is outside the range of {self.name} "
                f"([{float(lo[col] * scale)!r}, {float(hi[col] * scale)!r}] for weight {scale!r})"
            )
        if self.kind != "set" or x.shape[-1] != 5:
            return
        hits, ret, rel = x[..., 2], x[..., 3], x[..., 4]
        slack = rtol * np.maximum(np.maximum(ret, rel), 1.0)
        bad = (hits > ret + slack) | (hits > rel + slack)
        if total is None:
            bad |= (x[:, 2:] != np.floor(x[:, 2:])).any(axis=1)
        if np.any(bad):
            if total is None:
                i = first_bad(bad)
                where, shown = f"{what}[{i}]", x[i].tolist()
            else:
                where, shown = what, x.tolist()
            raise ValueError(
                f"state: {where} = {shown}: set counts need whole numbers with relevant "
                "retrieved <= retrieved and <= relevant"
            )

    def evaluate(self, rq: K.RankedQueries) -> np.ndarray:
        """Per-query values, shape (queries, width); a value beyond ``K.MAX_QUERY_VALUE`` (a
        large exponential gain) or not finite is a ValueError."""
        with np.errstate(over="ignore", invalid="ignore"):
            v = self._evaluate(rq)
        if not (np.abs(v) <= K.MAX_QUERY_VALUE).all():  # NaN too
            q = first_bad(~(np.abs(v) <= K.MAX_QUERY_VALUE).all(axis=1))
            assert isinstance(q, int)
            raise ValueError(f"relevance: {self.name} of query {q} is beyond 2**256, the bound "
                             "that keeps sums over queries finite (grades too large)")
        return v

    def _evaluate(self, rq: K.RankedQueries) -> np.ndarray:
        kind = self.kind
        if kind == "p":
            assert self.k is not None
            v = K.precision_at_k(rq, self.k, self.rel_level, self.ties)
        elif kind == "r":
            assert self.k is not None
            v = K.recall_at_k(rq, self.k, self.rel_level, self.ties)
        elif kind == "rprec":
            v = K.r_precision(rq, self.rel_level, self.ties)
        elif kind == "p_at_r":
            v = K.precision_at_recall(rq, self.levels[0], self.rel_level)
        elif kind == "ap":
            v = K.average_precision(rq, self.k, self.rel_level, self.denominator)
        elif kind == "rr":
            v = K.reciprocal_rank(rq, self.k, self.rel_level)
        elif kind == "cg":
            assert self.k is not None
            if self.rel_max is not None:
                for g in rq.groups:
                    if g.grades.size and g.grades.max() > self.rel_max:
                        raise ValueError(
                            f"relevance: grade {g.grades.max()!r} exceeds rel_max={self.rel_max}"
                        )
            v = K.cumulative_gain(rq, self.k, self.ties)
        elif kind == "dcg":
            v = K.dcg(rq, self.k, self.gain, self.ties)
        elif kind == "ndcg":
            v = K.ndcg(rq, self.k, self.gain, self.ties)
        elif kind == "iprec":
            return K.interpolated_precision(rq, self.levels, self.rel_level, self.interpolation or "textbook")
        elif kind == "eff":
            v = K.system_efficiency(rq, self.rel_level)
        elif kind == "set":
            return K.set_counts(rq, self.rel_level)
        else:  # pragma: no cover - specs are built by the classes below
            raise AssertionError(kind)
        return v[:, None]


class _Acc:
    """Running (count, sums) of one spec, plus the per-query values if asked for."""

    __slots__ = ("count", "sums", "chunks")

    def __init__(self, spec: Spec) -> None:
        self.count = 0
        self.sums = np.zeros(spec.width)
        self.chunks: list[np.ndarray] | None = [] if spec.per_query else None

    def values(self) -> np.ndarray | None:
        if self.chunks is None:
            return None
        if len(self.chunks) != 1:
            width = self.sums.shape[0]
            merged = np.concatenate(self.chunks) if self.chunks else np.zeros((0, width))
            self.chunks = [merged]
        return self.chunks[0]


class QueryState(State):
    """Running sums of any number of retrieval measure specs over one stream of queries.

    ``prepare`` validates and ranks the batch once and evaluates every spec; ``apply`` adds the
    per-spec (count, sums) -- and appends per-query values for specs with ``per_query``.
    Arrays: ``{spec}.count`` (int64, shape (1,)), ``{spec}.sums`` (float64, width), ``{spec}.values``
    (float64, (count, width), only with ``per_query``). Merge rule: add counts and sums,
    concatenate values. ``load_arrays`` refuses what no stream could store: values outside the
    measure's :meth:`Spec.value_range`, sums outside count times it, sums that are not the sum
    of the stored values (relative slack 1e-9 for rounding).
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
        acc = _Acc(spec)
        if source is not None and spec in source._acc:
            theirs = source._acc[spec]
            acc.count, acc.sums = theirs.count, theirs.sums.copy()
            vals = theirs.values()
            if vals is not None:
                acc.chunks = [vals.copy()]
        self._acc[spec] = acc

    def acc(self, spec: Spec) -> _Acc:
        return self._acc[spec]

    def key(self) -> Hashable:
        return ("retrieval",)

    def is_empty(self) -> bool:
        return all(a.count == 0 for a in self._acc.values())

    def equals(self, other: State) -> bool:
        """Shareable: the same key and either both empty or holding identical data."""
        if not isinstance(other, QueryState):
            return False
        if self.is_empty() and other.is_empty():
            return True
        return super().equals(other)

    def prepare(
        self,
        relevance: Any,
        scores: Any,
        *,
        doc_ids: Any = None,
        judged: Any = None,
        n_relevant: Any = None,
        query_ids: Any = None,
    ) -> Any:
        rq = K.prepare_queries(
            relevance, scores, doc_ids=doc_ids, judged=judged, n_relevant=n_relevant, query_ids=query_ids
        )
        out = []
        for spec in self._acc:
            vals = spec.evaluate(rq)
            out.append((spec, rq.n_queries, vals.sum(axis=0), vals if spec.per_query else None))
        return out

    def apply(self, delta: Any) -> None:
        for spec, n, sums, vals in delta:
            acc = self._acc.get(spec)
            if acc is None:
                continue
            acc.count += n
            acc.sums += sums
            if acc.chunks is not None and vals is not None and n:
                acc.chunks.append(vals)

    def arrays(self, specs: Sequence[Spec] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for spec in self._acc if specs is None else specs:
            acc = self._acc[spec]
            out[f"{spec.name}.count"] = np.array([acc.count], dtype=np.int64)
            out[f"{spec.name}.sums"] = acc.sums.copy()
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
            for suffix in ("count", "sums") + (("values",) if spec.per_query else ()):
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
            if not np.isfinite(sums).all():
                raise ValueError(f"state: {name}.sums holds non-finite values")
            if count[0] == 0 and sums.any():  # (before check_block: inf * 0 for unbounded gains)
                nz = int(np.flatnonzero(sums)[0])
                raise ValueError(f"state: {name}.sums[{nz}] = {float(sums[nz])!r} is outside the range "
                                 f"of 0 queries ({name}.count is 0)")
            spec.check_block(sums, float(count[0]), f"{name}.sums")
            acc.count, acc.sums = int(count[0]), sums
            if spec.per_query:
                vals = np.asarray(arrays[f"{name}.values"])
                if vals.shape != (int(count[0]), spec.width) or vals.dtype.kind != "f":
                    raise ValueError(
                        f"state: {name}.values must have shape ({int(count[0])}, {spec.width}), "
                        f"got {vals.shape}"
                    )
                if not np.isfinite(vals).all():
                    raise ValueError(f"state: {name}.values holds non-finite values")
                vals = vals.astype(np.float64)
                spec.check_block(vals, None, f"{name}.values", _RTOL / 2)
                total = vals.sum(axis=0)
                off = np.abs(sums - total) > _RTOL * (np.abs(vals).sum(axis=0) + 1.0)
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
            vals = theirs.values()
            if acc.chunks is not None and vals is not None and vals.shape[0]:
                acc.chunks.append(vals.copy())

    def reset(self) -> None:
        self._acc = {spec: _Acc(spec) for spec in self._acc}

    @property
    def nbytes(self) -> int:
        total = 0
        for acc in self._acc.values():
            total += 8 + acc.sums.nbytes
            if acc.chunks is not None:
                total += sum(c.nbytes for c in acc.chunks)
        return total


# -- argument checks ---------------------------------------------------------------------------


def _check_k(k: Any, name: str = "k", optional: bool = False) -> int | None:
    if k is None and optional:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{name}: expected a positive integer{' or None' if optional else ''}, got {k!r}")
    return int(k)


def _check_level(x: Any, name: str) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {x!r}") from None
    if not np.isfinite(f):
        raise ValueError(f"{name}: expected a finite number, got {x!r}")
    return f


def _check_fraction(x: Any, name: str) -> float:
    f = _check_level(x, name)
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"{name}: expected a recall level in [0, 1], got {x!r}")
    return f


def _check_choice(x: Any, name: str, choices: tuple[str, ...]) -> str:
    if x not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, got {x!r}")
    return str(x)


def _check_ties(ties: Any, linear: bool) -> str:
    ties = _check_choice(ties, "ties", ("first", "average"))
    if ties == "average" and not linear:
        raise ValueError(
            "ties: 'average' (tie-averaged gains) is exact only for measures linear in the gains "
            "(P@k, R@k, R-precision, CG, DCG, nDCG); use ties='first'"
        )
    return ties


def _plain(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


class RetrievalMetric(Metric):
    """Base of the retrieval family: one spec in a (possibly shared) :class:`QueryState`.

    ``compute()`` is the mean over queries (nan with ``UndefinedMetricWarning`` before any query);
    ``per_query_values()`` returns every query's value in update order when ``per_query=True``.

    Complexity: ``update`` O(n log L) for n rows (queries of L documents), vectorised over the
    batch; ``compute`` O(1); memory O(1) -- a count and the per-query sums -- unless
    ``per_query=True`` (then 8 bytes per query and value).
    """

    family = "retrieval"
    _spec: Spec

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self._spec = spec
        self._state = QueryState([spec])

    # ``_state`` is a property so that a MetricSet assigning a shared state registers this spec.
    @property  # type: ignore[override]
    def _state(self) -> QueryState:
        return self.__dict__["_qstate"]  # type: ignore[no-any-return]

    @_state.setter
    def _state(self, state: State) -> None:
        assert isinstance(state, QueryState)
        state.add_spec(self._spec, self.__dict__.get("_qstate"))
        self.__dict__["_qstate"] = state

    def update(  # type: ignore[override]
        self,
        relevance: Any,
        scores: Any,
        *,
        doc_ids: Any = None,
        judged: Any = None,
        n_relevant: Any = None,
        query_ids: Any = None,
    ) -> RetrievalMetric:
        """Fold in one query (or many with ``query_ids``); atomic; returns ``self``.

        Cost O(n log L) for n rows (queries of L documents), no Python loop per document.
        """
        return self._update_state(
            relevance, scores, doc_ids=doc_ids, judged=judged, n_relevant=n_relevant, query_ids=query_ids
        )

    def _state_arrays(self) -> dict[str, Any]:
        return self._state.arrays([self._spec])

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        fresh = QueryState([self._spec])
        fresh.load_arrays(arrays)
        self._state.add_spec(self._spec)
        self._state._acc[self._spec] = fresh._acc[self._spec]

    @property
    def nbytes(self) -> int:
        """Bytes held by this measure's sums (and per-query values)."""
        with self._lock:
            acc = self._state.acc(self._spec)
            return 8 + acc.sums.nbytes + sum(c.nbytes for c in (acc.chunks or []))

    def _mean(self) -> np.ndarray:
        acc = self._state.acc(self._spec)
        if acc.count == 0:
            warn(
                f"{type(self).__name__}: no queries seen; the mean is undefined (nan)",
                UndefinedMetricWarning,
            )
            return np.full(acc.sums.shape, np.nan)
        return acc.sums / acc.count

    def _compute(self) -> Any:
        return float(self._mean()[0])

    @property
    def n_queries(self) -> int:
        """Number of queries folded in."""
        with self._lock:
            return self._state.acc(self._spec).count

    def per_query_values(self) -> np.ndarray:
        """Every query's value in update order (needs ``per_query=True``). O(queries)."""
        if not self._spec.per_query:
            raise ValueError(f"{type(self).__name__}: per-query values are kept only with per_query=True")
        with self._lock:
            vals = self._state.acc(self._spec).values()
            assert vals is not None
            return self._per_query(vals.copy())

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, 0]


class _AtK(RetrievalMetric):
    """A count of relevant documents in the top k, divided per ``_kind`` (P@k by k, R@k by R)."""

    _kind = ""

    def __init__(self, k: int, *, rel_level: float = 1, ties: str = "first", per_query: bool = False) -> None:
        self.k, self.rel_level = _check_k(k), _check_level(rel_level, "rel_level")
        self.ties, self.per_query = _check_ties(ties, True), bool(per_query)
        super().__init__(
            Spec(self._kind, k=self.k, rel_level=self.rel_level, ties=self.ties, per_query=self.per_query)
        )

    def _config(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "rel_level": _plain(self.rel_level),
            "ties": self.ties,
            "per_query": self.per_query,
        }


class PrecisionAtK(_AtK):
    """P@k = (relevant documents in the top k) / k; ranks past the list's end are non-relevant.

    trec_eval ``P_k``. With ``ties="average"``: the expected P@k over orders of tied documents.
    """

    _kind = "p"


class RecallAtK(_AtK):
    """R@k = (relevant documents in the top k) / R (0 when R = 0). trec_eval ``recall_k``."""

    _kind = "r"


class RPrecision(RetrievalMetric):
    """R-precision = (relevant documents in the top R) / R, divided by R even when fewer than R
    were retrieved; 0 when R = 0. trec_eval ``Rprec``."""

    def __init__(self, *, rel_level: float = 1, ties: str = "first", per_query: bool = False) -> None:
        self.rel_level = _check_level(rel_level, "rel_level")
        self.ties, self.per_query = _check_ties(ties, True), bool(per_query)
        super().__init__(Spec("rprec", rel_level=self.rel_level, ties=self.ties, per_query=self.per_query))

    def _config(self) -> dict[str, Any]:
        return {"rel_level": _plain(self.rel_level), "ties": self.ties, "per_query": self.per_query}


class PrecisionAtRecall(RetrievalMetric):
    """Precision at the first rank where recall reaches ``r`` (Weber); 0 if it never does or R = 0."""

    def __init__(self, r: float, *, rel_level: float = 1, per_query: bool = False) -> None:
        self.r, self.rel_level = _check_fraction(r, "r"), _check_level(rel_level, "rel_level")
        self.per_query = bool(per_query)
        super().__init__(Spec("p_at_r", levels=(self.r,), rel_level=self.rel_level, per_query=self.per_query))

    def _config(self) -> dict[str, Any]:
        return {"r": self.r, "rel_level": _plain(self.rel_level), "per_query": self.per_query}


class MAP(RetrievalMetric):
    """Mean average precision. Per query AP = (1/R) Σ_{relevant retrieved d} P(rank(d)) (trec_eval
    ``map``; unretrieved relevant documents add 0, R = 0 gives 0).

    With ``k``: AP@k = Σ_{i≤k} P(i)·rel(i) / min(k, R) (the seeds' definition, default
    ``denominator="min_k_r"``); ``denominator="R"`` divides by R (trec_eval ``map_cut_k``).
    """

    def __init__(
        self,
        k: int | None = None,
        *,
        denominator: str = "min_k_r",
        rel_level: float = 1,
        ties: str = "first",
        per_query: bool = False,
    ) -> None:
        self.k = _check_k(k, optional=True)
        self.denominator = _check_choice(denominator, "denominator", ("min_k_r", "R"))
        self.rel_level, self.ties = _check_level(rel_level, "rel_level"), _check_ties(ties, False)
        self.per_query = bool(per_query)
        denom = "R" if self.k is None else self.denominator  # identical without a cutoff
        super().__init__(
            Spec("ap", k=self.k, rel_level=self.rel_level, denominator=denom, per_query=self.per_query)
        )

    def _config(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "denominator": self.denominator,
            "rel_level": _plain(self.rel_level),
            "ties": self.ties,
            "per_query": self.per_query,
        }


class MRR(RetrievalMetric):
    """Mean reciprocal rank: per query 1 / (rank of the first relevant document), 0 if none is
    retrieved (RR@k: 0 if it ranks below k). trec_eval ``recip_rank``."""

    def __init__(
        self, k: int | None = None, *, rel_level: float = 1, ties: str = "first", per_query: bool = False
    ) -> None:
        self.k = _check_k(k, optional=True)
        self.rel_level, self.ties = _check_level(rel_level, "rel_level"), _check_ties(ties, False)
        self.per_query = bool(per_query)
        super().__init__(Spec("rr", k=self.k, rel_level=self.rel_level, per_query=self.per_query))

    def _config(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "rel_level": _plain(self.rel_level),
            "ties": self.ties,
            "per_query": self.per_query,
        }


class CG(RetrievalMetric):
    """Cumulative gain CG@k = Σ_{i≤k} max(grade_i, 0); ``normalize=True`` divides by k·rel_max
    (Weber; with binary grades and rel_max = 1 it equals P@k). Grades above ``rel_max`` are a
    ``ValueError``. ``rel_level`` is accepted for uniformity and unused (graded measure)."""

    def __init__(
        self,
        k: int,
        *,
        normalize: bool = False,
        rel_max: float | None = None,
        rel_level: float = 1,
        ties: str = "first",
        per_query: bool = False,
    ) -> None:
        self.k, self.normalize = _check_k(k), bool(normalize)
        self.rel_max = None if rel_max is None else _check_level(rel_max, "rel_max")
        if self.normalize and (self.rel_max is None or self.rel_max <= 0):
            raise ValueError(
                f"rel_max: normalize=True needs the top grade of the scale (> 0), got {rel_max!r}"
            )
        self.rel_level, self.ties = _check_level(rel_level, "rel_level"), _check_ties(ties, True)
        self.per_query = bool(per_query)
        super().__init__(
            Spec(
                "cg",
                k=self.k,
                ties=self.ties,
                rel_max=self.rel_max if self.normalize else None,
                per_query=self.per_query,
            )
        )

    def _config(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "normalize": self.normalize,
            "rel_max": None if self.rel_max is None else _plain(self.rel_max),
            "rel_level": _plain(self.rel_level),
            "ties": self.ties,
            "per_query": self.per_query,
        }

    def _scale(self) -> float:
        assert self.k is not None
        return self.k * self.rel_max if (self.normalize and self.rel_max) else 1.0

    def _compute(self) -> Any:
        return float(self._mean()[0] / self._scale())

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, 0] / self._scale()


class DCG(RetrievalMetric):
    """DCG@k = Σ_{i≤k} g(grade_i) / log2(i + 1); ``gain="linear"``: g = max(grade, 0) (trec_eval),
    ``"exponential"``: g = 2^max(grade, 0) − 1. ``k=None``: the whole list."""

    def __init__(
        self,
        k: int | None = None,
        *,
        gain: str = "linear",
        rel_level: float = 1,
        ties: str = "first",
        per_query: bool = False,
    ) -> None:
        self.k, self.gain = _check_k(k, optional=True), _check_choice(gain, "gain", ("linear", "exponential"))
        self.rel_level, self.ties = _check_level(rel_level, "rel_level"), _check_ties(ties, True)
        self.per_query = bool(per_query)
        super().__init__(Spec(self._kind, k=self.k, gain=self.gain, ties=self.ties, per_query=self.per_query))

    _kind = "dcg"

    def _config(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "gain": self.gain,
            "rel_level": _plain(self.rel_level),
            "ties": self.ties,
            "per_query": self.per_query,
        }


class NDCG(DCG):
    """nDCG@k = DCG@k / IDCG@k, the ideal ranking built from all judged documents of the query
    when ``judged`` is given (trec_eval ``ndcg_cut_k``; ``ndcg`` with ``k=None``), else from the
    retrieved documents (scikit-learn's ``ndcg_score``); IDCG = 0 gives 0."""

    _kind = "ndcg"


class InterpolatedPrecision(RetrievalMetric):
    """Interpolated precision at recall r = the best precision at any rank whose recall >= r
    (textbook rule, default; 0 if recall r is never reached). ``interpolation="trec"`` uses
    trec_eval 9's ``iprec_at_recall`` rule instead: recall r counts as reached at the rank of the
    ⌊r·R + 0.9⌋-th relevant document (so r = 0.7 with R = 3 is reached by 2 relevant documents).
    ``recall`` is one level (``compute`` gives a float) or a sequence of levels (an array)."""

    def __init__(
        self,
        recall: float | Sequence[float],
        *,
        interpolation: str = "textbook",
        rel_level: float = 1,
        per_query: bool = False,
    ) -> None:
        self.scalar = np.ndim(recall) == 0
        levels = [recall] if self.scalar else list(recall)  # type: ignore[arg-type]
        if not levels:
            raise ValueError("recall: expected at least one recall level")
        self.recall = tuple(_check_fraction(r, "recall") for r in levels)
        self.interpolation = _check_choice(interpolation, "interpolation", ("textbook", "trec"))
        self.rel_level, self.per_query = _check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(
            Spec(
                "iprec",
                levels=self.recall,
                rel_level=self.rel_level,
                per_query=self.per_query,
                interpolation=None if self.interpolation == "textbook" else self.interpolation,
            )
        )

    def _config(self) -> dict[str, Any]:
        return {
            "recall": self.recall[0] if self.scalar else list(self.recall),
            "interpolation": self.interpolation,
            "rel_level": _plain(self.rel_level),
            "per_query": self.per_query,
        }

    def _compute(self) -> Any:
        m = self._mean()
        return float(m[0]) if self.scalar else m

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, 0] if self.scalar else vals


class ElevenPointAP(RetrievalMetric):
    """11-point interpolated average precision: the mean of the interpolated precision at recall
    0, 0.1, ..., 1 (textbook rule by default; ``interpolation="trec"`` gives trec_eval's
    ``11pt_avg``, see :class:`InterpolatedPrecision`)."""

    def __init__(
        self, *, interpolation: str = "textbook", rel_level: float = 1, per_query: bool = False
    ) -> None:
        self.interpolation = _check_choice(interpolation, "interpolation", ("textbook", "trec"))
        self.rel_level, self.per_query = _check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(
            Spec(
                "iprec",
                levels=ELEVEN_POINTS,
                rel_level=self.rel_level,
                per_query=self.per_query,
                interpolation=None if self.interpolation == "textbook" else self.interpolation,
            )
        )

    def _config(self) -> dict[str, Any]:
        return {
            "interpolation": self.interpolation,
            "rel_level": _plain(self.rel_level),
            "per_query": self.per_query,
        }

    def _compute(self) -> Any:
        return float(self._mean().mean())

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals.mean(axis=1)


class SystemEfficiency(RetrievalMetric):
    """System efficiency (Weber) E = 1 − d/√2, d the smallest distance from a per-rank (recall,
    precision) point to (1, 1); 0 when nothing relevant exists or nothing is retrieved."""

    def __init__(self, *, rel_level: float = 1, per_query: bool = False) -> None:
        self.rel_level, self.per_query = _check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(Spec("eff", rel_level=self.rel_level, per_query=self.per_query))

    def _config(self) -> dict[str, Any]:
        return {"rel_level": _plain(self.rel_level), "per_query": self.per_query}


class _SetMeasure(RetrievalMetric):
    _column = 0

    def __init__(self, *, average: str = "macro", rel_level: float = 1, per_query: bool = False) -> None:
        self.average = _check_choice(average, "average", ("macro", "micro"))
        self.rel_level, self.per_query = _check_level(rel_level, "rel_level"), bool(per_query)
        super().__init__(Spec("set", rel_level=self.rel_level, per_query=self.per_query))

    def _config(self) -> dict[str, Any]:
        return {"average": self.average, "rel_level": _plain(self.rel_level), "per_query": self.per_query}

    def _compute(self) -> Any:
        acc = self._state.acc(self._spec)
        if self.average == "macro":
            return float(self._mean()[self._column])
        denom = acc.sums[3 + self._column]
        if denom == 0:
            warn(
                f"{type(self).__name__}: micro average undefined "
                f"(no {'retrieved' if self._column == 0 else 'relevant'} documents); returning nan",
                UndefinedMetricWarning,
            )
            return float("nan")
        return float(acc.sums[2] / denom)

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, self._column]

    def totals(self) -> dict[str, int]:
        """Pooled counts: ``relevant_retrieved``, ``retrieved``, ``relevant`` (trec_eval's
        ``num_rel_ret``, ``num_ret``, ``num_rel``). O(1)."""
        with self._lock:
            sums = self._state.acc(self._spec).sums
            return {"relevant_retrieved": int(sums[2]), "retrieved": int(sums[3]), "relevant": int(sums[4])}

    def per_query_counts(self) -> np.ndarray:
        """(queries, 3) int array of relevant retrieved, retrieved, relevant (``per_query=True``)."""
        if not self._spec.per_query:
            raise ValueError(f"{type(self).__name__}: per-query values are kept only with per_query=True")
        with self._lock:
            vals = self._state.acc(self._spec).values()
            assert vals is not None
            return vals[:, 2:5].astype(np.int64)


class SetPrecision(_SetMeasure):
    """Set precision = relevant retrieved / retrieved (0 for an empty list; trec_eval ``set_P``).
    ``average="macro"``: mean over queries; ``"micro"``: Σ relevant retrieved / Σ retrieved."""

    _column = 0


class SetRecall(_SetMeasure):
    """Set recall = relevant retrieved / R (0 when R = 0; trec_eval ``set_recall``).
    ``average="macro"``: mean over queries; ``"micro"``: Σ relevant retrieved / Σ R."""

    _column = 1
