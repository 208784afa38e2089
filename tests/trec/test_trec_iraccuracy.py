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


STREAMED = [*ACC, "map", "P@5"]


def _ir_means(ir_measures, qrels, run) -> dict[str, float]:
    """ir_measures' per-query Accuracy values (run in trec_eval's order) and their means over
    the queries it reports."""
    ordered = _trec_order(run)
    out = {}
    for name in ACC:
        want = _defined(ir_measures, ir_measures.parse_measure(name), qrels, ordered)
        out[name] = float(np.mean(list(want.values()))) if want else math.nan
    return out


def _same(got: float, want: float) -> bool:
    return (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-12


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), parts=st.integers(1, 4), shards=st.integers(1, 3),
       wrap=st.sampled_from(["plain", "window", "decayed"]))
def test_accuracy_streams_merges_and_reloads_equal_to_one_shot_and_ir_measures(seed, parts, shards, wrap):
    """``TrecMeasures`` counts the queries that define each Accuracy column, so the mean over
    them streams: any batch split, merge across shards and save/load round trip equals the one
    shot, ir_measures' mean (ties: ir_measures given the run in trec_eval's order) and the
    per-query values (NaN where ir_measures reports nothing); a Window holding every query and a
    Decayed of infinite half-life equal the plain accumulator."""
    import streammetrics as sm

    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 18, max_docs=12, grades=(-1, 0, 0, 1, 2, 3))
    wrapped = {"plain": lambda m: m, "window": lambda m: sm.Window(m, size=1000),
               "decayed": lambda m: sm.Decayed(m, half_life=1e300)}[wrap]
    per_query = wrap != "decayed"
    one = TrecMeasures(STREAMED, per_query=True)
    trec_batch(qrels, run).feed(one)
    qids = list(run)
    accs = [wrapped(TrecMeasures(STREAMED, per_query=per_query)) for _ in range(shards)]
    cuts = np.sort(rng.choice(np.arange(1, len(qids)), size=min(parts, len(qids) - 1), replace=False))
    for i, chunk in enumerate(np.split(np.array(qids), cuts)):  # batches in order, dealt to shards
        acc = accs[i % shards]
        trec_batch({q: qrels[q] for q in chunk}, {q: run[q] for q in chunk}).feed(acc)
        accs[i % shards] = sm.loads(sm.dumps(acc))  # a save/load round trip between batches
    streamed = accs[0] if shards == 1 else accs[0].merge(*accs[1:]) if wrap != "window" else None
    want = _ir_means(ir_measures, qrels, run)
    for name in ACC:
        assert _same(one.compute()[name], want[name]), name
        if streamed is not None:
            assert _same(streamed.compute()[name], want[name]), (name, wrap)
    ordered = _trec_order(run)
    values = one.per_query_values()
    for name in ACC:
        ref = _defined(ir_measures, ir_measures.parse_measure(name), qrels, ordered)
        for i, q in enumerate(sorted(qids, key=str.encode)):  # trec_batch's order: ids bytewise
            assert _same(values[name][i], ref.get(q, math.nan)), (name, q)
    if shards == 1 and per_query:
        back = accs[0].per_query_values()
        for name in ACC:
            assert np.array_equal(np.sort(back[name]), np.sort(values[name]), equal_nan=True), name  # batches


def test_accuracy_per_query_values_are_nan_where_undefined(tmp_path):
    """``per_query_values`` gives Accuracy's defined values and NaN for the queries it leaves out
    (as ``streammetrics trec`` prints no line for them); ``trec-compare`` cannot pair those."""
    from streammetrics.trec.compare import compare

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}  # q2: no non-relevant document
    qp, rp = _files(tmp_path, qrels, run)
    pq = per_query_values(qp, [rp, rp], ["map", "Accuracy@5"])
    assert pq.values[0, 1, 0] == 0.0 and math.isnan(pq.values[0, 1, 1])
    assert pq.values[0, 0].tolist() == [0.5, 1.0]
    with pytest.raises(ValueError, match="'Accuracy@5' has no value for query 'q2'"):
        compare(pq)


