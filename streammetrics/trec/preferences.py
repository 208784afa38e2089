"""trec_eval's preference judgments (``-R prefs``, ``-R qrels_prefs``) and the ``prefs_*`` measures.

A ``prefs`` file has lines ``qid jg jsg docno rel_level``: within a judgment sub-group (jsg) a
document is preferred to every document with a lower ``rel_level``; a judgment group (jg) is one
user's consistent preferences (its sub-groups combine transitively); ``rel_level`` 0 marks a
nonrelevant document. ``qrels_prefs`` reads a qrels file as prefs (jg = the iter column, one jsg).

Per query (trec_eval's ``form_prefs_counts``): the judged documents get internal ids -- retrieved
ones by rank (0 .. NJR-1), the others by document id -- and each jg counts its preferences
fulfilled / possible among retrieved documents (``ret``), with exactly one retrieved (``imp``) and
with none retrieved (``notoccur``). A jg with one sub-group keeps equivalence classes of equal
``rel_level``; one with several a preference matrix closed under transitivity. ``counts[i, j]``
is the number of jgs preferring document ``i`` to ``j``. Cost: O(judged²) per query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled

from .checked import TrecFormatError, utf8_errors
from .tokens import atof, text_fields

PrefLine = tuple[str, str, str, float]  # jg, jsg, docno, rel_level


def read_prefs(path: str, qrels_format: bool = False) -> dict[str, list[PrefLine]]:
    """``qid jg jsg docno rel_level`` lines (``qrels_format``: ``qid jg docno rel_level``, one jsg)
    -> {qid: [(jg, jsg, docno, rel_level), ...]}; ``#`` comment lines and blank lines skipped.

    Parameters
    ----------
    path : str
        The preferences file (``-R prefs``; ``-R qrels_prefs`` with ``qrels_format``).
    qrels_format : bool, default=False
        Lines have the qrels layout ``qid jg docno rel_level`` (one judgment subgroup, ``"0"``).

    Returns
    -------
    dict of str to list of (str, str, str, float)
        Per query, its lines as ``(jg, jsg, docno, rel_level)`` in file order (``rel_level``
        read as C's ``atof``).

    Raises
    ------
    TrecFormatError
        If a line has the wrong number of fields (naming the line).

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.preferences import read_prefs
    >>> with tempfile.NamedTemporaryFile("w", suffix=".prefs", delete=False) as fh:
    ...     _ = fh.write("q1 u1 0 d1 2\\n# comment\\nq1 u1 0 d2 1\\n")
    >>> read_prefs(fh.name)
    {'q1': [('u1', '0', 'd1', 2.0), ('u1', '0', 'd2', 1.0)]}
    >>> os.remove(fh.name)
    """
    layout = "qid jg docno rel_level" if qrels_format else "qid jg jsg docno rel_level"
    out: dict[str, list[PrefLine]] = {}
    with utf8_errors(path), open(path, encoding="utf-8") as fh:
        for _, parts in text_fields(path, fh, 1, len(layout.split()), layout):
            out.setdefault(parts[0], []).append(pref_line(parts[1:], qrels_format))
    return out


def pref_line(fields: Sequence[Any], qrels_format: bool = False) -> PrefLine:
    """One preference judgment from a line's fields after the query id: ``jg jsg docno
    rel_level`` (``qrels_format``: ``jg docno rel_level``, one jsg ``"0"``). Names are read as
    text, ``rel_level`` as C's ``atof`` reads text (a number is taken as it is). O(1).

    Parameters
    ----------
    fields : sequence
        The line's fields after the query id.
    qrels_format : bool, default False
        The fields are ``jg docno rel_level`` (``-R qrels_prefs``).

    Returns
    -------
    tuple of (str, str, str, float)
        ``(jg, jsg, docno, rel_level)``.

    Examples
    --------
    >>> from streammetrics.trec.preferences import pref_line
    >>> pref_line(["1", "2", "doc9", "3"]), pref_line(["1", "doc9", 0.5], qrels_format=True)
    (('1', '2', 'doc9', 3.0), ('1', '0', 'doc9', 0.5))
    """
    if qrels_format:
        jg, docno, rel = fields
        jsg: Any = "0"
    else:
        jg, jsg, docno, rel = fields
    level = atof(rel) if isinstance(rel, str) else float(rel)
    return (str(jg), str(jsg), str(docno), level)


def pref_lines(rows: Any, qrels_format: bool, where: str) -> list[PrefLine]:
    """A query's preference judgments from rows as a prefs file has them after the query id
    (``(jg, jsg, docno, rel_level)``; ``qrels_format``: ``(jg, docno, rel_level)``); None is no
    row. ValueError naming ``where`` and the first malformed row. O(rows).

    Parameters
    ----------
    rows : iterable of sequences, or None
        The query's rows.
    qrels_format : bool
        Rows of 3 fields (``-R qrels_prefs``) instead of 4 (``-R prefs``).
    where : str
        What the rows are, for error messages (e.g. the query).

    Returns
    -------
    list of tuple of (str, str, str, float)
        One ``(jg, jsg, docno, rel_level)`` per row.

    Examples
    --------
    >>> from streammetrics.trec.preferences import pref_lines
    >>> pref_lines([("1", "d1", 2), ("1", "d2", 1)], True, "query 7")
    [('1', '0', 'd1', 2.0), ('1', '0', 'd2', 1.0)]
    """
    width = 3 if qrels_format else 4
    out = []
    for i, row in enumerate(() if rows is None else rows):
        try:
            ok = not isinstance(row, (str, bytes)) and len(row) == width
            line = pref_line(row, qrels_format) if ok else None
        except (TypeError, ValueError):
            line = None
        if line is None or not math.isfinite(line[3]):
            shape = "(jg, docno, rel_level)" if qrels_format else "(jg, jsg, docno, rel_level)"
            raise ValueError(f"{where}: expected rows {shape} with a finite rel_level, row {i} is {row!r}")
        out.append(line)
    return out


@dataclass
class _JudgmentGroup:
    """One jg's preferences (equivalence classes or a preference matrix) and its counts."""

    ecs: list[tuple[float, list[int]]] | None = (
        None  # (rel_level, internal ids ascending), rel_level descending
    )
    pa: np.ndarray | None = None
    rel_array: np.ndarray | None = None
    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0


@filled
@dataclass
class ResultsPrefs:
    """A query's preference counts (trec_eval's RESULTS_PREFS).

    Attributes
    ----------
    jgs : list
        Per judgment group (in bytewise order of its name): its preferences and the counts of
        those fulfilled, possible and not occurring among the retrieved documents.
    num_judged : int
        The documents with a preference judgment.
    num_judged_ret : int
        Those of them retrieved; internal document ids below it are retrieved ones, in rank order.
    counts : numpy.ndarray of shape (num_judged, num_judged)
        ``counts[i, j]``: the judgment groups preferring document ``i`` to document ``j``.

    Examples
    --------
    {example: prefs}
    >>> rp.num_judged, rp.num_judged_ret, len(rp.jgs)
    (3, 2, 1)
    """

    jgs: list[_JudgmentGroup]
    num_judged: int
    num_judged_ret: int
    counts: np.ndarray = field(repr=False)


def _key(s: str) -> bytes:
    return s.encode("utf-8")


@filled
def form_prefs_counts(lines: list[PrefLine], ranked: list[str]) -> ResultsPrefs:
    """Preference counts of a query whose retrieved documents are ``ranked`` (rank order).

    A judgment group with one subgroup states its preferences by relevance levels (a document
    is preferred to every one of a lower level); with several, by pairs within each subgroup.

    Parameters
    ----------
    lines : list of (str, str, str, float)
        The query's preference lines ``(jg, jsg, docno, rel_level)`` (:func:`read_prefs`).
    ranked : list of str
        The query's retrieved documents in rank order.

    Returns
    -------
    ResultsPrefs
        The counts every ``prefs_*`` measure reads.

    Examples
    --------
    {example: prefs}
    >>> rp.counts.tolist()  # internal ids: d2, d1 (retrieved, rank order), then d3
    [[0, 0, 1], [1, 0, 1], [0, 0, 0]]
    """
    judged = {d for _, _, d, _ in lines}
    retrieved = [d for d in ranked if d in judged]
    ids = {d: i for i, d in enumerate(retrieved)}
    njr = len(retrieved)
    for d in sorted(judged - set(retrieved), key=_key):
        ids[d] = len(ids)
    n = len(ids)
    rows = sorted(
        ((jg, jsg, -rel, ids[d], d) for jg, jsg, d, rel in lines),
        key=lambda r: (_key(r[0]), _key(r[1]), r[2], r[3]),
    )
    counts = np.zeros((n, n), dtype=np.int64)
    groups: list[_JudgmentGroup] = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][0] != rows[start][0]:
            part = rows[start:i]
            if len({r[1] for r in part}) > 1:
                groups.append(_form_pa(part, n, njr, counts))
            else:
                groups.append(_form_ec(part, njr, counts))
            start = i
    return ResultsPrefs(groups, n, njr, counts)


