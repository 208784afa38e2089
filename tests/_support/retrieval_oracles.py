"""Slow, obviously correct retrieval measures (one query at a time, plain Python) and random
TREC-style data for the retrieval tests.

Every oracle takes one query as ``ranked`` (grades in rank order), ``R`` (relevant documents in the
collection) and, for nDCG, ``judged`` (all judged grades). Ranking: score descending, ties by
document id descending as strings (trec_eval), or input order without ids.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def rank(grades: list[float], scores: list[float], doc_ids: list[str] | None = None) -> list[float]:
    idx = list(range(len(grades)))
    if doc_ids is not None:
        idx.sort(key=lambda i: doc_ids[i], reverse=True)
    idx.sort(key=lambda i: -scores[i])  # stable: keeps the id order (or input order) among ties
    return [grades[i] for i in idx]


def is_rel(g: float, rel_level: float = 1) -> bool:
    return g >= rel_level


def precision_at_k(ranked: list[float], k: int, rel_level: float = 1) -> float:
    return sum(1 for g in ranked[:k] if is_rel(g, rel_level)) / k


def recall_at_k(ranked: list[float], k: int, R: int, rel_level: float = 1) -> float:
    return 0.0 if R == 0 else sum(1 for g in ranked[:k] if is_rel(g, rel_level)) / R


def r_precision(ranked: list[float], R: int, rel_level: float = 1) -> float:
    return 0.0 if R == 0 else sum(1 for g in ranked[:R] if is_rel(g, rel_level)) / R


def precisions(ranked: list[float], rel_level: float = 1) -> list[tuple[float, int]]:
    """(precision at rank i, hits so far) for i = 1..len."""
    out, hits = [], 0
    for i, g in enumerate(ranked, start=1):
        hits += is_rel(g, rel_level)
        out.append((hits / i, hits))
    return out


def average_precision(
    ranked: list[float], R: int, k: int | None = None, denominator: str = "R", rel_level: float = 1
) -> float:
    top = ranked if k is None else ranked[:k]
    total = sum(p for (p, _), g in zip(precisions(top, rel_level), top, strict=True) if is_rel(g, rel_level))
    denom = R if (k is None or denominator == "R") else min(k, R)
    return 0.0 if denom == 0 else total / denom


def reciprocal_rank(ranked: list[float], k: int | None = None, rel_level: float = 1) -> float:
    for i, g in enumerate(ranked if k is None else ranked[:k], start=1):
        if is_rel(g, rel_level):
            return 1.0 / i
    return 0.0


def gain(g: float, kind: str = "linear") -> float:
    g = max(g, 0.0)
    return g if kind == "linear" else 2.0**g - 1.0


def dcg(ranked: list[float], k: int | None = None, kind: str = "linear") -> float:
    top = ranked if k is None else ranked[:k]
    return sum(gain(g, kind) / math.log2(i + 1) for i, g in enumerate(top, start=1))


def ndcg(
    ranked: list[float], judged: list[float] | None, k: int | None = None, kind: str = "linear"
) -> float:
    ideal = sorted(judged if judged is not None else ranked, reverse=True)
    idcg = dcg(ideal, k, kind)
    return 0.0 if idcg == 0 else dcg(ranked, k, kind) / idcg


def cg(ranked: list[float], k: int) -> float:
    return sum(max(g, 0.0) for g in ranked[:k])


def precision_at_recall(ranked: list[float], R: int, r: float, rel_level: float = 1) -> float:
    if R == 0:
        return 0.0
    for p, hits in precisions(ranked, rel_level):
        if hits / R >= r:
            return p
    return 0.0


def interpolated_precision(ranked: list[float], R: int, r: float, rel_level: float = 1) -> float:
    if R == 0:
        return 0.0
    best = [p for p, hits in precisions(ranked, rel_level) if hits / R >= r]
    return max(best) if best else 0.0


def eleven_point(ranked: list[float], R: int, rel_level: float = 1) -> float:
    return sum(interpolated_precision(ranked, R, i / 10, rel_level) for i in range(11)) / 11


def efficiency(ranked: list[float], R: int, rel_level: float = 1) -> float:
    if R == 0 or not ranked:
        return 0.0
    d = min(math.hypot(1 - hits / R, 1 - p) for p, hits in precisions(ranked, rel_level))
    return 1 - d / math.sqrt(2)


def tie_averaged(grades: list[float], scores: list[float], values: list[float]) -> list[float]:
    """Values in rank order, each replaced by the mean over documents with the same score."""
    order = sorted(range(len(grades)), key=lambda i: -scores[i])
    out = []
    for i in order:
        same = [values[j] for j in range(len(grades)) if scores[j] == scores[i]]
        out.append(sum(same) / len(same))
    return out


# -- random TREC-like data ------------------------------------------------------------------------


def random_trec(
    rng: np.random.Generator,
    n_queries: int,
    max_docs: int = 12,
    grades: tuple[int, ...] = (-1, 0, 0, 1, 2, 3),
    tie_levels: int = 4,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """qrels and run dicts (pytrec_eval's input) with graded and negative grades, heavy ties,
    unjudged retrieved documents, queries without relevant documents and one-document queries."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        q = f"q{qi}"
        pool = [f"d{j}" for j in rng.permutation(3 * max_docs)[: 2 * max_docs]]
        n_judged = int(rng.integers(1, max_docs + 1))
        kind = rng.random()
        judged_grades = rng.choice(grades, size=n_judged)
        if kind < 0.15:  # no relevant documents at all
            judged_grades = np.minimum(judged_grades, 0)
        qrels[q] = {pool[j]: int(judged_grades[j]) for j in range(n_judged)}
        n_ret = 1 if kind > 0.9 else int(rng.integers(1, max_docs + 1))
        retrieved = rng.choice(pool, size=n_ret, replace=False)  # judged and unjudged documents
        scores = rng.integers(0, tie_levels, size=n_ret) / 2.0
        run[q] = {str(d): float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


def flatten(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The run as flat arrays for ``update(..., query_ids=...)`` plus per-query helpers."""
    rel, sc, docs, qids = [], [], [], []
    for q, docmap in run.items():
        for d, s in docmap.items():
            rel.append(qrels.get(q, {}).get(d, 0))
            sc.append(s)
            docs.append(d)
            qids.append(q)
    judged = {q: np.array(list(qrels.get(q, {}).values()), dtype=float) for q in run}
    return {
        "relevance": np.array(rel, dtype=float),
        "scores": np.array(sc),
        "doc_ids": np.array(docs),
        "query_ids": np.array(qids),
        "judged": judged,
    }


def per_query_inputs(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], q: str
) -> dict[str, Any]:
    docs = list(run[q])
    return {
        "relevance": [qrels[q].get(d, 0) for d in docs],
        "scores": [run[q][d] for d in docs],
        "doc_ids": docs,
        "judged": list(qrels[q].values()),
    }


def ranked_query(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], q: str
) -> tuple[list[float], int, list[float]]:
    """(ranked grades, R at rel_level 1, judged grades) of one query, trec_eval's order."""
    inp = per_query_inputs(qrels, run, q)
    ranked = rank([float(g) for g in inp["relevance"]], inp["scores"], inp["doc_ids"])
    judged = [float(g) for g in inp["judged"]]
    return ranked, sum(1 for g in judged if g >= 1), judged
