"""The diversity measures (:mod:`.diversity`) as a streaming accumulator: :class:`DiversityMeasures`.

``DiversityMeasures(["alpha_nDCG@20", "ERR_IA@20", "NRBP"])`` folds in queries batch by batch with
the retrieval family's update, each query's subtopic judgments given as rows naming documents:
``update(None, scores, doc_ids=..., judged={qid: rows}, query_ids=...)``, the rows of a query
``(subtopic, docno, judgment)`` as the subtopic qrels list them after the topic (or a mapping
``{docno: {subtopic: judgment}}``). Each query is ranked as pyndeval ranks it (score descending,
then document id ascending; ``max_docs``: the top M) and evaluated by
:func:`.diversity.diversity_values`, so the values are ``streammetrics trec``'s (subtopics are
added in the order they first appear in the query's rows; int subtopics in their order -- the
command numbers them over the whole file, as pyndeval: pass those numbers for bit-equal ties of
the ideal ranking). ``compute()`` is the mean over queries (nNRBP NaN for a query without a
relevant document, as ndeval's 0/0); ``per_query_values()`` every query's values. Being a
retrieval accumulator, it merges, saves and loads in the library's file format and shares a
state in a :class:`~streammetrics.MetricSet` with the measures that take judgment rows.
Cost: ``update`` O(rows) to check, then :func:`.diversity.diversity_values` per query; memory
O(measures) -- O(queries x measures) with ``per_query=True``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import Param, check_param
from streammetrics._core.warn import warn
from streammetrics._queries.kernels import QueryRows
from streammetrics.retrieval._base import RetrievalMetric

from .diversity import DiversityMeasure, diversity_values, parse_diversity
from .stream import check_columns_block

__all__ = ["DiversityMeasures", "DiversitySpec"]

_UNIT = frozenset({"P_IA", "StRecall", "AP_IA"})  # in [0, 1]; the rest >= 0 (the greedy ideal can be beaten)


@dataclass(frozen=True)
class DiversitySpec:
    """The identity of a :class:`DiversityMeasures` inside a retrieval query state.

    Attributes
    ----------
    measures : tuple of str
        The measure names, as given.
    rel_level : int, default=1
        The smallest relevant judgment of the measures without their own ``rel``.
    judged_only : bool, default=False
        Drop the documents a query's rows do not name, for every measure.
    max_docs : int or None, default=None
        Evaluate the top ``max_docs`` documents of each query.
    per_query : bool, default=False
        Keep every query's values.

    Examples
    --------
    >>> from streammetrics.trec.diversity_stream import DiversitySpec
    >>> spec = DiversitySpec(("alpha_nDCG@20", "NRBP"))
    >>> spec.columns, spec.width, spec.allows_nan
    (['alpha_nDCG@20', 'NRBP'], 2, False)
    """

    measures: tuple[str, ...]
    rel_level: int = 1
    judged_only: bool = False
    max_docs: int | None = None
    per_query: bool = False

    #: Each query's ``judged`` entry holds judgment rows naming documents; the query is ranked here.
    raw_judged = True

    @functools.cached_property
    def parsed(self) -> list[DiversityMeasure]:
        specs: dict[str, DiversityMeasure] = {}
        for text in self.measures:
            m = parse_diversity(text)
            specs.setdefault(m.name, m)
        return list(specs.values())

    @property
    def columns(self) -> list[str]:
        """The name of each value column (as given; a name given twice once)."""
        return [m.name for m in self.parsed]

    @property
    def width(self) -> int:
        return len(self.parsed)

    @property
    def averages(self) -> list[str]:
        return ["mean"] * self.width

    @property
    def allows_nan(self) -> bool:
        """nNRBP is 0/0 (NaN) for a query without a relevant document, as in ndeval."""
        return any(m.kind == "nNRBP" for m in self.parsed)

    @property
    def defined_columns(self) -> None:
        return None

    @property
    def name(self) -> str:
        opts = f"rel_level={self.rel_level},J={self.judged_only},M={self.max_docs},per_query={self.per_query}"
        return f"diversity({' '.join(self.measures)};{opts})"

    def value_range(self) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) per-query value of each column: [0, 1] for P_IA, StRecall and AP_IA,
        >= 0 for the rest (alpha_DCG@1 is a gain up to S; the greedy ideal can be beaten)."""
        lo = np.zeros(self.width)
        hi = np.array([1.0 if m.kind in _UNIT else np.inf for m in self.parsed])
        return lo, hi

    def check_block(self, x: np.ndarray, total: float | None, what: str, rtol: float = 1e-9) -> None:
        """Refuse stored numbers no stream of queries gives (see :meth:`value_range`). O(x.size)."""
        check_columns_block(x, *self.value_range(), self.columns, total, what, rtol)

    def evaluate(self, rq: Any) -> np.ndarray:
        """Every query's values, shape (queries, width), from a batch of queries as given.
        ValueError naming the argument, the query and the value for rows it does not take."""
        given: QueryRows = rq.given
        n = len(given.bounds) - 1
        names = [str(q) for q in rq.qids] if rq.qids is not None else ["query"] * n
        b = given.bounds.tolist()
        out = np.zeros((n, self.width))
        for i, qid in enumerate(names):
            where = f"judged[{qid!r}]" if rq.qids is not None else "judged"
            judgments = _judgments(given.judged[i], where)
            docs = [str(d) for d in given.doc_ids[b[i] : b[i + 1]].tolist()]
            if len(set(docs)) != len(docs):
                seen: set[str] = set()
                for d in docs:
                    if d in seen:
                        raise ValueError(f"doc_ids: query {qid!r} retrieves document {d!r} twice")
                    seen.add(d)
            scores = np.asarray(given.scores[b[i] : b[i + 1]], dtype=np.float64).tolist()
            order = sorted(range(len(docs)), key=lambda j: (-scores[j], docs[j]))
            if self.max_docs is not None:
                order = order[: self.max_docs]
            out[i] = diversity_values([docs[j] for j in order], judgments, self.parsed, self.rel_level,
                                      self.judged_only)  # fmt: skip
        return out


