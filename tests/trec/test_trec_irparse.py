"""ir_measures' parameter syntax (``nDCG(cutoff=10)``, ``P(rel=2)@5``, ``AP(judged_only=True)``,
``SetF(beta=0.5)``, ...) in the library and ``streammetrics trec``: equal to trec_eval run with the
matching options, and to ir_measures itself where it computes the measure."""

from __future__ import annotations

import io

import numpy as np
import pytest
import retrieval_oracles as O
from helpers import trec_files as _files
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.__main__ import main
from streammetrics.trec import TrecMeasures, evaluate_files, trec_batch

TOL = 1e-12
#: ir_measures syntax -> (trec_eval -m argument, its value name, trec_eval options)
SAME = [
    ("nDCG(cutoff=10)", "ndcg_cut.10", "ndcg_cut_10", {}),
    ("NDCG@10", "ndcg_cut.10", "ndcg_cut_10", {}),
    ("P(rel=2)@5", "P.5", "P_5", {"rel_level": 2}),
    ("P(cutoff=5, rel=2)", "P.5", "P_5", {"rel_level": 2}),
    ("AP(rel=2)", "map", "map", {"rel_level": 2}),
    ("MAP(judged_only=True)", "map", "map", {"judged_only": True}),
    ("R(rel=2, judged_only=True)@10", "recall.10", "recall_10", {"rel_level": 2, "judged_only": True}),
    ("Bpref(rel=2)", "bpref", "bpref", {"rel_level": 2}),
    ("SetP", "set_P", "set_P", {}),
    ("SetP(relative=True)", "set_relative_P", "set_relative_P", {}),
    ("SetR(rel=2)", "set_recall", "set_recall", {"rel_level": 2}),
    ("SetF(beta=0.5)", "set_F.0.5", "set_F_0.5", {}),
    ("Success(rel=2)@5", "success.5", "success_5", {"rel_level": 2}),
    ("IPrec(recall=0.3)", "iprec_at_recall.0.3", "iprec_at_recall_0.30", {}),
    ("NumRet(rel=2)", "num_rel_ret", "num_rel_ret", {"rel_level": 2}),
    ("NumRel(rel=2)", "num_rel", "num_rel", {"rel_level": 2}),
    ("Rprec", "Rprec", "Rprec", {}),
]


def _lines(fn) -> dict[tuple[str, str], str]:
    sink = io.StringIO()
    fn(sink)
    return {(n.rstrip(), q): v for n, q, v in (line.split("\t") for line in sink.getvalue().splitlines())}


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_parameters_equal_trec_eval_with_the_matching_options(tmp_path_factory, seed):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 10, max_docs=12)
    qp, rp = _files(tmp_path_factory.mktemp("p"), qrels, run)
    names = [s[0] for s in SAME] + ["P@5", "AP"]  # the defaults beside their own rel= versions
    ours = _lines(lambda s: evaluate_files(qp, rp, names, per_query=True, digits=17, out=s))
    acc = TrecMeasures(names)
    trec_batch(qrels, run).feed(acc)
    summary = acc.compute()
    for ir, arg, value_name, options in SAME:
        ref = _lines(lambda s, a=arg, o=options: evaluate_files(qp, rp, [a], per_query=True, digits=17,
                                                                out=s, **o))  # fmt: skip
        for (name, q), value in ref.items():
            if name == value_name:
                assert ours[(ir, q)] == value, (ir, q)
        assert abs(summary[ir] - float(ref[(value_name, "all")])) <= TOL, ir
    assert ("P@5", "all") in ours and ("AP", "all") in ours


def test_against_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(3)
    qrels, run = O.random_trec(rng, 30, max_docs=15, tie_levels=10**9)  # ir_measures breaks ties otherwise
    for docs in qrels.values():  # pytrec_eval crashes on a query judged only negatively
        if max(docs.values()) < 0:
            docs[next(iter(docs))] = 0
    names = ["nDCG(cutoff=10)", "nDCG", "P(rel=2)@5", "AP(rel=2)", "AP@5", "Judged@10", "Judged", "R@10",
             "SetP", "SetR", "SetF", "SetF(beta=0.5)", "SetP(relative=True)", "SetRelP", "RR(rel=2)", "RR@3",
             "Rprec(rel=2)", "Bpref(rel=2)", "infAP", "IPrec@0.3", "Success@5", "NumRet", "NumRelRet",
             "NumQ", "AP(judged_only=True)", "P(judged_only=True)@5", "MAP", "MRR", "Precision@3",
             "SetAP", "SetAP(rel=2, judged_only=True)"]  # fmt: skip
    acc = TrecMeasures(names)
    trec_batch(qrels, run).feed(acc)
    ours = acc.compute()
    qp, rp = _files(tmp_path, qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, names, digits=17, out=s))
    for name in names:
        ref = ir_measures.calc_aggregate([ir_measures.parse_measure(name)], qrels, run)
        want = float(next(iter(ref.values())))
        assert abs(ours[name] - want) <= TOL * max(1.0, abs(want)), name
        assert abs(float(printed[(name, "all")]) - want) <= TOL * max(1.0, abs(want)), name


