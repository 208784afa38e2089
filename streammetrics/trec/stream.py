"""trec_eval's measures as streaming accumulators over queries: :class:`TrecMeasures`, :class:`TrecMeasure`.

``TrecMeasures(["official", "ndcg_cut.10", "nDCG@10"])`` takes the measures ``streammetrics trec``
takes (trec_eval names with their parameters, nicknames, ir_measures names) and folds queries in
batch by batch with the retrieval family's update
(``update(relevance, scores, *, doc_ids, judged, query_ids)``); :func:`trec_batch` builds those
arguments from pytrec_eval-style dicts. Each query's values come from the same per-query kernels
as ``streammetrics trec`` (:mod:`._kernels`, :mod:`._measures`), so ``compute()`` equals the
command's summary lines: the mean over queries (``gm_map`` / ``gm_bpref``: the geometric mean,
sums for the ``num_*`` counts, the query count for ``num_q``); ``per_query_values()`` gives every
query's values as arrays. Being retrieval accumulators, they merge, save and load in the library's
file format, share a batch's ranking in a :class:`~streammetrics.MetricSet`, and work under
:class:`~streammetrics.Window` and :class:`~streammetrics.Decayed` over queries (under
``Decayed`` a count is the decay-weighted mean per query).

Inputs (trec_eval's judgments of the retrieved documents):

* ``relevance``: per retrieved document its qrels grade (an integer >= 0), :data:`NOT_IN_QRELS`
  (-1) for a document missing from the qrels, :data:`UNJUDGED` (-2) for one judged with a
  negative grade;
* ``judged``: per query the grades of all its judged documents (negative ones count as
  unjudged), required: it gives R and the ideal rankings;
* ``scores`` ranked descending, ties broken by ``doc_ids`` descending (trec_eval's order). trec_eval
  9.x ranks scores rounded to float32: pass float32 scores, as :func:`trec_batch` does for
  ``trec_version=9``; the accumulator's ``trec_version`` picks the recall-cutoff rule of
  ``iprec_at_recall`` / ``11pt_avg``.

The preference measures (``-R prefs`` / ``-R qrels_prefs``: ``all_prefs``, ``prefs_simp``, ...)
and the judgment-group measures (``-R qrels_jg``: ``qrels_jg``, ``map_avgjg``, ...) take their
judgments as rows naming documents: ``TrecMeasures("all_prefs", judgments="prefs")`` is updated
with ``update(None, scores, doc_ids=..., judged={qid: rows}, query_ids=...)``, each query's rows
as the file has them after the query id -- ``(jg, jsg, docno, rel_level)`` for ``prefs``,
``(jg, docno, rel_level)`` for ``qrels_prefs``, ``(jg, docno, grade)`` for ``qrels_jg`` -- and
each query is ranked (doubles for ``trec_version=10``, float32 for 9: no rounding needed),
judged and evaluated by the command's own per-query evaluator, so the values are
``streammetrics trec -R ...``'s. Such accumulators share a state in a ``MetricSet`` only with each
other. ``judgments="qrels_docs"`` takes the qrels this way too, each query's ``{docno: grade}``
(or ``(docno, grade)`` rows) in the qrels' order (``trec_batch(..., judgments="qrels_docs")``
builds it): every measure of ``qrels``, and ``Compat(ties='qrels')``, whose ideal ranking orders
ties as the qrels list them (ir_measures' order), which bare grades cannot tell; and
``Accuracy(ties='run')`` and the C/W/L measures with ``ties='run'`` (``INST(max_rel=3,
ties='run')``, ...), which order tied scores as the query's rows come (the run's order).

``Accuracy@k`` (ir_measures' accuracy) has no value for a query whose top k holds no relevant or
no non-relevant document: NaN among the per-query values, left out of its mean, which is over
the queries that define it (the state counts them per column, ``<spec>.defined``), as
``streammetrics trec`` and ir_measures average it.

With ``judged_only`` (or ``max_docs=0``) a query left without documents has trec_eval's 0/0 --
NaN -- for ``iprec_at_recall`` at the cutoffs of 0 relevant documents and for ``11pt_avg``, so their
means are NaN too, as trec_eval prints them; the state keeps it (save, load, windows).

``runid`` and ``relstring`` have no numeric value and are left out (``official`` gives the rest).
Cost: ``update`` O(n log L) to rank n rows once, then O(retrieved) numpy work per query and measure
(one Python call per query and measure); memory O(values) -- O(queries x values) with
``per_query=True``.
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
from streammetrics.retrieval._base import check_level
from streammetrics.retrieval.metrics import RetrievalMetric

from . import _cwl_kernels as cwl_kernels
from . import _kernels as trec_kernels
from ._measures import Options, Selected, check_trec_version, needs_run_order
from .evaluate import QueryEvaluator
from .irnames import select
from .judgment_groups import groups_from_rows, qrels_from_rows
from .preferences import PrefLine, pref_lines
from .runfile import QueryLines

__all__ = ["TrecMeasures", "TrecMeasure", "TrecSpec", "TrecBatch", "trec_batch", "NOT_IN_QRELS", "UNJUDGED"]

NOT_IN_QRELS = trec_kernels.NONPOOL
UNJUDGED = trec_kernels.UNJUDGED
#: What ``judged`` holds per query, as trec_eval's ``-R``: grades (``qrels``) or judgment rows.
JUDGMENTS = ("qrels", "prefs", "qrels_prefs", "qrels_jg", "qrels_docs")
_UNIT = frozenset({"map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "map_cut",
                   "F1_cut", "Accuracy_run",  # ranx's f1@k; Accuracy(ties='run')
                   "ndcg_cut", "success", "set_P", "set_recall", "set_relative_P", "set_map",
                   "relative_P", "Rprec_mult", "11pt_avg", "unj", "RR_cut", "Judged", "ERR_cut",
                   "RBP_p", "rbp_resid", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "prefs_simp",
                   "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
                   "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
                   "prefs_avgjg_imp", "RR_msmarco", "Compat", "Accuracy", "Judged_asc",
                   *cwl_kernels.BASES})  # fmt: skip



def check_columns_block(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, columns: Sequence[str],
                        total: float | None, what: str, rtol: float = 1e-9) -> None:
    """Refuse a stored block ``x`` (last axis: the columns) outside [lo, hi] per column, or, for
    sums (``total`` the weight summed), outside ``total`` times it, with a relative tolerance
    ``rtol``: a ValueError naming the block, the entry, the value and the column. O(x.size)."""
    scale = 1.0 if total is None else float(total)
    with np.errstate(invalid="ignore"):
        tol = rtol * np.maximum(np.where(np.isfinite(hi), hi, 0.0), 1.0) * max(scale, 1.0)
        low = np.where(np.isfinite(lo), lo * scale, -np.inf)
        high = np.where(np.isfinite(hi), hi * scale, np.inf)
        bad = (x < low - tol) | (x > high + tol)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = idx[0] if len(idx) == 1 else idx
        raise ValueError(f"state: {what}[{where}] = {float(x[idx])!r} is outside the range of "
                         f"{columns[idx[-1]]} for weight {scale!r}")  # fmt: skip

@dataclass(frozen=True)
class TrecSpec:
    """The identity of a :class:`TrecMeasures` inside a retrieval query state: its measures and
    options (what is evaluated per query) and its value columns.

    Two accumulators with equal specs evaluate queries alike, so their states merge. The fields
    are :class:`TrecMeasures`' arguments, normalised.

    Attributes
    ----------
    measures : tuple of str
        The measure names, as given (trec_eval and ir_measures names).
    rel_level : float, default=1.0
        Minimum grade of a relevant document (trec_eval ``-l``).
    trec_version : int, default=9
        The recall-cutoff rule of ``iprec_at_recall`` / ``11pt_avg`` (9 or 10).
    fused_cutoffs : bool, default=False
        9's rule rounded once (a fused multiply-add).
    judged_only : bool, default=False
        Rank only judged documents (trec_eval ``-J``).
    max_docs : int or None, default=None
        Documents read per query (trec_eval ``-M``; None: all).
    num_docs : int, default=0
        The number of documents in the collection (trec_eval ``-N``).
    per_query : bool, default=False
        Keep every query's values.
    judgments : {"qrels", "prefs", "qrels_prefs", "qrels_jg", "qrels_docs"}, default="qrels"
        The form of each query's judgments (trec_eval ``-R``; ``qrels_docs``: qrels naming
        the documents, in their order).

    Examples
    --------
    >>> from streammetrics.trec.stream import TrecSpec
    >>> spec = TrecSpec(("map", "P@5"))
    >>> spec.columns, spec.averages, spec.width
    (['map', 'P@5'], ['mean', 'mean'], 2)
    """

    measures: tuple[str, ...]
    rel_level: float = 1.0
    trec_version: int = 9
    fused_cutoffs: bool = False
    judged_only: bool = False
    max_docs: int | None = None
    num_docs: int = 0
    per_query: bool = False
    judgments: str = "qrels"

    @property
    def raw_judged(self) -> bool:
        """Whether ``judged`` holds judgment rows (``judgments`` other than ``"qrels"``): the
        query state then checks batches with ``raw_judged`` and each query is ranked here."""
        return self.judgments != "qrels"

    @property
    def allows_nan(self) -> bool:
        """Whether a query's value may be NaN: trec_eval's 0/0 of ``iprec_at_recall`` /
        ``11pt_avg`` for a query without ranked documents (``judged_only`` or ``max_docs=0``),
        which the stored state then keeps as trec_eval does."""
        empty = self.judged_only or self.max_docs == 0 or any(s.judged_only for s in self.selected)
        return empty and any(s.measure.name in ("iprec_at_recall", "11pt_avg") for s in self.selected)

    @functools.cached_property
    def _selection(self) -> tuple[list[Selected], list[str]]:
        fmt = "qrels" if self.judgments == "qrels_docs" else self.judgments
        sel = [s for s in select(self.measures, fmt) if s.measure.avg != "none"]
        for s in sel:
            if self.judgments == "qrels" and s.measure.name == "Compat" and ("qrels", 1.0) in s.params:
                raise ValueError(f"measures: {s.printed[0]!r} orders ties as the qrels do, which judged "
                                 "grades do not tell; use judgments='qrels_docs' (judged={qid: {docno: "
                                 "grade}}, in the qrels' order)")  # fmt: skip
            if self.judgments == "qrels" and needs_run_order(s):
                raise ValueError(f"measures: {s.printed[0]!r} orders ties as the run lists them, which the "
                                 "ranked rows do not tell; use judgments='qrels_docs' (each query's rows in "
                                 "the run's order, judged={qid: {docno: grade}})")  # fmt: skip
        names = [n for s in sel for n in s.printed]
        if not names:
            raise ValueError(f"measures: {list(self.measures)!r} select no numeric measure")
        return sel, names

    @property
    def selected(self) -> list[Selected]:
        return self._selection[0]

    @property
    def columns(self) -> list[str]:
        """The printed name of each value column (ir_measures names as given)."""
        return self._selection[1]

    @property
    def averages(self) -> list[str]:
        """How each column combines over queries: mean, gm, sum, num_q, num_rel."""
        return [s.measure.avg for s in self.selected for _ in s.names]

    @property
    def width(self) -> int:
        return len(self.columns)

    @property
    def defined_columns(self) -> np.ndarray | None:
        """Which columns are averaged over the queries where they are defined (``Accuracy@k``:
        NaN for a query without a relevant or a non-relevant document in its top k); the query
        state counts those queries per column. None when no column is. O(width)."""
        mask = np.array([avg == "defined" for avg in self.averages], dtype=bool)
        return mask if mask.any() else None

    @property
    def name(self) -> str:
        opts = f"rel_level={self.rel_level},v={self.trec_version},fused={self.fused_cutoffs}"
        opts += f",J={self.judged_only},M={self.max_docs},N={self.num_docs},per_query={self.per_query}"
        if self.raw_judged:  # (qrels: the name files have always stored)
            opts += f",R={self.judgments}"
        return f"trec({' '.join(self.measures)};{opts})"

    def value_range(self) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) per-query value of each column: [0, 1] for fractions, [log 1e-5, 0]
        for the logs of the geometric means, >= 0 for counts, unbounded otherwise."""
        lo, hi = [], []
        for s in self.selected:
            m = s.measure
            for _ in s.names:
                if m.avg == "gm":
                    lo.append(math.log(trec_kernels.MIN_GEO_MEAN))
                    hi.append(0.0)
                elif m.name in _UNIT:
                    lo.append(0.0)
                    hi.append(1.0)
                elif m.value == "long":
                    lo.append(0.0)
                    hi.append(np.inf)
                else:
                    lo.append(-np.inf)
                    hi.append(np.inf)
        return np.array(lo), np.array(hi)

    def check_block(self, x: np.ndarray, total: float | None, what: str, rtol: float = 1e-9) -> None:
        """Refuse stored numbers no stream of queries gives: per-query values (``total=None``)
        outside :meth:`value_range`, or sums outside ``total`` times it. O(x.size)."""
        check_columns_block(x, *self.value_range(), self.columns, total, what, rtol)

    def evaluate(self, rq: Any) -> np.ndarray:
        """Every query's values, shape (queries, width), from a ranked batch (one query at a time
        through the trec_eval kernels). ValueError naming the argument for input the kernels do
        not take."""
        if rq.given is not None:
            return self._evaluate_rows(rq.given, rq.qids)
        if rq.judged is None:
            raise ValueError("judged: trec measures need every query's judged grades (judged=...)")
        if rq.n_relevant is not None:
            raise ValueError("n_relevant: trec measures take R from judged; leave n_relevant out")
        judged = rq.judged
        if judged.size and not (judged == np.floor(judged)).all():
            bad = float(judged[judged != np.floor(judged)][0])
            raise ValueError(f"judged: grades must be integers, got {bad!r}")
        bounds = np.concatenate([[0], np.cumsum(rq.judged_lengths)])
        out = np.zeros((rq.n_queries, self.width))
        opts = Options(version=self.trec_version, fused=self.fused_cutoffs)
        for g in rq.groups:
            grades = g.grades
            if grades.size and not ((grades == np.floor(grades)) & (grades >= UNJUDGED)).all():
                bad = grades[~((grades == np.floor(grades)) & (grades >= UNJUDGED))][0]
                raise ValueError(f"relevance: expected integer grades >= 0, {NOT_IN_QRELS} (not in the "
                                 f"qrels) or {UNJUDGED} (judged negative), got {float(bad)!r}")  # fmt: skip
            codes = grades.astype(np.int64)
            for i, q in enumerate(g.rows.tolist()):
                out[q] = self._query(rq, q, codes[i], judged[bounds[q] : bounds[q + 1]], opts,
                                     np.asarray(g.scores[i], dtype=np.float64))
        return out

    def _evaluate_rows(self, given: QueryRows, qids: list[Any] | None) -> np.ndarray:
        """Every query's values from judgment rows (``prefs``, ``qrels_prefs``, ``qrels_jg``):
        each query ranked, judged and evaluated by ``streammetrics trec``'s own per-query
        evaluator (:class:`.evaluate.QueryEvaluator`), its scores and document ids as a run's
        lines."""
        n = len(given.bounds) - 1
        names = [str(q) for q in qids] if qids is not None else ["query"] * n
        prefs: dict[str, list[PrefLine]] = {}
        groups: dict[str, list[dict[str, int]]] = {}
        for qid, rows in zip(names, given.judged, strict=True):
            where = f"judged[{qid!r}]" if qids is not None else "judged"
            if self.judgments == "qrels_jg":
                groups[qid] = groups_from_rows(rows, where)
            elif self.judgments == "qrels_docs":
                groups[qid] = [qrels_from_rows(rows, where)]
            else:
                prefs[qid] = pref_lines(rows, self.judgments == "qrels_prefs", where)
                groups[qid] = []
        ev = QueryEvaluator("doc_ids", self.selected, groups, prefs,
                            Options(version=self.trec_version, fused=self.fused_cutoffs),
                            "qrels" if self.judgments == "qrels_docs" else self.judgments,
                            max_docs=self.max_docs, judged_only=self.judged_only, rel_level=self.rel_level,
                            num_docs=self.num_docs)  # fmt: skip
        out = np.zeros((n, self.width))
        b = given.bounds.tolist()
        for i, qid in enumerate(names):
            docs = [str(d) for d in given.doc_ids[b[i] : b[i + 1]].tolist()]
            scores = np.asarray(given.scores[b[i] : b[i + 1]], dtype=np.float64)
            rows = np.arange(b[i], b[i + 1]) + given.first_row  # the batch's rows, for messages
            values = ev.values(qid, QueryLines(docs, scores, rows))
            out[i] = [float(v) for vs in values for v in vs]
        return out

    def _query(self, rq: Any, q: int, rels: np.ndarray, judged: np.ndarray, opts: Options,
               scores: np.ndarray) -> list[float]:  # fmt: skip
        pos = judged[judged >= 0].astype(np.int64)
        levels = np.bincount(pos) if len(pos) else np.zeros(0, dtype=np.int64)
        got = rels[rels >= 0]
        if len(got):
            have = np.bincount(got)
            need = np.zeros(len(have), dtype=np.int64)
            need[: min(len(levels), len(have))] = levels[: len(have)]
            if (have > need).any():
                grade = int(np.flatnonzero(have > need)[0])
                where = f"query {rq.qids[q]!r}" if rq.qids is not None else f"query {q}"
                raise ValueError(f"relevance: {where} retrieved {int(have[grade])} documents of grade "
                                 f"{grade} but judged holds {int(need[grade])}")  # fmt: skip
        if self.max_docs is not None:  # trec_eval: the top -M documents, then -J drops unjudged ones
            rels, scores = rels[: self.max_docs], scores[: self.max_docs]
        ranked: dict[tuple[float, bool], trec_kernels.ResRels] = {}  # per (relevance level, -J)
        row: list[float] = []
        for s in self.selected:
            key = (self.rel_level if s.level is None else s.level, self.judged_only or s.judged_only)
            rr = ranked.get(key)
            if rr is None:
                kept = rels[rels >= 0] if key[1] else rels
                rr = ranked[key] = trec_kernels.ResRels(kept, levels, level=key[0], num_docs=self.num_docs,
                                                        scores=scores[rels >= 0] if key[1] else scores)
            row.extend(float(v) for v in s.measure.compute(rr, s.params, opts))
        return row