def _form_ec(part: list[tuple[str, str, float, int, str]], njr: int, counts: np.ndarray) -> _JudgmentGroup:
    ecs: list[tuple[float, list[int]]] = []
    for _, _, neg_rel, rank, _ in part:
        if not ecs or ecs[-1][0] != -neg_rel:
            ecs.append((-neg_rel, []))
        ecs[-1][1].append(rank)
    jg = _JudgmentGroup(ecs=ecs)
    for e1, (level, ranks1) in enumerate(ecs):
        r1 = np.array(ranks1, dtype=np.int64)
        ret = int(np.count_nonzero(np.cumprod(r1 < njr)))  # stops at the first unretrieved (sorted)
        if level > 0.0:
            jg.num_rel_ret += ret
            jg.num_rel += len(r1)
        else:
            jg.num_nonrel_ret += ret
            jg.num_nonrel += len(r1)
        for _, ranks2 in ecs[e1 + 1 :]:
            r2 = np.array(ranks2, dtype=np.int64)
            grid_a, grid_b = np.meshgrid(r1, r2, indexing="ij")
            a, b = grid_a.ravel(), grid_b.ravel()
            if np.any(a == b):
                raise TrecFormatError("a document occurs with different rel_levels in one judgment sub-group")
            np.add.at(counts, (a, b), 1)
            ful = a < b
            jg.ful_ret += int(np.count_nonzero(ful & (b < njr)))
            jg.ful_imp += int(np.count_nonzero(ful & (b >= njr) & (a < njr)))
            jg.notoccur += int(np.count_nonzero(ful & (a >= njr)))
            jg.poss_ret += int(np.count_nonzero(~ful & (a < njr)))
            jg.poss_imp += int(np.count_nonzero(~ful & (a >= njr) & (b < njr)))
            jg.notoccur += int(np.count_nonzero(~ful & (a >= njr) & (b >= njr)))
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


