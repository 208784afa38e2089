"""trec_eval's measures as accumulators (``streammetrics.trec.TrecMeasures``): streamed in random
query batches, merged across shards, saved and loaded, windowed and decayed -- equal to the
one-shot ``streammetrics trec`` values and to pytrec_eval."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest
import pytrec_eval
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics.trec import TrecMeasure, TrecMeasures, evaluate_files, trec_batch

TOL = 1e-12
MEASURES = ["all_trec", "nDCG@10", "RBP(p=0.8)", "ERR@5", "Judged@10", "RR@3", "AP@5"]
PYTREC = sorted(set(pytrec_eval.supported_measures) - {"runid", "relstring", "num_q"})
GEOMETRIC = {"gm_map", "gm_bpref"}
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def _data(seed: int, n: int = 14):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, n, max_docs=12)
    for docs in qrels.values():  # pytrec_eval crashes on a query judged only negatively
        if max(docs.values()) < 0:
            docs[next(iter(docs))] = 0
    return rng, qrels, run


def _one_shot(tmp_path, qrels, run, measures, **kw):
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rp.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} r\n" for q, docs in run.items()
                          for i, (d, s) in enumerate(docs.items())))  # fmt: skip
    return evaluate_files(str(qp), str(rp), measures, out=io.StringIO(), digits=17, **kw)


def _close(got: dict, want: dict) -> None:
    for name, v in got.items():
        w = float(want[name])
        if math.isnan(w):  # trec_eval's 0/0 (a query -J leaves without documents): NaN in both
            assert math.isnan(v), (name, v, want[name])
            continue
        assert abs(v - w) <= TOL * max(1.0, abs(w)), (name, v, want[name])


def _split(rng, qrels, run, parts: int):
    """Random query batches: lists of {qid: docs} run pieces (queries shuffled, then cut)."""
    qs = list(run)
    order = [qs[i] for i in rng.permutation(len(qs))]
    cuts = np.sort(rng.choice(np.arange(1, len(qs)), size=min(parts, len(qs) - 1), replace=False))
    return [{q: run[q] for q in chunk} for chunk in np.split(np.array(order), cuts)]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_streamed_merged_and_reloaded_equal_the_command_and_pytrec_eval(tmp_path_factory, seed, shards):
    rng, qrels, run = _data(seed)
    tmp = tmp_path_factory.mktemp("t")
    want = _one_shot(tmp, qrels, run, MEASURES)
    accs = [TrecMeasures(MEASURES, per_query=True) for _ in range(shards)]
    for i, piece in enumerate(_split(rng, qrels, run, 5)):
        trec_batch(qrels, piece).feed(accs[i % shards])
    acc = accs[0].merge(*accs[1:])
    loaded = sm.loads(sm.dumps(acc))
    path = tmp / "state.sm"
    sm.save(acc, path)
    assert set(acc.names) == set(want) - {"runid"}
    for a in (acc, loaded, sm.load(path)):
        _close(a.compute(), want)
    # per query and summary against pytrec_eval (queries in update order: map them back by value set)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC))
    ref = evaluator.evaluate(run)
    single = TrecMeasures(MEASURES, per_query=True)
    trec_batch(qrels, run).feed(single)  # one batch: queries in trec_eval's (sorted) order
    qids = sorted(run, key=lambda q: q.encode())
    per_q = single.per_query_values()
    for name in ref[qids[0]]:
        if name not in per_q:  # asked for by its ir_measures name (nDCG@10): kept under that name
            continue
        if name in GEOMETRIC:
            got = math.exp(float(np.mean(np.log(per_q[name]))))
            expected = math.exp(float(np.mean([ref[q][name] for q in qids])))
            assert abs(got - expected) <= TOL, name
            continue
        expected_q = np.array([ref[q][name] for q in qids])
        assert np.abs(per_q[name] - expected_q).max() <= TOL, name
        summary = expected_q.sum() if name in COUNTS else expected_q.mean()
        assert abs(acc.compute()[name] - summary) <= TOL * max(1.0, abs(summary)), name


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]))
def test_options_equal_the_command(tmp_path_factory, seed, version):
    rng, qrels, run = _data(seed)
    kw = dict(rel_level=int(rng.integers(1, 3)), judged_only=bool(rng.integers(2)),
              max_docs=int(rng.integers(1, 8)), num_docs=50)  # fmt: skip
    want = _one_shot(tmp_path_factory.mktemp("o"), qrels, run, ["all_trec", "11pt_avg"], trec_version=version, **kw)
    acc = TrecMeasures(["all_trec", "11pt_avg"], trec_version=version, **kw)
    for piece in _split(rng, qrels, run, 3):
        trec_batch(qrels, piece, trec_version=version).feed(acc)
    _close(acc.compute(), want)


def test_single_measure_is_a_float_and_its_per_query_values_an_array(tmp_path):
    _, qrels, run = _data(7)
    want = _one_shot(tmp_path, qrels, run, ["bpref", "nDCG@10"])
    for name in ("bpref", "nDCG@10"):
        m = TrecMeasure(name, per_query=True)
        trec_batch(qrels, run).feed(m)
        assert isinstance(m.compute(), float)
        assert abs(m.compute() - want[name]) <= TOL
        assert m.per_query_values().shape == (len(run),)
        assert abs(float(m.per_query_values().mean()) - want[name]) <= TOL


@pytest.mark.parametrize("size", [1, 4, 9])
def test_window_over_queries_equals_the_measure_on_the_last_queries(tmp_path, size):
    rng, qrels, run = _data(11, 16)
    w = sm.Window(TrecMeasures(["bpref", "P.5", "gm_map"]), size=size)
    seen: list[str] = []
    for piece in _split(rng, qrels, run, 5):
        batch = trec_batch(qrels, piece)
        batch.feed(w)
        seen += list(dict.fromkeys(batch.query_ids.tolist()))
        last = seen[-size:]
        fresh = TrecMeasures(["bpref", "P.5", "gm_map"])
        trec_batch(qrels, {q: run[q] for q in last}).feed(fresh)
        _close(w.compute(), fresh.compute())
    _close(sm.loads(sm.dumps(w)).compute(), w.compute())


def test_decayed_is_the_decay_weighted_mean_of_the_per_query_values():
    _, qrels, run = _data(5, 10)
    batch = trec_batch(qrels, run)
    d = sm.Decayed(TrecMeasure("infAP"), half_life=3)
    batch.feed(d)
    ref = TrecMeasure("infAP", per_query=True)
    batch.feed(ref)
    v = ref.per_query_values()
    w = 0.5 ** (np.arange(len(v))[::-1] / 3)
    assert abs(d.compute() - float((w * v).sum() / w.sum())) <= TOL


def test_metricset_shares_the_batch_with_the_retrieval_family():
    _, qrels, run = _data(3)
    ms = sm.MetricSet(trec=TrecMeasure("map"), lib=sm.MAP())
    trec_batch(qrels, run).feed(ms)
    got = ms.compute()
    assert abs(got["trec"] - got["lib"]) <= TOL


def test_bad_inputs_name_the_argument_and_change_nothing():
    _, qrels, run = _data(2)
    acc = TrecMeasures(["map", "bpref"])
    b = trec_batch(qrels, run)
    b.feed(acc)
    before = sm.dumps(acc)
    with pytest.raises(ValueError, match="relevance"):
        acc.update(np.array([1, -3]), [0.5, 0.2], doc_ids=["a", "b"], judged=np.array([1.0]))
    with pytest.raises(ValueError, match="relevance: query 'x' retrieved 2 documents of grade 1"):
        acc.update(np.array([1, 1]), [0.5, 0.2], doc_ids=["a", "b"], judged={"x": np.array([1.0])},
                   query_ids=["x", "x"])  # fmt: skip
    with pytest.raises(ValueError, match="judged"):
        acc.update(np.array([1, 0]), [0.5, 0.2])
    with pytest.raises(ValueError, match="judged: grades must be integers"):
        acc.update(np.array([1]), [0.5], judged=np.array([1.5]))
    assert sm.dumps(acc) == before
    with pytest.raises(ValueError, match="measure: 'P.5,10' gives 2 values"):
        TrecMeasure("P.5,10")
    with pytest.raises(ValueError, match="not supported"):
        TrecMeasures(["nope"])
    with pytest.raises(ValueError, match="trec_version"):
        TrecMeasures(trec_version=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(TrecMeasures(["map"]).compute()["map"])


def test_a_loaded_state_out_of_range_is_refused():
    _, qrels, run = _data(4)
    acc = TrecMeasures(["map", "num_ret"], per_query=True)
    trec_batch(qrels, run).feed(acc)
    state = acc.state_dict()
    key = next(k for k in state if k.endswith(".values"))
    state[key] = state[key].copy()
    state[key][0, acc.names.index("map")] = 1.5  # AP above 1
    with pytest.raises(ValueError, match="outside the range of map"):
        sm.Metric.from_state_dict(state)


def test_a_query_judged_only_leaves_without_documents_is_nan_as_in_trec_eval():
    """With ``judged_only`` a query whose retrieved documents are all unjudged has no ranking:
    trec_eval's ``iprec_at_recall`` at the cutoffs of 0 relevant documents and ``11pt_avg`` are
    0/0 there (NaN, and so are their means), equal to the command's; the state keeps the NaN
    through save / load, a Window and a Decayed, and only such a spec's state accepts one."""
    names = ["iprec_at_recall..0,.5", "11pt_avg", "map"]
    batch = trec_batch({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}, {"q1": {"a": 2.0, "b": 1.0}, "q2": {"zz": 1.0}})
    for make in (lambda m: m, lambda m: sm.Window(m, size=5), lambda m: sm.Decayed(m, half_life=3.0)):
        acc = make(TrecMeasures(names, judged_only=True))
        batch.feed(acc)
        for a in (acc, sm.loads(sm.dumps(acc))):
            got = a.compute()
            assert math.isnan(got["iprec_at_recall_0.00"]) and math.isnan(got["11pt_avg"]), got
            assert got["map"] > 0 and not math.isnan(got["iprec_at_recall_0.50"])
    per_q = TrecMeasures(names, judged_only=True, per_query=True)
    batch.feed(per_q)
    values = sm.loads(sm.dumps(per_q)).per_query_values()
    assert values["iprec_at_recall_0.00"][0] == 1.0 and math.isnan(values["iprec_at_recall_0.00"][1])
    plain = TrecMeasures(names)  # no judged_only: a stored NaN is no state such a stream leaves
    state = plain.state_dict()
    key = next(k for k in state if k.endswith(".sums"))
    state[key] = np.full_like(state[key], np.nan)
    state[key.replace(".sums", ".count")] = np.array([1])
    with pytest.raises(ValueError, match="non-finite"):
        TrecMeasures.from_state_dict(state)
