"""ir_measures' measure names, translated to the trec_eval measures that compute them.

``streammetrics trec`` and ``streammetrics trec-compare`` accept, besides trec_eval's names, the
names of ir_measures (with its pytrec_eval conventions), and print each value under the name the
user gave:

=============  ==========================  =============  ==========================
ir_measures    trec_eval                   ir_measures    trec_eval
=============  ==========================  =============  ==========================
``AP``         ``map``                     ``AP@k``       ``map_cut.k``
``nDCG``       ``ndcg``                    ``nDCG@k``     ``ndcg_cut.k``
``P@k``        ``P.k``                     ``R@k``        ``recall.k``
``RR``         ``recip_rank``              ``RR@k``       recip_rank of the top k
``Rprec``      ``Rprec``                   ``Bpref``      ``bpref``
``NumRet``     ``num_ret``                 ``NumRel``     ``num_rel``
``NumRelRet``  ``num_rel_ret``             ``iprec@r``    ``iprec_at_recall.r``
``infAP``      ``infAP``                   ``Judged@k``   judged share of the top k
``ERR@k``      (none: Chapelle et al.)     ``RBP(p=x)``   (none: binary, default p 0.8)
=============  ==========================  =============  ==========================

(``IPrec@r`` is accepted for ``iprec@r``.) A value asked for both ways (``P@5`` and ``P.5`` or
``official``) is printed once, under the ir_measures name. See :mod:`._ir_kernels` for the
measures trec_eval lacks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._measures import BY_NAME, NICKNAMES, atof

__all__ = ["translate", "IR_NAMES"]

_PLAIN = {"AP": "map", "nDCG": "ndcg", "RR": "recip_rank", "Rprec": "Rprec", "Bpref": "bpref",
          "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret", "infAP": "infAP"}  # fmt: skip
_CUT = {"AP": "map_cut", "nDCG": "ndcg_cut", "P": "P", "R": "recall", "RR": "RR_cut", "Judged": "Judged",
        "ERR": "ERR_cut"}  # fmt: skip
IR_NAMES = (*_PLAIN, *(f"{n}@k" for n in _CUT), "iprec@r", "RBP(p=x)")
_AT = re.compile(r"^(\w+)@(\d+)$")
_IPREC = re.compile(r"^(?:iprec|IPrec)@(\d*\.?\d+)$")
_RBP = re.compile(r"^RBP(?:\(p=(\d*\.?\d+)\))?$")


def _ir_name(arg: str) -> tuple[str, str | None, str] | None:
    """``(trec_eval measure, parameter, printed value name)`` of an ir_measures name, else None."""
    if arg in _PLAIN:
        return _PLAIN[arg], None, _PLAIN[arg]
    if (m := _AT.match(arg)) and m.group(1) in _CUT:
        k = int(m.group(2))
        if k <= 0:
            raise ValueError(f"measure {arg!r}: the cutoff must be positive")
        base = _CUT[m.group(1)]
        return base, str(k), f"{base}_{k}"
    if m := _IPREC.match(arg):
        r = float(m.group(1))
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"measure {arg!r}: the recall level must be in [0, 1]")
        return "iprec_at_recall", m.group(1), f"iprec_at_recall_{r:3.2f}"
    if m := _RBP.match(arg):
        text = m.group(1) or "0.8"
        if not 0.0 < float(text) < 1.0:
            raise ValueError(f"measure {arg!r}: the persistence p must be in (0, 1)")
        return "RBP_p", text, f"RBP_p_{text}"
    return None


def _key(base: str, text: str) -> float:
    return float(text) if BY_NAME[base].kind in ("double_cuts", "doubles") else float(int(atof(text)))


def translate(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """trec_eval ``-m`` arguments for ``args`` (ir_measures and trec_eval names mixed) and the
    printed name of each value asked for by an ir_measures name: ``{trec_eval value name: name}``.

    Raises ValueError naming the argument for a malformed ir_measures name, or two ``RBP`` with
    different ``p``.
    """
    params: dict[str, dict[float, str]] = {}
    plain: set[str] = set()
    rename: dict[str, str] = {}
    rest: list[str] = []
    for arg in args:
        found = _ir_name(arg)
        if found is None:
            rest.append(arg)
            continue
        base, text, value_name = found
        rename[value_name] = arg
        if text is None:
            plain.add(base)
        else:
            params.setdefault(base, {}).setdefault(_key(base, text), text)
    if len(params.get("RBP_p", {})) > 1:
        given = sorted(params["RBP_p"].values())
        raise ValueError(f"measures RBP with p in {given!r}: only one RBP persistence p at a time")
    out: list[str] = []
    for arg in rest:  # a trec_eval argument that also names a cut measure: merge its cutoffs
        base, dot, text = arg.partition(".")
        if base in params and dot:
            for t in text.split(","):
                params[base].setdefault(_key(base, t), t)
            continue
        for b in params:
            if base == b or b in NICKNAMES.get(base, ()):
                for v in BY_NAME[b].default:
                    params[b].setdefault(float(v), str(v))
        out.append(arg)
    out.extend(sorted(plain))
    out.extend(f"{b}.{','.join(t for _, t in sorted(cuts.items()))}" for b, cuts in params.items())
    return out, rename
