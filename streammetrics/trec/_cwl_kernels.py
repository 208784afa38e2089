"""Per-query kernels of the C/W/L user-model measures of cwl_eval (Azzopardi, Thomas & Moffat
2019), as ir_measures computes them with its cwl_eval provider: ``NERR8``, ``NERR9``, ``NERR10``,
``NERR11`` (Azzopardi, Mackenzie & Moffat 2021), ``SDCG``, ``INST``, ``INSQ`` and ``BPM``.

A C/W/L measure is a user model: a user reading the ranking down from the top continues from
rank ``i`` to ``i + 1`` with probability ``C_i``; the value is the expected utility per
document inspected, ``sum_i W_i g_i`` with ``W_i = prod_{j<i} C_j / sum_k prod_{j<k} C_j``.
As cwl_eval (and ir_measures, which fixes its depth) computes it:

* the ranking is cut to :data:`DEPTH` (1000) documents and padded to 1000 ranks with documents
  of gain 0: the sums run over ranks ``1..1000`` (``C_1000`` is never used);
* a document's gain is its grade ``g`` (0 when negative), clipped to ``[min_rel, max_rel]`` and
  scaled, ``(clip(g) - min_rel) / (max_rel - min_rel)``; a document missing from the qrels has
  gain 0 (with ``min_rel < 0`` a judged non-relevant document gains more than an unjudged one);
* every document costs 1 (no cost file);
* ``G_i`` is the gain accumulated to rank ``i`` inclusive (left-to-right float sums).

The continuation probabilities, for rank ``i`` (1-based) and gain ``g_i``:

* ``NERR8@k``: ``1 - g_i`` for ``i < k``, else 0;
* ``NERR9@k``: ``i / (i + 1) * (1 - g_i)`` for ``i < k``, else 0;
* ``NERR10(p)``: ``p (1 - g_i)``;
* ``NERR11(T)``: ``((i + 2T - 1) / (i + 2T))**2 (1 - g_i)``;
* ``SDCG@k``: ``log2(i + 1) / log2(i + 2)`` for ``i < k``, else 0 (so ``W_i`` is proportional to
  ``1 / log2(i + 1)`` over the top k: DCG@k scaled by the DCG@k of all-relevant gains);
* ``INST(T)``: ``((i + T + T_i - 1) / (i + T + T_i))**2`` with ``T_i = T - G_i``;
* ``INSQ(T)``: ``((i + 2T - 1) / (i + 2T))**2``;
* ``BPM(T)@k`` (static Bejeweled Player Model): 1 while ``G_i < T`` and ``i < k`` (the cost so far
  below ``k``), else 0 -- the mean gain of the top ``m`` ranks, ``m`` the first rank where the
  gain reaches ``T``, or ``k``, or 1000, whichever comes first.

``ties='run'`` (the pair ``run=1``) ranks the documents as ir_measures gives them to cwl_eval:
score descending as read (doubles), ties in the run's own order (``ResRels.run_order``: the run
file's line order, or the order of a query's rows); the default ranks as trec_eval (ties by
document id descending).

Each value lies in [0, 1]. An empty ranking is 0, as ir_measures reports a query of the qrels
missing from the run. Cost: O(:data:`DEPTH`) numpy work per query and measure, whatever the
number of documents retrieved (cwl_eval's padded depth).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ._kernels import NONPOOL, ResRels

__all__ = ["DEPTH", "BASES", "IR_PARAMS", "check", "request", "cwl_value"]

#: cwl_eval's depth (its ``max_n``, which ir_measures fixes): ranks evaluated and padded to.
DEPTH = 1000
#: The largest |min_rel|, |max_rel| (their difference stays an exact double).
REL_BOUND = 2**52
#: ir_measures name -> its parameters beside ``min_rel`` and ``max_rel`` (None: required).
IR_PARAMS: dict[str, dict[str, float | None]] = {
    "NERR8": {"cutoff": None},
    "NERR9": {"cutoff": None},
    "NERR10": {"p": 0.9},
    "NERR11": {"T": 1.0},
    "SDCG": {"cutoff": None},
    "INST": {"T": 1.0},
    "INSQ": {"T": 1.0},
    "BPM": {"cutoff": None, "T": 1.0},
}
#: The trec measure computing each (``cwl_INST``, ...: :mod:`._measures`).
BASES = {f"cwl_{name}": name for name in IR_PARAMS}
_RANKS = np.arange(1, DEPTH + 1, dtype=np.float64)
_NERR9_STEP = _RANKS / (_RANKS + 1.0)
_SDCG_STEP = np.log2(_RANKS + 1.0) / np.log2(_RANKS + 2.0)


def _bad(where: str, what: str) -> ValueError:
    return ValueError(f"measure {where!r}: {what}")


def check(base: str, pairs: Sequence[tuple[str, float]], where: str) -> dict[str, float]:
    """The parameters of the C/W/L measure ``base`` (``cwl_INST``, ...) as ``{name: value}``,
    ir_measures' defaults filled in (``min_rel=0``, ``T=1``, ``p=0.9``) and checked: only the
    measure's own (``cutoff``, ``p``, ``T``) and ``min_rel``, ``max_rel``, each at most once, with
    ``cutoff`` and ``max_rel`` given; ``cutoff`` an integer in [1, 2**63 - 1]; ``p`` in (0, 1];
    ``T`` in (0, 2**52]; ``min_rel`` < ``max_rel`` integers in [-2**52, 2**52]; ``run`` 0 or 1
    (1: ties in the run's order, kept last; 0, the default, left out). ValueError naming
    ``where`` and the first bad parameter. O(parameters).

    Examples
    --------
    >>> check("cwl_INST", [("T", 2.0), ("max_rel", 3.0)], "INST(T=2,max_rel=3)")
    {'T': 2.0, 'min_rel': 0.0, 'max_rel': 3.0}
    """
    name = BASES[base]
    defaults: dict[str, float | None] = {**IR_PARAMS[name], "min_rel": 0.0, "max_rel": None}
    got: dict[str, float] = {}
    runs = [float(v) for k, v in pairs if k == "run"]
    if len(runs) > 1:
        raise _bad(where, "run given twice")
    if runs and runs[0] not in (0.0, 1.0):
        raise _bad(where, f"run must be 0 (ties by id, trec_eval's) or 1 (the run's order), got {runs[0]!r}")
    for key, value in pairs:
        if key == "run":
            continue
        if key not in defaults:
            raise _bad(where, f"{name} takes no parameter {key!r} (takes {', '.join(defaults)})")
        if key in got:
            raise _bad(where, f"{key} given twice")
        got[key] = float(value)
    for key, default in defaults.items():
        if key not in got and default is None:
            example = f"{name}(max_rel=3)" + ("@10" if "cutoff" in defaults else "")
            raise _bad(where, f"{name} needs {key} (as in {example})")
        got.setdefault(key, float(default or 0.0))
    got = {key: got[key] for key in defaults}
    k = got.get("cutoff")
    if k is not None and not (k == math.floor(k) and 1 <= k <= 2.0**63):  # (2**63 - 1 as a double)
        raise _bad(where, f"cutoff must be an integer in [1, 2**63 - 1], got {k!r}")
    p = got.get("p")
    if p is not None and not 0.0 < p <= 1.0:
        raise _bad(where, f"the persistence p must be in (0, 1], got {p!r}")
    t = got.get("T")
    if t is not None and not 0.0 < t <= REL_BOUND:
        raise _bad(where, f"the desired gain T must be in (0, 2**52], got {t!r}")
    for key in ("min_rel", "max_rel"):
        v = got[key]
        if not (v == math.floor(v) and abs(v) <= REL_BOUND):
            raise _bad(where, f"{key} must be an integer in [-2**52, 2**52], got {v!r}")
    if not got["min_rel"] < got["max_rel"]:
        raise _bad(where, f"min_rel must be less than max_rel, got {got['min_rel']:g} and {got['max_rel']:g}")
    if runs and runs[0] == 1.0:
        got["run"] = 1.0
    return got


def request(text: str, name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    """The trec measure (``cwl_INST``, ...) and its parameter text for the ir_measures measure
    ``name`` with ``params`` (parsed from ``text``: ``cutoff``, ``p``, ``T``, ``min_rel``,
    ``max_rel``, SDCG's ``dcg``, ``ties``: ``'trec_eval'``, the default, or ``'run'``, the pair
    ``run=1``), checked and completed by :func:`check`. ValueError naming ``text``. O(parameters).

    Examples
    --------
    >>> request("INST(T=2,max_rel=3)", "INST", {"T": 2, "max_rel": 3})
    ('cwl_INST', 'T=2.0,min_rel=0,max_rel=3')
    """
    given = dict(params)
    if name == "SDCG" and given.pop("dcg", "log2") != "log2":
        raise _bad(text, f"SDCG's dcg must be 'log2' (cwl_eval's only one), got {params['dcg']!r}")
    ties = given.pop("ties", "trec_eval")
    if ties not in ("trec_eval", "run"):
        raise _bad(text, "ties must be 'trec_eval' (ids descending, the default) or 'run' (the run's order, "
                         f"ir_measures' cwl_eval provider), got {ties!r}")  # fmt: skip
    if ties == "run":
        given["run"] = 1
    checked = check(f"cwl_{name}", [(k, float(v)) for k, v in given.items()], text)
    out = ",".join(f"{k}={v!r}" if k in ("p", "T") else f"{k}={int(v)}" for k, v in checked.items())
    return f"cwl_{name}", out


def gains(rr: ResRels, min_rel: float, max_rel: float) -> np.ndarray:
    """The gains of ranks 1..:data:`DEPTH`: each retrieved document's grade (negative: 0) clipped
    to ``[min_rel, max_rel]`` and scaled to [0, 1]; 0 for a document missing from the qrels and
    for the padding. O(DEPTH)."""
    r = rr.rels[:DEPTH]
    out = np.zeros(DEPTH)
    if len(r):
        clipped = np.clip(np.maximum(r, 0).astype(np.float64), min_rel, max_rel)
        out[: len(r)] = np.where(r == NONPOOL, 0.0, (clipped - min_rel) / (max_rel - min_rel))
    return out


def continuation(name: str, q: Mapping[str, float], g: np.ndarray) -> np.ndarray:
    """``C_i`` of ranks 1..:data:`DEPTH` for the measure ``name`` with parameters ``q`` and the
    gains ``g`` (see the module docstring). O(DEPTH)."""
    i = _RANKS
    if name in ("NERR8", "NERR9", "SDCG"):
        head = i < q["cutoff"]
        if name == "NERR8":
            step = 1.0 - g
        elif name == "NERR9":
            step = _NERR9_STEP * (1.0 - g)
        else:
            step = _SDCG_STEP
        return np.where(head, step, 0.0)
    if name == "NERR10":
        return q["p"] * (1.0 - g)
    t = q["T"]
    if name == "BPM":
        return np.where((np.cumsum(g) < t) & (i < q["cutoff"]), 1.0, 0.0)
    x = i + t + (t - np.cumsum(g)) if name == "INST" else i + 2.0 * t  # (INSQ, NERR11: the latter)
    c = ((x - 1.0) / x) ** 2
    return c * (1.0 - g) if name == "NERR11" else c


def cwl_value(rr: ResRels, base: str, pairs: Sequence[tuple[str, float]]) -> float:
    """The expected utility per document of the C/W/L measure ``base`` (``cwl_INST``, ...) with
    the parameters ``pairs`` (as :func:`check` returns them) for one query's ranking. O(DEPTH);
    with ``run=1`` O(n log n) more for the n documents retrieved (ranked in the run's order).

    Examples
    --------
    A first document of the highest grade stops NERR8's user at rank 1:

    >>> import numpy as np
    >>> from streammetrics.trec._kernels import ResRels
    >>> rr = ResRels(rels=np.array([3, 0, 1]), rel_levels=np.array([1, 1, 0, 1]))
    >>> cwl_value(rr, "cwl_NERR8", [("cutoff", 10.0), ("min_rel", 0.0), ("max_rel", 3.0)])
    1.0
    """
    q = dict(pairs)
    if q.get("run") and rr.num_ret > 1:  # ties='run': the documents in the run's own order
        if rr.run_order is None:
            raise ValueError(f"measure {base}(ties='run'): the run's order of tied documents is not known "
                             "here; feed each query's rows in the run's order with judged={qid: {docno: "
                             "grade}} (TrecMeasures(judgments='qrels_docs'))")  # fmt: skip
        rr = replace(rr, rels=rr.rels[np.argsort(rr.run_order, kind="stable")])
    g = gains(rr, q["min_rel"], q["max_rel"])
    c = continuation(BASES[base], q, g)
    reach = np.empty(DEPTH)
    reach[0] = 1.0
    np.cumprod(c[:-1], out=reach[1:])
    return float(reach @ g) / float(reach.sum())
