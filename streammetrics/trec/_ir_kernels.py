"""Per-query kernels of the ir_measures measures that trec_eval lacks (``RR@k``, ``Judged@k``,
``ERR@k``, ``RBP``; ranx's ``f1@k``), over the same ranked judgments (:class:`._kernels.ResRels`)
as trec_eval's.

* ``RR@k``: ``1 / rank`` of the first relevant document if it is in the top ``k``, else 0
  (trec_eval's ``recip_rank`` of the run cut to ``k`` documents).
* ``RR(ties='msmarco')@k``: ``RR@k`` in the order of ir_measures' msmarco provider (its provider
  of ``RR@k``): score descending, then document id ascending -- each tie group of trec_eval's
  order reversed (the groups from ``ResRels.scores``). Without ``@k``: over the whole ranking.
* ``f1@k`` (ranx's ``f1``): the harmonic mean ``2 P R / (P + R)`` of ``P = hits / k`` and
  ``R = hits / num_rel``, ``hits`` the relevant documents among the top ``k`` (trec_eval's
  ``P_k`` and ``recall_k``); 0 when both are 0 (no relevant document in the top ``k``, or none
  judged). Without a cutoff ranx's ``f1`` is over every retrieved document: trec_eval's
  ``set_F`` (beta 1), which computes it.
* ``Judged@k``: the fraction of the top ``min(k, retrieved)`` documents that appear in the qrels
  (any grade), as ir_measures' judged provider; 0 for an empty ranking. Ties in trec_eval's
  order; ``Judged(ties='ascending')@k`` in the judged provider's (document id ascending).
* ``ERR@k`` (Chapelle et al. 2009) as ir_measures computes it, with gdeval (TREC Web track's
  ``gdeval.pl``): ``sum_{r<=min(k, retrieved)} R_r / r * prod_{i<r} (1 - R_i)`` with
  ``R = (2**g - 1) / 2**4``, ``g`` the document's grade (0 when unjudged or negative) and 4
  gdeval's fixed top grade; a query judging a grade above 4 is an error (gdeval refuses such
  qrels). gdeval ranks by score descending, then document id descending, as trec_eval does
  (``trec_version=9`` ranks float32 scores, gdeval doubles: the same ranking unless two scores of
  a query differ only beyond float32 precision) and prints each query's value to 5 decimals
  (ours are unrounded).
* ``nDCG(dcg='exp-log2')@k`` (Burges et al. 2005), as ir_measures computes it with gdeval (with
  a cutoff) or ranx's ``ndcg_burges``: ``DCG@k / IDCG@k`` with ``DCG@k = sum_{r<=k} (2**g_r - 1) /
  log2(r + 1)`` over the ranking (``g`` 0 when unjudged or negative) and ``IDCG@k`` the same over
  the judged positive grades sorted descending; 0 for a query without a positive grade. Unlike
  gdeval, grades above 4 are accepted (nDCG does not depend on a top grade; ranx accepts them).
* ``nDCG(gains={grade: gain, ...})@k``, as ir_measures computes it (the qrels' grades mapped,
  unlisted grades kept, then pytrec_eval's ``ndcg`` / ``ndcg_cut``): trec_eval's ndcg with the
  gains ``grade=gain`` (its own ``ndcg.1=3,2=9`` parameters), both rankings cut at ``k``.
* ``Accuracy@k``, as ir_measures' accuracy provider defines it: among the top ``k`` documents
  (all without ``@k``), the fraction of (relevant, non-relevant) pairs in which the relevant one
  ranks first, ``1 - sum_j n_j / (n * m)`` with ``m`` relevant and ``n`` non-relevant documents in
  the top ``k`` and ``n_j`` the non-relevant ones above the ``j``-th relevant; a document absent
  from the qrels has grade 0 (relevant when the level is at most 0). Undefined (NaN: the query
  is left out of the mean, as ir_measures reports no value for it) without a relevant or without
  a non-relevant document in the top ``k`` (ir_measures skips the first and divides by zero on
  the second). ``Accuracy(ties='run')`` ranks as ir_measures does: score descending as read
  (doubles), ties in the run's order (``ResRels.run_order``; the run file's line order), where
  that order is known.
* ``Compat(p, normalize)`` (Clarke, Vtyurina & Smucker 2021), as ir_measures' compat provider
  computes it: the rank-biased overlap ``sum_{d<=D} p**(d-1) |A_d & I_d| / d / sum_{d<=D}
  p**(d-1)`` of the ranking ``A`` (score descending, document id ascending) and the ideal
  ranking ``I`` of the documents judged above 0 (grade descending, then run score descending, an
  unretrieved document scoring 0), to depth ``D = max(|A|, |I|)``; normalized, divided by the
  same overlap of ``I`` with itself (when positive). Ties in ``I`` (equal grade and score): by
  default (``ties='ranking'``) retrieved documents in ranking order, and a retrieved document of
  score 0 before the unretrieved ones -- a value of the run and the judgments alone, whatever
  the order of the qrels' lines; ``Compat(ties='qrels')``: the qrels' order, as ir_measures
  (its ideal is sorted stably from the qrels' order), where that order is known
  (``ResRels.qrels``).
* ``RBP(p)`` (Moffat & Zobel 2008): ``(1 - p) * sum_i rel_i * p**(i - 1)`` over the whole ranking,
  ``rel_i`` binary (grade at least the relevance level).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from streammetrics._queries import per_query

from ._kernels import NONPOOL, ResRels, seqsum, setup_gains


def rr_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    return [float(rr.ranked.reciprocal_rank(k)[0]) for k in cutoffs]


def ids_ascending(rr: ResRels) -> np.ndarray:
    """The ranking's positions in the order score descending, then document id ascending: each
    tie group of trec_eval's order (ids descending) reversed."""
    n = rr.num_ret
    if rr.scores is None or n < 2:
        return np.arange(n)
    s = rr.scores
    groups = np.concatenate([[0], np.cumsum(s[1:] != s[:-1])])
    return np.lexsort((-np.arange(n), groups))