#: ``max_docs`` (trec_eval ``-M``) and ``num_docs`` (``-N``).
_DOC_COUNT = Param("int", "expected a non-negative integer", low=0)
_DOC_COUNT_OR_NONE = Param("int", "expected a non-negative integer", low=0, optional=True)
_JUDGMENTS = Param("choice", f"expected one of {list(JUDGMENTS)}", choices=JUDGMENTS)


def _measure_list(measures: Any) -> tuple[str, ...]:
    items = [measures] if isinstance(measures, str) else list(measures)
    if not items or not all(isinstance(m, str) for m in items):
        raise ValueError(f"measures: expected a measure name or a non-empty list of names, got {measures!r}")
    return tuple(items)


class TrecMeasures(RetrievalMetric):
    """trec_eval's measures (and ir_measures names) over a stream of queries.

    ``compute()`` is a dict from value name to the summary trec_eval prints (nan with a warning
    before any query). Cost: see the module docstring.

    Parameters
    ----------
    measures : str or sequence of str, default ('official',)
        What ``streammetrics trec -m`` takes: ``"official"``, ``"all_trec"``, ``"map"``,
        ``"P.5,10"``, ``"ndcg_cut.10"``, ``"nDCG@10"``, ``"RBP(p=0.8)"``, ...
    rel_level : float, default 1
        Minimum grade of a relevant document (trec_eval ``-l``).
    trec_version : {9, 10}, default 9
        The recall-cutoff rule of ``iprec_at_recall`` / ``11pt_avg``.
    fused_cutoffs : bool, default False
        9's rule rounded once (a fused multiply-add, as arm64 builds of trec_eval do).
    judged_only : bool, default False
        Rank only judged documents (trec_eval ``-J``).
    max_docs : int, optional
        Documents read per query (trec_eval ``-M``).
    num_docs : int, default 0
        The number of documents in the collection (trec_eval ``-N``).
    per_query : bool, default False
        Keep every query's values (:meth:`per_query_values`).
    judgments : {'qrels', 'prefs', 'qrels_prefs', 'qrels_jg', 'qrels_docs'}, default 'qrels'
        What ``judged`` holds, as trec_eval's ``-R``: each query's grades (``relevance`` the
        retrieved documents' grades), or its judgment rows naming documents -- preferences
        ``(jg, jsg, docno, rel_level)``, qrels read as preferences ``(jg, docno, rel_level)``,
        judgment groups ``(jg, docno, grade)``, the qrels themselves ``{docno: grade}`` or
        ``(docno, grade)`` in the qrels' order (``qrels_docs``: the trec_eval measures as with
        ``qrels``, and ``Compat(ties='qrels')``) -- with ``relevance=None`` and ``doc_ids``
        required (see the module docstring).

    Examples
    --------
    >>> from streammetrics.trec import TrecMeasures
    >>> m = TrecMeasures(["map", "P.1"])
    >>> m.update([0, 1, 1], [0.9, 0.5, 0.7], judged={"q": [1, 1, 0]}, query_ids=["q"] * 3).compute()
    {'map': 0.5833333333333333, 'P_1': 0.0}

    Preferences: user ``u`` prefers ``a`` to ``b`` to ``c``; the run ranks ``b`` first.

    >>> p = TrecMeasures(["prefs_simp", "prefs_num_prefs_ful"], judgments="prefs")
    >>> rows = [("u", "s", "a", 2), ("u", "s", "b", 1), ("u", "s", "c", 0)]
    >>> p.update(None, [0.9, 0.5, 0.1], doc_ids=["b", "a", "c"], judged={"q": rows},
    ...          query_ids=["q"] * 3).compute()
    {'prefs_num_prefs_ful': 2.0, 'prefs_simp': 0.6666666666666666}
    """

    def __init__(
        self,
        measures: str | Sequence[str] = ("official",),
        *,
        rel_level: float = 1,
        trec_version: int = 9,
        fused_cutoffs: bool = False,
        judged_only: bool = False,
        max_docs: int | None = None,
        num_docs: int = 0,
        per_query: bool = False,
        judgments: str = "qrels",
    ) -> None:
        names = _measure_list(measures)
        level = check_level(rel_level, "rel_level")
        version = check_trec_version(trec_version)
        cut = check_param(max_docs, "max_docs", _DOC_COUNT_OR_NONE)
        docs = check_param(num_docs, "num_docs", _DOC_COUNT)
        kind = check_param(judgments, "judgments", _JUDGMENTS)
        spec = TrecSpec(names, level, version, bool(fused_cutoffs), bool(judged_only), cut, docs,
                        bool(per_query), kind)  # fmt: skip
        spec.columns  # noqa: B018 -- parse the measures now: a bad name fails in the constructor
        self.spec = spec
        super().__init__(spec)  # type: ignore[arg-type]

    def _config(self) -> dict[str, Any]:
        s = self.spec
        return {"measures": list(s.measures), "rel_level": int(s.rel_level) if s.rel_level.is_integer()
                else s.rel_level, "trec_version": s.trec_version, "fused_cutoffs": s.fused_cutoffs,
                "judged_only": s.judged_only, "max_docs": s.max_docs, "num_docs": s.num_docs,
                "per_query": s.per_query, "judgments": s.judgments}  # fmt: skip

    @property
    def names(self) -> list[str]:
        """The value names, in trec_eval's order (ir_measures names as given)."""
        return list(self.spec.columns)

    def _summary(self) -> np.ndarray:
        acc = self._state.acc(self._spec)
        if acc.count == 0:
            warn(f"{type(self).__name__}: no queries seen; the values are undefined (nan)",
                 UndefinedMetricWarning)
            return np.full(self.spec.width, np.nan)
        out = np.empty(self.spec.width)
        means = acc.means()
        for j, avg in enumerate(self.spec.averages):
            s = float(acc.sums[j])
            out[j] = (s / acc.count if avg == "mean" else math.exp(s / acc.count) if avg == "gm"
                      else float(acc.count) if avg == "num_q" else float(means[j]) if avg == "defined"
                      else s)  # fmt: skip
        undefined = [n for n, avg, v in zip(self.spec.columns, self.spec.averages, out, strict=True)
                     if avg == "defined" and v != v]  # fmt: skip
        if undefined:
            warn(f"{type(self).__name__}: no query defines {undefined[0]} (a relevant and a non-relevant "
                 "document in its top k); its mean is undefined (nan)", UndefinedMetricWarning)
        return out

    def _compute(self) -> Any:
        return dict(zip(self.spec.columns, self._summary().tolist(), strict=True))

    def _per_query(self, vals: np.ndarray) -> Any:
        out = vals.copy()
        for j, avg in enumerate(self.spec.averages):
            if avg == "gm":
                out[:, j] = np.exp(out[:, j])
        return {n: out[:, j].copy() for j, n in enumerate(self.spec.columns)}

    def per_query_values(self) -> Any:
        """``{name: values}``: every query's value in update order (needs ``per_query=True``;
        ``gm_map`` / ``gm_bpref``: the value the geometric mean takes, at least 1e-5). O(queries)."""
        return super().per_query_values()


