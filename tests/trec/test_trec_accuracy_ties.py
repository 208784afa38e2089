"""``Accuracy(ties='run')``: ir_measures' accuracy provider's order of tied scores -- score
descending as read (doubles), ties in the run's order -- against ir_measures itself on runs with
heavy ties, in ``streammetrics trec`` and ``TrecMeasures(judgments='qrels_docs')`` (issue #33).
The default ``Accuracy`` breaks ties in trec_eval's order (``tests/trec/test_trec_iraccuracy.py``
gives ir_measures the run in that order)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trec_irparse import _files, _lines

from streammetrics.trec import TrecMeasures, evaluate_files, trec_batch

RUN_TIES = ["Accuracy(ties='run')@3", "Accuracy(ties='run')", "Accuracy(ties='run', rel=2)@10",
            "Accuracy(cutoff=5, rel=0, ties='run')"]


def _plain(name: str) -> str:
    """The ir_measures name: ``ties`` left out."""
    return name.replace(", ties='run'", "").replace("ties='run', ", "").replace("(ties='run')", "")


def _ir_values(ir_measures, name: str, qrels, run) -> dict[str, float]:
    """ir_measures' per-query values, each query alone (it divides by zero on a query whose top k
    is all relevant; ours leaves that query out, as it leaves out those it does not report)."""
    out = {}
    measure = ir_measures.parse_measure(_plain(name))
    for q in run:
        try:
            for m in ir_measures.accuracy.iter_calc([measure], {q: qrels.get(q, {})}, {q: run[q]}):
                out[m.query_id] = m.value
        except ZeroDivisionError:
            pass
    return out


def _same(got: float, want: float) -> bool:
    return (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-12


def _heavy_ties(rng: np.random.Generator) -> tuple[dict, dict]:
    qrels, run = O.random_trec(rng, 20, max_docs=14, grades=(-1, 0, 0, 1, 2, 3), tie_levels=2)
    for docs in run.values():  # scores that differ only beyond float32: ties in float32, not in doubles
        for d in list(docs)[::3]:
            docs[d] += 1e-12
    return qrels, run


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]))
def test_run_ties_equal_ir_measures_in_the_command(tmp_path_factory, seed, version):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _heavy_ties(np.random.default_rng(seed))
    qp, rp = _files(tmp_path_factory.mktemp("acc"), qrels, run)  # the run file in the dicts' order
    printed = _lines(lambda s: evaluate_files(qp, rp, RUN_TIES, per_query=True, digits=17, out=s,
                                              trec_version=version))  # fmt: skip
    for name in RUN_TIES:
        want = _ir_values(ir_measures, name, qrels, run)
        got = {q: float(v) for (n, q), v in printed.items() if n == name and q != "all"}
        assert got.keys() == want.keys(), name
        for q, v in want.items():
            assert abs(got[q] - v) <= 1e-12, (name, q)
        mean = float(np.mean(list(want.values()))) if want else math.nan
        assert _same(float(printed[(name, "all")].replace("-nan", "nan")), mean), name


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_run_ties_equal_ir_measures_streamed_merged_and_reloaded(seed, shards):
    import streammetrics as sm

    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _heavy_ties(np.random.default_rng(seed))
    run = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}  # float32-exact
    accs = [TrecMeasures(RUN_TIES, per_query=True, judgments="qrels_docs") for _ in range(shards)]
    for i, q in enumerate(run):
        trec_batch({q: qrels[q]}, {q: run[q]}, judgments="qrels_docs").feed(accs[i % shards])
        accs[i % shards] = sm.loads(sm.dumps(accs[i % shards]))
    streamed = accs[0].merge(*accs[1:])
    summary = streamed.compute()
    for name in RUN_TIES:
        want = _ir_values(ir_measures, name, qrels, run)
        mean = float(np.mean(list(want.values()))) if want else math.nan
        assert _same(summary[name], mean), name


def test_the_default_order_differs_from_the_run_order_on_ties(tmp_path):
    """What the option is for: with tied scores the default (trec_eval's order) and ir_measures'
    run order give different values, and each equals ir_measures given the run in its order."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    run = {"q": {"a": 1.0, "c": 1.0, "b": 1.0}}  # trec_eval's order: c, b, a; the run's: a, c, b
    qp, rp = _files(tmp_path, qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, ["Accuracy", "Accuracy(ties='run')"], per_query=True,
                                              digits=17, out=s))  # fmt: skip
    assert float(printed[("Accuracy(ties='run')", "q")]) == _ir_values(ir_measures, "Accuracy", qrels, run)["q"] == 1.0
    trec_order = {"q": {"c": 1.0, "b": 1.0, "a": 1.0}}
    assert float(printed[("Accuracy", "q")]) == _ir_values(ir_measures, "Accuracy", qrels, trec_order)["q"] == 0.0


def test_run_ties_need_the_rows_in_the_run_order():
    with pytest.raises(ValueError, match=r"^measures: \"Accuracy\(ties='run'\)@3\" orders ties as the run"):
        TrecMeasures(["map", "Accuracy(ties='run')@3"])
    with pytest.raises(ValueError, match=r"^measure \"Accuracy\(ties='id'\)\": ties must be 'trec_eval' .* or 'run'"):
        TrecMeasures(["Accuracy(ties='id')"])
    acc = TrecMeasures(["Accuracy(ties='run')", "Accuracy"], judgments="qrels_docs", per_query=True)
    trec_batch({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}}, judgments="qrels_docs").feed(acc)
    assert acc.per_query_values()["Accuracy(ties='run')"].tolist() == [1.0]  # a before b: the run's order
    assert acc.per_query_values()["Accuracy"].tolist() == [0.0]  # b before a: ids descending