def rr_msmarco_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    rel = rr.is_rel[ids_ascending(rr)]
    hits = np.flatnonzero(rel)
    first = int(hits[0]) + 1 if len(hits) else 0
    return [1.0 / first if 0 < first <= k else 0.0 for k in cutoffs]


def f1_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    out = []
    for k in cutoffs:
        hits = float(rr.rel_at(k))
        p, r = hits / k, hits / rr.num_rel if rr.num_rel else 0.0
        out.append(2.0 * ((p * r) / (p + r)) if p + r > 0.0 else 0.0)  # ranx's expression
    return out


def judged_at(rr: ResRels, cutoffs: Sequence[int], ascending: bool = False) -> list[float]:
    rels = rr.rels[ids_ascending(rr)] if ascending else rr.rels
    cum = np.cumsum(rels != NONPOOL)
    out = []
    for k in cutoffs:
        m = min(k, rr.num_ret)
        out.append(int(cum[m - 1]) / m if m > 0 else 0.0)
    return out


#: gdeval's top grade: ERR's gains are (2**g - 1) / 2**GDEVAL_MAX_GRADE.
GDEVAL_MAX_GRADE = 4


def err_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    top = rr.num_rel_levels - 1
    if top > GDEVAL_MAX_GRADE:
        raise ValueError(f"measure ERR: grades must be at most {GDEVAL_MAX_GRADE} (gdeval's, with which "
                         f"ir_measures computes ERR), a query judges grade {top}")  # fmt: skip
    if top <= 0 or not rr.num_ret:
        return [0.0] * len(cutoffs)
    g = np.maximum(rr.rels, 0).astype(np.float64)
    stop = (np.exp2(g) - 1.0) / 2.0**GDEVAL_MAX_GRADE
    reach = np.concatenate([[1.0], np.cumprod(1.0 - stop)[:-1]])
    terms = stop * reach / np.arange(1, rr.num_ret + 1)
    return [seqsum(terms[: min(k, rr.num_ret)]) for k in cutoffs]


def accuracy_at(rr: ResRels, cutoffs: Sequence[int], run_order: bool = False) -> list[float]:
    rel = np.where(rr.rels == NONPOOL, 0, rr.rels) >= rr.level
    if run_order and rr.num_ret > 1:  # Accuracy(ties='run'): the documents in the run's own order
        if rr.run_order is None:
            raise ValueError("measure Accuracy(ties='run'): the run's order of tied documents is not known "
                             "here; feed each query's rows in the run's order with judged={qid: {docno: "
                             "grade}} (TrecMeasures(judgments='qrels_docs'))")  # fmt: skip
        rel = rel[np.argsort(rr.run_order, kind="stable")]
    out = []
    for k in cutoffs:
        top = rel[: min(k, rr.num_ret)]
        m = int(np.count_nonzero(top))
        n = len(top) - m
        above = int(np.cumsum(~top)[top].sum()) if m else 0  # non-relevant ones above each relevant
        out.append(1.0 - above / (float(n) * m) if m and n else float("nan"))
    return out


def _rbo(overlaps: np.ndarray, p: float) -> float:
    """Rank-biased overlap from the overlap at each depth 1..D."""
    weights = np.cumprod(np.concatenate([[1.0], np.full(len(overlaps) - 1, p)]))
    return seqsum(weights * overlaps / np.arange(1, len(overlaps) + 1)) / seqsum(weights)


