"""ir_measures' ``Accuracy@k`` (its accuracy provider) and the msmarco provider's tie order for
``RR@k``, against ir_measures itself on random runs with tied scores (issue #33)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trec_irparse import _files, _lines

from streammetrics.trec import TrecMeasures, evaluate_files, per_query_values, trec_batch

ACC = ["Accuracy@5", "Accuracy", "Accuracy(rel=2)@10", "Accuracy(cutoff=3, rel=0)"]


def _trec_order(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The run with each query's documents in trec_eval's order (score descending, id descending):
    ir_measures' accuracy provider sorts by score alone (stably), so ties keep this order."""
    out = {}
    for q, docs in run.items():
        by_id = sorted(docs.items(), reverse=True)
        out[q] = dict(sorted(by_id, key=lambda kv: -kv[1]))  # stable: ids descending among ties
    return out


def _defined(ir_measures, measure, qrels, run) -> dict[str, float]:
    """ir_measures' per-query values, each query alone (it divides by zero on a query whose top k
    is all relevant; ours leaves that query out, as it leaves out those it does not report)."""
    out = {}
    for q in run:
        try:
            for m in ir_measures.accuracy.iter_calc([measure], {q: qrels.get(q, {})}, {q: run[q]}):
                out[m.query_id] = m.value
        except ZeroDivisionError:
            pass
    return out


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_accuracy_equals_ir_measures_per_query_and_mean(tmp_path_factory, seed):
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 25, max_docs=14, grades=(-1, 0, 0, 1, 2, 3))
    qp, rp = _files(tmp_path_factory.mktemp("acc"), qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, ACC, per_query=True, digits=17, out=s))
    ordered = _trec_order(run)
    for name in ACC:
        want = _defined(ir_measures, ir_measures.parse_measure(name), qrels, ordered)
        got = {q: float(v) for (n, q), v in printed.items() if n == name and q != "all"}
        assert got.keys() == want.keys(), name  # the same queries have a value
        for q, v in want.items():
            assert abs(got[q] - v) <= 1e-12, (name, q)
        mean = float(np.mean(list(want.values()))) if want else math.nan
        assert (math.isnan(mean) and printed[(name, "all")].strip() in ("nan", "-nan")) or abs(
            float(printed[(name, "all")]) - mean) <= 1e-12, name  # fmt: skip


def test_accuracy_mean_is_ir_measures_aggregate(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = O.random_trec(np.random.default_rng(7), 40, max_docs=12)
    for docs in run.values():  # one non-relevant document last: ir_measures never divides by zero
        docs["zz_nonrel"] = min(docs.values()) - 1.0
    qp, rp = _files(tmp_path, qrels, run)
    ours = evaluate_files(qp, rp, ["Accuracy@20", "Accuracy(rel=2)"], digits=17, out=_Null())
    ref = ir_measures.accuracy.calc_aggregate(
        [ir_measures.parse_measure("Accuracy@20"), ir_measures.parse_measure("Accuracy(rel=2)")], qrels,
        _trec_order(run))  # fmt: skip
    for m, want in ref.items():
        assert abs(float(ours[str(m)]) - want) <= 1e-12, str(m)


class _Null:
    def write(self, text: str) -> int:
        return len(text)


def test_accuracy_is_refused_where_its_mean_cannot_be_kept(tmp_path):
    with pytest.raises(ValueError, match="'Accuracy@5' is averaged over the queries where it is defined"):
        TrecMeasures(["map", "Accuracy@5"])
    qrels, run = O.random_trec(np.random.default_rng(1), 5)
    qp, rp = _files(tmp_path, qrels, run)
    with pytest.raises(ValueError, match="'Accuracy@5' has no value for some queries"):
        per_query_values(qp, [rp], ["map", "Accuracy@5"])


MSMARCO = ["RR(ties='msmarco')@3", "RR(ties='msmarco')@10", "RR(ties='msmarco', rel=2)@5", "RR(ties='msmarco')"]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]), shards=st.integers(1, 3))
def test_rr_msmarco_ties_equal_ir_measures_msmarco(tmp_path_factory, seed, version, shards):
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 20, max_docs=14, tie_levels=3)  # heavy ties
    qp, rp = _files(tmp_path_factory.mktemp("mm"), qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, [*MSMARCO, "RR@3"], per_query=True, digits=17, out=s,
                                              trec_version=version))  # fmt: skip
    accs = [TrecMeasures(MSMARCO, per_query=True, trec_version=version) for _ in range(shards)]
    for i, q in enumerate(run):
        trec_batch({q: qrels[q]}, {q: run[q]}, trec_version=version).feed(accs[i % shards])
    streamed = accs[0].merge(*accs[1:])
    summary = streamed.compute()
    for name in MSMARCO:
        measure = ir_measures.parse_measure(name.replace("ties='msmarco', ", "").replace("(ties='msmarco')", ""))
        want = {m.query_id: m.value for m in ir_measures.msmarco.iter_calc([measure], qrels, run)}
        for q, v in want.items():
            assert abs(float(printed[(name, q)]) - v) <= 1e-12, (name, q)
        mean = float(np.mean(list(want.values())))
        assert abs(float(printed[(name, "all")]) - mean) <= 1e-12, name
        assert abs(summary[name] - mean) <= 1e-12, name
    assert streamed.per_query_values()[MSMARCO[0]].shape == (len(run),)