class TrecMeasure(TrecMeasures):
    """One trec_eval (or ir_measures) value over a stream of queries: ``TrecMeasure("bpref")``,
    ``TrecMeasure("P.10")``, ``TrecMeasure("nDCG@10")``; ``compute()`` is a float and
    ``per_query_values()`` an array.

    Parameters
    ----------
    measure : str
        One measure name that gives one value (``"P.5,10"`` gives two: use :class:`TrecMeasures`).
    **options
        As :class:`TrecMeasures` (``rel_level``, ``trec_version``, ``judged_only``, ...).

    Examples
    --------
    >>> from streammetrics.trec import TrecMeasure
    >>> m = TrecMeasure("nDCG@10")
    >>> m.update([0, 1], [0.9, 0.5], judged={"q": [1, 0]}, query_ids=["q", "q"]).compute()
    0.6309297535714575
    """

    def __init__(self, measure: str, **options: Any) -> None:
        if not isinstance(measure, str):
            raise ValueError(f"measure: expected one measure name, got {measure!r}")
        super().__init__(measure, **options)
        if self.spec.width != 1:
            raise ValueError(f"measure: {measure!r} gives {self.spec.width} values "
                             f"({', '.join(self.spec.columns)}); use TrecMeasures for several")  # fmt: skip

    def _config(self) -> dict[str, Any]:
        config = super()._config()
        config["measure"] = config.pop("measures")[0]
        return {"measure": config.pop("measure"), **config}

    def _compute(self) -> Any:
        return float(self._summary()[0])

    def _per_query(self, vals: np.ndarray) -> Any:
        return next(iter(super()._per_query(vals).values()))


