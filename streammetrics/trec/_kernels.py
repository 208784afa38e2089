"""Per-query kernels of trec_eval's measures, on one query's ranked relevance list.

A query is described by :class:`ResRels` (trec_eval's ``RES_RELS``): the judgment of each retrieved
document in rank order -- its grade, :data:`NONPOOL` (``-1``, not in the qrels) or :data:`UNJUDGED`
(``-2``, in the qrels with a negative grade) -- plus the number of judged documents at each grade.
Each kernel returns the query's values (one per cutoff or parameter) computed with trec_eval's
definitions (read from trec_eval 10.0's ``m_*.c``: formulas, guards, the order of floating-point
sums). The IR measures the library shares (AP, ``map_cut``, P, recall, success, R-precision,
reciprocal rank, ``ndcg`` / ``ndcg_cut``) read the one per-query kernel,
:class:`streammetrics._queries.per_query.Ranked` and :func:`~streammetrics._queries.per_query.dcg_at`
with ``rounding="trec_eval"`` (this query as a row, :attr:`ResRels.ranked`); the batched fast path
(:mod:`.batched`) reads the same kernel over many queries, so both agree to the last bit. Cost:
O(retrieved) numpy work per kernel; the few kernels whose definition is a walk with state
(``ndcg_rel``, ``Rndcg``) loop in Python over the retrieved list.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from streammetrics._queries import per_query

NONPOOL = -1
UNJUDGED = -2
MIN_GEO_MEAN = 0.00001
with np.errstate(invalid="ignore"):
    #: C's 0.0 / 0.0 as this machine computes it (x86-64: a NaN with the sign bit set, which
    #: printf prints as ``-nan``; arm64: ``nan``): trec_eval's value of ``iprec_at_recall`` /
    #: ``11pt_avg`` for a query without retrieved documents (``-J`` or ``-M 0``).
    C_ZERO_BY_ZERO = float(np.divide(np.float64(0.0), np.float64(0.0)))
INFAP_EPSILON = 0.00001


def seqsum(x: np.ndarray) -> float:
    """Left-to-right sum (C's loop order; ``np.sum`` is pairwise)."""
    return float(np.cumsum(x)[-1]) if len(x) else 0.0


@dataclass
class ResRels:
    """One query's ranked judgments (trec_eval's RES_RELS) and the derived arrays the kernels share.

    ``rels`` holds the grade of each retrieved document in rank order (``-1`` not in the qrels,
    ``-2`` in the qrels but unjudged); ``rel_levels[g]`` the number of judged documents of grade
    ``g >= 0``; ``level`` the relevance level (``-l``); ``num_docs`` the collection size (``-N``);
    ``scores`` the score of each ranked document as ranked (float32-rounded for trec_eval 9;
    None: not known), for other tools' tie orders and ideal rankings (``RR(ties='msmarco')``,
    ``Compat``); ``doc_ids`` the ranked documents' ids and ``qrels`` the query's judgments
    ``{docno: grade}`` in the qrels' order (None: not known), for ir_measures' order of ties in
    ``Compat``'s ideal ranking (``Compat(ties='qrels')``).
    """

    rels: np.ndarray
    rel_levels: np.ndarray
    level: float = 1
    num_docs: int = 0
    scores: np.ndarray | None = None
    doc_ids: Sequence[str] | None = None
    qrels: Mapping[str, int] | None = None
    #: each ranked document's place in the run's own order (score descending as read, ties in the
    #: run's line order: ir_measures'); None: not known (``Accuracy(ties='run')`` needs it)
    run_order: np.ndarray | None = None
    num_ret: int = field(init=False)
    num_rel: int = field(init=False)
    num_rel_ret: int = field(init=False)
    num_nonpool: int = field(init=False)
    num_unjudged: int = field(init=False)
    num_rel_levels: int = field(init=False)

    def __post_init__(self) -> None:
        r = self.rels
        self.num_ret = len(r)
        self.num_nonpool = int(np.count_nonzero(r == NONPOOL))
        self.num_unjudged = int(np.count_nonzero(r == UNJUDGED))
        self.num_rel_ret = int(np.count_nonzero((r >= 0) & (r >= self.level)))
        grades = np.arange(len(self.rel_levels))
        self.num_rel = int(self.rel_levels[grades >= self.level].sum())
        nz = np.flatnonzero(self.rel_levels)
        self.num_rel_levels = int(nz[-1]) + 1 if len(nz) else 0

    @functools.cached_property
    def is_rel(self) -> np.ndarray:
        return self.rels >= self.level

    @functools.cached_property
    def ranked(self) -> per_query.Ranked:
        """This query as a row of the per-query kernel, with trec_eval's rounding."""
        return per_query.Ranked(self.is_rel[None, :], "trec_eval")

    @functools.cached_property
    def R(self) -> np.ndarray:
        """``num_rel`` as the kernel takes it: float64, shape (1,)."""
        return np.array([float(self.num_rel)])

    @functools.cached_property
    def cum_rel(self) -> np.ndarray:
        return self.ranked.cum[0]

    @functools.cached_property
    def rel_pos(self) -> np.ndarray:
        return np.flatnonzero(self.is_rel)

    def rel_at(self, k: int) -> int:
        """Relevant documents in the top ``k`` (fewer retrieved: all of them)."""
        m = min(k, self.num_ret)
        return int(self.cum_rel[m - 1]) if m > 0 else 0

    @functools.cached_property
    def precision_sum(self) -> float:
        """The sum of the precisions at the relevant retrieved documents (AP's numerator; yaap's
        ``sum_probrel``)."""
        return float(self.ranked.precision_sum_at([None])[0, 0])

    @functools.cached_property
    def ap(self) -> float:
        """Average precision (trec_eval's map for this query), shared by map and gm_map."""
        return float(self.ranked.average_precision(self.R)[0])

    @functools.cached_property
    def interpolated(self) -> np.ndarray:
        """Interpolated precision at each relevant document: max precision at its rank or below."""
        if not self.num_ret:
            return np.zeros(0)
        prec = self.ranked.precision[0]
        return np.maximum.accumulate(prec[::-1])[::-1][self.rel_pos]

    def num_nonrel(self) -> int:
        """Judged nonrelevant documents (grades below the level)."""
        grades = np.arange(len(self.rel_levels))
        return int(self.rel_levels[grades < self.level].sum())


# ----------------------------------------------------------------------------------- ranked basics


def average_precision(rr: ResRels) -> float:
    return rr.ap


def yaap(rr: ResRels) -> float:
    """trec_eval's ``yaap`` (Robertson's "Yet Another Average Precision", ECIR 2012):
    ``log((1 + s) / (1 + R - s))`` with ``s`` the sum of the precisions at the relevant retrieved
    documents."""
    s = rr.precision_sum
    return math.log((1.0 + s) / (1.0 + rr.num_rel - s))


def gm_log(value: float) -> float:
    """trec_eval's per-query value of a geometric-mean measure: log(max(value, 1e-5))."""
    return math.log(max(value, MIN_GEO_MEAN))


def rprec(rr: ResRels) -> float:
    return float(rr.ranked.r_precision(rr.R)[0])


def bpref(rr: ResRels) -> float:
    r = rr.rels
    judged = r >= 0
    nonrel = judged & (r < rr.level)
    rel = judged & (r >= rr.level)
    before = np.cumsum(nonrel)[rel]
    if not len(before):
        return 0.0
    R = rr.num_rel
    denom = float(min(rr.num_nonrel(), R))
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(before > 0, 1.0 - np.minimum(before, R) / denom, 1.0)
    return seqsum(part) / R if R else seqsum(part)


def recip_rank(rr: ResRels) -> float:
    return float(rr.ranked.reciprocal_rank()[0])


def infap(rr: ResRels) -> float:
    r = rr.rels
    judged = r >= 0
    nonrel = judged & (r < rr.level)
    rel = judged & (r >= rr.level)
    pos = np.flatnonzero(rel)
    if not len(pos):
        return 0.0
    rel_sf = np.arange(1, len(pos) + 1)
    non_sf = np.cumsum(nonrel)[pos]
    unj_sf = np.cumsum(r == UNJUDGED)[pos]
    fj = pos.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel_sf - 1 + non_sf + unj_sf) / fj) * (
            (rel_sf - 1 + INFAP_EPSILON) / (rel_sf - 1 + non_sf + 2 * INFAP_EPSILON)
        )
    term = np.where(pos == 0, 1.0, term)
    s = seqsum(term)
    return s / rr.num_rel if rr.num_rel else s