def _form_pa(
    part: list[tuple[str, str, float, int, str]], n: int, njr: int, counts: np.ndarray
) -> _JudgmentGroup:
    rel_array = np.full(n, -1.0)
    pa = np.zeros((n, n), dtype=bool)
    for i, (_, jsg, neg_rel, rank, docno) in enumerate(part):
        rel = -neg_rel
        if (rel_array[rank] > 0.0 and rel == 0.0) or (rel_array[rank] == 0.0 and rel > 0.0):
            raise TrecFormatError(f"document {docno!r} has both 0 and non-0 rel_level in one judgment group")
        rel_array[rank] = rel
        for _, jsg2, neg2, rank2, _ in part[i + 1 :]:
            if jsg2 != jsg:
                break
            if neg2 != neg_rel:
                pa[rank, rank2] = True
    closure = pa | np.eye(n, dtype=bool)
    while True:
        nxt = (closure.astype(np.int64) @ closure.astype(np.int64)) > 0
        if (nxt == closure).all():
            break
        closure = nxt
    np.fill_diagonal(closure, False)
    if (closure & closure.T).any():
        raise TrecFormatError("inconsistent preferences within one judgment group")
    jg = _JudgmentGroup(pa=closure, rel_array=rel_array)
    jg.num_rel_ret = int(np.count_nonzero(rel_array[:njr] > 0.0))
    jg.num_nonrel_ret = int(np.count_nonzero(rel_array[:njr] == 0.0))
    jg.num_rel = int(np.count_nonzero(rel_array > 0.0))
    jg.num_nonrel = int(np.count_nonzero(rel_array == 0.0))
    counts += closure
    rows, cols = np.nonzero(closure)
    ret_i, ret_j = rows < njr, cols < njr
    jg.poss_ret = int(np.count_nonzero(ret_i & ret_j & (cols < rows)))
    jg.ful_ret = int(np.count_nonzero(ret_i & ret_j & (cols > rows)))
    jg.ful_imp = int(np.count_nonzero(ret_i & ~ret_j))
    jg.poss_imp = int(np.count_nonzero(~ret_i & ret_j))
    jg.notoccur = int(np.count_nonzero(~ret_i & ~ret_j))
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