def _utf8(q: str) -> bytes:
    return q.encode("utf-8")


@dataclass(frozen=True)
class TrecBatch:
    """The ``update`` arguments of a batch of queries (see :func:`trec_batch`).

    Attributes
    ----------
    relevance : ndarray or None
        The grades of the retrieved documents, query after query (None for
        ``judgments="qrels_docs"``: the judgments name the documents).
    scores, doc_ids : ndarray
        The scores and document ids of the retrieved documents, query after query.
    judged : dict of str to ndarray, or dict of str to dict of str to int
        Every judged grade of each query (the ideal ranking and R); for
        ``judgments="qrels_docs"`` each query's ``{docno: grade}`` in the qrels' order.
    query_ids : ndarray
        The query of each row.

    Examples
    --------
    >>> from streammetrics.trec import trec_batch
    >>> batch = trec_batch({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.2, "d2": 0.9}})
    >>> batch.relevance.tolist(), batch.doc_ids.tolist(), batch.query_ids.tolist()
    ([1, 0], ['d1', 'd2'], ['q1', 'q1'])
    """

    relevance: np.ndarray | None
    scores: np.ndarray
    doc_ids: np.ndarray
    judged: dict[str, Any]
    query_ids: np.ndarray

    def feed(self, metric: Any) -> Any:
        """``metric.update(relevance, scores, doc_ids=..., judged=..., query_ids=...)`` (any
        retrieval accumulator, a MetricSet of them, or a Window / Decayed of one)."""
        return metric.update(self.relevance, self.scores, doc_ids=self.doc_ids, judged=self.judged,
                             query_ids=self.query_ids)  # fmt: skip