def bin_g(rr: ResRels) -> float:
    pos = rr.rel_pos
    if not len(pos):
        return 0.0
    return seqsum(1.0 / np.log2(3.0 + pos - np.arange(1, len(pos) + 1))) / rr.num_rel


# ------------------------------------------------------------------------------ cutoff families


def precision_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    return rr.ranked.precision_at(cutoffs)[0].tolist()  # type: ignore[no-any-return]


def recall_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    return rr.ranked.recall_at(cutoffs, rr.R)[0].tolist()  # type: ignore[no-any-return]


def relative_precision_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    if not rr.num_rel:
        return [0.0] * len(cutoffs)
    hits = rr.ranked.hits_at(cutoffs)[0].tolist()
    return [r / min(k, rr.num_rel) for r, k in zip(hits, cutoffs, strict=True)]


def success_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    return rr.ranked.success_at(cutoffs)[0].tolist()  # type: ignore[no-any-return]


def unjudged_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    cum = np.cumsum(rr.rels < 0)
    return [(int(cum[min(k, rr.num_ret) - 1]) if min(k, rr.num_ret) else 0) / k for k in cutoffs]


def map_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    return per_query.divide(rr.ranked.precision_sum_at(cutoffs)[0], rr.R).tolist()  # type: ignore[no-any-return]