# --------------------------------------------------------------------------------------- measures


def _ratio(a: float, b: float) -> float:
    """C's a / b in doubles: 0/0 is NaN, x/0 infinite."""
    if b:
        return a / b
    return math.nan if a == 0 else math.copysign(math.inf, a)


@filled
def num_possible(rp: ResultsPrefs) -> float:
    """prefs_num_prefs_poss: the preferences a ranking could fulfil, over all judgment groups.

    Parameters
    ----------
    {trec: rp}

    Returns
    -------
    float
        The number of possible preferences.

    Examples
    --------
    {example: prefs}
    >>> P.num_possible(rp), P.num_fulfilled(rp), P.num_fulfilled_ret(rp)
    (3.0, 2.0, 0.0)
    """
    return float(sum(g.poss_ret + g.poss_imp + g.notoccur for g in rp.jgs))


@filled
def num_fulfilled(rp: ResultsPrefs) -> float:
    """prefs_num_prefs_ful: the preferences the ranking fulfils (a preferred document ranked
    above the other, or retrieved when the other is not), over all judgment groups.

    Parameters
    ----------
    {trec: rp}

    Returns
    -------
    float
        The number of fulfilled preferences.

    Examples
    --------
    {example: prefs}
    >>> P.num_fulfilled(rp)  # d1 and d2 over the unretrieved d3; d2 above d1 violates one
    2.0
    """
    return float(sum(g.ful_ret + g.ful_imp for g in rp.jgs))


@filled
def num_fulfilled_ret(rp: ResultsPrefs) -> float:
    """prefs_num_prefs_ful_ret: the preferences between two retrieved documents that the ranking
    fulfils.

    Parameters
    ----------
    {trec: rp}

    Returns
    -------
    float
        The number of fulfilled preferences among retrieved documents.

    Examples
    --------
    {example: prefs}
    >>> P.num_fulfilled_ret(rp)
    0.0
    """
    return float(sum(g.ful_ret for g in rp.jgs))


def _ful_poss(g: _JudgmentGroup, kind: str) -> tuple[int, int]:
    """A jg's fulfilled and possible preferences of ``kind`` ("all", "ret" or "imp")."""
    ful = g.ful_ret + (g.ful_imp if kind != "ret" else 0)
    poss = g.poss_ret + (g.poss_imp if kind != "ret" else 0) + (g.notoccur if kind == "all" else 0)
    return ful, poss


@filled
def simple(rp: ResultsPrefs, kind: str) -> float:
    """prefs_simp (kind ``all``), prefs_simp_ret, prefs_simp_imp: fulfilled / possible, pooled.

    Parameters
    ----------
    {trec: rp, kind}

    Returns
    -------
    float
        Fulfilled over possible preferences, pooled over judgment groups (0 when none is possible).

    Examples
    --------
    {example: prefs}
    >>> round(P.simple(rp, "all"), 12), P.simple(rp, "ret")
    (0.666666666667, 0.0)
    """
    counts = [_ful_poss(g, kind) for g in rp.jgs]
    ful, poss = sum(f for f, _ in counts), sum(p for _, p in counts)
    return ful / poss if poss else 0.0


@filled
def by_group(rp: ResultsPrefs, kind: str) -> float:
    """prefs_avgjg, _ret, _imp: fulfilled / possible per jg, averaged over jgs.

    Parameters
    ----------
    {trec: rp, kind}

    Returns
    -------
    float
        The mean over judgment groups of their fulfilled over possible preferences (0 when no
        group has a possible one).

    Examples
    --------
    {example: prefs}
    >>> round(P.by_group(rp, "all"), 12)
    0.666666666667
    """
    s = 0.0
    for g in rp.jgs:
        ful, poss = _ful_poss(g, kind)
        if poss:
            s += ful / poss
    return s / len(rp.jgs) if s > 0.0 else 0.0