def _grade(g: Any, where: str) -> int:
    if isinstance(g, bool) or not isinstance(g, (int, float, np.integer, np.floating)) or g != g:
        raise ValueError(f"{where}: a judgment must be an integer, got {g!r}")
    if not float(g).is_integer() or abs(float(g)) >= 2.0**63:
        raise ValueError(f"{where}: a judgment must be an integer (a C long), got {g!r}")
    return int(g)


def _judgments(entry: Any, where: str) -> dict[str, dict[Any, int]]:
    """``{docno: {subtopic: judgment}}`` of a query's rows ``(subtopic, docno, judgment)`` or of a
    mapping ``{docno: {subtopic: judgment}}``, checked: ValueError naming the row."""
    out: dict[str, dict[Any, int]] = {}
    if entry is None:
        raise ValueError(f"{where}: missing; every query needs its judgment rows (subtopic, docno, judgment)")
    if isinstance(entry, Mapping):
        for doc, subs in entry.items():
            if not isinstance(subs, Mapping):
                raise ValueError(f"{where}[{doc!r}]: expected a mapping {{subtopic: judgment}}, got {subs!r}")
            out[str(doc)] = {_subtopic(s, where): _grade(g, f"{where}[{doc!r}][{s!r}]")
                             for s, g in subs.items()}
        return out
    if isinstance(entry, (str, bytes)) or not hasattr(entry, "__iter__"):
        raise ValueError(f"{where}: expected rows (subtopic, docno, judgment) or a mapping, got {entry!r}")
    for k, row in enumerate(entry):
        at = f"{where}[{k}]"
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) != 3:
            raise ValueError(f"{at}: expected a row (subtopic, docno, judgment), got {row!r}")
        s, doc, g = row
        subs = out.setdefault(str(doc), {})
        sub = _subtopic(s, at)
        if sub in subs:
            raise ValueError(f"{at}: document {str(doc)!r} judged twice for subtopic {s!r}")
        subs[sub] = _grade(g, at)
    return out