def ndcg_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    """trec_eval's ndcg_cut: gains are the grades (no gain parameters); ideal from rel_levels."""
    gains = np.where(rr.rels > 0, rr.rels, 0)[None, :]
    ideal = np.repeat(np.arange(rr.num_rel_levels - 1, 0, -1), rr.rel_levels[rr.num_rel_levels - 1 : 0 : -1])
    dcg = per_query.dcg_at(gains, cutoffs, "trec_eval")[0]
    idcg = per_query.dcg_at(ideal[None, :], cutoffs, "trec_eval")[0]
    return np.divide(dcg, idcg, out=dcg, where=idcg > 0.0).tolist()  # type: ignore[no-any-return]


def rprec_mult(rr: ResRels, mults: Sequence[float]) -> list[float]:
    out = []
    for c in mults:
        k = int(c * rr.num_rel + 0.9)
        if k > rr.num_ret:
            out.append(rr.num_rel_ret / k)
        elif k >= 1 and rr.rel_at(k):
            out.append(rr.rel_at(k) / k)
        else:
            out.append(0.0)
    return out


def recall_cutoffs(fractions: Sequence[float], num_rel: int, version: int, fused: bool = False) -> list[int]:
    """Number of relevant documents at each recall fraction ``c``: trec_eval 9.x ``(long)(c*R + 0.9)``
    (``fused``: with ``c*R + 0.9`` rounded once, as a fused multiply-add computes it -- trec_eval 9.x
    built for arm64 / macOS; without, as x86-64 builds and pytrec_eval compute it), trec_eval 10.0
    ``lround(c*R)``."""
    if version >= 10:
        return [_lround(c * num_rel) for c in fractions]
    if fused:
        return [int(float(Fraction(c) * num_rel + Fraction(0.9))) for c in fractions]
    return [int(c * num_rel + 0.9) for c in fractions]


def _lround(x: float) -> int:
    """C's lround: to nearest, halves away from zero (``x - floor(x)`` is exact)."""
    f = math.floor(abs(x))
    r = f + 1 if abs(x) - f >= 0.5 else f
    return int(r) if x >= 0 else -int(r)


def _iprec_walk(rr: ResRels, cuts: Sequence[int]) -> list[tuple[int, float]]:
    """trec_eval's bottom-up walk of iprec_at_recall / 11pt_avg: (cutoff index, value) in the
    order the walk assigns them (the order of 11pt_avg's sum)."""
    out: list[tuple[int, float]] = []
    cur = len(cuts) - 1
    nrr = len(rr.rel_pos)
    while cur >= 0 and cuts[cur] > rr.num_rel_ret:
        cur -= 1
    ip = rr.interpolated
    last = rr.num_rel_ret / rr.num_ret if rr.num_ret else C_ZERO_BY_ZERO  # trec_eval's 0/0
    for k in range(nrr, 0, -1):
        last = float(ip[k - 1])
        while cur >= 0 and k == cuts[cur]:
            out.append((cur, last))
            cur -= 1
    while cur >= 0:
        out.append((cur, last))
        cur -= 1
    return out


def iprec_at_recall(
    rr: ResRels, fractions: Sequence[float], version: int, fused: bool = False
) -> list[float]:
    vals = [0.0] * len(fractions)
    for i, v in _iprec_walk(rr, recall_cutoffs(fractions, rr.num_rel, version, fused)):
        vals[i] = v
    return vals


def eleven_pt_avg(rr: ResRels, fractions: Sequence[float], version: int, fused: bool = False) -> float:
    s = 0.0
    for _, v in _iprec_walk(rr, recall_cutoffs(fractions, rr.num_rel, version, fused)):
        s += v
    return s / len(fractions)


