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
``ERR@k``      (none: gdeval's, top 4)     ``RBP(p=x)``   (none: binary, default p 0.8)
=============  ==========================  =============  ==========================

also ``Success@k`` (``success.k``), ``Accuracy@k`` and ``Compat(p=x, normalize=b)`` (ir_measures'
accuracy and compat providers', not in trec_eval), the C/W/L measures of its cwl_eval provider
``INST(T=t, max_rel=m)``, ``INSQ``, ``NERR8@k``, ``NERR9@k``, ``NERR10(p=x)``, ``NERR11(T=t)``,
``SDCG@k``, ``BPM(T=t)@k`` (``cwl_INST.T=t,max_rel=m``, ...: :mod:`._cwl_kernels`),
``RR(ties='msmarco')@k`` (its msmarco order),
ranx's ``f1@k`` (F1@k) and ``f1`` (``set_F``),
``SetP`` / ``SetRelP`` / ``SetR`` / ``SetF`` / ``SetAP`` (``set_P``, ``set_relative_P``,
``set_recall``, ``set_F``, ``set_map``), ``NumQ``, and ir_measures' aliases (``MAP``,
``MRR``, ``NDCG``, ``Precision``, ``Recall``, ``BPref``, ``RPrec``, ``IPrec@r``). Parameters use
ir_measures' syntax (:mod:`.irparse`): ``nDCG(cutoff=10)``, ``P(rel=2)@5``,
``AP(rel=2, judged_only=True)``, ``SetF(beta=0.5)``, ``RBP(p=0.9)``; ``rel`` and ``judged_only``
apply to that measure only (trec_eval's ``-l`` / ``-J`` for the rest). A value asked for under
several names (``P@5`` and ``P.5`` or ``official``; ``Rprec`` and ``RPrec``; ``ndcg_cut.10`` and
``nDCG@10``) is printed under each of them; the same name twice, once. ``Judged`` ranks as
trec_eval does (ties by document id descending; ir_measures' judged provider breaks ties
ascending: ``Judged(ties='ascending')``). See
:mod:`._ir_kernels` for the measures trec_eval lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ._measures import BY_NAME, NICKNAMES, Selected, select_measures
from .irparse import IR_MEASURES, IrRequest, parse_ir
from .tokens import atof

__all__ = ["translate", "select", "IR_NAMES"]

_TREC_NAMES = frozenset([*BY_NAME, *NICKNAMES])
IR_NAMES = (*IR_MEASURES, "Name@k", "Name(param=value, ...)@k")
_Group = tuple[dict[str, dict[Any, str]], set[str], dict[str, str]]  # cut params, plain, rename


def _key(base: str, text: str) -> float | str:
    kind = BY_NAME[base].kind
    if kind == "pairs":
        return text
    return float(text) if kind in ("double_cuts", "doubles") else float(int(atof(text)))


_Key = tuple[int | None, bool, int]


def _trec_values(rest: Sequence[str], rel_format: str) -> set[str]:
    """The names of the values that trec_eval arguments select (none if they are in error: the
    error is raised where they are evaluated)."""
    try:
        return {n for s in select_measures(rest, rel_format) for n in s.names}
    except ValueError:
        return set()


def _collect(
    args: Sequence[str], rel_format: str = "qrels", each_name: bool = True
) -> tuple[dict[_Key, _Group], list[str]]:
    """The ir_measures requests of ``args`` grouped by their own (rel, judged_only) -- a second
    name of one value (``SetRelP`` and ``SetP(relative=True)``, or ``RPrec`` beside trec_eval's
    ``Rprec``, ``nDCG@10`` beside ``ndcg_cut.10``) goes to a group of its own, so that each name
    is printed -- and the trec_eval arguments."""
    groups: dict[_Key, _Group] = {}
    requests: list[tuple[str, IrRequest]] = []
    rest: list[str] = []
    for arg in args:
        req = parse_ir(arg, _TREC_NAMES)
        if req is None:
            rest.append(arg)
        elif arg not in [a for a, _ in requests]:  # the same name twice is printed once
            requests.append((arg, req))
    by_trec = _trec_values(rest, rel_format) if each_name and rest and requests else set()
    # a one-parameter-list measure (RBP_p, Compat, cwl_INST, ...) given trec_eval's way too: its
    # parameter lists cannot merge, so the ir_measures name is evaluated in a group of its own
    own_list = {b for b, dot, _ in (a.partition(".") for a in rest) if dot and b in BY_NAME
                and BY_NAME[b].kind in ("doubles", "pairs")} if each_name else set()  # fmt: skip
    for arg, req in requests:
        key = (req.rel, req.judged_only, 0)
        while req.value_name in groups.get(key, ({}, set(), {}))[2] or (
            key == (None, False, 0) and (req.value_name in by_trec or req.base in own_list)
        ):
            key = (req.rel, req.judged_only, key[2] + 1)
        params, plain, rename = groups.setdefault(key, ({}, set(), {}))
        rename[req.value_name] = arg
        if req.param is None:
            plain.add(req.base)
        else:
            params.setdefault(req.base, {}).setdefault(_key(req.base, req.param), req.param)
    return groups, rest


def _split_doubles(group: _Group) -> list[str]:
    """Take out of ``group`` the second and later values of one-parameter measures (``RBP(p=)``,
    ``SetF(beta=)``): their trec_eval arguments, each evaluated as a measure of its own."""
    params = group[0]
    extra: list[str] = []
    for base, values in params.items():
        if BY_NAME[base].kind in ("doubles", "pairs") and len(values) > 1:
            keys = sorted(values)
            extra.extend(f"{base}.{values[k]}" for k in keys[1:])
            params[base] = {keys[0]: values[keys[0]]}
    return extra


def _arguments(group: _Group, rest: Sequence[str]) -> list[str]:
    params, plain, _ = group
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
    return out


def translate(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """trec_eval ``-m`` arguments for ``args`` (ir_measures and trec_eval names mixed) and the
    printed name of each value asked for by an ir_measures name: ``{trec_eval value name: name}``.

    Parameters
    ----------
    args : sequence of str
        Measure names: trec_eval's (as ``-m`` takes them: ``map``, ``P.5,10``, ``official``) and
        ir_measures' (``AP``, ``P@5``, ``nDCG(cutoff=10)``), mixed.

    Returns
    -------
    arguments : list of str
        The trec_eval ``-m`` arguments that compute every value asked for.
    names : dict of str to str
        ``{trec_eval value name: ir_measures name}`` of the values asked for by an ir_measures
        name (a value asked for by a trec_eval name too is renamed, printed once; :func:`select`,
        which the commands use, prints it under each name).

    Raises
    ------
    ValueError
        Naming the argument: a malformed ir_measures name, two values of a one-parameter measure
        (``RBP`` with different ``p``), or a measure with its own ``rel`` / ``judged_only`` (those
        need :func:`select`).

    Examples
    --------
    >>> from streammetrics.trec.irnames import translate
    >>> translate(["P@5", "map", "nDCG@10"])
    (['map', 'P.5', 'ndcg_cut.10'], {'P_5': 'P@5', 'ndcg_cut_10': 'nDCG@10'})
    """
    groups, rest = _collect(args, each_name=False)
    group = groups.pop((None, False, 0), ({}, set(), {}))
    if groups or _split_doubles(group):
        raise ValueError("measures with their own rel= or judged_only=, two names of one value or "
                         "several values of RBP / SetF need select(), not translate()")  # fmt: skip
    return _arguments(group, rest), group[2]


def select(args: Sequence[str], rel_format: str = "qrels") -> list[Selected]:
    """The measures that ``args`` select (trec_eval arguments as ``-m`` takes them and ir_measures
    names, mixed): trec_eval's in its order, then those with their own ``rel`` / ``judged_only``,
    each with the names it prints.

    Parameters
    ----------
    args : sequence of str
        Measure names: trec_eval's (as ``-m`` takes them) and ir_measures', mixed.
    rel_format : str, default="qrels"
        The judgment format (trec_eval's ``-R``): some measures need ``qrels_jg`` or ``prefs``.

    Returns
    -------
    list of Selected
        The measures, each with its parameters, the names of its values and the names printed.

    Raises
    ------
    ValueError
        Naming the argument: an unknown or malformed measure name (see :func:`translate`).

    Examples
    --------
    >>> from streammetrics.trec.irnames import select
    >>> [s.printed for s in select(["P@5", "map", "P(rel=2)@5"])]
    [('map',), ('P@5',), ('P(rel=2)@5',)]
    """
    groups, rest = _collect(args, rel_format)
    main = groups.pop((None, False, 0), ({}, set(), {}))
    out: list[Selected] = []
    for (rel, judged_only, n), group in [((None, False, 0), main), *groups.items()]:
        level = None if rel is None else float(rel)
        extra = [[arg] for arg in _split_doubles(group)]
        runs = [_arguments(group, rest if (rel, judged_only, n) == (None, False, 0) else []), *extra]
        for trec_args in runs:
            for s in select_measures(trec_args, rel_format):
                shown = tuple(group[2].get(n, n) for n in s.names)
                out.append(replace(s, shown=shown, level=level, judged_only=judged_only))
    return out