def _subtopic(s: Any, where: str) -> Any:
    if isinstance(s, bool) or not isinstance(s, (str, int, np.integer)):
        raise ValueError(f"{where}: a subtopic must be a str or an int, got {s!r}")
    return int(s) if isinstance(s, np.integer) else s


_DOC_COUNT_OR_NONE = Param("int", "expected a non-negative integer", low=0, optional=True)
_LEVEL = Param("int", "expected an integer (a C long)", low=-(2**63), high=2**63 - 1)


class DiversityMeasures(RetrievalMetric):
    """ndeval's diversity measures over a stream of queries (see the module docstring).

    ``compute()`` is a dict from measure name to its mean over the queries (nan with a warning
    before any query). Cost: see the module docstring.

    Parameters
    ----------
    measures : str or sequence of str
        Diversity measures as ``streammetrics trec -m`` takes them: ``"alpha_nDCG@20"``,
        ``"nERR_IA(rel=2)@10"``, ``"NRBP(beta=0.8)"``, ``"AP_IA"``, ...
    rel_level : int, default 1
        The smallest relevant judgment of the measures without their own ``rel`` (``-l``).
    judged_only : bool, default False
        Drop the documents a query's rows do not name, for every measure (``-J``).
    max_docs : int, optional
        Evaluate the top ``max_docs`` documents of each query (``-M``).
    per_query : bool, default False
        Keep every query's values (:meth:`per_query_values`).

    Examples
    --------
    >>> from streammetrics.trec import DiversityMeasures
    >>> m = DiversityMeasures(["alpha_nDCG@5", "StRecall@5"])
    >>> rows = [("a", "A", 1), ("b", "B", 1), ("b", "D", 1), ("c", "C", 1)]
    >>> m.update(None, [9.3, 8.4, 8.1, 7.6], doc_ids=["A", "D", "E", "B"], judged={"1": rows},
    ...          query_ids=["1"] * 4).compute()
    {'alpha_nDCG@5': 0.786895617614416, 'StRecall@5': 0.6666666666666666}
    """

    def __init__(
        self,
        measures: str | Sequence[str],
        *,
        rel_level: int = 1,
        judged_only: bool = False,
        max_docs: int | None = None,
        per_query: bool = False,
    ) -> None:
        items = [measures] if isinstance(measures, str) else list(measures)
        if not items or not all(isinstance(m, str) for m in items):
            raise ValueError("measures: expected a measure name or a non-empty list of names, "
                             f"got {measures!r}")
        level = check_param(rel_level, "rel_level", _LEVEL)
        cut = check_param(max_docs, "max_docs", _DOC_COUNT_OR_NONE)
        spec = DiversitySpec(tuple(items), int(level), bool(judged_only), cut, bool(per_query))
        spec.parsed  # noqa: B018 -- parse the measures now: a bad name fails in the constructor
        self.spec = spec
        super().__init__(spec)  # type: ignore[arg-type]

    def _config(self) -> dict[str, Any]:
        s = self.spec
        return {"measures": list(s.measures), "rel_level": s.rel_level, "judged_only": s.judged_only,
                "max_docs": s.max_docs, "per_query": s.per_query}  # fmt: skip

    @property
    def names(self) -> list[str]:
        """The measure names, one per value."""
        return list(self.spec.columns)

    def _compute(self) -> Any:
        acc = self._state.acc(self._spec)
        if acc.count == 0:
            warn(f"{type(self).__name__}: no queries seen; the values are undefined (nan)",
                 UndefinedMetricWarning)
            return dict.fromkeys(self.spec.columns, math.nan)
        return {n: float(acc.sums[j]) / acc.count for j, n in enumerate(self.spec.columns)}

    def _per_query(self, vals: np.ndarray) -> Any:
        return {n: vals[:, j].copy() for j, n in enumerate(self.spec.columns)}

    def per_query_values(self) -> Any:
        """``{name: values}``: every query's value in update order (needs ``per_query=True``).
        O(queries)."""
        return super().per_query_values()
