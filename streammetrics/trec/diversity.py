"""The diversity measures of NIST's ndeval (pyndeval, ir_measures' pyndeval provider).

Intent-aware measures over subtopic judgments (:mod:`.subtopics`), each as ndeval 4.5 defines
it, under ir_measures' names and parameters: ``alpha_nDCG@k``, ``alpha_DCG@k`` (``rel``,
``alpha``, ``judged_only``), ``ERR_IA@k``, ``nERR_IA@k`` (``rel``, ``judged_only``; ``alpha`` too,
as ndeval's ``-alpha`` sets it, which ir_measures does not take), ``P_IA@k`` (``rel``,
``judged_only``), ``StRecall@k`` (``rel``), ``AP_IA`` (alias ``MAP_IA``; ``rel``,
``judged_only``), ``NRBP``, ``nNRBP`` (``rel``, ``alpha``, ``beta``). Defaults as ir_measures':
``alpha=0.5``, ``beta=0.5``, ``rel`` the evaluation's relevance level (1), ``judged_only=False``.

A document is relevant to a subtopic when its judgment there is at least ``rel`` (pyndeval's
binarisation). ``S`` is the number of the query's subtopics with a relevant document (a subtopic
without one is ignored). Walking down a ranking, the document at rank ``r`` (1-based) gains
``g_r = sum over its relevant subtopics s of (1 - alpha)^c_s``, with ``c_s`` the relevant documents
of ``s`` ranked above it, added in the subtopics' order (their first appearance in the qrels, as
pyndeval numbers them). Then, with ``D(r) = 1 / log2(r + 1)``:

- ``alpha_DCG@k = sum_{r<=k} g_r D(r) / sum_{r<=k} S (1-alpha)^(r-1) D(r)`` for ``k >= 2``, and
  ``g_1`` for ``k = 1`` (ndeval leaves its first position unnormalised);
- ``ERR_IA@k``: the same with ``1 / r`` for ``D(r)``;
- ``alpha_nDCG@k``, ``nERR_IA@k``: the run's value over the value of the ideal ranking, which
  ndeval builds greedily from the judged documents: at each rank the document of the largest gain
  given those placed above it, ties to the largest document id (bytewise); 0 when the run's
  ``alpha_DCG@k`` is 0;
- ``NRBP = (1 - (1-alpha) beta) / S * sum_r g_r beta^(r-1)`` over the whole ranking, ``nNRBP`` over
  the ideal ranking's (NaN for a query without a relevant document, 0/0 as in ndeval);
- ``P_IA@k = (relevant (document, subtopic) pairs in the top k) / (k S)``,
  ``StRecall@k = (subtopics with a relevant document in the top k) / S``;
- ``AP_IA = 1/S sum_s AP_s``, ``AP_s`` the average precision of the run for subtopic ``s`` alone
  (over the whole ranking).

A query without a relevant document scores 0 (nNRBP NaN). The run is ranked as pyndeval ranks
it: score descending (double precision), then document id ascending; ``judged_only`` drops the
documents the query's qrels do not name (on any subtopic) first. ndeval stops at rank 20; here a
cutoff may be deeper (the same definition). :func:`diversity_values` evaluates one query's
ranking; :func:`evaluate_diversity` a run; :func:`parse_diversity` reads a measure's name.
Cost per query: O(n s) for n ranked documents with s relevant subtopics each, plus the greedy
ideal over the j relevant judged documents: documents relevant to the same subtopics are grouped
(they gain alike) and the greedy picks among the g groups with lazy updates (a group's gain only
falls as documents are placed, so a stale gain is an upper bound): O(j s log g) in practice,
O(j g s) at worst (ndeval's own greedy: O(j^2 s)).
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .irparse import measure_syntax

__all__ = ["DiversityMeasure", "DIVERSITY_MEASURES", "parse_diversity", "is_diversity",
           "diversity_values", "evaluate_diversity", "rank_run"]  # fmt: skip

_CUT = 10**6  # the deepest cutoff taken (alpha-DCG's normaliser is summed to it: O(cutoff) once)
_INT, _BOOL, _NUM = (int,), (bool,), (int, float)
_A = {"rel": _INT, "alpha": _NUM, "judged_only": _BOOL}
#: name: the parameters it takes (ir_measures' pyndeval measures) and their types
DIVERSITY_MEASURES: dict[str, dict[str, tuple[type, ...]]] = {
    "alpha_nDCG": {"cutoff": _INT, **_A},
    "alpha_DCG": {"cutoff": _INT, **_A},
    "ERR_IA": {"cutoff": _INT, **_A},
    "nERR_IA": {"cutoff": _INT, **_A},
    "P_IA": {"cutoff": _INT, "rel": _INT, "judged_only": _BOOL},
    "StRecall": {"cutoff": _INT, "rel": _INT},
    "AP_IA": {"rel": _INT, "judged_only": _BOOL},
    "NRBP": {"rel": _INT, "alpha": _NUM, "beta": _NUM},
    "nNRBP": {"rel": _INT, "alpha": _NUM, "beta": _NUM},
}
_ALIASES = {"α_nDCG": "alpha_nDCG", "α_DCG": "alpha_DCG", "MAP_IA": "AP_IA"}


@dataclass(frozen=True)
class DiversityMeasure:
    """One diversity measure with its parameters.

    Attributes
    ----------
    name : str
        The name it is printed under (as given).
    kind : str
        The measure: a key of :data:`DIVERSITY_MEASURES`.
    cutoff : int or None
        The rank cutoff k (None for ``AP_IA``, ``NRBP``, ``nNRBP``).
    rel : int or None
        The smallest relevant judgment (None: the evaluation's level).
    alpha, beta : float
        Redundancy intolerance and patience.
    judged_only : bool
        Drop the documents the query's qrels do not name first.

    Examples
    --------
    >>> from streammetrics.trec.diversity import parse_diversity
    >>> m = parse_diversity("alpha_nDCG(alpha=0.8)@20")
    >>> m.kind, m.cutoff, m.rel, m.alpha, m.beta, m.judged_only
    ('alpha_nDCG', 20, None, 0.8, 0.5, False)
    """

    name: str
    kind: str
    cutoff: int | None = None
    rel: int | None = None
    alpha: float = 0.5
    beta: float = 0.5
    judged_only: bool = False


def is_diversity(text: str) -> bool:
    """Whether ``text`` names a diversity measure (``alpha_nDCG@20``, ``NRBP``, ...).

    Parameters
    ----------
    text : str
        A measure name.

    Returns
    -------
    bool
        True for the names of :data:`DIVERSITY_MEASURES` (and ``α_nDCG``, ``α_DCG``, ``MAP_IA``).

    Examples
    --------
    >>> from streammetrics.trec.diversity import is_diversity
    >>> is_diversity("ERR_IA@20"), is_diversity("ERR@20"), is_diversity("P.5")
    (True, False, False)
    """
    found = measure_syntax(text)
    return found is not None and _ALIASES.get(found[0], found[0]) in DIVERSITY_MEASURES


def parse_diversity(text: str) -> DiversityMeasure:
    """The diversity measure named ``text`` (ir_measures' syntax: ``Name(param=value, ...)@k``).

    Parameters
    ----------
    text : str
        The name, as ``alpha_nDCG@20``, ``nERR_IA(rel=2)@10``, ``NRBP(alpha=0.5, beta=0.8)``.

    Returns
    -------
    DiversityMeasure
        The measure.

    Raises
    ------
    ValueError
        Naming the measure: not a diversity measure, a parameter it does not take, a mistyped
        value, a missing cutoff, a cutoff below 1, ``alpha`` or ``beta`` outside [0, 1].

    Examples
    --------
    >>> from streammetrics.trec.diversity import parse_diversity
    >>> parse_diversity("NRBP(beta=0.8)").beta
    0.8
    """
    found = measure_syntax(text)
    name = None if found is None else _ALIASES.get(found[0], found[0])
    if found is None or name not in DIVERSITY_MEASURES:
        known = ", ".join(DIVERSITY_MEASURES)
        raise ValueError(f"measure {text!r}: not a diversity measure ({known})")
    params = dict(found[1])
    allowed = DIVERSITY_MEASURES[name]
    if "@" in params:
        if "cutoff" in params:
            raise ValueError(f"measure {text!r}: cutoff given twice (by @ and by name)")
        params["cutoff"] = params.pop("@")
    for key, value in params.items():
        if key not in allowed:
            takes = ", ".join(allowed)
            raise ValueError(f"measure {text!r}: {name} takes no parameter {key!r} (takes {takes})")
        types = allowed[key]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            kind = " or ".join(t.__name__ for t in types)
            raise ValueError(f"measure {text!r}: parameter {key} must be {kind}, got {value!r}")
    cutoff = params.get("cutoff")
    if "cutoff" in allowed:
        if cutoff is None:
            raise ValueError(f"measure {text!r}: {name} needs a cutoff (as in {name}@20)")
        if not 1 <= cutoff <= _CUT:
            raise ValueError(f"measure {text!r}: cutoff must be in [1, {_CUT}], got {cutoff!r}")
    rel = params.get("rel")
    if rel is not None and not -(2**63) <= rel < 2**63:
        raise ValueError(f"measure {text!r}: rel must be a C long, got {rel!r}")
    alpha, beta = float(params.get("alpha", 0.5)), float(params.get("beta", 0.5))
    for key, v in (("alpha", alpha), ("beta", beta)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"measure {text!r}: {key} must be in [0, 1] (as ndeval's -{key}), got {v!r}")
    judged_only = bool(params.get("judged_only", False))
    return DiversityMeasure(text.strip(), name, cutoff, rel, alpha, beta, judged_only)


def _discount(i: int) -> float:
    """ndeval's discount of the 0-based position i: 1, then log(2) / log(i + 2)."""
    return 1.0 if i == 0 else math.log(2.0) / math.log(i + 2.0)


def _gains(ranking: Iterable[tuple[int, ...]], alpha: float) -> list[float]:
    """The gain of each ranked document: its relevant subtopics' current gains, added in order,
    each then multiplied by (1 - alpha)."""
    current: dict[int, float] = {}
    out = []
    for subs in ranking:
        score = 0.0
        for s in subs:
            g = current.get(s, 1.0)
            score += g
            current[s] = g * (1.0 - alpha)
        out.append(score)
    return out


def _ideal_gains(relevant: Mapping[str, tuple[int, ...]], alpha: float) -> list[float]:
    """The gains of ndeval's greedy ideal ranking (its positive gains: the rest are 0): at each rank
    the document of the largest gain, ties to the largest document id. Documents relevant to the
    same subtopics gain alike, so they are grouped (each group in document id order, descending)
    and the greedy runs over the groups, lazily: a group's gain only falls, so a stale gain bounds
    it from above (the same sums, so the same choices, as ndeval)."""
    current: dict[int, float] = {}

    def gain(subs: tuple[int, ...]) -> float:
        score = 0.0
        for s in subs:
            score += current.get(s, 1.0)
        return score

    by_id = sorted(relevant, key=lambda d: d.encode("utf-8"), reverse=True)  # rank 0: the largest id
    groups: dict[tuple[int, ...], list[int]] = {}
    for rank, d in enumerate(by_id):
        groups.setdefault(relevant[d], []).append(rank)
    heads = {sig: 0 for sig in groups}
    heap = [(-gain(sig), ranks[0], sig) for sig, ranks in groups.items()]
    heapq.heapify(heap)
    out: list[float] = []
    while heap:
        stale, rank, sig = heap[0]
        score = gain(sig)
        if score != -stale:
            heapq.heapreplace(heap, (-score, rank, sig))
            continue
        if score == 0.0:
            break
        out.append(score)
        for s in sig:
            current[s] = current.get(s, 1.0) * (1.0 - alpha)
        heads[sig] += 1
        if heads[sig] < len(groups[sig]):  # the group's next document, its stale gain a bound
            heapq.heapreplace(heap, (stale, groups[sig][heads[sig]], sig))
        else:
            heapq.heappop(heap)
    return out


@functools.lru_cache(maxsize=64)
def _ideal_ideal(cutoffs: tuple[int, ...], alpha: float, err: bool) -> dict[int, float]:
    """ndeval's "ideal ideal" normaliser for one subtopic at each cutoff k: the sum over the
    0-based positions i < k of (1 - alpha)^i d_i (d_i = 1 / (i + 1) for ERR-IA, else ndeval's log
    discount). Summed once per (cutoffs, alpha), stopping where (1 - alpha)^i reaches 0 (the
    sum is constant beyond): O(largest cutoff) time, O(cutoffs) memory."""
    out: dict[int, float] = {}
    total, weight, i = 0.0, 1.0, 0
    for k in sorted(set(cutoffs)):
        while i < k and weight != 0.0:
            total += weight * (1.0 / (i + 1.0) if err else _discount(i))
            weight *= 1.0 - alpha
            i += 1
        out[k] = total
    return out


def _cumulative(gains: list[float], cutoffs: tuple[int, ...], subtopics: int, alpha: float,
                err: bool) -> dict[int, float]:
    """ndeval's alpha-DCG (``err``: ERR-IA) at each cutoff k, over its "ideal ideal" (@1 left
    unnormalised, as ndeval). O(min(largest cutoff, len(gains))) beyond the cached normaliser."""
    ideal = _ideal_ideal(cutoffs, alpha, err)
    out: dict[int, float] = {}
    total, i = 0.0, 0
    for k in sorted(set(cutoffs)):
        while i < min(k, len(gains)):
            total += gains[i] / (i + 1.0) if err else gains[i] * _discount(i)
            i += 1
        out[k] = total if k == 1 else total / (subtopics * ideal[k])
    return out


def _c_div(a: float, b: float) -> float:
    """C's a / b (0/0 NaN: nNRBP with alpha 0 and beta 1, whose normaliser is 0)."""
    if b == 0.0:
        return math.nan if a == 0.0 or a != a else math.copysign(math.inf, a)
    return a / b


def _nrbp(gains: list[float], subtopics: int, alpha: float, beta: float) -> float:
    total, decay = 0.0, 1.0
    for g in gains:
        total += g * decay
        decay *= beta
    return total * ((1.0 - (1.0 - alpha) * beta) / subtopics)


def _query(ranked: Sequence[str], judged: Mapping[str, Mapping[int, int]], rel: int, judged_only: bool,
           alpha: float, beta: float, group: Sequence[DiversityMeasure]) -> list[float]:  # fmt: skip
    """The values of ``group`` (measures of one rel, alpha, beta, judged_only) for one query."""
    relevant: dict[str, tuple[int, ...]] = {}
    nrel: dict[int, int] = {}
    for doc, grades in judged.items():
        subs = tuple(sorted(s for s, g in grades.items() if g >= rel))
        if subs:
            relevant[doc] = subs
            for s in subs:
                nrel[s] = nrel.get(s, 0) + 1
    n_sub = len(nrel)
    if not n_sub:
        return [math.nan if m.kind == "nNRBP" else 0.0 for m in group]
    if judged_only:
        ranked = [d for d in ranked if d in judged]
    ranking = [relevant.get(d, ()) for d in ranked]
    cutoffs = tuple(sorted({m.cutoff for m in group if m.cutoff is not None}))
    kinds = {m.kind for m in group}
    gains = _gains(ranking, alpha)
    ideal = _ideal_gains(relevant, alpha) if kinds & {"alpha_nDCG", "nERR_IA", "nNRBP"} else []
    cache: dict[Any, dict[int, float]] = {}
    if kinds & {"alpha_DCG", "alpha_nDCG", "nERR_IA"}:
        cache["dcg"] = _cumulative(gains, cutoffs, n_sub, alpha, False)
    if kinds & {"ERR_IA", "nERR_IA"}:
        cache["err"] = _cumulative(gains, cutoffs, n_sub, alpha, True)
    out = []
    for m in group:
        k = 0 if m.cutoff is None else m.cutoff
        if m.kind == "alpha_DCG":
            out.append(cache["dcg"][k])
        elif m.kind == "ERR_IA":
            out.append(cache["err"][k])
        elif m.kind in ("alpha_nDCG", "nERR_IA"):
            what = "dcg" if m.kind == "alpha_nDCG" else "err"
            if ("ideal", what) not in cache:
                cache["ideal", what] = _cumulative(ideal, cutoffs, n_sub, alpha, what == "err")
            run_v, ideal_v = cache[what][k], cache["ideal", what][k]
            out.append(run_v / ideal_v if cache["dcg"][k] != 0.0 else 0.0)
        elif m.kind in ("NRBP", "nNRBP"):
            v = _nrbp(gains, n_sub, alpha, beta)
            out.append(v if m.kind == "NRBP" else _c_div(v, _nrbp(ideal, n_sub, alpha, beta)))
        elif m.kind == "P_IA":
            pairs = sum(len(subs) for subs in ranking[:k])
            out.append(pairs / (k * n_sub))
        elif m.kind == "StRecall":
            covered = {s for subs in ranking[:k] for s in subs}
            out.append(len(covered) / n_sub)
        else:  # AP_IA
            seen: dict[int, int] = {}
            totals: dict[int, float] = {}
            for i, subs in enumerate(ranking):
                for s in subs:
                    c = seen[s] = seen.get(s, 0) + 1
                    totals[s] = totals.get(s, 0.0) + c / (i + 1.0)
            ap = 0.0
            for s in sorted(nrel):
                ap += totals.get(s, 0.0) / nrel[s]
            out.append(ap / n_sub)
    return out


def _measures(measures: Sequence[DiversityMeasure | str]) -> list[DiversityMeasure]:
    return [m if isinstance(m, DiversityMeasure) else parse_diversity(m) for m in measures]


def _numbered(judgments: Mapping[str, Mapping[Any, int]],
              index: dict[Hashable, int] | None = None) -> dict[str, dict[int, int]]:
    """Judgments with subtopics numbered by first appearance (in ``index``, shared across queries);
    kept as they are if every subtopic is an int."""
    if all(type(s) is int for grades in judgments.values() for s in grades):
        return {d: {int(s): int(g) for s, g in grades.items()}  # type: ignore[call-overload]
                for d, grades in judgments.items()}
    index = {} if index is None else index
    return {d: {index.setdefault(s, len(index)): int(g) for s, g in grades.items()}
            for d, grades in judgments.items()}


def diversity_values(ranked: Sequence[str], judgments: Mapping[str, Mapping[Any, int]],
                     measures: Sequence[DiversityMeasure | str], rel_level: int = 1,
                     judged_only: bool = False) -> list[float]:
    """One query's values of the diversity measures.

    Cost: O(n s) for the ``n`` ranked documents (s relevant subtopics each), plus the ideal
    ranking's greedy (see the module).

    Parameters
    ----------
    ranked : sequence of str
        The retrieved documents, best first (see :func:`rank_run`).
    judgments : mapping of str to mapping of hashable to int
        ``{docno: {subtopic: judgment}}``: the query's subtopic judgments. Subtopics are added in
        the order they first appear (int subtopics: in their order; the file reader numbers them
        in the order of the qrels' lines, as pyndeval).
    measures : sequence of DiversityMeasure or str
        The measures (names as ``"alpha_nDCG@20"``).
    rel_level : int, default 1
        The relevance level of the measures that do not set ``rel``.
    judged_only : bool, default False
        Drop unjudged documents for every measure (as each measure's ``judged_only``).

    Returns
    -------
    list of float
        A value per measure.

    Examples
    --------
    >>> from streammetrics.trec.diversity import diversity_values
    >>> judgments = {"A": {"a": 1}, "B": {"b": 1}, "D": {"b": 1}, "C": {"c": 1}}
    >>> [round(v, 4) for v in diversity_values(["A", "D", "E", "B"], judgments,
    ...                                          ["alpha_nDCG@5", "P_IA@5", "StRecall@5", "AP_IA"])]
    [0.7869, 0.2, 0.6667, 0.5]
    """
    return _query_values(ranked, judgments, measures, rel_level, judged_only, None)


def _query_values(ranked: Sequence[str], judgments: Mapping[str, Mapping[Any, int]],
                  measures: Sequence[DiversityMeasure | str], rel_level: int, judged_only: bool,
                  index: dict[Hashable, int] | None) -> list[float]:
    """:func:`diversity_values` with the subtopics numbered by ``index`` (shared across queries)."""
    if isinstance(rel_level, bool) or not isinstance(rel_level, int):
        raise ValueError(f"rel_level: expected an integer (judgments are integers), got {rel_level!r}")
    specs = _measures(measures)
    judged = _numbered(judgments, index)
    groups: dict[tuple[int, bool, float, float], list[int]] = {}
    for i, m in enumerate(specs):
        key = (rel_level if m.rel is None else m.rel, m.judged_only or judged_only, m.alpha, m.beta)
        groups.setdefault(key, []).append(i)
    out = [0.0] * len(specs)
    for (rel, jo, alpha, beta), idx in groups.items():
        values = _query(ranked, judged, rel, jo, alpha, beta, [specs[i] for i in idx])
        for i, v in zip(idx, values, strict=True):
            out[i] = v
    return out


def rank_run(scores: Mapping[str, float]) -> list[str]:
    """A query's documents in pyndeval's order: score descending, then document id ascending.

    Parameters
    ----------
    scores : mapping of str to float
        ``{docno: score}``.

    Returns
    -------
    list of str
        The documents, best first.

    Examples
    --------
    >>> from streammetrics.trec.diversity import rank_run
    >>> rank_run({"b": 1.0, "a": 1.0, "c": 2.0})
    ['c', 'a', 'b']
    """
    return [d for d, _ in sorted(scores.items(), key=lambda p: (-p[1], p[0]))]


def evaluate_diversity(run: Mapping[str, Mapping[str, float]],
                       qrels: Mapping[str, Mapping[str, Mapping[Any, int]]],
                       measures: Sequence[DiversityMeasure | str], *, rel_level: int = 1,
                       judged_only: bool = False, complete: bool = False
                       ) -> tuple[dict[str, list[float]], list[float]]:  # fmt: skip
    """A run's per-query values and means of the diversity measures.

    Cost: :func:`diversity_values` per query.

    Parameters
    ----------
    run : mapping of str to mapping of str to float
        ``{qid: {docno: score}}``.
    qrels : mapping of str to mapping of str to mapping of hashable to int
        ``{qid: {docno: {subtopic: judgment}}}``; subtopics are numbered in the order they first
        appear over the queries (pyndeval: over the qrels' lines), unless they are all ints.
    measures : sequence of DiversityMeasure or str
        The measures.
    rel_level, judged_only : int, bool
        As in :func:`diversity_values`.
    complete : bool, default False
        Average over every query of the qrels (a query missing from the run scores 0 in every
        measure, ``nNRBP`` included, as with ndeval's ``-c`` and in ir_measures; a retrieved query
        without a relevant document keeps its NaN ``nNRBP``); by default over the queries of both
        (ndeval's and pyndeval's queries).

    Returns
    -------
    per_query : dict of str to list of float
        The values of each query averaged over.
    means : list of float
        The mean of each measure over them (NaN when there is no such query).

    Examples
    --------
    >>> from streammetrics.trec.diversity import evaluate_diversity
    >>> per_query, means = evaluate_diversity({"1": {"A": 2.0, "B": 1.0}},
    ...     {"1": {"A": {"a": 1}, "B": {"b": 1}}, "2": {"C": {"a": 1}}}, ["StRecall@1"], complete=True)
    >>> per_query, means
    ({'1': [0.5], '2': [0.0]}, [0.25])
    """
    specs = _measures(measures)
    index: dict[Hashable, int] = {}
    for qid in qrels:  # subtopics numbered across the queries, as pyndeval numbers them
        _numbered(qrels[qid], index)
    per_query: dict[str, list[float]] = {}
    for qid in sorted(qrels, key=lambda q: q.encode("utf-8")):
        scores = run.get(qid)
        if scores is None:
            if complete:
                per_query[qid] = [0.0] * len(specs)
            continue
        per_query[qid] = _query_values(rank_run(scores), qrels[qid], specs, rel_level, judged_only, index)
    n = len(per_query)
    sums = [0.0] * len(specs)
    for values in per_query.values():
        for i, v in enumerate(values):
            sums[i] += v
    return per_query, [s / n if n else math.nan for s in sums]