def test_rr_msmarco_differs_from_trec_eval_order_on_a_tie(tmp_path):
    qrels = {"q1": {"a": 1, "b": 0}}
    run = {"q1": {"a": 1.0, "b": 1.0}}  # trec_eval ranks b first (ids descending), msmarco a
    qp, rp = _files(tmp_path, qrels, run)
    out = evaluate_files(qp, rp, ["RR@2", "RR(ties='msmarco')@2", "RR(ties='trec_eval')@2"], out=_Null())
    assert (out["RR@2"], out["RR(ties='msmarco')@2"], out["RR(ties='trec_eval')@2"]) == (0.5, 1.0, 0.5)
    with pytest.raises(ValueError, match="ties must be 'trec_eval'"):
        TrecMeasures("RR(ties='ascending')@2")


COMPAT = ["Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5, normalize=True)"]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3), negative=st.booleans())
def test_compat_equals_ir_measures(tmp_path_factory, seed, shards, negative):
    """ir_measures keeps the qrels' order among relevant documents of equal grade and score: given
    in document id order, that is ours (retrieved ones in ranking order); no score is 0."""
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 20, max_docs=14, grades=(-1, 0, 1, 1, 2, 3), tie_levels=4)
    shift = -0.75 if negative else 0.25  # scores in multiples of 0.5: never 0 after the shift
    run = {q: {d: s + shift for d, s in docs.items()} for q, docs in run.items()}
    qrels = {q: dict(sorted(docs.items())) for q, docs in qrels.items()}
    qp, rp = _files(tmp_path_factory.mktemp("compat"), qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, COMPAT, per_query=True, digits=17, out=s))
    accs = [TrecMeasures(COMPAT, trec_version=10) for _ in range(shards)]
    for i, q in enumerate(run):
        trec_batch({q: qrels[q]}, {q: run[q]}, trec_version=10).feed(accs[i % shards])
    summary = accs[0].merge(*accs[1:]).compute()
    for name in COMPAT:
        want = {m.query_id: m.value for m in ir_measures.compat.iter_calc([ir_measures.parse_measure(name)],
                                                                          qrels, run)}  # fmt: skip
        for q, v in want.items():
            assert abs(float(printed[(name, q)]) - v) <= 1e-12, (name, q)
        mean = float(np.mean(list(want.values())))
        assert abs(float(printed[(name, "all")]) - mean) <= 1e-12, name
        assert abs(summary[name] - mean) <= 1e-12, name


@pytest.mark.parametrize("measure", ["Compat(p=0)", "Compat(p=1.5)", "Compat@10", "Compat(normalize=1)"])
def test_compat_parameters_are_checked(measure):
    with pytest.raises(ValueError, match="Compat"):
        TrecMeasures(measure)


def test_saved_and_loaded(tmp_path):
    import streammetrics as sm

    qrels, run = O.random_trec(np.random.default_rng(11), 8)
    acc = TrecMeasures([*COMPAT[:2], *MSMARCO[:2]], per_query=True)
    trec_batch(qrels, run).feed(acc)
    sm.save(acc, tmp_path / "acc.sm")
    back = sm.load(tmp_path / "acc.sm")
    assert back.compute() == acc.compute()
    for name, values in acc.per_query_values().items():
        assert np.array_equal(back.per_query_values()[name], values), name