@pytest.mark.parametrize(
    "measure,message",
    [
        ("P(foo=1)@5", "P takes no parameter 'foo'"),
        ("P", None),  # trec_eval's P (every cutoff): fine
        ("Foo@5", "unknown measure 'Foo'"),
        ("P(rel=1.5)@5", "parameter rel must be int"),
        ("P(judged_only=1)@5", "parameter judged_only must be bool"),
        ("R(rel=2)", "R needs cutoff"),
        ("P(cutoff=5)@5", "cutoff given twice"),
        ("nDCG(dcg='exp')", "dcg must be 'log2'"),
        ("RBP(p=1.5)", "persistence p must be in"),
        ("P@0", "cutoff must be positive"),
        ("P(2)@5", "parameters must be named"),
        ("nosuch", "not supported"),
    ],
)
def test_unknown_names_and_parameters_are_one_line_errors(tmp_path, capsys, measure, message):
    qp, rp = _files(tmp_path, {"1": {"a": 1}}, {"1": {"a": 1.0}})
    status = main(["trec", qp, rp, "-m", measure])
    err = capsys.readouterr().err
    if message is None:
        assert status == 0
        return
    assert status != 0 and len(err.strip().splitlines()) == 1 and message in err, err
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TrecMeasures([measure])


def test_err_against_ir_measures(tmp_path):
    """ERR@k is ir_measures' ERR (gdeval's): its per-query values (printed by gdeval to 5 decimals)
    and means agree with ours to that precision, for every trec_version. gdeval needs numeric
    query ids; ir_measures averages over every qrels query, so every query is in the run."""
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(11)
    qrels, run = O.random_trec(rng, 30, max_docs=15, grades=(-1, 0, 0, 1, 2, 3, 4))
    qrels = {str(100 + i): docs for i, docs in enumerate(qrels.values())}
    run = {str(100 + i): docs for i, docs in enumerate(run.values())}
    names = ["ERR@1", "ERR@5", "ERR@10", "ERR@20"]
    try:
        refs = {n: ir_measures.calc_aggregate([ir_measures.parse_measure(n)], qrels, run) for n in names}
        per_q = {(m.query_id, str(m.measure)): m.value
                 for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run)}
    except (RuntimeError, OSError, ValueError) as exc:  # gdeval is a Perl script: no perl, no reference
        if isinstance(exc, ValueError) and "Unsupported measures" not in str(exc):
            raise
        pytest.skip(f"ir_measures cannot run gdeval here: {exc}")
    for version in (9, 10):
        acc = TrecMeasures(names, per_query=True, trec_version=version)
        trec_batch(qrels, run, trec_version=version).feed(acc)
        ours, values = acc.compute(), acc.per_query_values()
        qids = sorted(run)  # trec_batch's order
        for name in names:
            want = float(next(iter(refs[name].values())))
            assert abs(ours[name] - want) <= 0.5e-5, (name, ours[name], want)
            for q, v in zip(qids, values[name].tolist(), strict=True):
                assert abs(v - per_q[q, name]) <= 0.5e-5 + 1e-12, (name, q, v, per_q[q, name])
    assert max(float(next(iter(r.values()))) for r in refs.values()) > 0.05  # not all zeros


def test_err_refuses_grades_above_gdevals_top(tmp_path, capsys):
    acc = TrecMeasures(["ERR@10"])
    with pytest.raises(ValueError, match="measure ERR: grades must be at most 4"):
        acc.update([5, 0], [0.9, 0.1], judged={"q": [5, 0]}, query_ids=["q", "q"])
    assert acc.n_queries == 0
    qp, rp = _files(tmp_path, {"1": {"a": 5}}, {"1": {"a": 1.0}})
    assert main(["trec", qp, rp, "-m", "ERR@10"]) != 0
    assert "grades must be at most 4" in capsys.readouterr().err