# ------------------------------------------------------------------------------------ set measures


def set_values(rr: ResRels, beta: float) -> dict[str, float]:
    ret, rel, hit = rr.num_ret, rr.num_rel, rr.num_rel_ret
    f = 0.0
    if hit:
        p, r = hit / ret, hit / rel
        f = (beta + 1.0) * p * r / (beta * p + r)
    return {
        "set_P": hit / ret if ret else 0.0,
        "set_relative_P": hit / min(ret, rel) if ret and rel else 0.0,
        "set_recall": hit / rel if rel else 0.0,
        "set_map": (float(hit) * float(hit)) / (float(ret) * float(rel)) if ret and rel else 0.0,
        "set_F": f,
    }


def utility(rr: ResRels, c: Sequence[float]) -> float:
    if len(c) != 4:
        raise ValueError(f"measure 'utility': needs 4 coefficients, got {len(c)}")
    ret, rel, hit = rr.num_ret, rr.num_rel, rr.num_rel_ret
    return c[0] * hit + c[1] * (ret - hit) + c[2] * (rel - hit) + c[3] * (rr.num_docs + hit - ret - rel)


def relstring(rr: ResRels, length: float) -> str:
    chars = []
    for g in rr.rels[: max(0, min(int(length), rr.num_ret))].tolist():
        chars.append(
            ">" if g > 9 else str(g) if g >= 0 else "-" if g == NONPOOL else "." if g == UNJUDGED else "<"
        )
    return "".join(chars)


# ----------------------------------------------------------------------------------- gain measures


@dataclass
class Gains:
    """trec_eval's GAINS: (grade, gain, judged count) sorted by gain ascending."""

    levels: list[tuple[int, float, int]]

    def gain(self, grade: int) -> float:
        for g, gain, _ in self.levels:
            if g == grade:
                return gain
        return 0.0

    def ideal(self) -> np.ndarray:
        """The ideal ranking's gains: highest gain first, each repeated by its count, positive only."""
        out: list[float] = []
        for _, gain, count in reversed(self.levels):
            if gain <= 0.0:
                break
            out.extend([gain] * count)
        return np.array(out, dtype=np.float64)

    def of(self, rels: np.ndarray) -> np.ndarray:
        first: dict[int, float] = {}  # the first listed wins, as in get_gain
        for g, gain, _ in self.levels:
            first.setdefault(g, gain)
        return np.array([first.get(g, 0.0) for g in rels.tolist()], dtype=np.float64)


def _valid_int(s: str) -> bool:
    t = s[1:] if s[:1] in "+-" else s
    return bool(t) and t.isdigit() and t.isascii()