def test_accuracy_state_without_its_defined_counts_is_refused():
    """The count of defined queries is part of the state (``<spec>.defined``; no earlier release
    saved an Accuracy state, so no file lacks it legitimately): missing or inconsistent, a load
    is refused naming it, and a state of the other measures is unchanged."""
    acc = TrecMeasures(["map", "Accuracy@5"])
    trec_batch({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}, {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}).feed(acc)
    state = acc.state_dict()
    key = next(k for k in state if k.endswith(".defined"))
    assert state[key].tolist() == [2, 1]
    assert not any(k.endswith(".defined") for k in TrecMeasures(["map"]).state_dict())
    sums = key.replace(".defined", ".sums")
    for bad, match in ((None, "missing array .*defined"), (np.array([2, 3]), r"defined\[1\] = 3"),
                       (np.array([1, 1]), r"defined\[0\] = 1"), (np.array([2.0, 0.5]), "defined"),
                       ({sums: np.array([1.5, 1.5])}, r"sums\[1\] = 1.5 is outside the range of 1 defined")):
        broken = dict(state)
        if bad is None:
            del broken[key]
        elif isinstance(bad, dict):
            broken.update(bad)
        else:
            broken[key] = bad
        with pytest.raises(ValueError, match=match):
            TrecMeasures.from_state_dict(broken)


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


JUDGED = ["Judged(ties='ascending')@3", "Judged(ties='ascending')@10", "Judged(ties='ascending')"]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]), shards=st.integers(1, 3))
def test_judged_ascending_ties_equal_ir_measures_judged(tmp_path_factory, seed, version, shards):
    """``Judged(ties='ascending')`` ranks ties as ir_measures' judged provider (document id
    ascending): equal to it per query and in the mean, in the command and streamed and merged."""
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 20, max_docs=14, tie_levels=3)  # heavy ties
    qp, rp = _files(tmp_path_factory.mktemp("jd"), qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, [*JUDGED, "Judged@3"], per_query=True, digits=17, out=s,
                                              trec_version=version))  # fmt: skip
    accs = [TrecMeasures(JUDGED, trec_version=version) for _ in range(shards)]
    for i, q in enumerate(run):
        trec_batch({q: qrels[q]}, {q: run[q]}, trec_version=version).feed(accs[i % shards])
    summary = accs[0].merge(*accs[1:]).compute()
    for name in JUDGED:
        measure = ir_measures.parse_measure(name.replace("(ties='ascending')", ""))
        want = {m.query_id: m.value for m in ir_measures.judged.iter_calc([measure], qrels, run)}
        for q, v in want.items():
            assert abs(float(printed[(name, q)]) - v) <= 1e-12, (name, q)
        mean = float(np.mean(list(want.values())))
        assert abs(float(printed[(name, "all")]) - mean) <= 1e-12, name
        assert abs(summary[name] - mean) <= 1e-12, name
    with pytest.raises(ValueError, match="ties must be 'trec_eval'"):
        TrecMeasures("Judged(ties='descending')@3")


def test_judged_tie_orders_differ_on_a_tie(tmp_path):
    qp, rp = _files(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0}})  # trec_eval: b first
    out = evaluate_files(qp, rp, ["Judged@1", "Judged(ties='ascending')@1"], out=_Null())
    assert (out["Judged@1"], out["Judged(ties='ascending')@1"]) == (0.0, 1.0)


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


QRELS_TIES = ["Compat(ties='qrels')", "Compat(p=0.8, ties='qrels')", "Compat(normalize=False, ties='qrels')"]


def _ir_compat(ir_measures, name: str, qrels, run) -> dict[str, float]:
    measure = ir_measures.parse_measure(name.replace(", ties='qrels'", "").replace("(ties='qrels')", ""))
    return {m.query_id: m.value for m in ir_measures.compat.iter_calc([measure], qrels, run)}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), parts=st.integers(1, 3), shift=st.sampled_from([0.0, -0.5, 0.25]),
       version=st.sampled_from([9, 10]))
