"""trec_eval's measure table: names, parameter syntax, defaults, averaging and printing.

Measures are listed in trec_eval's order (the order it computes and prints them). ``-m`` takes a
measure, ``measure.params`` or a nickname (``official``, ``all_trec``, ``set``); as in trec_eval,
parameters attach to the measure name and the first ``-m`` that gives them wins. Cutoff lists are
sorted and must be unique (long cutoffs are read like C's ``atol``: ``23.4`` is 23, and positive);
``name=value`` gain pairs and plain parameter lists keep their text in the printed name
(``ndcg_1=3,2=9``, ``utility_2,-1,0,0``). For compatibility the single names ``P_5``,
``iprec_at_recall_0.30``, ``map_cut_10``, ... also select one cutoff of their family.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from streammetrics._core.params import Param, check_param

from . import _cwl_kernels as cwl_kernels
from . import _ir_kernels as ir_kernels
from . import _kernels as trec_kernels
from . import judgment_groups, preferences
from .tokens import atof, atol

Value = float | str
LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TENTHS = tuple(i / 10 for i in range(11))
RPREC_MULTS = tuple(i / 10 for i in range(2, 21, 2))


#: ``trec_version``: whose recall cutoffs (and score precision) are used, trec_eval 9's or 10's.
TREC_VERSION = Param("choice", "expected 9 or 10", choices=(9.0, 10.0))


def check_trec_version(value: Any) -> int:
    """``trec_version`` checked (:data:`TREC_VERSION`) and returned as an int (9 or 10)."""
    return int(check_param(value, "trec_version", TREC_VERSION))


#: The options of an evaluation, as trec_eval reads them (C ``long`` for the counts).
REL_LEVEL = Param("real", "must be a finite real number", finite=True)
MAX_DOCS = Param("int", "must be an int in [0, 2**63 - 1] or None", low=0, high=2**63 - 1, optional=True)
NUM_DOCS = Param("int", "must be an int in [0, 2**63 - 1]", low=0, high=2**63 - 1)
DIGITS = Param("int", "must be an int in [0, 17]", low=0, high=17)


def check_options(
    rel_level: Any, max_docs: Any, num_docs: Any = 0, digits: Any = 4
) -> tuple[Any, Any, int, int]:
    """``rel_level``, ``max_docs``, ``num_docs`` and ``digits`` checked (a ValueError naming the
    argument and the value) and returned (``rel_level`` unchanged in type, an int stays an int)."""
    check_param(rel_level, "rel_level", REL_LEVEL)
    max_docs = check_param(max_docs, "max_docs", MAX_DOCS)
    num_docs = check_param(num_docs, "num_docs", NUM_DOCS)
    return rel_level, max_docs, num_docs, check_param(digits, "digits", DIGITS)


@dataclass(frozen=True)
class Options:
    """Evaluation options the kernels need: the recall-cutoff rule (trec_eval 9 or 10, and for 9
    whether ``c*R + 0.9`` is rounded once, as a fused multiply-add)."""

    version: int = 9
    fused: bool = False


@dataclass(frozen=True)
class Measure:
    """One trec_eval measure: ``kind`` is its parameter type (``none``, ``long_cuts``,
    ``double_cuts``, ``doubles``, ``pairs``), ``avg`` how queries combine (``mean``, ``gm``,
    ``sum``, ``num_q``, ``num_rel``, ``none``; ``defined``: the mean over the queries whose value
    is not NaN), ``value`` its printed type (``double``, ``long``,
    ``string``, ``runid``)."""

    name: str
    kind: str
    default: tuple[Any, ...]
    compute: Callable[[Any, tuple[Any, ...], Options], list[Value]]
    avg: str = "mean"
    value: str = "double"
    per_query: bool = True
    source: str = "qrels"  # what compute takes: a ResRels ("qrels"), one per judgment group ("qrels_jg")


def _one(
    f: Callable[[trec_kernels.ResRels], float],
) -> Callable[[trec_kernels.ResRels, tuple[Any, ...], Options], list[Value]]:
    return lambda rr, p, o: [f(rr)]


def _set(key: str) -> Callable[[trec_kernels.ResRels, tuple[Any, ...], Options], list[Value]]:
    return lambda rr, p, o: [trec_kernels.set_values(rr, float(p[0]) if p else 1.0)[key]]


def _pref(
    f: Callable[[preferences.ResultsPrefs], float],
) -> Callable[[Any, tuple[Any, ...], Options], list[Value]]:
    return lambda rp, p, o: [f(rp)]


def _cwl(base: str) -> Callable[[trec_kernels.ResRels, tuple[Any, ...], Options], list[Value]]:
    return lambda rr, p, o: [cwl_kernels.cwl_value(rr, base, p)]


def _ndcg_kind(which: int) -> Callable[[trec_kernels.ResRels, tuple[Any, ...], Options], list[Value]]:
    return lambda rr, p, o: [trec_kernels.ndcg_values(rr, p)[which]]


MEASURES: tuple[Measure, ...] = (
    Measure(
        "runid", "none", (), lambda rr, p, o: [], avg="none", value="runid", per_query=False, source="any"
    ),
    Measure(
        "num_q", "none", (), lambda rr, p, o: [1.0], avg="num_q", value="long", per_query=False, source="any"
    ),
    Measure("num_ret", "none", (), lambda rr, p, o: [float(rr.num_ret)], avg="sum", value="long"),
    Measure("num_rel", "none", (), lambda rr, p, o: [float(rr.num_rel)], avg="num_rel", value="long"),
    Measure("num_rel_ret", "none", (), lambda rr, p, o: [float(rr.num_rel_ret)], avg="sum", value="long"),
    Measure("map", "none", (), _one(trec_kernels.average_precision)),
    Measure(
        "gm_map", "none", (), _one(lambda rr: trec_kernels.gm_log(trec_kernels.average_precision(rr))),
        avg="gm", per_query=False,
    ),
    Measure("Rprec", "none", (), _one(trec_kernels.rprec)),
    Measure("bpref", "none", (), _one(trec_kernels.bpref)),
    Measure("recip_rank", "none", (), _one(trec_kernels.recip_rank)),
    Measure(
        "iprec_at_recall",
        "double_cuts",
        TENTHS,
        lambda rr, p, o: list(trec_kernels.iprec_at_recall(rr, p, o.version, o.fused)),
    ),
    Measure("P", "long_cuts", LONG_CUTS, lambda rr, p, o: list(trec_kernels.precision_at(rr, p))),
    Measure(
        "relstring", "doubles", (10.0,), lambda rr, p, o: [trec_kernels.relstring(rr, p[0])], avg="none",
        value="string",
    ),
    Measure("recall", "long_cuts", LONG_CUTS, lambda rr, p, o: list(trec_kernels.recall_at(rr, p))),
    Measure("infAP", "none", (), _one(trec_kernels.infap)),
    Measure("gm_bpref", "none", (), _one(lambda rr: trec_kernels.gm_log(trec_kernels.bpref(rr))), avg="gm",
            per_query=False),
    Measure("Rprec_mult", "double_cuts", RPREC_MULTS, lambda rr, p, o: list(trec_kernels.rprec_mult(rr, p))),
    Measure("utility", "doubles", (1.0, -1.0, 0.0, 0.0), lambda rr, p, o: [trec_kernels.utility(rr, p)]),
    Measure("11pt_avg", "doubles", TENTHS,
            lambda rr, p, o: [trec_kernels.eleven_pt_avg(rr, p, o.version, o.fused)]),
    Measure("binG", "none", (), _one(trec_kernels.bin_g)),
    Measure("G", "pairs", (), lambda rr, p, o: [trec_kernels.normalized_gain(rr, p)]),
    Measure("dcg", "pairs", (), _ndcg_kind(0)),
    Measure("ideal_dcg", "pairs", (), _ndcg_kind(1)),
    Measure("ndcg", "pairs", (), lambda rr, p, o: [trec_kernels.ndcg(rr, p)]),
    Measure("ndcg_rel", "pairs", (), lambda rr, p, o: [trec_kernels.ndcg_rel(rr, p)]),
    Measure("Rndcg", "pairs", (), lambda rr, p, o: [trec_kernels.rndcg(rr, p)]),
    Measure("ndcg_cut", "long_cuts", LONG_CUTS, lambda rr, p, o: list(trec_kernels.ndcg_at(rr, p))),
    Measure("map_cut", "long_cuts", LONG_CUTS, lambda rr, p, o: list(trec_kernels.map_at(rr, p))),
    Measure("relative_P", "long_cuts", LONG_CUTS,
            lambda rr, p, o: list(trec_kernels.relative_precision_at(rr, p))),
    Measure("success", "long_cuts", (1, 5, 10), lambda rr, p, o: list(trec_kernels.success_at(rr, p))),
    Measure("set_P", "none", (), _set("set_P")),
    Measure("set_relative_P", "none", (), _set("set_relative_P")),
    Measure("set_recall", "none", (), _set("set_recall")),
    Measure("set_map", "none", (), _set("set_map")),
    Measure("set_F", "doubles", (1.0,), _set("set_F")),
    Measure(
        "num_nonrel_judged_ret",
        "none",
        (),
        lambda rr, p, o: [float(rr.num_ret - rr.num_nonpool - rr.num_unjudged - rr.num_rel_ret)],
        avg="sum",
        value="long",
    ),
    *(
        Measure(name, "none", (), _pref(f), avg=avg, value=value, source="prefs")
        for name, f, avg, value in (
            ("prefs_num_prefs_poss", preferences.num_possible, "sum", "long"),
            ("prefs_num_prefs_ful", preferences.num_fulfilled, "sum", "long"),
            ("prefs_num_prefs_ful_ret", preferences.num_fulfilled_ret, "sum", "long"),
            ("prefs_simp", lambda rp: preferences.simple(rp, "all"), "mean", "double"),
            ("prefs_pair", lambda rp: preferences.pairs(rp, "all"), "mean", "double"),
            ("prefs_avgjg", lambda rp: preferences.by_group(rp, "all"), "mean", "double"),
            ("prefs_avgjg_Rnonrel", lambda rp: preferences.rnonrel(rp, False), "mean", "double"),
            ("prefs_simp_ret", lambda rp: preferences.simple(rp, "ret"), "mean", "double"),
            ("prefs_pair_ret", lambda rp: preferences.pairs(rp, "ret"), "mean", "double"),
            ("prefs_avgjg_ret", lambda rp: preferences.by_group(rp, "ret"), "mean", "double"),
            ("prefs_avgjg_Rnonrel_ret", lambda rp: preferences.rnonrel(rp, True), "mean", "double"),
            ("prefs_simp_imp", lambda rp: preferences.simple(rp, "imp"), "mean", "double"),
            ("prefs_pair_imp", lambda rp: preferences.pairs(rp, "imp"), "mean", "double"),
            ("prefs_avgjg_imp", lambda rp: preferences.by_group(rp, "imp"), "mean", "double"),
        )
    ),
    Measure("map_avgjg", "none", (), lambda g, p, o: list(judgment_groups.map_avgjg(g)), source="qrels_jg"),
    Measure(
        "P_avgjg", "long_cuts", LONG_CUTS, lambda g, p, o: list(judgment_groups.precision_avgjg(g, p)),
        source="qrels_jg",
    ),
    Measure(
        "Rprec_mult_avgjg",
        "double_cuts",
        RPREC_MULTS,
        lambda g, p, o: list(judgment_groups.rprec_mult_avgjg(g, p)),
        source="qrels_jg",
    ),
    Measure("yaap", "none", (), _one(trec_kernels.yaap)),
    Measure("rbp", "pairs", (), lambda rr, p, o: [trec_kernels.rbp(rr, p)]),
    Measure("rbp_resid", "pairs", (), lambda rr, p, o: [trec_kernels.rbp_resid(rr, p)]),
    Measure("unj", "long_cuts", (5, 10, 20), lambda rr, p, o: list(trec_kernels.unjudged_at(rr, p))),
    # beyond trec_eval: the ir_measures names RR@k, Judged@k, ERR@k, RBP(p=), nDCG(dcg='exp-log2')
    # select these (.irnames)
    Measure("RR_cut", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.rr_at(rr, p))),
    Measure("F1_cut", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.f1_at(rr, p))),  # ranx's f1@k
    Measure("RR_msmarco", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.rr_msmarco_at(rr, p))),
    Measure("Judged", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.judged_at(rr, p))),
    Measure("Judged_asc", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.judged_at(rr, p, True))),
    Measure("ERR_cut", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.err_at(rr, p))),
    Measure("RBP_p", "doubles", (0.8,), lambda rr, p, o: [ir_kernels.rbp_binary(rr, p[0])]),
    Measure("nDCG_exp", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.ndcg_exp_at(rr, p))),
    Measure("nDCG_gains", "pairs", (), lambda rr, p, o: [ir_kernels.ndcg_gains(rr, p)]),
    Measure("Compat", "pairs", (), lambda rr, p, o: [ir_kernels.compat(
        rr, float(dict(p).get("p", 0.95)), bool(dict(p).get("normalize", 1.0)),
        bool(dict(p).get("qrels", 0.0)))]),  # qrels=1: ties of the ideal in the qrels' order
    # mean over the queries where it is defined (NaN elsewhere: no line printed for them)
    Measure("Accuracy", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.accuracy_at(rr, p)),
            avg="defined"),
    Measure("Accuracy_run", "long_cuts", (10,), lambda rr, p, o: list(ir_kernels.accuracy_at(rr, p, True)),
            avg="defined"),  # Accuracy(ties='run'): ir_measures' order (score as read, then the run's)
    # ir_measures' C/W/L user-model measures (its cwl_eval provider): NERR8(max_rel=3)@10, INST(T=2,
    # max_rel=3), ... select cwl_NERR8.cutoff=10,min_rel=0,max_rel=3, ... (._cwl_kernels)
    *(Measure(base, "pairs", (), _cwl(base)) for base in cwl_kernels.BASES),
)
BY_NAME = {m.name: m for m in MEASURES}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
                 "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
}  # fmt: skip
NICKNAMES["qrels_jg"] = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
_PREFS = tuple(m.name for m in MEASURES if m.source == "prefs")
NICKNAMES["all_prefs"] = ("runid", "num_q", *_PREFS)
NICKNAMES["prefs"] = ("runid", "num_q", *_PREFS[:6])



@dataclass(frozen=True)
class Selected:
    """A requested measure with its parameters and the names of its values (trec_eval's);
    ``shown`` the names printed (ir_measures names as given; empty: ``names``), ``level`` and
    ``judged_only`` its own relevance level and -J (ir_measures' ``rel``, ``judged_only``; None
    and False: the evaluation's)."""

    measure: Measure
    params: tuple[Any, ...]
    names: tuple[str, ...]
    shown: tuple[str, ...] = ()
    level: float | None = None
    judged_only: bool = False

    @property
    def printed(self) -> tuple[str, ...]:
        return self.shown or self.names


#: The largest C ``long`` (trec_eval's cutoffs, ``-M``, ``-l``, ``-N``).
LONG_MAX = 2**63 - 1


def needs_run_order(s: Selected) -> bool:
    """Whether ``s`` ranks tied scores in the run's own order (``Accuracy(ties='run')``, a C/W/L
    measure with ``ties='run'``: the pair ``run=1``), which needs ``ResRels.run_order``. O(1)."""
    name = s.measure.name
    return name == "Accuracy_run" or (name in cwl_kernels.BASES and ("run", 1.0) in s.params)


def _finite(m: Measure, text: str, value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"measure {m.name!r}: parameters must be finite numbers, got {text!r}")
    return value


def _parse_params(m: Measure, text: str) -> tuple[tuple[Any, ...], str | None]:
    """Parameters from ``text`` (trec_eval's get_*_cutoffs / params / pairs) and the printable text."""
    parts = text.split(",")
    if m.kind == "long_cuts":
        cuts = sorted(atol(p) for p in parts)
        if cuts[0] <= 0:
            raise ValueError(f"measure {m.name!r}: cutoffs must be positive, got {text!r}")
        if cuts[-1] > LONG_MAX:
            raise ValueError(f"measure {m.name!r}: cutoffs must be at most 2**63 - 1 (trec_eval's long), "
                             f"got {text!r}")  # fmt: skip
        if len(set(cuts)) != len(cuts):
            raise ValueError(f"measure {m.name!r}: duplicate cutoffs in {text!r}")
        return tuple(cuts), text
    if m.kind == "double_cuts":
        vals = sorted(_finite(m, text, atof(p)) for p in parts)
        if len(set(vals)) != len(vals):
            raise ValueError(f"measure {m.name!r}: duplicate cutoffs in {text!r}")
        return tuple(vals), text
    if m.kind == "doubles":
        return tuple(_finite(m, text, atof(p)) for p in parts), text
    if m.kind == "pairs":
        pairs = []
        for p in parts:
            name, eq, value = p.partition("=")
            if not eq or not name or "=" in value:
                raise ValueError(f"measure {m.name!r}: malformed pair parameters in {text!r}")
            pairs.append((name, _finite(m, text, atof(value))))
        return tuple(pairs), text
    raise ValueError(f"measure {m.name!r} takes no parameters, got {text!r}")


def _value_names(m: Measure, params: tuple[Any, ...], printable: str | None) -> tuple[str, ...]:
    if m.value == "runid":
        return ()
    if m.kind == "long_cuts":
        return tuple(f"{m.name}_{k}" for k in params)
    if m.kind == "double_cuts":
        return tuple(f"{m.name}_{c:3.2f}" for c in params)
    return (f"{m.name}_{printable}",) if printable is not None else (m.name,)


_SINGLE = re.compile(r"^(P|recall|map_cut|ndcg_cut|relative_P|success|unj|iprec_at_recall|Rprec_mult)_(.+)$")


def select_measures(args: Sequence[str], rel_format: str = "qrels") -> list[Selected]:
    """The measures that ``-m`` arguments select, in trec_eval's order, for judgments in
    ``rel_format`` (``qrels`` or ``qrels_jg``).

    Raises ValueError naming the argument for an unknown measure, bad parameters, or a measure
    that needs another judgment format (``-R``).
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    extra: dict[str, list[str]] = {}  # P_5-style single names
    for arg in args:
        base, dot, text = arg.partition(".")
        single = _SINGLE.match(arg) if base not in BY_NAME and base not in NICKNAMES else None
        if single:
            extra.setdefault(single.group(1), []).append(single.group(2))
            marked.add(single.group(1))
            continue
        if dot:
            if not text:
                raise ValueError(f"measure {arg!r}: empty parameter list after '.'")
            params.setdefault(base, text)
        if base in NICKNAMES:
            marked.update(NICKNAMES[base])
        elif base in BY_NAME:
            marked.add(base)
        else:
            raise ValueError(
                f"measure {arg!r} is not supported; supported: {', '.join([*NICKNAMES, *BY_NAME])}"
            )
    out = []
    for m in MEASURES:
        if m.name not in marked:
            continue
        fmt = "prefs" if rel_format in ("prefs", "qrels_prefs") else rel_format
        if m.source not in ("any", fmt):
            raise ValueError(
                f"measure {m.name!r} needs judgments in the '{m.source}' format (-R {m.source}), "
                f"not '{rel_format}'"
            )
        if m.name in params:
            p, printable = _parse_params(m, params[m.name])
            if m.name == "set_F" and p and p[0] < 0:  # F's denominator beta*P + R can be 0
                raise ValueError(f"measure 'set_F': beta must be >= 0, got {params[m.name]!r}")
        elif m.name in extra:
            p, printable = (), None
        else:
            p, printable = m.default, None
        if m.name in extra:
            more, _ = _parse_params(m, ",".join(extra[m.name]))
            p = tuple(sorted(set(p) | set(more)))
        if m.name in cwl_kernels.BASES:  # checked, ir_measures' defaults filled in
            where = f"{m.name}.{params[m.name]}" if m.name in params else m.name
            p = tuple(cwl_kernels.check(m.name, p, where).items())
        out.append(Selected(m, p, _value_names(m, p, printable)))
    return out
