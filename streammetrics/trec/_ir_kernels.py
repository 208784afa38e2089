"""Per-query kernels of the ir_measures measures that trec_eval lacks (``RR@k``, ``Judged@k``,
``ERR@k``, ``RBP``), over the same ranked judgments (:class:`._kernels.ResRels`) as trec_eval's.

* ``RR@k``: ``1 / rank`` of the first relevant document if it is in the top ``k``, else 0
  (trec_eval's ``recip_rank`` of the run cut to ``k`` documents).
* ``Judged@k``: the fraction of the top ``min(k, retrieved)`` documents that appear in the qrels
  (any grade), as ir_measures' judged provider; 0 for an empty ranking.
* ``ERR@k`` (Chapelle et al. 2009): ``sum_{r<=k} R_r / r * prod_{i<r} (1 - R_i)`` with
  ``R = (2**g - 1) / 2**gmax``, ``g`` the document's grade (0 when unjudged or negative) and
  ``gmax`` the query's highest judged grade; 0 when that is 0.
* ``RBP(p)`` (Moffat & Zobel 2008): ``(1 - p) * sum_i rel_i * p**(i - 1)`` over the whole ranking,
  ``rel_i`` binary (grade at least the relevance level).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._kernels import NONPOOL, ResRels, seqsum

__all__ = ["rr_at", "judged_at", "err_at", "rbp_binary"]


def rr_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    first = int(rr.rel_pos[0]) + 1 if len(rr.rel_pos) else 0
    return [1.0 / first if 0 < first <= k else 0.0 for k in cutoffs]


def judged_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    cum = np.cumsum(rr.rels != NONPOOL)
    out = []
    for k in cutoffs:
        m = min(k, rr.num_ret)
        out.append(int(cum[m - 1]) / m if m > 0 else 0.0)
    return out


def err_at(rr: ResRels, cutoffs: Sequence[int]) -> list[float]:
    gmax = rr.num_rel_levels - 1
    if gmax <= 0 or not rr.num_ret:
        return [0.0] * len(cutoffs)
    g = np.maximum(rr.rels, 0).astype(np.float64)
    stop = (np.exp2(g) - 1.0) / 2.0**gmax
    reach = np.concatenate([[1.0], np.cumprod(1.0 - stop)[:-1]])
    terms = stop * reach / np.arange(1, rr.num_ret + 1)
    return [seqsum(terms[: min(k, rr.num_ret)]) for k in cutoffs]


def rbp_binary(rr: ResRels, p: float) -> float:
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBP: the persistence p must be in (0, 1), got {p!r}")
    weights = p ** np.arange(rr.num_ret, dtype=np.float64)
    return (1.0 - p) * seqsum(weights[rr.is_rel])