def test_compat_with_qrels_ties_equals_ir_measures(tmp_path_factory, seed, parts, shift, version):
    """``Compat(ties='qrels')`` orders ties of the ideal ranking (equal grade and run score,
    unretrieved documents scoring 0) as the qrels list them, as ir_measures: equal to it on
    random qrels in random order with heavy ties, scores of 0 and negative ones, in the command
    (the qrels file read in order) and in accumulators fed ``{docno: grade}`` per query
    (``judgments='qrels_docs'``), in batches, saved and loaded, merged."""
    import streammetrics as sm

    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 16, max_docs=12, grades=(-1, 0, 1, 1, 2, 3), tie_levels=3)
    run = {q: {d: s + shift for d, s in docs.items()} for q, docs in run.items()}  # multiples of 0.25
    qp, rp = _files(tmp_path_factory.mktemp("qties"), qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, [*QRELS_TIES, "Compat"], per_query=True, digits=17,
                                              out=s, trec_version=version))  # fmt: skip
    qids = list(run)
    accs = []
    cuts = np.sort(rng.choice(np.arange(1, len(qids)), size=parts - 1, replace=False))
    for chunk in np.split(np.array(qids), cuts):
        acc = TrecMeasures(QRELS_TIES, judgments="qrels_docs", trec_version=version, per_query=True)
        trec_batch({q: qrels[q] for q in chunk}, {q: run[q] for q in chunk}, judgments="qrels_docs",
                   trec_version=version).feed(acc)  # fmt: skip
        accs.append(sm.loads(sm.dumps(acc)))
    streamed = accs[0].merge(*accs[1:])
    for name in QRELS_TIES:
        want = _ir_compat(ir_measures, name, qrels, run)
        for q, v in want.items():
            assert abs(float(printed[(name, q)]) - v) <= 1e-12, (name, q)
        mean = float(np.mean(list(want.values())))
        assert abs(float(printed[(name, "all")]) - mean) <= 1e-12, name
        assert abs(streamed.compute()[name] - mean) <= 1e-12, name


def test_compat_default_ties_follow_the_ranking_not_the_qrels_lines(tmp_path):
    """The default (``ties='ranking'``) depends on the run and the judgments only: the qrels'
    lines in another order give the same value; ``ties='qrels'`` (ir_measures) does not."""
    qrels = {"q1": {"a": 1, "b": 1, "c": 1, "d": 2}}  # ideal: d (unretrieved), a, then b and c
    run = {"q1": {"a": 1.0, "z": 0.75, "b": 0.5, "c": 0.5}}  # b and c tie at grade 1, score 0.5
    swapped = {"q1": {"d": 2, "c": 1, "b": 1, "a": 1}}
    names = ["Compat", "Compat(ties='qrels')"]
    values = []
    for judged in (qrels, swapped):
        qp, rp = _files(tmp_path, judged, run)
        values.append(evaluate_files(qp, rp, names, out=_Null()))
    assert values[0]["Compat"] == values[1]["Compat"]
    assert values[0]["Compat(ties='qrels')"] != values[1]["Compat(ties='qrels')"]
    acc = TrecMeasures(names, judgments="qrels_docs")
    trec_batch(swapped, run, judgments="qrels_docs").feed(acc)
    assert acc.compute() == values[1]


@pytest.mark.parametrize(("make", "match"), [
    (lambda: TrecMeasures("Compat(ties='qrels')"), "judgments='qrels_docs'"),
    (lambda: TrecMeasures("Compat(ties='msmarco')"), "ties must be 'ranking'"),
    (lambda: TrecMeasures("Compat", judgments="qrels_docs").update(
        None, [1.0], doc_ids=["a"], judged={"q": [("a", "x")]}, query_ids=["q"]), "row 0 is \\('a', 'x'\\)"),
    (lambda: TrecMeasures("map", judgments="qrels_docs").update(
        None, [1.0], doc_ids=["a"], judged={"q": [("a", 1), ("a", 0)]}, query_ids=["q"]), "a second time"),
    (lambda: trec_batch({}, {}, judgments="prefs"), "judgments: expected 'qrels' or 'qrels_docs'"),
])
def test_qrels_ties_inputs_are_checked(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_qrels_docs_equal_qrels_for_every_measure():
    """Judgments naming the documents (``qrels_docs``) give the values of judged grades."""
    qrels, run = O.random_trec(np.random.default_rng(3), 12)
    names = ["official", "nDCG@10", "Accuracy@5", "Compat", "RR(ties='msmarco')@5", "bpref"]
    a, b = TrecMeasures(names), TrecMeasures(names, judgments="qrels_docs")
    trec_batch(qrels, run).feed(a)
    trec_batch(qrels, run, judgments="qrels_docs").feed(b)
    for name, v in a.compute().items():
        assert abs(b.compute()[name] - v) <= 1e-12, name


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