@filled
def pairs(rp: ResultsPrefs, kind: str) -> float:
    """prefs_pair, _ret, _imp: per document pair with a preference, the share of jgs fulfilling it.

    Parameters
    ----------
    {trec: rp, kind}

    Returns
    -------
    float
        The mean over document pairs with a preference of the share of judgment groups whose
        preference the ranking fulfils (0 when no pair has one).

    Examples
    --------
    {example: prefs}
    >>> round(P.pairs(rp, "imp"), 12)
    0.666666666667
    """
    c, njr, n = rp.counts, rp.num_judged_ret, rp.num_judged
    s = 0.0
    num = 0
    blocks = [(c[:njr, :njr], c[:njr, :njr].T, True)]
    if kind != "ret":
        blocks.append((c[:njr, njr:], c[njr:, :njr].T, False))
    for fwd, back, upper in blocks:
        tot = fwd + back
        mask = tot > 0
        if upper:
            mask = np.triu(mask, 1)
        num += int(np.count_nonzero(mask))
        for v in (fwd[mask] / tot[mask]).tolist():
            s += v
    if kind == "all":
        tail = c[njr:n, njr:n]
        num += int(np.count_nonzero(np.triu((tail + tail.T) > 0, 1)))
    return s / num if num else 0.0


def _recalculate(g: _JudgmentGroup, njr: int, keep: int, retrieved_only: bool) -> tuple[int, int]:
    """Fulfilled and possible preferences of a jg keeping only its first ``keep`` nonrelevant
    documents (trec_eval's ``recalculate`` of prefs_avgjg_Rnonrel[_ret])."""
    ful = poss = 0
    if g.ecs is not None:
        ecs = [np.array(r, dtype=np.int64) for _, r in g.ecs]
        if retrieved_only:
            ecs = [r[: int(np.count_nonzero(np.cumprod(r < njr)))] for r in ecs]
            last = np.array(g.ecs[-1][1][:keep], dtype=np.int64)
            new_nonrel = last[: int(np.count_nonzero(np.cumprod(last < njr)))]
        else:
            new_nonrel = np.array(g.ecs[-1][1][:keep], dtype=np.int64)

        def tally(r1: np.ndarray, r2: np.ndarray) -> tuple[int, int]:
            a, b = np.meshgrid(r1, r2, indexing="ij")
            hit = (a < b) if retrieved_only else (a < b) & (a < njr)
            return int(np.count_nonzero(hit)), int(hit.size - np.count_nonzero(hit))

        for e1 in range(len(ecs)):
            for e2 in range(e1 + 1, len(ecs) - 1):
                f, p = tally(ecs[e1], ecs[e2])
                ful, poss = ful + f, poss + p
        for e1 in range(len(ecs)):
            f, p = tally(ecs[e1], new_nonrel)
            ful, poss = ful + f, poss + p
        return ful, poss + ful
    assert g.pa is not None and g.rel_array is not None
    rel = g.rel_array
    limit = njr if retrieved_only else len(rel)
    seen = 0
    first_discarded = limit
    for k in range(limit):
        if rel[k] == 0.0:
            seen += 1
            if seen == g.num_rel + 1:
                first_discarded = k
                break
    idx = np.arange(len(rel))
    alive = ~((idx >= first_discarded) & (rel == 0.0))
    a = g.pa & alive[:, None] & alive[None, :]
    i, j = np.nonzero(a)
    in_i, in_j = i < njr, j < njr
    ful = int(np.count_nonzero(in_i & in_j & (j > i)))
    poss = int(np.count_nonzero(in_i & in_j & (j < i)))
    if not retrieved_only:
        ful += int(np.count_nonzero(in_i & ~in_j))
        poss += int(np.count_nonzero(~in_i))
    return ful, poss + ful


@filled
def rnonrel(rp: ResultsPrefs, retrieved_only: bool) -> float:
    """prefs_avgjg_Rnonrel[_ret]: as prefs_avgjg with the nonrelevant documents of each jg set to R.

    Parameters
    ----------
    {trec: rp}
    retrieved_only : bool
        prefs_avgjg_Rnonrel_ret: count retrieved documents only.

    Returns
    -------
    float
        The mean over judgment groups of fulfilled over possible preferences, each group's
        nonrelevant documents cut or weighted to as many as its relevant ones.

    Examples
    --------
    {example: prefs}
    >>> P.rnonrel(rp, False)
    0.8
    """
    s = 0.0
    for g in rp.jgs:
        R, N = (g.num_rel_ret, g.num_nonrel_ret) if retrieved_only else (g.num_rel, g.num_nonrel)
        if R >= N:
            ful, poss = _ful_poss(g, "ret" if retrieved_only else "all")
            ful += g.num_rel_ret * (R - N)
            poss += g.num_rel * (R - N)
        else:
            ful, poss = _recalculate(g, rp.num_judged_ret, R, retrieved_only)
        s += _ratio(ful, poss)
    return s / len(rp.jgs) if s > 0.0 else 0.0
