"""ir_measures' measure syntax: ``Name``, ``Name@at``, ``Name(param=value, ...)``, ``Name(...)@at``.

``nDCG(cutoff=10)`` is ``nDCG@10``, ``P(rel=2)@5`` precision at 5 with grade 2 as the relevance
level, ``AP(rel=2, judged_only=True)``, ``RBP(p=0.8)``, ``IPrec@0.5`` (``@`` sets ``recall``),
``SetF(beta=0.5)``. The text is parsed as one Python expression (:mod:`ast`: no code runs), its
parameter values must be literals of the type ir_measures gives them (ints for ``cutoff`` and
``rel``, booleans for ``judged_only``, numbers for ``p``, ``recall``, ``beta``), and each measure
takes only the parameters ir_measures lets it take. :func:`parse_ir` returns what trec_eval
measure computes the value (see :mod:`.irnames` for the table); ``rel`` and ``judged_only`` are
per measure (``P(rel=2)@5`` beside ``P@5`` gives both). ranx's ``f1@5`` is F1@k (the harmonic
mean of P@k and R@k; ``f1``: of the whole ranking, trec_eval's ``set_F``). ``nDCG(dcg='exp-log2')`` is Burges'
exponential-gain nDCG, ``nDCG(gains={0: 0, 1: 1, 2: 10})`` nDCG with those gains per grade
(non-negative ints; unlisted grades gain their grade), both in :mod:`._ir_kernels`.
``RR(ties='msmarco')@10`` ranks ties as ir_measures' msmarco provider (document id ascending;
``ties='trec_eval'``, the default, descending), ``Accuracy@k`` is its accuracy provider's,
``Judged(ties='ascending')@k`` its judged provider's order of ties, ``Accuracy(ties='run')@k``
its accuracy provider's (score descending as read, ties in the run's order),
``Compat(p=0.95, normalize=True)`` its compat provider's (``ties='qrels'``: ties of the ideal
ranking in the qrels' order, as ir_measures; ``'ranking'``, the default, in the run's);
``NERR8(max_rel=3)@10``, ``NERR9``, ``NERR10(p=)``, ``NERR11(T=)``, ``SDCG``, ``INST(T=)``,
``INSQ(T=)``, ``BPM(T=)@k`` (with ``min_rel``, ``max_rel``; ``ties='run'``: ties in the run's
order, as ir_measures) its cwl_eval provider's. Not
supported (a one-line error): a cutoff on ``RBP`` (our ``RBP`` is over the whole ranking, binary
at the relevance level, as before).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from . import _cwl_kernels as cwl_kernels

__all__ = ["IrRequest", "parse_ir", "IR_MEASURES"]

_ALL = 2**31  # the "cutoff" of a measure over the whole ranking (Judged, ERR without @)
_INT, _BOOL, _NUM = (int,), (bool,), (int, float)
_REL = {"rel": _INT}
_RJ = {"rel": _INT, "judged_only": _BOOL}
_CWL = {"min_rel": _INT, "max_rel": _INT, "ties": (str,)}
# name: (parameters and their types, required parameter or None, parameter set by @)
IR_MEASURES: dict[str, tuple[dict[str, tuple[type, ...]], str | None, str]] = {
    "AP": ({"cutoff": _INT, **_RJ}, None, "cutoff"),
    "P": ({"cutoff": _INT, **_RJ}, "cutoff", "cutoff"),
    "R": ({"cutoff": _INT, **_RJ}, "cutoff", "cutoff"),
    "RR": ({"cutoff": _INT, "ties": (str,), **_RJ}, None, "cutoff"),
    "nDCG": ({"cutoff": _INT, "dcg": (str,), "gains": (dict,), "judged_only": _BOOL}, None, "cutoff"),
    "Rprec": (dict(_RJ), None, "cutoff"),
    "Bpref": (dict(_REL), None, "cutoff"),
    "infAP": (dict(_REL), None, "cutoff"),
    "IPrec": ({"recall": _NUM, **_RJ}, "recall", "recall"),
    "Success": ({"cutoff": _INT, **_RJ}, "cutoff", "cutoff"),
    "f1": ({"cutoff": _INT, "rel": _INT}, None, "cutoff"),  # ranx's F1@k (bare: of the whole ranking)
    "NumQ": ({}, None, "cutoff"),
    "NumRel": (dict(_REL), None, "cutoff"),
    "NumRet": (dict(_REL), None, "cutoff"),
    "NumRelRet": (dict(_REL), None, "cutoff"),
    "SetP": ({"relative": _BOOL, **_RJ}, None, "cutoff"),
    "SetRelP": (dict(_RJ), None, "cutoff"),
    "SetR": (dict(_REL), None, "cutoff"),
    "SetF": ({"beta": _NUM, **_RJ}, None, "cutoff"),
    "SetAP": (dict(_RJ), None, "cutoff"),
    "Judged": ({"cutoff": _INT, "ties": (str,)}, None, "cutoff"),
    "ERR": ({"cutoff": _INT}, None, "cutoff"),
    "RBP": ({"p": _NUM, "rel": _INT}, None, "cutoff"),
    "Accuracy": ({"cutoff": _INT, "rel": _INT, "ties": (str,)}, None, "cutoff"),
    "Compat": ({"p": _NUM, "normalize": _BOOL, "ties": (str,)}, None, "cutoff"),
    # the C/W/L measures of its cwl_eval provider (cutoff and max_rel required: ._cwl_kernels checks)
    "NERR8": ({"cutoff": _INT, **_CWL}, None, "cutoff"),
    "NERR9": ({"cutoff": _INT, **_CWL}, None, "cutoff"),
    "NERR10": ({"p": _NUM, **_CWL}, None, "cutoff"),
    "NERR11": ({"T": _NUM, **_CWL}, None, "cutoff"),
    "SDCG": ({"cutoff": _INT, "dcg": (str,), **_CWL}, None, "cutoff"),
    "INST": ({"T": _NUM, **_CWL}, None, "cutoff"),
    "INSQ": ({"T": _NUM, **_CWL}, None, "cutoff"),
    "BPM": ({"cutoff": _INT, "T": _NUM, **_CWL}, None, "cutoff"),
}
# bare: ir_measures' (over the whole ranking), not the trec_eval-style default cutoff (Judged_10)
_IR_FIRST = frozenset({"Judged", "Accuracy", "Compat"})
#: ndeval's diversity measures (:mod:`.diversity`): not computed from ordinary qrels
_DIVERSITY = frozenset({"alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall", "AP_IA", "MAP_IA",
                        "NRBP", "nNRBP", "α_nDCG", "α_DCG"})  # fmt: skip
_ALIASES = {"MAP": "AP", "Precision": "P", "Recall": "R", "MRR": "RR", "NDCG": "nDCG", "RPrec": "Rprec",
            "BPref": "Bpref", "iprec": "IPrec"}  # fmt: skip


@dataclass(frozen=True)
class IrRequest:
    """One ir_measures measure: the trec_eval measure ``base`` with parameter text ``param``
    (None: none), the trec_eval name of its value, and its own ``rel`` (None: the global level)
    and ``judged_only``.

    Attributes
    ----------
    base : str
        The trec_eval measure that computes the value (``"P"``, ``"ndcg_cut"``).
    param : str or None
        Its parameter text, as trec_eval's ``-m base.param`` takes it (None: no parameter).
    value_name : str
        The name trec_eval prints for the value (``"P_5"``).
    rel : int or None, default=None
        The measure's own relevance level (None: the evaluation's).
    judged_only : bool, default=False
        Whether unjudged documents are dropped for this measure only.

    Examples
    --------
    >>> from streammetrics.trec.irparse import IrRequest, parse_ir
    >>> parse_ir("P(rel=2)@5", frozenset({"P", "map"}))
    IrRequest(base='P', param='5', value_name='P_5', rel=2, judged_only=False)
    >>> IrRequest("ndcg_cut", "10", "ndcg_cut_10") == parse_ir("nDCG@10", frozenset())
    True
    """

    base: str
    param: str | None
    value_name: str
    rel: int | None = None
    judged_only: bool = False


def _literal(node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"measure {where!r}: parameter values must be literals (numbers, strings, "
                         "True/False)") from None  # fmt: skip


def _syntax(text: str) -> tuple[str, dict[str, Any]] | None:
    """(name, parameters) of ``Name``, ``Name@x``, ``Name(k=v, ...)``, ``Name(...)@x``; None for
    anything else (a trec_eval measure such as ``P.5,10`` or ``ndcg.1=3``)."""
    try:
        body = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    at: Any = None
    has_at = isinstance(body, ast.BinOp) and isinstance(body.op, ast.MatMult)
    if isinstance(body, ast.BinOp) and isinstance(body.op, ast.MatMult):
        at = _literal(body.right, text)
        body = body.left
    params: dict[str, Any] = {}
    if isinstance(body, ast.Call):
        if body.args or any(k.arg is None for k in body.keywords):
            raise ValueError(f"measure {text!r}: parameters must be named, as in P(rel=2)@5")
        for kw in body.keywords:
            params[str(kw.arg)] = _literal(kw.value, text)
        body = body.func
    if not isinstance(body, ast.Name):
        return None
    if has_at:
        params["@"] = at
    return body.id, params


def parse_ir(text: str, trec_names: frozenset[str]) -> IrRequest | None:
    """The trec_eval form of an ir_measures measure, or None when ``text`` is not one (a bare
    name in ``trec_names`` -- trec_eval's measures and nicknames -- stays trec_eval's).

    Parameters
    ----------
    text : str
        A measure name: ``Name``, ``Name@at``, ``Name(param=value, ...)`` or ``Name(...)@at``.
    trec_names : frozenset of str
        trec_eval's measure names and nicknames: a bare name among them is left to trec_eval.

    Returns
    -------
    IrRequest or None
        The trec_eval measure computing the value, or None if ``text`` is not an ir_measures name.

    Raises
    ------
    ValueError
        Naming the measure: an unknown ir_measures name, a parameter the measure does not take, a
        missing or mistyped value, or a value out of range.

    Examples
    --------
    >>> from streammetrics.trec.irparse import parse_ir
    >>> parse_ir("nDCG@10", frozenset({"map"}))
    IrRequest(base='ndcg_cut', param='10', value_name='ndcg_cut_10', rel=None, judged_only=False)
    >>> parse_ir("map", frozenset({"map"})) is None  # trec_eval's own name
    True
    """
    found = _syntax(text)
    if found is None:
        return None
    name, params = found
    if name in _DIVERSITY and name not in trec_names:
        raise ValueError(f"measure {text!r}: a diversity measure (ndeval's), which reads subtopic qrels "
                         "('topic subtopic docno judgment'): ask for it alone in streammetrics trec, or use "
                         "sm.trec.DiversityMeasures")  # fmt: skip
    if not params and name not in _IR_FIRST and (name in trec_names or name not in IR_MEASURES | _ALIASES):
        return None
    name = _ALIASES.get(name, name)
    if name not in IR_MEASURES:
        raise ValueError(f"measure {text!r}: unknown measure {name!r}; ir_measures names: "
                         f"{', '.join(IR_MEASURES)}")  # fmt: skip
    allowed, required, at_param = IR_MEASURES[name]
    if "@" in params:
        if at_param in params:
            raise ValueError(f"measure {text!r}: {at_param} given twice (by @ and by name)")
        params[at_param] = params.pop("@")
    for key, value in params.items():
        if key not in allowed:
            takes = ", ".join(allowed) or "no parameters"
            raise ValueError(f"measure {text!r}: {name} takes no parameter {key!r} (takes {takes})")
        types = allowed[key]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            kind = " or ".join(t.__name__ for t in types)
            raise ValueError(f"measure {text!r}: parameter {key} must be {kind}, got {value!r}")
    if required is not None and required not in params:
        example = "0.5" if required == "recall" else "10"
        raise ValueError(f"measure {text!r}: {name} needs {required} (as in {name}@{example})")
    return _request(text, name, params)


def _positive(text: str, params: dict[str, Any], key: str) -> int | None:
    v = params.get(key)
    if v is not None and v <= 0:
        raise ValueError(f"measure {text!r}: {key} must be positive, got {v!r}")
    if v is not None and v > 2**63 - 1:
        raise ValueError(f"measure {text!r}: {key} must be at most 2**63 - 1, got {v!r}")
    return v


def _request(text: str, name: str, params: dict[str, Any]) -> IrRequest:
    k = _positive(text, params, "cutoff")
    rel = params.get("rel")
    jo = bool(params.get("judged_only", False))

    def req(base: str, param: Any = None, value: str | None = None, r: int | None = rel) -> IrRequest:
        shown = value or (base if param is None else f"{base}_{param}")
        return IrRequest(base, None if param is None else str(param), shown, r, jo)

    if name == "nDCG":
        dcg = params.get("dcg", "log2")
        if dcg not in ("log2", "exp-log2"):
            raise ValueError(f"measure {text!r}: dcg must be 'log2' (trec_eval's) or 'exp-log2', got {dcg!r}")
        gains = params.get("gains")
        if gains:
            if dcg != "log2":
                raise ValueError(f"measure {text!r}: gains= goes with dcg='log2' only (as in ir_measures)")
            for g, v in gains.items():
                if type(g) is not int or type(v) is not int or g < 0 or v < 0:
                    raise ValueError(f"measure {text!r}: gains must map grades to gains, non-negative ints, "
                                     f"got {g!r}: {v!r}")  # fmt: skip
            pairs = ",".join(f"{g}={gains[g]}" for g in sorted(gains))
            return req("nDCG_gains", pairs if k is None else f"{pairs},cut={k}")
        if dcg == "exp-log2":
            return req("nDCG_exp", k if k is not None else _ALL)
        return req("ndcg") if k is None else req("ndcg_cut", k)
    if name == "RR" and params.get("ties", "trec_eval") != "trec_eval":
        if params["ties"] != "msmarco":
            raise ValueError(f"measure {text!r}: ties must be 'trec_eval' (ids descending, the default) or "
                             "'msmarco' (ids ascending, ir_measures' msmarco provider), got "
                             f"{params['ties']!r}")  # fmt: skip
        return req("RR_msmarco", k if k is not None else _ALL)
    if name in ("AP", "RR"):
        base, cut = {"AP": ("map", "map_cut"), "RR": ("recip_rank", "RR_cut")}[name]
        return req(base) if k is None else req(cut, k)
    if name == "f1":  # ranx's: F1@k; without a cutoff of every retrieved document, trec_eval's set_F
        return req("F1_cut", k) if k is not None else req("set_F", repr(1.0))
    if name in ("P", "R", "Success"):
        return req({"P": "P", "R": "recall", "Success": "success"}[name], k)
    if name == "IPrec":
        r = float(params["recall"])
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"measure {text!r}: recall must be in [0, 1], got {r!r}")
        return req("iprec_at_recall", repr(r), f"iprec_at_recall_{r:3.2f}")
    if name == "Judged" and params.get("ties", "trec_eval") != "trec_eval":
        if params["ties"] != "ascending":
            raise ValueError(f"measure {text!r}: ties must be 'trec_eval' (ids descending, the default) or "
                             "'ascending' (ids ascending, ir_measures' judged provider), got "
                             f"{params['ties']!r}")  # fmt: skip
        return req("Judged_asc", k if k is not None else _ALL)
    if name == "Accuracy" and params.get("ties", "trec_eval") != "trec_eval":
        if params["ties"] != "run":
            raise ValueError(f"measure {text!r}: ties must be 'trec_eval' (ids descending, the default) or "
                             "'run' (the run's order, ir_measures' accuracy provider), got "
                             f"{params['ties']!r}")  # fmt: skip
        return req("Accuracy_run", k if k is not None else _ALL)
    if name in ("Judged", "ERR", "Accuracy"):
        base = {"Judged": "Judged", "ERR": "ERR_cut", "Accuracy": "Accuracy"}[name]
        return req(base, k if k is not None else _ALL)
    if name == "RBP":
        if k is not None:
            raise ValueError(f"measure {text!r}: RBP takes no cutoff here (it is over the whole ranking)")
        p = float(params.get("p", 0.8))
        if not 0.0 < p < 1.0:
            raise ValueError(f"measure {text!r}: the persistence p must be in (0, 1), got {p!r}")
        return req("RBP_p", repr(p))
    if name == "Compat":
        p = float(params.get("p", 0.95))
        if not 0.0 < p <= 1.0:
            raise ValueError(f"measure {text!r}: the persistence p must be in (0, 1], got {p!r}")
        ties = params.get("ties", "ranking")
        if ties not in ("ranking", "qrels"):
            raise ValueError(f"measure {text!r}: ties must be 'ranking' (ties of the ideal ranking in the "
                             "run's order, the default) or 'qrels' (in the qrels' order, as ir_measures), "
                             f"got {ties!r}")  # fmt: skip
        order = ",qrels=1" if ties == "qrels" else ""
        return req("Compat", f"p={p!r},normalize={int(params.get('normalize', True))}{order}")
    if name in cwl_kernels.IR_PARAMS:
        return req(*cwl_kernels.request(text, name, params))
    if name == "SetF":
        beta = float(params.get("beta", 1.0))
        if not 0.0 <= beta < float("inf"):
            raise ValueError(f"measure {text!r}: beta must be a finite number >= 0, got {beta!r}")
        return req("set_F", repr(beta))
    if name == "SetP" and params.get("relative"):
        return req("set_relative_P")
    simple = {"Rprec": "Rprec", "Bpref": "bpref", "infAP": "infAP", "NumQ": "num_q", "NumRel": "num_rel",
              "NumRet": "num_ret", "NumRelRet": "num_rel_ret", "SetP": "set_P", "SetRelP": "set_relative_P",
              "SetR": "set_recall", "SetAP": "set_map"}  # fmt: skip
    if name == "NumRet" and rel is not None:
        return req("num_rel_ret")
    return req(simple[name])


__all__ += ["measure_syntax"]


def measure_syntax(text: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, parameters)`` of ``Name``, ``Name@x``, ``Name(k=v, ...)`` or ``Name(...)@x`` (the
    ``@`` value under the key ``"@"``), parsed as :func:`parse_ir` parses it; None for any other
    text. For the measures that :func:`parse_ir` leaves to other modules (:mod:`.diversity`).

    Parameters
    ----------
    text : str
        A measure name.

    Returns
    -------
    tuple of (str, dict) or None
        The name and the parameters as literals.

    Raises
    ------
    ValueError
        A parameter value that is not a literal, or a positional parameter.

    Examples
    --------
    >>> from streammetrics.trec.irparse import measure_syntax
    >>> measure_syntax("NRBP(beta=0.8)"), measure_syntax("P.5,10")
    (('NRBP', {'beta': 0.8}), None)
    """
    return _syntax(text)
