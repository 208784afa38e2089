"""The C/W/L measures with ``ties='run'`` (``INST(max_rel=3, ties='run')``, ...): ir_measures'
cwl_eval provider's order of tied scores -- score descending as read (doubles), ties in the run's
order -- against ir_measures itself on runs with heavy ties in random line order, in
``streammetrics trec`` and ``TrecMeasures(judgments='qrels_docs')`` (issue #33). The default
ranks ties as trec_eval (``tests/trec/test_trec_cwl.py`` gives ir_measures that order)."""

from __future__ import annotations

import numpy as np
import pytest
import retrieval_oracles as O
from helpers import trec_files
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trec_cwl import CWL, TOL, _irm, _printed, _random_case, _shuffled

from streammetrics.trec import TrecMeasures, trec_batch

ir_measures = pytest.importorskip("ir_measures")


def _run_ties(name: str) -> str:
    """``name`` with ``ties='run'`` added to its parameters."""
    head, _, at = name.partition("@")
    return head[:-1] + ", ties='run')" + (f"@{at}" if at else "")


#: ours (ties='run') -> ir_measures' measure object
RUN = {_run_ties(n): _irm(n) for n in CWL}


def _near_ties(run: dict[str, dict[str, float]]) -> None:
    """Scores that differ only by 1e-12 on every third document: ties in float32, not in doubles
    (both rank by the doubles)."""
    for docs in run.values():
        for d in list(docs)[::3]:
            docs[d] += 1e-12


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]))
def test_run_ties_equal_ir_measures_cwl_eval_in_the_command(tmp_path_factory, seed, version):
    """Per query and mean (``-c``), the run file's lines in random order and given to
    ir_measures in that same order."""
    rng = np.random.default_rng(seed)
    qrels, run = _random_case(rng, 16)
    run = _shuffled(run, rng)
    _near_ties(run)
    qp, rp = trec_files(tmp_path_factory.mktemp("cwlties"), qrels, run)
    got = _printed(qp, rp, list(RUN), trec_version=version)
    ref = ir_measures.cwl_eval.calc(list(RUN.values()), qrels, run)
    names = {m: n for n, m in RUN.items()}
    for m in ref.per_query:
        key = (names[m.measure], m.query_id)
        if m.query_id in run:
            assert abs(got[key] - m.value) <= TOL, key
    for m, want in ref.aggregated.items():
        assert abs(got[(names[m], "all")] - want) <= TOL, names[m]


STREAMED = ["INST(T=2, max_rel=3, ties='run')", "NERR8(max_rel=2, ties='run')@3", "BPM(max_rel=3, ties='run')@10",
            "SDCG(max_rel=3, ties='run')@5", "NERR10(p=0.8, max_rel=3, ties='run')"]  # fmt: skip


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_run_ties_equal_ir_measures_streamed_merged_and_reloaded(seed, shards):
    """``TrecMeasures(judgments='qrels_docs')``: each query's rows in the run's (shuffled) order,
    fed across shards with a save/load round trip, merged: ir_measures' mean and per query."""
    import streammetrics as sm

    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 14, max_docs=12, grades=(-1, 0, 0, 1, 2, 3), tie_levels=2)
    run = _shuffled(run, rng)
    one = TrecMeasures(STREAMED, per_query=True, judgments="qrels_docs")
    trec_batch(qrels, run, judgments="qrels_docs").feed(one)
    accs = [TrecMeasures(STREAMED, judgments="qrels_docs") for _ in range(shards)]
    for i, q in enumerate(run):
        trec_batch({q: qrels.get(q, {})}, {q: run[q]}, judgments="qrels_docs").feed(accs[i % shards])
        accs[i % shards] = sm.loads(sm.dumps(accs[i % shards]))
    streamed = accs[0].merge(*accs[1:])
    irm = {n: _irm(n.replace(", ties='run'", "")) for n in STREAMED}
    ref = ir_measures.cwl_eval.calc(list(irm.values()), qrels, run)
    names = {m: n for n, m in irm.items()}
    for m, want in ref.aggregated.items():
        assert abs(one.compute()[names[m]] - want) <= TOL, names[m]
        assert abs(streamed.compute()[names[m]] - want) <= TOL, names[m]
    values = one.per_query_values()
    order = {q: i for i, q in enumerate(sorted(run, key=str.encode))}  # trec_batch's order
    for m in ref.per_query:
        assert abs(values[names[m.measure]][order[m.query_id]] - m.value) <= TOL, (names[m.measure], m.query_id)


def test_the_default_order_differs_from_the_run_order_on_ties(tmp_path):
    """What the option is for: with tied scores trec_eval's order (the default) and the run's give
    different values, each equal to ir_measures given the run in its order; the trec_eval-style
    name (``run=1``) is the same measure."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 1.0, "c": 1.0, "b": 1.0}}  # trec_eval's order: c, b, a; the run's: a, c, b
    qp, rp = trec_files(tmp_path, qrels, run)
    names = ["NERR8(max_rel=2)@2", "NERR8(max_rel=2, ties='run')@2", "cwl_NERR8.cutoff=2,max_rel=2,run=1"]
    got = _printed(qp, rp, names)
    measure = ir_measures.parse_measure("NERR8(max_rel=2)@2")
    in_run = ir_measures.cwl_eval.calc_aggregate([measure], qrels, run)[measure]
    in_trec = ir_measures.cwl_eval.calc_aggregate([measure], qrels, {"q": {"c": 1.0, "b": 1.0, "a": 1.0}})[measure]
    assert abs(in_run - in_trec) > 0.1
    assert abs(got[(names[1], "q")] - in_run) <= TOL
    assert got[("cwl_NERR8_cutoff=2,max_rel=2,run=1", "q")] == got[(names[1], "q")]
    assert abs(got[(names[0], "q")] - in_trec) <= TOL


@pytest.mark.parametrize("measure, words", [
    ("INST(max_rel=3, ties='id')", "ties must be 'trec_eval' (ids descending, the default) or 'run'"),
    ("INST(max_rel=3, ties=1)", "parameter ties must be str, got 1"),
    ("cwl_INST.max_rel=3,run=2", "run must be 0 (ties by id, trec_eval's) or 1 (the run's order), got 2.0"),
    ("cwl_INST.max_rel=3,run=1,run=0", "run given twice"),
])  # fmt: skip
def test_bad_ties_are_refused(measure, words):
    with pytest.raises(ValueError, match="^measure .*" + __import__("re").escape(words)):
        TrecMeasures([measure], judgments="qrels_docs")


def test_run_ties_need_the_rows_in_the_run_order():
    """Bare grades (``judgments='qrels'``) do not tell the run's order: a one-line refusal; the
    default order and ``run=0`` stay accepted there."""
    with pytest.raises(ValueError, match=r"^measures: \"INST\(max_rel=3, ties='run'\)\" orders ties as the run"):
        TrecMeasures(["map", "INST(max_rel=3, ties='run')"])
    with pytest.raises(ValueError, match=r"^measures: 'cwl_BPM.cutoff=3,max_rel=1,run=1' orders ties as the run"):
        TrecMeasures(["cwl_BPM.cutoff=3,max_rel=1,run=1"])
    TrecMeasures(["INST(max_rel=3)", "cwl_INST.max_rel=2,run=0"])