def _ideal_in_qrels_order(rr: ResRels, order: np.ndarray,
                          scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(ranking positions, ideal positions) of the retrieved documents of ``Compat``'s ideal
    ranking with ir_measures' ties: the positive judgments in the qrels' order, sorted stably by
    run score (0 unretrieved), then by grade, both descending. O(judgments log judgments)."""
    if rr.qrels is None or rr.doc_ids is None:
        raise ValueError("measure Compat(ties='qrels'): the qrels' order of the judged documents is not "
                         "known here; feed judged={qid: {docno: grade}} "
                         "(TrecMeasures(judgments='qrels_docs'))")  # fmt: skip
    index = {d: i for i, d in enumerate(rr.qrels)}
    grades = np.fromiter(rr.qrels.values(), dtype=np.int64, count=len(rr.qrels))
    run_scores = np.zeros(len(grades))
    at = np.full(len(grades), -1, dtype=np.int64)  # each judgment's place in the ranking (-1: none)
    for r, i in enumerate(order.tolist()):
        j = index.get(rr.doc_ids[i], -1)
        if j >= 0:
            run_scores[j], at[j] = scores[r], r
    ideal = np.flatnonzero(grades > 0)
    ideal = ideal[np.lexsort((ideal, -run_scores[ideal], -grades[ideal]))]
    retrieved = at[ideal] >= 0
    return at[ideal][retrieved], np.flatnonzero(retrieved)


def compat(rr: ResRels, p: float, normalize: bool, qrels_order: bool = False) -> float:
    order = ids_ascending(rr)
    grades = rr.rels[order]
    scores = rr.scores[order] if rr.scores is not None else np.zeros(rr.num_ret)
    levels = rr.rel_levels
    n_ideal = int(levels[1:].sum()) if len(levels) > 1 else 0
    depth = max(rr.num_ret, n_ideal)
    if not n_ideal or not depth:
        return 0.0
    if qrels_order:
        rank, pos = _ideal_in_qrels_order(rr, order, scores)
        return _overlap(rank, pos, depth, n_ideal, p, normalize)
    rank = np.flatnonzero(grades > 0)  # the retrieved documents of the ideal ranking
    g, s = grades[rank], scores[rank]
    # the ideal: grade descending; in a grade, score descending (ties in ranking order), the
    # unretrieved ones (score 0) after those of score >= 0
    ideal_order = np.lexsort((rank, -s, -g))
    start = np.concatenate([[0], np.cumsum(levels[::-1][:-1])])[::-1]  # first ideal position per grade
    pos = np.empty(len(rank), dtype=np.int64)
    seen = np.zeros(len(levels), dtype=np.int64)
    retrieved = np.bincount(g, minlength=len(levels))
    for i in ideal_order.tolist():
        grade = int(g[i])
        j = int(seen[grade])
        seen[grade] += 1
        skip = levels[grade] - retrieved[grade] if s[i] < 0 else 0  # negatives after the unretrieved
        pos[i] = start[grade] + j + skip
    return _overlap(rank, pos, depth, n_ideal, p, normalize)


def _overlap(rank: np.ndarray, pos: np.ndarray, depth: int, n_ideal: int, p: float, normalize: bool) -> float:
    """Compat from the ranking and ideal positions of the documents in both rankings."""
    found = np.bincount(np.maximum(rank, pos), minlength=depth)[:depth]
    value = _rbo(np.cumsum(found).astype(np.float64), p)
    if normalize:
        best = _rbo(np.minimum(np.arange(1, depth + 1), n_ideal).astype(np.float64), p)
        if best > 0.0:
            value /= best
    return value


def rbp_binary(rr: ResRels, p: float) -> float:
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBP: the persistence p must be in (0, 1), got {p!r}")
    weights = p ** np.arange(rr.num_ret, dtype=np.float64)
    return (1.0 - p) * seqsum(weights[rr.is_rel])


def ndcg_exp_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    grades = np.arange(len(rr.rel_levels))
    ideal_grades = np.repeat(grades[::-1], rr.rel_levels[::-1])
    ideal = np.exp2(ideal_grades[ideal_grades > 0].astype(np.float64)) - 1.0
    if not len(ideal):
        return [0.0] * len(cutoffs)
    g = np.exp2(np.maximum(rr.rels, 0).astype(np.float64)) - 1.0
    dcg = per_query.dcg_at(g[None, :], cutoffs, "trec_eval")[0]
    return (dcg / per_query.dcg_at(ideal[None, :], cutoffs, "trec_eval")[0]).tolist()  # type: ignore[no-any-return]


def ndcg_gains(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    """``pairs``: ``(grade, gain)`` as trec_eval's ndcg takes them, and ``("cut", k)`` for a cutoff."""
    cut = next((int(v) for name, v in pairs if name == "cut"), None)
    gains = setup_gains(rr, [p for p in pairs if p[0] != "cut"])
    dcg = per_query.dcg_at(gains.of(rr.rels)[None, :], [cut], "trec_eval")[0, 0]
    idcg = per_query.dcg_at(gains.ideal()[None, :], [cut], "trec_eval")[0, 0]
    return float(dcg / idcg) if idcg > 0.0 else 0.0
