"""ir_measures options of issue #33: several names of one value each printed, ``nDCG(dcg='exp-log2')``
and ``nDCG(gains=...)``, against ir_measures (and their definitions where ir_measures' provider rounds)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trec_irparse import _files, _lines

from streammetrics.trec import TrecMeasures, evaluate_files, trec_batch


@pytest.mark.parametrize(
    "names",
    [["Rprec", "RPrec"], ["ndcg_cut_10", "nDCG@10"], ["ndcg_cut.10", "nDCG@10"], ["P.5", "P@5", "official"],
     ["RPrec", "Rprec", "RPrec"]],  # fmt: skip
)
def test_each_name_of_one_value_is_printed(tmp_path, names):
    qrels, run = O.random_trec(np.random.default_rng(4), 6, max_docs=10)
    qp, rp = _files(tmp_path, qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, names, per_query=True, digits=17, out=s))
    acc = TrecMeasures(names)
    trec_batch(qrels, run).feed(acc)
    summary = acc.compute()
    wanted = {n.replace(".", "_") if n in ("ndcg_cut.10", "P.5") else n for n in names} - {"official"}
    for name in wanted:
        assert (name, "all") in printed and name in summary, name
    values = {printed[(n, "all")] for n in wanted}
    assert len(values) == 1  # one value under every name
    sink = io.StringIO()
    evaluate_files(qp, rp, names, digits=4, out=sink)
    assert len(sink.getvalue().splitlines()) == len(set(sink.getvalue().splitlines()))  # no line twice


def _ndcg_exp(ranked: list[float], judged: list[float], k: int | None) -> float:
    """Burges' nDCG, written out: (2^g - 1) / log2(rank + 1), ideal from the positive judged grades."""
    ideal = sorted((g for g in judged if g > 0), reverse=True)[:k]
    if not ideal:
        return 0.0
    top = ranked[:k]
    dcg = sum((2.0 ** max(g, 0) - 1.0) / math.log2(i + 2.0) for i, g in enumerate(top))
    return dcg / sum((2.0**g - 1.0) / math.log2(i + 2.0) for i, g in enumerate(ideal))


EXP = ["nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2', cutoff=10)", "nDCG(dcg='exp-log2')",
       "nDCG(dcg='exp-log2', judged_only=True)@10"]  # fmt: skip


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_ndcg_exp_log2_streamed_and_merged_equals_its_definition(tmp_path_factory, seed, shards):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 12, max_docs=12, grades=(-1, 0, 0, 1, 2, 3, 6))
    accs = [TrecMeasures(EXP, per_query=True) for _ in range(shards)]
    qids = list(run)
    for i, q in enumerate(qids):
        trec_batch({q: qrels[q]}, {q: run[q]}).feed(accs[i % shards])
    acc = accs[0].merge(*accs[1:])
    summary = acc.compute()
    want: dict[str, list[float]] = {name: [] for name in EXP}
    for q in qids:
        ranked, _, judged = O.ranked_query(qrels, run, q)
        for name, k in zip(EXP[:3], (5, 10, None), strict=True):
            want[name].append(_ndcg_exp(ranked, judged, k))
        docs = list(run[q])
        order = O.rank(docs, [run[q][d] for d in docs], docs)  # type: ignore[arg-type]  # ids ranked
        kept = [g for g, d in zip(ranked, order, strict=True) if qrels[q].get(d, -1) >= 0]  # -J
        want[EXP[3]].append(_ndcg_exp(kept, judged, 10))
    for name in EXP:
        assert abs(summary[name] - float(np.mean(want[name]))) <= 1e-12, name
    qp, rp = _files(tmp_path_factory.mktemp("x"), qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, EXP, digits=17, out=s))
    for name in EXP:
        assert abs(float(printed[(name, "all")]) - summary[name]) <= 1e-12, name


def test_ndcg_exp_log2_against_ir_measures_gdeval(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(12)
    qrels, run = O.random_trec(rng, 30, max_docs=15, grades=(-1, 0, 0, 1, 2, 3, 4))
    qrels = {str(100 + i): docs for i, docs in enumerate(qrels.values())}  # gdeval: numeric query ids
    run = {str(100 + i): docs for i, docs in enumerate(run.values())}
    names = ["nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@10"]
    try:
        refs = {n: ir_measures.calc_aggregate([ir_measures.parse_measure(n)], qrels, run) for n in names}
    except (RuntimeError, OSError) as exc:  # gdeval is a Perl script
        pytest.skip(f"ir_measures cannot run gdeval here: {exc}")
    acc = TrecMeasures(names)
    trec_batch(qrels, run).feed(acc)
    ours = acc.compute()
    for name in names:
        want = float(next(iter(refs[name].values())))
        assert abs(ours[name] - want) <= 0.5e-5, (name, ours[name], want)  # gdeval prints 5 decimals


GAINS = ["nDCG(gains={0: 0, 1: 1, 2: 10, 3: 2})", "nDCG(gains={0: 1, 1: 5})@5", "nDCG(gains={2: 1})@10",
         "nDCG(gains={3: 7}, judged_only=True)@10"]  # fmt: skip


def test_ndcg_gains_against_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = O.random_trec(np.random.default_rng(3), 40, max_docs=15, tie_levels=10**9)
    for docs in qrels.values():  # pytrec_eval crashes on a query judged only negatively
        if max(docs.values()) < 0:
            docs[next(iter(docs))] = 0
    acc = TrecMeasures(GAINS)
    trec_batch(qrels, run).feed(acc)
    ours = acc.compute()
    qp, rp = _files(tmp_path, qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, GAINS, digits=17, out=s))
    for name in GAINS:
        want = float(next(iter(ir_measures.calc_aggregate([ir_measures.parse_measure(name)], qrels, run).values())))
        assert abs(ours[name] - want) <= 1e-12 and abs(float(printed[(name, "all")]) - want) <= 1e-12, name


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_ndcg_gains_with_ties_streamed_equals_trec_eval_gain_parameters(tmp_path_factory, seed, shards):
    # ir_measures maps the qrels' grades and runs trec_eval's ndcg: trec_eval's own ndcg.g=v,...
    qrels, run = O.random_trec(np.random.default_rng(seed), 12, max_docs=12)
    accs = [TrecMeasures(GAINS[:1], per_query=True) for _ in range(shards)]
    for i, q in enumerate(run):
        trec_batch({q: qrels[q]}, {q: run[q]}).feed(accs[i % shards])
    got = accs[0].merge(*accs[1:]).compute()[GAINS[0]]
    qp, rp = _files(tmp_path_factory.mktemp("g"), qrels, run)
    ref = _lines(lambda s: evaluate_files(qp, rp, ["ndcg.0=0,1=1,2=10,3=2"], digits=17, out=s))
    assert abs(got - float(ref[("ndcg_0=0,1=1,2=10,3=2", "all")])) <= 1e-12


@pytest.mark.parametrize(
    "measure,message",
    [("nDCG(gains={1: -1})", "non-negative ints"), ("nDCG(gains={1: 1.5})", "non-negative ints"),
     ("nDCG(gains=[1])", "gains must be dict"), ("nDCG(gains={1: 2}, dcg='exp-log2')", "dcg='log2' only"),
     ("nDCG(dcg='exp')", "dcg must be")],  # fmt: skip
)
def test_bad_ndcg_parameters_are_one_line(tmp_path, capsys, measure, message):
    from streammetrics.__main__ import main

    qp, rp = _files(tmp_path, {"1": {"a": 1}}, {"1": {"a": 1.0}})
    assert main(["trec", qp, rp, "-m", measure]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