def trec_batch(
    qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], *, trec_version: int = 9,
    judgments: str = "qrels",
) -> TrecBatch:
    """The ``update`` arguments of the queries in both ``qrels`` ({qid: {docno: grade}}) and
    ``run`` ({qid: {docno: score}}), pytrec_eval's dicts: ``relevance``, ``scores``, ``doc_ids``,
    ``judged`` and ``query_ids``, queries in trec_eval's order (ids sorted bytewise). Grades are
    truncated to integers (trec_eval reads them with ``atol``); with ``trec_version=9`` scores are
    rounded to float32 (trec_eval 9.x ranks C floats). O(documents).

    Parameters
    ----------
    qrels : mapping of str to mapping of str to int
        ``{qid: {docno: grade}}``.
    run : mapping of str to mapping of str to float
        ``{qid: {docno: score}}``.
    trec_version : {9, 10}, default 9
        9: scores rounded to float32 as trec_eval 9.x ranks them; 10: double scores.
    judgments : {"qrels", "qrels_docs"}, default "qrels"
        The form of ``judged``, as :class:`TrecMeasures` takes it: each query's judged grades
        with the retrieved documents' grades in ``relevance``; or (``"qrels_docs"``) each
        query's ``{docno: grade}`` in the qrels' order, ``relevance`` None -- what
        ``Compat(ties='qrels')`` needs (ir_measures' order of ties).

    Returns
    -------
    TrecBatch
        The arrays, with :meth:`TrecBatch.feed` to update an accumulator.

    Examples
    --------
    >>> import streammetrics as sm
    >>> from streammetrics.trec import trec_batch
    >>> batch = trec_batch({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.2, "d2": 0.9}})
    >>> batch.feed(sm.MAP()).compute()
    0.5
    """
    check_trec_version(trec_version)
    if judgments not in ("qrels", "qrels_docs"):
        raise ValueError(f"judgments: expected 'qrels' or 'qrels_docs', got {judgments!r}")
    rel: list[int] = []
    scores: list[float] = []
    docs: list[str] = []
    qids: list[str] = []
    judged: dict[str, np.ndarray] = {}
    for q in sorted((q for q in run if q in qrels), key=_utf8):
        grades = {d: int(g) for d, g in qrels[q].items()}
        judged[q] = np.fromiter(grades.values(), dtype=np.float64, count=len(grades))
        for d, s in run[q].items():
            g = grades.get(d)
            rel.append(NOT_IN_QRELS if g is None else UNJUDGED if g < 0 else g)
            scores.append(float(s))
            docs.append(d)
            qids.append(q)
    sc = np.array(scores, dtype=np.float64)
    if trec_version == 9:
        with np.errstate(over="ignore"):
            sc = sc.astype(np.float32).astype(np.float64)
    if judgments == "qrels_docs":
        by_doc = {q: {d: int(g) for d, g in qrels[q].items()} for q in judged}
        return TrecBatch(None, sc, np.array(docs, dtype=str), by_doc, np.array(qids, dtype=str))
    return TrecBatch(np.array(rel, dtype=np.int64), sc, np.array(docs, dtype=str), judged,
                     np.array(qids, dtype=str))