def setup_gains(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> Gains:
    """Gains of each grade: parameters ``grade=gain`` first, every judged grade missing from them
    gains its grade; sorted by gain with trec_eval's comparator (the difference truncated to int)."""
    levels: list[list[float]] = []
    for name, value in pairs:
        if _valid_int(name):
            levels.append([int(name), float(value), 0])
    for g in range(rr.num_rel_levels):
        hit = next((lv for lv in levels if lv[0] == g), None)
        if hit is not None:
            hit[2] = int(rr.rel_levels[g])
        else:
            levels.append([g, float(g), int(rr.rel_levels[g])])

    def by_gain(a: list[float], b: list[float]) -> int:
        return int(a[1] - b[1])

    levels.sort(key=functools.cmp_to_key(by_gain))
    return Gains([(int(g), float(gain), int(c)) for g, gain, c in levels])


def ndcg_values(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> tuple[float, float]:
    """(dcg, ideal dcg) as trec_eval's ndcg / dcg / ideal_dcg compute them."""
    gains = setup_gains(rr, pairs)
    dcg = per_query.dcg_at(gains.of(rr.rels)[None, :], [None], "trec_eval")
    idcg = per_query.dcg_at(gains.ideal()[None, :], [None], "trec_eval")
    return float(dcg[0, 0]), float(idcg[0, 0])


def ndcg(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    dcg, idcg = ndcg_values(rr, pairs)
    return dcg / idcg if idcg > 0.0 else 0.0


def normalized_gain(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    """trec_eval's G: gain discounted by log2(2 + ideal cost so far - gain so far)."""
    gains = setup_gains(rr, pairs)
    g = gains.of(rr.rels)
    ideal = gains.ideal()
    n = len(g)
    cost_ideal = np.zeros(n)
    m = min(n, len(ideal))
    cost_ideal[:m] = ideal[:m]
    cost = np.cumsum(np.maximum(cost_ideal, 1.0))
    got = np.cumsum(g)
    terms = np.where(g != 0, g / np.log2(2.0 + cost - got), 0.0)
    total_ideal = seqsum(ideal)
    return seqsum(terms) / total_ideal if total_ideal > 0.0 else 0.0


class _LevelWalk:
    """trec_eval's walk down the gain levels of the ideal ranking, one rank per :meth:`step`."""

    def __init__(self, gains: Gains) -> None:
        self.levels = gains.levels
        self.cur = len(self.levels) - 1
        self.gain = self.levels[self.cur][1] if self.cur >= 0 else 0.0
        self.count = 0

    def step(self) -> float:
        self.count += 1
        while self.cur >= 0 and self.count > self.levels[self.cur][2]:
            self.count = 1
            self.cur -= 1
            self.gain = self.levels[self.cur][1] if self.cur >= 0 else 0.0
        return self.gain


def ndcg_rel(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    gains = setup_gains(rr, pairs)
    g = gains.of(rr.rels).tolist()
    n = len(g)
    walk = _LevelWalk(gains)
    res_dcg = ideal_dcg = s = 0.0
    num_rel_ret = num_rel = 0
    i = 0
    while i < n and walk.gain > 0.0:
        if g[i] != 0:
            res_dcg += g[i] / math.log2(i + 2.0)
        if walk.step() > 0.0:
            num_rel += 1
            ideal_dcg += walk.gain / math.log2(i + 2.0)
        if g[i] > 0 and ideal_dcg:
            s += res_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < n:
        if g[i] != 0:
            res_dcg += g[i] / math.log2(i + 2.0)
        if g[i] > 0 and ideal_dcg:
            s += res_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while walk.gain > 0.0:
        if walk.step() > 0.0:
            num_rel += 1
            ideal_dcg += walk.gain / math.log2(i + 2.0)
        i += 1
    if ideal_dcg:
        s += (num_rel - num_rel_ret) * res_dcg / ideal_dcg
    return s / num_rel if s > 0.0 else 0.0


def rndcg(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    if not rr.num_rel:
        return 0.0
    gains = setup_gains(rr, pairs)
    g = gains.of(rr.rels).tolist()
    n = len(g)
    walk = _LevelWalk(gains)
    old = walk.gain
    res_dcg = ideal_dcg = s = 0.0
    changes = 0
    i = 0
    while walk.gain > 0.0:  # the ranking, then (once it is read) the rest of the ideal one
        walk.step()
        if old != walk.gain:
            if ideal_dcg > 0.0:
                s += res_dcg / ideal_dcg
                changes += 1
            old = walk.gain
        if i < n and g[i] != 0:
            res_dcg += g[i] / math.log2(i + 2.0)
        if walk.gain > 0.0:
            ideal_dcg += walk.gain / math.log2(i + 2.0)
        i += 1
    if i < n:  # the ideal ranking ended first
        while i < n:
            if g[i] != 0:
                res_dcg += g[i] / math.log2(i + 2.0)
            i += 1
        if ideal_dcg > 0.0:
            s += res_dcg / ideal_dcg
            changes += 1
    return s / changes if changes else 0.0


def rbp(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = float(value)
    gains = setup_gains(rr, pairs)
    vals = [gain for _, gain, _ in gains.levels]
    lo, hi = min([0.0, *vals]), max([0.0, *vals])
    g = gains.of(rr.rels)
    if lo < 0 or hi > 1:  # trec_eval rescales gains to [0, 1] (its min/max start uninitialised; here 0)
        table = {lv: (gain - lo) / (hi - lo) for lv, gain, _ in gains.levels}
        first: dict[int, float] = {}
        for lv, _, _ in gains.levels:
            first.setdefault(lv, table[lv])
        g = np.array([first.get(x, 0.0) for x in rr.rels.tolist()], dtype=np.float64)
    s = 0.0
    cur = 1.0
    for x in g.tolist():
        if x != 0:
            s += x * cur
        cur *= p
    return (1.0 - p) * s


def rbp_resid(rr: ResRels, pairs: Sequence[tuple[str, float]]) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = float(value)
    s = 0.0
    cur = 1.0
    unj = 0
    for x in rr.rels.tolist():
        if x < 0:
            unj += 1
            s += cur
        cur *= p
    return cur + (1 - p) * s if unj else 0.0
