"""Shared cases of the engines' ``**update_kwargs`` beside exact AUROC / AP / KS members (issue
#32: no engine gathers every score for them): a keyword only a ``Window`` member accepts
(``timestamp=``) goes to the set's other members on the range routes, as one process's
``MetricSet.update`` routes it; a keyword no member accepts, or keywords with ``by=`` (``Sliced``
gives every keyword to every member), raise one process's TypeError; retrieval keywords are
unchanged. The oracle is one process fed every row once with the same keywords."""

from __future__ import annotations

import warnings
from typing import Any

import engine_cases as cases
import pandas as pd
import prob_cases as pc
import pytest

import streammetrics as sm

#: The keyword of every run: one timestamp for every row (a ``Window`` member takes it).
KEYWORDS: dict[str, Any] = {"timestamp": 5.0}


def binary_set() -> sm.MetricSet:
    """Exact binary AUROC / AP first, a time window of F1 after them: the score ranges."""
    return sm.MetricSet(a=sm.AUROC(), p=sm.AveragePrecision(), win=sm.Window(sm.F1(), seconds=60))


def first_set() -> sm.MetricSet:
    """The window first, then exact AUROC / AP / KS (the ranked ranges: the KS readout)."""
    return sm.MetricSet(win=sm.Window(sm.F1(), seconds=60), a=sm.AUROC(), p=sm.AveragePrecision(),
                        ks=sm.KSStatistic())


def between_set() -> sm.MetricSet:
    """An exact binary group between F1 (ignoring -1) and the window."""
    return sm.MetricSet(f=sm.F1(ignore_index=-1), a=sm.AUROC(), p=sm.AveragePrecision(),
                        win=sm.Window(sm.F1(), seconds=60))


def multiclass_set() -> sm.MetricSet:
    """Exact multiclass AUROC / AP / KS (the keyed ranges) and a window of accuracy."""
    return sm.MetricSet(a=sm.AUROC(pc.C), p=sm.AveragePrecision(pc.C, average=None),
                        ks=sm.KSStatistic(num_classes=pc.C), win=sm.Window(sm.Accuracy(pc.C), seconds=60))


CASES: dict[str, tuple[Any, str, Any]] = {
    "binary": (binary_set, "yb", "pb"), "first": (first_set, "yb", "pb"),
    "between": (between_set, "yb", "pb"), "multiclass": (multiclass_set, "y", pc.SCORES),
}
#: (case, engine arguments, whether the run is on the unweighted score ranges: bit for bit)
RUNS: tuple[tuple[str, dict[str, Any], bool], ...] = (
    ("binary", {}, True), ("binary", {"weight": "w"}, False), ("first", {}, False),
    ("first", {"weight": "w"}, False), ("between", {}, False), ("multiclass", {}, False),
    ("multiclass", {"weight": "w"}, False))


def one_process(case: str, df: pd.DataFrame, weighted: bool = False, **kwargs: Any) -> Any:
    """One process's values of ``case`` over ``df``, every row fed once with ``kwargs``."""
    make, label, score = CASES[case]
    w = df.w.to_numpy() if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make().update(df[label].to_numpy(), df[score].to_numpy(), sample_weight=w, **kwargs).compute()


def refusal(make: Any, df: pd.DataFrame, label: str, score: Any, **kwargs: Any) -> str:
    """The message of one process's TypeError for ``kwargs`` (``Sliced`` when ``kwargs`` holds
    ``slices``)."""
    acc = sm.Sliced(make()) if "slices" in kwargs else make()
    try:
        acc.update(df[label].to_numpy(), df[score].to_numpy(), **kwargs)
    except TypeError as exc:
        return str(exc)
    raise AssertionError("one process took the keywords")


def check_runs(evaluate: Any, data: Any, df: pd.DataFrame, seen: list[Any] | None = None,
               bitwise: tuple[str, ...] = ("a", "p")) -> None:
    """:data:`RUNS` of an engine's ``evaluate`` over ``data`` (``df`` on the engine) with
    :data:`KEYWORDS`: one process's values (within 1e-12; ``bitwise``: the members bit for bit
    on the unweighted score ranges), and a range route taken (``seen``: what the spied routes
    gave, a None where one was not taken; cleared before each run; None: the caller refuses
    the state path itself)."""
    for case, kwargs, ranges in RUNS:
        make, label, score = CASES[case]
        if seen is not None:
            seen.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = evaluate(data, make(), label=label, score=score, **kwargs, **KEYWORDS)
        want = one_process(case, df, "weight" in kwargs, **KEYWORDS)
        if seen is not None:
            assert any(s is not None for s in seen), (case, kwargs)  # a range route, not the state path
        pc.assert_close(got, want)
        if ranges and bitwise:
            pc.assert_bitwise(got, want, list(bitwise))


def check_refusals(evaluate: Any, data: Any, df: pd.DataFrame) -> None:
    """A keyword no member accepts, and a keyword with ``by=``: one process's TypeError (the
    state path decides, as before)."""
    for case in ("binary", "multiclass"):
        make, label, score = CASES[case]
        want = refusal(make, df, label, score, foo=1)
        with pytest.raises(TypeError) as eng:
            evaluate(data, make(), label=label, score=score, foo=1)
        assert want in str(eng.value), (want, str(eng.value))
        want = refusal(make, df, label, score, slices=df.g.to_numpy(), **KEYWORDS)
        with pytest.raises(TypeError) as eng:
            evaluate(data, make(), label=label, score=score, by="g", **KEYWORDS)
        assert want in str(eng.value), (want, str(eng.value))


def retrieval_keywords(evaluate: Any, data: Any, df: pd.DataFrame) -> None:
    """A retrieval keyword (``n_relevant``, on :func:`engine_cases.retrieval_frame`'s rows):
    one process's values, as before."""
    n_relevant = {q: int(n) + 2 for q, n in (df.rel >= 1).groupby(df.q).sum().items()}
    metrics = cases.retrieval_set()
    got = evaluate(data, metrics.copy(), label="rel", score="s", query="q", doc_id="d", n_relevant=n_relevant)
    acc = metrics.copy()
    ordered = df.sort_values("q", kind="stable")
    acc.update(ordered.rel.to_numpy(), ordered.s.to_numpy(), query_ids=ordered.q.to_numpy(),
               doc_ids=ordered.d.to_numpy(), n_relevant=n_relevant)
    cases.assert_same(got, acc.compute())
